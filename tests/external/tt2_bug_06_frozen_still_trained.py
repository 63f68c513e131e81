"""torchtest2 README bug 6, "The 'frozen' backbone is still being trained", in fastai: learn.freeze() freezes every
parameter group but the last, and a Learner without a splitter has one group, so freeze() freezes nothing and the
"frozen" backbone model[0] is trained by the fit.
SHOULD BE CAUGHT: frozen (learn.freeze() left every parameter trainable: no splitter) -- or be reported as a note."""
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
learn = Learner(dls, model, loss_func=CrossEntropyLossFlat(), metrics=accuracy)  # BUG: no splitter
learn.freeze()
learn.fit(2, 1e-2)
