"""walkwithfastai `02_vision.clas.single_label.ipynb` (muellerzr/walkwithfastai, cells 26-57): the DataBlock version,
`DataBlock(blocks=(ImageBlock, CategoryBlock), get_items=get_image_files, splitter=RandomSplitter(0.2),
get_y=RegexLabeller(pat = pat), item_tfms=item_tfms, batch_tfms=batch_tfms)`, `pets.dataloaders(path_im, bs=bs)`,
`cnn_learner(dls, resnet34, pretrained=True, metrics=error_rate).to_fp16()`, `learn.fit_one_cycle(1)`, `learn.lr_find()`,
`learn.unfreeze()`, `learn.fit_one_cycle(4, lr_max=slice(1e-4, 1e-3))`, `learn.predict`, `test_dl`/`get_preds`.
Changed: untar_data(URLs.PETS) -> 100 synthetic pet images (10 breeds, 300x400 px); `pretrained=False`; RandomResizedCrop
460 -> 256 and aug_transforms size 224 -> 160 (CPU time); the unfrozen fit 1 epoch instead of 4; lr_find's sweep 10 steps instead of 100."""
from fastai.vision.all import *
import synth_data

set_seed(2)
path = synth_data.pets(n_images=100, size=(300, 400), n_breeds=10)
fnames = get_image_files(path/'images')
pat = r'/([^/]+)_\d+.*'
item_tfms = RandomResizedCrop(256, min_scale=0.75, ratio=(1.,1.))
batch_tfms = [*aug_transforms(size=160, max_warp=0), Normalize.from_stats(*imagenet_stats)]
bs=64
pets = DataBlock(blocks=(ImageBlock, CategoryBlock),
                 get_items=get_image_files,
                 splitter=RandomSplitter(0.2),
                 get_y=RegexLabeller(pat = pat),
                 item_tfms=item_tfms,
                 batch_tfms=batch_tfms)
path_im = path/'images'
dls = pets.dataloaders(path_im, bs=bs)
learn = cnn_learner(dls, resnet34, pretrained=False, metrics=error_rate).to_fp16()
learn.fit_one_cycle(1)
learn.lr_find(num_it=10)
learn.unfreeze()
learn.fit_one_cycle(1, lr_max=slice(1e-4, 1e-3))
clas, clas_idx, probs = learn.predict(fnames[0]); print(clas)
test_dl = learn.dls.test_dl(fnames[:10])
preds = learn.get_preds(dl=test_dl)
class_idxs = preds[0].argmax(dim=0)
