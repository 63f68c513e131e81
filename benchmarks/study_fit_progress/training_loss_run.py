"""A data study (stop 46): TrainingLossGuard's verdict and every step's training loss, per fit of each mutant of the given
operators and of the originals (ORIG), seed 0. Run from the repository root:
`python benchmarks/study_fit_progress/training_loss_run.py ORIG,shuffle_labels,... OUT.jsonl`; then
`python benchmarks/study_fit_progress/training_loss_eval.py OUT.jsonl [HEALTHY.json]` prints the levels the guard's rule gives.
The results of stop 46 are benchmarks/results/training_loss_study_s39.jsonl."""
import sys, json
from pathlib import Path
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE)); sys.path.insert(0, str(HERE.parent)); sys.path.insert(0, str(HERE.parent / 'mutants'))
import runner
from bench_mutants import population
from pipelines import PIPELINES
want_ops = sys.argv[1].split(',')
out = open(sys.argv[2], 'a')
items = [m for m in population() if m['op'] in want_ops]
if 'ORIG' in want_ops: items = [{'id': f'{p}__original', 'op': 'original', 'text': PIPELINES[p].text} for p in PIPELINES] + items
for m in items:
    text = (f"import sys; sys.path.insert(0, {str(HERE)!r}); import training_loss_probe\n" + m['text'] +
            "\nimport mdata, training_loss_probe as _p; mdata.RESULT['probe'] = list(_p.STATS)\n")
    r = runner.run(text, 0, 300)
    out.write(json.dumps({'id': m['id'], 'op': m['op'], 'score': r.get('score'), 'error': r.get('error'), 'probe': r.get('probe')}) + '\n'); out.flush()
