"""Issue 17's catch table, case 11, fixed: the table is split first (an is_valid column, ColSplitter), and only the
training rows of the rare class are repeated. Healthy: should raise nothing."""
import numpy as np, pandas as pd, torch
from torch import nn
from fastai.data.core import Datasets
from fastai.data.transforms import ColSplitter, ColReader, Categorize
from fastai.learner import Learner
from fastai.losses import CrossEntropyLossFlat
from fastai.metrics import accuracy
from fastai.torch_core import set_seed

set_seed(0)
rng = np.random.default_rng(0)
cols = [f'x{i}' for i in range(8)]
df = pd.DataFrame(rng.normal(size=(400, 8)).astype('float32'), columns=cols)
df['fraud'] = np.where(df.x0 + 0.5 * df.x1 + rng.normal(0, 0.5, 400) > 1.3, 'yes', 'no')
df['is_valid'] = rng.random(400) < 0.2  # split first
rare_train = df[(df.fraud == 'yes') & ~df.is_valid]
df = pd.concat([df] + [rare_train] * 7, ignore_index=True)  # then oversample the training rows only
features = lambda row: torch.tensor(row[cols].to_numpy(dtype='float32'))
dls = Datasets(df, [[features], [ColReader('fraud'), Categorize()]], splits=ColSplitter()(df)).dataloaders(bs=32)
learn = Learner(dls, nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 2)), loss_func=CrossEntropyLossFlat(), metrics=accuracy)
learn.fit(3, 3e-3)
