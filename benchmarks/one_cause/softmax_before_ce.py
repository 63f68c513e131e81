"""A classifier that ends in a softmax under `CrossEntropyLossFlat`, which applies log_softmax again: the gradient shrinks and
the loss stalls (issue 39's "one fault, two errors").
CAUSE: check_loss_activation (a softmax before a loss that applies log_softmax)."""
from torch import nn
from fastai.learner import Learner
from fastai.losses import CrossEntropyLossFlat
from fastai.metrics import accuracy
from fastai.torch_core import set_seed
import tt2_data

set_seed(0)
dls = tt2_data.loaders(*tt2_data.classification())
model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 10), nn.Softmax(dim=1))  # BUG: softmax before the loss. FIX: model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 10))
learn = Learner(dls, model, loss_func=CrossEntropyLossFlat(), metrics=accuracy)
learn.fit(3, 1e-2)
