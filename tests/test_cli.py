"`fastai-paranoid check`: clean code exits 0, leaky code 1, misuse and code that raises 2; scripts and notebooks; in-process and as a command (whole projects: test_runner.py)."
import contextlib, io, json, os, subprocess, sys, textwrap
from pathlib import Path
import pytest
from fastai.callback.core import defaults
from fastai_paranoid.cli import main
from cli_helpers import ROOT, notebook, command
from fastai_paranoid.paranoid import ParanoidInstaller, is_paranoid


PRELUDE = """
import torch
from torch import nn
from fastai.learner import Learner
import fastai.callback.progress # Learner.no_bar
from fastai_paranoid.fixtures import xor_dls, build_mlp
def fit(learn):
    with learn.no_bar(), learn.no_logging(): learn.fit(1, 1e-2)
"""
CLEAN = PRELUDE + """
for run in range(2):
    fit(Learner(xor_dls(seed=run), build_mlp(), loss_func=nn.CrossEntropyLoss()))
print('clean done')
"""
LEAKY_BODY = """
dls, model = xor_dls(), build_mlp()
for run in range(2):
    fit(Learner(dls, model, loss_func=nn.CrossEntropyLoss()))   # seed 000's loop
print('leaky done')
"""
LEAKY = PRELUDE + LEAKY_BODY
RAISES = PRELUDE + """
dls, model = xor_dls(), build_mlp()
for run in range(2): fit(Learner(dls, model, loss_func=nn.CrossEntropyLoss()))
raise ValueError('the user script failed')
"""



@pytest.fixture(autouse=True)
def _defaults_untouched():
    before = list(defaults.callbacks)
    yield
    assert defaults.callbacks == before and not is_paranoid()

def test_clean_script_as_a_command(tmp_path):
    (tmp_path / 'clean.py').write_text(CLEAN)
    clean = command('check', '--verbose', 'clean.py', cwd=tmp_path)
    assert clean.returncode == 0, clean.stdout + clean.stderr
    assert 'clean done' in clean.stdout, "--verbose lets the script's output through"
    assert 'no findings in clean.py' in clean.stdout

def test_leaky_notebook_as_a_command(tmp_path):
    "The reuse sits inside a %%time cell, after %matplotlib: IPython syntax runs (as in Jupyter) and the guards see it"
    notebook(tmp_path / 'leaky.ipynb', '%matplotlib inline\n' + PRELUDE, '%%time\n' + LEAKY_BODY)
    leaky = command('check', 'leaky.ipynb', cwd=tmp_path)
    assert leaky.returncode == 1, leaky.stdout + leaky.stderr
    report = leaky.stdout[leaky.stdout.index('fastai-paranoid: 1 problem'):]
    assert 'reused_model' in report and 'model (Sequential)' in report and 'fresh_learner' in report
    assert 'leaky.ipynb  findings' in leaky.stdout and 'skipped' not in leaky.stdout + leaky.stderr

def test_clean_notebook_in_process(tmp_path):
    notebook(tmp_path / 'clean.ipynb', '!echo hi\n' + CLEAN)
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        assert main(['check', str(tmp_path / 'clean.ipynb')]) == 0
    assert 'no findings' in out.getvalue() and 'clean.ipynb  clean' in out.getvalue()

def test_script_that_raises_exits_2_with_its_traceback_and_the_findings(tmp_path):
    (tmp_path / 'raises.py').write_text(RAISES)
    err, out = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err): assert main(['check', str(tmp_path / 'raises.py')]) == 2
    assert 'ValueError: the user script failed' in err.getvalue() and 'raises.py", line' in err.getvalue()
    assert 'runpy' not in err.getvalue(), "our own frames are not part of the user's traceback"
    assert 'reused_model' in out.getvalue(), "findings made before the exception are still reported"

def test_script_gets_argv_and_main(tmp_path):
    (tmp_path / 'args.py').write_text("import sys\nassert __name__ == '__main__'\nassert sys.argv[1:] == ['--epochs', '3'], sys.argv\n")
    saved_argv, saved_path = list(sys.argv), list(sys.path)
    with contextlib.redirect_stdout(io.StringIO()): assert main(['check', str(tmp_path / 'args.py'), '--epochs', '3']) == 0
    assert sys.argv == saved_argv and sys.path == saved_path

def test_leaky_script_in_process(tmp_path):
    (tmp_path / 'leaky.py').write_text(LEAKY)
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        assert main(['check', str(tmp_path / 'leaky.py')]) == 1
    assert 'reused_model' in out.getvalue()

def test_on_leak_raise_stops_the_script_and_exits_2(tmp_path):
    (tmp_path / 'leaky.py').write_text(LEAKY)
    err, out = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        assert main(['check', '--on-leak', 'raise', str(tmp_path / 'leaky.py')]) == 2
    assert 'StateLeakError' in err.getvalue()
    assert 'leaky done' not in err.getvalue() + out.getvalue(), "the script stopped at the finding"

@pytest.mark.parametrize('argv', [[], ['check', 'missing.py'], ['check', 'setup.cfg'], ['check', '--on-leak', 'loud', 'x.py'], ['frobnicate']])
def test_usage_errors_exit_2(argv, tmp_path):
    (tmp_path / 'setup.cfg').write_text('')
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        with contextlib.redirect_stderr(io.StringIO()), contextlib.redirect_stdout(io.StringIO()): assert main(argv) == 2
    finally: os.chdir(cwd)

def test_script_exit_status(tmp_path):
    (tmp_path / 'ok.py').write_text("import sys; sys.exit(0)\n")
    (tmp_path / 'bad.py').write_text("import sys; sys.exit(4)\n")
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        assert main(['check', str(tmp_path / 'ok.py')]) == 0
        assert main(['check', str(tmp_path / 'bad.py')]) == 2
