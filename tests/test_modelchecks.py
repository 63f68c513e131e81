"""The model checks (`fastai_paranoid.modelchecks`, nbs/32_modelchecks.ipynb) as a matrix: each planted bug, written as a
user writes it (a fastai Learner), is caught by `learn.sanity_check()` and, as a script, by `fastai-paranoid check`; its
fixed twin is silent; healthy Learners of every family (MLP, CNN, resnet18, xresnet with zero-init BN, tabular, text,
collab, dropout, stochastic depth) get no alarm over 3 seeds; the user's Learner is left as it was; each check is cheap."""
import json, re, time, warnings
import pytest
import torch
from torch import nn
from torch.utils.data import TensorDataset
from fastai.data.core import DataLoaders
from fastai.data.load import DataLoader
from fastai.learner import Learner
from fastai.losses import CrossEntropyLossFlat
from fastai.torch_core import params
from fastai_paranoid.core import fingerprint, rng_fingerprint, registered_checks
from fastai_paranoid.fixtures import tensor_dls
from fastai_paranoid.checkrun import SanityFinding
from fastai_paranoid import modelchecks as mc
from cli_helpers import command
from test_checkrun import checked, SCRIPTS

pytestmark = pytest.mark.usefixtures('one_thread')
CHECKS = ['check_optimizer_coverage', 'check_gradient_flow', 'check_input_dependency', 'check_output_variation', 'check_gradient_correctness']
ALARMS = ('failed', 'warning', 'error')

@pytest.fixture(autouse=True)
def quiet():
    with warnings.catch_warnings():
        warnings.simplefilter('ignore') # fastai's deprecation noise; the checks report through their results
        yield

def features_dls(seed=0, n=320, n_features=10):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, n_features, generator=g)
    y = (x[:, 0] + x[:, 3] > 0).long()
    return tensor_dls(x[:256], y[:256], x[256:], y[256:], bs=32)

def masked_dls(seed=0, n=320):
    g = torch.Generator().manual_seed(seed)
    x, mask = torch.randn(n, 10, generator=g), torch.rand(n, 10, generator=g) > 0.3
    y = (x[:, 0] * mask[:, 0] > 0).long()
    return DataLoaders(DataLoader(TensorDataset(x[:256], mask[:256], y[:256]), bs=32, shuffle=True, drop_last=True),
                       DataLoader(TensorDataset(x[256:], mask[256:], y[256:]), bs=64))

def mlp(n_in=10, dropout=0.0):
    return nn.Sequential(nn.Linear(n_in, 32), nn.ReLU(), nn.Dropout(dropout), nn.Linear(32, 2))

class Slice(nn.Module):
    "The forward reads x[:, :k]"
    def __init__(self, k, net): super().__init__(); self.k, self.net = k, net
    def forward(self, x): return self.net(x[:, :self.k])

class Detached(nn.Module):
    def __init__(self, detach): super().__init__(); self.detach, self.body, self.head = detach, nn.Sequential(nn.Linear(10, 32), nn.ReLU()), nn.Linear(32, 2)
    def forward(self, x):
        h = self.body(x)
        return self.head(h.data if self.detach else h)

class Unused(nn.Module):
    "A submodule the forward never calls (the user meant to, before the head)"
    def __init__(self, use): super().__init__(); self.use, self.body, self.extra, self.head = use, nn.Linear(10, 32), nn.Linear(32, 32), nn.Linear(32, 2)
    def forward(self, x):
        h = self.body(x).relu()
        return self.head(self.extra(h).relu() if self.use else h)

class MaskedMLP(nn.Module):
    def __init__(self, use_mask): super().__init__(); self.use_mask, self.net = use_mask, mlp()
    def forward(self, x, mask): return self.net(x * mask if self.use_mask else x)

class BiasHead(nn.Module):
    "Returns its bias (bug) or a Linear of the features (twin)"
    def __init__(self, bug): super().__init__(); self.bug, self.body, self.lin = bug, nn.Sequential(nn.Linear(10, 32), nn.ReLU()), nn.Linear(32, 2)
    def forward(self, x):
        h = self.body(x)
        return self.lin.bias.expand(len(x), -1) if self.bug else self.lin(h)

def _square(wrong):
    "torchtest2 bug 12's custom autograd.Function: x**2, with the right backward or the one that forgot the 2"
    class Square(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x**2
        @staticmethod
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            return (1 if wrong else 2) * x * grad
    return Square

class MyReLU(torch.autograd.Function):
    "A correct custom ReLU: a kink at 0 that central differences must not mistake for a wrong backward"
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x.clamp(min=0)
    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * (x > 0)

class CustomFn(nn.Module):
    "An MLP whose activation is a custom autograd.Function (BatchNorm and dropout around it)"
    def __init__(self, fn): super().__init__(); self.fn, self.fc0, self.bn, self.drop, self.fc = fn, nn.Linear(10, 32), nn.BatchNorm1d(32), nn.Dropout(0.2), nn.Linear(32, 2)
    def forward(self, x): return self.fc(self.drop(self.fn.apply(self.bn(self.fc0(x)))))

def replaced_head(bug, seed):
    learn = Learner(features_dls(seed), mlp(), loss_func=nn.CrossEntropyLoss())
    if bug: learn.create_opt()
    learn.model[-1] = nn.Linear(32, 2)
    return learn

def splitter_misses(bug, seed):
    return Learner(features_dls(seed), mlp(), loss_func=nn.CrossEntropyLoss(),
                   splitter=(lambda m: [params(m[3])]) if bug else (lambda m: [params(m[0]), params(m[3])]))

ce = lambda dls, model: Learner(dls, model, loss_func=nn.CrossEntropyLoss())
# bug -> (its check, the Learner with the bug (True) or its fixed twin (False))
BUGS = {
    'optimizer built before the head was replaced': ('check_optimizer_coverage', replaced_head),
    'splitter leaves the body out': ('check_optimizer_coverage', splitter_misses),
    '.data in the forward': ('check_gradient_flow', lambda bug, seed: ce(features_dls(seed), Detached(bug))),
    'unused submodule': ('check_gradient_flow', lambda bug, seed: ce(features_dls(seed), Unused(not bug))),
    'forward reads x[:, :5] of 10 features': ('check_input_dependency', lambda bug, seed: ce(features_dls(seed), Slice(5 if bug else 10, mlp(5 if bug else 10)))),
    'forward ignores the mask argument': ('check_input_dependency', lambda bug, seed: ce(masked_dls(seed), MaskedMLP(not bug))),
    'head returns its bias': ('check_output_variation', lambda bug, seed: ce(features_dls(seed), BiasHead(bug))),
    'custom autograd.Function with a wrong backward': ('check_gradient_correctness', lambda bug, seed: ce(features_dls(seed), CustomFn(_square(bug)))),
}

def run(learn, checks=CHECKS):
    "The checks through `learn.sanity_check()`, asserting that the Learner's weights and RNGs are as they were"
    before = [fingerprint(t) for t in learn.model.state_dict().values()], rng_fingerprint(learn.dls), learn.opt
    report = learn.sanity_check(checks=checks, on_finding=None, progress=False)
    assert ([fingerprint(t) for t in learn.model.state_dict().values()], rng_fingerprint(learn.dls), learn.opt) == before
    return report

@pytest.mark.parametrize('bug', BUGS)
@pytest.mark.parametrize('seed', [0, 1, 2])
def test_bug_caught_and_twin_silent(bug, seed):
    check, build = BUGS[bug]
    torch.manual_seed(seed)
    res = run(build(True, seed), [check])[check]
    assert (res.verdict, res.level, res.claim) == ('failed', 'error', 'certain'), res.message
    assert res.message and res.fix and res.measured
    torch.manual_seed(seed)
    twin = run(build(False, seed))
    assert [r.verdict for r in twin if r.verdict in ALARMS] == [], [r.message for r in twin]

def test_findings_name_the_culprits():
    torch.manual_seed(0)
    assert 'model.3.weight (Linear)' in mc.check_optimizer_coverage(replaced_head(True, 0)).message
    assert 'model.body.0.weight (Linear)' in mc.check_gradient_flow(ce(features_dls(), Detached(True))).message
    assert 'model.extra.weight (Linear)' in mc.check_gradient_flow(ce(features_dls(), Unused(False))).message
    assert 'features 5-9 of 10' in mc.check_input_dependency(ce(features_dls(), Slice(5, mlp(5)))).message
    assert mc.check_input_dependency(ce(masked_dls(), MaskedMLP(False))).measured['ignored_inputs'] == [1]
    res = mc.check_gradient_correctness(ce(features_dls(), CustomFn(_square(True))))
    assert 'Square' in res.message and 'model.fc0.weight (Linear)' in res.message and '0.5 x the true slope' in res.message

def test_gradient_correctness_leaves_torch_as_it_was():
    "The float64 copy: the default dtype, the Function class and the user's model (float32, its weights) are as they were"
    square = _square(True)
    learn = ce(features_dls(), CustomFn(square))
    attrs = dict(vars(square))
    assert run(learn, ['check_gradient_correctness'])['check_gradient_correctness'].verdict == 'failed'
    assert torch.get_default_dtype() == torch.float32 and dict(vars(square)) == attrs
    assert all(p.dtype == torch.float32 for p in learn.model.parameters())

# healthy Learners of every family: no alarm from any of the four checks
def _vision(seed):
    from fastai.vision.learner import vision_learner
    from torchvision.models import resnet18
    from fastai_paranoid.calibration import image_dls
    return vision_learner(image_dls(seed=seed, bs=8), resnet18, pretrained=False)

def _xresnet(seed):
    from fastai.vision.models.xresnet import xresnet18 # fastai zero-initialises the last BatchNorm of each residual branch
    from fastai_paranoid.calibration import image_dls
    return Learner(image_dls(size=32, seed=seed), xresnet18(n_out=3), loss_func=CrossEntropyLossFlat())

def _cnn(seed):
    from fastai_paranoid.calibration import image_dls, small_image_net
    return Learner(image_dls(size=16, seed=seed), small_image_net(), loss_func=CrossEntropyLossFlat())

def _tabular(seed):
    import numpy as np, pandas as pd
    from fastai.tabular.data import TabularDataLoaders
    from fastai.tabular.core import Categorify, FillMissing, Normalize
    from fastai.tabular.learner import tabular_learner
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({'a': rng.choice(list('xyz'), 200), 'b': rng.choice(list('pq'), 200), 'c': rng.normal(5, 3, 200),
                       'd': rng.uniform(0, 100, 200), 'y': rng.choice(['u', 'v'], 200)}) # random: nothing to learn
    dls = TabularDataLoaders.from_df(df, procs=[Categorify, FillMissing, Normalize], cat_names=['a', 'b'], cont_names=['c', 'd'],
                                     y_names='y', valid_idx=list(range(160, 200)), bs=32, num_workers=0)
    return tabular_learner(dls)

class DropPath(nn.Module):
    "Residual MLP with stochastic depth: each branch skipped entirely (no gradient) with probability `p` in training"
    def __init__(self, p=0.5): super().__init__(); self.p, self.stem, self.branches, self.head = p, nn.Linear(10, 32), nn.ModuleList(nn.Linear(32, 32) for _ in range(3)), nn.Linear(32, 2)
    def forward(self, x):
        h = self.stem(x).relu()
        for b in self.branches:
            if not (self.training and torch.rand(()) < self.p): h = h + b(h).relu()
        return self.head(h)

class TVStochasticDepth(nn.Module):
    "torchvision's StochasticDepth in 'batch' mode: a skipped branch is multiplied by 0 (all-zero gradients in that pass)"
    def __init__(self):
        from torchvision.ops import StochasticDepth
        super().__init__(); self.stem, self.branch, self.drop, self.head = nn.Linear(10, 32), nn.Linear(32, 32), StochasticDepth(0.5, 'batch'), nn.Linear(32, 2)
    def forward(self, x):
        h = self.stem(x).relu()
        return self.head(h + self.drop(self.branch(h).relu()))

def _zero_head(seed):
    model = mlp()
    nn.init.zeros_(model[3].weight); nn.init.zeros_(model[3].bias)
    return ce(features_dls(seed), model)

def _text(seed):
    from fastai.text.learner import text_classifier_learner
    from fastai.text.models.awdlstm import AWD_LSTM
    from fastai_paranoid.calibration import text_dls
    return text_classifier_learner(text_dls(seed=seed), AWD_LSTM, pretrained=False)

def _collab(seed):
    from fastai.collab import collab_learner
    from fastai_paranoid.calibration import ratings_dls
    return collab_learner(ratings_dls(seed=seed), n_factors=4, y_range=(0, 5.5))

def _frozen(seed):
    learn = Learner(features_dls(seed), mlp(), loss_func=nn.CrossEntropyLoss(), splitter=lambda m: [params(m[0]), params(m[3])])
    learn.freeze()
    return learn

HEALTHY = {'mlp': lambda s: ce(features_dls(s), mlp()), 'dropout': lambda s: ce(features_dls(s), mlp(dropout=0.5)),
           'zero-init head': _zero_head, 'drop path': lambda s: ce(features_dls(s), DropPath()),
           'torchvision stochastic depth': lambda s: ce(features_dls(s), TVStochasticDepth()), 'frozen': _frozen,
           'two inputs': lambda s: ce(masked_dls(s), MaskedMLP(True)), 'cnn': _cnn, 'tabular': _tabular, 'collab': _collab,
           'resnet18': _vision, 'xresnet18 zero-init BN': _xresnet, 'text': _text,
           'custom autograd.Function (a ReLU with its kink)': lambda s: Learner(features_dls(s), CustomFn(MyReLU), loss_func=CrossEntropyLossFlat())}
SLOW = {'resnet18', 'xresnet18 zero-init BN', 'text'}

@pytest.mark.parametrize('name', [pytest.param(n, marks=[pytest.mark.slow] if n in SLOW else []) for n in HEALTHY])
def test_healthy_learner_gets_no_alarm(name):
    for seed in (0, 1, 2):
        torch.manual_seed(seed)
        report = run(HEALTHY[name](seed))
        assert [f"{r.name} {r.verdict}: {r.message}" for r in report if r.verdict in ALARMS] == []
        assert [r.verdict for r in report] == ['passed'] * len(CHECKS), [r.message for r in report]

def test_registered_early_in_sanity_check():
    "Cheap checks run early: after the loss at init (order 10), before the loss/activation check (20) and every check that trains"
    names = [fn.__name__ for fn in registered_checks()]
    at = [names.index(n) for n in CHECKS]
    assert at == sorted(at) and names.index('check_loss_at_init') < at[0] and at[-1] < names.index('check_loss_activation')

def test_each_check_is_cheap_on_a_small_cnn():
    "Cost counted, not timed (benchmarks/bench_sanity_cost.py times it): at most 4 forward passes of at most one batch each"
    learn = _cnn(0)
    calls = []
    learn.model.register_forward_hook(lambda m, i, o: calls.append(len(i[0]))) # model copies keep the hook
    for name in CHECKS:
        calls.clear()
        getattr(mc, name)(learn)
        assert len(calls) <= 4 and all(n <= learn.dls.train.bs for n in calls), (name, calls)
    assert calls, "the hook counts the checks' forward passes"

# as scripts under `fastai-paranoid check` (tests/bug_scripts: no fastai_paranoid inside): the bug is reported, the twin silent
SCRIPT_BUGS = {'replaced_head.py': ('check_optimizer_coverage', r"model\.7\.weight \(Linear\)"),
               'detached_features.py': ('check_gradient_flow', r"model\.body\.0\.weight \(Conv2d\)"),
               'ignored_features.py': ('check_input_dependency', r"features 32-63 of 64"),
               'ignored_mask.py': ('check_input_dependency', r"input 1 \(\(16, 1, 8, 8\), torch\.float32\) changes as a whole"),
               'constant_output.py': ('check_output_variation', r"get the same output")}

@pytest.mark.slow
@pytest.mark.parametrize('script', SCRIPT_BUGS)
def test_script_bug_reported_and_twin_silent(script):
    check, detail = SCRIPT_BUGS[script]
    found, _ = checked(script)
    hits = [f for f in found.all if f.kind == check]
    assert hits and all(f.level == 'error' for f in hits), found.report(script)
    assert any(re.search(detail, f.evidence) for f in hits), found.report(script)
    found, guards = checked(script, '--healthy')
    assert guards[-1].checked and found.problems == 0 and not found.leaks, found.report(script)

@pytest.mark.slow
def test_the_command_reports_a_replaced_head(tmp_path):
    "`fastai-paranoid check` as a user runs it, in a new process: exit 1 and the finding in the report"
    out = command('check', '--n-workers', '1', '--json', str(tmp_path / 'out.json'), str(SCRIPTS / 'replaced_head.py'), cwd=tmp_path)
    assert out.returncode == 1, out.stdout + out.stderr
    findings = json.loads((tmp_path / 'out.json').read_text())['files'][0]['findings']
    hits = [f for f in findings if f['kind'] == 'check_optimizer_coverage']
    assert hits and hits[0]['level'] == 'error' and 'never train' in hits[0]['evidence'], findings
    assert 'check_optimizer_coverage' in out.stdout, out.stdout

def test_optimizer_coverage_through_torch_optimizers():
    "fastai's OptimWrapper around a torch optimizer: built by the Learner (passes, then a replaced head fails), or built by the user for another model"
    from functools import partial
    from fastai.optimizer import OptimWrapper
    learn = Learner(features_dls(), mlp(), loss_func=nn.CrossEntropyLoss(), opt_func=partial(OptimWrapper, opt=torch.optim.AdamW))
    assert mc.check_optimizer_coverage(learn).verdict == 'passed'
    learn.create_opt()
    learn.model[-1] = nn.Linear(32, 2)
    assert mc.check_optimizer_coverage(learn).measured == {'trainable': 4, 'held': 4, 'missing': 2, 'foreign': 2, 'frozen_held': 0}
    built = OptimWrapper(opt=torch.optim.SGD(mlp().parameters(), lr=0.1)) # for another instance of the model
    res = mc.check_optimizer_coverage(Learner(features_dls(), mlp(), loss_func=nn.CrossEntropyLoss(), opt_func=built))
    assert res.verdict == 'failed' and res.measured['missing'] == 4 and res.measured['foreign'] == 4

def test_loss_parameters_are_not_foreign():
    "A loss with its own parameters, given to the optimizer by the splitter, is trained on purpose"
    class Scaled(nn.Module):
        def __init__(self): super().__init__(); self.log_t = nn.Parameter(torch.zeros(()))
        def forward(self, pred, y): return nn.functional.cross_entropy(pred * self.log_t.exp(), y)
    loss = Scaled()
    learn = Learner(features_dls(), mlp(), loss_func=loss, splitter=lambda m: [params(m), [loss.log_t]])
    assert mc.check_optimizer_coverage(learn).verdict == 'passed'

class _OwnTimmBody(nn.Module):
    "A user's own wrapper that runs a timm model's forward_features and pools: the head it skips is the user's doing"
    def __init__(self, model, n_out): super().__init__(); self.body, self.head = model, nn.Linear(model.num_features, n_out)
    def forward(self, x): return self.head(self.body.forward_features(x).mean((2, 3)))

def test_parameters_a_library_never_calls_are_a_note():
    "course22's convnext recipe (vision_learner over a timm model, through fastai's TimmBody, which never calls the timm head's norm): info, not an error; its printed fix, applied, passes; the same skip written in the user's own forward stays an error"
    import timm
    from fastai.vision.learner import vision_learner, TimmBody
    from fastai_paranoid.fixtures import random_image_dls
    dls = lambda: random_image_dls(n_train=16, n_valid=8, size=32, c_in=3, bs=8)
    torch.manual_seed(0)
    learn = vision_learner(dls(), 'convnext_atto', pretrained=False, n_out=4, loss_func=CrossEntropyLossFlat())
    assert isinstance(learn.model[0], TimmBody)
    res = mc.check_gradient_flow(learn) # the default 16 passes: once two passes agree that only TimmBody's skip is left, it stops
    assert (res.verdict, res.level, res.measured['unused_by_library'], res.measured['no_grad']) == ('info', 'info', 2, 0), res
    assert res.measured['passes'] == 2, res.measured # more passes would decide nothing: TimmBody skips the head on every one
    assert 'model.0.model.head.norm.weight (LayerNorm2d)' in res.message and 'TimmBody (fastai, model.0)' in res.message, res.message
    (module,) = re.findall(r"(learn\.model\[0\]\.model\.head\.norm)\.requires_grad_\(False\)", res.fix)
    eval(module, {'learn': learn}).requires_grad_(False)
    assert mc.check_gradient_flow(learn, max_passes=2).verdict == 'passed'
    own = Learner(dls(), _OwnTimmBody(timm.create_model('convnext_atto', pretrained=False, num_classes=0), 4), loss_func=CrossEntropyLossFlat())
    res = mc.check_gradient_flow(own, max_passes=4) # the user's own forward may skip by chance (a layer drop): it is re-checked
    assert (res.verdict, res.level, res.measured['no_grad'], res.measured['unused_by_library']) == ('failed', 'error', 2, 0), res
    assert res.measured['passes'] == 4, res.measured
    assert 'model.body.head.norm.weight (LayerNorm2d)' in res.message and 'never ran in any pass' in res.message
