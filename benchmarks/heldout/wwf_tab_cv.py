"""walkwithfastai `03_tab.cv.ipynb` (muellerzr/walkwithfastai, cells 7-53): ADULT_SAMPLE, the last 3256 rows held out as a
test set, `to_base = TabularPandas(train, procs, cat_names, cont_names, y_names='salary')` for the procs' statistics, then
5-fold `KFold(n_splits=5, shuffle=False)` with `procs = [Categorify(classes), Normalize.from_tab(means, stds),
FillMissing(fill_strategy=FillStrategy.median, fill_vals=fill_vals, na_dict=na_dict)]`, `to.dataloaders(bs=512)`,
`tabular_learner(dls, layers=[200,100], metrics=accuracy)`, `learn.fit(3, 1e-2)`, `validate`, `get_preds(dl=test_dl)` per
fold, and the fold average.
Changed: untar_data(URLs.ADULT_SAMPLE) -> a synthetic adult.csv of 4256 rows (3256 held out, as the notebook's 10%), so
each fold trains on 800 rows; the StratifiedKFold repeat (which, as written, reuses kf) is left out; the per-fold procs
`[Categorify(classes), Normalize.from_tab(means, stds), FillMissing(..., fill_vals=fill_vals, na_dict=na_dict)]` ->
`to_base.procs`, already set up on the whole training frame, applied to each fold with `TabularPandas(..., do_setup=False)`
and `to.process()` (as fastai's own `TabularPandas.new`/`test_dl` apply set-up procs to new rows), and the lines that read
`classes`, `means, stds`, `fill_vals, na_dict` out of `to_base` dropped with them: `Normalize.from_tab`,
`Categorify(classes)` and `FillMissing(na_dict=...)` came from fastai PR 2837 (by the notebook's author), which was never
merged; today's procs take no statistics (`Normalize.from_tab` is an AttributeError, walkwithfastai issue 67) and
recompute them in `setups`; the notebook's intent is kept: every fold encoded with the categories, scaling and fill
values of the whole training frame (so that a column whose NaNs all fall in a fold's validation rows cannot fail it, the
notebook's "nan values in `education-num` but not in setup training set")."""
from fastai.tabular.all import *
from sklearn.model_selection import KFold
import synth_data

set_seed(0)
path = synth_data.adult(n=4256)
df = pd.read_csv(path/'adult.csv')
cat_names = ['workclass', 'education', 'marital-status', 'occupation', 'relationship', 'race']
cont_names = ['age', 'fnlwgt', 'education-num']
procs = [Categorify, FillMissing, Normalize]
start_val = len(df) - 3256
train = df.iloc[:start_val]
test = df.iloc[start_val:]

to_base = TabularPandas(train, procs, cat_names, cont_names, y_names='salary')

val_pct, tst_preds = L(), L()
kf = KFold(n_splits=5, shuffle=False)
for train_idx, valid_idx in kf.split(train.index):
    splits = (L(list(train_idx)), L(list(valid_idx)))
    procs = to_base.procs # Categorify's classes, Normalize's means and stds, FillMissing's na_dict: those of the whole train
    to = TabularPandas(train, procs, cat_names, cont_names, y_names='salary',
                       splits=splits, do_setup=False)
    to.process()
    dls = to.dataloaders(bs=512)
    learn = tabular_learner(dls, layers=[200,100], metrics=accuracy)
    learn.fit(3, 1e-2)
    test_dl = learn.dls.test_dl(test)
    with learn.no_bar():
        val_pct.append(learn.validate()[-1])
        tst_preds.append(learn.get_preds(dl=test_dl))

for i, (pred, truth) in enumerate(tst_preds):
    print(f'Fold {i+1}: {accuracy(pred, truth)}')
sum_preds = []
for i, (pred, truth) in enumerate(tst_preds):
    sum_preds.append(pred.numpy())
avg_preds = np.sum(sum_preds, axis=0) / 5
print(f'Average Accuracy: {accuracy(tensor(avg_preds), tst_preds[0][1])}')
