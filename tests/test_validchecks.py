"check_tracker_monitor and check_valid_deterministic, both ways: the planted bug is caught, the healthy twin passes, the Learner is left as it was"
import tempfile, warnings
import pytest
from pathlib import Path
import numpy as np, torch, torch.nn as nn
from PIL import Image
from torch.utils.data import TensorDataset
from fastai.learner import Learner
from fastai.data.core import DataLoaders
from fastai.metrics import mse, accuracy
from fastai.callback.tracker import SaveModelCallback, EarlyStoppingCallback, ReduceLROnPlateau
from fastai.vision.all import ImageDataLoaders, aug_transforms, Transform, TensorImage, Resize
from fastai_paranoid.core import rng_fingerprint, registered_checks
from fastai_paranoid.validchecks import check_tracker_monitor, check_valid_deterministic, monitor_direction

warnings.filterwarnings('ignore')

def tiny_learner(cbs=None, seed=0):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(64, 4, generator=g); y = x.sum(1, keepdim=True)
    dls = DataLoaders.from_dsets(TensorDataset(x[:48], y[:48]), TensorDataset(x[48:], y[48:]), bs=16)
    return Learner(dls, nn.Linear(4, 1), loss_func=nn.MSELoss(), metrics=mse, cbs=cbs)

def test_registered():
    names = [f.__name__ for f in registered_checks()]
    assert 'check_tracker_monitor' in names and 'check_valid_deterministic' in names

def test_monitor_direction():
    assert [monitor_direction(m) for m in ('valid_loss', 'mse', '_rmse', 'mae', 'error_rate', 'perplexity', 'exp_rmspe')] == ['lower'] * 7
    assert [monitor_direction(m) for m in ('accuracy', 'f1_score', 'roc_auc_score', 'r2_score', 'dice', 'matthews_corrcoef', 'cohen_kappa_score')] == ['higher'] * 7
    assert monitor_direction('my_metric') is None

def test_tracker_caught_and_twins_silent():
    r = check_tracker_monitor(tiny_learner(SaveModelCallback(monitor='mse')))
    assert (r.verdict, r.level, r.claim) == ('failed', 'error', 'certain')
    assert "SaveModelCallback(monitor='mse')" in r.message and 'highest mse, the worst' in r.message
    assert "SaveModelCallback(monitor='mse', comp=np.less)" in r.fix
    assert check_tracker_monitor(tiny_learner(SaveModelCallback(monitor='accuracy', comp=np.less))).verdict == 'failed'
    assert check_tracker_monitor(tiny_learner(EarlyStoppingCallback(monitor='mae'))).verdict == 'failed'
    assert check_tracker_monitor(tiny_learner(ReduceLROnPlateau(monitor='_rmse'))).verdict == 'failed'
    for cb in (SaveModelCallback(monitor='mse', comp=np.less), SaveModelCallback(monitor='valid_loss'),
               SaveModelCallback(monitor='accuracy'), EarlyStoppingCallback(monitor='error_rate')):
        assert check_tracker_monitor(tiny_learner(cb)).verdict == 'passed', cb
    assert check_tracker_monitor(tiny_learner()).verdict == 'skipped'

def test_tracker_leaves_learner():
    learn = tiny_learner(SaveModelCallback(monitor='mse'))
    before = [(type(c), getattr(c, 'comp', None), getattr(c, 'best', None)) for c in learn.cbs]
    check_tracker_monitor(learn)
    assert [(type(c), getattr(c, 'comp', None), getattr(c, 'best', None)) for c in learn.cbs] == before

class Noise(Transform):
    order = 99
    def encodes(self, x:TensorImage): return x + torch.randn_like(x) * 0.1

class TrainNoise(Noise): split_idx = 0

def image_learner(batch_tfms, seed=0):
    rs = np.random.RandomState(seed); d = Path(tempfile.mkdtemp())
    for i in range(24):
        (d/f"c{i%2}").mkdir(exist_ok=True)
        Image.fromarray(rs.randint(0, 255, (32, 32, 3), dtype=np.uint8)).save(d/f"c{i%2}"/f"{i}.png")
    dls = ImageDataLoaders.from_folder(d, valid_pct=0.25, seed=seed, item_tfms=Resize(32), batch_tfms=batch_tfms, bs=8)
    return Learner(dls, nn.Sequential(nn.Flatten(), nn.Linear(3 * 32 * 32, 2)), metrics=accuracy)

def test_valid_noise_caught():
    r = check_valid_deterministic(image_learner([Noise()]))
    assert (r.verdict, r.level, r.claim) == ('failed', 'error', 'certain')
    assert 'after_batch: Noise' in r.message and 'split_idx = 0' in r.fix
    assert r.measured['max_abs_diff b[0]'] > 0

def test_valid_healthy_twins_pass_and_rng_restored():
    for learn in (image_learner(aug_transforms()), image_learner([TrainNoise()]), tiny_learner()):
        fp = rng_fingerprint(learn.dls)
        torch_state = torch.get_rng_state().clone()
        assert check_valid_deterministic(learn).verdict == 'passed'
        assert rng_fingerprint(learn.dls) == fp and torch.equal(torch.get_rng_state(), torch_state)
        assert not hasattr(learn.dls.valid, 'it')

# --- check_metric_baseline: a metric that a constant predictor already scores well on

import pandas as pd
from functools import partial
from fastai.data.block import DataBlock, RegressionBlock, MultiCategoryBlock, CategoryBlock
from fastai.data.transforms import RandomSplitter, IndexSplitter
from fastai.data.core import TfmdLists
from fastai.data.load import DataLoader as FastaiDataLoader
from fastai.torch_core import TensorMultiCategory
from fastai.losses import CrossEntropyLossFlat, BCEWithLogitsLossFlat, MSELossFlat
from fastai.metrics import accuracy_multi, error_rate, F1Score, F1ScoreMulti, BalancedAccuracy, RocAucBinary, rmse, mae
from fastai.tabular.all import TabularDataLoaders, tabular_learner, Categorify, Normalize
from fastai_paranoid.validchecks import check_metric_baseline, metric_range, valid_targets
from fastai_paranoid.sanity import SanityCheckWarning

def labels(n, p, seed, width=None):
    "n binary labels (or rows of `width` labels) present with probability p"
    g = torch.Generator().manual_seed(seed)
    return (torch.rand(n, generator=g) < p).long() if width is None else (torch.rand(n, width, generator=g) < p).float()

def tensors_learner(y_train, y_valid, n_out, loss_func, metrics, fastai_loader=False):
    "A linear model on random features: DataLoaders.from_dsets, or fastai DataLoaders of TensorDatasets built by hand"
    g = torch.Generator().manual_seed(0)
    train, valid = (TensorDataset(torch.randn(len(y), 6, generator=g), y) for y in (y_train, y_valid))
    if fastai_loader: dls = DataLoaders(FastaiDataLoader(train, bs=32, shuffle=True, drop_last=True), FastaiDataLoader(valid, bs=32))
    else: dls = DataLoaders.from_dsets(train, valid, bs=32)
    return Learner(dls, nn.Linear(6, n_out), loss_func=loss_func, metrics=metrics)

def tfmdlists_learner(p, metrics, n=300):
    "Multi-label pairs from a TfmdLists whose one transform returns (features, one-hot labels)"
    x, y = torch.randn(n, 6), labels(n, p, 1, width=12)
    class Pair(Transform):
        def encodes(self, i:int): return (x[i], TensorMultiCategory(y[i]))
    tl = TfmdLists(list(range(n)), [Pair()], splits=[list(range(200)), list(range(200, n))])
    return Learner(tl.dataloaders(bs=32), nn.Linear(6, 12), loss_func=BCEWithLogitsLossFlat(), metrics=metrics), y[200:]

def datablock_learner(p, metrics, n=300, seed=0):
    "Multi-label rows of a DataFrame through a DataBlock (a Datasets underneath), the labels as space-separated tags"
    rs = np.random.RandomState(seed)
    tags = [f"t{i}" for i in range(12)]
    df = pd.DataFrame({'a': rs.randn(n), 'b': rs.randn(n), 'tags': [' '.join(t for t in tags if rs.rand() < p) for _ in range(n)]})
    dblock = DataBlock(blocks=(RegressionBlock(n_out=2), MultiCategoryBlock(vocab=tags)), splitter=IndexSplitter(range(200, n)),
                       get_x=lambda r: np.array([r.a, r.b], dtype=np.float32), get_y=lambda r: r.tags.split(' ') if r.tags else [])
    dls = dblock.dataloaders(df, bs=32)
    return Learner(dls, nn.Linear(2, len(tags)), loss_func=BCEWithLogitsLossFlat(), metrics=metrics)

def test_metric_baseline_registered_and_ranges():
    assert 'check_metric_baseline' in [f.__name__ for f in registered_checks()]
    assert metric_range('accuracy_multi') == (0., 1.) and metric_range('matthews_corrcoef') == (-1., 1.)
    assert metric_range('mse') is None and metric_range('mean_squared_error') is None and metric_range('r2_score') is None

@pytest.mark.parametrize('fastai_loader', [False, True])
def test_majority_class_accuracy_caught_and_twins_silent(fastai_loader):
    y_valid = labels(200, 0.05, 2)
    r = check_metric_baseline(tensors_learner(labels(400, 0.05, 1), y_valid, 2, CrossEntropyLossFlat(), [accuracy, error_rate], fastai_loader))
    # 95% for 'always class 0': advice (info), as on the fastai book's own imbalanced examples; a warning needs 99% (below)
    assert (r.verdict, r.level, r.claim) == ('info', 'info', 'certain'), r.message
    assert abs(r.measured['accuracy constant'] - float((y_valid == 0).float().mean())) < 1e-6
    assert 'accuracy' in r.message and 'always class 0' in r.message and 'BalancedAccuracy()' in r.fix
    honest = tensors_learner(labels(400, 0.05, 1), y_valid, 2, CrossEntropyLossFlat(), [F1Score(), BalancedAccuracy(), RocAucBinary()], fastai_loader)
    assert check_metric_baseline(honest).verdict == 'passed'
    balanced = tensors_learner(labels(400, 0.5, 1), labels(200, 0.5, 2), 2, CrossEntropyLossFlat(), [accuracy, error_rate], fastai_loader)
    assert check_metric_baseline(balanced).verdict == 'passed'

@pytest.mark.parametrize('build', ['tfmdlists', 'datablock', 'tensors'])
def test_sparse_multilabel_caught_for_every_kind_of_loader(build):
    "the planted case of issue 17: accuracy_multi on sparse labels scores what 'no label at all' scores; the labels read through TfmdLists, Datasets and tensors"
    def learner(p, metrics):
        if build == 'tfmdlists': return tfmdlists_learner(p, metrics)[0]
        if build == 'datablock': return datablock_learner(p, metrics)
        return tensors_learner(labels(200, p, 1, width=12), labels(100, p, 2, width=12), 12, BCEWithLogitsLossFlat(), metrics)
    r = check_metric_baseline(learner(0.06, [partial(accuracy_multi, thresh=0.2)]))
    assert (r.verdict, r.level) == ('info', 'info') and 'every label negative' in r.message and 'F1ScoreMulti()' in r.fix, r.message
    assert r.measured['accuracy_multi constant'] > 0.9 and r.measured['accuracy_multi random'] < 0.6
    assert check_metric_baseline(learner(0.06, [F1ScoreMulti()])).verdict == 'passed'
    assert check_metric_baseline(learner(0.5, [accuracy_multi])).verdict == 'passed'

def test_tfmdlists_targets_are_the_served_ones():
    learn, y_valid = tfmdlists_learner(0.06, [accuracy_multi])
    _, targets, n_read, n_total = valid_targets(learn)
    assert (n_read, n_total) == (100, 100)
    got = torch.cat([t[0] for t in targets])
    assert sorted(map(tuple, got.tolist())) == sorted(map(tuple, y_valid.tolist())) # every validation item once, shuffled

def test_tabular_imbalanced_is_a_note_and_regression_passes():
    rs = np.random.RandomState(0)
    df = pd.DataFrame({'a': rs.randn(400), 'b': rs.choice(['x', 'y'], 400), 'y': np.where(rs.rand(400) < 0.8, 'n', 'p')})
    dls = TabularDataLoaders.from_df(df, procs=[Categorify, Normalize], cat_names=['b'], cont_names=['a'], y_names='y', bs=32,
                                     valid_idx=list(range(320, 400))) # a fixed split: the default RandomSplitter draws from the global RNG, which earlier tests move
    r = check_metric_baseline(tabular_learner(dls, layers=[8], metrics=accuracy)) # targets (n, 1), outputs (n, 2): CrossEntropyLossFlat
    assert (r.verdict, r.level) == ('info', 'info') and 'above random guessing' in r.message, r.message
    g = torch.Generator().manual_seed(0)
    reg = tensors_learner(torch.randn(300, 1, generator=g), torch.randn(100, 1, generator=g), 1, MSELossFlat(), [mse, rmse, mae])
    r = check_metric_baseline(reg)
    assert r.verdict == 'passed' and 'mse' in r.message and 'the mean target' in r.message and r.measured['mse constant'] > 0

def test_metric_baseline_leaves_learner_and_rngs():
    learn = tensors_learner(labels(400, 0.05, 1), labels(200, 0.05, 2), 2, CrossEntropyLossFlat(), [accuracy, F1Score()])
    learn.validate() # the metrics hold the state of a real validation
    states = [dict(vars(m)) for m in learn.metrics]
    weights = {k: v.clone() for k, v in learn.model.state_dict().items()}
    fp, torch_state = rng_fingerprint(learn.dls), torch.get_rng_state().clone()
    r = check_metric_baseline(learn)
    assert r.verdict == 'info' # F1 beside accuracy: the run has an honest number, so a note
    assert rng_fingerprint(learn.dls) == fp and torch.equal(torch.get_rng_state(), torch_state)
    assert [dict(vars(m)) for m in learn.metrics] == states
    assert all(torch.equal(v, weights[k]) for k, v in learn.model.state_dict().items()) and not hasattr(learn.dls.valid, 'it')

def test_metric_baseline_skips_what_it_cannot_judge():
    few = tensors_learner(labels(400, 0.05, 1), labels(20, 0.05, 2), 2, CrossEntropyLossFlat(), [accuracy])
    assert check_metric_baseline(few).verdict == 'skipped'
    assert check_metric_baseline(tensors_learner(labels(400, 0.05, 1), labels(200, 0.05, 2), 2, CrossEntropyLossFlat(), [])).verdict == 'skipped'
    sample = check_metric_baseline(tensors_learner(labels(400, 0.05, 1), labels(200, 0.05, 2), 2, CrossEntropyLossFlat(), [accuracy]), max_items=96)
    assert sample.measured['n_items'] == 96 and sample.claim == 'measured on 96 of 200 items'

def test_extreme_imbalance_is_a_warning():
    "a constant at 99% or more of the metric's range leaves the model nothing to show: a warning, certain"
    y_valid = torch.zeros(400, dtype=torch.long); y_valid[:2] = 1 # 0.5% positives
    learn = tensors_learner(labels(400, 0.05, 1), y_valid, 2, CrossEntropyLossFlat(), [accuracy])
    r = check_metric_baseline(learn)
    assert (r.verdict, r.level, r.claim) == ('warning', 'warning', 'certain'), r.message
    assert r.measured['accuracy constant'] == pytest.approx(0.995)

def test_sanity_check_reports_it():
    y_valid = torch.zeros(400, dtype=torch.long); y_valid[:2] = 1
    learn = tensors_learner(labels(400, 0.05, 1), y_valid, 2, CrossEntropyLossFlat(), [accuracy])
    with pytest.warns(SanityCheckWarning, match='check_metric_baseline warning'):
        report = learn.sanity_check(checks=['check_metric_baseline'], progress=False)
    assert report['check_metric_baseline'].verdict == 'warning'
