"""A user's regression in fastai with PyTorch's own `nn.MSELoss`: the model ends in `nn.Linear(64, 1)`, so its outputs have
shape [bs, 1], while the targets are a plain vector of shape [bs]. `nn.MSELoss` broadcasts the two to [bs, bs] and compares
every output with every item's target: the model learns the targets' mean (valid R2 about 0.03, against 0.99 with the shapes
matched). PyTorch's "Using a target size ... different to the input size" UserWarning scrolls past in the fit's output.
Source: issue 26 ("nn.MSELoss between outputs of shape [bs, 1] and targets of shape [bs]"); the forums' recurring "my
regression only predicts the mean" threads.
SHOULD BE CAUGHT: loss_shape_broadcast (error, certain: [64, 1] against [64] broadcast to [64, 64])."""
import torch
from torch import nn
from fastai.learner import Learner
from fastai.metrics import rmse
from fastai.torch_core import set_seed
import tt2_data

set_seed(0)
x, y = tt2_data.regression()
y = y.view(-1)  # the targets as a plain vector, as they come out of a DataFrame column
dls = tt2_data.loaders(x, y)
model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 1))
learn = Learner(dls, model, loss_func=nn.MSELoss(), metrics=rmse)  # BUG: [bs, 1] outputs against [bs] targets
learn.fit(5, 3e-3)
