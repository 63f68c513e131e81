"Fine-tune presets on real Learners: the fastai freeze case, vision_learner, fit/fit_one_cycle/fine_tune/lr_find, export, switching presets."
import warnings
import pytest, torch
from torch import nn
from fastai.callback.core import Callback
from fastai.callback.schedule import *  # fit_one_cycle, fine_tune, lr_find
from fastai.learner import Learner, load_learner
from fastai.vision.learner import vision_learner
from fastai.vision.models import resnet18
from fastai_paranoid.bn import FreezeBNStats, BNStatsWarning
from fastai_paranoid.core import fingerprint, rng_fingerprint
from fastai_paranoid.fixtures import digits_transfer_dls, transfer_model, pretrained_digits_trunk, digits_trunk, random_image_dls
from fastai_paranoid.fresh import fresh_learner
from fastai_paranoid.presets import trunk_and_head, TrunkHeadSplitter, FrozenTrunk, HoldLRRatio

pytestmark = pytest.mark.usefixtures('one_thread') # tests/conftest.py

def state_fps(module): return [fingerprint(t) for t in module.state_dict().values()]

def quietly(learn, fn):
    with learn.no_logging(), warnings.catch_warnings():
        warnings.simplefilter('ignore', BNStatsWarning)
        fn()

def transfer_learner(n=24, **kw):
    return fresh_learner(lambda: digits_transfer_dls(n), lambda: transfer_model(pretrained_digits_trunk()),
                         loss_func=nn.CrossEntropyLoss(), **kw)

def test_fastai_freeze_after_unfrozen_fit_moves_the_trunk_and_linear_probe_does_not():
    "The issue's fastai case, both ways: learn.freeze() after an unfrozen fit lets the trunk move; linear_probe() does not"
    for use_preset in (False, True):
        learn = transfer_learner(200)
        learn.splitter = TrunkHeadSplitter()
        quietly(learn, lambda: learn.fit(1, 1e-3))
        if use_preset: learn.linear_probe(1e-3)
        else: learn.freeze()
        params = [fingerprint(p) for p in learn.model[0].parameters()]
        buffers = [fingerprint(b) for b in learn.model[0].buffers()]
        head = state_fps(learn.model[1])
        quietly(learn, lambda: learn.fit(2, 1e-3))
        assert ([fingerprint(p) for p in learn.model[0].parameters()] == params) == use_preset
        assert ([fingerprint(b) for b in learn.model[0].buffers()] == buffers) == use_preset
        assert state_fps(learn.model[1]) != head

def test_linear_probe_holds_through_fit_one_cycle_fine_tune_lr_find_and_user_unfreeze(tmp_path):
    learn = transfer_learner(path=tmp_path).linear_probe(1e-3)   # lr_find saves the model under learn.path
    trunk = state_fps(learn.model[0])
    quietly(learn, lambda: learn.fit_one_cycle(2, 3e-3))
    quietly(learn, lambda: learn.lr_find(num_it=6, show_plot=False))
    quietly(learn, lambda: learn.fine_tune(1))
    learn.unfreeze()
    quietly(learn, lambda: learn.fit(1, 1e-2))
    assert state_fps(learn.model[0]) == trunk
    assert all(p.grad is None and not p.requires_grad for p in learn.model[0].parameters())
    assert all(not learn.opt.state[p] for p in learn.model[0].parameters())

def test_linear_probe_clears_stale_gradients_and_optimizer_state():
    learn = transfer_learner()
    quietly(learn, lambda: learn.fit(1, 1e-3))
    assert all(p.grad is not None for p in learn.model[0].parameters())
    learn.linear_probe()
    assert all(p.grad is None and not p.requires_grad for p in learn.model[0].parameters())
    assert learn.opt.frozen_idx == 1 and len(learn.opt.param_lists) == 2
    assert all(p.requires_grad for p in learn.model[1].parameters())
    assert learn.paranoid_preset == 'linear probe'

@pytest.mark.slow
def test_linear_probe_on_vision_learner_resnet18():
    torch.manual_seed(0)
    dls = random_image_dls(n_train=32, n_valid=16, size=32, c_in=3, bs=16, shift=1.0)
    learn = vision_learner(dls, resnet18, pretrained=False, loss_func=nn.CrossEntropyLoss(), n_out=4).linear_probe(1e-3)
    body, head = trunk_and_head(learn.model)
    assert body is learn.model[0] and head is learn.model[1]
    before_body, before_head = state_fps(body), state_fps(head)
    quietly(learn, lambda: learn.fit_one_cycle(1, 1e-3))
    quietly(learn, lambda: learn.fine_tune(1))
    assert state_fps(body) == before_body
    assert state_fps(head) != before_head
    assert [r['verdict'] for r in learn.freeze_bn_stats.drift] == ['held'] * 20

class RatioSpy(Callback):
    order = 200
    def __init__(self): self.ratios = []
    def after_batch(self):
        if self.training: self.ratios.append(self.learn.opt.hypers[1]['lr'] / self.learn.opt.hypers[0]['lr'])

@pytest.mark.parametrize('how', ['fit default', 'fit lr', 'fit_one_cycle', 'lr_find', 'fine_tune'])
def test_discriminative_lr_ratio_holds_on_every_batch(how, tmp_path):
    learn = transfer_learner(path=tmp_path).discriminative_lr(2e-3, ratio=5)
    lrs = [h['lr'] for h in learn.opt.hypers]
    assert lrs == pytest.approx([4e-4, 2e-3])
    spy = RatioSpy()
    learn.add_cb(spy)
    run = {'fit default': lambda: learn.fit(2), 'fit lr': lambda: learn.fit(2, 1e-2),
           'fit_one_cycle': lambda: learn.fit_one_cycle(2, 1e-3), 'lr_find': lambda: learn.lr_find(num_it=6, show_plot=False),
           'fine_tune': lambda: learn.fine_tune(1)}[how]
    quietly(learn, run)
    assert spy.ratios and all(r == pytest.approx(5) for r in spy.ratios)
    if how == 'fit lr': assert learn.opt.hypers[1]['lr'] == pytest.approx(1e-2)

def test_discriminative_lr_trains_everything():
    learn = transfer_learner().discriminative_lr(1e-3)
    before = state_fps(learn.model)
    quietly(learn, lambda: learn.fit(1))
    after = state_fps(learn.model)
    assert all(a != b for a, b in zip(before, after)), "every parameter and buffer moves, trunk included"
    assert all(p.requires_grad for p in learn.model.parameters())

def test_one_big_lr_and_switching_presets():
    learn = transfer_learner().linear_probe()
    learn.discriminative_lr()
    learn.one_big_lr(1e-2)
    assert [h['lr'] for h in learn.opt.hypers] == [1e-2, 1e-2]
    assert not [cb for cb in learn.cbs if isinstance(cb, (FrozenTrunk, HoldLRRatio, FreezeBNStats))]
    trunk = state_fps(learn.model[0])
    quietly(learn, lambda: learn.fit(1))
    assert state_fps(learn.model[0]) != trunk
    learn.linear_probe()
    assert len([cb for cb in learn.cbs if isinstance(cb, FrozenTrunk)]) == 1
    assert len([cb for cb in learn.cbs if isinstance(cb, FreezeBNStats)]) == 1

def test_user_freezebnstats_survives_preset_switches():
    learn = transfer_learner(cbs=FreezeBNStats())
    user_cb = learn.freeze_bn_stats
    learn.linear_probe()
    learn.one_big_lr()
    assert any(cb is user_cb for cb in learn.cbs)

def test_presets_draw_no_random_numbers():
    learn = transfer_learner()
    before = rng_fingerprint(learn.dls)
    learn.linear_probe(); learn.discriminative_lr(); learn.one_big_lr()
    assert rng_fingerprint(learn.dls) == before

def test_presets_are_one_line_on_fresh_learner_and_reproducible():
    def run(preset):
        learn = getattr(transfer_learner(seed=3), preset)()
        quietly(learn, lambda: learn.fit(2))
        return learn.recorder.values[-1]
    for preset in ('linear_probe', 'discriminative_lr', 'one_big_lr'):
        assert run(preset) == run(preset)

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.features, self.classifier = digits_trunk(), nn.Linear(32, 5)
    def forward(self, x): return self.classifier(self.features(x))

@pytest.mark.parametrize('preset', ['linear_probe', 'discriminative_lr', 'one_big_lr'])
def test_missing_split_says_how_to_give_one(preset):
    learn = Learner(digits_transfer_dls(24), Net(), loss_func=nn.CrossEntropyLoss())
    with pytest.raises(ValueError, match=r"not nn.Sequential\(trunk, head\)\. give the split yourself: split=lambda m: \(m.features, m.classifier\)"):
        getattr(learn, preset)()
    getattr(learn, preset)(split=lambda m: (m.features, m.classifier))
    assert len(learn.opt.param_lists) == 2

def test_export_with_a_preset(tmp_path):
    from fastai.data.all import Datasets, ItemGetter
    from fastai_paranoid.fixtures import load_digits_tensors
    x, y = load_digits_tensors(range(5, 10))
    dls = Datasets(list(zip(x[:60], y[:60])), tfms=[[ItemGetter(0)], [ItemGetter(1)]], splits=[list(range(40)), list(range(40, 60))]).dataloaders(bs=20)
    learn = Learner(dls, Net(), loss_func=nn.CrossEntropyLoss(), path=tmp_path).linear_probe(split=lambda m: (m.features, m.classifier))
    quietly(learn, lambda: learn.fit(1))
    learn.export('export.pkl')
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        loaded = load_learner(tmp_path / 'export.pkl')
    assert not any(m._forward_hooks or m._forward_pre_hooks or 'train' in vars(m) for m in loaded.model.modules())
    assert state_fps(loaded.model) == state_fps(learn.model)

def test_dropout_in_a_frozen_trunk_still_drops():
    "Documented semantics: FreezeBNStats holds normalization layers only; dropout keeps the loop's training mode"
    trunk = nn.Sequential(nn.Flatten(), nn.Linear(64, 16), nn.BatchNorm1d(16), nn.Dropout(0.5))
    class Modes(Callback):
        order = 150
        def before_batch(self):
            if self.training: self.seen = (trunk[2].training, trunk[3].training)
    learn = Learner(digits_transfer_dls(24), nn.Sequential(trunk, nn.Linear(16, 5)), loss_func=nn.CrossEntropyLoss(), cbs=Modes()).linear_probe()
    quietly(learn, lambda: learn.fit(1))
    assert learn.modes.seen == (False, True)
