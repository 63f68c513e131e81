"Digits: the optimizer is built (create_opt, as lr_find or freeze would) before the head is replaced: the new head never trains"
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
learn = Learner(dls, cnn(), loss_func=nn.CrossEntropyLoss(), metrics=accuracy)
if not HEALTHY: learn.create_opt()
learn.model[-1] = nn.Linear(64, 10) # a new head for the ten digits
learn.fit(2, 3e-3)
save_if_asked(learn)
