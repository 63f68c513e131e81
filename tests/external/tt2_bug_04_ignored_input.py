"""torchtest2 README bug 4, "Part of the input is ignored": the item tower is fed the user features (a variable reused by
mistake), so features 16..31 have no influence on the output.
SHOULD BE CAUGHT: input dependency (16/32 input features never change the output)."""
from torch import nn
from fastai.learner import Learner
from fastai.losses import MSELossFlat
from fastai.torch_core import set_seed
import tt2_data

class TwoTower(nn.Module):
    def __init__(self):
        super().__init__()
        self.user = nn.Linear(16, 8)
        self.item = nn.Linear(16, 8)
    def forward(self, x):  # x = [user features | item features]
        u, i = x[:, :16], x[:, 16:]
        return (self.user(u) * self.item(u)).sum(-1, keepdim=True)

set_seed(0)
x, _ = tt2_data.regression()
y = ((x[:, :16] @ tt2_data.torch.ones(16, 8) * 0.1) * (x[:, 16:] @ tt2_data.torch.ones(16, 8) * 0.1)).sum(-1, keepdim=True)
dls = tt2_data.loaders(x, y)
learn = Learner(dls, TwoTower(), loss_func=MSELossFlat())
learn.fit(2, 1e-2)
