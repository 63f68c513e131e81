"Shared pytest fixtures"
import os
# One thread per test process. pytest runs in parallel processes (README: `pytest -n 2`), and
# torch's default of one thread per core then puts two threads per core: OpenMP's threads spin while they wait for each other,
# and small models slow down by an order of magnitude (measured beside background load: one label-leak test took 119 s with two
# threads, 4.5 s with one). Subprocesses the tests start inherit it. A value the caller set is kept.
if 'OMP_NUM_THREADS' not in os.environ: os.environ['OMP_NUM_THREADS'] = '1'
import json, resource
import pytest, torch
torch.set_num_threads(int(os.environ['OMP_NUM_THREADS']))

@pytest.fixture(autouse=True)
def report_width(monkeypatch):
    "Reports are laid out for `$COLUMNS`: the tests read them at 100 columns, whatever terminal runs pytest (pytest-xdist's workers say 80)"
    monkeypatch.setenv('COLUMNS', '100')

@pytest.fixture
def one_thread():
    "Tiny models: one thread is faster and exactly reproducible; restored after each test"
    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)

# The longest files first. `--dist loadfile` keeps each file on one worker and hands files out in the order of the collection
# (with `--no-loadscope-reorder`, as the README's command runs it; xdist's default orders them by their number of tests, which put
# the long files with few tests at the end and left one worker alone with them). Seconds per file, measured with
# `--durations=0` (quiet 2-core machine, `-n 2`, 2026-12-04; test_runner_processes.py less the 20 s its cell-timeout test
# no longer waits, 2026-12-07); a file not listed goes after these, in name order.
FILE_SECONDS = {'test_calibration.py': 114, 'test_modelchecks.py': 111, 'test_distributed.py': 92, 'test_splitprint.py': 83,
                'test_external.py': 69, 'test_runner_processes.py': 39, 'test_runner.py': 52, 'test_cli.py': 47, 'test_ipython.py': 26,
                'test_checks.py': 22, 'test_checkrun.py': 21, 'test_loaders.py': 20, 'test_datachecks.py': 20, 'test_imports.py': 19,
                'test_core_fingerprint.py': 18, 'test_leaks.py': 18, 'test_readme.py': 15, 'test_smoke.py': 15, 'test_export.py': 13,
                'test_precommit.py': 12, 'test_paranoid.py': 11, 'test_pytest_plugin.py': 11, 'test_bn.py': 11}

def pytest_collection_modifyitems(session, config, items):
    "Longest files first (`FILE_SECONDS`), each file's tests in their own order"
    items.sort(key=lambda item: -FILE_SECONDS.get(item.path.name, 0)) # stable: the other files keep the collection's order

_CPU_LOG = os.environ.get('PARANOID_TEST_CPU') # a file: each test's CPU seconds (this process and the children it waited for), one JSON line per test

def _cpu()->float:
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime

if _CPU_LOG:
    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(item, nextitem):
        start = _cpu()
        yield
        with open(_CPU_LOG, 'a') as f: f.write(json.dumps({'test': item.nodeid, 'cpu': _cpu() - start}) + '\n')
