"""A user's regression on 8 numeric columns whose model was written for the first version of the data (5 columns):
forward keeps x[:, :5], so the 3 columns added later never reach the model although the target depends on them. The
loss falls to a floor; nothing raises. Source: issue 17's catch table (case 07, "an input slice the forward ignores").
SHOULD BE CAUGHT: check_input_dependency (error, certain: input features 5..7 never change the output)."""
import torch
from torch import nn
from fastai.learner import Learner
from fastai.losses import MSELossFlat
from fastai.metrics import rmse
from fastai.torch_core import set_seed
import tt2_data

class Net(nn.Module):
    def __init__(self, n_in=5):
        super().__init__()
        self.layers = nn.Sequential(nn.Linear(n_in, 32), nn.ReLU(), nn.Linear(32, 1))
    def forward(self, x): return self.layers(x[:, :5])  # BUG: the 5 columns of the old data only

set_seed(0)
g = torch.Generator().manual_seed(0)
x = torch.randn(400, 8, generator=g)
y = (x @ torch.randn(8, generator=g) * 0.5 + 0.1 * torch.randn(400, generator=g)).unsqueeze(1)
dls = tt2_data.loaders(x, y)
learn = Learner(dls, Net(), loss_func=MSELossFlat(), metrics=rmse)
learn.fit(3, 3e-3)
