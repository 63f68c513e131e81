"NaNGuard and RNGAudit both ways: the planted bug is caught where it happens, the healthy run is untouched"
import re, warnings
import matplotlib
matplotlib.use('Agg')
import numpy as np
import pytest
import torch
from torch import nn
from torch.utils.data import TensorDataset
from fastai.callback.core import Callback, CancelStepException
from fastai.data.core import DataLoaders
from fastai.data.load import DataLoader
import fastai.callback.progress   # adds learn.no_bar()
from fastai_paranoid.core import fingerprint, finding_sink
from fastai_paranoid.fixtures import *
from fastai_paranoid.fresh import fresh_learner
from fastai_paranoid.guards import *

class NoiseInjection(nn.Module):
    "Noise with a NaN-prone scale once `active`"
    def __init__(self):
        super().__init__()
        self.active = False
    def forward(self, x):
        if not self.active: return x
        return x + 0.1 * torch.randn(()).sqrt() * torch.randn_like(x)

class NoiseSchedule(Callback):
    def __init__(self, start=3): self.start = start
    def before_epoch(self): self.learn.model[3].active = self.epoch >= self.start

def noisy_mlp():
    mlp = build_mlp(width=16)
    return nn.Sequential(*mlp[:3], NoiseInjection(), *mlp[3:])

def small_dls(): return xor_dls(n_train=128, n_valid=64, bs=32)

def fit(learn, n_epoch=2):
    with learn.no_bar(), learn.no_logging(): learn.fit(n_epoch, 1e-2)
    return learn

def weights(learn): return [fingerprint(p) for p in learn.model.parameters()]

def no_hooks(model): return all(not m._forward_hooks and not m._forward_pre_hooks for m in model.modules())

# ---- NaNGuard

def test_nanguard_healthy_run_is_untouched():
    plain = fit(fresh_learner(small_dls, noisy_mlp, cbs=NoiseSchedule(start=99), loss_func=nn.CrossEntropyLoss()), 3)
    guarded = fit(fresh_learner(small_dls, noisy_mlp, cbs=[NoiseSchedule(start=99), NaNGuard()], loss_func=nn.CrossEntropyLoss()), 3)
    assert guarded.nan_guard.found is None
    assert weights(plain) == weights(guarded)
    assert plain.recorder.losses == guarded.recorder.losses
    assert no_hooks(guarded.model)

@pytest.mark.parametrize('check_every', [1, 3, 1000])
def test_nanguard_names_epoch_batch_module(check_every):
    learn = fresh_learner(small_dls, noisy_mlp, cbs=[NoiseSchedule(start=3), NaNGuard(check_every=check_every)], loss_func=nn.CrossEntropyLoss())
    with pytest.raises(NonFiniteError, match=r'epoch 3, batch \d.*model\.3 \(NoiseInjection\)'):
        fit(learn, 6)
    found = learn.nan_guard.found
    assert (found['epoch'], found['phase'], found['what'], found['module']) == (3, 'training', 'loss', 'model.3 (NoiseInjection)')
    assert no_hooks(learn.model)
    if check_every == 1: assert all(torch.isfinite(p).all() for p in learn.model.parameters())

def test_nanguard_same_batch_whatever_the_read_schedule():
    found = []
    for every in (1, 1000):
        learn = fresh_learner(small_dls, noisy_mlp, cbs=[NoiseSchedule(start=3), NaNGuard(check_every=every)], loss_func=nn.CrossEntropyLoss(), seed=5)
        with pytest.raises(NonFiniteError): fit(learn, 8)
        found.append(learn.nan_guard.found)
    assert found[0] == found[1]

def test_nanguard_reads_the_device_rarely():
    guard = NaNGuard(check_every=4)
    reads = []
    learn = fresh_learner(small_dls, build_mlp, cbs=guard, loss_func=nn.CrossEntropyLoss())
    original = NaNGuard._check
    def counting(self, clear=False):
        reads.append(self.learn.iter)
        return original(self, clear)
    guard._check = counting.__get__(learn.nan_guard)
    fit(learn, 2)
    n_batches = 2 * (len(learn.dls.train) + len(learn.dls.valid))
    assert len(reads) <= n_batches // 4 + 2 * 2 + 1 < n_batches

def test_nanguard_input():
    x, y = torch.randn(128, 2), torch.randint(0, 2, (128,))
    x[70, 1] = float('nan')
    learn = fresh_learner(lambda: tensor_dls(x, y, x[:32], y[:32], bs=32, drop_last=False), build_mlp, cbs=NaNGuard(), loss_func=nn.CrossEntropyLoss())
    learn.dls.train.shuffle = False
    with pytest.raises(NonFiniteError, match='input is non-finite.*Clean the data'): fit(learn, 1)
    assert (learn.nan_guard.found['what'], learn.nan_guard.found['batch']) == ('input', 2)

class EvalOnlyNaN(nn.Module):
    def forward(self, x): return x if self.training else x * float('nan')

def test_nanguard_validation_phase():
    learn = fresh_learner(small_dls, lambda: nn.Sequential(*build_mlp()[:2], EvalOnlyNaN(), *build_mlp()[2:]), cbs=NaNGuard(), loss_func=nn.CrossEntropyLoss())
    with pytest.raises(NonFiniteError): fit(learn, 1)
    found = learn.nan_guard.found
    assert (found['phase'], found['epoch'], found['batch'], found['module']) == ('validation', 0, 0, 'model.2 (EvalOnlyNaN)')

def test_nanguard_warn_mode_cancels_cleanly():
    learn = fresh_learner(small_dls, noisy_mlp, cbs=[NoiseSchedule(start=1), NaNGuard(raise_error=False)], loss_func=nn.CrossEntropyLoss())
    with pytest.warns(NonFiniteWarning, match='model.3'): fit(learn, 4)
    assert learn.nan_guard.found['epoch'] == 1
    assert no_hooks(learn.model)

def test_nanguard_inactive_outside_fit():
    learn = fresh_learner(small_dls, build_mlp, cbs=NaNGuard(), loss_func=nn.CrossEntropyLoss())
    learn.validate()       # before any fit: must not fail
    fit(learn, 1)
    learn.get_preds()      # after the fit: no hooks, no state
    assert no_hooks(learn.model)

# ---- RNGAudit

def dropout_mlp(): return nn.Sequential(nn.Linear(2, 16), nn.ReLU(), nn.Dropout(0.2), nn.Linear(16, 2))

def test_audit_healthy_dropout_all_expected_and_untouched():
    plain = fit(fresh_learner(small_dls, dropout_mlp, loss_func=nn.CrossEntropyLoss()), 2)
    with warnings.catch_warnings():
        warnings.simplefilter('error', RNGDrawWarning)
        audited = fit(fresh_learner(small_dls, dropout_mlp, cbs=RNGAudit(), loss_func=nn.CrossEntropyLoss()), 2)
    assert len(audited.rng_audit.findings) == 0
    assert weights(plain) == weights(audited)
    assert no_hooks(audited.model)
    where = {(d['where'], d['phase']) for d in audited.rng_audit.draws.values()}
    assert ('model.2 (Dropout)', 'training') in where and ('model.2 (Dropout)', 'validation') not in where

class EvalDraw(nn.Module):
    "Draws only in eval mode (test-time noise by mistake)"
    def forward(self, x): return x if self.training else x + 0 * torch.rand_like(x)

class NumpyDraw(nn.Module):
    def forward(self, x): return x * float(np.random.rand() > -1)

class ParentDraw(nn.Module):
    "A container whose own code draws between two children"
    def __init__(self):
        super().__init__()
        self.a, self.b = nn.Linear(2, 2), nn.Linear(2, 2)
    def forward(self, x):
        x = self.a(x)
        torch.rand(1)
        return self.b(x)

@pytest.mark.parametrize('model_fn, where, phase, mode, rng', [
    (lambda: nn.Sequential(nn.Linear(2, 4), EvalDraw(), nn.Linear(4, 2)), 'model.1 (EvalDraw)', 'validation', 'eval', 'torch'),
    (lambda: nn.Sequential(nn.Linear(2, 4), NumpyDraw(), nn.Linear(4, 2)), 'model.1 (NumpyDraw)', 'training', 'train', 'numpy'),
    (lambda: nn.Sequential(ParentDraw(), nn.Linear(2, 2)), 'model.0 (ParentDraw)', 'training', 'train', 'torch'),
], ids=['eval-draw', 'numpy-draw', 'container-draw'])
def test_audit_finds_stray_draws(model_fn, where, phase, mode, rng):
    learn = fresh_learner(small_dls, model_fn, cbs=RNGAudit(), loss_func=nn.CrossEntropyLoss())
    with pytest.warns(RNGDrawWarning, match=re.escape(where)): fit(learn, 2)
    first = learn.rng_audit.findings[0]
    assert (first['where'], first['phase'], first['mode'], first['rng'], first['first_epoch']) == (where, phase, mode, rng, 0)

def test_audit_allow():
    learn = fresh_learner(small_dls, lambda: nn.Sequential(nn.Linear(2, 4), NumpyDraw(), nn.Linear(4, 2)), cbs=RNGAudit(allow=(NumpyDraw,)), loss_func=nn.CrossEntropyLoss())
    with warnings.catch_warnings():
        warnings.simplefilter('error', RNGDrawWarning)
        fit(learn, 1)
    assert len(learn.rng_audit.findings) == 0 and any(d['why'] == 'allowed by the user' for d in learn.rng_audit.draws.values())

def test_audit_loss_draw_and_validation_pipeline_draw():
    def noisy_loss(pred, y): return nn.functional.cross_entropy(pred + 0 * torch.randn_like(pred), y)
    learn = fresh_learner(small_dls, build_mlp, cbs=RNGAudit(), loss_func=noisy_loss)
    with pytest.warns(RNGDrawWarning, match='loss'): fit(learn, 1)
    assert any(d['where'] == 'loss' for d in learn.rng_audit.findings)
    def jitter_dls():
        x, y = make_xor_data(128, np.random.default_rng(0))
        jitter = lambda b: (b[0] + 0.01 * torch.randn_like(b[0]), b[1])
        return DataLoaders(DataLoader(TensorDataset(x, y), bs=32, shuffle=True), DataLoader(TensorDataset(x, y), bs=32, after_batch=jitter))
    learn = fresh_learner(jitter_dls, build_mlp, cbs=RNGAudit(), loss_func=nn.CrossEntropyLoss())
    with pytest.warns(RNGDrawWarning, match='validation pipeline'): fit(learn, 1)
    finding = learn.rng_audit.findings[0]
    assert (finding['phase'], finding['first_batch']) == ('validation', 1)

def test_audit_stray_tensor_at_late_epoch_with_nanguard():
    learn = fresh_learner(small_dls, noisy_mlp, cbs=[NoiseSchedule(start=3), NaNGuard(), RNGAudit()], loss_func=nn.CrossEntropyLoss())
    with pytest.warns(RNGDrawWarning), pytest.raises(NonFiniteError): fit(learn, 6)
    assert [(d['where'], d['first_epoch']) for d in learn.rng_audit.findings][0] == ('model.3 (NoiseInjection)', 3)
    learn.rng_audit.remove()
    assert no_hooks(learn.model)

def test_nanguard_leaves_gradients_to_the_loss_scaler_under_mixed_precision():
    "fp16 loss scaling overflows on purpose; under a callback named like fastai's MixedPrecision gradients are not judged"
    class MixedPrecision(Callback):
        "Stands in for fastai's (CUDA only): its name is what NaNGuard looks for; skips steps with non-finite gradients like GradScaler"
        def before_step(self):
            if not all(torch.isfinite(p.grad).all() for p in self.learn.model.parameters() if p.grad is not None): raise CancelStepException()
    class SqrtAbs(nn.Module):
        def forward(self, x): return x.abs().sqrt()
    def model():
        lin = nn.Linear(2, 2)
        with torch.no_grad():
            lin.weight[0].zero_()
            lin.bias[0] = 0.
        return nn.Sequential(lin, SqrtAbs(), nn.Linear(2, 2))
    with pytest.raises(NonFiniteError, match='gradient'):
        fit(fresh_learner(small_dls, model, cbs=NaNGuard(), loss_func=nn.CrossEntropyLoss()), 1)
    learn = fresh_learner(small_dls, model, cbs=[NaNGuard(), MixedPrecision()], loss_func=nn.CrossEntropyLoss())
    fit(learn, 1)
    assert learn.nan_guard.found is None


# ---- NaNGuard: the recorded loss and its plot

class LossLog(Callback):
    "The raw training loss of each step (the Recorder keeps a smoothed one)"
    def before_fit(self): self.losses = []
    def after_batch(self):
        if self.training: self.losses.append(float(self.learn.loss))

@pytest.mark.parametrize('check_every', [1, 1000])
def test_nanguard_records_the_loss_up_to_the_first_non_finite_step_and_plots_it(check_every):
    learn = fresh_learner(small_dls, noisy_mlp, cbs=[NoiseSchedule(start=2), NaNGuard(check_every=check_every), LossLog()], loss_func=nn.CrossEntropyLoss())
    with pytest.raises(NonFiniteError): fit(learn, 4)
    guard = learn.nan_guard
    bad = guard.bad_step
    assert bad == 2 * 4 + guard.found['batch'], "4 training batches per epoch, the bad one in epoch 2"
    assert len(guard.losses) == bad + 1 and not np.isfinite(guard.losses[bad]) and np.isfinite(guard.losses[:bad]).all()
    assert list(guard.losses[:bad]) == learn.loss_log.losses[:bad]
    fig = guard.plot()
    ax = fig.axes[0]
    assert list(ax.lines[0].get_ydata()) == list(guard.losses[:bad]) and list(ax.lines[0].get_xdata()) == list(range(bad))
    assert list(ax.lines[1].get_xdata()) == [bad, bad], "the first non-finite step is marked"
    assert 'loss non-finite at epoch 2' in ax.get_title()


def test_nanguard_records_every_training_loss_of_a_healthy_run():
    learn = fit(fresh_learner(small_dls, build_mlp, cbs=[NaNGuard(check_every=3), LossLog()], loss_func=nn.CrossEntropyLoss()), 2)
    guard = learn.nan_guard
    assert guard.found is None and guard.bad_step is None
    assert list(guard.losses) == learn.loss_log.losses
    ax = guard.plot().axes[0]
    assert len(ax.lines) == 1 and len(ax.lines[0].get_ydata()) == 8 and 'every loss finite (8 steps)' in ax.get_title()


def test_nanguard_plot_marks_a_gradient_step_and_a_validation_batch():
    class SqrtAbs(nn.Module):
        def forward(self, x): return x.abs().sqrt()
    def sqrt_model():
        lin = nn.Linear(2, 2)
        with torch.no_grad(): lin.weight[0].zero_(); lin.bias[0] = 0.
        return nn.Sequential(lin, SqrtAbs(), nn.Linear(2, 2))
    learn = fresh_learner(small_dls, sqrt_model, cbs=NaNGuard(), loss_func=nn.CrossEntropyLoss())
    with pytest.raises(NonFiniteError, match='gradient'): fit(learn, 1)
    guard = learn.nan_guard
    assert guard.bad_step == 0 and len(guard.losses) == 1 and np.isfinite(guard.losses[0])
    ax = guard.plot().axes[0]
    assert ax.collections[0].get_offsets().tolist() == [[0, guard.losses[0]]], "the finite loss whose gradient was not"
    learn = fresh_learner(small_dls, lambda: nn.Sequential(*build_mlp()[:2], EvalOnlyNaN(), *build_mlp()[2:]), cbs=NaNGuard(), loss_func=nn.CrossEntropyLoss())
    with pytest.raises(NonFiniteError): fit(learn, 1)
    guard = learn.nan_guard
    assert guard.bad_step is None and len(guard.losses) == 4 and np.isfinite(guard.losses).all()
    ax = guard.plot().axes[0]
    assert list(ax.lines[1].get_xdata()) == [3.5, 3.5] and '(validation)' in ax.get_title()


# ---- findings go through core.emit: sinks record them whatever the warnings filters say

def test_guard_findings_reach_a_finding_sink_under_an_ignore_filter():
    found = []
    learn = fresh_learner(small_dls, noisy_mlp, cbs=[NoiseSchedule(start=1), NaNGuard(raise_error=False), RNGAudit()], loss_func=nn.CrossEntropyLoss())
    with finding_sink(lambda f: found.append(f.category)), warnings.catch_warnings():
        warnings.simplefilter('ignore')
        fit(learn, 3)
    assert found == [RNGDrawWarning, NonFiniteWarning]
    learn.rng_audit.remove()
    found.clear()
    learn = fresh_learner(small_dls, noisy_mlp, cbs=[NoiseSchedule(start=1), NaNGuard()], loss_func=nn.CrossEntropyLoss())
    with finding_sink(lambda f: found.append(f.category)), pytest.raises(NonFiniteError): fit(learn, 3)
    assert found == [NonFiniteWarning]
    found.clear()
    with finding_sink(lambda f: found.append(f.category)):
        fit(fresh_learner(small_dls, build_mlp, cbs=[NaNGuard(), RNGAudit()], loss_func=nn.CrossEntropyLoss()), 2)
    assert found == [], "a healthy run reports nothing"

@pytest.mark.parametrize('dtype', [torch.float32, torch.float16, torch.bfloat16, torch.float64])
def test_isfinite_all_is_exact(dtype):
    "NaNGuard's finiteness test (its smallest and largest elements, no temporary) agrees with torch.isfinite(t).all(): any NaN or inf is caught, and finite elements at the top of the dtype's range are finite (no sum to overflow), in every floating dtype"
    from fastai_paranoid.guards import _isfinite_all
    big = torch.finfo(dtype).max
    cases = [torch.zeros(0, dtype=dtype), torch.randn(1000).to(dtype), torch.full((10_000,), big, dtype=dtype),
             torch.tensor([big, -big, big], dtype=dtype)]
    for t in cases: assert bool(_isfinite_all(t)) and bool(torch.isfinite(t).all())
    for bad in (float('nan'), float('inf'), -float('inf')):
        t = torch.randn(1000).to(dtype)
        t[637] = bad
        assert not bool(_isfinite_all(t))
    both = torch.tensor([float('inf'), -float('inf')], dtype=dtype) # inf - inf is NaN: still caught
    assert not bool(_isfinite_all(both))
    assert bool(_isfinite_all(torch.arange(5))) # integer tensors are always finite

class _AddInPlace(nn.Module):
    "A container that changes its child's output in place: `out = lin(x); out += bias` (a NaN bias once `bad`)"
    def __init__(self):
        super().__init__()
        self.lin, self.bad = nn.Linear(16, 16), False
    def forward(self, x):
        out = self.lin(x)
        out += float('nan') if self.bad else 0.0
        return out

def test_nanguard_reads_a_passed_on_output_once_and_an_in_place_change_again():
    "A container that returns its last child's output unchanged is not read again (resnet's blocks and Sequentials); one that changed it in place is, and is the module named"
    learn = fresh_learner(small_dls, lambda: nn.Sequential(nn.Linear(2, 16), nn.Sequential(nn.Linear(16, 16), nn.ReLU()), _AddInPlace(), nn.Linear(16, 2)),
                          cbs=NaNGuard(), loss_func=nn.CrossEntropyLoss())
    seen = []
    class Count(Callback):
        order = NaNGuard.order + 1
        def after_loss(self): seen.append([type(m).__name__ for m in self.learn.nan_guard._batch_modules])
    with learn.no_bar(), learn.no_logging(): learn.fit(1, 1e-2, cbs=Count())
    # 7 modules give a tensor: the outer and inner Sequential hand on their last child's output (not read again); _AddInPlace's is changed in place (read)
    assert seen[0] == ['Linear', 'Linear', 'ReLU', 'Linear', '_AddInPlace', 'Linear'], seen[0]
    learn.model[2].bad = True
    with pytest.raises(NonFiniteError, match=r'model\.2 \(_AddInPlace\)'):
        with learn.no_bar(), learn.no_logging(): learn.fit(1, 1e-2)
