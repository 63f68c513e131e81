"Shared pytest fixtures"
import pytest, torch

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
