"""Issue 17's catch table, case 06, fixed: the activations are clipped with torch (h.clamp(0, 6)), which autograd
differentiates. Healthy: should raise nothing."""
import torch
from torch import nn
from fastai.learner import Learner
from fastai.losses import CrossEntropyLossFlat
from fastai.metrics import accuracy
from fastai.torch_core import set_seed
import tt2_data

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(32, 64), nn.ReLU())
        self.head = nn.Linear(64, 10)
    def forward(self, x):
        h = self.body(x).clamp(0, 6)
        return self.head(h)

set_seed(0)
dls = tt2_data.loaders(*tt2_data.classification())
learn = Learner(dls, Net(), loss_func=CrossEntropyLossFlat(), metrics=accuracy)
learn.fit(2, 1e-2)
