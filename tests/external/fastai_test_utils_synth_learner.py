"""fastai's own test fixture, nbs/13a_learner.ipynb and fastai/test_utils.py: `learn = synth_learner(lr=0.1)` (a RegModel
a*x+b fitted to y = 2x + 3 + noise, MSELossFlat, synth_dbunch), `learn.fit(3)` as in the learner notebook's tests.
Healthy (the model fastai tests itself with): should raise nothing."""
from fastai.test_utils import synth_learner
from fastai.torch_core import set_seed

set_seed(0)
learn = synth_learner(n_trn=10, n_val=2, lr=0.1)
learn.fit(3)
