"""fastbook clean/13_convolutions.ipynb, "A Simple Baseline", "Increase Batch Size", "Batch Normalization":
`def get_dls(bs=64): return DataBlock(blocks=(ImageBlock(cls=PILImageBW), CategoryBlock), get_items=get_image_files,
    splitter=GrandparentSplitter('training','testing'), get_y=parent_label, batch_tfms=Normalize()).dataloaders(path, bs=bs)`,
`def conv(ni, nf, ks=3, act=True): layers = [nn.Conv2d(ni, nf, stride=2, kernel_size=ks, padding=ks//2)]; layers.append(nn.BatchNorm2d(nf)); if act: layers.append(nn.ReLU()); return nn.Sequential(*layers)`,
`def simple_cnn(): return sequential(conv(1 ,8, ks=5), conv(8 ,16), conv(16,32), conv(32,64), conv(64,10, act=False), Flatten())`,
`def fit(epochs=1, lr=0.06): learn = Learner(dls, simple_cnn(), loss_func=F.cross_entropy, metrics=accuracy, cbs=ActivationStats(with_hist=True)); learn.fit_one_cycle(epochs, lr); return learn`,
`learn = fit(5, lr=0.1)`.
Offline: a synthetic MNIST tree (training/testing x 10 digits, 28 px grayscale), bs=32, fit(1, lr=0.1). Healthy."""
from fastai.vision.all import *
from fastai.callback.hook import *
import synth

synth.seed_everything()
path = synth.image_folders('mnist_png', [str(i) for i in range(10)], n_per_class=12, size=28, mode='L', splits=('training', 'testing'))
def get_dls(bs=64):
    return DataBlock(
        blocks=(ImageBlock(cls=PILImageBW), CategoryBlock),
        get_items=get_image_files,
        splitter=GrandparentSplitter('training','testing'),
        get_y=parent_label,
        batch_tfms=Normalize()
    ).dataloaders(path, bs=bs)
dls = get_dls(32)
def conv(ni, nf, ks=3, act=True):
    layers = [nn.Conv2d(ni, nf, stride=2, kernel_size=ks, padding=ks//2)]
    layers.append(nn.BatchNorm2d(nf))
    if act: layers.append(nn.ReLU())
    return nn.Sequential(*layers)
def simple_cnn():
    return sequential(
        conv(1 ,8, ks=5),        #14x14
        conv(8 ,16),             #7x7
        conv(16,32),             #4x4
        conv(32,64),             #2x2
        conv(64,10, act=False),  #1x1
        Flatten(),
    )
def fit(epochs=1, lr=0.06):
    learn = Learner(dls, simple_cnn(), loss_func=F.cross_entropy,
                    metrics=accuracy, cbs=ActivationStats(with_hist=True))
    learn.fit_one_cycle(epochs, lr)
    return learn
learn = fit(1, lr=0.1)
