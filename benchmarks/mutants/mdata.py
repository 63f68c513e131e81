"""The data and the scoring that every pipeline of `pipelines.py` shares: small synthetic data sets (and scikit-learn's digits)
as DataFrames, each with a held-out test set that no pipeline, and so no mutant, ever touches, and `finish(learn, ...)`, which
scores the fitted Learner on that test set.

A pipeline script does `from mdata import *` (the benchmark copies this file beside the scripts it writes, as tests/external
keeps `synth.py` beside its scripts). The data are drawn with a fixed seed (0): the same items on every run. What a run's
seed (`MUTANT_SEED`, read by `run_seed()`) changes is the model's initialisation, the shuffling and the augmentation, as
seed 001's `run_experiment(seed)` does.

The score is "higher is better" on a scale near [0, 1] for every task, so that one harm test fits all: accuracy for single-
and multi-label classification (multi-label: the per-label accuracy at 0.5, fastai's `accuracy_multi`), pixel accuracy for
segmentation, next-token accuracy for a language model, and R^2 = 1 - MSE / Var(y) on the test set for regression, points
and ratings. A run that gives non-finite predictions scores -1 (worse than any trivial predictor)."""
import os, warnings
from functools import lru_cache
import numpy as np
import pandas as pd
import torch
from torch import nn
from fastai.vision.all import *
from fastai.tabular.all import *
from fastai.collab import *
from fastai.text.all import *

RESULT = {} # what the last `finish` measured: {'score': float, 'metric': str}

def run_seed() -> int:
    "The run's seed (`MUTANT_SEED`, default 0), after seeding python, numpy and torch with it"
    seed = int(os.environ.get('MUTANT_SEED', '0'))
    set_seed(seed, reproducible=True)
    return seed

def _split(df:pd.DataFrame, n_test:int):
    "(the pipeline's data, the held-out test set): a fixed random split"
    idx = np.random.default_rng(0).permutation(len(df))
    return df.iloc[idx[n_test:]].reset_index(drop=True), df.iloc[idx[:n_test]].reset_index(drop=True)

# ---------------------------------------------------------------------------------------------------------- images
def get_bw(r): return PILImageBW.create(r['img'])
def get_rgb(r): return PILImage.create(r['img'])
def get_mask(r): return PILMask.create(r['mask'])
def get_point(r): return tensor([[float(r['px']), float(r['py'])]])
def get_ylist(r): return r['labels'].split(' ')

@lru_cache(None)
def digits_frames(n=600, n_test=300):
    "scikit-learn's 8x8 digits as 8-bit grey images (column `img`) with their digit (`label`, an int)"
    from sklearn.datasets import load_digits
    d = load_digits()
    imgs = (d.images * 15).clip(0, 255).astype(np.uint8)
    df = pd.DataFrame({'img': list(imgs), 'label': d.target})
    df = df.iloc[np.random.default_rng(0).permutation(len(df))[:n + n_test]].reset_index(drop=True)
    return _split(df, n_test)

def _stripe(label:int, n_classes:int, size:int, rng):
    "An RGB image whose colour and stripe position depend on `label` (tests/external/synth.py's `_image`)"
    base = np.zeros((size, size, 3), np.float32)
    hue = np.array([np.cos(2 * np.pi * label / n_classes), np.sin(2 * np.pi * label / n_classes), 0.0])
    base += 128 + 40 * hue
    stripe = int(size * (label + 0.5) / n_classes)
    base[max(0, stripe - 1):stripe + 2, :, :] = 220
    base += rng.normal(0, 110, base.shape)
    return base.clip(0, 255).astype(np.uint8)

@lru_cache(None)
def stripes_frames(n=360, n_test=240, size=16, n_classes=4):
    "RGB images of `n_classes` classes (colour and a stripe), label names 'c0'..; noisy enough that a fit is not perfect"
    rng = np.random.default_rng(0)
    labels = rng.integers(0, n_classes, n + n_test)
    df = pd.DataFrame({'img': [_stripe(l, n_classes, size, rng) for l in labels], 'label': [f'c{l}' for l in labels]})
    return _split(df, n_test)

@lru_cache(None)
def regress_image_frames(n=360, n_test=240, size=16):
    "Grey images of a bar whose height is the target (`y`, in [0, 1]): image regression"
    rng = np.random.default_rng(0)
    ys = rng.uniform(0, 1, n + n_test)
    imgs = []
    for y in ys:
        img = rng.normal(60, 30, (size, size))
        img[size - 1 - int(y * (size - 2)):, size // 2 - 2:size // 2 + 2] += 120
        imgs.append(img.clip(0, 255).astype(np.uint8))
    return _split(pd.DataFrame({'img': imgs, 'y': ys.astype(np.float32)}), n_test)

@lru_cache(None)
def multilabel_frames(n=400, n_test=240, size=16, names=('bar', 'col', 'dot', 'box')):
    "Grey images holding one to three of four shapes; `labels` space-separated (PASCAL's csv form)"
    rng = np.random.default_rng(0)
    imgs, labels = [], []
    for _ in range(n + n_test):
        img = rng.normal(50, 30, (size, size))
        on = [k for k in range(4) if rng.random() < 0.45] or [int(rng.integers(0, 4))]
        for k in on:
            if k == 0: img[3:5, 2:14] += 150
            if k == 1: img[2:14, 11:13] += 150
            if k == 2: img[10:13, 3:6] += 150
            if k == 3: img[7:10, 6:9] += 150
        imgs.append(img.clip(0, 255).astype(np.uint8))
        labels.append(' '.join(names[k] for k in on))
    return _split(pd.DataFrame({'img': imgs, 'labels': labels}), n_test)

@lru_cache(None)
def points_frames(n=360, n_test=240, size=16):
    "Grey images with one bright blob; its centre (`px`, `py`, pixels) is the target: BIWI head pose in miniature"
    rng = np.random.default_rng(0)
    imgs, xs, ys = [], [], []
    for _ in range(n + n_test):
        x, y = rng.integers(2, size - 2, 2)
        img = rng.normal(40, 20, (size, size))
        img[y - 1:y + 2, x - 1:x + 2] += 180
        imgs.append(img.clip(0, 255).astype(np.uint8))
        xs.append(float(x)); ys.append(float(y))
    return _split(pd.DataFrame({'img': imgs, 'px': xs, 'py': ys}), n_test)

SEG_CODES = ['background', 'object']

@lru_cache(None)
def seg_frames(n=240, n_test=120, size=16):
    "Grey images with a brighter rectangle and its mask (0 background, 1 object): CamVid in miniature"
    rng = np.random.default_rng(0)
    imgs, masks = [], []
    for _ in range(n + n_test):
        r0, c0 = rng.integers(0, size - 6, 2)
        h, w = rng.integers(3, 7, 2)
        mask = np.zeros((size, size), np.uint8)
        mask[r0:r0 + h, c0:c0 + w] = 1
        img = rng.normal(80, 35, (size, size)) + 70 * mask
        imgs.append(img.clip(0, 255).astype(np.uint8))
        masks.append(mask)
    return _split(pd.DataFrame({'img': imgs, 'mask': masks}), n_test)

# ---------------------------------------------------------------------------------------------------------- tables
@lru_cache(None)
def tabular_frames(n=700, n_test=400):
    """Adult in miniature: categories `job`, `city`, continuous `age`, `hours`, `score` (with missing values), a class `label`
    ('<50k'/'>=50k') and a regression target `y`, both functions of the columns plus noise"""
    rng = np.random.default_rng(0)
    m = n + n_test
    job = rng.choice(['a', 'b', 'c', 'd'], m)
    city = rng.choice(['x', 'y', 'z'], m)
    age = rng.normal(40, 12, m)
    hours = rng.normal(40, 10, m)
    score = rng.normal(0, 1, m)
    signal = 0.08 * (age - 40) + 0.9 * score + np.select([job == 'a', job == 'b', job == 'c'], [1.0, -1.0, 0.5], -0.5) + 0.04 * (hours - 40)
    score_seen = score.copy()
    score_seen[rng.random(m) < 0.1] = np.nan
    df = pd.DataFrame({'job': job, 'city': city, 'age': age.astype(np.float32), 'hours': hours.astype(np.float32),
                       'score': score_seen.astype(np.float32),
                       'label': np.where(signal + rng.normal(0, 0.6, m) > 0, '>=50k', '<50k'),
                       'y': (signal + rng.normal(0, 0.4, m)).astype(np.float32) * 10 + 50})
    return _split(df, n_test)

@lru_cache(None)
def collab_frames(n_users=60, n_items=50, n=2000, n_test=600, k=3):
    "MovieLens in miniature: `user`, `item`, `rating` in [0.5, 5] = user bias + item bias + a dot product + noise"
    rng = np.random.default_rng(0)
    u, v = rng.normal(0, 0.8, (n_users, k)), rng.normal(0, 0.8, (n_items, k))
    ub, vb = rng.normal(0, 0.6, n_users), rng.normal(0, 0.6, n_items)
    users, items = rng.integers(0, n_users, n + n_test), rng.integers(0, n_items, n + n_test)
    r = 3 + ub[users] + vb[items] + (u[users] * v[items]).sum(1) + rng.normal(0, 0.3, n + n_test)
    df = pd.DataFrame({'user': users, 'item': items, 'rating': r.clip(0.5, 5).astype(np.float32)})
    return _split(df, n_test)

# ---------------------------------------------------------------------------------------------------------- text
_POS = ['good', 'great', 'fine', 'superb', 'lovely', 'fun']
_NEG = ['bad', 'awful', 'poor', 'dull', 'boring', 'weak']
_FILL = ['the', 'film', 'was', 'a', 'plot', 'and', 'actor', 'story', 'it', 'very', 'quite', 'this', 'movie', 'scene']

@lru_cache(None)
def text_frames(n=240, n_test=160):
    "IMDB in miniature: short reviews whose sentiment words mostly agree with `label` ('pos'/'neg')"
    rng = np.random.default_rng(0)
    texts, labels = [], []
    for _ in range(n + n_test):
        pos = rng.random() < 0.5
        words = list(rng.choice(_FILL, 8))
        for _ in range(2):
            own = rng.random() < 0.8
            words.insert(int(rng.integers(0, len(words))), str(rng.choice(_POS if pos == own else _NEG)))
        texts.append(' '.join(words))
        labels.append('pos' if pos else 'neg')
    return _split(pd.DataFrame({'text': texts, 'label': labels}), n_test)

_ONES = 'zero one two three four five six seven eight nine'.split()

@lru_cache(None)
def lm_frames(n=300, n_test=100):
    """HUMAN_NUMBERS in miniature: each text counts four numbers on from a random start below 100,000, each number written
    digit by digit in words and ended by a full stop (`text`); no two texts alike"""
    rng = np.random.default_rng(0)
    starts = rng.choice(100_000, n + n_test, replace=False)
    rows = [' '.join(' '.join(_ONES[int(d)] for d in str(s + i)) + ' .' for i in range(4)) for s in starts]
    return _split(pd.DataFrame({'text': rows}), n_test)

# ---------------------------------------------------------------------------------------------------------- plain tensors
@lru_cache(None)
def xor_tensors(n=600, n_test=600, regression=False):
    "Seed 001's XOR-quadrant data: (x_train, y_train, x_test, y_test); the class is the sign of x0*x1 (or, `regression`, x0*x1 itself)"
    rng = np.random.default_rng(0)
    x = rng.normal(0, 0.5, (n + n_test, 2)).astype(np.float32)
    y = x[:, 0] * x[:, 1] * 4 if regression else (x[:, 0] * x[:, 1] > 0).astype(np.int64)
    x += rng.normal(0, 0.1, x.shape).astype(np.float32)
    x, y = torch.from_numpy(x), torch.from_numpy(np.asarray(y, np.float32) if regression else y)
    return x[:n], y[:n], x[n:], y[n:]

# ---------------------------------------------------------------------------------------------------------- scoring
def _r2(pred, targ) -> float:
    pred, targ = np.asarray(pred, np.float64).reshape(len(targ), -1), np.asarray(targ, np.float64).reshape(len(targ), -1)
    return float(1 - ((pred - targ) ** 2).mean() / targ.var(0).mean())

def _score(learn, test, kind:str, label:str|None):
    if kind == 'torch_class' or kind == 'torch_reg':
        x, y = test
        model = learn.model.eval()
        with torch.no_grad(): out = model(x)
        if kind == 'torch_class': return float((out.argmax(1) == y).float().mean()), 'accuracy'
        return _r2(out.flatten(), y), 'r2'
    if kind == 'lm':
        dl = learn.dls.test_dl(test['text'])
        preds, targs = learn.get_preds(dl=dl, reorder=False)
        return float((preds.argmax(-1) == targs).float().mean()), 'next-token accuracy'
    if kind in ('single', 'multi', 'collab', 'regression'):
        preds, _ = learn.get_preds(dl=learn.dls.test_dl(test))
        if kind == 'single':
            vocab = list(learn.dls.vocab[-1] if isinstance(learn.dls.vocab, L) and len(learn.dls.vocab) and isinstance(learn.dls.vocab[0], (list, L)) else learn.dls.vocab)
            names = np.array([str(vocab[i]) if i < len(vocab) else '' for i in preds.argmax(1).tolist()])
            return float((names == test[label].astype(str).values).mean()), 'accuracy'
        if kind == 'multi':
            vocab = [str(v) for v in learn.dls.vocab]
            truth = np.array([[name in s.split(' ') for name in vocab] for s in test[label]])
            return float(((preds.numpy() > 0.5) == truth).mean()), 'accuracy_multi'
        return _r2(preds.flatten(), test[label].values), 'r2'
    # points and segmentation: the targets as the (unmutated) test frame gives them through the Learner's own blocks
    preds, targs = learn.get_preds(dl=learn.dls.test_dl(test, with_labels=True))
    if kind == 'seg': return float((preds.argmax(1) == targs).float().mean()), 'pixel accuracy'
    return _r2(preds.flatten(), targs.flatten()), 'r2'

def finish(learn, test, kind:str, label:str|None=None):
    "Score the fitted `learn` on the held-out `test` (a DataFrame, or (x, y) tensors for a plain PyTorch pipeline); kept in `RESULT`"
    RESULT.clear()
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        try: score, metric = _score(learn, test, kind, label)
        except (RuntimeError, ValueError, IndexError) as e: score, metric = float('nan'), f'error: {type(e).__name__}: {e}'[:200]
    if not np.isfinite(score): score = -1.0
    RESULT.update(score=max(score, -1.0), metric=metric)
    print(f"mutant-score {RESULT['score']:.4f} ({metric})")
    return RESULT['score']
