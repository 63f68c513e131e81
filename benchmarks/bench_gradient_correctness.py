"""False alarms and detection of `check_gradient_correctness` (modelchecks, check 15) on Learners whose models use custom
`torch.autograd.Function`s: correct ones (x**2, a ReLU with its kink, a Linear with its three gradients, a sigmoid that saves
its output, a two-output sin/cos, a leaky ReLU with a float argument and `once_differentiable`, Mish in a CNN with BatchNorm
and dropout), and the same Functions with a planted wrong backward (a factor off, a wrong mask, a transposed or missing
gradient, a wrong formula, a flipped sign). Each model is drawn at random (input width, hidden width, batch size, seed),
with fastai's CrossEntropyLossFlat. A healthy model with a verdict other than 'passed' is a false alarm ('failed' counts
as the error it would be; 'skipped' and 'info' are listed); a wrong one is caught when 'failed'. Also the seconds the check
takes on an ordinary model (no custom Function: one forward of a copy) and on one with a custom Function.

Run by hand from the repository root: `python benchmarks/bench_gradient_correctness.py [N]` (N random models per case,
default 20; torch on 2 threads)."""
import collections, random, sys, time, warnings
import numpy as np
import torch
from torch import nn
from torch.autograd.function import once_differentiable
from fastai.learner import Learner
from fastai.losses import CrossEntropyLossFlat
from fastai_paranoid.fixtures import tensor_dls
from fastai_paranoid.modelchecks import check_gradient_correctness

torch.set_num_threads(2)
warnings.filterwarnings('ignore')

def function(fwd, bwd, save_output=False, n_out=1):
    "A torch.autograd.Function from a forward `fwd(*inputs)` and a backward `bwd(saved, *grads) -> grads of the inputs`"
    class Custom(torch.autograd.Function):
        @staticmethod
        def forward(ctx, *inputs):
            out = fwd(*inputs)
            ctx.save_for_backward(*((out,) if save_output else inputs))
            return out
        @staticmethod
        def backward(ctx, *grads): return bwd(ctx.saved_tensors, *grads)
    return Custom

# (name, forward, correct backward, wrong backward)
Square = ('square', lambda x: x**2, lambda s, g: 2 * s[0] * g, lambda s, g: s[0] * g)
ReLU = ('relu (kink at 0)', lambda x: x.clamp(min=0), lambda s, g: g * (s[0] > 0), lambda s, g: g * (s[0] < 0))
Linear = ('linear (x, W, b)', lambda x, w, b: x @ w.t() + b,
          lambda s, g: (g @ s[1], g.t() @ s[0], g.sum(0)),
          lambda s, g: (g @ s[1], 0.5 * g.t() @ s[0], None)) # W's gradient halved, b's missing
Sigmoid = ('sigmoid (saves its output)', torch.sigmoid, lambda s, g: g * s[0] * (1 - s[0]), lambda s, g: g * s[0])
SinCos = ('sin, cos (two outputs)', None, None, None) # built below: two outputs
Mish = ('mish in a CNN with BatchNorm and dropout', lambda x: x * torch.tanh(nn.functional.softplus(x)),
        lambda s, g: g * (torch.tanh(nn.functional.softplus(s[0])) + s[0] * torch.sigmoid(s[0]) * (1 - torch.tanh(nn.functional.softplus(s[0]))**2)),
        lambda s, g: g * torch.tanh(nn.functional.softplus(s[0]))) # the second term forgotten

class SinCosFn(torch.autograd.Function):
    wrong = False
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x.sin(), x.cos()
    @staticmethod
    def backward(ctx, gs, gc):
        (x,) = ctx.saved_tensors
        return gs * x.cos() + (1 if SinCosFn.wrong else -1) * gc * x.sin() # wrong: d cos = +sin

class LeakyFn(torch.autograd.Function):
    "A leaky ReLU with its slope as a float argument, and once_differentiable"
    wrong = False
    @staticmethod
    def forward(ctx, x, slope):
        ctx.save_for_backward(x)
        ctx.slope = slope
        return torch.where(x > 0, x, slope * x)
    @staticmethod
    @once_differentiable
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * torch.where(x > 0, torch.ones_like(x), torch.full_like(x, -ctx.slope if LeakyFn.wrong else ctx.slope)), None

class MLP(nn.Module):
    def __init__(self, n_in, width, n_out, act):
        super().__init__()
        self.fc0, self.fc, self.act = nn.Linear(n_in, width), nn.Linear(width, n_out), act
    def forward(self, x): return self.fc(self.act(self.fc0(x)))

class CustomLinearNet(nn.Module):
    def __init__(self, n_in, width, n_out, fn):
        super().__init__()
        self.fc0, self.fc, self.fn = nn.Linear(n_in, width), nn.Linear(width, n_out), fn
    def forward(self, x): return self.fc(torch.tanh(self.fn.apply(x, self.fc0.weight, self.fc0.bias)))

class MishCNN(nn.Module):
    def __init__(self, width, n_out, fn):
        super().__init__()
        self.conv, self.bn, self.drop, self.fc, self.fn = nn.Conv2d(1, width, 3, padding=1), nn.BatchNorm2d(width), nn.Dropout(0.2), nn.Linear(width, n_out), fn
    def forward(self, x): return self.fc(self.drop(self.fn.apply(self.bn(self.conv(x)))).mean((2, 3)))

def learner(case, wrong, rng, seed):
    random.seed(seed) # fastai's DataLoader draws its shuffling seed from Python's random
    torch.manual_seed(seed)
    n_in, width, n_out, bs = int(rng.integers(4, 65)), int(rng.integers(8, 129)), int(rng.integers(2, 11)), int(rng.choice([8, 16, 32]))
    image = case is Mish
    x = torch.randn(192, 1, 8, 8) if image else torch.randn(192, n_in) * float(rng.choice([0.1, 1, 10]))
    y = torch.randint(0, n_out, (192,))
    if case is SinCos:
        SinCosFn.wrong = wrong
        model = MLP(n_in, width, n_out, lambda h: (lambda s, c: s + 0.5 * c)(*SinCosFn.apply(h)))
    elif case == 'leaky':
        LeakyFn.wrong = wrong
        model = MLP(n_in, width, n_out, lambda h: LeakyFn.apply(h, 0.1))
    else:
        name, fwd, good, bad = case
        fn = function(fwd, bad if wrong else good, save_output=case is Sigmoid)
        if case is Linear: model = CustomLinearNet(n_in, width, n_out, fn)
        elif image: model = MishCNN(width // 4 + 2, n_out, fn)
        else: model = MLP(n_in, width, n_out, fn.apply)
    return Learner(tensor_dls(x[:160], y[:160], x[160:], y[160:], bs=bs), model, loss_func=CrossEntropyLossFlat())

CASES = [Square, ReLU, Linear, Sigmoid, SinCos, 'leaky', Mish]
def case_name(case): return 'leaky relu (float argument, once_differentiable)' if case == 'leaky' else case[0]

def main(n=20):
    rng = np.random.default_rng(0)
    verdicts, errors, seconds = collections.defaultdict(collections.Counter), collections.defaultdict(list), collections.defaultdict(list)
    for case in CASES:
        for wrong in (False, True):
            for k in range(n):
                learn = learner(case, wrong, rng, seed=k)
                start = time.perf_counter()
                res = check_gradient_correctness(learn, seed=k)
                seconds['custom'].append(time.perf_counter() - start)
                key = (case_name(case), 'wrong' if wrong else 'healthy')
                verdicts[key][res.verdict] += 1
                errors[key].append(res.measured.get('max_rel_error', float('nan')))
                if res.verdict != ('failed' if wrong else 'passed'): print(f"  {key} seed {k}: {res.verdict}: {res.message[:300]}")
    print(f"\n{'case':<52} {'backward':<8} {'verdicts':<34} relative error (median, max)")
    for (name, kind), counts in verdicts.items():
        e = np.array(errors[(name, kind)])
        print(f"{name:<52} {kind:<8} {dict(counts)!s:<34} {np.nanmedian(e):.2g}, {np.nanmax(e):.2g}")
    healthy = sum(sum(c.values()) for (_, kind), c in verdicts.items() if kind == 'healthy')
    failed = sum(c['failed'] for (_, kind), c in verdicts.items() if kind == 'healthy')
    other = sum(sum(v for k, v in c.items() if k != 'passed') for (_, kind), c in verdicts.items() if kind == 'healthy')
    wrong = sum(sum(c.values()) for (_, kind), c in verdicts.items() if kind == 'wrong')
    caught = sum(c['failed'] for (_, kind), c in verdicts.items() if kind == 'wrong')
    print(f"\nhealthy models: {failed}/{healthy} failed (false alarms), {other}/{healthy} not 'passed'; wrong backwards caught: {caught}/{wrong}")
    plain = Learner(tensor_dls(torch.randn(160, 32), torch.randint(0, 10, (160,)), torch.randn(32, 32), torch.randint(0, 10, (32,))),
                    nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 10)), loss_func=CrossEntropyLossFlat())
    for _ in range(20):
        start = time.perf_counter(); check_gradient_correctness(plain); seconds['plain'].append(time.perf_counter() - start)
    print(f"seconds per check: ordinary MLP (no custom Function) median {np.median(seconds['plain']):.4f}; "
          f"with a custom Function median {np.median(seconds['custom']):.3f}, max {max(seconds['custom']):.3f}")

if __name__ == '__main__': main(int(sys.argv[1]) if len(sys.argv) > 1 else 20)
