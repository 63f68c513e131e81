"`fastai-paranoid check`: clean code exits 0, leaky code 1, misuse and code that raises 2; scripts and notebooks; in-process and as a command (whole projects: test_runner.py)."
import contextlib, io, json, os, re, subprocess, sys, textwrap
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
    assert 'leaky.ipynb findings (exit status 1)' in ' '.join(leaky.stdout.split()), "the notebook ran (its status is findings, not skipped)"
    # the finding points at the %%time cell's body: the cell counted from 1 (nbdev-test's 'Cell #2'), the line under the magic
    body = ('%%time\n' + LEAKY_BODY).splitlines()
    line = int(re.search(r'Learner built at leaky.ipynb cell 2:(\d+)', ' '.join(report.split())).group(1))
    assert 'Learner(' in body[line - 1], (line, report) # the body's line (its blank first line, which IPython drops, counted)

def test_clean_notebook_in_process(tmp_path, monkeypatch):
    notebook(tmp_path / 'clean.ipynb', '!echo hi\n' + CLEAN)
    monkeypatch.chdir(tmp_path) # a short path, as a user types it: the table's layout does not depend on where pytest puts tmp_path
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        assert main(['check', 'clean.ipynb']) == 0
    said = ' '.join(out.getvalue().split())
    assert said.startswith('fastai-paranoid: 1 file checked in') and 'clean.ipynb clean' in said, said # a clean file: one line

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
    with contextlib.redirect_stdout(io.StringIO()): assert main(['check', str(tmp_path / 'args.py'), '--', '--epochs', '3']) == 0
    assert sys.argv == saved_argv and sys.path == saved_path

def test_leaky_script_in_process(tmp_path):
    (tmp_path / 'leaky.py').write_text(LEAKY)
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        assert main(['check', str(tmp_path / 'leaky.py')]) == 1
    assert 'reused_model' in out.getvalue()

def test_on_finding_raise_stops_the_script_and_exits_2(tmp_path):
    (tmp_path / 'leaky.py').write_text(LEAKY)
    err, out = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        assert main(['check', '--on-finding', 'raise', str(tmp_path / 'leaky.py')]) == 2
    assert 'StateLeakError' in err.getvalue()
    assert 'leaky done' not in err.getvalue() + out.getvalue(), "the script stopped at the finding"

@pytest.mark.parametrize('argv', [[], ['check', 'missing.py'], ['check', 'setup.cfg'], ['check', '--on-finding', 'loud', 'x.py'], ['frobnicate']])
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

# The command line means one thing (issue 18 item 3)

def test_an_unknown_option_after_a_script_is_refused_in_one_line_naming_the_fix(tmp_path):
    (tmp_path / 'train.py').write_text(f"open({str(tmp_path / 'ran')!r}, 'w').write('yes')\n")
    err = io.StringIO()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
        assert main(['check', str(tmp_path / 'train.py'), '--epochs', '3']) == 2
    lines = err.getvalue().strip().splitlines()
    assert len(lines) == 1 and "put the script's own arguments after --" in lines[0], lines
    assert lines[0].endswith(f"fastai-paranoid check {tmp_path / 'train.py'} -- --epochs 3"), lines
    assert not (tmp_path / 'ran').exists(), "nothing ran"
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
        assert main(['check', str(tmp_path / 'train.py'), '--fl', 'slow']) == 2, "no abbreviations: --fl is not --flags"
        assert main(['check', str(tmp_path / 'train.py'), str(tmp_path / 'train.py'), '--', '--epochs', '3']) == 2
        assert main(['check', '--', '--epochs', '3']) == 2
    assert 'go to one script' in err.getvalue() and 'no script to give them to' in err.getvalue()

def test_options_after_the_paths_are_the_checks_and_several_paths_are_several_files(tmp_path):
    "`check a.py b.py --json out.json --n-workers 2`: both files checked, the JSON written, nothing passed to a.py"
    for name in ['a.py', 'b.py']: (tmp_path / name).write_text("import sys\nassert sys.argv[1:] == [], sys.argv\n")
    res = command('check', 'a.py', 'b.py', '--json', 'out.json', '--n-workers', '2', '--no-sanity', cwd=tmp_path)
    assert res.returncode == 0, res.stdout + res.stderr
    saved = json.loads((tmp_path / 'out.json').read_text())
    assert [f['path'] for f in saved['files']] == ['a.py', 'b.py'] and saved['n_workers'] == 2
    assert [f['status'] for f in saved['files']] == ['clean', 'clean'] and saved['interrupted'] is False
    assert 'FutureWarning' not in res.stderr and 'deprecated' not in res.stderr, "no third-party deprecation noise: " + res.stderr

# Findings you can act on (issue 18 items 2-4): blocks that fit the terminal, the user's line, GitHub annotations, JSON

LEAKY_SCRIPT = PRELUDE + """
dls, model = xor_dls(), build_mlp()
for run in range(2):
    learn = Learner(dls, model, loss_func=nn.CrossEntropyLoss())
    learn.fit(1, 1e-2)
"""
FIT_LINE = LEAKY_SCRIPT.splitlines().index('    learn.fit(1, 1e-2)') + 1
# https://docs.github.com/actions/reference/workflow-commands-for-github-actions: `::command key=value,key=value::message`;
# properties escape % CR LF : and , (as %25 %0D %0A %3A %2C), the message % CR LF
_ESCAPED = r'(?:[^%\r\n]|%25|%0D|%0A)'
_PROP = r'(?:file|line|endLine|col|endColumn|title)=(?:[^%\r\n:,]|%25|%0D|%0A|%3A|%2C)*'
WORKFLOW_COMMAND = re.compile(rf'^::(?:error|warning|notice)(?: {_PROP}(?:,{_PROP})*)?::{_ESCAPED}*$')

@pytest.fixture(scope='module')
def long_report(tmp_path_factory):
    "A script and a notebook with the same reuse, in a folder whose name is too long for the table, checked with COLUMNS=100"
    tmp = tmp_path_factory.mktemp('report')
    folder = tmp / ('a_folder_whose_name_is_long_enough_that_the_table_cannot_fit_' + 'x' * 20)
    folder.mkdir()
    (folder / 'leaky.py').write_text(LEAKY_SCRIPT)
    notebook(folder / 'leaky.ipynb', PRELUDE, 'dls, model = xor_dls(), build_mlp()\nfor run in range(2):\n'
             '    learn = Learner(dls, model, loss_func=nn.CrossEntropyLoss())\n    learn.fit(1, 1e-2)')
    env = dict(os.environ, COLUMNS='100')
    code = 'import sys; from fastai_paranoid.cli import main; sys.exit(main())'
    res = subprocess.run([sys.executable, '-c', code, 'check', f'{folder.name}/leaky.py', f'{folder.name}/leaky.ipynb', '--no-sanity',
                          '--json', 'out.json'], cwd=tmp, capture_output=True, text=True, timeout=600,
                         env=dict(env, PYTHONPATH=str(ROOT), OMP_NUM_THREADS='1'))
    return folder.name, res, json.loads((tmp / 'out.json').read_text())

def test_no_line_of_the_report_is_wider_than_the_terminal(long_report):
    folder, res, saved = long_report
    assert res.returncode == 1, res.stdout + res.stderr
    assert max(map(len, res.stdout.splitlines())) <= 100, max(res.stdout.splitlines(), key=len)
    assert '--------' not in res.stdout, "the table does not fit in 100 columns: one line per file instead"
    assert f"{folder}/leaky.py: findings" in res.stdout.replace('\n    ', ' ')

def test_the_finding_points_at_the_users_fit_line_in_terminal_and_json(long_report):
    folder, res, saved = long_report
    script, nb = saved['files']
    (f,) = script['findings']
    assert (f['kind'], f['level'], f['found_at']['file'], f['found_at']['line']) == ('reused_model', 'error', f'{folder}/leaky.py', FIT_LINE)
    assert f['found_at']['cell'] is None and f['built_at']['line'] == FIT_LINE - 1
    assert {'evidence', 'fix', 'learner', 'guard', 'claim', 'path', 'message'} <= set(f) and f['claim'] == 'certain'
    (g,) = nb['findings']
    assert (g['found_at']['cell'], g['found_at']['line']) == (2, 4), g['found_at'] # the notebook's second cell (counted from 1, as nbdev-test's 'Cell #2'), its 4th line
    assert g['found_at']['file'].endswith('leaky.ipynb')
    words = ' '.join(res.stdout.split()) # the head lines are wrapped to the width too
    assert f"{folder}/leaky.py:{FIT_LINE} error reused_model Learner #2" in words
    assert "leaky.ipynb cell 2:4 error reused_model Learner #2" in words

def test_github_format_prints_valid_workflow_commands(long_report, capsys):
    "The worker's dicts rebuilt into findings and printed as GitHub annotations (the JSON's results, rendered again)"
    from fastai_paranoid.runner import FileResult, print_results
    folder, res, saved = long_report
    print_results([FileResult(**d) for d in saved['files']], format='github')
    lines = [l for l in capsys.readouterr().out.splitlines() if l.startswith('::')]
    assert len(lines) == 2 and all(WORKFLOW_COMMAND.match(l) for l in lines), lines
    assert lines[0].startswith(f'::error file={folder}/leaky.py,line={FIT_LINE},title=error reused_model (Learner #2)::Learner #2: model')
    assert 'line=' not in lines[1].split('::')[1] and 'cell 2%3A4' in lines[1], "a notebook: the file, the cell in the title"
    assert not WORKFLOW_COMMAND.match('::warning file=a,b.py::x') and not WORKFLOW_COMMAND.match('::warning title=50%::x')

def test_github_annotation_escapes_properties_and_message():
    from fastai_paranoid.collect import FindingData, Place, github_annotation
    f = FindingData('non_finite', 'warning', evidence='loss 100% NaN\nat step 3, then: inf', found_at=Place('dir,1/a:b.py', 7))
    line = github_annotation(f)
    assert WORKFLOW_COMMAND.match(line), line
    assert line == '::warning file=dir%2C1/a%3Ab.py,line=7,title=warning non_finite::loss 100%25 NaN%0Aat step 3, then: inf'

# Fast start (issue 20 item 1): the command line parses, plans and reports without importing torch or fastai

def test_the_command_line_answers_without_importing_torch_or_fastai(tmp_path):
    code = textwrap.dedent('''
        import contextlib, io, sys, time
        start = time.perf_counter()
        from fastai_paranoid.cli import main
        from fastai_paranoid.runner import FileResult, print_results, check_paths
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            assert main(['--help']) == 0
            assert main(['check', '--help']) == 0
            assert main(['check', 'train.py', '--epochs', '3']) == 2
            assert main(['check', 'missing.py']) == 2
            finding = {'kind': 'reused_model', 'level': 'error', 'evidence': 'was trained', 'found_at': {'file': 'a.py', 'line': 3}}
            print_results([FileResult('a.py', 'findings', 1.0, 1, [finding])])
            print_results([FileResult('a.py', 'findings', 1.0, 1, [finding])], format='github')
        seconds = time.perf_counter() - start
        heavy = sorted(m for m in sys.modules if m.split('.')[0] in ('torch', 'fastai', 'numpy', 'pandas', 'IPython', 'nbdev'))
        print(heavy, seconds)
        assert heavy == [], heavy # the time it takes is benchmarks/bench_startup.py's to measure
    ''')
    (tmp_path / 'train.py').write_text('')
    res = subprocess.run([sys.executable, '-c', code], cwd=tmp_path, capture_output=True, text=True, timeout=120,
                         env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert res.returncode == 0, res.stdout + res.stderr

# One report per distributed run (issue 18): under torchrun every rank runs the check; rank 0 prints them all, merged

def test_torchrun_of_the_check_prints_one_report_with_every_ranks_findings(tmp_path):
    "2 ranks on CPU: a finding made on rank 1 only is in rank 0's report, the only report; rank 0 gives the exit status"
    (tmp_path / 'train.py').write_text("""import os
from fastai_paranoid.core import emit, Finding
if os.environ['RANK'] == '1': emit(Finding('planted', 'warning', evidence='found on rank 1 only'))
""")
    env = dict(os.environ, PYTHONPATH=str(ROOT), OMP_NUM_THREADS='1', COLUMNS='100')
    cmd = [sys.executable, '-m', 'torch.distributed.run', '--nproc_per_node', '2', '--master_port', '29533', '--no-python',
           sys.executable, '-c', 'import sys; from fastai_paranoid.cli import main; sys.exit(main())',
           'check', 'train.py', '--no-sanity', '--json', 'out.json']
    res = subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert res.stdout.count('1 file checked in') == 1, res.stdout + res.stderr
    assert 'found on rank 1 only' in res.stdout and 'exit status 1' in res.stdout, res.stdout
    assert res.returncode == 1, res.stderr[-2000:] # torchrun passes on the first non-zero exit: rank 0's
    saved = json.loads((tmp_path / 'out.json').read_text())
    (f,) = saved['files'][0]['findings']
    assert f['kind'] == 'planted' and f['rank'] == 1 and saved['files'][0]['status'] == 'findings'

def test_github_format_annotates_a_crashed_check_on_the_fit_line(capsys):
    "--format github: a sanity check that crashed is an ::error on the line of the fit that ran it, its cause and traceback's end in the message"
    from fastai_paranoid.runner import FileResult, print_results
    rec = {'learner': 'Learner #1 (Sequential)', 'check': 'check_lr', 'verdict': 'error', 'reason': "check_lr raised AttributeError: no 'new'",
           'same_as': '', 'traceback': "  File \"x.py\", line 3\nAttributeError: no 'new'",
           'built_at': None, 'found_at': {'file': 'train.py', 'line': 12, 'cell': None, 'text': 'train.py:12'}}
    passed = dict(rec, check='check_frozen', verdict='passed', reason='', traceback='')
    print_results([FileResult('train.py', 'checks crashed', checks=[rec, passed])], format='github')
    lines = [l for l in capsys.readouterr().out.splitlines() if l.startswith('::')]
    assert len(lines) == 1 and WORKFLOW_COMMAND.match(lines[0]), lines # the passed check: no annotation
    assert lines[0].startswith('::error file=train.py,line=12,title=sanity check crashed%3A check_lr (Learner #1 (Sequential))::'), lines
    assert "%0AAttributeError: no 'new'" in lines[0]
