"""fastai nbs/17_callback.tracker.ipynb and 18a_callback.training.ipynb: EarlyStoppingCallback, SaveModelCallback,
ReduceLROnPlateau and GradientAccumulation on a tabular learner (the cells' tests use synth_learner; here the
tabular tutorial's learner): `learn.fit(n_epoch, cbs=[EarlyStoppingCallback(monitor='valid_loss', patience=1), SaveModelCallback(fname='best')])`,
`learn.fit(2, cbs=GradientAccumulation(n_acc=128))`.
Offline: a synthetic adult.csv. Healthy: should raise nothing."""
from fastai.tabular.all import *
import synth

synth.seed_everything()
path = synth.adult()
dls = TabularDataLoaders.from_csv(path/'adult.csv', path=path, y_names="salary",
    cat_names = ['workclass', 'education', 'marital-status', 'occupation', 'relationship', 'race'],
    cont_names = ['age', 'fnlwgt', 'education-num'], procs = [Categorify, FillMissing, Normalize], bs=32)
learn = tabular_learner(dls, metrics=accuracy, cbs=GradientAccumulation(n_acc=64))
learn.fit(2, 1e-2, cbs=[EarlyStoppingCallback(monitor='valid_loss', patience=1), SaveModelCallback(fname='best'),
                        ReduceLROnPlateau(monitor='valid_loss', patience=1)])
