"""torchtest2 README bug 5, fixed: a masked mean. Healthy."""
import torch
from torch import nn
from fastai.learner import Learner
from fastai.losses import CrossEntropyLossFlat
from fastai.metrics import accuracy
from fastai.torch_core import set_seed
import tt2_data

class TextClassifier(nn.Module):
    def __init__(self, vocab=1000, dim=32, classes=3):
        super().__init__()
        self.emb = nn.Embedding(vocab, dim, padding_idx=0)
        self.head = nn.Linear(dim, classes)
    def forward(self, input_ids, attention_mask):
        h = self.emb(input_ids)
        m = attention_mask.unsqueeze(-1).float()
        return self.head((h * m).sum(1) / m.sum(1).clamp(min=1))

set_seed(0)
g = torch.Generator().manual_seed(0)
n = 400
ids = torch.randint(1, 1000, (n, 20), generator=g)
lengths = torch.randint(5, 21, (n,), generator=g)
mask = (torch.arange(20)[None] < lengths[:, None]).long()
ids[mask == 0] = 0
labels = (ids * mask).remainder(3).sum(1).remainder(3)  # a label that depends on the unpadded tokens
dls = tt2_data.loaders(ids, mask, labels)
dls.n_inp = 2
learn = Learner(dls, TextClassifier(), loss_func=CrossEntropyLossFlat(), metrics=accuracy)
learn.fit(2, 1e-2)
