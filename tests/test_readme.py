"The README's two commands are what CI runs, and README.md is what nbs/index.ipynb says."
import re, subprocess, sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

def readme_commands():
    return re.findall(r"```bash\n(.+?)\n```", (ROOT / 'README.md').read_text())

def test_ci_runs_the_readme_commands():
    install, test = readme_commands()
    ci_lines = (ROOT / '.ci' / 'run').read_text().splitlines()
    assert install in ci_lines, f".ci/run does not run the README's install command: {install}"
    assert test in ci_lines, f".ci/run does not run the README's test command: {test}"

def test_readme_matches_index_notebook():
    res = subprocess.run([sys.executable, 'tools/readme.py', '--check'], cwd=ROOT, capture_output=True, text=True)
    assert res.returncode == 0, res.stdout
