"FreezeBNStats on real fastai Learners: vision_learner(resnet18), fine_tune, lr_find, every kind of norm layer, export, DDP-like wrapping."
import tempfile, warnings
import pytest, torch
from torch import nn
from fastai.callback.core import Callback
from fastai.callback.training import BnFreeze
from fastai.callback.schedule import *  # fit_one_cycle, fine_tune, lr_find
from fastai.learner import Learner, load_learner
from fastai.vision.learner import vision_learner
from fastai.vision.models import resnet18
from fastai_paranoid.bn import FreezeBNStats, FreezeBNStatsCallback, BNStatsWarning, EmptyFreezeGuard, norm_stats_snapshot, norm_stats_drift
from fastai_paranoid.core import fingerprint, stat_norm_layers, rng_fingerprint
from fastai_paranoid.fresh import seed_everything
from fastai_paranoid.fixtures import bn_cnn, random_image_dls, digits_dls

pytestmark = pytest.mark.usefixtures('one_thread') # tests/conftest.py

def splitter(m): return [list(m[0].parameters()), list(m[1].parameters())]

class Spy(Callback):
    "Records, per fit, whether any watched layer's statistics differed from their value at before_fit, checked after every batch"
    order = 200
    def __init__(self, layers): self.layers, self.fits, self.fps_after_fit = layers, [], []
    def before_fit(self): self.snap, self.moved = norm_stats_snapshot(self.layers), False
    def after_batch(self):
        if self.training: self.moved |= any(r['verdict'] == 'moved' for r in norm_stats_drift(self.snap))
    def after_fit(self):
        self.fits.append(self.moved)
        self.fps_after_fit.append([fingerprint(b) for m in self.layers for b in m.buffers()])

def run_quiet(learn, fn):
    with learn.no_bar(), learn.no_logging(), warnings.catch_warnings():
        warnings.simplefilter('ignore', BNStatsWarning)
        fn()

def resnet_learner(cbs=()):
    torch.manual_seed(0)
    dls = random_image_dls(n_train=32, n_valid=16, size=32, c_in=3, bs=16, shift=1.0)
    return vision_learner(dls, resnet18, pretrained=False, loss_func=nn.CrossEntropyLoss(), n_out=4, cbs=list(cbs))

@pytest.mark.slow
@pytest.mark.parametrize('with_cb', [True, False])
def test_resnet18_trunk_bn_held_across_fit_one_cycle_lr_find_and_fine_tune(with_cb, tmp_path):
    learn = resnet_learner([FreezeBNStats()] if with_cb else [])
    learn.path = tmp_path
    trunk_bns = stat_norm_layers(learn.model[0])
    head_bns = stat_norm_layers(learn.model[1])
    assert len(trunk_bns) == 20 and len(head_bns) == 2
    spy = Spy(trunk_bns)
    learn.add_cb(spy)
    learn.freeze()
    before = [fingerprint(b) for m in trunk_bns for b in m.buffers()]
    head_before = [fingerprint(b) for m in head_bns for b in m.buffers()]
    run_quiet(learn, lambda: learn.fit_one_cycle(1, 1e-3))
    run_quiet(learn, lambda: learn.lr_find(num_it=6, show_plot=False))
    run_quiet(learn, lambda: learn.fine_tune(1, 1e-3))   # freeze, fit (frozen phase), unfreeze, fit
    # fits: fit_one_cycle, lr_find, fine_tune's frozen phase, fine_tune's unfrozen phase
    assert len(spy.fits) == 4
    # across the three frozen fits, from the start to the end of fine_tune's frozen phase
    assert (spy.fps_after_fit[2] == before) == with_cb
    if with_cb:
        assert spy.fits[:3] == [False, False, False]
        assert spy.fits[3], "unfrozen phase: nothing frozen, statistics train as usual"
    else:
        assert spy.fits[:3] == [True, True, True]
    assert [fingerprint(b) for m in head_bns for b in m.buffers()] != head_before, "the head's BN is not frozen and trains"

@pytest.mark.slow
def test_resnet18_drift_table_and_unfrozen_phase_is_silent():
    learn = resnet_learner([FreezeBNStats()])
    learn.freeze()
    with learn.no_bar(), learn.no_logging(): learn.fit(1, 1e-3)
    drift = learn.freeze_bn_stats.drift
    assert len(drift) == 20 and all(r['verdict'] == 'held' and r['running_mean'] == 0 and r['batches_tracked'] == 0 for r in drift)
    assert drift[0]['layer'] == 'model.0.1 (BatchNorm2d)'
    learn.unfreeze()   # fine_tune's unfrozen phase: nothing to hold, by plan, so no warning
    with learn.no_bar(), learn.no_logging(), warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter('always')
        learn.fit(1, 1e-3)
    assert not [w for w in rec if w.category is BNStatsWarning]
    never_frozen = resnet_learner([FreezeBNStats()])   # attached to a model nothing ever freezes: said once
    with never_frozen.no_bar(), never_frozen.no_logging(), pytest.warns(BNStatsWarning, match='nothing in learn.model is frozen') as rec:
        never_frozen.fit(1, 1e-3)
        never_frozen.fit(1, 1e-3)
    assert len([w for w in rec if w.category is BNStatsWarning]) == 1

def test_bnfreeze_holds_nothing_with_train_bn_but_freezebnstats_does():
    for cb, expect_moved in ((BnFreeze(), True), (FreezeBNStats(), False)):
        learn = Learner(random_image_dls(shift=2.0), bn_cnn(), loss_func=nn.CrossEntropyLoss(), splitter=splitter, cbs=cb)
        learn.freeze()
        snap = norm_stats_snapshot(learn.model)
        with learn.no_bar(), learn.no_logging(): learn.fit(1, 1e-3)
        assert all((r['verdict'] == 'moved') == expect_moved for r in norm_stats_drift(snap)), type(cb).__name__

def test_alias():
    assert FreezeBNStatsCallback is FreezeBNStats
    assert FreezeBNStats.__doc__ and FreezeBNStats().name == 'freeze_bn_stats'

NORMS = {
    'BatchNorm1d': lambda: (nn.Sequential(nn.Flatten(), nn.Linear(16, 6), nn.BatchNorm1d(6)), 6),
    'BatchNorm2d affine=False': lambda: (nn.Sequential(nn.Conv2d(1, 3, 3, padding=1), nn.BatchNorm2d(3, affine=False), nn.AdaptiveAvgPool2d(1), nn.Flatten()), 3),
    'BatchNorm3d': lambda: (nn.Sequential(nn.Unflatten(1, (1, 1)), nn.Conv3d(1, 2, 3, padding=1), nn.BatchNorm3d(2), nn.AdaptiveAvgPool3d(1), nn.Flatten()), 2),
    'LazyBatchNorm2d': lambda: (nn.Sequential(nn.Conv2d(1, 3, 3, padding=1), nn.LazyBatchNorm2d(), nn.AdaptiveAvgPool2d(1), nn.Flatten()), 3),
    'SyncBatchNorm': lambda: (nn.Sequential(nn.Conv2d(1, 3, 3, padding=1), nn.SyncBatchNorm(3), nn.AdaptiveAvgPool2d(1), nn.Flatten()), 3),
    'InstanceNorm2d tracked': lambda: (nn.Sequential(nn.Conv2d(1, 3, 3, padding=1), nn.InstanceNorm2d(3, affine=True, track_running_stats=True), nn.AdaptiveAvgPool2d(1), nn.Flatten()), 3),
    'BatchNorm momentum=None': lambda: (nn.Sequential(nn.Conv2d(1, 3, 3, padding=1), nn.BatchNorm2d(3, momentum=None), nn.AdaptiveAvgPool2d(1), nn.Flatten()), 3),
}

def norm_model(kind):
    trunk, n = NORMS[kind]()
    return nn.Sequential(trunk, nn.Linear(n, 4))

def norm_dls(kind):
    return random_image_dls(n_train=32, n_valid=16, size=4, shift=2.0, bs=8)

@pytest.mark.parametrize('kind', list(NORMS))
@pytest.mark.parametrize('freeze_how', ['learn.freeze', 'requires_grad', 'modules'])
def test_every_norm_kind_held_and_moves_without(kind, freeze_how):
    results = {}
    for with_cb in (True, False):
        torch.manual_seed(0)
        model = norm_model(kind)
        model(torch.randn(2, 1, 4, 4))   # initializes the lazy layer's buffers (training mode: statistics move once)
        cbs = [FreezeBNStats(modules='0' if freeze_how == 'modules' else None)] if with_cb else []
        learn = Learner(norm_dls(kind), model, loss_func=nn.CrossEntropyLoss(), splitter=splitter, cbs=cbs)
        if freeze_how == 'learn.freeze': learn.freeze()
        if freeze_how == 'requires_grad':
            for p in model[0].parameters(): p.requires_grad_(False)
        layers = stat_norm_layers(model)
        assert len(layers) == 1, kind
        snap = norm_stats_snapshot(layers)
        with learn.no_bar(), learn.no_logging(): learn.fit(2, 1e-2)
        results[with_cb] = norm_stats_drift(snap)[0]['verdict']
    assert results == {True: 'held', False: 'moved'}, (kind, freeze_how, results)

def test_user_between_fits_and_train_calls_from_callbacks():
    class TrainAgain(Callback):
        order = 99
        def before_fit(self): self.learn.model.train()
        def before_epoch(self): self.learn.model.train()
        def before_train(self): self.learn.model.train()
        def before_batch(self): self.learn.model.train()
    learn = Learner(random_image_dls(shift=2.0), bn_cnn(), loss_func=nn.CrossEntropyLoss(), splitter=splitter,
                    cbs=[FreezeBNStats(), TrainAgain()])
    learn.freeze()
    snap = norm_stats_snapshot(learn.model)
    for _ in range(2):
        learn.model.train()
        with learn.no_bar(), learn.no_logging(): learn.fit(1, 1e-3)
    assert [r['verdict'] for r in norm_stats_drift(snap)] == ['held', 'held']

def test_moved_anyway_warns_with_layer_and_numbers():
    class TrainAfterHold(Callback):
        "A training-mode forward FreezeBNStats cannot see: train() in after_pred, then a second forward"
        order = 150
        def after_pred(self):
            if self.training:
                self.learn.model.train()
                self.learn.model(*self.learn.xb)
    learn = Learner(random_image_dls(shift=2.0), bn_cnn(), loss_func=nn.CrossEntropyLoss(), splitter=splitter,
                    cbs=[FreezeBNStats(), TrainAfterHold()])
    learn.freeze()
    with learn.no_bar(), learn.no_logging(), pytest.warns(BNStatsWarning, match=r'2 held layer\(s\) moved during fit, first model.0.1 \(BatchNorm2d\): running_mean by'):
        learn.fit(1, 1e-3)
    assert [r['verdict'] for r in learn.freeze_bn_stats.drift] == ['moved', 'moved']

def test_no_warning_when_healthy_and_the_fit_is_otherwise_identical():
    "A healthy frozen fit raises no warning at all and is bitwise reproducible"
    def run(cbs):
        seed_everything(0)
        learn = Learner(random_image_dls(shift=2.0, seed=1), bn_cnn(), loss_func=nn.CrossEntropyLoss(), splitter=splitter, cbs=cbs)
        learn.freeze()
        with learn.no_bar(), learn.no_logging(), warnings.catch_warnings():
            warnings.simplefilter('error')
            learn.fit(2, 1e-3)
        return learn
    a, b = run([FreezeBNStats()]), run([FreezeBNStats()])
    assert all(torch.equal(x, y) for x, y in zip(a.model.state_dict().values(), b.model.state_dict().values()))
    assert a.recorder.losses == b.recorder.losses

def test_callback_draws_no_random_numbers():
    learn = Learner(random_image_dls(shift=2.0), bn_cnn(), loss_func=nn.CrossEntropyLoss(), splitter=splitter)
    learn.freeze()
    cb = FreezeBNStats()
    cb.learn = learn
    before = rng_fingerprint(learn.dls)
    cb.before_fit(); cb.before_batch(); cb.after_fit()
    assert rng_fingerprint(learn.dls) == before

def test_after_fit_restores_mode_and_drops_references():
    learn = Learner(random_image_dls(shift=2.0), bn_cnn(), loss_func=nn.CrossEntropyLoss(), splitter=splitter, cbs=FreezeBNStats())
    learn.freeze()
    with learn.no_bar(), learn.no_logging(): learn.fit(1, 1e-3)
    assert all(m.training == learn.model.training for m in learn.model.modules())
    assert learn.freeze_bn_stats._held == [] and learn.freeze_bn_stats._snapshot is None

@pytest.mark.slow
def test_export_and_load_learner_vision(tmp_path):
    from fastai.data.all import Datasets, ItemGetter
    g = torch.Generator().manual_seed(0)
    x, y = torch.randn(24, 3, 32, 32, generator=g), torch.randint(0, 4, (24,), generator=g)
    dls = Datasets(list(zip(x, y)), tfms=[[ItemGetter(0)], [ItemGetter(1)]], splits=[list(range(16)), list(range(16, 24))]).dataloaders(bs=8)
    learn = vision_learner(dls, resnet18, pretrained=False, loss_func=nn.CrossEntropyLoss(), n_out=4, cbs=FreezeBNStats(), path=tmp_path)
    learn.freeze()
    with learn.no_bar(), learn.no_logging(): learn.fit(1, 1e-3)
    learn.export('export.pkl')
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        loaded = load_learner(tmp_path / 'export.pkl')
    assert not any(m._forward_hooks or m._forward_pre_hooks or 'train' in vars(m) or 'forward' in vars(m) for m in loaded.model.modules())
    assert not any(isinstance(cb, FreezeBNStats) for cb in loaded.cbs) # exports leave the guards out (fastai_paranoid.deploy)
    assert type(learn.freeze_bn_stats) is FreezeBNStats and learn.freeze_bn_stats._held == [] # the live Learner keeps it
    for a, b in zip(learn.model.state_dict().values(), loaded.model.state_dict().values()): assert torch.equal(a, b)
    # removing the callback restores normal behaviour: statistics move again
    learn.remove_cb(learn.freeze_bn_stats)
    snap = norm_stats_snapshot(learn.model[0])
    with learn.no_bar(), learn.no_logging(): learn.fit(1, 1e-3)
    assert all(r['verdict'] == 'moved' for r in norm_stats_drift(snap))

class Wrapper(nn.Module):
    "Stands in for DistributedDataParallel: the model as `.module`, its BN converted to SyncBatchNorm"
    def __init__(self, module):
        super().__init__()
        self.module = module
    def forward(self, *x): return self.module(*x)

class FakeDistributed(Callback):
    order = 11
    def before_fit(self): self.learn.model = Wrapper(nn.SyncBatchNorm.convert_sync_batchnorm(self.learn.model))
    def after_fit(self): self.learn.model = self.learn.model.module

@pytest.mark.parametrize('modules', [None, '0', 'module.0'])
def test_resolves_after_the_model_is_wrapped_in_before_fit(modules):
    learn = Learner(random_image_dls(shift=2.0), bn_cnn(), loss_func=nn.CrossEntropyLoss(), splitter=splitter,
                    cbs=[FreezeBNStats(modules=modules), FakeDistributed()])
    learn.freeze()
    with learn.no_bar(), learn.no_logging(): learn.fit(1, 1e-3)
    sync = [m for m in learn.model.modules() if isinstance(m, nn.SyncBatchNorm)]
    assert len(sync) == 2
    drift = learn.freeze_bn_stats.drift
    assert [r['verdict'] for r in drift] == ['held', 'held']
    assert drift[0]['layer'] == 'model.0.1 (SyncBatchNorm)'   # named at after_fit, once the wrapper is gone

def _mlp_learner(**kw):
    "torchtest2 bug 6's Learner: a trunk-and-head MLP (model[0] the body, model[1] the head)"
    from fastai_paranoid.fixtures import xor_dls
    torch.manual_seed(0)
    model = nn.Sequential(nn.Sequential(nn.Linear(2, 16), nn.ReLU()), nn.Linear(16, 2))
    return Learner(xor_dls(n_valid=64), model, loss_func=nn.CrossEntropyLoss(), **kw)

def _empty_freeze_findings(fn):
    from fastai_paranoid.bn import EmptyFreezeWarning
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter('always')
        fn()
    return [x.message.finding for x in w if issubclass(x.category, EmptyFreezeWarning)]

def test_users_empty_freeze_is_a_warning_under_paranoid_and_fastai_freeze_to_comes_back():
    "torchtest2 bug 6: learn.freeze() on a one-group Learner, then fit -- a certain warning; with a splitter, silent; and the freeze_to wrapper leaves with the guards"
    import gc
    from fastai_paranoid.paranoid import paranoid
    from fastai_paranoid.bn import freeze_calls
    gc.collect()
    fastai_freeze_to = freeze_calls.original or Learner.__dict__['freeze_to']
    with paranoid(guards=[EmptyFreezeGuard]):
        learn = _mlp_learner()
        learn.freeze()
        with learn.no_bar(), learn.no_logging(): found = _empty_freeze_findings(lambda: (learn.fit(1), learn.fit(1)))
        assert [(f.level, f.claim) for f in found] == [('warning', 'certain')], found
        assert '1 parameter group' in found[0].evidence and 'splitter=' in found[0].fix and 'test_bn.py' in found[0].evidence
        twin = _mlp_learner(splitter=lambda m: [list(m[0].parameters()), list(m[1].parameters())])
        twin.freeze()
        with twin.no_bar(), twin.no_logging(): assert _empty_freeze_findings(lambda: twin.fit(1)) == []
        assert not any(p.requires_grad for p in twin.model[0].parameters()) # fastai's freeze ran as always
        assert Learner.__dict__['freeze_to'] is not fastai_freeze_to
    del learn, twin
    gc.collect()
    assert Learner.__dict__['freeze_to'] is fastai_freeze_to, "paranoid(False) removed the guards, so fastai's freeze_to must be back"

def test_fine_tune_one_group_is_a_note_and_the_users_unfreeze_is_silent():
    from fastai_paranoid.bn import EmptyFreezeGuard
    learn = _mlp_learner(cbs=EmptyFreezeGuard())
    with learn.no_bar(), learn.no_logging():
        assert [f.level for f in _empty_freeze_findings(lambda: learn.fine_tune(1))] == ['info']
        assert _empty_freeze_findings(lambda: (learn.freeze(), learn.unfreeze(), learn.fit(1))) == []
        assert _empty_freeze_findings(lambda: (learn.freeze(), learn.fit(1)))[0].level == 'warning'
