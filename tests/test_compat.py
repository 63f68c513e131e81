"fastai's internals are read in one module, `fastai_paranoid.compat`: a fastai upgrade that renames them breaks that file only."
import re
from pathlib import Path

PKG = Path(__file__).resolve().parents[1]/'fastai_paranoid'

# what reading fastai's internals looks like in this package's code
INTERNALS = {
    "a fastai module read from sys.modules": r"sys\.modules(\.get)?\(\s*['\"]fastai",
    "a fastai class read by name": r"getattr\([^,]*,\s*['\"](LRFinder|DistributedDL|DistributedTrainer|AvgMetric|AccumMetric|TrackerCallback|ProgressCallback)['\"]",
    "Learner._set_device": r"\._set_device\b",
    "Optimizer._keep_on_clear": r"\._keep_on_clear\b",
    "fastai's event frame names": r"['\"](_with_events|_call_one|_do_fit|_do_epoch)['\"]",
    "BaseLoss.func": r"\.func if isinstance\(\w+, BaseLoss\)",
    "unwrapping DDP": r"while isinstance\(\w+, \(nn\.parallel\.DistributedDataParallel",
    "unwrapping DistributedDL": r"isinstance\(\w+, \w+\.DistributedDL\)",
    "lr_find's callback": r"['\"]LRFinder['\"]",
}
# distributed's CPU launch replaces `DistributedDL._broadcast` and `DistributedTrainer._wrap_dl` for one context: that patch is its subject
OWNED_ELSEWHERE = {'distributed': [r"\._broadcast\b|\b_wrap_dl\b"]}

def reads(text:str)->list:
    code = '\n'.join(l for l in text.splitlines() if not l.lstrip().startswith('#'))
    return sorted(what for what, pattern in INTERNALS.items() if re.search(pattern, code))

def test_the_patterns_see_what_they_look_for():
    assert reads("x = getattr(sys.modules.get('fastai.distributed'), 'DistributedDL', ())") == \
        ['a fastai class read by name', 'a fastai module read from sys.modules']
    assert reads("batches.append(learn._set_device(b))") == ['Learner._set_device']
    assert reads("return loss_func.func if isinstance(loss_func, BaseLoss) else loss_func") == ['BaseLoss.func']
    assert reads("# sys.modules.get('fastai.x') in a comment") == []
    assert reads((PKG/'compat.py').read_text()) != []

def test_fastais_internals_are_read_in_compat_only():
    found = {p.stem: reads(p.read_text()) for p in sorted(PKG.glob('*.py')) if p.stem not in ('compat', '_modidx')}
    assert {m: r for m, r in found.items() if r} == {}

def test_what_distributed_patches_stays_in_distributed():
    for p in sorted(PKG.glob('*.py')):
        if p.stem in ('distributed', '_modidx'): continue
        assert not re.search(OWNED_ELSEWHERE['distributed'][0], p.read_text()), p.stem
