"`folds`: fold_splits, shared_items on every kind of dataset, and kfold_learners' guards, each both ways."
import warnings
import numpy as np
import pandas as pd
import pytest
import torch
from torch import nn
from fastai.basics import accuracy, Datasets, DataLoaders
from fastai.metrics import Precision
import fastai.callback.progress  # Learner.no_bar
from fastai_paranoid.core import ParanoidWarning, ParanoidError, finding_sink
from fastai_paranoid.fixtures import tensor_dls, make_xor_data, build_mlp
from fastai_paranoid.folds import fold_splits, shared_items, kfold_learners, FoldWarning, FoldLeakError

warnings.filterwarnings('ignore', message='`torch.jit.script` is deprecated')

X, Y = make_xor_data(120, np.random.default_rng(0))


def healthy_dls(train_idx, valid_idx):
    tr = np.concatenate([train_idx, train_idx])          # oversampling inside the fold's training indices
    return tensor_dls(X[tr], Y[tr], X[valid_idx], Y[valid_idx], bs=16)


XD, YD = torch.cat([X, X]), torch.cat([Y, Y])            # oversampled before the split


def leaky_dls(train_idx, valid_idx):
    return tensor_dls(XD[train_idx], YD[train_idx], XD[valid_idx], YD[valid_idx], bs=16)


def kw(**kwargs): return dict(loss_func=nn.CrossEntropyLoss(), **kwargs)


# --- fold_splits -------------------------------------------------------------------------------

@pytest.mark.parametrize('n,k', [(10, 2), (11, 3), (50, 5), (7, 7)])
def test_fold_splits_partition_the_items(n, k):
    splits = fold_splits(n, n_splits=k)
    assert len(splits) == k
    assert sorted(np.concatenate([va for _, va in splits]).tolist()) == list(range(n))
    for tr, va in splits:
        assert not set(tr) & set(va) and len(tr) + len(va) == n


def test_fold_splits_stratify_labels_of_any_type():
    labels = [0] * 40 + [1] * 10 + [2] * 20
    for given in (labels, np.array(labels), torch.tensor(labels), [str(l) for l in labels]):
        for tr, va in fold_splits(given, n_splits=5):
            assert np.bincount(np.array(labels)[va]).tolist() == [8, 2, 4]


def test_fold_splits_are_seeded():
    same = [va.tolist() for _, va in fold_splits(30, seed=3)]
    assert same == [va.tolist() for _, va in fold_splits(30, seed=3)]
    assert same != [va.tolist() for _, va in fold_splits(30, seed=4)]
    assert [va.tolist() for _, va in fold_splits(30, seed=3)] != [list(range(i * 6, i * 6 + 6)) for i in range(5)]


def test_fold_splits_plain_kfold_with_labels():
    labels = [0] * 45 + [1] * 5
    counts = [np.bincount(np.array(labels)[va], minlength=2)[1] for _, va in fold_splits(labels, n_splits=5, stratified=False, seed=1)]
    assert sum(counts) == 5


def test_fold_splits_errors():
    with pytest.raises(ValueError, match='needs the labels'): fold_splits(10, stratified=True)
    with pytest.raises(ValueError, match='rarest class has 2'): fold_splits([0] * 10 + [1] * 2, n_splits=3)
    with pytest.raises(ValueError, match='n_splits=1'): fold_splits(10, n_splits=1)
    with pytest.raises(ValueError, match='1-d'): fold_splits(torch.zeros(4, 2))


# --- shared_items --------------------------------------------------------------------------------

def test_shared_items_counts_planted_copies_exactly():
    dls = tensor_dls(X[:80], Y[:80], torch.cat([X[80:], X[[3, 7, 7]]]), torch.cat([Y[80:], Y[[3, 7, 7]]]))
    assert shared_items(dls).tolist() == [40, 41, 42]
    assert len(shared_items(tensor_dls(X[:80], Y[:80], X[80:], Y[80:]))) == 0


def test_shared_items_ignores_labels_and_sees_one_ulp():
    x_valid = X[:5].clone()
    x_valid[0, 0] = torch.nextafter(x_valid[0, 0], torch.tensor(10.))
    dls = tensor_dls(X[:60], Y[:60], x_valid, 1 - Y[:5])
    assert shared_items(dls).tolist() == [1, 2, 3, 4]


def test_shared_items_on_fastai_datasets_of_paths():
    items = [f'img_{i}.png' for i in range(20)] + ['img_3.png', 'img_4.png']
    dsets = Datasets(items, [[lambda o: 0.0], [lambda o: 0]], splits=[list(range(15)), list(range(15, 22))])
    dls = DataLoaders.from_dsets(dsets.train, dsets.valid, bs=4)
    assert shared_items(dls).tolist() == [5, 6]


def test_shared_items_on_tabular_rows():
    from fastai.tabular.all import TabularDataLoaders
    rng = np.random.default_rng(0)
    df = pd.DataFrame({'a': rng.normal(size=60), 'b': rng.normal(size=60), 'y': rng.integers(0, 2, 60)})
    df = pd.concat([df, df.iloc[[0, 1]]], ignore_index=True)        # rows 60, 61 copy rows 0, 1
    dls = TabularDataLoaders.from_df(df, cont_names=['a', 'b'], y_names='y', bs=8, valid_idx=list(range(50, 62)))
    assert shared_items(dls).tolist() == [10, 11]


def test_shared_items_on_a_plain_torch_dataset():
    class Pairs(torch.utils.data.Dataset):
        def __init__(self, x): self.x = x
        def __len__(self): return len(self.x)
        def __getitem__(self, i): return self.x[i], 0
    from fastai.data.load import DataLoader
    dls = DataLoaders(DataLoader(Pairs(X[:50]), bs=8), DataLoader(Pairs(X[[1, 60]]), bs=8))
    assert shared_items(dls).tolist() == [0]


# --- kfold_learners ------------------------------------------------------------------------------

def test_kfold_learners_build_each_fold_from_its_own_indices():
    seen = []
    def dls_fn(train_idx, valid_idx):
        seen.append((train_idx, valid_idx))
        return healthy_dls(train_idx, valid_idx)
    folds = list(kfold_learners(Y, dls_fn, build_mlp, n_splits=4, **kw()))
    assert [f for f, _ in folds] == [0, 1, 2, 3]
    assert [(tr.tolist(), va.tolist()) for tr, va in seen] == [(tr.tolist(), va.tolist()) for tr, va in fold_splits(Y, 4)]
    for (fold, learn), (tr, va) in zip(folds, seen):
        assert learn.paranoid_fold['fold'] == fold and learn.paranoid_fold['valid_idx'] is va
        assert torch.equal(learn.dls.valid_ds.tensors[0], X[va])


def test_kfold_learners_share_nothing_and_share_the_seed():
    metric = Precision()
    learners = [learn for _, learn in kfold_learners(Y, healthy_dls, build_mlp, n_splits=3, seed=5, **kw(metrics=[accuracy, metric]))]
    a, b = learners[0], learners[1]
    assert a.model is not b.model and a.dls is not b.dls
    assert not {id(p) for p in a.model.parameters()} & {id(p) for p in b.model.parameters()}
    assert a.metrics[1] is not b.metrics[1] and a.metrics[1] is not metric
    assert torch.equal(a.model[0].weight, b.model[0].weight)
    assert all(l.paranoid_seed == 5 for l in learners)


def test_healthy_folds_are_silent():
    with warnings.catch_warnings():
        warnings.simplefilter('error', ParanoidWarning)
        for _, learn in kfold_learners(Y, healthy_dls, build_mlp, n_splits=3, on_finding='raise', **kw()):
            with learn.no_bar(), learn.no_logging(): learn.fit(1, 1e-2)


def test_oversample_then_split_warns_on_every_fold_with_the_count():
    with pytest.warns(FoldWarning) as caught:
        folds = list(kfold_learners(YD, leaky_dls, build_mlp, n_splits=4, **kw()))
    found = [w.message.finding for w in caught if issubclass(w.category, FoldWarning)]
    assert [(f.kind, f.level) for f in found] == [('fold_overlap', 'error')] * 4
    messages = [f.message for f in found]
    for (fold, learn), msg in zip(folds, messages):
        n = len(shared_items(learn.dls))
        assert n > 0 and msg.startswith(f"fold {fold}: {n} of 60 validation items")
        assert 'Split first, then oversample' in msg


def test_on_finding_raise_stops_before_training():
    gen = kfold_learners(YD, leaky_dls, build_mlp, n_splits=4, on_finding='raise', **kw())
    with pytest.raises(FoldLeakError, match='fold 0:') as e: next(gen)
    assert isinstance(e.value, ParanoidError)


def test_on_finding_ignore_is_silent():
    with warnings.catch_warnings():
        warnings.simplefilter('error', FoldWarning)
        assert len(list(kfold_learners(YD, leaky_dls, build_mlp, n_splits=2, on_finding=None, **kw()))) == 2


def test_dls_fn_that_ignores_its_indices_is_caught():
    with pytest.warns(FoldWarning, match='validation set of 40 items for 60 validation indices'):
        next(kfold_learners(len(X), lambda tr, va: tensor_dls(X[:80], Y[:80], X[80:], Y[80:]), build_mlp, n_splits=2,
                            on_finding=None, **kw()))


def test_kfold_learners_refuses_bad_input():
    with pytest.raises(ValueError, match="not one of 'warn', 'raise', 'log' or None"): next(kfold_learners(Y, healthy_dls, build_mlp, on_finding=True))
    with pytest.raises(TypeError, match='dls_fn must be a function'): next(kfold_learners(Y, build_mlp(), build_mlp))
    with pytest.raises(TypeError, match='`model_fn` is a model'): next(kfold_learners(Y, healthy_dls, build_mlp(), **kw()))


def test_fold_findings_reach_a_finding_sink_whatever_the_warnings_filters():
    found = []
    with finding_sink(lambda f: found.append((f.category, f.message[:7]))), warnings.catch_warnings():
        warnings.simplefilter('ignore')
        list(kfold_learners(YD, leaky_dls, build_mlp, n_splits=2, **kw()))
        next(kfold_learners(len(X), lambda tr, va: tensor_dls(X[:80], Y[:80], X[80:], Y[80:]), build_mlp, n_splits=2,
                            on_finding=None, **kw()))
    assert found == [(FoldWarning, 'fold 0:'), (FoldWarning, 'fold 1:'), (FoldWarning, 'fold 0:')]
    found.clear()
    with finding_sink(lambda f: found.append(f.category)), pytest.raises(FoldLeakError, match='fold 0:'):
        next(kfold_learners(YD, leaky_dls, build_mlp, n_splits=4, on_finding='raise', **kw()))
    assert found == [FoldWarning], "a raised finding is recorded too"
    found.clear()
    with finding_sink(lambda f: found.append(f.category)):
        list(kfold_learners(Y, healthy_dls, build_mlp, n_splits=3, on_finding='raise', **kw()))
    assert found == [], "healthy folds report nothing"
