"""fastbook clean/01_intro.ipynb, the ADULT_SAMPLE tabular cells:
`dls = TabularDataLoaders.from_csv(path/'adult.csv', path=path, y_names="salary",
    cat_names = ['workclass', 'education', 'marital-status', 'occupation', 'relationship', 'race'],
    cont_names = ['age', 'fnlwgt', 'education-num'], procs = [Categorify, FillMissing, Normalize])`,
`learn = tabular_learner(dls, metrics=accuracy)`, `learn.fit_one_cycle(3)`.
Offline: a synthetic adult.csv whose salary depends on age, education and marital status; fit_one_cycle(1).
Healthy: should raise nothing."""
from fastai.tabular.all import *
import synth

synth.seed_everything()
path = synth.adult()
dls = TabularDataLoaders.from_csv(path/'adult.csv', path=path, y_names="salary",
    cat_names = ['workclass', 'education', 'marital-status', 'occupation', 'relationship', 'race'],
    cont_names = ['age', 'fnlwgt', 'education-num'],
    procs = [Categorify, FillMissing, Normalize])
learn = tabular_learner(dls, metrics=accuracy)
learn.fit_one_cycle(1)
