"""fastai `nbs/examples/ulmfit.ipynb` (fastai/fastai), "Finetune a pretrained Language Model": the IMDB texts of unsup, train
and test, `get_files(path, extensions=['.txt'], folders=['unsup', 'train', 'test'])`, `RandomSplitter(valid_pct=0.1)`,
`[Tokenizer.from_folder(path), Numericalize()]` in a `Datasets(..., dl_type=LMDataLoader)`, `dataloaders(bs=bs, seq_len=sl,
val_bs=bs)` with bs,sl=256,80, `language_model_learner(dls_lm, AWD_LSTM, opt_func=partial(Adam, wd=0.1),
metrics=[accuracy, Perplexity()], path=path)`, `learn.to_fp16(clip=0.1)`, `learn.fit_one_cycle(1, 2e-2, moms=(0.8,0.7,0.8))`,
`learn.save('stage1')`, `learn.load('stage1')`, `learn.unfreeze()`, `learn.fit_one_cycle(10, 2e-3, moms=(0.8,0.7,0.8))`,
`learn.save_encoder('finetuned1')`.
Changed: fastai2's DataSource/databunch -> Datasets/dataloaders; untar_data(URLs.IMDB) -> the synthetic IMDB folder
(200 reviews: 120 train, 40 test, 40 unsup, half synth_data's default, so that the script, two fits of a whole
AWD-LSTM, takes about 50 s of CPU); bs 256 -> 32 (the corpus is small); `pretrained=False`; the unfrozen fit 1 epoch
instead of 10; the models are saved under a temporary copy of the data; `learn.to_fp16(clip=0.1)` -> `learn.add_cb(GradientClip(0.1))`, and
`learn.to_fp16()` only where CUDA is (fastai's `MixedPrecision` lost its `clip` argument when it moved to torch's native
AMP, so `clip=0.1` reached `GradScaler` and failed; clipping is now `GradientClip`; fastai's AMP is CUDA-only: on CPU
`to_fp16()` would only be switched off with warnings, so it is dropped there)."""
from fastai.text.all import *
import synth_data

set_seed(0)
path = synth_data.imdb(n_train=120, n_test=40, n_unsup=40)
texts = get_files(path, extensions=['.txt'], folders=['unsup', 'train', 'test'])
splits = RandomSplitter(valid_pct=0.1)(texts)
tfms = [Tokenizer.from_folder(path), Numericalize()]
dsrc = Datasets(texts, [tfms], splits=splits, dl_type=LMDataLoader)
bs,sl=32,80
dbunch_lm = dsrc.dataloaders(bs=bs, seq_len=sl, val_bs=bs)

opt_func = partial(Adam, wd=0.1)
learn = language_model_learner(dbunch_lm, AWD_LSTM, opt_func=opt_func, metrics=[accuracy, Perplexity()], path=path, pretrained=False)
learn.add_cb(GradientClip(0.1))
if torch.cuda.is_available(): learn = learn.to_fp16()
learn.fit_one_cycle(1, 2e-2, moms=(0.8,0.7,0.8))
learn.save('stage1')
learn.load('stage1');
learn.unfreeze()
learn.fit_one_cycle(1, 2e-3, moms=(0.8,0.7,0.8))
learn.save_encoder('finetuned1')
