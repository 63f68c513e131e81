"""Time `learn.sanity_check()` on scikit-learn's digits: every registered check, per-check seconds and the total, against
one epoch of `fit` on the same data measured in the same run. Target: the whole sanity check in at most 30 s on 2 CPU cores.

Run by hand from the repository root: `OMP_NUM_THREADS=1 python benchmarks/bench_sanity.py`."""
import importlib, time, warnings
from functools import partial
import torch
import fastai.callback.progress # learn.no_bar
from fastai.losses import CrossEntropyLossFlat
from fastai.torch_core import params
from fastai_paranoid.core import registered_checks
from fastai_paranoid.fixtures import digits_dls, small_cnn, transfer_model, pretrained_digits_trunk
from fastai_paranoid.fresh import fresh_learner
import fastai_paranoid.checks # registers the model checks and patches Learner.sanity_check
try: importlib.import_module('fastai_paranoid.datachecks') # the data checks, once merged
except ImportError: pass

TARGET_S = 30.0

def digits_cnn(): return fresh_learner(digits_dls, partial(small_cnn, n_out=10, size=8), loss_func=CrossEntropyLossFlat(), lr=3e-3)

def frozen_transfer():
    learn = fresh_learner(digits_dls, lambda: transfer_model(pretrained_digits_trunk(), 10), loss_func=CrossEntropyLossFlat(),
                          splitter=lambda m: [params(m[0]), params(m[1])], lr=3e-3)
    learn.freeze()
    return learn

def epoch_seconds(make):
    learn = make()
    start = time.perf_counter()
    with learn.no_bar(), learn.no_logging(): learn.fit(1)
    return time.perf_counter() - start

def bench(title, make):
    baseline = epoch_seconds(make)
    learn = make()
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        report = learn.sanity_check(on_fail=None, progress=False)
    total = time.perf_counter() - start
    print(f"\n{title}: {len(learn.dls.train_ds)} training images, bs {learn.dls.bs}; one epoch of fit = {baseline:.2f} s")
    for res, s in zip(report.results, report.seconds):
        print(f"  {res.name:28s} {res.verdict:8s} {s:6.2f} s  ({s / baseline:5.1f} epochs)")
    print(f"  {'total':28s} {'':8s} {total:6.2f} s  ({total / baseline:5.1f} epochs)  target <= {TARGET_S:.0f} s: "
          f"{'met' if total <= TARGET_S else 'MISSED'}")
    return total

if __name__ == '__main__':
    print(f"torch threads: {torch.get_num_threads()}; checks: {[fn.__name__ for fn in registered_checks()]}")
    totals = [bench("digits, small CNN", digits_cnn), bench("digits, frozen pretrained trunk", frozen_transfer)]
