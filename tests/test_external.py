"""A small CI sample of tests/external/ (code written elsewhere, run offline on synthetic data in the datasets' real layouts):
`fastai-paranoid check` must exit 0 on healthy scripts from the fastai book and fastai's own test fixture, and exit 1 on
torchtest2's planted bugs that the checks catch, naming the check (each bug's fixed twin is among the healthy scripts). The full corpus, with the false-alarm table, is
`python benchmarks/bench_external.py`.

Before the calibration fixes of issue 16 (benchmarks/results/external_before.txt, measured 2026-12-01 on branch calib):
- tt2_fixed_08_overconfident_init.py: FAILS today (exit 1): check_split_duplicates warns "class shares differ by 14.1%
  (total variation) between the splits" on an unstratified random split of a 10-class problem (no test, no alpha);
- fastbook_04_mnist_basics_simple_net.py: FAILS today (exit 1): check_overfit_one_batch says the book's mnist_loss run
  "stalled" (0.478 -> 0.251 in 100 steps at lr=0.1; the loss is bounded in [0, 1] and saturates), and
  check_input_normalization warns on the book's [0, 1] pixels;
- fastai_test_utils_synth_learner.py: passes today (exit 0).
They assert what SHOULD hold: exit 0 on healthy code. After: the mnist_loss stall is an info note (4 of 16 items stuck at
loss ~1 with a loss gradient ~1e-3 on the output: saturation, not a model that cannot fit), and the [0, 1] pixels are info."""
import pytest
from pathlib import Path
from cli_helpers import command

EXTERNAL = Path(__file__).resolve().parent / 'external'

HEALTHY = ['tt2_fixed_08_overconfident_init.py',   # torchtest2 gallery bug 8's fixed twin: a default-initialised MLP
           # the book's mnist_loss (sigmoid inside the loss, targets (n, 1)), SGD: the overfit check now sees that the items left
           # above its target get no gradient from the saturated loss (an info note, not a failure)
           'fastbook_04_mnist_basics_simple_net.py',
           'fastai_test_utils_synth_learner.py',   # fastai's own test fixture: a*x+b on 10 points
           'user_accuracy_multi_sparse_fixed.py',  # issue 17's sparse multi-label tags judged with F1ScoreMulti
           'tt2_fixed_12_wrong_backward.py',       # bug 12's fixed twin: a custom autograd.Function with the right backward
           # PyTorch's/Ignite's MNIST net (F.dropout in forward, NLLLoss, SGD 0.01 momentum 0.5): it memorizes the batch with dropout
           # off; with its functional dropout on, the overfit check called it an error (issue 25)
           'pytorch_mnist_dropout.py',
           # the book's chapter 13: F.cross_entropy on fastai's TensorImageBW/TensorCategory batches, which CastToTensor makes plain
           # tensors in fit: three checks crashed on them (exit 2) until the checks' batches were cast alike
           'fastbook_13_convolutions.py']

# --- Every script of this file is checked in ONE `fastai-paranoid check --json` run (2 workers; the `corpus_checked` fixture
# below): one start-up of the command and its fork server instead of sixteen. A file's status in the JSON is the exit status
# `fastai-paranoid check FILE` gives alone ('clean': 0, 'findings': 1, 'checks crashed'/'failed': 2), and its findings are
# the ones that run prints for it.

@pytest.mark.parametrize('script', HEALTHY)
def test_healthy_external_script_exits_0(corpus_checked, script):
    stdout, records = corpus_checked
    rec = records[script]
    assert rec['status'] == 'clean', (f"{script} is healthy, yet `fastai-paranoid check` says {rec['status']} (exit "
                                      f"{STATUS_EXIT.get(rec['status'])}): {rec['findings']}\n{stdout[-3000:]}")

CAUGHT = [('tt2_bug_08_overconfident_init.py', 'check_loss_at_init'),  # the last layer initialised with std 1 (loss 3.5 x ln(10))
          ('tt2_bug_06_frozen_still_trained.py', 'empty_freeze'),      # learn.freeze() on a Learner without a splitter: EmptyFreezeGuard
          ('tt2_bug_12_wrong_backward.py', 'check_gradient_correctness')] # Square's backward returns x * grad, not 2 * x * grad

@pytest.mark.parametrize('script,check', CAUGHT)
def test_planted_bug_is_caught(corpus_checked, script, check):
    "torchtest2 gallery bugs: exit 1 (status 'findings'), and the check that caught it is named among the errors and warnings"
    stdout, records = corpus_checked
    rec = records[script]
    named = [f.get('check') or f.get('kind') for f in rec['findings'] if f.get('level') != 'info']
    assert rec['status'] == 'findings' and check in named, f"{script}: expected a {check} finding, got {rec['status']}: {named}\n{stdout[-3000:]}"
    assert f"{script}:" in stdout and check in stdout

def test_a_backbone_frozen_at_its_random_initialization_is_the_one_finding(corpus_checked):
    """bug 6's fixed twin: a splitter, so learn.freeze() freezes the backbone (no empty_freeze), but the backbone was never
    pretrained: FrozenInitGuard's frozen_at_init warning, true of the script, is its one finding (bench_external: BY_DESIGN)"""
    stdout, records = corpus_checked
    rec = records['tt2_fixed_06_frozen_still_trained.py']
    kinds = [(f.get('check') or f.get('kind'), f.get('level')) for f in rec['findings']]
    assert kinds == [('frozen_at_init', 'warning')], (kinds, stdout[-3000:])
    assert 'model.0.0 (Linear) [64, 32]' in str(rec['findings'][0]), rec['findings']

def test_accuracy_multi_on_sparse_labels_is_caught(corpus_checked):
    "issue 17: accuracy_multi on 10 tags with 7% present scores 0.94 for 'no tag at all' -- check_metric_baseline notes it (info: advice, as on the fastai book's multi-label chapter; its twin, above, is silent)"
    stdout, records = corpus_checked
    rec = records['user_accuracy_multi_sparse.py']
    assert rec['status'] == 'clean', rec['findings'] # an info note: exit 0
    notes = [f for f in rec['findings'] if (f.get('check') or f.get('kind')) == 'check_metric_baseline']
    assert notes and notes[0].get('level') == 'info' and 'every label negative' in str(notes[0]), rec['findings']

# --- Issue 17's catch table: fastai users' reported silent bugs (tests/external/user_bug_NN_*.py), each with its healthy
# fixed twin (user_fixed_NN_*.py). Three of the fastest pairs, checked in one `fastai-paranoid check` run (2 workers: one
# start-up instead of six); a file's status in the JSON is the exit status `fastai-paranoid check FILE` gives alone
# ('findings': 1, 'clean': 0). The full table is `python benchmarks/bench_external.py --files 'tests/external/user_*.py'
# --workers 1` (benchmarks/results/external_user_cases.txt).
import json

USER_CASES = [('user_bug_04_tracker_mae.py', 'check_tracker_monitor'),      # SaveModelCallback(monitor='mae') without comp
              ('user_bug_07_ignored_columns.py', 'check_input_dependency'), # forward keeps x[:, :5] of 8 columns
              ('user_bug_06_numpy_in_forward.py', 'check_gradient_flow')]   # a NumPy round trip in forward cuts the graph

def _twin(bug): return bug.replace('user_bug_', 'user_fixed_')


@pytest.mark.parametrize('bug,check', USER_CASES, ids=[b.removeprefix('user_bug_').removesuffix('.py') for b, _ in USER_CASES])
def test_user_reported_bug_is_caught_and_its_twin_is_silent(corpus_checked, bug, check):
    stdout, records = corpus_checked
    rec, twin = records[bug], records[_twin(bug)]
    named = [f.get('check') or f.get('kind') for f in rec['findings'] if f.get('level') != 'info']
    assert rec['status'] == 'findings' and check in named, f"{bug}: expected a {check} finding (exit 1), got {rec['status']}: {named}\n{stdout[-3000:]}"
    assert f"{bug}:" in stdout and check in stdout
    assert twin['status'] == 'clean', f"{_twin(bug)} is healthy, yet it has findings: {twin['findings']}\n{stdout[-3000:]}"

# --- Issue 26, parts 1-2: the real loop's invariants (13_loopguards), on the three users' bugs written as they reported them,
# each with its fixed twin, and fastai's healthy neighbours (GradientAccumulation; OptimWrapper with fit and fit_one_cycle,
# ReduceLROnPlateau on fastai's Adam), in one `fastai-paranoid check --json` run (about 55 s with 2 workers).
LOOP_CASES = [('user_bug_26_cancel_batch_skips_zero_grad.py', 'stale_gradients'),  # CancelBatchException in before_step skips zero_grad
              ('user_bug_26_plateau_optimwrapper.py', 'lost_hyperparameter'),       # ReduceLROnPlateau's lr never reaches OptimWrapper's SGD
              ('user_bug_26_layers_in_plain_list.py', 'unregistered_tensors')]      # hidden layers in a plain list: never stepped
LOOP_NEIGHBOURS = ['fastai_loop_gradient_accumulation.py', 'fastai_loop_optimwrapper.py']


# --- Issue 26, parts 3-6 (14_fitchecks): four silent bugs users reported, each with its fixed twin, checked in one run. The
# guards watch the real fit (or wrap `load_model`), so the finding names the cause: the loss's shapes, a frozen head, a
# strict=False load that loaded nothing, a training loader that gives the labels class by class.
FIT_CASES = [('user_bug_31_mseloss_broadcast.py', 'loss_shape_broadcast'),        # nn.MSELoss on [bs, 1] outputs and [bs] targets
             ('user_bug_32_only_batchnorm_trains.py', 'only_norm_trains'),        # everything frozen but BatchNorm, the new head too
             ('user_bug_33_ddp_prefix_strict_false.py', 'load_strict_false'),     # a `module.`-prefixed checkpoint, strict=False
             ('user_bug_34_unshuffled_class_sorted.py', 'unshuffled_training_data')] # a plain DataLoader without shuffle=True, data by class


@pytest.mark.parametrize('bug,kind', LOOP_CASES, ids=[b.removeprefix('user_bug_26_').removesuffix('.py') for b, _ in LOOP_CASES])
def test_loop_bug_is_caught_and_its_twin_is_silent(corpus_checked, bug, kind):
    stdout, records = corpus_checked
    rec, twin = records[bug], records[_twin(bug)]
    errors = [f.get('kind') for f in rec['findings'] if f.get('level') == 'error']
    assert rec['status'] == 'findings' and kind in errors, f"{bug}: expected a {kind} error, got {rec['status']}: {rec['findings']}\n{stdout[-3000:]}"
    assert twin['status'] == 'clean', f"{_twin(bug)} is healthy, yet it has findings: {twin['findings']}\n{stdout[-3000:]}"

@pytest.mark.parametrize('script', LOOP_NEIGHBOURS)
def test_loop_healthy_neighbour_is_silent(corpus_checked, script):
    stdout, records = corpus_checked
    assert records[script]['status'] == 'clean' and records[script]['findings'] == [], f"{script}: {records[script]['findings']}\n{stdout[-3000:]}"

@pytest.mark.parametrize('bug,kind', FIT_CASES, ids=[b.removeprefix('user_bug_').removesuffix('.py') for b, _ in FIT_CASES])
def test_fit_bug_is_caught_and_its_twin_is_silent(corpus_checked, bug, kind):
    stdout, records = corpus_checked
    rec, twin = records[bug], records[_twin(bug)]
    named = {f.get('kind'): f.get('level') for f in rec['findings']}
    assert rec['status'] == 'findings' and named.get(kind) in ('error', 'warning'), f"{bug}: expected a {kind} finding, got {named}\n{stdout[-3000:]}"
    assert twin['status'] == 'clean', f"{_twin(bug)} is healthy, yet it has findings: {twin['findings']}\n{stdout[-3000:]}"

def test_overfit_failure_names_the_broadcasting_loss(corpus_checked):
    "Issue 26, part 3: the overfit test fails on the broadcasting loss, and its finding names the shapes and the fix (not activations and learning rates)"
    stdout, records = corpus_checked
    overfit = [f for f in records['user_bug_31_mseloss_broadcast.py']['findings'] if f.get('kind') == 'check_overfit_one_batch']
    assert overfit, f"no overfit finding on user_bug_31: {records['user_bug_31_mseloss_broadcast.py']['findings']}\n{stdout[-3000:]}"
    assert 'outputs of shape [16, 1] with targets of shape [16]' in overfit[0]['evidence'] and 'MSELossFlat()' in overfit[0]['fix'], overfit[0]

# --- Issue 26, part 7: silent gaps of what exists. The split fingerprint keys bare-index items (range(n) with get_x/get_y
# reading arrays) by the rows they read, so a resume on another split is counted; a tabular feature NaN on every row (the
# course's Titanic Title, built by a split that never matches) is named. Each with its fixed twin, and a healthy tabular
# neighbour (fastai's TabularPandas tutorial: no feature constant), in one `fastai-paranoid check --json` run.
GAP_CASES = [('user_bug_35_resume_index_items.py', 'split_overlap', 'error'),           # unseeded RandomSplitter over range(n), save/load
             ('user_bug_36_title_all_nan.py', 'check_constant_features', 'warning')]    # Title NaN on all 891 rows
GAP_NEIGHBOURS = ['fastai_tutorial_tabular.py']


@pytest.mark.parametrize('bug,name,level', GAP_CASES, ids=[b.removeprefix('user_bug_').removesuffix('.py') for b, _, _ in GAP_CASES])
def test_gap_bug_is_caught_and_its_twin_is_silent(corpus_checked, bug, name, level):
    stdout, records = corpus_checked
    rec, twin = records[bug], records[_twin(bug)]
    named = {f.get('check') or f.get('kind'): f.get('level') for f in rec['findings']}
    assert rec['status'] == 'findings' and named.get(name) == level, f"{bug}: expected a {name} {level}, got {named}\n{stdout[-3000:]}"
    assert twin['status'] == 'clean', f"{_twin(bug)} is healthy, yet it has findings: {twin['findings']}\n{stdout[-3000:]}"

@pytest.mark.parametrize('script', GAP_NEIGHBOURS)
def test_gap_healthy_neighbour_is_silent(corpus_checked, script):
    stdout, records = corpus_checked
    assert records[script]['status'] == 'clean', f"{script}: {records[script]['findings']}\n{stdout[-3000:]}"

# --- The one run behind every test above
STATUS_EXIT = {'clean': 0, 'findings': 1, 'checks crashed': 2, 'failed': 2, 'not run': 2}

def _corpus() -> list:
    "Every script the tests above read, each once"
    names = HEALTHY + [s for s, _ in CAUGHT] + ['user_accuracy_multi_sparse.py', 'tt2_fixed_06_frozen_still_trained.py']
    for bug, *_ in USER_CASES + LOOP_CASES + FIT_CASES + GAP_CASES: names += [bug, _twin(bug)]
    names += LOOP_NEIGHBOURS + GAP_NEIGHBOURS
    return list(dict.fromkeys(names))

@pytest.fixture(scope='module')
def corpus_checked(tmp_path_factory):
    "One `fastai-paranoid check --json` over every script of this file, planted bugs among them (exit 1): (its output, {file name: JSON record})"
    out = tmp_path_factory.mktemp('external') / 'check.json'
    res = command('check', '--json', str(out), '--n-workers', '2', *[str(EXTERNAL / f) for f in _corpus()], cwd=EXTERNAL, timeout=2400)
    assert out.exists(), f"no JSON written (exit {res.returncode}):\n{res.stdout[-3000:]}\n{res.stderr[-3000:]}"
    assert res.returncode == 1, res.stdout[-3000:] # planted bugs among the files, none failed or crashed
    return res.stdout, {Path(r['path']).name: r for r in json.loads(out.read_text())['files']}
