"""fastbook clean/09_tabular.ipynb, "Look at the Data", "Handling Dates", "Using a Neural Network":
`df_nn = pd.read_csv(path/'TrainAndValid.csv', low_memory=False)`, `df_nn['ProductSize'] = df_nn['ProductSize'].astype('category')`,
`df_nn['ProductSize'].cat.set_categories(sizes, ordered=True)`, `df_nn[dep_var] = np.log(df_nn[dep_var])`, `df_nn = add_datepart(df_nn, 'saledate')`,
`cond = (df.saleYear<2011) | (df.saleMonth<10)` (the time split), `cont_nn,cat_nn = cont_cat_split(df_nn_final, max_card=9000, dep_var=dep_var)`,
`procs_nn = [Categorify, FillMissing, Normalize]`, `to_nn = TabularPandas(df_nn_final, procs_nn, cat_nn, cont_nn, splits=splits, y_names=dep_var)`,
`dls = to_nn.dataloaders(1024)`, `learn = tabular_learner(dls, y_range=(8,12), layers=[500,250], n_out=1, loss_func=F.mse_loss)`,
`learn.lr_find()`, `learn.fit_one_cycle(5, 1e-2)`.
Offline: a synthetic TrainAndValid.csv (800 sales, 2005-2011), the split at 2010-10 (the book's 2011-10 shifted into the
synthetic dates), dataloaders(64), fit_one_cycle(1, 1e-2). Healthy (log-price regression, F.mse_loss): should raise nothing."""
from fastai.tabular.all import *
import synth

synth.seed_everything()
path = synth.bulldozers()
dep_var = 'SalePrice'
sizes = 'Large','Large / Medium','Medium','Small','Mini','Compact'
df_nn = pd.read_csv(path/'TrainAndValid.csv', low_memory=False)
df_nn['ProductSize'] = df_nn['ProductSize'].astype('category')
df_nn['ProductSize'] = df_nn['ProductSize'].cat.set_categories(sizes, ordered=True)
df_nn[dep_var] = np.log(df_nn[dep_var])
df_nn = add_datepart(df_nn, 'saledate')
cond = (df_nn.saleYear<2011) & ~((df_nn.saleYear==2010) & (df_nn.saleMonth>=10))
train_idx = np.where( cond)[0]
valid_idx = np.where(~cond)[0]
splits = (list(train_idx),list(valid_idx))
df_nn.loc[df_nn['YearMade']<1900, 'YearMade'] = 1950
df_nn_final = df_nn[['YearMade', 'ProductSize', 'state', 'ProductGroup', 'Enclosure', 'Hydraulics_Flow', 'ModelID',
                     'saleElapsed', dep_var]]
cont_nn,cat_nn = cont_cat_split(df_nn_final, max_card=9000, dep_var=dep_var)
if 'saleElapsed' not in cont_nn: cont_nn.append('saleElapsed')
if 'saleElapsed' in cat_nn: cat_nn.remove('saleElapsed')
procs_nn = [Categorify, FillMissing, Normalize]
to_nn = TabularPandas(df_nn_final, procs_nn, cat_nn, cont_nn, splits=splits, y_names=dep_var)
dls = to_nn.dataloaders(64)
learn = tabular_learner(dls, y_range=(8,12), layers=[500,250], n_out=1, loss_func=F.mse_loss)
learn.lr_find()
learn.fit_one_cycle(1, 1e-2)
