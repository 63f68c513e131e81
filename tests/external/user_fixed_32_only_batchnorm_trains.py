"""Issue 26's user case 32, fixed: the body is frozen but for its BatchNorm layers, and the new head trains
(`learn.freeze()` with a splitter does the same: it freezes every parameter group but the last). Healthy: should raise nothing."""
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
pretrained = nn.Sequential(body(), nn.Linear(128, 10))
opt = torch.optim.Adam(pretrained.parameters(), lr=3e-3)
for epoch in range(3):
    for idx in torch.randperm(len(x)).split(32):
        opt.zero_grad()
        nn.functional.cross_entropy(pretrained(x[idx]), y[idx]).backward()
        opt.step()

trained_body = body()
trained_body.load_state_dict(pretrained[0].state_dict())  # the pretrained weights, in a fresh body
model = nn.Sequential(trained_body, nn.Linear(128, 10))
for p in model[0].parameters(): p.requires_grad_(False)   # the body only
for m in model.modules():
    if isinstance(m, nn.BatchNorm1d):
        for p in m.parameters(): p.requires_grad_(True)
learn = Learner(tt2_data.loaders(x, y), model, loss_func=CrossEntropyLossFlat(), metrics=accuracy)
learn.fit(3, 3e-3)
