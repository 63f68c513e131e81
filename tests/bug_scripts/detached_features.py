"Digits: the forward detaches the convolutional features before the head: only the head trains"
import sys
from torch import nn
from fastai.learner import Learner
from fastai.metrics import accuracy
from fastai.torch_core import set_seed
from digits_data import digits, split, loaders, cnn, save_if_asked

HEALTHY = '--healthy' in sys.argv # the planted bug, or its healthy twin

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        layers = list(cnn())
        self.body, self.head = nn.Sequential(*layers[:-1]), layers[-1]
    def forward(self, x):
        feats = self.body(x)
        return self.head(feats if HEALTHY else feats.detach())

set_seed(0)
x, y = digits()
dls = loaders(x, y, *split(len(x)))
learn = Learner(dls, Net(), loss_func=nn.CrossEntropyLoss(), metrics=accuracy)
learn.fit(2, 3e-3)
save_if_asked(learn)
