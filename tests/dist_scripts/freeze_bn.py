"""FreezeBNStats under a real 2-process DDP launch with `sync_bn=True`; each rank writes `<out_dir>/<scenario>.<rank>.json`.

On CPU, torch's DistributedDataParallel refuses SyncBatchNorm layers at construction ("SyncBatchNorm layers only
work with GPU modules"): the sync kernels are GPU-only. A held (eval-mode) SyncBatchNorm never calls them, so this
script lifts that one constructor check; any SyncBatchNorm left in training mode still fails in its forward on CPU
("SyncBatchNorm expected input tensor to be on GPU"), which is how the unguarded scenario shows the frozen layers
would have all-reduced their statistics."""
import json, os, sys, warnings
import torch
from torch import nn
from torch.nn.parallel import DistributedDataParallel
from fastai.learner import Learner
from fastai.callback.core import Callback
from fastai.torch_core import params
from fastai.distributed import *
from fastai_paranoid.core import fingerprint, stat_norm_layers
from fastai_paranoid.fixtures import bn_cnn, random_image_dls
from fastai_paranoid.fresh import fresh_learner
from fastai_paranoid.bn import FreezeBNStats, BNStatsWarning
from fastai_paranoid.distributed import *

fix_distributed_dl_for_cpu()
DistributedDataParallel._passing_sync_batchnorm_handle = lambda self, module: None  # see the docstring
rank = int(os.environ['RANK'])
out_dir = sys.argv[1]

def emit(line):
    with open(os.path.join(out_dir, f"{line['scenario']}.{rank}.json"), 'w') as f: json.dump(line, f, default=str)

class SeenInFit(Callback):
    "Records the norm layers the fit really runs: their classes and training flags at the last training batch"
    order = 101 # after FreezeBNStats.before_batch
    def before_batch(self):
        if not self.learn.training: return
        layers = stat_norm_layers(self.learn.model)
        self.seen = {'model': type(self.learn.model).__name__, 'classes': [type(m).__name__ for m in layers],
                     'training': [m.training for m in layers]}

def stat_digest(model):
    return {n: list(fingerprint(b)) for n, b in model.named_buffers() if n.rsplit('.', 1)[-1] in ('running_mean', 'running_var', 'num_batches_tracked')}

def frozen_trunk_learner(cbs):
    learn = fresh_learner(lambda: random_image_dls(n_train=64, n_valid=32, bs=8), bn_cnn, cbs=cbs, seed=0,
                          loss_func=nn.CrossEntropyLoss(), splitter=lambda m: [params(m[0]), params(m[1])])
    seed_rank_streams(0)
    learn.freeze()
    return learn

def scenario(name, cbs, sync_bn):
    learn = frozen_trunk_learner(cbs + [SeenInFit()])
    before = stat_digest(learn.model)
    error = None
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        try:
            with learn.distrib_ctx(cpu=True, sync_bn=sync_bn): learn.fit(1)
        except Exception as e: error = f"{type(e).__name__}: {e}"
    after = stat_digest(learn.model)
    fbs = getattr(learn, 'freeze_bn_stats', None)
    emit({'scenario': name, 'rank': rank, 'error': error,
          'seen_in_fit': getattr(learn.seen_in_fit, 'seen', None),
          'moved': [n for n in before if before[n] != after.get(n)],
          'n_stat_buffers': len(before),
          'classes_after_fit': [type(m).__name__ for m in stat_norm_layers(learn.model)],
          'drift': None if fbs is None or fbs.drift is None else [dict(r) for r in fbs.drift],
          'bn_warnings': [str(w.message) for w in caught if issubclass(w.category, BNStatsWarning)],
          'cross_rank': [r.as_row() for r in learn.cross_rank_consistency.results] if hasattr(learn, 'cross_rank_consistency') else None})
    return learn

learn = scenario('held_sync_bn', [FreezeBNStats(), CrossRankConsistency()], sync_bn=True)
# the ranks still agree after the fit (weights, the held statistics, optimizer state)
emit({'scenario': 'held_sync_bn_after_fit', 'rank': rank, 'result': check_cross_rank(learn, stage='after the fit').as_row()})
scenario('unguarded_sync_bn', [], sync_bn=True)
scenario('unguarded_no_sync', [], sync_bn=False)
scenario('held_no_sync', [FreezeBNStats()], sync_bn=False)

# nothing frozen: FreezeBNStats says so once, on rank 0 only, without `report_on_rank0()`; every rank keeps the callback's state
learn = fresh_learner(lambda: random_image_dls(n_train=32, n_valid=16, bs=8), bn_cnn, cbs=FreezeBNStats(), seed=0, loss_func=nn.CrossEntropyLoss())
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter('always')
    with learn.distrib_ctx(cpu=True, sync_bn=False): learn.fit(1)
emit({'scenario': 'nothing_frozen', 'rank': rank, 'bn_warnings': [str(w.message) for w in caught if issubclass(w.category, BNStatsWarning)],
      'warned_idle': learn.freeze_bn_stats._warned_idle})
