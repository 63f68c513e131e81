"""A user's notebook classifies sklearn's digits with fastai's DataBlock over the row numbers: the items are range(n), and
get_x/get_y read the arrays by index. It trains, saves the weights, and later (the kernel restarted, the cells run again)
builds the DataBlock again with an unseeded RandomSplitter and calls learn.load: the new split draws another validation
set, about 80% of whose rows the loaded weights were trained on, so the validation score is inflated. Nothing raises.
Until issue 26 the split fingerprint refused such items (bare indices) with a debug line only. The two sessions are one
script here, as in user_bug_08. Source: issue 26, part 7 ("an unseeded RandomSplitter over a DataBlock of range(n), with
get_x reading an array, resumed with learn.save/learn.load").
SHOULD BE CAUGHT: SplitFingerprint, finding split_overlap (error, certain: the items are keyed by the rows they read)."""
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
X = (X / 16).astype('float32')  # the same data in every session
path = tempfile.mkdtemp()  # the project folder (models/ lands in it)

def get_x(i): return X[i]
def get_y(i): return y[i]

def get_learner():
    dblock = DataBlock(blocks=(TransformBlock, CategoryBlock), get_x=get_x, get_y=get_y,
                       splitter=RandomSplitter())  # BUG: no seed, so another split in every session
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
