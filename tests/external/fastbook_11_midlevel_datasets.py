"""fastbook clean/11_midlevel_data.ipynb, "Datasets" (the pets with the mid-level API, as in the book's Datasets cells):
`tfms = [[PILImage.create], [parent_label, Categorize()]]` (here the breed from the file name),
`dsets = Datasets(files, tfms, splits=splits)`,
`dls = dsets.dataloaders(bs=64, after_item=[Resize(224), ToTensor], after_batch=[IntToFloatTensor, Normalize.from_stats(*imagenet_stats)])`,
with the learner of chapter 5: `learn = vision_learner(dls, resnet34, metrics=error_rate)`, `learn.fine_tune(2)`.
Offline: synthetic PETS (32 px), pretrained=False, bs=16, fine_tune(1). Healthy: should raise nothing."""
from fastai.vision.all import *
import synth

synth.seed_everything()
path = synth.pets()
files = get_image_files(path/"images")
splits = RandomSplitter(seed=42)(files)
tfms = [[PILImage.create], [using_attr(RegexLabeller(r'(.+)_\d+.jpg$'), 'name'), Categorize()]]
dsets = Datasets(files, tfms, splits=splits)
dls = dsets.dataloaders(bs=16, after_item=[Resize(32), ToTensor],
                        after_batch=[IntToFloatTensor, Normalize.from_stats(*imagenet_stats)])
learn = vision_learner(dls, resnet34, metrics=error_rate, pretrained=False)
learn.fine_tune(1)
