"""GPU readiness of the per-batch guards, `NaNGuard` and `StateLeakDetector`.

1. No host synchronization per batch: every per-batch event of each guard runs under
   `torch.cuda.set_sync_debug_mode('error')`, where any host sync (`.item()`, `.cpu()`, a D2H copy, `nonzero`) raises.
   NaNGuard reads its device-side flags every `check_every` batches by design (32 on GPU); it runs here once with
   `check_every` past the fit (no read inside the epoch: no sync may happen at all), then with its default, where the
   syncs are counted under 'warn' mode and must be one per `check_every` batches.
2. Overhead: fit time with each guard, as a ratio to the same fit without it, on resnet50 at 224 px (random init,
   synthetic data on the GPU, channels_last, mixed precision), best of `REPEATS`, measured in the same run.
3. The sanity checks on the GPU: `learn.sanity_check()` on that Learner, its seconds as a ratio to one epoch of fit, and
   each check's verdict and seconds (the checks may synchronize: they run once per Learner, not per batch).
4. `fastai-paranoid check` on a script that fits that Learner for one epoch: `python script.py`, `check --no-sanity`
   and `check`, fastest of 2 fresh processes each, as ratios to plain `python` (the targets of issue 20: 1.1x + 1 s
   without the sanity checks, 1.2x with them).

Run by hand on a machine with a CUDA GPU: `python benchmarks/gpu_check.py`. On a machine without one it says so and exits 0."""
import sys, time, warnings

import torch

if not torch.cuda.is_available():
    print("benchmarks/gpu_check.py needs a CUDA GPU (torch.cuda.is_available() is False here): nothing to measure on this machine.")
    sys.exit(0)

from torch import nn
from torchvision.models import resnet50
from fastai.data.core import DataLoaders
from fastai.data.load import DataLoader
from fastai.learner import Learner
from fastai.losses import CrossEntropyLossFlat
from fastai.callback.fp16 import MixedPrecision
import fastai.callback.progress   # learn.no_bar()
from fastai_paranoid.guards import NaNGuard
from fastai_paranoid.leaks import StateLeakDetector
import fastai_paranoid.sanity # learn.sanity_check()

REPEATS, N_TRAIN, N_VALID, BS, SIZE = 3, 1024, 256, 64, 224
BATCH_EVENTS = ('before_batch', 'after_pred', 'after_loss', 'before_backward', 'after_backward', 'after_step', 'after_batch')

def gpu_dls():
    "Random images and labels already on the GPU: the loader adds no host work of its own"
    g = torch.Generator(device='cuda').manual_seed(0)
    def draw(n): return (torch.randn(n, 3, SIZE, SIZE, device='cuda', generator=g),
                         torch.randint(0, 10, (n,), device='cuda', generator=g))
    (xt, yt), (xv, yv) = draw(N_TRAIN), draw(N_VALID)
    ds = lambda x, y: [(x[i], y[i]) for i in range(len(x))]
    return DataLoaders(DataLoader(ds(xt, yt), bs=BS, shuffle=True, drop_last=True, device='cuda'),
                       DataLoader(ds(xv, yv), bs=BS, device='cuda'), device='cuda')

def learner(cbs):
    torch.manual_seed(0)
    model = resnet50(num_classes=10).cuda().to(memory_format=torch.channels_last)
    return Learner(gpu_dls(), model, loss_func=CrossEntropyLossFlat(), cbs=[MixedPrecision()] + cbs)

class _SyncWatch:
    "Wrap each per-batch event of `cb` so it runs under `set_sync_debug_mode(mode)`; count the events that synchronized (mode 'warn')"
    def __init__(self, cb, mode):
        self.syncs, self.events = 0, 0
        for name in BATCH_EVENTS:
            fn = getattr(type(cb), name, None)
            if fn is None: continue
            setattr(cb, name, self._wrap(getattr(cb, name), mode))
    def _wrap(self, fn, mode):
        def wrapped():
            self.events += 1
            with warnings.catch_warnings(record=True) as w:
                warnings.simplefilter('always')
                torch.cuda.set_sync_debug_mode(mode)
                try: return fn()
                finally: torch.cuda.set_sync_debug_mode('default')
            self.syncs += any('synchroniz' in str(x.message) for x in w)
        return wrapped

def no_sync_per_batch(make_cb, mode='error'):
    "One epoch with `make_cb()`'s per-batch events under sync debug `mode`: (syncing events, events, batches)"
    cb = make_cb()
    watch = _SyncWatch(cb, mode)
    learn = learner([cb])
    with learn.no_bar(), learn.no_logging(), warnings.catch_warnings():
        warnings.simplefilter('ignore')
        learn.fit(1, 1e-3)
    return watch.syncs, watch.events, N_TRAIN // BS + -(-N_VALID // BS)

def fit_seconds(make_cbs):
    best = float('inf')
    for _ in range(REPEATS):
        learn = learner(make_cbs())
        with learn.no_bar(), learn.no_logging(), warnings.catch_warnings():
            warnings.simplefilter('ignore')
            torch.cuda.synchronize()
            start = time.perf_counter()
            learn.fit(1, 1e-3)
            torch.cuda.synchronize()
            best = min(best, time.perf_counter() - start)
    return best

SCRIPT = f'''"One epoch of resnet50 at {SIZE} px on synthetic data on the GPU (gpu_check.py part 4)"
import sys
sys.path.insert(0, {str(__import__('pathlib').Path(__file__).resolve().parent)!r})
from gpu_check import learner
learn = learner([])
with learn.no_bar(): learn.fit(1, 1e-3)
'''

def sanity_seconds():
    "Seconds of `learn.sanity_check()` on the GPU Learner, one epoch's seconds, and the report"
    learn = learner([])
    with learn.no_bar(), learn.no_logging(), warnings.catch_warnings():
        warnings.simplefilter('ignore')
        torch.cuda.synchronize(); start = time.perf_counter()
        report = learn.sanity_check(on_finding=None, progress=False)
        torch.cuda.synchronize(); checks = time.perf_counter() - start
        start = time.perf_counter()
        learn.fit(1, 1e-3)
        torch.cuda.synchronize(); epoch = time.perf_counter() - start
    return checks, epoch, report

def command_seconds(repeats:int=2)->dict:
    "Fastest wall seconds of `python script.py`, `check --no-sanity script.py` and `check script.py`, each a fresh process"
    import os, subprocess, tempfile
    from pathlib import Path
    root = Path(__file__).resolve().parents[1]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(root), os.environ.get('PYTHONPATH', '')]))
    cli = [sys.executable, '-c', 'import sys; from fastai_paranoid.cli import main; sys.exit(main(sys.argv[1:]))']
    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp) / 'gpu_fit.py'
        script.write_text(SCRIPT)
        runs = {'python script.py': [sys.executable, str(script)], 'check --no-sanity': cli + ['check', '--no-sanity', str(script)],
                'check': cli + ['check', str(script)]}
        best = {name: float('inf') for name in runs}
        for _ in range(repeats): # interleaved
            for name, cmd in runs.items():
                start = time.perf_counter()
                res = subprocess.run(cmd, env=env, capture_output=True, text=True)
                best[name] = min(best[name], time.perf_counter() - start)
                if res.returncode not in (0, 1): print(f"  {name}: exit {res.returncode}\n{res.stderr[-2000:]}")
    return best

if __name__ == '__main__':
    print(f"{torch.cuda.get_device_name()}; torch {torch.__version__}; resnet50 at {SIZE} px, bs {BS}, "
          f"{N_TRAIN} training + {N_VALID} validation images, mixed precision")
    print("\n1. host synchronizations in the guards' per-batch events")
    for name, make, mode in [('NaNGuard(check_every=10**9)', lambda: NaNGuard(check_every=10**9), 'error'),
                             ('StateLeakDetector()', lambda: StateLeakDetector(on_finding='log'), 'error'),
                             ('NaNGuard() (reads its flags every 32 batches)', lambda: NaNGuard(), 'warn')]:
        syncs, events, batches = no_sync_per_batch(make, mode)
        print(f"  {name:48s} {syncs} syncing events of {events} per-batch events over {batches} batches"
              + (" (set_sync_debug_mode('error'): none raised)" if mode == 'error' else f" (expected about {batches // 32 + 1})"))
    print(f"\n2. fit time, 1 epoch, best of {REPEATS}")
    learner([]).fit(1, 1e-3)   # warm-up: cuDNN autotuning, allocator
    base = fit_seconds(lambda: [])
    print(f"  {'no guard':32s} {base:6.2f} s")
    for name, make in [('NaNGuard', lambda: [NaNGuard()]), ('NaNGuard(watch_modules=False)', lambda: [NaNGuard(watch_modules=False)]),
                       ('StateLeakDetector', lambda: [StateLeakDetector(on_finding='log')]),
                       ('both', lambda: [NaNGuard(), StateLeakDetector(on_finding='log')])]:
        s = fit_seconds(make)
        print(f"  {name:32s} {s:6.2f} s  x{s / base:.3f}")
    print("\n3. the sanity checks on the GPU Learner")
    checks, epoch, report = sanity_seconds()
    print(f"  learn.sanity_check(): {checks:.2f} s = {checks / epoch:.2f} x one epoch of fit ({epoch:.2f} s)")
    for r, t in zip(report.results, report.seconds): print(f"    {r.name:28s} {r.verdict:8s} {t:6.2f} s")
    print("\n4. fastai-paranoid check on a script fitting it for one epoch (fastest of 2 fresh processes)")
    best = command_seconds()
    plain = best['python script.py']
    for name, t in best.items():
        target = {'check --no-sanity': f"  (target <= 1.1 x + 1 s = {1.1 * plain + 1:.1f} s)", 'check': "  (target <= 1.2)"}.get(name, '')
        print(f"  {name:20s} {t:7.1f} s  x{t / plain:.2f}{target}")
