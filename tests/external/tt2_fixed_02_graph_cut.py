"""torchtest2 README bug 2, fixed: no `.data`, the gradient reaches the backbone. Healthy."""
from torch import nn
import torch.nn.functional as F
from fastai.learner import Learner
from fastai.losses import CrossEntropyLossFlat
from fastai.metrics import accuracy
from fastai.torch_core import set_seed
import tt2_data

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Linear(32, 64)
        self.head = nn.Linear(64, 10)
    def forward(self, x):
        features = self.backbone(x)
        return self.head(F.relu(features))

set_seed(0)
dls = tt2_data.loaders(*tt2_data.classification())
learn = Learner(dls, Net(), loss_func=CrossEntropyLossFlat(), metrics=accuracy)
learn.fit(2, 1e-2)
