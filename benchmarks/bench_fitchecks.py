"""False alarms of 14_fitchecks' guards (LossShapeGuard, FrozenHeadGuard, LoadGuard, DataOrderGuard) on random healthy
Learners: the draws of `bench_healthy500.py` (MLP on digits, small CNN, resnet18 through a DataBlock, tabular_learner,
an unscaled regression, collab_learner), each fitted for 2 epochs with the four guards, then saved and loaded back with
`strict=False` (a load that matches). Every finding is a false alarm; per guard, the count with a 95% Wilson interval.

Run by hand from the repository root: `python benchmarks/bench_fitchecks.py [--n 100] [--seed 0] [--start 0]`."""
import argparse, sys, tempfile, time, warnings
from collections import Counter
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_healthy500 import draw, make_learner, wilson

def run_one(d:dict) -> dict:
    "Fit draw `d`'s Learner 2 epochs with the fit guards, save it and load it back with strict=False: the findings' kinds"
    import torch
    torch.set_num_threads(1)
    from fastai_paranoid.core import finding_sink
    from fastai_paranoid.fitchecks import FITCHECK_GUARDS
    import fastai.callback.progress # learn.no_bar
    found, start = [], time.perf_counter()
    try:
        learn = make_learner(d)
        learn.path = Path(tempfile.mkdtemp())
        for guard in FITCHECK_GUARDS: learn.add_cb(guard(on_finding='log'))
        learn('after_create')
        with finding_sink(found.append), warnings.catch_warnings(), learn.no_bar(), learn.no_logging():
            warnings.simplefilter('ignore')
            learn.fit(2, 1e-3)
            learn.save('model')
            learn.load('model', strict=False)
        learn.remove_cbs([cb for cb in learn.cbs if isinstance(cb, tuple(FITCHECK_GUARDS))])
    except Exception as e:
        return {**d, 'error': f'{type(e).__name__}: {e}', 'found': [], 'seconds': time.perf_counter() - start}
    return {**d, 'error': '', 'found': [(f.guard, f.kind, f.level, f.message[:300]) for f in found], 'seconds': time.perf_counter() - start}

if __name__ == '__main__':
    ap = argparse.ArgumentParser()
    ap.add_argument('--n', type=int, default=100)
    ap.add_argument('--seed', type=int, default=0)
    ap.add_argument('--start', type=int, default=0) # the first draw's index (to extend an earlier run)
    args = ap.parse_args()
    runs = []
    for i in range(args.start, args.start + args.n):
        r = run_one(draw(i, args.seed))
        runs.append(r)
        print(f"draw {i:3d} {r['family']:<11} n={r['n']:<4} {r['seconds']:5.1f}s  " + (r['error'][:120] or ', '.join(k for _, k, _, _ in r['found']) or 'silent'), flush=True)
    ok = [r for r in runs if not r['error']]
    print(f"\n{len(runs)} draws, {len(ok)} ran; by family: {dict(Counter(r['family'] for r in ok))}")
    for guard in ['LossShapeGuard', 'FrozenHeadGuard', 'LoadGuard', 'DataOrderGuard', 'ALL']:
        alarmed = [r for r in ok if any(g == guard or guard == 'ALL' for g, _, level, _ in r['found'] if level != 'info')]
        lo, hi = wilson(len(alarmed), len(ok))
        print(f"{guard:<16} false alarms {len(alarmed):>3}/{len(ok):<4} 95% Wilson [{lo:.3f}, {hi:.3f}]")
    for r in ok:
        for g, k, level, msg in r['found']: print(f"  draw {r['i']} ({r['family']}): {g} {k} {level}: {msg}")
