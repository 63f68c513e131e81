"""False alarms of the data checks (check_label_leak, check_split_duplicates, check_input_normalization,
check_batch_independence, check_constant_features) on healthy Learners written the way fastai users write them, and the planted bugs they must
still catch. Run by hand:

    python benchmarks/bench_falsealarm_data.py --n 200     # >= 200 healthy Learners (tens of minutes on 2 CPU cores)
    python benchmarks/bench_falsealarm_data.py --n 20      # a quick look

Healthy Learners: random seeds; fastai's RandomSplitter(valid_pct=0.2), unstratified, at n = 40..400 items and 2..20
classes; sklearn's digits through a DataBlock; unscaled tabular features through tabular_learner; [0, 1] images into
vision_learner(resnet18, pretrained=False); the fastai book's n-gram language-model data (3 tokens -> the next);
a token-stream LMDataLoader; collab_learner on a random ratings frame. Each check runs with the share of a 60 s
`learn.sanity_check()` budget it gets there."""
import argparse, inspect, math, time, warnings
import numpy as np
import pandas as pd
import torch
from torch import nn
import torch.nn.functional as F
from fastai.data.all import DataBlock, CategoryBlock, TransformBlock, RandomSplitter, IndexSplitter, DataLoaders, L
from fastai.learner import Learner
from fastai.losses import CrossEntropyLossFlat
from fastai_paranoid.datachecks import check_label_leak, check_split_duplicates, check_input_normalization, check_batch_independence
from fastai_paranoid.datachecks import check_constant_features
from fastai_paranoid.fixtures import load_digits_tensors

CHECKS = [check_label_leak, check_split_duplicates, check_input_normalization, check_batch_independence, check_constant_features]
BUDGETS = dict(check_label_leak=15.0, check_split_duplicates=5.0, check_input_normalization=2.0, check_batch_independence=None,
               check_constant_features=None) # it reads the TabularPandas' columns in memory: no safety net
ALARMS = ('failed', 'warning', 'error')

def _mlp(d_in, n_out, width=64): return nn.Sequential(nn.Flatten(), nn.Linear(d_in, width), nn.ReLU(), nn.Linear(width, n_out))

def _block_dls(x, y, seed, bs=32, splitter=None, vocab=None):
    "What a user writes for in-memory arrays: a DataBlock over indices, fastai's RandomSplitter (unstratified)"
    block = DataBlock(blocks=(TransformBlock, CategoryBlock(vocab=vocab)), get_x=lambda i: x[i], get_y=lambda i: int(y[i]),
                      splitter=splitter or RandomSplitter(valid_pct=0.2, seed=seed))
    return block.dataloaders(list(range(len(y))), bs=bs, num_workers=0)

def gaussian_features(rng, seed):
    "n = 40..400 items, 2..20 classes, features with class-dependent means, unscaled (means up to 3, stds 0.5..3)"
    n, k, d = int(rng.integers(40, 401)), int(rng.integers(2, 21)), int(rng.integers(2, 33))
    y = rng.integers(0, k, n)
    centres = rng.normal(0, 1, (k, d))
    x = (centres[y] + rng.normal(0, 1, (n, d))) * rng.uniform(0.5, 3, d) + rng.uniform(-3, 3, d)
    x, y = torch.tensor(x, dtype=torch.float32), torch.tensor(y)
    return Learner(_block_dls(x, y, seed), _mlp(d, k), loss_func=CrossEntropyLossFlat())

def digits(rng, seed):
    "sklearn's digits ([0, 1] pixels), a random subset of 40..400, 2..10 of its classes, a small CNN or an MLP"
    x, y = load_digits_tensors()
    k = int(rng.integers(2, 11))
    keep = np.flatnonzero(y.numpy() < k)
    idx = rng.choice(keep, min(int(rng.integers(40, 401)), len(keep)), replace=False)
    x, y = x[idx], y[idx]
    model = nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(), nn.Flatten(), nn.Linear(8 * 64, k)) \
        if rng.random() < 0.5 else _mlp(64, k)
    return Learner(_block_dls(x, y, seed), model, loss_func=CrossEntropyLossFlat())

def tabular(rng, seed):
    "tabular_learner on unscaled continuous columns (no Normalize proc) and a categorical one; fastai's RandomSplitter"
    from fastai.tabular.all import TabularDataLoaders, tabular_learner, Categorify, FillMissing
    n = int(rng.integers(40, 401))
    df = pd.DataFrame({'colour': rng.choice(['red', 'green', 'blue'], n), 'a': rng.normal(10, 3, n), 'b': rng.normal(-5, 2, n),
                       'c': rng.uniform(0, 100, n), 'd': rng.exponential(1000, n)})
    k = int(rng.integers(2, 6))
    score = (df.a - 10) / 3 + (df.colour == 'red') - (df.c - 50) / 30 + rng.normal(0, 0.5, n)
    df['y'] = pd.qcut(score, k, labels=False).astype(str)
    splits = RandomSplitter(valid_pct=0.2, seed=seed)(range(n))
    dls = TabularDataLoaders.from_df(df, procs=[Categorify, FillMissing], cat_names=['colour'], cont_names=['a', 'b', 'c', 'd'],
                                     y_names='y', valid_idx=list(splits[1]), bs=32, num_workers=0)
    return tabular_learner(dls, layers=[32, 16])

def resnet_images(rng, seed):
    "[0, 1] images (IntToFloatTensor, no Normalize) into vision_learner(resnet18, pretrained=False), as fastai builds it"
    from fastai.vision.all import ImageBlock, PILImage, vision_learner
    from torchvision.models import resnet18
    n, k = int(rng.integers(40, 97)), int(rng.integers(2, 5))
    labels = rng.integers(0, k, n)
    imgs = []
    for c in labels:
        img = rng.integers(0, 100, (32, 32, 3)).astype(np.uint8)
        r, col = [(0, 0), (0, 16), (16, 0), (16, 16)][c]
        img[r + 2:r + 14, col + 2:col + 14] = 230
        imgs.append(img)
    block = DataBlock(blocks=(ImageBlock, CategoryBlock), get_x=lambda i: PILImage.create(imgs[i]), get_y=lambda i: int(labels[i]),
                      splitter=RandomSplitter(valid_pct=0.2, seed=seed))
    dls = block.dataloaders(list(range(n)), bs=8, num_workers=0)
    return vision_learner(dls, resnet18, pretrained=False)

ONES = 'zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen nineteen'.split()
TENS = '_ _ twenty thirty forty fifty sixty seventy eighty ninety'.split()
def number_words(n):
    out = []
    if n >= 1000: out += number_words(n // 1000) + ['thousand']; n %= 1000
    if n >= 100: out += [ONES[n // 100], 'hundred']; n %= 100
    if n >= 20: out.append(TENS[n // 10]); n %= 10
    if n: out.append(ONES[n])
    return out

def human_numbers(rng, upto):
    toks = [t for i in range(1, upto + 1) for t in number_words(i) + ['.']]
    vocab = sorted(set(toks))
    return torch.tensor([vocab.index(t) for t in toks]), len(vocab)

class LMModel1(nn.Module):
    "The fastai book's first language model (chapter 12): three tokens in, the next one out"
    def __init__(self, vocab_sz, n_hidden):
        super().__init__()
        self.i_h, self.h_h, self.h_o = nn.Embedding(vocab_sz, n_hidden), nn.Linear(n_hidden, n_hidden), nn.Linear(n_hidden, vocab_sz)
    def forward(self, x):
        h = F.relu(self.h_h(self.i_h(x[:, 0])))
        h = h + self.i_h(x[:, 1])
        h = F.relu(self.h_h(h))
        h = h + self.i_h(x[:, 2])
        return self.h_o(F.relu(self.h_h(h)))

def book_ngrams(rng, seed):
    "The fastai book's human-numbers setup: windows of 3 tokens -> the next, split chronologically (first 80% train)"
    nums, vocab_sz = human_numbers(rng, int(rng.integers(300, 3001)))
    seqs = L((nums[i:i + 3], nums[i + 3]) for i in range(0, len(nums) - 4, 3))
    cut = int(len(seqs) * 0.8)
    dls = DataLoaders.from_dsets(seqs[:cut], seqs[cut:], bs=64, shuffle=False)
    return Learner(dls, LMModel1(vocab_sz, 32), loss_func=F.cross_entropy)

def token_stream(rng, seed):
    "A numericalized stream through fastai's LMDataLoader (windows of seq_len -> the same shifted by one), split chronologically"
    from fastai.text.all import LMDataLoader
    nums, vocab_sz = human_numbers(rng, int(rng.integers(300, 2001)))
    cut = int(len(nums) * 0.8)
    seq_len = int(rng.integers(4, 17))
    dls = DataLoaders(LMDataLoader([nums[:cut]], bs=16, seq_len=seq_len, shuffle=True), LMDataLoader([nums[cut:]], bs=16, seq_len=seq_len))
    return Learner(dls, nn.Sequential(nn.Embedding(vocab_sz, 16), nn.Linear(16, vocab_sz)), loss_func=CrossEntropyLossFlat())

def collab(rng, seed):
    "collab_learner on a random ratings frame (fastai's CollabDataLoaders.from_df, valid_pct=0.2)"
    from fastai.collab import CollabDataLoaders, collab_learner
    n_users, n_items = int(rng.integers(10, 60)), int(rng.integers(5, 40))
    n = int(rng.integers(40, 401))
    df = pd.DataFrame({'user': rng.integers(0, n_users, n), 'item': rng.integers(0, n_items, n),
                       'rating': rng.integers(1, 6, n).astype(float)}).drop_duplicates(['user', 'item'])
    dls = CollabDataLoaders.from_df(df, valid_pct=0.2, seed=seed, bs=32)
    return collab_learner(dls, n_factors=8, y_range=(0, 5.5))

FAMILIES = dict(features=gaussian_features, digits=digits, tabular=tabular, resnet=resnet_images, book_ngrams=book_ngrams,
                token_stream=token_stream, collab=collab)

def healthy(i:int):
    "The i-th healthy Learner of the benchmark: a family and its settings drawn from seed `i`"
    rng = np.random.default_rng(1000 + i)
    family = list(FAMILIES)[i % len(FAMILIES)]
    torch.manual_seed(i)
    return family, FAMILIES[family](rng, i)

# ---- planted bugs, each with the check that must catch it and the level it must reach

def valid_copied(seed):
    "The validation set is (half) copies of training items"
    x, y = load_digits_tensors()
    idx = np.random.default_rng(seed).permutation(len(y))[:300]
    x, y = x[idx].clone(), y[idx].clone()
    x[240:270], y[240:270] = x[:30], y[:30]
    return Learner(_block_dls(x, y, seed, splitter=IndexSplitter(range(240, 300))), _mlp(64, 10), loss_func=CrossEntropyLossFlat())

def oversampled_before_split(seed):
    "Class-balance oversampling (every item twice) before RandomSplitter"
    x, y = load_digits_tensors()
    idx = np.random.default_rng(seed).permutation(len(y))[:200]
    x, y = torch.cat([x[idx]] * 2), torch.cat([y[idx]] * 2)
    return Learner(_block_dls(x, y, seed), _mlp(64, 10), loss_func=CrossEntropyLossFlat())

def near_copies_random_labels(seed):
    "Labels that leak: random labels, validation items are training items plus a little noise (augmented before the split)"
    g = torch.Generator().manual_seed(seed)
    x, y = torch.randn(300, 32, generator=g), torch.randint(0, 3, (300,), generator=g)
    xv = torch.cat([x[:100] + 0.01 * torch.randn(100, 32, generator=g), x[200:]])
    x_all, y_all = torch.cat([x[:200], xv]), torch.cat([y[:200], y[:100], y[200:]])
    return Learner(_block_dls(x_all, y_all, seed, splitter=IndexSplitter(range(200, 400))), _mlp(32, 3, 256), loss_func=CrossEntropyLossFlat())

def sorted_split(seed):
    "A class-sorted table split by position: the last classes only in validation"
    x, y = load_digits_tensors()
    idx = np.random.default_rng(seed).permutation(len(y))[:300]
    order = idx[np.argsort(y[idx].numpy(), kind='stable')]
    return Learner(_block_dls(x[order], y[order], seed, splitter=IndexSplitter(range(240, 300)), vocab=list(range(10))), _mlp(64, 10), loss_func=CrossEntropyLossFlat())

def raw_pixels(seed):
    "Raw 0-255 pixels into a plain CNN (no Normalize, no BatchNorm)"
    x, y = load_digits_tensors()
    idx = np.random.default_rng(seed).permutation(len(y))[:300]
    model = nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.Flatten(), nn.Linear(8 * 64, 10))
    return Learner(_block_dls(x[idx] * 255, y[idx], seed), model, loss_func=CrossEntropyLossFlat())

def title_all_nan(seed):
    "A Titanic-like frame whose Title (a categorical feature) is NaN on every row: the code that builds it never matches"
    rng = np.random.default_rng(seed)
    from fastai.tabular.all import TabularDataLoaders, tabular_learner, Categorify, FillMissing, Normalize
    n = 300
    sex = rng.choice(['male', 'female'], n)
    df = pd.DataFrame({'Sex': sex, 'Age': rng.normal(30, 12, n), 'Fare': rng.exponential(30, n), 'Title': None,
                       'Survived': np.where((sex == 'female') | (rng.random(n) < 0.2), 'yes', 'no')})
    splits = RandomSplitter(valid_pct=0.2, seed=seed)(range(n))
    dls = TabularDataLoaders.from_df(df, procs=[Categorify, FillMissing, Normalize], cat_names=['Sex', 'Title'], cont_names=['Age', 'Fare'],
                                     y_names='Survived', valid_idx=list(splits[1]), bs=32, num_workers=0)
    return tabular_learner(dls, layers=[10, 10])

PLANTED = [('valid set copied from train', valid_copied, 'check_split_duplicates', ('failed',)),
           ('oversampling before the split', oversampled_before_split, 'check_split_duplicates', ('failed',)),
           ('oversampling before the split', oversampled_before_split, 'check_label_leak', ('warning',)),
           ('labels that leak (near copies)', near_copies_random_labels, 'check_label_leak', ('warning',)),
           ('class-sorted split by position', sorted_split, 'check_split_duplicates', ('warning',)),
           ('raw 0-255 pixels, plain CNN', raw_pixels, 'check_input_normalization', ('warning',)),
           ('tabular feature NaN on every row', title_all_nan, 'check_constant_features', ('warning',))]

def run_check(check, learn):
    budget = {'budget': BUDGETS[check.__name__]} if 'budget' in inspect.signature(check).parameters else {}
    try: return check(learn, **budget).verdict
    except Exception as e: return f'error ({type(e).__name__}: {e})'

def interval(k, n, conf=0.95):
    "Clopper-Pearson interval of a rate k / n"
    from scipy.stats import beta
    lo = 0.0 if k == 0 else beta.ppf((1 - conf) / 2, k, n - k + 1)
    hi = 1.0 if k == n else beta.ppf(1 - (1 - conf) / 2, k + 1, n - k)
    return lo, hi

def false_alarms(n:int, verbose:bool=False)->dict:
    "check name -> list of (family, verdict) over `n` healthy Learners"
    verdicts = {c.__name__: [] for c in CHECKS}
    for i in range(n):
        family, learn = healthy(i)
        for check in CHECKS:
            v = run_check(check, learn)
            verdicts[check.__name__].append((family, v))
            if verbose and (v in ALARMS or v.startswith('error')): print(f"  #{i} {family}: {check.__name__} {v}")
    return verdicts

def catches(seeds=(0, 1, 2))->list:
    "(case, check, verdicts per seed, caught at its level)"
    rows = []
    for case, build, check_name, levels in PLANTED:
        check = next(c for c in CHECKS if c.__name__ == check_name)
        vs = [run_check(check, build(s)) for s in seeds]
        rows.append((case, check_name, vs, all(v in levels for v in vs)))
    return rows

if __name__ == '__main__':
    parser = argparse.ArgumentParser()
    parser.add_argument('--n', type=int, default=200)
    parser.add_argument('--threads', type=int, default=1)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    warnings.simplefilter('ignore')
    start = time.perf_counter()
    verdicts = false_alarms(args.n, verbose=True)
    print(f"\nHealthy Learners: {args.n} ({', '.join(f'{f} {sum(1 for fam, _ in verdicts[CHECKS[0].__name__] if fam == f)}' for f in FAMILIES)}), "
          f"{time.perf_counter() - start:.0f} s")
    print(f"{'check':28s} {'false alarms':>13s}  {'95% interval':>16s}  verdicts")
    for name, vs in verdicts.items():
        k = sum(v in ALARMS or v.startswith('error') for _, v in vs)
        lo, hi = interval(k, len(vs))
        counts = pd.Series([v.split(' ')[0] for _, v in vs]).value_counts().to_dict()
        print(f"{name:28s} {k:>5d} / {len(vs):<5d}  [{lo:.4f}, {hi:.4f}]  {counts}")
    print("\nPlanted bugs (seeds 0, 1, 2):")
    for case, check_name, vs, ok in catches():
        print(f"  {case:34s} {check_name:26s} {vs}  {'caught' if ok else 'MISSED'}")
