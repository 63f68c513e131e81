"""The levels TrainingLossGuard's rule gives (its defaults: at least 20 steps, `loss_fall` at 0.001, the start at least 90% of the
constant's, weights moved < 1%: steps_too_small, decoupled decay keeping < 10%: weight_decay_dominates, else an info), recomputed
from recorded losses: per operator of a study file (training_loss_run.py), and on bench_loopguards_healthy's --json with
--training-loss. Usage: `python benchmarks/study_fit_progress/training_loss_eval.py STUDY.jsonl [HEALTHY.json]`"""
import json, sys
from collections import Counter
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from fastai_paranoid.outcome import loss_fall
def level(v, losses):
    if not v or len(losses) < 20: return None
    f = loss_fall(losses)
    if f is None or not (f['p'] < 1e-3 and v['start_loss'] >= 0.9 * v['constant_loss']): return None
    return 'weight_decay_dominates' if (v['decay_kept'] is not None and v['decay_kept'] < 0.1) else 'steps_too_small' if v['moved'] < 0.01 else 'info'
if len(sys.argv) > 2:
    runs = [r for r in json.load(open(sys.argv[2])) if not r['error']]
    c = Counter(level((r.get('training_loss') or {}).get('result'), (r.get('training_loss') or {}).get('losses') or []) for r in runs)
    print(f"healthy Learners: {len(runs)} trained; findings: {dict((k, n) for k, n in c.items() if k)}; none: {c[None]}")
by = {}
for line in open(sys.argv[1]):
    r = json.loads(line)
    pr = (r['probe'] or [None])[-1]
    by.setdefault(r['op'], Counter())[level(pr and pr['result'], pr['losses'] if pr else [])] += 1
for op, c in by.items(): print(f"{op:25s} of {sum(c.values()):3d}: " + ', '.join(f"{k} {n}" for k, n in c.items() if k) + f"; none {c[None]}")
