"""How fast `fastai-paranoid` starts (issue 20 item 1), all measured in the same run so that a shared machine's drift hits each.
Run by hand from the project root: `python benchmarks/bench_startup.py [--repeats 5]`. Prints the median wall time of
`python -c pass`, `fastai-paranoid --help`, `check --help`, a mistyped option, a tiny fastai script under plain `python`
and under `fastai-paranoid check --no-sanity`, and the ratios. Targets: the command line (help, errors) under 1 s;
`check --no-sanity tiny.py` at most 1.1 x `python tiny.py` + 1 s."""
import argparse, os, statistics, subprocess, sys, tempfile, time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CLI = [sys.executable, '-c', 'import sys; from fastai_paranoid.cli import main; sys.exit(main())']
TINY = """from torch import nn
from fastai.learner import Learner
from fastai_paranoid.fixtures import xor_dls, build_mlp
learn = Learner(xor_dls(), build_mlp(), loss_func=nn.CrossEntropyLoss())
with learn.no_logging(): learn.fit(1, 1e-2)
"""

def timed(cmd, cwd):
    env = dict(os.environ, PYTHONPATH=str(ROOT), OMP_NUM_THREADS=os.environ.get('OMP_NUM_THREADS', '1'))
    start = time.perf_counter()
    res = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True)
    return time.perf_counter() - start, res.returncode

def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument('--repeats', type=int, default=5)
    opts = p.parse_args()
    tmp = Path(tempfile.mkdtemp())
    (tmp/'tiny.py').write_text(TINY)
    cases = {'python -c pass': [sys.executable, '-c', 'pass'],
             'fastai-paranoid --help': CLI + ['--help'],
             'check --help': CLI + ['check', '--help'],
             'check tiny.py --epochs 3 (refused)': CLI + ['check', 'tiny.py', '--epochs', '3'],
             'python tiny.py': [sys.executable, 'tiny.py'],
             'check --no-sanity tiny.py': CLI + ['check', '--no-sanity', 'tiny.py']}
    times = {k: [] for k in cases}
    for rep in range(opts.repeats): # interleaved: each repeat runs every case once
        for name, cmd in cases.items():
            seconds, code = timed(cmd, tmp)
            times[name].append(seconds)
    med = {k: statistics.median(v) for k, v in times.items()}
    for name, s in med.items(): print(f"{name:38s} {s:6.2f} s (median of {opts.repeats})")
    base, plain = med['python -c pass'], med['python tiny.py']
    print(f"\n--help: {med['fastai-paranoid --help']:.2f} s = {med['fastai-paranoid --help'] / base:.1f} x `python -c pass` (target < 1 s)")
    print(f"check --no-sanity tiny.py: {med['check --no-sanity tiny.py']:.2f} s = {med['check --no-sanity tiny.py'] / plain:.2f} x "
          f"`python tiny.py` ({plain:.2f} s); target <= 1.1 x + 1 s = {1.1 * plain + 1:.2f} s")

if __name__ == '__main__': main()
