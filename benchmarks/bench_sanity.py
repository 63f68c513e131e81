"""Time `learn.sanity_check()` at its default budget: every registered check, per-check seconds and the total, against one
epoch of `fit` on the same data measured in the same run. Each line also gives the CPU seconds of the process (`time.process_time`, every thread), which a shared machine inflates
less than wall time. Targets, on 2 CPU cores:
- scikit-learn's digits with seed 001's small CNN, and with a small MLP: the whole sanity check within 3 s of CPU
  (issue 20; it was 10 s of wall time: the checks end when they have their answer);
- vision_learner(resnet34, pretrained=False) on 64 px images: within the default budget (`default_budget`, 60 s on CPU),
  each check cutting its steps to its share and saying when it ran with less power than it wanted.
The healthy digits pipelines are standardized (the raw [0, 1] pixels would rightly get an input-normalization warning).

Run by hand from the repository root: `python benchmarks/bench_sanity.py` (it sets torch to 2 threads)."""
import time, warnings
from functools import partial
import torch
from torch import nn
import fastai.callback.progress # learn.no_bar
from fastai.losses import CrossEntropyLossFlat
from fastai.torch_core import params
from fastai.vision.learner import vision_learner
from torchvision.models import resnet34
from fastai_paranoid.core import registered_checks
from fastai_paranoid.fixtures import small_cnn, tensor_dls, load_digits_tensors, split_per_class
from fastai_paranoid.fresh import fresh_learner
from fastai_paranoid.sanity import default_budget
from fastai_paranoid.calibration import image_dls, transfer_model, standardized_trunk, transfer_dls

torch.set_num_threads(2)

def standardized_digits_dls(bs=64):
    x, y = load_digits_tensors()
    tr, va = split_per_class(y, seed=0)
    mean, std = x[tr].mean(), x[tr].std()
    return tensor_dls((x[tr] - mean) / std, y[tr], (x[va] - mean) / std, y[va], bs=bs)

def digits_cnn():
    return fresh_learner(standardized_digits_dls, partial(small_cnn, n_out=10, size=8), loss_func=CrossEntropyLossFlat(), lr=3e-3)

def digits_mlp():
    mlp = lambda: nn.Sequential(nn.Flatten(), nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 10))
    return fresh_learner(standardized_digits_dls, mlp, loss_func=CrossEntropyLossFlat(), lr=3e-3)

def frozen_transfer():
    learn = fresh_learner(transfer_dls, lambda: transfer_model(standardized_trunk(), 5), loss_func=CrossEntropyLossFlat(),
                          splitter=lambda m: [params(m[0]), params(m[1])], lr=1e-2)
    return learn.linear_probe(lr=1e-2)

def resnet34_64px():
    return fresh_learner(partial(image_dls, n_train=512, n_valid=128, size=64, n_classes=3, bs=64), resnet34,
                         learner=vision_learner, pretrained=False, loss_func=CrossEntropyLossFlat())

def epoch_seconds(make):
    learn = make()
    start = time.perf_counter()
    with learn.no_bar(), learn.no_logging(): learn.fit(1)
    return time.perf_counter() - start

def bench(title, make, target, cpu_target=None):
    baseline = epoch_seconds(make)
    learn = make()
    start, cpu_start = time.perf_counter(), time.process_time()
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        report = learn.sanity_check(on_finding=None, progress=False)
    total, cpu = time.perf_counter() - start, time.process_time() - cpu_start
    print(f"\n{title}: {len(learn.dls.train_ds)} training items, bs {learn.dls.bs}; one epoch of fit = {baseline:.2f} s; "
          f"budget {report.budget:g} s; CPU {cpu:.2f} s" + (f" (target <= {cpu_target:g} s: {'met' if cpu <= cpu_target else 'MISSED'})" if cpu_target else ''))
    for res, s in zip(report.results, report.seconds):
        note = ' (less power: ' + res.message[:90] + '...)' if res.message.startswith('inconclusive') or 'budget' in res.message else ''
        print(f"  {res.name:28s} {res.verdict:8s} {s:6.2f} s  ({s / baseline:5.1f} epochs){note}")
    print(f"  {'total':28s} {'':8s} {total:6.2f} s  ({total / baseline:5.1f} epochs)  target <= {target:.0f} s: "
          f"{'met' if total <= target else 'MISSED'}")
    return total

if __name__ == '__main__':
    with open('/proc/loadavg') as f: print(f"load average: {f.read().strip()}")
    print(f"torch threads: {torch.get_num_threads()}; checks: {[fn.__name__ for fn in registered_checks()]}")
    bench("digits, small CNN", digits_cnn, 10., cpu_target=3.)
    bench("digits, small MLP", digits_mlp, 10., cpu_target=3.)
    bench("digits 5-9, frozen pretrained trunk (linear_probe)", frozen_transfer, 10.)
    bench("vision_learner(resnet34, pretrained=False), 64 px", resnet34_64px, default_budget(resnet34_64px()))
    with open('/proc/loadavg') as f: print(f"load average: {f.read().strip()}")
