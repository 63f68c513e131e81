"""fastai nbs/38_tutorial.text.ipynb, "Train a text classifier from a pretrained model" (IMDB_SAMPLE, the csv form):
`dls = TextDataLoaders.from_csv(path=path, csv_fname='texts.csv', text_col='text', label_col='label', valid_col='is_valid')`,
`learn = text_classifier_learner(dls, AWD_LSTM, drop_mult=0.5, metrics=accuracy)`, `learn.fine_tune(4, 1e-2)`.
Offline: a synthetic texts.csv; pretrained=False, AWD_LSTM at a small size (CPU time), bs=16, fine_tune(1, 1e-2). Healthy."""
from fastai.text.all import *
import synth

synth.seed_everything()
path = synth.imdb_sample()
dls = TextDataLoaders.from_csv(path=path, csv_fname='texts.csv', text_col='text', label_col='label', valid_col='is_valid', bs=16)
learn = text_classifier_learner(dls, AWD_LSTM, drop_mult=0.5, metrics=accuracy, pretrained=False,
                                config=awd_lstm_clas_config | dict(emb_sz=64, n_hid=128, n_layers=2))
learn.fine_tune(1, 1e-2)
