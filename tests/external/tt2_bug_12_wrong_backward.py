"""torchtest2 README bug 12, "A custom autograd.Function with a wrong backward()": the gradient of x**2 is given as x;
the model still trains, just badly.
SHOULD BE CAUGHT: a gradient check (analytical and numerical gradients disagree) -- none of fastai_paranoid's checks does it today."""
from torch import nn
import torch
import torch.nn.functional as F
from fastai.learner import Learner
from fastai.losses import CrossEntropyLossFlat
from fastai.metrics import accuracy
from fastai.optimizer import SGD
from fastai.torch_core import set_seed, params
import tt2_data

class Square(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x**2
    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return x * grad  # BUG: the derivative of x**2 is 2 * x

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc0 = nn.Linear(32, 32)
        self.fc = nn.Linear(32, 10)
    def forward(self, x):
        return self.fc(Square.apply(self.fc0(x)))

set_seed(0)
dls = tt2_data.loaders(*tt2_data.classification())
learn = Learner(dls, Net(), loss_func=CrossEntropyLossFlat(), metrics=accuracy)
learn.fit(2, 1e-2)
