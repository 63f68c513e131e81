"Transfer on digits: a trunk trained on digits 0-4, frozen with learn.freeze() for a new head on digits 5-9; its BatchNorm statistics keep moving"
import sys
import numpy as np
import torch
from torch import nn
from fastai.learner import Learner
from fastai.callback.training import BnFreeze
from fastai.metrics import accuracy
from fastai.torch_core import set_seed, params
from digits_data import digits, split, loaders, save_if_asked

HEALTHY = '--healthy' in sys.argv # the planted bug, or its healthy twin

set_seed(0)
x, y = digits()
def make_trunk():
    return nn.Sequential(nn.Conv2d(1, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(),
                         nn.Conv2d(16, 32, 3, padding=1, stride=2), nn.BatchNorm2d(32), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten())
first, second = np.flatnonzero(y < 5), np.flatnonzero(y >= 5)
pretrained = nn.Sequential(make_trunk(), nn.Linear(32, 10)) # pretrained on digits 0-4, in plain PyTorch
opt = torch.optim.Adam(pretrained.parameters(), lr=3e-3)
for epoch in range(2):
    for idx in torch.randperm(len(first)).split(64):
        opt.zero_grad()
        nn.functional.cross_entropy(pretrained(x[first[idx]]), y[first[idx]]).backward()
        opt.step()

trunk = make_trunk()
trunk.load_state_dict(pretrained[0].state_dict()) # the pretrained weights
model = nn.Sequential(trunk, nn.Linear(32, 10))
learn = Learner(loaders(x, y, *[second[i] for i in split(len(second))]), model, loss_func=nn.CrossEntropyLoss(), metrics=accuracy,
                splitter=lambda m: [params(m[0]), params(m[1])], train_bn=False, cbs=[BnFreeze()] if HEALTHY else [])
learn.freeze()
learn.fit(2, 3e-3)
save_if_asked(learn)
