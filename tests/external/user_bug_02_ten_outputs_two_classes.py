"""A user's binary classifier (a 'churn' yes/no column) whose model was copied from an MNIST notebook and still ends in
nn.Linear(64, 10): the softmax spreads over 8 classes that never occur, the loss at init is ln(10) instead of ln(2),
and predictions can land on classes the vocab does not have. It trains and reports an accuracy; nothing raises.
Source: issue 17's catch table (case 02, "10 outputs for a 2-class task"); fastai's tabular_learner and vision_learner
pick n_out=dls.c for the user, a hand-made model does not.
SHOULD BE CAUGHT: check_loss_at_init (warning, certain: 10 outputs for the 2 classes of dls.vocab)."""
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
model = nn.Sequential(nn.Linear(8, 64), nn.ReLU(), nn.Linear(64, 10))  # BUG: 10 outputs (copied from MNIST) for 2 classes
learn = Learner(dls, model, loss_func=CrossEntropyLossFlat(), metrics=accuracy)
learn.fit(3, 3e-3)
