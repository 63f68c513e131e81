"""A user fine-tunes a pretrained MLP with BatchNorm layers and freezes it by hand, "everything but BatchNorm, as fastai
does": every parameter gets requires_grad=False, then the BatchNorm layers' are switched back on. The new head is frozen
with the rest, so only the BatchNorm scales and shifts train (a few percent of the parameters) and the random head never
learns: accuracy about half of what the same fit reaches with the head trainable. Source: issue 26 ("everything frozen
except BatchNorm, the head included: 1.8% of parameters trainable, accuracy 0.49 against 0.95").
SHOULD BE CAUGHT: only_norm_trains (error, certain: the head model.1 (Linear) does not train; only BatchNorm1d layers do)."""
import torch
from torch import nn
from fastai.learner import Learner
from fastai.losses import CrossEntropyLossFlat
from fastai.metrics import accuracy
from fastai.torch_core import set_seed
import tt2_data

def body():
    return nn.Sequential(nn.Linear(32, 128), nn.BatchNorm1d(128), nn.ReLU(), nn.Linear(128, 128), nn.BatchNorm1d(128), nn.ReLU())

set_seed(0)
x, y = tt2_data.classification()
pretrained = nn.Sequential(body(), nn.Linear(128, 10))  # "pretrained" in plain PyTorch on the same task
opt = torch.optim.Adam(pretrained.parameters(), lr=3e-3)
for epoch in range(3):
    for idx in torch.randperm(len(x)).split(32):
        opt.zero_grad()
        nn.functional.cross_entropy(pretrained(x[idx]), y[idx]).backward()
        opt.step()

trained_body = body()
trained_body.load_state_dict(pretrained[0].state_dict())  # the pretrained weights, in a fresh body
model = nn.Sequential(trained_body, nn.Linear(128, 10))  # the pretrained body and a new head
for p in model.parameters(): p.requires_grad_(False)      # BUG: the new head is frozen too
for m in model.modules():
    if isinstance(m, nn.BatchNorm1d):
        for p in m.parameters(): p.requires_grad_(True)
learn = Learner(tt2_data.loaders(x, y), model, loss_func=CrossEntropyLossFlat(), metrics=accuracy)
learn.fit(3, 3e-3)
