"""Issue 26's lost learning rate, fixed: fastai's own `SGD`, whose `hypers` is the list its step reads, so
`ReduceLROnPlateau`'s reductions reach it. Healthy: should raise nothing."""
import torch
from torch import nn
from fastai.learner import Learner
from fastai.optimizer import SGD
from fastai.callback.tracker import ReduceLROnPlateau
from fastai.losses import CrossEntropyLossFlat
from fastai.metrics import accuracy
from fastai.torch_core import set_seed
import tt2_data

set_seed(0)
dls = tt2_data.loaders(*tt2_data.classification())
model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 10))
learn = Learner(dls, model, loss_func=CrossEntropyLossFlat(), metrics=accuracy, opt_func=SGD)
learn.fit(10, 0.03, cbs=ReduceLROnPlateau(monitor='valid_loss', min_delta=0.05, patience=1, factor=2))
print('lr the optimizer steps with after the fit:', learn.opt.hypers[0]['lr'])
