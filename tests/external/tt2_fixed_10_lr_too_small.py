"""torchtest2 README bug 10, fixed: SGD at lr=0.1. Healthy."""
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
model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 10))
learn = Learner(dls, model, loss_func=CrossEntropyLossFlat(), metrics=accuracy, opt_func=SGD, lr=0.1)
learn.fit(2)
