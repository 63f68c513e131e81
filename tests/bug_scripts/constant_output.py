"Digits: the head returns its bias, broadcast over the batch (the features were meant to go through a Linear): every image gets the same logits"
import sys
import torch
from torch import nn
from fastai.learner import Learner
from fastai.metrics import accuracy
from fastai.torch_core import set_seed
from digits_data import digits, split, loaders, cnn, save_if_asked

HEALTHY = '--healthy' in sys.argv # the planted bug, or its healthy twin

class Head(nn.Module):
    def __init__(self): super().__init__(); self.lin = nn.Linear(64, 10)
    def forward(self, feats): return self.lin(feats) if HEALTHY else self.lin.bias.expand(len(feats), -1)

set_seed(0)
x, y = digits()
dls = loaders(x, y, *split(len(x)))
learn = Learner(dls, nn.Sequential(*list(cnn())[:-1], Head()), loss_func=nn.CrossEntropyLoss(), metrics=accuracy)
learn.fit(2, 3e-3)
save_if_asked(learn)
