"""A distributed fastai run with fastai_paranoid's guards: `torchrun --nproc_per_node 2 demo.py`
(or `accelerate launch --multi_gpu --num_processes 2 demo.py`). Rank 0 prints what the guards found; the other ranks stay quiet."""
import torch
from torch import nn
from fastai.torch_core import params, rank_distrib
from fastai.distributed import *
from fastai_paranoid.core import ResultTable
from fastai_paranoid.fixtures import xor_dls, build_mlp, bn_cnn, random_image_dls
from fastai_paranoid.fresh import fresh_learner
from fastai_paranoid.bn import FreezeBNStats
from fastai_paranoid.paranoid import paranoid, PARANOID_GUARDS
from fastai_paranoid.distributed import *

paranoid(on_finding='raise', guards=PARANOID_GUARDS + [DistributedCPU]) # DistributedCPU: distrib_ctx(cpu=True) works as on GPUs
rank = rank_distrib()
def say(*text):
    if rank == 0: print(*text, flush=True)

def fit_and_report(title, learn):
    try:
        with learn.distrib_ctx(cpu=True, sync_bn=False), learn.no_logging(): learn.fit(1)  # on GPUs: learn.distrib_ctx()
    except CrossRankDivergenceError: say(f"{title}: the fit stopped with CrossRankDivergenceError (raised on every rank)")
    results = learn.cross_rank_consistency.results
    say(ResultTable([r.as_row() for r in results], columns=['check', 'verdict', 'message'], title=title))
    for r in results:
        if r.fix: say(f"fix: {r.fix}")
    say()

# 1. the recipe: the same seed on every rank for the build, then rank-specific streams
learn = fresh_learner(xor_dls, build_mlp, seed=42, loss_func=nn.CrossEntropyLoss())
seed_rank_streams(42)
fit_and_report('healthy run', learn)

# 2. rank 1 seeded differently before building its model: DDP's wrap copies rank 0's weights, so an info note, and the fit runs
learn = fresh_learner(xor_dls, build_mlp, seed=42 + rank, loss_func=nn.CrossEntropyLoss())
fit_and_report('rank 1 seeded differently', learn)

# 3. a frozen trunk under DDP: FreezeBNStats holds its BatchNorm statistics on every rank
learn = fresh_learner(lambda: random_image_dls(n_train=64, n_valid=32, bs=8), bn_cnn, seed=42,
                      cbs=FreezeBNStats(), loss_func=nn.CrossEntropyLoss(), splitter=lambda m: [params(m[0]), params(m[1])])
seed_rank_streams(42)
learn.freeze()
fit_and_report('frozen trunk', learn)
say(learn.freeze_bn_stats.drift)
say(check_cross_rank(learn, stage='after the fit').message)

import os, sys
import torch.distributed as dist
if dist.is_initialized(): dist.destroy_process_group() # as PyTorch asks
# Seen here (torch 2.14, gloo on CPU): a rank sometimes aborts in interpreter teardown after all its work is done, with
# "terminate called without an active exception" (a C++ thread still joinable); leave without that teardown.
sys.stdout.flush(); sys.stderr.flush()
os._exit(0)
