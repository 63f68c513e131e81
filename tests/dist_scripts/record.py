"Shared by the scenario scripts: each rank writes one JSON file per scenario, `<out_dir>/<scenario>.<rank>.json`."
import json, os, sys, warnings
import torch.distributed as dist
from fastai_paranoid.core import ParanoidWarning

rank = int(os.environ['RANK'])
out_dir = sys.argv[1]

def write(line:dict):
    with open(os.path.join(out_dir, f"{line['scenario']}.{rank}.json"), 'w') as f: json.dump({**line, 'rank': rank}, f, default=str)

def result_rows(results):
    "CheckResults as rows, with the numbers and findings that decided them"
    return [r.as_row() | {'measured_raw': r.measured, 'findings': getattr(r, 'findings', [])} for r in results]

def run_fit(learn, n_fits=1, between=None, fit_kwargs=None, **ctx_kwargs):
    "Fit inside `distrib_ctx(cpu=True, ...)`; (error, warnings of ours) with every warning recorded"
    error = None
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        try:
            for i in range(n_fits):
                if i and between is not None: between(learn, i)
                with learn.distrib_ctx(cpu=True, **ctx_kwargs): learn.fit(1, **(fit_kwargs or {}))
        except Exception as e: error = f"{type(e).__name__}: {e}"
    return error, [f"{w.category.__name__}: {w.message}" for w in caught if issubclass(w.category, ParanoidWarning)]
