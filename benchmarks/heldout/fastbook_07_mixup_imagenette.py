"""fastbook `07_sizing_and_tta.ipynb` (fastai/fastbook), section "Mixup", at the chapter's real image size: Imagenette with
`get_dls(bs, size)` = `DataBlock(blocks=(ImageBlock(), CategoryBlock()), get_items=get_image_files, get_y=parent_label,
item_tfms=Resize(460), batch_tfms=[*aug_transforms(size=size, min_scale=0.75), Normalize.from_stats(*imagenet_stats)])`,
`dls = get_dls(64, 224)`, `model = xresnet50(n_out=dls.c)`, `learn = Learner(dls, model, loss_func=CrossEntropyLossFlat(),
metrics=accuracy, cbs=MixUp())`, `learn.fit_one_cycle(5, 3e-3)`.
Changed: untar_data(URLs.IMAGENETTE) -> 10 synthetic classes of 12 images (320x426, Imagenette-320's size; the chapter's
random 80/20 split by dataloaders' default); 1 epoch instead of 5 (a fresh xresnet50 at 224 px costs ~12 GFLOP per image
per step); Resize(460) -> Resize(320) (the images are 320 px)."""
from fastai.vision.all import *
import synth_data

set_seed(0)
IMAGENETTE = ['n01440764', 'n02102040', 'n02979186', 'n03000684', 'n03028079', 'n03394916', 'n03417042', 'n03425413', 'n03445777', 'n03888605']
path = synth_data.image_tree('imagenette2', IMAGENETTE, n_per_class=10, size=(320, 426), splits=(None,))

def get_dls(bs, size):
    dblock = DataBlock(blocks=(ImageBlock(), CategoryBlock()),
                   get_items=get_image_files,
                   get_y=parent_label,
                   item_tfms=Resize(320),
                   batch_tfms=[*aug_transforms(size=size, min_scale=0.75),
                               Normalize.from_stats(*imagenet_stats)])
    return dblock.dataloaders(path, bs=bs)

dls = get_dls(64, 224)
model = xresnet50(n_out=dls.c)
learn = Learner(dls, model, loss_func=CrossEntropyLossFlat(),
                metrics=accuracy, cbs=MixUp())
learn.fit_one_cycle(1, 3e-3)
