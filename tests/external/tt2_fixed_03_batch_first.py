"""torchtest2 README bug 3, fixed: batch_first=True. Healthy."""
import torch
from torch import nn
from fastai.learner import Learner
from fastai.losses import CrossEntropyLossFlat
from fastai.metrics import accuracy
from fastai.torch_core import set_seed
import tt2_data

class Encoder(nn.Module):
    def __init__(self, dim=16, heads=4, n_classes=10):
        super().__init__()
        self.attn = nn.MultiheadAttention(dim, heads, batch_first=True)
        self.out = nn.Linear(dim, n_classes)
    def forward(self, x):  # x: (batch, tokens, dim)
        h, _ = self.attn(x, x, x)
        return self.out(h.mean(1))

set_seed(0)
x, y = tt2_data.classification(n_features=6 * 16)
dls = tt2_data.loaders(x.view(-1, 6, 16), y)
learn = Learner(dls, Encoder(), loss_func=CrossEntropyLossFlat(), metrics=accuracy)
learn.fit(2, 3e-3)
