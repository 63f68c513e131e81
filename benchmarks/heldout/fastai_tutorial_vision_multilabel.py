"""fastai `nbs/23_tutorial.vision.ipynb` (docs "Computer vision intro"), section "Multi-label classification" on PASCAL_2007:
`ImageDataLoaders.from_df(df, path, folder='train', valid_col='is_valid', label_delim=' ', item_tfms=Resize(460),
batch_tfms=aug_transforms(size=224))`, `vision_learner(dls, resnet50, metrics=partial(accuracy_multi, thresh=0.5))`,
`learn.fine_tune(2, 3e-2)`, then `learn.predict` on one image.
Changed: untar_data(URLs.PASCAL_2007) -> 90 synthetic images (6 labels, 1-3 discs each, 240x320) and train.csv; `pretrained=False`;
Resize(460) -> Resize(256) (CPU time); fine_tune(1, 3e-2) instead of 2 epochs."""
from fastai.vision.all import *
import synth_data

set_seed(0)
path = synth_data.multilabel(n=90, size=(240, 320))
df = pd.read_csv(path/'train.csv')
dls = ImageDataLoaders.from_df(df, path, folder='train', valid_col='is_valid', label_delim=' ',
                               item_tfms=Resize(256), batch_tfms=aug_transforms(size=224))
learn = vision_learner(dls, resnet50, metrics=partial(accuracy_multi, thresh=0.5), pretrained=False)
learn.fine_tune(1, 3e-2)
print(learn.predict(path/'train'/df.fname[0]))
