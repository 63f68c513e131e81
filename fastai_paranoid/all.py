"Everything public in fastai_paranoid: `from fastai_paranoid.all import *` (written by hand, not exported)"
from .core import *
from .fixtures import *
from .deploy import *
from .fresh import *
from .runs import *
from .folds import *
from .bn import *
from .presets import *
from .leaks import *
from .paranoid import *
from .checks import *
from .datachecks import *
from .guards import *
from .distributed import *
from .checkrun import *
from .splitprint import *
from .validchecks import *
