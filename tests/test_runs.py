"`runs`: run_seeds, ablate (log modes, verdicts, records) and check_reproducible, each both ways."
import json, math, random, re, warnings
import matplotlib
matplotlib.use('Agg')
from matplotlib.figure import Figure
from matplotlib.collections import PathCollection
import fastprogress.fastprogress
import numpy as np
import pandas as pd
import pytest
import torch
from torch import nn
from fastai.basics import accuracy
import fastai.callback.progress  # Learner.no_bar
from fastai_paranoid.core import CheckResult, ResultTable, rng_fingerprint
from fastai_paranoid.fixtures import xor_dls, build_mlp
from fastai_paranoid.fresh import fresh_learner
import fastai_paranoid.runs as runs_module
from fastai_paranoid.runs import (run_seeds, SeedRuns, SeedWarning, ablate, AblationTable, noise_verdict, run_versions,
                                  check_reproducible, differences, final_metrics, read_ablation)

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
    res = run_seeds(lambda s: final_metrics(xor_run(s)), [0, 1])
    loss = res['valid_loss'].values
    assert loss[0] == final_metrics(xor_run(0))['valid_loss'] and loss[0] != loss[1]


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
    with pytest.raises(FileExistsError, match="mode='a' to resume"): ablate(fn, {'a': {}}, log=log)
    assert calls == [] and log.read_text() == '{"earlier": "results"}\n'
    with pytest.raises(ValueError, match="line 1 .* is not an ablation record"): ablate(fn, {'a': {}}, seeds=[0], log=log, mode='a')
    assert calls == [] and log.read_text() == '{"earlier": "results"}\n'
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


# --- no finished run is lost ---------------------------------------------------------------------

def seed_fn(failing=(), diverging=()):
    "A run per seed that raises on `failing` seeds and returns NaN on `diverging` ones"
    calls = []
    def fn(seed):
        calls.append(seed)
        if seed in failing: raise RuntimeError(f'run {seed} crashed')
        return float('nan') if seed in diverging else 0.5 + seed / 100
    return fn, calls


def test_run_seeds_keeps_finished_seeds_when_one_fails():
    fn, calls = seed_fn(failing={2})
    with pytest.warns(SeedWarning, match=r"fn\(2\) raised RuntimeError: run 2 crashed.*res.failures\[2\]"):
        res = run_seeds(fn, range(5))
    assert calls == [0, 1, 2, 3, 4], "the seeds after the failure still run"
    assert res.seeds == [0, 1, 3, 4] and res.values == pytest.approx([0.5, 0.51, 0.53, 0.54])
    assert res.mean == pytest.approx(np.mean([0.5, 0.51, 0.53, 0.54]))
    assert list(res.failures) == [2] and isinstance(res.failures[2], RuntimeError)
    assert 'failed: fn(2) raised RuntimeError: run 2 crashed' in str(res)
    with pytest.raises(RuntimeError, match='run 2 crashed'): res.raise_failures()


def test_run_seeds_without_failures_is_silent_and_every_failure_still_raises():
    fn, _ = seed_fn()
    with warnings.catch_warnings():
        warnings.simplefilter('error', SeedWarning)
        res = run_seeds(fn, range(3))
    assert res.failures == {} and 'failed' not in str(res) and res.raise_failures() is None
    fn, _ = seed_fn(failing={0, 1})
    with pytest.warns(SeedWarning), pytest.raises(RuntimeError, match='run 0 crashed') as info: run_seeds(fn, [0, 1])
    assert 'every seed failed' in ' '.join(getattr(info.value, '__notes__', []))


def test_run_seeds_never_catches_an_interrupt():
    def fn(seed): raise KeyboardInterrupt
    with pytest.raises(KeyboardInterrupt): run_seeds(fn, [0, 1])


def test_ablate_resumes_from_its_log_one_line_per_pair(tmp_path):
    log, calls = tmp_path / 'log.jsonl', []
    def fn(config, seed):
        calls.append((config['effect'], seed))
        return toy(config, seed)
    variants = {'base': {'effect': 0.8}, 'v': {'effect': 0.7}}
    ablate(fn, variants, seeds=range(2), log=log)
    assert len(calls) == 4
    calls.clear()
    table = ablate(fn, dict(variants, w={'effect': 0.9}), seeds=range(3), log=log, mode='a')
    assert calls == [(0.8, 2), (0.7, 2), (0.9, 0), (0.9, 1), (0.9, 2)], "logged pairs are read back, not rerun"
    pairs = [(json.loads(l)['variant'], json.loads(l)['seed']) for l in log.read_text().splitlines()]
    assert sorted(pairs) == sorted((v, s) for v in ('base', 'v', 'w') for s in range(3)) and len(set(pairs)) == len(pairs)
    assert sorted(table.resumed) == [('base', 0), ('base', 1), ('v', 0), ('v', 1)]
    assert '4 of 9 runs read back from the log' in table.title
    full = ablate(toy, dict(variants, w={'effect': 0.9}), seeds=range(3), progress=False)
    assert [(r['variant'], r['seeds'], r['verdict']) for r in table.rows] == [(r['variant'], r['seeds'], r['verdict']) for r in full.rows]
    calls.clear()
    ablate(fn, dict(variants, w={'effect': 0.9}), seeds=range(3), log=log, mode='a')
    assert calls == [] and len(log.read_text().splitlines()) == 9


def test_ablate_resumes_after_a_crash(tmp_path):
    log, calls = tmp_path / 'log.jsonl', []
    def crashing(config, seed):
        calls.append(seed)
        if seed == 2: raise RuntimeError('out of memory')
        return 1.0 + seed
    with pytest.raises(RuntimeError, match='out of memory') as info: ablate(crashing, {'a': {}}, seeds=range(4), log=log)
    assert "mode='a' to resume" in ' '.join(info.value.__notes__)
    calls.clear()
    table = ablate(lambda c, s: calls.append(s) or 1.0 + s, {'a': {}}, seeds=range(4), log=log, mode='a')
    assert calls == [2, 3] and table.row('a')['seeds'] == [1.0, 2.0, 3.0, 4.0]
    assert [json.loads(l)['seed'] for l in log.read_text().splitlines()] == [0, 1, 2, 3]


def test_ablate_refuses_a_changed_config_for_a_logged_pair_with_the_difference(tmp_path):
    log, calls = tmp_path / 'log.jsonl', []
    ablate(toy, {'base': {'effect': 0.8, 'lr': 0.1}}, seeds=range(2), log=log)
    before = log.read_text()
    def fn(config, seed): calls.append(seed); return 1.0
    with pytest.raises(ValueError, match=r"holds variant 'base', seed 0 with another config: lr: 0.1 in the log, 0.2 now"):
        ablate(fn, {'base': {'effect': 0.8, 'lr': 0.2}}, seeds=range(2), log=log, mode='a')
    assert calls == [] and log.read_text() == before
    # the same config written as a tuple reads back as a list: the same config, resumed
    ablate(lambda c, s: 1.0, {'t': {'effect': (0.8, 1)}}, seeds=[0], log=tmp_path / 't.jsonl')
    ablate(fn, {'t': {'effect': (0.8, 1)}}, seeds=[0], log=tmp_path / 't.jsonl', mode='a')
    assert calls == []


def test_ablate_refuses_logs_it_cannot_read_back(tmp_path):
    line = json.dumps({'variant': 'a', 'config': {}, 'seed': 0, 'metrics': {'value': 1.0}, 'versions': {}})
    dup = tmp_path / 'dup.jsonl'
    dup.write_text(line + '\n' + line + '\n')
    with pytest.raises(ValueError, match="lines 1 and 2 .* both hold variant 'a', seed 0"): ablate(toy, {'a': {}}, log=dup, mode='a')
    with pytest.raises(ValueError, match="both hold"): read_ablation(dup)
    partial = tmp_path / 'partial.jsonl'
    partial.write_text(line + '\n' + line[:20])
    with pytest.raises(ValueError, match="line 2 .* is not JSON.*partial last line"): ablate(toy, {'a': {}}, log=partial, mode='a')


# --- honest verdicts -----------------------------------------------------------------------------

def test_diverged_seeds_are_counted_and_kept_out_of_the_mean():
    fn, _ = seed_fn(diverging={1})
    with pytest.warns(SeedWarning, match=r"diverged in 1 of 3 seeds \(seed 1\)"):
        res = run_seeds(fn, range(3))
    assert math.isnan(res.values[1]) and res.diverged == [1]
    assert res.mean == pytest.approx((0.5 + 0.52) / 2) and res.std == pytest.approx(np.std([0.5, 0.52], ddof=1))
    assert 'diverged in 1 of 3 seeds (seed 1): kept out of the mean, std and spread' in str(res)
    healthy, _ = seed_fn()
    res = run_seeds(healthy, range(3))
    assert res.diverged == [] and 'diverged' not in str(res)


def test_ablate_shows_a_diverged_variant_as_such():
    def fn(config, seed):
        if config['lr'] > 1 and seed == 1: return {'acc': float('nan')}
        return toy({'effect': 0.8}, seed)
    with pytest.warns(SeedWarning, match=r"high lr: diverged in 1 of 3 seeds \(seed 1\)"):
        table = ablate(fn, {'base': {'lr': 0.1}, 'high lr': {'lr': 10}}, seeds=range(3), progress=False)
    row = table.row('high lr')
    assert row['verdict'] == 'diverged in 1 of 3 seeds (seed 1); the other 2: within noise', "not 'n/a: needs 2+ seeds'"
    assert row['mean'] == pytest.approx((0.81 + 0.80) / 2) and row['diverged'] == [1] and math.isnan(row['seeds'][1])
    assert 'kept out of mean and std' in table.title and 'diverged in 1 of 3' in str(table)
    with warnings.catch_warnings():
        warnings.simplefilter('error', SeedWarning)
        healthy = ablate(toy, {'base': {'effect': 0.8}, 'v': {'effect': 0.8}}, seeds=range(3), progress=False)
    assert healthy.row('v')['verdict'] == 'within noise' and 'diverged' not in healthy.title


def test_a_diverged_run_is_logged_as_strict_json_and_read_back_as_nan(tmp_path):
    log = tmp_path / 'log.jsonl'
    with pytest.warns(SeedWarning):
        ablate(lambda c, s: float('inf') if s == 1 else 1.0, {'a': {}}, seeds=range(2), log=log, progress=False)
    assert json.loads(log.read_text().splitlines()[1], parse_constant=lambda c: pytest.fail(f'{c} in the log'))['metrics'] == {'value': None}
    assert math.isnan(read_ablation(log)['value'][1])


@pytest.mark.parametrize('seeds,match', [('123', 'is a string'), (b'12', 'is a string'), (5, 'is one number'),
                                        ([42, 42, 42], r'repeat 42\. A repeated seed is the same run again'),
                                        ([0, 1.5], r'seeds\[1\] = 1.5 is a float'), ([True, False], 'is a bool'),
                                        ([], 'no seeds')])
def test_bad_seeds_are_refused_before_any_run(seeds, match):
    calls = []
    for run in (lambda: run_seeds(lambda s: calls.append(s) or 1.0, seeds),
                lambda: ablate(lambda c, s: calls.append(s) or 1.0, {'a': {}}, seeds=seeds)):
        with pytest.raises((TypeError, ValueError), match=match): run()
    assert calls == []


def test_any_integral_number_is_a_seed():
    seen = []
    res = run_seeds(lambda s: seen.append(s) or float(s), [np.int64(3), np.int32(4), torch.tensor(5), 6])
    assert seen == [3, 4, 5, 6] and all(type(s) is int for s in seen) and res.seeds == [3, 4, 5, 6]
    table = ablate(lambda c, s: seen.append(s) or float(s), {'a': {}}, seeds=np.arange(2), progress=False)
    assert seen[-2:] == [0, 1] and all(type(s) is int for s in seen) and table.seeds == [0, 1]


# --- paths ---------------------------------------------------------------------------------------

def test_a_log_in_a_missing_folder_is_created(tmp_path):
    log = tmp_path / 'runs' / 'today' / 'log.jsonl'
    ablate(toy, {'a': {'effect': 1}}, seeds=range(2), log=log, progress=False)
    assert len(log.read_text().splitlines()) == 2


def test_bad_log_paths_are_refused_before_any_run(tmp_path):
    calls = []
    def fn(config, seed): calls.append(seed); return 1.0
    with pytest.raises(IsADirectoryError, match=r"is a directory, not a file; give a file in it, e\.g\. log='.*ablation\.jsonl'"):
        ablate(fn, {'a': {}}, log=tmp_path)
    for mode in 'xaw':
        with pytest.raises(IsADirectoryError): ablate(fn, {'a': {}}, log=tmp_path, mode=mode)
    (tmp_path / 'file').write_text('')
    with pytest.raises(NotADirectoryError, match=r"cannot create the log's folder '.*file'"):
        ablate(fn, {'a': {}}, log=tmp_path / 'file' / 'log.jsonl')
    assert calls == []
    with pytest.raises(IsADirectoryError, match='is a directory'): read_ablation(tmp_path)
    with pytest.raises(FileNotFoundError, match='no log at'): read_ablation(tmp_path / 'none.jsonl')


# --- read_ablation -------------------------------------------------------------------------------

def test_read_ablation_gives_one_row_per_pair(tmp_path):
    log = tmp_path / 'log.jsonl'
    variants = {'base': {'effect': 0.8, 'opt': {'name': 'adam', 'wd': 0.01}}, 'v': {'effect': 0.7, 'opt': {'name': 'sgd', 'wd': 0.0}}}
    table = ablate(lambda c, s: {'acc': toy(c, s)['acc'], 'loss': 1 - c['effect']}, variants, seeds=range(3), log=log, progress=False)
    df = read_ablation(log)
    assert isinstance(df, pd.DataFrame) and len(df) == 6
    assert list(df.columns[:4]) == ['variant', 'seed', 'acc', 'loss']
    for col in ('config.effect', 'config.opt.name', 'config.opt.wd', 'versions.torch', 'versions.fastai', 'versions.numpy'): assert col in df, col
    assert list(zip(df.variant, df.seed)) == [(v, s) for v in ('base', 'v') for s in range(3)]
    assert df.groupby('variant')['acc'].mean().to_dict() == pytest.approx({'base': table.row('base', 'acc')['mean'],
                                                                             'v': table.row('v', 'acc')['mean']})
    assert df['config.opt.name'].tolist() == ['adam'] * 3 + ['sgd'] * 3 and (df['versions.torch'] == torch.__version__).all()
    empty = tmp_path / 'empty.jsonl'
    empty.write_text('')
    assert list(read_ablation(empty).columns) == ['variant', 'seed'] and len(read_ablation(empty)) == 0


# --- progress bar --------------------------------------------------------------------------------

def test_progress_bar_over_runs_with_time_left(monkeypatch, capsys):
    monkeypatch.setattr(fastprogress.fastprogress, 'printing', lambda: True)   # as in a terminal or a notebook
    ablate(toy, {'a': {'effect': 1}, 'b': {'effect': 2}}, seeds=range(3))
    out = capsys.readouterr().out
    assert '[6/6 ' in out and '[1/6 ' in out and '<' in out.split('[6/6 ')[1].split(']')[0], out[-300:]
    assert 'b, seed 2' in out
    run_seeds(lambda s: 1.0 + s, range(4))
    assert '[4/4 ' in capsys.readouterr().out
    ablate(toy, {'a': {'effect': 1}}, seeds=range(3), progress=False)
    run_seeds(lambda s: 1.0 + s, range(4), progress=False)
    assert capsys.readouterr().out == ''
    monkeypatch.setattr(fastprogress.fastprogress, 'printing', lambda: False)   # output captured, or NO_BAR
    ablate(toy, {'a': {'effect': 1}}, seeds=range(3))
    assert capsys.readouterr().out == '', "no stray fill character where no bar can show"


def test_progress_bar_counts_only_the_runs_left(monkeypatch, tmp_path):
    totals = []
    real = runs_module.progress_bar
    monkeypatch.setattr(runs_module, 'progress_bar', lambda items, **kw: totals.append(len(items)) or real(items, **kw))
    ablate(toy, {'a': {'effect': 1}}, seeds=range(2), log=tmp_path / 'log.jsonl')
    ablate(toy, {'a': {'effect': 1}}, seeds=range(3), log=tmp_path / 'log.jsonl', mode='a')
    ablate(toy, {'a': {'effect': 1}}, seeds=range(3), log=tmp_path / 'log.jsonl', mode='a')
    assert totals == [2, 1], "no bar when nothing is left to run"


# --- plots: tested on the figure's data ----------------------------------------------------------

def test_run_seeds_plot_shows_every_seed_mean_and_std():
    fn, _ = seed_fn(diverging={1})
    with pytest.warns(SeedWarning): res = run_seeds(fn, range(4))
    fig = res.plot()
    assert isinstance(fig, Figure)
    ax = fig.axes[0]
    points = ax.collections[0].get_offsets()
    np.testing.assert_allclose(points, [[0, 0.5], [2, 0.52], [3, 0.53]])
    assert ax.lines[0].get_ydata()[0] == pytest.approx(res.mean)
    band = ax.patches[0]
    assert (band.get_y(), band.get_y() + band.get_height()) == pytest.approx((res.mean - res.std, res.mean + res.std))
    assert [t.get_text() for t in ax.get_xticklabels()] == ['0', '1', '2', '3']
    assert 'diverged in 1 of 4 seeds (seed 1)' in [t.get_text() for t in ax.get_legend().get_texts()]
    assert ax.collections[1].get_offsets()[:, 0].tolist() == [1]
    healthy = run_seeds(seed_fn()[0], range(3)).plot().axes[0]
    assert len(healthy.collections) == 1, "no diverged marker on a healthy run"
    assert len(run_seeds(lambda s: {'a': 1.0 + s, 'b': 2.0 * s}, range(2)).plot().axes) == 2


def test_ablation_plot_shows_seeds_means_and_the_baseline_noise_band():
    def fn(config, seed):
        return float('nan') if config['effect'] > 0.85 and seed == 0 else toy(config, seed)['acc']
    with pytest.warns(SeedWarning):
        table = ablate(fn, {'base': {'effect': 0.8}, 'half': {'effect': 0.805}, 'big': {'effect': 0.9}}, seeds=range(3), progress=False)
    fig = table.plot()
    assert isinstance(fig, Figure)
    ax = fig.axes[0]
    base = table.row('base')
    band = ax.patches[0]
    assert (band.get_y(), band.get_y() + band.get_height()) == pytest.approx((base['mean'] - base['std'], base['mean'] + base['std']))
    seeds_per_variant = [c.get_offsets() for c in ax.collections if isinstance(c, PathCollection) and c.get_label() != 'diverged (non-finite)']
    assert [p[:, 0].tolist() for p in seeds_per_variant] == [[0, 0, 0], [1, 1, 1], [2, 2]]
    assert seeds_per_variant[2][:, 1].tolist() == pytest.approx([0.89, 0.9]), "the diverged seed is not drawn as a value"
    means = [c.lines[0].get_ydata()[0] for c in ax.containers]
    assert means == pytest.approx([table.row(v)['mean'] for v in ('base', 'half', 'big')])
    crosses = [c for c in ax.collections if c.get_label() == 'diverged (non-finite)']
    assert len(crosses) == 1 and crosses[0].get_offsets()[0, 0] == 2
    labels = [t.get_text() for t in ax.get_xticklabels()]
    assert labels[0] == 'base' and labels[1] == 'half\nwithin noise' and labels[2].startswith('big\ndiverged in 1 of 3 seeds')
    healthy = ablate(toy, {'base': {'effect': 0.8}, 'v': {'effect': 0.9}}, seeds=range(3), progress=False).plot().axes[0]
    assert not [c for c in healthy.collections if c.get_label() == 'diverged (non-finite)']
    two = ablate(lambda c, s: {'a': 1.0 + s, 'b': 2.0 * s}, {'x': {}}, seeds=range(2), progress=False)
    with pytest.raises(ValueError, match=r"pick one, e\.g\. `\.plot\('a'\)`"): two.plot()
    assert two.plot('b').axes[0].get_ylabel() == 'b'


def test_a_run_with_a_nan_loss_is_diverged_in_every_metric():
    "A NaN loss beside a finite accuracy (the accuracy of NaN outputs is a number) is one diverged run"
    def fn(seed): return {'accuracy': 0.5 if seed == 1 else 0.8 + seed / 100, 'loss': float('nan') if seed == 1 else 0.3}
    with pytest.warns(SeedWarning, match=r'diverged in 1 of 3 seeds \(seed 1\)'): res = run_seeds(fn, range(3))
    assert res.diverged == [1] and res['accuracy'].mean == pytest.approx(0.81) and res['accuracy'].diverged == [1]
    with pytest.warns(SeedWarning, match=r"v: diverged in 1 of 3 seeds \(seed 1\)"):
        table = ablate(lambda c, s: fn(s) if c else {'accuracy': 0.8 + s / 100, 'loss': 0.3}, {'base': {}, 'v': {'nan': 1}},
                       seeds=range(3), progress=False)
    row = table.row('v', 'accuracy')
    assert row['mean'] == pytest.approx(0.81) and row['verdict'].startswith('diverged in 1 of 3 seeds (seed 1); the other 2: ')
    assert '0.5000 (diverged)' in str(table)
    assert table.row('base', 'accuracy')['verdict'] == '' and '(diverged)' not in table._cells()[0][4]


def test_resuming_runs_made_with_other_versions_warns_and_same_versions_do_not(tmp_path):
    log = tmp_path / 'log.jsonl'
    ablate(toy, {'a': {'effect': 1}}, seeds=range(2), log=log, progress=False)
    with warnings.catch_warnings():
        warnings.simplefilter('error', SeedWarning)
        ablate(toy, {'a': {'effect': 1}}, seeds=range(3), log=log, mode='a', progress=False)
    lines = [json.loads(l) for l in log.read_text().splitlines()]
    lines[0]['versions'] = dict(lines[0]['versions'], torch='1.0.0', fastai_paranoid='0.0.1', torch_threads=99)
    log.write_text(''.join(json.dumps(l) + '\n' for l in lines))
    with pytest.warns(SeedWarning, match=rf"3 runs read back .* other versions \(torch: 1.0.0 in the log, {re.escape(torch.__version__)} now\)\. "):
        ablate(toy, {'a': {'effect': 1}}, seeds=range(3), log=log, mode='a', progress=False)
