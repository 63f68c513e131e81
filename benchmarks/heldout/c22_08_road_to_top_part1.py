"""course22 `08-first-steps-road-to-the-top-part-1.ipynb` (fastai/course22, clean/, cells 4-19): Paddy Doctor,
`ImageDataLoaders.from_folder(trn_path, valid_pct=0.2, seed=42, item_tfms=Resize(480, method='squish'),
batch_tfms=aug_transforms(size=128, min_scale=0.75))`, `vision_learner(dls, 'resnet26d', metrics=error_rate, path='.').to_fp16()`
(a timm model), `learn.lr_find(suggest_funcs=(valley, slide))`, `learn.fine_tune(3, 0.01)`, then predictions on the test
images with `get_preds(dl=tst_dl, with_decoded=True)`.
Changed: the Kaggle competition data -> 10 synthetic disease folders of 9 images (320x240) and 20 test images;
`pretrained=False`; for CPU time (each lr_find step trains the whole unfrozen resnet26d): Resize(480) -> Resize(256) before
the same aug_transforms(size=128), bs=16 (default 64), lr_find's sweep 30 steps instead of 100 (slide needs over 15
points), fine_tune(1, 0.01) instead of 3 epochs; path=a temporary folder."""
from fastai.vision.all import *
import tempfile
import synth_data

set_seed(42)
classes = ['bacterial_leaf_blight', 'bacterial_leaf_streak', 'bacterial_panicle_blight', 'blast', 'brown_spot',
           'dead_heart', 'downy_mildew', 'hispa', 'normal', 'tungro']
trn_path = synth_data.image_tree('paddy/train_images', classes, n_per_class=9, size=(240, 320), splits=(None,))
tst_path = synth_data.image_tree('paddy/test_images', ['all'], n_per_class=20, size=(240, 320), splits=(None,), seed=1)
files = get_image_files(trn_path)

dls = ImageDataLoaders.from_folder(trn_path, valid_pct=0.2, seed=42, bs=16,
    item_tfms=Resize(256, method='squish'),
    batch_tfms=aug_transforms(size=128, min_scale=0.75))

learn = vision_learner(dls, 'resnet26d', metrics=error_rate, path=tempfile.mkdtemp(), pretrained=False).to_fp16()
learn.lr_find(suggest_funcs=(valley, slide), num_it=30)
learn.fine_tune(1, 0.01)

tst_files = get_image_files(tst_path).sorted()
tst_dl = dls.test_dl(tst_files)
probs,_,idxs = learn.get_preds(dl=tst_dl, with_decoded=True)
mapping = dict(enumerate(dls.vocab))
results = pd.Series(idxs.numpy(), name="idxs").map(mapping)
print(results.value_counts())
