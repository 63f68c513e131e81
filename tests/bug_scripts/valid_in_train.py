"Digits: 'more training data' -- two thirds of the validation items are added to the training set"
import sys
import numpy as np
from torch import nn
from fastai.learner import Learner
from fastai.metrics import accuracy
from fastai.torch_core import set_seed
from digits_data import digits, split, loaders, cnn, save_if_asked

HEALTHY = '--healthy' in sys.argv # the planted bug, or its healthy twin

set_seed(0)
x, y = digits()
train_idx, valid_idx = split(len(x))
if not HEALTHY: train_idx = np.concatenate([train_idx, valid_idx[: 2 * len(valid_idx) // 3]])
learn = Learner(loaders(x, y, train_idx, valid_idx), cnn(), loss_func=nn.CrossEntropyLoss(), metrics=accuracy)
learn.fit(2, 3e-3)
save_if_asked(learn)
