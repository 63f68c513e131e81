"""A multi-label model that ends in a sigmoid under `BCEWithLogitsLossFlat`, which applies the sigmoid again.
CAUSE: check_loss_activation (a sigmoid before a loss that applies it)."""
import torch
from torch import nn
from fastai.learner import Learner
from fastai.losses import BCEWithLogitsLossFlat
from fastai.metrics import accuracy_multi
from fastai.torch_core import set_seed
import tt2_data

set_seed(0)
x, y = tt2_data.classification()
targets = torch.nn.functional.one_hot(y, 10).float()
targets[:, 0] = (x[:, 0] > 0).float()  # a second tag on some items
dls = tt2_data.loaders(x, targets)
model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 10), nn.Sigmoid())  # BUG: sigmoid before BCEWithLogits. FIX: model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 10))
learn = Learner(dls, model, loss_func=BCEWithLogitsLossFlat(), metrics=accuracy_multi)
learn.fit(3, 1e-2)
