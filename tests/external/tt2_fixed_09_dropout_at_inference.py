"""torchtest2 README bug 9, fixed: training=self.training. Healthy."""
from torch import nn
import torch
import torch.nn.functional as F
from fastai.learner import Learner
from fastai.losses import CrossEntropyLossFlat
from fastai.metrics import accuracy
from fastai.optimizer import SGD
from fastai.torch_core import set_seed, params
import tt2_data

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1, self.fc2 = nn.Linear(32, 64), nn.Linear(64, 10)
    def forward(self, x):
        return self.fc2(F.dropout(F.relu(self.fc1(x)), p=0.2, training=self.training))

set_seed(0)
dls = tt2_data.loaders(*tt2_data.classification())
learn = Learner(dls, Net(), loss_func=CrossEntropyLossFlat(), metrics=accuracy)
learn.fit(2, 1e-2)
