"""fastai `nbs/46_tutorial.collab.ipynb` (docs "Collaborative filtering tutorial"): MovieLens ratings merged with the titles,
`CollabDataLoaders.from_df(ratings, item_name='title', bs=64)`, `collab_learner(dls, n_factors=50, y_range=(0, 5.5))`,
`learn.fit_one_cycle(5, 5e-3, wd=0.1)`, then the tutorial's interpretation: `learn.model.bias(top_movies, is_item=True)`,
`learn.model.weight(top_movies, is_item=True)` and a PCA of the item factors.
Changed: untar_data(URLs.ML_100k) (u.data, u.item) -> a synthetic ratings.csv/movies.csv (100 users, 80 films, 4000 ratings)."""
from fastai.collab import *
from fastai.tabular.all import *
import synth_data

set_seed(42)
path = synth_data.movielens()
ratings = pd.read_csv(path/'ratings.csv', usecols=[0, 1, 2, 3], names=['user', 'movie', 'rating', 'timestamp'], header=0)
movies = pd.read_csv(path/'movies.csv', names=('movie', 'title'), header=0)
ratings = ratings.merge(movies)
dls = CollabDataLoaders.from_df(ratings, item_name='title', bs=64)
learn = collab_learner(dls, n_factors=50, y_range=(0, 5.5))
learn.fit_one_cycle(5, 5e-3, wd=0.1)

g = ratings.groupby('title')['rating'].count()
top_movies = g.sort_values(ascending=False).index.values[:30]
movie_bias = learn.model.bias(top_movies, is_item=True)
mean_ratings = ratings.groupby('title')['rating'].mean()
movie_ratings = [(b, i, mean_ratings.loc[i]) for i,b in zip(top_movies,movie_bias)]
print(sorted(movie_ratings, key=lambda o: o[0])[:3])
movie_w = learn.model.weight(top_movies, is_item=True)
movie_pca = movie_w.pca(3)
print(movie_pca.shape)
