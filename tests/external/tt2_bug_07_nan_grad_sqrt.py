"""torchtest2 README bug 7, "NaN gradients behind a clean forward pass": pairwise euclidean distances, and d/dx sqrt(x) is
infinite at 0 (the diagonal): the forward is finite, the gradients are NaN, and the first step turns the weights to NaN.
SHOULD BE CAUGHT: the NaN guard (NaN loss after the first step) or a gradient check (NaN gradients in fc.weight, fc.bias)."""
from torch import nn
import torch
import torch.nn.functional as F
from fastai.learner import Learner
from fastai.losses import CrossEntropyLossFlat
from fastai.metrics import accuracy
from fastai.optimizer import SGD
from fastai.torch_core import set_seed, params
import tt2_data

class Embedder(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(32, 8)
        self.head = nn.Linear(1, 10)
    def forward(self, x):
        z = self.fc(x)
        dist = (z[:, None] - z[None, :]).pow(2).sum(-1).sqrt()  # pairwise distances in the batch
        return self.head(dist.mean(1, keepdim=True))

set_seed(0)
dls = tt2_data.loaders(*tt2_data.classification())
learn = Learner(dls, Embedder(), loss_func=CrossEntropyLossFlat(), metrics=accuracy)
learn.fit(2, 1e-2)
