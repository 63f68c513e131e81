"""A user builds a configurable MLP and keeps its hidden layers in a plain Python list. `nn.Module` registers only
attributes that are modules (or `nn.ModuleList`/`nn.Sequential`), so `model.parameters()` holds the input and output
layers only; fastai's optimizer never sees the hidden weights, which get gradients and never change. Nothing raises.
Source: issue 26 ("162 of 3,330 parameters registered, and the hidden weights never change").
SHOULD BE CAUGHT: UnregisteredTensorGuard (error: the count and shapes of the tensors outside the model)."""
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
        self.hidden = [nn.Linear(width, width) for _ in range(n_hidden)]  # BUG: a plain list is not registered
        self.out = nn.Linear(width, n_out)
    def forward(self, x):
        x = self.inp(x).relu()
        for layer in self.hidden: x = layer(x).relu()
        return self.out(x)

set_seed(0)
dls = tt2_data.loaders(*tt2_data.classification())
learn = Learner(dls, MLP(), loss_func=CrossEntropyLossFlat(), metrics=accuracy)
learn.fit(3, 1e-2)
