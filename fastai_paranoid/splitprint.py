from __future__ import annotations
import datetime, hashlib, json, logging, os, weakref
from pathlib import Path
import numpy as np
import torch
from fastcore.basics import store_attr
from fastai.learner import Learner
from fastai.callback.core import Callback
from fastai.torch_core import rank_distrib
import fastai_paranoid.deploy # learn.export() leaves this library's callbacks out of the pickle
from fastai_paranoid.core import ParanoidWarning, ParanoidError, CheckResult, ON_LEAK, emit
from fastai_paranoid.leaks import _fastai_class

_logger = logging.getLogger('fastai_paranoid.splitprint')

class SplitOverlapWarning(ParanoidWarning):
    "`learn.load` put weights into a Learner whose validation items those weights were trained on"

def _item_bytes(o)->bytes:
    "The bytes that identify one raw item (a path, a string, a number, an array, a DataFrame row, or a tuple of them); TypeError for anything else"
    if isinstance(o, Path): # a file is known by its path and its size: a dataset rebuilt under the same names rarely keeps every size
        try: size = o.stat().st_size
        except OSError: size = -1
        return b'p' + str(o).encode('utf-8', 'surrogatepass') + size.to_bytes(8, 'little', signed=True)
    if isinstance(o, str): return b's' + o.encode('utf-8', 'surrogatepass')
    if isinstance(o, bytes): return b'b' + o
    if isinstance(o, (bool, int, float, np.generic)): return b'n' + repr(o.item() if isinstance(o, np.generic) else o).encode()
    if isinstance(o, torch.Tensor): o = o.detach().cpu().numpy()
    if isinstance(o, np.ndarray):
        if o.dtype == object: return _item_bytes(tuple(o.tolist()))
        return f"a{o.dtype}{o.shape}".encode() + np.ascontiguousarray(o).tobytes()
    if type(o).__name__ == 'Series' and hasattr(o, 'to_numpy'): return _item_bytes(tuple(o.to_numpy().tolist()))
    if isinstance(o, (tuple, list)): return b't' + b''.join(len(b).to_bytes(8, 'little') + b for b in map(_item_bytes, o))
    raise TypeError(f"an item of type {type(o).__name__} has no stable bytes")

def _h64(data:bytes)->int: return int.from_bytes(hashlib.blake2b(data, digest_size=8).digest(), 'little')

def _tensor_rows(tensors, n:int)->np.ndarray:
    "64-bit keys of the `n` rows of a `TensorDataset`'s tensors, read as arrays (no per-item `__getitem__`)"
    parts = []
    for t in tensors:
        a = np.ascontiguousarray(t.detach().cpu().numpy())
        parts.append((f"a{a.dtype}{a.shape[1:]}".encode(), a.reshape(n, -1).view(np.uint8).reshape(n, -1)))
    keys = np.empty(n, dtype=np.uint64)
    for i in range(n):
        h = hashlib.blake2b(digest_size=8)
        for head, rows in parts:
            h.update(head)
            h.update(rows[i].tobytes())
        keys[i] = int.from_bytes(h.digest(), 'little')
    return keys

def item_keys(ds)->tuple:
    "`(kind, keys)`: one 64-bit hash per item of the dataset `ds` (a DataLoader's `.dataset`), in order, from its raw items"
    if isinstance(ds, _fastai_class('fastai.tabular.core', 'Tabular')):
        raise TypeError("a TabularPandas holds its rows after its procs (Categorify, Normalize), which were set up on the "
                        "training split: the same row reads differently under another split")
    items = getattr(ds, 'items', None)
    if items is not None and type(items).__name__ == 'DataFrame':
        import pandas as pd
        return 'dataframe rows', pd.util.hash_pandas_object(items, index=False).to_numpy().astype(np.uint64)
    if items is not None:
        if len(items) and all(isinstance(o, (int, np.integer)) and not isinstance(o, bool) for o in items):
            raise TypeError("the items are bare indices into a source this cannot see: the same index may name another item in another session")
        return 'items', np.fromiter((_h64(_item_bytes(o)) for o in items), dtype=np.uint64, count=len(items))
    tensors = getattr(ds, 'tensors', None)
    if isinstance(tensors, (tuple, list)) and tensors and all(isinstance(t, torch.Tensor) for t in tensors):
        return 'dataset items', _tensor_rows(tensors, len(ds))
    return 'dataset items', np.fromiter((_h64(_item_bytes(ds[i])) for i in range(len(ds))), dtype=np.uint64, count=len(ds))

SIDECAR_SUFFIX = '.split.npz'

def sidecar_path(weights)->Path:
    "Where the split fingerprint of the weights file `weights` lies: `models/model.pth` -> `models/model.split.npz`"
    weights = Path(weights)
    return weights.with_name(weights.name[:-len(weights.suffix)] + SIDECAR_SUFFIX if weights.suffix else weights.name + SIDECAR_SUFFIX)

def _weights_print(weights:Path)->dict:
    "Size and a hash of the last MiB of the weights file: a torch zip ends with its directory, which holds every entry's CRC-32"
    size = weights.stat().st_size
    with open(weights, 'rb') as f:
        f.seek(max(0, size - 2**20))
        tail = hashlib.blake2b(f.read(), digest_size=16).hexdigest()
    return {'size': size, 'tail': tail}

class _Memo:
    "State kept across calls, declared: the keys of each dataset already read, the training split each model's weights came with from `learn.load`, the overlaps already reported"
    def __init__(self): self.reset()
    def reset(self):
        self.keys = weakref.WeakKeyDictionary() # dataset -> (len, kind, keys)
        self.history = weakref.WeakKeyDictionary() # model -> (kind, sorted keys of the training split of the weights it loaded)
        self.reported = weakref.WeakKeyDictionary() # Learner -> digests of the overlaps reported
    def keys_of(self, ds)->tuple:
        known = self.keys.get(ds)
        if known is not None and known[0] == len(ds): return known[1:]
        kind, keys = item_keys(ds)
        try: self.keys[ds] = (len(ds), kind, keys)
        except TypeError: pass # not weak-referenceable: read again next time
        return kind, keys

_memo = _Memo()

def split_digest(learn)->dict:
    "The training split of `learn` as a set: `kind` of key, `n_items`, and `keys`, the sorted distinct 64-bit hashes of its raw items"
    kind, keys = _memo.keys_of(learn.dls.train.dataset)
    return {'kind': kind, 'n_items': int(len(keys)), 'keys': np.unique(keys)}

def write_split_print(learn, # the Learner whose weights were just saved
                      weights, # the weights file `learn.save` wrote
                     )->Path:
    "Write the fingerprint of `learn`'s training split (with the splits its weights were loaded with) beside `weights`"
    weights = Path(weights)
    digest = split_digest(learn)
    keys = digest['keys']
    previous = _memo.history.get(learn.model)
    if previous is not None and previous[0] == digest['kind']: keys = np.union1d(keys, previous[1])
    meta = {'version': 1, 'kind': digest['kind'], 'n_items': digest['n_items'], 'n_keys': int(len(keys)), 'weights': weights.name,
            'saved': datetime.datetime.now(datetime.timezone.utc).strftime('%Y-%m-%d %H:%M UTC'), **_weights_print(weights)}
    target = sidecar_path(weights)
    tmp = target.with_name(target.name + '.tmp')
    with open(tmp, 'wb') as f: np.savez(f, keys=keys, meta=np.array(json.dumps(meta)))
    os.replace(tmp, target)
    return target

def read_split_print(weights)->dict|None:
    "The fingerprint saved beside `weights` (`meta` and `keys`), or None when there is none or it belongs to other weights (saved again since)"
    weights = Path(weights)
    target = sidecar_path(weights)
    if not target.exists() or not weights.exists(): return None
    with np.load(target, allow_pickle=False) as z: meta, keys = json.loads(str(z['meta'])), z['keys']
    if meta.get('version') != 1 or {k: meta.get(k) for k in ('size', 'tail')} != _weights_print(weights): return None
    return {'meta': meta, 'keys': keys}

def _shown(path:Path)->str:
    "`path` relative to the working directory when it lies inside it"
    try: return str(Path(path).resolve().relative_to(Path.cwd().resolve()))
    except (ValueError, OSError): return str(path)

def _pct(share:float)->str: return f"{share:.0%}" if share >= 0.01 or share == 0 else f"{share:.1%}"

def _judge(learn, weights:Path, saved:dict|None)->tuple:
    "`(CheckResult, digest of the validation items found in the saved split or None)`"
    name = 'check_split_overlap'
    if saved is None:
        return CheckResult(name, 'skipped', message=f"{weights} has no split fingerprint of its own (saved without `paranoid()`, or saved again since)."), None
    meta = saved['meta']
    kind, valid = _memo.keys_of(learn.dls.valid.dataset)
    _, train = _memo.keys_of(learn.dls.train.dataset)
    if kind != meta['kind']:
        return CheckResult(name, 'skipped', message=f"{weights} knows its items by {meta['kind']}, this Learner by {kind}: they cannot be compared."), None
    seen = np.isin(valid, saved['keys']) & ~np.isin(valid, train) # valid items in the current training split are check_split_duplicates' finding
    n_seen, n_valid = int(seen.sum()), len(valid)
    odds = n_valid * len(saved['keys']) / 2**64
    measured = dict(valid_in_saved_train=n_seen, n_valid=n_valid, share=n_seen / max(n_valid, 1), n_saved_train=int(len(saved['keys'])))
    claim = f"certain: exact 64-bit hashes of the raw items, chance of one false match {odds:.0e}"
    if n_seen == 0:
        return CheckResult(name, 'passed', measured, 0, f"none of the {n_valid} validation items was in the training split of {_shown(weights)}.", claim=claim), None
    result = CheckResult(name, 'failed', measured, 0,
                         f"{n_seen} of {n_valid} validation items ({_pct(n_seen / n_valid)}) were in the training split of {_shown(weights)} saved on "
                         f"{meta['saved']}: the validation score of these weights is inflated.",
                         "seed the splitter (`RandomSplitter(seed=42)`) or save the split (e.g. a column `is_valid` and `ColSplitter()`) and reuse it in every session",
                         claim=claim)
    return result, hashlib.blake2b(np.unique(valid[seen]).tobytes(), digest_size=16).hexdigest()

def check_split_overlap(learn, # the Learner whose validation set is judged
                        weights, # a weights file saved with its split fingerprint (`learn.save` under `paranoid()`)
                       )->CheckResult:
    "Were validation items of `learn` in the training split of the saved `weights`? Counted exactly, from the fingerprint beside them"
    weights = Path(weights)
    return _judge(learn, weights, read_split_print(weights))[0]

class SplitFingerprint(Callback):
    "Under `paranoid()`: `learn.save` writes the training split's fingerprint beside the weights; `learn.load` reports validation items the weights were trained on"
    # Learner.save and Learner.load fire no event: the first SplitFingerprint wraps them (see `_install`); the wrappers act
    # only for a Learner that holds one, and give fastai's methods back once paranoid() is off and no Learner holds one.
    def __init__(self, on_leak:str='warn'): # 'warn', 'raise' or 'log', as `paranoid(on_leak=...)`
        if on_leak not in ON_LEAK: raise ValueError(f"SplitFingerprint: on_leak={on_leak!r} is not one of {', '.join(map(repr, ON_LEAK))}.")
        store_attr()
    def after_create(self):
        _live.add(self)
        _install()

_live = weakref.WeakSet() # the SplitFingerprint guards created: while one is attached to its Learner, the wrappers stay
_fastai = {} # 'save'/'load' -> fastai's function, while ours is installed in its place

def _guard_of(learn)->SplitFingerprint|None:
    return next((cb for cb in getattr(learn, 'cbs', ()) if isinstance(cb, SplitFingerprint)), None)

def _probing(learn)->bool:
    "Is an `lr_find` running? Its `_tmp` save and load are no checkpoint"
    return any(isinstance(cb, _fastai_class('fastai.callback.schedule', 'LRFinder')) for cb in learn.cbs)

def _install():
    "Put the wrappers in place of fastai's `Learner.save` and `Learner.load` (once)"
    for name, wrapper in (('save', _save), ('load', _load)):
        if name in _fastai: continue
        _fastai[name] = Learner.__dict__[name]
        setattr(Learner, name, wrapper)

def _uninstall():
    "Give fastai's `Learner.save` and `Learner.load` back"
    for name in list(_fastai):
        if Learner.__dict__.get(name) is {'save': _save, 'load': _load}[name]: setattr(Learner, name, _fastai[name])
        del _fastai[name]

def _fastai_method(learn, name:str):
    "fastai's method `name`; once paranoid() is off and no Learner holds a guard, uninstall the wrappers first"
    method = _fastai[name]
    if _guard_of(learn) is None:
        from fastai_paranoid.paranoid import is_paranoid # paranoid imports this module: read at call time
        if not is_paranoid() and not any(g.learn is not None and g in g.learn.cbs for g in list(_live)): _uninstall()
    return method

def _save(self, file, **kwargs):
    res = _fastai_method(self, 'save')(self, file, **kwargs)
    if _guard_of(self) is None or rank_distrib() != 0 or not isinstance(res, (str, Path)) or _probing(self): return res
    try: write_split_print(self, res)
    except Exception as e: # never break a save: no fingerprint, and none left over from older weights
        _logger.debug("learn.save(%r): no split fingerprint written (%s: %s)", file, type(e).__name__, e)
        try: sidecar_path(res).unlink(missing_ok=True)
        except Exception: pass
    return res

def _load(self, file, device=None, **kwargs):
    res = _fastai_method(self, 'load')(self, file, device=device, **kwargs)
    guard = _guard_of(self)
    if guard is None or _probing(self) or not isinstance(file, (str, Path)): return res
    try:
        weights = Path(self.path)/self.model_dir/f'{file}.pth' # where fastai's `load` read them (`join_path_file`)
        saved = read_split_print(weights)
        if saved is None: _memo.history.pop(self.model, None)
        else: _memo.history[self.model] = (saved['meta']['kind'], saved['keys'])
        result, overlap = _judge(self, weights, saved)
        reported = _memo.reported.setdefault(self, set())
        if overlap is None or overlap in reported: return res
        reported.add(overlap)
    except Exception as e: # never break a load
        _logger.debug("learn.load(%r): split fingerprint not compared (%s: %s)", file, type(e).__name__, e)
        return res
    evidence = ', '.join(f"{k}={v:.3g}" if isinstance(v, float) else f"{k}={v}" for k, v in result.measured.items())
    emit(f"learn.load({str(file)!r}): {result.message} Evidence: {evidence} ({result.claim}). Fix: {result.fix}.",
         SplitOverlapWarning, on_leak=guard.on_leak, stacklevel=2)
    return res

_save.__doc__, _load.__doc__ = Learner.save.__doc__, Learner.load.__doc__
