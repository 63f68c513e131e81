"""torchtest2 README bug 11, "NaN gradients that appear only after some training": noise injection with a learnable
variance; SGD drives the variance past 0, and torch.where does not protect the backward of sqrt: the gradients turn NaN
some steps in, although the forward stays finite.
SHOULD BE CAUGHT: the NaN guard (a NaN loss or NaN weights during fit) or overfit one batch (gradients became NaN at step k)."""
from torch import nn
import torch
import torch.nn.functional as F
from fastai.learner import Learner
from fastai.losses import CrossEntropyLossFlat
from fastai.metrics import accuracy
from fastai.optimizer import SGD
from fastai.torch_core import set_seed, params
import tt2_data

class NoisyNet(nn.Module):
    "Gaussian noise injection with a learnable variance"
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(32, 10)
        self.var = nn.Parameter(torch.tensor(1.0))
    def forward(self, x):
        logits = self.fc(x)
        if self.training:
            std = torch.where(self.var > 0, torch.sqrt(self.var), torch.zeros_like(self.var))
            logits = logits + std * torch.randn_like(logits)
        return logits

set_seed(0)
dls = tt2_data.loaders(*tt2_data.classification())
learn = Learner(dls, NoisyNet(), loss_func=CrossEntropyLossFlat(), metrics=accuracy, opt_func=SGD, lr=0.1, moms=(0, 0, 0))
learn.fit(3)
