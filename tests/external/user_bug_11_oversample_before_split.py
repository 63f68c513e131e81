"""A user balances an imbalanced table by repeating the rare class's rows (random oversampling) and only then splits it
with RandomSplitter: most rare rows now sit in both the training and the validation set, the validation set scores
memorized copies, and its accuracy on the rare class is inflated. Nothing raises. Source: issue 17's catch table
(case 11, "validation items copied from training"); the pitfall is the textbook one ("oversampling before splitting
the data ... duplicate samples end up in both the training and test/validation sets", Machine Learning for Imbalanced
Data, ch. 2); the digits form is tests/bug_scripts/oversample_before_split.py.
SHOULD BE CAUGHT: check_split_duplicates (error, certain: validation items byte-identical to training items)."""
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
df['fraud'] = np.where(df.x0 + 0.5 * df.x1 + rng.normal(0, 0.5, 400) > 1.3, 'yes', 'no')  # ~10% 'yes'
rare = df[df.fraud == 'yes']
df = pd.concat([df] + [rare] * 7, ignore_index=True)  # BUG: oversampled before the split
features = lambda row: torch.tensor(row[cols].to_numpy(dtype='float32'))
dls = Datasets(df, [[features], [ColReader('fraud'), Categorize()]], splits=RandomSplitter(seed=42)(df)).dataloaders(bs=32)
learn = Learner(dls, nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 2)), loss_func=CrossEntropyLossFlat(), metrics=accuracy)
learn.fit(3, 3e-3)
