"""Data study: does a fit-level statistic separate 'the fit did not train' faults from healthy fits?
Per real fit (lr_find skipped): relative weight change over the fit, training loss first-k vs last-k batches, steps."""
import sys, json, math, os, time
import torch
from fastai.callback.core import Callback
from fastai.learner import Learner

STATS = []
class Probe(Callback):
    order = 200
    def before_fit(self):
        self.skip = any(type(c).__name__ == 'LRFinder' for c in self.learn.cbs)
        if self.skip: return
        self.w0 = {n: p.detach().clone() for n, p in self.learn.model.named_parameters() if p.requires_grad}
        self.losses, self.eps = [], []
    def after_batch(self):
        if self.skip or not self.training: return
        l = self.learn.loss
        if isinstance(l, torch.Tensor) and l.numel() == 1: self.losses.append(float(l))
    def after_fit(self):
        if self.skip: return
        ps = dict(self.learn.model.named_parameters())
        num = sum(float(((ps[n].detach() - w) ** 2).sum()) for n, w in self.w0.items() if n in ps)
        den = sum(float((w ** 2).sum()) for w in self.w0.values())
        per = [float((ps[n].detach() - w).norm() / (w.norm() + 1e-12)) for n, w in self.w0.items() if n in ps and w.norm() > 0]
        L = [x for x in self.losses if math.isfinite(x)]
        k = max(3, len(L) // 10)
        first, last = (sum(L[:k]) / k, sum(L[-k:]) / k) if len(L) >= 2 * k else (float('nan'), float('nan'))
        mn = min(L) if L else float('nan')
        STATS.append(dict(rel=math.sqrt(num / den) if den else float('nan'), med_layer=sorted(per)[len(per)//2] if per else float('nan'),
                          first=first, last=last, ratio=last / first if first else float('nan'), steps=len(L)))

_orig_init = Learner.__init__
def _init(self, *a, **kw):
    _orig_init(self, *a, **kw)
    self.add_cb(Probe())
Learner.__init__ = _init
