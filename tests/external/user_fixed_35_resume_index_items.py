"""Issue 26, part 7's resume over bare-index items, fixed: RandomSplitter(seed=42) draws the same split of range(n) in
every session, so the weights learn.load puts back were trained on this split's training rows only. Healthy: should
raise nothing."""
import tempfile
import numpy as np
from sklearn.datasets import load_digits
from torch import nn
from fastai.data.block import DataBlock, TransformBlock, CategoryBlock
from fastai.data.transforms import RandomSplitter
from fastai.learner import Learner
from fastai.losses import CrossEntropyLossFlat
from fastai.metrics import accuracy

X, y = load_digits(return_X_y=True)
X = (X / 16).astype('float32')
path = tempfile.mkdtemp()

def get_x(i): return X[i]
def get_y(i): return y[i]

def get_learner():
    dblock = DataBlock(blocks=(TransformBlock, CategoryBlock), get_x=get_x, get_y=get_y,
                       splitter=RandomSplitter(seed=42))
    dls = dblock.dataloaders(range(len(X)), bs=64)
    model = nn.Sequential(nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, dls.c))
    return Learner(dls, model, loss_func=CrossEntropyLossFlat(), metrics=accuracy, path=path)

# session 1: train and save
learn = get_learner()
learn.fit(3, 3e-3)
learn.save('digits')

# session 2 (after a restart): rebuild, load, evaluate
learn = get_learner()
learn.load('digits')
print('validation loss, accuracy:', learn.validate())
