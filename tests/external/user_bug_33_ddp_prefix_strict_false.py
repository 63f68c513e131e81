"""A user trains under DistributedDataParallel and saves the wrapped model's state_dict on rank 0, so every key carries
DDP's `module.` prefix. Later, in a single process, `learn.load(..., strict=False)` (strict=False "because loading
complained about keys") matches no key; fastai drops the missing and unexpected keys that PyTorch returns, and the model
keeps its random weights: accuracy drops from the trained model's to chance, without a word. Source: issue 26 ("accuracy
drops from 0.94 after training to 0.23 after the load"); fastai forums, "learn.load with strict=False does nothing".
Here the DDP save is what `torch.save(ddp_model.state_dict(), path)` writes: the same keys with `module.` in front.
SHOULD BE CAUGHT: load_strict_false (error, certain: 0 of the model's tensors loaded; the keys differ by 'module.')."""
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
torch.save({'module.' + k: v for k, v in learn.model.state_dict().items()}, path/'models'/'ddp_run.pth')  # rank 0 of the DDP run

inference = Learner(tt2_data.loaders(x, y), make_model(), loss_func=CrossEntropyLossFlat(), metrics=accuracy, path=path)
inference.load('ddp_run', with_opt=False, strict=False)  # BUG: loads nothing
print(inference.validate())
