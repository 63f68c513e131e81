"""course22 `02-saving-a-basic-fastai-model.ipynb` (fastai/course22, clean/, cells 2-7): the PETS cat-or-dog model,
`ImageDataLoaders.from_name_func('.', get_image_files(path), valid_pct=0.2, seed=42, label_func=is_cat, item_tfms=Resize(192))`,
`vision_learner(dls, resnet18, metrics=error_rate)`, `learn.fine_tune(3)`, `learn.export('model.pkl')`.
Changed: untar_data(URLs.PETS) -> 100 synthetic pet images (`<Breed>_<n>.png`, cats capitalised); `pretrained=False`;
export to a temporary folder."""
from fastai.vision.all import *
import tempfile
import synth_data

synth_data.seed_everything()
path = synth_data.pets(n_images=100, size=(200, 240))/'images'

def is_cat(x): return x[0].isupper()

dls = ImageDataLoaders.from_name_func('.',
    get_image_files(path), valid_pct=0.2, seed=42,
    label_func=is_cat,
    item_tfms=Resize(192))

learn = vision_learner(dls, resnet18, metrics=error_rate, pretrained=False)
learn.fine_tune(3)

learn.path = Path(tempfile.mkdtemp())
learn.export('model.pkl')
