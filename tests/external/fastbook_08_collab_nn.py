"""fastbook clean/08_collab.ipynb, "Using fastai.collab" and "Deep Learning for Collaborative Filtering":
`learn = collab_learner(dls, n_factors=50, y_range=(0, 5.5))`, `learn.fit_one_cycle(5, 5e-3, wd=0.1)`,
`learn = collab_learner(dls, use_nn=True, y_range=(0, 5.5), layers=[100,50])`, `learn.fit_one_cycle(5, 5e-3, wd=0.1)`.
Offline: synthetic u.data/u.item; the use_nn=True learner, fit_one_cycle(1, 5e-3, wd=0.1). Healthy: should raise nothing."""
from fastai.collab import *
from fastai.tabular.all import *
import synth

synth.seed_everything()
path = synth.movielens()
ratings = pd.read_csv(path/'u.data', delimiter='\t', header=None, names=['user','movie','rating','timestamp'])
movies = pd.read_csv(path/'u.item', delimiter='|', encoding='latin-1', usecols=(0,1), names=('movie','title'), header=None)
ratings = ratings.merge(movies)
dls = CollabDataLoaders.from_df(ratings, item_name='title', bs=64)
learn = collab_learner(dls, use_nn=True, y_range=(0, 5.5), layers=[100,50])
learn.fit_one_cycle(1, 5e-3, wd=0.1)
