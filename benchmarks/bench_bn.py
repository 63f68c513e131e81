"""Wall time of `fit` with FreezeBNStats against without, same seed, same frozen Learner, CPU.

Run by hand: `PYTHONPATH=. OMP_NUM_THREADS=1 python benchmarks/bench_bn.py [--reps 5]`.
Prints, per model, the median fit time of each condition and their ratio (target: <= 1.02), measured in one run with
the two conditions interleaved (ABAB...) so that machine load drifts hit both alike. Also prints the cost of the
per-batch work alone (`before_batch`: one flag per held layer) as a share of a batch.
Not a test: timings on a shared machine are noisy; read the ratio together with `uptime`.
"""
import argparse, os, statistics, time, warnings
import torch
from torch import nn
from fastai.learner import Learner
from fastai.vision.learner import vision_learner
from fastai.vision.models import resnet18
from fastai_paranoid.bn import FreezeBNStats
from fastai_paranoid.fixtures import bn_cnn, random_image_dls
from fastai_paranoid.fresh import seed_everything

def small_cnn_learner(cbs):
    seed_everything(0)
    dls = random_image_dls(n_train=512, n_valid=64, size=16, bs=32, shift=1.0)
    return Learner(dls, bn_cnn(), loss_func=nn.CrossEntropyLoss(), cbs=cbs,
                   splitter=lambda m: [list(m[0].parameters()), list(m[1].parameters())])

def resnet18_learner(cbs):
    seed_everything(0)
    dls = random_image_dls(n_train=128, n_valid=32, size=32, c_in=3, bs=32, shift=1.0)
    return vision_learner(dls, resnet18, pretrained=False, loss_func=nn.CrossEntropyLoss(), n_out=4, cbs=cbs)

def timed_fit(make, with_cb, epochs):
    learn = make([FreezeBNStats()] if with_cb else [])
    learn.freeze()
    with learn.no_logging():
        if hasattr(learn, 'no_bar'):
            with learn.no_bar():
                t0 = time.perf_counter(); learn.fit(epochs, 1e-3); return time.perf_counter() - t0, learn
        t0 = time.perf_counter(); learn.fit(epochs, 1e-3); return time.perf_counter() - t0, learn

def hold_cost(learn, n=2000):
    "Seconds per call of the per-batch work, on the layers this Learner holds"
    cb = learn.freeze_bn_stats
    cb.before_fit()
    t0 = time.perf_counter()
    for _ in range(n): cb.before_batch()
    per_call = (time.perf_counter() - t0) / n
    cb.after_fit()
    return per_call, len(learn.freeze_bn_stats.drift)

def bench(name, make, epochs, reps):
    timed_fit(make, True, 1); timed_fit(make, False, 1)   # warm-up: imports, allocator, caches
    times = {True: [], False: []}
    for _ in range(reps):
        for with_cb in (False, True):
            t, learn = timed_fit(make, with_cb, epochs)
            times[with_cb].append(t)
            if with_cb: cb_learn = learn
    base, with_cb = statistics.median(times[False]), statistics.median(times[True])
    n_batches = epochs * len(cb_learn.dls.train)
    per_call, n_layers = hold_cost(cb_learn)
    print(f"{name}: without {base:.3f}s, with FreezeBNStats {with_cb:.3f}s (medians of {reps}), ratio {with_cb / base:.3f}; "
          f"per-batch hold of {n_layers} layers {per_call * 1e6:.1f} us = {per_call * n_batches / base * 100:.3f}% of the fit")
    print(f"    runs without: {', '.join(f'{t:.3f}' for t in times[False])}")
    print(f"    runs with:    {', '.join(f'{t:.3f}' for t in times[True])}")
    return with_cb / base

if __name__ == '__main__':
    parser = argparse.ArgumentParser()
    parser.add_argument('--reps', type=int, default=5)
    args = parser.parse_args()
    torch.set_num_threads(int(os.environ.get('OMP_NUM_THREADS', 1)))
    warnings.simplefilter('ignore')
    print(f"torch {torch.__version__}, threads {torch.get_num_threads()}, load average {os.getloadavg()}")
    bench('small CNN (bn_cnn, 16x16, 16 batches x 3 epochs)', small_cnn_learner, 3, args.reps)
    bench('resnet18 (32x32, 4 batches x 2 epochs)', resnet18_learner, 2, args.reps)
    print(f"load average after: {os.getloadavg()}")
