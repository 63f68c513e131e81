"""`fastai-paranoid check` against `nbdev-test` on the same notebooks with the same number of workers (target: ratio <= 1.15).
Run by hand from the project root: `python benchmarks/bench_check.py [--n-workers 2] [--repeats 1] [NOTEBOOK ...]`
(default: every notebook in nbs/, with --flags slow as the README's test command). The two commands alternate, so drift
on a shared machine hits both; read the ratio of the totals. Under the check the guards are on, so notebooks that plant
leaks on purpose report findings (exit 1): the timing is what is compared, and each command's exit status is shown."""
import argparse, os, subprocess, sys, time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

def timed(cmd):
    env = dict(os.environ, PYTHONPATH=str(ROOT), OMP_NUM_THREADS=os.environ.get('OMP_NUM_THREADS', '1'))
    start = time.perf_counter()
    res = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True)
    return time.perf_counter() - start, res

def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument('notebooks', nargs='*', help="notebooks under nbs/ (default: all of them)")
    p.add_argument('--n-workers', type=int, default=2)
    p.add_argument('--repeats', type=int, default=1)
    p.add_argument('--flags', default='slow')
    opts = p.parse_args()
    bin_dir = Path(sys.executable).parent
    names = [Path(n).name for n in opts.notebooks]
    nbdev = [str(bin_dir/'nbdev-test'), '--n-workers', str(opts.n_workers), '--flags', opts.flags]
    nbdev += ['--file-re', '^(' + '|'.join(n.replace('.', r'\.') for n in names) + ')$'] if names else []
    check = [sys.executable, '-c', 'import sys; from fastai_paranoid.cli import main; sys.exit(main())', 'check', *([f'nbs/{n}' for n in names] or ['nbs']),
             '--n-workers', str(opts.n_workers), '--flags', opts.flags]
    totals = {'nbdev-test': 0.0, 'fastai-paranoid check': 0.0}
    for rep in range(opts.repeats):
        order = [('nbdev-test', nbdev), ('fastai-paranoid check', check)]
        for name, cmd in (order if rep % 2 == 0 else order[::-1]):
            seconds, res = timed(cmd)
            totals[name] += seconds
            print(f"repeat {rep + 1}: {name:22s} {seconds:7.1f} s  (exit {res.returncode})", flush=True)
            if name != 'nbdev-test': print('\n'.join('    ' + l for l in res.stdout.splitlines() if '  failed ' in l or '  not run ' in l))
            elif res.returncode: print('    ' + res.stderr.strip().splitlines()[-1])
    what = f"{len(names)} notebook(s)" if names else "every notebook in nbs/"
    print(f"\n{what}, {opts.n_workers} workers, --flags {opts.flags}, {opts.repeats} repeat(s): "
          f"nbdev-test {totals['nbdev-test']:.1f} s, fastai-paranoid check {totals['fastai-paranoid check']:.1f} s, "
          f"ratio {totals['fastai-paranoid check'] / totals['nbdev-test']:.2f} (target <= 1.15)")

if __name__ == '__main__': main()
