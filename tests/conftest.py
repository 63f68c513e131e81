"Shared pytest fixtures"
import pytest, torch

@pytest.fixture
def one_thread():
    "Tiny models: one thread is faster and exactly reproducible; restored after each test"
    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)
