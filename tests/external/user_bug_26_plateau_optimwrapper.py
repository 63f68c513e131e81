"""A user wraps PyTorch's SGD in fastai's `OptimWrapper` and adds `ReduceLROnPlateau`. The callback writes
`self.opt.hypers[i]['lr']`, and `OptimWrapper.hypers` builds new dicts from `param_groups` on each read, so the write is
lost: it prints "reducing lr" after each plateau epoch while SGD keeps stepping with 0.03 (fastai issue #4046, open).
Source: issue 26. SHOULD BE CAUGHT: LostHyperGuard (error: the lr written, the lr the optimizer steps with)."""
from functools import partial
import torch
from torch import nn
from fastai.learner import Learner
from fastai.optimizer import OptimWrapper
from fastai.callback.tracker import ReduceLROnPlateau
from fastai.losses import CrossEntropyLossFlat
from fastai.metrics import accuracy
from fastai.torch_core import set_seed
import tt2_data

set_seed(0)
dls = tt2_data.loaders(*tt2_data.classification())
model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 10))
learn = Learner(dls, model, loss_func=CrossEntropyLossFlat(), metrics=accuracy,
                opt_func=partial(OptimWrapper, opt=torch.optim.SGD))  # BUG with a callback that writes opt.hypers
learn.fit(10, 0.03, cbs=ReduceLROnPlateau(monitor='valid_loss', min_delta=0.05, patience=1, factor=2))
print('lr the optimizer steps with after the fit:', learn.opt.opt.param_groups[0]['lr'])
