"`fastai-paranoid check` leaves no process behind (issue 27): the process tree of the command, collected while it runs, is dead once it has exited: when it ends normally, when interrupted, when a cell times out"
import os, signal, subprocess, sys, time
from pathlib import Path
import pytest
psutil = pytest.importorskip('psutil')
from cli_helpers import ROOT, CLI_CODE, notebook

# The checked code: digits through fastai DataLoaders with two worker processes each (grandchildren of the command's worker),
# each DataLoader worker writing its pid to pids/. --hang: after 3 batches, says so in the file 'ready' and waits for an interrupt.
# In two parts: the set-up (imports, data, Learner), then the fit, which starts the DataLoader workers (and hangs); a notebook
# runs them as two cells, so that its cell timeout times the fit alone.
SETUP = '''
import os, sys, time
from pathlib import Path
import torch
from torch import nn
from torch.utils.data import TensorDataset
from fastai.data.core import DataLoaders
from fastai.data.load import DataLoader
from fastai.learner import Learner
from fastai.callback.core import Callback
from sklearn.datasets import load_digits

class Items(TensorDataset):
    def __getitem__(self, i):
        (Path('pids')/str(os.getpid())).touch()
        return super().__getitem__(i)

d = load_digits()
x = torch.tensor(d.images, dtype=torch.float32).reshape(-1, 64) / 16
x = (x - x.mean(0)) / x.std(0).clamp_min(1e-8)
y = torch.tensor(d.target)
dls = DataLoaders(DataLoader(Items(x[:1400], y[:1400]), bs=64, shuffle=True, num_workers=2, persistent_workers=True),
                  DataLoader(Items(x[1400:], y[1400:]), bs=256, num_workers=2))
HANG = HANG or '--hang' in sys.argv
class WaitHere(Callback):
    def after_batch(self):
        if HANG and self.training and self.iter == 3:
            Path('ready').touch()
            while True: time.sleep(0.1)
learn = Learner(dls, nn.Sequential(nn.Linear(64, 32), nn.ReLU(), nn.Linear(32, 10)), loss_func=nn.CrossEntropyLoss(), cbs=WaitHere())
'''
FIT = 'learn.fit(1, 1e-2)\n'
LOADERS = SETUP + FIT

# A script that starts a process and leaves it running (it would outlive `python leaves.py` too), its pid in 'sleeper'; its output
# goes nowhere, so that without the fix the command's pipe closes and the test fails at once instead of waiting for the sleep
LEAVES = '''
import subprocess, sys
from pathlib import Path
sleeper = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)'], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
Path('sleeper').write_text(str(sleeper.pid))
'''

def _alive(p)->bool:
    try: return p.is_running() and p.status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess: return False

def _watched(tmp_path, *args, signal_at_ready=None, to_group=False):
    "Run `fastai-paranoid check ARGS` in `tmp_path`, collecting its process tree while it runs; with `signal_at_ready`, send that signal once the file 'ready' exists (to the command's process group with `to_group`, as Ctrl-C in a terminal sends it)"
    env = dict(os.environ, PYTHONPATH=str(ROOT), OMP_NUM_THREADS='1', COLUMNS='100')
    proc = subprocess.Popen([sys.executable, '-c', CLI_CODE, 'check', *args], cwd=tmp_path, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, start_new_session=to_group)
    command, seen, parents, sent = psutil.Process(proc.pid), {}, {}, False
    hang_guard = time.monotonic() + 600 # a command that never ends fails the test below (communicate's timeout), not the whole run
    try:
        while proc.poll() is None and time.monotonic() < hang_guard:
            try: tree = command.children(recursive=True)
            except psutil.NoSuchProcess: break
            for p in tree:
                try:
                    key = (p.pid, p.create_time())
                    if key not in seen: seen[key], parents[key] = p, p.ppid()
                except psutil.NoSuchProcess: pass # ended while we looked
            if signal_at_ready is not None and not sent and (tmp_path/'ready').exists():
                if to_group: os.killpg(proc.pid, signal_at_ready)
                else: proc.send_signal(signal_at_ready)
                sent = True
            time.sleep(0.05)
        out, _ = proc.communicate(timeout=600) # a hang guard
    finally:
        if proc.poll() is None: proc.kill()
    # Right after the command returned, every process it started is gone: its workers, what they started, and its direct
    # children (multiprocessing's forkserver and resource tracker, which the command stops and waits for before it exits)
    left = [p for p in seen.values() if _alive(p)]
    for p in left: # leave nothing behind in the test either
        try: p.kill()
        except psutil.NoSuchProcess: pass
    return proc.returncode, out, {pid for pid, _ in seen}, [p.pid for p in left]

def _pid_alive(pid:int)->bool:
    try: return _alive(psutil.Process(pid))
    except psutil.NoSuchProcess: return False

def _dataloader_pids(tmp_path)->set: return {int(f.name) for f in (tmp_path/'pids').iterdir()}

@pytest.mark.slow
def test_a_normal_run_leaves_no_process(tmp_path):
    "DataLoader workers (num_workers=2) and a process the checked script left running end with the check"
    (tmp_path/'pids').mkdir()
    (tmp_path/'loaders.py').write_text('HANG = False' + LOADERS)
    (tmp_path/'leaves.py').write_text(LEAVES)
    status, out, seen, left = _watched(tmp_path, 'loaders.py', 'leaves.py', '--n-workers', '2', '--no-sanity')
    assert status == 0, out
    assert left == [], (left, out)
    # what the files started is gone too, whether or not the 50 ms sampling above caught it alive (the sleeper lives only as
    # long as its tiny script, and under load it can start and end between two samples): read by pid, right after the exit
    started = _dataloader_pids(tmp_path) | {int((tmp_path/'sleeper').read_text())}
    assert len(started) >= 3, "the DataLoader workers and the sleeper ran"
    assert not [pid for pid in started if _pid_alive(pid)], "a process the checked files started outlived the command"

@pytest.mark.slow
@pytest.mark.parametrize('sig,code,to_group', [(signal.SIGINT, 130, True), (signal.SIGTERM, 143, False)])
def test_an_interrupted_run_leaves_no_process(tmp_path, sig, code, to_group):
    "Ctrl-C in a terminal (SIGINT to the whole process group) or a CI runner's SIGTERM while the DataLoader workers are up"
    (tmp_path/'pids').mkdir()
    (tmp_path/'loaders.py').write_text('HANG = False' + LOADERS)
    status, out, seen, left = _watched(tmp_path, 'loaders.py', '--no-sanity', '--', '--hang', signal_at_ready=sig, to_group=to_group)
    assert status == code, out
    assert left == [], (left, out)
    assert len(_dataloader_pids(tmp_path)) >= 2 and _dataloader_pids(tmp_path) <= seen
    assert 'interrupted' in out and 'Traceback' not in out, out

@pytest.mark.slow
def test_a_cell_that_times_out_leaves_no_process(tmp_path):
    "A notebook whose cell hangs with its DataLoader workers up runs past --cell-timeout: the file fails, nothing is left"
    (tmp_path/'pids').mkdir()
    # the set-up in a cell of its own: the timed cell is the fit alone (its DataLoader workers start, 3 batches, then it hangs),
    # so a timeout of 10 s leaves it ample time to get there; that it did is asserted below
    notebook(tmp_path/'hangs.ipynb', 'HANG = True', SETUP, FIT)
    status, out, seen, left = _watched(tmp_path, 'hangs.ipynb', '--no-sanity', '--cell-timeout', '10')
    assert status == 2 and 'cell 3 ran past the cell timeout of 10 s' in ' '.join(out.split()), out
    assert (tmp_path/'ready').exists() and len(_dataloader_pids(tmp_path)) >= 2, "the cell hung with its DataLoader workers up"
    assert left == [], (left, out)
