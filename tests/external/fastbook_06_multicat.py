"""fastbook clean/06_multicat.ipynb, "Multi-Label Classification" (PASCAL_2007):
`def get_x(r): return path/'train'/r['fname']`, `def get_y(r): return r['labels'].split(' ')`,
`def splitter(df): train = df.index[~df['is_valid']].tolist(); valid = df.index[df['is_valid']].tolist(); return train,valid`,
`dblock = DataBlock(blocks=(ImageBlock, MultiCategoryBlock), splitter=splitter, get_x=get_x, get_y=get_y, item_tfms = RandomResizedCrop(128, min_scale=0.35))`,
`learn = vision_learner(dls, resnet50, metrics=partial(accuracy_multi, thresh=0.2))`, `learn.fine_tune(3, base_lr=3e-3, freeze_epochs=4)`.
Offline: a synthetic train.csv (space-separated labels, is_valid) and images (32 px); resnet18 instead of resnet50 (CPU time),
pretrained=False, bs=16, fine_tune(1, base_lr=3e-3, freeze_epochs=1). Healthy (BCEWithLogitsLossFlat): should raise nothing."""
from fastai.vision.all import *
import synth

synth.seed_everything()
path = synth.pascal()
df = pd.read_csv(path/'train.csv')
def get_x(r): return path/'train'/r['fname']
def get_y(r): return r['labels'].split(' ')
def splitter(df):
    train = df.index[~df['is_valid']].tolist()
    valid = df.index[df['is_valid']].tolist()
    return train,valid
dblock = DataBlock(blocks=(ImageBlock, MultiCategoryBlock),
                   splitter=splitter,
                   get_x=get_x,
                   get_y=get_y,
                   item_tfms = RandomResizedCrop(32, min_scale=0.35))
dls = dblock.dataloaders(df, bs=16)
learn = vision_learner(dls, resnet18, metrics=partial(accuracy_multi, thresh=0.2), pretrained=False)
learn.fine_tune(1, base_lr=3e-3, freeze_epochs=1)
