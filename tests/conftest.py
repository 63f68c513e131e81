"Shared pytest fixtures"
import os
# One thread per test process. pytest runs in parallel processes (README: `pytest -n 2`), and
# torch's default of one thread per core then puts two threads per core: OpenMP's threads spin while they wait for each other,
# and small models slow down by an order of magnitude (measured beside background load: one label-leak test took 119 s with two
# threads, 4.5 s with one). Subprocesses the tests start inherit it. A value the caller set is kept.
if 'OMP_NUM_THREADS' not in os.environ: os.environ['OMP_NUM_THREADS'] = '1'
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
