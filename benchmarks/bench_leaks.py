"""Cost of the state-leak detector, as ratios against a baseline measured in the same run.

    python benchmarks/bench_leaks.py            # all three
    python benchmarks/bench_leaks.py fingerprint fit rss

1. fingerprint: `core.fingerprints` on a ResNet-50-sized state (25.6M parameters plus Adam's two moments, fp32: 483
   tensors, 307 MB) against a plain read of the same tensors. The plain read is one `t.sum()` per tensor (results
   kept, not added up): PyTorch's vectorized float sum, which reads every element once and on one core runs at about
   the memory bandwidth for tensors larger than the cache; it pays the same per-tensor Python overhead a fingerprint
   does, and nothing more. Goal <= 1.2, batched (`fingerprints(tensors)`) and one tensor at a time
   (`[fingerprint(t) for t in tensors]`). On the CPU the fingerprint's sums come from a compiled kernel that reads
   each tensor once; the same sums with PyTorch's ops (what runs without a C compiler, `FASTAI_PARANOID_NATIVE=0`,
   and on other devices) read it twice, measured too (`torch ops`, no goal).
2. fit: wall time of `fit` with `StateLeakDetector` against without, on the small CNN fixture and on resnet18 at
   32x32, CPU. Targets <= 1.03 and <= 1.01. Also the CPU-time ratio, and the in-fit accounting ratio
   wall / (wall - time spent in the detector's events), which a busy machine distorts least.
3. rss: peak RSS of a resnet18 fit with the detector against without, each in its own process. Target <= +5%.

The machine may be shared: each ratio is measured A B A B (interleaved) several times and the median is reported,
with the load average. Timings are single-threaded (OMP_NUM_THREADS=1, torch.set_num_threads(1)) unless
`--threads N` (the plain read and the fingerprint then both use N threads).
"""
import os
os.environ.setdefault('OMP_NUM_THREADS', '1')
import argparse, json, resource, statistics, subprocess, sys, tempfile, time, warnings
import torch
from torch import nn
import fastai.callback.progress # Learner.no_bar

torch.set_num_threads(1)
warnings.simplefilter('ignore', FutureWarning)

def load(): return os.getloadavg()[0]

def interleaved(a, b, reps):
    "Median of b/a over `reps` interleaved pairs (A B, A B, ...), and the times"
    ta, tb = [], []
    for _ in range(reps):
        ta.append(a()); tb.append(b())
    return statistics.median(y / x for x, y in zip(ta, tb)), ta, tb

def timed(f):
    t0 = time.perf_counter(); f(); return time.perf_counter() - t0

# 1. fingerprint throughput
def bench_fingerprint(reps=11):
    from torchvision.models import resnet50
    from fastai_paranoid import core
    from fastai_paranoid.core import fingerprint, fingerprints
    params = [p.detach() for p in resnet50().parameters()]
    tensors = params + [torch.randn_like(p) for p in params] + [torch.rand_like(p) for p in params]
    n = sum(t.numel() for t in tensors)
    kernel = core._native() if hasattr(core, '_native') else None # (older versions: PyTorch ops only)
    def torch_ops(f):
        "`f` with the compiled kernel switched off: the sums by PyTorch's ops"
        def g():
            saved, core._native_kernel = core._native_kernel, None
            try: return f()
            finally: core._native_kernel = saved
        return g
    plain = lambda: timed(lambda: [t.sum() for t in tensors])
    batched = lambda: timed(lambda: fingerprints(tensors))
    one_by_one = lambda: timed(lambda: [fingerprint(t) for t in tensors])
    plain(); batched(); one_by_one() # warm up (and build the kernel)
    if kernel is not None: torch_ops(batched)()
    r_batch, ta, tb = interleaved(plain, batched, reps)
    r_single, _, tc = interleaved(plain, one_by_one, reps)
    print(f"fingerprint: {len(tensors)} tensors, {n / 1e6:.1f}M fp32 elements, {torch.get_num_threads()} thread(s); "
          f"plain read {statistics.median(ta) * 1e3:.1f} ms; sums by {'the compiled kernel' if kernel is not None else 'PyTorch ops'}")
    print(f"  fingerprints(tensors)      {statistics.median(tb) * 1e3:7.1f} ms  ratio {r_batch:.2f}  (goal <= 1.2)")
    print(f"  [fingerprint(t) for t ...] {statistics.median(tc) * 1e3:7.1f} ms  ratio {r_single:.2f}  (goal <= 1.2)")
    res = {'fingerprint_batched': r_batch, 'fingerprint_one_by_one': r_single}
    if kernel is not None:
        r_torch, _, td = interleaved(plain, torch_ops(batched), max(3, reps // 2))
        r_torch1, _, te = interleaved(plain, torch_ops(one_by_one), max(3, reps // 2))
        print(f"  torch ops: fingerprints    {statistics.median(td) * 1e3:7.1f} ms  ratio {r_torch:.2f}")
        print(f"  torch ops: one by one      {statistics.median(te) * 1e3:7.1f} ms  ratio {r_torch1:.2f}")
        res.update(fingerprint_torch_ops=r_torch, fingerprint_torch_ops_one_by_one=r_torch1)
    return res

# 2. fit wall time
def _small_cnn_learner(cbs):
    from fastai.learner import Learner
    from fastai_paranoid.fixtures import random_image_dls, small_cnn
    from fastai_paranoid.fresh import seed_everything
    seed_everything(0)
    return Learner(random_image_dls(n_train=512, n_valid=128, bs=32), small_cnn(), loss_func=nn.CrossEntropyLoss(), cbs=cbs)

def _resnet18_learner(cbs):
    from fastai.learner import Learner
    from torchvision.models import resnet18
    from fastai_paranoid.fixtures import random_image_dls
    from fastai_paranoid.fresh import seed_everything
    seed_everything(0)
    return Learner(random_image_dls(n_train=256, n_valid=64, size=32, c_in=3, bs=32), resnet18(num_classes=4),
                   loss_func=nn.CrossEntropyLoss(), cbs=cbs)

def _timed_detector():
    "A StateLeakDetector that adds up the time spent in its own events (its hooks run only after a draw is seen)"
    from fastai_paranoid.leaks import StateLeakDetector
    class TimedDetector(StateLeakDetector):
        spent = 0.
        def __call__(self, event_name):
            t0 = time.perf_counter()
            try: return super().__call__(event_name)
            finally: self.spent += time.perf_counter() - t0
    return TimedDetector(on_finding='log')

def _fit_time(make, detector, epochs):
    "Wall time, this process's CPU time, and the time spent in the detector's events, of `fit` on a new seeded Learner"
    learn = make([_timed_detector()] if detector else [])
    with learn.no_bar(), learn.no_logging(), tempfile.TemporaryDirectory() as d:
        learn.path = learn.model_dir = __import__('pathlib').Path(d)
        wall, cpu = time.perf_counter(), time.process_time()
        learn.fit(epochs, 1e-3)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    return wall, cpu, (learn.timed_detector.spent if detector else 0.)

def bench_fit(reps=5):
    """Three estimates of the with/without ratio from the same interleaved runs: wall time, CPU time (less sensitive to
    other processes), and in-fit accounting, wall / (wall - time in the detector's events), which other processes
    slow down on both sides alike"""
    res = {}
    for name, make, epochs, target in [('small CNN', _small_cnn_learner, 4, 1.03), ('resnet18 32x32', _resnet18_learner, 2, 1.01)]:
        _fit_time(make, False, 1) # warm up
        without, with_ = [], []
        for _ in range(reps):
            without.append(_fit_time(make, False, epochs)); with_.append(_fit_time(make, True, epochs))
        wall = statistics.median(b[0] / a[0] for a, b in zip(without, with_))
        cpu = statistics.median(b[1] / a[1] for a, b in zip(without, with_))
        inside = statistics.median(b[0] / (b[0] - b[2]) for b in with_)
        print(f"fit {name} ({epochs} epochs, target <= {target}): without {statistics.median(a[0] for a in without):.2f} s; "
              f"median ratios: wall {wall:.3f}, cpu {cpu:.3f}, in-fit accounting {inside:.4f} "
              f"(detector {statistics.median(b[2] for b in with_) * 1e3:.1f} ms per fit)")
        print(f"  wall ratios {[round(b[0] / a[0], 3) for a, b in zip(without, with_)]}")
        res[f'fit {name}'] = (wall, cpu, inside)
    return res

# 3. peak RSS
def _rss_child(detector):
    _fit_time(_resnet18_learner, detector, 1)
    print(json.dumps({'maxrss_kb': resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}))

def bench_rss(reps=3):
    def child(detector):
        out = subprocess.run([sys.executable, __file__, '--rss-child', 'with' if detector else 'without'],
                             capture_output=True, text=True, check=True).stdout
        return json.loads(out.strip().splitlines()[-1])['maxrss_kb']
    without, with_ = [], []
    for _ in range(reps):
        without.append(child(False)); with_.append(child(True))
    r = statistics.median(w / wo for w, wo in zip(with_, without))
    print(f"peak RSS resnet18: without {statistics.median(without) / 1024:.0f} MiB, with detector "
          f"{statistics.median(with_) / 1024:.0f} MiB, median ratio {r:.3f} (target <= 1.05)")
    return {'peak rss resnet18': r}

if __name__ == '__main__':
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('which', nargs='*', default=['fingerprint', 'fit', 'rss'])
    parser.add_argument('--rss-child', choices=['with', 'without'])
    parser.add_argument('--threads', type=int, default=1, help="torch.set_num_threads for the timings")
    opts = parser.parse_args()
    torch.set_num_threads(opts.threads)
    if opts.rss_child:
        _rss_child(opts.rss_child == 'with')
        sys.exit(0)
    print(f"load average at start: {load():.2f} ({os.cpu_count()} cores); /proc/loadavg: {open('/proc/loadavg').read().strip() if os.path.exists('/proc/loadavg') else '-'}")
    results = {}
    if 'fingerprint' in opts.which: results.update(bench_fingerprint())
    if 'fit' in opts.which: results.update(bench_fit())
    if 'rss' in opts.which: results.update(bench_rss())
    print(f"load average at end: {load():.2f}")
