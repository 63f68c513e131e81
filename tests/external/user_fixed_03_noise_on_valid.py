"""Issue 17's catch table, case 03, fixed: the noise Transform has split_idx = 0, so it runs on the training set only
(as fastai's RandTransform does). Healthy: should raise nothing."""
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
    "Gaussian noise on the features, as augmentation (training set only)"
    split_idx = 0
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
