"""`fastai-paranoid check` against `check --smoke` on the scripts of tests/external/ (the fastai book's chapters, fastai's
tutorials, torchtest2's bug gallery and the users' reported bugs, with their fixed twins): for each script, the wall time
the check gave it and its findings (kinds) under both, side by side; then the totals, and every finding the smoke run
misses (or adds), each with why (most need the fit after the cut).

Run by hand from the repository root: `python benchmarks/bench_smoke.py [--files tests/external/tt2_*.py ...] [--workers 1]
[--json results.json]`, or `--from-json results.json` to print the tables of an earlier run, or `--full-from full.json
--smoke-from smoke.json` to compare two earlier `check --json` runs (on the scripts both checked). It takes long: the full
check trains every script's Learners; both runs get the sanity checks in full."""
import argparse, json, sys, time
from collections import Counter
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_external import scripts, run_check, is_healthy, finding_check # noqa: E402

def run(files, workers, smoke:bool):
    "One check over `files` (with `--smoke` when asked): its exit status, its JSON and the wall time"
    import bench_external
    if not smoke: return run_check(files, workers)
    real = bench_external.subprocess.run
    def with_smoke(cmd, *args, **kwargs): # the same command line with --smoke after `check`
        i = cmd.index('check')
        return real(cmd[:i + 1] + ['--smoke'] + cmd[i + 1:], *args, **kwargs)
    bench_external.subprocess.run = with_smoke
    try: return run_check(files, workers)
    finally: bench_external.subprocess.run = real

# why a smoke run misses a finding of a full run: the guard, and what of the full fit its verdict needs
NEEDS_FULL_FIT = {
    'NaNStop': "the loss turns non-finite after the cut (a later epoch or batch)",
    'NaNGuard': "the loss turns non-finite after the cut (a later epoch or batch)",
    'DataOrderGuard': "judges the labels of a whole training pass, and whether the next pass repeats them",
    'UpdateGuard': "counts over every batch of the fit, and parameters that never change in the whole fit",
    'LostHyperGuard': "a callback writes its hyper-parameter after the first epoch (ReduceLROnPlateau after its patience)",
    'StaleGradGuard': "judged on the batches run: a cadence or a cancel the cut batches do not reach",
}

def kinds(rec:dict) -> list:
    "The findings of one file as `check/kind (level)`, sorted"
    return sorted(f"{finding_check(f)} ({f.get('level')})" for f in rec.get('findings', []))

def compare(full:dict, smoke:dict) -> list:
    "One row per script: times, statuses, findings under both, and what differs"
    rows = []
    by_smoke = {Path(r['path']).name: r for r in smoke['files']}
    for rec in full['files']:
        name = Path(rec['path']).name
        other = by_smoke.get(name, {})
        a, b = Counter(kinds(rec)), Counter(kinds(other))
        rows.append(dict(script=name, healthy=is_healthy(name), full_s=rec['seconds'], smoke_s=other.get('seconds', float('nan')),
                         full_status=rec['status'], smoke_status=other.get('status', '?'), full=kinds(rec), smoke=kinds(other),
                         missed=sorted((a - b).elements()), added=sorted((b - a).elements()),
                         cut_short=[e['where'] + ': ' + e['error'] for e in (other.get('smoke') or {}).get('cut_short') or []],
                         fits=(other.get('smoke') or {}).get('fits_cut', 0)))
    return rows

def why(finding:str) -> str:
    guard = finding.split('/')[0].split(' ')[0]
    return NEEDS_FULL_FIT.get(guard, 'see the note below the table')

def print_tables(data:dict):
    rows, meta = data['rows'], data['meta']
    print(f"# bench_smoke.py: {meta['note']}")
    if meta.get('full_wall') and meta.get('smoke_wall'):
        print(f"# full check: {meta['full_wall']:.0f} s wall, exit {meta['full_exit']}; check --smoke: {meta['smoke_wall']:.0f} s wall, "
              f"exit {meta['smoke_exit']} ({meta['smoke_wall'] / meta['full_wall']:.0%} of the full time); {len(rows)} scripts, --n-workers {meta['workers']}")
    print(f"# per script: the seconds the check gave it (its worker's time: the sanity checks, the guards and the script's own work)\n")
    print(f"{'script':44} {'full s':>7} {'smoke s':>7}  {'full status':11} {'smoke status':12}  findings (full | smoke)")
    for r in rows:
        same = r['full'] == r['smoke']
        print(f"{r['script']:44} {r['full_s']:7.1f} {r['smoke_s']:7.1f}  {r['full_status']:11} {r['smoke_status']:12}  "
              + (('same: ' + ', '.join(r['full'])) if same and r['full'] else 'none' if same else
                 f"{', '.join(r['full']) or 'none'} | {', '.join(r['smoke']) or 'none'}"))
        for e in r['cut_short']: print(f"{'':44}   cut short: {e}")
    full_s, smoke_s = sum(r['full_s'] for r in rows), sum(r['smoke_s'] for r in rows)
    print(f"\n{'total (per-file seconds)':44} {full_s:7.1f} {smoke_s:7.1f}  smoke/full = {smoke_s / full_s:.0%}")
    n_full, n_smoke = sum(len(r['full']) for r in rows), sum(len(r['smoke']) for r in rows)
    print(f"findings: full {n_full}, smoke {n_smoke}; scripts with the same findings: {sum(r['full'] == r['smoke'] for r in rows)} of {len(rows)}")
    bugs = [r for r in rows if not r['healthy']]
    caught = lambda status: status in ('findings', 'cut short', 'failed', 'checks crashed')
    print(f"planted bugs caught (exit 1 or findings): full {sum(bool(r['full']) for r in bugs)} of {len(bugs)}, smoke {sum(bool(r['smoke']) for r in bugs)} of {len(bugs)}")
    print("\nmissed by the smoke run (in the full run's findings, not in the smoke run's):")
    for r in rows:
        for f in r['missed']: print(f"  {r['script']}: {f}: {why(f)}")
    print("\nadded by the smoke run (not in the full run's findings):")
    for r in rows:
        for f in r['added']: print(f"  {r['script']}: {f}")

def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    p.add_argument('--files', nargs='*', help='scripts or globs (default: every script in tests/external)')
    p.add_argument('--workers', type=int, default=1)
    p.add_argument('--json', help='also write the rows and the two runs here')
    p.add_argument('--from-json', help='print the tables of an earlier --json file instead of running')
    p.add_argument('--note', default='', help='a line on the machine and the load, printed on top')
    p.add_argument('--full-from', help="compare the check JSON (--json) of an earlier full run instead of running one")
    p.add_argument('--smoke-from', help="compare the check JSON of an earlier --smoke run instead of running one")
    args = p.parse_args(argv)
    if args.from_json: return print_tables(json.loads(Path(args.from_json).read_text()))
    if args.full_from and args.smoke_from: # two earlier runs: the scripts both checked
        full, smoke = (json.loads(Path(f).read_text()) for f in (args.full_from, args.smoke_from))
        names = {Path(r['path']).name for r in smoke['files']}
        full['files'] = [r for r in full['files'] if Path(r['path']).name in names]
        data = dict(meta=dict(note=args.note, workers=args.workers, full_exit=full['exit_status'], smoke_exit=smoke['exit_status'],
                              smoke=smoke.get('smoke')), rows=compare(full, smoke))
        if args.json: Path(args.json).write_text(json.dumps(data, indent=1))
        return print_tables(data)
    files = scripts(args.files)
    smoke_exit, smoke, smoke_wall = run(files, args.workers, smoke=True)
    full_exit, full, full_wall = run(files, args.workers, smoke=False)
    data = dict(meta=dict(note=args.note or time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime()), workers=args.workers,
                          full_wall=full_wall, smoke_wall=smoke_wall, full_exit=full_exit, smoke_exit=smoke_exit,
                          smoke=smoke.get('smoke')), rows=compare(full, smoke))
    if args.json: Path(args.json).write_text(json.dumps(data, indent=1))
    print_tables(data)

if __name__ == '__main__': main()
