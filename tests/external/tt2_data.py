"""The setup shared by torchtest2's README bug gallery (`x, y = torch.randn(16, 32), torch.randint(0, 10, (16,))`), grown into
a learnable fastai problem so that each bug and its fixed twin run as fastai Learners: 32 standardized features, 10 classes
drawn from a random linear teacher, shuffled loaders, 320 training and 80 validation items."""
import torch
from torch import nn
from torch.utils.data import TensorDataset
from fastai.data.core import DataLoaders
from fastai.data.load import DataLoader

def classification(n=400, n_features=32, n_classes=10, seed=0):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, n_features, generator=g)
    teacher = torch.randn(n_features, n_classes, generator=g)
    y = (x @ teacher + 0.5 * torch.randn(n, n_classes, generator=g)).argmax(1)
    return x, y

def regression(n=400, n_features=32, seed=0):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, n_features, generator=g)
    y = x[:, :16] @ torch.randn(16, generator=g) * 0.3 + (x[:, 16:] @ torch.randn(16, generator=g)) * 0.3
    return x, y.unsqueeze(1)

def loaders(*tensors, bs=32, valid_pct=0.2, seed=0):
    "Shuffled DataLoaders of the tensors (the last one is the target)"
    n = len(tensors[0])
    idx = torch.randperm(n, generator=torch.Generator().manual_seed(seed))
    n_valid = int(n * valid_pct)
    train, valid = idx[n_valid:], idx[:n_valid]
    return DataLoaders(DataLoader(TensorDataset(*(t[train] for t in tensors)), bs=bs, shuffle=True, drop_last=True),
                       DataLoader(TensorDataset(*(t[valid] for t in tensors)), bs=bs))
