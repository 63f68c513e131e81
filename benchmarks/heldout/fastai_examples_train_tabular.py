"""fastai `nbs/examples/train_tabular.py` (fastai/fastai): `TabularDataLoaders.from_csv(path/'adult.csv', path=path,
y_names="salary", cat_names = ['workclass', 'education', 'marital-status', 'occupation', 'relationship', 'race'],
cont_names = ['age', 'fnlwgt', 'education-num'], procs = [Categorify, FillMissing, Normalize])`,
`tabular_learner(dls, metrics=accuracy)`, and inside `learn.parallel_ctx if gpu is None and n_gpu else learn.distrib_ctx`,
`learn.fit_one_cycle(epochs)` with the default epochs=5.
Changed: the fastcore.script CLI dropped (main called with its defaults); untar_data(URLs.ADULT_SAMPLE) -> a synthetic
adult.csv of 3000 rows."""
from fastai.basics import *
from fastai.tabular.all import *
from fastai.callback.all import *
from fastai.distributed import *

def get_dls(path):
    dls = TabularDataLoaders.from_csv(path/'adult.csv', path=path, y_names="salary",
        cat_names = ['workclass', 'education', 'marital-status', 'occupation',
                 'relationship', 'race'],
        cont_names = ['age', 'fnlwgt', 'education-num'],
        procs = [Categorify, FillMissing, Normalize])
    return dls

def main(gpu=None, epochs=5, fp16=0, runs=1):
    "Training of Tabular data 'ADULT_SAMPLE'."
    import synth_data
    path = synth_data.adult(n=3000)
    dls = get_dls(path)
    if not gpu: print(f'epochs: {epochs};')
    for run in range(runs):
        print(f'Run: {run}')
        learn = tabular_learner(dls, metrics=accuracy)
        if fp16: learn = learn.to_fp16()
        n_gpu = torch.cuda.device_count()
        ctx = learn.parallel_ctx if gpu is None and n_gpu else learn.distrib_ctx
        with partial(ctx, gpu)(): # distributed traing requires "-m fastai.launch"
            print(f"Training in {ctx.__name__} context on GPU {gpu if gpu is not None else list(range(n_gpu))}")
            learn.fit_one_cycle(epochs)

if __name__ == '__main__':
    set_seed(0)
    main()
