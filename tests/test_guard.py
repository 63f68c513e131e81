"One Guard base class (every callback of this library derives from it), one knob for what a finding does (`on_finding`; its old names warn and still work), and the export patch installed once and reversibly."
import warnings
import pytest
from torch import nn
from fastai.learner import Learner
from fastai.callback.core import Callback
from fastai_paranoid import deploy
from fastai_paranoid.deploy import Guard, install_export_patch, remove_export_patch, without_guards
from fastai_paranoid.core import emit, on_finding_arg, ParanoidWarning, ON_FINDING, ON_LEAK
from fastai_paranoid.bn import FreezeBNStats, EmptyFreezeGuard
from fastai_paranoid.presets import FrozenTrunk, HoldLRRatio
from fastai_paranoid.guards import NaNGuard, RNGAudit
from fastai_paranoid.leaks import StateLeakDetector
from fastai_paranoid.distributed import DistributedCPU, CrossRankConsistency, DistributedValidPadding
from fastai_paranoid.splitprint import SplitFingerprint
from fastai_paranoid.paranoid import PreserveLRFindRNG, PreserveLRFindGrads, ParanoidInstaller, paranoid, is_paranoid
from fastai_paranoid.checkrun import FirstFitSanityCheck, NaNStop, SeededSharedLoaders, check_guards
from fastai_paranoid.checks import _StopAfter
from fastai_paranoid.folds import kfold_learners
from fastai_paranoid.fixtures import xor_dls, build_mlp

GUARDS = [FreezeBNStats, EmptyFreezeGuard, FrozenTrunk, HoldLRRatio, NaNGuard, RNGAudit, StateLeakDetector, DistributedCPU,
          CrossRankConsistency, DistributedValidPadding, SplitFingerprint, PreserveLRFindRNG, PreserveLRFindGrads,
          ParanoidInstaller, FirstFitSanityCheck, NaNStop, SeededSharedLoaders]
KNOBBED = [EmptyFreezeGuard, StateLeakDetector, CrossRankConsistency, DistributedValidPadding, SplitFingerprint, FirstFitSanityCheck]

def test_every_callback_of_ours_is_a_guard_and_internal_ones_are_not():
    assert all(issubclass(g, Guard) for g in GUARDS), [g for g in GUARDS if not issubclass(g, Guard)]
    assert all(issubclass(g, Guard) for g in check_guards())
    assert issubclass(_StopAfter, Callback) and not issubclass(_StopAfter, Guard) # internal: a plain callback
    assert [g.__name__ for g in GUARDS if g.changes_the_fit] == ['FreezeBNStats', 'FrozenTrunk', 'HoldLRRatio']

def test_without_guards_leaves_out_guards_only():
    class Users(Callback): pass
    learn = Learner(xor_dls(), build_mlp(), loss_func=nn.CrossEntropyLoss(), cbs=[NaNGuard(), Users()])
    with without_guards(learn):
        assert not any(isinstance(cb, Guard) for cb in learn.cbs) and any(isinstance(cb, Users) for cb in learn.cbs)
        assert not hasattr(learn, 'nan_guard')
    assert isinstance(learn.nan_guard, NaNGuard)

def test_the_export_patch_is_reversible_and_installed_once():
    NaNGuard() # a guard exists: the patch is in
    fastais = deploy._fastai_export
    assert Learner.export is deploy._export and Learner.export._fastai_export is fastais
    try:
        remove_export_patch()
        assert Learner.export is fastais, "fastai's own Learner.export is back"
        NaNGuard() # a guard made after the removal leaves it removed
        assert Learner.export is fastais
        install_export_patch(); install_export_patch()
        assert Learner.export is deploy._export and Learner.export._fastai_export is fastais, "wrapped once"
    finally: install_export_patch()

def one_deprecation(fn):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter('always')
        res = fn()
    dep = [x for x in w if issubclass(x.category, DeprecationWarning)]
    assert len(dep) == 1 and 'on_finding' in str(dep[0].message), [str(x.message) for x in w]
    assert dep[0].filename == __file__, dep[0].filename # points at the caller's line
    return res

def no_deprecation(fn):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter('always')
        res = fn()
    assert not [x for x in w if issubclass(x.category, DeprecationWarning)], [str(x.message) for x in w]
    return res

@pytest.mark.parametrize('guard', KNOBBED, ids=lambda g: g.__name__)
def test_each_guard_takes_on_finding_and_its_old_name_warns(guard):
    assert no_deprecation(lambda: guard(on_finding='log')).on_finding == 'log'
    g = one_deprecation(lambda: guard(on_leak='log'))
    assert g.on_finding == 'log'
    assert one_deprecation(lambda: g.on_leak) == 'log'
    with pytest.raises(ValueError, match=f"{guard.__name__}: on_finding='loud' is not one of 'warn', 'raise', 'log'"): guard(on_finding='loud')

def test_cross_rank_consistency_keeps_its_older_name_too():
    assert one_deprecation(lambda: CrossRankConsistency(on_fail='warn')).on_finding == 'warn'

def test_emit_and_paranoid_take_on_finding_and_the_old_name_warns():
    with pytest.raises(Exception, match='stop'): no_deprecation(lambda: emit('stop', on_finding='raise'))
    with pytest.raises(Exception, match='stop'): one_deprecation(lambda: emit('stop', on_leak='raise'))
    try:
        p = one_deprecation(lambda: paranoid(on_leak='raise', guards=[SplitFingerprint]))
        assert p.on_finding == 'raise'
        learn = Learner(xor_dls(), build_mlp(), loss_func=nn.CrossEntropyLoss())
        assert learn.split_fingerprint.on_finding == 'raise'
    finally: paranoid(False)
    assert ON_LEAK is ON_FINDING

def test_a_users_guard_written_for_on_leak_still_gets_the_setting():
    class Old(Callback):
        def __init__(self, on_leak='warn'): self.got = on_leak
    with paranoid(on_finding='log', guards=[Old]):
        assert Learner(xor_dls(), build_mlp(), loss_func=nn.CrossEntropyLoss()).old.got == 'log'

def test_sanity_check_takes_on_finding_and_on_fail_warns():
    learn = Learner(xor_dls(), build_mlp(), loss_func=nn.CrossEntropyLoss())
    report = one_deprecation(lambda: learn.sanity_check(checks=['check_loss_at_init'], on_fail=None, progress=False))
    assert [r.name for r in report.results] == ['check_loss_at_init']
    no_deprecation(lambda: learn.sanity_check(checks=['check_loss_at_init'], on_finding=None, progress=False))
    with pytest.raises(ValueError, match="not one of 'warn', 'raise', 'log' or None"): learn.sanity_check(on_finding='loud')

def test_kfold_learners_takes_on_finding_and_on_overlap_warns():
    dls_fn = lambda train_idx, valid_idx: xor_dls()
    fold, learn = no_deprecation(lambda: next(kfold_learners(8, dls_fn, build_mlp, n_splits=2, on_finding=None, loss_func=nn.CrossEntropyLoss())))
    assert fold == 0
    one_deprecation(lambda: next(kfold_learners(8, dls_fn, build_mlp, n_splits=2, on_overlap='ignore', loss_func=nn.CrossEntropyLoss())))

def test_the_old_default_on_leak_class_setting_still_wins_and_warns():
    StateLeakDetector.default_on_leak = 'log'
    try:
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter('always')
            assert StateLeakDetector().on_finding == 'log'
        assert any('default_on_finding' in str(x.message) for x in w if issubclass(x.category, DeprecationWarning))
    finally: StateLeakDetector.default_on_leak = None
    assert StateLeakDetector().on_finding == 'warn'

def test_on_finding_arg_is_the_one_place():
    assert on_finding_arg('x', 'warn') == 'warn'
    assert on_finding_arg('x', None, ON_FINDING + (None,)) is None
    with pytest.raises(TypeError): on_finding_arg('x', 'warn', on_what='warn')

def test_the_cli_option_keeps_its_old_spelling():
    from fastai_paranoid.cli import _check_parser
    parser = _check_parser()
    assert parser.parse_args(['x.py', '--on-finding', 'raise']).on_finding == 'raise'
    assert parser.parse_args(['x.py', '--on-leak', 'log']).on_finding == 'log'

LEAKY_SCRIPT = """
from torch import nn
from fastai.learner import Learner
import fastai.callback.progress # Learner.no_bar
from fastai_paranoid.fixtures import xor_dls, build_mlp
dls, model = xor_dls(), build_mlp()
for run in range(2):
    learn = Learner(dls, model, loss_func=nn.CrossEntropyLoss())
    with learn.no_bar(), learn.no_logging(): learn.fit(1, 1e-2) # seed 000's loop: the second fit reuses the trained model
"""

@pytest.mark.slow
def test_the_commands_functions_take_the_old_name_with_a_warning_and_pass_it_on(tmp_path, capsys):
    "`check_paths(on_leak=...)` and `cli.check(on_leak=...)` warn once and still act: 'raise' stops the leaky script (exit 2), the default reports it (exit 1)"
    from fastai_paranoid.runner import check_paths
    from fastai_paranoid.cli import check
    (tmp_path/'leaky.py').write_text(LEAKY_SCRIPT)
    assert no_deprecation(lambda: check_paths([tmp_path/'leaky.py'], sanity=False)) == 1
    assert one_deprecation(lambda: check_paths([tmp_path/'leaky.py'], sanity=False, on_leak='raise')) == 2
    err = capsys.readouterr().err
    assert 'Traceback' in err and 'build a new model per run' in err, err # the leak was raised inside the script
    assert one_deprecation(lambda: check(tmp_path/'leaky.py', sanity=False, on_leak='raise')) == 2

def test_paranoids_and_the_ipython_extensions_old_name_warn_and_still_work():
    from fastai_paranoid.ipython import ParanoidExtension
    with paranoid(on_finding='log') as p: assert one_deprecation(lambda: p.on_leak) == 'log'
    class Events:
        def register(self, event, fn): pass
        def unregister(self, event, fn): pass
    shell = type('Shell', (), {'events': Events()})()
    ext = one_deprecation(lambda: ParanoidExtension(shell, on_leak='log'))
    try: assert ext.paranoid.on_finding == 'log'
    finally: ext.close()
    assert not is_paranoid(), "close() puts paranoid() back as it was: off"

def test_no_guard_shadows_a_learner_attribute():
    "fastai warns 'You are shadowing an attribute (n_epoch) that exists in the learner' when a callback sets an attribute the Learner has: in the user's log, and wrong if the callback then reads learn's value"
    import fastai.callback.progress # noqa: F401
    from fastai_paranoid.paranoid import paranoid, PARANOID_GUARDS
    from fastai_paranoid.collect import collect_findings
    with paranoid(guards=PARANOID_GUARDS + check_guards(sanity=False)), collect_findings(), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        learn = Learner(xor_dls(), build_mlp(), loss_func=nn.CrossEntropyLoss())
        with learn.no_bar(), learn.no_logging(): learn.fit(2, 1e-2)
    shadowing = [str(w.message) for w in caught if 'shadowing an attribute' in str(w.message)]
    assert not shadowing, shadowing
