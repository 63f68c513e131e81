"Digits as 64 pixel features (jittered, standardized per feature): the forward keeps x[:, :32], the top half of each image"
import sys
import torch
from torch import nn
from fastai.learner import Learner
from fastai.metrics import accuracy
from fastai.torch_core import set_seed
from digits_data import digits, split, loaders, save_if_asked

HEALTHY = '--healthy' in sys.argv # the planted bug, or its healthy twin
N_IN = 64 if HEALTHY else 32

class MLP(nn.Module):
    def __init__(self): super().__init__(); self.net = nn.Sequential(nn.Linear(N_IN, 64), nn.ReLU(), nn.Linear(64, 10))
    def forward(self, x): return self.net(x[:, :N_IN])

set_seed(0)
x, y = digits()
x = x.flatten(1) + 0.1 * torch.randn(len(x), 64) # no pixel constant over the data set
x = (x - x.mean(0)) / x.std(0)
dls = loaders(x, y, *split(len(x)))
learn = Learner(dls, MLP(), loss_func=nn.CrossEntropyLoss(), metrics=accuracy)
learn.fit(2, 3e-3)
save_if_asked(learn)
