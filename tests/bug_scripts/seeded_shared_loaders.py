"fastai issue #2832: seed, build a Learner, train; seed again, build another on the same DataLoaders, train -- and expect the same result (--rebuild: the DataLoaders are built again after each seed)"
import sys
from torch import nn
from fastai.learner import Learner
from fastai.torch_core import set_seed
from digits_data import digits, split, loaders, cnn

rebuild = '--rebuild' in sys.argv
x, y = digits()
dls = loaders(x, y, *split(len(x)))
losses = []
for run in range(2):
    set_seed(42)
    if rebuild: dls = loaders(x, y, *split(len(x)))
    learn = Learner(dls, cnn(), loss_func=nn.CrossEntropyLoss())
    learn.fit(1, 3e-3)
    losses.append(learn.recorder.values[-1][1])
print('valid losses of the two runs:', losses)
