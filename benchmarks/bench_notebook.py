"""Wall time of `fastai-paranoid check nb.ipynb` against `nbdev-test nb.ipynb` on a small notebook written the way
the fastai book writes its chapters: scikit-learn's digits as tensors, a `simple_net` MLP trained with `Learner(...).fit`
(chapter 4) and a small CNN of `conv` blocks trained with `fit_one_cycle` (chapter 13).

Both run the notebook in a fresh process (imports included); `check` runs the sanity checks before each Learner's first
fit. Run `repeats` times interleaved in the same session; the ratio is of the fastest runs, in wall and in CPU seconds
(`bench_checkrun.timed`). Target (issue 20): checked /
nbdev-test <= 1.3. Run by hand from the repository root: `OMP_NUM_THREADS=1 python benchmarks/bench_notebook.py [repeats]`."""
import json, os, shutil, subprocess, sys, tempfile, time
from bench_checkrun import timed
from pathlib import Path

TARGET = 1.3

CELLS = [
    ('markdown', "# Digits, the fastai book's way\n\nA tiny MLP and a tiny CNN on scikit-learn's 8x8 digits."),
    ('code', "from fastai.vision.all import *\nfrom sklearn.datasets import load_digits"),
    ('code', "digits = load_digits()\n"
             "x = tensor(digits.images).float() / 16\n"
             "y = tensor(digits.target)\n"
             "x.shape, y.shape"),
    ('code', "set_seed(42)\n"
             "idx = torch.randperm(len(x))\n"
             "train_idx, valid_idx = idx[:1400], idx[1400:]\n"
             "def loaders(x):\n"
             "    dset = list(zip(x[train_idx], y[train_idx]))\n"
             "    valid_dset = list(zip(x[valid_idx], y[valid_idx]))\n"
             "    return DataLoaders(DataLoader(dset, batch_size=64, shuffle=True), DataLoader(valid_dset, batch_size=128))"),
    ('markdown', "## A simple net"),
    ('code', "dls = loaders(x.view(-1, 64))\n"
             "simple_net = nn.Sequential(nn.Linear(64, 30), nn.ReLU(), nn.Linear(30, 10))\n"
             "learn = Learner(dls, simple_net, opt_func=SGD, loss_func=F.cross_entropy, metrics=accuracy)\n"
             "learn.fit(10, 0.1)"),
    ('markdown', "## A simple CNN"),
    ('code', "def conv(ni, nf, ks=3, act=True):\n"
             "    res = nn.Conv2d(ni, nf, stride=2, kernel_size=ks, padding=ks//2)\n"
             "    if act: res = nn.Sequential(res, nn.ReLU())\n"
             "    return res\n"
             "dls = loaders(x[:, None])\n"
             "simple_cnn = nn.Sequential(conv(1, 8), conv(8, 16), conv(16, 10, act=False), Flatten())\n"
             "learn = Learner(dls, simple_cnn, loss_func=F.cross_entropy, metrics=accuracy)\n"
             "learn.fit_one_cycle(5, 0.01)"),
    ('code', "learn.validate()"),
]

CHECK = 'import sys; from fastai_paranoid.cli import main; sys.exit(main(sys.argv[1:]))' # `fastai-paranoid` from this checkout

def write_notebook(path:Path):
    cells = [{'cell_type': kind, 'metadata': {}, 'source': src.splitlines(keepends=True),
              **({'outputs': [], 'execution_count': None} if kind == 'code' else {})} for kind, src in CELLS]
    nb = {'cells': cells, 'metadata': {'kernelspec': {'display_name': 'Python 3', 'language': 'python', 'name': 'python3'}},
          'nbformat': 4, 'nbformat_minor': 5}
    path.write_text(json.dumps(nb, indent=1) + '\n')

def main(repeats:int=2):
    sys.path.insert(0, str(Path(__file__).parent))
    root = Path(__file__).resolve().parents[1]
    env = dict(os.environ)
    env['PYTHONPATH'] = os.pathsep.join([str(root), env.get('PYTHONPATH', '')])
    nbdev_test = shutil.which('nbdev-test') or str(Path(sys.executable).parent / 'nbdev-test')
    with tempfile.TemporaryDirectory() as tmp:
        nb = Path(tmp) / 'digits.ipynb'
        write_notebook(nb)
        runs = {'nbdev-test nb.ipynb': [nbdev_test, str(nb), '--n-workers', '1'],
                'fastai-paranoid check nb.ipynb': [sys.executable, '-c', CHECK, 'check', str(nb), '--n-workers', '1'],
                'check --no-sanity nb.ipynb': [sys.executable, '-c', CHECK, 'check', '--no-sanity', str(nb), '--n-workers', '1']}
        with open('/proc/loadavg') as f: load = f.read().strip()
        print(f"a book-style notebook (digits: simple_net fit(10), a 3-conv CNN fit_one_cycle(5)); "
              f"OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', 'unset')}, {os.cpu_count()} CPUs; load average {load}")
        seconds, cpu = {name: [] for name in runs}, {name: [] for name in runs}
        for rep in range(repeats): # interleaved, so that a change in the machine's load hits every variant alike
            for name, cmd in runs.items():
                took, used, res = timed(cmd, env, cwd=root)
                seconds[name].append(took)
                cpu[name].append(used)
                tail = [l.strip() for l in (res.stdout + res.stderr).splitlines() if l.strip().startswith('fastai-paranoid:')]
                print(f"run {rep + 1}: {name:32s} {took:6.1f} s (CPU {used:5.1f} s)  exit {res.returncode}  {' | '.join(tail)[:200]}")
                if res.returncode not in (0, 1) or (rep == 0 and ('problem found' in res.stdout or 'problems found' in res.stdout)):
                    print('    ' + (res.stdout + res.stderr)[-3000:].replace('\n', '\n    '))
        base, base_cpu = min(seconds['nbdev-test nb.ipynb']), min(cpu['nbdev-test nb.ipynb'])
        for name in list(runs)[1:]:
            ratio, ratio_cpu = min(seconds[name]) / base, min(cpu[name]) / base_cpu
            print(f"ratio of the fastest runs, {name:32s} wall {ratio:5.2f}, CPU {ratio_cpu:5.2f}" + (f"  (target <= {TARGET})" if 'no-sanity' not in name else ''))

if __name__ == '__main__': main(*(int(a) for a in sys.argv[1:]))
