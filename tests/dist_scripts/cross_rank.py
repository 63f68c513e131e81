"Scenarios for CrossRankConsistency under a real 2-process launch; each rank writes `<out_dir>/<scenario>.<rank>.json`."
import json, os, sys, warnings
import torch
from torch import nn
from fastai.learner import Learner
from fastai.callback.core import Callback
from fastai.distributed import *
from fastai_paranoid.fixtures import xor_dls, build_mlp, tensor_dls, make_xor_data
from fastai_paranoid.fresh import fresh_learner
from fastai_paranoid.distributed import *
import numpy as np

fix_distributed_dl_for_cpu()
rank = int(os.environ['RANK'])
out_dir = sys.argv[1]

def emit(line):
    with open(os.path.join(out_dir, f"{line['scenario']}.{rank}.json"), 'w') as f: json.dump(line, f, default=str)

def dropout_mlp(): return nn.Sequential(nn.Linear(2, 32), nn.ReLU(), nn.Dropout(0.2), nn.Linear(32, 2))
def small_xor(): return xor_dls(n_train=256, n_valid=256, bs=64)

class AfterWrap(Callback):
    "The same check placed after DistributedTrainer's wrap (order 12)"
    order = 12
    def before_fit(self): self.result = check_cross_rank(self.learn, stage='after the DDP wrap')

def report(scenario, learn=None, error=None, caught=()):
    cb = getattr(learn, 'cross_rank_consistency', None) if learn is not None else None
    results = [r.as_row() | {'measured_raw': r.measured} for r in (cb.results if cb else [])]
    after = getattr(learn, 'after_wrap', None) if learn is not None else None
    line = {'scenario': scenario, 'rank': rank, 'results': results, 'error': error,
            'error_type': None if error is None else error.split(':')[0],
            'warnings': [f"{w.category.__name__}: {w.message}" for w in caught],
            'after_wrap': after.result.as_row() if after is not None and hasattr(after, 'result') else None}
    emit(line)

def run(scenario, learn, **fit_kwargs):
    learn.add_cb(AfterWrap())
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        warnings.filterwarnings('ignore', category=FutureWarning)
        try:
            with learn.distrib_ctx(cpu=True, sync_bn=False): learn.fit(1, **fit_kwargs)
            error = None
        except Exception as e: error = f"{type(e).__name__}: {e}"
    report(scenario, learn, error, [w for w in caught if 'Paranoid' in str(w.category.__mro__) or 'CrossRank' in w.category.__name__])
    return learn

# 1. healthy: same seed for the build on every rank, then rank-specific streams
learn = fresh_learner(small_xor, dropout_mlp, cbs=CrossRankConsistency(), seed=0, loss_func=nn.CrossEntropyLoss())
seed_rank_streams(0)
run('healthy', learn)
# after a healthy distributed fit the ranks still agree (DDP averaged the gradients)
res = check_cross_rank(learn, stage='after the fit')
emit({'scenario': 'healthy_after_fit', 'rank': rank, 'results': [res.as_row()]})

# 2. planted: rank 1 seeded differently before model init
learn = fresh_learner(small_xor, build_mlp, cbs=CrossRankConsistency(), seed=0 if rank == 0 else 1, loss_func=nn.CrossEntropyLoss())
run('init_divergence', learn)
learn = fresh_learner(small_xor, build_mlp, cbs=CrossRankConsistency(on_fail='warn'), seed=0 if rank == 0 else 1, loss_func=nn.CrossEntropyLoss())
run('init_divergence_warn', learn)

# 3. planted: the train/valid split drawn from a rank-dependent seed
def split_dls(split_seed):
    x, y = make_xor_data(512, np.random.default_rng(0))
    idx = torch.randperm(512, generator=torch.Generator().manual_seed(split_seed))
    return tensor_dls(x[idx[:256]], y[idx[:256]], x[idx[256:]], y[idx[256:]], bs=64)
learn = fresh_learner(lambda: split_dls(rank), build_mlp, cbs=CrossRankConsistency(), seed=0, loss_func=nn.CrossEntropyLoss())
run('split_divergence', learn)

# 4. same streams on every rank and a dropout layer drawing from them
learn = fresh_learner(small_xor, dropout_mlp, cbs=CrossRankConsistency(), seed=0, loss_func=nn.CrossEntropyLoss())
run('shared_streams', learn)

# 5. planted: a rank-dependent learning rate
learn = fresh_learner(small_xor, build_mlp, cbs=CrossRankConsistency(), seed=0, loss_func=nn.CrossEntropyLoss())
run('lr_divergence', learn, lr=1e-3 * (rank + 1))

# 6. under paranoid(): the guard is installed into every new Learner; rank 1 seeded differently before model init
from fastai_paranoid.paranoid import paranoid, PARANOID_GUARDS
with paranoid(guards=PARANOID_GUARDS + [CrossRankConsistency]):  # leaving the block removes the guards it added
    learn = fresh_learner(small_xor, build_mlp, seed=0 if rank == 0 else 1, loss_func=nn.CrossEntropyLoss())
    run('paranoid_init_divergence', learn)
