"""draft"""
from __future__ import annotations
import math
import torch
from torch import nn
from fastai.learner import Learner
from fastai.optimizer import OptimWrapper
from .core import CheckResult, register_check, preserve_rng
from .datachecks import Deadline, copy_model
from .checks import training_batches, model_copy, predict, new_optimizer, user_lr, _quiet_dropout

def param_paths(model:nn.Module, # the model
               )->dict:
    "Map each parameter name of `model` to its readable path, e.g. `model.1.weight (Linear)`"
    modules = dict(model.named_modules())
    return {n: f"model.{n} ({type(modules[n.rpartition('.')[0]]).__name__})" for n, _ in model.named_parameters()}

def _listed(paths:list, most:int=6)->str:
    "The first `most` of `paths`, and how many more"
    more = f" and {len(paths) - most} more" if len(paths) > most else ''
    return ', '.join(paths[:most]) + more

def _plain_out(model:nn.Module, xb:tuple)->torch.Tensor:
    "The model's prediction for `xb` as a plain tensor (fastai's tensor subclasses dropped)"
    if hasattr(model, 'reset'): model.reset() # fastai's RNNs keep a hidden state between calls: start each from the same
    out = predict(model, xb)
    return out.as_subclass(torch.Tensor) if isinstance(out, torch.Tensor) else out

def sign_step(params:list, # parameters whose .grad is set
              lr:float, # the step size
             ):
    "One step of sign descent, `p -= lr * sign(p.grad)`: what Adam's first step amounts to, without building an optimizer"
    with torch.no_grad():
        for p in params:
            if p.grad is not None and bool(torch.isfinite(p.grad).all()): p.sub_(lr * torch.sign(p.grad))

def train_steps(model:nn.Module, # a copy, trained in place
                learn:Learner, # whose loss, learning rate and training batches are used
                steps:int=3, # how many
               )->int:
    "Train `model` (a copy) `steps` sign-descent steps on the first training batches with the Learner's loss: a zero-initialised layer is non-zero after; returns the steps run"
    trainable = [p for p in model.parameters() if p.requires_grad]
    model.train()
    for k, (xb, yb) in enumerate(training_batches(learn, steps)):
        model.zero_grad(set_to_none=True)
        torch.manual_seed(k)
        learn.loss_func(_plain_out(model, xb), *yb).backward()
        sign_step(trainable, user_lr(learn))
    model.zero_grad(set_to_none=True)
    return steps


def optimizer_params(opt)->list:
    "The parameters an optimizer holds, in order, each once: fastai's `param_lists`, or a torch optimizer's `param_groups` (also through `OptimWrapper`)"
    lists = getattr(opt, 'param_lists', None)
    groups = [list(ps) for ps in lists] if lists is not None else [g['params'] for g in opt.param_groups]
    seen, res = set(), []
    for p in (p for g in groups for p in g):
        if id(p) not in seen: seen.add(id(p)); res.append(p)
    return res

def _stepping_optimizer(learn:Learner)->tuple:
    "`(optimizer, what it is)`: the optimizer the next fit steps, `learn.opt` if built, else the one `learn.create_opt` builds"
    if learn.opt is not None: return learn.opt, 'learn.opt'
    if isinstance(learn.opt_func, (OptimWrapper, torch.optim.Optimizer)): return learn.opt_func, 'learn.opt_func (an optimizer already built)'
    # built on the user's model, as create_opt builds it (a splitter may close over the model's own modules): no tensor changes
    return new_optimizer(learn, learn.model), 'the optimizer learn.create_opt() builds (learn.opt_func over learn.splitter(learn.model))'

@register_check(11)
def check_optimizer_coverage(learn:Learner, # the Learner, left as it is
                             budget:float|None=None, # seconds (unused: no forward pass)
                            )->CheckResult:
    "Does the optimizer the next fit steps hold every trainable parameter of the model, and no tensor that is not the model's (or the loss's)?"
    name = 'check_optimizer_coverage'
    opt, source = _stepping_optimizer(learn)
    held = optimizer_params(opt)
    held_ids = {id(p) for p in held}
    named = dict(learn.model.named_parameters())
    paths = param_paths(learn.model)
    own = {id(p) for p in named.values()}
    extra = [p for m in (learn.loss_func, getattr(learn.loss_func, 'func', None)) if isinstance(m, nn.Module) for p in m.parameters()]
    missing = [n for n, p in named.items() if p.requires_grad and id(p) not in held_ids]
    foreign = [p for p in held if id(p) not in own | {id(q) for q in extra}]
    frozen_held = sum(1 for p in named.values() if not p.requires_grad and id(p) in held_ids)
    measured = {'trainable': sum(p.requires_grad for p in named.values()), 'held': len(held), 'missing': len(missing),
                'foreign': len(foreign), 'frozen_held': frozen_held}
    threshold = "every trainable parameter held, nothing else (frozen ones may stay: fastai skips tensors without .grad)"
    if not missing and not foreign:
        return CheckResult(name, 'passed', measured, threshold,
                           f"{source} holds all {measured['trainable']} trainable parameter tensors of the model and nothing foreign.")
    evidence = []
    if missing: evidence.append(f"{len(missing)} trainable parameters are not in it, so they never train: {_listed([paths[n] for n in missing])}")
    if foreign: evidence.append(f"it holds {len(foreign)} tensors that are not parameters of learn.model (shapes "
                                f"{_listed([str(tuple(p.shape)) for p in foreign], 4)}): it steps layers the model no longer uses")
    if foreign or learn.opt is not None:
        fix = ("The optimizer was built before the model changed (learn.create_opt(), a fit or learn.freeze(), then a layer replaced, "
               "e.g. learn.model[-1] = nn.Linear(...)): replace layers before the first fit, or rebuild it after: learn.create_opt() "
               "(or learn.opt = None).")
    else: fix = ("learn.splitter leaves them out of the parameter groups: return every trainable parameter from it (fastai's "
                 "params(m) per group), or freeze the ones you mean to keep fixed with p.requires_grad_(False).")
    return CheckResult(name, 'failed', measured, threshold, f"{source}: " + '; '.join(evidence) + '.', fix, claim='certain')


def _gradient_state(g)->str:
    "'none' (no gradient reached it), 'zero' (all entries exactly 0), 'nonfinite', or 'ok': a whole tensor is judged, not its entries"
    if g is None: return 'none'
    if not bool(torch.isfinite(g).all()): return 'nonfinite'
    return 'ok' if bool(g.any()) else 'zero'

def _gradients(model, named, loss_func, xb, yb, seed)->dict:
    "The state of each parameter's gradient from the loss on one batch, the model's own randomness drawn from `seed`"
    model.zero_grad(set_to_none=True)
    torch.manual_seed(seed)
    loss_func(_plain_out(model, xb), *yb).backward()
    return {n: _gradient_state(p.grad) for n, p in named.items()}

@register_check(12)
def check_gradient_flow(learn:Learner, # the Learner, left as it is (a copy of its model is trained one step)
                        max_passes:int=16, # forward-backward passes (other batches, other seeds) before a gradient-less parameter counts as cut off
                        budget:float|None=None, # seconds; the passes stop when it runs out (parameters unresolved by then are not flagged)
                       )->CheckResult:
    "Does every trainable parameter get a finite, non-zero gradient from the loss? A zero one is re-checked on other batches and seeds (stochastic depth) and after one optimizer step (zero-initialised layers) before it counts"
    name = 'check_gradient_flow'
    deadline = Deadline(budget)
    model = model_copy(learn)
    named = {n: p for n, p in model.named_parameters() if p.requires_grad}
    threshold = f"no trainable tensor whose gradient is None, all zero or non-finite in {max_passes} passes and after one training step"
    if not named: return CheckResult(name, 'skipped', {}, threshold, "The model has no trainable parameter.")
    with preserve_rng(learn.dls):
        batches = training_batches(learn, 3)
        first = _gradients(model, named, learn.loss_func, *batches[0], seed=0)
        suspects = {n: s for n, s in first.items() if s != 'ok'}
        passes, stepped = 1, False
        while suspects and passes < max_passes and not deadline.expired:
            if passes == 2 and not stepped: # behind a zero-initialised layer: non-zero from the second step on
                sign_step(list(named.values()), user_lr(learn)) # with the gradients of the pass before
                stepped = True
            now = _gradients(model, named, learn.loss_func, *batches[passes % len(batches)], seed=passes)
            suspects = {n: now[n] for n in suspects if now[n] != 'ok'}
            passes += 1
    measured = {'trainable': len(named), 'passes': passes, 'stepped': stepped, 'no_grad': 0, 'zero_grad': 0, 'nonfinite_grad': 0}
    if passes < max_passes and suspects and deadline.expired:
        return CheckResult(name, 'skipped', measured | {'unresolved': len(suspects)}, threshold,
                           f"inconclusive: {len(suspects)} parameters had no non-zero gradient in the {passes} passes its "
                           f"{budget:.2f} s budget allowed.", "Give it more time: learn.sanity_check(budget=...).")
    resolved = sum(1 for s in first.values() if s != 'ok')
    if not suspects:
        note = f" ({resolved} only in later passes: zero-initialised layers or stochastic depth)" if resolved else ''
        return CheckResult(name, 'passed', measured, threshold,
                           f"All {len(named)} trainable parameter tensors get a finite, non-zero gradient from {type(learn.loss_func).__name__}{note}.")
    paths = param_paths(model)
    kinds = {'none': "get no gradient at all (the graph is cut: .detach(), .data, torch.no_grad() or .item() in the forward, or a submodule the forward never calls)",
             'zero': "get an all-zero gradient, on other batches and after an optimizer step too (multiplied by zero, masked out, or behind dead ReLUs)",
             'nonfinite': "get a NaN or infinite gradient (a sqrt, log or division at 0 in the forward or the loss)"}
    evidence = []
    for kind, text in kinds.items():
        hit = [paths[n] for n, s in suspects.items() if s == kind]
        measured[{'none': 'no_grad', 'zero': 'zero_grad', 'nonfinite': 'nonfinite_grad'}[kind]] = len(hit)
        if hit: evidence.append(f"{len(hit)} {text}: {_listed(hit)}")
    return CheckResult(name, 'failed', measured, threshold,
                       f"Of {len(named)} trainable parameter tensors, over {passes} forward-backward passes of a copy: " + '; '.join(evidence) + '.',
                       "Let the loss reach them: compute the forward on tensors, not on .data or .detach()ed copies, call every "
                       "submodule you keep (or delete it), or freeze what is meant to stay fixed with p.requires_grad_(False).",
                       claim='certain')


def _with(xb:tuple, i:int, x)->tuple: return xb[:i] + (x,) + xb[i + 1:]

def _perturbations(x:torch.Tensor, g:torch.Generator, mask=None)->list:
    "Versions of `x` (a batch) that differ from it, where `mask` (one item's shape) is True: large noise in two magnitudes and the values of other items for floats; flips, other items' values and random values in each position's range for integers"
    keep = lambda p: p if mask is None else torch.where(mask.to(x.device), p, x)
    rand = lambda: torch.randn(x.shape, generator=g).to(x.device, x.dtype)
    other = torch.randperm(len(x), generator=g).to(x.device) if len(x) > 1 else None
    if x.is_floating_point():
        scale = max(float(x.abs().max()), 1.0)
        res = [x + scale * rand(), x - 10 * scale * rand()] + ([x[other]] if other is not None else [])
    elif x.dtype == torch.bool: res = [~x] + ([x[other]] if other is not None else [])
    else:
        lo, hi = x.amin(0, keepdim=True), x.amax(0, keepdim=True)
        offset = torch.minimum((torch.rand(x.shape, generator=g).to(x.device) * (hi - lo + 1).double()).long(), (hi - lo).long())
        res = ([x[other], x.roll(1, 0)] if other is not None else []) + [(lo + offset).to(x.dtype)]
    return [p for p in (keep(p) for p in res) if not torch.equal(p, x)]

def _unchanged(model, xb, i, base, perturbed:list)->bool:
    "Is the output bitwise the same as `base` for every perturbed version of input `i` (a forward that raises counts as a change)?"
    for p in perturbed:
        try: out = _plain_out(model, _with(xb, i, p))
        except Exception: return False
        if not (isinstance(out, torch.Tensor) and out.shape == base.shape and torch.equal(out, base)): return False
    return True

def _zero_gradient_features(model, xb, i, g, n_probes:int=3)->torch.Tensor:
    "Per-item mask of the features of float input `i` whose gradient (of a random projection of the output) is 0 for every item, at the input and at `n_probes - 1` noisy versions of it"
    x = xb[i]
    influence = torch.zeros(x.shape[1:], device=x.device)
    scale = max(float(x.abs().max()), 1.0)
    for k in range(n_probes):
        point = (x + k * scale * torch.randn(x.shape, generator=g).to(x.device, x.dtype)).detach().requires_grad_(True)
        with torch.enable_grad():
            out = _plain_out(model, _with(xb, i, point))
            weights = torch.randn(out.shape, generator=g).to(out.device, out.dtype)
            try: grad, = torch.autograd.grad((out * weights).sum(), point, allow_unused=True)
            except RuntimeError: grad = None # not differentiable (argmax, rounding): the perturbations decide alone
        if grad is not None: influence += grad.detach().abs().sum(0).float().nan_to_num(1.0)
    return influence == 0

def _ignored_features(model, xb, i, base, candidates, g, deadline, max_forwards):
    "The features among `candidates` (flat indices) that leave the output bitwise unchanged, found by bisection, and whether the search finished"
    x, ignored, todo, forwards = xb[i], [], [candidates], 0
    shape = x.shape[1:]
    while todo and forwards < max_forwards and not deadline.expired:
        group = todo.pop()
        mask = torch.zeros(shape.numel(), dtype=torch.bool)
        mask[group] = True
        perturbed = _perturbations(x, g, mask.reshape(shape))
        forwards += len(perturbed)
        if _unchanged(model, xb, i, base, perturbed): ignored += group.tolist()
        elif len(group) > 1: todo += [group[:len(group) // 2], group[len(group) // 2:]]
    return sorted(ignored), not todo

def _trailing_border(dead:torch.Tensor)->bool:
    "Is `dead` (one item's shape, >= 2 dims: channels then space) exactly the last rows/columns of some spatial axes: a kernel and stride that do not cover the input's size?"
    if dead.ndim < 2 or not dead.any(): return False
    border = torch.zeros_like(dead)
    for axis in range(1, dead.ndim):
        d = dead.movedim(axis, 0)
        k = 0
        while k < len(d) and bool(d[len(d) - 1 - k].all()): k += 1
        if k: border.movedim(axis, 0)[len(d) - k:] = True
    return torch.equal(border, dead)

def _describe(flat:list, shape)->str:
    "Features `flat` (indices in one item of `shape`), as ranges for a vector, as positions otherwise"
    if len(shape) == 1:
        runs, start = [], flat[0]
        for a, b in zip(flat, flat[1:] + [None]):
            if b != a + 1: runs.append(f"{start}" if start == a else f"{start}-{a}"); start = b
        return f"features {_listed(runs)} of {shape[0]}"
    positions = [tuple(int(v) for v in torch.unravel_index(torch.tensor(f), tuple(shape))) for f in flat[:4]]
    return f"{len(flat)} of {math.prod(shape)} positions (per-item shape {tuple(shape)}), e.g. {', '.join(map(str, positions))}"


def _probe_inputs(model, xb, g, deadline, max_features, max_forwards)->dict:
    "Which inputs of `xb`, and which features of its float inputs, leave the (eval-mode) output of `model` bitwise unchanged"
    res = dict(inputs=[], features={}, border={}, unprobed=[], unresolved=[])
    with torch.no_grad():
        base = _plain_out(model, xb)
        for i, x in enumerate(xb):
            if not isinstance(x, torch.Tensor) or x.numel() == 0: continue
            perturbed = _perturbations(x, g)
            if not perturbed: res['unprobed'].append(i); continue # every item holds the same integers: nothing to swap
            if _unchanged(model, xb, i, base, perturbed): res['inputs'].append(i); continue
            if not x.is_floating_point() or x.ndim < 2 or x[0].numel() > max_features: continue
            candidates = torch.nonzero(_zero_gradient_features(model, xb, i, g).flatten().cpu()).flatten()
            if not len(candidates): continue
            found, done = _ignored_features(model, xb, i, base, candidates, g, deadline, max_forwards)
            if not done: res['unresolved'].append(i)
            if not found: continue
            dead = torch.zeros(x[0].numel(), dtype=torch.bool)
            dead[found] = True
            res['border' if _trailing_border(dead.reshape(x.shape[1:])) else 'features'][i] = found
    return res

def _probe_copy(learn, model, xb, seed, deadline, max_features, max_forwards)->dict:
    "`_probe_inputs` on `model` (a copy) in eval mode, without parameter gradients, its perturbations drawn from `seed`"
    model.eval()
    for p in model.parameters(): p.requires_grad_(False)
    return _probe_inputs(model, xb, torch.Generator().manual_seed(seed), deadline, max_features, max_forwards)

@register_check(13)
def check_input_dependency(learn:Learner, # the Learner, left as it is (a copy of its model is probed in eval mode)
                           n_items:int=16, # items of one training batch the model is probed on
                           max_features:int=4096, # float inputs with at most this many features per item are probed feature by feature
                           max_forwards:int=256, # forward passes of the per-feature search, per input
                           steps:int=3, # training steps of a copy before an ignored input counts (a zero-initialised head hides every input at init)
                           seed:int=0, # seed of the perturbations
                           budget:float|None=None, # seconds; the per-feature search stops when it runs out (unresolved features are not flagged)
                          )->CheckResult:
    "Does every input of the model, and every feature of a float input, change its output? Probed in eval mode (dropout off) with large perturbations: an input whose change leaves the output bitwise identical, also after a few training steps of a copy, is ignored by the forward"
    name = 'check_input_dependency'
    deadline = Deadline(budget)
    threshold = (f"output bitwise unchanged under every perturbation (noise of 1 and 10 x max|x|, other items' values), "
                 f"at init and after {steps} training steps = ignored")
    with preserve_rng(learn.dls):
        (xb, _), = training_batches(learn, 1)
        xb = tuple(x[:n_items] if isinstance(x, torch.Tensor) and x.ndim else x for x in xb)
        with torch.no_grad(): base = _plain_out(copy_model(learn.model).eval(), xb)
        if not isinstance(base, torch.Tensor): return CheckResult(name, 'skipped', {}, threshold, "The model's output is not a tensor.")
        found = _probe_copy(learn, copy_model(learn.model), xb, seed, deadline, max_features, max_forwards)
        trained = 0
        if found['inputs'] or found['features']: # a zero-initialised layer hides everything before it until the first step
            model = model_copy(learn)
            trained = train_steps(model, learn, steps)
            later = _probe_copy(learn, model, xb, seed, deadline, max_features, max_forwards)
            found['inputs'] = [i for i in found['inputs'] if i in later['inputs']]
            found['features'] = {i: sorted(set(v) & set(later['features'].get(i, []) + later['border'].get(i, [])))
                                 for i, v in found['features'].items()}
            found['features'] = {i: v for i, v in found['features'].items() if v}
    label = lambda i: f"input {i}" if len(xb) > 1 else "the input"
    shape = lambda i: tuple(xb[i].shape[1:])
    measured = {'inputs': len(xb), 'items': len(base), 'ignored_inputs': found['inputs'], 'steps': trained,
                'ignored_features': {i: len(v) for i, v in found['features'].items()},
                'unprobed_inputs': found['unprobed'], 'unresolved_inputs': found['unresolved']}
    if found['inputs'] or found['features']:
        evidence = [f"{label(i)} ({tuple(xb[i].shape)}, {xb[i].dtype}) changes as a whole" for i in found['inputs']]
        evidence += [f"{_describe(v, shape(i))} of {label(i)} change" for i, v in found['features'].items()]
        return CheckResult(name, 'failed', measured, threshold,
                           f"In eval mode, the output of a copy of the model on {len(base)} training items is bitwise unchanged when "
                           + '; when '.join(evidence) + f", at init and after {trained} training steps: the forward never reads them.",
                           "Use every input in the forward (an attention or padding mask, a second input, all the columns: "
                           "not x[:, :k] or a slice that drops features), or drop the input from the data if the model is not meant to see it.",
                           claim='certain')
    if found['border']:
        what = '; '.join(f"{_describe(v, shape(i))} of {label(i)}" for i, v in found['border'].items())
        return CheckResult(name, 'info', measured, threshold,
                           f"The model never sees {what}: only the last rows or columns, where its kernel sizes and strides do not cover the input size.",
                           "If those pixels matter, pad the input (or the convolutions) so the strides cover it, or crop it to a size they cover.")
    note = (f" ({len(found['unresolved'])} inputs not searched to the end in the budget)" if found['unresolved'] else '') + \
           (f" (inputs {found['unprobed']} hold the same integers in every item: not probed)" if found['unprobed'] else '') + \
           (f" (after {trained} training steps of a copy: a zero-initialised layer hid them at init)" if trained else '')
    return CheckResult(name, 'passed', measured, threshold,
                       f"Each of the {len(xb)} inputs, and each feature of the float ones, changes the model's output{note}.")


def _spread(out:torch.Tensor)->tuple:
    "`(largest distance of an item's output from the first's, largest |output|)`, in float64"
    out = out.detach().double().reshape(len(out), -1)
    return float((out - out[:1]).abs().max()), float(out.abs().max())

@register_check(14)
def check_output_variation(learn:Learner, # the Learner, left as it is (a copy of its model is probed, and trained a few steps if needed)
                           n_items:int=32, # items of one training batch compared
                           rtol:float=1e-6, # outputs within rtol x max|output| (+ atol) of the first item's are identical...
                           atol:float=1e-8, # ... plus this
                           steps:int=3, # training steps of a copy before identical outputs count (a zero-initialised head gives identical outputs at init)
                           budget:float|None=None, # seconds (unused: a few forward passes and steps)
                          )->CheckResult:
    "Do distinct items get different outputs? In eval mode; identical outputs at init are re-checked after a few steps of training a copy (a zero-initialised head) before they count as a collapsed model"
    name = 'check_output_variation'
    threshold = f"outputs of distinct items within {rtol:g} x max|output| + {atol:g} of each other, also after {steps} training steps = collapsed"
    model = model_copy(learn)
    with preserve_rng(learn.dls):
        (xb, _), = training_batches(learn, 1)
        xb = tuple(x[:n_items] if isinstance(x, torch.Tensor) and x.ndim else x for x in xb)
        tensors = [x for x in xb if isinstance(x, torch.Tensor) and x.ndim]
        if not tensors or len(tensors[0]) < 2 or all(torch.equal(x, x[:1].expand_as(x)) for x in tensors):
            return CheckResult(name, 'skipped', {}, threshold, "The batch holds fewer than 2 distinct items.")
        def spread():
            with torch.no_grad(): out = _plain_out(model.eval(), xb)
            if not isinstance(out, torch.Tensor) or out.ndim == 0 or len(out) != len(tensors[0]): return None
            return _spread(out)
        before = spread()
        if before is None: return CheckResult(name, 'skipped', {}, threshold, "The model's output has no row per item.")
        collapsed = lambda s: s[0] <= rtol * s[1] + atol
        after, trained = before, 0
        if collapsed(before):
            trained = train_steps(model, learn, steps)
            after = spread()
    measured = {'items': len(tensors[0]), 'spread': before[0], 'max_abs_output': before[1], 'steps': trained}
    if trained: measured |= {'spread_after': after[0], 'max_abs_output_after': after[1]}
    if not collapsed(after):
        note = f" (identical at init, different after {trained} training steps: a zero-initialised layer)" if trained else ''
        return CheckResult(name, 'passed', measured, threshold,
                           f"The outputs of {len(tensors[0])} distinct items differ by up to {after[0]:.3g} (max |output| {after[1]:.3g}){note}.")
    return CheckResult(name, 'failed', measured, threshold,
                       f"In eval mode, {len(tensors[0])} distinct training items get the same output (largest difference {after[0]:.3g} "
                       f"for outputs up to {after[1]:.3g}), at init and after {trained} training steps of a copy: the model has collapsed to "
                       f"a constant.",
                       "Look for a forward that returns something independent of its input (a bias or a constant, features "
                       "replaced by zeros or averaged over the batch), or a last layer whose weights are frozen at zero.",
                       claim='certain')
