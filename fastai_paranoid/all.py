"Everything public in fastai_paranoid: `from fastai_paranoid.all import *` (written by hand, not exported)"
from .core import *
from .fixtures import *
from .fresh import *
