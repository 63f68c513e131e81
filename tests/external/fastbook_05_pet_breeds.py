"""fastbook clean/05_pet_breeds.ipynb, "From Dogs and Cats to Pet Breeds", "The Learning Rate Finder", "Unfreezing and Transfer Learning":
`pets = DataBlock(blocks = (ImageBlock, CategoryBlock), get_items=get_image_files, splitter=RandomSplitter(seed=42),
    get_y=using_attr(RegexLabeller(r'(.+)_\\d+.jpg$'), 'name'), item_tfms=Resize(460), batch_tfms=aug_transforms(size=224, min_scale=0.75))`,
`dls = pets.dataloaders(path/"images")`, `learn = vision_learner(dls, resnet34, metrics=error_rate)`, `lr_min,lr_steep = learn.lr_find(suggest_funcs=(minimum, steep))`,
`learn.fit_one_cycle(3, 3e-3)`, `learn.unfreeze()`, `learn.fit_one_cycle(6, lr_max=1e-5)`.
Offline: synthetic PETS (8 breeds, 32 px), Resize(40)/aug size 32, pretrained=False, bs=16, 1 epoch each. Healthy."""
from fastai.vision.all import *
import synth

synth.seed_everything()
path = synth.pets()
pets = DataBlock(blocks = (ImageBlock, CategoryBlock),
                 get_items=get_image_files,
                 splitter=RandomSplitter(seed=42),
                 get_y=using_attr(RegexLabeller(r'(.+)_\d+.jpg$'), 'name'),
                 item_tfms=Resize(40),
                 batch_tfms=aug_transforms(size=32, min_scale=0.75))
dls = pets.dataloaders(path/"images", bs=16)
learn = vision_learner(dls, resnet34, metrics=error_rate, pretrained=False)
lr_min,lr_steep = learn.lr_find(suggest_funcs=(minimum, steep))
learn.fit_one_cycle(1, 3e-3)
learn.unfreeze()
learn.fit_one_cycle(1, lr_max=1e-5)
