"""Issue 17's catch table, case 05, fixed: the head is replaced before lr_find (and so before any optimizer is built).
Healthy: should raise nothing."""
import tempfile
from torch import nn
from fastai.learner import Learner
from fastai.losses import CrossEntropyLossFlat
from fastai.metrics import accuracy
from fastai.callback.schedule import fit_one_cycle, lr_find
from fastai.torch_core import set_seed
import tt2_data

set_seed(0)
dls = tt2_data.loaders(*tt2_data.classification())
model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 1000))
model[-1] = nn.Linear(64, 10)
learn = Learner(dls, model, loss_func=CrossEntropyLossFlat(), metrics=accuracy, path=tempfile.mkdtemp())
learn.lr_find(show_plot=False)
learn.fit_one_cycle(2, 1e-2)
