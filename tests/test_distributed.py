"""Cross-rank guards under real launches (gloo on CPU): 2 ranks, 4 ranks, 2 nodes simulated on localhost, and `accelerate launch`.
Each script runs all its scenarios in one launch; the five launches start together, so their start-up waits overlap."""
import json, os, re, tempfile
from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor
import pytest
from fastai_paranoid.distributed import run_distributed

SCRIPTS = os.path.join(os.path.dirname(__file__), 'dist_scripts')
LAUNCHES = {'cross_rank': ('cross_rank.py', dict(nproc=2)), 'guards': ('guards.py', dict(nproc=2)),
            'four_ranks': ('four_ranks.py', dict(nproc=4)), 'two_nodes': ('launchers.py', dict(nproc=2, nnodes=2)),
            'accelerate': ('launchers.py', dict(nproc=2, launcher='accelerate'))}

def launch(script, **kwargs):
    "Run `script`; {scenario: {rank: result}} from the JSON files each rank wrote"
    with tempfile.TemporaryDirectory() as out_dir:
        env = {'HF_HOME': os.path.join(out_dir, 'hf')} # no user Accelerate config
        proc = run_distributed(os.path.join(SCRIPTS, script), out_dir, timeout=400, env=env, **kwargs)
        assert proc.returncode == 0, f"launch of {script} failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-5000:]}"
        found = defaultdict(dict)
        for fname in sorted(os.listdir(out_dir)):
            if not fname.endswith('.json'): continue
            with open(os.path.join(out_dir, fname)) as f: res = json.load(f)
            found[res['scenario']][res['rank']] = res
    return found

# every launch starts at once in one module fixture; under pytest-xdist the README's `--dist loadfile` keeps this file's tests on one worker

@pytest.fixture(scope='module')
def launches():
    "Start every launch at once (futures); each test waits for the one it reads"
    with ThreadPoolExecutor(len(LAUNCHES)) as pool:
        yield {name: pool.submit(launch, script, **kwargs) for name, (script, kwargs) in LAUNCHES.items()}

@pytest.fixture(scope='module')
def cross_rank(launches): return launches['cross_rank'].result()

def verdicts(res): return {r['check']: r['verdict'] for r in res['results']}
def finding(res, kind): return next(f for f in res['results'][0]['findings'] if f['kind'] == kind)

# --- 2 ranks: each kind of divergence caught with its own evidence and fix, and silent when healthy

@pytest.mark.slow
def test_healthy_run_passes_on_every_rank(cross_rank):
    for rank in (0, 1):
        res = cross_rank['healthy'][rank]
        assert res['error'] is None and res['warnings'] == []
        assert verdicts(res) == {'cross-rank consistency': 'passed', 'distinct random streams per rank': 'passed'}
        assert res['results'][1]['measured_raw']['random_consumers'] == 1  # the dropout layer was seen, and its streams differ
        measured = res['results'][0]['measured_raw']
        assert measured['data_items'] == {'dls.train': [32, 256], 'dls.valid': [32, 256]}  # how much data was compared
        assert 'the first 32 of 256 items of dls.train' in res['results'][0]['message']
        # DDP averaged the gradients: still identical on both ranks after the fit, optimizer state included
        after = cross_rank['healthy_after_fit'][rank]['results'][0]
        assert after['verdict'] == 'passed' and after['measured_raw']['compared']['opt.state'] == 12

@pytest.mark.slow
def test_weights_divergence_that_ddp_overwrites_is_an_info_note_with_the_element(cross_rank):
    "fastai's DDP recipe without a seed: the weights differ before the wrap, DDP copies rank 0's, the ranks end identical"
    for rank in (0, 1):
        res = cross_rank['init_divergence'][rank]
        assert res['error'] is None and res['warnings'] == [], "an info note: nothing raised or warned, the fit ran"
        f = finding(res, 'weights')
        assert f['ranks'] == [1] and f['first'] == 'model.0.weight (parameter)' and f['index'] == [0, 0]
        v0, v1 = f['values']
        message = res['results'][0]['message']
        assert v0 != v1 and f"{v0:.6g} on rank 0, {v1:.6g} on rank 1" in message
        assert "DDP's wrap will copy rank 0's weights over them" in message and '6 of 6 differ' in message
        assert 'fresh_learner(dls_fn, model_fn, seed=s)' in f['fix']
        assert res['results'][0]['measured_raw']['diverged'] == {'weights': [1]}
        assert res['after_wrap']['verdict'] == 'passed', "DDP copied rank 0's weights"

@pytest.mark.slow
def test_warn_mode_keeps_the_note_as_data_on_every_rank(cross_rank):
    r0, r1 = cross_rank['init_divergence_warn'][0], cross_rank['init_divergence_warn'][1]
    assert r0['error'] is None and r1['error'] is None and r0['warnings'] == [] and r1['warnings'] == []
    assert r0['results'][0]['verdict'] == 'failed' and r1['results'][0]['verdict'] == 'failed' # both ranks keep the finding as data
    assert r0['after_wrap']['verdict'] == 'passed' and r1['after_wrap']['verdict'] == 'passed'

@pytest.mark.slow
@pytest.mark.parametrize('scenario', ['split_divergence', 'content_divergence'])
def test_data_is_compared_by_what_the_loaders_serve(cross_rank, scenario):
    "A per-rank split, and identical indices over points drawn with a per-rank seed: both differ in content"
    res = cross_rank[scenario][0]
    f = finding(res, 'data')
    assert res['results'][0]['measured_raw']['diverged'] == {'data': [1]}  # nothing else differs
    assert f['first'] == 'dls.train items 0-31 after transforms, part 0' and f['values'][0] != f['values'][1]
    assert f"{f['values'][0]:.6g} on rank 0, {f['values'][1]:.6g} on rank 1" in res['error']
    assert 'RandomSplitter(seed=s)' in res['error'] and 'sum ' not in res['error']

@pytest.mark.slow
def test_shared_streams_with_dropout_warn_once_with_the_digest(cross_rank):
    r0, r1 = cross_rank['shared_streams'][0], cross_rank['shared_streams'][1]
    assert verdicts(r0) == {'cross-rank consistency': 'passed', 'distinct random streams per rank': 'warning'}
    msg = r0['results'][1]['message']
    assert 'model.2 (Dropout)' in msg and re.search(r'torch \(CPU\) state \(digests [0-9a-f]{16}, [0-9a-f]{16}, [0-9a-f]{16}\)', msg)
    assert 'seed_rank_streams' in r0['results'][1]['fix']
    assert len(r0['warnings']) == 1 and r1['warnings'] == []

@pytest.mark.slow
def test_rank_dependent_lr_is_a_hyper_parameter_finding(cross_rank):
    res = cross_rank['lr_divergence'][1]
    assert res['error_type'] == 'CrossRankDivergenceError'
    assert '`opt.hypers[0].lr`: 0.001 on rank 0, 0.002 on rank 1' in res['error']
    assert 'DDP' in res['error'] and "copy rank 0's" not in res['error']  # no word about the wrap's copy: no weight differs
    assert res['results'][0]['measured_raw']['diverged'] == {'opt.hypers': [1]}

@pytest.mark.slow
def test_optimizer_state_restored_on_rank0_only(cross_rank):
    for rank in (0, 1):
        res = cross_rank['opt_state_restored_on_rank0'][rank]
        assert res['error'] is None  # on_finding='log': recorded, the fit ran
        f = finding(res, 'opt.state')
        assert f['first'] == 'opt.state[model.0.weight].grad_avg' and f['values'][0] != f['values'][1]
        assert 'DDP averages gradients, not optimizer state' in res['results'][0]['message']
        assert 'with_opt=True' in f['fix']
    cleared = finding(cross_rank['opt_state_cleared_on_rank1'][0], 'opt.state')
    assert '18 entries on rank 0 vs 0 entries on rank 1' in cleared['evidence'] and 'nothing on rank 1' in cleared['evidence']

@pytest.mark.slow
def test_buffers_ddp_does_not_sync_get_their_own_message(cross_rank):
    for rank in (0, 1):
        res = cross_rank['unsynced_buffers'][rank]['results'][0]
        assert res['verdict'] == 'failed' and res['measured_raw']['diverged'] == {'unsynced': [1]}
        f = res['findings'][0]
        assert f['first'] == 'model.0.1.running_mean (buffer)' and f['values'][0] != f['values'][1]
        assert 'broadcast_buffers=False' in res['message'] and 'stay different through the fit' in res['message']
        assert "copy rank 0's" not in res['message'] and 'seed' not in res['fix']  # the advice for weights does not apply
        assert 'broadcast_buffers=True' in res['fix']
        # healthy: with DDP's default, the different statistics each rank ended its fit with are copied at the wrap
        ok = cross_rank['synced_buffers'][rank]['results'][0]
        assert ok['verdict'] == 'passed' and ok['measured_raw']['diverged'] == {'buffers': [1]}
        assert "DDP copies rank 0's buffers over them" in ok['message']

@pytest.mark.slow
def test_paranoid_on_finding_reaches_cross_rank_consistency(cross_rank):
    "One knob: paranoid(on_finding='warn') warns (rank 0) and the fit runs; 'raise' stops every rank together"
    assert cross_rank['paranoid_warn'][0]['error'] is None and cross_rank['paranoid_warn'][1]['error'] is None
    assert len(cross_rank['paranoid_warn'][0]['warnings']) == 1 and cross_rank['paranoid_warn'][1]['warnings'] == []
    for rank in (0, 1):
        assert cross_rank['paranoid_raise'][rank]['error_type'] == 'CrossRankDivergenceError'

# --- 4 ranks on one machine: CPU in one call, sync_bn refused, a divergence on rank 2, gathered bytes

@pytest.fixture(scope='module')
def four_ranks(launches): return launches['four_ranks'].result()

@pytest.mark.slow
def test_cpu_in_one_call_under_paranoid(four_ranks):
    for rank in range(4):
        res = four_ranks['cpu_one_call'][rank]
        assert res['error'] is None and res['warnings'] == []
        assert verdicts(res) == {'cross-rank consistency': 'passed', 'distinct random streams per rank': 'passed'}
        assert res['seen'] == {'dl': 'DistributedDL', 'own_broadcast': True}  # the fix, on this context's DataLoaders only
        assert res['class_untouched'] and res['loaders_after'] == ['DataLoader', 'DataLoader']
        assert 'DistributedCPU' not in res['cbs_after'] and 'DistributedTrainer' not in res['cbs_after']
        # outside paranoid(), fastai's own CUDA broadcast is back
        assert 'Found no NVIDIA driver' in four_ranks['without_the_fix'][rank]['error']

@pytest.mark.slow
def test_sync_bn_on_cpu_is_refused_in_one_line_naming_the_fix(four_ranks):
    for rank in range(4):
        res = four_ranks['sync_bn_on_cpu'][rank]
        last_line = res['refused'].splitlines()[-1]
        assert 'sync_bn=True' in last_line and 'model.0.1 (BatchNorm2d)' in last_line
        assert last_line.endswith('`learn.distrib_ctx(cpu=True, sync_bn=False)`.')
        assert res['error'] is None  # and the named fix trains

@pytest.mark.slow
def test_divergence_on_rank2_of_4_is_named_on_every_rank(four_ranks):
    for rank in range(4):
        res = four_ranks['rank2_divergence'][rank]
        message = res['results'][0]['message']
        assert res['error'] is None, "weights DDP's wrap overwrites: an info note, the fit runs"
        assert res['results'][0]['verdict'] == 'failed' and 'rank 2 differs from rank 0' in message
        assert res['results'][0]['measured_raw']['diverged'] == {'weights': [2]}
        assert 'rank 1' not in message and 'rank 3' not in message

@pytest.mark.slow
def test_gathered_bytes_do_not_grow_with_the_model(four_ranks):
    r18, r50 = four_ranks['bytes_resnet18'][0], four_ranks['bytes_resnet50'][0]
    assert r50['n_params'] > 2 * r18['n_params'] and r50['n_tensors'] > 2 * r18['n_tensors']
    healthy = [r['healthy']['measured_raw'] for r in (r18, r50)]
    assert healthy[0]['gathered_bytes'] == healthy[1]['gathered_bytes'] == 4 * (8 + 7 * 3 * 8)
    assert healthy[0]['sent_bytes'] == healthy[1]['sent_bytes'] == 8 + 7 * 3 * 8
    for r in (r18, r50):
        f = r['planted']['findings'][0]
        assert f['first'] == 'model.layer4.0.conv2.weight (parameter)' and f['index'] == [5, 3, 1, 2] and f['ranks'] == [3]
        assert r['planted']['measured_raw']['gathered_bytes'] < 16_000  # a few narrowing rounds of at most 64 digests
    print(f"\ngathered bytes per rank (4 ranks), healthy / one weight changed: resnet18 {healthy[0]['gathered_bytes']} / "
          f"{r18['planted']['measured_raw']['gathered_bytes']}, resnet50 {healthy[1]['gathered_bytes']} / {r50['planted']['measured_raw']['gathered_bytes']}")

# --- 2 nodes simulated on localhost, and `accelerate launch`

@pytest.mark.slow
def test_two_nodes_name_global_rank_node_and_local_rank(launches):
    found = launches['two_nodes'].result()
    for rank in range(4):
        assert found['healthy'][rank]['error'] is None and verdicts(found['healthy'][rank])['cross-rank consistency'] == 'passed'
        res = found['last_rank_diverged'][rank]
        assert res['error'] is None and res['results'][0]['findings'][0]['rank_names'] == ['rank 3 (node 1, local rank 1)']
    assert found['healthy'][3]['env']['GROUP_RANK'] == '1' and found['healthy'][3]['env']['LOCAL_RANK'] == '1'
    assert 'rank 3 (node 1, local rank 1) differs from rank 0' in found['last_rank_diverged'][0]['results'][0]['message']
    assert [found['last_rank_diverged'][r]['warnings'] for r in range(4)] == [[], [], [], []], "an info note: logged, not warned"

@pytest.mark.slow
def test_accelerate_launch_runs_two_cpu_processes(launches):
    found = launches['accelerate'].result()
    for rank in (0, 1):
        healthy = found['healthy'][rank]
        assert healthy['error'] is None and healthy['world'] == 2 and healthy['backend'] == 'gloo'
        assert verdicts(healthy)['cross-rank consistency'] == 'passed'
    assert 'rank 1 differs from rank 0' in found['last_rank_diverged'][0]['results'][0]['message']
    assert found['last_rank_diverged'][0]['warnings'] == [] and found['last_rank_diverged'][1]['warnings'] == []

# --- the other guards under DDP

@pytest.mark.slow
def test_freeze_bn_stats_speaks_on_rank0_only(guards):
    r0, r1 = guards['nothing_frozen'][0], guards['nothing_frozen'][1]
    assert len(r0['bn_warnings']) == 1 and 'nothing in learn.model is frozen' in r0['bn_warnings'][0]
    assert r1['bn_warnings'] == [] and r0['warned_idle'] and r1['warned_idle']  # said once, known on every rank

@pytest.fixture(scope='module')
def guards(launches): return launches['guards'].result() # freeze_bn.py, leaks.py and valid_padding.py in one launch

@pytest.fixture(scope='module')
def freeze_bn(guards): return guards

@pytest.mark.slow
def test_freeze_bn_stats_holds_sync_batchnorm_on_every_rank(freeze_bn):
    for rank in (0, 1):
        res = freeze_bn['held_sync_bn'][rank]
        assert res['error'] is None and res['bn_warnings'] == []
        # the fit ran a DDP-wrapped model whose norm layers were converted, and they stayed in eval mode (no all-reduce)
        assert res['seen_in_fit'] == {'model': 'DistributedDataParallel', 'classes': ['SyncBatchNorm'] * 2, 'training': [False, False]}
        assert res['n_stat_buffers'] == 6 and res['moved'] == []  # bitwise unchanged, num_batches_tracked included
        assert [r['layer'] for r in res['drift']] == ['model.0.1 (SyncBatchNorm)', 'model.0.5 (SyncBatchNorm)']
        assert {r['verdict'] for r in res['drift']} == {'held'}
        assert [r['verdict'] for r in res['cross_rank']] == ['passed', 'passed']
        assert freeze_bn['held_sync_bn_after_fit'][rank]['result']['verdict'] == 'passed'

@pytest.mark.slow
def test_without_the_guard_the_frozen_trunk_moves_or_syncs(freeze_bn):
    for rank in (0, 1):
        synced = freeze_bn['unguarded_sync_bn'][rank]
        # frozen SyncBatchNorm layers in training mode try to all-reduce their batch statistics (CPU refuses; GPU would do it)
        assert synced['seen_in_fit']['training'] == [True, True]
        assert synced['error'].startswith('ValueError: SyncBatchNorm expected input tensor to be on GPU')
        plain = freeze_bn['unguarded_no_sync'][rank]
        assert plain['seen_in_fit']['training'] == [True, True]
        assert plain['error'] is None and len(plain['moved']) == 6
        held = freeze_bn['held_no_sync'][rank]
        assert held['error'] is None and held['moved'] == [] and held['bn_warnings'] == []

@pytest.fixture(scope='module')
def leaks(guards): return guards

@pytest.mark.slow
def test_leak_detector_reports_once_on_rank0(leaks):
    r0, r1 = leaks['reused_model'][0], leaks['reused_model'][1]
    # found on both ranks (same script), warned by rank 0 only
    for res in (r0, r1):
        assert [f['kind'] for f in res['findings'] if f['severity'] != 'info'] in (['reused_model'], ['reused_params'])
    assert len(r0['warnings']) == 1 and r0['warnings'][0].startswith('StateLeakWarning') and r1['warnings'] == []

@pytest.mark.slow
def test_leak_detector_warns_on_rank0_only_without_report_on_rank0(leaks):
    "The detector itself reports on rank 0 only; every rank keeps the finding"
    r0, r1 = leaks['reused_model_unfiltered'][0], leaks['reused_model_unfiltered'][1]
    for res in (r0, r1):
        assert [f['kind'] for f in res['findings'] if f['severity'] != 'info'] in (['reused_model'], ['reused_params'])
    assert len(r0['warnings']) == 1 and r0['warnings'][0].startswith('StateLeakWarning') and r1['warnings'] == []

@pytest.mark.slow
def test_leak_detector_raises_on_every_rank(leaks):
    "With on_finding='raise' no rank is left waiting for one that stopped"
    for rank in (0, 1):
        res = leaks['reused_model_raise'][rank]
        assert res['error'].startswith('StateLeakError') and res['warnings'] == []

@pytest.mark.slow
def test_leak_detector_stays_quiet_on_rank1_and_finds_no_error_on_a_healthy_distributed_run(leaks):
    for rank in (0, 1):
        res = leaks['healthy_two_fits'][rank]
        assert res['error'] is None and res['other_warnings'] == []
        assert [f for f in res['findings'] if f['severity'] == 'error'] == []
    assert leaks['healthy_two_fits'][1]['warnings'] == []

@pytest.mark.slow
def test_leak_detector_warns_nothing_on_a_healthy_distributed_run(leaks):
    for rank in (0, 1):
        res = leaks['healthy_two_fits'][rank]
        assert res['warnings'] == [] and [f for f in res['findings'] if f['severity'] != 'info'] == []

@pytest.mark.slow
def test_leak_detector_judges_buffers_alike_on_every_rank(leaks):
    # without validation each rank ends a fit with its own shard's BatchNorm statistics, and the next wrap copies rank 0's
    for rank in (0, 1):
        res = leaks['healthy_without_validation'][rank]
        assert res['error'] is None and res['findings'] == [] and res['warnings'] == []
    # a forward on rank 0 only (a preview between fits) reaches every rank through the wrap, and is found on every rank
    for rank in (0, 1):
        found = leaks['forward_on_rank0_only'][rank]['findings']
        assert [(f['kind'], f['path']) for f in found] == [('buffers_outside_fit', 'model.0.1 (BatchNorm2d)')]
        assert 'num_batches_tracked 2 -> 3' in found[0]['evidence']

@pytest.mark.slow
def test_leak_detector_catches_optimizer_state_kept_over_reinitialised_weights_under_ddp(leaks):
    # DDP's broadcast moves the version counters at every wrap; the detector compares the weights' fingerprints instead
    for rank in (0, 1):
        res = leaks['reinit_between_fits'][rank]
        assert res['error'] is None and [f['kind'] for f in res['findings']] == ['optimizer_state']
    assert len(leaks['reinit_between_fits'][0]['warnings']) == 1 and leaks['reinit_between_fits'][1]['warnings'] == []

@pytest.mark.slow
def test_leak_detector_has_no_false_info_finding_under_ddp(leaks):
    for rank in (0, 1): assert leaks['healthy_two_fits'][rank]['findings'] == []

@pytest.mark.slow
def test_leak_detector_catches_a_forward_between_distributed_fits(leaks):
    for rank in (0, 1):
        found = leaks['forward_between_fits'][rank]['findings']
        assert [f['kind'] for f in found] == ['buffers_outside_fit']
        assert found[0]['path'] == 'model.0.1 (BatchNorm2d)' # the user's model, not DDP's `module.` names
        assert 'num_batches_tracked 2 -> 3' in found[0]['evidence']
    assert len(leaks['forward_between_fits'][0]['warnings']) == 1 and leaks['forward_between_fits'][1]['warnings'] == []

# --- DistributedDL pads the validation set: valid_loss and AvgMetric count the repeats (fastai 2.8.12), AccumMetric does not

@pytest.fixture(scope='module')
def valid_padding(guards): return guards

@pytest.mark.slow
def test_padded_validation_is_reported_with_the_values_over_the_real_items(valid_padding):
    "21 items on 2 ranks: item 0 (wrong) served twice; the one-process values are 0.360881 (loss) and 20/21 (accuracy)"
    for rank in (0, 1):
        res = valid_padding['valid_padding'][rank]
        loss, acc, err, f1 = res['values']
        assert abs(loss - 0.404171) < 1e-5 and abs(acc - 20 / 22) < 1e-6 and abs(err - 2 / 22) < 1e-6 # fastai's numbers: the repeat counted
        assert abs(f1 - 40 / 41) < 1e-6 and res['n_preds'] == 21 # AccumMetric and get_preds drop it
        [f] = res['findings'] # two validate() and a get_preds: reported once
        assert (f['kind'], f['level'], f['claim']) == ('padded_validation', 'error', 'certain')
        assert 'its 21 items are padded to 22' in f['evidence'] and 'at the end of rank 1' in f['evidence']
        assert 'valid_loss 0.404171 reported, 0.360881 over the 21 items (+12.0%)' in f['evidence']
        assert 'accuracy 0.909091 reported, 0.952381 over the 21 items (-4.5%)' in f['evidence'] and 'f1_score (AccumMetric)' in f['evidence']
        assert '(21 -> 20 or 22)' in f['fix'] and 'AccumMetric(accuracy, flatten=False)' in f['fix']

@pytest.mark.slow
def test_validation_set_a_multiple_of_the_world_size_is_silent_and_accum_metric_is_exact(valid_padding):
    for rank in (0, 1):
        assert valid_padding['valid_multiple'][rank]['findings'] == []
        accum = valid_padding['valid_padding_accum'][rank]
        assert abs(accum['values'][1] - 20 / 21) < 1e-6 # AccumMetric(accuracy, flatten=False): gathered and cut to the 21 items
        [f] = accum['findings'] # only valid_loss still counts the repeat
        assert "valid_loss (fastai's AvgLoss" in f['evidence'] and 'accuracy 0.9' not in f['evidence']

@pytest.mark.slow
def test_padded_validation_level_follows_the_size_of_the_change(valid_padding):
    "1001 items on 2 ranks, an AccumMetric: only valid_loss counts the repeat, 0.3% off: a note (not an exit 1), with the numbers"
    for rank in (0, 1):
        res = valid_padding['valid_padding_small'][rank]
        [f] = res['findings']
        assert (f['kind'], f['level'], f['claim']) == ('padded_validation', 'info', 'certain'), f
        assert re.search(r"valid_loss 0\.3\d+ reported, 0\.3\d+ over the 1001 items \(\+0\.\d\d%\)", f['evidence']), f['evidence']
        assert 'within 1% of the value: a note, not an error' in f['evidence'] and 'f1_score (AccumMetric)' in f['evidence']
