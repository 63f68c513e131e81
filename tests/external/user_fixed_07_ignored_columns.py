"""Issue 17's catch table, case 07, fixed: the model takes every column of the data (n_in = x.shape[1]) and the forward
uses all of them. Healthy: should raise nothing."""
import torch
from torch import nn
from fastai.learner import Learner
from fastai.losses import MSELossFlat
from fastai.metrics import rmse
from fastai.torch_core import set_seed
import tt2_data

class Net(nn.Module):
    def __init__(self, n_in):
        super().__init__()
        self.layers = nn.Sequential(nn.Linear(n_in, 32), nn.ReLU(), nn.Linear(32, 1))
    def forward(self, x): return self.layers(x)

set_seed(0)
g = torch.Generator().manual_seed(0)
x = torch.randn(400, 8, generator=g)
y = (x @ torch.randn(8, generator=g) * 0.5 + 0.1 * torch.randn(400, generator=g)).unsqueeze(1)
dls = tt2_data.loaders(x, y)
learn = Learner(dls, Net(x.shape[1]), loss_func=MSELossFlat(), metrics=rmse)
learn.fit(3, 3e-3)
