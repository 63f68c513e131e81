"Two blobs, a hand-written binary cross-entropy on sigmoid outputs: once the model is confident, log(1 - sigmoid) is log(0) and the loss turns NaN in epoch 2"
import sys
import numpy as np
import torch
from torch import nn
import torch.nn.functional as F
from fastai.learner import Learner
from fastai.torch_core import set_seed
from digits_data import split, loaders, save_if_asked

HEALTHY = '--healthy' in sys.argv # the planted bug, or its healthy twin

def bce(out, y):
    y = y.float()
    if HEALTHY: return F.binary_cross_entropy_with_logits(out[:, 0], y)
    p = torch.sigmoid(out[:, 0])
    return -(y * torch.log(p) + (1 - y) * torch.log(1 - p)).mean()

set_seed(0)
rng = np.random.default_rng(0)
y = torch.tensor(rng.random(512) < 0.5).long()
x = torch.tensor(rng.normal(size=(512, 2)), dtype=torch.float32) + 3 * (2 * y[:, None] - 1)
learn = Learner(loaders(x, y, *split(len(x))), nn.Linear(2, 1), loss_func=bce)
learn.fit(4, 0.3)
save_if_asked(learn)
