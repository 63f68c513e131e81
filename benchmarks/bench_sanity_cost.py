"""Where the time of `learn.sanity_check()` goes, per check: CPU seconds (the fastest of `repeats` runs, torch on one thread,
so that other processes on a shared machine inflate it least) and counts that do not depend on the machine's load: forward
passes of the model (or a copy), backward passes, optimizer steps, deep copies of the model, batches read from a DataLoader.

Learners: seed 001's small CNN on scikit-learn's digits (bench_sanity's), a small MLP on the same digits (flattened), and
`bench_checkrun`'s `vision_learner(resnet18, pretrained=False)` on 160 synthetic 64 px images, frozen as `fine_tune` freezes it, at the budget of
`fastai-paranoid check` (`DEFAULT_SANITY_BUDGET`) and the rate `fine_tune` trains with. Each line gives one epoch of `fit`
on the same Learner, measured in the same run, as the unit the check costs are read against.

Target (issue 20): a small MLP or CNN checked in at most 3 s of CPU.

Run by hand from the repository root: `python benchmarks/bench_sanity_cost.py [repeats] [which]` (which: all, mlp, cnn, resnet18)."""
import sys, time, warnings, functools, collections
from functools import partial
import torch
from torch import nn
import fastai.callback.progress # learn.no_bar
from fastai.losses import CrossEntropyLossFlat
from fastai.vision.learner import vision_learner
from torchvision.models import resnet18
from fastai_paranoid import checks, datachecks, sanity
from fastai_paranoid.core import registered_checks
from fastai_paranoid.fixtures import small_cnn, tensor_dls, load_digits_tensors, split_per_class
from fastai_paranoid.fresh import fresh_learner
from fastai_paranoid.calibration import image_dls
from fastai_paranoid.checkrun import DEFAULT_SANITY_BUDGET

torch.set_num_threads(1)

def standardized_digits_dls(bs=64, flat=False):
    x, y = load_digits_tensors()
    tr, va = split_per_class(y, seed=0)
    mean, std = x[tr].mean(), x[tr].std()
    x = (x - mean) / std
    if flat: x = x.flatten(1)
    return tensor_dls(x[tr], y[tr], x[va], y[va], bs=bs)

def digits_cnn():
    return fresh_learner(standardized_digits_dls, partial(small_cnn, n_out=10, size=8), loss_func=CrossEntropyLossFlat(), lr=3e-3)

def digits_mlp():
    mlp = lambda: nn.Sequential(nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 10))
    return fresh_learner(partial(standardized_digits_dls, flat=True), mlp, loss_func=CrossEntropyLossFlat(), lr=3e-3)

def resnet18_64px():
    "bench_checkrun's Learner as `fastai-paranoid check` sees it before fine_tune's first fit: frozen"
    learn = fresh_learner(partial(image_dls, n_train=160, n_valid=40, size=64, n_classes=2, bs=32), resnet18,
                          learner=vision_learner, pretrained=False, loss_func=CrossEntropyLossFlat())
    learn.freeze()
    return learn

class Counts:
    "Counters of the work a check does, by patching the few places every check goes through"
    names = ('forwards', 'backwards', 'steps', 'model_copies', 'batches_read')
    def __init__(self): self.c = collections.Counter()
    def __enter__(self):
        self.saved = []
        def wrap(obj, attr, key, test=None):
            orig = getattr(obj, attr)
            @functools.wraps(orig)
            def f(*a, **k):
                if test is None or test(*a, **k): self.c[key] += 1
                return orig(*a, **k)
            self.saved.append((obj, attr, orig))
            setattr(obj, attr, f)
        import torch.autograd, fastai.optimizer, fastai.data.load
        wrap(torch.autograd, 'backward', 'backwards')
        wrap(torch.autograd, 'grad', 'backwards')
        wrap(torch.optim.Optimizer, 'zero_grad', 'steps_torch') # not counted: a proxy only
        wrap(fastai.optimizer.Optimizer, 'step', 'steps')
        wrap(torch.optim.Adam, 'step', 'steps')
        import copy
        orig_deepcopy, depth = copy.deepcopy, [0]
        def deepcopy(o, *a, **k): # only the outermost call: deepcopy recurses through the module's global name
            if depth[0] == 0 and (isinstance(o, nn.Module) or (isinstance(o, tuple) and o and isinstance(o[0], nn.Module))): self.c['model_copies'] += 1
            depth[0] += 1
            try: return orig_deepcopy(o, *a, **k)
            finally: depth[0] -= 1
        self.saved.append((copy, 'deepcopy', orig_deepcopy))
        copy.deepcopy = deepcopy
        wrap(fastai.data.load.DataLoader, 'do_batch', 'batches_read')
        return self
    def __exit__(self, *a):
        for obj, attr, orig in reversed(self.saved): setattr(obj, attr, orig)
    def snapshot(self):
        c = dict(self.c)
        c.pop('steps_torch', None)
        return {k: c.get(k, 0) for k in self.names if k != 'forwards'}

def counted(fn, counts, forwards, cpu):
    "`fn` wrapped: records the work it does and its CPU seconds under its name"
    @functools.wraps(fn)
    def run(*a, **k):
        before, f0, c0 = counts.snapshot(), forwards[0], time.process_time()
        try: return fn(*a, **k)
        finally:
            cpu[fn.__name__] = time.process_time() - c0
            after = counts.snapshot()
            cpu[fn.__name__ + ' counts'] = {'forwards': forwards[0] - f0, **{k: after[k] - before[k] for k in after}}
    return run

def one_run(make, budget=None, lr=None):
    learn = make()
    forwards = [0]
    root_type = type(learn.model)
    hook = learn.model.register_forward_hook(lambda m, i, o: forwards.__setitem__(0, forwards[0] + 1)) # deepcopy carries it into copies
    counts, cpu = Counts(), {}
    with counts, warnings.catch_warnings():
        warnings.simplefilter('ignore')
        fns = [counted(fn, counts, forwards, cpu) for fn in registered_checks()]
        c0, w0 = time.process_time(), time.perf_counter()
        report = learn.sanity_check(checks=fns, on_finding=None, progress=False, budget=budget, lr=lr)
        total_cpu, total_wall = time.process_time() - c0, time.perf_counter() - w0
    hook.remove()
    return report, cpu, total_cpu, total_wall

def epoch_cpu(make):
    learn = make()
    c0 = time.process_time()
    with learn.no_bar(), learn.no_logging(): learn.fit(1)
    return time.process_time() - c0

def bench(title, make, repeats, budget=None, lr=None, out=print):
    epoch = min(epoch_cpu(make) for _ in range(max(1, repeats // 2)))
    runs = [one_run(make, budget, lr) for _ in range(repeats)]
    best = min(runs, key=lambda r: r[2])
    report = best[0]
    out(f"\n{title}: one epoch of fit = {epoch:.2f} s CPU; budget {report.budget:g} s; sanity_check CPU over {repeats} runs: "
        + ', '.join(f"{r[2]:.2f}" for r in runs) + f" s (wall {', '.join(f'{r[3]:.2f}' for r in runs)})")
    out(f"  {'check':28s} {'verdict':8s} {'cpu s':>6s} {'epochs':>6s} {'fwd':>5s} {'bwd':>5s} {'steps':>5s} {'copies':>6s} {'batches':>7s}")
    for res in report.results:
        per_run = [r[1].get(res.name, 0.0) for r in runs]
        c = best[1].get(res.name + ' counts', {})
        out(f"  {res.name:28s} {res.verdict:8s} {min(per_run):6.2f} {min(per_run) / epoch:6.1f} {c.get('forwards', 0):5d} "
            f"{c.get('backwards', 0):5d} {c.get('steps', 0):5d} {c.get('model_copies', 0):6d} {c.get('batches_read', 0):7d}")
    tot = {k: sum(best[1].get(r.name + ' counts', {}).get(k, 0) for r in report.results) for k in ('forwards', 'backwards', 'steps', 'model_copies', 'batches_read')}
    out(f"  {'total':28s} {'':8s} {best[2]:6.2f} {best[2] / epoch:6.1f} {tot['forwards']:5d} {tot['backwards']:5d} {tot['steps']:5d} "
        f"{tot['model_copies']:6d} {tot['batches_read']:7d}")
    return best[2], [(r.name, r.verdict) for r in report.results]

if __name__ == '__main__':
    repeats = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    which = sys.argv[2] if len(sys.argv) > 2 else 'all'
    with open('/proc/loadavg') as f: print(f"load average at start: {f.read().strip()}; torch threads {torch.get_num_threads()}")
    if which in ('all', 'mlp'): bench("digits, small MLP (64-64-64-10)", digits_mlp, repeats)
    if which in ('all', 'cnn'): bench("digits, small CNN", digits_cnn, repeats)
    if which in ('all', 'resnet18'):
        bench(f"vision_learner(resnet18, pretrained=False), frozen, 160 images of 64 px, budget {DEFAULT_SANITY_BUDGET:g} s, lr 2e-3 (fine_tune's)",
              resnet18_64px, max(1, repeats - 1), budget=DEFAULT_SANITY_BUDGET, lr=2e-3)
    with open('/proc/loadavg') as f: print(f"\nload average at end: {f.read().strip()}")
