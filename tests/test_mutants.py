"""The fast slice of benchmarks/bench_mutants.py (issue 38): the operator machinery, the harm test by seeds, and the
originals it uses staying silent under `fastai-paranoid check`. It does not assert today's detection rate: that is what the
benchmark measures."""
import json, os, subprocess, sys
from pathlib import Path
import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / 'benchmarks'), str(ROOT / 'benchmarks' / 'mutants')]
from pipelines import PIPELINES # noqa: E402
from operators import OPERATORS, FAMILIES # noqa: E402
import bench_mutants # noqa: E402

def test_population_is_large_and_valid():
    "At least 40 operators and 20 pipelines; every operator fits somewhere and writes code that compiles (population() compiles each)"
    assert len(OPERATORS) >= 40 and len(PIPELINES) >= 20
    pop = bench_mutants.population()
    assert {m['op'] for m in pop} == set(OPERATORS)
    assert {o.family for o in OPERATORS.values()} == set(FAMILIES)
    assert {o.nature for o in OPERATORS.values()} == {'fault', 'tuning'}
    assert len(pop) >= 400

def test_operator_rewrites_where_it_fits():
    p = PIPELINES['torch_mlp_classifier']
    mutant = OPERATORS['shuffle_labels'](p)
    assert mutant != p.text and 'randperm(len(y)' in mutant
    assert OPERATORS['lr_3x'](p) != p.text and 'EPOCHS, LR, BS = 4, 0.03, 32' in OPERATORS['lr_3x'](p)
    assert 'nn.Softmax(dim=1)' in OPERATORS['softmax_before_cross_entropy'](p)
    assert OPERATORS['cross_entropy_for_multilabel'](p) is None # no BCE loss to change in a single-label pipeline
    assert OPERATORS['drop_continuous_columns'](p) is None # no cont_names in a plain PyTorch pipeline

def test_harm_rule_and_its_false_alarm_rate():
    assert bench_mutants.harm_rule([0.9, 0.88, 0.91], [0.5, 0.52, 0.49])
    assert not bench_mutants.harm_rule([0.9, 0.88, 0.91], [0.87, 0.95, 0.9])
    assert not bench_mutants.harm_rule([0.9, 0.88, 0.91], [0.875, 0.872, 0.874]) # worse than every seed, but within DELTA
    # six distinct scores: of the 20 ways to split them 3+3, only 'mutant' = the lowest three fires
    assert bench_mutants.false_alarm_rate([0.1, 0.2, 0.3, 0.4, 0.5, 0.6], 3) == (1, 20)

@pytest.fixture(scope='module')
def runner():
    import runner as r
    r.prepare()
    return r

def test_seeds_separate_shuffled_labels_from_the_original(runner):
    "The harm test calls the shuffled-label mutant harmful, and the original against itself under other seeds harmless"
    p = PIPELINES['torch_mlp_classifier']
    orig = [runner.run(p.text, s)['score'] for s in range(5)]
    mutant = [runner.run(OPERATORS['shuffle_labels'](p), s)['score'] for s in range(3)]
    assert min(orig) > 0.8, orig # the healthy pipeline learns the task
    assert max(mutant) < 0.65, mutant # near chance
    assert bench_mutants.harm_rule(orig[:3], mutant)
    assert not bench_mutants.harm_rule(orig[:3], orig[2:5])
    run = runner.run(OPERATORS['skip_optimizer_step'](p), 0)
    assert run['score'] < 0.7 and 'error' not in run # a mutant runs to its score

def test_originals_get_no_findings_from_check(tmp_path):
    "`fastai-paranoid check` on the originals this slice uses: clean, no finding at any level"
    names = ['torch_mlp_classifier']
    items = [{'id': f'{n}__original', 'text': PIPELINES[n].text} for n in names]
    (tmp_path / 'mdata.py').write_text((ROOT / 'benchmarks' / 'mutants' / 'mdata.py').read_text())
    proc, out = bench_mutants.start_check(items, tmp_path, 'test')
    bench_mutants.finish_check(proc, out, items, timeout=600)
    for it in items:
        assert it['check']['status'] == 'clean', it['check']
        assert it['check']['findings'] == [], it['check']['findings']
