"Cross-rank guards under a real 2-process launch (torchrun, gloo on CPU). Each script runs all its scenarios in one launch."
import json, os, tempfile
from collections import defaultdict
import pytest
from fastai_paranoid.distributed import run_distributed

SCRIPTS = os.path.join(os.path.dirname(__file__), 'dist_scripts')

def launch(script):
    "Run `script` on 2 ranks; {scenario: {rank: result}} from the JSON files each rank wrote"
    with tempfile.TemporaryDirectory() as out_dir:
        proc = run_distributed(os.path.join(SCRIPTS, script), out_dir, nproc=2, timeout=300)
        assert proc.returncode == 0, f"launch of {script} failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-5000:]}"
        found = defaultdict(dict)
        for fname in sorted(os.listdir(out_dir)):
            with open(os.path.join(out_dir, fname)) as f: res = json.load(f)
            found[res['scenario']][res['rank']] = res
    return found

@pytest.fixture(scope='module')
def cross_rank(): return launch('cross_rank.py')

def verdicts(res): return {r['check']: r['verdict'] for r in res['results']}

@pytest.mark.slow
def test_healthy_run_passes_on_every_rank(cross_rank):
    for rank in (0, 1):
        res = cross_rank['healthy'][rank]
        assert res['error'] is None and res['warnings'] == []
        assert verdicts(res) == {'cross-rank consistency': 'passed', 'distinct random streams per rank': 'passed'}
        assert res['results'][1]['measured_raw']['random_consumers'] == 1  # the dropout layer was seen, and its streams differ
        # DDP averaged the gradients: still identical on both ranks after the fit, optimizer state included
        assert verdicts(cross_rank['healthy_after_fit'][rank]) == {'cross-rank consistency': 'passed'}

@pytest.mark.slow
def test_init_divergence_names_rank_and_tensor_on_every_rank(cross_rank):
    for rank in (0, 1):
        res = cross_rank['init_divergence'][rank]
        assert res['error_type'] == 'CrossRankDivergenceError'  # raised on both ranks: none is left in a collective
        assert 'rank 1 differs from rank 0' in res['error'] and '`model.0.weight (parameter)`' in res['error']
        assert res['results'][0]['measured_raw']['state_diverged_ranks'] == [1]
        assert 'fresh_learner(dls_fn, model_fn, seed=s)' in res['results'][0]['fix']

@pytest.mark.slow
def test_warn_mode_warns_on_rank0_only_and_ddp_hides_the_divergence(cross_rank):
    r0, r1 = cross_rank['init_divergence_warn'][0], cross_rank['init_divergence_warn'][1]
    assert r0['error'] is None and r1['error'] is None
    assert len(r0['warnings']) == 1 and r0['warnings'][0].startswith('CrossRankWarning') and 'rank 1' in r0['warnings'][0]
    assert r1['warnings'] == []
    # the same check after DistributedTrainer's wrap sees identical weights: DDP broadcast rank 0's
    assert r0['after_wrap']['verdict'] == 'passed' and r1['after_wrap']['verdict'] == 'passed'

@pytest.mark.slow
def test_split_divergence_is_a_data_finding(cross_rank):
    res = cross_rank['split_divergence'][0]
    assert res['results'][0]['measured_raw']['data_diverged_ranks'] == [1]
    assert res['results'][0]['measured_raw']['state_diverged_ranks'] == []
    assert '`dls.train.dataset.tensors[0]`' in res['error'] and 'RandomSplitter(seed=s)' in res['error']

@pytest.mark.slow
def test_shared_streams_with_dropout_warn_once(cross_rank):
    r0, r1 = cross_rank['shared_streams'][0], cross_rank['shared_streams'][1]
    assert verdicts(r0) == {'cross-rank consistency': 'passed', 'distinct random streams per rank': 'warning'}
    assert 'model.2 (Dropout)' in r0['results'][1]['message'] and 'seed_rank_streams' in r0['results'][1]['fix']
    assert len(r0['warnings']) == 1 and r1['warnings'] == []

@pytest.mark.slow
def test_rank_dependent_lr_is_caught(cross_rank):
    res = cross_rank['lr_divergence'][1]
    assert res['error_type'] == 'CrossRankDivergenceError'
    assert '`opt.hypers[0].lr` (sum 0.001 on rank 0 vs 0.002 on rank 1)' in res['error']
    assert 'DDP' not in res['results'][0]['message']  # no weight differs, so no word about DDP's broadcast

@pytest.fixture(scope='module')
def guards(): return launch('guards.py') # freeze_bn.py and leaks.py in one launch

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

@pytest.mark.slow
def test_under_paranoid_the_divergence_is_caught(cross_rank):
    for rank in (0, 1):
        res = cross_rank['paranoid_init_divergence'][rank]
        assert res['error_type'] == 'CrossRankDivergenceError' and 'rank 1 differs from rank 0' in res['error']

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
    "With on_leak='raise' no rank is left waiting for one that stopped"
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
