"The GitHub Actions recipe (issue 27), tested by its commands: examples/github-actions.yml has the trigger and steps it should, its check step (the install steps left out) run on a small folder gives the exit status, the `::error` annotations and the JSON, and the README shows the same text"
import json, os, re, shutil, subprocess, sys
from pathlib import Path
import pytest
yaml = pytest.importorskip('yaml')
from cli_helpers import ROOT, notebook

WORKFLOW = ROOT/'examples'/'github-actions.yml'
BUGS = ROOT/'tests'/'bug_scripts'

def _workflow()->dict: return yaml.safe_load(WORKFLOW.read_text())

def _steps()->list: return _workflow()['jobs']['check']['steps']

def _check_step()->dict: return next(s for s in _steps() if s.get('run', '').startswith('fastai-paranoid check'))

def test_the_workflow_installs_on_a_cpu_runner_checks_a_folder_and_uploads_the_json_even_on_failure():
    wf = _workflow()
    on = wf.get('on', wf.get(True)) # YAML 1.1 (PyYAML) reads the key `on` as True
    assert 'pull_request' in on and on['push']['branches'] == ['main']
    job = wf['jobs']['check']
    assert job['runs-on'] == 'ubuntu-latest' and job['timeout-minutes'] > 0
    steps = job['steps']
    assert [s['uses'].split('@')[0] for s in steps[:2]] == ['actions/checkout', 'actions/setup-python']
    install = next(s['run'] for s in steps if s.get('name') == 'Install')
    assert '--index-url https://download.pytorch.org/whl/cpu' in install and 'pip install fastai_paranoid' in install
    check = _check_step()
    assert check['run'].split() == ['fastai-paranoid', 'check', 'nbs', '--format', 'github', '--json', 'paranoid.json', '--html', 'paranoid.html']
    assert steps.index(check) > steps.index(next(s for s in steps if s.get('name') == 'Install'))
    upload = steps[-1]
    assert upload['uses'].startswith('actions/upload-artifact@') and upload['with']['path'].split() == ['paranoid.json', 'paranoid.html']
    assert upload['if'] == 'always()', "the JSON is uploaded when the check fails too"

def test_the_readme_shows_the_workflow_file():
    blocks = re.findall(r"```yaml\n(.*?)```", (ROOT/'README.md').read_text(), re.S)
    assert WORKFLOW.read_text() in blocks, "README's workflow differs from examples/github-actions.yml: copy the file into nbs/index.ipynb, then python tools/readme.py"

@pytest.mark.slow
def test_the_check_step_annotates_the_planted_bug_and_writes_the_json(tmp_path):
    "The check step's command, as the runner's shell runs it, on nbs/ holding a notebook with a planted bug, its healthy twin and their helper"
    nbs = tmp_path/'nbs'
    nbs.mkdir()
    shutil.copy(BUGS/'digits_data.py', nbs) # a helper next to notebooks: imported by them, not checked
    script = (BUGS/'softmax_before_ce.py').read_text().split('\n', 1)[1] # without its docstring line
    notebook(nbs/'buggy.ipynb', script.replace("HEALTHY = '--healthy' in sys.argv", 'HEALTHY = False'))
    notebook(nbs/'healthy.ipynb', script.replace("HEALTHY = '--healthy' in sys.argv", 'HEALTHY = True'))
    env = dict(os.environ, PYTHONPATH=str(ROOT), OMP_NUM_THREADS='1', PATH=str(Path(sys.executable).parent) + os.pathsep + os.environ.get('PATH', ''))
    res = subprocess.run(['bash', '-e', '-c', _check_step()['run']], cwd=tmp_path, env=env, capture_output=True, text=True,
                         timeout=900) # a hang guard
    assert res.returncode == 1, res.stdout + res.stderr # findings: the job fails, and the upload step still runs
    errors = [l for l in res.stdout.splitlines() if l.startswith('::error ')]
    assert errors and all(l.startswith('::error file=nbs/buggy.ipynb,') for l in errors), res.stdout
    assert any('check_loss_activation' in l and 'model.1 (Softmax)' in l for l in errors), errors
    saved = json.loads((tmp_path/'paranoid.json').read_text())
    assert saved['exit_status'] == 1 and saved['interrupted'] is False
    page = (tmp_path/'paranoid.html').read_text() # the page uploaded beside the JSON
    assert 'data-kind="check_loss_activation"' in page and 'nbs/healthy.ipynb' in page
    status = {Path(f['path']).name: f['status'] for f in saved['files']}
    assert status == {'buggy.ipynb': 'findings', 'healthy.ipynb': 'clean'}, status
    found = next(f for f in saved['files'] if f['path'].endswith('buggy.ipynb'))['findings']
    assert any(f['check'] == 'check_loss_activation' for f in found if 'check' in f) or any('check_loss_activation' in f['message'] for f in found)
