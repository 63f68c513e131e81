"""Run a pipeline script (an original or a mutant) under one seed and return its score, cheaply: the parent imports fastai and
`mdata` once, and each run is a forked child that executes the script's text as `__main__` in a fresh folder and sends back
what `mdata.finish` measured (or the exception that stopped it). A run that passes `timeout` seconds is killed."""
import os, pickle, signal, sys, tempfile, time, traceback, warnings
from pathlib import Path

HERE = Path(__file__).resolve().parent

def prepare():
    "Import what every script imports, once, in this (the parent) process"
    if str(HERE) not in sys.path: sys.path.insert(0, str(HERE))
    import mdata # noqa: F401  (fastai and the data generators)
    return mdata

def _child(text:str, seed:int, workdir:str, write_fd:int):
    os.environ['MUTANT_SEED'] = str(seed)
    os.chdir(workdir)
    import mdata, torch
    torch.set_num_threads(1)
    mdata.RESULT.clear()
    out = {'seed': seed}
    start = time.process_time()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter('ignore')
            devnull = open(os.devnull, 'w')
            sys.stdout, sys.stderr = devnull, devnull
            exec(compile(text, str(Path(workdir) / 'script.py'), 'exec'), {'__name__': '__main__', '__file__': str(Path(workdir) / 'script.py')})
        out.update(mdata.RESULT)
        if 'score' not in out: out['error'] = 'the script ended without scoring (finish was not reached)'
    except BaseException as e: # a mutant that crashes is loud, not silent: recorded, not scored
        out['error'] = f'{type(e).__name__}: {str(e)[:300]}'
        out['where'] = traceback.format_exc()[-600:]
    out['cpu_s'] = round(time.process_time() - start, 2)
    with os.fdopen(write_fd, 'wb') as f: f.write(pickle.dumps(out))

def run(text:str, seed:int, timeout:float=240) -> dict:
    "Run the script `text` under `seed` in a forked child: {'seed', 'score', 'metric', 'cpu_s'} or {'seed', 'error', ...}"
    workdir = tempfile.mkdtemp(prefix='mutant_')
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read_fd)
        try: _child(text, seed, workdir, write_fd)
        finally: os._exit(0)
    os.close(write_fd)
    deadline, data = time.monotonic() + timeout, b''
    os.set_blocking(read_fd, False)
    while True:
        try:
            chunk = os.read(read_fd, 1 << 16)
            if chunk: data += chunk; continue
            if chunk == b'': break # the child closed its end
        except BlockingIOError: pass
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            break
        time.sleep(0.02)
    os.close(read_fd)
    os.waitpid(pid, 0)
    if not data: return {'seed': seed, 'error': f'no result: timed out after {timeout:.0f} s or killed'}
    return pickle.loads(data)
