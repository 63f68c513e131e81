"""fastai `nbs/examples/train_wt2.py` (fastai/fastai): WIKITEXT_TINY read by its `istitle`/`read_file` into articles of
space-split tokens, a vocab from `Counter` and `make_vocab`, `Numericalize(vocab)`, LM dataloaders with bs=104, sl=72,
`config = awd_lstm_lm_config.copy(); config.update({'input_p': 0.6, 'output_p': 0.4, 'weight_p': 0.5, 'embed_p': 0.1,
'hidden_p': 0.2})`, `get_language_model(AWD_LSTM, len(vocab), config=config)`, `opt_func = partial(Adam, wd=0.1, eps=1e-7)`,
`cbs = [MixedPrecision(clip=0.1), ModelResetter, RNNRegularizer(alpha, beta)]` with (3,2),
`Learner(model, dls, loss_func=CrossEntropyLossFlat(), opt_func=opt_func, cbs=cbs, metrics=[accuracy, Perplexity()])`,
`learn.fit_one_cycle(90, 5e-3, moms=(0.8,0.7,0.8), div=10)`.
Changed: the old `LM_Dataset`/`LM_Sampler`/`TfmdDL` (gone from fastai) -> `TfmdLists(..., dl_type=LMDataLoader)`; the
script's `Learner(model, dls, ...)` argument order (an old signature) -> `Learner(dls, model, ...)`; `MixedPrecision(clip=0.1)`
-> `MixedPrecision()` plus `GradientClip(0.1)` (clip moved out); `RNNCallback` added beside `ModelResetter` and
`RNNRegularizer` (today's AWD-LSTM language model returns (output, raw_outputs, dropped_outputs), and the old `RNNTrainer`
that split it went into `RNNCallback`, as `rnn_cbs()` lists: without it the loss got the tuple and failed);
untar_data(URLs.WIKITEXT_TINY) -> a synthetic wikitext (60 articles of a small grammar); bs=16; 1 epoch instead of 90;
num_workers=0."""
from fastai.basics import *
from fastai.text.all import *
from fastai.callback.all import *
import synth_data

def istitle(line):
    return len(re.findall(r'^ = [^=]* = $', line)) != 0

def read_file(filename):
    articles = L()
    with open(filename, encoding='utf8') as f:
        lines = f.readlines()
    current_article = ''
    for i,line in enumerate(lines):
        current_article += line
        if i < len(lines)-2 and lines[i+1] == ' \n' and istitle(lines[i+2]):
            articles.append(current_article.split(' '))
            current_article = ''
    articles.append(current_article.split(' '))
    return articles

def get_data(bs, sl):
    path = synth_data.wikitext()
    train, valid = read_file(path/'train.txt'), read_file(path/'valid.txt')
    count = Counter([p for t in train for p in t])
    vocab = make_vocab(count)
    tls = TfmdLists(train + valid, tfms=Numericalize(vocab), splits=[range_of(train), range(len(train), len(train) + len(valid))],
                    dl_type=LMDataLoader)
    return tls.dataloaders(bs=bs, seq_len=sl, num_workers=0), vocab

def main(bs=16, sl=72, qrnn=False):
    dls,vocab = get_data(bs, sl)
    config = awd_lstm_lm_config.copy()
    if qrnn: config.update({'input_p': 0.4, 'output_p': 0.4, 'weight_p': 0.1, 'embed_p': 0.1, 'hidden_p': 0.2})
    else:    config.update({'input_p': 0.6, 'output_p': 0.4, 'weight_p': 0.5, 'embed_p': 0.1, 'hidden_p': 0.2})
    model = get_language_model((AWD_QRNN if qrnn else AWD_LSTM), len(vocab), config=config)
    opt_func = partial(Adam, wd=0.1, eps=1e-7)
    alpha,beta = (2,1) if qrnn else (3,2)
    cbs = [MixedPrecision(), GradientClip(0.1), ModelResetter, RNNCallback, RNNRegularizer(alpha, beta)]
    learn = Learner(dls, model, loss_func=CrossEntropyLossFlat(), opt_func=opt_func, cbs=cbs, metrics=[accuracy, Perplexity()])
    learn.fit_one_cycle(1, 5e-3, moms=(0.8,0.7,0.8), div=10)

if __name__ == '__main__':
    set_seed(0)
    main()
