"""Issue 26's user case 33, fixed: the prefix is stripped from the checkpoint's keys before loading
(`{k.removeprefix('module.'): v ...}`), and the load matches every key. Healthy: should raise nothing."""
import tempfile
from pathlib import Path
import torch
from torch import nn
from fastai.learner import Learner
from fastai.losses import CrossEntropyLossFlat
from fastai.metrics import accuracy
from fastai.torch_core import set_seed
import tt2_data

def make_model(): return nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 10))

set_seed(0)
x, y = tt2_data.classification()
path = Path(tempfile.mkdtemp())
learn = Learner(tt2_data.loaders(x, y), make_model(), loss_func=CrossEntropyLossFlat(), metrics=accuracy, path=path)
learn.fit(5, 3e-3)
(path/'models').mkdir(exist_ok=True)
torch.save({'module.' + k: v for k, v in learn.model.state_dict().items()}, path/'models'/'ddp_run.pth')

state = torch.load(path/'models'/'ddp_run.pth')
torch.save({k.removeprefix('module.'): v for k, v in state.items()}, path/'models'/'ddp_run.pth')
inference = Learner(tt2_data.loaders(x, y), make_model(), loss_func=CrossEntropyLossFlat(), metrics=accuracy, path=path)
inference.load('ddp_run', with_opt=False, strict=False)
print(inference.validate())
