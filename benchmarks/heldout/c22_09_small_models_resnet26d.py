"""course22 `09-small-models-road-to-the-top-part-2.ipynb` (fastai/course22, clean/, cells 5-7): the `train` function,
`ImageDataLoaders.from_folder(trn_path, seed=42, valid_pct=0.2, item_tfms=item, batch_tfms=batch)`,
`vision_learner(dls, arch, metrics=error_rate).to_fp16()`, `learn.fine_tune(epochs, 0.01)`, called as
`train('resnet26d', item=Resize(192), batch=aug_transforms(size=128, min_scale=0.75))`.
Changed: the resized Paddy images (`sml`, max_size=256) -> 10 synthetic classes of 9 images at 256x192; `pretrained=False`;
epochs=1 instead of 5."""
from fastai.vision.all import *
import synth_data

set_seed(42)
classes = ['bacterial_leaf_blight', 'bacterial_leaf_streak', 'bacterial_panicle_blight', 'blast', 'brown_spot',
           'dead_heart', 'downy_mildew', 'hispa', 'normal', 'tungro']
trn_path = synth_data.image_tree('sml', classes, n_per_class=9, size=(256, 192), splits=(None,))

def train(arch, item, batch, epochs=5):
    dls = ImageDataLoaders.from_folder(trn_path, seed=42, valid_pct=0.2, item_tfms=item, batch_tfms=batch)
    learn = vision_learner(dls, arch, metrics=error_rate, pretrained=False).to_fp16()
    learn.fine_tune(epochs, 0.01)
    return learn

learn = train('resnet26d', item=Resize(192),
              batch=aug_transforms(size=128, min_scale=0.75), epochs=1)
