"""Issue 17, item 4: the training split travels with the weights. Two real sessions (new processes) of tests/split_scripts/
resume.py: an unseeded RandomSplitter, `learn.save('m')`, then another split and `learn.load('m')` -> the overlap, counted
exactly; the seeded twin stays silent. In process: a save or a load never breaks, stale or missing fingerprints say nothing,
lr_find leaves no file, the wrappers go when paranoid() does, healthy same-session flows stay silent."""
import json, logging, os, subprocess, sys, warnings
from pathlib import Path
import numpy as np, pandas as pd, pytest, torch
from torch import nn
from torch.utils.data import TensorDataset
from fastai.data.core import Datasets, DataLoaders
from fastai.data.load import DataLoader
from fastai.data.transforms import RandomSplitter, ColReader, Categorize
from fastai.learner import Learner
from fastai.callback.tracker import SaveModelCallback
from fastai.callback.schedule import lr_find # noqa: F401 (patches Learner.lr_find)
from fastai_paranoid.core import ParanoidError
from fastai_paranoid.paranoid import paranoid, PARANOID_GUARDS
from fastai_paranoid import splitprint
from fastai_paranoid.splitprint import SplitFingerprint, SplitOverlapWarning, check_split_overlap, sidecar_path, item_keys
from cli_helpers import ROOT, command

SCRIPT = Path(__file__).parent / 'split_scripts' / 'resume.py'
pytestmark = pytest.mark.usefixtures('one_thread')
FASTAI_SAVE, FASTAI_LOAD = Learner.__dict__['save'], Learner.__dict__['load'] # importing fastai_paranoid patched neither

def session(cwd, *args):
    "One session of the script, in a new process, as `python resume.py ARGS` (its own `paranoid()` with `--paranoid`)"
    env = dict(os.environ, PYTHONPATH=str(ROOT), OMP_NUM_THREADS='1')
    out = subprocess.run([sys.executable, str(SCRIPT), *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    return out.stderr

def seen(cwd, first='r1.json', second='r2.json'):
    "(validation items of session 2 that session 1 trained on, validation items of session 2), from the splits both recorded"
    a, b = (json.loads((cwd/f).read_text()) for f in (first, second))
    return len(set(a['train']) & set(b['valid'])), len(b['valid'])

def finding(n, m): return f"SplitOverlapWarning: [split_overlap] learn.load('m'): {n} of {m} validation items ({round(100*n/m)}%) were in the training split of models/m.pth saved on "

def test_resumed_on_another_split_is_reported_with_the_count(tmp_path):
    assert 'SplitOverlapWarning' not in session(tmp_path, 'train', '--draws', '1', '--paranoid', '--record', 'r1.json')
    assert (tmp_path/'models/m.split.npz').exists() and (tmp_path/'models/m.pth').exists()
    err = session(tmp_path, 'resume', '--draws', '2', '--paranoid', '--record', 'r2.json')
    n, m = seen(tmp_path)
    assert n > m // 2 # the bug is there: most of the new validation set was trained on
    assert finding(n, m) in err, err[-2000:]
    assert 'the validation score of these weights is inflated' in err and 'Fix: seed the splitter (`RandomSplitter(seed=42)`)' in err
    assert err.count('SplitOverlapWarning') == 1

def test_seeded_twin_is_silent(tmp_path):
    assert 'SplitOverlapWarning' not in session(tmp_path, 'train', '--draws', '1', '--seeded', '--paranoid', '--record', 'r1.json')
    err = session(tmp_path, 'resume', '--draws', '2', '--seeded', '--paranoid', '--record', 'r2.json')
    assert seen(tmp_path) == (0, 100) and (tmp_path/'models/m.split.npz').exists() # the fingerprint was there, and compared
    assert 'SplitOverlapWarning' not in err and 'ParanoidWarning' not in err, err[-2000:]

def test_save_model_callback_saves_the_fingerprint_and_its_own_load_is_silent(tmp_path):
    err = session(tmp_path, 'train', '--draws', '1', '--tracker', '--paranoid', '--record', 'r1.json')
    assert 'SplitOverlapWarning' not in err # SaveModelCallback's end-of-fit learn.load: the same split
    assert (tmp_path/'models/m.split.npz').exists()
    err = session(tmp_path, 'resume', '--draws', '2', '--paranoid', '--record', 'r2.json')
    assert finding(*seen(tmp_path)) in err, err[-2000:]

def test_without_paranoid_no_sidecar(tmp_path):
    "paranoid() off in session 1: a plain fastai save, no sidecar; session 2 then has nothing to count and says nothing"
    session(tmp_path, 'train', '--draws', '1', '--record', 'r1.json')
    assert sorted(p.name for p in (tmp_path/'models').iterdir()) == ['m.pth']
    assert 'SplitOverlapWarning' not in session(tmp_path, 'resume', '--draws', '2', '--paranoid', '--record', 'r2.json')

@pytest.mark.parametrize('seeded', [False, True])
def test_under_fastai_paranoid_check(tmp_path, seeded):
    "The script with no fastai_paranoid inside, run by `fastai-paranoid check` in both sessions"
    (tmp_path/'resume.py').write_text(SCRIPT.read_text())
    flags = ['--seeded'] if seeded else []
    first = command('check', 'resume.py', '--', 'train', '--draws', '1', '--record', 'r1.json', *flags, cwd=tmp_path)
    assert first.returncode == 0, first.stdout[-3000:] + first.stderr[-3000:]
    second = command('check', 'resume.py', '--', 'resume', '--draws', '2', '--record', 'r2.json', *flags, cwd=tmp_path)
    out = second.stdout + second.stderr
    if seeded:
        assert second.returncode == 0 and 'SplitOverlapWarning' not in out, out[-3000:]
    else:
        n, m = seen(tmp_path)
        assert second.returncode == 1, out[-3000:]
        assert ' '.join(finding(n, m).removeprefix('SplitOverlapWarning: [split_overlap] ').split()) in ' '.join(out.split()), out[-3000:]

# In process: Learners on the rows of one DataFrame, split by fastai's RandomSplitter

FEATURES = [f'x{i}' for i in range(8)]
DF = pd.DataFrame(np.random.default_rng(0).normal(size=(300, 8)).astype('float32'), columns=FEATURES)
DF['y'] = np.random.default_rng(1).integers(0, 2, 300)

def features(row): return torch.tensor(row[FEATURES].to_numpy(dtype='float32'))

def row_learner(path, seed, items=DF):
    splits = RandomSplitter(seed=seed)(items)
    dls = Datasets(items, [[features], [ColReader('y'), Categorize()]], splits=splits).dataloaders(bs=32)
    return Learner(dls, nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 2)), loss_func=nn.CrossEntropyLoss(), path=path), splits

def ours(caught): return [str(w.message) for w in caught if issubclass(w.category, SplitOverlapWarning)]

@pytest.fixture
def quiet_fastai():
    "fastai's own warnings (no optimizer state in the file...) are not what these tests look at"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        yield caught

def test_history_counts_every_split_the_weights_were_trained_on(tmp_path, quiet_fastai):
    "Trained on split A, loaded and saved again on split B: a third split's overlap is counted against A and B together"
    with paranoid(guards=[SplitFingerprint]):
        a, (ta, _) = row_learner(tmp_path, 1)
        a.save('m')
        b, (tb, _) = row_learner(tmp_path, 2)
        b.load('m')
        b.save('m2')
        c, (tc, vc) = row_learner(tmp_path, 3)
        c.load('m2')
    expected = len((set(vc) & (set(ta) | set(tb))) - set(tc))
    assert any(m.startswith(f"[split_overlap] learn.load('m2'): {expected} of {len(vc)} validation items") for m in ours(quiet_fastai)), ours(quiet_fastai)
    assert len(ours(quiet_fastai)) == 2 # b's load and c's

def test_reported_once_per_learner_and_overlap(tmp_path, quiet_fastai):
    with paranoid(guards=[SplitFingerprint]):
        a, _ = row_learner(tmp_path, 1)
        a.save('m')
        b, _ = row_learner(tmp_path, 2)
        b.load('m')
        b.load('m')
    assert len(ours(quiet_fastai)) == 1

def test_on_finding_raise_raises_after_loading(tmp_path, quiet_fastai):
    with paranoid(guards=[SplitFingerprint], on_finding='raise'):
        a, _ = row_learner(tmp_path, 1)
        a.save('m')
        b, _ = row_learner(tmp_path, 2)
        with pytest.raises(ParanoidError, match='validation items .* were in the training split'): b.load('m')
    for p, q in zip(a.model.parameters(), b.model.parameters()): assert torch.equal(p, q) # the weights were loaded

def test_stale_fingerprint_says_nothing(tmp_path, quiet_fastai):
    "Saved with paranoid(), saved again without it (other weights): the old sidecar is not these weights' and is not read"
    with paranoid(guards=[SplitFingerprint]):
        a, _ = row_learner(tmp_path, 1)
        a.save('m')
    other, _ = row_learner(tmp_path, 5)
    other.save('m')
    assert (tmp_path/'models/m.split.npz').exists()
    with paranoid(guards=[SplitFingerprint]):
        b, _ = row_learner(tmp_path, 2)
        b.load('m')
        assert check_split_overlap(b, tmp_path/'models/m.pth').verdict == 'skipped'
    assert ours(quiet_fastai) == []

class Record:
    "An item with no stable bytes (neither a path, a string, a number, an array nor a tuple of them)"
    def __init__(self, v): self.v = v

def test_a_fingerprint_that_cannot_be_made_never_breaks_the_save(tmp_path, caplog, quiet_fastai):
    "Items of a type with no stable bytes: the save goes on, no sidecar (an older one is removed), a debug line"
    sidecar = tmp_path/'models/m.split.npz'
    sidecar.parent.mkdir(parents=True)
    sidecar.write_bytes(b'old')
    dsets = Datasets([Record(i) for i in range(100)], [[lambda r: torch.tensor([float(r.v)])], [lambda r: r.v % 2]], splits=RandomSplitter()(range(100)))
    with paranoid(guards=[SplitFingerprint]), caplog.at_level(logging.DEBUG, logger='fastai_paranoid.splitprint'):
        learn = Learner(dsets.dataloaders(bs=10), nn.Linear(1, 2), loss_func=nn.CrossEntropyLoss(), path=tmp_path)
        assert learn.save('m') == tmp_path/'models/m.pth'
        learn.load('m')
    assert (tmp_path/'models/m.pth').exists() and not sidecar.exists()
    assert 'no split fingerprint written (TypeError: an item of type Record has no stable bytes' in caplog.text

def index_learner(path, seed, X=DF[FEATURES].to_numpy(), y=DF['y'].to_numpy()):
    "A DataBlock over range(n) whose getters read arrays by index (issue 26, part 7)"
    from fastai.data.block import DataBlock, TransformBlock, CategoryBlock
    block = DataBlock((TransformBlock, CategoryBlock), get_x=lambda i: X[i], get_y=lambda i: y[i], splitter=RandomSplitter(seed=seed))
    dls = block.dataloaders(range(len(X)), bs=32)
    return Learner(dls, nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 2)), loss_func=nn.CrossEntropyLoss(), path=path)

@pytest.mark.parametrize('seeded', [False, True])
def test_bare_index_items_are_known_by_what_they_decode_to(tmp_path, quiet_fastai, seeded):
    "Resumed on another split of range(n), the overlap is counted by the rows the indices read; the same split (seeded) is silent, and so is the same rows under other indices"
    with paranoid(guards=[SplitFingerprint]):
        a = index_learner(tmp_path, 1)
        a.save('m')
        b = index_learner(tmp_path, 1 if seeded else 2)
        b.load('m')
    perm = np.random.default_rng(0).permutation(len(DF)) # the arrays reordered: index i names another row
    c = index_learner(tmp_path, 1, DF[FEATURES].to_numpy()[perm], DF['y'].to_numpy()[perm])
    shown = check_split_overlap(c, tmp_path/'models/m.pth')
    assert splitprint.read_split_print(tmp_path/'models/m.pth')['meta']['kind'] == 'decoded items'
    seen = len((set(b.dls.valid_ds.items) & set(a.dls.train_ds.items)) - set(b.dls.train_ds.items))
    assert seen == 0 if seeded else seen > 20
    found = ours(quiet_fastai)
    if seeded: assert found == [], found
    else: assert len(found) == 1 and found[0].startswith(f"[split_overlap] learn.load('m'): {seen} of {len(b.dls.valid_ds)} validation items"), found
    rows = lambda ds: {tuple(ds[i][0].tolist()) for i in range(len(ds))}
    moved = len((rows(c.dls.valid_ds) & rows(a.dls.train_ds)) - rows(c.dls.train_ds))
    assert moved > 20 and shown.measured['valid_in_saved_train'] == moved # counted by the rows the indices read, not by the indices

def test_lr_find_leaves_no_file(tmp_path, quiet_fastai):
    with paranoid(guards=[SplitFingerprint]):
        learn, _ = row_learner(tmp_path, 1)
        learn.lr_find(num_it=5, show_plot=False)
    assert list((tmp_path/'models').iterdir()) == []

def test_the_wrappers_come_and_go_with_paranoid(tmp_path, quiet_fastai):
    assert Learner.__dict__['save'] is FASTAI_SAVE and Learner.__dict__['load'] is FASTAI_LOAD
    assert SplitFingerprint in PARANOID_GUARDS
    with paranoid():
        learn, _ = row_learner(tmp_path, 1)
        assert Learner.__dict__['save'] is splitprint._save and Learner.__dict__['load'] is splitprint._load
    assert Learner.__dict__['save'] is FASTAI_SAVE and Learner.__dict__['load'] is FASTAI_LOAD # paranoid() off: fastai's again
    learn.save('m')
    assert not sidecar_path(tmp_path/'models/m.pth').exists()
    with paranoid(guards=[]): # on, with no SplitFingerprint: nothing wrapped
        row_learner(tmp_path, 1)[0].save('m')
        assert Learner.__dict__['save'] is FASTAI_SAVE and not sidecar_path(tmp_path/'models/m.pth').exists()

# Healthy flows in one session, untailored: unseeded splits, SaveModelCallback's save and load, lr_find. Never a finding.

def tensor_learner(path, seed):
    g = torch.Generator().manual_seed(seed)
    x, y = torch.randn(200, 8, generator=g), torch.randint(0, 2, (200,), generator=g)
    idx = RandomSplitter()(range(200)) # unseeded: the global RNG
    dls = DataLoaders(DataLoader(TensorDataset(x[idx[0]], y[idx[0]]), bs=32, shuffle=True), DataLoader(TensorDataset(x[idx[1]], y[idx[1]]), bs=64))
    return Learner(dls, nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 2)), loss_func=nn.CrossEntropyLoss(), path=path)

def image_learner(path, seed):
    from fastai.vision.all import DataBlock, ImageBlock, CategoryBlock, get_image_files, parent_label, Resize, vision_learner, resnet18
    from PIL import Image
    rng = np.random.default_rng(seed)
    for i in range(40):
        (path/'imgs'/str(i % 2)).mkdir(parents=True, exist_ok=True)
        Image.fromarray(rng.integers(0, 255, (24, 24, 3), dtype=np.uint8)).save(path/'imgs'/str(i % 2)/f'{i}.png')
    block = DataBlock((ImageBlock, CategoryBlock), get_items=get_image_files, get_y=parent_label, splitter=RandomSplitter(), item_tfms=Resize(24))
    return vision_learner(block.dataloaders(path/'imgs', bs=8), resnet18, pretrained=False, path=path)

def collab_learner_(path, seed):
    "collab_learner on a ratings frame: user and item ids are the data (a TabularCollab, refused: its rows are stored after Categorify)"
    from fastai.collab import CollabDataLoaders, collab_learner
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({'user': rng.integers(0, 30, 300), 'item': rng.integers(0, 20, 300), 'rating': rng.integers(1, 6, 300).astype(float)})
    dls = CollabDataLoaders.from_df(df.drop_duplicates(['user', 'item']), valid_pct=0.2, bs=32) # unseeded
    return collab_learner(dls, n_factors=4, y_range=(0, 5.5), path=path)

@pytest.mark.parametrize('kind', ['rows', 'tensors', 'images', 'indices', 'collab'])
def test_healthy_flows_are_silent(tmp_path, kind, quiet_fastai):
    n_runs = 3 if kind != 'images' else 1
    for seed in range(n_runs):
        torch.manual_seed(100 + seed)
        with paranoid(guards=[SplitFingerprint]):
            learn = {'rows': lambda: row_learner(tmp_path, None)[0], 'tensors': lambda: tensor_learner(tmp_path, seed),
                     'images': lambda: image_learner(tmp_path, seed), 'indices': lambda: index_learner(tmp_path, None),
                     'collab': lambda: collab_learner_(tmp_path, seed)}[kind]()
            learn.lr_find(num_it=5, show_plot=False)
            learn.fit(2, 1e-3, cbs=SaveModelCallback(fname=f'best{seed}'))
            learn.load(f'best{seed}')
        assert sidecar_path(tmp_path/f'models/best{seed}.pth').exists() == (kind != 'collab')
    assert ours(quiet_fastai) == []
    sidecars = ('.split.npz',) if kind != 'collab' else () # a TabularCollab's rows are refused: no fingerprint, no finding
    assert sorted(p.name for p in (tmp_path/'models').iterdir()) == sorted(f'best{s}{e}' for s in range(n_runs) for e in ('.pth',) + sidecars)
