"""The fixed twin of user_accuracy_multi_sparse.py (issue 17): the same multi-label tagging model on the same sparse tags
(10 tags, about 7% present per row), judged with `F1ScoreMulti()` instead of `accuracy_multi`. A constant predictor scores
0 (every tag negative) or about 0.13 (every tag positive) on it, so its value is what the model learned.
Healthy: should raise nothing."""
import numpy as np, pandas as pd
from fastai.tabular.all import *

set_seed(0)
rng = np.random.default_rng(0)
n, feats, tags = 600, [f'x{i}' for i in range(6)], [f'tag_{i}' for i in range(10)]
df = pd.DataFrame(rng.normal(size=(n, len(feats))), columns=feats)
scores = df[feats].values @ rng.normal(size=(len(feats), len(tags))) - 4.0 + rng.normal(size=(n, len(tags)))
for i, t in enumerate(tags): df[t] = (scores[:, i] > 0).astype(np.float32)

dls = TabularDataLoaders.from_df(df, procs=[Normalize], cont_names=feats, y_names=tags,
                                 y_block=MultiCategoryBlock(encoded=True, vocab=tags), valid_idx=list(range(480, 600)), bs=64)
learn = tabular_learner(dls, layers=[64, 32], metrics=F1ScoreMulti())
learn.fit_one_cycle(3, 1e-2)
