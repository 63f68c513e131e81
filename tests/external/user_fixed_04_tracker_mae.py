"""Issue 17's catch table, case 04, fixed: SaveModelCallback(monitor='mae', comp=np.less) keeps the epoch with the
lowest mean absolute error. Healthy: should raise nothing."""
import tempfile
import numpy as np
from torch import nn
from fastai.learner import Learner
from fastai.losses import MSELossFlat
from fastai.metrics import mae
from fastai.callback.tracker import SaveModelCallback
from fastai.torch_core import set_seed
import tt2_data

set_seed(0)
dls = tt2_data.loaders(*tt2_data.regression())
model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 1))
learn = Learner(dls, model, loss_func=MSELossFlat(), metrics=mae, path=tempfile.mkdtemp())
learn.fit(4, 3e-3, cbs=SaveModelCallback(monitor='mae', comp=np.less, fname='best'))
