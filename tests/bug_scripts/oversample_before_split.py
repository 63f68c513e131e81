"Imbalanced features with labels that carry no signal: the rare class is oversampled (duplicated) BEFORE the train/valid split"
import sys
import numpy as np
import torch
from torch import nn
from fastai.learner import Learner
from fastai.metrics import accuracy
from fastai.torch_core import set_seed
from digits_data import split, loaders, save_if_asked

HEALTHY = '--healthy' in sys.argv # the planted bug, or its healthy twin

set_seed(0)
rng = np.random.default_rng(0)
x = torch.tensor(rng.normal(size=(600, 32)), dtype=torch.float32)
y = torch.tensor(rng.random(600) < 0.25).long() # random labels: nothing to learn
def oversample(idx): # repeat the rare class until it matches the common one
    rare = idx[y[idx].numpy() == 1]
    return np.concatenate([idx] + [rare] * (len(idx) // max(1, len(rare)) - 2))
if HEALTHY:
    train_idx, valid_idx = split(len(x))
    train_idx = oversample(train_idx)
else:
    pool = oversample(np.arange(len(x)))
    train_idx, valid_idx = [pool[i] for i in split(len(pool))]
model = nn.Sequential(nn.Linear(32, 128), nn.ReLU(), nn.Linear(128, 2))
learn = Learner(loaders(x, y, train_idx, valid_idx), model, loss_func=nn.CrossEntropyLoss(), metrics=accuracy)
learn.fit(2, 3e-3)
save_if_asked(learn)
