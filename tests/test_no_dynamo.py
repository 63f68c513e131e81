"""Checking a Learner costs no `torch._dynamo` import (sympy and some 800 modules: 3-4 s of CPU in every checked file) where
the user's own code does not import it: fastai's tabular, text and collab Learners and plain PyTorch models never do
(`fastai.vision` does, through torchvision). Two of our calls used to: torch's `FlopCounterMode` (which sizes each
check's work) and `torch.optim.Adam.step` (in `check_label_leak`'s scrambled fits); benchmarks/bench_cost.py measured the cost."""
import os, subprocess, sys, textwrap

SCRIPT = textwrap.dedent('''
    import sys, warnings
    warnings.simplefilter('ignore')
    import torch
    from torch import nn
    from fastai.basics import *
    from fastai.losses import CrossEntropyLossFlat
    from fastai.metrics import accuracy
    from fastai_paranoid.all import *
    from sklearn.datasets import load_digits
    d = load_digits()
    x, y = torch.tensor(d.data, dtype=torch.float32) / 16, torch.tensor(d.target)
    # 60 training items copied into validation: check_label_leak trains scrambled copies (it trains none without copies)
    dls = DataLoaders.from_dsets(list(zip(x[:1400], y[:1400])), list(zip(torch.cat([x[1400:], x[:60]]), torch.cat([y[1400:], y[:60]]))), bs=64)
    learn = Learner(dls, nn.Sequential(nn.Linear(64, 32), nn.ReLU(), nn.Linear(32, 10)), loss_func=CrossEntropyLossFlat(), metrics=accuracy)
    before = 'torch._dynamo' in sys.modules
    report = learn.sanity_check()
    with paranoid():
        learn.fit(1, 1e-3)
    print(before, 'torch._dynamo' in sys.modules, report['check_label_leak'].measured.get('steps', 0), report['check_overfit_one_batch'].verdict)
''')

def test_checks_and_guards_import_no_dynamo():
    env = {**os.environ, 'OMP_NUM_THREADS': '1', 'PYTHONWARNINGS': 'ignore'}
    out = subprocess.run([sys.executable, '-c', SCRIPT], capture_output=True, text=True, env=env, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    before, after, leak_steps, overfit = out.stdout.strip().splitlines()[-1].split()
    assert before == 'False', 'the probe is void: torch._dynamo was loaded before any check ran'
    # the checks that count FLOPs and train scrambled copies did run (with torch.optim.Adam in the scrambled fits, this fails)
    assert int(leak_steps) > 0 and overfit == 'passed', (leak_steps, overfit)
    assert after == 'False', 'a check or guard imported torch._dynamo (see the module docstring for the known causes)'
