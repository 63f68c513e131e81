"""Overhead of the loop guards (13_loopguards, all four) on a real fit: plain and guarded fits interleaved in one run, so that a
shared machine's load hits both alike; reports the ratio of the best times and the median of the pairs' ratios (bench_guards.py
measures them one variant after another, best of 3). Run by hand: `python benchmarks/bench_loopguards_overhead.py`."""
import sys, time, warnings, statistics
import torch
import fastai.callback.progress   # learn.no_bar()
from torch import nn
torch.set_num_threads(1)

def images_dls(n=320, size=64, bs=32):
    "bench_guards' random 64-px images in 2 classes"
    from fastai.data.core import DataLoaders
    from fastai.data.load import DataLoader
    g = torch.Generator().manual_seed(0)
    items = list(zip(torch.randn(n, 3, size, size, generator=g), torch.randint(0, 2, (n,), generator=g)))
    return DataLoaders(DataLoader(items, bs=bs, shuffle=True), DataLoader(items[:n // 5], bs=bs))

def resnet18_64():
    from torchvision.models import resnet18
    return resnet18(weights=None, num_classes=2)
from fastai_paranoid.fresh import fresh_learner
from fastai_paranoid.loopguards import LOOP_GUARDS
from fastai_paranoid.fixtures import digits_dls, digits_trunk, transfer_model, xor_dls, build_mlp

def one(dls_fn, model_fn, cbs, epochs):
    learn = fresh_learner(dls_fn, model_fn, cbs=cbs, loss_func=nn.CrossEntropyLoss())
    with learn.no_bar(), learn.no_logging(), warnings.catch_warnings():
        warnings.simplefilter('ignore')
        start = time.perf_counter()
        learn.fit(epochs, 1e-3)
        return time.perf_counter() - start

if __name__ == '__main__': # importable: bench_checkguards_overhead times its fits with `one`
    tasks = {'resnet18, 64 px': (images_dls, resnet18_64, 1, 3), 'digits CNN (BatchNorm)': (lambda: digits_dls(bs=64), lambda: transfer_model(digits_trunk(), 10), 5, 5),
             'MLP (XOR, width 256)': (lambda: xor_dls(n_valid=512), lambda: build_mlp(width=256), 5, 7)}
    for name, (dls_fn, model_fn, epochs, pairs) in tasks.items():
        plain, guarded = [], []
        for _ in range(pairs):
            plain.append(one(dls_fn, model_fn, [], epochs))
            guarded.append(one(dls_fn, model_fn, [g() for g in LOOP_GUARDS], epochs))
        print(f"{name}: plain best {min(plain):.3f}s, guarded best {min(guarded):.3f}s ({epochs} epochs, {pairs} interleaved pairs): "
              f"ratio of bests x{min(guarded) / min(plain):.3f}, median of pair ratios x{statistics.median(g / p for g, p in zip(guarded, plain)):.3f}", flush=True)
