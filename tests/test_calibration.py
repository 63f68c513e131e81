"""The calibration corpus (`fastai_paranoid.calibration`, nbs/36_calibration.ipynb) as a scenario matrix, over 3 seeds:
every healthy Learner gets no 'failed', 'warning' or 'error' from any check of the full `learn.sanity_check()`, and every
planted bug is caught ('failed' or 'warning') by the check responsible for it. Scenarios with a resnet are marked `slow`
(still run in CI)."""
import warnings
import pytest
from fastai_paranoid.calibration import SCENARIOS, ALARMS, run_scenario
from fastai_paranoid.core import registered_checks

SEEDS = (0, 1, 2)

def _params(healthy):
    return [pytest.param(s, id=s.name, marks=[pytest.mark.slow] if s.slow else []) for s in SCENARIOS if (s.bug is None) == healthy]

@pytest.fixture(autouse=True)
def quiet(one_thread):
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')   # fastai's and pandas' deprecation noise; the checks report through their results
        yield

@pytest.mark.parametrize('scenario', _params(healthy=True))
def test_healthy_learner_gets_no_alarm(scenario):
    for seed in SEEDS:
        report = run_scenario(scenario, seed)
        alarms = [f"{r.name} {r.verdict}: {r.message}" for r in report if r.verdict in ALARMS]
        assert not alarms, f"{scenario.name}, seed {seed}:\n" + '\n'.join(alarms)
        assert len(report) == len(registered_checks())

@pytest.mark.parametrize('scenario', _params(healthy=False))
def test_planted_bug_caught_by_its_check(scenario):
    for seed in SEEDS:
        res = run_scenario(scenario, seed, checks=[scenario.bug])[scenario.bug]
        assert res.verdict in ('failed', 'warning'), f"{scenario.name}, seed {seed}: {scenario.bug} {res.verdict}: {res.message}"
        assert res.message and res.fix and res.measured
