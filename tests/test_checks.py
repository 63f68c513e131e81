"Scenario matrix for fastai_paranoid.checks: each check both ways, each check leaves the Learner as it found it, the runner's on_finding modes."
import math, time, warnings
from functools import partial
import numpy as np
import pytest
import torch
from torch import nn
from fastai.callback.core import Callback
from fastai.callback.training import BnFreeze
from fastai.losses import CrossEntropyLossFlat, MSELossFlat
from fastai.optimizer import SGD
from fastai.torch_core import params
from fastai_paranoid.core import ParanoidError, ParanoidWarning, fingerprint, rng_fingerprint, registered_checks
from fastai_paranoid.fixtures import (build_mlp, digits_dls, digits_transfer_dls, make_xor_data, pretrained_digits_trunk,
                                      random_image_dls, small_cnn, bn_cnn, tensor_dls, transfer_model, xor_dls)
from fastai_paranoid.fresh import fresh_learner
from fastai_paranoid.checkutils import *
from fastai_paranoid.checks import *
from fastai_paranoid.sanity import *

MODEL_CHECKS = [check_loss_at_init, check_loss_activation, check_overfit_one_batch, check_lr, check_frozen]

def trunk_then_head(m): return [params(m[0]), params(m[1])]

class EvalLayers(Callback):
    "Put the given layers in eval mode at the start of every training phase (holds references to the model's layers)"
    order = 1
    def __init__(self, layers): self.layers = layers
    def before_train(self):
        for m in self.layers: m.eval()

def snapshot(learn):
    "Everything a check must leave alone"
    opt_state = [] if learn.opt is None else [(id(p), k, fingerprint(v)) for p, _, state, _ in learn.opt.all_params()
                                              for k, v in state.items() if isinstance(v, torch.Tensor)]
    return {'state_dict': {k: fingerprint(v) for k, v in learn.model.state_dict().items()},
            'param_ids': [id(p) for p in learn.model.parameters()],
            'requires_grad': [p.requires_grad for p in learn.model.parameters()],
            'training': [m.training for m in learn.model.modules()],
            'opt': None if learn.opt is None else (id(learn.opt), learn.opt.frozen_idx, opt_state,
                                                  [h['lr'] for h in learn.opt.hypers]),
            'cbs': [(id(cb), getattr(cb, 'learn', None) is learn) for cb in learn.cbs],
            'lr': learn.lr, 'loss_func': id(learn.loss_func),
            'rng': rng_fingerprint(learn.dls),
            'dl_state': [sorted(k for k in vars(dl) if k != 'rng') for dl in learn.dls.loaders]}

def trained_frozen_learner(cbs=None):
    "A transfer Learner that has trained (its optimizer has state), then frozen: the hardest case to leave untouched"
    learn = fresh_learner(digits_transfer_dls, lambda: transfer_model(pretrained_digits_trunk()), loss_func=CrossEntropyLossFlat(),
                          splitter=trunk_then_head, cbs=cbs)
    with learn.no_bar(), learn.no_logging(): learn.fit(1)
    learn.freeze()
    learn.model.eval()
    return learn

@pytest.mark.parametrize('check', MODEL_CHECKS, ids=lambda c: c.__name__)
def test_check_leaves_learner_unchanged(check):
    learn = trained_frozen_learner(cbs=BnFreeze())
    before = snapshot(learn)
    check(learn)
    assert snapshot(learn) == before

def test_runner_leaves_learner_unchanged():
    learn = trained_frozen_learner()
    before = snapshot(learn)
    report = learn.sanity_check(checks=MODEL_CHECKS, on_finding=None, progress=False)
    assert len(report) == len(MODEL_CHECKS)
    assert snapshot(learn) == before
    # and the next fit is the one the user would have had without the checks
    twin = trained_frozen_learner()
    for l in (learn, twin):
        with l.no_bar(), l.no_logging(): l.fit(1)
    assert snapshot(learn)['state_dict'] == snapshot(twin)['state_dict']

def test_checks_are_deterministic():
    learn = fresh_learner(digits_dls, partial(small_cnn, n_out=10, size=8), loss_func=CrossEntropyLossFlat(), lr=3e-3)
    first = [c(learn).measured for c in MODEL_CHECKS[:4]]
    assert [c(learn).measured for c in MODEL_CHECKS[:4]] == first

# each check both ways: (planted bug -> failed, healthy -> passed)
def xor_learner(**kw): return fresh_learner(partial(xor_dls, n_train=512), build_mlp, loss_func=CrossEntropyLossFlat(), **kw)

def raw_xor_dls():
    rng = np.random.default_rng(0)
    (xt, yt), (xv, yv) = make_xor_data(256, rng), make_xor_data(2000, rng)
    return tensor_dls(xt * 255, yt, xv * 255, yv)

def overconfident_mlp():
    "torchtest2's bug 8 on seed 001's MLP: a last layer initialised with std 10 (Kaiming's is ~0.18 for 32 inputs)"
    model = build_mlp()
    with torch.no_grad(): model[-1].weight.normal_(0, 10.)
    return model

def test_loss_at_init_explained_by_unscaled_inputs_is_info():
    "Raw-scale inputs (seed 001's XOR points x 255) make the first outputs large; the check shows it with the standardized loss, as info (check_input_normalization owns the warning)"
    res = check_loss_at_init(fresh_learner(raw_xor_dls, build_mlp, loss_func=CrossEntropyLossFlat()))
    assert res.verdict == 'info' and res.level == 'info', res
    assert res.measured['loss'] > 2 * math.log(2) and res.measured['loss_standardized_inputs'] < 1.25 * math.log(2) + 0.1
    assert res.measured['input_scale'] > 50 and 'standardized' in res.message and 'Normalize' in res.fix
    # the overconfident head is not explained by the inputs: standardizing leaves the loss high, and the check fails
    assert check_loss_at_init(fresh_learner(xor_dls, overconfident_mlp, loss_func=CrossEntropyLossFlat())).verdict == 'failed'

def digits_cnn(buggy=False): return small_cnn(n_out=10, size=8, buggy=buggy)

CASES = {
    'loss_at_init': (check_loss_at_init,
                     lambda: fresh_learner(xor_dls, overconfident_mlp, loss_func=CrossEntropyLossFlat()),
                     lambda: xor_learner()),
    'loss_activation_digits': (check_loss_activation,
                               lambda: fresh_learner(digits_dls, partial(digits_cnn, buggy=True), loss_func=CrossEntropyLossFlat()),
                               lambda: fresh_learner(digits_dls, digits_cnn, loss_func=CrossEntropyLossFlat())),
    'loss_activation_nn_module_loss': (check_loss_activation,
                                       lambda: fresh_learner(random_image_dls, partial(small_cnn, buggy=True), loss_func=nn.CrossEntropyLoss()),
                                       lambda: fresh_learner(random_image_dls, small_cnn, loss_func=nn.CrossEntropyLoss())),
    'overfit_one_batch': (check_overfit_one_batch,
                          lambda: fresh_learner(digits_dls, partial(digits_cnn, buggy=True), loss_func=CrossEntropyLossFlat(), lr=3e-3),
                          lambda: fresh_learner(digits_dls, digits_cnn, loss_func=CrossEntropyLossFlat(), lr=3e-3)),
    'lr_sgd': (check_lr, lambda: xor_learner(opt_func=SGD, lr=10.), lambda: xor_learner(opt_func=SGD, lr=0.1)),
    'lr_adam': (check_lr,
                lambda: fresh_learner(digits_dls, digits_cnn, loss_func=CrossEntropyLossFlat(), lr=1.),
                lambda: fresh_learner(digits_dls, digits_cnn, loss_func=CrossEntropyLossFlat(), lr=3e-3)),
    # train_bn=False: the trunk's BN parameters are frozen too, so its BN layers are frozen; their statistics must not move
    'frozen_transfer': (check_frozen, lambda: _frozen(train_bn=False), lambda: _frozen(cbs=BnFreeze(), train_bn=False)),
    'frozen_callback_holding_layers': (check_frozen, lambda: _frozen(train_bn=False), lambda: _frozen(layers_cb=True, train_bn=False)),
    # fastai's default train_bn=True: the trunk's BN layers are trainable, their statistics move by design
    'frozen_train_bn_default': (check_frozen, lambda: _frozen(train_bn=False), lambda: _frozen()),
}

def _frozen(layers_cb=False, **kw):
    learn = fresh_learner(digits_transfer_dls, lambda: transfer_model(pretrained_digits_trunk()), loss_func=CrossEntropyLossFlat(),
                          splitter=trunk_then_head, **kw)
    if layers_cb: learn.add_cb(EvalLayers([m for m in learn.model[0].modules() if isinstance(m, nn.BatchNorm2d)]))
    learn.freeze()
    return learn

@pytest.mark.parametrize('case', CASES)
def test_planted_bug_fails(case):
    check, planted, _ = CASES[case]
    res = check(planted())
    assert res.verdict == 'failed', res
    assert res.message and res.fix and res.measured

@pytest.mark.parametrize('case', CASES)
def test_healthy_passes(case):
    check, _, healthy = CASES[case]
    learn = healthy()
    before = snapshot(learn)
    res = check(learn)
    assert res.verdict == 'passed', res
    assert snapshot(learn) == before

def test_frozen_names_layer_and_change():
    res = check_frozen(_frozen(train_bn=False))
    assert 'model.0.1 (BatchNorm2d): running_mean moved by' in res.message
    assert res.measured['max_running_stat_change'] > 0

def test_frozen_bn_cnn_requires_grad_only():
    "A trunk frozen by hand (requires_grad=False, no fastai freeze): its BN layers still move"
    learn = fresh_learner(random_image_dls, bn_cnn, loss_func=CrossEntropyLossFlat())
    learn.model[0].requires_grad_(False)
    res = check_frozen(learn)
    assert res.verdict == 'failed' and res.measured['frozen_norm_layers'] == 2

def test_skipped_with_reason():
    learn = fresh_learner(xor_dls, build_mlp, loss_func=MSELossFlat())
    for check in (check_loss_at_init, check_loss_activation, check_frozen):
        res = check(learn)
        assert res.verdict == 'skipped' and res.message

def test_overfit_reports_accuracy_not_judges_it():
    "Seed 001: the softmax model reaches batch accuracy 1.00 and still fails"
    torch.manual_seed(0)
    x, y = torch.randn(8, 1, 16, 16), torch.randint(0, 4, (8,))
    learn = fresh_learner(lambda: tensor_dls(x, y, x[:4], y[:4], bs=8), partial(small_cnn, buggy=True), loss_func=nn.CrossEntropyLoss())
    res = check_overfit_one_batch(learn)
    assert res.verdict == 'failed' and res.measured['batch_accuracy'] == 1.0
    assert 'accuracy only checks the argmax' in res.message and 'stalled' in res.message

# the runner
@pytest.fixture(scope='module')
def buggy_learner(): return fresh_learner(digits_dls, partial(digits_cnn, buggy=True), loss_func=CrossEntropyLossFlat(), lr=3e-3)

def test_on_finding_warn(buggy_learner):
    "One fault, one warning: the softmax before the loss warns and names the stall it explains, which is logged, not warned"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        report = buggy_learner.sanity_check(checks=MODEL_CHECKS, progress=False)
    said = [str(w.message) for w in caught if issubclass(w.category, SanityCheckWarning)]
    assert len(said) == 1 and 'check_loss_activation failed' in said[0] and 'Explains: check_overfit_one_batch (failed)' in said[0], said
    assert not report.ok and {r.name for r in report.failed} == {'check_loss_activation', 'check_overfit_one_batch'}
    assert report['check_overfit_one_batch'].explained_by == 'check_loss_activation'
    assert issubclass(SanityCheckWarning, ParanoidWarning)

def test_on_finding_raise(buggy_learner):
    "'raise' raises a SanityCheckError carrying the report, its message counting what failed (whatever a loaded machine skipped)"
    with pytest.raises(SanityCheckError, match=r'\d of 5 sanity checks failed') as e:
        buggy_learner.sanity_check(checks=MODEL_CHECKS, on_finding='raise', progress=False)
    failed = e.value.report.failed
    assert isinstance(e.value, ParanoidError) and failed and f"{len(failed)} of 5 sanity checks failed" in str(e.value)

def test_on_finding_none(buggy_learner):
    with warnings.catch_warnings():
        warnings.simplefilter('error')
        report = buggy_learner.sanity_check(checks=MODEL_CHECKS, on_finding=None, progress=False)
    assert len(report.failed) == 2
    assert 'Sanity check: 2 passed, 2 failed, 1 skipped (' in str(report) and 'safety net 300 s per check' in str(report)

def test_crashing_check_is_reported(buggy_learner):
    def check_broken(learn): return 1 / 0
    def check_wrong_type(learn): return 'fine'
    report = buggy_learner.sanity_check(checks=[check_broken, check_wrong_type, check_loss_at_init], on_finding=None, progress=False)
    assert [r.verdict for r in report] == ['error', 'error', 'passed']
    assert report.errors == report.results[:2] and not report.failed and report.ok
    assert 'ZeroDivisionError' in report['check_broken'].message and 'ZeroDivisionError' in report.tracebacks['check_broken']
    assert 'not a CheckResult' in report['check_wrong_type'].message

def test_registered_order():
    from fastai_paranoid.core import registered_checks
    mine = [fn for fn in registered_checks() if fn in MODEL_CHECKS]
    assert mine == MODEL_CHECKS

def test_bad_arguments(buggy_learner):
    with pytest.raises(ValueError, match="not one of 'warn', 'raise', 'log' or None"): buggy_learner.sanity_check(on_finding='warning')
    with pytest.raises(ValueError, match='no registered check'): buggy_learner.sanity_check(checks=['check_everything'])
    with pytest.raises(TypeError, match='not a check function'): buggy_learner.sanity_check(checks=[42])
    with pytest.raises(ValueError, match='will not run'): buggy_learner.sanity_check(checks=[check_lr], settings={'check_frozen': {}})

@pytest.mark.slow
@pytest.mark.parametrize('train_bn, cbs, verdict', [(True, None, 'passed'), (True, BnFreeze, 'failed'), (False, None, 'failed'), (False, BnFreeze, 'passed')])
def test_vision_learner_frozen_body(train_bn, cbs, verdict):
    "fastai's own vision_learner (a resnet18 body, no pretrained weights here), frozen: under train_bn=True its body's BN layers are trainable (passed), and a BnFreeze added to hold them holds nothing (failed, named); under train_bn=False they are frozen and move unless BnFreeze holds them"
    from fastai.vision.learner import vision_learner
    from torchvision.models import resnet18
    learn = fresh_learner(partial(random_image_dls, n_train=16, n_valid=8, c_in=3, size=32), resnet18, learner=vision_learner,
                          pretrained=False, n_out=4, loss_func=CrossEntropyLossFlat(), train_bn=train_bn, cbs=cbs)
    learn.freeze()
    before = snapshot(learn)
    report = learn.sanity_check(checks=[check_loss_at_init, check_loss_activation, check_frozen], on_finding=None, progress=False)
    # measured in eval mode, fastai's Kaiming-initialized head (BatchNorm1d, Dropout) starts near ln(C)
    assert report[0].verdict == 'passed' and report[1].verdict == 'passed', report
    assert report[2].verdict == verdict, report
    if verdict == 'failed': assert 'model.0.1 (BatchNorm2d)' in report['check_frozen'].message
    if verdict == 'failed' and train_bn: assert 'BnFreeze holds nothing' in report['check_frozen'].message
    assert snapshot(learn) == before

def test_built_optimizer_is_refused_not_stepped():
    "An OptimWrapper instance as opt_func is bound to the user's parameters: every check refuses it, the runner reports it"
    from fastai.optimizer import OptimWrapper
    learn = _frozen()
    learn.opt_func = OptimWrapper(opt=torch.optim.SGD(learn.model.parameters(), lr=0.1))
    before = snapshot(learn)
    report = learn.sanity_check(checks=[check_overfit_one_batch, check_lr, check_frozen], on_finding=None, progress=False)
    assert [r.verdict for r in report] == ['error'] * 3
    assert all('already built' in r.message for r in report)
    assert snapshot(learn) == before

def _tabular_dls(n=256, seed=0):
    "A small synthetic table: two categorical and two continuous columns, the label a function of them"
    import pandas as pd
    from fastai.tabular.all import TabularDataLoaders, Categorify, Normalize
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({'color': rng.choice(['red', 'green', 'blue'], n), 'size': rng.choice(['s', 'm', 'l'], n),
                       'x1': rng.normal(size=n), 'x2': rng.normal(size=n)})
    df['label'] = np.where((df.x1 * df.x2 > 0) ^ (df.color == 'red'), 'yes', 'no')
    return TabularDataLoaders.from_df(df, procs=[Categorify, Normalize], cat_names=['color', 'size'], cont_names=['x1', 'x2'],
                                      y_names='label', valid_idx=list(range(n - 64, n)), bs=32)

@pytest.mark.slow
def test_tabular_learner_two_inputs():
    "tabular_learner: batches of (cat, cont, y), n_inp=2; the checks split them as fastai does"
    from fastai.tabular.all import tabular_learner
    healthy = fresh_learner(_tabular_dls, None, learner=tabular_learner, lr=1e-2)
    before = snapshot(healthy)
    report = healthy.sanity_check(checks=MODEL_CHECKS, on_finding=None, progress=False)
    assert [r.verdict for r in report][:2] == ['passed', 'passed'] and report[4].verdict == 'skipped', report
    assert report['check_lr'].verdict == 'passed', report
    assert snapshot(healthy) == before
    too_high = fresh_learner(_tabular_dls, None, learner=tabular_learner, lr=10.)
    assert check_lr(too_high).verdict == 'failed'

# fit -> freeze() -> fit: the frozen part keeps the zero gradients of the first fit, and fastai's optimizer steps every
# parameter whose .grad is not None (Adam's decoupled weight decay here); `deepcopy` drops .grad, so the check replays it
def fit_then_freeze(**kw):
    learn = fresh_learner(digits_transfer_dls, lambda: transfer_model(pretrained_digits_trunk()), loss_func=CrossEntropyLossFlat(),
                          splitter=trunk_then_head, lr=3e-3, **kw)
    with learn.no_bar(), learn.no_logging(): learn.fit(1)
    learn.freeze()
    return learn

def test_frozen_replays_stale_gradients_and_weight_decay():
    learn = fit_then_freeze(cbs=BnFreeze(), train_bn=False)
    before = snapshot(learn)
    res = check_frozen(learn)
    assert res.verdict == 'failed', res
    assert res.measured['frozen_with_stale_grad'] == res.measured['frozen_params'] > 0
    assert 'still holds the .grad of an earlier fit' in res.message and 'p.grad = None' in res.fix
    assert snapshot(learn) == before
    # the real next fit does move the trunk: the check predicted the user's run
    trunk = [p.detach().clone() for p in learn.model[0].parameters()]
    with learn.no_bar(), learn.no_logging(): learn.fit(1)
    assert max(float((p - q).abs().max()) for p, q in zip(learn.model[0].parameters(), trunk)) > 0

def test_frozen_after_fit_healthy_with_linear_probe():
    "The same Learner through learn.linear_probe(): FrozenTrunk clears the stale gradients at every fit"
    from fastai_paranoid import presets
    learn = fit_then_freeze().linear_probe(lr=1e-2)
    res = check_frozen(learn)
    assert res.verdict == 'passed', res

def test_sanity_check_lr_reaches_the_checks_that_train():
    learn = xor_learner(opt_func=SGD, lr=0.1)
    report = learn.sanity_check(checks=[check_overfit_one_batch, check_lr], on_finding=None, progress=False, lr=10.)
    assert [r.measured['lr'] for r in report] == [10., 10.]
    assert report['check_lr'].verdict == 'failed' and 'lr=10' in report['check_lr'].message
    assert learn.lr == 0.1

def test_one_name_per_check():
    learn = xor_learner()
    names = ['check_loss_at_init', 'check_lr']
    report = learn.sanity_check(checks=names, settings={'check_lr': {'steps': 20}}, on_finding=None, progress=False)
    assert report.names == names and report['check_lr'].measured['steps'] == 20
    assert all(fn(learn).name == fn.__name__ for fn in MODEL_CHECKS)

def test_budget_is_a_safety_net_and_a_stopped_check_is_incomplete():
    "The budget never sizes a check: one it stops is 'incomplete' (judged on nothing), and says how to let it finish"
    learn = fresh_learner(digits_dls, partial(small_cnn, n_out=10, size=8), loss_func=CrossEntropyLossFlat(), lr=3e-3)
    report = learn.sanity_check(checks=MODEL_CHECKS[:4], on_finding=None, progress=False, budget=1e-6)
    assert report.budget == 1e-6 and 'safety net 1e-06 s per check' in str(report)
    res = report['check_lr']
    assert res.verdict == 'incomplete' and 'check_lr was stopped by its wall-clock safety net' in res.message and 'budget=' in res.fix
    assert not res.level and not res.is_finding
    assert report.incomplete == [report['check_overfit_one_batch'], report['check_lr']] and report.ok
    with pytest.raises(ValueError, match='budget'): learn.sanity_check(budget=0)

def test_work_not_seconds_sizes_the_checks():
    "The steps follow from the model and the batch (`work_per_step`): the same numbers on every run, and fewer steps for a larger model"
    make = lambda: fresh_learner(digits_dls, partial(small_cnn, n_out=10, size=8), loss_func=CrossEntropyLossFlat(), lr=3e-3)
    a, b = check_lr(make()), check_lr(make(), budget=1e6)
    assert a.measured == b.measured and a.message == b.message
    res = check_lr(make(), work=1e-4)
    assert res.verdict == 'skipped' and 'work allowance of 0.0001 GFLOP pays for' in res.message and "'work':" in res.fix
    res = check_lr(make(), work=0.12)
    assert res.measured['steps'] < 50 and 'its work allowance of 0.12 GFLOP pays for' in res.message

def test_overfit_still_falling_when_the_steps_run_out_is_not_a_warning():
    "A loss still falling when the steps run out is 'passed' when it is far down, 'skipped' (inconclusive) when not: never a warning"
    learn = fresh_learner(digits_dls, partial(small_cnn, n_out=10, size=8), loss_func=CrossEntropyLossFlat(), lr=3e-3)
    res = check_overfit_one_batch(learn, max_steps=5)
    assert res.verdict == 'skipped' and 'inconclusive' in res.message and res.measured['steps'] == 5
    res = check_overfit_one_batch(learn, max_steps=5, budget=60)
    assert res.verdict == 'skipped'

def test_loss_at_init_near_ln_c_and_skips_trained_models():
    learn = xor_learner()
    res = check_loss_at_init(learn)
    assert res.verdict == 'passed' and abs(res.measured['excess_nats']) < 0.2
    with learn.no_bar(), learn.no_logging(): learn.fit(1)
    res = check_loss_at_init(learn)
    assert res.verdict == 'skipped' and 'has run a fit' in res.message

def test_findings_go_through_emit():
    from fastai_paranoid.core import finding_sink
    seen = []
    learn = fresh_learner(digits_dls, partial(digits_cnn, buggy=True), loss_func=CrossEntropyLossFlat(), lr=3e-3)
    with finding_sink(seen.append), warnings.catch_warnings():
        warnings.simplefilter('ignore')
        learn.sanity_check(checks=[check_loss_activation], progress=False)
    assert len(seen) == 1 and seen[0].category is SanityCheckWarning
    assert (seen[0].kind, seen[0].level, seen[0].guard) == ('check_loss_activation', 'error', 'sanity_check')
    assert seen[0].found_at is not None and seen[0].found_at.file == __file__, "the finding points at the line that called sanity_check"

def test_no_negative_zero_percent():
    from fastai_paranoid.checkutils import pct
    assert pct(-1e-9) == '0.0%' and pct(-0.0004, 0) == '0%' and pct(-0.02) == '-2.0%' and pct(0.25, 0) == '25%'

def test_loss_below_label_entropy_needs_evidence_that_the_model_knows_the_labels():
    "Confident random outputs can score below the label entropy on a few batches by chance: only a significant gap warns"
    from fastai.torch_core import TensorImage, TensorCategory
    from fastai_paranoid.checks import _knows_labels
    g = torch.Generator().manual_seed(0)
    y = torch.randint(0, 3, (64,), generator=g)
    noise = 4 * torch.randn(64, 3, generator=g) # confident, and unrelated to the labels
    knowing = noise.clone(); knowing[torch.arange(64), y] += 6 # the same scale, pointed at the labels
    z_noise = _knows_labels([(TensorImage(noise), TensorCategory(y))], 1, 3) # fastai's tensor types, as vision batches carry them
    z_knowing = _knows_labels([(knowing, y)], 1, 3)
    assert abs(z_noise) < 4 < -z_knowing, (z_noise, z_knowing)

# --- issues 16 and 17: train_bn=True, a freeze that freezes nothing, the head against the data, a large loss falling slowly ---
def _png_folder_dls(tmp_path, n_classes=2, per_class=12, size=32, seed=0):
    "ImageDataLoaders.from_folder on a folder of random PNGs, one subfolder per class"
    from PIL import Image
    from fastai.vision.all import ImageDataLoaders, Resize
    rng = np.random.default_rng(seed)
    for c in range(n_classes):
        (tmp_path/f"class{c}").mkdir(parents=True, exist_ok=True)
        for i in range(per_class):
            Image.fromarray(rng.integers(0, 256, (size, size, 3), dtype=np.uint8)).save(tmp_path/f"class{c}"/f"{i}.png")
    return ImageDataLoaders.from_folder(tmp_path, valid_pct=0.25, seed=seed, item_tfms=Resize(size), bs=8, num_workers=0)

def _quiet_warnings(fn):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter('always')
        fn()
    return [x for x in w if issubclass(x.category, ParanoidWarning)]

@pytest.mark.slow
def test_vision_learner_freeze_and_fine_tune_are_silent(tmp_path):
    "The issue's case: vision_learner(dls, resnet18, pretrained=False) with fastai's defaults, freeze(), sanity checks: no failure; fine_tune under the guard: no finding"
    from fastai.vision.all import vision_learner, resnet18
    from fastai_paranoid.bn import EmptyFreezeGuard
    dls = _png_folder_dls(tmp_path)
    learn = vision_learner(dls, resnet18, pretrained=False)
    learn.freeze()
    before = snapshot(learn)
    report = learn.sanity_check(checks=[check_loss_at_init, check_loss_activation, check_frozen], on_finding=None, progress=False)
    assert [r.verdict for r in report] == ['passed'] * 3, report
    assert report['check_frozen'].measured['trainable_norm_layers_in_frozen_groups'] == 20 # resnet18's body under train_bn=True
    assert snapshot(learn) == before
    learn = vision_learner(dls, resnet18, pretrained=False, cbs=EmptyFreezeGuard())
    with learn.no_bar(), learn.no_logging(): found = _quiet_warnings(lambda: learn.fine_tune(1, freeze_epochs=1))
    assert not found, [str(x.message) for x in found]

def _one_group(**kw):
    return fresh_learner(digits_transfer_dls, lambda: transfer_model(pretrained_digits_trunk()), loss_func=CrossEntropyLossFlat(), **kw)

class _CheckAtFirstFit(Callback):
    "Run check_frozen at the first fit's before_fit, as `fastai-paranoid check` does"
    def before_fit(self):
        if hasattr(self, 'res'): return # the copy check_frozen fits carries this callback with `res` set
        self.res = None
        self.res = check_frozen(self.learn)

def test_fine_tune_on_one_group_learner_is_caught_both_ways():
    from fastai.callback.schedule import fine_tune # noqa: F401 (patches Learner.fine_tune)
    from fastai_paranoid.bn import EmptyFreezeGuard, EmptyFreezeWarning
    learn = _one_group(cbs=[EmptyFreezeGuard(), _CheckAtFirstFit()])
    with learn.no_bar(), learn.no_logging(): found = _quiet_warnings(lambda: learn.fine_tune(1))
    assert [x.category for x in found] == [EmptyFreezeWarning], [str(x.message) for x in found]
    assert '1 parameter group' in str(found[0].message) and 'splitter' in str(found[0].message)
    res = learn._check_at_first_fit.res
    assert (res.verdict, res.level, res.claim) == ('info', 'info', 'certain'), res # certain; it matters only for a pretrained body
    assert found[0].message.finding.level == 'info' and found[0].message.finding.kind == 'empty_freeze'
    # the healthy twin: the same model with a splitter
    learn = _one_group(splitter=trunk_then_head, cbs=[EmptyFreezeGuard(), _CheckAtFirstFit()])
    with learn.no_bar(), learn.no_logging(): found = _quiet_warnings(lambda: learn.fine_tune(1))
    assert not found and learn._check_at_first_fit.res.verdict == 'passed', learn._check_at_first_fit.res
    # learn.freeze() by hand on one group: check_frozen says it froze nothing (skipped: the intent is not visible outside fine_tune)
    learn = _one_group()
    learn.freeze()
    res = check_frozen(learn)
    assert res.verdict == 'skipped' and 'froze nothing' in res.message and 'splitter' in res.fix

def _unscaled_regression(seed, n=512, d=8):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)).astype(np.float32)
    y = X @ rng.normal(size=(d, 1)).astype(np.float32) * 20 + 50
    X, y = torch.from_numpy(X), torch.from_numpy(y)
    return tensor_dls(X[:400], y[:400], X[400:], y[400:], bs=32)

def _reg_mlp(d=8): return nn.Sequential(nn.Linear(d, 32), nn.ReLU(), nn.Linear(32, 32), nn.ReLU(), nn.Linear(32, 1))

@pytest.mark.parametrize('seed', range(5))
def test_lr_unscaled_regression_falling_slowly_is_not_overshoot(seed):
    learn = fresh_learner(partial(_unscaled_regression, seed), _reg_mlp, loss_func=MSELossFlat(), lr=1e-3)
    res = check_lr(learn)
    assert res.verdict == 'passed', res
    if res.measured['tail_over_start'] > 0.98: assert res.measured['p_tail_not_lower'] < 1e-3 # passed by the paired test

def test_lr_unscaled_regression_overshooting_still_fails():
    "Adam at lr=10 on the same regression: the tail does not come back below its start while the weights move 15x their norm: certain"
    res = check_lr(fresh_learner(partial(_unscaled_regression, 0), _reg_mlp, loss_func=MSELossFlat(), lr=10.))
    assert (res.verdict, res.claim) == ('failed', 'certain') and 'overshoot' in res.message, res
    assert res.measured['relative_weight_change'] > 1 and res.measured['tail_over_start'] > 0.98

def test_head_outputs_against_data_classes():
    wide = lambda: nn.Sequential(nn.Linear(2, 32), nn.ReLU(), nn.Linear(32, 10))
    res = check_loss_at_init(fresh_learner(xor_dls, wide, loss_func=CrossEntropyLossFlat()))
    assert (res.verdict, res.claim, res.measured['n_outputs'], res.measured['n_classes_data']) == ('warning', 'certain', 10, 2), res
    narrow = lambda: nn.Sequential(nn.Linear(2, 32), nn.ReLU(), nn.Linear(32, 1))
    assert check_loss_at_init(fresh_learner(xor_dls, narrow, loss_func=CrossEntropyLossFlat())).verdict == 'failed'
    assert check_loss_at_init(fresh_learner(xor_dls, build_mlp, loss_func=CrossEntropyLossFlat())).verdict == 'passed'

@pytest.mark.slow
def test_vision_learner_head_against_dls_c(tmp_path):
    "vision_learner with n_out=10 on a 2-class folder: warned, n_out=dls.c in the fix; the default n_out passes"
    from fastai.vision.all import vision_learner, resnet18
    dls = _png_folder_dls(tmp_path)
    res = check_loss_at_init(vision_learner(dls, resnet18, pretrained=False, n_out=10))
    assert res.verdict == 'warning' and res.measured['n_classes_data'] == 2 and 'dls.c' in res.message and 'n_out=dls.c' in res.fix
    assert check_loss_at_init(vision_learner(dls, resnet18, pretrained=False)).verdict == 'passed'

@pytest.mark.parametrize('act', [nn.ReLU, nn.Sigmoid, nn.Softplus, nn.Tanh])
def test_clamping_last_activation_findings(act):
    head = lambda: nn.Sequential(nn.Linear(2, 32), nn.ReLU(), nn.Linear(32, 2), act())
    res = check_loss_activation(fresh_learner(xor_dls, head, loss_func=CrossEntropyLossFlat()))
    assert res.verdict == 'failed' and f"model.3 ({act.__name__})" in res.message, res


def test_empty_training_loader_is_one_error_and_the_rest_skip():
    "fastai's drop_last on a training set smaller than bs: fit would train nothing; one certain error, no crashed checks"
    from torch.utils.data import TensorDataset
    from fastai.data.core import DataLoaders
    def small_xor_dls():
        rng = np.random.default_rng(0)
        (xt, yt), (xv, yv) = make_xor_data(48, rng), make_xor_data(200, rng)
        return DataLoaders.from_dsets(TensorDataset(xt, yt), TensorDataset(xv, yv), bs=64)
    learn = fresh_learner(small_xor_dls, build_mlp, loss_func=CrossEntropyLossFlat())
    report = learn.sanity_check(on_finding=None, progress=False, budget=20)
    verdicts = {r.name: r.verdict for r in report.results}
    assert verdicts.pop('check_train_batches') == 'failed'
    assert 'error' not in verdicts.values(), {r.name: r.message for r in report.results if r.verdict == 'error'}
    assert {r.name for r in report.results if r.verdict == 'failed'} == {'check_train_batches'}

def test_a_run_of_checks_shares_reads_and_gives_each_check_alone():
    "`sanity_check` shares one read of the data between the checks (`SharedReads`): each result is the one the check gives called on its own, number for number"
    from fastai_paranoid import checkutils
    names = ['check_loss_at_init', 'check_gradient_flow', 'check_input_dependency', 'check_output_variation', 'check_loss_activation',
             'check_overfit_one_batch', 'check_lr', 'check_split_duplicates', 'check_batch_independence']
    learn = fresh_learner(digits_dls, partial(small_cnn, n_out=10, size=8), loss_func=CrossEntropyLossFlat(), lr=3e-3)
    reads = []
    original = checkutils.SharedReads.put
    def counted(self, *a, **kw): reads.append(a[1]); return original(self, *a, **kw)
    checkutils.SharedReads.put = counted
    try: report = learn.sanity_check(checks=names, on_finding=None, progress=False, budget=1e6)
    finally: checkutils.SharedReads.put = original
    assert reads.count('train') == 2 and reads.count('items') == 2  # 4 batches then 50 (check_lr); the whole training set and validation set once
    alone = {fn.__name__: fn for fn in registered_checks()}
    for res in report:
        own = alone[res.name](learn, budget=1e6)
        assert (own.verdict, own.measured) == (res.verdict, res.measured), res.name
    assert not checkutils.SHARED.reads and checkutils.SHARED.learn is None

def test_a_longer_read_goes_as_far_as_the_check():
    "In a run of checks, a check that asks for more batches than were read gets them as it goes, the ones one uninterrupted read gives, whatever RNG it draws from in between; what it did not ask for is never read"
    import random
    from torch.utils.data import TensorDataset
    from fastai.data.core import DataLoaders
    from fastai.data.load import DataLoader
    from fastai.learner import Learner
    from fastai_paranoid.checkutils import sharing
    from fastai_paranoid.core import get_rng_states, set_rng_states
    def noisy(b): return (b[0] + torch.randn_like(b[0]), b[1]) # a batch transform that draws from torch's RNG
    def learner():
        g = torch.Generator().manual_seed(0)
        x, y = torch.randn(64, 2, generator=g), torch.randint(0, 2, (64,), generator=g)
        dls = DataLoaders(DataLoader(TensorDataset(x, y), bs=16, shuffle=True, drop_last=True, after_batch=noisy),
                          DataLoader(TensorDataset(x, y), bs=16))
        return Learner(dls, build_mlp(), loss_func=CrossEntropyLossFlat())
    learn = learner()
    torch.manual_seed(0)
    eager = training_batches(learn, 10)         # 4 batches a pass: the loader restarts twice
    before = (rng_fingerprint(learn.dls), sorted(vars(learn.dls.train)))
    with sharing(learn) as shared:
        start = get_rng_states(learn.dls)
        training_batches(learn, 2)              # an earlier check read 2
        lazy = training_batches(learn, 10)
        assert isinstance(lazy, LazyBatches) and len(lazy) == 10 and not lazy.read.got
        got = []
        for xb, yb in lazy[:10]:
            got.append((xb, yb))
            torch.rand(3); random.random()      # the check draws between batches
        assert rng_fingerprint(learn.dls) != before[0] and len(lazy.read.got) == 10
        shared.close_readers()                  # the check ended: its read is kept
        set_rng_states(start)
        short = training_batches(learn, 50)
        for _ in zip(range(3), short): pass     # a check that stops after 3 of its 50 batches
        shared.close_readers()
        assert len(short.read.got) == 3 and sorted(vars(learn.dls.train)) == before[1]
        assert [len(v[0]) for k, v in shared.reads.items() if k[0] == 'train'] == [10]
    for (xa, ya), (xb, yb) in zip(eager, got): assert torch.equal(xa[0], xb[0]) and torch.equal(ya[0], yb[0])
    assert rng_fingerprint(learn.dls) == before[0]

def test_reading_batches_leaves_a_language_model_loader_as_it_was():
    "fastai's LMDataLoader reshuffles its items in place at every pass: a check that reads training batches puts their order back, so the user's next batch is the one it would have been"
    import pandas as pd
    from fastai.learner import Learner
    from fastai.text.all import DataBlock, TextBlock, ColReader, RandomSplitter, BaseTokenizer
    from fastai_paranoid.core import get_rng_states, set_rng_states
    lines = [' '.join(str(i) for i in range(j, j + 8)) for j in range(300)]
    dblock = DataBlock(blocks=TextBlock.from_df('text', is_lm=True, tok=BaseTokenizer(), min_freq=1, n_workers=0),
                       get_x=ColReader('text'), splitter=RandomSplitter(0.2, seed=0))
    dls = dblock.dataloaders(pd.DataFrame({'text': lines}), bs=8, seq_len=8, num_workers=0)
    dl = dls.train
    states, order, chunks = get_rng_states(dls), list(dl.items.idxs), dl.chunks
    first = dl.one_batch()[0]
    set_rng_states(states); dl.items.idxs.items[:] = order; dl.chunks = chunks # back as it was before that batch
    learn = Learner(dls, nn.Linear(1, 1), loss_func=CrossEntropyLossFlat())
    training_batches(learn, 2 * len(dl) + 1) # three passes, each reshuffling
    assert list(dl.items.idxs) == order and dl.chunks is chunks
    assert torch.equal(dl.one_batch()[0], first)

class _SlowFirstForward(nn.Module):
    "An MLP whose first forward pass sleeps `warmup` seconds, as a first step that pays for warm-up (allocations, kernels) does"
    def __init__(self, warmup):
        super().__init__()
        self.net, self.warmup, self.calls = build_mlp(), warmup, 0
    def forward(self, x):
        self.calls += 1
        if self.calls == 1: time.sleep(self.warmup)
        return self.net(x)

def test_short_run_runs_every_step_whatever_they_take():
    "A slow step changes nothing: the run is its steps (no forecast from seconds), the same losses as the fast model's"
    slow = fresh_learner(partial(xor_dls, n_train=512), partial(_SlowFirstForward, 0.2), loss_func=CrossEntropyLossFlat())
    fast = fresh_learner(partial(xor_dls, n_train=512), build_mlp, loss_func=CrossEntropyLossFlat())
    batches = training_batches(fast, 12)
    slow_run, fast_run = short_run(slow, steps=12, batches=batches), short_run(fast, steps=12, batches=batches)
    assert len(slow_run['losses']) == 12 and slow_run['losses'] == fast_run['losses']

def test_metric_activation_explained_by_a_sigmoid_before_bce_with_logits():
    "A sigmoid in front of BCEWithLogitsLossFlat makes the outputs probabilities, so accuracy_multi(sigmoid=False) reads them right: the loss/activation mismatch is the one cause, and the metric's finding stands under it, not beside it"
    from fastai.data.core import DataLoaders
    from fastai.losses import BCEWithLogitsLossFlat
    from fastai.metrics import accuracy_multi
    from fastai.learner import Learner
    from torch.utils.data import TensorDataset
    g = torch.Generator().manual_seed(0)
    x, y = torch.randn(96, 8, generator=g), (torch.rand(96, 5, generator=g) < 0.3).float()
    dls = DataLoaders.from_dsets(TensorDataset(x[:64], y[:64]), TensorDataset(x[64:], y[64:]), bs=16)
    learn = Learner(dls, nn.Sequential(nn.Linear(8, 5), nn.Sigmoid()), loss_func=BCEWithLogitsLossFlat(),
                    metrics=[partial(accuracy_multi, sigmoid=False)])
    report = learn.sanity_check(checks=['check_loss_activation', 'check_metric_activation'], on_finding=None, progress=False)
    assert report['check_loss_activation'].verdict == 'failed', report['check_loss_activation']
    assert report['check_metric_activation'].verdict == 'warning'
    assert report['check_metric_activation'].explained_by == 'check_loss_activation'
