"""fastbook clean/01_intro.ipynb, the CAMVID_TINY segmentation cells:
`dls = SegmentationDataLoaders.from_label_func(path, bs=8, fnames=get_image_files(path/"images"),
    label_func=lambda o: path/'labels'/f'{o.stem}_P{o.suffix}', codes=np.loadtxt(path/'codes.txt', dtype=str))`,
`learn = unet_learner(dls, resnet34)`, `learn.fine_tune(8)`.
Offline: synthetic 64x96 street scenes with their masks, pretrained=False, fine_tune(1). Healthy: should raise nothing."""
from fastai.vision.all import *
import synth

synth.seed_everything()
path = synth.camvid(size=(64, 96))
dls = SegmentationDataLoaders.from_label_func(
    path, bs=8, fnames=get_image_files(path/"images"),
    label_func=lambda o: path/'labels'/f'{o.stem}_P{o.suffix}',
    codes=np.loadtxt(path/'codes.txt', dtype=str))
learn = unet_learner(dls, resnet34, pretrained=False)
learn.fine_tune(1)
