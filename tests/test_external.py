"""A small CI sample of tests/external/ (code written elsewhere, run offline on synthetic data in the datasets' real layouts):
`fastai-paranoid check` must exit 0 on healthy scripts from the fastai book and fastai's own test fixture, and exit 1 on
one of torchtest2's planted bugs that the checks already catch. The full corpus, with the false-alarm table, is
`python benchmarks/bench_external.py`.

Before the calibration fixes of issue 16 (measured 2026-12-01 on branch calib), the healthy scripts below exited 1:
- tt2_fixed_08_overconfident_init.py and fastbook_04_mnist_basics_simple_net.py: check_split_duplicates warned
  "class shares differ by 14.1% (total variation) between the splits" on an unstratified random split (no test, no alpha);
- fastai_test_utils_synth_learner.py: see bench_external's table.
They assert what SHOULD hold: exit 0 on healthy code."""
import pytest
from pathlib import Path
from cli_helpers import command

EXTERNAL = Path(__file__).resolve().parent / 'external'

HEALTHY = ['tt2_fixed_08_overconfident_init.py',   # torchtest2 gallery bug 8's fixed twin: a default-initialised MLP
           'fastbook_04_mnist_basics_simple_net.py',  # the book's mnist_loss (sigmoid inside the loss, targets (n, 1)), SGD
           'fastai_test_utils_synth_learner.py']   # fastai's own test fixture: a*x+b on 10 points

@pytest.mark.parametrize('script', HEALTHY)
def test_healthy_external_script_exits_0(script):
    res = command('check', str(EXTERNAL / script), cwd=EXTERNAL, timeout=120)
    assert res.returncode == 0, f"{script} is healthy, yet `fastai-paranoid check` exited {res.returncode}:\n{res.stdout[-3000:]}"

def test_overconfident_init_is_caught():
    "torchtest2 gallery bug 8: the last layer initialised with std 1 -- check_loss_at_init fails it (loss 3.5 x ln(10))"
    res = command('check', str(EXTERNAL / 'tt2_bug_08_overconfident_init.py'), cwd=EXTERNAL, timeout=120)
    assert res.returncode == 1, res.stdout[-3000:]
    assert 'check_loss_at_init' in res.stdout
