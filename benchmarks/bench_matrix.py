"""Does any sanity check crash on a standard Learner, in any state? (issue 39, part 4)

Crosses fastai's applications with the states a user's Learner is in when they run `learn.sanity_check()`, runs every
check on each (`learn.sanity_check(on_finding=None, progress=False)`), and prints a table, application x state, of how
many checks crashed (verdict 'error'), then the crashed checks with their exception. A check that cannot apply must say
so as 'skipped', with why; a crash is a defect of the check, never a finding about the Learner.

Applications (random-init models, synthetic data, nothing downloaded): vision (`vision_learner(resnet18,
pretrained=False)`), U-Net (`unet_learner(resnet18, pretrained=False)`), multi-label (`vision_learner`, `MultiCategoryBlock`),
points (`PointBlock`), tabular classification and regression (`tabular_learner`), collab (`collab_learner`), text classifier
(`text_classifier_learner(AWD_LSTM, pretrained=False)` with a tiny config), language model (`language_model_learner`),
and a plain PyTorch model with torch DataLoaders in a `Learner`.

States: fresh; after `lr_find`; after `fine_tune(1)` (a transfer Learner) or `fit_one_cycle(1)`; after `save`, then `load`
into a new Learner; after `export`, then `load_learner` (its DataLoaders hold no items: every check that reads data must
skip); the same given DataLoaders again (`learn.dls = dls`); trained, then `unfreeze()`d; trained with fastai's trackers
(`SaveModelCallback`, `EarlyStoppingCallback`) in `learn.cbs`; built with duplicates across the split (validation items
copied from training).

A state fastai itself cannot reach is shown as 'n/a' (fastai's `export` cannot pickle torch DataLoaders).

Run by hand from the repository root: `python benchmarks/bench_matrix.py [--only APP ...] [--states STATE ...]`.
Exits 1 when a check crashed. `tests/test_matrix.py` runs a cheap slice of it."""
import argparse, contextlib, io, random, sys, tempfile, time, traceback, warnings
from pathlib import Path
import numpy as np, pandas as pd, torch
from torch import nn
from fastai.basics import *
from fastai.vision.all import *
from fastai.tabular.all import *
from fastai.collab import CollabDataLoaders, collab_learner
from fastai.text.all import *
import fastai_paranoid.sanity # learn.sanity_check()

torch.set_num_threads(1)

# ---------------------------------------------------------------- data (picklable getters: `export` pickles the transforms)
def _blobs(n, size=32, n_classes=3, seed=0, kind='single'):
    "`n` noise images with a bright square in a class corner; labels: a class, a set of classes ('multi'), or the square's centre ('points')"
    rng = np.random.default_rng(seed)
    half = size // 2
    corners = [(0, 0), (0, half), (half, 0), (half, half)]
    items = []
    for i in range(n):
        img = rng.integers(0, 100, (size, size, 3)).astype(np.uint8)
        classes = sorted(rng.choice(n_classes, size=int(rng.integers(1, 3)), replace=False).tolist()) if kind == 'multi' else [i % n_classes]
        for c in classes:
            r, col = corners[c]
            img[r + 2:r + half - 2, col + 2:col + half - 2, c % 3] = 230
        r, col = corners[classes[0]]
        label = {'single': classes[0], 'multi': classes, 'points': [[col + half / 2, r + half / 2]]}[kind]
        items.append((img, label))
    return items

def _masks(n, size=32, seed=0):
    rng = np.random.default_rng(seed)
    items = []
    for _ in range(n):
        img = rng.integers(0, 100, (size, size, 3)).astype(np.uint8)
        mask = np.zeros((size, size), dtype=np.uint8)
        r, c = rng.integers(0, size // 2, 2)
        h, w = rng.integers(size // 4, size // 2, 2)
        img[r:r + h, c:c + w] = 220
        mask[r:r + h, c:c + w] = 1
        items.append((img, mask))
    return items

def _with_copies(items, n_train, dup):
    "With `dup`, every other validation item a copy of a training item"
    items = list(items)
    if dup:
        for k, j in enumerate(range(n_train, len(items), 2)): items[j] = items[(7 * k) % n_train]
    return items

class _Getter:
    "index -> what `make` builds from the `k`-th part of item `i` (picklable, unlike a lambda: `export` pickles the getters)"
    def __init__(self, items, k, make): self.items, self.k, self.make = items, k, make
    def __call__(self, i): return self.make(self.items[i][self.k])

def _as_is(o): return o
def _points(o): return tensor(o).float()

def image_dls(kind='single', dup=False, n_train=32, n_valid=50, size=32, bs=8):
    n = n_train + n_valid
    if kind == 'mask':
        items = _with_copies(_masks(n, size), n_train, dup)
        blocks, get_y = (ImageBlock, MaskBlock(codes=['background', 'box'])), _Getter(items, 1, PILMask.create)
    else:
        items = _with_copies(_blobs(n, size, kind=kind), n_train, dup)
        y_block = {'single': CategoryBlock(vocab=[0, 1, 2]), 'multi': MultiCategoryBlock(vocab=[0, 1, 2]), 'points': PointBlock}[kind]
        blocks, get_y = (ImageBlock, y_block), _Getter(items, 1, _points if kind == 'points' else _as_is)
    pixels = np.stack([it[0] for it in items[:n_train]]).reshape(-1, 3) / 255.
    dblock = DataBlock(blocks=blocks, get_x=_Getter(items, 0, PILImage.create), get_y=get_y, splitter=IndexSplitter(range(n_train, n)),
                       batch_tfms=[Normalize.from_stats(pixels.mean(0).tolist(), pixels.std(0).tolist())])
    return dblock.dataloaders(list(range(n)), bs=bs, num_workers=0)

def tab_dls(regression=False, dup=False, n=300, bs=32):
    rng = np.random.default_rng(0)
    df = pd.DataFrame({'colour': rng.choice(['red', 'green', 'blue'], n), 'size': rng.choice(['s', 'm', 'l', 'xl'], n),
                       'a': rng.normal(10, 3, n), 'b': rng.normal(-5, 2, n)})
    score = (df.a - 10) / 3 + (df.colour == 'red') * 1.5 - (df.b + 5) / 2
    df['y'] = score + rng.normal(0, 0.1, n) if regression else np.where(score > 0.5, 'high', np.where(score < -0.5, 'low', 'mid'))
    n_valid = n // 5
    if dup: df.iloc[-n_valid:] = df.iloc[:n_valid].values
    return TabularDataLoaders.from_df(df, procs=[Categorify, FillMissing, Normalize], cat_names=['colour', 'size'], cont_names=['a', 'b'],
                                      y_names='y', valid_idx=list(range(n - n_valid, n)), bs=bs,
                                      y_block=RegressionBlock() if regression else CategoryBlock(), num_workers=0)

def collab_dls(dup=False, n_users=20, n_items=15, bs=32):
    rng = np.random.default_rng(0)
    u, v = rng.normal(0, 1, (n_users, 2)), rng.normal(0, 1, (n_items, 2))
    pairs = [(i, j) for i in range(n_users) for j in range(n_items) if rng.random() < 0.5]
    df = pd.DataFrame({'user': [f"u{i}" for i, _ in pairs], 'item': [f"i{j}" for _, j in pairs],
                       'rating': [float(np.clip(3 + u[i] @ v[j] + rng.normal(0, 0.2), 0.5, 5)) for i, j in pairs]})
    if dup: df = pd.concat([df, df.iloc[:len(df) // 4]], ignore_index=True) # a random split puts some of each pair on both sides
    return CollabDataLoaders.from_df(df, valid_pct=0.2, seed=0, bs=bs, num_workers=0)

POSITIVE, NEGATIVE = 'good great fine nice happy'.split(), 'bad awful poor sad dark'.split()
FILLER = 'the a this that movie film plot actor scene story was is very'.split()

def text_df(n=200, dup=False):
    rng = np.random.default_rng(0)
    rows = []
    for i in range(n):
        label = ['neg', 'pos'][i % 2]
        words = list(rng.choice(FILLER, 6)) + list(rng.choice(POSITIVE if label == 'pos' else NEGATIVE, 2)) # 8 words: batches of one shape
        rng.shuffle(words)
        rows.append([' '.join(words), label, i >= n * 3 // 4])
    if dup:
        n_train = n * 3 // 4
        for k, j in enumerate(range(n_train, n, 2)): rows[j][:2] = rows[k][:2]
    return pd.DataFrame(rows, columns=['text', 'label', 'is_valid'])

def text_dls(lm=False, dup=False, bs=8, n=200):
    block = TextBlock.from_df('text', tok=BaseTokenizer(), min_freq=1, n_workers=0, seq_len=16, is_lm=lm)
    blocks = (block,) if lm else (block, CategoryBlock)
    dblock = DataBlock(blocks=blocks, get_x=ColReader('text'), get_y=None if lm else ColReader('label'), splitter=ColSplitter('is_valid'))
    return dblock.dataloaders(text_df(n, dup=dup), bs=bs, num_workers=0, seq_len=16)

TINY_AWD = dict(emb_sz=16, n_hid=32, n_layers=1)

def torch_dls(dup=False, bs=32):
    "torch DataLoaders over scikit-learn-like blobs, as a plain PyTorch script has them"
    g = torch.Generator().manual_seed(0)
    x = torch.randn(200, 10, generator=g)
    y = (x[:, 0] + x[:, 1] > 0).long() + (x[:, 2] > 1).long()
    if dup: x[160::2], y[160::2] = x[:20], y[:20]
    train = torch.utils.data.TensorDataset(x[:160], y[:160])
    valid = torch.utils.data.TensorDataset(x[160:], y[160:])
    return DataLoaders(torch.utils.data.DataLoader(train, batch_size=bs, shuffle=True),
                       torch.utils.data.DataLoader(valid, batch_size=bs))

# ---------------------------------------------------------------- applications: name -> (build(dup) -> Learner, transfer?)
def _seeded(fn):
    def build(dup=False):
        random.seed(0) # the DataLoaders' own generators are seeded from it
        torch.manual_seed(0)
        np.random.seed(0)
        return fn(dup)
    return build

APPS = {
    'vision': (_seeded(lambda dup: vision_learner(image_dls(dup=dup), resnet18, pretrained=False, metrics=accuracy)), True),
    'unet': (_seeded(lambda dup: unet_learner(image_dls('mask', dup=dup), resnet18, pretrained=False, n_out=2)), True),
    'multi-label': (_seeded(lambda dup: vision_learner(image_dls('multi', dup=dup), resnet18, pretrained=False, metrics=accuracy_multi)), True),
    'points': (_seeded(lambda dup: vision_learner(image_dls('points', dup=dup), resnet18, pretrained=False, y_range=(-1, 1))), True),
    'tabular clas': (_seeded(lambda dup: tabular_learner(tab_dls(dup=dup), layers=[32, 16], metrics=accuracy)), False),
    'tabular reg': (_seeded(lambda dup: tabular_learner(tab_dls(regression=True, dup=dup), layers=[32, 16])), False),
    'collab': (_seeded(lambda dup: collab_learner(collab_dls(dup=dup), n_factors=8, y_range=(0, 5.5))), False),
    'text clas': (_seeded(lambda dup: text_classifier_learner(text_dls(dup=dup), AWD_LSTM, pretrained=False,
                                                             config=awd_lstm_clas_config | TINY_AWD, seq_len=16, metrics=accuracy)), True),
    'language model': (_seeded(lambda dup: language_model_learner(text_dls(lm=True, dup=dup), AWD_LSTM, pretrained=False,
                                                                 config=awd_lstm_lm_config | TINY_AWD, metrics=accuracy)), True),
    'plain torch': (_seeded(lambda dup: Learner(torch_dls(dup=dup), nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Linear(32, 3)),
                                                 loss_func=nn.CrossEntropyLoss(), metrics=accuracy)), False),
}

# ---------------------------------------------------------------- states: name -> (build, transfer, folder) -> Learner
class NotReachable(Exception):
    "fastai itself cannot put this Learner in the state (shown as 'n/a')"

@contextlib.contextmanager
def _quiet(learn):
    with learn.no_bar(), learn.no_logging(), warnings.catch_warnings():
        warnings.simplefilter('ignore')
        yield

def _train(learn, transfer):
    with _quiet(learn), contextlib.redirect_stdout(io.StringIO()): # SaveModelCallback prints 'Better model found'
        if transfer: learn.fine_tune(1)
        else: learn.fit_one_cycle(1)
    return learn

def fresh(build, transfer, path): return build()

def after_lr_find(build, transfer, path):
    learn = build()
    with _quiet(learn): learn.lr_find(num_it=10, show_plot=False)
    return learn

def after_fit(build, transfer, path): return _train(build(), transfer)

def after_load(build, transfer, path):
    "Trained, saved, and loaded into a new Learner (resuming a run)"
    learn = _train(build(), transfer)
    learn.path = path
    learn.save('model')
    resumed = build()
    resumed.path = path
    return resumed.load('model')

def after_load_learner(build, transfer, path):
    "Trained, exported, and loaded with `load_learner` (its DataLoaders are empty: an inference Learner)"
    learn = _train(build(), transfer)
    learn.path = path
    try: learn.export('export.pkl')
    except Exception as e: raise NotReachable(f"export: {type(e).__name__}: {str(e)[:60]}") from None
    return load_learner(path / 'export.pkl', cpu=True)

def after_load_learner_with_data(build, transfer, path):
    "As `after_load_learner`, then given DataLoaders again (`learn.dls = dls`): a deployed model checked on data"
    learn = after_load_learner(build, transfer, path)
    learn.dls = build().dls
    return learn

def unfrozen(build, transfer, path):
    "Trained, then `unfreeze()`d (fine_tune's second stage, by hand)"
    learn = _train(build(), transfer)
    learn.unfreeze()
    return learn

def with_trackers(build, transfer, path):
    "Trained with fastai's trackers (SaveModelCallback, EarlyStoppingCallback), which stay in learn.cbs"
    learn = build()
    learn.path = path
    learn.add_cbs([SaveModelCallback(fname='best'), EarlyStoppingCallback(patience=3)])
    return _train(learn, transfer)

def with_duplicates(build, transfer, path): return build(dup=True)

STATES = {'fresh': fresh, 'lr_find': after_lr_find, 'fit': after_fit, 'save+load': after_load,
          'export+load_learner': after_load_learner, 'load_learner+dls': after_load_learner_with_data, 'unfreeze': unfrozen,
          'trackers': with_trackers, 'duplicates': with_duplicates}

def run_cell(app:str, state:str)->dict:
    "Build `app` in `state`, run every check: {'errors': [(check, message)], 'counts': {...}, 'seconds': s} or {'na': why}"
    build, transfer = APPS[app]
    with tempfile.TemporaryDirectory() as tmp:
        try: learn = STATES[state](build, transfer, Path(tmp))
        except NotReachable as e: return {'na': str(e)}
        start = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter('ignore')
            report = learn.sanity_check(on_finding=None, progress=False)
    return {'errors': [(r.name, r.message) for r in report.errors], 'counts': report.counts,
            'seconds': time.perf_counter() - start, 'skipped': [(r.name, r.message) for r in report.skipped]}

def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument('--only', nargs='*', default=None, help=f"applications (default: all of {list(APPS)})")
    p.add_argument('--states', nargs='*', default=None, help=f"states (default: all of {list(STATES)})")
    opts = p.parse_args()
    apps, states = opts.only or list(APPS), opts.states or list(STATES)
    cells = {}
    for app in apps:
        for state in states:
            try: cells[app, state] = run_cell(app, state)
            except Exception as e: # building the Learner or its state failed: a bug of this benchmark, shown, not hidden
                cells[app, state] = {'na': f"setup raised {type(e).__name__}: {e}"}
                traceback.print_exc()
            cell = cells[app, state]
            print(f"  {app} / {state}: " + (f"n/a ({cell['na']})" if 'na' in cell else f"{len(cell['errors'])} crashed, {cell['counts']}, {cell['seconds']:.1f} s"),
                  file=sys.stderr, flush=True)
    width = max(len(s) for s in states) + 2
    print(f"Crashed checks (verdict 'error') of learn.sanity_check(), application x state ({len(fastai_paranoid.core.registered_checks())} checks each)\n")
    print(f"{'application':16s}" + ''.join(f"{s:>{width}s}" for s in states))
    for app in apps:
        print(f"{app:16s}" + ''.join(f"{'n/a' if 'na' in cells[app, s] else len(cells[app, s]['errors']):>{width}}" for s in states))
    crashed = sum(len(c.get('errors', [])) for c in cells.values())
    print(f"\n{crashed} crashed checks in {len(cells)} cells ({sum('na' in c for c in cells.values())} n/a).")
    for (app, state), cell in cells.items():
        if 'na' in cell: print(f"\nn/a {app} / {state}: {cell['na']}")
        for name, msg in cell.get('errors', []): print(f"\n{app} / {state}: {name}: {msg[:300]}")
    print("\nSkipped checks, with why (first line):")
    for (app, state), cell in cells.items():
        for name, msg in cell.get('skipped', []): print(f"  {app} / {state}: {name}: {msg[:160]}")
    return 1 if crashed else 0

if __name__ == '__main__': sys.exit(main())
