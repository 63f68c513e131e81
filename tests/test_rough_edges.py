"Rough edges of issue 18 item 7: NumPy seeds, a dls_fn that takes no indices, a learning rate that is not a number: each a clear error or none."
import numpy as np, pytest
from torch import nn
from fastai_paranoid.fixtures import xor_dls, build_mlp
from fastai_paranoid.fresh import fresh_learner, seed_everything
from fastai_paranoid.folds import kfold_learners
import fastai_paranoid.sanity # learn.sanity_check

def test_numpy_integer_seeds_are_seeds():
    assert seed_everything(np.int64(3)) == 3 and type(seed_everything(np.int64(3))) is int
    a = fresh_learner(lambda: xor_dls(), lambda: build_mlp(), seed=np.int64(3), loss_func=nn.CrossEntropyLoss())
    b = fresh_learner(lambda: xor_dls(), lambda: build_mlp(), seed=3, loss_func=nn.CrossEntropyLoss())
    assert all((p == q).all() for p, q in zip(a.model.parameters(), b.model.parameters()))
    for bad in [True, 3.0, '3']:
        with pytest.raises(TypeError, match='seed must be an int'): seed_everything(bad)

def test_a_dls_fn_without_the_fold_indices_is_refused_clearly():
    with pytest.raises(TypeError, match=r"dls_fn must take the fold's \(train_idx, valid_idx\).*lambda train_idx, valid_idx"):
        next(kfold_learners(100, lambda: xor_dls(), lambda: build_mlp(), n_splits=2))
    fold, learn = next(kfold_learners(100, lambda tr, va: xor_dls(), lambda: build_mlp(), n_splits=2, loss_func=nn.CrossEntropyLoss()))
    assert fold == 0

@pytest.mark.parametrize('lr', ['fast', 0, -1e-3, True])
def test_sanity_check_refuses_an_lr_that_is_not_a_learning_rate(lr):
    learn = fresh_learner(lambda: xor_dls(), lambda: build_mlp(), loss_func=nn.CrossEntropyLoss())
    with pytest.raises(ValueError, match='give the learning rate you train with'): learn.sanity_check(lr=lr, progress=False)
