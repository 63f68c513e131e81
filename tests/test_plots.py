"Plots of lr_sweep and of the BatchNorm drift, tested on the figure's data (not its pixels), each both ways"
import math, warnings
import matplotlib
matplotlib.use('Agg')
from matplotlib.figure import Figure
import pytest
import torch
from torch import nn
from fastai.learner import Learner
import fastai.callback.progress  # Learner.no_bar
from fastai_paranoid.bn import FreezeBNStats, NormStatsDrift, norm_stats_snapshot, norm_stats_drift
from fastai_paranoid.checks import LRSweep, lr_sweep
from fastai_paranoid.core import ResultTable, module_paths
from fastai_paranoid.fixtures import bn_cnn, random_image_dls, xor_dls, build_mlp
from fastai_paranoid.fresh import fresh_learner

warnings.filterwarnings('ignore', message='`torch.jit.script` is deprecated')
pytestmark = pytest.mark.usefixtures('one_thread') # tests/conftest.py


def test_lr_sweep_plot_loss_against_lr_on_a_log_axis_with_the_band():
    sweep = LRSweep([1e-3, 1e-2, 1e-1, 1.0, 10.0], [0.60, 0.40, 0.42, 0.9, math.inf], steps=60, tail=10, tol=0.1)
    fig = sweep.plot()
    assert isinstance(fig, Figure)
    ax = fig.axes[0]
    assert ax.get_xscale() == 'log'
    assert list(ax.lines[0].get_xdata()) == [1e-3, 1e-2, 1e-1, 1.0] and list(ax.lines[0].get_ydata()) == [0.60, 0.40, 0.42, 0.9]
    band = ax.patches[0]
    assert (band.get_x(), band.get_x() + band.get_width()) == pytest.approx(sweep.band) == (1e-2, 1e-1)
    star = [c for c in ax.collections if c.get_label().startswith('lowest at')][0]
    assert star.get_offsets().tolist() == [[1e-2, 0.40]]
    crosses = [c for c in ax.collections if c.get_label().startswith('diverged')]
    assert len(crosses) == 1 and crosses[0].get_offsets()[:, 0].tolist() == [10.0]
    healthy = LRSweep([1e-3, 1e-2], [0.5, 0.3], steps=60, tail=10, tol=0.1).plot().axes[0]
    assert not [c for c in healthy.collections if c.get_label().startswith('diverged')]
    lo, hi = healthy.patches[0].get_x(), healthy.patches[0].get_x() + healthy.patches[0].get_width()
    assert lo < 1e-2 < hi and lo > 1e-3, "a band of one rate is drawn around that rate only"


def test_lr_sweep_plot_of_a_real_sweep():
    learn = fresh_learner(lambda: xor_dls(n_train=128, n_valid=64, bs=32), build_mlp, loss_func=nn.CrossEntropyLoss())
    sweep = lr_sweep(learn, lrs=(1e-3, 1e-1, 10.), steps=8, tail=3)
    ax = sweep.plot().axes[0]
    finite = [(lr, l) for lr, l in zip(sweep.lrs, sweep.tail_losses) if math.isfinite(l)]
    assert list(zip(ax.lines[0].get_xdata(), ax.lines[0].get_ydata())) == finite
    assert sweep.title == ax.get_title()


def test_norm_stats_drift_is_still_a_table_of_dicts_and_plots_the_change_per_layer():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(1, 4, 3), nn.BatchNorm2d(4), nn.ReLU(), nn.Conv2d(4, 4, 3), nn.BatchNorm2d(4))
    snap = norm_stats_snapshot(model)
    model[4].eval()                        # the second layer holds, the first moves
    model(torch.randn(8, 1, 12, 12) + 2.0)
    drift = norm_stats_drift(snap, module_paths(model))
    assert isinstance(drift, NormStatsDrift) and isinstance(drift, ResultTable)
    assert [r['verdict'] for r in drift] == ['moved', 'held'] and drift[0]['layer'] == 'model.1 (BatchNorm2d)'
    fig = drift.plot()
    assert isinstance(fig, Figure)
    ax = fig.axes[0]
    means, variances = ax.containers
    assert [b.get_width() for b in means] == [drift[0]['running_mean'], 0.0]
    assert [b.get_width() for b in variances] == [drift[0]['running_var'], 0.0]
    labels = ax.get_yticklabels()
    assert [t.get_text() for t in labels] == ['model.1 (BatchNorm2d): moved', 'model.4 (BatchNorm2d): held']
    assert [t.get_color() for t in labels] == ['red', 'black']


def test_freeze_bn_stats_drift_plot_after_a_fit():
    def splitter(m): return [list(m[0].parameters()), list(m[1].parameters())]
    learn = Learner(random_image_dls(shift=2.0), bn_cnn(), loss_func=nn.CrossEntropyLoss(), splitter=splitter, cbs=FreezeBNStats())
    learn.freeze()
    with learn.no_bar(), learn.no_logging(): learn.fit(1, 1e-3)
    ax = learn.freeze_bn_stats.drift.plot().axes[0]
    assert [b.get_width() for b in ax.containers[0]] == [0.0] * len(learn.freeze_bn_stats.drift)
    assert all(t.get_text().endswith(': held') for t in ax.get_yticklabels())
