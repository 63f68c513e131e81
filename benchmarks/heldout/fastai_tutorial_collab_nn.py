"""fastai `nbs/46_tutorial.collab.ipynb`'s neural variant (and fastai `45_collab.ipynb`'s `collab_learner(..., use_nn=True)`):
`CollabDataLoaders.from_csv(path/'ratings.csv')` on ML_SAMPLE, `collab_learner(dls, use_nn=True, emb_szs={'userId': 50,
'movieId': 50}, layers=[256, 128], y_range=(0, 5.5))`, `learn.fit_one_cycle(5, 5e-3, wd=0.1)`.
Changed: untar_data(URLs.ML_SAMPLE) -> a synthetic ratings.csv (userId, movieId, rating, timestamp; 4000 ratings)."""
from fastai.collab import *
from fastai.tabular.all import *
import synth_data

set_seed(42)
path = synth_data.movielens()
dls = CollabDataLoaders.from_csv(path/'ratings.csv')
learn = collab_learner(dls, use_nn=True, emb_szs={'userId': 50, 'movieId': 50}, layers=[256, 128], y_range=(0, 5.5))
learn.fit_one_cycle(5, 5e-3, wd=0.1)
