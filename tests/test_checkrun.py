"""`fastai-paranoid check` with `check_guards()`: each bug family of issue 13, written as a user's script (tests/bug_scripts, no
fastai_paranoid inside), is reported; the healthy twins stay silent and train bitwise as they do without the check."""
import json, os, re
from pathlib import Path
import pytest
import torch
from fastai_paranoid.cli import collect_findings
from fastai_paranoid.runner import run_script
from fastai_paranoid.paranoid import paranoid, PARANOID_GUARDS
from fastai_paranoid.guards import NonFiniteWarning
from fastai_paranoid.checkrun import check_guards, SanityFinding

SCRIPTS = Path(__file__).parent / 'bug_scripts'
pytestmark = pytest.mark.usefixtures('one_thread')

def checked(script, *args, guards=None):
    "Run a script as `fastai-paranoid check` does (its two `with` lines), with the guards of `check_guards()`"
    guards = check_guards() if guards is None else guards
    with paranoid(guards=PARANOID_GUARDS + guards), collect_findings() as found:
        run_script(SCRIPTS / script, args)
    return found, guards

def plain(script, *args):
    "Run a script as `python script.py` would"
    run_script(SCRIPTS / script, args)

def messages(found, category=SanityFinding): return [f.message for f in found.all if issubclass(f.category, category)]

# script -> (the finding's kind, the levels it may have, a pattern of its evidence that names the family's bug)
BUGS = {
    'softmax_before_ce.py': ('check_loss_activation', ('error',), r"\(Softmax\)"),
    'unnormalized_pixels.py': ('check_input_normalization', ('error', 'warning'), r"channel 0 mean 7\d\.\d"),
    'valid_in_train.py': ('check_split_duplicates', ('error',), r"239 of 359 validation items"),
    'oversample_before_split.py': ('check_label_leak', ('error', 'warning'), r"scrambled"),
    'view_not_transpose.py': ('check_batch_independence', ('error',), r"depends on input"),
    'frozen_bn_drift.py': ('check_frozen', ('error',), r"model\.0\.1 \(BatchNorm2d\): running_mean moved"),
    'nan_epoch2.py': ('non_finite', ('error',), r"NaNGuard: the loss is non-finite at epoch 1, batch \d+ \(training\)"),
}

@pytest.mark.parametrize('script', BUGS)
def test_bug_family_is_reported(script):
    kind, levels, pattern = BUGS[script]
    found, _ = checked(script)
    assert found.problems > 0
    hits = [f for f in found.all if f.kind == kind]
    assert hits and all(f.level in levels for f in hits), found.report(script)
    assert any(re.search(pattern, f.evidence) for f in hits), found.report(script)
    assert all(f.found_at is not None and f.found_at.file.endswith(script) for f in hits), "each finding points at the script's line"
    if kind.startswith('check_'): assert all(f.fix and 'Evidence: ' in f.evidence for f in hits), "a sanity finding has its evidence and fix"

def final_weights(tmp_path, script, under_check):
    "Run the healthy twin with --save, under the check or plainly: (its trained weights, findings, guards)"
    out = tmp_path / f"{script}.{'checked' if under_check else 'plain'}.pth"
    found, guards = checked(script, '--healthy', '--save', str(out)) if under_check else (plain(script, '--healthy', '--save', str(out)), None)
    return torch.load(out), found, guards

# every healthy twin: fully silent under the check (issue 10's calibrated checks), and trained bit for bit as without it
HEALTHY = ['softmax_before_ce.py', 'unnormalized_pixels.py', 'view_not_transpose.py', 'kfold.py', 'oversample_before_split.py',
           'frozen_bn_drift.py', 'nan_epoch2.py']

@pytest.mark.parametrize('script', HEALTHY)
def test_healthy_twin_silent_and_bitwise_as_without_the_check(tmp_path, script):
    checked_weights, found, guards = final_weights(tmp_path, script, under_check=True)
    plain_weights, _, _ = final_weights(tmp_path, script, under_check=False)
    assert guards[-1].checked # the sanity checks did run before the fit...
    assert checked_weights.keys() == plain_weights.keys() # ... and the run trained to the same weights, bit for bit
    for k in checked_weights: assert torch.equal(checked_weights[k], plain_weights[k]), k
    assert found.problems == 0 and not found.leaks, found.report(script)
    if script == 'kfold.py': assert len(guards[-1].checked) == 1 # three folds of one dataset and model: checked once

def test_no_sanity_leaves_nan_guard_on():
    found, guards = checked('nan_epoch2.py', guards=check_guards(sanity=False))
    assert not messages(found, SanityFinding)
    assert messages(found, NonFiniteWarning) and found.problems == 1

@pytest.mark.parametrize('rebuild', [False, True])
def test_seeded_runs_on_shared_dataloaders(rebuild):
    "fastai issue #2832: an info note (not a problem) when the DataLoaders are shared, none when they are rebuilt after the seed"
    found, _ = checked('seeded_shared_loaders.py', *(['--rebuild'] if rebuild else []), guards=check_guards(sanity=False))
    notes = [f for f in found.leaks if f.kind == 'seeded_runs_share_dataloaders']
    assert found.problems == 0, found.report('seeded_shared_loaders.py')
    if rebuild: assert notes == []
    else:
        assert [f.severity for f in notes] == ['info']
        assert '#2832' in notes[0].evidence and 'dls.train.rng' in notes[0].evidence

def test_the_command_runs_the_sanity_checks_and_its_options_turn_them_off(capsys, tmp_path):
    "`fastai-paranoid check SCRIPT` (worker process, default guards) reports the softmax; `--no-sanity` leaves only the other guards"
    from fastai_paranoid.cli import main
    script = str(SCRIPTS / 'softmax_before_ce.py')
    out_json = tmp_path / 'out.json'
    assert main(['check', '--n-workers', '1', '--json', str(out_json), script]) == 1
    out = capsys.readouterr().out
    findings = json.loads(out_json.read_text())['files'][0]['findings']
    (f,) = [f for f in findings if f['kind'] == 'check_loss_activation']
    assert f['level'] == 'error' and f['claim'] == 'certain' and '(Softmax)' in f['evidence'], f
    lines = Path(script).read_text().splitlines()
    assert f['found_at']['file'] == script and 'fit' in lines[f['found_at']['line'] - 1], "the line that called fit"
    assert 'Learner(' in lines[f['built_at']['line'] - 1], "the line that built the Learner"
    assert f"{os.path.relpath(script)}:{f['found_at']['line']}  error  check_loss_activation" in out, out
    assert main(['check', '--no-sanity', '--n-workers', '1', script]) == 0 # the check's options come before the script
    out = capsys.readouterr().out
    said = ' '.join(out.split())
    assert said.startswith('fastai-paranoid: 1 file checked in') and said.endswith('softmax_before_ce.py clean (exit status 0)'), out # a clean file: one line
    assert main(['check', '--sanity-budget', '0', script]) == 2
    assert "'0' is not a positive number of seconds" in capsys.readouterr().err

# Every check accounted for (issue 25 part 2): per Learner in --json, counted in the terminal, a crash not called clean

ACCOUNTED = '''
from torch import nn
from fastai.learner import Learner
import fastai.callback.progress # learn.no_bar
from fastai_paranoid.fixtures import xor_dls, build_mlp
{crash}
dls = xor_dls()
for run in range(2): # the same model, data and loss: the second Learner is not checked again
    learn = Learner(dls, build_mlp(), loss_func=nn.CrossEntropyLoss())
    with learn.no_bar(), learn.no_logging(): learn.fit(1, 1e-2)
'''
CRASH = '''from fastai_paranoid.core import register_check
@register_check(999)
def check_that_crashes(learn):
    raise AttributeError("'DataLoader' object has no attribute 'new'")
'''

@pytest.mark.parametrize('crash', [False, True])
def test_every_check_is_accounted_for_and_a_crash_is_not_clean(crash, capsys, tmp_path):
    "One record per check on the first Learner, one 'not repeated' for the second; a crashed check: status 'checks crashed', exit 2, its traceback's end in the report"
    from fastai_paranoid.cli import main
    from fastai_paranoid.core import VERDICTS
    script = tmp_path / 'train.py'
    script.write_text(ACCOUNTED.format(crash=CRASH if crash else ''))
    out_json = tmp_path / 'out.json'
    assert main(['check', '--n-workers', '1', '--json', str(out_json), str(script)]) == (2 if crash else 0)
    out = capsys.readouterr().out
    (res,) = json.loads(out_json.read_text())['files']
    assert res['status'] == ('checks crashed' if crash else 'clean'), res
    checks = res['checks']
    first = [c for c in checks if c['verdict'] != 'not repeated']
    assert {c['learner'] for c in first} == {'Learner #1 (Sequential)'} and len({c['check'] for c in first}) == len(first) >= 10, checks
    assert all(c['verdict'] in VERDICTS and (c['verdict'] == 'passed') == (c['reason'] == '') for c in first), checks
    again = [c for c in checks if c['verdict'] == 'not repeated']
    assert [(c['learner'], c['same_as']) for c in again] == [('Learner #2 (Sequential)', 'Learner #1 (Sequential)')], again
    assert 'fit' in script.read_text().splitlines()[first[0]['found_at']['line'] - 1], "the line of the fit that ran the checks"
    crashed = [c for c in first if c['verdict'] == 'error']
    n_passed = sum(c['verdict'] == 'passed' for c in first)
    if crash: assert f"fastai-paranoid: sanity checks: 1 Learner, {len(first)} checks: {n_passed} passed" in ' '.join(out.split()), out
    else: assert ' '.join(out.split()).startswith('fastai-paranoid: 1 file checked in') and f"sanity checks: {n_passed} passed" in ' '.join(out.split()), out # one line
    from fastai_paranoid.runner import FileResult, print_results # --verbose: the report lists every Learner not checked again (and each check skipped)
    print_results([FileResult(**d) for d in json.loads(out_json.read_text())['files']], verbose=True)
    verbose = capsys.readouterr().out
    assert f"fastai-paranoid: sanity checks: 1 Learner, {len(first)} checks: {n_passed} passed" in ' '.join(verbose.split()), verbose
    assert 'not checked again: Learner #2 (Sequential)' in verbose, verbose
    if crash:
        assert [c['check'] for c in crashed] == ['check_that_crashes'], crashed
        assert 'raise AttributeError' in crashed[0]['traceback'] and "no attribute 'new'" in crashed[0]['reason'], crashed
        assert '1 crashed' in out and 'crashed: check_that_crashes on Learner #1 (Sequential)' in out, out
        assert "    | AttributeError: 'DataLoader' object has no attribute 'new'" in out, out
        assert 'checks crashed' in out and '(exit status 2)' in ' '.join(out.split()), out # the line wraps where the tmp path's length puts it
    else: assert crashed == [] and 'crashed' not in out and '(exit status 0)' in out, out
    assert 'fastai-paranoid: 1 file checked in' in out, "one file: no plural"

def test_own_pytorch_scheduler_is_clean():
    "Issue 39: a healthy Learner driven by the user's own PyTorch scheduler (built in a callback's before_fit, unreadable before the fit) gets no problem: the checks that train at the Learner's rate say, as info, that the callback sets the real rate and how to give it"
    found, guards = checked('own_scheduler.py')
    assert guards[-1].checked and found.problems == 0, found.report('own_scheduler.py')
    rated = [f for f in found.all if f.kind in ('check_overfit_one_batch', 'check_lr')]
    assert rated and all(f.level == 'info' and 'rate_set_by=OneCycle' in f.evidence and 'learn.sanity_check(lr=...)' in f.fix for f in rated), found.report('own_scheduler.py')
