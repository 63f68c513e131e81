"check_tracker_monitor and check_valid_deterministic, both ways: the planted bug is caught, the healthy twin passes, the Learner is left as it was"
import tempfile, warnings
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
