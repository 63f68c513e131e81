"""The README is what nbs/index.ipynb says, and a reader can follow it: its quick start's commands run as shown and print what it
shows, its install line names this package, its pre-commit `rev:` exists, its Python snippets run in order, its paragraphs are
short and its words the reader's. CONTRIBUTING.md's two commands (set up and test a fresh clone) are what CI runs."""
import json, os, re, shlex, subprocess, sys, textwrap
from pathlib import Path
import pytest

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / 'README.md').read_text()
CLI_CODE = 'import sys; from fastai_paranoid.cli import main; sys.exit(main())'

def bash_blocks(text:str)->list:
    "Each ```bash block's command lines"
    return [b.strip().splitlines() for b in re.findall(r"```bash\n(.*?)\n```", text, re.S)]

def readme_snippets()->list:
    "Every ```python block of the README (not the files it writes, ```python NAME), in order: a reader runs them top to bottom, in one session"
    return re.findall(r"```python\n(.*?)\n```", README, re.S)

def test_ci_runs_the_contributing_commands():
    install, test = [b[0] for b in bash_blocks((ROOT / 'CONTRIBUTING.md').read_text())]
    ci_lines = (ROOT / '.ci' / 'run').read_text().splitlines()
    assert install in ci_lines, f".ci/run does not run CONTRIBUTING.md's install command: {install}"
    assert test in ci_lines, f".ci/run does not run CONTRIBUTING.md's test command: {test}"
    assert 'CONTRIBUTING.md' in README, "the README links to the contributors' material"

def test_readme_matches_index_notebook():
    res = subprocess.run([sys.executable, 'tools/readme.py', '--check'], cwd=ROOT, capture_output=True, text=True)
    assert res.returncode == 0, res.stdout

def _steps(text:str)->list:
    "The quick start as a reader follows it: ('file', name, text) for each ```python NAME block, ('run', command, the output block shown under it)"
    steps = []
    for m in re.finditer(r"```(python (\S+)|bash)\n(.*?)\n```(\n\n```\n(.*?)\n```)?", text, re.S):
        if m.group(2): steps.append(('file', m.group(2), m.group(3)))
        else: steps += [('run', line, m.group(5)) for line in m.group(3).splitlines() if line.startswith('fastai-paranoid ')]
    return steps

def _same(text:str)->str:
    "Output compared as words, timings aside: the report wraps to the terminal, and seconds differ from run to run"
    return re.sub(r'\d+\.\d s\b', 'N s', ' '.join(text.split()))

def test_the_quick_start_runs_as_shown(tmp_path):
    "Each file the README writes is written, each `fastai-paranoid` command run in that folder (COLUMNS=100, as shown), and its output is the README's"
    steps = _steps(README)
    runs = [s for s in steps if s[0] == 'run']
    assert len(runs) >= 2 and README.index(runs[0][1]) < 3000, "the quick start runs the command within the first screen"
    env = dict(os.environ, PYTHONPATH=str(ROOT), OMP_NUM_THREADS='1', COLUMNS='100')
    for kind, what, text in steps:
        if kind == 'file': (tmp_path / what).write_text(text + '\n'); continue
        res = subprocess.run([sys.executable, '-c', CLI_CODE, *shlex.split(what)[1:]], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
        assert text is not None, f"the README shows no output under `{what}`"
        assert _same(res.stdout) == _same(text), f"`{what}` printed:\n{res.stdout}\nthe README shows:\n{text}"
        status = int(re.search(r'\(exit status (\d+)\)', ' '.join(text.split())).group(1))
        assert res.returncode == status, (what, res.returncode, res.stderr[-2000:])

def test_the_install_line_names_this_package():
    "It cannot run offline: it is read as pip reads it, and names this package at this repository (the pre-commit hook's)"
    from packaging.requirements import Requirement
    (install,) = [line for b in bash_blocks(README) for line in b if line.startswith('pip install')]
    req = Requirement(shlex.split(install)[2])
    assert req.name == re.search(r'^name = "(.+)"', (ROOT / 'pyproject.toml').read_text(), re.M).group(1)
    repo = re.search(r'repo: (\S+)', README).group(1)
    assert req.url == f"git+{repo}", (req.url, repo)

def test_the_pre_commit_rev_is_a_commit_of_this_repository():
    rev = re.search(r'^\s+rev: (\S+)', README, re.M).group(1)
    shallow = subprocess.run(['git', 'rev-parse', '--is-shallow-repository'], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    if shallow == 'true': pytest.skip(f"a shallow clone may not hold {rev}")
    res = subprocess.run(['git', 'cat-file', '-e', f'{rev}^{{commit}}'], cwd=ROOT, capture_output=True, text=True)
    assert res.returncode == 0, f"rev: {rev} is not a commit or tag of this repository"
    hooks = subprocess.run(['git', 'show', f'{rev}:.pre-commit-hooks.yaml'], cwd=ROOT, capture_output=True, text=True)
    assert 'id: fastai-paranoid' in hooks.stdout, "that commit has the hook"

def _paragraphs(text:str)->list:
    "The README's prose: its paragraphs and list items, outside code blocks and tables"
    prose = re.sub(r"```.*?```", '', text, flags=re.S)
    return [p for p in re.split(r'\n\s*\n', prose) if p.strip() and not p.lstrip().startswith(('|', '<!--', '#'))]

def test_paragraphs_are_short_and_words_are_the_readers():
    long = [p[:80] + '...' for p in _paragraphs(README) if len(p) > 650]
    assert long == [], long
    assert not re.search(r'\bseeds? 00\d', README), "a seed's number means nothing to a reader: say what it shows"
    head = README.splitlines()[:60]
    assert any(l.startswith('pip install') for l in head) and any(l.startswith('fastai-paranoid check') for l in head)
    assert any(re.match(r'train\.py:\d+  error', l) for l in head), "the first screen shows a first finding"

RUNNER = textwrap.dedent('''
    import json, os, sys, tempfile, traceback
    os.chdir(tempfile.mkdtemp()) # checkpoints and logs go to a scratch folder
    snippets = json.loads(open(sys.argv[1]).read())
    ns = {'__name__': '__main__'}
    for i, code in enumerate(snippets):
        try: exec(compile(code, f'<README snippet {i + 1}>', 'exec'), ns)
        except BaseException:
            print(f"README snippet {i + 1} raised:\\n{code}\\n" + traceback.format_exc(), file=sys.stderr)
            sys.exit(1)
    print(f"{len(snippets)} snippets ran")
''')

def test_every_readme_snippet_runs_as_shown(tmp_path):
    "Each ```python block, in order, in one fresh process (the names one defines are there for the next, as in the README)"
    snippets = readme_snippets()
    assert len(snippets) >= 10
    (tmp_path / 'snippets.json').write_text(json.dumps(snippets))
    res = subprocess.run([sys.executable, '-c', RUNNER, str(tmp_path / 'snippets.json')], capture_output=True, text=True, timeout=900,
                         env={**os.environ, 'PYTHONPATH': str(ROOT), 'OMP_NUM_THREADS': '1'})
    assert res.returncode == 0, res.stderr[-4000:]
    assert f"{len(snippets)} snippets ran" in res.stdout
