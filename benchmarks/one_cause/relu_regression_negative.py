"""A regression whose targets are centred on 0 through a model that ends in a ReLU: no negative target can be reached, and
an output stuck at 0 passes no gradient.
CAUSE: check_target_range (a ReLU bounds the outputs to [0, inf); half the targets are negative)."""
from torch import nn
from fastai.learner import Learner
from fastai.torch_core import set_seed
import tt2_data

set_seed(0)
dls = tt2_data.loaders(*tt2_data.regression())
model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 1), nn.ReLU())  # BUG: a ReLU after the output layer. FIX: model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 1))
learn = Learner(dls, model, loss_func=nn.MSELoss())
learn.fit(3, 3e-3)
