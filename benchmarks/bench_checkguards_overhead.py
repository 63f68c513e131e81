"""Overhead of the guards `fastai-paranoid check` added at stop 44 on a real fit: 37_outcome's `ConstantInputGuard` (two
reductions of each batch's inputs, on their device) and `TargetOrderGuard` (identity checks, a sort only where a callback replaced
the targets), 16a_frozeninit's `FrozenInitGuard` and 16b_dropout's `DropoutGuard` (once per fit), with `OutcomeGuard` beside them
as check adds it. Plain and guarded fits interleaved in one run, so that a shared machine's load hits both alike; reports the ratio
of the best times and the median of the pairs' ratios. Run by hand: `python benchmarks/bench_checkguards_overhead.py`."""
import statistics, sys
from pathlib import Path
import torch
import fastai.callback.progress # noqa: F401 (learn.no_bar())
torch.set_num_threads(1)
sys.path.insert(0, str(Path(__file__).resolve().parent))
from fastai_paranoid.outcome import OutcomeGuard, ConstantInputGuard, TargetOrderGuard
from fastai_paranoid.frozeninit import FrozenInitGuard
from fastai_paranoid.dropout import DropoutGuard
from fastai_paranoid.fixtures import digits_dls, digits_trunk, transfer_model, xor_dls, build_mlp
from bench_loopguards_overhead import one # a fit, timed

NEW = (ConstantInputGuard, TargetOrderGuard, FrozenInitGuard, DropoutGuard)

tasks = {'digits CNN (BatchNorm)': (lambda: digits_dls(bs=64), lambda: transfer_model(digits_trunk(), 10), 5, 5),
         'MLP (XOR, width 256)': (lambda: xor_dls(n_valid=512), lambda: build_mlp(width=256), 5, 7)}
for name, (dls_fn, model_fn, epochs, pairs) in tasks.items():
    runs = {'plain': [], 'new guards': [], 'new guards + OutcomeGuard': []}
    for _ in range(pairs):
        runs['plain'].append(one(dls_fn, model_fn, [], epochs))
        runs['new guards'].append(one(dls_fn, model_fn, [g() for g in NEW], epochs))
        runs['new guards + OutcomeGuard'].append(one(dls_fn, model_fn, [g() for g in NEW] + [OutcomeGuard()], epochs))
    base = runs['plain']
    print(f"{name} ({epochs} epochs, {pairs} interleaved triples): plain best {min(base):.3f}s; " + '; '.join(
        f"{k} best {min(v):.3f}s, ratio of bests x{min(v) / min(base):.3f}, median of ratios x{statistics.median(a / b for a, b in zip(v, base)):.3f}"
        for k, v in runs.items() if k != 'plain'), flush=True)
