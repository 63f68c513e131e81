"""A user runs learn.lr_find() on a "pretrained" model, then swaps its 1000-class head for one with the task's 10
classes and trains with fit_one_cycle. lr_find leaves its optimizer in learn.opt (fastai reloads it at the end of
lr_find), and fit(reset_opt=False) keeps it: the optimizer holds the old head's parameters, the new head's weight and
bias are never stepped, and it predicts from its random initialisation. Nothing raises. Source: fastai issue #3013
"insert a lr_find in front of the fit, it will change the training result" (github.com/fastai/fastai/issues/3013: "After
calling lr_find, the optimizer's state dict is kept") and issue 17's catch table (case 05; torchtest2's gallery bug 1,
tests/external/tt2_bug_01_optimizer_before_head.py, is the learn.create_opt() form of it).
SHOULD BE CAUGHT: check_optimizer_coverage (error, certain), or the leak detector at the fit after lr_find."""
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
model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 1000))  # "pretrained" model with a 1000-class head
learn = Learner(dls, model, loss_func=CrossEntropyLossFlat(), metrics=accuracy, path=tempfile.mkdtemp())
learn.lr_find(show_plot=False)
learn.model[-1] = nn.Linear(64, 10)  # BUG: the new head comes after lr_find built the optimizer
learn.fit_one_cycle(2, 1e-2)
