"""False-alarm rate and cost of the model checks (`fastai_paranoid.modelchecks`) on random healthy Learners that were not
tailored to them: random MLPs (depth, width, activation, BatchNorm, dropout, zero-initialised heads), random small CNNs on
fastai image DataLoaders (unnormalized pixels included), tabular_learner on random DataFrames (fastai's RandomSplitter,
unstratified), residual nets with stochastic depth, xresnet18 (zero-init BatchNorm), vision_learner(resnet18,
pretrained=False), AWD-LSTM text classifiers and collab. Every check is certain when it fails, so the target is 0 alarms.
Also the seconds each check takes on a small CNN (the checks run before every Learner's first fit under the command).

Run by hand from the repository root: `python benchmarks/bench_falsealarm_model.py [N]` (N random Learners, default 120;
torch on 2 threads)."""
import collections, random, sys, time, warnings
import numpy as np
import pandas as pd
import torch
from torch import nn
from fastai.data.transforms import RandomSplitter
from fastai.learner import Learner
from fastai.losses import CrossEntropyLossFlat
from fastai.tabular.data import TabularDataLoaders
from fastai.tabular.core import Categorify, FillMissing, Normalize
from fastai.tabular.learner import tabular_learner
from fastai_paranoid.fixtures import tensor_dls
from fastai_paranoid.calibration import image_dls, small_image_net, text_dls, ratings_dls
from fastai_paranoid import modelchecks as mc

torch.set_num_threads(2)
CHECKS = [mc.check_optimizer_coverage, mc.check_gradient_flow, mc.check_input_dependency, mc.check_output_variation,
          mc.check_gradient_correctness]

def random_mlp_learner(rng, seed):
    n_in, n_classes = int(rng.integers(2, 65)), int(rng.integers(2, 11))
    x = torch.randn(320, n_in) * float(rng.choice([0.01, 1, 100])) + float(rng.normal(0, 5)) # unscaled on purpose
    y = torch.randint(0, n_classes, (320,))
    act = [nn.ReLU, nn.GELU, nn.Tanh, nn.LeakyReLU][int(rng.integers(4))]
    layers, width = [], n_in
    for _ in range(int(rng.integers(1, 5))):
        w = int(rng.integers(4, 129))
        layers += [nn.Linear(width, w)] + ([nn.BatchNorm1d(w)] if rng.random() < 0.4 else []) + [act()]
        if rng.random() < 0.4: layers.append(nn.Dropout(float(rng.uniform(0.1, 0.6))))
        width = w
    head = nn.Linear(width, n_classes)
    if rng.random() < 0.2: nn.init.zeros_(head.weight); nn.init.zeros_(head.bias)
    bs = int(rng.choice([8, 16, 32, 64]))
    return Learner(tensor_dls(x[:256], y[:256], x[256:], y[256:], bs=bs), nn.Sequential(*layers, head), loss_func=nn.CrossEntropyLoss())

def random_cnn_learner(rng, seed):
    size = int(rng.choice([16, 32]))
    dls = image_dls(size=size, seed=seed, normalize=bool(rng.random() < 0.7), bs=int(rng.choice([8, 16])))
    return Learner(dls, small_image_net(width=int(rng.choice([8, 16, 32]))), loss_func=CrossEntropyLossFlat())

def random_tabular_learner(rng, seed):
    n = int(rng.integers(100, 400))
    df = pd.DataFrame({f"cat{i}": rng.choice(list('abcdefg')[:int(rng.integers(2, 8))], n) for i in range(int(rng.integers(0, 4)))})
    for i in range(int(rng.integers(1, 6))): df[f"cont{i}"] = rng.normal(float(rng.normal(0, 50)), float(rng.uniform(0.1, 30)), n)
    df['y'] = rng.choice(['p', 'q', 'r'], n)
    cats, conts = [c for c in df if c.startswith('cat')], [c for c in df if c.startswith('cont')]
    dls = TabularDataLoaders.from_df(df, procs=[Categorify, FillMissing, Normalize], cat_names=cats, cont_names=conts, y_names='y',
                                     valid_idx=RandomSplitter(0.2, seed=seed)(range(n))[1], bs=int(rng.choice([16, 32, 64])), num_workers=0)
    return tabular_learner(dls, layers=[int(rng.integers(8, 201)) for _ in range(int(rng.integers(1, 4)))])

class DropPathNet(nn.Module):
    "Residual MLP: each branch skipped entirely with probability p in training (stochastic depth)"
    def __init__(self, n_in, width, depth, p):
        super().__init__()
        self.p, self.stem, self.head = p, nn.Linear(n_in, width), nn.Linear(width, 2)
        self.branches = nn.ModuleList(nn.Sequential(nn.Linear(width, width), nn.ReLU()) for _ in range(depth))
    def forward(self, x):
        h = self.stem(x).relu()
        for b in self.branches:
            if not (self.training and torch.rand(()) < self.p): h = h + b(h)
        return self.head(h)

def random_droppath_learner(rng, seed):
    n_in = int(rng.integers(2, 33))
    x, y = torch.randn(320, n_in), torch.randint(0, 2, (320,))
    model = DropPathNet(n_in, int(rng.integers(8, 65)), int(rng.integers(1, 5)), float(rng.uniform(0.1, 0.5)))
    return Learner(tensor_dls(x[:256], y[:256], x[256:], y[256:], bs=32), model, loss_func=nn.CrossEntropyLoss())

def xresnet_learner(rng, seed):
    from fastai.vision.models.xresnet import xresnet18
    return Learner(image_dls(size=32, seed=seed), xresnet18(n_out=3), loss_func=CrossEntropyLossFlat())

def resnet_learner(rng, seed):
    from fastai.vision.learner import vision_learner
    from torchvision.models import resnet18
    return vision_learner(image_dls(seed=seed, bs=8), resnet18, pretrained=False)

def text_learner(rng, seed):
    from fastai.text.learner import text_classifier_learner
    from fastai.text.models.awdlstm import AWD_LSTM
    return text_classifier_learner(text_dls(seed=seed), AWD_LSTM, pretrained=False)

def collab_learner_(rng, seed):
    from fastai.collab import collab_learner
    return collab_learner(ratings_dls(seed=seed), n_factors=int(rng.integers(2, 9)), y_range=(0, 5.5), use_nn=bool(rng.random() < 0.3))

# family -> (builder, weight): cheap families drawn more often
FAMILIES = {'mlp': (random_mlp_learner, 8), 'cnn': (random_cnn_learner, 3), 'tabular': (random_tabular_learner, 3),
            'stochastic depth': (random_droppath_learner, 2), 'xresnet18': (xresnet_learner, 1), 'resnet18': (resnet_learner, 1),
            'text': (text_learner, 1), 'collab': (collab_learner_, 1)}

def main(n=120):
    warnings.simplefilter('ignore')
    names, weights = list(FAMILIES), np.array([w for _, w in FAMILIES.values()], dtype=float)
    drawn = collections.Counter()
    alarms, seconds, by_family = collections.defaultdict(list), collections.defaultdict(list), collections.defaultdict(list)
    for seed in range(n):
        rng = np.random.default_rng(seed)
        family = names[int(rng.choice(len(names), p=weights / weights.sum()))]
        torch.manual_seed(seed); random.seed(seed)
        learn = FAMILIES[family][0](rng, seed)
        drawn[family] += 1
        for check in CHECKS:
            start = time.perf_counter()
            res = check(learn)
            seconds[check.__name__].append(time.perf_counter() - start)
            by_family[family, check.__name__].append(seconds[check.__name__][-1])
            if res.verdict in ('failed', 'warning', 'error'):
                alarms[check.__name__].append(f"seed {seed} ({family}): {res.verdict}: {res.message}")
    print(f"{n} random healthy Learners: " + ', '.join(f"{k} {v}" for k, v in drawn.items()))
    for check in CHECKS:
        k = check.__name__
        print(f"{k:26s} alarms {len(alarms[k])}/{n}   median {np.median(seconds[k]):.3f} s, max {max(seconds[k]):.3f} s")
        for a in alarms[k]: print('   ', a[:300])
    print('median seconds per family: ' + '; '.join(f"{f}: " + ', '.join(f"{np.median(by_family[f, c.__name__]):.3f}" for c in CHECKS) for f in drawn))
    learn = random_cnn_learner(np.random.default_rng(0), 0) # cost on a small CNN, warm
    for check in CHECKS: check(learn)
    for check in CHECKS:
        times = []
        for _ in range(5):
            start = time.perf_counter(); check(learn); times.append(time.perf_counter() - start)
        print(f"small CNN (16 px, width {learn.model[0][0].out_channels}): {check.__name__} {np.median(times):.3f} s")

if __name__ == '__main__': main(int(sys.argv[1]) if len(sys.argv) > 1 else 120)
