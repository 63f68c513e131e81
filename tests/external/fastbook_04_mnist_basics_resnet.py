"""fastbook clean/04_mnist_basics.ipynb, "Going Deeper" (the last cells):
`dls = ImageDataLoaders.from_folder(path)`,
`learn = vision_learner(dls, resnet18, pretrained=False, loss_func=F.cross_entropy, metrics=accuracy)`, `learn.fit_one_cycle(1, 0.1)`.
Offline: a synthetic MNIST_SAMPLE tree (train/valid x 3/7, 28 px grayscale PNGs), bs=16. Healthy: should raise nothing."""
from fastai.vision.all import *
import synth

synth.seed_everything()
path = synth.image_folders('mnist_sample', ['3', '7'], n_per_class=32, size=28, mode='L')
dls = ImageDataLoaders.from_folder(path, bs=16)
learn = vision_learner(dls, resnet18, pretrained=False, loss_func=F.cross_entropy, metrics=accuracy)
learn.fit_one_cycle(1, 0.1)
