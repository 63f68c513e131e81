"""fastai `nbs/examples/mnist_items.py` (fastai/fastai): the mid-level API, `Datasets(items, [PILImageBW.create, [parent_label,
Categorize()]], splits=GrandparentSplitter(train_name='training', valid_name='testing')(items))`,
`tds.dataloaders(bs=256, after_item=[ToTensor(), IntToFloatTensor()])`, `cnn_learner(data, resnet18)`, `learn.fit_one_cycle(1, 1e-2)`.
Changed: fastai2 -> fastai imports; `.cuda()` dropped (CPU); URLs.MNIST -> synthetic 28x28 digits (40 training, 10 testing
per class); `pretrained=False`, and `n_in=1` (today's fastai builds a 3-channel stem by default: the script as written fails on
1-channel PILImageBW input)."""
from fastai.vision.all import *
import synth_data

set_seed(0)
items = get_image_files(synth_data.image_tree('mnist_png', [str(i) for i in range(10)], n_per_class=40, n_valid=10, size=28,
                                              splits=('training', 'testing'), mode='L'))
splits = GrandparentSplitter(train_name='training', valid_name='testing')(items)
tds = Datasets(items, [PILImageBW.create, [parent_label, Categorize()]], splits=splits)

if __name__ == '__main__':
    data = tds.dataloaders(bs=256, after_item=[ToTensor(), IntToFloatTensor()])
    learn = cnn_learner(data, resnet18, pretrained=False, n_in=1)
    learn.fit_one_cycle(1, 1e-2)
