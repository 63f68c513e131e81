"Digits under plain SGD whose rate comes from the user's own PyTorch OneCycleLR, built over the fit's optimizer in a callback: healthy (the Learner holds fastai's default 1e-3, at which SGD cannot memorize a batch; the fit runs at up to 0.1)"
import torch
from functools import partial
from fastai.callback.core import Callback
from fastai.learner import Learner
from fastai.metrics import accuracy
from fastai.optimizer import OptimWrapper
from fastai.torch_core import set_seed
from digits_data import digits, split, loaders, cnn, save_if_asked

class OneCycle(Callback):
    "The user's own schedule: PyTorch's OneCycleLR over the wrapped optimizer, stepped after each optimizer step"
    def before_fit(self):
        self.sched = torch.optim.lr_scheduler.OneCycleLR(self.opt.opt, max_lr=0.1, total_steps=self.n_epoch * len(self.dls.train))
    def after_step(self): self.sched.step()

set_seed(0)
x, y = digits()
dls = loaders(x, y, *split(len(x)))
learn = Learner(dls, cnn(), loss_func=torch.nn.CrossEntropyLoss(), opt_func=partial(OptimWrapper, opt=torch.optim.SGD), metrics=accuracy, cbs=OneCycle())
learn.fit(2)
save_if_asked(learn)
