"""StateLeakDetector under a real 2-process DDP launch, with `report_on_rank0()`; each rank writes `<out_dir>/<scenario>.<rank>.json`."""
import json, os, sys, warnings
import torch
from torch import nn
from fastai.distributed import *
from fastai.callback.core import Callback, CancelValidException
from fastai_paranoid.fixtures import bn_cnn, random_image_dls
from fastai_paranoid.fresh import fresh_learner
from fastai_paranoid.leaks import StateLeakDetector, StateLeakWarning, clear_findings
from fastai_paranoid.distributed import *

fix_distributed_dl_for_cpu()
rank = int(os.environ['RANK'])
out_dir = sys.argv[1]

def emit(line):
    with open(os.path.join(out_dir, f"{line['scenario']}.{rank}.json"), 'w') as f: json.dump(line, f, default=str)

def dls_fn(): return random_image_dls(n_train=32, n_valid=16, bs=8)

class SkipValidation(Callback):
    "Fits without validation: DDP then leaves each rank with the BatchNorm statistics of its own data shard"
    order = 1
    def before_validate(self): raise CancelValidException()

def scenario(name, between=None, n_fits=2, sync_bn=False, cbs=()):
    clear_findings()
    learn = fresh_learner(dls_fn, bn_cnn, cbs=[StateLeakDetector(), *cbs], seed=0, loss_func=nn.CrossEntropyLoss())
    seed_rank_streams(0)
    error = None
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        report_on_rank0()
        try:
            for i in range(n_fits):
                if i and between is not None: between(learn)
                with learn.distrib_ctx(cpu=True, sync_bn=sync_bn): learn.fit(1)
        except Exception as e: error = f"{type(e).__name__}: {e}"
    det = learn.state_leak_detector
    emit({'scenario': name, 'rank': rank, 'error': error, 'findings': [f.as_row() for f in det.findings],
          'warnings': [f"{w.category.__name__}: {w.message}" for w in caught if issubclass(w.category, StateLeakWarning)],
          'other_warnings': [f"{w.category.__name__}: {w.message}"[:300] for w in caught if not issubclass(w.category, (StateLeakWarning, FutureWarning, DeprecationWarning))]})
    return learn

def forward_in_train_mode(learn):
    "A planted leak: a forward in training mode between fits moves the BatchNorm running statistics"
    learn.model.train()
    with torch.no_grad(): learn.model(torch.randn(8, 1, 16, 16))

def reinit(learn):
    "A planted leak: weights re-initialised between fits, the optimizer keeps its moments"
    for m in learn.model.modules():
        if hasattr(m, 'reset_parameters'): m.reset_parameters()

scenario('healthy_two_fits')
scenario('forward_between_fits', between=forward_in_train_mode)
scenario('healthy_without_validation', cbs=[SkipValidation()])
scenario('forward_on_rank0_only', between=lambda learn: forward_in_train_mode(learn) if rank == 0 else None, cbs=[SkipValidation()])
scenario('reinit_between_fits', between=reinit)

def reused_model(name='reused_model', filtered=True, on_finding='warn'):
    "A planted leak: a second Learner trains the first one's model"
    clear_findings()
    first = fresh_learner(dls_fn, bn_cnn, cbs=[StateLeakDetector()], seed=0, loss_func=nn.CrossEntropyLoss())
    with first.distrib_ctx(cpu=True, sync_bn=False): first.fit(1)
    second = Learner(dls_fn(), first.model, cbs=[StateLeakDetector(on_finding=on_finding)], loss_func=nn.CrossEntropyLoss())
    error = None
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        if filtered: report_on_rank0()
        try:
            with second.distrib_ctx(cpu=True, sync_bn=False): second.fit(1)
        except Exception as e: error = f"{type(e).__name__}: {e}"
    emit({'scenario': name, 'rank': rank, 'error': error, 'findings': [f.as_row() for f in second.state_leak_detector.findings],
          'warnings': [f"{w.category.__name__}: {w.message}" for w in caught if issubclass(w.category, StateLeakWarning)]})

from fastai.learner import Learner
reused_model()
reused_model('reused_model_unfiltered', filtered=False) # the detector's own rank rule, without report_on_rank0's filter
reused_model('reused_model_raise', filtered=False, on_finding='raise')
