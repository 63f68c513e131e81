"""FreezeBNStats, StateLeakDetector and DistributedValidPadding under DDP in one launch (one start-up of fastai per rank instead of three).
Usage: torchrun --nproc_per_node 2 guards.py <out_dir>"""
import os, runpy
here = os.path.dirname(os.path.abspath(__file__))
runpy.run_path(os.path.join(here, 'leaks.py'), run_name='__main__')
runpy.run_path(os.path.join(here, 'valid_padding.py'), run_name='__main__')
runpy.run_path(os.path.join(here, 'freeze_bn.py'), run_name='__main__')  # last: it lifts DDP's CPU SyncBatchNorm refusal

import os, sys
import torch.distributed as dist
if dist.is_initialized(): dist.destroy_process_group() # as PyTorch asks
# Seen here (torch 2.14, gloo on CPU): a rank sometimes aborts in interpreter teardown after all its work is done, with
# "terminate called without an active exception" (a C++ thread still joinable); leave without that teardown.
sys.stdout.flush(); sys.stderr.flush()
os._exit(0)
