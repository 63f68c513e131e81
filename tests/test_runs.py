"`runs`: run_seeds, ablate (log modes, verdicts, records) and check_reproducible, each both ways."
import json, random, warnings
import numpy as np
import pytest
import torch
from torch import nn
from fastai.basics import accuracy
import fastai.callback.progress  # Learner.no_bar
from fastai_paranoid.core import CheckResult, ResultTable, rng_fingerprint
from fastai_paranoid.fixtures import xor_dls, build_mlp
from fastai_paranoid.fresh import fresh_learner
from fastai_paranoid.runs import (run_seeds, SeedRuns, ablate, AblationTable, noise_verdict, run_versions,
                                  check_reproducible, differences, final_metrics)

warnings.filterwarnings('ignore', message='`torch.jit.script` is deprecated')


def small_dls(seed): return xor_dls(n_train=128, n_valid=128, bs=32, seed=seed)


def xor_run(seed, epochs=1, model_fn=build_mlp):
    learn = fresh_learner(lambda: small_dls(seed), model_fn, seed=seed, loss_func=nn.CrossEntropyLoss(), metrics=accuracy)
    with learn.no_bar(), learn.no_logging(): learn.fit(epochs, 1e-2)
    return learn


# --- run_seeds ----------------------------------------------------------------------------------

def test_run_seeds_statistics_match_numpy():
    values = {0: 0.5, 1: 0.75, 2: 0.6, 7: 0.9}
    res = run_seeds(lambda s: values[s], [0, 1, 2, 7])
    v = list(values.values())
    assert res.values == v
    assert res.mean == pytest.approx(np.mean(v))
    assert res.std == pytest.approx(np.std(v, ddof=1))
    assert res.spread == pytest.approx(max(v) - min(v))
    assert str(res).splitlines()[0] == "seeds 0, 1, 2, 7: 0.5000, 0.7500, 0.6000, 0.9000"


def test_run_seeds_calls_fn_once_per_seed_in_order():
    calls = []
    run_seeds(lambda s: calls.append(s) or 1.0, range(3, 6))
    assert calls == [3, 4, 5]


def test_run_seeds_accepts_tensors_numpy_and_dicts():
    res = run_seeds(lambda s: {'acc': torch.tensor(0.5 + s / 10), 'loss': np.float32(1 - s / 10)}, range(3))
    assert res.metrics == ['acc', 'loss']
    assert res['acc'].values == pytest.approx([0.5, 0.6, 0.7])
    assert 'acc:' in str(res) and 'loss:' in str(res)
    with pytest.raises(AttributeError, match=r"res\['acc'\].mean"): res.mean


def test_run_seeds_refuses_what_is_not_a_number():
    with pytest.raises(TypeError, match=r"fn\(0\) is NoneType"): run_seeds(lambda s: None, [0])
    with pytest.raises(TypeError, match=r"fn\(0\)\['ok'\] is bool"): run_seeds(lambda s: {'ok': True}, [0])
    with pytest.raises(TypeError, match='must be a function'): run_seeds(0.5, [0])
    with pytest.raises(ValueError, match='empty dict'): run_seeds(lambda s: {}, [0])


def test_run_seeds_on_fastai_learners_differs_across_seeds_and_repeats_per_seed():
    res = run_seeds(lambda s: final_metrics(xor_run(s)), [0, 0, 1])
    acc = res['valid_loss'].values
    assert acc[0] == acc[1] and acc[0] != acc[2]


# --- ablate -------------------------------------------------------------------------------------

def toy(config, seed):
    "A deterministic 'run': the metric is the config's effect plus a seed-dependent noise"
    return {'acc': config['effect'] + [0.01, -0.01, 0.0][seed]}


def test_ablate_runs_every_variant_on_the_same_seeds():
    calls = []
    def fn(config, seed): calls.append((config['name'], seed)); return 1.0
    ablate(fn, {'a': {'name': 'a'}, 'b': {'name': 'b'}, 'c': {'name': 'c'}}, seeds=[4, 2])
    assert calls == [(v, s) for v in 'abc' for s in (4, 2)]


def test_ablate_summary_and_verdicts():
    table = ablate(toy, {'base': {'effect': 0.8}, 'same': {'effect': 0.8}, 'tiny': {'effect': 0.805},
                         'mid': {'effect': 0.815}, 'big': {'effect': 0.9}}, seeds=range(3))
    assert isinstance(table, ResultTable) and isinstance(table, AblationTable)
    verdicts = {r['variant']: r['verdict'] for r in table.rows}
    assert verdicts == {'base': '', 'same': 'within noise', 'tiny': 'within noise',
                        'mid': 'suggestive, worth more seeds', 'big': 'larger than seed noise'}
    row = table.row('big')
    assert row['mean'] == pytest.approx(0.9) and row['std'] == pytest.approx(0.01)
    assert row['diff'] == pytest.approx(0.1) and row['changes'] == 'effect=0.9'
    text = str(table)
    assert 'larger than seed noise' in text and '<td>big</td>' in table._repr_html_()


def test_ablate_baseline_can_be_named():
    table = ablate(toy, {'a': {'effect': 0.9}, 'b': {'effect': 0.8}}, seeds=range(3), baseline='b')
    assert table.row('a')['diff'] == pytest.approx(0.1) and table.row('b')['changes'] == 'baseline'


def test_noise_verdict_boundaries():
    assert noise_verdict(0.01, 0.01, 0.02) == 'within noise'
    assert noise_verdict(-0.0101, 0.01, 0.02) == 'suggestive, worth more seeds'
    assert noise_verdict(0.04, 0.01, 0.02) == 'suggestive, worth more seeds'
    assert noise_verdict(0.0401, 0.01, 0.02) == 'larger than seed noise'


def test_ablate_log_lines(tmp_path):
    log = tmp_path / 'log.jsonl'
    ablate(toy, {'base': {'effect': 0.8}, 'v': {'effect': 0.7}}, seeds=range(3), log=log)
    lines = [json.loads(l) for l in log.read_text().splitlines()]
    assert len(lines) == 6
    assert [(l['variant'], l['seed']) for l in lines] == [(v, s) for v in ('base', 'v') for s in range(3)]
    assert lines[3]['config'] == {'effect': 0.7} and lines[3]['metrics'] == {'acc': pytest.approx(0.71)}
    versions = lines[0]['versions']
    for key in ('python', 'torch', 'fastai', 'fastcore', 'numpy', 'fastai_paranoid', 'device', 'cpu_capability'):
        assert versions[key], key
    assert versions == run_versions()


def test_ablate_never_overwrites_a_log_silently(tmp_path):
    log = tmp_path / 'log.jsonl'
    log.write_text('{"earlier": "results"}\n')
    calls = []
    def fn(config, seed): calls.append(seed); return 1.0
    with pytest.raises(FileExistsError, match="mode='a' to append"): ablate(fn, {'a': {}}, log=log)
    assert calls == [] and log.read_text() == '{"earlier": "results"}\n'
    ablate(fn, {'a': {}}, seeds=[0], log=log, mode='a')
    assert log.read_text().splitlines()[0] == '{"earlier": "results"}' and len(log.read_text().splitlines()) == 2
    ablate(fn, {'a': {}}, seeds=[0, 1], log=log, mode='w')
    assert [json.loads(l)['seed'] for l in log.read_text().splitlines()] == [0, 1]
    with pytest.raises(ValueError, match="use 'x'"): ablate(fn, {'a': {}}, log=tmp_path / 'new.jsonl', mode='r+')


def test_ablate_keeps_finished_runs_in_the_log_when_a_run_fails(tmp_path):
    log = tmp_path / 'log.jsonl'
    def fn(config, seed):
        if seed == 2: raise RuntimeError('diverged')
        return 1.0
    with pytest.raises(RuntimeError, match='diverged'): ablate(fn, {'a': {}}, seeds=range(3), log=log)
    assert [json.loads(l)['seed'] for l in log.read_text().splitlines()] == [0, 1]


def test_ablate_accepts_the_seeds_whole_record_and_checks_it():
    table = ablate(lambda c, s: {'config': c, 'seed': s, 'test_acc': 0.5, 'variant': 'x'}, {'a': {'w': 1}}, seeds=[0, 1])
    assert table.records[0]['metrics'] == {'test_acc': 0.5}
    with pytest.raises(ValueError, match="returned 'seed'"): ablate(lambda c, s: {'seed': 99, 'acc': 1.0}, {'a': {}}, seeds=[0])


def test_ablate_refuses_bad_input():
    with pytest.raises(TypeError, match='cannot be logged as JSON'): ablate(toy, {'a': {'model': nn.Linear(1, 1)}})
    with pytest.raises(TypeError, match='non-empty dict'): ablate(toy, {})
    with pytest.raises(KeyError, match='is not a variant'): ablate(toy, {'a': {'effect': 1}}, baseline='base')
    with pytest.raises(ValueError, match='no seeds'): ablate(toy, {'a': {'effect': 1}}, seeds=[])
    with pytest.raises(ValueError, match='the same metrics'):
        ablate(lambda c, s: {'acc': 1.0} if s == 0 else {'loss': 1.0}, {'a': {}}, seeds=[0, 1])
    with pytest.raises(ValueError, match='which the baseline'):
        ablate(lambda c, s: {c['m']: 1.0}, {'a': {'m': 'acc'}, 'b': {'m': 'loss'}}, seeds=[0, 1])


def test_ablate_passes_a_copy_of_the_config():
    seen = []
    def fn(config, seed):
        seen.append(dict(config)); config['lr'] = 99; return 1.0
    table = ablate(fn, {'a': {'lr': 1}}, seeds=[0, 1])
    assert seen == [{'lr': 1}, {'lr': 1}] and table.records[1]['config'] == {'lr': 1}


def test_ablate_on_fastai_learners():
    def fn(config, seed):
        learn = fresh_learner(lambda: small_dls(seed), lambda: build_mlp(config['width']), seed=seed,
                              loss_func=nn.CrossEntropyLoss(), metrics=accuracy)
        with learn.no_bar(), learn.no_logging(): learn.fit(1, 1e-2)
        return {'accuracy': final_metrics(learn)['accuracy']}
    table = ablate(fn, {'base': {'width': 32}, 'half width': {'width': 16}}, seeds=range(2))
    assert [r['variant'] for r in table.rows] == ['base', 'half width']
    assert len(table.records) == 4 and table.rows[1]['verdict']


# --- check_reproducible --------------------------------------------------------------------------

def test_fresh_learner_run_is_reproducible():
    r = check_reproducible(xor_run, 0)
    assert isinstance(r, CheckResult) and r.passed, r.message
    assert r.measured == {'seed': 0, 'differing values': 0}


def test_model_fn_drawing_from_an_outside_generator_is_caught():
    outside = torch.Generator().manual_seed(0)
    def model_fn():
        m = build_mlp()
        with torch.no_grad(): m[0].weight.copy_(torch.randn(m[0].weight.shape, generator=outside))
        return m
    r = check_reproducible(lambda s: xor_run(s, model_fn=model_fn), 0)
    assert r.verdict == 'failed'
    assert "first difference at result.model.state_dict()['0.weight'][0, 0]" in r.message
    assert r.fix and 'fresh_learner' in r.fix


def test_dataloaders_built_before_seeding_are_caught():
    "fastai's DataLoader draws its shuffling generator from Python's `random` when it is built (fastai #2832)"
    def fn(seed):
        dls = small_dls(seed)                       # BUG: built before fresh_learner seeds
        learn = fresh_learner(lambda: dls, build_mlp, seed=seed, loss_func=nn.CrossEntropyLoss())
        with learn.no_bar(), learn.no_logging(): learn.fit(1, 1e-2)
        return learn
    r = check_reproducible(fn, 0)
    assert r.verdict == 'failed' and 'result.' in r.message


def test_unseeded_draw_in_plain_code_is_caught_with_its_path():
    def fn(seed):
        torch.manual_seed(seed)
        return {'weights': torch.randn(3), 'noise': [1.0, random.random()]}
    r = check_reproducible(fn, 0)
    assert r.verdict == 'failed'
    assert "first difference at result['noise'][1]" in r.message


def test_check_reproducible_leaves_every_rng_as_it_found_it():
    dls = small_dls(0)
    before = rng_fingerprint(dls)
    check_reproducible(lambda s: torch.rand(3).sum().item() + random.random() + np.random.rand(), 0)
    assert rng_fingerprint(dls) == before


def test_check_reproducible_does_not_mask_the_users_exception():
    def fn(seed): raise ZeroDivisionError('in user code')
    with pytest.raises(ZeroDivisionError, match='in user code'): check_reproducible(fn, 0)


@pytest.mark.parametrize('a,b,n', [
    (1.0, 1.0, 0), (float('nan'), float('nan'), 0), (0.0, -0.0, 1), (1, 1.0, 1), ('x', 'x', 0), ('x', 'y', 1),
    (torch.tensor([1., float('nan')]), torch.tensor([1., float('nan')]), 0),
    (torch.zeros(2), torch.zeros(2, dtype=torch.float64), 1),
    (torch.zeros(2, 2), torch.tensor([[0., 0.], [0., 1e-30]]), 1),
    (np.zeros(3), np.zeros(3), 0), ({'a': [1, 2]}, {'a': [1, 2]}, 0), ({'a': [1, 2]}, {'a': (1, 2)}, 1),
    (nn.Linear(2, 2), None, 2)])
def test_differences(a, b, n):
    if b is None: b = nn.Linear(2, 2)
    assert len(differences(a, b)) == n


def test_differences_reports_element_index_and_count():
    a, b = torch.zeros(3, 4), torch.zeros(3, 4)
    b[1, 2], b[2, 0] = 1.0, 2.0
    assert differences({'w': a}, {'w': b}) == [("result['w'][1, 2]", 0.0, 1.0, 2)]


def test_a_new_log_that_no_run_reached_is_removed(tmp_path):
    log = tmp_path / 'log.jsonl'
    def fn(config, seed): raise RuntimeError('diverged')
    with pytest.raises(RuntimeError, match='diverged'): ablate(fn, {'a': {}}, log=log)
    assert not log.exists()
    with pytest.raises(RuntimeError, match='diverged'): ablate(lambda c, s: 1.0 if s == 0 else fn(c, s), {'a': {}}, seeds=[0, 1], log=log)
    assert log.exists() and len(log.read_text().splitlines()) == 1


def test_a_run_that_relies_on_the_callers_seed_is_caught():
    "fn draws before it seeds; the caller happened to seed just before, so two naive calls would agree"
    def fn(seed):
        drawn_before_seeding = torch.rand(2)
        torch.manual_seed(seed)
        return drawn_before_seeding
    torch.manual_seed(0)
    assert torch.equal(fn(0), (torch.manual_seed(0), fn(0))[1])     # naive: looks reproducible
    torch.manual_seed(0)
    r = check_reproducible(fn, 0)
    assert r.verdict == 'failed' and "result[0]" in r.message
