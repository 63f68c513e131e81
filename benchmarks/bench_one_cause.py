"""One cause, one finding: run `fastai-paranoid check` on faults that each have one cause, and measure how many standing
findings each fault gets (target 1.0: the symptoms stand under their cause) and whether they name the planted cause.

The matrix: the planted bugs of tests/external/ (torchtest2's gallery as fastai Learners, users' reported bugs), each with the
finding kinds that name its cause (from its docstring's SHOULD BE CAUGHT line), and the cases of benchmarks/one_cause/ (issue
39's: one output under cross-entropy, a softmax or sigmoid before a loss that applies it, outputs [bs] against targets
[bs, 1], a y_range that excludes the targets...), each with its healthy twin (the fix applied), which must be clean.

A standing finding is one at warning or error whose `explained_by` is empty (a finding of a run before the findings' model
had no such field: every warning and error then stands). A fault is:
- caught when some standing finding names its cause;
- one finding when exactly one standing finding is left, and it names the cause.

The mutants (`--mutants FILE.json`, a bench_mutants run): issue 38's harmful fault mutants, each one planted change, so one
cause. Their check records are that run's; the finding kinds that name each one's cause are its operator's `names`
(benchmarks/mutants/operators.py, read now). They are scored in a table of their own, twice: over every harmful mutant
(a mutant nothing reports, or reports without naming its cause, counts against both figures), and over the caught ones.

Run from the repository root: `python benchmarks/bench_one_cause.py [--json out.json] [--workers 2] [--mutants FILE.json]`;
or `--from-json FILE` on an earlier run of this benchmark or of bench_cost (its 'check' runs) to score those records."""
import argparse, json, os, re, shutil, sys, tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EXTERNAL = ROOT / 'tests' / 'external'
CASES_DIR = Path(__file__).resolve().parent / 'one_cause'
sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_external import run_check

# the planted bugs of tests/external: the finding kinds that name each one's cause
EXTERNAL_CAUSES = {
    'tt2_bug_01_optimizer_before_head.py': {'check_optimizer_coverage', 'optimizer_params'},
    'tt2_bug_02_graph_cut.py': {'check_gradient_flow'},
    'tt2_bug_03_batch_first.py': {'check_batch_independence'},
    'tt2_bug_04_ignored_input.py': {'check_input_dependency'},
    'tt2_bug_05_mask_ignored.py': {'check_input_dependency'},
    'tt2_bug_06_frozen_still_trained.py': {'empty_freeze', 'check_frozen'},
    'tt2_bug_07_nan_grad_sqrt.py': {'check_gradient_flow', 'non_finite'},
    'tt2_bug_08_overconfident_init.py': {'check_loss_at_init'},
    'tt2_bug_09_dropout_at_inference.py': {'eval_random', 'check_valid_deterministic'},
    'tt2_bug_10_lr_too_small.py': {'check_lr', 'check_overfit_one_batch'},
    'tt2_bug_11_nan_after_training.py': {'non_finite', 'check_overfit_one_batch'},
    'tt2_bug_12_wrong_backward.py': {'check_gradient_correctness'},
    'user_bug_01_relu_logits.py': {'check_loss_activation'},
    'user_bug_02_ten_outputs_two_classes.py': {'check_loss_at_init'},
    'user_bug_03_noise_on_valid.py': {'check_valid_deterministic'},
    'user_bug_04_tracker_mae.py': {'check_tracker_monitor'},
    'user_bug_05_head_after_lr_find.py': {'check_optimizer_coverage', 'optimizer_params'},
    'user_bug_06_numpy_in_forward.py': {'check_gradient_flow'},
    'user_bug_07_ignored_columns.py': {'check_input_dependency'},
    'user_bug_08_resume_unseeded_split.py': {'split_overlap'},
    'user_bug_10_frozen_bn_drift.py': {'check_frozen'},
    'user_bug_11_oversample_before_split.py': {'check_split_duplicates'},
    'user_bug_26_cancel_batch_skips_zero_grad.py': {'stale_gradients'},
    'user_bug_26_layers_in_plain_list.py': {'unregistered_tensors'},
    'user_bug_26_plateau_optimwrapper.py': {'lost_hyperparameter'},
    'user_bug_31_mseloss_broadcast.py': {'loss_shape_broadcast'},
    'user_bug_32_only_batchnorm_trains.py': {'only_norm_trains'},
    'user_bug_33_ddp_prefix_strict_false.py': {'load_strict_false'},
    'user_bug_34_unshuffled_class_sorted.py': {'unshuffled_training_data'},
    'user_bug_35_resume_index_items.py': {'split_overlap'},
    'user_bug_36_title_all_nan.py': {'check_constant_features'},
    # left out: user_accuracy_multi_sparse.py, a metric choice that check_metric_baseline notes at info by design (no problem to count)
}

def case_causes() -> dict:
    "benchmarks/one_cause/*.py: each script's CAUSE line names the finding kind of its cause"
    out = {}
    for f in sorted(CASES_DIR.glob('*.py')):
        m = re.search(r'^CAUSE: (\w+)', f.read_text(), re.M)
        if m: out[f.name] = {m.group(1)}
    return out

def twin(text:str) -> str:
    "The healthy twin of a case: each line marked `# BUG:` replaced by its `# FIX:` line, the comment that follows it"
    out = []
    for line in text.splitlines():
        m = re.search(r'#\s*BUG:.*?FIX:\s*(.+)$', line)
        if m:
            indent = line[:len(line) - len(line.lstrip())]
            out.append(indent + m.group(1).strip())
        else: out.append(line)
    return '\n'.join(out) + '\n'

def standing(findings:list) -> list:
    "The findings that stand on their own at warning or error"
    return [f for f in findings if (f.get('level') or f.get('severity')) in ('error', 'warning') and not f.get('explained_by')]

def _cause_named(f:dict, kinds) -> bool:
    "Does a name 'cause:TEXT' of the operator match the cause a controlled experiment found (`cause_found=` in the finding's evidence, nbs/34b_experiments)?"
    m = re.search(r"cause_found=(.*?)(?:, tried=|$)", f.get('evidence') or '')
    return bool(m) and any(k.startswith('cause:') and m.group(1).startswith(k[len('cause:'):]) for k in kinds)

def score(records:dict, causes:dict, twins:dict=None) -> dict:
    "Print the matrix and the summary; `records` maps a script's name to its check record (status, findings)"
    rows, n_standing, caught, one = [], [], 0, 0
    print(f"{'fault':<46} {'standing':>8}  names cause  standing kinds")
    for name, kinds in causes.items():
        rec = records.get(name)
        if rec is None: continue
        st = standing(rec.get('findings', []))
        named = any(f['kind'] in kinds or _cause_named(f, kinds) for f in st)
        exact = len(st) == 1 and named
        n_standing.append(len(st)); caught += named; one += exact
        shown = ', '.join(f"{f['kind']} ({f.get('level') or f.get('severity')})" for f in st) or '-'
        status = rec.get('status', '')
        print(f"{name:<46} {len(st):>8}  {'yes' if named else 'NO':<11}  {shown}" + (f"  [{status}]" if status not in ('findings', 'clean') else ''))
        rows.append({'fault': name, 'standing': len(st), 'names_cause': named, 'one_finding': exact,
                     'kinds': [f['kind'] for f in st], 'status': status})
    n = len(rows)
    summary = {'faults': n, 'mean_standing': sum(n_standing) / n if n else 0, 'caught_with_cause': caught, 'one_finding_right': one}
    print(f"\n{n} faults: {summary['mean_standing']:.2f} standing findings per fault (target 1.0); "
          f"the cause named in {caught}/{n}; exactly one standing finding, naming the cause, in {one}/{n} ({one / max(n, 1):.0%}, target 95%)")
    if twins:
        alarms = {k: [f['kind'] for f in standing(v.get('findings', []))] for k, v in twins.items()}
        bad = {k: v for k, v in alarms.items() if v}
        print(f"healthy twins: {len(twins) - len(bad)}/{len(twins)} clean" + ''.join(f"\n  FALSE ALARM {k}: {v}" for k, v in bad.items()))
        summary['twins_clean'] = len(twins) - len(bad)
        summary['twins'] = len(twins)
        summary['twin_alarms'] = bad
    summary['rows'] = rows
    return summary

def mutant_rows(path:str) -> tuple:
    "(records, causes) of the harmful fault mutants of a bench_mutants JSON, keyed by mutant id; causes from operators.py now"
    sys.path.insert(0, str(Path(__file__).resolve().parent / 'mutants'))
    from operators import OPERATORS
    from bench_mutants import finding_name
    data = json.loads(Path(path).read_text())
    records, causes = {}, {}
    for m in data['mutants']:
        if m.get('verdict') != 'harmful' or m['nature'] != 'fault' or 'check' not in m: continue
        rec = dict(m['check'])
        # a sanity check's finding is known by its check's name: the operators name checks and kinds alike
        rec['findings'] = [dict(f, kind=finding_name(f) if f.get('check') else f.get('kind')) for f in rec.get('findings', [])]
        records[m['id']] = rec
        causes[m['id']] = set(OPERATORS[m['op']].names) if m['op'] in OPERATORS else set()
    return records, causes

def score_mutants(path:str) -> dict:
    "The one-cause table of the harmful mutants: over all of them, and over those some standing finding reports"
    records, causes = mutant_rows(path)
    print(f"\nHarmful fault mutants of {path} (one planted change each):")
    every = score(records, causes)
    caught = {k: v for k, v in records.items() if standing(v.get('findings', []))}
    print(f"\nThe {len(caught)} of them that a standing warning or error reports:")
    among = score(caught, {k: causes[k] for k in caught})
    return {'all': every, 'caught': among}

def _records_of(data) -> dict:
    "Per-script check records from this benchmark's JSON, bench_cost's JSON or `fastai-paranoid check --json`"
    if 'records' in data and data['records'] and 'runs' in data['records'][0]: # bench_cost
        return {r['script']: r['runs']['check']['file'] for r in data['records'] if 'file' in r['runs'].get('check', {})}
    files = data.get('files') or []
    return {Path(r['path']).name: r for r in files}

def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--workers', type=int, default=2)
    parser.add_argument('--json', help='write the records and the summary here')
    parser.add_argument('--from-json', help="score an earlier run's records (this benchmark's or bench_cost's JSON) instead of running")
    parser.add_argument('--mutants', help="a bench_mutants JSON: score its harmful fault mutants too (their records are that run's)")
    args = parser.parse_args(argv)
    cases = case_causes()
    if args.mutants and args.from_json:
        summary = score_mutants(args.mutants)
        data = json.loads(Path(args.from_json).read_text())
        twin_records = _records_of({'files': data.get('twins', [])}) if data.get('twins') else None
        print('\nThe planted bugs and the issue\'s cases:')
        return {'mutants': summary, 'cases': score(_records_of(data), {**EXTERNAL_CAUSES, **cases}, twin_records)}
    if args.mutants: return {'mutants': score_mutants(args.mutants)}
    if args.from_json:
        data = json.loads(Path(args.from_json).read_text())
        records = _records_of(data)
        twin_records = {k: v for k, v in _records_of({'files': data.get('twins', [])}).items()} if data.get('twins') else None
        return score(records, {**EXTERNAL_CAUSES, **cases}, twin_records)
    work = Path(tempfile.mkdtemp(prefix='one_cause_'))
    for helper in ('tt2_data.py', 'synth.py'): shutil.copy(EXTERNAL / helper, work / helper)
    files = [str(EXTERNAL / name) for name in EXTERNAL_CAUSES]
    for name in cases:
        text = (CASES_DIR / name).read_text()
        (work / name).write_text(text)
        (work / f"fixed_{name}").write_text(twin(text))
        files += [str(work / name)]
    twin_files = [str(work / f"fixed_{name}") for name in cases]
    status, data, seconds = run_check(files + twin_files, args.workers)
    by_name = {Path(r['path']).name: r for r in data['files']}
    twins = {k[len('fixed_'):]: v for k, v in by_name.items() if k.startswith('fixed_')}
    records = {k: v for k, v in by_name.items() if not k.startswith('fixed_')}
    summary = score(records, {**EXTERNAL_CAUSES, **cases}, twins)
    print(f"{len(files) + len(twin_files)} scripts in {seconds:.0f} s")
    if args.json:
        Path(args.json).write_text(json.dumps({'files': [r for k, r in by_name.items() if not k.startswith('fixed_')],
                                               'twins': [r for k, r in by_name.items() if k.startswith('fixed_')],
                                               'summary': summary}, indent=1))

if __name__ == '__main__': main()
