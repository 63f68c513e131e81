"""Healthy pipelines for the mutation benchmark (issue 38): small fastai scripts across fastai's applications, each one
`Pipeline` whose `text` is a complete script that `python` and `fastai-paranoid check` run as they are (beside `mdata.py`).

Every script follows one layout, so that an operator of `operators.py` can find the place it rewrites:
- `SEED = run_seed()`, then the constants `EPOCHS, LR, BS` and `CBS = []` (the callbacks passed to the fit);
- the data: `df, test = <frame>()` (a plain PyTorch pipeline: `x, y, x_test, y_test = xor_tensors()`), the label column `Y`,
  then the line `# @data` (where data operators insert their code);
- the DataLoaders and the Learner (`learn = ...`), then `# @learner` (where weight and optimiser operators insert code);
- the fit, `learn.fit_one_cycle(EPOCHS, LR, cbs=CBS)` (or `fit`/`fine_tune`), then `# @after` and `finish(learn, test, ...)`,
  which scores the Learner on the held-out test set (mdata.py).

Each is tiny (a few hundred items, two or three epochs, models of a few thousand to a few hundred thousand weights) so
that a fit takes seconds on one core. Adding a pipeline is one function decorated with `@pipeline`."""
from dataclasses import dataclass, field
from textwrap import dedent

@dataclass
class Pipeline:
    name: str # unique
    app: str # fastai's application: 'vision', 'segmentation', 'multilabel', 'points', 'tabular', 'collab', 'text', 'lm', 'torch'
    kind: str # how `finish` scores it, and which label operators fit: 'single', 'multi', 'regression', 'points', 'seg', 'collab', 'lm', 'torch_class', 'torch_reg'
    text: str # the script
    tags: set = field(default_factory=set) # what it holds that operators look for ('inline_model', 'batchnorm', 'dropout', ...)

PIPELINES = {}

def pipeline(app, kind, *tags):
    "Register the script that the decorated function returns as a Pipeline named after the function"
    def register(fn):
        PIPELINES[fn.__name__] = Pipeline(fn.__name__, app, kind, dedent(fn()).lstrip(), set(tags))
        return fn
    return register

HEAD = "from mdata import *\n\nSEED = run_seed()\n"

def cnn(c_in:int, n_out:str='N_OUT', bn=False, tail='', pool=2) -> str:
    "The text of a small CNN (two conv blocks, global pooling, a linear head) as an inline nn.Sequential"
    norm1 = ' nn.BatchNorm2d(16),' if bn else ''
    norm2 = ' nn.BatchNorm2d(32),' if bn else ''
    return (f"nn.Sequential(\n    nn.Conv2d({c_in}, 16, 3, padding=1),{norm1} nn.ReLU(), nn.MaxPool2d(2),\n"
            f"    nn.Conv2d(16, 32, 3, padding=1),{norm2} nn.ReLU(), nn.AdaptiveAvgPool2d({pool}), nn.Flatten(),\n"
            f"    nn.Linear({32 * pool * pool}, 32), nn.ReLU(), nn.Linear(32, {n_out}){tail})")

# ------------------------------------------------------------------------------------------------------------ vision
@pipeline('vision', 'single', 'inline_model', 'datablock', 'normalize', 'ce', 'int_labels')
def digits_cnn():
    return HEAD + f"""
EPOCHS, LR, BS = 3, 1e-2, 32
CBS = []
df, test = digits_frames()
Y = 'label'
# @data
dblock = DataBlock(blocks=(ImageBlock(cls=PILImageBW), CategoryBlock), get_x=get_bw, get_y=ColReader(Y),
                   splitter=RandomSplitter(valid_pct=0.2, seed=42), batch_tfms=[Normalize()])
dls = dblock.dataloaders(df, bs=BS)
N_OUT = len(dls.vocab)
model = {cnn(1)}
learn = Learner(dls, model, loss_func=CrossEntropyLossFlat(), metrics=accuracy)
# @learner
learn.fit_one_cycle(EPOCHS, LR, cbs=CBS)
# @after
finish(learn, test, 'single', Y)
"""

@pipeline('vision', 'single', 'inline_model', 'datablock', 'batchnorm', 'ce', 'int_labels')
def digits_cnn_bn():
    return HEAD + f"""
EPOCHS, LR, BS = 2, 3e-3, 32
CBS = []
df, test = digits_frames()
Y = 'label'
# @data
dblock = DataBlock(blocks=(ImageBlock(cls=PILImageBW), CategoryBlock), get_x=get_bw, get_y=ColReader(Y),
                   splitter=RandomSplitter(valid_pct=0.2, seed=42), batch_tfms=[Normalize()])
dls = dblock.dataloaders(df, bs=BS)
N_OUT = len(dls.vocab)
model = {cnn(1, bn=True)}
learn = Learner(dls, model, loss_func=CrossEntropyLossFlat(), opt_func=Adam, metrics=accuracy)
# @learner
learn.fit(EPOCHS, LR, cbs=CBS)
# @after
finish(learn, test, 'single', Y)
"""

@pipeline('vision', 'single', 'inline_model', 'datablock', 'normalize', 'ce', 'resize')
def stripes_cnn():
    return HEAD + f"""
EPOCHS, LR, BS = 3, 1e-2, 32
CBS = []
df, test = stripes_frames()
Y = 'label'
# @data
dblock = DataBlock(blocks=(ImageBlock, CategoryBlock), get_x=get_rgb, get_y=ColReader(Y),
                   splitter=RandomSplitter(valid_pct=0.2, seed=42), item_tfms=Resize(16), batch_tfms=[Normalize()])
dls = dblock.dataloaders(df, bs=BS)
N_OUT = len(dls.vocab)
model = {cnn(3)}
learn = Learner(dls, model, loss_func=CrossEntropyLossFlat(), metrics=accuracy)
# @learner
learn.fit_one_cycle(EPOCHS, LR, cbs=CBS)
# @after
finish(learn, test, 'single', Y)
"""

@pipeline('vision', 'single', 'vision_learner', 'datablock', 'normalize', 'batchnorm', 'freeze')
def stripes_vision_learner():
    return HEAD + """
EPOCHS, LR, BS = 2, 1e-2, 32
CBS = []
df, test = stripes_frames()
Y = 'label'
# @data
dblock = DataBlock(blocks=(ImageBlock, CategoryBlock), get_x=get_rgb, get_y=ColReader(Y),
                   splitter=RandomSplitter(valid_pct=0.2, seed=42), batch_tfms=[Normalize()])
dls = dblock.dataloaders(df, bs=BS)
def tiny_arch(pretrained=False):
    return nn.Sequential(ConvLayer(3, 16), nn.MaxPool2d(2), ConvLayer(16, 32), nn.MaxPool2d(2))
learn = vision_learner(dls, tiny_arch, pretrained=False, n_out=len(dls.vocab), lin_ftrs=[32], metrics=accuracy)
# @learner
learn.unfreeze()
learn.fit_one_cycle(EPOCHS, LR, cbs=CBS)
# @after
finish(learn, test, 'single', Y)
"""

@pipeline('vision', 'regression', 'inline_model', 'datablock', 'mse')
def bar_height_regression():
    return HEAD + f"""
EPOCHS, LR, BS = 3, 1e-2, 32
CBS = []
df, test = regress_image_frames()
Y = 'y'
# @data
dblock = DataBlock(blocks=(ImageBlock(cls=PILImageBW), RegressionBlock), get_x=get_bw, get_y=ColReader(Y),
                   splitter=RandomSplitter(valid_pct=0.2, seed=42), batch_tfms=[Normalize()])
dls = dblock.dataloaders(df, bs=BS)
N_OUT = 1
model = {cnn(1)}
learn = Learner(dls, model, loss_func=MSELossFlat(), metrics=rmse)
# @learner
learn.fit_one_cycle(EPOCHS, LR, cbs=CBS)
# @after
finish(learn, test, 'regression', Y)
"""

@pipeline('multilabel', 'multi', 'inline_model', 'datablock', 'normalize', 'bce')
def shapes_multilabel():
    return HEAD + f"""
EPOCHS, LR, BS = 3, 1e-2, 32
CBS = []
df, test = multilabel_frames()
Y = 'labels'
# @data
dblock = DataBlock(blocks=(ImageBlock(cls=PILImageBW), MultiCategoryBlock), get_x=get_bw, get_y=get_ylist,
                   splitter=RandomSplitter(valid_pct=0.2, seed=42), batch_tfms=[Normalize()])
dls = dblock.dataloaders(df, bs=BS)
N_OUT = len(dls.vocab)
model = {cnn(1)}
learn = Learner(dls, model, loss_func=BCEWithLogitsLossFlat(), metrics=partial(accuracy_multi, thresh=0.5))
# @learner
learn.fit_one_cycle(EPOCHS, LR, cbs=CBS)
# @after
finish(learn, test, 'multi', Y)
"""

@pipeline('points', 'points', 'inline_model', 'datablock', 'mse', 'sigmoid_range')
def blob_points():
    return HEAD + f"""
EPOCHS, LR, BS = 3, 1e-2, 32
CBS = []
df, test = points_frames()
Y = ['px', 'py']
# @data
dblock = DataBlock(blocks=(ImageBlock(cls=PILImageBW), PointBlock), get_x=get_bw, get_y=get_point,
                   splitter=RandomSplitter(valid_pct=0.2, seed=42), batch_tfms=[Normalize()])
dls = dblock.dataloaders(df, bs=BS)
N_OUT = 2
model = {cnn(1, tail=', SigmoidRange(-1.1, 1.1)', pool=4)}
learn = Learner(dls, model, loss_func=MSELossFlat(), metrics=mae)
# @learner
learn.fit_one_cycle(EPOCHS, LR, cbs=CBS)
# @after
finish(learn, test, 'points', Y)
"""

@pipeline('segmentation', 'seg', 'inline_model', 'datablock', 'normalize', 'ce')
def rect_segmentation():
    return HEAD + """
EPOCHS, LR, BS = 3, 1e-2, 16
CBS = []
df, test = seg_frames()
Y = 'mask'
# @data
dblock = DataBlock(blocks=(ImageBlock(cls=PILImageBW), MaskBlock(codes=SEG_CODES)), get_x=get_bw, get_y=get_mask,
                   splitter=RandomSplitter(valid_pct=0.2, seed=42), batch_tfms=[Normalize()])
dls = dblock.dataloaders(df, bs=BS)
N_OUT = len(SEG_CODES)
model = nn.Sequential(
    nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(),
    nn.Conv2d(16, 16, 3, padding=1), nn.ReLU(),
    nn.Conv2d(16, N_OUT, 1))
learn = Learner(dls, model, loss_func=CrossEntropyLossFlat(axis=1), metrics=partial(accuracy, axis=1))
# @learner
learn.fit_one_cycle(EPOCHS, LR, cbs=CBS)
# @after
finish(learn, test, 'seg', Y)
"""

@pipeline('segmentation', 'seg', 'inline_model', 'datablock', 'batchnorm', 'ce')
def rect_segmentation_bn():
    return HEAD + """
EPOCHS, LR, BS = 2, 1e-2, 16
CBS = []
df, test = seg_frames()
Y = 'mask'
# @data
dblock = DataBlock(blocks=(ImageBlock(cls=PILImageBW), MaskBlock(codes=SEG_CODES)), get_x=get_bw, get_y=get_mask,
                   splitter=RandomSplitter(valid_pct=0.2, seed=42), batch_tfms=[Normalize()])
dls = dblock.dataloaders(df, bs=BS)
N_OUT = len(SEG_CODES)
model = nn.Sequential(
    nn.Conv2d(1, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(),
    nn.Conv2d(16, 16, 3, padding=2, dilation=2), nn.BatchNorm2d(16), nn.ReLU(),
    nn.Conv2d(16, N_OUT, 1))
learn = Learner(dls, model, loss_func=CrossEntropyLossFlat(axis=1), metrics=DiceMulti())
# @learner
learn.fit_one_cycle(EPOCHS, LR, cbs=CBS)
# @after
finish(learn, test, 'seg', Y)
"""

# ------------------------------------------------------------------------------------------------------------ tabular
TAB_DATA = """
df, test = tabular_frames()
Y = '{y}'
# @data
"""

@pipeline('tabular', 'single', 'tabular', 'normalize', 'procs', 'dropout')
def tabular_classifier():
    return HEAD + "\nEPOCHS, LR, BS = 3, 1e-2, 64\nCBS = []" + TAB_DATA.format(y='label') + """
valid_idx = list(range(len(df) - len(df) // 5, len(df)))
dls = TabularDataLoaders.from_df(df, procs=[Categorify, FillMissing, Normalize], cat_names=['job', 'city'],
                                 cont_names=['age', 'hours', 'score'], y_names=Y, valid_idx=valid_idx, bs=BS)
learn = tabular_learner(dls, layers=[64, 32], config=tabular_config(ps=0.1), metrics=accuracy)
# @learner
learn.fit_one_cycle(EPOCHS, LR, cbs=CBS)
# @after
finish(learn, test, 'single', Y)
"""

@pipeline('tabular', 'regression', 'tabular', 'normalize', 'procs', 'y_range')
def tabular_regression():
    return HEAD + "\nEPOCHS, LR, BS = 3, 1e-2, 64\nCBS = []" + TAB_DATA.format(y='y') + """
valid_idx = list(range(len(df) - len(df) // 5, len(df)))
dls = TabularDataLoaders.from_df(df, procs=[Categorify, FillMissing, Normalize], cat_names=['job', 'city'],
                                 cont_names=['age', 'hours', 'score'], y_names=Y, y_block=RegressionBlock(),
                                 valid_idx=valid_idx, bs=BS)
learn = tabular_learner(dls, layers=[64, 32], y_range=(0, 100), metrics=rmse)
# @learner
learn.fit_one_cycle(EPOCHS, LR, cbs=CBS)
# @after
finish(learn, test, 'regression', Y)
"""

@pipeline('tabular', 'single', 'tabular', 'normalize', 'procs', 'splitter')
def tabular_pandas_classifier():
    return HEAD + "\nEPOCHS, LR, BS = 3, 1e-2, 64\nCBS = []" + TAB_DATA.format(y='label') + """
splits = RandomSplitter(valid_pct=0.2, seed=42)(range_of(df))
to = TabularPandas(df, procs=[Categorify, FillMissing, Normalize], cat_names=['job', 'city'],
                   cont_names=['age', 'hours', 'score'], y_names=Y, y_block=CategoryBlock(), splits=splits)
dls = to.dataloaders(bs=BS)
learn = tabular_learner(dls, layers=[32], metrics=accuracy)
# @learner
learn.fit(EPOCHS, LR, cbs=CBS)
# @after
finish(learn, test, 'single', Y)
"""

@pipeline('tabular', 'regression', 'tabular', 'normalize', 'procs', 'splitter', 'dropout')
def tabular_pandas_regression():
    return HEAD + "\nEPOCHS, LR, BS = 3, 3e-3, 64\nCBS = []" + TAB_DATA.format(y='y') + """
splits = RandomSplitter(valid_pct=0.2, seed=42)(range_of(df))
to = TabularPandas(df, procs=[Categorify, FillMissing, Normalize], cat_names=['job', 'city'],
                   cont_names=['age', 'hours', 'score'], y_names=Y, y_block=RegressionBlock(), splits=splits)
dls = to.dataloaders(bs=BS)
learn = tabular_learner(dls, layers=[64, 32], config=tabular_config(ps=0.1), y_range=(0, 100), metrics=[rmse, mae])
# @learner
learn.fit_one_cycle(EPOCHS, LR, cbs=CBS)
# @after
finish(learn, test, 'regression', Y)
"""

# ------------------------------------------------------------------------------------------------------------ collab
@pipeline('collab', 'collab', 'collab', 'y_range')
def collab_dot():
    return HEAD + """
EPOCHS, LR, BS = 4, 3e-2, 64
CBS = []
df, test = collab_frames()
Y = 'rating'
# @data
dls = CollabDataLoaders.from_df(df, user_name='user', item_name='item', rating_name=Y, valid_pct=0.2, seed=42, bs=BS)
learn = collab_learner(dls, n_factors=8, y_range=(0, 5.5))
# @learner
learn.fit_one_cycle(EPOCHS, LR, wd=0.05, cbs=CBS)
# @after
finish(learn, test, 'collab', Y)
"""

@pipeline('collab', 'collab', 'collab', 'y_range')
def collab_nn():
    return HEAD + """
EPOCHS, LR, BS = 3, 1e-2, 64
CBS = []
df, test = collab_frames()
Y = 'rating'
# @data
dls = CollabDataLoaders.from_df(df, user_name='user', item_name='item', rating_name=Y, valid_pct=0.2, seed=42, bs=BS)
learn = collab_learner(dls, use_nn=True, emb_szs={'user': 8, 'item': 8}, layers=[32], y_range=(0, 5.5))
# @learner
learn.fit_one_cycle(EPOCHS, LR, wd=0.05, cbs=CBS)
# @after
finish(learn, test, 'collab', Y)
"""

# ------------------------------------------------------------------------------------------------------------ text
@pipeline('text', 'single', 'text', 'dropout')
def text_classifier():
    return HEAD + """
EPOCHS, LR, BS = 4, 3e-2, 16
CBS = []
df, test = text_frames()
Y = 'label'
# @data
dls = TextDataLoaders.from_df(df, text_col='text', label_col=Y, valid_pct=0.2, seed=42, bs=BS, seq_len=16)
learn = text_classifier_learner(dls, AWD_LSTM, pretrained=False, drop_mult=0.5, metrics=accuracy,
                                config=awd_lstm_clas_config | dict(emb_sz=32, n_hid=48, n_layers=1))
# @learner
learn.fit_one_cycle(EPOCHS, LR, cbs=CBS)
# @after
finish(learn, test, 'single', Y)
"""

@pipeline('text', 'single', 'text', 'datablock', 'dropout')
def text_classifier_datablock():
    return HEAD + """
EPOCHS, LR, BS = 4, 3e-2, 16
CBS = []
df, test = text_frames()
Y = 'label'
# @data
dblock = DataBlock(blocks=(TextBlock.from_df('text', seq_len=16), CategoryBlock), get_x=ColReader('text'),
                   get_y=ColReader(Y), splitter=RandomSplitter(valid_pct=0.2, seed=42))
dls = dblock.dataloaders(df, bs=BS)
learn = text_classifier_learner(dls, AWD_LSTM, pretrained=False, drop_mult=0.3, metrics=accuracy,
                                config=awd_lstm_clas_config | dict(emb_sz=32, n_hid=48, n_layers=1))
# @learner
learn.fit_one_cycle(EPOCHS, LR, cbs=CBS)
# @after
finish(learn, test, 'single', Y)
"""

@pipeline('lm', 'lm', 'text', 'dropout')
def language_model():
    return HEAD + """
EPOCHS, LR, BS = 3, 1e-2, 16
CBS = []
df, test = lm_frames()
Y = None
# @data
dls = TextDataLoaders.from_df(df, text_col='text', is_lm=True, valid_pct=0.2, seed=42, bs=BS, seq_len=16)
learn = language_model_learner(dls, AWD_LSTM, pretrained=False, drop_mult=0.3, metrics=[accuracy, Perplexity()],
                               config=awd_lstm_lm_config | dict(emb_sz=32, n_hid=48, n_layers=1))
# @learner
learn.fit_one_cycle(EPOCHS, LR, cbs=CBS)
# @after
finish(learn, test, 'lm', Y)
"""

# ------------------------------------------------------------------------------------------------------------ plain PyTorch
TORCH_DATA = """
x, y, x_test, y_test = xor_tensors({args})
test = (x_test, y_test)
# @data
order = torch.randperm(len(x), generator=torch.Generator().manual_seed(42))
train_idx, valid_idx = order[len(x) // 5:], order[:len(x) // 5]
train_dl = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(x[train_idx], y[train_idx]), batch_size=BS, shuffle=True)
valid_dl = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(x[valid_idx], y[valid_idx]), batch_size=BS)
dls = DataLoaders(train_dl, valid_dl)
"""

@pipeline('torch', 'torch_class', 'inline_model', 'torch', 'ce')
def torch_mlp_classifier():
    return HEAD + "\nEPOCHS, LR, BS = 4, 1e-2, 32\nCBS = []" + TORCH_DATA.format(args='') + """N_OUT = 2
model = nn.Sequential(nn.Linear(2, 32), nn.ReLU(), nn.Linear(32, 32), nn.ReLU(), nn.Linear(32, N_OUT))
learn = Learner(dls, model, loss_func=nn.CrossEntropyLoss(), opt_func=Adam, metrics=accuracy)
# @learner
learn.fit(EPOCHS, LR, cbs=CBS)
# @after
finish(learn, test, 'torch_class')
"""

@pipeline('torch', 'torch_reg', 'inline_model', 'torch', 'mse', 'flatten_out')
def torch_mlp_regression():
    return HEAD + "\nEPOCHS, LR, BS = 4, 1e-2, 32\nCBS = []" + TORCH_DATA.format(args='regression=True') + """N_OUT = 1
model = nn.Sequential(nn.Linear(2, 32), nn.ReLU(), nn.Linear(32, 32), nn.ReLU(), nn.Linear(32, N_OUT), nn.Flatten(0))
learn = Learner(dls, model, loss_func=nn.MSELoss(), opt_func=Adam)
# @learner
learn.fit_one_cycle(EPOCHS, LR, cbs=CBS)
# @after
finish(learn, test, 'torch_reg')
"""

@pipeline('torch', 'torch_class', 'inline_model', 'torch', 'ce', 'batchnorm', 'dropout', 'sgd')
def torch_mlp_bn_sgd():
    return HEAD + "\nEPOCHS, LR, BS = 4, 5e-2, 32\nCBS = []" + TORCH_DATA.format(args='') + """N_OUT = 2
model = nn.Sequential(nn.Linear(2, 32), nn.BatchNorm1d(32), nn.ReLU(), nn.Dropout(0.1),
                      nn.Linear(32, 32), nn.BatchNorm1d(32), nn.ReLU(), nn.Linear(32, N_OUT))
learn = Learner(dls, model, loss_func=CrossEntropyLossFlat(), opt_func=partial(SGD, mom=0.9), metrics=accuracy)
# @learner
learn.fit_one_cycle(EPOCHS, LR, cbs=CBS)
# @after
finish(learn, test, 'torch_class')
"""
