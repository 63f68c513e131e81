"""The same script under any launcher (torchrun on 2 simulated nodes, `accelerate launch`): a healthy fit, then the last rank
seeded differently, under paranoid() with `learn.distrib_ctx(cpu=True)` and nothing else.
Usage: <launcher> launchers.py <out_dir>; each rank writes `<out_dir>/<scenario>.<rank>.json`."""
import os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torch import nn
import torch.distributed as dist
from fastai.distributed import * # learn.distrib_ctx(), as every fastai DDP script imports it
from fastai_paranoid.fixtures import xor_dls, build_mlp
from fastai_paranoid.fresh import fresh_learner
from fastai_paranoid.distributed import *
from fastai_paranoid.paranoid import paranoid, PARANOID_GUARDS
from record import rank, write, result_rows, run_fit

env = {k: os.environ.get(k) for k in ('RANK', 'LOCAL_RANK', 'GROUP_RANK', 'WORLD_SIZE', 'LOCAL_WORLD_SIZE', 'ACCELERATE_USE_CPU')}
with paranoid(on_finding='warn', guards=PARANOID_GUARDS + [DistributedCPU]):
    learn = fresh_learner(lambda: xor_dls(n_train=128, n_valid=128, bs=32), build_mlp, seed=0, loss_func=nn.CrossEntropyLoss())
    seed_rank_streams(0)
    error, warned = run_fit(learn)
    write({'scenario': 'healthy', 'error': error, 'warnings': warned, 'env': env, 'backend': dist.get_backend(),
           'world': dist.get_world_size(), 'results': result_rows(learn.cross_rank_consistency.results)})
    last = int(os.environ['WORLD_SIZE']) - 1
    learn = fresh_learner(lambda: xor_dls(n_train=128, n_valid=128, bs=32), build_mlp, seed=1 if rank == last else 0, loss_func=nn.CrossEntropyLoss())
    seed_rank_streams(0)
    error, warned = run_fit(learn)
    write({'scenario': 'last_rank_diverged', 'error': error, 'warnings': warned, 'results': result_rows(learn.cross_rank_consistency.results)})

import os, sys
import torch.distributed as dist
if dist.is_initialized(): dist.destroy_process_group() # as PyTorch asks
# Seen here (torch 2.14, gloo on CPU): a rank sometimes aborts in interpreter teardown after all its work is done, with
# "terminate called without an active exception" (a C++ thread still joinable); leave without that teardown.
sys.stdout.flush(); sys.stderr.flush()
os._exit(0)
