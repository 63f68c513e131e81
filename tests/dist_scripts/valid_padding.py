"""DistributedValidPadding under a real 2-process launch: a validation set of 21 items (DistributedDL pads it to 22, item 0
twice), one of 22 (nothing padded), metrics as AccumMetric (only valid_loss still counts the repeat), and one of 1001
items with an AccumMetric (valid_loss counts the repeat, a 0.3% change: a note).
The model gets item 0 wrong and the others right. Run by guards.py's launch (one start-up for several scripts):
torchrun --nproc_per_node 2 guards.py <out_dir>"""
import os, sys, warnings
import torch
from torch import nn
from torch.utils.data import TensorDataset
from fastai.learner import Learner
from fastai.data.core import DataLoaders
from fastai.metrics import accuracy, error_rate, F1Score, AccumMetric
from fastai.distributed import *
from fastai_paranoid.core import finding_sink
from fastai_paranoid.distributed import DistributedCPU, DistributedValidPadding
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from record import write

def learner(n_valid, metrics):
    x = torch.zeros(n_valid, 2); x[:, 1] = 1.0 # every item predicted class 1...
    y = torch.ones(n_valid, dtype=torch.long); y[0] = 0 # ...item 0, the one DistributedDL repeats, is class 0
    dls = DataLoaders.from_dsets(TensorDataset(torch.randn(16, 2), torch.randint(0, 2, (16,))), TensorDataset(x, y), bs=4)
    model = nn.Linear(2, 2, bias=False)
    with torch.no_grad(): model.weight.copy_(torch.eye(2))
    return Learner(dls, model, loss_func=nn.CrossEntropyLoss(), metrics=metrics, cbs=[DistributedCPU(), DistributedValidPadding()])

def scenario(name, n_valid, metrics):
    learn, found = learner(n_valid, metrics), []
    with warnings.catch_warnings(record=True), finding_sink(found.append):
        warnings.simplefilter('always')
        with learn.distrib_ctx(cpu=True, sync_bn=False), learn.no_bar():
            values = [float(v) for v in learn.validate()]
            learn.validate() # a second validation: reported once
            preds, targs = learn.get_preds()
    write({'scenario': name, 'values': values, 'names': ['valid_loss'] + [m.name for m in learn.metrics], 'n_preds': len(targs),
           'findings': [f.as_dict() for f in found]})

scenario('valid_padding', 21, [accuracy, error_rate, F1Score()])
scenario('valid_multiple', 22, [accuracy, error_rate])
scenario('valid_padding_accum', 21, [AccumMetric(accuracy, flatten=False)])
scenario('valid_padding_small', 1001, [F1Score()]) # only valid_loss changes, by 0.3%: a note, not an error

