"""Seconds of the data checks (check_label_leak, check_split_duplicates, check_input_normalization,
check_batch_independence) on a few Learners, each check on its own, with the share of a 60 s `learn.sanity_check()`
budget the runner gives it (with the work-sized checks that budget is only their safety net), and then all four inside
one `sharing(learn)` block, as `learn.sanity_check()` runs them (they share their reads), with the runner's defaults
(`check_label_leak(decide_without_copies=True)`: no copies across the split, no copies trained). CPU seconds of this process
(`time.process_time`, torch on one thread), the fastest of `repeats` runs, so that other processes inflate them least.

Learners: a small MLP on scikit-learn's digits (flattened, standardized), a tabular_learner on 2000 rows of mixed
features, and vision_learner(resnet18, pretrained=False) on 160 synthetic 64 px images with fastai's aug_transforms.

Run by hand from the repository root: `python benchmarks/bench_datachecks_cost.py [repeats]`."""
import sys, time, warnings
from functools import partial
import numpy as np, pandas as pd
import torch
from torch import nn
from fastai.losses import CrossEntropyLossFlat
from fastai.learner import Learner
from fastai.tabular.all import TabularDataLoaders, tabular_learner, Categorify, FillMissing, Normalize
from fastai.vision.all import vision_learner, aug_transforms, ImageBlock, CategoryBlock, DataBlock, PILImage, RandomSplitter
from torchvision.models import resnet18
from fastai_paranoid.datachecks import check_label_leak, check_split_duplicates, check_input_normalization, check_batch_independence
from fastai_paranoid.checkutils import sharing
from fastai_paranoid.fixtures import tensor_dls, load_digits_tensors, split_per_class

torch.set_num_threads(1)
CHECKS = [check_label_leak, check_split_duplicates, check_input_normalization, check_batch_independence]
BUDGETS = dict(check_label_leak=15.0, check_split_duplicates=5.0, check_input_normalization=1.3, check_batch_independence=2.6)
RUN_DEFAULTS = dict(check_label_leak=dict(decide_without_copies=True)) # as learn.sanity_check() calls it: no copies, no training

def call(check, learn): return check(learn, budget=BUDGETS[check.__name__], **RUN_DEFAULTS.get(check.__name__, {}))

def digits_mlp():
    x, y = load_digits_tensors()
    tr, va = split_per_class(y, seed=0)
    x = ((x - x[tr].mean()) / x[tr].std()).flatten(1)
    dls = tensor_dls(x[tr], y[tr], x[va], y[va], bs=64)
    model = nn.Sequential(nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 10))
    return Learner(dls, model, loss_func=CrossEntropyLossFlat())

def tabular():
    rng = np.random.default_rng(0)
    n = 2000
    df = pd.DataFrame(dict(a=rng.normal(50, 10, n), b=rng.normal(0, 1000, n), c=rng.integers(0, 5, n).astype(str),
                           y=np.where(rng.integers(0, 2, n) == 1, 'yes', 'no')))
    dls = TabularDataLoaders.from_df(df, procs=[Categorify, FillMissing, Normalize], cat_names=['c'], cont_names=['a', 'b'],
                                     y_names='y', bs=64, valid_idx=list(range(1600, 2000)), num_workers=0)
    return tabular_learner(dls, layers=[50, 20], n_out=2)

def images():
    rng = np.random.default_rng(0)
    imgs = [PILImage.create(rng.integers(0, 256, (64, 64, 3), dtype=np.uint8)) for _ in range(200)]
    block = DataBlock(blocks=(ImageBlock, CategoryBlock), get_x=lambda i: imgs[i], get_y=lambda i: int(i % 2),
                      splitter=RandomSplitter(valid_pct=0.2, seed=0), batch_tfms=aug_transforms(size=64))
    dls = block.dataloaders(list(range(200)), bs=32, num_workers=0)
    learn = vision_learner(dls, resnet18, pretrained=False, loss_func=CrossEntropyLossFlat())
    learn.freeze()
    return learn

def cpu_seconds(fn):
    start = time.process_time()
    res = fn()
    return time.process_time() - start, res

if __name__ == '__main__':
    repeats = int(sys.argv[1]) if len(sys.argv) > 1 else 2
    warnings.simplefilter('ignore')
    for name, make in [('digits MLP', digits_mlp), ('tabular', tabular), ('resnet18 64px', images)]:
        learn = make()
        row = []
        for check in CHECKS:
            best, res = min((cpu_seconds(lambda: call(check, learn)) for _ in range(repeats)), key=lambda o: o[0])
            row.append(f"{check.__name__.removeprefix('check_')} {best:.2f} s ({res.verdict})")
        def run_all():
            with sharing(learn): return [call(c, learn) for c in CHECKS]
        best, _ = min((cpu_seconds(run_all) for _ in range(repeats)), key=lambda o: o[0])
        print(f"{name:14s} " + '; '.join(row) + f"; all four shared {best:.2f} s", flush=True)
