"""False alarms of the loop guards (13_loopguards: StaleGradGuard, LostHyperGuard, UpdateGuard, UnregisteredTensorGuard)
on N random healthy Learners: bench_healthy500's draws (MLP on digits, small CNN, resnet18 from scratch, tabular,
regression, collab), each trained for real with the guards attached, in one of fastai's usual ways picked by the draw:
`fit` (fastai's Adam), `fit_one_cycle`, `fit` with `GradientAccumulation`, `fit_one_cycle` on a PyTorch AdamW in
`OptimWrapper`, `fit` with `ReduceLROnPlateau`, or (vision) `fine_tune`. Every finding at level warning or error is a false
alarm (what makes `fastai-paranoid check` exit 1); info notes are counted apart.

Run by hand from the repository root: `python benchmarks/bench_loopguards_healthy.py [--n 60] [--seed 0] [--start 0] [--epochs 2] [--fit-guards]`
(`--fit-guards`: the eight guards of 13_loopguards and 14_fitchecks as `paranoid()` installs them, in one `FitGuards`;
`--outcome`: 37_outcome's `OutcomeGuard` (every kind, regressions included), `ConstantInputGuard`, `TargetOrderGuard`, 16a_frozeninit's `FrozenInitGuard` and 16b_dropout's `DropoutGuard`, beside them;
`--steps`: 37b_steps's `ShrunkGradGuard` and `WeightDecayGuard`, with fastai's `GradientClip(max_norm=1.0)` added to every fit,
so that a healthy clip is in every draw)."""
import argparse, json, sys, time, warnings
from collections import Counter
from functools import partial
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_healthy500 import draw, make_learner, wilson

WAYS = ['fit', 'fit_one_cycle', 'gradient_accumulation', 'optimwrapper_one_cycle', 'reduce_lr_on_plateau', 'fine_tune']

def train(learn, way:str, epochs:int):
    import torch
    from fastai.callback.training import GradientAccumulation
    from fastai.callback.tracker import ReduceLROnPlateau
    from fastai.optimizer import OptimWrapper
    if way == 'fit': learn.fit(epochs, 1e-3)
    elif way == 'fit_one_cycle': learn.fit_one_cycle(epochs, 1e-3)
    elif way == 'gradient_accumulation': # n_acc counts items from the fit's start: no more than the fit has (a fit of 2 batches with 3 x bs never steps)
        fit_items = len(learn.dls.train) * learn.dls.bs * epochs
        learn.fit(epochs, 1e-3, cbs=GradientAccumulation(n_acc=min(3 * learn.dls.bs, fit_items)))
    elif way == 'optimwrapper_one_cycle':
        learn.opt_func = partial(OptimWrapper, opt=torch.optim.AdamW)
        learn.fit_one_cycle(epochs, 1e-3)
    elif way == 'reduce_lr_on_plateau': learn.fit(epochs + 1, 1e-3, cbs=ReduceLROnPlateau(patience=0, min_delta=0.5))
    elif way == 'fine_tune': learn.fine_tune(epochs - 1, 1e-3)
    else: raise ValueError(way)

def run_one(d:dict, epochs:int, fit_guards:bool=False, outcome:bool=False, outcome_kw:dict|None=None, training_loss:bool=False,
            steps:bool=False) -> dict:
    import contextlib, io, torch
    import fastai.callback.progress # noqa: F401 (learn.no_bar; the first draws' families do not import it)
    import fastai.callback.schedule # noqa: F401 (fit_one_cycle: a run of --draws may start with a family that does not import it)
    torch.set_num_threads(1)
    from fastai_paranoid.core import finding_sink
    from fastai_paranoid.loopguards import LOOP_GUARDS
    way = WAYS[d['i'] % len(WAYS)]
    if way == 'fine_tune' and d['family'] != 'resnet18': way = 'fit_one_cycle' # freeze() needs a splitter's groups
    found, start = [], time.perf_counter()
    try:
        learn = make_learner(d)
        if fit_guards: # as paranoid() installs them: the eight guards in one FitGuards, given `after_create` as ParanoidInstaller gives it
            from fastai_paranoid.fitchecks import FitGuards
            guards = FitGuards()
            learn.add_cb(guards)
            guards('after_create') # LoadGuard wraps fastai's load_model from here on
        else: learn.add_cbs([g() for g in LOOP_GUARDS])
        guard = None
        if outcome:
            from fastai_paranoid.outcome import OutcomeGuard
            from fastai_paranoid.outcome import ConstantInputGuard, TargetOrderGuard
            from fastai_paranoid.frozeninit import FrozenInitGuard
            from fastai_paranoid.dropout import DropoutGuard
            guard = OutcomeGuard(**(outcome_kw or {}))
            learn.add_cbs([guard, ConstantInputGuard(), TargetOrderGuard(), FrozenInitGuard(), DropoutGuard()])
        tl = None
        if training_loss:
            from fastai_paranoid.outcome import TrainingLossGuard
            tl = type('TrainingLossGuard', (TrainingLossGuard,), {})()
            learn.add_cb(tl)
        if steps: # a healthy clip (fastai's default max_norm) in every fit, and the two guards of the steps
            from fastai.callback.training import GradientClip
            from fastai_paranoid.steps import ShrunkGradGuard, WeightDecayGuard
            learn.add_cbs([GradientClip(max_norm=1.0), ShrunkGradGuard(), WeightDecayGuard()])
        with finding_sink(found.append), warnings.catch_warnings(), learn.no_bar(), learn.no_logging(), contextlib.redirect_stdout(io.StringIO()):
            warnings.simplefilter('ignore')
            train(learn, way, epochs)
    except Exception as e:
        return {**d, 'way': way, 'error': f'{type(e).__name__}: {e}'[:300], 'findings': [], 'seconds': time.perf_counter() - start}
    verdict = guard.verdict() if guard is not None else None # the last fit's outcome, judged or not (`reason`), for the margins below
    tl_record = None if tl is None else {'result': getattr(tl, 'result', None), 'reason': getattr(tl, 'reason', ''),
                                         'losses': [float(x) for l in getattr(tl, 'losses', []) for x in l.reshape(-1)]}
    return {**d, 'way': way, 'error': '', 'seconds': time.perf_counter() - start, 'outcome': verdict,
            'outcome_reason': getattr(guard, 'reason', ''), 'findings': [(f.kind, f.level, f.message[:300]) for f in found],
            'training_loss': tl_record}

def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--n', type=int, default=60)
    parser.add_argument('--seed', type=int, default=0)
    parser.add_argument('--draws', type=int, nargs='*', help='only these draws (by index)')
    parser.add_argument('--start', type=int, default=0, help='first draw (draws are fixed by index and seed, so a stopped run resumes where it stopped)')
    parser.add_argument('--epochs', type=int, default=2)
    parser.add_argument('--fit-guards', action='store_true', help="the eight guards of the real fit as paranoid() installs them (one FitGuards), not the four loop guards")
    parser.add_argument('--outcome', action='store_true', help="also OutcomeGuard, ConstantInputGuard, TargetOrderGuard, FrozenInitGuard and DropoutGuard (OutcomeGuard's verdicts at several margins are printed at the end)")
    parser.add_argument('--training-loss', action='store_true', help="also 37_outcome's TrainingLossGuard (a first fit whose training loss does not fall); its verdict and the losses go to --json")
    parser.add_argument('--steps', action='store_true', help="also 37b_steps's ShrunkGradGuard and WeightDecayGuard, with GradientClip(max_norm=1.0) in every fit")
    parser.add_argument('--json', help='write every run (findings, OutcomeGuard verdict) to this file')
    parser.add_argument('--outcome-min-steps', type=int, default=None, help="OutcomeGuard's min_steps (default: its own)")
    args = parser.parse_args(argv)
    runs = []
    for i in (args.draws or range(args.start, args.n)):
        r = run_one(draw(i, args.seed), args.epochs, args.fit_guards, args.outcome,
                    {} if args.outcome_min_steps is None else {'min_steps': args.outcome_min_steps}, args.training_loss, args.steps)
        runs.append(r)
        status = r['error'] or ('; '.join(f"{k} ({l})" for k, l, _ in r['findings']) or 'silent')
        print(f"{i:4d} {r['family']:11s} {r['way']:23s} n={r['n']:4d} {r['seconds']:5.1f}s  {status}", flush=True)
    ok = [r for r in runs if not r['error']]
    alarms = [r for r in ok if any(l in ('error', 'warning') for _, l, _ in r['findings'])]
    notes = Counter(k for r in ok for k, l, _ in r['findings'] if l == 'info')
    lo, hi = wilson(len(alarms), len(ok))
    print(f"\n{len(ok)} Learners trained ({len(runs) - len(ok)} crashed before or during the fit, not counted); "
          f"false alarms (warning or error): {len(alarms)} of {len(ok)} (95% interval {lo:.3f}-{hi:.3f}); info notes: {dict(notes) or 0}")
    for r in alarms:
        for k, l, m in r['findings']: print(f"  draw {r['i']} ({r['family']}, {r['way']}): {k} ({l}): {m}")
    print('by way:', dict(Counter(r['way'] for r in ok)), 'by family:', dict(Counter(r['family'] for r in ok)))
    if args.outcome: # what OutcomeGuard would report at other margins: the model saves less than that share of the constant's loss, at the bound
        judged = [r for r in ok if r.get('outcome')]
        print(f"OutcomeGuard judged {len(judged)} of {len(ok)} fits (not judged: {dict(Counter(r['outcome_reason'].split(':')[0][:60] for r in ok if not r.get('outcome')))})")
        for margin in (0.0, 0.02, 0.05, 0.1, 0.2):
            by = Counter(r['outcome']['kind'] for r in judged if r['outcome']['upper'] < margin * r['outcome']['constant_loss'])
            print(f"  margin {margin:.2f}: reported {sum(by.values())} of {len(ok)} ({dict(by)}); by kind judged: {dict(Counter(r['outcome']['kind'] for r in judged))}")
            for r in judged:
                v = r['outcome']
                if v['upper'] < margin * v['constant_loss']: print(f"    draw {r['i']} ({r['family']}, {r['way']}, {v['kind']}): model {v['model_loss']:.4g} constant {v['constant_loss']:.4g} upper {v['upper']:+.3g}")
    if args.json: Path(args.json).write_text(json.dumps(runs, default=str))

if __name__ == '__main__': main()
