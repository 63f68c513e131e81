"""fastai `nbs/50_tutorial.datablock.ipynb` (docs "The DataBlock API"), section "Multi-label classification" on PLANET_TINY:
`planet = DataBlock(blocks=(ImageBlock, MultiCategoryBlock), get_x=ColReader(0, pref=f'{path}/train/', suff='.jpg'),
get_y=ColReader(1, label_delim=' '), splitter=RandomSplitter(), batch_tfms=aug_transforms(flip_vert=True, max_warp=0.))`,
`planet.dataloaders(df)`; trained as the tutorial.vision multi-label recipe does, `vision_learner(dls, resnet34,
metrics=partial(accuracy_multi, thresh=0.5))`, `learn.fine_tune(1)`.
Changed: untar_data(URLs.PLANET_TINY) -> 200 synthetic 128x128 images (the tiny set's size; suffix '.png') with
space-separated tags in labels.csv; `pretrained=False`; the Learner lines are added (the DataBlock tutorial only builds
the DataLoaders)."""
from fastai.vision.all import *
import synth_data

set_seed(0)
path = synth_data.multilabel(n=200, size=(128, 128), folder='train', labels=('agriculture', 'clear', 'cloudy', 'haze', 'primary', 'road', 'water'))
df = pd.read_csv(path/'train.csv')[['fname', 'labels']]
df['fname'] = df.fname.str.replace('.png', '')
planet = DataBlock(blocks=(ImageBlock, MultiCategoryBlock),
                   get_x=ColReader(0, pref=f'{path}/train/', suff='.png'),
                   get_y=ColReader(1, label_delim=' '),
                   splitter=RandomSplitter(),
                   batch_tfms=aug_transforms(flip_vert=True, max_warp=0.))
dls = planet.dataloaders(df)
learn = vision_learner(dls, resnet34, metrics=partial(accuracy_multi, thresh=0.5), pretrained=False)
learn.fine_tune(1)
