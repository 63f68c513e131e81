"""False-alarm rates of `learn.sanity_check()` on N (default 500) random healthy Learners that nobody tailored to the checks.

Each draw picks a family, a seed, a size (40..600 items), a number of classes (2..20) and an unstratified fastai
`RandomSplitter(valid_pct=0.2, seed)`:
- `mlp_digits`: an MLP on scikit-learn's digits (a random subset of items and classes, raw or standardized pixels);
- `cnn_images`: a small CNN on random images with real structure (a class-coloured blob at a random place, noise);
- `resnet18`: `vision_learner(resnet18, pretrained=False)` on the same kind of images, 32 px, through a DataBlock;
- `tabular`: `tabular_learner` on a random frame (categorical and continuous columns) with a learnable target;
- `regression`: an unscaled regression (targets in the hundreds, inputs unstandardized) with MSELossFlat;
- `collab`: `collab_learner` on ratings from user and item biases and factors.
Then it runs `learn.sanity_check(on_finding=None, progress=False, budget=B)` and counts, per check, the Learners where the
check said failed or warning (levels error or warning: what makes `fastai-paranoid check` exit 1), with a 95% Wilson
interval, and the same for all checks together (the family). A crashed check (verdict 'error') is counted apart.
The batch size is capped at a power of 2 below 3/4 of the items, so that the training loader yields a batch (with fewer
training items than `bs`, fastai's drop_last leaves `fit` nothing to train on: a real bug, which check_train_batches
reports). A draw whose random split leaves a class out of the training set makes fastai's Categorize raise on the
validation set, in `fit` too: the checks say 'skipped' there.

Run by hand from the repository root: `python benchmarks/bench_healthy500.py [--n 500] [--seed 0] [--workers 2]
[--budget 300] [--checks check_a check_b] [--json out.json] [--jsonl draws.jsonl] [--start 0]`, or `--summarize draws.jsonl ...` to print the tables of
what earlier runs appended (each draw prints a line as it finishes; a stopped run resumes with `--start`). The checks' work follows from the model and data; `--budget` is only their wall-clock
safety net (the product's default, 300 s), and a check it stops is counted 'incomplete', apart from the verdicts."""
import argparse, json, math, os, random, sys, time, warnings
from collections import Counter, defaultdict
from pathlib import Path
import numpy as np

FAMILIES = ['mlp_digits', 'cnn_images', 'resnet18', 'tabular', 'regression', 'collab']

def wilson(k:int, n:int, z:float=1.96) -> tuple:
    "The 95% Wilson score interval of a rate k/n"
    if n == 0: return (0.0, 1.0)
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return (max(0.0, centre - half), min(1.0, centre + half))

def draw(i:int, seed:int) -> dict:
    "The i-th random draw: family and sizes"
    rng = random.Random(seed * 100_003 + i)
    return {'i': i, 'family': rng.choice(FAMILIES), 'seed': rng.randrange(10**6), 'n': rng.randint(40, 600),
            'n_classes': rng.randint(2, 20), 'bs': rng.choice([16, 32, 64])}

def _blob_images(n, n_classes, size, rng):
    "Images with a class-coloured blob at a random place over noise, as uint8 arrays (n, size, size, 3), and labels"
    y = rng.integers(0, n_classes, n)
    colours = rng.uniform(40, 215, (n_classes, 3))
    x = rng.normal(128, 30, (n, size, size, 3))
    for k in range(n):
        r = rng.integers(size // 6, size // 3)
        cy, cx = rng.integers(r, size - r, 2)
        x[k, cy - r:cy + r, cx - r:cx + r] = colours[y[k]] + rng.normal(0, 10, 3)
    return x.clip(0, 255).astype(np.uint8), y

def make_learner(d:dict):
    "A healthy Learner for draw `d` (no fit)"
    import torch
    from torch import nn
    from fastai.torch_core import set_seed
    from fastai.data.transforms import RandomSplitter
    from fastai.losses import CrossEntropyLossFlat, MSELossFlat
    from fastai.metrics import accuracy
    from fastai.learner import Learner
    set_seed(d['seed'])
    rng = np.random.default_rng(d['seed'])
    n, c, bs, fam = d['n'], d['n_classes'], d['bs'], d['family']
    # a healthy script's batch size fits its training set: fastai's factories drop the last partial training batch, so
    # 63 training items at bs=64 train on nothing (check_train_batches says so, rightly); not a healthy draw
    bs = min(bs, max(8, 2 ** int(math.log2(max(1, int(0.75 * n))))))
    splitter = RandomSplitter(valid_pct=0.2, seed=d['seed'])
    if fam in ('mlp_digits', 'cnn_images', 'regression'):
        from torch.utils.data import TensorDataset
        from fastai.data.core import DataLoaders
        from fastai.data.load import DataLoader
        if fam == 'mlp_digits':
            from sklearn.datasets import load_digits
            digits = load_digits()
            keep = np.isin(digits.target, rng.choice(10, min(c, 10), replace=False))
            idx = rng.choice(np.where(keep)[0], min(n, keep.sum()), replace=False)
            x = torch.tensor(digits.data[idx], dtype=torch.float32)
            y = torch.tensor(digits.target[idx])
            y = torch.unique(y, return_inverse=True)[1]
            if rng.random() < 0.5: x = (x - x.mean()) / x.std()
            model = nn.Sequential(nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, int(y.max()) + 1))
            loss = CrossEntropyLossFlat()
        elif fam == 'cnn_images':
            imgs, labels = _blob_images(n, c, 16, rng)
            x = torch.tensor(imgs, dtype=torch.float32).permute(0, 3, 1, 2)
            x = (x - x.mean()) / x.std()
            y = torch.tensor(labels)
            model = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2), nn.Conv2d(16, 32, 3, padding=1),
                                  nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(32, c))
            loss = CrossEntropyLossFlat()
        else:
            n_features = int(rng.integers(3, 20))
            x = torch.tensor(rng.normal(rng.uniform(-50, 50, n_features), rng.uniform(1, 30, n_features), (n, n_features)),
                             dtype=torch.float32)
            w = torch.tensor(rng.normal(0, 3, n_features), dtype=torch.float32)
            y = (x @ w + 200 + torch.randn(n) * 10).unsqueeze(1)
            model = nn.Sequential(nn.Linear(n_features, 32), nn.ReLU(), nn.Linear(32, 1))
            loss = MSELossFlat()
        train, valid = splitter(range(len(x)))
        train, valid = torch.tensor(train), torch.tensor(valid)
        dls = DataLoaders(DataLoader(TensorDataset(x[train], y[train]), bs=bs, shuffle=True, drop_last=len(train) > bs),
                          DataLoader(TensorDataset(x[valid], y[valid]), bs=bs))
        return Learner(dls, model, loss_func=loss, metrics=None if fam == 'regression' else accuracy)
    if fam == 'resnet18':
        from fastai.vision.all import DataBlock, ImageBlock, CategoryBlock, PILImage, vision_learner, Normalize, imagenet_stats
        from torchvision.models import resnet18
        imgs, labels = _blob_images(n, c, 32, rng)
        items = list(range(n))
        block = DataBlock(blocks=(ImageBlock, CategoryBlock), get_x=lambda i: PILImage.create(imgs[i]),
                          get_y=lambda i: int(labels[i]), splitter=splitter,
                          batch_tfms=Normalize.from_stats(*imagenet_stats))
        dls = block.dataloaders(items, bs=bs, num_workers=0)
        return vision_learner(dls, resnet18, pretrained=False, metrics=accuracy)
    if fam == 'tabular':
        import pandas as pd
        from fastai.tabular.all import TabularDataLoaders, tabular_learner, Categorify, FillMissing, Normalize
        n_cat, n_cont = int(rng.integers(1, 4)), int(rng.integers(1, 6))
        df = pd.DataFrame({f'cat{j}': rng.choice([f'v{k}' for k in range(int(rng.integers(2, 8)))], n) for j in range(n_cat)})
        for j in range(n_cont): df[f'cont{j}'] = rng.normal(rng.uniform(-100, 100), rng.uniform(0.1, 50), n)
        score = sum((df[f'cont{j}'] - df[f'cont{j}'].mean()) / df[f'cont{j}'].std() * rng.normal() for j in range(n_cont))
        score = score + sum(df[f'cat{j}'].map({v: rng.normal() for v in df[f'cat{j}'].unique()}) for j in range(n_cat))
        bins = np.quantile(score, np.linspace(0, 1, min(c, 6) + 1)[1:-1])
        df['target'] = np.digitize(score + rng.normal(0, 0.3, n), bins).astype(str)
        dls = TabularDataLoaders.from_df(df, y_names='target', cat_names=[f'cat{j}' for j in range(n_cat)],
                                         cont_names=[f'cont{j}' for j in range(n_cont)],
                                         procs=[Categorify, FillMissing, Normalize], splits=splitter(range(n)), bs=bs)
        return tabular_learner(dls, metrics=accuracy)
    if fam == 'collab':
        import pandas as pd
        from fastai.collab import CollabDataLoaders, collab_learner
        n_users, n_items = int(rng.integers(10, 60)), int(rng.integers(10, 60))
        u, it = rng.integers(0, n_users, n), rng.integers(0, n_items, n)
        bu, bi = rng.normal(0, 0.7, n_users), rng.normal(0, 0.7, n_items)
        fu, fi = rng.normal(0, 1, (n_users, 3)), rng.normal(0, 1, (n_items, 3))
        r = (3 + bu[u] + bi[it] + 0.4 * (fu[u] * fi[it]).sum(1) + rng.normal(0, 0.3, n)).clip(1, 5)
        df = pd.DataFrame({'user': u, 'item': it, 'rating': r.astype('float32')}).drop_duplicates(['user', 'item'])
        dls = CollabDataLoaders.from_df(df, valid_pct=0.2, seed=d['seed'], bs=bs)
        return collab_learner(dls, n_factors=int(rng.integers(4, 40)), y_range=(0.5, 5.5))
    raise ValueError(fam)

def run_one(d:dict, budget:float, checks:list|None=None) -> dict:
    "Draw `d`'s Learner and its sanity report, as plain data"
    import torch
    torch.set_num_threads(1)
    import fastai_paranoid.all # registers the checks and patches Learner.sanity_check
    start = time.perf_counter()
    try:
        learn = make_learner(d)
        with warnings.catch_warnings():
            warnings.simplefilter('ignore')
            report = learn.sanity_check(checks=checks, on_finding=None, progress=False, budget=budget)
    except Exception as e:
        return {**d, 'error': f'{type(e).__name__}: {e}', 'seconds': time.perf_counter() - start, 'results': []}
    results = [{'name': r.name, 'verdict': r.verdict, 'level': r.level, 'message': r.message[:400]} for r in report.results]
    return {**d, 'error': '', 'seconds': time.perf_counter() - start, 'results': results}

def is_alarm(r:dict) -> bool: return r['level'] in ('error', 'warning') and r['verdict'] in ('failed', 'warning')

def summarize(runs:list):
    ok = [r for r in runs if not r['error']]
    print(f"\n{len(runs)} draws, {len(ok)} ran ({len(runs) - len(ok)} could not be built or checked); "
          f"{sum(r['seconds'] for r in runs) / max(1, len(runs)):.1f} s per draw")
    for r in runs:
        if r['error']: print(f"  draw {r['i']} ({r['family']}): {r['error'][:200]}")
    names = sorted({res['name'] for r in ok for res in r['results']})
    incomplete = Counter(x['name'] for r in ok for x in r['results'] if x['verdict'] == 'incomplete')
    print(f"checks stopped by the safety net ('incomplete'): {sum(incomplete.values())}"
          + (': ' + ', '.join(f'{k} {v}' for k, v in incomplete.most_common()) if incomplete else ''))
    print(f"\n{'check':<30} {'false alarms':>12} {'rate':>7}  95% Wilson      crashed  by family")
    for name in names + ['ALL CHECKS']:
        alarmed = [r for r in ok if any(is_alarm(x) and (name == 'ALL CHECKS' or x['name'] == name) for x in r['results'])]
        crashed = sum(any(x['verdict'] == 'error' and (name == 'ALL CHECKS' or x['name'] == name) for x in r['results']) for r in ok)
        lo, hi = wilson(len(alarmed), len(ok))
        fam = Counter(r['family'] for r in alarmed)
        print(f"{name:<30} {len(alarmed):>5}/{len(ok):<6} {len(alarmed) / max(1, len(ok)):>7.3f}  [{lo:.3f}, {hi:.3f}]  {crashed:>7}  "
              + ', '.join(f'{k} {v}' for k, v in fam.most_common()))
    print("\nExample messages (first two per check):")
    for name in names:
        shown = 0
        for r in ok:
            for x in r['results']:
                if x['name'] == name and (is_alarm(x) or x['verdict'] == 'error') and shown < 2:
                    print(f"  {name} [{x['verdict']}] draw {r['i']} {r['family']} n={r['n']} classes={r['n_classes']}: {x['message'][:260]}")
                    shown += 1

def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--n', type=int, default=500)
    parser.add_argument('--seed', type=int, default=0)
    parser.add_argument('--workers', type=int, default=2)
    parser.add_argument('--budget', type=float, default=300.0, help="each sanity check's wall-clock safety net, in seconds ('incomplete' when it runs out)")
    parser.add_argument('--checks', nargs='*', default=None, help='only these checks (by name): a new check measured on the same draws in minutes')
    parser.add_argument('--families', nargs='*', default=None, help=f'only these of {FAMILIES}')
    parser.add_argument('--json', help='write every draw and its results here')
    parser.add_argument('--jsonl', help='append each draw and its results here as it finishes (one JSON line each): a run stopped early keeps what it did')
    parser.add_argument('--start', type=int, default=0, help='first draw (draws are fixed by index and seed: a stopped run resumes where it stopped)')
    parser.add_argument('--summarize', nargs='*', help='print the tables of earlier --jsonl files (each draw once) instead of running')
    args = parser.parse_args(argv)
    if args.summarize is not None:
        runs = {}
        for f in args.summarize:
            for line in Path(f).read_text().splitlines():
                if line.strip(): r = json.loads(line); runs[r['i']] = r
        print(f"{len(runs)} draws read from {', '.join(args.summarize)}")
        return summarize([runs[i] for i in sorted(runs)])
    draws = [draw(i, args.seed) for i in range(args.start, args.n)]
    if args.families: draws = [d for d in draws if d['family'] in args.families]
    start = time.perf_counter()
    def ran(runs):
        for r in runs:
            alarms = [f"{x['name']} ({x['level']})" for x in r['results'] if is_alarm(x)]
            print(f"{r['i']:4d} {r['family']:11s} n={r['n']:4d} {r['seconds']:6.1f}s  " + (r['error'][:120] or '; '.join(alarms) or 'silent'), flush=True)
            if args.jsonl:
                with open(args.jsonl, 'a') as f: f.write(json.dumps(r) + '\n')
            yield r
    if args.workers > 1:
        import multiprocessing as mp
        from functools import partial
        with mp.get_context('spawn').Pool(args.workers) as pool:
            runs = list(ran(pool.imap(partial(run_one, budget=args.budget, checks=args.checks), draws, chunksize=1)))
    else: runs = list(ran(run_one(d, args.budget, args.checks) for d in draws))
    print(f"{len(draws)} Learners checked in {time.perf_counter() - start:.0f} s with {args.workers} worker(s), budget {args.budget:g} s each")
    summarize(runs)
    if args.json: Path(args.json).write_text(json.dumps(runs, indent=1))

if __name__ == '__main__':
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    main()
