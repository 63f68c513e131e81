"""fastai nbs/12_optimizer.ipynb: a PyTorch optimizer wrapped in `OptimWrapper` (`opt_func=partial(OptimWrapper,
opt=torch.optim.AdamW)`), trained with `fit` and with `fit_one_cycle`, whose `ParamScheduler` sets lr and mom through
`set_hyper` (which writes the wrapped optimizer's `param_groups`), and `ReduceLROnPlateau` on fastai's own Adam: the
healthy neighbours of issue 26's lost learning rate. Healthy: should raise nothing."""
from functools import partial
import torch
from torch import nn
from fastai.learner import Learner
from fastai.optimizer import OptimWrapper, Adam
from fastai.callback.schedule import *
from fastai.callback.tracker import ReduceLROnPlateau
from fastai.losses import CrossEntropyLossFlat
from fastai.metrics import accuracy
from fastai.torch_core import set_seed
import tt2_data

def mlp(): return nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 10))

set_seed(0)
dls = tt2_data.loaders(*tt2_data.classification())
learn = Learner(dls, mlp(), loss_func=CrossEntropyLossFlat(), metrics=accuracy, opt_func=partial(OptimWrapper, opt=torch.optim.AdamW))
learn.fit(2, 1e-3)
learn.fit_one_cycle(3, 1e-2)
learn = Learner(dls, mlp(), loss_func=CrossEntropyLossFlat(), metrics=accuracy, opt_func=Adam)
learn.fit(6, 1e-2, cbs=ReduceLROnPlateau(monitor='valid_loss', min_delta=0.05, patience=1))
