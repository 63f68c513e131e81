"""What `fastai-paranoid check` costs against plain `python script.py` on the held-out corpus, benchmarks/heldout/ (fastai
code written elsewhere: fastai's nbs/examples and tutorials, course22's notebooks, walkwithfastai, a fastbook chapter, offline
on synthetic data; issue 40, item 3), and what it says about those healthy scripts: its findings (each a false alarm, or a
real slip of the recipe), crashes, and the seed checks' verdicts (check_overfit_one_batch, check_lr) per Learner.

For each script, one process at a time, interleaved (plain, check, then the next script; `--repeats R` rounds of that):
- plain: `python script.py` in benchmarks/heldout, `OMP_NUM_THREADS=1 MKL_NUM_THREADS=1`;
- check: `fastai-paranoid check --n-workers 1 --json J script.py`, same folder and threads, fastai_paranoid imported from
  `--python-root` (default: this checkout), put first on PYTHONPATH as bench_cost's `--old-tree` is; each run prints the
  fastai_paranoid it imported, and the bench checks it is that tree's.
CPU time is that of the run's whole process tree (bench_cost's child subreaper: the check's fork-server workers and their
DataLoader workers included); wall time beside it. Ratios are check over plain, CPU.

A check's verdicts are read from its JSON (`files[0]['checks']`: one record per Learner and sanity check, with 'verdict'
passed / failed / warning / skipped / incomplete / error and a 'reason'); 'skipped' is inconclusive (the reason says why).

Run by hand from the repository root: `nice -n 10 python benchmarks/bench_heldout.py [--files benchmarks/heldout/c22_*.py ...]
[--repeats 1] [--json heldout.json] [--python-root /work/other-checkout] [--base-root /work/main-before] [--stop-at HH:MM]`,
or `--from-json heldout.json` to print the tables of an earlier run. `--base-root`: a third run per script, interleaved with the
other two (plain, check, base), of `check` with fastai_paranoid imported from that checkout (today's main, say): the same
scripts under the same load, so that the two checks' ratios can be compared."""
import argparse, glob, json, os, re, statistics, subprocess, sys, tempfile, shutil, time
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_cost import CODE, _subreaper, _reap, _cpu_children, load # noqa: E402
from bench_external import finding_check, finding_level # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
HELDOUT = ROOT / 'benchmarks' / 'heldout'
HELPERS = ('synth_data.py',)
SEEDS = ('check_overfit_one_batch', 'check_lr')
RAN = ('clean', 'findings', 'checks crashed', 'cut short') # the check ran the whole script

def scripts(patterns=None) -> list:
    files = [f for p in patterns for f in sorted(glob.glob(p))] if patterns else sorted(str(f) for f in HELDOUT.glob('*.py'))
    return [str(Path(f).resolve()) for f in files if Path(f).name not in HELPERS]

def _git(d) -> str:
    return subprocess.run(['git', '-C', str(d), 'log', '-1', '--format=%h %s'], capture_output=True, text=True).stdout.strip()[:80]

def _slim_file(f:dict) -> dict:
    "What the tables read of one check's JSON record: status, error, cpu, findings (message cut), each sanity check's verdict"
    return dict(status=f.get('status'), seconds=f.get('seconds'), cpu_seconds=f.get('cpu_seconds'),
                error=(f.get('error') or '')[-1500:] if isinstance(f.get('error'), str) else f.get('error'),
                findings=[dict(check=finding_check(x), level=finding_level(x), message=(x.get('message') or '')[:1200]) for x in f.get('findings', [])],
                checks=[dict(learner=c.get('learner'), check=c.get('check'), verdict=c.get('verdict'), reason=(c.get('reason') or '')[:400],
                             traceback=(c.get('traceback') or '')[-800:]) for c in f.get('checks', [])])

def run_one(mode:str, script:str, python_root:Path, timeout=1800) -> dict:
    "Run `script` plain or under check; its wall and tree CPU seconds, exit status and, for check, its slimmed JSON record"
    tmp = Path(tempfile.mkdtemp(prefix='bench_heldout-'))
    try:
        json_path = tmp / 'check.json'
        if mode == 'plain': argv, pythonpath = [sys.executable, script], str(ROOT)
        else: argv, pythonpath = [sys.executable, '-c', CODE, 'check', '--n-workers', '1', '--json', str(json_path), script], str(python_root)
        env = dict(os.environ, PYTHONPATH=pythonpath, OMP_NUM_THREADS='1', MKL_NUM_THREADS='1')
        _reap(0)
        cpu0, start = _cpu_children(), time.perf_counter()
        try: proc = subprocess.run(argv, cwd=Path(script).parent, env=env, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired as e: proc = subprocess.CompletedProcess(argv, 124, e.stdout or '', e.stderr or '')
        wall = time.perf_counter() - start
        killed = _reap()
        rec = dict(mode=mode, wall=wall, cpu=_cpu_children() - cpu0, exit=proc.returncode, orphans_killed=killed)
        out = proc.stderr if isinstance(proc.stderr, str) else (proc.stderr or b'').decode(errors='replace')
        if mode == 'plain':
            if proc.returncode: rec['error'] = (out or str(proc.stdout))[-1500:]
            return rec
        m = re.search(r'bench_cost: fastai_paranoid from (\S+)', out or '')
        rec['imported'] = m.group(1) if m else None
        if not (rec['imported'] or '').startswith(str(python_root) + os.sep):
            raise RuntimeError(f"check imported fastai_paranoid from {rec['imported']}, not from {python_root}:\n{out[-2000:]}")
        if json_path.exists(): rec['file'] = _slim_file(json.loads(json_path.read_text())['files'][0])
        else: rec['error'] = f"no JSON (exit {proc.returncode}): {(out or str(proc.stdout))[-1500:]}"
        return rec
    finally: shutil.rmtree(tmp, ignore_errors=True)

# ---- the tables

def status(run:dict) -> str:
    if run['mode'] == 'plain': return 'ok' if run['exit'] == 0 else f"exit {run['exit']}"
    return (run.get('file') or {}).get('status') or 'no json'

def _median(runs, key):
    vals = [r[key] for r in runs if r.get(key) is not None]
    return statistics.median(vals) if vals else float('nan')

def per_script(records:list) -> list:
    rows = {}
    for rec in records:
        row = rows.setdefault(rec['script'], dict(script=rec['script'], runs={'plain': [], 'check': [], 'base': []}))
        for m in row['runs']:
            if m in rec['runs']: row['runs'][m].append(rec['runs'][m])
    for row in rows.values():
        for m, runs in row['runs'].items():
            row[m] = dict(wall=_median(runs, 'wall'), cpu=_median(runs, 'cpu'), status=status(runs[-1]) if runs else 'not run',
                          last=runs[-1] if runs else {})
        p = row['plain']['cpu']
        row['x'] = row['check']['cpu'] / p if p == p and p > 0 else float('nan')
        row['wall_x'] = row['check']['wall'] / row['plain']['wall'] if row['plain']['wall'] > 0 else float('nan')
        row['base_x'] = row['base']['cpu'] / p if row['runs']['base'] and p == p and p > 0 else float('nan')
    return list(rows.values())

def verdicts(run:dict, check:str) -> list:
    "[(learner, verdict, reason)] of one sanity check over the Learners a check run judged"
    return [(c['learner'], c['verdict'], c.get('reason') or '') for c in (run.get('file') or {}).get('checks', []) if c['check'] == check]

def _short(vs:list) -> str:
    "'passed', 'skipped x2', 'passed, skipped' ...: the verdicts of one check over a script's Learners"
    if not vs: return '-'
    counts = {}
    for _, v, _ in vs: counts[v] = counts.get(v, 0) + 1
    return ', '.join(f"{v}{f' x{n}' if n > 1 else ''}" for v, n in counts.items())

def usable(row) -> bool: return row['plain']['status'] == 'ok' and row['check']['status'] in RAN

def print_tables(data:dict):
    meta, rows = data['meta'], per_script(data['records'])
    print(f"# bench_heldout.py, {meta['started']} to {meta.get('ended', '?')}: {len(rows)} scripts of benchmarks/heldout, {meta['repeats']} round(s), "
          f"one process at a time, interleaved per script (plain, check); OMP_NUM_THREADS=1 MKL_NUM_THREADS=1")
    print(f"# load average (1 min) {meta['load_start']:.2f} at the start, {meta.get('load_end', float('nan')):.2f} at the end; {meta['cpus']} CPUs; "
          f"nice {meta.get('nice', '?')}; child subreaper: {meta['subreaper']}")
    print(f"# check: fastai_paranoid from {meta['python_root']} ({meta['python_commit']})"
          + (f"; left out (--stop-at {meta['stop_at']}): {', '.join(meta['left_out'])}" if meta.get('left_out') else ''))
    print("# CPU = user + system seconds of the run's whole process tree; x = check CPU / plain CPU (median over rounds); "
          "overfit / lr = the verdicts of check_overfit_one_batch / check_lr per Learner ('skipped' = inconclusive); findings marked (info) "
          "are info notes, which leave the status clean\n")
    print(f"{'script':42} {'plain w/cpu':>11} {'check w/cpu':>11} {'x cpu':>6} {'x wall':>6}  {'status':14} {'overfit':16} {'lr':16} findings")
    fmt = lambda d: f"{d['wall']:5.1f}/{d['cpu']:5.1f}"
    for r in rows:
        last = r['check']['last']
        names = sorted({f['check'] + (' (info)' if str(f.get('level', '')).startswith('info') else '') for f in (last.get('file') or {}).get('findings', [])})
        print(f"{r['script'][:42]:42} {fmt(r['plain']):>11} {fmt(r['check']):>11} {r['x']:6.2f} {r['wall_x']:6.2f}  {r['check']['status']:14} "
              f"{_short(verdicts(last, SEEDS[0])):16} {_short(verdicts(last, SEEDS[1])):16} {', '.join(names) or '-'}")
    ok = [r for r in rows if usable(r)]
    if ok:
        cpu, plain = sum(r['check']['cpu'] for r in ok), sum(r['plain']['cpu'] for r in ok)
        wall, pwall = sum(r['check']['wall'] for r in ok), sum(r['plain']['wall'] for r in ok)
        worst = max(ok, key=lambda r: r['x'])
        over = sorted((r for r in ok if r['x'] > 1.5), key=lambda r: -r['x'])
        print(f"\noverall, {len(ok)} scripts where plain exited 0 and check ran the script: check {cpu:.0f} s CPU / plain {plain:.0f} s = "
              f"{cpu / plain:.2f}x (wall {wall:.0f} / {pwall:.0f} s = {wall / pwall:.2f}x); median per script "
              f"{statistics.median(r['x'] for r in ok):.2f}x; max {worst['x']:.2f}x ({worst['script']})")
        based = [r for r in ok if r['runs']['base'] and r['base']['status'] in RAN]
        if based:
            bcpu, bplain = sum(r['base']['cpu'] for r in based), sum(r['plain']['cpu'] for r in based)
            ncpu = sum(r['check']['cpu'] for r in based)
            print(f"beside it, the base checkout ({meta.get('base_commit', '?')}) on the same {len(based)} scripts, interleaved: check {bcpu:.0f} s CPU "
                  f"/ plain {bplain:.0f} s = {bcpu / bplain:.2f}x (this checkout on them: {ncpu / bplain:.2f}x); median per script "
                  f"{statistics.median(r['base_x'] for r in based):.2f}x; over 1.5x: {sum(r['base_x'] > 1.5 for r in based)}")
            print('  per script, base -> this: ' + '; '.join(f"{r['script']} {r['base_x']:.2f} -> {r['x']:.2f}" for r in based))
        print(f"issue 40's targets: overall <= 1.15x: {'met' if cpu / plain <= 1.15 else 'NOT met'}; each <= 1.5x: "
              + ('met' if not over else f"NOT met on {len(over)}: " + ', '.join(f"{r['script']} {r['x']:.2f}x" for r in over)))
    # the seed checks' verdicts, per Learner
    print("\nthe seed checks per Learner (last round): verdict, and why where not passed")
    for r in rows:
        for check in SEEDS:
            for learner, v, why in verdicts(r['check']['last'], check):
                print(f"  {r['script'][:40]:40} {learner[:34]:34} {check:24} {v}" + (f": {why[:220]}" if v != 'passed' and why else ''))
    # findings on healthy scripts: every one is a false alarm or a real slip of the recipe
    found = [(r, f) for r in rows for f in (r['check']['last'].get('file') or {}).get('findings', [])]
    info = [x for x in found if str(x[1].get('level', '')).startswith('info')]
    print(f"\nfindings on these healthy scripts (each a false alarm, or a real slip of the recipe): {len(found) - len(info)} warnings or "
          f"errors on {len({r['script'] for r, f in found if (r, f) not in info})} scripts, and {len(info)} info notes (shown, not counted "
          f"in the exit status) on {len({r['script'] for r, _ in info})}")
    found = [x for x in found if x not in info] + info
    for r, f in found:
        msg = ' '.join(f['message'].split())
        print(f"  {r['script']}: {f['check']} ({f['level']}): {msg[:700]}")
    # crashes: plain failed, check failed to run the script, or a sanity check crashed
    print("\ncrashes")
    n = 0
    for r in rows:
        p, c = r['plain'], r['check']
        if p['status'] != 'ok':
            n += 1; print(f"  {r['script']}: plain {p['status']}: {' '.join((p['last'].get('error') or '').split())[-300:]}")
        if c['status'] not in ('clean', 'findings'):
            n += 1
            f = c['last'].get('file') or {}
            err = f.get('error') or c['last'].get('error') or ''
            errs = [f"{x['check']} ({x['learner']}): {' '.join((x.get('traceback') or x.get('reason') or '').split())[-300:]}"
                    for x in f.get('checks', []) if x.get('verdict') in ('error', 'crashed', 'raised')]
            print(f"  {r['script']}: check {c['status']}" + (f" (plain {p['status']})" if p['status'] != 'ok' else ' (plain ran clean)')
                  + (f": {' '.join(str(err).split())[-400:]}" if err else '') + ''.join(f"\n      {e}" for e in errs))
    if not n: print("  none")

def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    p.add_argument('--files', nargs='*', help='scripts or globs (default: every script in benchmarks/heldout)')
    p.add_argument('--repeats', type=int, default=1, help='rounds over the scripts')
    p.add_argument('--python-root', default=str(ROOT), help='the checkout whose fastai_paranoid check runs (default: this one)')
    p.add_argument('--base-root', help="a second checkout whose check also runs on each script, interleaved (plain, check, base): today's main beside this one")
    p.add_argument('--stop-at', help='HH:MM UTC: start no script after it')
    p.add_argument('--json', help='write every record here (rewritten after each script)')
    p.add_argument('--from-json', nargs='+', help="print the tables of earlier --json files instead of running (several: their records "
                                                  "merged, a later file's rounds of a script replacing an earlier file's)")
    args = p.parse_args(argv)
    if args.from_json:
        datas = [json.loads(Path(f).read_text()) for f in args.from_json]
        records = {}
        for d in datas:
            for script in dict.fromkeys(r['script'] for r in d['records']): records[script] = [r for r in d['records'] if r['script'] == script]
        meta = dict(datas[0]['meta'], ended=datas[-1]['meta'].get('ended'), load_end=datas[-1]['meta'].get('load_end', float('nan')))
        if len(datas) > 1: meta['started'] += f" (+ {len(datas) - 1} later run(s) of some scripts: {', '.join(args.from_json[1:])})"
        return print_tables(dict(meta=meta, records=[r for rs in records.values() for r in rs]))
    python_root = Path(args.python_root).resolve()
    if not (python_root / 'fastai_paranoid' / 'cli.py').exists(): sys.exit(f"no fastai_paranoid checkout at {python_root}")
    files = scripts(args.files)
    meta = dict(started=time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime()), load_start=load(), cpus=os.cpu_count(), repeats=args.repeats,
                nice=os.nice(0), subreaper=_subreaper(), bench_commit=_git(ROOT), python_root=str(python_root),
                python_commit=_git(python_root), stop_at=args.stop_at, left_out=[])
    base_root = Path(args.base_root).resolve() if args.base_root else None
    if base_root is not None:
        if not (base_root / 'fastai_paranoid' / 'cli.py').exists(): sys.exit(f"no fastai_paranoid checkout at {base_root}")
        meta.update(base_root=str(base_root), base_commit=_git(base_root))
    print(f"# started {meta['started']}, load average {meta['load_start']:.2f}, {len(files)} scripts x {args.repeats} round(s)", flush=True)
    records = []
    def save():
        data = dict(meta=meta, records=records)
        if args.json: Path(args.json).write_text(json.dumps(data, indent=1))
        return data
    for rnd in range(args.repeats):
        for i, script in enumerate(files):
            if args.stop_at and time.strftime('%H:%M', time.gmtime()) >= args.stop_at:
                meta['left_out'] = [Path(f).name for f in files[i:]] if rnd == 0 else meta['left_out']
                break
            runs = {m: run_one(m, script, python_root) for m in ('plain', 'check')}
            if base_root is not None: runs['base'] = run_one('check', script, base_root)
            records.append(dict(script=Path(script).name, round=rnd, runs=runs))
            pl, ck = runs['plain'], runs['check']
            f = ck.get('file') or {}
            print(f"[{rnd + 1}.{i + 1}/{len(files)}] {Path(script).name:42} plain {pl['wall']:5.1f}/{pl['cpu']:5.1f} {status(pl)}  "
                  f"check {ck['wall']:5.1f}/{ck['cpu']:5.1f} {status(ck)} x{ck['cpu'] / pl['cpu'] if pl['cpu'] else float('nan'):.2f}  "
                  + (f"base x{runs['base']['cpu'] / pl['cpu']:.2f}  " if 'base' in runs and pl['cpu'] else '') + f"overfit {_short(verdicts(ck, SEEDS[0]))}; lr {_short(verdicts(ck, SEEDS[1]))}; "
                  f"findings {sorted({x['check'] for x in f.get('findings', [])}) or '-'}  load {load():.2f}", flush=True)
            save()
        else: continue
        break
    meta.update(ended=time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime()), load_end=load())
    print()
    print_tables(save())

if __name__ == '__main__': main()
