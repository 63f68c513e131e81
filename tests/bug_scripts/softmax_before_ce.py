"Digits: a Softmax ends the model, in front of CrossEntropyLoss, which applies its own (valid loss stalls although accuracy is high)"
import sys
from torch import nn
from fastai.learner import Learner
from fastai.metrics import accuracy
from fastai.torch_core import set_seed
from digits_data import digits, split, loaders, cnn, save_if_asked

HEALTHY = '--healthy' in sys.argv # the planted bug, or its healthy twin

set_seed(0)
x, y = digits()
dls = loaders(x, y, *split(len(x)))
model = cnn() if HEALTHY else nn.Sequential(cnn(), nn.Softmax(dim=1))
learn = Learner(dls, model, loss_func=nn.CrossEntropyLoss(), metrics=accuracy)
learn.fit(2, 3e-3)
save_if_asked(learn)
