"""4 ranks on one machine: `learn.distrib_ctx(cpu=True)` in one call under paranoid(), without `fix_distributed_dl_for_cpu()`;
sync_bn refused in one line; a divergence on rank 2 named; the bytes each rank gathers for resnet18 and resnet50.
Usage: torchrun --nproc_per_node 4 four_ranks.py <out_dir>; each rank writes `<out_dir>/<scenario>.<rank>.json`."""
import os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch
from torch import nn
from fastai.callback.core import Callback
from fastai.distributed import DistributedDL, DistributedTrainer
from fastai.learner import Learner
from fastai_paranoid.fixtures import xor_dls, build_mlp, bn_cnn, random_image_dls
from fastai_paranoid.fresh import fresh_learner
from fastai_paranoid.distributed import *
from fastai_paranoid.distributed import traffic
from fastai_paranoid.paranoid import paranoid, PARANOID_GUARDS
from record import rank, write, result_rows, run_fit

fastai_broadcast = DistributedDL._broadcast
GUARDS = PARANOID_GUARDS + [DistributedCPU] # until paranoid()'s defaults include it

class SeenBroadcast(Callback):
    "Records which `_broadcast` the DataLoaders of the fit use"
    order = 12
    def before_train(self):
        dl = self.learn.dl
        self.seen = {'dl': type(dl).__name__, 'own_broadcast': '_broadcast' in dl.__dict__}

def small_xor(): return xor_dls(n_train=256, n_valid=256, bs=32)

# healthy, one call: under paranoid(), `distrib_ctx(cpu=True)` trains on 4 CPU ranks with gloo
with paranoid(guards=GUARDS):
    learn = fresh_learner(small_xor, build_mlp, seed=0, loss_func=nn.CrossEntropyLoss(), cbs=SeenBroadcast())
    seed_rank_streams(0)
    error, warned = run_fit(learn)
    results = result_rows(learn.cross_rank_consistency.results) # paranoid() takes its guards back when the block ends
write({'scenario': 'cpu_one_call', 'error': error, 'warnings': warned, 'results': results,
       'seen': getattr(learn.seen_broadcast, 'seen', None), 'class_untouched': DistributedDL._broadcast is fastai_broadcast,
       'loaders_after': [type(dl).__name__ for dl in learn.dls.loaders],
       'cbs_after': sorted(type(cb).__name__ for cb in learn.cbs)})

# the fix was undone with the context: a fit outside paranoid() meets fastai's CUDA broadcast again
learn = fresh_learner(small_xor, build_mlp, seed=0, loss_func=nn.CrossEntropyLoss())
error, _ = run_fit(learn)
write({'scenario': 'without_the_fix', 'error': error})

# a rank-dependent seed on rank 2 only: named among 4 ranks
with paranoid(on_finding='raise', guards=GUARDS):
    learn = fresh_learner(small_xor, build_mlp, seed=7 if rank == 2 else 0, loss_func=nn.CrossEntropyLoss())
    error, warned = run_fit(learn)
    write({'scenario': 'rank2_divergence', 'error': error, 'error_type': None if error is None else error.split(':')[0],
           'results': result_rows(learn.cross_rank_consistency.results)})

# sync_bn=True (fastai's default) with BatchNorm on CPU: refused in one line on every rank, no rank left waiting
with paranoid(guards=GUARDS):
    learn = fresh_learner(lambda: random_image_dls(n_train=32, n_valid=16, bs=8), bn_cnn, seed=0, loss_func=nn.CrossEntropyLoss())
    seed_rank_streams(0)
    refused, _ = run_fit(learn)
    error, _ = run_fit(learn, sync_bn=False) # the fix the message names
write({'scenario': 'sync_bn_on_cpu', 'refused': refused, 'error': error})

# bytes each rank gathers at fit start, for resnet18 and resnet50 (healthy, and with one weight changed on rank 3)
from torchvision.models import resnet18, resnet50
for name, arch in (('resnet18', resnet18), ('resnet50', resnet50)):
    learn = fresh_learner(lambda: random_image_dls(n_train=8, n_valid=8, n_classes=10, c_in=3, size=32, bs=4),
                          lambda: arch(num_classes=10), seed=0, loss_func=nn.CrossEntropyLoss())
    learn.create_opt()
    healthy = check_cross_rank(learn)
    if rank == 3:
        with torch.no_grad(): learn.model.layer4[0].conv2.weight[5, 3, 1, 2] += 1e-3
    planted = check_cross_rank(learn)
    write({'scenario': f'bytes_{name}', 'n_params': sum(p.numel() for p in learn.model.parameters()),
           'n_tensors': len(list(learn.model.parameters())) + len(list(learn.model.buffers())),
           'healthy': result_rows([healthy])[0], 'planted': result_rows([planted])[0]})

import os, sys
import torch.distributed as dist
if dist.is_initialized(): dist.destroy_process_group() # as PyTorch asks
# Seen here (torch 2.14, gloo on CPU): a rank sometimes aborts in interpreter teardown after all its work is done, with
# "terminate called without an active exception" (a C++ thread still joinable); leave without that teardown.
sys.stdout.flush(); sys.stderr.flush()
os._exit(0)
