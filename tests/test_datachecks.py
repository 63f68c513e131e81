"Checks 5-8 both ways (the planted bug fails, the healthy pipeline passes), and every check leaves the Learner exactly as it was"
import warnings
import numpy as np
import pandas as pd
import pytest
import torch
from torch import nn
from fastai.learner import Learner
import fastai.callback.progress   # adds learn.no_bar()
from fastai.tabular.all import TabularDataLoaders, tabular_learner
from fastai_paranoid.core import fingerprint, rng_fingerprint, CheckResult, registered_checks
from fastai_paranoid.fixtures import *
from fastai_paranoid.checkutils import *
from fastai_paranoid.datachecks import *
from fastai_paranoid.fresh import seed_everything

CHECKS = [check_label_leak, check_split_duplicates, check_input_normalization, check_batch_independence]
FAST = dict(check_label_leak=dict(steps=20, repeats=2))

def learner_state(learn):
    opt_state = [] if learn.opt is None else [fingerprint(v) for s in learn.opt.state.values() for v in s.values() if isinstance(v, torch.Tensor)]
    return dict(params=[fingerprint(p) for p in learn.model.parameters()],
                grads=[None if p.grad is None else fingerprint(p.grad) for p in learn.model.parameters()],
                buffers=[fingerprint(b) for b in learn.model.buffers()], training=[m.training for m in learn.model.modules()],
                requires_grad=[p.requires_grad for p in learn.model.parameters()], opt=opt_state, cbs=[type(c) for c in learn.cbs],
                hooks=[len(m._forward_hooks) + len(m._forward_pre_hooks) for m in learn.model.modules()],
                rng=rng_fingerprint(learn.dls), dl_attrs=[(dl.shuffle, dl.drop_last, dl.bs) for dl in learn.dls.loaders])

def leaky_xor(n=400, seed=0):
    "Seed 001's leaky pipeline: oversample 2x, then split"
    rng = np.random.default_rng(seed)
    g = torch.Generator().manual_seed(seed)
    x, y = make_xor_data(n, rng)
    y = y[torch.randperm(n, generator=g)]
    xd, yd = torch.cat([x, x]), torch.cat([y, y])
    idx = torch.randperm(2 * n, generator=g)
    return tensor_dls(xd[idx[:n]], yd[idx[:n]], xd[idx[n:]], yd[idx[n:]])

def learner(dls, model): return Learner(dls, model, loss_func=nn.CrossEntropyLoss())

def trained(learn, epochs=1):
    with learn.no_bar(), learn.no_logging(): learn.fit(epochs, 1e-2)
    return learn

@pytest.fixture
def frozen_bn_learner():
    "A Learner mid-life: BatchNorm model, trained once, frozen trunk (requires_grad False), optimizer state present"
    learn = Learner(random_image_dls(), bn_cnn(), loss_func=nn.CrossEntropyLoss())
    trained(learn)
    for p in learn.model[0].parameters(): p.requires_grad_(False)
    return learn

@pytest.mark.parametrize('check', CHECKS, ids=lambda f: f.__name__)
@pytest.mark.parametrize('kind', ['xor', 'bn'])
def test_checks_leave_learner_unchanged(check, kind, frozen_bn_learner):
    learn = trained(Learner(xor_dls(n_valid=200), build_mlp(), loss_func=nn.CrossEntropyLoss())) if kind == 'xor' else frozen_bn_learner
    learn.model.train()    # a mode the checks must not flip
    before = learner_state(learn)
    res = check(learn, **FAST.get(check.__name__, {}))
    assert isinstance(res, CheckResult)
    assert learner_state(learn) == before
    # the next training batch is the one it would have been
    assert res.verdict in ('passed', 'failed', 'warning', 'skipped')

def test_next_batch_unchanged_by_checks():
    def first_batch_after(run_checks):
        seed_everything(1)
        learn = Learner(xor_dls(n_valid=200), build_mlp(), loss_func=nn.CrossEntropyLoss())
        if run_checks:
            for c in CHECKS: c(learn, **FAST.get(c.__name__, {}))
        return learn.dls.train.one_batch()[0], torch.rand(3)
    (a, ra), (b, rb) = first_batch_after(False), first_batch_after(True)
    assert torch.equal(a, b) and torch.equal(ra, rb)

def test_registered_in_order():
    names = [f.__name__ for f in registered_checks()]
    mine = [n for n in names if n in {c.__name__ for c in CHECKS}]
    assert mine == [c.__name__ for c in CHECKS]

# ---- check 5

def features_dls(n=300, d=32, n_classes=3, leak=False, seed=0):
    "Random features with random labels; `leak`: oversample 2x, then split (seed 001's bug, in 32 dimensions)"
    g = torch.Generator().manual_seed(seed)
    x, y = torch.randn(n, d, generator=g), torch.randint(0, n_classes, (n,), generator=g)
    if not leak:
        return tensor_dls(x[:n // 2], y[:n // 2], x[n // 2:], y[n // 2:])
    xd, yd = torch.cat([x, x]), torch.cat([y, y])
    idx = torch.randperm(2 * n, generator=g)
    return tensor_dls(xd[idx[:n]], yd[idx[:n]], xd[idx[n:]], yd[idx[n:]])

def mlp(d=32, n_out=3): return nn.Sequential(nn.Linear(d, 256), nn.ReLU(), nn.Linear(256, n_out))

@pytest.mark.parametrize('seed', [0, 1])
def test_label_leak_both_ways(seed):
    bad = check_label_leak(learner(features_dls(leak=True, seed=seed), mlp()), seed=seed)
    good = check_label_leak(learner(features_dls(leak=False, seed=seed), mlp()), seed=seed)
    assert bad.verdict == 'warning' and bad.level == 'warning', bad.message
    assert bad.claim.startswith('p = ') and '< 0.001' in bad.claim and 'n = 3 x 300' in bad.claim
    assert good.verdict == 'passed', good.message
    assert bad.measured['p_value'] < 1e-3 and good.measured['p_value'] > 0.05
    assert abs(good.measured['valid_acc'] - good.measured['chance']) < 0.05
    assert 0.2 < good.measured['chance'] < 0.5       # three classes: chance is measured, not assumed to be 1/2

def test_label_leak_skips_regression():
    x = torch.randn(64, 2)
    learn = Learner(tensor_dls(x, x.sum(1, keepdim=True), x, x.sum(1, keepdim=True)), nn.Linear(2, 1), loss_func=nn.MSELoss())
    assert check_label_leak(learn).verdict == 'skipped'

def test_label_leak_no_power_is_inconclusive_not_a_pass():
    "Too few steps to memorize: 'skipped' with the reason, never 'passed'; a budget too short says so"
    learn = Learner(leaky_xor(), build_mlp(width=256), loss_func=nn.CrossEntropyLoss())
    res = check_label_leak(learn, steps=2)
    assert res.verdict == 'skipped' and res.message.startswith('inconclusive') and 'steps' in res.fix
    res = check_label_leak(learn, max_gflop=1e-4)   # an allowance that pays for fewer steps than memorizing needs
    assert res.verdict == 'skipped' and 'not started' in res.message and 'GFLOP' in res.message and 'max_gflop' in res.fix
    assert res.measured['steps_affordable'] < res.measured['steps_needed'] == 50

def test_label_leak_finds_near_copies():
    "Validation items that are training items plus a little noise (augmented or re-encoded before the split): not byte-identical, still a leak"
    rng = np.random.default_rng(0)
    x = torch.from_numpy(rng.normal(size=(300, 32)).astype(np.float32))
    y = torch.from_numpy(rng.integers(0, 3, 300))
    x_valid = torch.cat([x[:100] + 0.01 * torch.randn(100, 32), x[200:]])
    y_valid = torch.cat([y[:100], y[200:]])
    dls = tensor_dls(x[:200], y[:200], x_valid, y_valid)
    assert check_split_duplicates(learner(dls, mlp())).verdict == 'passed'  # no byte-identical copy
    res = check_label_leak(learner(dls, mlp()))
    assert res.verdict == 'warning' and res.measured['near_copies'] == 100, res.message
    assert '100 validation items are near copies' in res.message

def test_label_leak_scrambles_copies_alike():
    from fastai_paranoid.datachecks import _scrambled_labels
    keys = ['a', 'b', 'a', 'c', 'b', 'd']
    labels = torch.tensor([0, 1, 0, 1, 1, 0])
    for seed in range(5):
        s = _scrambled_labels(keys, labels, torch.Generator().manual_seed(seed))
        assert s[0] == s[2] and s[1] == s[4]
        assert sorted(s[[0, 1, 3, 5]].tolist()) == [0, 0, 1, 1]   # a permutation among distinct items

# ---- check 6

def test_duplicates_both_ways():
    bad = check_split_duplicates(learner(leaky_xor(), build_mlp()))
    assert bad.verdict == 'failed' and bad.measured['valid_in_train'] > 0 and bad.claim == 'certain'
    assert 'valid[' in bad.message and 'Split first' in bad.fix
    assert check_split_duplicates(learner(xor_dls(n_valid=200), build_mlp())).verdict == 'passed'

def test_duplicates_found_through_a_shuffled_drop_last_loader():
    "The training DataLoader shuffles and drops the last batch; copies in the dropped part are still found"
    x, y = torch.randn(70, 2), torch.randint(0, 2, (70,))
    dls = tensor_dls(x, y, x[-3:].clone(), y[-3:].clone(), bs=64)
    res = check_split_duplicates(learner(dls, build_mlp()))
    assert res.measured['valid_in_train'] == 3
    assert 'valid[0]=train[67]' in res.message

def test_duplicates_conflicting_labels_counted():
    x, y = torch.randn(64, 2), torch.zeros(64, dtype=torch.long)
    res = check_split_duplicates(learner(tensor_dls(x, y, x[:4], torch.ones(4, dtype=torch.long)), build_mlp()))
    assert res.measured['conflicting_labels'] == 4 and res.measured['valid_in_train'] == 0   # same input, other target: not a copy
    assert '4 validation inputs recur in training with another target' in res.message

def test_duplicates_class_balance_warning():
    x, y = load_digits_tensors()
    tr, va = split_per_class(y, seed=0)
    va = va[y[va] < 5]
    res = check_split_duplicates(learner(tensor_dls(x[tr], y[tr], x[va], y[va]), transfer_model(digits_trunk(), 10)))
    assert res.verdict == 'warning' and 'stratified' in res.fix
    assert res.measured['class_p'] < 1e-3 and f"n_valid = {res.measured['n_valid']}" in res.claim and '10 classes' in res.claim

def test_duplicates_oversampled_training_is_judged_on_distinct_items():
    "Oversampling the training split after a stratified split shifts the served class shares on purpose: no warning; the split itself is compared"
    x, y = load_digits_tensors()
    tr, va = split_per_class(y, seed=0)
    tr = np.concatenate([tr, np.tile(tr[(y[tr] == 0).numpy()], 3)]) # class 0 served 4 times as often
    res = check_split_duplicates(learner(tensor_dls(x[tr], y[tr], x[va], y[va]), transfer_model(digits_trunk(), 10)))
    assert res.verdict == 'passed', res.message
    assert res.measured['train_classes'][0] == 4 * res.measured['train_classes_distinct'][0]
    assert res.measured['class_shift'] < 0.05

def tabular_dls(shift=0.0, scale=1.0):
    rng = np.random.default_rng(0)
    df = pd.DataFrame({'a': rng.normal(size=200) * scale + shift, 'b': rng.normal(size=200)})
    df['y'] = (df.a * df.b > 0).astype(int)
    return TabularDataLoaders.from_df(df, cont_names=['a', 'b'], y_names='y', y_block=None, bs=32, valid_idx=list(range(150, 200)), procs=[])

def test_duplicates_with_tabular_pipeline():
    learn = tabular_learner(tabular_dls(), layers=[8])
    res = check_split_duplicates(learn)
    assert res.verdict == 'passed', res.message
    assert res.measured['n_train'] == 150 and res.measured['n_valid'] == 50

# ---- check 7

def test_normalization_both_ways():
    assert check_input_normalization(learner(digits_dls(), transfer_model(digits_trunk(), 10))).verdict == 'info'   # [0, 1] pixels
    assert check_input_normalization(learner(random_image_dls(shift=5.0), small_cnn())).verdict == 'info' # offset, not far off: a note
    assert check_input_normalization(learner(random_image_dls(shift=80.0), small_cnn())).verdict == 'warning' # raw-pixel scale
    assert check_input_normalization(learner(random_image_dls(), small_cnn())).verdict == 'passed'
    assert check_input_normalization(learner(xor_dls(), build_mlp())).verdict == 'passed'

def test_normalization_judges_the_mean_against_the_spread():
    "Well-separated blobs (std 3.2 from the class offsets) train as well as standardized inputs: passed; the same points in pixel units warn"
    g = torch.Generator().manual_seed(0)
    y = (torch.rand(256, generator=g) < 0.5).long()
    x = torch.randn(256, 2, generator=g) + 3 * (2 * y[:, None] - 1)
    assert check_input_normalization(learner(tensor_dls(x, y, x[:64], y[:64]), build_mlp())).verdict == 'passed'
    pixels = x * 40 + 128
    res = check_input_normalization(learner(tensor_dls(pixels, y, pixels[:64], y[:64]), build_mlp()))
    assert res.verdict == 'warning' and 'in the Dataset' in res.fix   # plain tensors: fastai's Normalize would leave them alone

def test_normalization_per_channel_names_the_channel():
    dls = random_image_dls(c_in=3)
    dls.train.dataset.tensors[0][:, 2] *= 100
    res = check_input_normalization(learner(dls, small_cnn(c_in=3)))
    assert res.verdict == 'warning' and 'channel 2' in res.message and '1 of 3 channels far outside' in res.message
    assert len(res.measured['input std']) == 3

def test_normalization_tabular_continuous_and_ints_skipped():
    learn = tabular_learner(tabular_dls(shift=20.0), layers=[8])
    res = check_input_normalization(learn)
    # x_cat is input 0 (empty), x_cont input 1; tabular_learner's bn_cont normalizes it first: a note
    assert res.verdict == 'info' and 'input 1' in res.message and 'BatchNorm1d normalizes it' in res.message, res.message
    dls = tabular_dls(shift=20.0)
    x = torch.tensor(dls.train.xs[['a', 'b']].values, dtype=torch.float32)
    y = torch.tensor(dls.train.ys.values.flatten())
    res = check_input_normalization(learner(tensor_dls(x, y, x[:32], y[:32]), build_mlp()))
    assert res.verdict == 'info' and 'feature 0 mean 20' in res.message, res.message # the same columns into a plain MLP: unscaled, a note
    res = check_input_normalization(learner(tensor_dls(x * 10, y, x[:32] * 10, y[:32]), build_mlp()))
    assert res.verdict == 'warning' and 'feature 0 mean 20' in res.message, res.message # in the hundreds: far off
    x = torch.randint(0, 10, (64, 5))
    learn = learner(tensor_dls(x, x[:, 0], x, x[:, 0]), nn.Sequential(nn.Embedding(10, 4), nn.Flatten(), nn.Linear(20, 10)))
    assert check_input_normalization(learn).verdict == 'skipped'

# ---- check 8

class BatchCentre(nn.Module):
    def forward(self, x): return x - x.mean(0, keepdim=True)

@pytest.mark.parametrize('model_fn, verdict, culprit', [
    (lambda: bn_cnn(), 'passed', None),
    (lambda: nn.Sequential(nn.Dropout(0.5), small_cnn()), 'passed', None),
    (lambda: nn.Sequential(small_cnn(), BatchCentre()), 'failed', 'model.1 (BatchCentre)'),
    (lambda: nn.Sequential(nn.Conv2d(1, 4, 3), nn.InstanceNorm2d(4), nn.Flatten(), nn.Linear(4 * 14 * 14, 4)), 'passed', None),
    (lambda: nn.Sequential(nn.Conv2d(1, 4, 3), nn.BatchNorm2d(4, track_running_stats=False), nn.Flatten(), nn.Linear(4 * 14 * 14, 4)), 'failed', 'model.1 (BatchNorm2d)'),
], ids=['bn-eval', 'dropout', 'batch-centre', 'instancenorm', 'bn-no-running-stats'])
def test_batch_independence_matrix(model_fn, verdict, culprit):
    res = check_batch_independence(learner(random_image_dls(), model_fn()))
    assert res.verdict == verdict, res.message
    if culprit: assert res.measured['mixing_starts_in'] == culprit and culprit in res.message and culprit in res.fix

class FlattenAcrossBatch(nn.Module):
    "Mixes examples in its own forward, between two leaves that do not"
    def __init__(self): super().__init__(); self.body, self.head = nn.Sequential(nn.Flatten(), nn.Linear(256, 8)), nn.Linear(8, 4)
    def forward(self, x):
        feats = self.body(x)
        return self.head(feats.t().reshape(len(x), -1))

def test_batch_independence_names_the_forward_when_no_leaf_mixes():
    res = check_batch_independence(learner(random_image_dls(), FlattenAcrossBatch()))
    assert res.verdict == 'failed'
    assert res.measured['mixing_starts_in'].startswith('the forward of model (FlattenAcrossBatch), before model.head (Linear)'), res.message
    assert 'Compute per example in model (FlattenAcrossBatch)' in res.fix and 'model.head' not in res.fix

def test_empty_validation_set_is_skipped():
    x, y = torch.randn(64, 2), torch.randint(0, 2, (64,))
    learn = learner(tensor_dls(x, y, x[:0], y[:0]), build_mlp())
    for check in (check_label_leak, check_split_duplicates):
        res = check(learn)
        assert res.verdict == 'skipped' and 'validation set is empty' in res.message, res
    assert check_batch_independence(learn).verdict == 'passed'   # falls back to training items

def test_batch_independence_skips_int_inputs():
    x = torch.randint(0, 10, (64, 5))
    learn = learner(tensor_dls(x, x[:, 0], x, x[:, 0]), nn.Sequential(nn.Embedding(10, 4), nn.Flatten(), nn.Linear(20, 10)))
    assert check_batch_independence(learn).verdict == 'skipped'

# ---- issue 16: no false alarms on healthy fastai code written elsewhere

import importlib.util, pathlib
from fastai_paranoid.datachecks import class_shares_test, matches_test, repeat_structure

def _bench():
    "benchmarks/bench_falsealarm_data.py: the healthy Learners and the planted bugs"
    path = pathlib.Path(__file__).parents[1] / 'benchmarks' / 'bench_falsealarm_data.py'
    spec = importlib.util.spec_from_file_location('bench_falsealarm_data', path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod

def test_class_shares_test_is_calibrated():
    "Random splits of random labels: p < 0.05 about 5% of the time, p < 0.001 almost never, with small expected counts too (Monte Carlo)"
    rng = np.random.default_rng(0)
    ps = []
    for i in range(400):
        k, n = int(rng.integers(2, 21)), int(rng.integers(40, 401))
        y = rng.integers(0, k, n)
        valid = rng.permutation(n)[:n // 5]
        is_valid = np.zeros(n, bool)
        is_valid[valid] = True
        ps.append(class_shares_test(np.bincount(y[~is_valid], minlength=k).tolist(), np.bincount(y[is_valid], minlength=k).tolist(), seed=i)[1])
    ps = np.array(ps)
    assert 0.02 <= (ps < 0.05).mean() <= 0.09, (ps < 0.05).mean()
    assert (ps < 1e-3).sum() <= 2
    _, p, method = class_shares_test([12, 12, 12], [0, 0, 12])
    assert p < 1e-3 and method.startswith('Monte Carlo')

def test_matches_test_is_calibrated():
    "Predictions independent of the labels: the permutation test's p < 0.05 about 5% of the time, p < 0.001 almost never"
    g = torch.Generator().manual_seed(0)
    ps = []
    for i in range(400):
        n, k = int(torch.randint(20, 200, (1,), generator=g)), int(torch.randint(2, 10, (1,), generator=g))
        preds = [torch.randint(0, k, (n,), generator=g) for _ in range(3)]
        labels = [torch.randint(0, k, (n,), generator=g) for _ in range(3)]
        ps.append(matches_test(preds, labels, seed=i)[1])
    ps = np.array(ps)
    assert 0.02 <= (ps < 0.05).mean() <= 0.09, (ps < 0.05).mean()
    assert (ps < 1e-3).sum() <= 2
    y = torch.randint(0, 3, (100,), generator=g)
    assert matches_test([y.clone()], [y])[1] < 1e-3

def test_normalization_standard_normal_rows_not_flagged():
    "The old one-batch judgement flagged standard-normal rows ('channel 1 has mean 0.279'): bounded over the training set, they pass"
    for seed in range(5):
        g = torch.Generator().manual_seed(seed)
        x, y = torch.randn(40, 5, generator=g), torch.randint(0, 2, (40,), generator=g)
        res = check_input_normalization(learner(tensor_dls(x[:32], y[:32], x[32:], y[32:], bs=8), nn.Linear(5, 2)))
        assert res.verdict == 'passed', res.message
        assert res.measured['n_items'] == 32 and res.measured['whole_training_set']

def test_normalization_summarizes_many_features():
    "Flattened 28x28 [0, 1] images: a count, the worst 3, no list of 784 numbers; an 'info', not a warning"
    g = torch.Generator().manual_seed(0)
    x = torch.rand(256, 784, generator=g) * (torch.arange(784) % 28 > 3).float()   # four always-black columns
    y = torch.randint(0, 10, (256,), generator=g)
    res = check_input_normalization(learner(tensor_dls(x, y, x[:64], y[:64]), nn.Linear(784, 10)))
    assert res.verdict == 'info', res.message
    assert 'of 784 features' in res.message and res.message.count('feature ') <= 5 and len(res.message) < 800, res.message
    assert '112 constant features left out' in res.message
    assert isinstance(res.measured['input mean'], str) and 'standardize' in res.fix.lower()

def test_normalization_unit_pixels_rgb_is_info_with_counts():
    "[0, 1] RGB pixels into a BatchNorm network: info, and the count of channels it names is not 0"
    g = torch.Generator().manual_seed(0)
    x, y = torch.rand(64, 3, 16, 16, generator=g), torch.randint(0, 4, (64,), generator=g)
    res = check_input_normalization(learner(tensor_dls(x, y, x[:16], y[:16]), bn_cnn(c_in=3)))
    assert res.verdict == 'info' and res.level == 'info' and '3 of 3 channels' in res.message and '0 of' not in res.message, res.message

def test_a_small_budget_is_only_a_safety_net():
    "A budget shorter than the reading takes no longer cuts the reading: the same items, the same verdict and numbers"
    learn = learner(xor_dls(n_valid=400), build_mlp())
    res, full = check_split_duplicates(learn, budget=0.0), check_split_duplicates(learn)
    assert res.verdict == full.verdict == 'passed' and res.measured == full.measured
    assert res.measured['n_train'] == 256 and res.measured['n_valid'] == 400 and res.measured['every_item']

def test_book_ngram_language_model_is_not_a_leak():
    "The fastai book's human numbers, 3 tokens -> the next, split chronologically: the inputs repeat by nature, with other next tokens"
    bench = _bench()
    learn = bench.book_ngrams(np.random.default_rng(0), 0)
    res = check_split_duplicates(learn)
    assert res.verdict == 'passed', res.message
    assert res.measured['valid_in_train'] > 0.3 * res.measured['n_valid'] and res.measured['train_conflicting'] > 0.3
    assert 'repeats by nature' in res.message and 'class_p' not in res.measured
    res = check_label_leak(learn)
    assert res.verdict == 'skipped' and 'repeat by nature' in res.message

def test_repeat_structure_tells_oversampling_from_ambiguity():
    assert repeat_structure(list('aabb'), list('aabb')) == dict(train_input_repeats=1.0, train_conflicting=0.0, train_pair_repeats=1.0)
    assert repeat_structure(list('aabc'), ['a1', 'a2', 'b1', 'c1'])['train_conflicting'] == 0.5

def test_text_lm_and_collab_learners():
    "fastai's language-model DataBlock (whitespace tokens), an LMDataLoader stream, and collab_learner: nothing to alarm about"
    from fastai.text.all import DataBlock, TextBlock, ColReader, RandomSplitter, BaseTokenizer, language_model_learner, AWD_LSTM, awd_lstm_lm_config
    bench = _bench()
    lines = [' '.join(bench.number_words(i)) for i in range(1, 400)]
    dblock = DataBlock(blocks=TextBlock.from_df('text', is_lm=True, tok=BaseTokenizer(), min_freq=1, n_workers=0),
                       get_x=ColReader('text'), splitter=RandomSplitter(0.2, seed=0))
    dls = dblock.dataloaders(pd.DataFrame({'text': lines}), bs=8, seq_len=8, num_workers=0)
    lm = language_model_learner(dls, AWD_LSTM, pretrained=False, config=awd_lstm_lm_config | dict(emb_sz=16, n_hid=32, n_layers=1))
    for learn in (lm, bench.token_stream(np.random.default_rng(0), 0), bench.collab(np.random.default_rng(0), 0)):
        for check in CHECKS:
            res = check(learn, **FAST.get(check.__name__, {}))
            assert res.verdict in ('passed', 'skipped', 'info'), f"{check.__name__}: {res.verdict} {res.message}"

def test_healthy_learners_small_sample():
    "A few of the benchmark's healthy Learners (one per family: unstratified RandomSplitter, unscaled tabular, [0, 1] images into resnet18, book n-grams, LM stream, collab): no alarm"
    bench = _bench()
    for i in range(len(bench.FAMILIES)):
        family, learn = bench.healthy(i)
        for check in CHECKS + [check_constant_features]:
            res = check(learn, **({} if check is check_constant_features else dict(budget=bench.BUDGETS[check.__name__])))
            assert res.verdict not in ('failed', 'warning', 'error'), f"#{i} {family}: {check.__name__} {res.verdict}: {res.message}"

@pytest.mark.parametrize('case', range(7), ids=lambda i: _bench().PLANTED[i][0] + ' / ' + _bench().PLANTED[i][2])
def test_planted_bugs_caught_at_their_level(case):
    bench = _bench()
    name, build, check_name, levels = bench.PLANTED[case]
    check = next(c for c in CHECKS + [check_constant_features] if c.__name__ == check_name)
    res = check(build(0))
    assert res.verdict in levels, f"{name}: {check_name} {res.verdict}: {res.message}"
    assert res.claim and res.message and res.fix

# ---- what a run of checks shares, and the label-leak test ending when it is decided

def test_shared_reads_are_what_a_fresh_read_gives():
    "Inside `sharing(learn)`, served_items and the checks' reads come from one read, equal to a fresh one; a moved RNG or a tensor changed in place is read again"
    learn = learner(xor_dls(n_valid=200), build_mlp())
    fresh = served_items(learn, 1)
    with sharing(learn) as shared:
        first = served_items(learn, 1)
        assert all(torch.equal(a, b) for a, b in zip(first[0] + first[1], fresh[0] + fresh[1]))
        assert len(shared.reads) == 1
        again = served_items(learn, 1, max_items=10) # a prefix of the read, from it
        assert torch.equal(again[0][0], fresh[0][0][:10]) and len(shared.reads) == 1
        kept = next(iter(shared.reads.values()))[0][0][0][0]
        kept.add_(1.0)                               # a check changed a tensor in place: the read is not served again
        assert shared.get(learn, 'items', learn.dls.valid) is None
        assert torch.equal(served_items(learn, 1)[0][0], fresh[0][0])
        torch.rand(1)                                # the RNG moved: a fresh read would differ, so nothing is served
        assert shared.get(learn, 'items', learn.dls.valid) is None
        assert shared.get(Learner(learn.dls, build_mlp(), loss_func=nn.CrossEntropyLoss()), 'items', learn.dls.valid) is None
    assert shared.learn is None and not shared.reads      # the run is over: nothing kept

def test_label_leak_decided_without_copies():
    "No validation item shares a key with a training item: no leak can show, so the run of checks passes it without training; with copies the test runs as before"
    good = learner(features_dls(leak=False, seed=0), mlp())
    res = check_label_leak(good, decide_without_copies=True)
    assert res.verdict == 'passed' and res.measured['valid_sharing_a_key'] == 0 and 'none was trained' in res.message
    assert 'p_value' not in res.measured
    bad = lambda: learner(features_dls(leak=True, seed=0), mlp())
    on, off = check_label_leak(bad(), decide_without_copies=True), check_label_leak(bad())
    assert on.verdict == off.verdict == 'warning' and on.measured == off.measured

def test_label_leak_stops_on_a_clear_pass():
    "Stochastic curtailment: after a repeat whose matches sit at chance the others could not reach the warning; a leak runs every repeat"
    assert remaining_power(0.3, 1, 3) < 1e-3 < remaining_power(0.4, 1, 3)
    assert remaining_power(1.0, 2, 3) < 1e-3 < remaining_power(2.0, 1, 3)
    assert remaining_power(3.2, 3, 3) == 1.0 and remaining_power(3.0, 3, 3) == 0.0
    good = lambda: learner(features_dls(leak=False, seed=1), mlp())
    early, full = check_label_leak(good(), seed=1), check_label_leak(good(), seed=1, futility=0)
    assert early.verdict == full.verdict == 'passed'
    assert early.measured['repeats'] == 1 and early.measured['repeats_planned'] == 3 and full.measured['repeats'] == 3
    assert early.measured['valid_accs'] == full.measured['valid_accs'][:1] and 'stopped after 1 of the 3' in early.message
    bad = check_label_leak(learner(features_dls(leak=True, seed=1), mlp()), seed=1)
    assert bad.verdict == 'warning' and bad.measured['repeats'] == 3 and 'repeats_planned' not in bad.measured

def test_label_leak_steps_follow_the_model_not_the_clock(monkeypatch):
    "The steps are the ones the work allowance pays for (FLOPs of a step, measured by torch): the same with or without a measured step time, and the same budget. The clock stands still, so that the safety net cannot fire however busy the machine (it did, beside background load: 'incomplete')"
    learn = Learner(leaky_xor(), build_mlp(width=256), loss_func=nn.CrossEntropyLoss())
    flops = step_flops(learn.model, learn.loss_func, torch.randn(64, 2), torch.zeros(64, dtype=torch.long))
    n_params = sum(p.numel() for p in learn.model.parameters())
    assert 6 * n_params * 64 <= flops < 20 * n_params * 64   # forward and backward of a dense net: about 6 x parameters x items
    learn = learner(features_dls(leak=True, seed=0), mlp())
    plain = check_label_leak(learn)
    monkeypatch.setattr('time.perf_counter', _Clock(0.0))
    with sharing(learn) as shared:
        shared.note(learn, 'step_seconds', 0.5)      # the old code skipped here, a step looking too slow for the budget
        res = check_label_leak(learn, budget=10)
    assert res.verdict == plain.verdict == 'warning' and res.measured == plain.measured

# ---- work, not wall-clock time, decides (issue 25, part 1)

class _Clock:
    "A `time.perf_counter` that moves `step` seconds at each call: a machine where time looks scarce"
    def __init__(self, step): self.now, self.step = 0.0, step
    def __call__(self):
        self.now += self.step
        return self.now

def _same(a, b):
    assert (a.verdict, a.message, a.fix, a.measured) == (b.verdict, b.message, b.fix, b.measured), (a, b)

@pytest.mark.parametrize('check', CHECKS, ids=lambda f: f.__name__)
@pytest.mark.parametrize('kind', ['leaky', 'healthy'])
def test_same_result_when_time_looks_scarce(check, kind, monkeypatch):
    "Each check twice on one Learner: on the real clock with no budget, and with a clock that jumps 0.01 s per call and a 0.05 s budget, as the runner passes a check when the time is nearly spent (the old checks cut their reads and steps to it): the same verdict, message, fix and numbers"
    learn = Learner(leaky_xor() if kind == 'leaky' else xor_dls(n_valid=200), build_mlp(width=64), loss_func=nn.CrossEntropyLoss())
    quiet = check(learn)
    monkeypatch.setattr('time.perf_counter', _Clock(0.01))
    _same(check(learn, budget=0.05), quiet)

@pytest.mark.parametrize('check', [check_label_leak, check_split_duplicates, check_input_normalization], ids=lambda f: f.__name__)
def test_the_safety_net_makes_a_check_incomplete(check, monkeypatch):
    "A clock that jumps an hour per call: the safety net fires, and the check says 'incomplete' and judges nothing; without a budget there is no net"
    learn = Learner(leaky_xor(), build_mlp(width=64), loss_func=nn.CrossEntropyLoss())
    quiet = check(learn)
    monkeypatch.setattr('time.perf_counter', _Clock(3600.0))
    res = check(learn, budget=10.0)
    assert res.verdict == 'incomplete' and res.level == '' and not res.is_finding, res
    assert f"safety net of {SAFETY_NET_MIN:.0f} s" in res.message and 'judges nothing' in res.message and 'budget' in res.fix
    _same(check(learn), quiet)

# ---- duplicates: the level follows the share copied; items compared before random augmentation (issue 25, part 4)

def copies_dls(n_copies, n_train=256, n_valid=128, seed=0):
    "Random 8-feature items; `n_copies` validation items are byte-identical copies (input and target) of training items"
    g = torch.Generator().manual_seed(seed)
    x, y = torch.randn(n_train + n_valid, 8, generator=g), torch.randint(0, 2, (n_train + n_valid,), generator=g)
    x[n_train:n_train + n_copies], y[n_train:n_train + n_copies] = x[:n_copies], y[:n_copies]
    return tensor_dls(x[:n_train], y[:n_train], x[n_train:], y[n_train:])

@pytest.mark.parametrize('n_copies, verdict, level', [(0, 'passed', ''), (1, 'info', 'info'), (6, 'warning', 'warning'),
                                                      (26, 'failed', 'error')])
def test_duplicates_level_follows_the_share(n_copies, verdict, level):
    "1 copy among 128 validation items is a note, 6 (4.7%) a warning, a fifth an error; the thresholds are in the result"
    res = check_split_duplicates(learner(copies_dls(n_copies), nn.Linear(8, 2)))
    assert (res.verdict, res.level) == (verdict, level), res.message
    assert res.measured['valid_in_train'] == n_copies
    assert '> 2% warning' in res.threshold and '> 10% failed' in res.threshold
    if n_copies: assert f"{n_copies} of 128 validation items" in res.message and res.claim == 'certain'

def flipped_image_dls(n_copies, n_train=48, n_valid=24, seed=0, on_batch=False):
    "A DataBlock of random 16 px RGB images whose training items are flipped at random (`FlipItem(p=0.5)` per item, or with `on_batch` fastai's `aug_transforms` on the batch); `n_copies` validation images copy training ones"
    from fastai.vision.all import DataBlock, ImageBlock, CategoryBlock, IndexSplitter, FlipItem, PILImage, aug_transforms
    rng = np.random.default_rng(seed)
    arrays = [rng.integers(0, 256, (16, 16, 3), dtype=np.uint8) for _ in range(n_train + n_valid)]
    labels = [int(i % 2) for i in range(n_train + n_valid)]
    for j in range(n_copies): arrays[n_train + j], labels[n_train + j] = arrays[j].copy(), labels[j]
    block = DataBlock(blocks=(ImageBlock, CategoryBlock), get_x=lambda i: PILImage.create(arrays[i]), get_y=lambda i: labels[i],
                      splitter=IndexSplitter(list(range(n_train, n_train + n_valid))),
                      **(dict(batch_tfms=aug_transforms(size=16)) if on_batch else dict(item_tfms=FlipItem(p=0.5))))
    return block.dataloaders(list(range(n_train + n_valid)), bs=16, num_workers=0)

@pytest.mark.parametrize('on_batch', [False, True], ids=['FlipItem', 'aug_transforms'])
def test_duplicates_found_before_random_augmentation(on_batch):
    "Training images flipped at random: every copy is still found (items read with the validation-time pipeline), and the loaders keep their split_idx"
    dls = flipped_image_dls(n_copies=6, on_batch=on_batch)
    learn = Learner(dls, small_cnn(n_out=2, c_in=3), loss_func=nn.CrossEntropyLoss())
    splits = (dls.train.dataset.split_idx, dls.valid.dataset.split_idx, dls.train.after_item.split_idx, dls.train.after_batch.split_idx)
    res = check_split_duplicates(learn)
    assert res.verdict == 'failed' and res.measured['valid_in_train'] == 6 and '6 of 24' in res.message, res.message
    assert (dls.train.dataset.split_idx, dls.valid.dataset.split_idx, dls.train.after_item.split_idx, dls.train.after_batch.split_idx) == splits
    healthy = check_split_duplicates(Learner(flipped_image_dls(n_copies=0), small_cnn(n_out=2, c_in=3), loss_func=nn.CrossEntropyLoss()))
    assert healthy.verdict == 'passed' and healthy.measured['valid_in_train'] == 0, healthy.message

# ---- input normalization: exact statistics over the whole training set; a fix that applies to the pipeline at hand

def test_normalization_whole_training_set_is_exact():
    "Features of mean 50 over the whole training set: judged on its exact statistics ('warning' with the numbers), never 'skipped: cannot bound them'"
    g = torch.Generator().manual_seed(0)
    x, y = torch.randn(200, 8, generator=g) + 50, torch.arange(200) % 2
    res = check_input_normalization(learner(tensor_dls(x[:160], y[:160], x[160:], y[160:]), nn.Linear(8, 2)))
    assert res.verdict == 'warning' and res.claim == 'certain' and res.measured['whole_training_set'], res.message
    assert 'mean 50.' in res.message and 'n = 160 training items (all of them)' in res.message
    standardized = (x - x[:160].mean(0)) / x[:160].std(0)
    res = check_input_normalization(learner(tensor_dls(standardized[:160], y[:160], standardized[160:], y[160:]), nn.Linear(8, 2)))
    assert res.verdict == 'passed', res.message

def _code(fix:str)->str:
    "The code of a fix: the text between its last pair of backticks"
    return fix.rsplit('`', 2)[1]

def _verdict_after(make_learner):
    return check_input_normalization(make_learner()).verdict

def test_normalization_fix_for_plain_tensors_from_dsets():
    "Raw 0-255 tensors through DataLoaders.from_dsets: fastai's Normalize would change nothing; the printed standardization, applied, silences the check"
    from torch.utils.data import TensorDataset
    from fastai.data.core import DataLoaders
    g = torch.Generator().manual_seed(0)
    x, y = torch.randint(0, 256, (200, 1, 8, 8), generator=g).float(), torch.arange(200) % 2
    model = lambda: nn.Sequential(nn.Flatten(), nn.Linear(64, 2))
    build = lambda xt, xv: Learner(DataLoaders.from_dsets(TensorDataset(xt, y[:160]), TensorDataset(xv, y[160:]), bs=32), model(),
                                   loss_func=nn.CrossEntropyLoss())
    res = check_input_normalization(build(x[:160], x[160:]))
    assert res.verdict == 'warning' and 'in the Dataset' in res.fix and 'Normalize.from_stats' not in res.fix, res.fix
    apply = lambda t: eval(_code(res.fix).removeprefix('x = '), dict(torch=torch, x=t))
    assert _verdict_after(lambda: build(apply(x[:160]), apply(x[160:]))) == 'passed'

def test_normalization_fix_for_many_plain_features():
    "More than 8 features: the fix standardizes with x_train's statistics; applied to both splits, the check passes"
    g = torch.Generator().manual_seed(0)
    x, y = torch.randn(200, 20, generator=g) * 3 + 100, torch.arange(200) % 2
    res = check_input_normalization(learner(tensor_dls(x[:160], y[:160], x[160:], y[160:]), nn.Linear(20, 2)))
    assert res.verdict == 'warning' and 'x_train' in res.fix, res.fix
    apply = lambda t: eval(_code(res.fix).removeprefix('x = '), dict(torch=torch, x=t, x_train=x[:160]))
    xs = apply(x)
    assert _verdict_after(lambda: learner(tensor_dls(xs[:160], y[:160], xs[160:], y[160:]), nn.Linear(20, 2))) == 'passed'

def test_normalization_fix_for_fastai_images():
    "TensorImages in a fastai pipeline: Normalize.from_stats as a batch transform; added to the built DataLoaders as printed, the check passes"
    from torch.utils.data import TensorDataset
    from fastai.data.core import DataLoaders
    from fastai.vision.all import TensorImage, Normalize
    g = torch.Generator().manual_seed(0)
    x, y = torch.randint(0, 256, (200, 3, 8, 8), generator=g).float(), torch.arange(200) % 2
    build = lambda: Learner(DataLoaders.from_dsets(TensorDataset(TensorImage(x[:160]), y[:160]), TensorDataset(TensorImage(x[160:]), y[160:]),
                                                   bs=32), nn.Sequential(nn.Flatten(), nn.Linear(192, 2)), loss_func=nn.CrossEntropyLoss())
    learn = build()
    res = check_input_normalization(learn)
    assert res.verdict == 'warning' and "dls.add_tfms([Normalize.from_stats(" in res.fix and 'batch_tfms=' in res.fix, res.fix
    exec(_code(res.fix), dict(dls=learn.dls, Normalize=Normalize))
    assert check_input_normalization(learn).verdict == 'passed'

def test_normalization_fix_for_tabular():
    "Unscaled continuous columns of a TabularDataLoaders built without procs: `procs=[Normalize]`, applied, silences the note"
    from fastai.tabular.all import Normalize
    rng = np.random.default_rng(0)
    df = pd.DataFrame({'a': rng.normal(size=200) * 30 + 20, 'b': rng.normal(size=200)})
    df['y'] = (df.a * df.b > 0).astype(int)
    build = lambda procs: tabular_learner(TabularDataLoaders.from_df(df, cont_names=['a', 'b'], y_names='y', y_block=None, bs=32,
                                                                     valid_idx=list(range(150, 200)), procs=procs), layers=[8])
    res = check_input_normalization(build([]))
    assert res.verdict == 'info' and 'procs=[Normalize]' in res.fix, res.fix
    assert _verdict_after(lambda: build([Normalize])) == 'passed'

def test_duplicates_through_tfmdlists_and_plain_torch_loaders():
    "A TfmdLists pipeline with random flips, and fastai's migration recipe (plain PyTorch DataLoaders in DataLoaders): copies found, the healthy splits pass, split_idx put back"
    from torch.utils.data import TensorDataset, DataLoader
    from fastai.data.core import DataLoaders, TfmdLists
    from fastai.vision.all import Transform, TensorImage, TensorCategory, FlipItem, Flip
    g = torch.Generator().manual_seed(0)
    imgs = [torch.randint(0, 256, (3, 16, 16), generator=g).float() for _ in range(72)]
    def tfmd_learner(n_copies):
        items = list(imgs)
        for j in range(n_copies): items[48 + 2 * j] = items[2 * j].clone()   # same label parity: a copy, input and target
        class Pair(Transform):
            def encodes(self, i): return (TensorImage(items[i]), TensorCategory(i % 2))
        tl = TfmdLists(list(range(72)), [Pair()], splits=[list(range(48)), list(range(48, 72))])
        dls = tl.dataloaders(bs=16, after_item=[FlipItem(p=0.5)], after_batch=[Flip(p=0.5)])
        return Learner(dls, small_cnn(n_out=2, c_in=3), loss_func=nn.CrossEntropyLoss())
    learn = tfmd_learner(3)
    res = check_split_duplicates(learn)
    assert res.verdict == 'failed' and res.measured['valid_in_train'] == 3, res.message
    assert (learn.dls.train.dataset.split_idx, learn.dls.train.dataset.tfms.split_idx) == (0, 0)
    assert check_split_duplicates(tfmd_learner(0)).verdict == 'passed'
    x, y = torch.randn(300, 8, generator=g), torch.randint(0, 2, (300,), generator=g)
    def torch_learner(xs):
        dls = DataLoaders(DataLoader(TensorDataset(xs[:240], y[:240]), batch_size=32, shuffle=True),
                          DataLoader(TensorDataset(xs[240:], y[240:]), batch_size=64))
        return Learner(dls, nn.Linear(8, 2), loss_func=nn.CrossEntropyLoss())
    assert check_split_duplicates(torch_learner(x)).verdict == 'passed'
    copied = x.clone()
    copied[240:270] = x[:30]
    y[240:270] = y[:30]
    res = check_split_duplicates(torch_learner(copied))
    assert res.verdict == 'failed' and res.measured['valid_in_train'] == 30, res.message


# ---- check 9: tabular features that carry nothing (issue 26, part 7)

def titanic_frame(n=400, seed=0):
    rng = np.random.default_rng(seed)
    sex = rng.choice(['male', 'female'], n)
    df = pd.DataFrame({'Sex': sex, 'Pclass': rng.choice([1, 2, 3], n), 'Age': np.where(rng.random(n) < 0.2, np.nan, rng.normal(30, 12, n)),
                       'Fare': rng.exponential(30, n), 'Title': np.where(sex == 'male', 'Mr', rng.choice(['Mrs', 'Miss'], n))})
    df['Survived'] = np.where((sex == 'female') | (rng.random(n) < 0.2), 'yes', 'no')
    return df

def titanic_tabular(df, cat_names=('Sex', 'Pclass', 'Title'), cont_names=('Age', 'Fare'), procs=None):
    from fastai.tabular.all import Categorify, FillMissing, Normalize, RandomSplitter
    splits = RandomSplitter(valid_pct=0.2, seed=0)(range(len(df)))
    dls = TabularDataLoaders.from_df(df, procs=procs or [Categorify, FillMissing, Normalize], cat_names=list(cat_names), cont_names=list(cont_names),
                                     y_names='Survived', valid_idx=list(splits[1]), bs=64, num_workers=0)
    return tabular_learner(dls, layers=[10, 10])

@pytest.mark.parametrize('case,verdict,evidence', [
    ('title_nan', 'warning', "`Title` (categorical): NaN on all 320 training rows and 80 of 80 validation rows: Categorify coded every row #na#"),
    ('age_nan_filled', 'failed', "`Age` (continuous): NaN on all 320 training rows and 80 of 80 validation rows, still NaN after the procs (FillMissing fills with the median"),
    ('age_nan_no_fill', 'failed', "`Age` (continuous): NaN on all 320 training rows"),
    ('deck_constant', 'info', "`Deck` (categorical): one value on all 320 training rows ('ABC') and 80 of 80 validation rows"),
    ('fare_constant', 'info', "`Fare` (continuous): one value on all 320 training rows (7.25)"),
    ('fare_constant_in_train', 'warning', "the other 3 validation rows reach the model at up to"),
])
def test_constant_features_are_named_with_their_evidence(case, verdict, evidence):
    from fastai.tabular.all import Categorify, FillMissing, Normalize
    df, kw = titanic_frame(), {}
    if case == 'title_nan': df['Title'] = None
    if case.startswith('age_nan'): df['Age'] = np.nan
    if case == 'age_nan_no_fill': kw['procs'] = [Categorify, Normalize]
    if case == 'deck_constant': df['Deck'], kw['cat_names'] = 'ABC', ('Sex', 'Pclass', 'Title', 'Deck')
    if case.startswith('fare_constant'): df['Fare'] = 7.25
    if case == 'fare_constant_in_train':
        from fastai.tabular.all import RandomSplitter
        df.loc[list(RandomSplitter(valid_pct=0.2, seed=0)(range(len(df)))[1][:3]), 'Fare'] = 80.0 # three rows of the validation split below
    learn = titanic_tabular(df, **kw)
    before = learner_state(learn)
    res = check_constant_features(learn)
    assert learner_state(learn) == before
    assert res.verdict == verdict and evidence in res.message, res.message
    assert res.claim.startswith('certain') and res.fix

def test_constant_features_healthy_tabular_collab_and_other_data():
    "Partly missing columns (Age_na varies), the bench's tabular Learners, collab_learner: passed; non-tabular data: skipped"
    assert check_constant_features(titanic_tabular(titanic_frame())).verdict == 'passed'
    bench = _bench()
    for seed in range(3):
        assert check_constant_features(bench.tabular(np.random.default_rng(seed), seed)).verdict == 'passed'
        assert check_constant_features(bench.collab(np.random.default_rng(seed), seed)).verdict == 'passed'
    res = check_constant_features(Learner(xor_dls(), build_mlp(), loss_func=nn.CrossEntropyLoss()))
    assert res.verdict == 'skipped' and 'No TabularPandas' in res.message

def test_constant_features_runs_under_sanity_check():
    "Registered: learn.sanity_check() runs it and accounts for it"
    import fastai_paranoid.sanity # noqa: F401 (patches Learner.sanity_check)
    df = titanic_frame()
    df['Title'] = None
    report = titanic_tabular(df).sanity_check(checks=['check_constant_features'], on_finding=None, progress=False)
    assert report['check_constant_features'].verdict == 'warning'
