"Digits with a second input, a mask of the pixels to keep (drop-out of random pixels): the forward takes the mask and never uses it"
import sys
import torch
from torch import nn
from torch.utils.data import TensorDataset
from fastai.data.core import DataLoaders
from fastai.data.load import DataLoader
from fastai.learner import Learner
from fastai.metrics import accuracy
from fastai.torch_core import set_seed
from digits_data import digits, split, cnn, save_if_asked

HEALTHY = '--healthy' in sys.argv # the planted bug, or its healthy twin

class MaskedCNN(nn.Module):
    def __init__(self): super().__init__(); self.net = cnn()
    def forward(self, x, mask): return self.net(x * mask if HEALTHY else x)

set_seed(0)
x, y = digits()
mask = (torch.rand(x.shape, generator=torch.Generator().manual_seed(0)) > 0.2).float()
train, valid = split(len(x))
dls = DataLoaders(DataLoader(TensorDataset(x[train], mask[train], y[train]), bs=64, shuffle=True, drop_last=True),
                  DataLoader(TensorDataset(x[valid], mask[valid], y[valid]), bs=256))
learn = Learner(dls, MaskedCNN(), loss_func=nn.CrossEntropyLoss(), metrics=accuracy)
learn.fit(2, 3e-3)
save_if_asked(learn)
