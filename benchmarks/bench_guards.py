"""Overhead of NaNGuard and RNGAudit on a fit, as ratios to the same fit without them (measured in the same run).
Run by hand: `python benchmarks/bench_guards.py`. Timings on a shared machine are noisy: read the ratios, best of `REPEATS`."""
import time, warnings
import torch
from torch import nn
import fastai.callback.progress   # learn.no_bar()
from fastai_paranoid.fixtures import digits_dls, digits_trunk, transfer_model, xor_dls, build_mlp
from fastai_paranoid.fresh import fresh_learner
from fastai_paranoid.guards import NaNGuard, RNGAudit

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

tasks = {'digits CNN (BatchNorm)': (lambda: digits_dls(bs=64), lambda: transfer_model(digits_trunk(), 10)),
         'XOR MLP': (lambda: xor_dls(n_valid=512), lambda: build_mlp(width=256))}
variants = {'NaNGuard': lambda: [NaNGuard()], 'NaNGuard(watch_modules=False)': lambda: [NaNGuard(watch_modules=False)],
            'RNGAudit': lambda: [RNGAudit()], 'both': lambda: [NaNGuard(), RNGAudit()]}
for task, (dls_fn, model_fn) in tasks.items():
    base = fit_seconds(dls_fn, model_fn, [])
    print(f"{task}: baseline {base:.2f}s for {EPOCHS} epochs")
    for name, cbs in variants.items():
        print(f"  {name:30s} x{fit_seconds(dls_fn, model_fn, cbs()) / base:.2f}")
