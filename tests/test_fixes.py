"""Every printed fix, applied as a user would, makes its finding go away (issue 25, part 4).

Each case takes a planted bug from tests/test_checks.py or tests/test_modelchecks.py, runs the one check that finds it,
reads the fix the finding prints (the test asserts the words it applies are there), applies that fix to the Learner or
rebuilds the Learner as the fix says, and runs the check again: the finding was there before and is gone after.
A fix with several alternatives gets one case per alternative."""
import re, warnings
from functools import partial
import pytest
import torch
from torch import nn
import torch.nn.functional as F
from fastai.callback.core import Callback
from fastai.callback.training import BnFreeze
from fastai.learner import Learner
from fastai.losses import BCEWithLogitsLossFlat, CrossEntropyLossFlat
from fastai.optimizer import SGD
from fastai.torch_core import params
from fastai_paranoid.bn import FreezeBNStats
from fastai_paranoid.checks import check_frozen, check_loss_activation, check_loss_at_init, check_lr, check_overfit_one_batch
from fastai_paranoid.fixtures import (build_mlp, digits_transfer_dls, pretrained_digits_trunk, random_image_dls, small_cnn,
                                      tensor_dls, transfer_model, xor_dls)
from fastai_paranoid.fresh import fresh_learner
from test_checks import CASES, digits_cnn, fit_then_freeze, overconfident_mlp, trunk_then_head, xor_learner
from test_modelchecks import (BiasHead, CustomFn, Detached, MaskedMLP, Slice, Unused, _square, features_dls, masked_dls, mlp,
                              replaced_head, splitter_misses)

FINDINGS = ('failed', 'warning', 'info')

def run(check, learn):
    "The one check, as `learn.sanity_check(checks=[...])` runs it (a name: a check of 32_modelchecks; a function: called)"
    if callable(check): return check(learn)
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        return learn.sanity_check(checks=[check], on_finding=None, progress=False)[0]

def fix_works(check, planted, says, apply, after=('passed',), before=FINDINGS):
    "The planted Learner has a finding (a verdict in `before`) whose fix says `says`; `apply(learn)` (the fix as a user applies it) gives a Learner on which the check passes"
    learn = planted()
    res = run(check, learn)
    assert res.verdict in before, res
    for words in [says] if isinstance(says, str) else says: assert words in res.fix, (words, res.fix)
    fixed = apply(learn)
    res_fixed = run(check, fixed if fixed is not None else learn)
    assert res_fixed.verdict in after, (res.fix, res_fixed)
    return res, res_fixed

def without_last(learn):
    "Remove the model's final module, as the fix says (the Learner keeps its data, loss and settings)"
    learn.model = learn.model[:-1]
    return learn

# --- 34_checks: loss at init

def test_loss_at_init_shrink_the_last_layer():
    def shrink(learn):
        with torch.no_grad():
            learn.model[-1].weight.mul_(0.02) # std 10 -> 0.2, near Kaiming's for 32 inputs
            learn.model[-1].bias.zero_()
    fix_works(check_loss_at_init, lambda: fresh_learner(xor_dls, overconfident_mlp, loss_func=CrossEntropyLossFlat()),
              'shrink its weights, zero its bias', shrink)

@pytest.mark.parametrize('n_out', [10, 1])
def test_loss_at_init_one_output_per_class(n_out):
    "A head of 10 outputs (warning) or 1 (failed) for XOR's 2 classes, on plain tensors (no dls.c): the printed count, applied, passes"
    planted = lambda: fresh_learner(xor_dls, lambda: nn.Sequential(nn.Linear(2, 32), nn.ReLU(), nn.Linear(32, n_out)),
                                    loss_func=CrossEntropyLossFlat())
    def apply(learn):
        (count,) = re.findall(r"nn\.Linear\(\.\.\., (\d+)\) as the last layer", run(check_loss_at_init, learn).fix)
        learn.model[-1] = nn.Linear(32, int(count))
    fix_works(check_loss_at_init, planted, 'nn.Linear(..., 2) as the last layer', apply)

# --- 34_checks: loss/activation

@pytest.mark.parametrize('case', ['loss_activation_digits', 'loss_activation_nn_module_loss'])
def test_loss_activation_remove_the_final_softmax(case):
    _, planted, _ = CASES[case]
    fix_works(check_loss_activation, planted, 'Remove the final Softmax', without_last)

class SoftmaxInForward(nn.Module):
    def __init__(self, apply_softmax=True): super().__init__(); self.apply_softmax, self.body = apply_softmax, small_cnn()
    def forward(self, x):
        out = self.body(x)
        return torch.softmax(out, dim=1) if self.apply_softmax else out

def test_loss_activation_remove_the_softmax_call_in_forward():
    planted = lambda: fresh_learner(random_image_dls, SoftmaxInForward, loss_func=CrossEntropyLossFlat())
    res, _ = fix_works(check_loss_activation, planted, 'Remove the torch.softmax(...) call at the end of SoftmaxInForward.forward',
                       lambda learn: fresh_learner(random_image_dls, partial(SoftmaxInForward, apply_softmax=False), loss_func=CrossEntropyLossFlat()))
    assert 'model.body.7 (Linear)' in res.message and not res.message.startswith('model.body.7') # named as forward's call

@pytest.mark.parametrize('act', [nn.ReLU, nn.Sigmoid, nn.Tanh])
def test_loss_activation_remove_the_clamping_activation(act):
    planted = lambda: fresh_learner(xor_dls, lambda: nn.Sequential(nn.Linear(2, 32), nn.ReLU(), nn.Linear(32, 2), act()),
                                    loss_func=CrossEntropyLossFlat())
    fix_works(check_loss_activation, planted, 'Remove the final activation', without_last)

def _multilabel_dls():
    g = torch.Generator().manual_seed(0)
    x, y = torch.randn(64, 1, 16, 16, generator=g), torch.randint(0, 2, (64, 4), generator=g).float()
    return tensor_dls(x[:48], y[:48], x[48:], y[48:], bs=16)

def test_loss_activation_remove_the_sigmoid_before_bce_with_logits():
    planted = lambda: fresh_learner(_multilabel_dls, lambda: nn.Sequential(small_cnn(), nn.Sigmoid()), loss_func=BCEWithLogitsLossFlat())
    fix_works(check_loss_activation, planted, 'Remove the final Sigmoid', without_last)

@pytest.mark.parametrize('fix', ['LogSoftmax', 'CrossEntropyLossFlat'])
def test_loss_activation_nll_wants_log_probabilities(fix):
    planted = lambda: fresh_learner(random_image_dls, small_cnn, loss_func=nn.NLLLoss())
    def apply(learn):
        if fix == 'LogSoftmax': learn.model = nn.Sequential(learn.model, nn.LogSoftmax(dim=1))
        else: learn.loss_func = CrossEntropyLossFlat()
    fix_works(check_loss_activation, planted, ['nn.LogSoftmax(dim=1)', 'CrossEntropyLossFlat'], apply)

def test_loss_activation_one_output_per_class():
    planted = lambda: fresh_learner(random_image_dls, partial(small_cnn, n_out=1), loss_func=nn.CrossEntropyLoss())
    fix_works(check_loss_activation, planted, 'one output per class',
              lambda learn: fresh_learner(random_image_dls, partial(small_cnn, n_out=4), loss_func=nn.CrossEntropyLoss()))

# --- 34_checks: overfit one batch (its fix sends the user to check_loss_activation, whose fix then applies)

def test_overfit_one_batch_follow_check_loss_activation():
    _, planted, _ = CASES['overfit_one_batch']
    def apply(learn):
        res = check_loss_activation(learn) # the fix's first step, as printed
        assert res.verdict == 'failed' and 'Remove the final Softmax' in res.fix
        return without_last(learn)
    fix_works(check_overfit_one_batch, planted, 'run check_loss_activation', apply)

# --- 34_checks: learning rate (the fix names a rate to try: that rate passes)

@pytest.mark.parametrize('case', ['lr_sgd', 'lr_adam'])
def test_lr_follow_the_rates_the_fix_names(case):
    "The fix names a rate to try; a user applies it, runs the check again, and applies the next one it names: a pass within 3 rounds"
    _, planted, _ = CASES[case]
    learn, rates = planted(), []
    res = check_lr(learn)
    assert res.verdict == 'failed', res
    while res.verdict != 'passed' and len(rates) < 3:
        (rate,) = re.findall(r"try ([0-9.e-]+),", res.fix) # "Lower the learning rate (learn.lr, or fit's lr): try <rate>, ..."
        rates.append(float(rate))
        learn.lr = float(rate)
        res = check_lr(learn)
    assert res.verdict == 'passed', (rates, res)
    # measured: SGD at 10 passes at the first rate named (1); Adam at 1 needs two (0.1 still blows the weights away, 0.01 passes)
    assert rates == {'lr_sgd': [1.0], 'lr_adam': [0.1, 0.01]}[case], rates

def test_lr_the_band_of_lr_sweep():
    "The fix's other way: the best rate of lr_sweep(learn), applied, passes"
    from fastai_paranoid.checks import lr_sweep
    _, planted, _ = CASES['lr_adam']
    learn = planted()
    assert 'lr_sweep(learn)' in check_lr(learn).fix
    learn.lr = lr_sweep(learn).best
    assert check_lr(learn).verdict == 'passed', learn.lr

# --- 34_checks: frozen really frozen

def _frozen(**kw):
    learn = fresh_learner(digits_transfer_dls, lambda: transfer_model(pretrained_digits_trunk()), loss_func=CrossEntropyLossFlat(),
                          **({'splitter': trunk_then_head} | kw))
    learn.freeze()
    return learn

def _then_freeze(learn):
    learn.freeze()
    return learn

@pytest.mark.parametrize('fix', ['BnFreeze', 'FreezeBNStats', 'train_bn=True'])
def test_frozen_bn_statistics_drift(fix):
    "train_bn=False freezes the trunk's BN parameters, and their statistics drift: each of the three fixes the message gives"
    apply = {'BnFreeze': lambda learn: learn.add_cb(BnFreeze()), 'FreezeBNStats': lambda learn: learn.add_cb(FreezeBNStats()),
             'train_bn=True': lambda learn: _frozen(train_bn=True)}[fix]
    fix_works(check_frozen, partial(_frozen, train_bn=False), ['cbs=BnFreeze()', 'FreezeBNStats()', 'train_bn=True'], apply)

@pytest.mark.parametrize('fix', ['train_bn=False', 'FreezeBNStats'])
def test_frozen_bn_freeze_that_holds_nothing(fix):
    "fastai's BnFreeze under the default train_bn=True holds nothing: both fixes"
    apply = {'train_bn=False': lambda learn: _frozen(train_bn=False, cbs=BnFreeze()),
             'FreezeBNStats': lambda learn: _frozen(cbs=FreezeBNStats())}[fix]
    res, _ = fix_works(check_frozen, partial(_frozen, cbs=BnFreeze()), ['train_bn=False', 'cbs=FreezeBNStats()'], apply)
    assert 'BnFreeze holds nothing' in res.message

@pytest.mark.parametrize('fix', ['clear the gradients', 'linear_probe'])
def test_frozen_stale_gradients(fix):
    "fit, freeze(), fit: the frozen trunk keeps the first fit's gradients and the optimizer steps it"
    def clear(learn):
        for p in learn.model.parameters(): p.grad = None if not p.requires_grad else p.grad # the fix's line, verbatim
    apply = {'clear the gradients': clear, 'linear_probe': lambda learn: learn.linear_probe(lr=1e-2)}[fix]
    if fix == 'linear_probe': from fastai_paranoid import presets # noqa: F401 (patches Learner.linear_probe)
    fix_works(check_frozen, partial(fit_then_freeze, cbs=BnFreeze(), train_bn=False),
              ['p.grad = None if not p.requires_grad else p.grad', 'learn.linear_probe()'], apply)

class _CheckAtFirstFit(Callback):
    "Run check_frozen at the first fit's before_fit, as `fastai-paranoid check` does inside fine_tune"
    def before_fit(self):
        if hasattr(self, 'res'): return
        self.res = None
        self.res = check_frozen(self.learn)

def _fine_tune_result(**kw):
    from fastai.callback.schedule import fine_tune # noqa: F401 (patches Learner.fine_tune)
    learn = fresh_learner(digits_transfer_dls, lambda: transfer_model(pretrained_digits_trunk()), loss_func=CrossEntropyLossFlat(),
                          cbs=_CheckAtFirstFit(), **kw)
    with learn.no_bar(), learn.no_logging(), warnings.catch_warnings():
        warnings.simplefilter('ignore')
        learn.fine_tune(1)
    return learn._check_at_first_fit.res

def test_frozen_fine_tune_on_one_group_gets_a_splitter():
    "fine_tune's freeze() on a Learner without a splitter freezes nothing (info): the printed splitter, applied, freezes the body"
    res = _fine_tune_result()
    assert res.verdict == 'info' and 'splitter=lambda m: [params(m[0]), params(m[1])]' in res.fix, res
    assert _fine_tune_result(splitter=lambda m: [params(m[0]), params(m[1])]).verdict == 'passed'

@pytest.mark.parametrize('fix', ['splitter', 'by hand'])
def test_frozen_freeze_that_froze_nothing(fix):
    "learn.freeze() on one parameter group (skipped, said): a splitter, or freezing the body by hand, gives a freeze the check passes"
    planted = lambda: _then_freeze(fresh_learner(digits_transfer_dls, lambda: transfer_model(pretrained_digits_trunk()),
                                                 loss_func=CrossEntropyLossFlat()))
    def by_hand(learn):
        learn.model[0].requires_grad_(False) # as printed, with BnFreeze: the body holds BatchNorm layers
        learn.add_cb(BnFreeze())
    apply = {'splitter': lambda learn: _frozen(splitter=lambda m: [params(m[0]), params(m[1])]), 'by hand': by_hand}[fix]
    res, _ = fix_works(check_frozen, planted, ['splitter=lambda m: [params(m[0]), params(m[1])]',
                                               'learn.model[0].requires_grad_(False), with cbs=BnFreeze() if the body holds BatchNorm'],
                       apply, before=('skipped',))
    assert 'froze nothing' in res.message

def test_frozen_by_hand_without_bn_freeze_is_caught():
    "Why the by-hand fix names BnFreeze: requires_grad_(False) alone freezes the body's BatchNorm parameters, not their statistics"
    learn = fresh_learner(digits_transfer_dls, lambda: transfer_model(pretrained_digits_trunk()), loss_func=CrossEntropyLossFlat())
    learn.model[0].requires_grad_(False)
    res = check_frozen(learn)
    assert res.verdict == 'failed' and 'cbs=BnFreeze()' in res.fix, res

# --- 32_modelchecks: the optimizer holds every parameter

@pytest.mark.parametrize('fix', ['create_opt', 'opt = None'])
def test_optimizer_built_before_the_head_was_replaced(fix):
    def apply(learn):
        if fix == 'create_opt': learn.create_opt()
        else: learn.opt = None
    fix_works('check_optimizer_coverage', partial(replaced_head, True, 0), ['learn.create_opt()', 'learn.opt = None'], apply)

@pytest.mark.parametrize('fix', ['every parameter', 'freeze'])
def test_splitter_leaves_the_body_out(fix):
    def apply(learn):
        if fix == 'every parameter': learn.splitter = lambda m: [params(m[0]), params(m[3])]
        else: learn.model[0].requires_grad_(False)
    fix_works('check_optimizer_coverage', partial(splitter_misses, True, 0), ['params(m) per group', 'p.requires_grad_(False)'], apply)

# --- 32_modelchecks: gradients reach every parameter

def test_data_in_the_forward():
    fix_works('check_gradient_flow', lambda: Learner(features_dls(0), Detached(True), loss_func=nn.CrossEntropyLoss()),
              'not on .data or .detach()ed copies', lambda learn: Learner(features_dls(0), Detached(False), loss_func=nn.CrossEntropyLoss()))

@pytest.mark.parametrize('fix', ['call it', 'delete it', 'freeze it'])
def test_unused_submodule(fix):
    def apply(learn):
        if fix == 'call it': return Learner(features_dls(0), Unused(True), loss_func=nn.CrossEntropyLoss())
        if fix == 'delete it': del learn.model.extra
        else: learn.model.extra.requires_grad_(False)
    fix_works('check_gradient_flow', lambda: Learner(features_dls(0), Unused(False), loss_func=nn.CrossEntropyLoss()),
              ['call every submodule you keep (or delete it)', 'p.requires_grad_(False)'], apply)

# --- 32_modelchecks: every input reaches the output

@pytest.mark.parametrize('fix', ['use every feature', 'drop the features'])
def test_forward_reads_half_the_features(fix):
    def apply(learn):
        if fix == 'use every feature': return Learner(features_dls(0), Slice(10, mlp(10)), loss_func=nn.CrossEntropyLoss())
        g = torch.Generator().manual_seed(0) # features_dls(0) with features 5-9 dropped from the data
        x = torch.randn(320, 10, generator=g)
        y = (x[:, 0] + x[:, 3] > 0).long()
        x = x[:, :5]
        return Learner(tensor_dls(x[:256], y[:256], x[256:], y[256:], bs=32), Slice(5, mlp(5)), loss_func=nn.CrossEntropyLoss())
    fix_works('check_input_dependency', lambda: Learner(features_dls(0), Slice(5, mlp(5)), loss_func=nn.CrossEntropyLoss()),
              ['Use every input in the forward', 'drop the input from the data'], apply)

def test_forward_ignores_the_mask():
    fix_works('check_input_dependency', lambda: Learner(masked_dls(0), MaskedMLP(False), loss_func=nn.CrossEntropyLoss()),
              'an attention or padding mask', lambda learn: Learner(masked_dls(0), MaskedMLP(True), loss_func=nn.CrossEntropyLoss()))

# --- 32_modelchecks: distinct inputs get distinct outputs

def test_head_returns_its_bias():
    fix_works('check_output_variation', lambda: Learner(features_dls(0), BiasHead(True), loss_func=nn.CrossEntropyLoss()),
              'a forward that returns something independent of its input (a bias',
              lambda learn: Learner(features_dls(0), BiasHead(False), loss_func=nn.CrossEntropyLoss()))

# --- 32_modelchecks: a custom autograd.Function's backward is its derivative

def test_custom_function_backward():
    "The fix's verification, torch.autograd.gradcheck, fails on the wrong backward and passes on the fixed one; the check agrees"
    x = torch.randn(5, dtype=torch.float64, requires_grad=True)
    with pytest.raises(RuntimeError, match='Jacobian mismatch'): torch.autograd.gradcheck(_square(True).apply, (x,))
    assert torch.autograd.gradcheck(_square(False).apply, (x,))
    fix_works('check_gradient_correctness', lambda: Learner(features_dls(0), CustomFn(_square(True)), loss_func=nn.CrossEntropyLoss()),
              ['Fix the backward of', 'torch.autograd.gradcheck('],
              lambda learn: Learner(features_dls(0), CustomFn(_square(False)), loss_func=nn.CrossEntropyLoss()))

# --- issue 39: each fix whose text was added or changed, applied to its case

def _regression(y_shape, n=512):
    "A regression whose targets are of shape [n] or [n, 1]"
    g = torch.Generator().manual_seed(0)
    x = torch.randn(n, 8, generator=g)
    y = x @ torch.randn(8, generator=g)
    y = y if y_shape == 1 else y[:, None]
    return tensor_dls(x[:400], y[:400], x[400:], y[400:], bs=64)

class _View(nn.Module):
    "Reshape the outputs at the end of the forward, as the fix prints it (`pred.view(...)`)"
    def __init__(self, *shape): super().__init__(); self.shape = shape
    def forward(self, x): return x.view(*self.shape)

def _shape_findings(learn):
    from fastai_paranoid.core import finding_sink
    from fastai_paranoid.fitchecks import LossShapeGuard
    found = []
    learn.add_cb(LossShapeGuard())
    with finding_sink(found.append), warnings.catch_warnings():
        warnings.simplefilter('ignore')
        with learn.no_bar(), learn.no_logging(): learn.fit(1, 1e-2)
    return [f for f in found if f.kind == 'loss_shape_broadcast']

@pytest.mark.parametrize('fix', ['flat loss', 'outputs', 'targets'])
@pytest.mark.parametrize('outputs', ['[bs, 1] vs [bs]', '[bs] vs [bs, 1]'])
def test_loss_shape_broadcast_each_alternative_fits_its_shapes(outputs, fix):
    "Both ways round, each of the fix's three alternatives, applied as printed, gives a fit without the finding"
    from fastai.losses import MSELossFlat
    flat_out = outputs == '[bs] vs [bs, 1]'
    model = lambda *tail: nn.Sequential(nn.Linear(8, 1), *([nn.Flatten(0)] if flat_out else []), *tail)
    y_dim = 2 if flat_out else 1
    (found,) = _shape_findings(Learner(_regression(y_dim), model(), loss_func=nn.MSELoss()))
    out_view, y_view = ('view(-1, 1)', 'view(-1)') if flat_out else ('view(-1)', 'view(-1, 1)')
    assert f'`pred.{out_view}`' in found.fix and f'`y.{y_view}`' in found.fix and 'MSELossFlat()' in found.fix, found.fix
    fixed = {'flat loss': lambda: Learner(_regression(y_dim), model(), loss_func=MSELossFlat()),
             'outputs': lambda: Learner(_regression(y_dim), model(_View(-1, 1) if flat_out else _View(-1)), loss_func=nn.MSELoss()),
             'targets': lambda: Learner(_regression(2 if y_dim == 1 else 1), model(), loss_func=nn.MSELoss())}[fix]
    assert _shape_findings(fixed()) == []

def _zero_targets(n_classes=1):
    "XOR points whose targets are all 0 (so that cross-entropy runs on one output), or XOR's own labels"
    dls = xor_dls()
    if n_classes > 1: return dls
    x, y = dls.train.dataset.tensors[0], dls.valid.dataset.tensors[0]
    return tensor_dls(x, torch.zeros(len(x), dtype=torch.long), y, torch.zeros(len(y), dtype=torch.long), bs=32)

_one_output = lambda n_out: lambda: nn.Sequential(nn.Linear(2, 32), nn.ReLU(), nn.Linear(32, n_out))

@pytest.mark.parametrize('fix', ['n_out', 'BCEWithLogitsLossFlat'])
def test_loss_activation_one_output_asks_why(fix):
    "One output under cross-entropy on XOR's 2 classes: the fix asks why, with the data's count; each way it names passes"
    planted = lambda: fresh_learner(xor_dls, _one_output(1), loss_func=CrossEntropyLossFlat())
    def apply(learn):
        (n,) = re.findall(r"nn\.Linear\(\.\.\., (\d+)\) as the last layer", run(check_loss_activation, learn).fix)
        if fix == 'n_out': return fresh_learner(xor_dls, _one_output(int(n)), loss_func=CrossEntropyLossFlat())
        return fresh_learner(xor_dls, _one_output(1), loss_func=BCEWithLogitsLossFlat())
    res, _ = fix_works(check_loss_activation, planted, ['Why does the model have 1 output when the data hold 2 classes', 'BCEWithLogitsLossFlat()'], apply)
    assert 'out_features=1' in res.message

def test_lr_constant_loss_is_not_the_rate():
    "A loss of 0 at every step (one output under cross-entropy): not 'non-finite', no lower rate; one output per class passes"
    planted = lambda: fresh_learner(_zero_targets, _one_output(1), loss_func=CrossEntropyLossFlat(), lr=1e-2)
    res, _ = fix_works(check_lr, planted, 'give the model one output per class',
                       lambda learn: fresh_learner(_zero_targets, _one_output(2), loss_func=CrossEntropyLossFlat(), lr=1e-2))
    assert 'non-finite' not in res.message and 'Lower the learning rate' not in res.fix and res.measured['constant_loss'] == 0

class _TimesZero(nn.Module):
    "Multiplies its MLP's output by `scale` and adds a bias: at 0 the MLP gets no gradient"
    def __init__(self, scale): super().__init__(); self.scale, self.net, self.bias = scale, nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Linear(32, 2)), nn.Parameter(torch.zeros(2))
    def forward(self, x): return self.net(x) * self.scale + self.bias

def _dead(act=nn.ReLU, bias=-100.):
    model = nn.Sequential(nn.Linear(10, 32), act(), nn.Linear(32, 2))
    nn.init.constant_(model[0].bias, bias)
    return model

@pytest.mark.parametrize('case', ['loss', 'dead: LeakyReLU', 'dead: re-initialise', 'multiplied by zero'])
def test_gradient_flow_zero_gradients_each_cause_its_fix(case):
    "An all-zero gradient, named by its measured cause; the fix that cause prints, applied, passes"
    if case == 'loss':
        zero = lambda: tensor_dls(*(lambda d: (d[0], torch.zeros(len(d[0]), dtype=torch.long)))(features_dls(0).train.dataset.tensors),
                                  *(lambda d: (d[0], torch.zeros(len(d[0]), dtype=torch.long)))(features_dls(0).valid.dataset.tensors), bs=32)
        planted = lambda: Learner(zero(), mlp_out(1), loss_func=nn.CrossEntropyLoss())
        says, apply = 'give the model one output per class', lambda learn: Learner(zero(), mlp_out(2), loss_func=nn.CrossEntropyLoss())
    elif case.startswith('dead'):
        planted = lambda: Learner(features_dls(0), _dead(), loss_func=nn.CrossEntropyLoss())
        says = ['re-initialise the layers in front of them', 'nn.LeakyReLU']
        apply = ((lambda learn: Learner(features_dls(0), _dead(nn.LeakyReLU), loss_func=nn.CrossEntropyLoss())) if 'Leaky' in case else
                 (lambda learn: learn.model[0].reset_parameters()))
    else:
        planted = lambda: Learner(features_dls(0), _TimesZero(0.), loss_func=nn.CrossEntropyLoss())
        says, apply = 'multiplies their contribution by zero', lambda learn: Learner(features_dls(0), _TimesZero(1.), loss_func=nn.CrossEntropyLoss())
    res, _ = fix_works('check_gradient_flow', planted, says, apply)
    assert '.data' not in res.fix, res.fix

def mlp_out(n_out): return nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Linear(32, n_out))

class _OwnRate(Callback):
    "The user's callback sets the rate of every batch itself"
    def before_batch(self): self.opt.set_hyper('lr', 0.5)

@pytest.mark.parametrize('check', [check_overfit_one_batch, check_lr], ids=lambda f: f.__name__)
def test_rate_set_by_a_callback_give_the_rate(check):
    "A rate a callback sets during the fit, which no check reads: an info that says how to give it; given, the check passes"
    planted = lambda: fresh_learner(partial(xor_dls, n_train=512), build_mlp, loss_func=CrossEntropyLossFlat(), opt_func=SGD,
                                    lr=1e-5, cbs=_OwnRate())
    given = {} # the rate, once the fix gave it
    def sanity_check(learn): # as the fix says: learn.sanity_check(lr=...)
        with warnings.catch_warnings():
            warnings.simplefilter('ignore')
            return learn.sanity_check(checks=[check.__name__], lr=given.get('lr'), on_finding=None, progress=False)[0]
    res, _ = fix_works(sanity_check, planted, 'learn.sanity_check(lr=...)', lambda learn: given.update(lr=0.5), before=('info',))
    assert res.measured['rate_set_by'] == '_OwnRate' and res.claim == ''

def test_normalization_table_of_pixels_one_mean_and_std():
    "The digits as a TabularPandas of 64 pixel columns (0-255, no Normalize): the fix is one mean and std over all of them, not a per-pixel std (|z| 32 per feature); applied to the DataFrame as printed, the check passes"
    import pandas as pd
    from sklearn.datasets import load_digits
    from fastai.tabular.all import TabularPandas, CategoryBlock, RandomSplitter, tabular_learner
    from fastai_paranoid.datachecks import check_input_normalization
    digits = load_digits()
    cont_names = [f'px{i}' for i in range(64)]
    df = pd.DataFrame(digits.data * 16, columns=cont_names)
    df['label'] = digits.target
    def learner(df):
        to = TabularPandas(df, splits=RandomSplitter(seed=0)(df), procs=[], cont_names=cont_names, y_names='label', y_block=CategoryBlock())
        return tabular_learner(to.dataloaders(bs=64), layers=[32])
    res = check_input_normalization(learner(df))
    assert res.verdict == 'info' and 'one mean and std over all of them' in res.fix and 'procs=[Normalize]' in res.fix, res.fix
    (z_feature, z_pooled) = map(float, re.search(r"\|z\| = (\d+\.\d) \(feature.*within \|z\| = (\d+\.\d)", res.fix).groups())
    assert z_feature > 20 and z_pooled < 3, res.fix
    m, s = map(float, re.search(r"`df\[cont_names\] = \(df\[cont_names\] - ([0-9.e+-]+)\) / ([0-9.e+-]+)`", res.fix).groups())
    df[cont_names] = (df[cont_names] - m) / s # the fix's line
    assert check_input_normalization(learner(df)).verdict == 'passed'
