"""A user fine-tunes a custom pretrained trunk with BatchNorm layers and passes train_bn=False to keep the trunk's
BatchNorm layers frozen too: freeze() does set their weight and bias to requires_grad=False, but the trunk still runs
in training mode, so its BatchNorm running statistics are overwritten by the new data's batch statistics during the
"frozen" epochs (fastai's BnFreeze callback is what keeps them in eval mode). Nothing raises; the pretrained
statistics are gone. Source: issue 17's catch table (case 10, "frozen BatchNorm statistics drifting"); the same
question in other libraries: speedinghzl/Pytorch-Deeplab issue #17 "Frozen the statistics of BN layers?" ("the running
means and running vars still keep changing during training"); the digits form is tests/bug_scripts/frozen_bn_drift.py.
SHOULD BE CAUGHT: check_frozen (error, certain: the running statistics of frozen BatchNorm layers moved), or FreezeBNStats."""
import torch
from torch import nn
from fastai.learner import Learner
from fastai.losses import CrossEntropyLossFlat
from fastai.metrics import accuracy
from fastai.callback.schedule import fine_tune
from fastai.torch_core import set_seed, params
import tt2_data

def trunk():
    return nn.Sequential(nn.Linear(32, 64), nn.BatchNorm1d(64), nn.ReLU(), nn.Linear(64, 64), nn.BatchNorm1d(64), nn.ReLU())

set_seed(0)
x, y = tt2_data.classification()
pretrained = nn.Sequential(trunk(), nn.Linear(64, 10))  # "pretrained" in plain PyTorch on a shifted copy of the data
opt = torch.optim.Adam(pretrained.parameters(), lr=3e-3)
for idx in torch.randperm(len(x)).split(32):
    opt.zero_grad()
    nn.functional.cross_entropy(pretrained(2 * x[idx] + 1), y[idx]).backward()
    opt.step()

body = trunk()
body.load_state_dict(pretrained[0].state_dict())
model = nn.Sequential(body, nn.Linear(64, 10))
learn = Learner(tt2_data.loaders(x, y), model, loss_func=CrossEntropyLossFlat(), metrics=accuracy,
                splitter=lambda m: [params(m[0]), params(m[1])], train_bn=False)  # BUG: no BnFreeze()
learn.fine_tune(1, 3e-3, freeze_epochs=1)
