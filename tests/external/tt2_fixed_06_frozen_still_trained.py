"""torchtest2 README bug 6, fixed: a splitter gives the backbone and the head their own parameter groups, so
learn.freeze() freezes the backbone. Healthy (a frozen backbone by design)."""
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
model = nn.Sequential(nn.Sequential(nn.Linear(32, 64), nn.ReLU()), nn.Linear(64, 10))
learn = Learner(dls, model, loss_func=CrossEntropyLossFlat(), metrics=accuracy,
                splitter=lambda m: [params(m[0]), params(m[1])])
learn.freeze()
learn.fit(2, 1e-2)
