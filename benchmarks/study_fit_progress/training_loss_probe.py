"""A data study for TrainingLossGuard (37_outcome), not a benchmark of the package: imported before a mutant's script, it adds a
fresh TrainingLossGuard (min_steps=15, so that the shortest pipelines are recorded too) to every Learner and records, per judged
fit, the guard's verdict (`result`), why it was not judged (`reason`), and the training loss of every step."""
from fastai.learner import Learner
from fastai_paranoid.outcome import TrainingLossGuard
STATS = []
G = type('TrainingLossGuard', (TrainingLossGuard,), {})
_orig_init = Learner.__init__
def _init(self, *a, **kw):
    _orig_init(self, *a, **kw)
    g = G(on_finding='log', min_steps=15); self.add_cb(g)
    _finish = g.finish
    def finish():
        _finish()
        if getattr(g, 'judged', False): STATS.append(dict(result=g.result, reason=g.reason, losses=[float(x) for l in g.losses for x in l.reshape(-1)]))
    g.finish = finish
Learner.__init__ = _init
