"""fastbook clean/07_sizing_and_tta.ipynb, "Progressive Resizing" and "Label Smoothing":
`dls = get_dls(128, 128)`, `learn = Learner(dls, xresnet50(n_out=dls.c), loss_func=LabelSmoothingCrossEntropy(), metrics=accuracy)`,
`learn.fit_one_cycle(4, 3e-3)`, `learn.dls = get_dls(64, 224)`, `learn.fine_tune(5, 1e-3)`.
Offline: synthetic IMAGENETTE (32 px, then 40 px), xresnet18 instead of xresnet50, 1 epoch each. Healthy."""
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
learn = Learner(dls, xresnet18(n_out=dls.c), loss_func=LabelSmoothingCrossEntropy(), metrics=accuracy)
learn.fit_one_cycle(1, 3e-3)
learn.dls = get_dls(8, 40)
learn.fine_tune(1, 1e-3)
