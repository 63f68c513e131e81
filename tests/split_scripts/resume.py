"""One session of a project whose training is resumed in the next: 500 random items with random labels, split by fastai's
RandomSplitter. `train`: fit and `learn.save('m')`; `resume`: a new split, `learn.load('m')`, then validate. Unseeded, the
split depends on what the session drew before (`--draws`); `--seeded` gives RandomSplitter(seed=42) its seed (the fix).
No fastai_paranoid inside, except `--paranoid`, which turns it on as a user would. Writes the split it used to `--record`."""
import argparse, json
import numpy as np, pandas as pd, torch
from torch import nn
from fastai.data.core import Datasets
from fastai.data.transforms import RandomSplitter, ColReader, Categorize
from fastai.learner import Learner
from fastai.metrics import accuracy
from fastai.callback.tracker import SaveModelCallback

p = argparse.ArgumentParser()
p.add_argument('step', choices=['train', 'resume'])
p.add_argument('--draws', type=int, default=0) # the session's draws before the split (another notebook's cells, another run)
p.add_argument('--seeded', action='store_true')
p.add_argument('--paranoid', action='store_true')
p.add_argument('--tracker', action='store_true') # train with SaveModelCallback (it saves 'm' and loads it back at the end)
p.add_argument('--record', default=None)
args = p.parse_args()
if args.paranoid:
    from fastai_paranoid.paranoid import paranoid
    paranoid()

rng = np.random.default_rng(0) # the data is the same in every session
df = pd.DataFrame(rng.normal(size=(500, 8)).astype('float32'), columns=[f'x{i}' for i in range(8)])
df['y'] = rng.integers(0, 2, 500)
torch.manual_seed(args.draws)
splits = RandomSplitter(seed=42 if args.seeded else None)(df)
features = lambda row: torch.tensor(row[[f'x{i}' for i in range(8)]].to_numpy(dtype='float32'))
dls = Datasets(df, [[features], [ColReader('y'), Categorize()]], splits=splits).dataloaders(bs=50, num_workers=0)
model = nn.Sequential(nn.Linear(8, 256), nn.ReLU(), nn.Linear(256, 2))
learn = Learner(dls, model, loss_func=nn.CrossEntropyLoss(), metrics=accuracy, path='.')
if args.step == 'train':
    cbs = [SaveModelCallback(monitor='train_loss', comp=np.less, fname='m')] if args.tracker else []
    learn.fit(5 if not args.tracker else 3, 1e-2, cbs=cbs)
    if not args.tracker: learn.save('m')
else:
    learn.load('m')
    print('accuracy', float(learn.validate()[1]))
if args.record:
    with open(args.record, 'w') as f: json.dump({'train': [int(i) for i in splits[0]], 'valid': [int(i) for i in splits[1]]}, f)
