"""course22 `10-scaling-up-road-to-the-top-part-3.ipynb` (fastai/course22, clean/, cells 5-9): the `train` function with
gradient accumulation, `ImageDataLoaders.from_folder(trn_path, valid_pct=0.2, item_tfms=item, batch_tfms=aug_transforms(size=size,
min_scale=0.75), bs=64//accum)`, `cbs = GradientAccumulation(64) if accum else []`,
`vision_learner(dls, arch, metrics=error_rate, cbs=cbs).to_fp16()`, and with finetune=False `learn.unfreeze()`,
`learn.fit_one_cycle(epochs, 0.01)`; called as `train('convnext_small_in22k', 128, epochs=1, accum=2, finetune=False)`.
Changed: Paddy's train_images/bacterial_panicle_blight -> 10 synthetic classes of 8 images (480x360, resized to 480 squish as
in the recipe); `pretrained=False`; the call uses convnext_tiny_in22k (the notebook's smaller sibling) to keep the CPU time in
bounds; report_gpu (CUDA only) dropped."""
from fastai.vision.all import *
import synth_data

set_seed(42)
classes = ['bacterial_leaf_blight', 'bacterial_leaf_streak', 'bacterial_panicle_blight', 'blast', 'brown_spot',
           'dead_heart', 'downy_mildew', 'hispa', 'normal', 'tungro']
trn_path = synth_data.image_tree('paddy/train_images', classes, n_per_class=8, size=(360, 480), splits=(None,))
tst_files = get_image_files(synth_data.image_tree('paddy/test_images', ['all'], n_per_class=8, size=(360, 480), splits=(None,), seed=1)).sorted()

def train(arch, size, item=Resize(480, method='squish'), accum=1, finetune=True, epochs=12):
    dls = ImageDataLoaders.from_folder(trn_path, valid_pct=0.2, item_tfms=item,
        batch_tfms=aug_transforms(size=size, min_scale=0.75), bs=64//accum)
    cbs = GradientAccumulation(64) if accum else []
    learn = vision_learner(dls, arch, metrics=error_rate, cbs=cbs, pretrained=False).to_fp16()
    if finetune:
        learn.fine_tune(epochs, 0.01)
        return learn.tta(dl=dls.test_dl(tst_files))
    else:
        learn.unfreeze()
        learn.fit_one_cycle(epochs, 0.01)

train('convnext_tiny_in22k', 128, epochs=1, accum=2, finetune=False)
