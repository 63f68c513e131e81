"Digits, 3-fold cross-validation: new DataLoaders and a new model per fold (healthy); the sanity checks run for the first fold only"
import sys
from sklearn.model_selection import KFold
from torch import nn
from fastai.learner import Learner
from fastai.metrics import accuracy
from fastai.torch_core import set_seed
from digits_data import digits, loaders, cnn, save_if_asked

set_seed(0)
x, y = digits()
for fold, (train_idx, valid_idx) in enumerate(KFold(3, shuffle=True, random_state=0).split(x)):
    learn = Learner(loaders(x, y, train_idx, valid_idx), cnn(), loss_func=nn.CrossEntropyLoss(), metrics=accuracy)
    learn.fit(1, 3e-3)
save_if_asked(learn)
