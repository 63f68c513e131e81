"""fastbook clean/16_accel_sgd.ipynb, "Establishing a Baseline" and "A Generic Optimizer":
`def get_data(url, presize, resize): ...`, `dls = get_data(URLs.IMAGENETTE_160, 160, 128)`,
`def get_learner(**kwargs): return vision_learner(dls, resnet34, pretrained=False, metrics=accuracy, **kwargs).to_fp16()`,
`learn = get_learner(opt_func=SGD)`, `learn.lr_find()`, `learn.fit_one_cycle(3, 0.03, moms=(0,0,0))`,
`def sgd_cb(p, lr, **kwargs): p.data.add_(p.grad.data, alpha=-lr)`, `opt_func = partial(Optimizer, cbs=[sgd_cb])`,
`learn = get_learner(opt_func=opt_func)`, `learn.fit(3, 0.03)`.
Offline: synthetic IMAGENETTE (32 px, resize 32), bs=16, no to_fp16 (CPU); the hand-written optimizer, fit(1, 0.03). Healthy."""
from fastai.vision.all import *
import synth

synth.seed_everything()
synth.image_folders('imagenette2-160', ['n01440764', 'n02102040', 'n02979186', 'n03000684'], n_per_class=16,
                    size=32, splits=('train', 'val'), ext='JPEG')
def get_data(name, presize, resize):
    path = synth.ROOT / name
    return DataBlock(
        blocks=(ImageBlock, CategoryBlock), get_items=get_image_files,
        splitter=GrandparentSplitter(valid_name='val'),
        get_y=parent_label, item_tfms=Resize(presize),
        batch_tfms=[*aug_transforms(min_scale=0.5, size=resize),
                    Normalize.from_stats(*imagenet_stats)],
    ).dataloaders(path, bs=16)
dls = get_data('imagenette2-160', 32, 32)
def get_learner(**kwargs):
    return vision_learner(dls, resnet34, pretrained=False, metrics=accuracy, **kwargs)
def sgd_cb(p, lr, **kwargs): p.data.add_(p.grad.data, alpha=-lr)
opt_func = partial(Optimizer, cbs=[sgd_cb])
learn = get_learner(opt_func=opt_func)
learn.fit(1, 0.03)
