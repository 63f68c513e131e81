"""What `fastai-paranoid check` costs against plain `python script.py` on the scripts of tests/external/, before and after
issue 25's work, and what `check --smoke` costs and finds against the full check: CPU time first (far less sensitive to
the machine's other load than wall time), wall time beside it.

For each script, one process at a time, interleaved (the script's four runs one after the other, then the next script;
`--repeats R` rounds of that):
- plain: `python script.py`, in tests/external (where `check` runs it), `OMP_NUM_THREADS=1 MKL_NUM_THREADS=1`;
- check: `fastai-paranoid check script.py --json J` from this checkout;
- smoke: the same with `--smoke`;
- old: the same `check` from commit `OLD` (a6cba46, before issue 25's work), from its own worktree (`--old-tree`, made with
  `git worktree add --detach /work/wt/old25 a6cba46`), put first on PYTHONPATH; each run prints the `fastai_paranoid` it
  imported, and the bench checks it is that tree's.

CPU time of a run is that of its whole process tree: `check` runs each file in a worker forked from multiprocessing's fork
server, which is no child of the command, so the command's own rusage misses it. This process makes itself a child
subreaper (Linux `prctl(PR_SET_CHILD_SUBREAPER)`): whatever the run leaves orphaned (the old `check`'s fork server and resource
tracker, which outlive it by design) is handed to this process, which waits for each, so that `getrusage(RUSAGE_CHILDREN)`
before and after the run counts every process of the tree (each process's children are counted in it once it has waited for
them: the fork server waits for its workers, a worker for its DataLoader workers). The new check also reports each file's
CPU time as measured in its worker (`files[i]['cpu_seconds']`): printed beside the tree's, it must be no larger.

Run by hand from the repository root: `nice -n 10 python benchmarks/bench_cost.py [--files tests/external/tt2_*.py ...]
[--repeats 1] [--json cost.json] [--stop-at 17:50]`, or `--from-json cost.json` to print the tables of an earlier run. By
default the healthy scripts come first, then each planted bug followed by its fixed twin, so that a run stopped early
(`--stop-at HH:MM`, UTC: no script starts after it) has covered the healthy ones. It takes long: every script runs four
times, and each `check` imports fastai in its fork server."""
import argparse, ctypes, json, os, re, resource, shutil, statistics, subprocess, sys, tempfile, time
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_external import ROOT, EXTERNAL, scripts, is_healthy, twin_of # noqa: E402
from bench_smoke import compare, print_tables as print_smoke_tables # noqa: E402

OLD = 'a6cba46'
MODES = ('plain', 'check', 'smoke', 'old')
RAN = ('clean', 'findings', 'checks crashed', 'cut short') # a check that ran the whole script (a status of `check`'s JSON)
CODE = ("import sys, fastai_paranoid; print('bench_cost: fastai_paranoid from', fastai_paranoid.__file__, file=sys.stderr, flush=True); "
        "from fastai_paranoid.cli import main; sys.exit(main())")

def _subreaper() -> bool:
    "Make this process the one that orphaned descendants are handed to (Linux); False where it cannot"
    try: return ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0) == 0 # PR_SET_CHILD_SUBREAPER
    except (OSError, AttributeError): return False

def _children_alive() -> list:
    "The pids of this process's children still alive (read from /proc)"
    me, kids = os.getpid(), []
    for d in Path('/proc').iterdir():
        if not d.name.isdigit(): continue
        try: stat = (d / 'stat').read_text()
        except OSError: continue
        state, ppid = stat[stat.rfind(')') + 2:].split()[:2]
        if int(ppid) == me and state not in 'ZX': kids.append(int(d.name))
    return kids

def _reap(grace=60.0) -> int:
    "Wait for every descendant handed to this process (orphans the run left); SIGKILL any still alive after `grace` seconds. How many were killed"
    deadline, killed = time.monotonic() + grace, 0
    while True:
        try: pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError: return killed
        if pid: continue
        if time.monotonic() > deadline:
            for pid in _children_alive():
                try: os.kill(pid, 9); killed += 1
                except ProcessLookupError: pass
            deadline = time.monotonic() + grace
        time.sleep(0.05)

def _cpu_children() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime

def command(mode:str, script:str, json_path:Path, old_tree:Path) -> tuple:
    "(argv, PYTHONPATH) of one run"
    if mode == 'plain': return [sys.executable, script], str(ROOT)
    args = ['check', *(['--smoke'] if mode == 'smoke' else []), '--n-workers', '1', '--json', str(json_path), script]
    return [sys.executable, '-c', CODE, *args], str(old_tree if mode == 'old' else ROOT)

def run_one(mode:str, script:str, old_tree:Path, timeout=3600) -> dict:
    "Run `script` one way; its wall and tree CPU seconds, exit status and, for a check, its JSON record"
    tmp = tempfile.mkdtemp(prefix='bench_cost-')
    try: return _run_one(mode, script, old_tree, Path(tmp) / 'check.json', timeout)
    finally: shutil.rmtree(tmp, ignore_errors=True)

def _run_one(mode:str, script:str, old_tree:Path, json_path:Path, timeout:float) -> dict:
    argv, pythonpath = command(mode, script, json_path, old_tree)
    env = dict(os.environ, PYTHONPATH=pythonpath, OMP_NUM_THREADS='1', MKL_NUM_THREADS='1')
    _reap(0) # nothing of an earlier run counted here
    cpu0, start = _cpu_children(), time.perf_counter()
    try: proc = subprocess.run(argv, cwd=EXTERNAL, env=env, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired as e: proc = subprocess.CompletedProcess(argv, 124, e.stdout or '', e.stderr or '')
    wall = time.perf_counter() - start
    killed = _reap()
    cpu = _cpu_children() - cpu0
    rec = dict(mode=mode, wall=wall, cpu=cpu, exit=proc.returncode, orphans_killed=killed)
    if mode == 'plain':
        if proc.returncode: rec['error'] = (proc.stderr or proc.stdout)[-600:]
        return rec
    m = re.search(r'bench_cost: fastai_paranoid from (\S+)', proc.stderr or '')
    rec['imported'] = m.group(1) if m else None
    want = old_tree if mode == 'old' else ROOT
    if not (rec['imported'] or '').startswith(str(want) + os.sep):
        raise RuntimeError(f"{mode} run imported fastai_paranoid from {rec['imported']}, not from {want}:\n{proc.stderr[-2000:]}")
    if json_path.exists():
        data = json.loads(json_path.read_text())
        rec['file'] = data['files'][0]
    else: rec['error'] = f"no JSON (exit {proc.returncode}): {(proc.stderr or proc.stdout)[-600:]}"
    return rec

def order(files:list) -> list:
    "The healthy scripts first (those no planted bug twins), then each planted bug followed by its fixed twin"
    names = {Path(f).name: f for f in files}
    bugs = [f for f in files if not is_healthy(f)]
    twins = {twin_of(Path(b).name) for b in bugs}
    out = [f for f in files if is_healthy(f) and Path(f).name not in twins]
    for b in bugs: out += [b] + ([names[twin_of(Path(b).name)]] if twin_of(Path(b).name) in names else [])
    return out + [f for f in files if f not in out]

def slim(data:dict) -> dict:
    "`data` without what the tables do not read: each check's records, the reports, the output; findings' messages cut to 300 characters"
    for rec in data['records']:
        for run in rec['runs'].values():
            f = run.get('file')
            if not f: continue
            for k in ('checks', 'report', 'output'): f.pop(k, None)
            f['findings'] = [{k: (v[:300] if k == 'message' and isinstance(v, str) else v) for k, v in x.items()
                              if k not in ('built_at', 'found_at', 'locations')} for x in f.get('findings', [])]
    return data

def load() -> float: return os.getloadavg()[0]

# ---- the tables

def _median(runs:list, key:str) -> float:
    vals = [r[key] for r in runs if r.get(key) is not None]
    return statistics.median(vals) if vals else float('nan')

def status(run:dict) -> str:
    if run['mode'] == 'plain': return 'ok' if run['exit'] == 0 else f"exit {run['exit']}"
    return (run.get('file') or {}).get('status') or 'no json'

def per_script(records:list) -> list:
    "One row per script: each mode's median wall and CPU over the rounds, its status (last round) and CPU ratios to plain"
    rows = {}
    for rec in records:
        row = rows.setdefault(rec['script'], dict(script=rec['script'], healthy=is_healthy(rec['script']), runs={m: [] for m in MODES}))
        for m in MODES:
            if m in rec['runs']: row['runs'][m].append(rec['runs'][m])
    for row in rows.values():
        for m, runs in row['runs'].items():
            row[m] = dict(wall=_median(runs, 'wall'), cpu=_median(runs, 'cpu'), status=status(runs[-1]) if runs else 'not run',
                          worker_cpu=_median([r.get('file') or {} for r in runs], 'cpu_seconds'), last=runs[-1] if runs else {})
        plain = row['plain']['cpu']
        for m in MODES[1:]: row[f'{m}_x'] = row[m]['cpu'] / plain if plain == plain and plain > 0 else float('nan')
    return list(rows.values())

def usable(row:dict, mode:str) -> bool:
    "The ratio of `mode` to plain means something: plain ran clean, and the check ran the whole script"
    return row['plain']['status'] == 'ok' and row[mode]['status'] in RAN

def totals(rows:list, mode:str) -> dict:
    ok = [r for r in rows if usable(r, mode)]
    if not ok: return dict(n=0)
    ratios = sorted((r[f'{mode}_x'], r['script']) for r in ok)
    cpu, plain = sum(r[mode]['cpu'] for r in ok), sum(r['plain']['cpu'] for r in ok)
    wall, plain_wall = sum(r[mode]['wall'] for r in ok), sum(r['plain']['wall'] for r in ok)
    return dict(n=len(ok), cpu=cpu, plain_cpu=plain, sum_x=cpu / plain, wall_x=wall / plain_wall, median_x=statistics.median(x for x, _ in ratios),
                worst=ratios[-1], over_15=[f"{s} {x:.2f}x" for x, s in reversed(ratios) if x > 1.5])

def print_tables(data:dict):
    meta, records = data['meta'], data['records']
    rows = per_script(records)
    print(f"# bench_cost.py, {meta['started']} to {meta.get('ended', '?')}: {len(rows)} scripts of tests/external, {meta['repeats']} round(s), "
          f"one process at a time, interleaved per script (plain, check, smoke, old); OMP_NUM_THREADS=1 MKL_NUM_THREADS=1")
    print(f"# load average (1 min) {meta['load_start']:.2f} at the start, {meta.get('load_end', float('nan')):.2f} at the end; {meta['cpus']} CPUs; "
          f"nice {meta.get('nice', '?')}; child subreaper: {meta['subreaper']}")
    print(f"# check/smoke: this checkout ({meta['new_commit']}); old: {meta['old_commit']} from {meta['old_tree']}"
          + (f"; left out (--stop-at {meta['stop_at']}): {len(meta['left_out'])}" if meta.get('left_out') else ''))
    print("# CPU = user + system seconds of the run's whole process tree (the fork server's workers and their DataLoader workers "
          "included); ratios are CPU over plain's CPU. 'wkr' = the new check's own per-file cpu_seconds (its worker), <= the tree's\n")
    hdr = (f"{'script':44} {'plain w/cpu':>11} {'check w/cpu':>11} {'wkr':>5} {'smoke w/cpu':>11} {'old w/cpu':>11}"
           f" {'chk/pl':>6} {'smk/pl':>6} {'old/pl':>6}  check status / smoke status / old status")
    print(hdr)
    fmt = lambda d: f"{d['wall']:5.1f}/{d['cpu']:5.1f}"
    for r in rows:
        print(f"{r['script']:44} {fmt(r['plain']):>11} {fmt(r['check']):>11} {r['check']['worker_cpu']:5.1f} {fmt(r['smoke']):>11} {fmt(r['old']):>11}"
              f" {r['check_x']:6.2f} {r['smoke_x']:6.2f} {r['old_x']:6.2f}  {r['check']['status']} / {r['smoke']['status']} / {r['old']['status']}"
              + ('' if r['healthy'] else '  (planted bug)'))
        if r['plain']['status'] != 'ok': print(f"{'':44}   plain: {r['plain']['last'].get('error', '')[-200:]!r}")
        if r['old']['status'] not in RAN:
            f = r['old']['last'].get('file') or {}
            print(f"{'':44}   old: {(f.get('error') or r['old']['last'].get('error') or '').strip().splitlines()[-1:]}")
    checked = [r for r in rows if r['check']['worker_cpu'] == r['check']['worker_cpu']]
    below = [r['script'] for r in checked if r['check']['worker_cpu'] > r['check']['cpu'] + 0.05]
    print(f"\ntree CPU of check >= its worker's cpu_seconds on {len(checked) - len(below)} of {len(checked)} scripts"
          + (f" (not on: {', '.join(below)})" if below else '') + "; the tree's minus the worker's (startup, fork server imports, the "
          f"parent), median {statistics.median([r['check']['cpu'] - r['check']['worker_cpu'] for r in checked]) if checked else float('nan'):.1f} s")
    print("\nCPU ratios to plain (scripts where plain exited 0 and the check ran the script: status " + ', '.join(RAN) + ")")
    print(f"{'':22} {'mode':6} {'scripts':>7} {'sum CPU':>8} {'plain':>8} {'sum x':>6} {'wall x':>6} {'median x':>8}  worst script; over 1.5x")
    for label, sel in (('all scripts', rows), ('healthy scripts', [r for r in rows if r['healthy']])):
        for m in MODES[1:]:
            t = totals(sel, m)
            if not t['n']: print(f"{label:22} {m:6} {0:7}"); continue
            print(f"{label:22} {m:6} {t['n']:7} {t['cpu']:8.0f} {t['plain_cpu']:8.0f} {t['sum_x']:6.2f} {t['wall_x']:6.2f} {t['median_x']:8.2f}  "
                  f"{t['worst'][1]} {t['worst'][0]:.2f}x; {len(t['over_15'])} over 1.5x")
    for m in MODES[1:]:
        over = totals(rows, m).get('over_15')
        if over: print(f"  {m} over 1.5x plain, worst first: {', '.join(over)}")
    healthy = totals([r for r in rows if r['healthy']], 'check')
    if healthy['n']:
        print(f"\nissue 25's targets on the healthy scripts (check/plain, CPU): overall {healthy['sum_x']:.2f}x (target <= 1.25: "
              f"{'met' if healthy['sum_x'] <= 1.25 else 'NOT met'}); any one at most {healthy['worst'][0]:.2f}x, {healthy['worst'][1]} "
              f"(target <= 1.5: {'met' if not healthy['over_15'] else 'NOT met on ' + str(len(healthy['over_15']))})")
    # the smoke table: bench_smoke's, on the last round's JSON of check and check --smoke
    full = {'files': [r['check']['last']['file'] for r in rows if r['check']['last'].get('file') and r['smoke']['last'].get('file')]}
    smoke = {'files': [r['smoke']['last']['file'] for r in rows if r['check']['last'].get('file') and r['smoke']['last'].get('file')]}
    if not full['files']: return # no smoke runs to compare
    print('\n')
    print_smoke_tables(dict(meta=dict(note=f"the smoke table of this bench_cost run (last round): full check vs check --smoke, "
                                           f"{len(full['files'])} scripts"), rows=compare(full, smoke)))
    smoke_cpu, check_cpu = (sum(r[m]['cpu'] for r in rows if usable(r, 'check') and usable(r, 'smoke')) for m in ('smoke', 'check'))
    if check_cpu: print(f"\nsmoke/full, CPU of the whole command (startup included), scripts both ran: {smoke_cpu:.0f} s / {check_cpu:.0f} s = {smoke_cpu / check_cpu:.0%}")

def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    p.add_argument('--files', nargs='*', help='scripts or globs (default: every script in tests/external)')
    p.add_argument('--repeats', type=int, default=1, help='rounds over the scripts')
    p.add_argument('--old-tree', default='/work/wt/old25', help=f'a worktree of {OLD} (the check before issue 25)')
    p.add_argument('--modes', default=','.join(MODES), help='which runs, comma-separated (default: all four)')
    p.add_argument('--stop-at', help='HH:MM UTC: start no script after it')
    p.add_argument('--json', help='write every record here (rewritten after each script)')
    p.add_argument('--from-json', help='print the tables of an earlier --json file instead of running')
    p.add_argument('--slim-json', help="with --from-json: write its records here without what the tables do not read (each check's "
                                       "records, the reports, the output; findings' messages cut to 300 characters), to keep in the repository")
    args = p.parse_args(argv)
    if args.from_json:
        data = json.loads(Path(args.from_json).read_text())
        if args.slim_json: Path(args.slim_json).write_text(json.dumps(slim(data), indent=0))
        return print_tables(data)
    old_tree, modes = Path(args.old_tree).resolve(), args.modes.split(',')
    if 'old' in modes and not (old_tree / 'fastai_paranoid' / 'cli.py').exists(): sys.exit(f"no old checkout at {old_tree}: git worktree add --detach {old_tree} {OLD}")
    files = order(scripts(args.files))
    git = lambda d: subprocess.run(['git', '-C', str(d), 'log', '-1', '--format=%h %s'], capture_output=True, text=True).stdout.strip()[:80]
    meta = dict(started=time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime()), load_start=load(), cpus=os.cpu_count(), repeats=args.repeats,
                nice=os.nice(0), subreaper=_subreaper(), new_commit=git(ROOT), old_commit=git(old_tree), old_tree=str(old_tree),
                stop_at=args.stop_at, left_out=[])
    print(f"# started {meta['started']}, load average {meta['load_start']:.2f}, {len(files)} scripts x {args.repeats} round(s), modes {modes}", flush=True)
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
            runs = {m: run_one(m, script, old_tree) for m in modes}
            records.append(dict(script=Path(script).name, round=rnd, runs=runs))
            plain = runs.get('plain', {}).get('cpu') or float('nan')
            print(f"[{rnd + 1}.{i + 1}/{len(files)}] {Path(script).name:44} " + '  '.join(
                f"{m} {r['wall']:5.1f}/{r['cpu']:5.1f} {status(r)}" + (f" x{r['cpu'] / plain:.2f}" if m != 'plain' else '') for m, r in runs.items())
                + f"  load {load():.2f}", flush=True)
            save()
        else: continue
        break
    meta.update(ended=time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime()), load_end=load())
    print()
    print_tables(save())

if __name__ == '__main__': main()
