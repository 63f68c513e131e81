"""A regression onto prices in the hundreds through a model that ends in `nn.Sigmoid()`, copied from a classifier: the
outputs stay in (0, 1), the targets do not.
CAUSE: check_target_range (a sigmoid bounds the outputs to (0, 1); the targets run from about 60 to 340)."""
from torch import nn
from fastai.learner import Learner
from fastai.torch_core import set_seed
import tt2_data

set_seed(0)
x, y = tt2_data.regression()
dls = tt2_data.loaders(x, 200 + 50 * y)
model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 1), nn.Sigmoid())  # BUG: a classifier's last activation. FIX: model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 1))
learn = Learner(dls, model, loss_func=nn.MSELoss())
learn.fit(3, 3e-3)
