"`fastai-paranoid check --smoke`: every fit cut to a few batches of one epoch (`smoke.SmokeFit`); a planted bug is still found, a healthy script stays clean, an assert that only the cut fit fails is 'cut short' (not a failure; a notebook goes on), a real error stays 'failed'; the report and the JSON say it was a smoke run."
import contextlib, io, json, os, warnings
from unittest import mock
from pathlib import Path
import pytest
from cli_helpers import notebook, command

PRELUDE = """
from torch import nn
from fastai.learner import Learner
from fastai.metrics import accuracy
import fastai.callback.progress, fastai.callback.schedule # Learner.no_bar, fit_one_cycle
from fastai_paranoid.fixtures import xor_dls, build_mlp
def fit(learn, epochs=20):
    with learn.no_bar(), learn.no_logging(): learn.fit_one_cycle(epochs, 1e-2)
"""
HEALTHY = PRELUDE + """
for run in range(2): fit(Learner(xor_dls(seed=run), build_mlp(), loss_func=nn.CrossEntropyLoss()))
"""
LEAKY = PRELUDE + """
dls, model = xor_dls(), build_mlp()
for run in range(2): fit(Learner(dls, model, loss_func=nn.CrossEntropyLoss()))   # seed 000's loop: one model, two runs
"""
ACCURACY = PRELUDE + """
learn = Learner(xor_dls(), build_mlp(), loss_func=nn.CrossEntropyLoss(), metrics=accuracy)
fit(learn)
acc = learn.validate()[1]
assert acc > 0.9, f"accuracy {acc:.3f} after 20 epochs"
"""
TYPE_ERROR = PRELUDE + """
learn = Learner(xor_dls(), build_mlp(), loss_func=nn.CrossEntropyLoss(), metrics=accuracy)
fit(learn)
learn.validate()[1] > '0.9'  # a real bug: a TypeError, not an assert
"""
NOTEBOOK_CELLS = [PRELUDE,
    "learn = Learner(xor_dls(), build_mlp(), loss_func=nn.CrossEntropyLoss(), metrics=accuracy)\nfit(learn)",
    "from fastcore.test import test_close\ntest_close(learn.validate()[1], 1.0, eps=0.1) # the trained model's accuracy",
    "model = learn.model\nfit(Learner(xor_dls(seed=1), model, loss_func=nn.CrossEntropyLoss())) # the trained model handed to a new run",
]

@pytest.fixture(scope='module')
def smoke_run(tmp_path_factory):
    "One `check --smoke --json` over a healthy, a leaky, an accuracy-assert and a broken script, and a notebook whose assert cell comes before a leak"
    tmp = tmp_path_factory.mktemp('smoke')
    for name, code in [('healthy.py', HEALTHY), ('leaky.py', LEAKY), ('accuracy.py', ACCURACY), ('type_error.py', TYPE_ERROR)]:
        (tmp/name).write_text(code)
    notebook(tmp/'train.ipynb', *NOTEBOOK_CELLS)
    names = ['healthy.py', 'leaky.py', 'accuracy.py', 'type_error.py', 'train.ipynb']
    with mock.patch.dict(os.environ, {'COLUMNS': '100'}): # a module fixture: conftest's COLUMNS=100 is not set yet (pytest-xdist's workers say 80)
        proc = command('check', '--smoke', *names, '--n-workers', '2', '--json', 'out.json', cwd=tmp, timeout=1500)
    saved = json.loads((tmp/'out.json').read_text())
    return proc, saved, {Path(f['path']).name: f for f in saved['files']}

def test_planted_bug_is_still_found_and_healthy_script_is_clean(smoke_run):
    proc, saved, files = smoke_run
    test = files['leaky.py']
    assert test['status'] == 'findings', test
    assert [f['kind'] for f in test['findings']] == ['reused_model']
    assert files['healthy.py']['status'] == 'clean', files['healthy.py']['report']
    assert files['healthy.py']['smoke']['fits_cut'] == 2 and files['healthy.py']['smoke']['train_batches_run'] == 6

def test_the_sanity_checks_ran_in_full_under_smoke(smoke_run):
    "Every registered check has its verdict for the healthy script's Learner, as in a full run (the copies' fits are not cut)"
    _, _, files = smoke_run
    checks = files['healthy.py']['checks']
    verdicts = {c['check']: c['verdict'] for c in checks if c['verdict'] != 'not repeated'}
    assert len(verdicts) >= 15 and 'error' not in verdicts.values(), verdicts
    assert verdicts['check_overfit_one_batch'] == 'passed', verdicts

def test_an_accuracy_assert_after_a_cut_fit_is_cut_short_not_failed(smoke_run):
    proc, _, files = smoke_run
    res = files['accuracy.py']
    assert res['status'] == 'cut short' and res['error'] == '', res
    [entry] = res['smoke']['cut_short']
    assert entry['line'] == 13 and entry['cell'] is None and entry['error'].startswith('AssertionError: accuracy'), entry
    assert 'cut short: accuracy.py:13: AssertionError: accuracy' in proc.stdout, proc.stdout

def test_a_real_error_stays_failed(smoke_run):
    proc, saved, files = smoke_run
    res = files['type_error.py']
    assert res['status'] == 'failed' and 'TypeError' in res['error'] and res['smoke']['cut_short'] == [], res
    assert proc.returncode == 2 and saved['exit_status'] == 2

def test_a_notebook_goes_on_after_a_cell_cut_short_and_its_later_leak_is_found(smoke_run):
    _, _, files = smoke_run
    res = files['train.ipynb']
    assert res['status'] == 'cut short' and res['problems'] >= 1, res
    assert 'reused_model' in [f['kind'] for f in res['findings']] # cell 4, after the cell cut short
    [entry] = res['smoke']['cut_short']
    assert (entry['cell'], entry['line']) == (3, 2) and 'train.ipynb cell 3:2' in entry['where'], entry

def test_the_report_and_the_json_say_it_was_a_smoke_run(smoke_run):
    proc, saved, files = smoke_run
    smoke = saved['smoke']
    assert smoke['batches'] == 3 and smoke['epochs'] == 1 and smoke['cut_short'] == 2
    assert smoke['fits'] == smoke['fits_cut'] == 8 and smoke['train_batches_run'] == 24, smoke
    assert any('NaN' in s for s in smoke['cannot_see']) and any('DataOrderGuard' in s for s in smoke['cannot_see'])
    out = proc.stdout
    assert out.index('smoke run: every fit was cut to one epoch of 3 training and 3 validation batches') < out.index('fastai-paranoid check\n')
    assert 'cannot see: NaNGuard' in out
    last = out[out.rindex('fastai-paranoid: 5 files checked'):].rstrip().replace('\n    ', ' ') # the summary stays the last line (wrapped)
    assert '\n' not in last and '2 cut short, 1 failed (exit status 2)' in last, out[-300:]

def test_only_cut_short_exits_0_and_github_format_gives_notices(tmp_path, capsys):
    "In process: a file cut short is not a failure (exit 0 without findings); --format github says the smoke run and the assert as notices"
    from fastai_paranoid.runner import check_paths
    (tmp_path/'accuracy.py').write_text(ACCURACY)
    status = check_paths([tmp_path/'accuracy.py'], smoke=True, sanity=False, format='github', json_path=tmp_path/'out.json')
    out = capsys.readouterr().out
    assert status == 0, out
    assert '::notice title=fastai-paranoid smoke run::smoke run: every fit was cut' in out
    assert f"::notice file={tmp_path/'accuracy.py'},line=13,title=cut short" in out or '::notice file=' in out and 'line=13,title=cut short' in out, out
    assert json.loads((tmp_path/'out.json').read_text())['exit_status'] == 0

def test_the_same_script_without_smoke_has_no_smoke_field(tmp_path, capsys):
    from fastai_paranoid.runner import check_paths
    (tmp_path/'healthy.py').write_text(PRELUDE + "fit(Learner(xor_dls(), build_mlp(), loss_func=nn.CrossEntropyLoss()), epochs=1)")
    assert check_paths([tmp_path/'healthy.py'], sanity=False, json_path=tmp_path/'out.json') == 0
    saved = json.loads((tmp_path/'out.json').read_text())
    assert saved['smoke'] is None and saved['files'][0]['smoke'] == {}
    assert 'smoke run' not in capsys.readouterr().out

@pytest.mark.parametrize('smoke', [-1, 2.5, 'yes'])
def test_a_bad_smoke_value_is_refused_before_anything_runs(smoke, tmp_path, capsys):
    from fastai_paranoid.runner import check_paths
    (tmp_path/'x.py').write_text('raise SystemExit(3)')
    assert check_paths([tmp_path/'x.py'], smoke=smoke) == 2
    assert 'smoke=' in capsys.readouterr().err

def test_sanity_check_copies_are_not_cut():
    "In process, under the check's guards and `SmokeFit`: the only fit the smoke log sees is the user's (the sanity checks' copies train in full, unseen)"
    from torch import nn
    from fastai.learner import Learner
    import fastai.callback.progress # noqa: F401
    from fastai_paranoid.paranoid import paranoid, PARANOID_GUARDS
    from fastai_paranoid.checkrun import check_guards
    from fastai_paranoid.collect import collect_findings
    from fastai_paranoid.smoke import smoke_guards, smoke_log
    from fastai_paranoid.fixtures import xor_dls, build_mlp
    smoke_log.reset()
    with paranoid(guards=PARANOID_GUARDS + check_guards() + smoke_guards(True)), collect_findings() as found, warnings.catch_warnings():
        warnings.simplefilter('ignore')
        learn = Learner(xor_dls(), build_mlp(), loss_func=nn.CrossEntropyLoss())
        with learn.no_bar(), learn.no_logging(): learn.fit(4, 1e-2)
    assert [f['kind'] for f in smoke_log.fits] == ['fit'] and smoke_log.fits[0]['train_run'] == 3, smoke_log.fits
    assert len(found.checks) >= 15 and found.problems == 0, found.report('test')
    smoke_log.reset()
