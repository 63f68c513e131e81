"""fastbook clean/10_nlp.ipynb, "Fine-Tuning the Language Model" and "Fine-Tuning the Classifier":
`get_imdb = partial(get_text_files, folders=['train', 'test', 'unsup'])`,
`dls_lm = DataBlock(blocks=TextBlock.from_folder(path, is_lm=True), get_items=get_imdb, splitter=RandomSplitter(0.1)).dataloaders(path, path=path, bs=128, seq_len=80)`,
`learn = language_model_learner(dls_lm, AWD_LSTM, drop_mult=0.3, metrics=[accuracy, Perplexity()]).to_fp16()`, `learn.fit_one_cycle(1, 2e-2)`,
`learn.save_encoder('finetuned')`,
`dls_clas = DataBlock(blocks=(TextBlock.from_folder(path, vocab=dls_lm.vocab),CategoryBlock), get_y = parent_label,
    get_items=partial(get_text_files, folders=['train', 'test']), splitter=GrandparentSplitter(valid_name='test')).dataloaders(path, path=path, bs=128, seq_len=72)`,
`learn = text_classifier_learner(dls_clas, AWD_LSTM, drop_mult=0.5, metrics=accuracy).to_fp16()`, `learn = learn.load_encoder('finetuned')`,
`learn.fit_one_cycle(1, 2e-2)`, `learn.freeze_to(-2)`, `learn.fit_one_cycle(1, slice(1e-2/(2.6**4),1e-2))`.
Offline: AWD_LSTM at a small size (emb_sz=64, n_hid=128, n_layers=2; CPU time), a synthetic IMDB tree; pretrained=False, no to_fp16 (CPU), bs=16, seq_len=20. Healthy: should raise nothing."""
from fastai.text.all import *
import synth

synth.seed_everything()
path = synth.imdb()
get_imdb = partial(get_text_files, folders=['train', 'test', 'unsup'])
dls_lm = DataBlock(
    blocks=TextBlock.from_folder(path, is_lm=True),
    get_items=get_imdb, splitter=RandomSplitter(0.1)
).dataloaders(path, path=path, bs=16, seq_len=20)
learn = language_model_learner(dls_lm, AWD_LSTM, drop_mult=0.3, metrics=[accuracy, Perplexity()], pretrained=False,
    config=awd_lstm_lm_config | dict(emb_sz=64, n_hid=128, n_layers=2))
learn.fit_one_cycle(1, 2e-2)
learn.save_encoder('finetuned')
dls_clas = DataBlock(
    blocks=(TextBlock.from_folder(path, vocab=dls_lm.vocab),CategoryBlock),
    get_y = parent_label,
    get_items=partial(get_text_files, folders=['train', 'test']),
    splitter=GrandparentSplitter(valid_name='test')
).dataloaders(path, path=path, bs=16, seq_len=20)
learn = text_classifier_learner(dls_clas, AWD_LSTM, drop_mult=0.5, metrics=accuracy, pretrained=False,
    config=awd_lstm_clas_config | dict(emb_sz=64, n_hid=128, n_layers=2))
learn = learn.load_encoder('finetuned')
learn.fit_one_cycle(1, 2e-2)
learn.freeze_to(-2)
learn.fit_one_cycle(1, slice(1e-2/(2.6**4),1e-2))
