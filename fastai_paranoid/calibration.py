from __future__ import annotations
import math, time
from dataclasses import dataclass, field
from functools import partial
import numpy as np
import pandas as pd
import torch
from torch import nn
from PIL import Image
from fastai.data.block import DataBlock, CategoryBlock, MultiCategoryBlock, RegressionBlock
from fastai.data.transforms import IndexSplitter, ColReader, ColSplitter, Normalize
from fastai.learner import Learner
from fastai.losses import CrossEntropyLossFlat, BCEWithLogitsLossFlat, MSELossFlat
from fastai.torch_core import params
from fastai.callback.training import BnFreeze
from fastai.vision.core import PILImage, PILMask
from fastai.vision.data import ImageBlock, MaskBlock, imagenet_stats
from fastai.vision.learner import vision_learner, unet_learner
from fastai.vision.models.xresnet import xresnet18
from fastai.tabular.all import TabularDataLoaders, tabular_learner, Categorify, FillMissing
from fastai.tabular.core import Normalize as TabNormalize
from fastai.collab import CollabDataLoaders, collab_learner
from fastai.text.data import TextBlock
from fastai.text.core import BaseTokenizer
from fastai.text.models.awdlstm import AWD_LSTM, awd_lstm_clas_config
from fastai.text.learner import text_classifier_learner
from torchvision.models import resnet18, resnet34
from .core import ResultTable, VERDICTS, preserve_rng, registered_checks
from .fixtures import tensor_dls, load_digits_tensors, split_per_class, digits_trunk, transfer_model
from .checks import SanityReport
from . import presets # learn.linear_probe(), discriminative_lr(), one_big_lr()

# --- synthetic data: small, seeded, with a signal a model can learn
def blob_images(n:int, size:int=32, n_classes:int=3, seed:int=0, multi:bool=False)->tuple:
    "`n` RGB uint8 images of noise with a bright square in a class-dependent corner, and their labels (sets of classes if `multi`)"
    rng = np.random.default_rng(seed)
    imgs, labels = [], []
    half = size // 2
    corners = [(0, 0), (0, half), (half, 0), (half, half)][:max(n_classes, 2)]
    for i in range(n):
        img = rng.integers(0, 100, (size, size, 3)).astype(np.uint8)
        classes = sorted(rng.choice(n_classes, size=rng.integers(1, 3), replace=False).tolist()) if multi else [i % n_classes]
        for c in classes:
            r, col = corners[c]
            img[r + 2:r + half - 2, col + 2:col + half - 2, c % 3] = 230
        imgs.append(img)
        labels.append(classes if multi else classes[0])
    return imgs, labels

def _train_stats_normalize(imgs:list)->Normalize:
    "fastai's `Normalize` with the per-channel statistics of the training images (`Normalize()` would take them from one small batch)"
    pixels = np.stack(imgs).reshape(-1, 3) / 255.
    return Normalize.from_stats(pixels.mean(0).tolist(), pixels.std(0).tolist())

def image_dls(n_train:int=48, n_valid:int=24, size:int=32, n_classes:int=3, bs:int=16, seed:int=0, normalize:bool=True,
              multi:bool=False, leak:str|None=None):
    "fastai DataLoaders through DataBlock (PILImage -> ToTensor -> IntToFloatTensor [-> Normalize with the training statistics]); `leak`: 'copies' or 'near-copies' of training items in validation"
    imgs, labels = blob_images(n_train + n_valid, size, n_classes, seed, multi)
    if leak is not None: # half of the validation items are (near) copies of training items
        rng = np.random.default_rng(seed + 100)
        for j in range(n_train, n_train + n_valid, 2):
            src = int(rng.integers(0, n_train))
            img = imgs[src].copy()
            if leak == 'near-copies': img = np.clip(img.astype(int) + rng.integers(-2, 3, img.shape), 0, 255).astype(np.uint8)
            imgs[j], labels[j] = img, labels[src]
    block = MultiCategoryBlock(vocab=list(range(n_classes))) if multi else CategoryBlock(vocab=list(range(n_classes)))
    dblock = DataBlock(blocks=(ImageBlock, block), get_x=lambda i: PILImage.create(imgs[i]), get_y=lambda i: labels[i],
                       splitter=IndexSplitter(range(n_train, n_train + n_valid)),
                       batch_tfms=[_train_stats_normalize(imgs[:n_train])] if normalize else None)
    return dblock.dataloaders(list(range(n_train + n_valid)), bs=bs, num_workers=0)

def mask_dls(n_train:int=32, n_valid:int=16, size:int=32, bs:int=8, seed:int=0):
    "Segmentation: noise images with a bright rectangle; the mask marks it (2 codes)"
    rng = np.random.default_rng(seed)
    imgs, masks = [], []
    for _ in range(n_train + n_valid):
        img = rng.integers(0, 100, (size, size, 3)).astype(np.uint8)
        mask = np.zeros((size, size), dtype=np.uint8)
        r, c = rng.integers(0, size // 2, 2)
        h, w = rng.integers(size // 4, size // 2, 2)
        img[r:r + h, c:c + w] = 220
        mask[r:r + h, c:c + w] = 1
        imgs.append(img)
        masks.append(mask)
    dblock = DataBlock(blocks=(ImageBlock, MaskBlock(codes=['background', 'box'])),
                       get_x=lambda i: PILImage.create(imgs[i]), get_y=lambda i: PILMask.create(masks[i]),
                       splitter=IndexSplitter(range(n_train, n_train + n_valid)), batch_tfms=[_train_stats_normalize(imgs[:n_train])])
    return dblock.dataloaders(list(range(n_train + n_valid)), bs=bs, num_workers=0)

def tabular_df(n:int=200, seed:int=0, regression:bool=False)->pd.DataFrame:
    "Two categorical and three continuous columns; the target is a rule on them (a class, or a number)"
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({'colour': rng.choice(['red', 'green', 'blue'], n), 'size': rng.choice(['s', 'm', 'l', 'xl'], n),
                       'a': rng.normal(10, 3, n), 'b': rng.normal(-5, 2, n), 'c': rng.uniform(0, 100, n)})
    score = (df.a - 10) / 3 + (df.colour == 'red') * 1.5 - (df.b + 5) / 2
    df['y'] = score + rng.normal(0, 0.1, n) if regression else np.where(score > 0.5, 'high', np.where(score < -0.5, 'low', 'mid'))
    return df

def tabular_dls(n:int=200, seed:int=0, regression:bool=False, bs:int=32, valid:str='random'):
    "TabularDataLoaders (Categorify, FillMissing, Normalize); `valid`: 'random' (20%), 'empty', or 'copies' (validation rows copied from training)"
    df = tabular_df(n, seed, regression)
    n_valid = n // 5
    if valid == 'copies': df.iloc[-n_valid:] = df.iloc[:n_valid].values
    valid_idx = [] if valid == 'empty' else list(range(n - n_valid, n))
    return TabularDataLoaders.from_df(df, procs=[Categorify, FillMissing, TabNormalize], cat_names=['colour', 'size'],
                                      cont_names=['a', 'b', 'c'], y_names='y', valid_idx=valid_idx, bs=bs,
                                      y_block=RegressionBlock() if regression else CategoryBlock(), num_workers=0)

def ratings_dls(n_users:int=30, n_items:int=20, seed:int=0, bs:int=32):
    "Ratings from latent factors (2 per user and item), half of all user-item pairs"
    rng = np.random.default_rng(seed)
    u, v = rng.normal(0, 1, (n_users, 2)), rng.normal(0, 1, (n_items, 2))
    pairs = [(i, j) for i in range(n_users) for j in range(n_items) if rng.random() < 0.5]
    df = pd.DataFrame({'user': [f"u{i}" for i, _ in pairs], 'item': [f"i{j}" for _, j in pairs],
                       'rating': [float(np.clip(3 + u[i] @ v[j] + rng.normal(0, 0.2), 0.5, 5)) for i, j in pairs]})
    return CollabDataLoaders.from_df(df, valid_pct=0.2, seed=seed, bs=bs, num_workers=0)

POSITIVE = 'good great fine nice happy bright warm kind calm sweet'.split()
NEGATIVE = 'bad awful poor sad dark cold cruel angry bitter grim'.split()
FILLER = 'the a this that movie film plot actor scene story was is very quite rather and but with'.split()

def text_df(n:int=96, seed:int=0)->pd.DataFrame:
    "Short reviews: filler words and 2-4 words of the label's sentiment"
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(n):
        label = ['neg', 'pos'][i % 2]
        words = list(rng.choice(FILLER, int(rng.integers(5, 10)))) + list(rng.choice(POSITIVE if label == 'pos' else NEGATIVE, int(rng.integers(2, 5))))
        rng.shuffle(words)
        rows.append((' '.join(words), label, i >= n * 3 // 4))
    return pd.DataFrame(rows, columns=['text', 'label', 'is_valid'])

def text_dls(n:int=96, seed:int=0, bs:int=16):
    "fastai's text API on `text_df`: TextBlock (whitespace tokenizer, no download), CategoryBlock"
    dblock = DataBlock(blocks=(TextBlock.from_df('text', tok=BaseTokenizer(), min_freq=1, n_workers=0, seq_len=16), CategoryBlock),
                       get_x=ColReader('text'), get_y=ColReader('label'), splitter=ColSplitter('is_valid'))
    return dblock.dataloaders(text_df(n, seed), bs=bs, num_workers=0)

# --- models and planted bugs
class ForwardIgnoresInput(nn.Module):
    "A planted bug: the forward feeds the head a constant instead of the features (an input that never reaches the output)"
    def __init__(self, body, head): super().__init__(); self.body, self.head = body, head
    def forward(self, x):
        feats = self.body(x)
        return self.head(torch.zeros_like(feats))

class BatchCentre(nn.Module):
    "A planted bug: subtracts the mean over the batch, in eval mode too"
    def forward(self, x): return x - x.mean(0, keepdim=True)

class FlattenAcrossBatch(nn.Module):
    "A planted bug: the forward flattens with the wrong dims (`x.t().reshape(n, -1)`): examples mix between the body and the head, in no leaf"
    def __init__(self, body, head): super().__init__(); self.body, self.head = body, head
    def forward(self, x):
        feats = self.body(x)
        return self.head(feats.t().reshape(len(x), -1))

def small_image_net(n_out:int=3, c_in:int=3, width:int=16)->nn.Sequential:
    "`nn.Sequential(body, head)`: a conv+BatchNorm body and a linear head for 32x32 images"
    body = nn.Sequential(nn.Conv2d(c_in, width, 3, padding=1), nn.BatchNorm2d(width), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Conv2d(width, width, 3, padding=1), nn.BatchNorm2d(width), nn.ReLU(), nn.AdaptiveAvgPool2d(2), nn.Flatten())
    return nn.Sequential(body, nn.Linear(4 * width, n_out))

def _seeded(seed, fn, *args, **kwargs):
    torch.manual_seed(seed)
    np.random.seed(seed)
    return fn(*args, **kwargs)

def _vision(seed, arch, normalize=True, **kw):
    return _seeded(seed, vision_learner, image_dls(seed=seed, normalize=normalize, bs=8), arch, pretrained=False, **kw)

def _image_learner(seed, model_fn, loss_func=None, normalize=True, multi=False, leak=None, **kw):
    dls = image_dls(size=16, seed=seed, normalize=normalize, multi=multi, leak=leak)
    loss_func = loss_func or (BCEWithLogitsLossFlat() if multi else CrossEntropyLossFlat())
    return Learner(dls, _seeded(seed, model_fn), loss_func=loss_func, **kw)

@torch.no_grad()
def _scale_last_linear(learn, factor):
    last = [m for m in learn.model.modules() if isinstance(m, nn.Linear)][-1]
    last.weight.mul_(factor)
    return learn

def _fit(learn, epochs=1, **kw):
    with learn.no_bar(), learn.no_logging(): learn.fit(epochs, **kw)
    return learn

def _frozen(learn):
    learn.freeze()
    return learn

def transfer_dls(seed:int=0, n_train:int=40, bs:int=16):
    "Digits 5-9 relabelled 0-4, standardized with the training statistics, `n_train` training images"
    x, y = load_digits_tensors(range(5, 10))
    train_idx, valid_idx = split_per_class(y, n_train // 5, seed=seed)
    x = (x - x[train_idx].mean()) / x[train_idx].std()
    return tensor_dls(x[train_idx], y[train_idx], x[valid_idx], y[valid_idx], bs=bs)

_TRUNKS = {}
def standardized_trunk(seed:int=0)->nn.Sequential:
    "`digits_trunk` pretrained on standardized digits 0-4 (8 epochs of Adam; cached per seed, copied on every call)"
    if seed not in _TRUNKS:
        with preserve_rng():
            torch.manual_seed(seed)
            x, y = load_digits_tensors(range(5))
            x = (x - x.mean()) / x.std()
            model = transfer_model(digits_trunk(), 5)
            opt = torch.optim.Adam(model.parameters(), lr=3e-3)
            for _ in range(8):
                for idx in torch.randperm(len(x)).split(64):
                    opt.zero_grad()
                    nn.functional.cross_entropy(model(x[idx]), y[idx]).backward()
                    opt.step()
            _TRUNKS[seed] = {k: v.detach().clone() for k, v in model[0].state_dict().items()}
    with preserve_rng(): trunk = digits_trunk()
    trunk.load_state_dict({k: v.clone() for k, v in _TRUNKS[seed].items()})
    return trunk

def _transfer(seed, **kw):
    return Learner(transfer_dls(seed), _seeded(seed, lambda: transfer_model(standardized_trunk(seed))),
                   loss_func=CrossEntropyLossFlat(), splitter=lambda m: [params(m[0]), params(m[1])], **kw)

def _tabular(seed, regression=False, valid='random', **kw):
    dls = tabular_dls(seed=seed, regression=regression, valid=valid)
    return _seeded(seed, tabular_learner, dls, layers=[32, 16], **kw)

def _text(seed, **kw):
    config = awd_lstm_clas_config | dict(emb_sz=16, n_hid=32, n_layers=1)
    return _seeded(seed, text_classifier_learner, text_dls(seed=seed), AWD_LSTM, pretrained=False, config=config, seq_len=16, **kw)

@dataclass
class Scenario:
    "One Learner of the calibration corpus: healthy (`bug` is None) or with a planted bug that the check `bug` must catch"
    name: str # what it is, e.g. 'vision_learner resnet18, Normalize'
    build: object # `build(seed) -> Learner`
    bug: str|None = None # the check responsible for catching the planted bug (None: healthy, no check may fail or warn)
    family: str = '' # fastai application family
    slow: bool = False # marked `slow` in the test matrix
    budget: float|None = None # `learn.sanity_check(budget=...)` (None: the default); the resnets get 20 s: the checks must adapt and stay silent

SCENARIOS = [
    # healthy Learners across fastai's application families
    Scenario('vision resnet18 + Normalize', lambda s: _vision(s, resnet18), family='vision', slow=True, budget=20),
    Scenario('vision resnet34 + Normalize', lambda s: _vision(s, resnet34), family='vision', slow=True, budget=20),
    Scenario('vision xresnet18 + Normalize', lambda s: _vision(s, xresnet18), family='vision', slow=True, budget=20),
    Scenario('unet resnet18 segmentation', lambda s: _seeded(s, unet_learner, mask_dls(seed=s), resnet18, pretrained=False, n_out=2),
             family='segmentation', slow=True, budget=20),
    Scenario('tabular classifier', lambda s: _tabular(s), family='tabular'),
    Scenario('tabular regression', lambda s: _tabular(s, regression=True), family='regression'),
    Scenario('collab', lambda s: _seeded(s, collab_learner, ratings_dls(seed=s), n_factors=8, y_range=(0, 5.5)), family='collab'),
    Scenario('text AWD-LSTM classifier', lambda s: _text(s), family='text', slow=True),
    Scenario('multi-label small CNN', lambda s: _image_learner(s, small_image_net, multi=True, lr=3e-3), family='multi-label'),
    Scenario('transfer: linear_probe', lambda s: _transfer(s).linear_probe(lr=1e-2), family='transfer'),
    Scenario('transfer: discriminative_lr', lambda s: _transfer(s).discriminative_lr(lr=3e-3), family='transfer'),
    Scenario('transfer: one_big_lr', lambda s: _transfer(s).one_big_lr(lr=3e-3), family='transfer'),
    Scenario('mid-training small CNN', lambda s: _fit(_image_learner(s, small_image_net, lr=3e-3)), family='mid-training'),
    Scenario('mid-training fit, then linear_probe', lambda s: _fit(_fit(_transfer(s, lr=3e-3)).linear_probe(lr=1e-2)), family='mid-training'),
    Scenario('mid-training tabular', lambda s: _fit(_tabular(s, lr=1e-2)), family='mid-training'),
    Scenario('empty validation set', lambda s: _tabular(s, valid='empty'), family='tabular'),
    # planted bugs, each with the check responsible for it
    Scenario('softmax before CrossEntropy', lambda s: _image_learner(s, lambda: nn.Sequential(small_image_net(), nn.Softmax(1))),
             bug='check_loss_activation', family='vision'),
    Scenario('sigmoid before BCEWithLogits', lambda s: _image_learner(s, lambda: nn.Sequential(small_image_net(), nn.Sigmoid()), multi=True),
             bug='check_loss_activation', family='multi-label'),
    Scenario('last layer x50 at init', lambda s: _scale_last_linear(_tabular(s), 50.), bug='check_loss_at_init', family='tabular'),
    Scenario('forward ignores its input', lambda s: _image_learner(s, lambda: ForwardIgnoresInput(*small_image_net())),
             bug='check_overfit_one_batch', family='vision'),
    Scenario('lr far too high (Adam, 10)', lambda s: _tabular(s, lr=10.), bug='check_lr', family='tabular'),
    Scenario('lr far too low (1e-7)', lambda s: _image_learner(s, small_image_net, lr=1e-7), bug='check_lr', family='vision'),
    Scenario('validation rows copied from training', lambda s: _tabular(s, valid='copies'), bug='check_split_duplicates', family='tabular'),
    Scenario('validation images near-copies of training', lambda s: _image_learner(s, small_image_net, leak='near-copies'),
             bug='check_label_leak', family='vision'),
    Scenario('vision resnet18 without Normalize', lambda s: _vision(s, resnet18, normalize=False), bug='check_input_normalization',
             family='vision', slow=True, budget=20),
    Scenario('BatchNorm without running stats', lambda s: _image_learner(s, lambda: nn.Sequential(small_image_net()[0], nn.BatchNorm1d(64, track_running_stats=False), nn.Linear(64, 3))),
             bug='check_batch_independence', family='vision'),
    Scenario('flatten across the batch in forward', lambda s: _image_learner(s, lambda: FlattenAcrossBatch(*small_image_net())),
             bug='check_batch_independence', family='vision'),
    Scenario('fit, freeze(), fit with wd', lambda s: _frozen(_fit(_transfer(s, lr=3e-3, train_bn=False, cbs=BnFreeze()))), bug='check_frozen',
             family='mid-training'), # BatchNorm held by BnFreeze: only the stale gradients move the trunk,
    Scenario('frozen BatchNorm in train mode', lambda s: _frozen(_transfer(s, train_bn=False)), bug='check_frozen', family='transfer'),
]

# --- running the corpus and judging the checks
ALARMS = ('failed', 'warning', 'error')
_CODE = {'passed': 'P', 'failed': 'F', 'warning': 'W', 'skipped': 's', 'error': 'E'}

@dataclass
class CorpusRun:
    "The reports of `learn.sanity_check()` on each scenario and seed, and what they say about the checks"
    scenarios: list
    seeds: list
    reports: dict # (scenario name, seed) -> SanityReport
    seconds: dict # (scenario name, seed) -> seconds of sanity_check
    def verdicts(self, scenario, check)->list: return [self.reports[scenario.name, s][check].verdict for s in self.seeds]
    @property
    def checks(self)->list: return self.reports[self.scenarios[0].name, self.seeds[0]].names
    @property
    def false_alarms(self)->list:
        "`(scenario, seed, check, verdict, message)` for every alarm on a healthy Learner"
        return [(sc.name, s, r.name, r.verdict, r.message) for sc in self.scenarios if sc.bug is None for s in self.seeds
                for r in self.reports[sc.name, s] if r.verdict in ALARMS]
    @property
    def misses(self)->list:
        "`(scenario, seed, check, verdict, message)` for every planted bug its check did not flag"
        return [(sc.name, s, sc.bug, r.verdict, r.message) for sc in self.scenarios if sc.bug is not None for s in self.seeds
                for r in [self.reports[sc.name, s][sc.bug]] if r.verdict not in ('failed', 'warning')]
    @property
    def table(self)->ResultTable:
        "Scenario x check: one letter per seed (P passed, F failed, W warning, s skipped, E error); [..] marks the check responsible for the planted bug"
        rows = []
        for sc in self.scenarios:
            row = {'scenario': sc.name, 'expect': 'healthy' if sc.bug is None else 'bug'}
            for c in self.checks:
                cell = ''.join(_CODE[v] for v in self.verdicts(sc, c))
                row[c.replace('check_', '')] = f"[{cell}]" if c == sc.bug else cell
            row['s/seed'] = f"{np.mean([self.seconds[sc.name, s] for s in self.seeds]):.1f}"
            rows.append(row)
        return ResultTable(rows, title=f"Calibration corpus, seeds {self.seeds}: {len(self.false_alarms)} false alarms, "
                                       f"{len(self.misses)} misses")
    def __repr__(self): return str(self.table)
    def _repr_html_(self): return self.table._repr_html_()

def run_scenario(scenario:Scenario, seed:int, **kwargs)->SanityReport:
    "Build the scenario's Learner for `seed` and run `learn.sanity_check(on_fail=None, progress=False, **kwargs)` on it"
    learn = scenario.build(seed)
    if scenario.budget is not None: kwargs.setdefault('budget', scenario.budget)
    return learn.sanity_check(on_fail=None, progress=False, **kwargs)

def run_corpus(scenarios:list=None, # default: `SCENARIOS`
               seeds=(0, 1, 2), # each scenario is built and checked once per seed
               **kwargs, # passed to `learn.sanity_check`
              )->CorpusRun:
    "Every scenario x seed through `learn.sanity_check()`"
    scenarios = list(SCENARIOS if scenarios is None else scenarios)
    reports, seconds = {}, {}
    for sc in scenarios:
        for s in seeds:
            start = time.perf_counter()
            reports[sc.name, s] = run_scenario(sc, s, **kwargs)
            seconds[sc.name, s] = time.perf_counter() - start
    return CorpusRun(scenarios, list(seeds), reports, seconds)
