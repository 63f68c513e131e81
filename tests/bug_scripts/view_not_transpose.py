"Digits read row by row by an LSTM: the batch is put sequence-first with `view`, where a transpose belonged, mixing the examples"
import sys
import torch
from torch import nn
from fastai.learner import Learner
from fastai.metrics import accuracy
from fastai.torch_core import set_seed
from digits_data import digits, split, loaders, save_if_asked

HEALTHY = '--healthy' in sys.argv # the planted bug, or its healthy twin

class RowLSTM(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm, self.head = nn.LSTM(8, 32), nn.Linear(32, 10)
    def forward(self, x):
        x = x.squeeze(1) # (batch, rows, 8)
        seq = x.transpose(0, 1) if HEALTHY else x.view(x.shape[1], x.shape[0], x.shape[2]) # (rows, batch, 8)
        out, _ = self.lstm(seq)
        return self.head(out[-1])

set_seed(0)
x, y = digits()
learn = Learner(loaders(x, y, *split(len(x))), RowLSTM(), loss_func=nn.CrossEntropyLoss(), metrics=accuracy, lr=1e-2)
learn.fit(2)
save_if_asked(learn)
