"""The CI sample of `benchmarks/bench_healthy500.py`: the first two draws of each family (seed 0), random healthy Learners
nobody tailored to the checks (unstratified RandomSplitter, raw or standardized inputs, 2-20 classes, 40-600 items). No
check may say 'failed' or 'warning' at levels error or warning (what makes `fastai-paranoid check` exit 1), and none may
crash. The full run (500 draws, per-check rates with 95% intervals) is the benchmark, run by hand."""
import importlib.util, sys
from pathlib import Path
import pytest

BENCH = Path(__file__).resolve().parents[1] / 'benchmarks' / 'bench_healthy500.py'
spec = importlib.util.spec_from_file_location('bench_healthy500', BENCH)
bench = importlib.util.module_from_spec(spec)
spec.loader.exec_module(bench)

def _sample(per_family=2, seed=0):
    picked, i = {f: [] for f in bench.FAMILIES}, 0
    while any(len(v) < per_family for v in picked.values()):
        d = bench.draw(i, seed)
        if len(picked[d['family']]) < per_family: picked[d['family']].append(d)
        i += 1
    return [d for ds in picked.values() for d in ds]

@pytest.mark.parametrize('d', _sample(), ids=lambda d: f"{d['family']}-{d['i']}")
def test_random_healthy_learner_raises_no_alarm(d):
    import torch
    threads = torch.get_num_threads()
    try: run = bench.run_one(d, budget=6.0) # it sets torch to 1 thread, as the benchmark's workers run
    finally: torch.set_num_threads(threads)
    assert not run['error'], run['error']
    alarms = [r for r in run['results'] if bench.is_alarm(r)]
    crashed = [r for r in run['results'] if r['verdict'] == 'error']
    assert not alarms and not crashed, '\n'.join(f"{r['name']} [{r['verdict']}/{r['level']}]: {r['message']}" for r in alarms + crashed)
