"`fresh_learner`: Learners that share nothing, bitwise reproducibility per seed, and the objects it refuses."
import warnings
import pytest
import torch
from torch import nn
from fastai.basics import Learner, accuracy, Metric
from fastai.callback.all import SaveModelCallback, EarlyStoppingCallback
from fastai.callback.core import Callback
from fastai.metrics import Precision, AccumMetric
from fastai_paranoid.fixtures import xor_dls, build_mlp, digits_dls, small_cnn, random_image_dls
from fastai_paranoid.fresh import fresh_learner, seed_everything

warnings.filterwarnings('ignore', message='`torch.jit.script` is deprecated')


def make_dls(): return xor_dls(n_valid=256, bs=64)
def make_model(): return build_mlp()


def xor_learner(seed=0, **kwargs):
    kwargs.setdefault('loss_func', nn.CrossEntropyLoss())
    return fresh_learner(make_dls, make_model, seed=seed, **kwargs)


def fit(learn, epochs=1, lr=1e-2):
    with learn.no_bar(), learn.no_logging(): learn.fit(epochs, lr)
    return learn


def tensors_of(obj):
    "Every tensor reachable in an optimizer state dict"
    if isinstance(obj, torch.Tensor): yield obj
    elif isinstance(obj, dict):
        for v in obj.values(): yield from tensors_of(v)
    elif isinstance(obj, (list, tuple)):
        for v in obj: yield from tensors_of(v)


class BestTracker(Callback):
    "A stateful callback: the best validation loss it has seen (kept across fits on purpose)"
    order = 60   # after the Recorder has stored the epoch
    def __init__(self): self.best = float('inf')
    def after_epoch(self): self.best = min(self.best, self.recorder.values[-1][1])


class CountingMetric(Metric):
    "A stateful metric that counts the items it has seen"
    def __init__(self): self.count = 0
    def reset(self): self.count = 0
    def accumulate(self, learn): self.count += len(learn.yb[0])
    @property
    def value(self): return self.count


# --- two Learners share nothing --------------------------------------------------------------

@pytest.fixture(scope='module')
def pair():
    shared_cb = SaveModelCallback(monitor='accuracy', fname='fresh_test_best')
    shared_metric = Precision()
    counting = CountingMetric()
    learners = [xor_learner(0, cbs=[shared_cb, BestTracker, BestTracker(), EarlyStoppingCallback(patience=3)],
                            metrics=[accuracy, shared_metric, counting]) for _ in range(2)]
    for learn in learners:
        learn.remove_cb(SaveModelCallback)   # keep the test free of files; its copy was checked below first
    return learners, shared_cb, shared_metric, counting


def test_models_and_parameters_are_distinct(pair):
    (a, b), *_ = pair
    assert a.model is not b.model
    ids_a = {id(p) for p in a.model.parameters()}
    assert not ids_a & {id(p) for p in b.model.parameters()}
    assert not {p.data_ptr() for p in a.model.parameters()} & {p.data_ptr() for p in b.model.parameters()}


def test_dataloaders_are_distinct(pair):
    (a, b), *_ = pair
    assert a.dls is not b.dls
    for dl_a, dl_b in zip(a.dls.loaders, b.dls.loaders):
        assert dl_a is not dl_b
        assert dl_a.dataset is not dl_b.dataset
        assert dl_a.rng is not dl_b.rng


def test_callbacks_are_distinct_copies():
    cb = SaveModelCallback(monitor='accuracy', fname='x')
    a = xor_learner(0, cbs=[cb, BestTracker, BestTracker()], metrics=accuracy)
    b = xor_learner(0, cbs=[cb, BestTracker, BestTracker()], metrics=accuracy)
    for ca, cbb in zip(a.cbs, b.cbs):
        assert type(ca) is type(cbb) and ca is not cbb
        assert ca.learn is a and cbb.learn is b
    assert all(c is not cb for c in list(a.cbs) + list(b.cbs))
    assert not hasattr(cb, 'learn') or cb.__dict__.get('learn') is None


def test_stateful_metrics_are_distinct(pair):
    (a, b), _, shared_metric, counting = pair
    for ma, mb in zip(a.metrics, b.metrics):
        if isinstance(ma, (AccumMetric, Metric)) and not getattr(ma, 'func', None) is accuracy:
            assert ma is not mb
    assert all(m is not shared_metric and m is not counting for m in list(a.metrics) + list(b.metrics))


def test_optimizers_and_their_state_are_distinct_after_a_fit(pair):
    (a, b), _, _, counting = pair
    fit(a); fit(b)
    assert a.opt is not b.opt
    trackers_a = [c for c in a.cbs if isinstance(c, BestTracker)]
    trackers_b = [c for c in b.cbs if isinstance(c, BestTracker)]
    assert len(trackers_a) == 2 and not {id(c) for c in trackers_a} & {id(c) for c in trackers_b}
    assert all(c.best == a.recorder.values[-1][1] for c in trackers_a)
    state_a = [t for t in tensors_of(a.opt.state_dict()['state'])]
    state_b = [t for t in tensors_of(b.opt.state_dict()['state'])]
    assert state_a and state_b
    assert not {id(t) for t in state_a} & {id(t) for t in state_b}
    assert not {t.data_ptr() for t in state_a} & {t.data_ptr() for t in state_b}
    # the stateful metric counted only its own Learner's validation items, and the user's instance none
    count_a = [m for m in a.metrics if isinstance(m, CountingMetric)][0]
    assert count_a.count == len(a.dls.valid_ds)
    assert counting.count == 0


def test_fitting_one_leaves_the_other_untouched():
    a, b = xor_learner(0), xor_learner(0)
    before = {k: v.clone() for k, v in b.model.state_dict().items()}
    fit(a)
    for k, v in b.model.state_dict().items(): assert torch.equal(v, before[k]), k
    assert b.opt is None or not b.opt.state


# --- the same seed, the same run -------------------------------------------------------------

def run(seed, **kwargs):
    return fit(xor_learner(seed, **kwargs), epochs=2)


def test_same_seed_gives_bitwise_identical_weights_and_losses():
    r1, r2 = run(0), run(0)
    sd1, sd2 = r1.model.state_dict(), r2.model.state_dict()
    for k in sd1: assert torch.equal(sd1[k], sd2[k]), k
    assert [l.item() for l in r1.recorder.losses] == [l.item() for l in r2.recorder.losses]
    assert r1.recorder.values == r2.recorder.values


def test_same_seed_is_identical_whatever_ran_before():
    r1 = run(3)
    torch.rand(100); import random; random.random()        # the caller's global state moves
    r2 = run(3)
    assert [l.item() for l in r1.recorder.losses] == [l.item() for l in r2.recorder.losses]


def test_different_seeds_differ():
    r0, r1 = run(0), run(1)
    assert not torch.equal(r0.model[0].weight, r1.model[0].weight)
    assert [l.item() for l in r0.recorder.losses] != [l.item() for l in r1.recorder.losses]


def test_dropout_model_is_reproducible():
    def dropout_model(): return nn.Sequential(nn.Linear(2, 32), nn.ReLU(), nn.Dropout(0.5), nn.Linear(32, 2))
    r = [fit(fresh_learner(make_dls, dropout_model, seed=0, loss_func=nn.CrossEntropyLoss())) for _ in range(2)]
    assert [l.item() for l in r[0].recorder.losses] == [l.item() for l in r[1].recorder.losses]


@pytest.mark.slow
def test_vision_learner_resnet18_is_reproducible():
    from fastai.vision.all import vision_learner, resnet18
    def digit_images(): return digits_dls(size=32, c_in=3, n_train_per_class=3, valid_pct=0.02, bs=6)
    def one(seed, epochs=1):
        learn = fresh_learner(digit_images, resnet18, learner=vision_learner, pretrained=False, seed=seed,
                              loss_func=nn.CrossEntropyLoss(), n_out=10)
        return fit(learn, epochs=epochs, lr=1e-3) if epochs else learn
    a, b, c = one(0), one(0), one(1, epochs=0)
    assert a.model is not b.model
    for (k, va), vb in zip(a.model.state_dict().items(), b.model.state_dict().values()):
        assert torch.equal(va, vb), k
    assert [l.item() for l in a.recorder.losses] == [l.item() for l in b.recorder.losses]
    assert not torch.equal(a.model[0][0].weight, c.model[0][0].weight)


# --- what fresh_learner refuses ---------------------------------------------------------------

def test_objects_where_functions_belong_are_type_errors():
    dls, model = make_dls(), make_model()
    learn = xor_learner(0)
    with pytest.raises(TypeError, match='`dls_fn` is a DataLoaders'): fresh_learner(dls, make_model)
    with pytest.raises(TypeError, match='`dls_fn` is a DataLoader'): fresh_learner(dls.train, make_model)
    with pytest.raises(TypeError, match=r'`model_fn` is a model \(nn.Module\)'): fresh_learner(make_dls, model)
    with pytest.raises(TypeError, match='`model_fn` is a Learner'): fresh_learner(make_dls, learn)
    with pytest.raises(TypeError, match='`model_fn` is missing'): fresh_learner(make_dls)
    with pytest.raises(TypeError, match='must be a function'): fresh_learner(make_dls, 3)
    with pytest.raises(TypeError, match='must be a function'): fresh_learner('dls', make_model)


def test_factories_returning_the_wrong_type_are_type_errors():
    with pytest.raises(TypeError, match='dls_fn\\(\\) returned list'): fresh_learner(lambda: [1], make_model)
    with pytest.raises(TypeError, match='model_fn\\(\\) returned str'): fresh_learner(make_dls, lambda: 'model')
    with pytest.raises(TypeError, match='seed must be an int'): fresh_learner(make_dls, make_model, seed=0.5)
    with pytest.raises(TypeError, match='seed must be an int'): seed_everything(True)


def test_reused_objects_are_refused():
    shared_model = make_model()
    fresh_learner(make_dls, lambda: shared_model, loss_func=nn.CrossEntropyLoss())
    with pytest.raises(ValueError, match='already trained with'):
        fresh_learner(make_dls, lambda: shared_model, loss_func=nn.CrossEntropyLoss())
    with pytest.raises(ValueError, match=r"parameter tensor\(s\).*first: `0.weight`"):
        fresh_learner(make_dls, lambda: nn.Sequential(*shared_model), loss_func=nn.CrossEntropyLoss())
    shared_dls = make_dls()
    fresh_learner(lambda: shared_dls, make_model, loss_func=nn.CrossEntropyLoss())
    with pytest.raises(ValueError, match='same DataLoaders'):
        fresh_learner(lambda: shared_dls, make_model, loss_func=nn.CrossEntropyLoss())


def test_loss_module_is_copied():
    loss = nn.CrossEntropyLoss()
    a, b = xor_learner(0, loss_func=loss), xor_learner(0, loss_func=loss)
    assert a.loss_func is not loss and b.loss_func is not loss and a.loss_func is not b.loss_func
