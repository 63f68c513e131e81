"""`collab_learner(..., y_range=(0, 0.5))` on ratings 1 to 5, a typo for 5.5: the model's output is a sigmoid scaled to
[0, 0.5], so it can never reach a single rating (issue 39's "a cause named wrong").
CAUSE: check_target_range (the outputs are bounded to [0, 0.5], every training rating is above it)."""
import numpy as np, pandas as pd
from fastai.collab import CollabDataLoaders, collab_learner
from fastai.torch_core import set_seed

set_seed(0)
rng = np.random.default_rng(0)
users, items = rng.normal(size=(60, 4)), rng.normal(size=(40, 4))
pairs = rng.choice(60 * 40, 1500, replace=False)  # each user rates an item once
u, i = pairs // 40, pairs % 40
ratings = np.clip(np.round(3 + (users[u] * items[i]).sum(1)), 1, 5)
df = pd.DataFrame({'user': u, 'item': i, 'rating': ratings.astype('float32')})
dls = CollabDataLoaders.from_df(df, bs=64, seed=0)
learn = collab_learner(dls, n_factors=8, y_range=(0, 0.5))  # BUG: 0.5, a typo for 5.5. FIX: learn = collab_learner(dls, n_factors=8, y_range=(0, 5.5))
learn.fit_one_cycle(3, 5e-3)
