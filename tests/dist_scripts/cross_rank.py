"""Each kind of cross-rank divergence, planted and healthy, under a real 2-process launch (torchrun, gloo on CPU).
Usage: torchrun --nproc_per_node 2 cross_rank.py <out_dir>; each rank writes `<out_dir>/<scenario>.<rank>.json`."""
import os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from copy import deepcopy
import numpy as np
import torch
from torch import nn
from accelerate.utils import DistributedDataParallelKwargs
from fastai.callback.core import Callback, CancelValidException
from fastai.distributed import *
from fastai_paranoid.fixtures import xor_dls, build_mlp, tensor_dls, make_xor_data, bn_cnn, random_image_dls
from fastai_paranoid.fresh import fresh_learner
from fastai_paranoid.distributed import *
from record import rank, write, result_rows, run_fit

fix_distributed_dl_for_cpu()

def dropout_mlp(): return nn.Sequential(nn.Linear(2, 32), nn.ReLU(), nn.Dropout(0.2), nn.Linear(32, 2))
def small_xor(): return xor_dls(n_train=256, n_valid=256, bs=64)
def xor_learner(dls_fn=small_xor, model_fn=build_mlp, seed=0, **cb_kwargs):
    return fresh_learner(dls_fn, model_fn, cbs=[CrossRankConsistency(**cb_kwargs), AfterWrap()], seed=seed, loss_func=nn.CrossEntropyLoss())

class AfterWrap(Callback):
    "The same check placed after DistributedTrainer's wrap (order 12)"
    order = 12
    def before_fit(self): self.result = check_cross_rank(self.learn, stage='after the DDP wrap')

def report(scenario, learn, error, warned, **extra):
    cb = learn.cross_rank_consistency
    after = getattr(learn, 'after_wrap', None)
    write({'scenario': scenario, 'results': result_rows(cb.results), 'error': error,
           'error_type': None if error is None else error.split(':')[0], 'warnings': warned,
           'after_wrap': after.result.as_row() if after is not None and hasattr(after, 'result') else None, **extra})

def scenario(name, learn, n_fits=1, between=None, fit_kwargs=None, **ctx_kwargs):
    ctx_kwargs.setdefault('sync_bn', False)
    error, warned = run_fit(learn, n_fits, between, fit_kwargs, **ctx_kwargs)
    report(name, learn, error, warned)
    return learn

# healthy: the same seed for the build on every rank, then rank-specific streams; after the fit the ranks still agree
learn = xor_learner(model_fn=dropout_mlp)
seed_rank_streams(0)
scenario('healthy', learn)
write({'scenario': 'healthy_after_fit', 'results': result_rows([check_cross_rank(learn, stage='after the fit')])})

# weights: rank 1 seeded differently before building its model: DDP's wrap copies rank 0's, so fastai's recipe without a seed is an info note
scenario('init_divergence', xor_learner(seed=rank))
scenario('init_divergence_warn', xor_learner(seed=rank, on_finding='warn'))

# data: a per-rank split of the same points
def split_dls(split_seed):
    x, y = make_xor_data(512, np.random.default_rng(0))
    idx = torch.randperm(512, generator=torch.Generator().manual_seed(split_seed))
    return tensor_dls(x[idx[:256]], y[idx[:256]], x[idx[256:]], y[idx[256:]], bs=64)
scenario('split_divergence', xor_learner(lambda: split_dls(rank)))
# data: identical item indices over points generated with a per-rank seed
scenario('content_divergence', xor_learner(lambda: xor_dls(n_train=256, n_valid=256, bs=64, seed=rank)))

# random streams: the same streams on every rank and a dropout layer drawing from them
scenario('shared_streams', xor_learner(model_fn=dropout_mlp))

# hyper-parameters: a rank-dependent learning rate
scenario('lr_divergence', xor_learner(), fit_kwargs={'lr': 1e-3 * (rank + 1)})

# optimizer state: a checkpoint restored on rank 0 only (`learn.load` would wait for the other ranks in a barrier)
checkpoint = {}
def checkpoint_then_restore_on_rank0(learn, i):
    if i == 1: checkpoint.update(model=deepcopy(learn.model.state_dict()), opt=deepcopy(learn.opt.state_dict()))
    elif rank == 0:
        learn.model.load_state_dict(checkpoint['model'])
        learn.opt.load_state_dict(checkpoint['opt'])
scenario('opt_state_restored_on_rank0', xor_learner(on_finding='log'), n_fits=3, between=checkpoint_then_restore_on_rank0)
# optimizer state reset on rank 1 only: the ranks hold different entries
scenario('opt_state_cleared_on_rank1', xor_learner(on_finding='log'), n_fits=2, between=lambda l, i: l.opt.clear_state() if rank == 1 else None)

# buffers DDP does not sync: broadcast_buffers=False leaves each rank with its own BatchNorm statistics after a fit
class SkipValidation(Callback):
    order = 1
    def before_validate(self): raise CancelValidException()
def bn_learner(**cb_kwargs):
    learn = fresh_learner(lambda: random_image_dls(n_train=32, n_valid=16, bs=8), bn_cnn, seed=0, loss_func=nn.CrossEntropyLoss(),
                          cbs=[CrossRankConsistency(**cb_kwargs), SkipValidation()])
    seed_rank_streams(0)
    return learn
unsynced = [DistributedDataParallelKwargs(broadcast_buffers=False)]
scenario('unsynced_buffers', bn_learner(on_finding='log'), n_fits=2, kwargs_handlers=unsynced)
# healthy: DDP's default broadcast_buffers=True copies rank 0's statistics at the wrap (no validation ran to sync them)
scenario('synced_buffers', bn_learner(on_finding='log'), n_fits=2)

# under paranoid(): the one knob reaches CrossRankConsistency
from fastai_paranoid.paranoid import paranoid, PARANOID_GUARDS
for mode in ('warn', 'raise'):
    with paranoid(on_finding=mode):
        learn = fresh_learner(lambda: split_dls(rank), build_mlp, seed=0, loss_func=nn.CrossEntropyLoss()) # a per-rank split: DDP fixes nothing
        error, warned = run_fit(learn, sync_bn=False)
        write({'scenario': f'paranoid_{mode}', 'results': result_rows(learn.cross_rank_consistency.results), 'error': error,
               'error_type': None if error is None else error.split(':')[0], 'warnings': warned})

import os, sys
import torch.distributed as dist
if dist.is_initialized(): dist.destroy_process_group() # as PyTorch asks
# Seen here (torch 2.14, gloo on CPU): a rank sometimes aborts in interpreter teardown after all its work is done, with
# "terminate called without an active exception" (a C++ thread still joinable); leave without that teardown.
sys.stdout.flush(); sys.stderr.flush()
os._exit(0)
