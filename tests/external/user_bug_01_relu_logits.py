"""A user's classifier whose every Linear layer is followed by a ReLU, the last one included: the logits are clamped at 0,
so a class cannot be voted down by a negative logit, and an output stuck at 0 passes no gradient (a "dead" class). The
user sees a loss that stalls; nothing raises. Source: issue 17's catch table (case 01, "ReLU on the logits"), the
PyTorch forum thread "Cross Entropy loss is not decreasing" (discuss.pytorch.org/t/cross-entropy-loss-is-not-decreasing/43814,
negative parameters behind a final ReLU), and the fastai book's warning (chapter 5) that the loss wants raw activations.
SHOULD BE CAUGHT: check_loss_activation (error, certain: the last layer is a ReLU in front of CrossEntropyLossFlat)."""
from torch import nn
from fastai.learner import Learner
from fastai.losses import CrossEntropyLossFlat
from fastai.metrics import accuracy
from fastai.callback.schedule import fit_one_cycle
from fastai.torch_core import set_seed
import tt2_data

set_seed(0)
dls = tt2_data.loaders(*tt2_data.classification())
model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(),
                      nn.Linear(64, 64), nn.ReLU(),
                      nn.Linear(64, 10), nn.ReLU())  # BUG: a ReLU after the output layer too
learn = Learner(dls, model, loss_func=CrossEntropyLossFlat(), metrics=accuracy)
learn.fit_one_cycle(2, 1e-2)
