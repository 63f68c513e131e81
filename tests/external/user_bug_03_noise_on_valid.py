"""A user's noise augmentation written as a plain fastai Transform: a Transform has split_idx=None, so it runs on the
validation items too, and every validate() scores a different noisy copy of the validation set (its loss and metrics
jitter from epoch to epoch, and SaveModelCallback picks an epoch by chance). Nothing raises. Source: fastaudio issue
#101 "Should AddNoise be RandTransform instead of Transform?" (github.com/fastaudio/fastaudio/issues/101: AddNoise
subclassed Transform and so ran on the validation set), and issue 17's catch table (case 03).
SHOULD BE CAUGHT: check_valid_deterministic (error, certain: the first validation batch differs under two seeds)."""
import numpy as np, pandas as pd, torch
from torch import nn
from fasttransform import Transform
from fastai.data.core import Datasets
from fastai.data.transforms import RandomSplitter, ColReader, Categorize
from fastai.learner import Learner
from fastai.losses import CrossEntropyLossFlat
from fastai.metrics import accuracy
from fastai.torch_core import set_seed

class AddNoise(Transform):
    "Gaussian noise on the features, as augmentation"  # BUG: no split_idx = 0, so it also runs on the validation set
    def __init__(self, std=0.3): self.std = std
    def encodes(self, x:torch.Tensor): return x + self.std * torch.randn_like(x)

set_seed(0)
rng = np.random.default_rng(0)
cols = [f'x{i}' for i in range(8)]
df = pd.DataFrame(rng.normal(size=(400, 8)).astype('float32'), columns=cols)
df['label'] = np.where(df.x0 - df.x3 + rng.normal(0, 0.5, 400) > 0, 'a', 'b')
features = lambda row: torch.tensor(row[cols].to_numpy(dtype='float32'))
dsets = Datasets(df, [[features, AddNoise()], [ColReader('label'), Categorize()]], splits=RandomSplitter(seed=42)(df))
dls = dsets.dataloaders(bs=32)
learn = Learner(dls, nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 2)), loss_func=CrossEntropyLossFlat(), metrics=accuracy)
learn.fit(3, 3e-3)
