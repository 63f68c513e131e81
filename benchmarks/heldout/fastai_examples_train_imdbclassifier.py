"""fastai `nbs/examples/train_imdbclassifier.py` (fastai/fastai): `TextDataLoaders.from_folder(path, bs=bs, valid='test')`,
`text_classifier_learner(dls, AWD_LSTM, drop_mult=0.5, metrics=accuracy)` (under rank0_first), `with
learn.distrib_ctx(cuda_id=gpu): learn.fine_tune(epochs, lr)` with lr=1e-2, bs=64.
This is issue 40's text classifier recipe: `text_classifier_learner(dls, AWD_LSTM)`, fine_tune, a few hundred reviews.
Changed: the fastcore.script CLI and the GPU selection dropped (main called with its defaults); untar_data(URLs.IMDB) ->
a synthetic IMDB folder (240 train and 80 test reviews of 40-90 words, pos/neg, plus unsup); `pretrained=False`;
epochs=1 instead of 5 (fine_tune(1) = one frozen and one unfrozen epoch)."""
from fastai.basics import *
from fastai.callback.all import *
from fastai.distributed import *
from fastai.text.all import *

def main(gpu=None, lr=1e-2, bs=64, epochs=1, fp16=0, runs=1):
    "Training of IMDB classifier."
    import synth_data
    path = rank0_first(lambda: synth_data.imdb())
    dls = TextDataLoaders.from_folder(path, bs=bs, valid='test')
    for run in range(runs):
        print(f'Rank[{rank_distrib()}] Run: {run}; epochs: {epochs}; lr: {lr}; bs: {bs}')
        learn = rank0_first(lambda: text_classifier_learner(dls, AWD_LSTM, drop_mult=0.5, metrics=accuracy, pretrained=False))
        if fp16: learn = learn.to_fp16()
        with learn.distrib_ctx(cuda_id=gpu): # distributed traing requires "-m fastai.launch"
            print(f"Training in distributed data parallel context on GPU {gpu}", flush=True)
            learn.fine_tune(epochs, lr)

if __name__ == '__main__':
    set_seed(0)
    main()
