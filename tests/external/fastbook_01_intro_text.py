"""fastbook clean/01_intro.ipynb, the IMDB sentiment cells:
`dls = TextDataLoaders.from_folder(untar_data(URLs.IMDB), valid='test')`,
`learn = text_classifier_learner(dls, AWD_LSTM, drop_mult=0.5, metrics=accuracy)`, `learn.fine_tune(4, 1e-2)`.
Offline: AWD_LSTM at a small size (emb_sz=64, n_hid=128, n_layers=2; CPU time), a synthetic IMDB tree (train/test x pos/neg, 40-word reviews), pretrained=False, bs=16, fine_tune(1, 1e-2).
Healthy: should raise nothing."""
from fastai.text.all import *
import synth

synth.seed_everything()
dls = TextDataLoaders.from_folder(synth.imdb(), valid='test', bs=16)
learn = text_classifier_learner(dls, AWD_LSTM, drop_mult=0.5, metrics=accuracy, pretrained=False,
    config=awd_lstm_clas_config | dict(emb_sz=64, n_hid=128, n_layers=2))
learn.fine_tune(1, 1e-2)
