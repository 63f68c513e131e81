"""Issue 17's catch table, case 08, fixed: RandomSplitter(seed=42) draws the same split in every session, so the
weights learn.load puts back were trained on the training items of this split only. Healthy: should raise nothing."""
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
df = pd.DataFrame(rng.normal(size=(400, 8)).astype('float32'), columns=cols)
df['label'] = np.where(df.x0 + df.x1 * df.x2 + rng.normal(0, 0.5, 400) > 0, 'pos', 'neg')
features = lambda row: torch.tensor(row[cols].to_numpy(dtype='float32'))
path = tempfile.mkdtemp()

def get_learner():
    splits = RandomSplitter(seed=42)(df)
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
