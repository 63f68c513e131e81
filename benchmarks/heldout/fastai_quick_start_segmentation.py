"""fastai `nbs/quick_start.ipynb` (docs "Quick start"), the segmentation example on CAMVID_TINY:
`SegmentationDataLoaders.from_label_func(path, bs=8, fnames = get_image_files(path/"images"),
label_func = lambda o: path/'labels'/f'{o.stem}_P{o.suffix}', codes = np.loadtxt(path/'codes.txt', dtype=str))`,
`learn = unet_learner(dls, resnet34)`, `learn.fine_tune(8)`, `learn.show_results` skipped (display).
Changed: untar_data(URLs.CAMVID_TINY) -> 40 synthetic scenes at CAMVID_TINY's 96x128; `pretrained=False`; fine_tune(2)
instead of 8 epochs."""
from fastai.vision.all import *
import synth_data

set_seed(0)
path = synth_data.camvid(n=40, size=(96, 128))
dls = SegmentationDataLoaders.from_label_func(
    path, bs=8, fnames = get_image_files(path/"images"),
    label_func = lambda o: path/'labels'/f'{o.stem}_P{o.suffix}',
    codes = np.loadtxt(path/'codes.txt', dtype=str)
)
learn = unet_learner(dls, resnet34, pretrained=False)
learn.fine_tune(2)
