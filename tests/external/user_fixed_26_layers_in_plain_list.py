"""Issue 26's unregistered layers, fixed: the hidden layers in an `nn.ModuleList`, so they are parameters of the model
and fastai's optimizer steps them. Healthy: should raise nothing."""
from torch import nn
from fastai.learner import Learner
from fastai.losses import CrossEntropyLossFlat
from fastai.metrics import accuracy
from fastai.torch_core import set_seed
import tt2_data

class MLP(nn.Module):
    def __init__(self, n_in=32, width=32, n_hidden=3, n_out=10):
        super().__init__()
        self.inp = nn.Linear(n_in, width)
        self.hidden = nn.ModuleList([nn.Linear(width, width) for _ in range(n_hidden)])
        self.out = nn.Linear(width, n_out)
    def forward(self, x):
        x = self.inp(x).relu()
        for layer in self.hidden: x = layer(x).relu()
        return self.out(x)

set_seed(0)
dls = tt2_data.loaders(*tt2_data.classification())
learn = Learner(dls, MLP(), loss_func=CrossEntropyLossFlat(), metrics=accuracy)
learn.fit(3, 1e-2)
