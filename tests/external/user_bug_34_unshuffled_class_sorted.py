"""A user ports a PyTorch training script to fastai and keeps its plain `torch.utils.data.DataLoader`s, without
`shuffle=True`. The training data is stored class by class (one file per class, concatenated), so every epoch feeds the
classes one after the other and ends on the last one: the model ends each epoch predicting it (issue 26: 99.8% of the
validation items predicted as the last class, accuracy 0.32 against 0.78 shuffled). fastai's own DataLoaders would have
shuffled the training set; a plain PyTorch one does not unless told. Source: issue 26; PyTorch forums, "model only
predicts one class" threads answered with "did you shuffle?".
SHOULD BE CAUGHT: unshuffled_training_data (error: 10 runs of one class where a shuffled order gives about 290, and the
same order on the next pass)."""
import torch
from torch import nn
from torch.utils.data import TensorDataset, DataLoader
from fastai.data.core import DataLoaders
from fastai.learner import Learner
from fastai.losses import CrossEntropyLossFlat
from fastai.metrics import accuracy
from fastai.torch_core import set_seed
import tt2_data

set_seed(0)
x, y = tt2_data.classification()
order = y.argsort(stable=True)                     # stored class by class
x, y = x[order], y[order]
is_valid = torch.arange(len(y)) % 5 == 0
train_dl = DataLoader(TensorDataset(x[~is_valid], y[~is_valid]), batch_size=32)   # BUG: no shuffle=True
valid_dl = DataLoader(TensorDataset(x[is_valid], y[is_valid]), batch_size=32)
model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 10))
learn = Learner(DataLoaders(train_dl, valid_dl), model, loss_func=CrossEntropyLossFlat(), metrics=accuracy)
learn.fit(5, 3e-3)
