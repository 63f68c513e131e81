"""Are `learn.sanity_check()`'s verdicts decided by work, not by the machine's load? (issue 25, part 1)

Runs `learn.sanity_check()` on Learners of different families, first on a quiet machine, then beside 3 busy-loop processes
(`python -c 'while 1: pass'`, each bounded by `timeout` and killed at the end), and prints per Learner and check the two
verdicts side by side, whether the measured numbers are identical, and the seconds each run took. Every Learner is built
fresh from the same seed for each run. The verdicts and numbers must be identical; the seconds are not (they are what load
changes).

Learners: an MLP and seed 001's small CNN on scikit-learn's digits, `vision_learner(resnet18, pretrained=False)` on small
images, a tabular classifier, a collaborative-filtering model and an AWD-LSTM text classifier (the calibration corpus's).

The wall-clock safety net (`budget=`, each check's seconds before it is stopped as 'incomplete') is the default (60 s on
CPU) unless `--budget` says otherwise: on a 2-core machine shared with other jobs, 3 busy loops slow a step 3-10x, and
resnet18's check_lr (15 steps by its work allowance) then runs past 60 s and is 'incomplete' in the busy run, the one
difference the safety net is allowed to make (it never judges on less work). `--budget 600` keeps it out of the way.

Run by hand from the repository root: `python benchmarks/bench_determinism.py [--busy 3] [--budget S] [--only NAME ...]
[--quiet-only]`. Exits 1 when a verdict or a number differs."""
import argparse, math, os, signal, subprocess, sys, time, warnings
from functools import partial
import torch
from fastai.losses import CrossEntropyLossFlat
from fastai_paranoid.fixtures import small_cnn, tensor_dls, load_digits_tensors, split_per_class
from fastai_paranoid.fresh import fresh_learner
from fastai_paranoid.calibration import _vision, _tabular, _text, _seeded, _collab_learner, ratings_dls
from torchvision.models import resnet18
import fastai_paranoid.sanity # learn.sanity_check()

torch.set_num_threads(1)

def _digits(flat=False, bs=64):
    x, y = load_digits_tensors()
    tr, va = split_per_class(y, seed=0)
    x = (x - x[tr].mean()) / x[tr].std()
    if flat: x = x.flatten(1)
    return tensor_dls(x[tr], y[tr], x[va], y[va], bs=bs)

def _mlp():
    return torch.nn.Sequential(torch.nn.Linear(64, 64), torch.nn.ReLU(), torch.nn.Linear(64, 10))

LEARNERS = {
    'MLP on digits': lambda: fresh_learner(partial(_digits, flat=True), _mlp, loss_func=CrossEntropyLossFlat(), lr=3e-3),
    'small CNN on digits': lambda: fresh_learner(_digits, partial(small_cnn, n_out=10, size=8), loss_func=CrossEntropyLossFlat(), lr=3e-3),
    'resnet18, 32 px images': lambda: _vision(0, resnet18),
    'tabular classifier': lambda: _tabular(0),
    'collab': lambda: _seeded(0, _collab_learner, ratings_dls(seed=0), n_factors=8, y_range=(0, 5.5)),
    'text AWD-LSTM classifier': lambda: _text(0),
}

def run_all(names, budget=None)->dict:
    "name -> (report, seconds)"
    res = {}
    for name in names:
        learn = LEARNERS[name]()
        start = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter('ignore')
            report = learn.sanity_check(on_finding=None, progress=False, budget=budget)
        res[name] = (report, time.perf_counter() - start)
        print(f"  {name}: {report.table.title} in {res[name][1]:.1f} s", file=sys.stderr, flush=True)
    return res

def _same(a, b)->bool:
    "Measured numbers equal (nan equal to nan)"
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b): return True
    if isinstance(a, dict) and isinstance(b, dict): return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)): return len(a) == len(b) and all(map(_same, a, b))
    return a == b

def busy_loops(n:int, seconds:int=3600)->list:
    "`n` busy loops, each in a process group of its own: `timeout` and the python it runs (killing `timeout` alone left the loops running)"
    return [subprocess.Popen(['timeout', str(seconds), sys.executable, '-c', 'while 1: pass'], start_new_session=True) for _ in range(n)]

def stop_loops(procs:list):
    "Kill each busy loop's whole process group"
    for proc in procs:
        try: os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError: pass
    for proc in procs: proc.wait()

def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument('--busy', type=int, default=3, help="busy-loop processes beside the second run")
    p.add_argument('--only', nargs='*', default=None, help="Learners to run (default: all)")
    p.add_argument('--budget', type=float, default=None, help="each check's wall-clock safety net in seconds (default: sanity_check's, 60 on CPU)")
    p.add_argument('--quiet-only', action='store_true', help="one quiet run, no comparison (to measure seconds per check)")
    opts = p.parse_args()
    names = opts.only or list(LEARNERS)
    print("quiet run", file=sys.stderr)
    quiet = run_all(names, opts.budget)
    if opts.quiet_only:
        for name in names:
            report, secs = quiet[name]
            print(f"\n## {name}: {report.table.title}, {secs:.1f} s")
            for r, s in zip(report.results, report.seconds): print(f"  {r.name:28s} {r.verdict:10s} {s:6.2f} s")
        return 0
    print(f"run beside {opts.busy} busy loops", file=sys.stderr)
    procs = busy_loops(opts.busy)
    try: busy = run_all(names, opts.budget)
    finally: stop_loops(procs)
    differ = 0
    for name in names:
        (rq, sq), (rb, sb) = quiet[name], busy[name]
        print(f"\n## {name}: quiet {sq:.1f} s, busy {sb:.1f} s")
        print(f"  {'check':28s} {'quiet':10s} {'busy':10s} {'numbers':9s} {'s quiet':>8s} {'s busy':>8s}  key numbers")
        for a, b, s_a, s_b in zip(rq.results, rb.results, rq.seconds, rb.seconds):
            same_numbers = _same(a.measured, b.measured) and a.message == b.message
            same = a.verdict == b.verdict and same_numbers
            differ += not same
            key = {k: (round(v, 4) if isinstance(v, float) else v) for k, v in list(a.measured.items())[:4]}
            print(f"  {a.name:28s} {a.verdict:10s} {b.verdict:10s} {'same' if same_numbers else 'DIFFER':9s} {s_a:8.2f} {s_b:8.2f}  {key}"
                  + ('' if same else '   <-- differs'))
    print(f"\n{differ} check results differ between the quiet and the busy runs (verdict, measured numbers or message).")
    return 1 if differ else 0

if __name__ == '__main__': sys.exit(main())
