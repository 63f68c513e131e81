"""fastbook clean/07_sizing_and_tta.ipynb, "Imagenette", "Normalization", "Test Time Augmentation", "Mixup":
`def get_dls(bs, size): dblock = DataBlock(blocks=(ImageBlock, CategoryBlock), get_items=get_image_files, get_y=parent_label,
    item_tfms=Resize(460), batch_tfms=[*aug_transforms(size=size, min_scale=0.75), Normalize.from_stats(*imagenet_stats)])`,
`model = xresnet50(n_out=dls.c)`, `learn = Learner(dls, model, loss_func=CrossEntropyLossFlat(), metrics=accuracy, cbs=MixUp())`,
`learn.fit_one_cycle(5, 3e-3)`, `preds,targs = learn.tta()`, `accuracy(preds, targs).item()`.
Offline: a synthetic IMAGENETTE tree (train/val, 4 classes, 32 px), xresnet18 instead of xresnet50 (CPU time), bs=16,
fit_one_cycle(1, 3e-3). Healthy: should raise nothing."""
from fastai.vision.all import *
import synth

synth.seed_everything()
path = synth.image_folders('imagenette2-160', ['n01440764', 'n02102040', 'n02979186', 'n03000684'], n_per_class=16,
                           size=32, splits=('train', 'val'), ext='JPEG')
def get_dls(bs, size):
    dblock = DataBlock(blocks=(ImageBlock, CategoryBlock),
                   get_items=get_image_files,
                   get_y=parent_label,
                   splitter=GrandparentSplitter(valid_name='val'),
                   item_tfms=Resize(40),
                   batch_tfms=[*aug_transforms(size=size, min_scale=0.75),
                               Normalize.from_stats(*imagenet_stats)])
    return dblock.dataloaders(path, bs=bs)
dls = get_dls(16, 32)
model = xresnet18(n_out=dls.c)
learn = Learner(dls, model, loss_func=CrossEntropyLossFlat(), metrics=accuracy, cbs=MixUp())
learn.fit_one_cycle(1, 3e-3)
preds,targs = learn.tta()
accuracy(preds, targs).item()
