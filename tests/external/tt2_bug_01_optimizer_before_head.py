"""torchtest2 README bug 1, "The optimizer was created before the head was replaced", in fastai: the Learner's optimizer
is created (learn.create_opt(), as lr_find or a first fit also leave one behind), then the head is replaced; fit() keeps
the existing optimizer (reset_opt=False), so the new head's weight and bias are never stepped.
SHOULD BE CAUGHT: optimizer coverage (2 trainable parameters, 2.weight and 2.bias, are not in learn.opt)."""
from torch import nn
from fastai.learner import Learner
from fastai.losses import CrossEntropyLossFlat
from fastai.metrics import accuracy
from fastai.torch_core import set_seed
import tt2_data

set_seed(0)
dls = tt2_data.loaders(*tt2_data.classification())
model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 1000))  # "pretrained" model
learn = Learner(dls, model, loss_func=CrossEntropyLossFlat(), metrics=accuracy)
learn.create_opt()
learn.model[2] = nn.Linear(64, 10)  # new head for 10 classes, after the optimizer was made
learn.fit(2, 1e-2)
