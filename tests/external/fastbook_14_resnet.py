"""fastbook clean/14_resnet.ipynb, "Going Back to Imagenette", "Building a Modern CNN: ResNet":
`def get_data(url, presize, resize): path = untar_data(url); return DataBlock(blocks=(ImageBlock, CategoryBlock), get_items=get_image_files,
    splitter=GrandparentSplitter(valid_name='val'), get_y=parent_label, item_tfms=Resize(presize), batch_tfms=[*aug_transforms(min_scale=0.5, size=resize),
    Normalize.from_stats(*imagenet_stats)]).dataloaders(path, bs=128)`,
`def _conv_block(ni,nf,stride): return nn.Sequential(ConvLayer(ni, nf, stride=stride), ConvLayer(nf, nf, act_cls=None, norm_type=NormType.BatchZero))`,
`class ResBlock(Module): ... def forward(self, x): return F.relu(self.convs(x) + self.idconv(self.pool(x)))`,
`def _resnet_stem(*sizes)`, `class ResNet(nn.Sequential)`, `rn = ResNet(dls.c, [2,2,2,2])`,
`learn = Learner(dls, rn, loss_func=nn.CrossEntropyLoss(), metrics=accuracy).to_fp16()`, `learn.fit_one_cycle(5, 3e-3)`.
Offline: synthetic IMAGENETTE (32 px, resize 32), bs=16, no to_fp16 (CPU), fit_one_cycle(1, 3e-3). Healthy."""
from fastai.vision.all import *
import synth

synth.seed_everything()
synth.image_folders('imagenette2-160', ['n01440764', 'n02102040', 'n02979186', 'n03000684'], n_per_class=16,
                    size=32, splits=('train', 'val'), ext='JPEG')
def get_data(name, presize, resize):
    path = synth.ROOT / name
    return DataBlock(
        blocks=(ImageBlock, CategoryBlock), get_items=get_image_files,
        splitter=GrandparentSplitter(valid_name='val'),
        get_y=parent_label, item_tfms=Resize(presize),
        batch_tfms=[*aug_transforms(min_scale=0.5, size=resize),
                    Normalize.from_stats(*imagenet_stats)],
    ).dataloaders(path, bs=16)
dls = get_data('imagenette2-160', 32, 32)
def _conv_block(ni,nf,stride):
    return nn.Sequential(
        ConvLayer(ni, nf, stride=stride),
        ConvLayer(nf, nf, act_cls=None, norm_type=NormType.BatchZero))
class ResBlock(Module):
    def __init__(self, ni, nf, stride=1):
        self.convs = _conv_block(ni,nf,stride)
        self.idconv = noop if ni==nf else ConvLayer(ni, nf, 1, act_cls=None)
        self.pool = noop if stride==1 else nn.AvgPool2d(2, ceil_mode=True)
    def forward(self, x):
        return F.relu(self.convs(x) + self.idconv(self.pool(x)))
def _resnet_stem(*sizes):
    return [
        ConvLayer(sizes[i], sizes[i+1], 3, stride = 2 if i==0 else 1)
            for i in range(len(sizes)-1)
    ] + [nn.MaxPool2d(kernel_size=3, stride=2, padding=1)]
class ResNet(nn.Sequential):
    def __init__(self, n_out, layers, expansion=1):
        stem = _resnet_stem(3,32,32,64)
        self.block_szs = [64, 64, 128, 256, 512]
        for i in range(1,5): self.block_szs[i] *= expansion
        blocks = [self._make_layer(*o) for o in enumerate(layers)]
        super().__init__(*stem, *blocks,
                         nn.AdaptiveAvgPool2d(1), Flatten(),
                         nn.Linear(self.block_szs[-1], n_out))
    def _make_layer(self, idx, n_layers):
        stride = 1 if idx==0 else 2
        ch_in,ch_out = self.block_szs[idx:idx+2]
        return nn.Sequential(*[
            ResBlock(ch_in if i==0 else ch_out, ch_out, stride if i==0 else 1)
            for i in range(n_layers)
        ])
rn = ResNet(dls.c, [2,2,2,2])
learn = Learner(dls, rn, loss_func=nn.CrossEntropyLoss(), metrics=accuracy)
learn.fit_one_cycle(1, 3e-3)
