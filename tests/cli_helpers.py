"Helpers shared by the command's tests (test_cli, test_runner): a notebook written from code cells, the command run as a user runs it"
import json, os, subprocess, sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

def notebook(path, *cells, metadata=None):
    "Write a notebook of `cells` (code sources) at `path`"
    nb = {'cells': [{'cell_type': 'code', 'id': f'c{i}', 'metadata': {}, 'outputs': [], 'execution_count': None, 'source': c}
                    for i, c in enumerate(cells)], 'metadata': metadata or {}, 'nbformat': 4, 'nbformat_minor': 5}
    path.write_text(json.dumps(nb))
    return path

def command(*args, cwd, timeout=600):
    "`fastai-paranoid ARGS` as a user runs it, in a new process"
    env = dict(os.environ, PYTHONPATH=str(ROOT), OMP_NUM_THREADS='1')
    code = 'import sys; from fastai_paranoid.cli import main; sys.exit(main())'
    return subprocess.run([sys.executable, '-c', code, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
