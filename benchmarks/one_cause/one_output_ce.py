"""A classifier built with one output under `CrossEntropyLossFlat`: log_softmax over one class is 0 for every input, so the
loss is exactly 0 and nothing trains (issue 39's first case).
CAUSE: check_loss_activation (one output for the 10 classes of the targets)."""
from torch import nn
from fastai.learner import Learner
from fastai.losses import CrossEntropyLossFlat
from fastai.metrics import accuracy
from fastai.torch_core import set_seed
import tt2_data

set_seed(0)
dls = tt2_data.loaders(*tt2_data.classification())
model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 1))  # BUG: one output for ten classes. FIX: model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 10))
learn = Learner(dls, model, loss_func=CrossEntropyLossFlat(), metrics=accuracy)
learn.fit(3, 1e-2)
