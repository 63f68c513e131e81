"""Issue 17's catch table, case 01, fixed: the model ends with the Linear layer, whose raw outputs (logits) go to
CrossEntropyLossFlat. Healthy: should raise nothing."""
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
                      nn.Linear(64, 10))
learn = Learner(dls, model, loss_func=CrossEntropyLossFlat(), metrics=accuracy)
learn.fit_one_cycle(2, 1e-2)
