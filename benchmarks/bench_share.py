"""The checks' work as a share of the fit's (issue 40): per Learner, per check, the GFLOP allowed, the GFLOP spent, the seconds and
the verdict, on the two workloads where the seed checks could not decide: `vision_learner(resnet34, pretrained=False)` at 224 px,
one epoch (`fit_one_cycle(1)`) on 500 synthetic images (400 training, bs 64), and `text_classifier_learner(AWD_LSTM,
pretrained=False)` with `fine_tune(1)` on 300 synthetic reviews (bs 64). The allowance is what `fastai-paranoid check` gives
before the fit (`checkrun.sanity_work`: `SANITY_SHARE` of the fit's work, split by `sanity.WORK_SPLIT`); the broken variants
(lr 1e-7; every parameter frozen) show the same sizing judging a model that cannot learn. The fit's seconds are timed on one training step of a copy and
scaled to the fit's steps (the whole fit of a resnet34 at 224 px takes minutes on CPU). The broken variants run the two checks and the
two that name a frozen model's cause (check_optimizer_coverage, check_gradient_flow). Run: python benchmarks/bench_share.py [text|resnet34]"""
import re, sys, time, math, tempfile, warnings
from pathlib import Path
import numpy as np, pandas as pd, torch
sys.path.insert(0, str(Path(__file__).parent.parent / 'tests' / 'external'))
warnings.filterwarnings('ignore')
from fastai.vision.all import *
from fastai.text.all import *
import synth
import fastai_paranoid.all
from fastai_paranoid.checkrun import fit_work, SANITY_SHARE
from fastai_paranoid.sanity import work_allowances
from fastai_paranoid.checkutils import sharing, training_batches, work_per_step, model_copy, new_optimizer, predict

TRAINING = ('check_overfit_one_batch', 'check_lr', 'check_loss_at_init', 'check_frozen', 'check_gradient_flow')

def image_learner(n=500, size=224, bs=64, seed=0):
    path = Path(tempfile.gettempdir()) / f'bench_share_images_{size}'
    if not path.exists():
        path.mkdir(parents=True)
        rng = np.random.default_rng(seed)
        for i in range(n): synth._image(i % 2, 2, size, rng).save(path / f"{'cat' if i % 2 else 'dog'}_{i}.png")
    dls = ImageDataLoaders.from_name_re(path, get_image_files(path), r'^(\w+)_\d+.png$', item_tfms=Resize(size), bs=bs, seed=seed)
    return vision_learner(dls, resnet34, pretrained=False, metrics=error_rate)

def text_learner(n=300, seed=0):
    rng = np.random.default_rng(seed)
    labels = rng.choice(['pos', 'neg'], n)
    df = pd.DataFrame({'label': labels, 'text': [synth._review(l, rng) for l in labels], 'is_valid': rng.random(n) < 0.2})
    dls = TextDataLoaders.from_df(df, text_col='text', label_col='label', valid_col='is_valid', seed=seed)
    return text_classifier_learner(dls, AWD_LSTM, drop_mult=0.5, metrics=accuracy, pretrained=False)

def step_seconds(learn):
    "Seconds of one training step of a copy on the first training batch (median of 2)"
    with sharing(learn): xb, yb = training_batches(learn, 1)[0]
    model = model_copy(learn); opt = new_optimizer(learn, model, 1e-3); times = []
    for _ in range(2):
        start = time.perf_counter()
        loss = learn.loss_func(predict(model, xb), *yb); loss.backward(); opt.step(); opt.zero_grad()
        times.append(time.perf_counter() - start)
    return min(times)

def spent(r, learn):
    "GFLOP the check's training steps cost, from its evidence (steps x GFLOP a step; check_lr's forwards scoring the starting weights on its last batches are not counted); the one-batch test that stopped early: its steps x `work_per_step` on the items it names"
    m = r.measured
    if r.verdict == 'skipped' and 'work_needed' in m and 'loss_curve' not in m: return 0.0 # skipped before any step
    if 'step_gflop' in m and 'steps' in m: return m['steps'] * m['step_gflop']
    found = re.search(r'on (\d+) items of the first batch', r.message)
    if r.name == 'check_overfit_one_batch' and found and m.get('steps'):
        with sharing(learn): xb, yb = training_batches(learn, 1)[0]
        k = int(found.group(1))
        cut = lambda b: tuple(t[:k] if isinstance(t, torch.Tensor) and t.ndim else t for t in b)
        return m['steps'] * work_per_step(learn, learn.model, cut(xb), cut(yb)) / 1e9
    return None

def everything_frozen(learn):
    "The broken variant where no parameter trains: every parameter's requires_grad off (a freeze gone too far)"
    for p in learn.model.parameters(): p.requires_grad_(False)

VARIANTS = ((None, ''), ('lr', ' BROKEN: lr 1e-7'), ('frozen', ' BROKEN: every parameter frozen'))

def main(which=None):
    torch.manual_seed(0)
    cases = [('text classifier, AWD_LSTM, fine_tune(1, 1e-2), 300 reviews', text_learner, 2, 1e-2, 'frozen'),
             ('resnet34 224 px, fit_one_cycle(1), 500 images', image_learner, 1, 1e-3, None)]
    for label, make, epochs, lr, phase in cases:
        if which and which not in label: continue
        for broken, suffix in VARIANTS:
            torch.manual_seed(0)
            learn = make()
            name = label + suffix
            learn.n_epoch = epochs
            fit = fit_work(learn, epochs)
            work = SANITY_SHARE * fit
            fns = [getattr(fastai_paranoid.checks, n) for n in ('check_overfit_one_batch', 'check_lr')]
            allow = work_allowances(fns, work)
            if phase == 'frozen': learn.freeze()
            if broken == 'frozen': everything_frozen(learn)
            per_step = step_seconds(learn) if not broken else None
            checks = None if not broken else ['check_optimizer_coverage', 'check_gradient_flow', 'check_overfit_one_batch', 'check_lr']
            start = time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter('ignore')
                rep = learn.sanity_check(checks=checks, on_finding=None, progress=False, lr=1e-7 if broken == 'lr' else lr, work=work)
            total = time.perf_counter() - start
            print(f"\n## {name}\nfit: {fit:,.0f} GFLOP ({epochs} epoch(s) x {len(learn.dls.train)} batches of {learn.dls.bs}); "
                  f"checks that train: {SANITY_SHARE:.0%} of it = {work:,.0f} GFLOP" +
                  (f"; one training step {per_step:.1f} s here, so the fit's training steps ~{per_step * len(learn.dls.train) * epochs:.0f} s; "
                   f"all {len(rep)} checks {total:.0f} s (check/plain of the steps ~{1 + total / (per_step * len(learn.dls.train) * epochs):.2f})" if per_step else f"; {total:.0f} s"), flush=True)
            print(f"  {'check':28s} {'allowed':>9s} {'spent':>9s} {'seconds':>8s}  verdict")
            for r, s in zip(rep.results, rep.seconds):
                a = allow.get(r.name, {}).get('work')
                sp = spent(r, learn)
                print(f"  {r.name:28s} {'' if a is None else f'{a:9.0f}':>9s} {'' if sp is None else f'{sp:9.1f}':>9s} {s:8.1f}  {r.verdict}"
                      + (f": {r.message[:400]}" if r.name in ('check_overfit_one_batch', 'check_lr') or broken else ''), flush=True)

if __name__ == '__main__': main(sys.argv[1] if len(sys.argv) > 1 else None)
