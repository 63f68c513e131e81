"Exports stay deployable: a Learner exported with any of this library's callbacks attached opens with `load_learner` and predicts where fastai_paranoid is not installed; the live Learner keeps its guards."
import copy, json, os, subprocess, sys, textwrap, warnings
import pytest, torch
from torch import nn
from fastai.data.core import Datasets
from fastai.data.transforms import ItemGetter
from fastai.learner import Learner
import fastai.callback.schedule # lr_find, fine_tune; learn.no_bar
from fastai_paranoid.fixtures import digits_trunk, transfer_model, build_mlp, make_xor_data
from fastai_paranoid.leaks import StateLeakDetector
from fastai_paranoid.paranoid import paranoid, PARANOID_GUARDS, PreserveLRFindRNG, PreserveLRFindGrads
from fastai_paranoid.bn import FreezeBNStats
from fastai_paranoid.guards import NaNGuard, RNGAudit
from fastai_paranoid.distributed import CrossRankConsistency
from fastai_paranoid.presets import TrunkHeadSplitter, FrozenTrunk, HoldLRRatio
import fastai_paranoid.presets # learn.linear_probe, learn.discriminative_lr
from fastai_paranoid.deploy import without_guards, Guard

def item_dls(x, y, n_train, bs):
    "DataLoaders that `export` can empty and `test_dl` can refill: fastai Datasets over (x, y) pairs, fastai's own getters"
    items = list(zip(x, y))
    return Datasets(items, tfms=[[ItemGetter(0)], [ItemGetter(1)]], splits=[list(range(n_train)), list(range(n_train, len(items)))]).dataloaders(bs=bs)

def image_dls():
    g = torch.Generator().manual_seed(0)
    return item_dls(torch.randn(40, 1, 8, 8, generator=g), torch.randint(0, 4, (40,), generator=g), 32, 8)

def xor_items_dls():
    import numpy as np
    x, y = make_xor_data(64, np.random.default_rng(0))
    return item_dls(x, y, 48, 16)

def quiet(learn, f):
    with learn.no_bar(), learn.no_logging(): f()
    return learn

def images_learner(tmp_path, **kwargs):
    from fastai.vision.learner import default_split # fastai's (trunk, head) splitter: loads where fastai does
    return Learner(image_dls(), transfer_model(digits_trunk(), 4), loss_func=nn.CrossEntropyLoss(), path=tmp_path,
                   splitter=default_split, **kwargs)

def export(learn):
    "Export; return (the callbacks at export time, the attributes of the Learner that export left changed)"
    before, cbs = dict(learn.__dict__), list(learn.cbs)
    learn.export('export.pkl')
    assert len(learn.cbs) == len(cbs) and all(a is b for a, b in zip(learn.cbs, cbs)), "the callbacks changed"
    # fastai's export builds a new optimizer (loaded with the old one's state): `opt` is the one attribute it replaces
    return cbs, [k for k in set(before) | set(learn.__dict__) if k != 'opt' and learn.__dict__.get(k, None) is not before.get(k, None)]

# Each builder returns a trained Learner carrying some of this library's callbacks, as a user would attach them
def by_paranoid(tmp_path):
    with paranoid(): # every default guard, on a Learner built as usual
        learn = Learner(xor_items_dls(), build_mlp(), loss_func=nn.CrossEntropyLoss(), path=tmp_path)
        quiet(learn, lambda: (learn.lr_find(num_it=4, show_plot=False), learn.fit(1, 1e-2)))
        # the guards leave a Learner when paranoid() is switched off: export while they are on
        assert {type(cb) for cb in learn.cbs} >= set(PARANOID_GUARDS)
        return learn, export(learn)

def by_hand(tmp_path):
    learn = images_learner(tmp_path, cbs=[StateLeakDetector(on_finding='log'), FreezeBNStats(), NaNGuard(), RNGAudit(),
                                          PreserveLRFindRNG(), PreserveLRFindGrads(), CrossRankConsistency()], train_bn=False)
    learn.freeze()
    quiet(learn, lambda: learn.fit(1, 1e-3))
    return learn, export(learn)

def by_preset(tmp_path):
    learn = images_learner(tmp_path).linear_probe() # FrozenTrunk, FreezeBNStats, TrunkHeadSplitter, the preset's list of guards
    quiet(learn, lambda: learn.fit(1))
    return learn, export(learn)

def by_preset_discriminative(tmp_path):
    learn = images_learner(tmp_path, cbs=StateLeakDetector(on_finding='log')).discriminative_lr(1e-3) # HoldLRRatio
    quiet(learn, lambda: learn.fit(1))
    return learn, export(learn)

def held_by_a_user_callback(tmp_path):
    "A user's callback keeps a reference to a guard: that guard is exported as a fastai Callback that does nothing"
    from fastai.callback.core import Callback
    class Keeps(Callback):
        def __init__(self, held): self.held = held
    guard = NaNGuard()
    learn = images_learner(tmp_path, cbs=[guard, Keeps(guard)])
    quiet(learn, lambda: learn.fit(1, 1e-3))
    return learn, export(learn)

BUILDERS = [by_paranoid, by_hand, by_preset, by_preset_discriminative, held_by_a_user_callback]

BLOCKED = textwrap.dedent('''
    import json, sys, importlib.abc, warnings
    class NoParanoid(importlib.abc.MetaPathFinder):
        "A deployment image: fastai_paranoid is not installed"
        def find_spec(self, name, path=None, target=None):
            if name.partition('.')[0] == 'fastai_paranoid': raise ModuleNotFoundError(f"No module named {name!r}", name=name)
    sys.meta_path.insert(0, NoParanoid())
    try: import fastai_paranoid
    except ModuleNotFoundError: pass
    else: raise SystemExit('the blocker failed: fastai_paranoid is importable')
    warnings.simplefilter('ignore')
    import torch
    from fastai.learner import load_learner
    report = {}
    for folder in sys.argv[1:]:
        learn = load_learner(folder + '/export.pkl')
        items = torch.load(folder + '/items.pt')
        preds, _ = learn.get_preds(dl=learn.dls.test_dl(items))
        torch.save(preds, folder + '/deployed_preds.pt')
        _, _, probs = learn.predict(items[0])
        report[folder] = {'cbs': [type(cb).__name__ for cb in learn.cbs], 'predict': probs.tolist(),
                          'modules': sorted(m for m in sys.modules if m.startswith('fastai_paranoid'))}
    print(json.dumps(report))
''')

@pytest.fixture(scope='module')
def exported(tmp_path_factory):
    "Every builder's Learner, exported, and its predictions on a few items computed by the live Learner"
    res = {}
    for build in BUILDERS:
        folder = tmp_path_factory.mktemp(build.__name__)
        learn, cbs_at_export = build(folder)
        items = learn.dls.valid_ds.items[:6]
        torch.save(items, folder/'items.pt')
        threads = torch.get_num_threads()
        torch.set_num_threads(1) # as the deployed process below (OMP_NUM_THREADS=1): bitwise equal predictions need the same kernels
        try:
            with learn.no_bar(): preds, _ = learn.get_preds(dl=learn.dls.test_dl(items))
        finally: torch.set_num_threads(threads)
        res[build.__name__] = (folder, learn, cbs_at_export, preds)
    out = subprocess.run([sys.executable, '-c', BLOCKED, *[str(f) for f, *_ in res.values()]], capture_output=True, text=True,
                         env={**os.environ, 'OMP_NUM_THREADS': '1'}, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    return res, json.loads(out.stdout.strip().splitlines()[-1])

@pytest.mark.parametrize('build', [b.__name__ for b in BUILDERS])
def test_loads_and_predicts_without_fastai_paranoid(exported, build):
    res, report = exported
    folder, learn, (cbs_at_export, _), preds = res[build]
    deployed = report[str(folder)]
    assert deployed['modules'] == []
    assert torch.equal(torch.load(folder/'deployed_preds.pt'), preds) # the same predictions as the live Learner
    assert len(deployed['predict']) == preds.shape[1]
    ours = {type(cb).__name__ for cb in cbs_at_export if isinstance(cb, Guard)}
    assert ours and not ours & set(deployed['cbs']), deployed['cbs']

@pytest.mark.parametrize('build', [b.__name__ for b in BUILDERS])
def test_the_live_learner_keeps_its_guards(exported, build):
    _, learn, (cbs_at_export, changed), _ = exported[0][build]
    assert changed == []
    if build == 'by_paranoid': return # leaving paranoid() took its guards back, as documented: nothing more to look at
    ours = [cb for cb in cbs_at_export if isinstance(cb, Guard)] # (fastai's `get_preds` since then replaced its ProgressCallback)
    assert ours and [cb for cb in learn.cbs if isinstance(cb, Guard)] == ours and all(a is b for a, b in zip(ours, [cb for cb in learn.cbs if isinstance(cb, Guard)]))
    for cb in ours: assert getattr(learn, cb.name) is cb
    if build.startswith('by_preset') and build != 'by_preset_discriminative': assert isinstance(learn.splitter, TrunkHeadSplitter)
    if build == 'by_preset': assert [type(cb) for cb in learn._preset_cbs] == [FrozenTrunk, FreezeBNStats]
    assert learn.opt is not None and learn.dls.train.n > 0 # fastai's export puts those back too

def test_guards_still_work_after_export(tmp_path):
    learn, _ = by_hand(tmp_path)
    second = Learner(image_dls(), learn.model, loss_func=nn.CrossEntropyLoss(), cbs=StateLeakDetector(on_finding='log'))
    quiet(second, lambda: second.fit(1, 1e-3))
    assert [f.kind for f in second.state_leak_detector.findings] == ['reused_model']
    quiet(learn, lambda: learn.fit(1, 1e-3)) # the exported Learner trains on, guarded
    assert learn.freeze_bn_stats._held == [] and learn.nan_guard in learn.cbs # held during fits only

def test_deepcopy_and_pickle_keep_the_guards(tmp_path):
    "Only `export` leaves the guards out: the library's checks copy Learners and callbacks and need them whole"
    import pickle
    learn, _ = by_hand(tmp_path)
    clone = copy.deepcopy(learn)
    assert [type(cb) for cb in clone.cbs] == [type(cb) for cb in learn.cbs]
    assert all(type(pickle.loads(pickle.dumps(cb))) is type(cb) for cb in learn.cbs if isinstance(cb, Guard))

def test_without_guards_restores_the_learner_even_after_an_error(tmp_path):
    learn = images_learner(tmp_path).linear_probe()
    before = dict(learn.__dict__)
    with pytest.raises(RuntimeError):
        with without_guards(learn):
            assert not any(isinstance(cb, Guard) for cb in learn.cbs) and not hasattr(learn, 'frozen_trunk') and not hasattr(learn, '_preset_cbs')
            assert learn.splitter.__name__ == 'trainable_params'
            raise RuntimeError('during the pickle')
    assert learn.__dict__ == before and all(learn.__dict__[k] is v for k, v in before.items())

def test_a_learner_without_guards_exports_as_fastai_does(tmp_path):
    "The pickle of a Learner that holds nothing of ours is byte for byte fastai's"
    import io, cloudpickle
    from fastai_paranoid.deploy import _guard_free
    learn = Learner(xor_items_dls(), build_mlp(), loss_func=nn.CrossEntropyLoss(), path=tmp_path)
    def dumped(module):
        buf = io.BytesIO()
        module.Pickler(buf, protocol=2).dump(learn)
        return buf.getvalue()
    assert dumped(_guard_free(cloudpickle)) == dumped(cloudpickle)
