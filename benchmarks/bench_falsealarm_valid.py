"False alarms of check_tracker_monitor, check_valid_deterministic and check_metric_baseline on healthy Learners built from random seeds and sizes, and the catch rate on their planted twins"
import random, tempfile, time, warnings
from pathlib import Path
import numpy as np, pandas as pd, torch, torch.nn as nn
from PIL import Image
from torch.utils.data import TensorDataset
from fastai.vision.all import (DataBlock, ImageBlock, CategoryBlock, get_image_files, parent_label, RandomSplitter, aug_transforms,
                               Resize, RandomResizedCrop, vision_learner, resnet18, Transform, TensorImage, accuracy, error_rate)
from fastai.tabular.all import TabularDataLoaders, tabular_learner, Categorify, FillMissing, Normalize
from fastai.learner import Learner
from fastai.data.core import DataLoaders
from fastai.metrics import mse, rmse, mae, accuracy_multi, F1ScoreMulti
from fastai.losses import CrossEntropyLossFlat, BCEWithLogitsLossFlat
from fastai.callback.tracker import SaveModelCallback, EarlyStoppingCallback, ReduceLROnPlateau
from fastai_paranoid.validchecks import check_tracker_monitor, check_valid_deterministic, check_metric_baseline
warnings.filterwarnings('ignore')

class Noise(Transform):
    order = 99
    def encodes(self, x:TensorImage): return x + torch.randn_like(x) * 0.1

def healthy_tracker(rs, classif):
    opts = [lambda: SaveModelCallback(monitor='valid_loss'), lambda: ReduceLROnPlateau(monitor='valid_loss'),
            lambda: EarlyStoppingCallback(monitor='valid_loss', patience=2)]
    if classif: opts += [lambda: SaveModelCallback(monitor='accuracy'), lambda: EarlyStoppingCallback(monitor='error_rate')]
    else: opts += [lambda: SaveModelCallback(monitor='mse', comp=np.less), lambda: EarlyStoppingCallback(monitor='_rmse', comp=np.less)]
    return opts[rs.randint(len(opts))]()

def mlp(seed, rs, cbs):
    n, d = rs.randint(40, 400), rs.randint(2, 30); g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, d, generator=g) * rs.uniform(0.1, 100); y = x[:, :1] * 3 + torch.randn(n, 1, generator=g)
    cut = int(n * 0.8)
    dls = DataLoaders.from_dsets(TensorDataset(x[:cut], y[:cut]), TensorDataset(x[cut:], y[cut:]), bs=int(rs.choice([8, 16, 64])))
    return Learner(dls, nn.Sequential(nn.Linear(d, 32), nn.ReLU(), nn.Linear(32, 1)), loss_func=nn.MSELoss(), metrics=[mse, rmse, mae], cbs=cbs)

def vision(seed, rs, cbs, extra_tfms=()):
    d, size = Path(tempfile.mkdtemp()), int(rs.choice([32, 48, 64]))
    for i in range(rs.randint(16, 40)):
        (d/f"c{i%2}").mkdir(exist_ok=True)
        Image.fromarray(rs.randint(0, 255, (size + 8, size + 8, 3), dtype=np.uint8)).save(d/f"c{i%2}"/f"{i}.png")
    item = RandomResizedCrop(size, min_scale=0.5) if rs.rand() < 0.5 else Resize(size)
    dblock = DataBlock((ImageBlock, CategoryBlock), get_items=get_image_files, get_y=parent_label, splitter=RandomSplitter(seed=seed),
                       item_tfms=item, batch_tfms=aug_transforms(size=size) + list(extra_tfms))
    dls = dblock.dataloaders(d, bs=8)
    return vision_learner(dls, resnet18, pretrained=False, metrics=[accuracy, error_rate], cbs=cbs)

def tabular(seed, rs, cbs):
    n = rs.randint(50, 300)
    df = pd.DataFrame({'a': rs.randn(n) * 50, 'b': rs.choice(['x', 'y', 'z'], n), 'c': np.where(rs.rand(n) < 0.1, np.nan, rs.randn(n))})
    df['y'] = (df.a > 0).map({True: 'p', False: 'n'})
    dls = TabularDataLoaders.from_df(df, procs=[Categorify, FillMissing, Normalize], cat_names=['b'], cont_names=['a', 'c'], y_names='y', bs=16)
    return tabular_learner(dls, layers=[16], metrics=[accuracy], cbs=cbs)

def tensors(seed, rs, cbs, multi=False, p=0.5):
    "Balanced (p=0.5) binary classes or multi-label tags on random features, 50 to 400 validation items: the cases check_metric_baseline judges"
    n_valid, d, n_tags = rs.randint(50, 400), rs.randint(2, 20), rs.randint(3, 20)
    g = torch.Generator().manual_seed(seed)
    y = lambda n: (torch.rand(n, n_tags, generator=g) < p).float() if multi else (torch.rand(n, generator=g) < p).long()
    dls = DataLoaders.from_dsets(TensorDataset(torch.randn(2 * n_valid, d, generator=g), y(2 * n_valid)), TensorDataset(torch.randn(n_valid, d, generator=g), y(n_valid)), bs=32)
    if multi: return Learner(dls, nn.Linear(d, n_tags), loss_func=BCEWithLogitsLossFlat(), metrics=[accuracy_multi], cbs=cbs)
    return Learner(dls, nn.Linear(d, 2), loss_func=CrossEntropyLossFlat(), metrics=[accuracy, error_rate], cbs=cbs)

def run(n=30):
    kinds = [('mlp', mlp, False), ('vision', vision, True), ('tabular', tabular, True), ('binary', tensors, True),
             ('multilabel', lambda s, rs, cbs: tensors(s, rs, cbs, multi=True), True)]
    alarms = {'check_tracker_monitor': 0, 'check_valid_deterministic': 0, 'check_metric_baseline': 0}; times = {k: [] for k in alarms}; verdicts = {k: {} for k in alarms}
    for seed in range(n):
        rs = np.random.RandomState(1000 + seed); name, build, classif = kinds[seed % len(kinds)]
        random.seed(seed); torch.manual_seed(seed)
        learn = build(seed, rs, [healthy_tracker(rs, classif)])
        for check in (check_tracker_monitor, check_valid_deterministic, check_metric_baseline):
            t = time.perf_counter(); r = check(learn); times[check.__name__].append(time.perf_counter() - t)
            verdicts[check.__name__][r.verdict] = verdicts[check.__name__].get(r.verdict, 0) + 1
            if r.is_finding: alarms[check.__name__] += 1; print('FALSE ALARM', name, seed, r.message)
    for k in alarms: print(f"{k}: false alarms {alarms[k]}/{n}, verdicts {verdicts[k]}, median {np.median(times[k])*1000:.1f} ms, max {max(times[k])*1000:.1f} ms")
    planted = [('SaveModelCallback(monitor=mse), default comp', lambda s, rs: mlp(s, rs, [SaveModelCallback(monitor='mse')]), check_tracker_monitor),
               ('EarlyStoppingCallback(monitor=_rmse)', lambda s, rs: mlp(s, rs, [EarlyStoppingCallback(monitor='_rmse')]), check_tracker_monitor),
               ('ReduceLROnPlateau(monitor=mae)', lambda s, rs: mlp(s, rs, [ReduceLROnPlateau(monitor='mae')]), check_tracker_monitor),
               ('SaveModelCallback(monitor=accuracy, comp=np.less)', lambda s, rs: vision(s, rs, [SaveModelCallback(monitor='accuracy', comp=np.less)]), check_tracker_monitor),
               ('Noise batch_tfm (split_idx None), vision', lambda s, rs: vision(s, rs, None, [Noise()]), check_valid_deterministic),
               ('accuracy on 95/5 binary classes', lambda s, rs: tensors(s, rs, None, p=0.05), check_metric_baseline),
               ('accuracy_multi on tags 7% present', lambda s, rs: tensors(s, rs, None, multi=True, p=0.07), check_metric_baseline)]
    for label, build, check in planted:
        got = [check(build(s, np.random.RandomState(2000 + s))).verdict for s in range(5)]
        print(f"planted {label}: caught {sum(v in ('failed', 'warning') for v in got)}/5")

if __name__ == '__main__':
    import sys
    run(int(sys.argv[1]) if len(sys.argv) > 1 else 30)
