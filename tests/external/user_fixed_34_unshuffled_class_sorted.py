"""Issue 26's user case 34, fixed: the training DataLoader shuffles (`shuffle=True`); the data is still stored class by
class. Healthy: should raise nothing."""
import torch
from torch import nn
from torch.utils.data import TensorDataset, DataLoader
from fastai.data.core import DataLoaders
from fastai.learner import Learner
from fastai.losses import CrossEntropyLossFlat
from fastai.metrics import accuracy
from fastai.torch_core import set_seed
import tt2_data

set_seed(0)
x, y = tt2_data.classification()
order = y.argsort(stable=True)
x, y = x[order], y[order]
is_valid = torch.arange(len(y)) % 5 == 0
train_dl = DataLoader(TensorDataset(x[~is_valid], y[~is_valid]), batch_size=32, shuffle=True)
valid_dl = DataLoader(TensorDataset(x[is_valid], y[is_valid]), batch_size=32)
model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 10))
learn = Learner(DataLoaders(train_dl, valid_dl), model, loss_func=CrossEntropyLossFlat(), metrics=accuracy)
learn.fit(5, 3e-3)
