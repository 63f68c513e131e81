"""A user's report (issue 17, "Validation integrity"): a multi-label tagging model on tabular features whose `accuracy_multi`
reads 0.93 from the first epoch on. With 10 tags of which about 7% are present per row, 0.93 is exactly what predicting no
tag at all scores: the metric cannot tell the model from a constant. fastai's multi-label tabular recipe
(`y_block=MultiCategoryBlock(encoded=True, vocab=...)`, `metrics=accuracy_multi`), 600 synthetic rows, 3 epochs.
SHOULD BE CAUGHT: check_metric_baseline (a constant predictor, every tag negative, reaches >= 90% of accuracy_multi's range)."""
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
learn = tabular_learner(dls, layers=[64, 32], metrics=accuracy_multi)
learn.fit_one_cycle(3, 1e-2)
