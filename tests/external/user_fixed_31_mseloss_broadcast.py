"""Issue 26's user case 31, fixed: fastai's `MSELossFlat()` flattens outputs and targets alike, so [bs, 1] outputs meet
[bs] targets item by item. Healthy: should raise nothing."""
import torch
from torch import nn
from fastai.learner import Learner
from fastai.losses import MSELossFlat
from fastai.metrics import rmse
from fastai.torch_core import set_seed
import tt2_data

set_seed(0)
x, y = tt2_data.regression()
y = y.view(-1)
dls = tt2_data.loaders(x, y)
model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 1))
learn = Learner(dls, model, loss_func=MSELossFlat(), metrics=rmse)
learn.fit(5, 3e-3)
