"""walkwithfastai `02_vision.clas.single_label.ipynb` (muellerzr/walkwithfastai, cells 18-48): PETS with
`pat = r'/([^/]+)_\d+.*'`, `item_tfms = RandomResizedCrop(460, min_scale=0.75, ratio=(1.,1.))`,
`batch_tfms = [*aug_transforms(size=224, max_warp=0), Normalize.from_stats(*imagenet_stats)]`, bs=64,
`ImageDataLoaders.from_name_re(path, fnames, pat, batch_tfms=batch_tfms, item_tfms=item_tfms, bs=bs)`,
`cnn_learner(dls, resnet34, pretrained=True, metrics=error_rate).to_fp16()`, `learn.fit_one_cycle(1)`.
This is issue 40's flagship workload: `vision_learner(resnet34)` at 224 px, fit for one epoch on 500 images.
Changed: untar_data(URLs.PETS) -> 500 synthetic pet images (20 breeds, 300x400 px; 400 train, 100 valid by the recipe's
default valid_pct 0.2); `pretrained=False`; `ImageDataLoaders.from_name_re` -> `from_path_re`, the same
arguments (fastai's `from_name_re` matches `pat` against the file's name alone, `Birman_8.jpg`, and the notebook's `pat`
is written for the whole path: its leading '/' matches no name, real or synthetic, so every label failed;
`from_path_re` gives the notebook's `pat` the path, as its DataBlock version's `RegexLabeller(pat)` does); the
notebook's later lr_find/unfreeze stage is in wwf_single_label_datablock.py."""
from fastai.vision.all import *
import synth_data

set_seed(2)
path = synth_data.pets(n_images=500, size=(300, 400), n_breeds=20)
fnames = get_image_files(path/'images')
pat = r'/([^/]+)_\d+.*'
item_tfms = RandomResizedCrop(460, min_scale=0.75, ratio=(1.,1.))
batch_tfms = [*aug_transforms(size=224, max_warp=0), Normalize.from_stats(*imagenet_stats)]
bs=64
dls = ImageDataLoaders.from_path_re(path, fnames, pat,
                                   batch_tfms=batch_tfms,
                                   item_tfms=item_tfms, bs=bs)
learn = cnn_learner(dls, resnet34, pretrained=False, metrics=error_rate).to_fp16()
learn.fit_one_cycle(1)
