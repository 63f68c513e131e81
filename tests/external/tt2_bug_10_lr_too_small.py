"""torchtest2 README bug 10, "Loss problems", its second case: plain SGD at lr=1e-5, the loss does not move on one batch
(torchtest2: "the loss did not decrease on a single batch in 200 steps"). (Its first case, reduction="none", fails loudly
in fastai: backward() on a non-scalar raises.)
SHOULD BE CAUGHT: lr / overfit one batch (the loss barely moves at lr=1e-5)."""
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
learn = Learner(dls, model, loss_func=CrossEntropyLossFlat(), metrics=accuracy, opt_func=SGD, lr=1e-5)
learn.fit(2)
