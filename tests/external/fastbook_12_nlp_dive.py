"""fastbook clean/12_nlp_dive.ipynb, "Maintaining the State of an RNN", "Creating More Signal", "LSTM", "Regularizing an LSTM":
`lines = L(); with open(path/'train.txt') as f: lines += L(*f.readlines())`, `text = ' . '.join([l.strip() for l in lines])`,
`tokens = text.split(' ')`, `vocab = L(*tokens).unique()`, `word2idx = {w:i for i,w in enumerate(vocab)}`, `nums = L(word2idx[i] for i in tokens)`,
`def group_chunks(ds, bs): ...`, `sl = 16`, `seqs = L((tensor(nums[i:i+sl]), tensor(nums[i+1:i+sl+1])) for i in range(0,len(nums)-sl-1,sl))`,
`dls = DataLoaders.from_dsets(group_chunks(seqs[:cut], bs), group_chunks(seqs[cut:], bs), bs=bs, drop_last=True, shuffle=False)`,
`class LMModel7(Module): ... (tied weights, dropout, returns self.h_o(self.drop(raw)),raw,out)`,
`learn = TextLearner(dls, LMModel7(len(vocab), 64, 2, 0.4), loss_func=CrossEntropyLossFlat(), metrics=accuracy)` (TextLearner adds ModelResetter, RNNCallback and RNNRegularizer(alpha=2, beta=1)),
`learn.fit_one_cycle(15, 1e-2, wd=0.1)`.
Offline: a synthetic HUMAN_NUMBERS train.txt (1..600 in words), fit_one_cycle(1, 1e-2, wd=0.1). Healthy: should raise nothing."""
from fastai.text.all import *
import synth

synth.seed_everything()
path = synth.human_numbers()
lines = L()
with open(path/'train.txt') as f: lines += L(*f.readlines())
with open(path/'valid.txt') as f: lines += L(*f.readlines())
text = ' . '.join([l.strip() for l in lines])
tokens = text.split(' ')
vocab = L(*tokens).unique()
word2idx = {w:i for i,w in enumerate(vocab)}
nums = L(word2idx[i] for i in tokens)
def group_chunks(ds, bs):
    m = len(ds) // bs
    new_ds = L()
    for i in range(m): new_ds += L(ds[i + m*j] for j in range(bs))
    return new_ds
bs = 16
sl = 16
seqs = L((tensor(nums[i:i+sl]), tensor(nums[i+1:i+sl+1])) for i in range(0,len(nums)-sl-1,sl))
cut = int(len(seqs) * 0.8)
dls = DataLoaders.from_dsets(group_chunks(seqs[:cut], bs), group_chunks(seqs[cut:], bs), bs=bs, drop_last=True, shuffle=False)
class LMModel7(Module):
    def __init__(self, vocab_sz, n_hidden, n_layers, p):
        self.i_h = nn.Embedding(vocab_sz, n_hidden)
        self.rnn = nn.LSTM(n_hidden, n_hidden, n_layers, batch_first=True)
        self.drop = nn.Dropout(p)
        self.h_o = nn.Linear(n_hidden, vocab_sz)
        self.h_o.weight = self.i_h.weight
        self.h = [torch.zeros(n_layers, bs, n_hidden) for _ in range(2)]
    def forward(self, x):
        raw,h = self.rnn(self.i_h(x), self.h)
        out = self.drop(raw)
        self.h = [h_.detach() for h_ in h]
        return self.h_o(out),raw,out
    def reset(self):
        for h in self.h: h.zero_()
learn = TextLearner(dls, LMModel7(len(vocab), 64, 2, 0.4), loss_func=CrossEntropyLossFlat(), metrics=accuracy)
learn.fit_one_cycle(1, 1e-2, wd=0.1)
