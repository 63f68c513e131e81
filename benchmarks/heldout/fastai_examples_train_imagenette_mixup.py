"""fastai `nbs/examples/train_imagenette.py` (fastai/fastai): `get_dls` (DataBlock, GrandparentSplitter(valid_name='val'),
RandomResizedCrop(size, min_scale=0.35), FlipItem(0.5), Normalize.from_stats(*imagenet_stats)) and `main` with its defaults
(opt='ranger' as `partial(ranger, mom=0.9, sqr_mom=0.99, eps=1e-6, beta=0.)`, arch xresnet50, act_fn Mish, pool AvgPool,
`Learner(dls, m(n_out=10, act_cls=act_fn, sa=sa, sym=sym, pool=pool), opt_func=opt_func, metrics=[accuracy,top_k_accuracy],
loss_func=LabelSmoothingCrossEntropy())`, `learn.fit_flat_cos(epochs, lr, wd=1e-2, cbs=cbs)`), size 128, lr 1e-2. This one is run as `--arch xresnet18 --opt adam --mixup 0.2 --sh 0.2 --size 160 --fp16 1` (MixUp and RandomErasing).
Changed: the fastscript CLI, distributed and GPU set-up dropped (main called with the defaults); untar_data(IMAGENETTE_320)
-> 10 synthetic classes, 12 training and 4 validation images each at 320x426; epochs=2 instead of 5; bs=32, num_workers=0."""
from fastai.vision.all import *
from fastai.vision.models.xresnet import *
from fastai.callback.mixup import *
import synth_data

IMAGENETTE = ['n01440764', 'n02102040', 'n02979186', 'n03000684', 'n03028079', 'n03394916', 'n03417042', 'n03425413', 'n03445777', 'n03888605']

def get_dls(size, woof, bs, sh=0., workers=None):
    source = synth_data.image_tree('imagenette2-320', IMAGENETTE, n_per_class=12, n_valid=4, size=(320, 426), splits=('train', 'val'))
    if workers is None: workers = min(8, num_cpus())
    batch_tfms = [Normalize.from_stats(*imagenet_stats)]
    if sh: batch_tfms.append(RandomErasing(p=0.3, max_count=3, sh=sh))
    dblock = DataBlock(blocks=(ImageBlock, CategoryBlock),
                       splitter=GrandparentSplitter(valid_name='val'),
                       get_items=get_image_files, get_y=parent_label,
                       item_tfms=[RandomResizedCrop(size, min_scale=0.35), FlipItem(0.5)],
                       batch_tfms=batch_tfms)
    return dblock.dataloaders(source, path=source, bs=bs, num_workers=workers)

def main(woof=0, lr=1e-2, size=128, sqrmom=0.99, mom=0.9, eps=1e-6, epochs=1, bs=32, mixup=0., opt='ranger',
         arch='xresnet50', sh=0., sa=0, sym=0, beta=0., act_fn='Mish', fp16=0, pool='AvgPool', runs=1):
    "Training of Imagenette."
    if   opt=='adam'  : opt_func = partial(Adam, mom=mom, sqr_mom=sqrmom, eps=eps)
    elif opt=='rms'   : opt_func = partial(RMSprop, sqr_mom=sqrmom)
    elif opt=='sgd'   : opt_func = partial(SGD, mom=mom)
    elif opt=='ranger': opt_func = partial(ranger, mom=mom, sqr_mom=sqrmom, eps=eps, beta=beta)

    dls = get_dls(size, woof, bs, sh=sh, workers=0)
    print(f'epochs: {epochs}; lr: {lr}; size: {size}; sqrmom: {sqrmom}; mom: {mom}; eps: {eps}')

    m,act_fn,pool = [globals()[o] for o in (arch,act_fn,pool)]

    for run in range(runs):
        print(f'Run: {run}')
        learn = Learner(dls, m(n_out=10, act_cls=act_fn, sa=sa, sym=sym, pool=pool), opt_func=opt_func, \
                metrics=[accuracy,top_k_accuracy], loss_func=LabelSmoothingCrossEntropy())
        if fp16: learn = learn.to_fp16()
        cbs = MixUp(mixup) if mixup else []
        learn.fit_flat_cos(epochs, lr, wd=1e-2, cbs=cbs)

if __name__ == '__main__':
    set_seed(42)
    main(arch="xresnet18", opt="adam", mixup=0.2, sh=0.2, size=160, epochs=2, fp16=1)
