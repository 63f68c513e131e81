"""fastbook clean/11_midlevel_data.ipynb, "Applying the Mid-Level Data API: SiamesePair", with the model of
clean/15_arch_details.ipynb, "A Siamese Network":
`class SiameseImage(fastuple)`, `class SiameseTransform(Transform)` (pairs an image with one of the same class or another, label True/False),
`splits = RandomSplitter()(files)`, `tfm = SiameseTransform(files, label_func, splits)`, `tls = TfmdLists(files, tfm, splits=splits)`,
`dls = tls.dataloaders(after_item=[Resize(224), ToTensor], after_batch=[IntToFloatTensor, Normalize.from_stats(*imagenet_stats)])`,
`class SiameseModel(Module): def forward(self, x1, x2): ftrs = torch.cat([self.encoder(x1), self.encoder(x2)], dim=1); return self.head(ftrs)`,
`encoder = create_body(resnet34(), cut=-2)`, `head = create_head(512*2, 2, ps=0.5)`, `model = SiameseModel(encoder, head)`,
`def loss_func(out, targ): return nn.CrossEntropyLoss()(out, targ.long())`,
`def siamese_splitter(model): return [params(model.encoder), params(model.head)]`,
`learn = Learner(dls, model, loss_func=loss_func, splitter=siamese_splitter, metrics=accuracy)`, `learn.freeze()`, `learn.fit_one_cycle(4, 3e-3)`.
Offline: synthetic PETS (32 px), resnet34 without weights, Resize(32), bs=16, fit_one_cycle(1, 3e-3). Healthy."""
from fastai.vision.all import *
import synth

synth.seed_everything()
path = synth.pets()
files = get_image_files(path/"images")
class SiameseImage(fastuple):
    def show(self, ctx=None, **kwargs): return None
def label_func(fname):
    return re.match(r'^(.*)_\d+.jpg$', fname.name).groups()[0]
class SiameseTransform(Transform):
    def __init__(self, files, label_func, splits):
        self.labels = files.map(label_func).unique()
        self.lbl2files = {l: L(f for f in files if label_func(f) == l) for l in self.labels}
        self.label_func = label_func
        self.valid = {f: self._draw(f) for f in files[splits[1]]}
    def encodes(self, f):
        f2,t = self.valid.get(f, self._draw(f))
        img1,img2 = PILImage.create(f),PILImage.create(f2)
        return SiameseImage(img1, img2, t)
    def _draw(self, f):
        same = random.random() < 0.5
        cls = self.label_func(f)
        if not same: cls = random.choice(L(l for l in self.labels if l != cls))
        return random.choice(self.lbl2files[cls]),same
splits = RandomSplitter()(files)
tfm = SiameseTransform(files, label_func, splits)
tls = TfmdLists(files, tfm, splits=splits)
dls = tls.dataloaders(after_item=[Resize(32), ToTensor],
    after_batch=[IntToFloatTensor, Normalize.from_stats(*imagenet_stats)], bs=16)
class SiameseModel(Module):
    def __init__(self, encoder, head):
        self.encoder,self.head = encoder,head
    def forward(self, x1, x2):
        ftrs = torch.cat([self.encoder(x1), self.encoder(x2)], dim=1)
        return self.head(ftrs)
encoder = create_body(resnet34(), cut=-2)
head = create_head(512*2, 2, ps=0.5)
model = SiameseModel(encoder, head)
def loss_func(out, targ):
    return nn.CrossEntropyLoss()(out, targ.long())
def siamese_splitter(model):
    return [params(model.encoder), params(model.head)]
learn = Learner(dls, model, loss_func=loss_func, splitter=siamese_splitter, metrics=accuracy)
learn.freeze()
learn.fit_one_cycle(1, 3e-3)
