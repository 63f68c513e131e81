"""course22 `08-first-steps-road-to-the-top-part-1.ipynb` (fastai/course22, clean/, cells 4-19): Paddy Doctor,
`ImageDataLoaders.from_folder(trn_path, valid_pct=0.2, seed=42, item_tfms=Resize(480, method='squish'),
batch_tfms=aug_transforms(size=128, min_scale=0.75))`, `vision_learner(dls, 'resnet26d', metrics=error_rate, path='.').to_fp16()`
(a timm model), `learn.lr_find(suggest_funcs=(valley, slide), num_it=10)`, `learn.fine_tune(3, 0.01)`, then predictions on the test
images with `get_preds(dl=tst_dl, with_decoded=True)`.
Changed: the Kaggle competition data -> 10 synthetic disease folders of 9 images (640x480, as Paddy's) and 20 test images;
`pretrained=False`; fine_tune(1, 0.01) instead of 3 epochs and lr_find's sweep
10 steps instead of 100 (CPU time: each step trains the whole unfrozen resnet26d on 64 images); path=a temporary folder."""
from fastai.vision.all import *
import tempfile
import synth_data

set_seed(42)
classes = ['bacterial_leaf_blight', 'bacterial_leaf_streak', 'bacterial_panicle_blight', 'blast', 'brown_spot',
           'dead_heart', 'downy_mildew', 'hispa', 'normal', 'tungro']
trn_path = synth_data.image_tree('paddy/train_images', classes, n_per_class=9, size=(480, 640), splits=(None,))
tst_path = synth_data.image_tree('paddy/test_images', ['all'], n_per_class=20, size=(480, 640), splits=(None,), seed=1)
files = get_image_files(trn_path)

dls = ImageDataLoaders.from_folder(trn_path, valid_pct=0.2, seed=42,
    item_tfms=Resize(480, method='squish'),
    batch_tfms=aug_transforms(size=128, min_scale=0.75))

learn = vision_learner(dls, 'resnet26d', metrics=error_rate, path=tempfile.mkdtemp(), pretrained=False).to_fp16()
learn.lr_find(suggest_funcs=(valley, slide), num_it=10)
learn.fine_tune(1, 0.01)

tst_files = get_image_files(tst_path).sorted()
tst_dl = dls.test_dl(tst_files)
probs,_,idxs = learn.get_preds(dl=tst_dl, with_decoded=True)
mapping = dict(enumerate(dls.vocab))
results = pd.Series(idxs.numpy(), name="idxs").map(mapping)
print(results.value_counts())
