"""A user skips the updates whose gradient is too large, with a callback that raises `CancelBatchException` in
`before_step`. That also skips fastai's `opt.zero_grad()` (it follows the step in `Learner._do_grad_opt`), so the next
batch's gradient is added to the stale one; its norm grows, and soon every batch is skipped while fastai keeps printing
epochs. Source: issue 26 ("88 of 150 batches started with stale gradients, and the valid loss froze").
SHOULD BE CAUGHT: StaleGradGuard (error: the count of batches that started from stale gradients, the fix
CancelStepException)."""
import torch
from torch import nn
from fastai.learner import Learner
from fastai.callback.core import Callback, CancelBatchException
from fastai.losses import CrossEntropyLossFlat
from fastai.metrics import accuracy
from fastai.torch_core import set_seed
import tt2_data

class SkipLargeUpdates(Callback):
    "Skip the update when the gradients' norm is above `max_norm`"
    def __init__(self, max_norm=0.8): self.max_norm = max_norm
    def before_step(self):
        norm = torch.stack([p.grad.norm() for p in self.learn.model.parameters() if p.grad is not None]).norm()
        if norm > self.max_norm: raise CancelBatchException()  # BUG: skips zero_grad too

set_seed(0)
dls = tt2_data.loaders(*tt2_data.classification())
model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 10))
learn = Learner(dls, model, loss_func=CrossEntropyLossFlat(), metrics=accuracy, cbs=SkipLargeUpdates())
learn.fit(15, 1e-2)
