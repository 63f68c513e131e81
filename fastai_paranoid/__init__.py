__version__ = "0.1.0"

def load_ipython_extension(ipython):
    "`%load_ext fastai_paranoid`: `paranoid()` on, and each cell's findings shown under it (see `fastai_paranoid.ipython`)"
    from .ipython import load_ipython_extension as load
    load(ipython)

def unload_ipython_extension(ipython):
    "`%unload_ext fastai_paranoid`: `paranoid()` back as it was, no more reports"
    from .ipython import unload_ipython_extension as unload
    unload(ipython)
