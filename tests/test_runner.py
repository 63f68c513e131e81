"`fastai-paranoid check PATH...` on a whole nbdev-style project: notebooks run as nbdev-test runs them (magics, `!`, display, pickling, directives), parallel workers, one table, --json; bad paths get one line and exit 2."
import contextlib, io, json, os, re, signal, subprocess, sys, time
from pathlib import Path
import pytest
from fastai.callback.core import Callback
from fastai_paranoid.cli import main
from cli_helpers import ROOT, CLI_CODE, notebook, command
from fastai_paranoid.runner import check_file, check_files, check_paths, runnable_files


PRELUDE = """import pickle, torch
from torch import nn
from fastai.learner import Learner
import fastai.callback.progress # Learner.no_bar
from fastai_paranoid.fixtures import xor_dls, build_mlp
def fit(learn):
    with learn.no_bar(), learn.no_logging(): learn.fit(1, 1e-2)"""



@pytest.fixture(scope='module')
def project(tmp_path_factory):
    "A small nbdev project: tst_flags = slow; a healthy notebook full of IPython syntax, the same with planted leaks, a script"
    root = tmp_path_factory.mktemp('proj')
    (root/'pyproject.toml').write_text('[project]\nname = "proj"\n\n[tool.nbdev]\nlib_path = "proj"\nnbs_path = "nbs"\ntst_flags = "slow"\n')
    nbs = root/'nbs'
    nbs.mkdir()
    notebook(nbs/'00_healthy.ipynb',
        '%matplotlib inline\n' + PRELUDE,
        'class Annealer:\n    "defined in a cell: pickles only in a real __main__"\n    def __call__(self, pct): return 1 - pct\n'
        'assert pickle.loads(pickle.dumps(Annealer()))(0.25) == 0.75',
        '%%time\nfit(Learner(xor_dls(seed=0), build_mlp(), loss_func=nn.CrossEntropyLoss()))',
        '%time fit(Learner(xor_dls(seed=1), build_mlp(), loss_func=nn.CrossEntropyLoss()))',
        '!echo from the shell\ndisplay(torch.ones(2))\nimport os; assert os.environ["IN_TEST"] == "1"',
        '#|eval: false\nraise RuntimeError("an eval: false cell ran")',
        '#|slow\nraise RuntimeError("a slow cell ran")')
    notebook(nbs/'01_leaks_in_magics.ipynb', PRELUDE,
        '%%capture\ndls, model = xor_dls(), build_mlp()\nfor run in range(2): fit(Learner(dls, model, loss_func=nn.CrossEntropyLoss()))')
    (nbs/'_private.py').write_text('raise RuntimeError("names starting with _ are left out")\n')
    (nbs/'helpers.py').write_text('raise RuntimeError("a script next to notebooks is their helper, not a check")\n')
    (root/'scripts').mkdir()
    (root/'scripts'/'train.py').write_text(PRELUDE + '\nfit(Learner(xor_dls(), build_mlp(), loss_func=nn.CrossEntropyLoss()))\nprint("script done")\n'
                                     'from fastai_paranoid.paranoid import paranoid\nparanoid(False) # as the README example ends\n')
    return root

def test_a_project_in_parallel_workers(project):
    "Magics, `!`, display, pickling run; directives are honoured and listed; the leak inside %%capture is found; one table; --json"
    res = command('check', 'nbs', 'scripts', '--n-workers', '2', '--json', 'out.json', cwd=project)
    assert res.returncode == 1, res.stdout + res.stderr
    table = res.stdout[:res.stdout.index('\n\n')]
    assert 'file' in table and 'status' in table and 'findings' in table
    assert '00_healthy.ipynb' in table and 'scripts/train.py' in table and '_private' not in table and 'helpers.py' not in table
    assert 'not checked: 1 script next to the notebooks' in res.stdout and 'nbs/helpers.py' in res.stdout
    assert 'reused_model' in res.stdout and 'model (Sequential)' in res.stdout
    assert 'cell 6 (raise RuntimeError("an eval: false cell ...): #|eval: false' in res.stdout
    assert 'cell 7 (raise RuntimeError("a slow cell ran")): #|slow: run it with --flags slow' in res.stdout
    assert 'script done' not in res.stdout, "the checked code's output is captured, as nbdev-test captures it"
    report = json.loads((project/'out.json').read_text())
    statuses = {Path(f['path']).name: f['status'] for f in report['files']}
    assert statuses == {'00_healthy.ipynb': 'clean', '01_leaks_in_magics.ipynb': 'findings', 'train.py': 'clean'}, report
    leaky = next(f for f in report['files'] if f['status'] == 'findings')
    assert leaky['problems'] == 1 and leaky['findings'][0]['kind'] == 'reused_model'
    assert report['exit_status'] == 1 and report['n_workers'] == 2
    train = next(f for f in report['files'] if f['path'].endswith('train.py'))
    assert len(train['refused']) == 1 and train['refused'][0].startswith('paranoid(False) at ') and 'train.py:' in train['refused'][0], train
    assert all(f['refused'] == [] for f in report['files'] if f is not train)

def test_flags_run_the_flagged_cells_and_a_failing_cell_exits_2(project):
    err, out = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        assert main(['check', str(project/'nbs'/'00_healthy.ipynb'), '--flags', 'slow']) == 2
    assert 'RuntimeError: a slow cell ran' in err.getvalue() and 'While Executing Cell #7' in err.getvalue()
    assert 'an eval: false cell ran' not in err.getvalue()

def test_the_healthy_notebook_passes_nbdev_test_too(project):
    "The parity the check promises: what nbdev-test passes runs to its end under the check (above: clean)"
    env = dict(os.environ, PYTHONPATH=str(ROOT), OMP_NUM_THREADS='1')
    res = subprocess.run([Path(sys.executable).parent/'nbdev-test', 'nbs/00_healthy.ipynb'], cwd=project, env=env, capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stdout + res.stderr

@pytest.mark.parametrize('name,text,message', [
    ('broken.ipynb', '{"cells": [{"cell_type": "code",', 'broken.ipynb is not valid notebook JSON (line 1, column 33'),
    ('config.ipynb', '{"name": "not a notebook"}', "config.ipynb is JSON but not a notebook: it is an object with keys ['name']"),
    ('empty.ipynb', '{"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}', 'empty.ipynb is an empty notebook'),
])
def test_a_bad_notebook_gets_one_line_and_exit_2(tmp_path, name, text, message):
    (tmp_path/name).write_text(text)
    err, out = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err): assert main(['check', str(tmp_path/name)]) == 2
    lines = err.getvalue().strip().splitlines()
    assert len(lines) == 1 and message in lines[0], err.getvalue()
    assert out.getvalue() == ''

def test_bad_paths_get_one_line_and_exit_2(tmp_path):
    (tmp_path/'empty').mkdir()
    (tmp_path/'ok.py').write_text('x = 1\n')
    (tmp_path/'other.py').write_text('x = 2\n')
    cases = [(['check', str(tmp_path/'empty')], 'holds no notebook (.ipynb) or script (.py) to check'),
             (['check', str(tmp_path/'nope')], 'nope: no such file or folder'),
             (['check', '--json', str(tmp_path), str(tmp_path/'ok.py')], 'is a folder; give a file name'),
             (['check', str(tmp_path), str(tmp_path/'ok.py'), '--', '--epochs', '3'], 'arguments after -- (--epochs 3) go to one script'),
             (['check', str(tmp_path/'ok.py'), '--epochs', '3'], "unknown option --epochs 3; put the script's own arguments after --")]
    for argv, message in cases:
        err = io.StringIO()
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err): assert main(argv) == 2
        lines = err.getvalue().strip().splitlines()
        assert len(lines) == 1 and message in lines[0], (argv, err.getvalue())

def test_a_bad_notebook_in_a_folder_is_listed_and_the_rest_runs(tmp_path, monkeypatch):
    (tmp_path/'nbs').mkdir()
    notebook(tmp_path/'nbs/ok.ipynb', 'x = 1')
    (tmp_path/'nbs/bad.ipynb').write_text('{}')
    monkeypatch.chdir(tmp_path) # short paths: the table's layout does not depend on where pytest puts tmp_path
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err): assert check_paths(['nbs'], n_workers=1) == 2
    assert 'bad.ipynb  not run' in out.getvalue() and 'ok.ipynb   clean' in out.getvalue()
    assert 'bad.ipynb is JSON but not a notebook' in err.getvalue()

def test_a_worker_that_dies_fails_its_file(tmp_path):
    (tmp_path/'dies.py').write_text('import os; os._exit(3)\n')
    err = io.StringIO()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err): assert check_paths([tmp_path/'dies.py']) == 2
    assert 'died (exit code 3) before reporting' in err.getvalue()

def test_parallel_workers_share_the_cores_out(tmp_path, monkeypatch):
    "Files checked at once each get their share of torch's threads (`worker_threads`), and the processes they start get it as OMP_NUM_THREADS: no oversubscribed cores"
    import fastai_paranoid.runner as runner
    monkeypatch.setattr(os, 'sched_getaffinity', lambda pid: set(range(8)))
    monkeypatch.delenv('OMP_NUM_THREADS', raising=False)
    assert [runner.worker_threads(n) for n in (1, 2, 3, 16)] == [None, 4, 2, 1]
    monkeypatch.setenv('OMP_NUM_THREADS', '1')
    assert runner.worker_threads(4) is None, "the user's OMP_NUM_THREADS is kept"
    monkeypatch.setattr(runner, 'worker_threads', lambda n: 3) # what the workers get, whatever this machine's cores
    for name in ('a', 'b'):
        (tmp_path/f'{name}.py').write_text("import os, torch\n"
            f"open({str(tmp_path/name)!r} + '.out', 'w').write(f\"{{torch.get_num_threads()}} {{os.environ['OMP_NUM_THREADS']}}\")\n")
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        assert check_paths([tmp_path/'a.py', tmp_path/'b.py'], n_workers=2) == 0
    assert [(tmp_path/f'{n}.out').read_text() for n in ('a', 'b')] == ['3 3', '3 3']

class MarkerGuard(Callback):
    "A stand-in for an extra guard passed through to paranoid(guards=...)"

def test_guards_pass_through_to_paranoid(tmp_path):
    (tmp_path/'uses.py').write_text(PRELUDE + "\nlearn = Learner(xor_dls(), build_mlp(), loss_func=nn.CrossEntropyLoss())\n"
                                    "assert [type(cb).__name__ for cb in learn.cbs if type(cb).__name__ == 'MarkerGuard'], learn.cbs\n")
    assert check_file(tmp_path/'uses.py', guards=[MarkerGuard]).status == 'clean'
    res = check_file(tmp_path/'uses.py')
    assert res.status == 'failed' and 'AssertionError' in res.error, "without the extra guard the script's assertion fails"

# Partial results survive an interrupt (issue 18): Ctrl-C or a CI runner's SIGTERM still gets the files already checked

# deaf: the file being checked ignores SIGTERM (as code that installs its own handler may): its worker is killed all the same,
# so the command ends once the files checked are reported, not when the file ends
@pytest.mark.parametrize('sig,code,deaf', [(signal.SIGINT, 130, False), (signal.SIGTERM, 143, False), (signal.SIGINT, 130, True)])
def test_an_interrupted_folder_reports_and_saves_the_files_already_checked(tmp_path, sig, code, deaf):
    (tmp_path/'a_first.py').write_text('x = 1\n')
    ignore = "import signal\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\nopen('b_deaf', 'w').close()\n" if deaf else ''
    (tmp_path/'b_sleeps.py').write_text(ignore + "open('b_started', 'w').close()\nimport time\ntime.sleep(120)\n")
    (tmp_path/'c_last.py').write_text('x = 3\n')
    env = dict(os.environ, PYTHONPATH=str(ROOT), OMP_NUM_THREADS='1', COLUMNS='100')
    proc = subprocess.Popen([sys.executable, '-c', CLI_CODE, 'check', '.', '--n-workers', '1', '--no-sanity', '--json', 'out.json'],
                            cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        seen = []
        for line in proc.stderr: # the progress lines: the first file is done, the second one sleeps
            seen.append(line)
            if line.startswith('fastai-paranoid: [1/3]'): break
        assert seen and seen[-1].startswith('fastai-paranoid: [1/3] a_first.py: clean'), seen
        while deaf and not (tmp_path/'b_deaf').exists() and proc.poll() is None: time.sleep(0.05) # b ignores SIGTERM from here on
        while not (tmp_path/'b_started').exists() and proc.poll() is None: time.sleep(0.05) # b runs, c waits for a worker
        proc.send_signal(sig)
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None: proc.kill()
    assert proc.returncode == code, out + err
    saved = json.loads((tmp_path/'out.json').read_text())
    assert saved['interrupted'] is True and saved['exit_status'] == code
    assert [f['path'] for f in saved['files']] == ['a_first.py'] and saved['files'][0]['status'] == 'clean'
    assert saved['not_finished'] == ['b_sleeps.py', 'c_last.py']
    assert saved['stopped'] == ['b_sleeps.py'] and saved['not_started'] == ['c_last.py'], saved
    assert 'a_first.py clean' in ' '.join(out.split()) and 'b_sleeps.py' not in out.split('fastai-paranoid: 1 file checked')[0]
    said = [l for l in err.splitlines() if 'interrupted' in l]
    assert len(said) == 1 and 'the 1 file running was stopped, not checked: b_sleeps.py; 1 file never started' in said[0], err
    assert 'c_last.py' not in said[0], "a file that never started is counted, not called running"
    assert f"(exit status {code})" in out and 'interrupted' in err and 'Traceback' not in err

def test_a_cell_timeout_is_one_line_and_a_slow_cell_outside_a_project_is_named(tmp_path):
    "--cell-timeout: one line naming the cell and the fix, not asyncio's stack; a #|slow cell that runs (no tst_flags outside a project) is said"
    notebook(tmp_path/'sleeps.ipynb', 'x = 1', 'import time\ntime.sleep(60)')
    notebook(tmp_path/'slow.ipynb', 'x = 1', '#|slow\ny = 2')
    err, out = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        assert check_paths([tmp_path/'sleeps.ipynb', tmp_path/'slow.ipynb'], n_workers=2, cell_timeout=3, sanity=False) == 2
    lines = [l for l in err.getvalue().splitlines() if l.strip() and not l.startswith('fastai-paranoid: [')]
    assert len(lines) == 1 and 'cell 2 ran past the cell timeout of 3 s' in lines[0] and '--cell-timeout SECONDS' in lines[0], lines
    assert 'asyncio' not in err.getvalue()
    assert f"Not run, and notes, in {tmp_path/'slow.ipynb'}" in out.getvalue()
    assert 'cell 2 (y = 2): ran, although marked #|slow' in ' '.join(out.getvalue().split())

class _Terminal(io.StringIO):
    "A stderr that says it is a terminal"
    def isatty(self): return True

@pytest.mark.parametrize('tty', [True, False])
def test_progress_is_one_line_on_a_terminal_and_nothing_in_a_log(tmp_path, tty, monkeypatch):
    "On a terminal: the file, its notebook cell, the Learner and each sanity check in one line rewritten with \\r, cleared at the end; not a terminal: none of it"
    notebook(tmp_path/'train.ipynb', PRELUDE, 'fit(Learner(xor_dls(), build_mlp(), loss_func=nn.CrossEntropyLoss()))')
    monkeypatch.setenv('COLUMNS', '120') # the line's width, whatever terminal runs the tests
    err, out = (_Terminal() if tty else io.StringIO()), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        assert check_paths([tmp_path/'train.ipynb'], n_workers=1) == 0, out.getvalue()
    written = err.getvalue()
    if not tty:
        assert written == '', written
        return
    frames = written.split('\r')[1:]
    assert '\n' not in written and frames[-1] == '\x1b[K', frames[-3:] # never a new line; the last write clears it
    shown = [f.removesuffix('\x1b[K') for f in frames[:-1]]
    assert shown[0] == 'fastai-paranoid train.ipynb: starting', shown[:3]
    assert 'fastai-paranoid train.ipynb: cell 2/2' in shown
    checks = [f for f in shown if ', check_' in f]
    assert checks and all(re.search(r'train\.ipynb: cell 2/2, Learner #\d+ \(Sequential\), check_\w+ \(\d+/\d+\)$', f) for f in checks), checks[:3]
    steps = [int(re.search(r'\((\d+)/(\d+)\)$', f).group(1)) for f in checks]
    assert steps == list(range(1, len(steps) + 1)) and f"({len(steps)}/{len(steps)})" in checks[-1] # every check, in order
    assert all(len(f) < 120 for f in shown)

def test_a_worker_still_sees_what_the_checked_code_builds(tmp_path):
    "Each worker freezes the objects it inherits from the fork server (`gc.freeze`, so that collections leave fastai's and torch's ~400k objects alone), and `gc.get_objects()` leaves frozen objects out: what the checked script builds is still found by the leak detector's walk for live optimizers (a plain PyTorch loop's Adam), and its healthy twin stays clean"
    loop = ("\nfrom fastai_paranoid.fixtures import make_xor_data\nimport numpy as np\nmodel = build_mlp()\n"
            "opt = torch.optim.Adam(model.parameters(), lr=1e-2)\nx, y = make_xor_data(64, np.random.default_rng(1))\n"
            "for _ in range(3):\n    opt.zero_grad()\n    nn.functional.cross_entropy(model(x), y).backward()\n    opt.step()\n"
            "opt.zero_grad() # no gradient left: the optimizer's state is the evidence\n")
    (tmp_path/'trained.py').write_text(PRELUDE + loop + "fit(Learner(xor_dls(), model, loss_func=nn.CrossEntropyLoss()))\n")
    (tmp_path/'fresh.py').write_text(PRELUDE + loop + "fit(Learner(xor_dls(), build_mlp(), loss_func=nn.CrossEntropyLoss())) # a new model\n")
    trained, fresh = check_files([tmp_path/'trained.py', tmp_path/'fresh.py'], sanity=False)
    found = [f for f in trained.findings if f['kind'] == 'untracked_training']
    assert trained.status == 'findings' and len(found) == 1, (trained.status, trained.findings, trained.error)
    assert 'a live Adam holds optimizer state' in found[0]['evidence'], found[0]
    assert fresh.status == 'clean', (fresh.status, fresh.findings, fresh.error)
