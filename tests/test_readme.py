"The README's two commands are what CI runs, README.md is what nbs/index.ipynb says, and every Python snippet in it runs as shown."
import re, subprocess, sys, textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

def readme_commands():
    return re.findall(r"```bash\n(.+?)\n```", (ROOT / 'README.md').read_text())

def readme_snippets()->list:
    "Every ```python block of the README, in order: a reader runs them top to bottom, in one session"
    return re.findall(r"```python\n(.*?)\n```", (ROOT / 'README.md').read_text(), re.S)

def test_ci_runs_the_readme_commands():
    install, test = readme_commands()
    ci_lines = (ROOT / '.ci' / 'run').read_text().splitlines()
    assert install in ci_lines, f".ci/run does not run the README's install command: {install}"
    assert test in ci_lines, f".ci/run does not run the README's test command: {test}"

def test_readme_matches_index_notebook():
    res = subprocess.run([sys.executable, 'tools/readme.py', '--check'], cwd=ROOT, capture_output=True, text=True)
    assert res.returncode == 0, res.stdout

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
    import json
    snippets = readme_snippets()
    assert len(snippets) >= 10
    (tmp_path / 'snippets.json').write_text(json.dumps(snippets))
    res = subprocess.run([sys.executable, '-c', RUNNER, str(tmp_path / 'snippets.json')], capture_output=True, text=True, timeout=900,
                         env={**__import__('os').environ, 'PYTHONPATH': str(ROOT), 'OMP_NUM_THREADS': '1'})
    assert res.returncode == 0, res.stderr[-4000:]
    assert f"{len(snippets)} snippets ran" in res.stdout
