"""Every kind of loader a user can hand a fastai `Learner`, each on a small offline task: the Learners `tests/test_loaders.py` runs
`learn.sanity_check()` on. `build(kind, bug=False)` gives the Learner; with `bug=True` the same pipeline with a planted bug
(a softmax before the cross-entropy loss), where it is cheap."""
import contextlib, os, tempfile
from functools import partial
import numpy as np, pandas as pd, torch
from torch import nn, optim
import torch.nn.functional as F
import torch.utils.data as tud
from fastai.data.core import DataLoaders, TfmdDL
from fastai.data.load import DataLoader
from fastai.data.block import DataBlock, CategoryBlock, TransformBlock
from fastai.data.transforms import IndexSplitter
from fastai.learner import Learner
from fastai.optimizer import OptimWrapper
from fastai.metrics import accuracy
from fastai_paranoid.fixtures import load_digits_tensors, split_per_class

def _digits(n_classes=10):
    x, y = load_digits_tensors(range(n_classes))
    train_idx, valid_idx = split_per_class(y, valid_pct=0.2, seed=0)
    return x[train_idx], y[train_idx], x[valid_idx], y[valid_idx]

def mnist_net(bug=False):
    "A small CNN for 8x8 digits, written as the PyTorch examples write theirs"
    layers = [nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(), nn.Linear(16 * 16, 64), nn.ReLU(), nn.Linear(64, 10)]
    if bug: layers.append(nn.Softmax(dim=1))
    return nn.Sequential(*layers)

def torch_learner(bug=False, sampler=False):
    "fastai's migrating_pytorch recipe: plain torch DataLoaders wrapped in `DataLoaders`, `OptimWrapper` over a torch optimizer"
    xt, yt, xv, yv = _digits()
    train_ds, valid_ds = tud.TensorDataset(xt, yt), tud.TensorDataset(xv, yv)
    if sampler:
        weights = (1.0 / torch.bincount(yt).double())[yt]
        train_dl = tud.DataLoader(train_ds, batch_size=64, sampler=tud.WeightedRandomSampler(weights, len(weights)))
    else: train_dl = tud.DataLoader(train_ds, batch_size=64, shuffle=True)
    valid_dl = tud.DataLoader(valid_ds, batch_size=128, shuffle=not sampler) # the recipe's test_loader shuffles too
    dls = DataLoaders(train_dl, valid_dl)
    return Learner(dls, mnist_net(bug), loss_func=F.cross_entropy, opt_func=partial(OptimWrapper, opt=optim.Adam), metrics=accuracy)

class Digit:
    "An item of the DataBlock: the index of a digit image"
    def __init__(self, x): self.x = x

def datablock_learner(bug=False):
    "A `DataBlock` over the digits: `TfmdDL`s"
    xt, yt, xv, yv = _digits()
    x, y = torch.cat([xt, xv]), torch.cat([yt, yv])
    dblock = DataBlock(blocks=(TransformBlock, CategoryBlock), get_x=lambda i: x[i], get_y=lambda i: int(y[i]),
                       splitter=IndexSplitter(list(range(len(xt), len(x)))))
    dls = dblock.dataloaders(list(range(len(x))), bs=64)
    return Learner(dls, mnist_net(bug), loss_func=nn.CrossEntropyLoss(), metrics=accuracy)

def tabular_learner_(bug=False):
    "`tabular_learner` on a synthetic table: `TabDataLoader`s"
    from fastai.tabular.all import TabularPandas, Categorify, FillMissing, Normalize, RandomSplitter, tabular_learner
    rng = np.random.default_rng(0)
    n = 600
    df = pd.DataFrame({'a': rng.normal(size=n), 'b': rng.normal(size=n), 'colour': rng.choice(['red', 'green', 'blue'], n)})
    df['label'] = np.where(df.a + (df.colour == 'red') * 1.5 + rng.normal(scale=0.3, size=n) > 0.5, 'high', 'low')
    to = TabularPandas(df, procs=[Categorify, FillMissing, Normalize], cat_names=['colour'], cont_names=['a', 'b'], y_names='label',
                       splits=RandomSplitter(seed=0)(range(n)))
    dls = to.dataloaders(bs=64)
    learn = tabular_learner(dls, layers=[32, 16], metrics=accuracy)
    if bug: learn.model.layers.append(nn.Softmax(dim=1))
    return learn

def lm_learner(bug=False):
    "`language_model_learner` on synthetic text: `LMDataLoader`s"
    from fastai.text.all import TextDataLoaders, language_model_learner, AWD_LSTM, awd_lstm_lm_config
    rng = np.random.default_rng(0)
    words = [f"w{i}" for i in range(40)]
    texts = [' '.join(rng.choice(words, rng.integers(20, 40))) for _ in range(120)]
    df = pd.DataFrame({'text': texts, 'is_valid': [i % 5 == 0 for i in range(120)]})
    dls = TextDataLoaders.from_df(df, text_col='text', is_lm=True, valid_col='is_valid', bs=8, seq_len=16)
    return language_model_learner(dls, AWD_LSTM, pretrained=False, config=awd_lstm_lm_config | dict(emb_sz=32, n_hid=48, n_layers=2))

@contextlib.contextmanager
def single_process_group():
    "A gloo process group of one rank, and `DistributedDL` broadcasting on CPU (as `distrib_ctx(cpu=True)` under paranoid's DistributedCPU)"
    import torch.distributed as dist
    from fastai.distributed import DistributedDL
    from fastai_paranoid.distributed import _broadcast_on_backend_device
    old = DistributedDL._broadcast
    with tempfile.TemporaryDirectory() as tmp:
        dist.init_process_group('gloo', init_method=f"file://{os.path.join(tmp, 'store')}", rank=0, world_size=1)
        DistributedDL._broadcast = _broadcast_on_backend_device
        try: yield
        finally:
            DistributedDL._broadcast = old
            dist.destroy_process_group()

def distributed_learner(bug=False):
    "fastai's `DistributedDL` wrapping each fastai DataLoader (what `DistributedTrainer` does in `before_fit`), one rank"
    from fastai.distributed import DistributedDL
    from fastai_paranoid.fixtures import tensor_dls
    xt, yt, xv, yv = _digits()
    dls = tensor_dls(xt, yt, xv, yv, bs=64)
    dls = DataLoaders(DistributedDL(dls.train, rank=0, world_size=1), DistributedDL(dls.valid, rank=0, world_size=1))
    return Learner(dls, mnist_net(bug), loss_func=nn.CrossEntropyLoss(), metrics=accuracy)

class ChunkedDL(DataLoader):
    "A custom fastai `DataLoader`: items made by `create_item` from a tensor, batches of consecutive chunks by `create_batches`"
    def __init__(self, x, y, **kwargs):
        self.x, self.y = x, y
        super().__init__(dataset=list(range(len(x))), **kwargs)
    def create_item(self, i): return self.x[i], self.y[i]
    def create_batches(self, samps):
        samps = list(samps)
        for i in range(0, len(samps) - (self.bs - 1 if self.drop_last else 0), self.bs):
            idx = samps[i:i + self.bs]
            yield self.x[idx], self.y[idx]

def custom_learner(bug=False):
    "A subclass of fastai's `DataLoader` overriding `create_item` and `create_batches`"
    xt, yt, xv, yv = _digits()
    dls = DataLoaders(ChunkedDL(xt, yt, bs=64, shuffle=True, drop_last=True), ChunkedDL(xv, yv, bs=64))
    return Learner(dls, mnist_net(bug), loss_func=nn.CrossEntropyLoss(), metrics=accuracy)

KINDS = {'torch': torch_learner, 'torch_sampler': partial(torch_learner, sampler=True), 'datablock': datablock_learner,
         'tabular': tabular_learner_, 'lm': lm_learner, 'distributed': distributed_learner, 'custom': custom_learner}

def build(kind, bug=False):
    "The Learner of loader kind `kind` (seeded), with the planted bug when `bug`"
    torch.manual_seed(0)
    np.random.seed(0)
    import random
    random.seed(0)
    return KINDS[kind](bug=bug)

if __name__ == '__main__': # verdict counts per kind: python tests/loader_kinds.py [kind ...]
    import sys, collections, warnings
    import fastai_paranoid.all # noqa: F401 registers the checks and the `sanity_check` patch
    for kind in sys.argv[1:] or KINDS:
        with (single_process_group() if kind == 'distributed' else contextlib.nullcontext()):
            for bug in (False, True):
                learn = build(kind, bug)
                with warnings.catch_warnings():
                    warnings.simplefilter('ignore')
                    report = learn.sanity_check(on_finding=None, progress=False)
                counts = collections.Counter(r.verdict for r in report)
                print(f"{kind:14s} bug={bug!s:5s} {dict(counts)}", flush=True)
                for r in report:
                    if r.verdict not in ('passed', 'skipped'): print(f"    {r.name} {r.verdict}: {r.message[:300]}")
                    if r.verdict == 'skipped': print(f"    {r.name} skipped: {r.message[:160]}")
