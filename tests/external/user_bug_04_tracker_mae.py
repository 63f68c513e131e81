"""A user's regression that keeps its best epoch with SaveModelCallback(monitor='mae'): fastai's TrackerCallback picks
comp=np.less only when 'loss' or 'error' is in the monitor's name, so for 'mae' it keeps the epoch with the HIGHEST
mean absolute error and reloads it at the end of fit. Nothing raises; the saved "best" model is the worst one.
Source: fastai pull request #2469 "improved monitoring of metrics" (github.com/fastai/fastai/pull/2469: "saving the
worst model when monitoring things like loss or mse"; the answer: set comp yourself) and fastai issue #2447
"SaveModelCallback seems to be saving model when performance decreases"; issue 17's catch table (case 04).
SHOULD BE CAUGHT: check_tracker_monitor (error, certain: comp=np.greater on a lower-is-better metric)."""
import tempfile
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
learn = Learner(dls, model, loss_func=MSELossFlat(), metrics=mae, path=tempfile.mkdtemp())  # a scratch folder for models/
learn.fit(4, 3e-3, cbs=SaveModelCallback(monitor='mae', fname='best'))  # BUG: no comp, so np.greater for 'mae'
