"""Issue 17's catch table, case 10, fixed: fastai's BnFreeze callback keeps the BatchNorm layers of the frozen trunk
in eval mode, so their running statistics stay the pretrained ones during the frozen epochs (train_bn=False freezes
their weight and bias). Healthy: should raise nothing."""
import torch
from torch import nn
from fastai.learner import Learner
from fastai.losses import CrossEntropyLossFlat
from fastai.metrics import accuracy
from fastai.callback.schedule import fine_tune
from fastai.callback.training import BnFreeze
from fastai.torch_core import set_seed, params
import tt2_data

def trunk():
    return nn.Sequential(nn.Linear(32, 64), nn.BatchNorm1d(64), nn.ReLU(), nn.Linear(64, 64), nn.BatchNorm1d(64), nn.ReLU())

set_seed(0)
x, y = tt2_data.classification()
pretrained = nn.Sequential(trunk(), nn.Linear(64, 10))
opt = torch.optim.Adam(pretrained.parameters(), lr=3e-3)
for idx in torch.randperm(len(x)).split(32):
    opt.zero_grad()
    nn.functional.cross_entropy(pretrained(2 * x[idx] + 1), y[idx]).backward()
    opt.step()

body = trunk()
body.load_state_dict(pretrained[0].state_dict())
model = nn.Sequential(body, nn.Linear(64, 10))
learn = Learner(tt2_data.loaders(x, y), model, loss_func=CrossEntropyLossFlat(), metrics=accuracy,
                splitter=lambda m: [params(m[0]), params(m[1])], train_bn=False, cbs=BnFreeze())
learn.fine_tune(1, 3e-3, freeze_epochs=1)
