"""Issue 17's catch table, case 02, fixed: the last layer has dls.c (= 2) outputs, one per class of the vocab.
Healthy: should raise nothing."""
import numpy as np, pandas as pd, torch
from torch import nn
from fastai.data.core import Datasets
from fastai.data.transforms import RandomSplitter, ColReader, Categorize
from fastai.learner import Learner
from fastai.losses import CrossEntropyLossFlat
from fastai.metrics import accuracy
from fastai.torch_core import set_seed

set_seed(0)
rng = np.random.default_rng(0)
cols = [f'x{i}' for i in range(8)]
df = pd.DataFrame(rng.normal(size=(400, 8)).astype('float32'), columns=cols)
df['churn'] = np.where(df.x0 + df.x1 - df.x2 + rng.normal(0, 0.5, 400) > 0, 'yes', 'no')
features = lambda row: torch.tensor(row[cols].to_numpy(dtype='float32'))
dls = Datasets(df, [[features], [ColReader('churn'), Categorize()]], splits=RandomSplitter(seed=42)(df)).dataloaders(bs=32)
model = nn.Sequential(nn.Linear(8, 64), nn.ReLU(), nn.Linear(64, dls.c))
learn = Learner(dls, model, loss_func=CrossEntropyLossFlat(), metrics=accuracy)
learn.fit(3, 3e-3)
