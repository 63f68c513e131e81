"""fastai `nbs/23_tutorial.vision.ipynb` (docs "Computer vision intro"), "Single-label classification" on the 37 pet breeds:
`pat = r'^(.*)_\d+.jpg'`, `ImageDataLoaders.from_name_re(path, files, pat, item_tfms=Resize(460), batch_tfms=aug_transforms(size=224))`,
`learn = vision_learner(dls, resnet34, metrics=error_rate)`, `learn.lr_find()`, `learn.fine_tune(2, 3e-3)`,
then `Interpretation.from_learner(learn)` and its top losses.
Changed: untar_data(URLs.PETS) -> 100 synthetic pet images (10 breeds, 300x400; the pattern's '.jpg' -> '.png');
`pretrained=False`; Resize(460) -> Resize(256) and aug size 224 -> 160, lr_find's sweep 10 steps and fine_tune(1, 3e-3)
(CPU time); plot_top_losses (a figure) -> top_losses."""
from fastai.vision.all import *
import synth_data

set_seed(0)
path = synth_data.pets(n_images=100, size=(300, 400), n_breeds=10)/'images'
files = get_image_files(path)
pat = r'^(.*)_\d+.png'
dls = ImageDataLoaders.from_name_re(path, files, pat, item_tfms=Resize(256), batch_tfms=aug_transforms(size=160))
learn = vision_learner(dls, resnet34, metrics=error_rate, pretrained=False)
learn.lr_find(num_it=10)
learn.fine_tune(1, 3e-3)
interp = Interpretation.from_learner(learn)
print(interp.top_losses(9))
