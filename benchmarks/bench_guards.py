"""Overhead of NaNGuard, RNGAudit, the loop guards (13_loopguards) and the fit checks (14_fitchecks) on a fit, as ratios to the same fit without them (measured in the same run).
Run by hand: `python benchmarks/bench_guards.py [WORD ...]` (only the variants whose name holds a WORD, e.g. `loop`). Timings on a shared machine are noisy: read the ratios, best of `REPEATS`."""
import sys, time, warnings
import torch
from torch import nn
import fastai.callback.progress   # learn.no_bar()
from fastai_paranoid.fixtures import digits_dls, digits_trunk, transfer_model, xor_dls, build_mlp
from fastai_paranoid.fresh import fresh_learner
from fastai_paranoid.guards import NaNGuard, RNGAudit
from fastai_paranoid.loopguards import LOOP_GUARDS
from fastai_paranoid.fitchecks import FITCHECK_GUARDS

REPEATS, EPOCHS = 3, 5
torch.set_num_threads(1)

def fit_seconds(dls_fn, model_fn, cbs):
    best = float('inf')
    for _ in range(REPEATS):
        learn = fresh_learner(dls_fn, model_fn, cbs=cbs, loss_func=nn.CrossEntropyLoss())
        with learn.no_bar(), learn.no_logging(), warnings.catch_warnings():
            warnings.simplefilter('ignore')
            start = time.perf_counter()
            learn.fit(EPOCHS, 1e-3)
            best = min(best, time.perf_counter() - start)
    return best

def images_dls(n=320, size=64, bs=32):
    "Random 64-px images in 2 classes: the tutorial's resnet18 input (bench_checkrun), no files"
    from fastai.data.core import DataLoaders
    from fastai.data.load import DataLoader
    g = torch.Generator().manual_seed(0)
    items = list(zip(torch.randn(n, 3, size, size, generator=g), torch.randint(0, 2, (n,), generator=g)))
    return DataLoaders(DataLoader(items, bs=bs, shuffle=True), DataLoader(items[:n // 5], bs=bs))

def resnet18_64():
    from torchvision.models import resnet18
    return resnet18(weights=None, num_classes=2)

tasks = {'resnet18, 64 px (bench_checkrun\'s model)': (images_dls, resnet18_64),
         'digits CNN (BatchNorm)': (lambda: digits_dls(bs=64), lambda: transfer_model(digits_trunk(), 10)),
         'XOR MLP': (lambda: xor_dls(n_valid=512), lambda: build_mlp(width=256))}
import fastai_paranoid.guards as guards
_one_sum = guards._isfinite_all
def _elementwise(t): return torch.isfinite(t).all() # NaNGuard's test before issue 20: a bool tensor of t's size, then a reduction

def nan_guard_before():
    "NaNGuard with its finiteness test as it was before issue 20 (restored for the next variant by `fit_seconds`' callers)"
    guards._isfinite_all = _elementwise
    return [NaNGuard()]

def nan_guard_now():
    guards._isfinite_all = _one_sum
    return [NaNGuard()]

variants = {'NaNGuard, before (isfinite().all())': nan_guard_before, 'NaNGuard': nan_guard_now, 'NaNGuard(watch_modules=False)': lambda: [NaNGuard(watch_modules=False)],
            'RNGAudit': lambda: [RNGAudit()], 'both': lambda: [NaNGuard(), RNGAudit()],
            **{f'loop: {g.__name__}': (lambda g=g: [g()]) for g in LOOP_GUARDS}, 'loop: all four': lambda: [g() for g in LOOP_GUARDS],
            'fit checks (LossShape, FrozenHead, Load, DataOrder)': lambda: [g() for g in FITCHECK_GUARDS]}
wanted = sys.argv[1:]
if wanted: variants = {name: v for name, v in variants.items() if any(w in name for w in wanted)}
for task, (dls_fn, model_fn) in tasks.items():
    base = fit_seconds(dls_fn, model_fn, [])
    print(f"{task}: baseline {base:.2f}s for {EPOCHS} epochs")
    for name, cbs in variants.items():
        guards._isfinite_all = _one_sum
        print(f"  {name:36s} x{fit_seconds(dls_fn, model_fn, cbs()) / base:.2f}")
