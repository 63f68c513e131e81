"""fastai nbs/44_tutorial.tabular.ipynb, "Tabular training" with the mid-level TabularPandas:
`splits = RandomSplitter(valid_pct=0.2)(range_of(df))`,
`to = TabularPandas(df, procs=[Categorify, FillMissing, Normalize], cat_names = [...], cont_names = ['age', 'fnlwgt', 'education-num'], y_names='salary', splits=splits)`,
`dls = to.dataloaders(bs=64)`, `learn = tabular_learner(dls, metrics=accuracy)`, `learn.fit_one_cycle(1)`.
Offline: a synthetic adult.csv. Healthy (unstratified random split): should raise nothing."""
from fastai.tabular.all import *
import synth

synth.seed_everything()
path = synth.adult()
df = pd.read_csv(path/'adult.csv')
splits = RandomSplitter(valid_pct=0.2)(range_of(df))
to = TabularPandas(df, procs=[Categorify, FillMissing, Normalize],
                   cat_names = ['workclass', 'education', 'marital-status', 'occupation', 'relationship', 'race'],
                   cont_names = ['age', 'fnlwgt', 'education-num'],
                   y_names='salary',
                   splits=splits)
dls = to.dataloaders(bs=64)
learn = tabular_learner(dls, metrics=accuracy)
learn.fit_one_cycle(1)
