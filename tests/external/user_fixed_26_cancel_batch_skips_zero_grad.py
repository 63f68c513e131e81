"""Issue 26's stale gradients, fixed: the callback raises `CancelStepException`, so fastai skips the step and still
zeroes the gradients; each backward starts from its own batch's gradient. Healthy: should raise nothing."""
import torch
from torch import nn
from fastai.learner import Learner
from fastai.callback.core import Callback, CancelStepException
from fastai.losses import CrossEntropyLossFlat
from fastai.metrics import accuracy
from fastai.torch_core import set_seed
import tt2_data

class SkipLargeUpdates(Callback):
    "Skip the update when the gradients' norm is above `max_norm`"
    def __init__(self, max_norm=0.8): self.max_norm = max_norm
    def before_step(self):
        norm = torch.stack([p.grad.norm() for p in self.learn.model.parameters() if p.grad is not None]).norm()
        if norm > self.max_norm: raise CancelStepException()

set_seed(0)
dls = tt2_data.loaders(*tt2_data.classification())
model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 10))
learn = Learner(dls, model, loss_func=CrossEntropyLossFlat(), metrics=accuracy, cbs=SkipLargeUpdates())
learn.fit(15, 1e-2)
