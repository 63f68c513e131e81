"""fastai `nbs/examples/mnist_blocks.py` (fastai/fastai): `DataBlock(blocks=(ImageBlock(PILImageBW), CategoryBlock),
get_items=get_image_files, splitter=GrandparentSplitter(train_name='training', valid_name='testing'), get_y=parent_label)`,
`mnist.dataloaders(untar_data(URLs.MNIST), bs=256)`, `cnn_learner(data, resnet18)`, `learn.fit_one_cycle(1, 1e-2)`.
Changed: fastai2 -> fastai imports; URLs.MNIST -> synthetic 28x28 greyscale digits, 40 training and 10 testing per class;
`pretrained=False`, and `n_in=1` (today's fastai builds a 3-channel stem by default: the script as written fails on
1-channel PILImageBW input)."""
from fastai.vision.all import *
import synth_data

splitter = GrandparentSplitter(train_name='training', valid_name='testing')
mnist = DataBlock(blocks=(ImageBlock(PILImageBW), CategoryBlock),
                  get_items=get_image_files, splitter=splitter, get_y=parent_label)

if __name__ == '__main__':
    set_seed(0)
    path = synth_data.image_tree('mnist_png', [str(i) for i in range(10)], n_per_class=40, n_valid=10, size=28,
                                 splits=('training', 'testing'), mode='L')
    data = mnist.dataloaders(path, bs=256)
    learn = cnn_learner(data, resnet18, pretrained=False, n_in=1)
    learn.fit_one_cycle(1, 1e-2)
