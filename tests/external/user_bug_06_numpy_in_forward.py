"""A user clips the hidden activations with NumPy inside forward (`.detach().cpu().numpy()`, np.clip, torch.from_numpy):
the round trip through NumPy cuts the autograd graph, so the body gets no gradient and stays at its random
initialisation while the head trains on random features. Loss falls a little; nothing raises. Source: issue 17's catch
table (case 06, "a graph cut by .detach() inside forward"); the .data form is tests/external/tt2_bug_02_graph_cut.py.
SHOULD BE CAUGHT: check_gradient_flow (error, certain: body.0.weight and body.0.bias get no gradient)."""
import numpy as np
import torch
from torch import nn
from fastai.learner import Learner
from fastai.losses import CrossEntropyLossFlat
from fastai.metrics import accuracy
from fastai.torch_core import set_seed
import tt2_data

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(32, 64), nn.ReLU())
        self.head = nn.Linear(64, 10)
    def forward(self, x):
        h = self.body(x)
        h = torch.from_numpy(np.clip(h.detach().cpu().numpy(), 0, 6)).to(x.device)  # BUG: cuts the graph
        return self.head(h)

set_seed(0)
dls = tt2_data.loaders(*tt2_data.classification())
learn = Learner(dls, Net(), loss_func=CrossEntropyLossFlat(), metrics=accuracy)
learn.fit(2, 1e-2)
