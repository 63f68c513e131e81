"Digits as 0-255 pixels, fed to the model as they are: no normalization anywhere"
import sys
from torch import nn
from fastai.learner import Learner
from fastai.metrics import accuracy
from fastai.torch_core import set_seed
from digits_data import digits, split, loaders, cnn, save_if_asked

HEALTHY = '--healthy' in sys.argv # the planted bug, or its healthy twin

set_seed(0)
x, y = digits(normalize=HEALTHY)
dls = loaders(x, y, *split(len(x)))
learn = Learner(dls, cnn(), loss_func=nn.CrossEntropyLoss(), metrics=accuracy)
learn.fit(2, 3e-3)
save_if_asked(learn)
