"""Overhead of the real fit's eight guards (13_loopguards' LOOP_GUARDS and 14_fitchecks' FITCHECK_GUARDS), each its own callback and as
`paranoid()` installs them (all eight in one `FitGuards`; 'FitGuards + LoadGuard' is the arrangement before, LoadGuard as its own callback), on a resnet18 (64 px) and an MLP, as the ratio to a plain fit measured in the same run: plain and guarded fits interleaved in pairs,
the median of the pairs' ratios and the ratio of the best times (each round's order rotated, garbage collected before each fit and not during it), by CPU time of this process (`time.process_time`, with torch on one thread: another process's load
on a shared machine does not count) and by wall time. Run by hand: `python benchmarks/bench_fitguards_overhead.py [PAIRS]`; to
measure another version of the library, put it first on PYTHONPATH; `... PAIRS MLP` runs only the tasks whose name holds MLP; BENCH_EPOCHS=N fits N epochs, BENCH_VARIANTS=FitGuards,8 guards only those variants."""
import gc, os, sys, time, warnings, statistics
import torch
from torch import nn
import fastai.callback.progress # learn.no_bar()
from fastai.callback.core import Callback
import fastai_paranoid
from fastai_paranoid.fresh import fresh_learner
from fastai_paranoid.fixtures import xor_dls, build_mlp
from fastai_paranoid.loopguards import LOOP_GUARDS
from fastai_paranoid.fitchecks import FITCHECK_GUARDS
torch.set_num_threads(1)
GUARDS = LOOP_GUARDS + FITCHECK_GUARDS

def images_dls(n=320, size=64, bs=32):
    "bench_guards' random 64-px images in 2 classes: 10 training batches of 32, 2 validation batches"
    from fastai.data.core import DataLoaders
    from fastai.data.load import DataLoader
    g = torch.Generator().manual_seed(0)
    items = list(zip(torch.randn(n, 3, size, size, generator=g), torch.randint(0, 2, (n,), generator=g)))
    return DataLoaders(DataLoader(items, bs=bs, shuffle=True), DataLoader(items[:n // 5], bs=bs))

def resnet18_64():
    from torchvision.models import resnet18
    return resnet18(weights=None, num_classes=2)

def one(dls_fn, model_fn, cbs, epochs):
    "(CPU seconds, wall seconds) of `learn.fit(epochs)` on a fresh Learner with `cbs`"
    learn = fresh_learner(dls_fn, model_fn, cbs=cbs, loss_func=nn.CrossEntropyLoss())
    gc.collect() # the garbage of the fits before is collected before the clock starts, not inside whichever fit comes next
    gc.disable()
    try:
        with learn.no_bar(), learn.no_logging(), warnings.catch_warnings():
            warnings.simplefilter('ignore')
            cpu, wall = time.process_time(), time.perf_counter()
            learn.fit(epochs, 1e-3)
            return time.process_time() - cpu, time.perf_counter() - wall
    finally: gc.enable()

try: from fastai_paranoid.loopguards import CheapGuard
except ImportError: CheapGuard = None # a version of the library before it
variants = {'8 guards': lambda: [g() for g in GUARDS], '8 no-op Callbacks': lambda: [Callback() for _ in GUARDS]}
if CheapGuard is not None: variants['8 no-op CheapGuards'] = lambda: [type('Empty', (CheapGuard,), {})() for _ in GUARDS]
try: from fastai_paranoid.fitchecks import FitGuards, LoadGuard
except ImportError: FitGuards = None
if FitGuards is not None: variants['FitGuards + LoadGuard'] = lambda: [FitGuards(), LoadGuard()] # the same eight guards, LoadGuard on its own (FitGuards leaves its own out)
if FitGuards is not None and LoadGuard in getattr(fastai_paranoid.fitchecks, 'DISPATCHED_GUARDS', []):
    variants['FitGuards'] = lambda: [FitGuards()] # the eight guards as paranoid() installs them: LoadGuard inside
tasks = {'resnet18, 64 px (10+2 batches an epoch)': (images_dls, resnet18_64, 1),
         'MLP (XOR, width 256; 4+8 batches an epoch)': (lambda: xor_dls(n_valid=512), lambda: build_mlp(width=256), 5)}
pairs = int(sys.argv[1]) if len(sys.argv) > 1 else 7
if os.environ.get('BENCH_EPOCHS'): tasks = {name: (d, m, int(os.environ['BENCH_EPOCHS'])) for name, (d, m, _) in tasks.items()} # longer fits: steadier pairs
if os.environ.get('BENCH_VARIANTS'): variants = {name: v for name, v in variants.items() if any(w in name for w in os.environ['BENCH_VARIANTS'].split(','))}
wanted = sys.argv[2:]
if wanted: tasks = {name: t for name, t in tasks.items() if any(w in name for w in wanted)}
print(f"fastai_paranoid from {fastai_paranoid.__file__}; {pairs} interleaved pairs per variant; median of the pairs' ratios")
for task, (dls_fn, model_fn, epochs) in tasks.items():
    one(dls_fn, model_fn, [], epochs) # warm-up: first-call costs (imports, allocator) out of the pairs
    times = {name: [] for name in ['plain', *variants]}
    names = list(times)
    for i in range(pairs): # each round in another order (rotated): no variant always runs first, right after the previous round
        for name in names[i % len(names):] + names[:i % len(names)]:
            times[name].append(one(dls_fn, model_fn, variants[name]() if name in variants else [], epochs))
    plain_cpu = statistics.median(c for c, _ in times['plain'])
    print(f"{task}: plain fit of {epochs} epochs, median {plain_cpu:.3f} s CPU", flush=True)
    for name in variants:
        cpu_ratio = statistics.median(c / p for (c, _), (p, _) in zip(times[name], times['plain']))
        wall_ratio = statistics.median(w / q for (_, w), (_, q) in zip(times[name], times['plain']))
        best_ratio = min(c for c, _ in times[name]) / min(c for c, _ in times['plain'])
        print(f"  {name:22s} x{cpu_ratio:.3f} CPU, x{wall_ratio:.3f} wall (medians of the pairs' ratios); ratio of the best CPU times x{best_ratio:.3f}", flush=True)

# The same overhead measured from inside, where another process's load cannot add noise to a ratio of two fits: the CPU time spent
# in the guards' own `__call__` (the dispatch and the guards' work; nested calls counted once) during each guarded fit, as a share of
# that fit's CPU time; plus what fastai's `_call_one` pays per extra callback on each event (sorting `learn.cbs`, one call), timed
# with a micro-benchmark (best of repeats) and multiplied by the events of the fit. Reported as the median over the fits.
# The timer's own cost is measured on a no-op call wrapped the same way and taken out (what it adds inside the timed span, and
# what it adds to the fit); the caches that torch's kernels leave cold still count as the guards'.
# Measured on this machine, a `CheapGuard` or `FitGuards` costs 0.2-0.6 us on an event it does not handle (best of repeats),
# against ~16 us for a plain fastai `Callback`; the rest is the guards' work (fingerprints at before_fit/after_fit, the runs test).
if CheapGuard is not None and FitGuards is not None:
    import timeit
    from fastai.learner import Learner
    spent, depth, n_timed = [0], [0], [0] # ns inside the guards, nesting, top-level timed calls
    original = CheapGuard.__call__
    def timed_call(self, event_name):
        if depth[0]: return original(self, event_name)
        depth[0] += 1
        n_timed[0] += 1
        start = time.process_time_ns()
        try: return original(self, event_name) if type(self).__call__ is timed_call else type(self).__call__.__wrapped__(self, event_name)
        finally:
            spent[0] += time.process_time_ns() - start
            depth[0] -= 1
    def count_events(learn):
        n = [0]
        call_one = learn._call_one
        def counting(event_name):
            n[0] += 1
            return call_one(event_name)
        learn._call_one = counting
        return n
    def timing(call):
        "`call` (an event call) adding its CPU time to `spent`: one top-level timed call"
        def timed(self, event_name):
            depth[0] += 1
            n_timed[0] += 1
            start = time.process_time_ns()
            try: return call(self, event_name)
            finally:
                spent[0] += time.process_time_ns() - start
                depth[0] -= 1
        return timed
    fit_guards_call = FitGuards.__call__
    timed_fit_guards = timing(fit_guards_call)
    def noop(self, event_name): return None
    timed_noop = timing(noop) # the timer's own cost: the same wrapper around a call that does nothing
    def timer_cost(n=200000):
        "(ns the timer adds inside a timed span, ns a timed call of a no-op costs beyond the call itself), best of 5"
        inside, whole = [], []
        for _ in range(5):
            spent[0] = 0
            start = time.process_time_ns()
            for _ in range(n): timed_noop(None, 'x')
            timed = time.process_time_ns() - start
            start = time.process_time_ns()
            for _ in range(n): noop(None, 'x')
            whole.append((timed - (time.process_time_ns() - start)) / n)
            inside.append(spent[0] / n)
        return min(inside), min(whole)
    t_in, t_whole = timer_cost()
    print(f"the timer: {t_in:.0f} ns inside a timed span, {t_whole:.0f} ns per timed call in all (taken out below)")
    for task, (dls_fn, model_fn, epochs) in tasks.items():
        for name in [n for n in variants if n in ('8 guards', 'FitGuards + LoadGuard', 'FitGuards')]:
            shares, per_event = [], []
            for _ in range(pairs):
                CheapGuard.__call__, FitGuards.__call__ = timed_call, timed_fit_guards
                timed_call.__wrapped__ = original
                try:
                    learn = fresh_learner(dls_fn, model_fn, cbs=variants[name](), loss_func=nn.CrossEntropyLoss())
                    n_events = count_events(learn)
                    spent[0] = n_timed[0] = 0
                    with learn.no_bar(), learn.no_logging(), warnings.catch_warnings():
                        warnings.simplefilter('ignore')
                        cpu = time.process_time_ns()
                        learn.fit(epochs, 1e-3)
                        cpu = time.process_time_ns() - cpu
                finally: CheapGuard.__call__, FitGuards.__call__ = original, fit_guards_call
                n_guards = len([cb for cb in learn.cbs if isinstance(cb, CheapGuard)])
                plain_cbs = [cb for cb in learn.cbs if not isinstance(cb, CheapGuard)]
                with_guards = learn.cbs
                sort_extra = max(0., min(timeit.repeat(lambda: with_guards.sorted('order'), number=2000, repeat=5)) -
                                 min(timeit.repeat(lambda: learn.cbs.__class__(plain_cbs).sorted('order'), number=2000, repeat=5))) / 2000 * 1e9
                outside = n_events[0] * sort_extra # fastai's sort of the longer list, per event
                inside = spent[0] - n_timed[0] * t_in # the guards' own time, without the timer's
                without = cpu - inside - outside - n_timed[0] * t_whole # the fit without the guards and without the timer
                shares.append((inside + outside) / max(without, 1))
                per_event.append(inside / max(n_events[0], 1))
            print(f"{task}: {name}: inside the guards {statistics.median(per_event) / 1e3:.2f} us per event ({n_events[0]} events a fit); "
                  f"with fastai's sort of the longer callback list, x{1 + statistics.median(shares):.4f} of the fit without them", flush=True)
