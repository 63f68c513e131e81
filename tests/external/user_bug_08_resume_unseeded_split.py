"""A user's notebook trains, saves the weights, and later (the kernel restarted, the cells run again from the top)
builds the DataLoaders again with an unseeded RandomSplitter and calls learn.load to evaluate or keep training: the new
split draws another validation set, about 80% of whose items the loaded weights were trained on, so the validation
score is inflated. Nothing raises. The two sessions are one script here: the second Learner is built the same way,
after the first one's training moved the global RNG, as a rerun after a restart (or other cells) moves it. Source:
issue 17's catch table (case 08, "an unseeded RandomSplitter, learn.save, then learn.load"); fastai's RandomSplitter
has seed=None by default. The two-process form is tests/split_scripts/resume.py (tests/test_splitprint.py).
SHOULD BE CAUGHT: SplitFingerprint, finding split_overlap (error, certain: learn.load counts the validation items the
weights were trained on)."""
import tempfile
import numpy as np, pandas as pd, torch
from torch import nn
from fastai.data.core import Datasets
from fastai.data.transforms import RandomSplitter, ColReader, Categorize
from fastai.learner import Learner
from fastai.losses import CrossEntropyLossFlat
from fastai.metrics import accuracy

rng = np.random.default_rng(0)
cols = [f'x{i}' for i in range(8)]
df = pd.DataFrame(rng.normal(size=(400, 8)).astype('float32'), columns=cols)  # the same data in every session
df['label'] = np.where(df.x0 + df.x1 * df.x2 + rng.normal(0, 0.5, 400) > 0, 'pos', 'neg')
features = lambda row: torch.tensor(row[cols].to_numpy(dtype='float32'))
path = tempfile.mkdtemp()  # the project folder (models/ lands in it)

def get_learner():
    splits = RandomSplitter()(df)  # BUG: no seed, so another split in every session
    dls = Datasets(df, [[features], [ColReader('label'), Categorize()]], splits=splits).dataloaders(bs=32)
    model = nn.Sequential(nn.Linear(8, 64), nn.ReLU(), nn.Linear(64, dls.c))
    return Learner(dls, model, loss_func=CrossEntropyLossFlat(), metrics=accuracy, path=path)

# session 1: train and save
learn = get_learner()
learn.fit(3, 3e-3)
learn.save('stage1')

# session 2 (after a restart): rebuild, load, evaluate
learn = get_learner()
learn.load('stage1')
print('validation loss, accuracy:', learn.validate())
