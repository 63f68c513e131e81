"""fastbook clean/01_intro.ipynb, the ML_SAMPLE recommendation cells:
`dls = CollabDataLoaders.from_csv(path/'ratings.csv')`, `learn = collab_learner(dls, y_range=(0.5,5.5))`, `learn.fine_tune(10)`.
Offline: a synthetic ratings.csv (userId, movieId, rating, timestamp) from user/film biases and factors; fine_tune(1).
Healthy: should raise nothing."""
from fastai.collab import *
from fastai.tabular.all import *
import synth

synth.seed_everything()
path = synth.ml_sample()
dls = CollabDataLoaders.from_csv(path/'ratings.csv')
learn = collab_learner(dls, y_range=(0.5,5.5))
learn.fine_tune(1)
