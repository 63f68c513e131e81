"""torchtest2 README bug 8, "Over-confident initialisation": the last layer is initialised with std 1, the loss at init is
about 4x ln(10).
SHOULD BE CAUGHT: loss at init (initial loss far above ln(10) = 2.30)."""
from torch import nn
import torch
import torch.nn.functional as F
from fastai.learner import Learner
from fastai.losses import CrossEntropyLossFlat
from fastai.metrics import accuracy
from fastai.optimizer import SGD
from fastai.torch_core import set_seed, params
import tt2_data

set_seed(0)
dls = tt2_data.loaders(*tt2_data.classification())
model = nn.Sequential(nn.Linear(32, 256), nn.ReLU(), nn.Linear(256, 10))
nn.init.normal_(model[2].weight, std=1.0)  # instead of the default ~U(-1/16, 1/16)
learn = Learner(dls, model, loss_func=CrossEntropyLossFlat(), metrics=accuracy)
learn.fit(2, 1e-3)
