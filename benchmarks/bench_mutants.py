"""Issue 38's population of bugs: the mutation operators of benchmarks/mutants/operators.py applied to the healthy pipelines
of benchmarks/mutants/pipelines.py, which mutants are harmful (decided by seeds), and what `fastai-paranoid check` reports
on each mutant and each original, scored per operator family.

Harm. Every original runs under seeds 0..O-1 (`--orig-seeds`, default 6) and every mutant under seeds 0..S-1 (`--seeds`,
default 3); each run scores the fitted Learner on a held-out test set that no mutant touches (mutants/mdata.py: accuracy,
R^2, ..., higher is better). A fault mutant is harmful when
- it breaks a contract by construction (the operator's `contract=True`: validation or test items in the training data, a
  reported metric computed on the wrong thing), whatever its score; or
- every seed of it scores below the worst of the original's first S seeds by more than DELTA (0.01): the rule "worse than
  every original seed", whose false-alarm rate under no effect is at most 1/C(2S, S) (1/20 at S=3), less with DELTA. The
  rate is measured here: each original's O seeds are split in every way into S "original" and S "mutant" seeds, and the
  share of splits the rule calls harmful is printed (the original against itself with other seeds).
A mutant that raises on every seed is loud (not silent): counted apart, on neither side.

Detection. `fastai-paranoid check --json` on every sampled mutant and every original (in batches, one worker). A finding
stands when its `explained_by` is '' (the contract of issue 38's "one cause, one finding"; a record without the field
stands). Scored per family and overall:
- caught: harmful fault mutants with a standing finding at warning or error, out of the harmful fault mutants;
- named: caught mutants whose standing finding is one of the kinds the operator names (`Operator.names`);
- false alarms: the harmless fault mutants and the tuning mutants that train, with a standing error (warnings shown apart);
- originals with any finding.

Run from the repository root: `nice python benchmarks/bench_mutants.py [--sample N] [--seed S] [--out PREFIX]
[--ops a,b] [--pipelines a,b]`. The sample is stratified by operator (round-robin over the operators, each one's
pipelines in a random order of `--seed`). Results are written after every batch to PREFIX.json, and the tables to
PREFIX.txt at the end (`--from-json PREFIX.json` prints them again)."""
import argparse, itertools, json, os, random, re, shutil, subprocess, sys, tempfile, time
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MUTANTS = Path(__file__).resolve().parent / 'mutants'
sys.path.insert(0, str(MUTANTS))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from pipelines import PIPELINES # noqa: E402
from operators import OPERATORS, FAMILIES # noqa: E402

DELTA = 0.01
ALARM_LEVELS = ('warning', 'error')

# ------------------------------------------------------------------------------------------------------------ population
def population() -> list:
    "Every (operator, pipeline) where the operator fits: dicts with the mutant's id and text"
    out = []
    for op in OPERATORS.values():
        for p in PIPELINES.values():
            text = op(p)
            if text is None or text == p.text: continue
            compile(text, f'{p.name}__{op.name}.py', 'exec') # an operator that writes invalid code is a bug of the benchmark
            out.append({'id': f'{p.name}__{op.name}', 'op': op.name, 'pipeline': p.name, 'family': op.family, 'nature': op.nature,
                        'contract': op.contract, 'text': text})
    return out

def sample(mutants:list, n:int|None, seed:int) -> list:
    "A sample of `n` stratified by operator: round-robin over the operators, each one's mutants in a random order"
    if n is None or n >= len(mutants): return mutants
    rng = random.Random(seed)
    by_op = defaultdict(list)
    for m in mutants: by_op[m['op']].append(m)
    for ms in by_op.values(): rng.shuffle(ms)
    ops = sorted(by_op)
    rng.shuffle(ops)
    out = []
    for ms in itertools.zip_longest(*(by_op[o] for o in ops)):
        for m in ms:
            if m is not None and len(out) < n: out.append(m)
    return out

# ------------------------------------------------------------------------------------------------------------ harm
def harm_rule(orig:list, mut:list, delta=DELTA) -> bool:
    "Worse than every original seed by more than `delta`"
    return max(mut) < min(orig) - delta

def false_alarm_rate(scores:list, k:int, delta=DELTA) -> tuple:
    "(alarms, splits): every split of an original's seeds into k 'original' and k 'mutant' seeds, judged by `harm_rule`"
    alarms = splits = 0
    idx = range(len(scores))
    for a in itertools.combinations(idx, k):
        rest = [i for i in idx if i not in a]
        for b in itertools.combinations(rest, k):
            splits += 1
            alarms += harm_rule([scores[i] for i in a], [scores[i] for i in b], delta)
    return alarms, splits

def verdict(m:dict, orig_scores:list) -> str:
    "'loud' (raises on every seed), 'harmful', 'harmless' or 'trains' (a tuning mutant that runs)"
    scores = [r['score'] for r in m['runs'] if 'score' in r]
    if not scores: return 'loud'
    if m['nature'] == 'tuning': return 'trains'
    if m['contract']: return 'harmful'
    if len(scores) < len(m['runs']): return 'harmful' if harm_rule(orig_scores, scores) else 'harmless' # some seeds raised
    return 'harmful' if harm_rule(orig_scores, scores) else 'harmless'

# ------------------------------------------------------------------------------------------------------------ check
def start_check(items:list, workdir:Path, tag:str, workers:int=1):
    "Start `fastai-paranoid check --json` on the scripts of `items` (written to `workdir`): (process, json path)"
    files = []
    for it in items:
        f = workdir / f"{it['id']}.py"
        f.write_text(it['text'])
        files.append(str(f))
    out = workdir / f'check_{tag}.json'
    env = dict(os.environ, PYTHONPATH=str(ROOT), OMP_NUM_THREADS='1', MKL_NUM_THREADS='1')
    code = 'import sys; from fastai_paranoid.cli import main; sys.exit(main())'
    proc = subprocess.Popen([sys.executable, '-c', code, 'check', '--json', str(out), '--n-workers', str(workers), *files], cwd=workdir, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    return proc, out

def finish_check(proc, out:Path, items:list, timeout:float):
    "Wait for the check; put each file's status and findings on its item"
    try: log, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        log, _ = proc.communicate()
    records = {Path(r['path']).stem: r for r in json.loads(out.read_text())['files']} if out.exists() else {}
    for it in items:
        rec = records.get(it['id'])
        if rec is None:
            it['check'] = {'status': 'no record', 'log': (log or '')[-500:]}
            continue
        it['check'] = {'status': rec.get('status'), 'seconds': rec.get('seconds'),
                       'findings': [{k: f.get(k) for k in ('kind', 'check', 'level', 'severity', 'guard', 'path', 'evidence', 'message', 'id', 'explained_by')
                                     if f.get(k) not in (None, '')} for f in rec.get('findings', [])],
                       'error': (rec.get('error') or '')[-400:]}

def finding_name(f:dict) -> str:
    "The finding's check or kind (sanity checks report their check's name)"
    from bench_external import finding_check
    return finding_check(f)

def standing(it:dict, levels=ALARM_LEVELS) -> list:
    "The standing findings of an item's check at `levels`"
    fs = it.get('check', {}).get('findings', [])
    return [f for f in fs if not f.get('explained_by') and (f.get('level') or f.get('severity')) in levels]

def names_fault(it:dict) -> bool:
    "A standing warning or error names the operator's fault: its check, kind or guard is one of the operator's `names`, or, for a name 'cause:TEXT', the cause a controlled experiment found (`cause_found=` in its evidence, nbs/34b_experiments) begins with TEXT"
    wanted = set(OPERATORS[it['op']].names)
    causes = [w[len('cause:'):] for w in wanted if w.startswith('cause:')]
    found = lambda f: re.search(r"cause_found=(.*?)(?:, tried=|$)", f.get('evidence') or '')
    return any({finding_name(f), f.get('kind') or '', f.get('guard') or ''} & wanted
               or any((m := found(f)) and m.group(1).startswith(c) for c in causes) for f in standing(it))

# ------------------------------------------------------------------------------------------------------------ report
def report(data:dict) -> str:
    lines = []
    say = lines.append
    origs, muts = data['originals'], [m for m in data['mutants'] if 'runs' in m]
    alarms = sum(o['false_alarm'][0] for o in origs.values())
    splits = sum(o['false_alarm'][1] for o in origs.values())
    say(f"Population: {data['population']} mutants ({len(OPERATORS)} operators x {len(PIPELINES)} pipelines where they fit); "
        f"sample of {len(data['mutants'])} (seed {data['seed']}), {len(muts)} measured; {len(origs)} originals.")
    say(f"Harm rule: every mutant seed below the worst of the original's first {data['seeds']} seeds by more than {DELTA} "
        f"(or a contract broken by construction).")
    say(f"Its false-alarm rate, the originals against themselves ({data['orig_seeds']} seeds split {data['seeds']}+{data['seeds']} "
        f"every way): {alarms}/{splits} = {alarms / max(splits, 1):.3f}")
    say('')
    say(f"{'original':<28} {'scores per seed':<48} {'check: standing findings (warning/error | info)'}")
    for name, o in origs.items():
        sc = ' '.join(f"{r['score']:.3f}" if 'score' in r else 'ERR' for r in o['runs'])
        st = o.get('check', {}).get('status', '-')
        fs = ', '.join(finding_name(f) for f in standing(o)) or '-'
        info = ', '.join(finding_name(f) for f in standing(o, ('info',))) or '-'
        say(f"{name:<28} {sc:<48} {st}: {fs} | {info}")
    say('')
    say(f"{'family':<20} {'faults':>6} {'loud':>5} {'harmful':>7} {'caught':>7} {'named':>6} {'harmless':>8} {'tuning':>6} {'FA err':>6} {'FA warn':>7}")
    tot = Counter()
    for fam in FAMILIES + ('all',):
        ms = [m for m in muts if fam == 'all' or m['family'] == fam]
        if not ms: continue
        c = Counter()
        for m in ms:
            v = m['verdict']
            c['faults'] += m['nature'] == 'fault'
            c['loud'] += v == 'loud'
            c['tuning'] += v == 'trains'
            if v == 'harmful':
                c['harmful'] += 1
                c['caught'] += bool(standing(m)) # shown to the user whatever the file's status (a script that then raised: 'failed')
                c['named'] += bool(standing(m)) and names_fault(m)
            if v in ('harmless', 'trains'):
                c['harmless'] += v == 'harmless'
                c['fa_err'] += bool(standing(m, ('error',)))
                c['fa_warn'] += bool(standing(m, ('warning',)))
        fa_side = c['harmless'] + c['tuning']
        say(f"{fam:<20} {c['faults']:>6} {c['loud']:>5} {c['harmful']:>7} {c['caught']:>4}/{c['harmful']:<2} {c['named']:>3}/{c['caught']:<2} "
            f"{c['harmless']:>8} {c['tuning']:>6} {c['fa_err']:>3}/{fa_side:<2} {c['fa_warn']:>4}/{fa_side:<2}")
        if fam == 'all': tot = c
    say('')
    if tot['harmful']:
        say(f"Overall: harmful fault mutants reported at warning or error {tot['caught']}/{tot['harmful']} = {tot['caught'] / tot['harmful']:.2f}; "
            f"named {tot['named']}/{max(tot['caught'], 1)}; false-alarm side with an error {tot['fa_err']}/{tot['harmless'] + tot['tuning']}; "
            f"originals with a warning or error {sum(bool(standing(o)) for o in origs.values())}/{len(origs)}, with any finding "
            f"{sum(bool(standing(o, ('info', 'warning', 'error'))) for o in origs.values())}/{len(origs)}")
        seen = [m for m in muts if m['verdict'] == 'harmful' and not OPERATORS[m['op']].blind]
        blind = sorted({m['op'] for m in muts if m['verdict'] == 'harmful' and OPERATORS[m['op']].blind})
        if blind:
            caught = sum(bool(standing(m)) for m in seen)
            n_blind = sum(m['verdict'] == 'harmful' and bool(OPERATORS[m['op']].blind) for m in muts)
            say(f"Without the {n_blind} harmful mutants of the {len(blind)} operators "
                f"that no mechanism can see from inside the script (below): harmful reported {caught}/{len(seen)} = {caught / max(len(seen), 1):.2f}")
            for op in blind: say(f"  {op}: {OPERATORS[op].blind}")
    say('')
    say(f"{'mutant':<58} {'verdict':<9} {'scores (orig mean)':<30} check: standing warnings/errors")
    for m in sorted(muts, key=lambda m: (FAMILIES.index(m['family']), m['op'], m['pipeline'])):
        sc = ' '.join(f"{r['score']:.3f}" if 'score' in r else 'ERR' for r in m['runs'])
        o = origs[m['pipeline']]['scores'][:data['seeds']]
        fs = ', '.join(sorted({finding_name(f) + ('*' if OPERATORS[m['op']].names and names_fault({'op': m['op'], 'check': {'findings': [f]}}) else '')
                               for f in standing(m)})) or '-'
        st = m.get('check', {}).get('status', '-')
        say(f"{m['family'][:12] + ': ' + m['id']:<58} {m['verdict']:<9} {sc + ' (' + (f'{sum(o) / len(o):.3f}' if o else '-') + ')':<30} {st}: {fs}")
    say('(* a finding that names the planted fault)')
    missed = defaultdict(list)
    for m in muts:
        if m['verdict'] == 'harmful' and not names_fault(m): missed[m['family']].append(m['op'])
    say('')
    say("Harmful mutants whose fault no standing finding names, by family:")
    for fam in FAMILIES:
        if missed[fam]: say(f"  {fam}: {', '.join(f'{k} x{v}' if v > 1 else k for k, v in sorted(Counter(missed[fam]).items()))}")
    return '\n'.join(lines)

# ------------------------------------------------------------------------------------------------------------ main
def pooled(paths:list) -> dict:
    "Earlier runs' JSON as one: their originals and mutants pooled, each id once (the first run's wins)"
    runs = [json.loads(Path(f).read_text()) for f in paths]
    data, seen = runs[0], {m['id'] for m in runs[0]['mutants']}
    for other in runs[1:]:
        data['originals'] = {**other['originals'], **data['originals']}
        data['mutants'] += [m for m in other['mutants'] if m['id'] not in seen]
        seen |= {m['id'] for m in other['mutants']}
        data['seed'] = f"{data['seed']}+{other['seed']}"
    return data

def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('--sample', type=int, default=None, help='mutants to measure (default: all)')
    ap.add_argument('--seed', type=int, default=0, help="the sample's seed")
    ap.add_argument('--seeds', type=int, default=3, help='seeds per mutant')
    ap.add_argument('--orig-seeds', type=int, default=6, help='seeds per original (the first --seeds are compared with)')
    ap.add_argument('--ops', default='', help='only these operators (comma-separated)')
    ap.add_argument('--pipelines', default='', help='only these pipelines (comma-separated)')
    ap.add_argument('--batch', type=int, default=6, help='mutants per check command')
    ap.add_argument('--no-check', action='store_true', help='measure harm only')
    ap.add_argument('--timeout', type=float, default=240, help='seconds one run may take')
    ap.add_argument('--out', default=str(ROOT / 'benchmarks' / 'results' / 'mutants'), help='PREFIX of PREFIX.json and PREFIX.txt')
    ap.add_argument('--from-json', nargs='+', help='print the tables of earlier runs (several: their mutants pooled, each id once)')
    ap.add_argument('--recheck', nargs='+', help="re-run only `check`, with this tree's code, on earlier runs' mutants and originals (pooled, each id once); their seeds and harm verdicts are kept")
    ap.add_argument('--reuse-originals', help="take the originals' seeds and check from an earlier run's JSON (same seeds)")
    args = ap.parse_args(argv)
    if args.from_json:
        print(report(pooled(args.from_json)))
        return
    if args.recheck:
        data = pooled(args.recheck)
        data['rechecked_from'] = args.recheck
        workdir = Path(tempfile.mkdtemp(prefix='bench_mutants_'))
        shutil.copy(MUTANTS / 'mdata.py', workdir / 'mdata.py')
        originals = [{'id': f'{p}__original', 'text': PIPELINES[p].text, 'pipeline': p} for p in data['originals']]
        start = time.time()
        items = originals + data['mutants']
        finish_check(*start_check(items, workdir, 'recheck', workers=2), items, timeout=7200)
        for it in originals: data['originals'][it['pipeline']]['check'] = it['check']
        text = report(data)
        print(text)
        Path(args.out + '.json').write_text(json.dumps(data, indent=1, default=str))
        Path(args.out + '.txt').write_text(text + f"\n\n{len(items)} scripts rechecked in {time.time() - start:.0f} s (harm verdicts from {', '.join(args.recheck)})\n")
        return
    import runner
    runner.prepare()
    allm = population()
    pool = [m for m in allm if (not args.ops or m['op'] in args.ops.split(',')) and (not args.pipelines or m['pipeline'] in args.pipelines.split(','))]
    chosen = sample(pool, args.sample, args.seed)
    pipes = sorted({m['pipeline'] for m in chosen}) if not args.pipelines else args.pipelines.split(',')
    data = {'population': len(allm), 'seed': args.seed, 'seeds': args.seeds, 'orig_seeds': args.orig_seeds, 'delta': DELTA,
            'started': time.strftime('%Y-%m-%d %H:%M:%S'), 'originals': {}, 'mutants': chosen,
            'operators': {o.name: {'family': o.family, 'nature': o.nature, 'contract': o.contract, 'source': o.source, 'names': o.names}
                          for o in OPERATORS.values()}}
    out_json, out_txt = Path(args.out + '.json'), Path(args.out + '.txt')
    out_json.parent.mkdir(parents=True, exist_ok=True)
    workdir = Path(tempfile.mkdtemp(prefix='bench_mutants_'))
    shutil.copy(MUTANTS / 'mdata.py', workdir / 'mdata.py')
    def save():
        data['finished'] = time.strftime('%Y-%m-%d %H:%M:%S')
        out_json.write_text(json.dumps(data, indent=1, default=str))
    start = time.time()
    # the originals: their seeds, and check on each
    if args.reuse_originals:
        earlier = json.loads(Path(args.reuse_originals).read_text())
        assert earlier['orig_seeds'] == args.orig_seeds and earlier['seeds'] == args.seeds, 'the earlier run used other seeds'
        data['originals'] = {p: o for p, o in earlier['originals'].items() if p in pipes}
        data['originals_from'] = args.reuse_originals
    todo = [p for p in pipes if p not in data['originals']]
    items = [{'id': f'{p}__original', 'text': PIPELINES[p].text} for p in todo]
    proc = None if args.no_check or not items else start_check(items, workdir, 'originals')
    for p, it in zip(todo, items):
        runs = [runner.run(PIPELINES[p].text, s, args.timeout) for s in range(args.orig_seeds)]
        scores = [r['score'] for r in runs if 'score' in r]
        data['originals'][p] = {'runs': runs, 'scores': scores, 'false_alarm': false_alarm_rate(scores, args.seeds)}
        print(f"[{time.time() - start:5.0f}s] original {p}: {' '.join(f'{s:.3f}' for s in scores)}", flush=True)
    if proc:
        finish_check(*proc, items, timeout=1800)
        for p, it in zip(todo, items): data['originals'][p]['check'] = it['check']
    save()
    # the mutants, in batches: check runs beside the harm runs of its batch
    for b in range(0, len(chosen), args.batch):
        batch = chosen[b:b + args.batch]
        proc = None if args.no_check else start_check(batch, workdir, f'b{b}')
        for m in batch:
            m['runs'] = [runner.run(m['text'], s, args.timeout) for s in range(args.seeds)]
            m['verdict'] = verdict(m, data['originals'][m['pipeline']]['scores'][:args.seeds])
            sc = ' '.join(f"{r['score']:.3f}" if 'score' in r else 'ERR' for r in m['runs'])
            print(f"[{time.time() - start:5.0f}s] {m['id']}: {sc} -> {m['verdict']}", flush=True)
        if proc:
            finish_check(*proc, batch, timeout=1800)
            for m in batch: print(f"    check {m['id']}: {m['check'].get('status')} {[finding_name(f) for f in standing(m)]}", flush=True)
        save()
    text = report(data)
    print(text)
    out_txt.write_text(text + f"\n\n{len(chosen)} mutants in {time.time() - start:.0f} s\n")
    save()

if __name__ == '__main__': main()
