"""PyTorch's examples/mnist (and Ignite's examples/mnist), trained with a fastai Learner as users port it: the same `Net`
(Conv-Conv-Dropout2d-Linear-F.dropout-Linear, `log_softmax`), `NLLLoss`, SGD at lr 0.01 with momentum 0.5, batches of 64,
inputs normalized with MNIST's (0.1307, 0.3081). Offline: scikit-learn's digits upscaled to 28x28 in [0, 1].
Healthy: its second dropout is the functional `F.dropout(x, training=self.training)`, which memorizes the batch once
switched off (issue 25: the overfit check called it an error with that dropout on)."""
import torch
from torch import nn
import torch.nn.functional as F
from torch.utils.data import TensorDataset
from functools import partial
from sklearn.datasets import load_digits
from fastai.data.core import DataLoaders
from fastai.learner import Learner
from fastai.metrics import accuracy
from fastai.optimizer import OptimWrapper
from fastai.torch_core import set_seed

class Net(nn.Module):
    def __init__(self):
        super(Net, self).__init__()
        self.conv1 = nn.Conv2d(1, 10, kernel_size=5)
        self.conv2 = nn.Conv2d(10, 20, kernel_size=5)
        self.conv2_drop = nn.Dropout2d()
        self.fc1 = nn.Linear(320, 50)
        self.fc2 = nn.Linear(50, 10)

    def forward(self, x):
        x = F.relu(F.max_pool2d(self.conv1(x), 2))
        x = F.relu(F.max_pool2d(self.conv2_drop(self.conv2(x)), 2))
        x = x.view(-1, 320)
        x = F.relu(self.fc1(x))
        x = F.dropout(x, training=self.training)
        x = self.fc2(x)
        return F.log_softmax(x, dim=-1)

set_seed(0)
digits = load_digits()
x = torch.tensor(digits.images, dtype=torch.float32)[:, None] / 16.
x = F.interpolate(x, size=28, mode='bilinear')     # MNIST's 28x28 layout
x = (x - 0.1307) / 0.3081                          # transforms.Normalize((0.1307,), (0.3081,))
y = torch.tensor(digits.target)
train_ds, valid_ds = TensorDataset(x[:1400], y[:1400]), TensorDataset(x[1400:], y[1400:])
dls = DataLoaders.from_dsets(train_ds, valid_ds, bs=64, device='cpu')

sgd = partial(OptimWrapper, opt=partial(torch.optim.SGD, momentum=0.5))
learn = Learner(dls, Net(), loss_func=nn.NLLLoss(), opt_func=sgd, lr=0.01, metrics=accuracy)
learn.fit(2)
