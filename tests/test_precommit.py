"The pre-commit hook (issue 27): `.pre-commit-hooks.yaml` read as pre-commit reads it, and run with `pre-commit try-repo` on a small repository made here: the hook fails on a script with a planted bug and passes on its healthy twin"
import os, re, shutil, subprocess, sys
from pathlib import Path
import pytest
yaml = pytest.importorskip('yaml')
from cli_helpers import ROOT, command

HOOKS = ROOT/'.pre-commit-hooks.yaml'
BUGS = ROOT/'tests'/'bug_scripts'

def test_the_hook_runs_check_smoke_on_staged_notebooks_and_scripts_in_the_users_environment():
    hooks = yaml.safe_load(HOOKS.read_text())
    assert [h['id'] for h in hooks] == ['fastai-paranoid']
    hook = hooks[0]
    assert hook['entry'] == 'fastai-paranoid check --smoke'
    assert hook['language'] == 'system', "the checked code imports the user's fastai, torch and data code: an isolated hook venv has none of it"
    assert hook['types_or'] == ['python', 'jupyter'] and hook.get('pass_filenames', True) is True
    assert hook['require_serial'] is True, "one check takes all the files and runs its own workers"
    left_out = re.compile(hook['exclude']) # what is not a script, and pytest's files
    assert [f for f in ['__init__.py', 'pkg/_helpers.py', 'setup.py', 'tests/conftest.py', 'tests/test_model.py', 'model_test.py',
                        'train.py', 'scripts/fit_setup.py', 'nbs/00_core.ipynb', 'nbs/_draft.ipynb', 'contest.py'] if not left_out.search(f)] == \
           ['train.py', 'scripts/fit_setup.py', 'nbs/00_core.ipynb', 'nbs/_draft.ipynb', 'contest.py']

def _smoke_supported()->bool:
    "Whether this checkout's `check` knows --smoke (added on the smoke branch): the hook passes it"
    res = command('check', '--help', cwd=ROOT, timeout=120)
    return '--smoke' in res.stdout

def _git(repo, *args):
    env = dict(os.environ, GIT_AUTHOR_NAME='t', GIT_AUTHOR_EMAIL='t@t', GIT_COMMITTER_NAME='t', GIT_COMMITTER_EMAIL='t@t')
    subprocess.run(['git', *args], cwd=repo, env=env, check=True, capture_output=True, text=True)

def _try_repo(repo, home, *files):
    "`pre-commit try-repo <this checkout> fastai-paranoid --files FILES` in `repo`, run as a user's `git commit` would run the hook"
    bin_dir = str(Path(sys.executable).parent) # fastai-paranoid and pre-commit, as installed in this environment
    env = dict(os.environ, PYTHONPATH=str(ROOT), OMP_NUM_THREADS='1', COLUMNS='100', PRE_COMMIT_HOME=str(home),
               PATH=bin_dir + os.pathsep + os.environ.get('PATH', ''))
    env.pop('PRE_COMMIT', None)
    return subprocess.run([sys.executable, '-m', 'pre_commit', 'try-repo', str(ROOT), 'fastai-paranoid', '--verbose', '--files', *files],
                          cwd=repo, env=env, capture_output=True, text=True, timeout=900) # a hang guard

@pytest.mark.slow
def test_try_repo_fails_on_the_planted_bug_and_passes_on_its_healthy_twin(tmp_path):
    pytest.importorskip('pre_commit')
    if shutil.which('git') is None: pytest.skip('git is not installed')
    if not _smoke_supported(): pytest.skip("this checkout's `fastai-paranoid check` has no --smoke yet (the smoke branch adds it); the hook passes it")
    repo, home = tmp_path/'project', tmp_path/'pre-commit-home'
    repo.mkdir()
    _git(repo, 'init', '-q')
    shutil.copy(BUGS/'digits_data.py', repo)
    shutil.copy(BUGS/'softmax_before_ce.py', repo/'buggy.py') # a Softmax in front of CrossEntropyLoss
    (repo/'healthy.py').write_text((BUGS/'softmax_before_ce.py').read_text().replace("HEALTHY = '--healthy' in sys.argv", 'HEALTHY = True'))
    _git(repo, 'add', '.')
    res = _try_repo(repo, home, 'healthy.py')
    assert res.returncode == 0, res.stdout + res.stderr
    assert 'fastai-paranoid check --smoke' in res.stdout and 'Passed' in res.stdout, res.stdout
    res = _try_repo(repo, home, 'buggy.py')
    assert res.returncode == 1, res.stdout + res.stderr
    assert 'Failed' in res.stdout and 'check_loss_activation' in res.stdout and 'model.1 (Softmax)' in res.stdout, res.stdout
    assert any(home.iterdir()), "pre-commit kept its clone of the hook repository under PRE_COMMIT_HOME, in the test's folder"
