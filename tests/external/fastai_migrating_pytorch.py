"""fastai nbs/examples/migrating_pytorch.ipynb (and migrating_fastai.py), "Pure PyTorch to fastai": PyTorch's MNIST example
as it is (torchvision datasets, `torch.utils.data.DataLoader`s, the `Net` with Dropout2d and LogSoftmax), trained by fastai:
`data = DataLoaders(train_loader, test_loader)`, `learn = Learner(data, Net(), loss_func=F.nll_loss, opt_func=Adam, metrics=accuracy)`,
`learn.fit_one_cycle(epochs, lr)`. Both loaders shuffle, as in the example.
Offline: a synthetic MNIST tree read by torchvision's `ImageFolder` (in place of `datasets.MNIST(download=True)`), 16 images a digit,
batch_size 64 / test_batch_size 128 (CPU time), no CUDA. Healthy."""
import torch
from torch import nn
import torch.nn.functional as F
from torch.utils.data import DataLoader
from torchvision import datasets, transforms
from fastai.data.core import DataLoaders
from fastai.learner import Learner
from fastai.optimizer import Adam
from fastai.metrics import accuracy
from fastai.callback.schedule import fit_one_cycle # noqa: F401 (patches Learner)
import synth

class Flatten(nn.Module):
    def forward(self, x): return x.view(x.size(0), -1)

class Net(nn.Sequential):
    def __init__(self):
        super().__init__(
            nn.Conv2d(1, 32, 3, 1), nn.ReLU(),
            nn.Conv2d(32, 64, 3, 1), nn.MaxPool2d(2), nn.Dropout2d(0.25),
            Flatten(), nn.Linear(9216, 128), nn.ReLU(), nn.Dropout2d(0.5),
            nn.Linear(128, 10), nn.LogSoftmax(dim=1) )

synth.seed_everything()
path = synth.image_folders('mnist', [str(i) for i in range(10)], n_per_class=16, size=28, mode='L', splits=('training', 'testing'))
batch_size, test_batch_size = 64, 128
epochs, lr = 1, 1e-2
transform = transforms.Compose([transforms.Grayscale(), transforms.ToTensor(), transforms.Normalize((0.1307,), (0.3081,))])
train_loader = DataLoader(datasets.ImageFolder(path/'training', transform=transform), batch_size=batch_size, shuffle=True)
test_loader = DataLoader(datasets.ImageFolder(path/'testing', transform=transform), batch_size=test_batch_size, shuffle=True)

data = DataLoaders(train_loader, test_loader)
learn = Learner(data, Net(), loss_func=F.nll_loss, opt_func=Adam, metrics=accuracy)
learn.fit_one_cycle(epochs, lr)
