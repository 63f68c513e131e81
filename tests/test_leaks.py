"The scenario matrix of `StateLeakDetector`: every planted leak is caught (kind and path), every healthy fastai workflow is silent."
import copy, gc, pickle, warnings
from functools import partial
import numpy as np, pytest
from fastai.data.core import Datasets
from fastai.losses import CrossEntropyLossFlat
from fastai.data.block import CategoryBlock
import torch
from torch import nn
from fastai.learner import Learner, Metric, load_learner
from fastai.callback.core import Callback
from fastai.callback.tracker import SaveModelCallback, EarlyStoppingCallback
from fastai.callback.progress import CSVLogger
from fastai.callback.hook import ActivationStats
from fastai.callback.training import GradientAccumulation
from fastai.callback.mixup import MixUp
from fastai.callback.fp16 import MixedPrecision
import fastai.callback.schedule # lr_find, fine_tune
from fastai.callback.core import CancelFitException
from fastai.optimizer import OptimWrapper, params
from fastai.metrics import accuracy
from fastai.torch_core import set_seed
from fastai_paranoid.core import ParanoidWarning, fingerprint, get_rng_states, rng_fingerprint
from fastai_paranoid.fixtures import make_xor_data, xor_dls, build_mlp, bn_cnn, random_image_dls, digits_trunk, transfer_model
from fastai_paranoid.fresh import fresh_learner
from fastai_paranoid import leaks
from fastai_paranoid.leaks import StateLeakDetector, StateLeakWarning, StateLeakError, Finding, all_findings, clear_findings
from fastai_paranoid.paranoid import paranoid, PreserveLRFindRNG, PreserveLRFindGrads


# ---- tiny pipelines
_X, _Y = make_xor_data(96, np.random.default_rng(0))
def _x(i): return _X[i]
def _y(i): return _Y[i]
def exportable_dls():
    "fastai Datasets (which `export` can empty), unlike the fixtures' TensorDatasets"
    return Datasets(list(range(96)), tfms=[[_x], [_y]], splits=[list(range(64)), list(range(64, 96))]).dataloaders(bs=32)

def small_xor(): return xor_dls(n_train=128, n_valid=128, bs=32)
def small_images(size=16): return random_image_dls(n_train=32, n_valid=16, size=size, bs=8)
def two_groups(m): return [params(m[0]), params(m[1])]

def xor_learner(dls=None, model=None, cbs=None, on_finding='log', **kwargs):
    cbs = [StateLeakDetector(on_finding=on_finding)] + list(cbs or [])
    return Learner(dls if dls is not None else small_xor(), model if model is not None else build_mlp(),
                   loss_func=nn.CrossEntropyLoss(), cbs=cbs, **kwargs)

def cnn_learner(dls=None, model=None, cbs=None, on_finding='log', **kwargs):
    cbs = [StateLeakDetector(on_finding=on_finding)] + list(cbs or [])
    return Learner(dls if dls is not None else small_images(), model if model is not None else bn_cnn(),
                   loss_func=nn.CrossEntropyLoss(), splitter=two_groups, cbs=cbs, **kwargs)

def fit(learn, n_epoch=1, lr=1e-2, **kwargs):
    with learn.no_bar(), learn.no_logging(): learn.fit(n_epoch, lr, **kwargs)
    return learn

def found(learn): return learn.state_leak_detector.findings
def kinds(learn): return [f.kind for f in found(learn)]
def loud(learn): return [f for f in found(learn) if f.severity != 'info']
def the(learn, kind):
    matches = [f for f in found(learn) if f.kind == kind]
    assert matches, f"no {kind!r} finding; found: {[str(f) for f in found(learn)]}"
    return matches[0]


# ---- planted leaks: each is caught, by kind and path, with evidence and a fix
def test_1_model_reused_by_a_new_learner():
    "Seed 000's loop: the same `model` handed to each new Learner"
    model = build_mlp()
    first = fit(xor_learner(model=model), 2)
    second = fit(xor_learner(model=model))
    f = the(second, 'reused_model')
    assert f.severity == 'error' and f.path == 'model (Sequential)'
    assert 'Learner #' in f.evidence and '2 epoch(s)' in f.evidence and 'fresh_learner' in f.fix
    assert not loud(first)

def test_1_parameters_shared_by_a_new_model():
    trunk = nn.Sequential(nn.Linear(2, 32), nn.ReLU())
    fit(xor_learner(model=nn.Sequential(trunk, nn.Linear(32, 2))))
    second = fit(xor_learner(model=nn.Sequential(trunk, nn.Linear(32, 2))))
    f = the(second, 'reused_params')
    assert f.severity == 'warning' and f.path == 'model.0.0.weight' and '1 more of this model' in f.evidence
    assert 'deepcopy' in f.fix

def test_2_optimizer_shared_between_learners():
    model = build_mlp()
    shared = OptimWrapper(model.parameters(), torch.optim.Adam, lr=1e-2)
    fit(xor_learner(model=model, opt_func=shared))
    second = fit(xor_learner(model=copy.deepcopy(model), opt_func=shared))
    assert the(second, 'shared_optimizer').path == 'opt (OptimWrapper)'
    assert the(second, 'optimizer_params').severity == 'error' # it steps the first model's tensors

def test_2_model_replaced_but_optimizer_kept():
    learn = fit(xor_learner())
    learn.model = build_mlp()
    before = fingerprint(learn.model[0].weight)
    fit(learn)
    f = the(learn, 'optimizer_params')
    assert f.severity == 'error' and f.path == 'model.0.weight' and 'never train' in f.evidence
    assert fingerprint(learn.model[0].weight) == before, "the detector's claim: the new model did not train"

class LeakyAccuracy(Metric):
    "Accumulates across epochs: reset() forgets `correct`"
    def __init__(self): self.correct, self.total = 0., 0
    def reset(self): self.total = 0
    def accumulate(self, learn):
        self.correct += (learn.pred.argmax(1) == learn.yb[0]).float().sum().item()
        self.total += len(learn.yb[0])
    @property
    def value(self): return self.correct / max(self.total, 1)

def test_3_metric_state_survives_reset():
    learn = fit(xor_learner(metrics=[LeakyAccuracy()]), 2)
    f = the(learn, 'metric_reset')
    assert f.path == 'metrics[0] LeakyAccuracy.correct' and 'reset()' in f.fix

def test_3_metric_that_never_changes():
    def always_right(pred, targ): return (targ == targ).float().mean() # ignores the predictions
    set_seed(0) # an unseeded MLP can predict one class for 3 epochs, and then its accuracy is constant too (seeds 0-29 all train)
    learn = fit(xor_learner(metrics=[accuracy, always_right]), 3)
    f = the(learn, 'constant_metric')
    assert f.path == 'metrics[1] always_right' and 'all 3 epochs' in f.evidence
    assert not [x for x in found(learn) if x.kind == 'constant_metric' and 'accuracy' in x.path]

class BestTracker(Callback):
    "Keeps the best (lowest) validation loss seen: set in __init__, never reset in before_fit"
    order = 60 # after the Recorder
    def __init__(self): self.best = float('inf')
    def after_epoch(self): self.best = min(self.best, self.recorder.values[-1][1])

def test_4_callback_state_carries_into_the_next_run():
    tracker = BestTracker()
    fit(xor_learner(cbs=[tracker]))
    second = fit(xor_learner(cbs=[tracker]))
    f = the(second, 'callback_state')
    assert f.path == f"cbs[{second.cbs.index(tracker)}] BestTracker.best" and 'was inf' in f.evidence

def test_4_callback_attached_to_two_learners():
    tracker = BestTracker()
    first = xor_learner(cbs=[tracker], on_finding='raise')
    second = xor_learner(cbs=[tracker]) # fastai points tracker.learn at the second Learner
    with pytest.raises(StateLeakError, match='callback_learner'): fit(first)
    f = the(first, 'callback_learner')
    assert f.path == f"cbs[{first.cbs.index(tracker)}] BestTracker" and f.severity == 'error'

def test_5_batchnorm_statistics_moved_between_fits():
    learn = fit(cnn_learner())
    x, _ = learn.dls.valid.one_batch()
    learn.model.train()
    learn.model(x) # a forward in training mode, outside any fit
    fit(learn)
    f = the(learn, 'buffers_outside_fit')
    assert f.path == 'model.0.1 (BatchNorm2d)' and 'num_batches_tracked 4 -> 5' in f.evidence
    assert '1 more module' in f.evidence

def test_5_lr_find_then_fine_tune_moves_frozen_weights():
    "Not planted: fastai itself. lr_find leaves zeroed gradients; after freeze, weight decay still steps those tensors"
    learn = cnn_learner()
    with learn.no_bar(), learn.no_logging():
        learn.lr_find(num_it=6, show_plot=False)
        learn.fine_tune(1, 1e-2, freeze_epochs=1)
    f = the(learn, 'frozen_params_changed')
    assert f.severity == 'warning', f # a tiny move by weight decay: not an error
    assert 'its norm moved by' in f.evidence and 'of itself' in f.evidence and 'left all zeros by lr_find' in f.evidence, f
    rel = float(f.evidence.split('its norm moved by ')[1].split(' ')[0])
    assert 0 < rel < 1e-3, f
    assert 'PreserveLRFindGrads' in f.fix and 'paranoid()' in f.fix and 'freeze before the first fit' not in f.fix

def test_5_frozen_parameters_change_during_a_fit():
    learn = fit(cnn_learner())
    learn.freeze()
    fit(learn)
    f = the(learn, 'frozen_params_changed')
    assert f.path in ('model.0.0.weight', 'model.0.4.weight') and 'requires_grad=False' in f.evidence # the larger relative move
    assert 'like 1 more of the model' in f.evidence

def test_6_shared_dataloaders_changed_by_one_learner():
    dls = small_xor()
    first, second = xor_learner(dls=dls), xor_learner(dls=dls)
    fit(first)
    first.dls.train.bs = 16 # tuning the first run's batch size changes the second's
    fit(second)
    f = the(second, 'shared_dataloaders')
    assert f.path == 'learn.dls' and 'train.bs 32 -> 16' in f.evidence and 'Learner #' in f.evidence

# ---- a model trained where no detector watched; a DataLoaders changed before a Learner's first fit
def plain_learner(dls=None, model=None):
    "A Learner built as a user builds one: under `paranoid()` it gets its detector from there"
    return Learner(dls if dls is not None else small_xor(), model if model is not None else build_mlp(), loss_func=nn.CrossEntropyLoss())

def test_1_model_trained_before_paranoid():
    model = build_mlp()
    fit(plain_learner(model=model), 2) # no detector yet
    with paranoid(on_finding='log'):
        learn = fit(plain_learner(model=model))
        f = the(learn, 'untracked_training')
    assert f.severity == 'warning' and f.path == 'model (Sequential)', f
    assert '6 of its 6 parameter tensors hold a gradient (first: model.0.weight' in f.evidence, f
    assert 'fresh_learner' in f.fix and 'copy.deepcopy(model)' in f.fix

def test_1_model_trained_by_a_plain_pytorch_loop():
    "No gradient left (`zero_grad` sets them to None): the optimizer's state is the evidence"
    model = build_mlp()
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    x, y = make_xor_data(64, np.random.default_rng(1))
    for _ in range(3):
        opt.zero_grad()
        nn.functional.cross_entropy(model(x), y).backward()
        opt.step()
    opt.zero_grad()
    learn = fit(xor_learner(model=model))
    f = the(learn, 'untracked_training')
    assert 'a live Adam holds optimizer state (momentum, averages) for 6 of its parameter tensors' in f.evidence, f
    assert 'hold a gradient' not in f.evidence and 'drop the gradients' not in f.fix
    del opt

def test_silent_fresh_models_under_paranoid():
    "A new model per Learner, a model loaded from another's weights, a model copied: nothing to report"
    with paranoid(on_finding='raise'):
        first = fit(plain_learner())
        second = fit(plain_learner())
        loaded = build_mlp()
        loaded.load_state_dict(first.model.state_dict())
        third = fit(plain_learner(model=loaded))
        fourth = fit(plain_learner(model=copy.deepcopy(second.model)))
        for learn in [first, second, third, fourth]: assert kinds(learn) == [], kinds(learn)

def test_silent_detector_added_to_a_learner_that_trained():
    "Added after some fits, the detector cannot tell whose gradients the model holds: it says nothing"
    learn = fit(plain_learner())
    learn.add_cb(StateLeakDetector(on_finding='raise'))
    fit(learn)
    silent(learn)

def test_6_shared_dataloaders_changed_before_the_second_learner_is_built():
    dls = small_xor()
    with paranoid(on_finding='log'):
        first = fit(plain_learner(dls=dls))
        first.dls.train.bs = 8 # for the first run...
        second = fit(plain_learner(dls=dls)) # ...and the second, built afterwards, trains with it too
        f = the(second, 'shared_dataloaders')
    assert f.severity == 'warning' and f.path == 'learn.dls'
    assert 'train.bs 32 -> 8' in f.evidence and 'first fit runs with that change' in f.evidence, f
    assert 'fresh_learner(dls_fn, model_fn)' in f.fix and 'dls.train.new(bs=16)' in f.fix

@pytest.mark.parametrize('change', ['shuffle', 'transform', 'dataset'])
def test_6_shared_dataloaders_other_changes(change):
    first = fit(xor_learner())
    dl = first.dls.train
    if change == 'shuffle': dl.shuffle = False
    elif change == 'transform': dl.after_batch = lambda b: b
    else: dl.dataset = torch.utils.data.TensorDataset(*dl.dataset.tensors)
    second = fit(xor_learner(dls=first.dls))
    expected = {'shuffle': 'train.shuffle True -> False', 'transform': 'train transforms replaced', 'dataset': 'train.dataset replaced'}[change]
    assert expected in the(second, 'shared_dataloaders').evidence

def test_silent_dataloaders_per_learner_or_unchanged():
    first = fit(xor_learner())
    first.dls.train.bs = 8
    silent(fit(xor_learner(on_finding='raise'))) # its own DataLoaders
    shared = small_xor()
    fit(xor_learner(dls=shared))
    silent(fit(xor_learner(dls=shared, on_finding='raise'))) # shared, nobody changed it
    rebuilt = fit(xor_learner(dls=small_xor()))
    rebuilt.dls = small_xor() # rebuilt for the same Learner
    fit(rebuilt)
    silent(rebuilt)


# ---- lr_find's gradients: under paranoid(), lr_find(); fine_tune() is fine_tune()
def fine_tuned(probe, guards=None):
    "(the Learner, its findings) after `fine_tune`, with or without `lr_find` first, under `paranoid(guards=guards)`"
    with paranoid(on_finding='log', guards=guards):
        learn = fresh_learner(small_images, bn_cnn, loss_func=nn.CrossEntropyLoss(), splitter=two_groups, seed=0)
        with learn.no_bar(), learn.no_logging():
            if probe: learn.lr_find(num_it=4, show_plot=False)
            learn.fine_tune(1, 1e-2, freeze_epochs=1)
        return learn, list(learn.state_leak_detector.findings)

def same_state(a, b): return all(torch.equal(x, y) for x, y in zip(a.model.state_dict().values(), b.model.state_dict().values()))

def test_paranoid_lr_find_then_fine_tune_trains_as_fine_tune():
    (plain, plain_found), (probed, probed_found) = fine_tuned(False), fine_tuned(True)
    assert same_state(plain, probed)
    assert plain.recorder.losses == probed.recorder.losses
    assert plain_found == [] and probed_found == []

def test_without_the_gradient_guard_lr_find_moves_the_frozen_trunk():
    "The guard is what makes the difference: with only the RNG guard, weight decay moves the frozen trunk, and it is said"
    (plain, _), (probed, found) = fine_tuned(False, guards=[StateLeakDetector, PreserveLRFindRNG]), fine_tuned(True, guards=[StateLeakDetector, PreserveLRFindRNG])
    assert not same_state(plain, probed)
    f = next(f for f in found if f.kind == 'frozen_params_changed')
    assert f.severity == 'warning' and 'PreserveLRFindGrads' in f.fix

def test_preserve_lr_find_grads_puts_gradients_back():
    learn = fit(cnn_learner())
    learn.add_cb(PreserveLRFindGrads())
    params = list(learn.model.parameters())
    for i, p in enumerate(params): p.grad = None if i % 2 else torch.randn_like(p)
    before = [None if p.grad is None else p.grad.clone() for p in params]
    with learn.no_bar(), learn.no_logging(): learn.lr_find(num_it=4, show_plot=False)
    assert all((b is None and p.grad is None) or (b is not None and torch.equal(b, p.grad)) for b, p in zip(before, params))
    assert learn.preserve_lr_find_grads.grads is None
    fit(learn) # an ordinary fit is left alone: training makes gradients
    assert all(p.grad is not None for p in params)
    assert type(copy.deepcopy(learn.preserve_lr_find_grads)) is PreserveLRFindGrads

@pytest.mark.slow
def test_silent_paranoid_vision_learner_built_unfrozen(tmp_path):
    "vision_learner(resnet18, pretrained=False) is built unfrozen: lr_find, then fine_tune, under paranoid(): silent"
    from fastai.vision.learner import vision_learner
    from torchvision.models import resnet18
    with paranoid(on_finding='raise'):
        learn = vision_learner(random_image_dls(n_train=16, n_valid=8, size=16, c_in=3, bs=8), resnet18, pretrained=False,
                               loss_func=nn.CrossEntropyLoss(), n_out=4, path=tmp_path)
        assert all(p.requires_grad for p in learn.model.parameters())
        with learn.no_bar(), learn.no_logging():
            learn.lr_find(num_it=6, show_plot=False)
            learn.freeze() # fine_tune's two phases, spelled out to look at the frozen part in between
            frozen = [(p, p.detach().clone()) for p in learn.model.parameters() if not p.requires_grad]
            learn.fit_one_cycle(1, 1e-3)
            assert len(frozen) >= 20 and all(torch.equal(p, before) for p, before in frozen), "the frozen trunk moved"
            learn.unfreeze()
            learn.fit_one_cycle(1, 1e-4)
        assert kinds(learn) == []


class NoisyEval(nn.Module):
    "Seed 002's stray random tensor: noise added in every mode"
    def forward(self, x): return x + 0.01 * torch.randn_like(x)

def test_7_random_draw_in_eval_mode():
    learn = fit(xor_learner(model=nn.Sequential(build_mlp(), NoisyEval())))
    f = the(learn, 'eval_random')
    assert f.path == 'model.1 (NoisyEval)' and '4 of 4 validation batches' in f.evidence

class LateNoise(nn.Module):
    "Draws once, in its 2nd eval-mode call: the draw is never seen again while it is watched"
    def __init__(self): super().__init__(); self.eval_calls = 0
    def forward(self, x):
        if self.training: return x
        self.eval_calls += 1
        return x + 0.01 * torch.randn_like(x) if self.eval_calls == 2 else x

def test_7_unattributed_draw_is_still_reported():
    learn = fit(xor_learner(model=nn.Sequential(build_mlp(), LateNoise()), dls=xor_dls(n_train=64, n_valid=64, bs=32)), 2)
    assert the(learn, 'eval_random').path == 'model (Sequential)'

def test_8_callback_added_again_in_a_loop():
    learn = xor_learner()
    for fold in range(2): learn.add_cb(EarlyStoppingCallback(patience=3))
    fit(learn)
    f = the(learn, 'duplicate_callback')
    i, j = [i for i, cb in enumerate(learn.cbs) if isinstance(cb, EarlyStoppingCallback)]
    assert f.path == f'cbs[{i}] and cbs[{j}] EarlyStoppingCallback' and f.severity == 'warning'
    again = xor_learner()
    tracker = BestTracker()
    again.add_cb(tracker); again.add_cb(tracker)
    fit(again)
    assert the(again, 'duplicate_callback').severity == 'error' # the same instance twice

def test_8_hook_callback_bound_to_an_earlier_model():
    stats = ActivationStats()
    learn = fit(xor_learner(cbs=[stats]))
    learn.model = build_mlp()
    learn.create_opt()
    fit(learn)
    f = the(learn, 'stale_hooks')
    assert f.path == f"cbs[{learn.cbs.index(stats)}] ActivationStats.modules" and '3 of 3' in f.evidence

def test_9_folds_overwrite_the_same_checkpoint(tmp_path):
    for fold in range(2):
        learn = fit(xor_learner(cbs=[SaveModelCallback()], path=tmp_path))
    f = the(learn, 'shared_file')
    assert f.path == f"cbs[{learn.cbs.index(learn.save_model)}] SaveModelCallback.fname" and 'model.pth' in f.evidence and "fold" in f.fix


# ---- how it behaves
def test_warn_raise_and_log():
    model = build_mlp()
    fit(xor_learner(model=model))
    with pytest.warns(StateLeakWarning, match=r"\[reused_model\] Learner #\d+: model \(Sequential\) was already trained"):
        fit(xor_learner(model=model, on_finding='warn'))
    learn = xor_learner(model=model, on_finding='raise')
    before = fingerprint(model[0].weight)
    with pytest.raises(StateLeakError, match='reused_model') as e:
        fit(learn)
    assert e.value.findings[0].kind == 'reused_model'
    assert fingerprint(model[0].weight) == before, "raising in before_fit stops the run before any step"
    with pytest.raises(ValueError, match="on_finding='loud'"): StateLeakDetector(on_finding='loud')

def test_findings_are_data_and_reported_once():
    model = build_mlp()
    fit(xor_learner(model=model))
    learn = fit(xor_learner(model=model))
    fit(learn)
    assert kinds(learn).count('reused_model') == 1
    f = found(learn)[0]
    assert isinstance(f, Finding) and f in all_findings('reused_model')
    table = learn.state_leak_detector.report()
    assert 'reused_model' in str(table) and '<table>' in table._repr_html_()
    n = len(all_findings())
    clear_findings()
    assert all_findings() == [] and n > 0

def test_one_detector_per_learner_even_when_installed_twice():
    "As `paranoid()` may do: the class in defaults.callbacks, and an instance in cbs too"
    from fastai.callback.core import defaults
    defaults.callbacks.append(StateLeakDetector)
    StateLeakDetector.default_on_finding = 'log'
    try:
        model = build_mlp()
        fit(Learner(small_xor(), model, loss_func=nn.CrossEntropyLoss()))
        learn = fit(Learner(small_xor(), model, loss_func=nn.CrossEntropyLoss(), cbs=[StateLeakDetector(on_finding='log')]))
    finally:
        defaults.callbacks.remove(StateLeakDetector)
        StateLeakDetector.default_on_finding = 'warn'
    detectors = [cb for cb in learn.cbs if isinstance(cb, StateLeakDetector)]
    assert len(detectors) == 2
    assert [f.kind for f in detectors[0].findings] == ['reused_model'] and detectors[1].findings == []
    assert detectors[0].on_finding == 'log' and StateLeakDetector().on_finding == 'warn'

class Boom(Exception): pass
class Exploding(nn.Module):
    def __init__(self): super().__init__(); self.lin = nn.Linear(2, 2); self.armed = False
    def forward(self, x):
        if self.armed: raise Boom("the user's own bug")
        return self.lin(x)

def test_user_exception_is_not_masked_and_interrupted_fits_are_survived(tmp_path):
    learn = xor_learner(dls=exportable_dls(), model=Exploding(), on_finding='raise', path=tmp_path)
    learn.model.armed = True
    with pytest.raises(Boom, match="the user's own bug"): fit(learn)
    learn.model.armed = False
    class Interrupt(Callback):
        def after_batch(self): raise KeyboardInterrupt
    with pytest.raises(KeyboardInterrupt): fit(learn, cbs=[Interrupt()])
    class Cancel(Callback):
        def after_batch(self): raise CancelFitException
    fit(learn, cbs=[Cancel()])
    fit(learn, 2)
    learn.export(tmp_path/'export.pkl')
    assert loud(learn) == []

def test_leaves_the_learner_as_it_was():
    "Running with and without the detector gives bitwise-identical weights, optimizer state, losses and RNG states"
    def run(with_detector):
        learn = fresh_learner(small_xor, build_mlp, loss_func=nn.CrossEntropyLoss(), metrics=accuracy,
                              cbs=[StateLeakDetector(on_finding='raise')] if with_detector else None, seed=3)
        fit(learn, 2)
        learn.validate()
        fit(learn)
        return learn
    a, b = run(True), run(False)
    for (k, v), w in zip(a.model.state_dict().items(), b.model.state_dict().values()): assert torch.equal(v, w), k
    assert a.recorder.values == b.recorder.values
    for (p, s), (q, t) in zip(a.opt.state.items(), b.opt.state.items()):
        assert all(torch.equal(s[k], t[k]) if isinstance(s[k], torch.Tensor) else s[k] == t[k] for k in s)
    assert rng_fingerprint(a.dls) == rng_fingerprint(b.dls)

def test_remembers_fingerprints_not_copies():
    learn = fit(cnn_learner(), 1)
    fit(learn)
    rec = leaks.leak_memory.record(learn)
    def tensors_in(o, depth=0):
        if isinstance(o, torch.Tensor): return 1
        if depth > 4: return 0
        if isinstance(o, dict): return sum(tensors_in(v, depth + 1) for v in o.values())
        if isinstance(o, (list, tuple, set)): return sum(tensors_in(v, depth + 1) for v in o)
        return 0
    assert tensors_in(vars(rec)) == 0
    assert len(rec.after_fit_buffers) == len(list(learn.model.buffers()))

def test_one_ulp_changes_a_fingerprint():
    w = torch.randn(1000)
    v = w.clone()
    v[517] = torch.nextafter(v[517], torch.tensor(float('inf')))
    assert fingerprint(w) != fingerprint(v)


# ---- healthy fastai is silent: on_finding='raise' never raises, and nothing but info lines is found
def silent(learn):
    assert loud(learn) == [], [str(f) for f in loud(learn)]

@pytest.fixture(autouse=True)
def no_paranoid_warnings():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        yield
    ours = [w for w in caught if issubclass(w.category, ParanoidWarning) and not issubclass(w.category, StateLeakWarning)]
    assert not ours, [str(w.message) for w in ours] # internal errors of the detector

def test_silent_fit_twice_continuation():
    learn = fit(xor_learner(on_finding='raise', metrics=accuracy), 2)
    fit(learn, 2)
    silent(learn)

def test_silent_fine_tune_and_lr_find():
    "vision_learner's workflow: frozen when built, lr_find, fine_tune"
    learn = cnn_learner(on_finding='raise')
    learn.freeze()
    with learn.no_bar(), learn.no_logging():
        learn.lr_find(num_it=6, show_plot=False)
        learn.fine_tune(1, 1e-2, freeze_epochs=1)
    silent(learn)

def test_silent_validate_get_preds_and_eval_forward_between_fits():
    learn = fit(cnn_learner(on_finding='raise'))
    with learn.no_bar():
        learn.validate()
        learn.get_preds()
    learn.model.eval()
    with torch.no_grad(): learn.model(learn.dls.valid.one_batch()[0])
    fit(learn)
    silent(learn)

def test_silent_progressive_resizing():
    learn = Learner(small_images(8), transfer_model(digits_trunk(), 4), loss_func=nn.CrossEntropyLoss(),
                    cbs=[StateLeakDetector(on_finding='raise')])
    fit(learn)
    learn.dls = small_images(16)
    fit(learn)
    silent(learn)
    assert kinds(learn) == ['new_dataloaders'] and found(learn)[0].severity == 'info'

def test_silent_tracker_callbacks(tmp_path):
    learn = xor_learner(on_finding='raise', path=tmp_path, metrics=accuracy,
                        cbs=[SaveModelCallback(monitor='accuracy'), EarlyStoppingCallback(patience=1), CSVLogger()])
    fit(learn, 3)
    fit(learn, 2)
    silent(learn)

def test_silent_kfold_with_fresh_learner(tmp_path):
    for fold in range(3):
        learn = fresh_learner(small_xor, build_mlp, loss_func=nn.CrossEntropyLoss(), metrics=[accuracy], seed=fold, path=tmp_path,
                              cbs=[StateLeakDetector(on_finding='raise'), SaveModelCallback(fname=f'model_fold{fold}')])
        fit(learn)
        silent(learn)

def test_silent_export_and_load_learner(tmp_path):
    learn = fit(xor_learner(dls=exportable_dls(), on_finding='raise', path=tmp_path))
    learn.export('export.pkl')
    loaded = load_learner(tmp_path/'export.pkl')
    assert not any(isinstance(cb, StateLeakDetector) for cb in loaded.cbs) # the export is for inference: no guards in it
    assert isinstance(learn.state_leak_detector, StateLeakDetector) # the live Learner keeps its detector
    fit(learn)
    silent(learn)

def test_silent_mixed_precision_gradient_accumulation_mixup_dropout():
    model = nn.Sequential(nn.Linear(2, 32), nn.ReLU(), nn.Dropout(0.5), nn.Linear(32, 2))
    learn = Learner(small_xor(), model, loss_func=CrossEntropyLossFlat(), # MixUp needs a loss with `y_int`
                    cbs=[StateLeakDetector(on_finding='raise'), GradientAccumulation(n_acc=64), MixUp()])
    with warnings.catch_warnings():
        warnings.simplefilter('ignore') # CUDA autocast on a CPU-only machine warns that it is disabled
        learn.to_fp16()
        fit(learn, 2)
    silent(learn)

def test_silent_save_and_load_between_fits(tmp_path):
    "A checkpoint load changes buffers and parameters outside a fit, on purpose"
    model = nn.Sequential(nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), nn.BatchNorm2d(8, affine=False), nn.ReLU(),
                                        nn.AdaptiveAvgPool2d(1), nn.Flatten()), nn.Linear(8, 4))
    learn = cnn_learner(model=model, on_finding='raise', path=tmp_path)
    fit(learn)
    learn.save('checkpoint')
    fit(learn)
    learn.load('checkpoint')
    fit(learn)
    silent(learn)

def test_silent_lr_find_then_fit_one_cycle():
    learn = xor_learner(on_finding='raise')
    with learn.no_bar(), learn.no_logging():
        learn.lr_find(num_it=6, show_plot=False)
        learn.fit_one_cycle(2, 1e-2)
    silent(learn)

def test_probe_hooks_are_removed_and_the_learner_still_pickles(tmp_path):
    learn = fit(xor_learner(dls=exportable_dls(), model=nn.Sequential(build_mlp(), NoisyEval()), path=tmp_path))
    assert kinds(learn) == ['eval_random']
    assert all(not m._forward_hooks and not m._forward_pre_hooks for m in learn.model.modules())
    learn.export('export.pkl')
    loaded = load_learner(tmp_path/'export.pkl')
    assert all(not m._forward_hooks and not m._forward_pre_hooks for m in loaded.model.modules())
    assert kinds(learn) == ['eval_random'] # the live detector keeps its findings

def test_silent_when_the_other_learner_is_gone():
    "A DataLoaders changed after the only other Learner using it was deleted: an info line, not a warning"
    dls = small_xor()
    first = fit(xor_learner(dls=dls))
    second = xor_learner(dls=dls, on_finding='raise')
    del first
    dls.train.bs = 16
    fit(second)
    assert kinds(second) == ['dataloaders_changed'] and loud(second) == []

def reinit(model):
    for m in model.modules():
        if hasattr(m, 'reset_parameters'): m.reset_parameters()

def test_2_optimizer_state_carried_into_a_restart():
    learn = fit(xor_learner())
    reinit(learn.model)
    fit(learn)
    f = the(learn, 'optimizer_state')
    assert f.path == 'opt (Optimizer)' and 'stale momentum' in f.evidence and 'reset_opt=True' in f.fix

def test_silent_restart_with_a_new_optimizer_and_freeze_unfreeze(tmp_path):
    learn = fit(xor_learner(on_finding='raise', path=tmp_path))
    reinit(learn.model)
    fit(learn, reset_opt=True)
    learn.save('ckpt')
    fit(learn)
    learn.load('ckpt') # with its optimizer state, fastai's default
    fit(learn)
    learn.freeze(); learn.unfreeze()
    fit(learn)
    silent(learn)

def test_detector_added_after_the_learners_were_built():
    dls = small_xor()
    first, second = xor_learner(dls=dls), Learner(dls, build_mlp(), loss_func=nn.CrossEntropyLoss())
    second.add_cb(StateLeakDetector(on_finding='log'))
    fit(second)
    fit(first)
    first.dls.train.bs = 16
    fit(second)
    assert the(second, 'shared_dataloaders').evidence.startswith('is shared with Learner #')

@pytest.mark.slow
def test_silent_vision_learner_workflow(tmp_path):
    "vision_learner (built frozen), lr_find, fine_tune, get_preds: fastai's own path"
    from fastai.vision.learner import vision_learner
    from torchvision.models import resnet18
    dls = random_image_dls(n_train=16, n_valid=8, size=32, c_in=3, bs=8)
    learn = vision_learner(dls, resnet18, pretrained=False, loss_func=nn.CrossEntropyLoss(), n_out=4, path=tmp_path,
                           cbs=StateLeakDetector(on_finding='raise'))
    learn.freeze() # what vision_learner does with pretrained weights (none can be downloaded here)
    with learn.no_bar(), learn.no_logging():
        learn.lr_find(num_it=6, show_plot=False)
        learn.fine_tune(1, 1e-3, freeze_epochs=1)
        learn.get_preds()
    silent(learn)

@pytest.mark.slow
def test_silent_tabular_learner_predict_between_fits():
    import pandas as pd
    from fastai.tabular.all import TabularDataLoaders, tabular_learner, Categorify, Normalize
    rng = np.random.default_rng(0)
    df = pd.DataFrame({'a': rng.normal(size=64), 'b': rng.normal(size=64), 'c': rng.choice(['x', 'y'], 64)})
    df['y'] = (df.a * df.b > 0).astype(int)
    dls = TabularDataLoaders.from_df(df, procs=[Categorify, Normalize], cat_names=['c'], cont_names=['a', 'b'],
                                     y_names='y', y_block=CategoryBlock(), valid_idx=list(range(48, 64)), bs=16)
    learn = tabular_learner(dls, layers=[8], n_out=2, cbs=StateLeakDetector(on_finding='raise'))
    fit(learn)
    learn.predict(df.iloc[0])
    fit(learn)
    silent(learn)

def test_a_bug_in_a_check_never_stops_training():
    def broken_check(det, rec): raise KeyError('oops')
    leaks._CHECKS_AT['before_fit'].append(broken_check)
    try:
        learn = xor_learner(on_finding='raise')
        with pytest.warns(ParanoidWarning, match='internal error in `broken_check`'): fit(learn, 2)
    finally: leaks._CHECKS_AT['before_fit'].remove(broken_check)
    assert len(learn.recorder.values) == 2


# ---- the detector's memory: reset() forgets, and it does not grow over a long session
def test_reset_forgets_what_the_learners_used_and_clear_findings_does_not():
    model = build_mlp()
    first = fit(xor_learner(model=model))
    clear_findings() # findings only: the memory of who trained `model` stays
    assert kinds(fit(xor_learner(model=model))) == ['reused_model'] and all_findings('reused_model')
    serial = leaks.leak_memory.record(first).serial
    leaks.leak_memory.reset()
    assert leaks.leak_memory.record(first) is None and all(n == 0 for n in leaks.leak_memory.sizes().values())
    third = fit(xor_learner(model=model))
    # who trained it is forgotten; the model's own gradients and optimizer state still say it arrives trained
    assert kinds(third) == ['untracked_training'] and all_findings('reused_model') == []
    assert leaks.leak_memory.record(third).serial > serial + 1 # a label never names two Learners

def _live_records()->int:
    gc.collect()
    return sum(isinstance(o, leaks._LearnerRecord) for o in gc.get_objects())

def test_memory_does_not_grow_over_200_learners_built_and_dropped(tmp_path, monkeypatch):
    monkeypatch.setattr(leaks.leak_memory, 'max_written_files', 32)
    dls, before = xor_dls(n_train=16, n_valid=16, bs=16), _live_records()
    for i in range(200):
        learn = Learner(dls, build_mlp(width=4, depth=1), loss_func=nn.CrossEntropyLoss(), path=tmp_path,
                        cbs=[StateLeakDetector(on_finding='raise'), CSVLogger(fname=f'log{i}.csv')])
        fit(learn)
    del learn
    assert _live_records() - before < 40, "the records of collected Learners are dropped (before: one kept per Learner)"
    sizes = leaks.leak_memory.sizes()
    assert sizes['written_files'] <= 32 and len(leaks.leak_memory.dls_users.get(dls)) < 40
    assert sizes['trained_models'] < 10 and sizes['learners'] < 10 # held weakly: only what is alive
    # the files still remembered still catch two runs writing one file
    learn = fit(Learner(dls, build_mlp(width=4, depth=1), loss_func=nn.CrossEntropyLoss(), path=tmp_path,
                        cbs=[StateLeakDetector(on_finding='log'), CSVLogger(fname='log199.csv')]))
    assert kinds(learn) == ['shared_file']
