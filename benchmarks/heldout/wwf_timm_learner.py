"""walkwithfastai `02_vision.external.timm.ipynb` (muellerzr/walkwithfastai, cells 7-35): PETS at 224 px with bs=16, and the
notebook's own `create_timm_body` / `create_timm_model` / `timm_learner` (timm's `create_model(arch, pretrained=pretrained,
num_classes=0, global_pool='')`, cut at the last pooling layer, fastai's `create_head(nf, n_out)`, `Learner(dls, model,
loss_func=loss_func, splitter=default_split)`), `learn = timm_learner(dls, 'efficientnet_b3a')`.
Changed: untar_data(URLs.PETS) -> 60 synthetic pet images (10 breeds, 300x400); `pretrained=False`; RandomResizedCrop 460
-> 256; `metrics=error_rate` and `learn.fit_one_cycle(1, 3e-3)` added (the notebook stops after building the Learner and
counting its parameters); `cut` passed through (the notebook passes default_split as cut, a slip that only works because
create_timm_body ignores it); in create_timm_model, `nf = num_features_model(...) * (2 if concat_pool else 1)` ->
`nf = num_features_model(...)` (fastai 2.0's `create_head` took the doubled width, as the notebook says, "we'll multiply
this by two since we have two pooling layers"; today's `create_head` doubles `nf` itself when `concat_pool`, so the
notebook's doubling made a head for 6144 inputs where the concat pool gives 2 x 1536 = 3072: "running_mean should contain
3072 elements not 6144")."""
from fastai.vision.all import *
from timm import create_model
from fastai.vision.learner import _update_first_layer
import synth_data

set_seed(2)
path = synth_data.pets(n_images=60, size=(300, 400), n_breeds=10)
pat = r'/([^/]+)_\d+.*'
item_tfms = RandomResizedCrop(256, min_scale=0.75, ratio=(1.,1.))
batch_tfms = [*aug_transforms(size=224, max_warp=0), Normalize.from_stats(*imagenet_stats)]
bs=16
pets = DataBlock(blocks=(ImageBlock, CategoryBlock),
                 get_items=get_image_files,
                 splitter=RandomSplitter(0.2),
                 get_y=RegexLabeller(pat = pat),
                 item_tfms=item_tfms,
                 batch_tfms=batch_tfms)
dls = pets.dataloaders(path/'images', bs=bs)

def create_timm_body(arch:str, pretrained=True, cut=None, n_in=3):
    "Creates a body from any model in the `timm` library."
    model = create_model(arch, pretrained=pretrained, num_classes=0, global_pool='')
    _update_first_layer(model, n_in, pretrained)
    if cut is None:
        ll = list(enumerate(model.children()))
        cut = next(i for i,o in reversed(ll) if has_pool_type(o))
    if isinstance(cut, int): return nn.Sequential(*list(model.children())[:cut])
    elif callable(cut): return cut(model)
    else: raise NamedError("cut must be either integer or function")

def create_timm_model(arch:str, n_out, cut=None, pretrained=True, n_in=3, init=nn.init.kaiming_normal_, custom_head=None,
                     concat_pool=True, **kwargs):
    "Create custom architecture using `arch`, `n_in` and `n_out` from the `timm` library"
    body = create_timm_body(arch, pretrained, None, n_in)
    if custom_head is None:
        nf = num_features_model(nn.Sequential(*body.children())) # create_head doubles it for concat_pool
        head = create_head(nf, n_out, concat_pool=concat_pool, **kwargs)
    else: head = custom_head
    model = nn.Sequential(body, head)
    if init is not None: apply_init(model[1], init)
    return model

def timm_learner(dls, arch:str, loss_func=None, pretrained=True, cut=None, splitter=None,
                y_range=None, config=None, n_out=None, normalize=True, **kwargs):
    "Build a convnet style learner from `dls` and `arch` using the `timm` library"
    if config is None: config = {}
    if n_out is None: n_out = get_c(dls)
    assert n_out, "`n_out` is not defined, and could not be inferred from data, set `dls.c` or pass `n_out`"
    if y_range is None and 'y_range' in config: y_range = config.pop('y_range')
    model = create_timm_model(arch, n_out, cut, pretrained, y_range=y_range, **config)
    learn = Learner(dls, model, loss_func=loss_func, splitter=default_split, **kwargs)
    if pretrained: learn.freeze()
    return learn

learn = timm_learner(dls, 'efficientnet_b3a', pretrained=False, metrics=error_rate)
unfrozen_params = filter(lambda p: not p.requires_grad, learn.model.parameters())
unfrozen_params = sum([np.prod(p.size()) for p in unfrozen_params])
model_parameters = filter(lambda p: p.requires_grad, learn.model.parameters())
frozen_params = sum([np.prod(p.size()) for p in model_parameters])
print(unfrozen_params, frozen_params)
learn.fit_one_cycle(1, 3e-3)
