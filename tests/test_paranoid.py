"paranoid() and PreserveLRFindRNG: lr_find leaves training bitwise unchanged; the installer adds and removes exactly its guards."
import pickle, warnings
import pytest
import torch
from torch import nn
from fastai.learner import Learner
import fastai.callback.schedule # lr_find, fine_tune; learn.no_bar (it imports fastai.callback.progress)
from fastai.callback.core import Callback, defaults
from fastai_paranoid.core import fingerprints, rng_fingerprint, preserve_rng
from fastai_paranoid.fixtures import xor_dls, build_mlp, random_image_dls, bn_cnn
from fastai_paranoid.fresh import fresh_learner
from fastai_paranoid.paranoid import PreserveLRFindRNG, ParanoidInstaller, paranoid, is_paranoid, PARANOID_GUARDS

def dropout_mlp(): return nn.Sequential(nn.Linear(2, 32), nn.ReLU(), nn.Dropout(0.3), nn.Linear(32, 2))

def state_of(learn):
    "Fingerprints of weights, buffers and optimizer state"
    tensors = list(learn.model.state_dict().values())
    if learn.opt is not None:
        for p, pg, state, hyper in learn.opt.all_params(with_grad=False):
            tensors += [v for v in state.values() if isinstance(v, torch.Tensor)]
    return fingerprints(tensors)

def run(probe, cbs=None, dls_fn=lambda: xor_dls(bs=32), model_fn=dropout_mlp, how='lr_find'):
    learn = fresh_learner(dls_fn, model_fn, cbs=cbs, loss_func=nn.CrossEntropyLoss(), seed=0)
    with learn.no_bar(), learn.no_logging():
        if probe == 'lr_find': learn.lr_find(num_it=12, show_plot=False)
        elif probe == 'preserve_rng':
            with preserve_rng(learn.dls): learn.lr_find(num_it=12, show_plot=False)
        learn.fit(2, 1e-2)
    return learn

@pytest.fixture(autouse=True)
def _off_after_each_test():
    before = list(defaults.callbacks)
    yield
    paranoid(False)
    assert defaults.callbacks == before, "a test left the installer in fastai's defaults"

# --- lr_find and the RNGs

@pytest.mark.parametrize('dls_fn,model_fn', [(lambda: xor_dls(bs=32), dropout_mlp),
                                             (lambda: random_image_dls(n_train=64, bs=8), bn_cnn)])
def test_lr_find_changes_later_fit_without_fix_and_not_with_it(dls_fn, model_fn):
    plain = run(None, dls_fn=dls_fn, model_fn=model_fn)
    bug = run('lr_find', dls_fn=dls_fn, model_fn=model_fn)
    assert state_of(bug) != state_of(plain), "fastai's lr_find is expected to change the fit that follows (issues #3013, #3295)"
    assert bug.recorder.losses != plain.recorder.losses
    for fixed in [run('lr_find', cbs=PreserveLRFindRNG(), dls_fn=dls_fn, model_fn=model_fn),
                  run('preserve_rng', dls_fn=dls_fn, model_fn=model_fn)]:
        assert state_of(fixed) == state_of(plain)
        assert fixed.recorder.losses == plain.recorder.losses

def test_lr_find_fixed_under_paranoid():
    plain = run(None)
    with paranoid(guards=[PreserveLRFindRNG]): fixed = run('lr_find')
    assert state_of(fixed) == state_of(plain) and fixed.recorder.losses == plain.recorder.losses

def test_callback_is_inert_in_ordinary_fits():
    plain = run(None)
    with_cb = run(None, cbs=PreserveLRFindRNG())
    assert state_of(with_cb) == state_of(plain)
    assert with_cb.preserve_lr_find_rng.states is None

def test_rngs_after_lr_find_are_the_rngs_before():
    learn = fresh_learner(lambda: xor_dls(bs=32), dropout_mlp, cbs=PreserveLRFindRNG(), loss_func=nn.CrossEntropyLoss())
    before = rng_fingerprint(learn.dls)
    with learn.no_bar(), learn.no_logging(): learn.lr_find(num_it=8, show_plot=False)
    assert rng_fingerprint(learn.dls) == before

def test_lr_find_that_raises_leaves_no_stale_states_behind():
    class Boom(Callback):
        def after_batch(self):
            if self.train_iter == 3: raise RuntimeError("boom")
    learn = fresh_learner(lambda: xor_dls(bs=32), dropout_mlp, cbs=PreserveLRFindRNG(), loss_func=nn.CrossEntropyLoss())
    learn.add_cb(Boom())
    with learn.no_bar(), learn.no_logging(), pytest.raises(RuntimeError, match='boom'): learn.lr_find(num_it=8, show_plot=False)
    learn.remove_cb(Boom)
    fp = rng_fingerprint(learn.dls)
    with learn.no_bar(), learn.no_logging(): learn.fit(1)
    assert rng_fingerprint(learn.dls) != fp, "an ordinary fit after the failed probe draws as usual (nothing restored)"
    assert learn.preserve_lr_find_rng.states is None

def test_callback_pickles_after_lr_find():
    "`learn.export()` pickles callbacks: nothing of the probe (RNG states, DataLoaders) stays in it"
    learn = fresh_learner(lambda: xor_dls(bs=32), dropout_mlp, cbs=PreserveLRFindRNG(), loss_func=nn.CrossEntropyLoss())
    with learn.no_bar(), learn.no_logging(): learn.lr_find(num_it=8, show_plot=False)
    assert learn.preserve_lr_find_rng.states is None
    cb = pickle.loads(pickle.dumps(learn.preserve_lr_find_rng))
    assert cb.probes == learn.preserve_lr_find_rng.probes

# --- paranoid()

class Noted(Callback):
    "A test guard that takes on_finding"
    def __init__(self, on_finding='warn'): self.on_finding = on_finding

class Plain(Callback):
    "A test guard without settings"

def new_learner(**kwargs): return Learner(xor_dls(), build_mlp(), loss_func=nn.CrossEntropyLoss(), **kwargs)

def test_installs_into_every_new_learner_and_passes_on_finding():
    before = list(defaults.callbacks)
    paranoid(on_finding='raise', guards=[Noted, Plain])
    assert is_paranoid() and defaults.callbacks == before + [ParanoidInstaller]
    a, b = new_learner(), fresh_learner(xor_dls, build_mlp, loss_func=nn.CrossEntropyLoss())
    for learn in (a, b):
        assert learn.noted.on_finding == 'raise' and isinstance(learn.plain, Plain)
        assert not any(isinstance(cb, ParanoidInstaller) for cb in learn.cbs)
    assert a.noted is not b.noted, "each Learner gets its own instances"
    paranoid(False)
    assert defaults.callbacks == before
    assert not hasattr(a, 'noted') and not any(isinstance(cb, (Noted, Plain)) for cb in a.cbs + b.cbs)
    assert not hasattr(new_learner(), 'noted')

def test_default_guards_and_vision_learner():
    from fastai.vision.all import vision_learner, resnet18
    from fastai_paranoid.fixtures import digits_dls
    paranoid()
    learn = vision_learner(digits_dls(size=32, c_in=3, bs=32), resnet18, pretrained=False, n_out=10, loss_func=nn.CrossEntropyLoss())
    for guard in PARANOID_GUARDS: assert sum(isinstance(cb, guard) for cb in learn.cbs) == 1, guard

def test_calling_twice_does_not_duplicate():
    paranoid(guards=[Plain]); paranoid(guards=[Plain])
    assert defaults.callbacks.count(ParanoidInstaller) == 1
    assert sum(isinstance(cb, Plain) for cb in new_learner().cbs) == 1

def test_default_cbs_false_is_respected():
    paranoid(guards=[Plain])
    assert not hasattr(new_learner(default_cbs=False), 'plain')

def test_guard_the_user_added_is_kept_and_not_duplicated():
    mine = Plain()
    paranoid(guards=[Plain])
    learn = new_learner(cbs=mine)
    assert [cb for cb in learn.cbs if isinstance(cb, Plain)] == [mine]
    paranoid(False)
    assert learn.plain is mine, "paranoid(False) removes only what paranoid() added"

def test_context_manager_restores_previous_state():
    paranoid(guards=[Plain])
    with paranoid(guards=[Noted], on_finding='log'):
        inner = new_learner()
        assert hasattr(inner, 'noted') and not hasattr(inner, 'plain')
    outer = new_learner()
    assert hasattr(outer, 'plain') and not hasattr(outer, 'noted')
    paranoid(False)
    with paranoid(guards=[Plain]): inside = new_learner()
    assert not is_paranoid() and not hasattr(inside, 'plain')

def test_context_manager_restores_on_exception():
    with pytest.raises(KeyError):
        with paranoid(guards=[Plain]): raise KeyError('user code')
    assert not is_paranoid()

def test_guarded_fit_is_the_unguarded_fit():
    plain = run(None)
    with paranoid(guards=[PreserveLRFindRNG, Plain]): guarded = run(None)
    assert state_of(guarded) == state_of(plain) and guarded.recorder.losses == plain.recorder.losses

@pytest.mark.parametrize('bad,match', [(dict(guards=[Plain()]), 'not an instance'), (dict(guards=[len]), 'Callback classes'),
                                       (dict(on='yes'), 'True or False'), (dict(on_finding='loud'), 'not one of')])
def test_bad_input(bad, match):
    with pytest.raises((TypeError, ValueError), match=match): paranoid(**bad)
    assert not is_paranoid()

def test_learners_made_under_paranoid_can_be_garbage_collected():
    import gc, weakref
    paranoid()
    learn = new_learner()
    with learn.no_bar(), learn.no_logging(): learn.fit(1)
    ref = weakref.ref(learn)
    del learn
    gc.collect()
    assert ref() is None, "paranoid() must not keep Learners alive"

# --- held on by a runner: lock_paranoid and collect_findings (what `fastai-paranoid check` and `pytest --paranoid` use)

import contextlib, inspect, io, textwrap
from fastai_paranoid.core import emit, ParanoidWarning
from fastai_paranoid.leaks import StateLeakDetector, clear_findings
from fastai_paranoid.paranoid import lock_paranoid, _locks
from fastai_paranoid.cli import collect_findings, main

class GuardWarning(ParanoidWarning): "A test guard's category"

def reuse_a_model():
    "Seed 000's loop: two Learners handed the same model"
    model = build_mlp()
    for _ in range(2):
        learn = Learner(xor_dls(), model, loss_func=nn.CrossEntropyLoss())
        with learn.no_bar(), learn.no_logging(): learn.fit(1, 1e-2)

def test_lock_refuses_off_and_says_where_from():
    with paranoid(), lock_paranoid(by='the test runner') as refused:
        line = inspect.currentframe().f_lineno + 1
        p = paranoid(False)
        learn = new_learner()
        assert is_paranoid() and isinstance(learn.state_leak_detector, StateLeakDetector)
        assert p.on and 'refused' in repr(p)
    assert len(refused) == 1 and refused[0].startswith("paranoid(False) at ")
    assert refused[0].endswith(f"test_paranoid.py:{line} refused: the test runner keeps its guards on"), refused
    assert not is_paranoid() and _locks == []
    assert repr(paranoid(False)) == "paranoid: off", "outside a lock paranoid(False) works as before"

def test_lock_keeps_the_guards_a_smaller_list_leaves_out_and_adds_new_ones():
    with paranoid(guards=[Plain]), lock_paranoid() as refused:
        p = paranoid(guards=[Noted], on_finding='raise')
        assert p.guards == [Plain, Noted] and p.on_finding == 'warn'
        learn = new_learner()
        assert hasattr(learn, 'plain') and learn.noted.on_finding == 'warn'
        with paranoid(False): assert hasattr(new_learner(), 'plain')
        paranoid(guards=[Plain, Noted]) # keeps everything: not a refusal
    assert len(refused) == 2 and 'paranoid(guards=[Noted]) at' in refused[0] and '(Plain kept)' in refused[0]
    assert not hasattr(learn, 'noted') and not hasattr(learn, 'plain'), "the outer block's exit removes all it added"

def test_lock_over_off_holds_nothing():
    with lock_paranoid() as refused:
        paranoid(guards=[Plain]); paranoid(False)
        assert not is_paranoid()
    assert refused == []

def test_collect_findings_sees_through_the_checked_codes_warning_filters():
    with paranoid(), collect_findings() as found:
        warnings.filterwarnings('ignore')
        emit("model.0 (Linear) went non-finite at epoch 3. Fix: lower the learning rate.", GuardWarning)
        with warnings.catch_warnings(record=True):
            emit("model.1 (ReLU) output is all zero. Fix: check the init.", GuardWarning)
        warnings.simplefilter('ignore', ParanoidWarning)
        reuse_a_model()
    assert [str(w.message)[:15] for w in found.other_warnings()] == ["model.0 (Linear", "model.1 (ReLU) "]
    assert [f.kind for f in found.leaks] == ['reused_model'] and found.problems == 3

def test_collect_findings_counts_each_finding_once_whether_emitted_or_warned():
    with warnings.catch_warnings(record=True) as shown:
        warnings.simplefilter('always')
        with collect_findings(lock=False) as found:
            emit("emitted, then shown as a warning", GuardWarning)
            warnings.warn("a guard that still calls warnings.warn", GuardWarning)
            warnings.warn("not ours", UserWarning)
    assert [f.message for f in found.all] == ["emitted, then shown as a warning", "a guard that still calls warnings.warn"]
    assert found.problems == 2
    assert len(shown) == 3, "the warnings are still shown as they happen"

def test_clear_findings_in_the_checked_code_does_not_drop_its_leaks():
    with paranoid(), collect_findings() as found:
        reuse_a_model()
        clear_findings()
    assert [f.kind for f in found.leaks] == ['reused_model']

def test_check_of_a_script_that_switches_the_guards_off(tmp_path):
    script = tmp_path/'train.py'
    script.write_text(textwrap.dedent('''
        import warnings
        from torch import nn
        from fastai.basics import Learner
        import fastai.callback.progress # learn.no_bar
        from fastai_paranoid.paranoid import paranoid
        from fastai_paranoid.fixtures import xor_dls, build_mlp
        warnings.filterwarnings('ignore')
        paranoid(False)
        model = build_mlp()
        for run in range(2):
            learn = Learner(xor_dls(), model, loss_func=nn.CrossEntropyLoss())
            with learn.no_bar(), learn.no_logging(): learn.fit(1, 1e-2)
    '''))
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()): status = main(['check', str(script)])
    assert status == 1 and 'reused_model' in out.getvalue()
    assert "paranoid(False) at " in out.getvalue() and "train.py:9 refused" in out.getvalue()
    assert not is_paranoid() and _locks == []
