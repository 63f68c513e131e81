"""Wall time of a checked run against a plain one, on a tutorial-sized script: 5-fold cross-validation, each fold a
`vision_learner(resnet18)` `fine_tune(1)` on small synthetic images (2 classes, 64 px, written as PNG files).

- `python script.py`: the baseline;
- the check with the sanity checks on: `fastai-paranoid check script.py -- images` (the CLI of this checkout: its
  `main`, run with this checkout first on the path);
- the same with `--no-sanity`, to separate the sanity checks from the other guards.

Each is a fresh process (imports included), run `repeats` times interleaved in the same session; the ratio is of the fastest runs, in wall
seconds and in CPU seconds (the process and every process under it, polled: what a shared machine inflates least). Target: checked / plain <= 1.2 with the sanity
checks on. Run by hand from the repository root: `OMP_NUM_THREADS=1 python benchmarks/bench_checkrun.py [n_per_class] [repeats]`."""
import os, subprocess, sys, tempfile, textwrap, time
from pathlib import Path
import numpy as np

TARGET = 1.2 # issue 20 (was 1.5)

TUTORIAL = '''\
"A tutorial-style script: 5-fold cross-validation of a resnet18 fine-tuned on images in class folders"
import sys
from fastai.vision.all import *
from sklearn.model_selection import KFold

path = Path(sys.argv[1])
files = get_image_files(path)
set_seed(42)
scores = []
for fold, (train_idx, valid_idx) in enumerate(KFold(5, shuffle=True, random_state=42).split(files)):
    block = DataBlock(blocks=(ImageBlock, CategoryBlock), get_items=get_image_files, splitter=IndexSplitter(valid_idx),
                      get_y=parent_label, item_tfms=Resize(64), batch_tfms=Normalize.from_stats(*imagenet_stats))
    dls = block.dataloaders(path, bs=32)
    learn = vision_learner(dls, resnet18, pretrained=False, metrics=accuracy)
    learn.fine_tune(1)
    scores.append(learn.validate()[1])
print("accuracy per fold:", scores)
'''

CHECK = 'import sys; from fastai_paranoid.cli import main; sys.exit(main(sys.argv[1:]))' # `fastai-paranoid` from this checkout

def write_images(root:Path, n_per_class:int, size:int=64):
    "Two classes of noisy shapes (a bright disc, a bright square) as PNG files in class folders"
    from PIL import Image
    rng = np.random.default_rng(0)
    yy, xx = np.mgrid[:size, :size]
    for label in ('disc', 'square'):
        (root / label).mkdir(parents=True)
        for i in range(n_per_class):
            cy, cx, r = rng.integers(16, size - 16, 2).tolist() + [int(rng.integers(6, 14))]
            mask = (yy - cy) ** 2 + (xx - cx) ** 2 < r * r if label == 'disc' else (abs(yy - cy) < r) & (abs(xx - cx) < r)
            img = rng.normal(115, 55, (size, size, 3)) + 100 * mask[..., None] # roughly ImageNet's brightness and spread
            Image.fromarray(img.clip(0, 255).astype(np.uint8)).save(root / label / f"{i}.png")

def timed(cmd, env, cwd=None, every:float=0.05):
    "(wall seconds, CPU seconds of the process and of every process under it, as last seen by polling every `every` s, result)"
    import psutil
    seen = {}
    start = time.perf_counter()
    with tempfile.TemporaryFile('w+') as out, tempfile.TemporaryFile('w+') as err:
        proc = psutil.Popen(cmd, stdout=out, stderr=err, text=True, env=env, cwd=cwd)
        while proc.poll() is None:
            try: tree = [proc] + proc.children(recursive=True)
            except psutil.Error: tree = [proc]
            for p in tree:
                try: t = p.cpu_times()
                except psutil.Error: continue
                seen[p.pid] = max(seen.get(p.pid, 0.0), t.user + t.system)
            time.sleep(every)
        took = time.perf_counter() - start
        out.seek(0); err.seek(0)
        res = subprocess.CompletedProcess(cmd, proc.returncode, out.read(), err.read())
    return took, sum(seen.values()), res

def main(n_per_class:int=100, repeats:int=1):
    env = dict(os.environ)
    env['PYTHONPATH'] = os.pathsep.join([str(Path(__file__).resolve().parents[1]), env.get('PYTHONPATH', '')])
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        write_images(tmp / 'images', n_per_class)
        (tmp / 'tutorial.py').write_text(TUTORIAL)
        script, images = str(tmp / 'tutorial.py'), str(tmp / 'images')
        runs = {'python script.py': [sys.executable, script, images],
                'check, sanity checks on': [sys.executable, '-c', CHECK, 'check', script, '--', images],
                'check, --no-sanity': [sys.executable, '-c', CHECK, 'check', '--no-sanity', script, '--', images]}
        print(f"{2 * n_per_class} images of 64 px, 5 folds of vision_learner(resnet18, pretrained=False).fine_tune(1); "
              f"OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', 'unset')}, {os.cpu_count()} CPUs")
        seconds, cpu = {name: [] for name in runs}, {name: [] for name in runs}
        for rep in range(repeats): # interleaved, so that a change in the machine's load hits every variant alike
            for name, cmd in runs.items():
                took, used, res = timed(cmd, env)
                seconds[name].append(took)
                cpu[name].append(used)
                if res.returncode not in (0, 1): print(res.stderr[-3000:])
                report = [l.strip() for l in res.stdout.splitlines() if l.strip().startswith(('fastai-paranoid:', 'accuracy per fold', 'tutorial.py'))]
                print(f"run {rep + 1}: {name:26s} {took:7.1f} s (CPU {used:6.1f} s)  exit {res.returncode}  {' | '.join(report)}")
                if rep == 0 and ('problem found' in res.stdout or 'problems found' in res.stdout):
                    print(textwrap.indent(res.stdout[res.stdout.index('fastai-paranoid:'):][-4000:], '    '))
        base, base_cpu = min(seconds['python script.py']), min(cpu['python script.py'])
        for name in list(runs)[1:]:
            ratio, ratio_cpu = min(seconds[name]) / base, min(cpu[name]) / base_cpu
            print(f"ratio of the fastest runs, {name:26s} wall {ratio:5.2f}, CPU {ratio_cpu:5.2f}" + (f"  (target <= {TARGET})" if 'on' in name else ''))

if __name__ == '__main__': main(*(int(a) for a in sys.argv[1:]))
