"14_fitchecks under paranoid(): the four guards are installed and removed with the others, `load_model`'s wrapper comes and goes with them, healthy fastai workflows (fine_tune on a vision_learner, tabular, collab, lr_find, SaveModelCallback, a fastai DataLoader that shuffles, WeightedDL) are silent, and a fit trains to the same weights with the guards as without."
import tempfile, warnings
from pathlib import Path
import pytest
import torch
from torch import nn
import fastai.learner
from fastai.learner import Learner
import fastai.callback.schedule # lr_find, fine_tune; learn.no_bar
from fastai.callback.tracker import SaveModelCallback
from fastai.torch_core import set_seed
from fastai_paranoid.core import finding_sink, fingerprints
from fastai_paranoid.fixtures import xor_dls, build_mlp, digits_dls, bn_cnn
from fastai_paranoid.paranoid import paranoid, PARANOID_GUARDS
from fastai_paranoid import fitchecks
from fastai_paranoid.fitchecks import FITCHECK_GUARDS, LossShapeGuard, FrozenHeadGuard, LoadGuard, DataOrderGuard

def quietly(fn):
    "Run `fn()` with warnings off; the findings emitted meanwhile"
    found = []
    with finding_sink(found.append), warnings.catch_warnings():
        warnings.simplefilter('ignore')
        fn()
    return found

def fit(learn, n=1, lr=1e-2):
    with learn.no_bar(), learn.no_logging(): learn.fit(n, lr)

def test_paranoid_installs_and_removes_the_fit_guards():
    assert fitchecks.FitGuards in PARANOID_GUARDS and fitchecks.LoadGuard not in PARANOID_GUARDS # held by the FitGuards
    assert all(g in fitchecks.DISPATCHED_GUARDS for g in FITCHECK_GUARDS + fitchecks.LOOP_GUARDS)
    fastai_fn = fitchecks._fastai_load_model.get('load_model', fastai.learner.load_model)
    with paranoid():
        learn = Learner(xor_dls(), build_mlp(), loss_func=nn.CrossEntropyLoss())
        held = [cb for cb in learn.cbs if not isinstance(cb, fitchecks.FitGuards)] + learn.fit_guards.guards # one FitGuards holds the loop's guards
        assert all(sum(isinstance(cb, g) for cb in held) == 1 for g in FITCHECK_GUARDS + fitchecks.LOOP_GUARDS)
        assert fastai.learner.load_model is fitchecks._load_model
    assert not any(isinstance(cb, tuple(FITCHECK_GUARDS) + (fitchecks.FitGuards,)) for cb in learn.cbs)
    assert fastai.learner.load_model is fastai_fn

def test_ddp_prefixed_strict_false_load_is_an_error_under_paranoid(tmp_path):
    with paranoid():
        learn = Learner(xor_dls(), build_mlp(), loss_func=nn.CrossEntropyLoss(), path=tmp_path)
        (tmp_path/'models').mkdir()
        torch.save({'module.' + k: v for k, v in learn.model.state_dict().items()}, tmp_path/'models'/'ddp.pth')
        found = quietly(lambda: learn.load('ddp', strict=False, with_opt=False))
    assert [(f.kind, f.level) for f in found] == [('load_strict_false', 'error')]

def weights_after(cbs, seed=0):
    set_seed(seed)
    learn = Learner(digits_dls(bs=64), bn_cnn(n_out=10, size=8), loss_func=nn.CrossEntropyLoss(), cbs=cbs)
    quietly(lambda: fit(learn, 2))
    return fingerprints(list(learn.model.state_dict().values()))

def test_the_guards_leave_the_fit_as_it_was():
    assert weights_after([]) == weights_after([g() for g in FITCHECK_GUARDS])

def healthy_vision_fine_tune(tmp):
    from fastai.vision.all import vision_learner, resnet18, accuracy
    from fastai_paranoid.fixtures import random_image_dls
    learn = vision_learner(random_image_dls(n_train=64, n_valid=32, size=32, c_in=3), resnet18, pretrained=False, n_out=4, loss_func=nn.CrossEntropyLoss(), metrics=accuracy, path=tmp)
    with learn.no_bar(), learn.no_logging():
        learn.lr_find(num_it=10, show_plot=False)
        learn.fine_tune(1, 1e-3, cbs=SaveModelCallback(fname='best'))
    learn.load('best', strict=False)

def healthy_tabular(tmp):
    import numpy as np, pandas as pd
    from fastai.tabular.all import TabularDataLoaders, tabular_learner, Categorify, Normalize, accuracy
    rng = np.random.default_rng(0)
    df = pd.DataFrame({'a': rng.choice(['x', 'y', 'z'], 300), 'b': rng.normal(size=300)})
    df['t'] = (df.b > 0).astype(int).astype(str)
    dls = TabularDataLoaders.from_df(df, y_names='t', cat_names=['a'], cont_names=['b'], procs=[Categorify, Normalize], bs=32)
    fit(tabular_learner(dls, metrics=accuracy, path=tmp), 2)

def healthy_collab(tmp):
    import numpy as np, pandas as pd
    from fastai.collab import CollabDataLoaders, collab_learner
    rng = np.random.default_rng(0)
    df = pd.DataFrame({'user': rng.integers(0, 30, 400), 'item': rng.integers(0, 30, 400), 'rating': rng.uniform(1, 5, 400).astype('float32')})
    fit(collab_learner(CollabDataLoaders.from_df(df.drop_duplicates(['user', 'item']), bs=32), n_factors=8, y_range=(0.5, 5.5), path=tmp), 2)

def healthy_weighted_dl(tmp):
    from fastai.callback.data import WeightedDL
    from fastai.data.core import DataLoaders, Datasets
    x = torch.randn(200, 2)
    y = torch.cat([torch.zeros(150), torch.ones(50)]).long()   # stored by class; WeightedDL samples at random (with shuffle=True, as
    # `weighted_dataloaders` builds it; without it, WeightedDL serves the items in order and weighs nothing: the guard says so)
    items = list(zip(x, y))
    dls = DataLoaders(WeightedDL(items, wgts=[1.] * 150 + [3.] * 50, bs=32, shuffle=True), fastai.data.load.DataLoader(items, bs=32))
    fit(Learner(dls, build_mlp(), loss_func=nn.CrossEntropyLoss(), path=tmp), 2)

def healthy_sorted_fastai_dl(tmp):
    "A fastai DataLoader with shuffle=True over data stored class by class"
    from fastai.data.core import DataLoaders
    from fastai.data.load import DataLoader
    x, y = torch.randn(256, 2), torch.arange(256) // 128
    items = list(zip(x, y))
    fit(Learner(DataLoaders(DataLoader(items, bs=32, shuffle=True), DataLoader(items[:64], bs=32)), build_mlp(), loss_func=nn.CrossEntropyLoss(), path=tmp), 2)

@pytest.mark.slow
@pytest.mark.parametrize('workflow', [healthy_vision_fine_tune, healthy_tabular, healthy_collab, healthy_weighted_dl, healthy_sorted_fastai_dl])
def test_healthy_workflow_is_silent_under_paranoid(workflow, tmp_path):
    set_seed(0)
    with paranoid(guards=FITCHECK_GUARDS): found = quietly(lambda: workflow(tmp_path))
    assert found == [], [str(f) for f in found]

def test_weighted_dl_without_shuffle_serves_the_items_in_order_and_is_caught(tmp_path):
    "fastai's WeightedDL samples by its weights only when shuffle=True (`weighted_dataloaders` sets it for training); built by hand without it, it serves the items in their stored order"
    from fastai.callback.data import WeightedDL
    from fastai.data.core import DataLoaders
    from fastai.data.load import DataLoader
    x, y = torch.randn(200, 2), torch.cat([torch.zeros(150), torch.ones(50)]).long()
    items = list(zip(x, y))
    learn = Learner(DataLoaders(WeightedDL(items, wgts=[1.] * 150 + [3.] * 50, bs=32), DataLoader(items, bs=32)), build_mlp(),
                    loss_func=nn.CrossEntropyLoss(), cbs=DataOrderGuard(), path=tmp_path)
    found = quietly(lambda: fit(learn, 2))
    assert [(f.kind, f.level, f.path) for f in found] == [('unshuffled_training_data', 'error', 'dls.train (WeightedDL)')]
