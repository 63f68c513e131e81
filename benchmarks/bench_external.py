"""Run `fastai-paranoid check` on the scripts of tests/external/ (code written elsewhere: the fastai book's chapters, fastai's
tutorials and test fixtures, torchtest2's README bug gallery as fastai Learners, and the fastai users' reported silent bugs
of issue 17's catch table, user_bug_NN / user_fixed_NN) and print, per script, the exit status
and every finding (check, level, head of the message); then, over the healthy scripts, the false alarms per check, and over
the planted bugs (tt2_bug_*, user_bug_*), which check caught each one.

A script is healthy unless its name starts with `tt2_bug_` or `user_bug_`, or with `user_` without ending in `_fixed.py` (users' reports). Every finding on a healthy script is a false alarm (the
command's exit status 1 is then wrong). A planted bug is caught when its script exits 1.

Run by hand from the repository root: `python benchmarks/bench_external.py [--files tests/external/fastbook_01*.py ...]
[--workers 2] [--sanity-budget 20] [--json results.json]`. It takes minutes: every script trains its Learner, and each
Learner gets the sanity checks' budget before its first fit."""
import argparse, glob, json, os, re, subprocess, sys, tempfile, time
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EXTERNAL = ROOT / 'tests' / 'external'
SANITY = re.compile(r"sanity check '(\w+)' (failed|warning|info|error|raised)")

def is_healthy(path) -> bool:
    "Healthy unless a planted bug: torchtest2's tt2_bug_*, a user's report user_bug_* (its twin user_fixed_*), or user_*.py (its twin user_*_fixed.py)"
    name = Path(path).name
    if name.startswith(('tt2_bug_', 'user_bug_')): return False
    return not (name.startswith('user_') and not name.startswith('user_fixed_') and not name.endswith('_fixed.py'))

def twin_of(name:str) -> str:
    "The fixed twin of a planted bug's script"
    if name.startswith('tt2_bug_'): return name.replace('tt2_bug_', 'tt2_fixed_')
    if name.startswith('user_bug_'): return name.replace('user_bug_', 'user_fixed_')
    return name.replace('.py', '_fixed.py')

# healthy for the bug they twin, with a finding that is true of them: shown apart, not counted as false alarms
BY_DESIGN = {'tt2_fixed_07_nan_grad_sqrt.py': ('check_batch_independence', "its model classifies each item by the mean distance to "
             "the other items of its batch: outputs that depend on the batch by design (validation scores change with bs), which the "
             "check rightly reports"),
             'tt2_fixed_06_frozen_still_trained.py': ('FrozenInitGuard/frozen_at_init', "its backbone, frozen by design, was never pretrained: learn.freeze() "
             "holds nn.Linear(32, 64) at PyTorch's random initialization for the whole fit, so the head trains on random features, which "
             "FrozenInitGuard rightly reports (the twin fixes bug 6's freeze that froze nothing; a real script would freeze a pretrained backbone)")}

def _is_info(f:dict) -> bool: return (f.get('level') or f.get('severity')) == 'info'

def scripts(patterns=None) -> list:
    "The external scripts (not the helpers they import: synth.py, tt2_data.py)"
    if patterns: files = [f for p in patterns for f in sorted(glob.glob(p))]
    else: files = sorted(str(f) for f in EXTERNAL.glob('*.py') if f.name.startswith(('fastbook_', 'fastai_', 'pytorch_', 'tt2_', 'user_')))
    return [str(Path(f).resolve()) for f in files if Path(f).name not in ('tt2_data.py', 'synth.py')]

def finding_check(f:dict) -> str:
    "The check a finding comes from: its `check` field when the record has one, else the sanity check named in the message, else the guard"
    if f.get('check'): return f['check']
    m = SANITY.search(f.get('message', ''))
    if m: return m.group(1)
    guard, kind = f.get('guard') or '?', f.get('kind') or ''
    return f'{guard}/{kind}' if kind and kind != guard else guard

def finding_level(f:dict) -> str:
    m = SANITY.search(f.get('message', ''))
    verdict = m.group(2) if m else ''
    return '/'.join(o for o in (f.get('level') or f.get('severity'), verdict) if o)

def message_head(f:dict, n=150) -> str:
    msg = f.get('message') or ' '.join(str(f[k]) for k in ('path', 'evidence') if f.get(k))
    m = SANITY.search(msg)
    if m: msg = msg[m.end():].lstrip(' :') # the part after "Learner #1 (X): sanity check 'name' failed before the first fit:"
    msg = re.sub(r'^before the first fit:\s*', '', msg)
    return msg[:n].replace('\n', ' ') + ('...' if len(msg) > n else '')

def run_check(files, workers=2, sanity_budget=None, timeout=3600):
    "One `fastai-paranoid check` over `files`: its exit status, its per-file JSON records and the wall time"
    out = Path(tempfile.mkdtemp()) / 'check.json'
    args = ['check', '--json', str(out), '--n-workers', str(workers)]
    if sanity_budget is not None: args += ['--sanity-budget', str(sanity_budget)]
    env = dict(os.environ, PYTHONPATH=str(ROOT), OMP_NUM_THREADS='1')
    code = 'import sys; from fastai_paranoid.cli import main; sys.exit(main())'
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, '-c', code, *args, *files], cwd=EXTERNAL, env=env, capture_output=True, text=True,
                          timeout=timeout)
    seconds = time.perf_counter() - start
    if not out.exists():
        raise RuntimeError(f"fastai-paranoid check wrote no JSON (exit {proc.returncode}):\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    return proc.returncode, json.loads(out.read_text()), seconds

def file_status(rec:dict) -> int:
    "The exit status `fastai-paranoid check FILE` would give for this file alone"
    return {'clean': 0, 'findings': 1}.get(rec.get('status'), 2)

def report(records:list) -> dict:
    "Print the tables; return the counts"
    print(f"\n{'script':<44} {'exit':>4} {'time':>7}  findings (check, level: message head)")
    false_alarms, alarmed_healthy, caught, noted, by_design = Counter(), 0, {}, {}, []
    for rec in records:
        name = Path(rec['path']).name
        status = file_status(rec)
        print(f"{name:<44} {status:>4} {rec.get('seconds', 0):>6.0f}s  {'healthy' if is_healthy(name) else 'PLANTED BUG'}")
        if status == 2: print(f"{'':<58}file error: {(rec.get('error') or rec.get('output') or '')[-300:]!r}")
        checks, notes = set(), set()
        for f in rec.get('findings', []):
            check = finding_check(f)
            (notes if _is_info(f) else checks).add(check) # an info note is no alarm (exit 0)
            print(f"{'':<58}{check} ({finding_level(f)}): {message_head(f)}")
        if is_healthy(name):
            if name in BY_DESIGN and checks == {BY_DESIGN[name][0]}:
                by_design.append(name)
                continue
            false_alarms.update(checks)
            alarmed_healthy += status == 1
        else: caught[name], noted[name] = checks, notes
    healthy = [r for r in records if is_healthy(r['path'])]
    print(f"\nHealthy scripts: {len(healthy)}; exit 1 (false alarm) on {alarmed_healthy}"
          + (f" (and exit 1 on {len(by_design)} with a true finding by design, below)" if by_design else '')
          + f"; exit 2 (could not run) on {sum(file_status(r) == 2 for r in healthy)}")
    print("False alarms per check (healthy scripts with at least one finding from it):")
    for check, n in false_alarms.most_common(): print(f"  {check:<36} {n}/{len(healthy)}")
    for name in by_design: print(f"  not counted: {name}: {BY_DESIGN[name][0]}, a true finding: {BY_DESIGN[name][1]}")
    if caught:
        # a bug counts as caught by the checks that fire on it and not on its fixed twin (tt2_fixed_*, user_fixed_*): a false alarm that
        # fires on both is no catch
        twin_checks = {Path(r['path']).name: {finding_check(f) for f in r.get('findings', []) if (f.get('level') or f.get('severity')) != 'info'}
                       for r in records}
        for name, checks in caught.items():
            twin = twin_of(name)
            caught[name] = sorted(checks - twin_checks.get(twin, set()))
        print(f"\nPlanted bugs (torchtest2's gallery, users' reports): caught {sum(bool(v) for v in caught.values())}/{len(caught)} "
              f"(by a check that stays silent on the fixed twin)")
        twin_notes = {Path(r['path']).name: {finding_check(f) for f in r.get('findings', []) if _is_info(f)} for r in records}
        for name, checks in caught.items():
            note = sorted(noted.get(name, set()) - twin_notes.get(twin_of(name), set()))
            print(f"  {name:<44} {'caught by ' + ', '.join(checks) if checks else ('noted (info, exit 0) by ' + ', '.join(note) if note else 'MISSED')}")
    return {'false_alarms': dict(false_alarms), 'alarmed_healthy': alarmed_healthy, 'n_healthy': len(healthy), 'caught': caught,
            'by_design': by_design}

def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--files', nargs='*', help='scripts or globs (default: every script in tests/external)')
    parser.add_argument('--workers', type=int, default=2)
    parser.add_argument('--sanity-budget', type=float, default=None, help="the check command's --sanity-budget (default: its own)")
    parser.add_argument('--json', help='also write the per-file records and the counts here')
    parser.add_argument('--from-json', help='print the tables of an earlier --json file instead of running')
    args = parser.parse_args(argv)
    if args.from_json: return report(json.loads(Path(args.from_json).read_text())['files'])
    files = scripts(args.files)
    status, data, seconds = run_check(files, args.workers, args.sanity_budget)
    counts = report(data['files'])
    print(f"\n{len(files)} scripts in {seconds:.0f} s (fastai-paranoid check exit status {status})")
    if args.json: Path(args.json).write_text(json.dumps({'files': data['files'], **counts}, indent=1))

if __name__ == '__main__': main()
