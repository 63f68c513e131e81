"""What `fastai-paranoid check` shows a new user (issue 41): a clean file is one line, skipped checks counted (listed under --verbose,
always in --json), tracebacks and warnings that point at the user's code, the demo's own lines, the interrupt naming what ran,
--json/--html tried before anything runs, TMPDIR left as found, and the --html page read in a real headless Chromium."""
import contextlib, io, json, os, re, shutil, subprocess, sys, warnings
from pathlib import Path
import pytest
from cli_helpers import ROOT, command
from fastai_paranoid.runner import FileResult, print_results, html_report, check_file
from fastai_paranoid.cli import main

EXTERNAL = ROOT / 'tests' / 'external'
BUGS = ROOT / 'tests' / 'bug_scripts'
# eight healthy scripts of tests/external, each a few seconds, each clean without an info note: torchtest2's gallery with its bugs
# fixed, and the fastai book's chapter 13 CNN (whose sanity checks make torch create torchinductor_<user> in TMPDIR)
HEALTHY8 = ['tt2_fixed_01_optimizer_before_head.py', 'tt2_fixed_02_graph_cut.py', 'tt2_fixed_04_ignored_input.py', 'tt2_fixed_05_mask_ignored.py',
            'tt2_fixed_03_batch_first.py', 'tt2_fixed_08_overconfident_init.py', 'fastbook_13_convolutions.py', 'tt2_fixed_12_wrong_backward.py']

@pytest.fixture(scope='module')
def healthy8(tmp_path_factory):
    "The eight checked together as a user runs them, with a TMPDIR of their own (COLUMNS=100, as a CI log without a terminal)"
    tmp = tmp_path_factory.mktemp('healthy8')
    (tmp / 'tmpdir').mkdir()
    # the scripts' own synthetic data go elsewhere (tests/external/synth.py): what is left in TMPDIR is then the check's
    env = dict(os.environ, PYTHONPATH=str(ROOT), OMP_NUM_THREADS='1', COLUMNS='100', TMPDIR=str(tmp / 'tmpdir'), EXTERNAL_DATA=str(tmp / 'data'))
    env.pop('TORCHINDUCTOR_CACHE_DIR', None)
    code = 'import sys; from fastai_paranoid.cli import main; sys.exit(main())'
    res = subprocess.run([sys.executable, '-c', code, 'check', *HEALTHY8, '--n-workers', '2', '--json', str(tmp / 'out.json')],
                         cwd=EXTERNAL, env=env, capture_output=True, text=True, timeout=600)
    return res, json.loads((tmp / 'out.json').read_text()), tmp / 'tmpdir'

def test_eight_healthy_scripts_print_at_most_15_lines(healthy8):
    res, saved, _ = healthy8
    assert res.returncode == 0, res.stdout + res.stderr
    lines = res.stdout.strip().splitlines()
    assert len(lines) <= 15, res.stdout
    for name in HEALTHY8: # each file is its one line of the table, with its checks counted
        (row,) = [l for l in lines if l.startswith(name)]
        assert re.search(r'\bclean\b.*\b\d+ passed, \d+ skipped$', row), row
    assert 'skipped:' not in res.stdout and lines[-1].startswith('fastai-paranoid: 8 files checked in'), res.stdout

def test_skipped_checks_are_in_the_json_and_listed_under_verbose(healthy8, capsys):
    "The JSON keeps every verdict; --verbose's report (rendered again from it) lists each skipped check with why, as the report did before"
    res, saved, _ = healthy8
    skipped = [c for f in saved['files'] for c in f['checks'] if c['verdict'] == 'skipped']
    assert len(skipped) >= 8 and all(c['reason'] for c in skipped), skipped
    print_results([FileResult(**d) for d in saved['files']], verbose=True, width=100)
    verbose = capsys.readouterr().out
    for c in skipped: assert f"skipped: {c['check']} on {c['learner']}" in ' '.join(verbose.split()), c
    assert verbose.count('fastai-paranoid: no findings in ') == 8 and verbose.count('fastai-paranoid: sanity checks: 1 Learner, ') == 8

def test_nothing_is_left_in_tmpdir(healthy8):
    "torch makes an empty torchinductor_<user> in TMPDIR as the sanity checks run; the command removes it (and its workers' own scratch folders)"
    _, _, tmpdir = healthy8
    assert sorted(p.name for p in tmpdir.iterdir()) == [], list(tmpdir.iterdir())

def test_a_clean_file_alone_is_one_line(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / 'ok.py').write_text('x = 1\n')
    assert main(['check', 'ok.py', '--no-sanity']) == 0
    out = capsys.readouterr().out
    assert out.strip().splitlines() == [out.strip()] and re.fullmatch(r'fastai-paranoid: 1 file checked in [\d.]+ s: ok\.py clean \(exit status 0\)', out.strip()), out

@pytest.mark.parametrize('option', ['--json', '--html'])
def test_an_output_file_that_cannot_be_written_is_refused_before_anything_runs(tmp_path, capsys, option):
    "/proc/nope.json: the folder exists and root may write anywhere by its permissions, but no file can be made there: tried, and refused at once"
    ran = tmp_path / 'ran'
    (tmp_path / 'train.py').write_text(f"open({str(ran)!r}, 'w').write('yes')\n")
    path = f"/proc/nope{option.replace('--', '.')}"
    assert main(['check', str(tmp_path / 'train.py'), option, path]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and f"{option} {path} cannot be written: opening it for writing failed" in err[0], err
    assert not ran.exists(), "nothing ran"
    good = tmp_path / f"out{option.replace('--', '.')}" # a writable path is tried too, and left as it was: not there
    assert main(['check', str(tmp_path / 'train.py'), '--no-sanity', option, str(good)]) == 0 and good.exists() and ran.exists()

def test_a_syntax_error_is_shown_from_the_users_file(tmp_path):
    (tmp_path / 'syn.py').write_text('x = 1\ndef f(:\n    pass\n')
    res = check_file(tmp_path / 'syn.py', sanity=False)
    assert res.status == 'failed' and res.error.lstrip().startswith(f'File "{tmp_path / "syn.py"}", line 2'), res.error
    assert 'runner.py' not in res.error and 'runpy' not in res.error and 'SyntaxError' in res.error, res.error

def test_a_warning_points_at_the_users_line():
    "The Python API: a StateLeakWarning is shown at the line of this file that called fit, not inside the library"
    from torch import nn
    from fastai.learner import Learner
    from fastai_paranoid.fixtures import xor_dls, build_mlp
    from fastai_paranoid.leaks import StateLeakDetector, StateLeakWarning, clear_findings
    model = build_mlp()
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter('always')
        for run in range(2):
            learn = Learner(xor_dls(), model, loss_func=nn.CrossEntropyLoss(), cbs=StateLeakDetector())
            with learn.no_logging(): learn.fit(1); fit_line = sys._getframe().f_lineno
    clear_findings()
    (w,) = [w for w in said if issubclass(w.category, StateLeakWarning)]
    assert (w.filename, w.lineno) == (__file__, fit_line), (w.filename, w.lineno)

def test_the_demo_shows_its_own_code_and_its_findings_point_at_those_lines(capsys):
    from fastai_paranoid.cli import check, DEMO
    with contextlib.redirect_stderr(io.StringIO()): assert check() == 1
    out = capsys.readouterr().out
    lines = DEMO.splitlines()
    fits = [i for i, l in enumerate(lines, 1) if 'learn.fit(' in l]
    for i in fits: assert f"{i:3} | {lines[i - 1]}" in out, "the demo's code is listed with its line numbers"
    heads = re.findall(r'^demo\.py:(\d+)  (error|warning)  (\w+)', out, re.M)
    assert [(int(n), kind) for n, _, kind in heads] == [(fits[0], 'reused_model'), (fits[1], 'callback_state'), (fits[2], 'shared_file')], heads
    assert 'venv' not in out and 'bin/fastai-paranoid' not in out and 'cli.py' not in out

def test_the_html_page_holds_no_script_and_fetches_nothing():
    "Rendered from data alone: a cause with its symptom nested under it, its curve as inline SVG; a non-finite value marked"
    cause = {'kind': 'check_overfit_one_batch', 'level': 'error', 'evidence': 'stalled', 'learner': 'Learner #1 (Net)', 'id': 'F1', 'explained_by': '',
             'found_at': {'file': 'train.py', 'line': 9}}
    symptom = dict(cause, kind='check_lr', evidence='went up', id='F2', explained_by='F1')
    curves = [{'learner': 'Learner #1 (Net)', 'source': 'check_overfit_one_batch', 'name': 'loss_curve', 'points': [[0, 2.3], [1, 2.2], [2, None]]}]
    page = html_report([FileResult('train.py', 'findings', 1.0, 1, [cause, symptom], curves=curves), FileResult('ok.py')])
    assert '<script' not in page and not re.search(r'(src|href)="(https?:)?//', page) and '@import' not in page
    assert page.count('<article class="finding') == 2 and page.count('<svg') == 1 and 'non-finite at step 2' in page
    assert page.index('class="symptoms"') < page.index('went up'), "the symptom is under its cause"

# --- The --html page in a real browser ---

CHROMIUM = next((shutil.which(n) for n in ('chromium', 'chromium-browser', 'google-chrome') if shutil.which(n)), None)

@pytest.mark.skipif(CHROMIUM is None, reason="no chromium to render the page: apt-get install -y chromium (.ci/run installs it)")
def test_the_html_page_of_a_folder_with_findings_renders_each_finding_and_its_plot_in_headless_chromium(tmp_path):
    "Three planted bugs (a softmax before the loss, a loss that turns NaN, frozen BatchNorm statistics that drift) and their data helper, checked with --html; Chromium renders the page, and the DOM it renders holds every finding and the curve each was judged on"
    folder = tmp_path / 'scripts'
    folder.mkdir()
    for name in ['softmax_before_ce.py', 'nan_epoch2.py', 'frozen_bn_drift.py', 'digits_data.py']: shutil.copy(BUGS / name, folder / name)
    res = command('check', 'scripts', '--n-workers', '2', '--json', 'out.json', '--html', 'out.html', cwd=tmp_path)
    assert res.returncode == 1, res.stdout + res.stderr
    saved = json.loads((tmp_path / 'out.json').read_text())
    findings = [(Path(f['path']).name, x['kind']) for f in saved['files'] for x in f['findings']]
    plotted = {('softmax_before_ce.py', 'check_overfit_one_batch'), ('nan_epoch2.py', 'non_finite'), ('frozen_bn_drift.py', 'check_frozen')}
    assert plotted <= set(findings), findings
    page = tmp_path / 'out.html'
    dom = subprocess.run([CHROMIUM, '--headless', '--no-sandbox', '--disable-gpu', '--enable-logging=stderr', '--v=0', '--dump-dom', page.as_uri()],
                         capture_output=True, text=True, timeout=120)
    assert dom.returncode == 0 and '</html>' in dom.stdout, dom.stderr[-2000:]
    assert not [l for l in dom.stderr.splitlines() if 'CONSOLE' in l or 'Uncaught' in l], dom.stderr # no console message, no error
    sections = re.findall(r'<section class="file" id="file-\d+"><h2>(.*?) <span.*?</section>', dom.stdout, re.S)
    assert len(sections) == 4, len(sections)
    rendered = dict(re.findall(r'<section class="file" id="file-\d+"><h2>(.*?) <span(.*?)</section>', dom.stdout, re.S))
    for path, kind in findings: # every finding is there, in its file's section, and the curves that decided the plotted ones
        cards = re.findall(rf'<article class="finding \w+" data-kind="{kind}">(.*?)</article>', rendered[f'scripts/{path}'], re.S)
        assert cards, (path, kind)
        if (path, kind) in plotted: assert '<svg' in cards[0] and '<polyline' in cards[0], (path, kind)
    assert 'non-finite at step' in rendered['scripts/nan_epoch2.py']
    assert 'badge s-clean' in rendered['scripts/digits_data.py'] and rendered['scripts/digits_data.py'].count('<svg') == 0
    assert dom.stdout.count('<details class="checks">') == 3, "each checked Learner's account of its checks"
