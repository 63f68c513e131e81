"""fastai nbs/18a_callback.training.ipynb: `GradientAccumulation` skips the step and `zero_grad` (a `CancelBatchException`
in `before_step`) until `n_acc` items have gone through, then steps once: accumulation by design, the healthy neighbour of
issue 26's stale gradients. `learn.fit(2, cbs=GradientAccumulation(n_acc=...))` on the torchtest2 problem.
Healthy: should raise nothing."""
from torch import nn
from fastai.learner import Learner
from fastai.callback.training import GradientAccumulation
from fastai.losses import CrossEntropyLossFlat
from fastai.metrics import accuracy
from fastai.torch_core import set_seed
import tt2_data

set_seed(0)
dls = tt2_data.loaders(*tt2_data.classification())
model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 10))
learn = Learner(dls, model, loss_func=CrossEntropyLossFlat(), metrics=accuracy)
learn.fit(4, 1e-2, cbs=GradientAccumulation(n_acc=128))
