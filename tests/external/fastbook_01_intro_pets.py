"""fastbook clean/01_intro.ipynb, "Running Your First Notebook": the cat-or-dog classifier.
Cells followed: `path = untar_data(URLs.PETS)/'images'`, `def is_cat(x): return x[0].isupper()`,
`dls = ImageDataLoaders.from_name_func(path, get_image_files(path), valid_pct=0.2, seed=42, label_func=is_cat, item_tfms=Resize(224))`,
`learn = vision_learner(dls, resnet34, metrics=error_rate)`, `learn.fine_tune(1)`.
Offline: synthetic PETS images (32 px) in the real layout, pretrained=False, Resize(32), bs=16. Healthy: should raise nothing."""
from fastai.vision.all import *
import synth

synth.seed_everything()
path = synth.pets() / 'images'
def is_cat(x): return x[0].isupper()
dls = ImageDataLoaders.from_name_func(path, get_image_files(path), valid_pct=0.2, seed=42, label_func=is_cat,
                                      item_tfms=Resize(32), bs=16)
learn = vision_learner(dls, resnet34, metrics=error_rate, pretrained=False)
learn.fine_tune(1)
