"""torchtest2 README bug 11, fixed: the variance goes through softplus, so it stays positive. Healthy."""
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
            std = F.softplus(self.var).sqrt()  # a variance that stays positive
            logits = logits + std * torch.randn_like(logits)
        return logits

set_seed(0)
dls = tt2_data.loaders(*tt2_data.classification())
learn = Learner(dls, NoisyNet(), loss_func=CrossEntropyLossFlat(), metrics=accuracy, opt_func=SGD, lr=0.1, moms=(0, 0, 0))
learn.fit(3)
