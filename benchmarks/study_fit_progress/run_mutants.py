"""A data study (stop 45), not a benchmark of the package: per fit of each mutant of the given operators (or the originals: ORIG), seed 0,
what `probe.Probe` measured: the relative change of the weights over the fit, the training loss of its last batches over its first.
Run from the repository root: `python benchmarks/study_fit_progress/run_mutants.py OP1,OP2 OUT.jsonl` (or `ORIG OUT.jsonl`).
The results of stop 45 are benchmarks/results/fit_progress_study_s38.jsonl (faults that do not train, the originals, tuning mutants)."""
import sys, json, os
from pathlib import Path
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE)); sys.path.insert(0, str(HERE.parent)); sys.path.insert(0, str(HERE.parent / 'mutants'))
import probe, runner, mdata
from bench_mutants import population
from pipelines import PIPELINES
want_ops = sys.argv[1].split(',')
out = open(sys.argv[2], 'a')
items = [m for m in population() if m['op'] in want_ops] if 'ORIG' not in want_ops else []
if 'ORIG' in want_ops: items = [{'id': f'{p}__original', 'op': 'original', 'text': PIPELINES[p].text} for p in PIPELINES]
for m in items:
    text = f"import sys; sys.path.insert(0, {str(HERE)!r}); import probe\n" + m['text'] + "\nimport mdata, probe as _p; mdata.RESULT['probe'] = list(_p.STATS)\n"
    r = runner.run(text, 0, 300)
    out.write(json.dumps({'id': m['id'], 'op': m['op'], 'score': r.get('score'), 'error': r.get('error'), 'probe': r.get('probe')}) + '\n'); out.flush()
    print(m['id'], r.get('score'), r.get('error'), r.get('probe'), flush=True)
