"""torchtest2 README bug 7, fixed: an epsilon inside the sqrt. Healthy."""
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
        dist = (z[:, None] - z[None, :]).pow(2).sum(-1).add(1e-8).sqrt()  # pairwise distances in the batch
        return self.head(dist.mean(1, keepdim=True))

set_seed(0)
dls = tt2_data.loaders(*tt2_data.classification())
learn = Learner(dls, Embedder(), loss_func=CrossEntropyLossFlat(), metrics=accuracy)
learn.fit(2, 1e-2)
