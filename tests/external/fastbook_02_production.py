"""fastbook clean/02_production.ipynb, "From Data to DataLoaders" and "Training Your Model":
`bears = DataBlock(blocks=(ImageBlock, CategoryBlock), get_items=get_image_files, splitter=RandomSplitter(valid_pct=0.2, seed=42),
    get_y=parent_label, item_tfms=Resize(128))`,
`bears = bears.new(item_tfms=RandomResizedCrop(224, min_scale=0.5), batch_tfms=aug_transforms())`, `dls = bears.dataloaders(path)`,
`learn = vision_learner(dls, resnet18, metrics=error_rate)`, `learn.fine_tune(4)`.
Offline: a synthetic bears/{grizzly,black,teddy} folder (32 px), pretrained=False, bs=16, fine_tune(1). Healthy."""
from fastai.vision.all import *
import synth

synth.seed_everything()
path = synth.image_folders('bears', ['grizzly', 'black', 'teddy'], n_per_class=24, size=32, splits=('',), ext='jpg')
bears = DataBlock(
    blocks=(ImageBlock, CategoryBlock),
    get_items=get_image_files,
    splitter=RandomSplitter(valid_pct=0.2, seed=42),
    get_y=parent_label,
    item_tfms=Resize(32))
bears = bears.new(item_tfms=RandomResizedCrop(32, min_scale=0.5), batch_tfms=aug_transforms())
dls = bears.dataloaders(path, bs=16)
learn = vision_learner(dls, resnet18, metrics=error_rate, pretrained=False)
learn.fine_tune(1)
