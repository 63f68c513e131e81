"""walkwithfastai `03_tab.clas.binary.ipynb` (muellerzr/walkwithfastai, cells 7-110): ADULT_SAMPLE with `TabularPandas(df,
procs=[Categorify, FillMissing, Normalize], cat_names=cat_names, cont_names=cont_names, y_names='salary',
y_block=CategoryBlock(), splits=RandomSplitter()(range_of(df)))`, hand-built `TabDataLoader(to.train, bs=64, shuffle=True,
drop_last=True)` / `TabDataLoader(to.valid, bs=128)` in `DataLoaders`, `tabular_learner(dls, [200,100], metrics=accuracy)`,
`learn.lr_find()`, `learn.fit(3, 1e-2)`, then again with `to.dataloaders(bs=1024)` and `bs=4096`, then `predict`,
`test_dl`, `validate`, `get_preds`.
Changed: untar_data(URLs.ADULT_SAMPLE) -> a synthetic adult.csv of 6000 rows (bs=4096 still gets a training batch); the
notebook's exploratory cells (one-proc TabularPandas, show) dropped."""
from fastai.tabular.all import *
import synth_data

set_seed(0)
path = synth_data.adult(n=6000)
df = pd.read_csv(path/'adult.csv')
cat_names = ['workclass', 'education', 'marital-status', 'occupation', 'relationship', 'race']
cont_names = ['age', 'fnlwgt', 'education-num']
splits = RandomSplitter()(range_of(df))
procs = [Categorify, FillMissing, Normalize]
y_names = 'salary'
y_block = CategoryBlock()
to = TabularPandas(df, procs=procs, cat_names=cat_names, cont_names=cont_names,
                   y_names=y_names, y_block=y_block, splits=splits)
dls = to.dataloaders()
trn_dl = TabDataLoader(to.train, bs=64, shuffle=True, drop_last=True)
val_dl = TabDataLoader(to.valid, bs=128)
dls = DataLoaders(trn_dl, val_dl)
emb_szs = get_emb_sz(to)
net = TabularModel(emb_szs, len(to.cont_names), 2, [200,100])

learn = tabular_learner(dls, [200,100], metrics=accuracy)
learn.lr_find()
learn.fit(3, 1e-2)
dls = to.dataloaders(bs=1024)
learn = tabular_learner(dls, [200,100], metrics=accuracy)
learn.fit(3, 1e-2)
dls = to.dataloaders(bs=4096)
learn = tabular_learner(dls, [200,100], metrics=accuracy)
learn.fit(3, 1e-2)

row, cls, probs = learn.predict(df.iloc[0])
dl = learn.dls.test_dl(df.iloc[:100])
print(learn.validate(dl=dl))
preds = learn.get_preds(dl=dl)
df2 = df.iloc[:100].drop('salary', axis=1)
dl = learn.dls.test_dl(df2)
