"Helpers shared by the command's tests (test_cli, test_runner): a notebook written from code cells, the command run as a user runs it"
import json, os, subprocess, sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# The command as a terminal starts it. A shell gives its foreground job SIGINT's default action, and Python turns Ctrl-C into
# KeyboardInterrupt. A test run started from a background job (`cmd &` in a script without job control, some CI runners)
# inherits SIGINT ignored instead, so a Ctrl-C sent to the command would do nothing and the interrupt tests would wait for
# nothing: the command's code puts Python's handler back first (a handler, unlike SIG_IGN, is not inherited across exec).
CLI_CODE = 'import signal, sys; signal.signal(signal.SIGINT, signal.default_int_handler); from fastai_paranoid.cli import main; sys.exit(main())'

def notebook(path, *cells, metadata=None):
    "Write a notebook of `cells` (code sources) at `path`"
    nb = {'cells': [{'cell_type': 'code', 'id': f'c{i}', 'metadata': {}, 'outputs': [], 'execution_count': None, 'source': c}
                    for i, c in enumerate(cells)], 'metadata': metadata or {}, 'nbformat': 4, 'nbformat_minor': 5}
    path.write_text(json.dumps(nb))
    return path

def command(*args, cwd, timeout=600):
    "`fastai-paranoid ARGS` as a user runs it, in a new process"
    env = dict(os.environ, PYTHONPATH=str(ROOT), OMP_NUM_THREADS='1')
    return subprocess.run([sys.executable, '-c', CLI_CODE, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
