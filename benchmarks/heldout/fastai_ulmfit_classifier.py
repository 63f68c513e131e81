"""fastai `nbs/examples/ulmfit.ipynb` (fastai/fastai), "Use it to train a classifier": the classifier's
`Datasets(texts, [[Tokenizer.from_folder(path), Numericalize(vocab=lm_vocab)], [parent_label, Categorize()]],
splits=GrandparentSplitter(valid_name='test')(texts), dl_type=SortedDL)`, `dataloaders(before_batch=pad_input_chunk, bs=bs)`,
`text_classifier_learner(dbunch_clas, AWD_LSTM, metrics=[accuracy], path=path, drop_mult=0.5)`, `learn.load_encoder('finetuned1')`,
then gradual unfreezing: `fit_one_cycle(1, 2e-2, moms=(0.8,0.7,0.8))`, `freeze_to(-2)`, `fit_one_cycle(1, slice(1e-2/(2.6**4),1e-2),
...)`, `freeze_to(-3)`, `fit_one_cycle(1, slice(5e-3/(2.6**4),5e-3), ...)`, `unfreeze()`, `fit_one_cycle(2, slice(1e-3/(2.6**4),1e-3), ...)`.
Changed: fastai2's DataSource/databunch -> Datasets/dataloaders; untar_data(URLs.IMDB) -> the synthetic IMDB folder
(240 train, 80 test reviews); the language model's vocab and encoder come from a one-epoch `language_model_learner(...,
pretrained=False)` fit in this script (the notebook loads those of its first part); bs=64; the last fit 1 epoch instead of 2."""
from fastai.text.all import *
import synth_data

set_seed(0)
path = synth_data.imdb()
bs = 64
lm_texts = get_files(path, extensions=['.txt'], folders=['unsup', 'train', 'test'])
dbunch_lm = Datasets(lm_texts, [[Tokenizer.from_folder(path), Numericalize()]], splits=RandomSplitter(valid_pct=0.1)(lm_texts),
                     dl_type=LMDataLoader).dataloaders(bs=32, seq_len=80)
lm = language_model_learner(dbunch_lm, AWD_LSTM, opt_func=partial(Adam, wd=0.1), metrics=[accuracy, Perplexity()], path=path, pretrained=False)
lm.fit_one_cycle(1, 2e-2, moms=(0.8,0.7,0.8))
lm.save_encoder('finetuned1')
lm_vocab = dbunch_lm.vocab

texts = get_files(path, extensions=['.txt'], folders=['train', 'test'])
splits = GrandparentSplitter(valid_name='test')(texts)
x_tfms = [Tokenizer.from_folder(path), Numericalize(vocab=lm_vocab)]
dsrc = Datasets(texts, [x_tfms, [parent_label, Categorize()]], splits=splits, dl_type=SortedDL)
dbunch_clas = dsrc.dataloaders(before_batch=pad_input_chunk, bs=bs)

learn = text_classifier_learner(dbunch_clas, AWD_LSTM, metrics=[accuracy], path=path, drop_mult=0.5, pretrained=False)
learn = learn.load_encoder('finetuned1')
learn.fit_one_cycle(1, 2e-2, moms=(0.8,0.7,0.8))
learn.freeze_to(-2)
learn.fit_one_cycle(1, slice(1e-2/(2.6**4),1e-2), moms=(0.8,0.7,0.8))
learn.freeze_to(-3)
learn.fit_one_cycle(1, slice(5e-3/(2.6**4),5e-3), moms=(0.8,0.7,0.8))
learn.unfreeze()
learn.fit_one_cycle(1, slice(1e-3/(2.6**4),1e-3), moms=(0.8,0.7,0.8))
