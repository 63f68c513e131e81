"""fastbook clean/06_multicat.ipynb, "Regression" (BIWI_HEAD_POSE, key points):
`biwi = DataBlock(blocks=(ImageBlock, PointBlock), get_items=get_image_files, get_y=get_ctr,
    splitter=FuncSplitter(lambda o: o.parent.name=='13'), batch_tfms=[*aug_transforms(size=(240,320)), Normalize.from_stats(*imagenet_stats)])`,
`learn = vision_learner(dls, resnet18, y_range=(-1,1))`, `learn.lr_find()`, `lr = 1e-2`, `learn.fine_tune(3, lr)`.
Offline: synthetic 48x64 frames with a bright "head" and its centre in frame_<n>_pose.txt (the book reads the centre from
the pose file and a calibration matrix; here get_ctr reads it directly); person '04' is the validation set; pretrained=False,
fine_tune(1, lr). Healthy (MSELossFlat on points in [-1, 1]): should raise nothing."""
from fastai.vision.all import *
import synth

synth.seed_everything()
path = synth.biwi()
img2pose = lambda x: x.parent/f'{str(x.stem)[:-3]}pose.txt'
def get_ctr(f):
    cx, cy = np.genfromtxt(img2pose(f))
    return tensor([cx, cy])
biwi = DataBlock(
    blocks=(ImageBlock, PointBlock),
    get_items=get_image_files,
    get_y=get_ctr,
    splitter=FuncSplitter(lambda o: o.parent.name=='04'),
    batch_tfms=[*aug_transforms(size=(48,64)), Normalize.from_stats(*imagenet_stats)]
)
dls = biwi.dataloaders(path, bs=8)
learn = vision_learner(dls, resnet18, y_range=(-1,1), pretrained=False)
learn.lr_find()
lr = 1e-2
learn.fine_tune(1, lr)
