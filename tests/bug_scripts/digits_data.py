"The user's data and model helpers, shared by their scripts: scikit-learn's 8x8 digits as fastai DataLoaders, and a small CNN"
import sys
import numpy as np
import torch
from torch import nn
from torch.utils.data import TensorDataset
from fastai.data.core import DataLoaders
from fastai.data.load import DataLoader
from sklearn.datasets import load_digits



def digits(scale=255 / 16, normalize=True):
    "Images as (n, 1, 8, 8) floats (pixels 0-255, standardized unless `normalize=False`) and labels"
    d = load_digits()
    x = torch.tensor(d.images, dtype=torch.float32).unsqueeze(1) * scale
    if normalize: x = (x - x.mean()) / x.std()
    return x, torch.tensor(d.target)

def split(n, valid_pct=0.2, seed=0):
    "Shuffled indices: training, validation"
    idx = np.random.default_rng(seed).permutation(n)
    n_valid = int(n * valid_pct)
    return idx[n_valid:], idx[:n_valid]

def loaders(x, y, train_idx, valid_idx, bs=64):
    return DataLoaders(DataLoader(TensorDataset(x[train_idx], y[train_idx]), bs=bs, shuffle=True, drop_last=True),
                       DataLoader(TensorDataset(x[valid_idx], y[valid_idx]), bs=256))

def cnn(n_out=10):
    return nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Flatten(), nn.Linear(64, n_out))

def save_if_asked(learn):
    "--save FILE: write the trained weights (the tests compare runs with and without the check)"
    if '--save' in sys.argv: torch.save(learn.model.state_dict(), sys.argv[sys.argv.index('--save') + 1])
