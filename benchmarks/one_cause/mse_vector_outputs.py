"""A regression whose model squeezes its outputs to [bs] while the targets stay [bs, 1]: `nn.MSELoss` broadcasts the two to
[bs, bs] (issue 39: outputs [bs] against targets [bs, 1], the mirror of users' usual case).
CAUSE: loss_shape_broadcast ([bs] against [bs, 1])."""
from torch import nn
from fastai.learner import Learner
from fastai.metrics import rmse
from fastai.torch_core import set_seed
import tt2_data

class Squeezed(nn.Sequential):
    def forward(self, x): return super().forward(x).squeeze(-1)

set_seed(0)
dls = tt2_data.loaders(*tt2_data.regression())  # targets [bs, 1]
model = Squeezed(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 1))  # BUG: outputs [bs]. FIX: model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 1))
learn = Learner(dls, model, loss_func=nn.MSELoss())
learn.fit(5, 3e-3)
