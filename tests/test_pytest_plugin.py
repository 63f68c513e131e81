"`pytest --paranoid`: a leaky test fails with its finding, a healthy suite stays green, `--paranoid-warn` reports at the end (0.2's `--paranoid=warn` is a usage error now), the checked tests cannot switch the guards off, and without the flag the plugin changes nothing."
import subprocess, sys, textwrap, tomllib
from pathlib import Path
import pytest
from fastai.callback.core import defaults
from fastai_paranoid.paranoid import is_paranoid, ParanoidInstaller, _locks

pytest_plugins = ['pytester']

HEADER = '''
import warnings
import pytest
from torch import nn
from fastai.basics import Learner
import fastai.callback.progress, fastai.callback.schedule # learn.no_bar, learn.lr_find
from fastai_paranoid.fixtures import xor_dls, build_mlp

def fit(model, epochs=1):
    learn = Learner(xor_dls(), model, loss_func=nn.CrossEntropyLoss())
    with learn.no_bar(), learn.no_logging(): learn.fit(epochs, 1e-2)
    return learn
'''

LEAKY = HEADER + '''
shared_model = build_mlp()

def test_first_run():  assert fit(shared_model).recorder.losses[-1] > 0
def test_second_run(): assert fit(shared_model).recorder.losses[-1] > 0
def test_own_model():  assert fit(build_mlp()).recorder.losses[-1] > 0
'''

HEALTHY = HEADER + '''
@pytest.fixture
def learn(): return fit(build_mlp(), epochs=0)

def test_fit_twice_continues_on_purpose(learn):
    learn.fit(1, 1e-2); learn.fit(1, 1e-2)
    assert len(learn.recorder.values) == 1

def test_lr_find_then_fit():
    learn = Learner(xor_dls(), build_mlp(), loss_func=nn.CrossEntropyLoss())
    with learn.no_bar(), learn.no_logging():
        learn.lr_find(num_it=10, show_plot=False); learn.fit(1, 1e-2)

def test_fresh_model_each_time():
    for _ in range(2): fit(build_mlp())

def test_a_failing_test_still_fails():
    assert fit(build_mlp()).recorder.losses[-1] < 0
'''

@pytest.fixture
def run(pytester, one_thread):
    "Run pytest in this process on the given test files, with the plugin loaded"
    def _run(*args, **files):
        pytester.makepyfile(**{name: textwrap.dedent(src) for name, src in files.items()})
        result = pytester.runpytest_inprocess('-p', 'fastai_paranoid.pytest_plugin', '-p', 'no:cacheprovider',
                                              '-W', 'ignore::DeprecationWarning', '-W', 'ignore::FutureWarning', *args)
        return result, result.stdout.str()
    yield _run
    assert not is_paranoid() and ParanoidInstaller not in defaults.callbacks and _locks == [], "the session put everything back"

def test_leaky_test_fails_with_the_finding(run):
    result, out = run('--paranoid', test_train=LEAKY)
    result.assert_outcomes(passed=2, failed=1)
    failure = out.split('FAILURES')[1].split('short test summary')[0]
    assert '_ test_second_run _' in failure and 'test_first_run' not in failure and 'test_own_model' not in failure
    assert 'fastai-paranoid: 1 problem found during test_train.py::test_second_run' in failure
    assert '[reused_model] Learner #' in failure and 'Fix: build a new model per run' in failure
    assert 'fastai-paranoid: 1 problem in 1 of 3 tests; tests failed for them' in out

@pytest.mark.parametrize('flag', ['--paranoid-warn'])
def test_warn_reports_at_the_end_and_fails_nothing(run, flag):
    result, out = run(flag, 'test_train.py', test_train=LEAKY)
    result.assert_outcomes(passed=3)
    summary = out.split('= fastai-paranoid =')[1]
    assert 'found during test_train.py::test_second_run' in summary and '[reused_model]' in summary
    assert 'reported only (--paranoid-warn)' in summary

NOTE_ONLY = HEADER + '''
from fastai_paranoid.core import emit, Finding
def test_a_warning():
    emit(Finding('planted', 'warning', evidence='a planted warning'))
def test_a_note():
    emit(Finding('planted_note', 'info', evidence='a planted note'))
'''

@pytest.mark.parametrize('fail_on,failed', [('error', []), ('warning', ['test_a_warning']), ('info', ['test_a_warning', 'test_a_note'])])
def test_fail_on_sets_the_lowest_level_that_fails_a_test(run, fail_on, failed):
    result, out = run('--paranoid', '--paranoid-fail-on', fail_on, test_levels=NOTE_ONLY)
    result.assert_outcomes(passed=2 - len(failed), failed=len(failed))
    assert [n for n in ['test_a_warning', 'test_a_note'] if f'FAILED test_levels.py::{n}' in out] == failed

def test_healthy_suite_stays_green(run):
    result, out = run('--paranoid', test_healthy=HEALTHY)
    result.assert_outcomes(passed=3, failed=1)
    assert 'fastai-paranoid: no findings in 4 tests' in out
    assert 'problem found' not in out and 'problems found' not in out, "the failing test fails for its own assertion only"

def test_paths_after_the_flag_are_paths(run):
    result, out = run('--paranoid', 'test_healthy.py', test_healthy=HEALTHY, test_train=LEAKY)
    result.assert_outcomes(passed=3, failed=1)

def test_without_the_flag_nothing_changes(run):
    result, out = run(test_train=LEAKY, test_state='''
        from fastai.callback.core import defaults
        from fastai_paranoid.paranoid import is_paranoid, ParanoidInstaller
        def test_not_paranoid(): assert not is_paranoid() and ParanoidInstaller not in defaults.callbacks
    ''')
    result.assert_outcomes(passed=4)
    assert 'fastai-paranoid' not in out

def test_checked_tests_cannot_switch_the_check_off(run, pytester):
    blind = HEADER + textwrap.dedent('''
        from fastai_paranoid.paranoid import paranoid
        from fastai_paranoid.core import emit, ParanoidWarning
        paranoid(False) # at import, during collection

        def test_switches_off_then_leaks():
            paranoid(False)
            model = build_mlp()
            fit(model); fit(model)

        def test_silences_warnings_then_a_guard_speaks():
            warnings.filterwarnings('ignore')
            emit("model.0 (Linear) went non-finite at epoch 3. Fix: lower the learning rate.", ParanoidWarning)

        def test_records_the_warnings_itself():
            with warnings.catch_warnings(record=True):
                model = build_mlp()
                fit(model); fit(model)

        def test_healthy_after_all_that(): fit(build_mlp())
    ''')
    result, out = run('--paranoid', test_blind=blind)
    result.assert_outcomes(passed=1, failed=3)
    failure = out.split('FAILURES')[1].split('warnings summary')[0]
    assert failure.count('[reused_model]') == 2 and '[ParanoidWarning] model.0 (Linear) went non-finite' in failure
    summary = out.split('= fastai-paranoid =')[1]
    lines = (pytester.path/'test_blind.py').read_text().splitlines()
    line, at_import = lines.index('    paranoid(False)') + 1, lines.index('paranoid(False) # at import, during collection') + 1
    assert f'test_blind.py::test_switches_off_then_leaks: paranoid(False) at test_blind.py:{line} refused: pytest --paranoid keeps its guards on' in summary
    assert f'outside any test: paranoid(False) at test_blind.py:{at_import} refused' in summary and summary.count('refused') == 2

def test_findings_of_fixtures(run):
    result, out = run('--paranoid', test_fixtures=HEADER + textwrap.dedent('''
        shared = build_mlp()

        @pytest.fixture
        def trained_twice_at_setup():
            fit(shared); fit(shared)

        @pytest.fixture
        def trains_again_at_teardown():
            yield
            fit(shared)

        def test_setup_leak(trained_twice_at_setup): pass
        def test_teardown_leak(trains_again_at_teardown): pass
    '''))
    result.assert_outcomes(failed=1, passed=1, errors=1)
    assert 'FAILED test_fixtures.py::test_setup_leak' in out and 'ERROR test_fixtures.py::test_teardown_leak' in out
    assert out.count('[reused_model]') >= 2

def test_plugin_imports_nothing_until_enabled_and_is_registered():
    code = "import sys, fastai_paranoid.pytest_plugin; print(sorted(m for m in sys.modules if m.split('.')[0] in ('fastai', 'torch', 'fastai_paranoid')))"
    out = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "['fastai_paranoid', 'fastai_paranoid.pytest_plugin']", out
    project = tomllib.loads((Path(__file__).parents[1]/'pyproject.toml').read_text())
    assert project['project']['entry-points']['pytest11'] == {'fastai_paranoid.pytest_plugin': 'fastai_paranoid.pytest_plugin'}

def test_one_flag_per_mode_and_no_equals_sign_in_a_name():
    "`--paranoid` and `--paranoid-warn` are flags of their own; no registered name holds an `=` (0.2's `--paranoid=warn` is a usage error now)"
    from fastai_paranoid.pytest_plugin import pytest_addoption
    names = []
    class Group:
        def addoption(self, *opts, **kwargs): names.extend(opts)
    class Parser:
        def getgroup(self, *args, **kwargs): return Group()
    pytest_addoption(Parser())
    assert {'--paranoid', '--paranoid-warn'} <= set(names)
    assert [n for n in names if '=' in n] == []
