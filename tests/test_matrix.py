"""A cheap slice of `benchmarks/bench_matrix.py` (issue 39, parts 4 and 5): the Learners on which checks crashed, in the states
that crashed them, and a few more states; every check runs, none may crash ('error'), and the Learner is left as it was. Then
the same numbers on every run: a weighted loader's draws and the global RNG states the user left change none of them."""
import importlib.util, math, pathlib, random, sys, tempfile, warnings
import numpy as np, pandas as pd, pytest, torch
from torch import nn
from fastai.learner import Learner, load_learner
from fastai.tabular.core import TabWeightedDL
from fastai.vision.learner import unet_learner
from fastai.text.learner import text_classifier_learner
from fastai.text.models.awdlstm import AWD_LSTM, awd_lstm_clas_config
from fastai.metrics import accuracy
import fastai_paranoid.sanity # learn.sanity_check()
from fastai_paranoid.validchecks import check_metric_baseline

warnings.filterwarnings('ignore')

def _bench():
    "benchmarks/bench_matrix.py, under its own name (what `export` pickles refers to it)"
    if 'bench_matrix' in sys.modules: return sys.modules['bench_matrix']
    path = pathlib.Path(__file__).parents[1] / 'benchmarks' / 'bench_matrix.py'
    spec = importlib.util.spec_from_file_location('bench_matrix', path)
    mod = sys.modules['bench_matrix'] = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod

bench = _bench()

def _quiet(learn): return bench._quiet(learn) # no bar, no log, no warnings

def _crashed(report)->list: return [(r.name, r.message) for r in report.errors]

def _state(learn)->dict:
    "What a check must leave as it was: the weights and buffers, and the tensors the model's hooks keep"
    return {k: v.clone() for k, v in learn.model.state_dict().items()}

def tiny_encoder(pretrained=False):
    "An encoder `unet_learner` cuts at its pooling layer (two size changes: two hooks, kept with their graph)"
    return nn.Sequential(nn.Conv2d(3, 8, 3, stride=2, padding=1), nn.BatchNorm2d(8), nn.ReLU(),
                         nn.Conv2d(8, 16, 3, stride=2, padding=1), nn.BatchNorm2d(16), nn.ReLU(), nn.AdaptiveAvgPool2d(1))

def tiny_unet():
    torch.manual_seed(0)
    return unet_learner(bench.image_dls('mask', n_train=8, n_valid=4, size=16, bs=4), tiny_encoder, pretrained=False, n_out=2)

def test_unet_after_lr_find():
    "fastai's U-Net keeps its encoder's activations with their graph (`hook_outputs(detach=False)`); after lr_find, whose last batch trains, a deepcopy refused the model and 9 checks crashed"
    learn = tiny_unet()
    with _quiet(learn): learn.lr_find(num_it=4, show_plot=False)
    kept = [h.stored for h in learn.model.sfs]
    assert any(t is not None and t.grad_fn is not None for t in kept) # the state that crashed the checks
    before = _state(learn)
    report = learn.sanity_check(on_finding=None, progress=False)
    assert _crashed(report) == []
    assert report['check_gradient_flow'].verdict == 'passed'
    assert all(h.stored is t for h, t in zip(learn.model.sfs, kept)) # the user's hooks keep their own activations
    assert all(torch.equal(before[k], v) for k, v in learn.model.state_dict().items())

def tiny_text(dup):
    torch.manual_seed(0)
    config = awd_lstm_clas_config | bench.TINY_AWD
    return text_classifier_learner(bench.text_dls(dup=dup, n=96), AWD_LSTM, pretrained=False, config=config, seq_len=16, metrics=accuracy)

@pytest.mark.parametrize('dup', [True, False])
def test_text_classifier_leak_test(dup):
    "AWD-LSTM returns a tuple: the shuffled-label test trained its copies on it and crashed, exactly when the split holds duplicates; now it judges, both ways"
    learn = tiny_text(dup)
    report = learn.sanity_check(on_finding=None, progress=False)
    assert _crashed(report) == []
    assert report['check_split_duplicates'].verdict == ('failed' if dup else 'passed')

def tabular(n=300):
    torch.manual_seed(0)
    dls = bench.tab_dls(n=n)
    assert isinstance(dls.valid, TabWeightedDL) # fastai's default for tabular data: shuffled, it samples with replacement
    return bench.tabular_learner(dls, layers=[16], metrics=accuracy)

@pytest.mark.parametrize('state', ['lr_find', 'fit', 'save+load', 'export+load_learner'])
def test_tabular_states(state):
    with tempfile.TemporaryDirectory() as tmp:
        learn = bench.STATES[state](lambda dup=False: tabular(n=120), False, pathlib.Path(tmp))
        report = learn.sanity_check(on_finding=None, progress=False)
    assert _crashed(report) == []
    if state == 'export+load_learner': # empty DataLoaders: nothing to check, and each check says so
        assert set(report.counts) <= {'passed', 'skipped'}
        assert 'load_learner' in report['check_train_batches'].message and report['check_train_batches'].verdict == 'skipped'
        assert 'load_learner' in report['check_input_normalization'].message

def _same(a, b)->bool:
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b): return True
    if isinstance(a, dict) and isinstance(b, dict): return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)): return len(a) == len(b) and all(map(_same, a, b))
    return a == b

def _global_seeds(s):
    random.seed(s)
    np.random.seed(s + 1)
    torch.manual_seed(s + 2)

def test_metric_baseline_reads_the_set():
    "check_metric_baseline read `dls.valid.new(shuffle=True)`: a TabWeightedDL then draws with replacement from NumPy's global RNG, so the constant's accuracy moved from run to run around the true share; now it is the true share on every run"
    learn = tabular()
    y = learn.dls.valid_ds.ys.values.flatten()
    true_share = np.bincount(y).max() / len(y)
    results = []
    for s in (1, 2):
        _global_seeds(s)
        results.append(check_metric_baseline(learn))
    assert results[0].measured == results[1].measured and results[0].verdict == results[1].verdict
    assert results[0].measured['n_items'] == len(y)
    assert results[0].measured['accuracy constant'] == pytest.approx(true_share, abs=1e-6)

def test_every_number_the_same_on_every_run():
    "The same Learner, two runs of every check from the same global RNG states, as two runs of one seeded script: the same verdicts and the same numbers. Its training batches are a TabWeightedDL's draws from NumPy's global RNG: the checks read what the user's next fit would read from the states the script left, so seeding the script fixes them (the validation set, which the checks mean as a set, is read as one whatever the states: above)"
    learn = tabular()
    reports = []
    for s in (1, 1):
        _global_seeds(s)
        reports.append(learn.sanity_check(on_finding=None, progress=False))
    differ = [a.name for a, b in zip(*reports) if not (_same(a.measured, b.measured) and a.verdict == b.verdict and a.message == b.message)]
    assert differ == []
