"""`learn.sanity_check()` on every kind of loader a user can hand a Learner (`loader_kinds.KINDS`): plain PyTorch DataLoaders
wrapped in `DataLoaders` (fastai's migration recipe, shuffled and with a sampler), a DataBlock's `TfmdDL`, `TabDataLoader`,
`LMDataLoader`, `DistributedDL` and a `DataLoader` subclass. No check crashes, the healthy pipelines get no finding, a planted
bug is still caught, and the loaders (their attributes included) and the data they hold are left as they were."""
import contextlib, random, warnings
import pytest, torch
import torch.utils.data as tud
import fastai_paranoid.all # noqa: F401 (the checks and `Learner.sanity_check`)
from fastai_paranoid.compat import loader_chain
from fastai_paranoid.validchecks import check_valid_deterministic
from loader_kinds import KINDS, build, single_process_group, mnist_net, _digits

FINDINGS = ('failed', 'warning', 'error')
# the rate each kind trains at: a language model at the book's 2e-2 (at fastai's default 1e-3, AWD-LSTM does not memorize its
# 8 sequences in check_overfit_one_batch's 100 steps, loss 4.02 -> 3.56: that check's judgement, not the loader's)
LR = {'lm': 2e-2}
BUGS = [k for k in KINDS if k != 'lm'] # a softmax before the cross-entropy: cheap everywhere but in the LM's tuple output

def _context(kind): return single_process_group() if kind == 'distributed' else contextlib.nullcontext()

def _run(learn, lr=None):
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        return learn.sanity_check(on_finding=None, progress=False, lr=lr)

def _loader_vars(dls)->list:
    "Each loader (those inside a DistributedDL too) and its attributes as they are, generators by state"
    res = []
    for dl in [d for top in dls.loaders for d in loader_chain(top)]:
        attrs = {k: (v.getstate() if isinstance(v, random.Random) else v) for k, v in vars(dl).items()}
        res.append((dl, attrs))
    return res

def _same_vars(before, after):
    for (dl, a), (_, b) in zip(before, after):
        assert set(a) == set(b), f"{type(dl).__name__}: attributes added {sorted(set(b) - set(a))}, removed {sorted(set(a) - set(b))}"
        changed = [k for k in a if not (a[k] is b[k] or (k == 'rng' and a[k] == b[k]))]
        assert not changed, f"{type(dl).__name__}: attributes replaced {changed}"

def _stored(dls)->list:
    "Clones of the tensors the loaders' datasets hold (TensorDataset's)"
    return [t.clone() for top in dls.loaders for t in getattr(getattr(loader_chain(top)[-1], 'dataset', None), 'tensors', ())]

@pytest.mark.parametrize('kind', list(KINDS))
def test_a_healthy_pipeline_is_checked_whole(kind, one_thread):
    "0 crashed checks, no finding, and the loaders left as they were (no `_DataLoader__idxs`, no `it` left behind)"
    with _context(kind):
        learn = build(kind)
        before, data = _loader_vars(learn.dls), _stored(learn.dls)
        report = _run(learn, LR.get(kind))
        assert not report.errors, {r.name: r.message for r in report.errors}
        findings = {r.name: r.message for r in report if r.verdict in FINDINGS}
        assert not findings, findings
        _same_vars(before, _loader_vars(learn.dls))
        assert all(torch.equal(a, b) for a, b in zip(data, _stored(learn.dls)))
        passed = len(report.having('passed'))
        assert passed >= (12 if kind == 'lm' else 14), {r.name: (r.verdict, r.message) for r in report}

@pytest.mark.parametrize('kind', BUGS)
def test_a_planted_bug_is_caught_on_every_loader_kind(kind, one_thread):
    with _context(kind):
        report = _run(build(kind, bug=True))
    assert not report.errors, {r.name: r.message for r in report.errors}
    assert report['check_loss_activation'].verdict == 'failed', report['check_loss_activation'].message

def test_the_migration_recipe_reads_the_torch_loaders_like_fastais(one_thread):
    "Plain PyTorch DataLoaders get the verdicts of the same data in fastai's DataBlock, check by check"
    torch_report, fastai_report = _run(build('torch')), _run(build('datablock'))
    assert [(r.name, r.verdict) for r in torch_report] == [(r.name, r.verdict) for r in fastai_report]

# --- a dataset that standardizes the stored item in place on every read: a mutation, not randomness

class InPlaceStandardize(tud.Dataset):
    "Every read standardizes the stored tensor again (`x -= mean` on a view of it): a user's bug"
    def __init__(self, x, y, mean, std): self.x, self.y, self.mean, self.std = x, y, mean, std
    def __len__(self): return len(self.x)
    def __getitem__(self, i):
        x = self.x[i]
        x -= self.mean
        x /= self.std
        return x, self.y[i]

class Standardize(InPlaceStandardize):
    "The fix: computed on a copy"
    def __getitem__(self, i): return (self.x[i] - self.mean) / self.std, self.y[i]

class Counter(tud.Dataset):
    "State kept between reads that no seed fixes: each read adds how many reads came before"
    def __init__(self, x, y): self.x, self.y, self.reads = x, y, 0
    def __len__(self): return len(self.x)
    def __getitem__(self, i):
        self.reads += 1
        return self.x[i] + self.reads, self.y[i]

def _torch_learner(ds_cls):
    from fastai.learner import Learner
    from fastai.data.core import DataLoaders
    import torch.nn.functional as F
    xt, yt, xv, yv = _digits()
    train_ds, valid_ds = ds_cls(xt, yt, 0.3, 0.37), ds_cls(xv, yv, 0.3, 0.37)
    dls = DataLoaders(tud.DataLoader(train_ds, batch_size=64, shuffle=True), tud.DataLoader(valid_ds, batch_size=128))
    return Learner(dls, mnist_net(), loss_func=F.cross_entropy)

def test_an_in_place_mutation_is_told_from_randomness_and_put_back(one_thread):
    learn = _torch_learner(InPlaceStandardize)
    valid_x, train_x = learn.dls.valid.dataset.x.clone(), learn.dls.train.dataset.x.clone()
    r = check_valid_deterministic(learn)
    assert (r.verdict, r.level, r.claim) == ('failed', 'error', 'certain')
    assert 'dls.valid.dataset.x' in r.message and 'in place' in r.message and 'not randomness' in r.message, r.message
    assert 'split_idx' not in r.fix and 'copy' in r.fix, r.fix
    assert r.measured['n_stored_changed'] == 1
    assert torch.equal(learn.dls.valid.dataset.x, valid_x) # the check's own reads are undone
    report = _run(learn)
    assert not report.errors, {r.name: r.message for r in report.errors}
    assert report['check_valid_deterministic'].verdict == 'failed'
    assert torch.equal(learn.dls.valid.dataset.x, valid_x) and torch.equal(learn.dls.train.dataset.x, train_x) # every check's reads too

def test_the_fix_of_the_mutation_makes_it_go_away(one_thread):
    learn = _torch_learner(Standardize)
    r = check_valid_deterministic(learn)
    assert r.verdict == 'passed', r.message
    assert r.measured['n_stored_changed'] == 0 and r.measured['n_different_same_seed'] == 0

def test_state_kept_between_reads_is_not_called_randomness(one_thread):
    learn = _torch_learner(lambda x, y, mean, std: Counter(x, y))
    r = check_valid_deterministic(learn)
    assert (r.verdict, r.level) == ('failed', 'error')
    assert 'same torch/numpy/python seeds' in r.message and 'split_idx = 0' in r.fix and r.measured['n_stored_changed'] == 0, r.message

def test_a_torch_loaders_own_generator_is_put_back(one_thread):
    "`DataLoader(..., generator=g)`: the checks' reads draw from `g`; the user's next epoch sees the order it would have seen"
    from fastai.learner import Learner
    from fastai.data.core import DataLoaders
    import torch.nn.functional as F
    xt, yt, xv, yv = _digits()
    g = torch.Generator().manual_seed(1)
    dls = DataLoaders(tud.DataLoader(tud.TensorDataset(xt, yt), batch_size=64, shuffle=True, generator=g),
                      tud.DataLoader(tud.TensorDataset(xv, yv), batch_size=128))
    learn = Learner(dls, mnist_net(), loss_func=F.cross_entropy)
    state = g.get_state()
    report = _run(learn)
    assert not report.errors and torch.equal(g.get_state(), state)

def test_no_training_batch_on_a_torch_loader_is_a_finding_not_a_crash(one_thread):
    "10 items, batch_size=64, drop_last=True: the PyTorch loader yields nothing, and check_train_batches says so"
    from fastai.learner import Learner
    from fastai.data.core import DataLoaders
    from fastai_paranoid.checks import check_train_batches
    import torch.nn.functional as F
    x, y = torch.randn(10, 4), torch.randint(0, 2, (10,))
    dls = DataLoaders(tud.DataLoader(tud.TensorDataset(x, y), batch_size=64, shuffle=True, drop_last=True),
                      tud.DataLoader(tud.TensorDataset(x, y), batch_size=64))
    r = check_train_batches(Learner(dls, torch.nn.Linear(4, 2), loss_func=F.cross_entropy))
    assert r.verdict == 'failed' and r.measured['bs'] == 64 and 'bs=64' in r.message, r.message

def test_a_fastai_transform_that_modifies_the_stored_item_is_found_and_undone(one_thread):
    "The same bug in a fastai pipeline: a `Transform` whose `encodes` standardizes the item of a `Datasets` in place"
    from fastai.data.core import Datasets
    from fastai.data.transforms import ItemGetter
    from fastai.learner import Learner
    from fasttransform import Transform
    class InPlaceNorm(Transform):
        def encodes(self, x:torch.Tensor): return x.sub_(0.3).div_(0.37)
    xt, yt, xv, yv = _digits()
    items = [(x, y) for x, y in zip(torch.cat([xt, xv]), torch.cat([yt, yv]))]
    dsets = Datasets(items, tfms=[[ItemGetter(0), InPlaceNorm()], [ItemGetter(1)]], splits=[list(range(len(xt))), list(range(len(xt), len(items)))])
    learn = Learner(dsets.dataloaders(bs=64), mnist_net(), loss_func=torch.nn.CrossEntropyLoss())
    stored = [x.clone() for x, _ in items]
    report = _run(learn)
    assert not report.errors, {r.name: r.message for r in report.errors}
    r = report['check_valid_deterministic']
    assert r.verdict == 'failed' and 'in place' in r.message and 'split_idx' not in r.fix, r.message
    assert all(torch.equal(x, s) for (x, _), s in zip(items, stored)) # every check's reads undone

def test_torch_loaders_with_workers_are_read_in_process_and_left_with_theirs(one_thread):
    "The recipe's `num_workers=1` (its CUDA kwargs): the checks read in this process and the loaders keep their workers"
    from fastai.learner import Learner
    from fastai.data.core import DataLoaders
    import torch.nn.functional as F
    xt, yt, xv, yv = _digits()
    dls = DataLoaders(tud.DataLoader(tud.TensorDataset(xt, yt), batch_size=64, shuffle=True, num_workers=1),
                      tud.DataLoader(tud.TensorDataset(xv, yv), batch_size=128, shuffle=True, num_workers=1))
    before = _loader_vars(dls)
    report = _run(Learner(dls, mnist_net(), loss_func=F.cross_entropy))
    assert not report.errors and not [r for r in report if r.verdict in FINDINGS], {r.name: r.message for r in report if r.verdict != 'passed'}
    _same_vars(before, _loader_vars(dls))
    assert [dl.num_workers for dl in dls.loaders] == [1, 1]
