"""fastai `nbs/examples/camvid.ipynb` (fastai/fastai, cells 3-8): CAMVID with its `valid.txt`, the notebook's `ListSplitter`,
`DataBlock(blocks=(ImageBlock, ImageBlock(cls=PILMask)), get_items=get_image_files, splitter=ListSplitter(valid_fnames),
get_y=lambda o: path/'labels'/f'{o.stem}_P{o.suffix}')`, bs=8, `batch_tfms=[*aug_transforms(size=(360,480)),
Normalize(*imagenet_stats)]`; trained with `unet_learner(dls, resnet34, metrics=...)` and `fit_one_cycle`.
Changed: fastai2 -> fastai (`databunch` -> `dataloaders`, ImageBlock(cls=PILMask) -> MaskBlock(codes), Normalize(*stats) ->
Normalize.from_stats); the notebook's later cells (an old-API unet) are written with unet_learner(dls, resnet34,
metrics=foreground_acc-style acc_camvid), `fit_one_cycle(1, 1e-3)`; untar_data(URLs.CAMVID) -> 40 synthetic street scenes at
180x240 with 8 codes, aug size (360,480) -> (180,240) (CPU time); `pretrained=False`."""
from fastai.vision.all import *
import synth_data

set_seed(0)
path = synth_data.camvid(n=40, size=(180, 240), n_valid=8)
codes = np.loadtxt(path/'codes.txt', dtype=str)
valid_fnames = (path/'valid.txt').read_text().split('\n')

def ListSplitter(valid_items):
    def _inner(items):
        val_mask = tensor([o.name in valid_items for o in items])
        return [~val_mask,val_mask]
    return _inner

camvid = DataBlock(blocks=(ImageBlock, MaskBlock(codes)),
                   get_items=get_image_files,
                   splitter=ListSplitter(valid_fnames),
                   get_y=lambda o: path/'labels'/f'{o.stem}_P{o.suffix}')
dls = camvid.dataloaders(path/"images", bs=8,
                         batch_tfms=[*aug_transforms(size=(180,240)), Normalize.from_stats(*imagenet_stats)])
dls.vocab = codes

name2id = {v:k for k,v in enumerate(codes)}
void_code = name2id['Void']
def acc_camvid(input, target):
    target = target.squeeze(1)
    mask = target != void_code
    return (input.argmax(dim=1)[mask]==target[mask]).float().mean()

learn = unet_learner(dls, resnet34, metrics=acc_camvid, pretrained=False)
learn.fit_one_cycle(1, 1e-3)
