"""False-alarm rates of the checks changed for issues 16 and 17, on random healthy Learners none of them was tuned on:
- check_loss_at_init (head against the data's classes) and check_loss_activation (clamping last activation), on MLP
  classifiers (2-6 classes, random widths and depths, fastai RandomSplitter splits) and small CNNs;
- check_lr on the same classifiers and on unscaled regressions (y = X @ w * scale + offset, scale 1-50, offset -100-100,
  MSELossFlat, Adam at 1e-3 or 3e-3);
- check_frozen on BatchNorm CNNs frozen with a splitter and fastai's defaults (train_bn=True), and on
  vision_learner(resnet18, pretrained=False) after learn.freeze();
- EmptyFreezeGuard through learn.fine_tune(1) of those vision_learners (two parameter groups: must stay silent).
A false alarm is a verdict 'failed' or 'warning' (or, for the guard, any finding). Each rate is printed as alarms / n with
a 95% Clopper-Pearson interval.

Run by hand from the repository root: `python benchmarks/bench_falsealarm_checks.py [n] [n_vision]` (default 100 and 100;
it sets torch to 1 thread)."""
import sys, time, warnings
from functools import partial
import numpy as np
import torch
from torch import nn
from scipy.stats import beta
import fastai.callback.progress # learn.no_bar
from fastai.callback.schedule import fine_tune # noqa: F401 (patches Learner.fine_tune)
from fastai.data.transforms import RandomSplitter
from fastai.learner import Learner
from fastai.losses import CrossEntropyLossFlat, MSELossFlat
from fastai.torch_core import params
from fastai_paranoid.core import ParanoidWarning
from fastai_paranoid.fixtures import tensor_dls, random_image_dls
from fastai_paranoid.bn import EmptyFreezeGuard
from fastai_paranoid.checks import check_loss_at_init, check_loss_activation, check_lr, check_frozen

torch.set_num_threads(1)
warnings.simplefilter('ignore')

def clopper_pearson(k, n, level=0.95):
    a = (1 - level) / 2
    lo = 0.0 if k == 0 else beta.ppf(a, k, n - k + 1)
    hi = 1.0 if k == n else beta.ppf(1 - a, k + 1, n - k)
    return lo, hi

def split_dls(X, y, rng, bs):
    "fastai's RandomSplitter (unstratified), seeded from `rng`"
    train, valid = RandomSplitter(valid_pct=0.2, seed=int(rng.integers(1 << 30)))(range(len(X)))
    return tensor_dls(X[list(train)], y[list(train)], X[list(valid)], y[list(valid)], bs=bs)

def mlp(d, n_out, rng):
    width, depth = int(rng.choice([16, 32, 64, 128])), int(rng.integers(1, 4))
    layers, w = [], d
    for _ in range(depth): layers += [nn.Linear(w, width), nn.ReLU()]; w = width
    return nn.Sequential(*layers, nn.Linear(w, n_out))

def classifier(seed):
    rng = np.random.default_rng(seed)
    torch.manual_seed(seed)
    n, d, c = int(rng.integers(200, 1200)), int(rng.integers(2, 20)), int(rng.integers(2, 7))
    centers = rng.normal(size=(c, d)) * rng.uniform(0.3, 2)
    y = rng.integers(0, c, n)
    X = (centers[y] + rng.normal(size=(n, d))).astype(np.float32)
    dls = split_dls(torch.from_numpy(X), torch.from_numpy(y), rng, bs=int(rng.choice([16, 32, 64])))
    return Learner(dls, mlp(d, c, rng), loss_func=CrossEntropyLossFlat(), lr=float(rng.choice([1e-3, 3e-3, 1e-2])))

def regression(seed):
    rng = np.random.default_rng(seed)
    torch.manual_seed(seed)
    n, d = int(rng.integers(200, 1200)), int(rng.integers(2, 20))
    X = rng.normal(size=(n, d)).astype(np.float32)
    y = (X @ rng.normal(size=(d, 1)) * rng.uniform(1, 50) + rng.uniform(-100, 100) + rng.normal(size=(n, 1))).astype(np.float32)
    dls = split_dls(torch.from_numpy(X), torch.from_numpy(y), rng, bs=int(rng.choice([16, 32, 64])))
    return Learner(dls, mlp(d, 1, rng), loss_func=MSELossFlat(), lr=float(rng.choice([1e-3, 3e-3])))

def bn_cnn_frozen(seed):
    rng = np.random.default_rng(seed)
    torch.manual_seed(seed)
    c, width = int(rng.integers(2, 6)), int(rng.choice([4, 8, 16]))
    trunk = nn.Sequential(nn.Conv2d(1, width, 3, padding=1), nn.BatchNorm2d(width), nn.ReLU(),
                          nn.Conv2d(width, 2 * width, 3, padding=1, stride=2), nn.BatchNorm2d(2 * width), nn.ReLU(),
                          nn.AdaptiveAvgPool2d(1), nn.Flatten())
    model = nn.Sequential(trunk, nn.Linear(2 * width, c))
    dls = random_image_dls(n_train=64, n_valid=32, n_classes=c, shift=float(rng.uniform(-1, 1)), seed=seed)
    learn = Learner(dls, model, loss_func=CrossEntropyLossFlat(), splitter=lambda m: [params(m[0]), params(m[1])],
                    lr=float(rng.choice([1e-3, 1e-2])))
    learn.freeze()
    return learn

def vision(seed):
    from fastai.vision.learner import vision_learner
    from torchvision.models import resnet18
    rng = np.random.default_rng(seed)
    torch.manual_seed(seed)
    c = int(rng.integers(2, 6))
    dls = random_image_dls(n_train=32, n_valid=16, n_classes=c, c_in=3, size=32, seed=seed)
    return vision_learner(dls, resnet18, pretrained=False, n_out=c, loss_func=CrossEntropyLossFlat(), cbs=EmptyFreezeGuard())

def alarm(res): return res.verdict in ('failed', 'warning')

def run(label, make, checks, n, offset):
    counts, seconds = {c.__name__: [0, 0] for c in checks}, 0.0
    examples, rescued = {}, 0 # rescued: check_lr passes that the old verdict (no paired test) failed as overshoot
    for i in range(n):
        learn = make(offset + i)
        for check in checks:
            start = time.perf_counter()
            res = check(learn)
            seconds += time.perf_counter() - start
            counts[check.__name__][1] += 1
            m = res.measured
            if res.verdict == 'passed' and m.get('tail_over_start', 0) > 0.98 and m.get('relative_weight_change', 0) > 0.1: rescued += 1
            if alarm(res):
                counts[check.__name__][0] += 1
                examples.setdefault(check.__name__, f"seed {offset + i}: {res.verdict}: {res.message[:200]}")
    for name, (k, total) in counts.items():
        lo, hi = clopper_pearson(k, total)
        print(f"{label:28s} {name:24s} {k:3d} / {total:3d} = {k / total:.3f}  95% CI [{lo:.3f}, {hi:.3f}]")
        if name in examples: print(f"    first alarm: {examples[name]}")
    print(f"{'':28s} ({seconds:.0f} s of checks" + (f"; check_lr passed by the paired t-test where the old verdict said overshoot: {rescued}" if rescued else '') + ")")
    return counts

def guard_fine_tune(n, offset):
    k = 0
    for i in range(n):
        learn = vision(offset + i)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter('always')
            with learn.no_bar(), learn.no_logging(): learn.fine_tune(1)
        k += any(issubclass(x.category, ParanoidWarning) for x in w)
    lo, hi = clopper_pearson(k, n)
    print(f"{'vision_learner fine_tune':28s} {'EmptyFreezeGuard':24s} {k:3d} / {n:3d} = {k / n:.3f}  95% CI [{lo:.3f}, {hi:.3f}]")

if __name__ == '__main__':
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 100
    n_vision = int(sys.argv[2]) if len(sys.argv) > 2 else 100
    run('MLP classifiers', classifier, [check_loss_at_init, check_loss_activation, check_lr], n, 1000)
    run('unscaled regressions', regression, [check_lr], n, 2000)
    run('BN CNNs, freeze(), train_bn', bn_cnn_frozen, [check_loss_at_init, check_loss_activation, check_frozen], n, 3000)
    run('vision_learner resnet18', lambda s: (l := vision(s), l.freeze(), l)[-1], [check_frozen], n_vision, 4000)
    guard_fine_tune(n_vision, 5000)
