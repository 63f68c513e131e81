"""Mutation operators for the benchmark of issue 38: each one a small function that rewrites a healthy pipeline's script
(`pipelines.py`) the way fastai code makes one fault, or returns None where it does not fit.

Each declares:
- its `family` (what part of a pipeline it breaks): training data, labels, split, preprocessing, model/activation, loss,
  optimiser/lr, weights/freezing, regularisation, loop/callbacks, validation/metrics, save/load/export;
- its `nature`: 'fault' when the taxonomies call the change a mistake, 'tuning' when it is a choice that `ablate` weighs (fewer
  epochs, a narrower layer, another batch size, a rate within a decade). A tuning mutant that still trains is on the false-alarm side;
- `contract=True` when the mutant breaks a contract by construction (validation items in the training set, a reported
  metric computed on the wrong thing), whatever its score says;
- `source`: the published operator or fault category it models. DC = DeepCrime (Humbatova, Jahangirova, Tonella, ISSTA
  2021; `dlfaults/deepcrime`, utils/constants.py's `mutation_class_map` and operators/*.py), with its operator's name;
  TX = the taxonomy of real faults (Humbatova et al., ICSE 2020), with its path of categories; IS = Islam et al., FSE 2019
  (bug type / root cause);
- `names`: the finding kinds (a `Finding.kind` or a sanity check's name) that name the fault it plants: a caught mutant whose
  standing finding is one of these has its cause named;
- `blind`: why no mechanism can see the fault from inside the script, where that is so: the operator changes every item the
  script trains and validates on alike, so its data, model and fit are healthy for the task it was given, and only the
  benchmark's held-out test set (which the script never reads) shows the harm. Such mutants are scored apart as well.

Adding one is one function: `@operator(family, nature, source, names=...)` over `def name(p) -> str|None`."""
import re
from dataclasses import dataclass, field

FAMILIES = ('training data', 'labels', 'split', 'preprocessing', 'model/activation', 'loss', 'optimiser/lr', 'weights/freezing',
            'regularisation', 'loop/callbacks', 'validation/metrics', 'save/load/export')

@dataclass
class Operator:
    name: str
    family: str
    nature: str # 'fault' or 'tuning'
    source: str
    apply: callable # (Pipeline) -> the mutant's text, or None where the operator does not fit
    contract: bool = False # harmful by construction
    names: tuple = () # the finding kinds that name this fault
    blind: str = '' # why no mechanism can see it from inside the script ('' where one could)
    def __call__(self, p): return self.apply(p)

OPERATORS = {}

def operator(family, nature, source, contract=False, names=(), blind=''):
    "Register the decorated `fn(pipeline) -> text|None` as an Operator named after it"
    assert family in FAMILIES and nature in ('fault', 'tuning'), (family, nature)
    def register(fn):
        OPERATORS[fn.__name__] = Operator(fn.__name__, family, nature, source, fn, contract, tuple(names), blind)
        return fn
    return register

# ------------------------------------------------------------------------------------------------------------ helpers
def sub(text:str, old:str, new:str, count:int=1):
    "`text` with `old` replaced by `new` (the first `count` times; 0: all), or None when `old` is absent"
    if old not in text: return None
    return text.replace(old, new) if count == 0 else text.replace(old, new, count)

def resub(text:str, pattern:str, repl, count:int=0):
    "A regex substitution, or None when the pattern does not match"
    new, n = re.subn(pattern, repl, text, count=count)
    return new if n else None

def insert(text:str, marker:str, code:str):
    "`code` inserted after the line `# @<marker>`, or None when the script has no such line"
    tag = f'# @{marker}\n'
    if tag not in text: return None
    return text.replace(tag, tag + code.strip('\n') + '\n', 1)

def with_callback(text:str, class_code:str, instance:str):
    "The script with a callback class defined at the top and passed to the fit (`CBS = [instance]`)"
    new = sub(text, 'CBS = []\n', class_code.strip('\n') + f'\n\nCBS = [{instance}]\n')
    return new

def frames(p) -> bool: return p.app != 'torch'
def classes(p) -> bool: return p.kind in ('single', 'torch_class')
def regression(p) -> bool: return p.kind in ('regression', 'collab', 'torch_reg')

def constant(text:str, name:str, fn):
    "The script with the constant `name` of `EPOCHS, LR, BS = ...` replaced by `fn(old value)`"
    m = re.search(r'^EPOCHS, LR, BS = (\S+), (\S+), (\S+)$', text, flags=re.M)
    if m is None: return None
    values = dict(zip(('EPOCHS', 'LR', 'BS'), m.groups()))
    new = fn(eval(values[name]))
    if new is None: return None
    values[name] = repr(new)
    return text[:m.start()] + f"EPOCHS, LR, BS = {values['EPOCHS']}, {values['LR']}, {values['BS']}" + text[m.end():]

# ------------------------------------------------------------------------------------------------------------ training data
@operator('training data', 'fault', "DC delete_training_data (TRD); TX Training > Training data quality > not enough training data",
          blind='fewer items of the same data, in training and validation alike: a smaller task, healthy as given; only a test set from the full data shows what was lost')
def delete_training_data(p):
    "Four fifths of the training items dropped before the split (a filter that keeps too little)"
    if p.app == 'lm': return None
    if frames(p): return insert(p.text, 'data', "df = df.sample(frac=0.2, random_state=0).reset_index(drop=True)")
    return insert(p.text, 'data', "x, y = x[:len(x) // 5], y[:len(y) // 5]")

@operator('training data', 'fault', "DC unbalance_train_data (TUD); TX Training > Training data quality > unbalanced training data",
          blind='training and validation unbalanced alike: the fit is healthy for the distribution it was given; only the balanced test set shows the harm')
def unbalance_training_data(p):
    "Every class but the first kept at a tenth"
    if p.kind == 'single' and frames(p):
        return insert(p.text, 'data', "first = sorted(df[Y].unique())[0]\n"
                      "df = pd.concat([df[df[Y] == first], df[df[Y] != first].sample(frac=0.1, random_state=0)]).reset_index(drop=True)")
    if p.kind == 'torch_class': return insert(p.text, 'data', "keep = (y == 0) | (torch.arange(len(y)) % 10 == 0)\nx, y = x[keep], y[keep]")
    return None

@operator('training data', 'fault', "DC add_noise (TAN); TX Training > Training data quality > low quality of training data",
          blind='noise on every input the script reads, training and validation alike: a harder task, not an inconsistency; only the clean test set shows the harm')
def add_noise_to_inputs(p):
    "Strong noise added to the inputs of the data the pipeline trains and validates on (not the test set)"
    if p.app in ('vision', 'multilabel', 'points', 'segmentation'):
        return insert(p.text, 'data', "rng = np.random.default_rng(1)\n"
                      "df['img'] = [(a + rng.normal(0, 120, a.shape)).clip(0, 255).astype(np.uint8) for a in df['img']]")
    if p.app == 'tabular':
        return insert(p.text, 'data', "rng = np.random.default_rng(1)\n"
                      "for c in ['age', 'hours', 'score']: df[c] = df[c] + rng.normal(0, 3, len(df)) * df[c].std()")
    if p.app == 'torch': return insert(p.text, 'data', "x = x + torch.randn(x.shape, generator=torch.Generator().manual_seed(1)) * 1.5")
    return None

@operator('training data', 'fault', "IS Data bug (data corruption); TX Tensors & Inputs > wrong input > wrong input format",
          names=('check_input_values',))
def blank_inputs(p):
    "The inputs the model trains on carry nothing: a decoding bug that yields blank images / constant columns"
    if p.app in ('vision', 'multilabel', 'points', 'segmentation'):
        return insert(p.text, 'data', "df['img'] = [np.full_like(a, 128) for a in df['img']]")
    if p.app == 'tabular': return insert(p.text, 'data', "for c in ['age', 'hours', 'score']: df[c] = 1.0\nfor c in ['job', 'city']: df[c] = 'a'")
    if p.app == 'torch': return insert(p.text, 'data', "x = torch.zeros_like(x)")
    return None

# ------------------------------------------------------------------------------------------------------------ labels
@operator('labels', 'fault', "DC change_label (TCL) at 100%; TX Training > Training data quality > wrong labels for training data",
          names=('check_metric_baseline', 'check_input_dependency'))
def shuffle_labels(p):
    "The labels permuted against the inputs (a join or sort that misaligns them)"
    if p.app == 'lm': return None
    if p.app == 'torch': return insert(p.text, 'data', "y = y[torch.randperm(len(y), generator=torch.Generator().manual_seed(1))]")
    if p.kind == 'points': return insert(p.text, 'data', "df[['px', 'py']] = df[['px', 'py']].sample(frac=1, random_state=1).values")
    return insert(p.text, 'data', "df[Y] = df[Y].sample(frac=1, random_state=1).values")

@operator('labels', 'fault', "DC change_label (TCL) at 30%; TX Training > Training data quality > wrong labels for training data")
def corrupt_labels_30pct(p):
    "30% of the labels replaced by another class"
    if p.kind == 'single' and frames(p):
        return insert(p.text, 'data', "rng = np.random.default_rng(1)\nclasses = sorted(df[Y].unique())\n"
                      "wrong = rng.random(len(df)) < 0.3\n"
                      "df.loc[wrong, Y] = [classes[(classes.index(v) + 1) % len(classes)] for v in df.loc[wrong, Y]]")
    if p.kind == 'torch_class':
        return insert(p.text, 'data', "wrong = torch.rand(len(y), generator=torch.Generator().manual_seed(1)) < 0.3\ny = torch.where(wrong, 1 - y, y)")
    if p.kind == 'multi':
        return insert(p.text, 'data', "rng = np.random.default_rng(1)\nwrong = rng.random(len(df)) < 0.3\n"
                      "df.loc[wrong, Y] = df[Y].sample(frac=1, random_state=1).values[wrong]")
    return None

@operator('labels', 'fault', "DC make_output_classes_overlap; TX Training > Training data quality > overlapping output classes")
def overlap_classes(p):
    "A third of the items of one class duplicated with another class's label"
    if p.kind == 'single' and frames(p):
        return insert(p.text, 'data', "classes = sorted(df[Y].unique())\n"
                      "extra = df[df[Y] == classes[0]].sample(frac=0.6, random_state=1).copy()\nextra[Y] = classes[1]\n"
                      "df = pd.concat([df, extra]).reset_index(drop=True)")
    if p.kind == 'torch_class': return insert(p.text, 'data', "extra = y == 0\nx, y = torch.cat([x, x[extra]]), torch.cat([y, 1 - y[extra]])")
    return None

@operator('labels', 'fault', "IS Data bug / API misuse; TX Training > Training data quality > wrong labels (labels read from the wrong column)",
          names=('check_target_range',)) # where a y_range was set from the right column's range: the targets leave it
def label_from_wrong_column(p):
    "The target read from another column (`y_names='city'` / the regression target of the next column)"
    if p.app == 'tabular': return sub(p.text, "Y = 'label'", "Y = 'city'") or sub(p.text, "Y = 'y'", "Y = 'hours'")
    return None

@operator('labels', 'fault', "IS Data bug; TX Training > Training data quality > wrong labels for training data (class ids shifted)",
          blind="a consistent relabelling (class k called k+1 everywhere the script looks): learnable, and learned; only the test set's true ids show it")
def shift_class_ids(p):
    "Class ids shifted by one (0-based vs 1-based): a consistent but wrong labelling"
    if p.kind == 'single' and 'int_labels' in p.tags: return insert(p.text, 'data', "df[Y] = (df[Y] + 1) % 10")
    if p.kind == 'torch_class': return insert(p.text, 'data', "y = 1 - y")
    return None

@operator('labels', 'fault', "TX Training > Preprocessing of training data > wrong preprocessing (target rescaled in training, not at prediction)",
          blind='the target scaled alike in training and validation: the model fits what it is given; only predictions compared with unscaled test targets show it')
def rescale_regression_target(p):
    "The regression target divided by 100 for training and never scaled back"
    if p.kind in ('regression', 'collab') and frames(p): return insert(p.text, 'data', "df[Y] = df[Y] / 100")
    if p.kind == 'torch_reg': return insert(p.text, 'data', "y = y / 100")
    return None

# ------------------------------------------------------------------------------------------------------------ split
@operator('split', 'fault', "TX Training > Validation/Testing > incorrect train/test data split; IS Data bug (oversampling before the split)",
          contract=True, names=('check_split_duplicates', 'check_split_overlap', 'split_overlap'))
def oversample_before_split(p):
    "Every item duplicated before the split, so that copies land on both sides (seed 001's leaky pipeline)"
    if p.app == 'lm': return None
    if frames(p): return insert(p.text, 'data', "df = pd.concat([df, df]).reset_index(drop=True)")
    return insert(p.text, 'data', "x, y = torch.cat([x, x]), torch.cat([y, y])")

@operator('split', 'fault', "TX Training > Validation/Testing > incorrect train/test data split (the validation items are the training items)",
          contract=True, names=('check_split_overlap', 'check_split_duplicates', 'split_overlap'))
def validate_on_training_items(p):
    "The validation set is the training set"
    new = sub(p.text, "splitter=RandomSplitter(valid_pct=0.2, seed=42)", "splitter=lambda items: (list(range(len(items))), list(range(len(items))))")
    if new: return new
    new = sub(p.text, "splits = RandomSplitter(valid_pct=0.2, seed=42)(range_of(df))", "splits = (list(range_of(df)), list(range_of(df)))")
    if new: return new
    if p.app == 'torch': return sub(p.text, "TensorDataset(x[valid_idx], y[valid_idx])", "TensorDataset(x[train_idx], y[train_idx])")
    return None

@operator('split', 'fault', "DC remove_validation_set; TX Training > Validation/Testing > missing validation set")
def tiny_validation_set(p):
    "A validation set of 2% (a handful of items: every epoch's metric is noise)"
    return (sub(p.text, "valid_pct=0.2", "valid_pct=0.02", 0)
            or sub(p.text, "valid_idx = list(range(len(df) - len(df) // 5, len(df)))", "valid_idx = list(range(len(df) - 8, len(df)))")
            or sub(p.text, "train_idx, valid_idx = order[len(x) // 5:], order[:len(x) // 5]", "train_idx, valid_idx = order[8:], order[:8]"))

@operator('split', 'fault', "IS Structural bug > initialization (unseeded random split); the users' report user_bug_08",
          names=('check_reproducible', 'seed_diverged'))
def unseeded_split(p):
    "The random split drawn without a seed (another validation set on every run, and on every resume)"
    return sub(p.text, "RandomSplitter(valid_pct=0.2, seed=42)", "RandomSplitter(valid_pct=0.2)") or sub(p.text, "valid_pct=0.2, seed=42", "valid_pct=0.2")

@operator('split', 'fault', "TX Training > Validation/Testing > incorrect train/test data split (split by class: classes missing from training)",
          names=('check_metric_baseline',))
def split_by_class(p):
    "The split puts whole classes in validation (a split by a column that is the label)"
    if p.kind != 'single' or p.app == 'text': return None # (TextBlock's items are not rows a splitter can read a label from)
    new = sub(p.text, "splitter=RandomSplitter(valid_pct=0.2, seed=42)", "splitter=FuncSplitter(lambda r: r[Y] == sorted(df[Y].unique())[0])")
    if new: return new
    new = sub(p.text, "splits = RandomSplitter(valid_pct=0.2, seed=42)(range_of(df))",
              "splits = (list(np.where(df[Y] != '>=50k')[0]), list(np.where(df[Y] == '>=50k')[0]))")
    if new: return new
    return sub(p.text, "valid_idx = list(range(len(df) - len(df) // 5, len(df)))", "valid_idx = list(np.where(df[Y] == '>=50k')[0])")

@operator('split', 'fault', "IS Data bug (test data used in training); TX Training > Validation/Testing > incorrect train/test data split",
          contract=True, names=('check_split_overlap', 'check_split_duplicates', 'scored_on_training_items'))
def test_set_in_training(p):
    "The held-out test items added to the training data"
    if p.app == 'lm': return insert(p.text, 'data', "df = pd.concat([df, test]).reset_index(drop=True)")
    if frames(p): return insert(p.text, 'data', "df = pd.concat([df, test]).reset_index(drop=True)")
    return insert(p.text, 'data', "x, y = torch.cat([x, x_test]), torch.cat([y, y_test])")

@operator('split', 'fault', "TX API > wrong position of data shuffle operation / Training process > missing shuffling",
          names=('unshuffled_training_data', 'DataOrderGuard'))
def sorted_and_unshuffled(p):
    "Items sorted by label and the training loader not shuffled: every batch holds one class"
    if p.kind == 'single' and 'datablock' in p.tags and p.app == 'vision':
        new = insert(p.text, 'data', "df = df.sort_values(Y).reset_index(drop=True)")
        return sub(new, "dls = dblock.dataloaders(df, bs=BS)", "dls = dblock.dataloaders(df, bs=BS, shuffle=False)")
    if p.kind == 'torch_class':
        new = insert(p.text, 'data', "order_y = y.argsort()\nx, y = x[order_y], y[order_y]")
        new = sub(new, "order = torch.randperm(len(x), generator=torch.Generator().manual_seed(42))", "order = torch.arange(len(x)).roll(len(x) // 10)")
        return sub(new, "batch_size=BS, shuffle=True)", "batch_size=BS, shuffle=False)")
    return None

# ------------------------------------------------------------------------------------------------------------ preprocessing
@operator('preprocessing', 'fault', "TX Training > Preprocessing of training data > missing preprocessing (missing normalisation)",
          names=('check_input_normalization',))
def drop_normalization(p):
    "No normalisation of the inputs (the Normalize proc or batch transform left out)"
    return (sub(p.text, "procs=[Categorify, FillMissing, Normalize]", "procs=[Categorify, FillMissing]")
            or sub(p.text, ", batch_tfms=[Normalize()])", ")"))

@operator('preprocessing', 'fault', "IS Data bug; the users' report user_bug_07 (ignored columns): TX Training > Training data quality",
          names=('check_constant_features', 'check_input_dependency'))
def drop_continuous_columns(p):
    "The informative continuous columns left out of `cont_names`"
    return sub(p.text, "cont_names=['age', 'hours', 'score']", "cont_names=['hours']")

@operator('preprocessing', 'fault', "TX Training > Preprocessing of training data > missing preprocessing (categorical column left out)")
def drop_categorical_columns(p):
    return sub(p.text, "cat_names=['job', 'city']", "cat_names=['city']")

@operator('preprocessing', 'fault', "TX Training > Preprocessing of training data > missing preprocessing (missing values not handled)",
          names=('check_input_values', 'non_finite', 'NaNGuard'))
def no_fill_missing(p):
    "The FillMissing proc left out of a table with missing values"
    return sub(p.text, "procs=[Categorify, FillMissing, Normalize]", "procs=[Categorify, Normalize]")

@operator('preprocessing', 'fault', "TX Training > Preprocessing of training data > wrong preprocessing (images resized to a few pixels)")
def resize_too_small(p):
    return sub(p.text, "item_tfms=Resize(16)", "item_tfms=Resize(3)")

@operator('preprocessing', 'fault', "TX Training > Preprocessing of training data > wrong preprocessing (augmentation applied at inference); user_bug_03",
          names=('check_valid_deterministic',))
def augment_at_inference(p):
    "A noise augmentation with `split_idx=None`: applied to validation and test items too"
    if p.app not in ('vision', 'multilabel', 'points') or 'datablock' not in p.tags: return None
    cls = ("class AddNoise(RandTransform):\n    split_idx, order = None, 99\n"
           "    def encodes(self, x:TensorImage): return x + torch.randn_like(x) * x.std() * 1.5\n")
    new = sub(p.text, "CBS = []\n", "CBS = []\n" + cls)
    return sub(new, "batch_tfms=[Normalize()]", "batch_tfms=[Normalize(), AddNoise()]") or sub(
        new, "splitter=RandomSplitter(valid_pct=0.2, seed=42))", "splitter=RandomSplitter(valid_pct=0.2, seed=42), batch_tfms=[AddNoise()])")

@operator('preprocessing', 'fault', "TX Training > Preprocessing of training data > wrong preprocessing (inputs scaled twice / to a tiny range)",
          names=('check_input_normalization',))
def inputs_scaled_tiny(p):
    "The inputs multiplied by 1e-4 (a units bug: scaled twice)"
    if p.app == 'torch': return insert(p.text, 'data', "x = x * 1e-4")
    if p.app == 'tabular':
        new = insert(p.text, 'data', "for c in ['age', 'hours', 'score']: df[c] = df[c] * 1e-4")
        return sub(new, "procs=[Categorify, FillMissing, Normalize]", "procs=[Categorify, FillMissing]")
    return None

# ------------------------------------------------------------------------------------------------------------ model/activation
def _last_linear(text:str):
    "The text of the model's final nn.Linear (`nn.Linear(32, N_OUT)`), or None"
    m = re.findall(r'nn\.Linear\(\d+, N_OUT\)', text)
    return m[-1] if m else None

@operator('model/activation', 'fault', "DC add_activation_function (AAL); TX Model > Layers > Activation function > redundant softmax; seed 001",
          names=('check_loss_activation',))
def softmax_before_cross_entropy(p):
    "A softmax on the logits that a cross-entropy loss then log-softmaxes again"
    if 'ce' not in p.tags or 'inline_model' not in p.tags: return None
    last = _last_linear(p.text)
    if last: return sub(p.text, last + ')', last + ', nn.Softmax(dim=1))')
    return sub(p.text, "nn.Conv2d(16, N_OUT, 1))", "nn.Conv2d(16, N_OUT, 1), nn.Softmax(dim=1))")

@operator('model/activation', 'fault', "TX Model > Layers > Activation function > wrong activation function (ReLU on the output); user_bug_01",
          names=('check_loss_activation', 'check_output_variation'))
def relu_on_output(p):
    "A ReLU after the last layer: the negative logits (or targets) clipped to 0"
    if 'inline_model' not in p.tags: return None
    last = _last_linear(p.text)
    if last: return sub(p.text, last, last + ', nn.ReLU()')
    return sub(p.text, "nn.Conv2d(16, N_OUT, 1))", "nn.Conv2d(16, N_OUT, 1), nn.ReLU())")

@operator('model/activation', 'fault', "DC remove_activation_function (ARM); TX Model > Layers > Activation function > missing activation function",
          names=('cause:with a ReLU after each linear layer',))
def remove_activations(p):
    "Every ReLU removed: the network collapses to a linear model"
    if 'inline_model' not in p.tags: return None
    return sub(p.text, "nn.ReLU()", "nn.Identity()", 0)

@operator('model/activation', 'fault', "DC change_activation_function (ACH); TX Model > Layers > Activation function > wrong type of activation function",
          names=('cause:with its hidden',))
def sigmoid_activations(p):
    if 'inline_model' not in p.tags: return None
    return sub(p.text, "nn.ReLU()", "nn.Sigmoid()", 0)

@operator('model/activation', 'fault', "DC remove_bias (WRB); TX Model > Layers > Layer properties > missing bias")
def remove_bias(p):
    if 'inline_model' not in p.tags: return None
    return resub(p.text, r'nn\.(Linear|Conv2d)\(([^()]*)\)', lambda m: f"nn.{m.group(1)}({m.group(2)}, bias=False)")

@operator('model/activation', 'fault', "TX Model > Layers > Layer properties > wrong defined output shape; the users' report user_bug_02")
def too_many_outputs(p):
    "More outputs than classes"
    if p.kind not in ('single', 'multi', 'torch_class', 'seg'): return None
    return (sub(p.text, "N_OUT = len(dls.vocab)", "N_OUT = len(dls.vocab) + 8") or sub(p.text, "N_OUT = 2\n", "N_OUT = 10\n")
            or sub(p.text, "N_OUT = len(SEG_CODES)", "N_OUT = len(SEG_CODES) + 8") or sub(p.text, "n_out=len(dls.vocab)", "n_out=len(dls.vocab) + 8"))

@operator('model/activation', 'fault', "TX Model > Layers > Activation function > wrong output range (y_range that excludes the targets)",
          names=('check_target_range', 'check_output_variation', 'check_metric_baseline'))
def wrong_output_range(p):
    return (sub(p.text, "y_range=(0, 100)", "y_range=(0, 1)") or sub(p.text, "y_range=(0, 5.5)", "y_range=(0, 1)")
            or sub(p.text, "SigmoidRange(-1.1, 1.1)", "SigmoidRange(0, 1)"))

@operator('model/activation', 'tuning', "seed 001's 'half width' ablation; DC has no operator for it (a tuning choice)")
def narrower_layers(p):
    "Hidden layers of half the width"
    return (sub(p.text, "layers=[64, 32]", "layers=[32, 16]") or sub(p.text, "layers=[32]", "layers=[16]") or sub(p.text, "n_factors=8", "n_factors=4")
            or resub(resub(p.text, r"nn\.Linear\((\d+), 32\)", r"nn.Linear(\1, 16)") or '', r"nn\.(Linear\(|BatchNorm1d\()32\b", r"nn.\g<1>16") or None)

# ------------------------------------------------------------------------------------------------------------ loss
@operator('loss', 'fault', "DC change_loss_function (LCH); TX Training > Loss function > wrong selection of loss function (softmax CE for multi-label)",
          names=('check_loss_activation',))
def cross_entropy_for_multilabel(p):
    return sub(p.text, "loss_func=BCEWithLogitsLossFlat()", "loss_func=nn.CrossEntropyLoss()")

@operator('loss', 'fault', "DC change_loss_function (LCH); TX Training > Loss function > wrong selection of loss function (NLL on raw logits)",
          names=('check_loss_activation', 'check_loss_at_init'))
def nll_on_logits(p):
    "nn.NLLLoss on logits that no log_softmax produced"
    if p.kind == 'seg': return None
    return sub(p.text, "loss_func=CrossEntropyLossFlat()", "loss_func=nn.NLLLoss()") or sub(p.text, "loss_func=nn.CrossEntropyLoss()", "loss_func=nn.NLLLoss()")

@operator('loss', 'fault', "TX Training > Loss function > wrong loss (MSE over broadcast shapes (N, 1) against (N,)); user_bug_31",
          names=('loss_shape_broadcast', 'LossShapeGuard'))
def mse_broadcast(p):
    return sub(p.text, "nn.Linear(32, N_OUT), nn.Flatten(0))", "nn.Linear(32, N_OUT))")

@operator('loss', 'tuning', "a choice of loss (label smoothing), weighed by `ablate`")
def label_smoothing(p):
    return sub(p.text, "loss_func=CrossEntropyLossFlat()", "loss_func=LabelSmoothingCrossEntropyFlat()") if p.kind == 'single' else None

@operator('loss', 'tuning', "a choice of loss (L1 against MSE for a regression), weighed by `ablate`")
def l1_instead_of_mse(p):
    return sub(p.text, "loss_func=MSELossFlat()", "loss_func=L1LossFlat()") if p.kind in ('regression', 'points') else None

# ------------------------------------------------------------------------------------------------------------ optimiser/lr
@operator('optimiser/lr', 'fault', "DC change_learning_rate (HLR) beyond a decade; TX Training > Hyperparameters > suboptimal learning rate (too high)",
          names=('check_lr', 'non_finite', 'lr_find'))
def lr_1000x(p): return constant(p.text, 'LR', lambda lr: lr * 1000)

@operator('optimiser/lr', 'fault', "DC change_learning_rate (HLR) beyond a decade; TX Training > Hyperparameters > suboptimal learning rate (too low); tt2_bug_10",
          names=('check_lr', 'steps_too_small'))
def lr_div_1000(p): return constant(p.text, 'LR', lambda lr: lr / 1000)

@operator('optimiser/lr', 'tuning', "DC change_learning_rate (HLR) within a decade: a tuning choice")
def lr_3x(p): return constant(p.text, 'LR', lambda lr: lr * 3)

@operator('optimiser/lr', 'tuning', "DC change_learning_rate (HLR) within a decade: a tuning choice")
def lr_div_3(p): return constant(p.text, 'LR', lambda lr: lr / 3)

@operator('optimiser/lr', 'fault', "DC change_optimisation_function (OCH); TX Training > Optimiser > wrong optimisation function (SGD without momentum at Adam's rate)",
          names=('steps_too_small',))
def sgd_without_momentum(p):
    if 'opt_func=' in p.text: return resub(p.text, r"opt_func=(Adam|partial\(SGD, mom=0\.9\))", "opt_func=SGD", count=1)
    return resub(p.text, r"(learn = Learner\(dls, model, )", r"\1opt_func=SGD, ", count=1) or resub(p.text, r"(learn = \w+\(dls, (?:tiny_arch, |AWD_LSTM, )?)", r"\1opt_func=SGD, ", count=1)

@operator('optimiser/lr', 'fault', "DC change_gradient_clip (OCG); TX Training > Optimiser (gradient clipped to almost nothing)",
          names=('gradients_shrunk', 'check_gradient_flow', 'unchanged_parameters', 'steps_too_small'))
def clip_gradients_tiny(p): return with_callback(p.text, '', 'GradientClip(max_norm=1e-5)')

@operator('optimiser/lr', 'tuning', "DC change_batch_size (HBS): a tuning choice")
def batch_size_double(p): return constant(p.text, 'BS', lambda bs: bs * 2)

@operator('optimiser/lr', 'tuning', "DC change_epochs (HNE): a tuning choice")
def fewer_epochs(p): return constant(p.text, 'EPOCHS', lambda n: n - 1 if n > 1 else None)

@operator('optimiser/lr', 'tuning', "a schedule choice: a constant rate (`fit`) in place of one cycle")
def constant_schedule(p): return sub(p.text, "learn.fit_one_cycle(EPOCHS, LR", "learn.fit(EPOCHS, LR")

# ------------------------------------------------------------------------------------------------------------ weights/freezing
@operator('weights/freezing', 'fault', "DC change_weights_initialisation (WCI, to zeros); TX Model > Model type & properties > wrong weight initialization",
          names=('check_gradient_flow', 'check_output_variation', 'check_loss_at_init'))
def zero_init(p):
    return insert(p.text, 'learner', "for param in learn.model.parameters(): nn.init.zeros_(param)")

@operator('weights/freezing', 'fault', "DC change_weights_initialisation (WCI, huge normal); TX Model > Model type & properties > wrong weight initialization",
          names=('check_loss_at_init', 'non_finite', 'check_output_variation'))
def huge_init(p):
    return insert(p.text, 'learner', "for param in learn.model.parameters():\n    if param.dim() > 1: nn.init.normal_(param, std=3.0)")

@operator('weights/freezing', 'fault', "TX Training > Training process > wrong layers frozen (everything but the head frozen, the body random); user_bug_32",
          names=('check_frozen', 'frozen_head', 'only_norm_trains', 'frozen_at_init', 'FrozenInitGuard'))
def freeze_all_but_head(p):
    "Every parameter but the last layer's frozen, though the body was never trained"
    if p.app == 'lm': return None
    if 'vision_learner' in p.tags: return sub(p.text, "learn.unfreeze()\n", "learn.freeze()\n")
    return insert(p.text, 'learner', "params = list(learn.model.parameters())\nfor param in params[:-2]: param.requires_grad_(False)")

@operator('weights/freezing', 'fault', "TX Training > Training process > model not trained (the optimizer built before the head is replaced); tt2_bug_01",
          names=('check_optimizer_coverage', 'unchanged_parameters'))
def head_replaced_after_optimizer(p):
    if p.app == 'lm': return None
    return insert(p.text, 'learner', """learn.create_opt()
head_name, head = [(n, m) for n, m in learn.model.named_modules() if isinstance(m, nn.Linear)][-1]
parent = learn.model.get_submodule(head_name.rsplit('.', 1)[0]) if '.' in head_name else learn.model
setattr(parent, head_name.rsplit('.', 1)[-1], nn.Linear(head.in_features, head.out_features, bias=head.bias is not None))""") if (
        'nn.Linear' in p.text or 'use_nn=True' in p.text or p.app in ('tabular', 'text', 'vision')) else None # (collab's dot product has no linear layer)

# ------------------------------------------------------------------------------------------------------------ regularisation
@operator('regularisation', 'fault', "DC change_dropout_rate (RDL); TX Model > Layers > Layer properties > wrong dropout rate (0.9)",
          names=('high_dropout', 'DropoutGuard'))
def dropout_rate_high(p):
    return (sub(p.text, "config=tabular_config(ps=0.1)", "config=tabular_config(ps=0.9)") or sub(p.text, "nn.Dropout(0.1)", "nn.Dropout(0.9)")
            or resub(p.text, r"drop_mult=0\.\d", "drop_mult=1.9", count=1))

@operator('regularisation', 'fault', "DC add_weights_regularisation / change_weights_regularisation (RAW, RCW); TX Training > Hyperparameters > wrong regularisation (weight decay 10)",
          names=('weight_decay_too_strong', 'weight_decay_dominates'))
def weight_decay_huge(p):
    return resub(p.text, r"learn\.(fit_one_cycle|fit)\(EPOCHS, LR(, wd=[0-9.e-]+)?", r"learn.\1(EPOCHS, LR, wd=10.0", count=1)

@operator('regularisation', 'tuning', "DC remove_weights_regularisation (RRW): weight decay off, a tuning choice")
def no_weight_decay(p):
    return resub(p.text, r"learn\.(fit_one_cycle|fit)\(EPOCHS, LR(, wd=[0-9.e-]+)?", r"learn.\1(EPOCHS, LR, wd=0.0", count=1)

@operator('regularisation', 'tuning', "DC change_dropout_rate (RDL) within reason: a tuning choice")
def dropout_rate_lower(p):
    return (sub(p.text, "config=tabular_config(ps=0.1)", "config=tabular_config(ps=0.02)") or sub(p.text, "nn.Dropout(0.1)", "nn.Dropout(0.02)")
            or resub(p.text, r"drop_mult=0\.\d", "drop_mult=0.1", count=1))

# ------------------------------------------------------------------------------------------------------------ loop/callbacks
@operator('loop/callbacks', 'fault', "IS Structural bug > control and sequence (the optimizer step skipped); TX Training > Training process",
          names=('no_optimizer_step', 'skipped_steps', 'unchanged_parameters'))
def skip_optimizer_step(p):
    cls = "class SkipStep(Callback):\n    def before_step(self): raise CancelStepException()\n"
    return with_callback(p.text, cls, 'SkipStep()')

@operator('loop/callbacks', 'fault', "IS Structural bug > control and sequence (zero_grad skipped: gradients accumulate over the fit); user_bug_26",
          names=('stale_gradients', 'StaleGradGuard'))
def skip_zero_grad(p):
    cls = "class CancelAfterStep(Callback):\n    def after_step(self): raise CancelBatchException()\n"
    return with_callback(p.text, cls, 'CancelAfterStep()')

@operator('loop/callbacks', 'fault', "IS Structural bug > data flow (the backward pass cancelled: no gradients); TX Training > Training process",
          names=('no_optimizer_step', 'unchanged_parameters', 'check_gradient_flow'))
def skip_backward(p):
    cls = "class SkipBackward(Callback):\n    def before_backward(self): raise CancelBackwardException()\n"
    return with_callback(p.text, cls, 'SkipBackward()')

@operator('loop/callbacks', 'fault', "IS Structural bug > data flow (a callback shuffles the targets inside each batch); TX Training data quality > wrong labels",
          names=('check_metric_baseline', 'targets_reordered', 'TargetOrderGuard'))
def shuffle_targets_in_batch(p):
    if p.app == 'lm': return None
    cls = ("class ShuffleTargets(Callback):\n    def before_batch(self):\n        if self.training:\n"
           "            self.learn.yb = tuple(t[torch.randperm(len(t))] for t in self.yb)\n")
    return with_callback(p.text, cls, 'ShuffleTargets()')

@operator('loop/callbacks', 'fault', "IS API misuse (the model left in eval mode while training: BatchNorm and dropout frozen); TX Training > Training process",
          names=('held_bn_moved', 'eval_mode'))
def eval_mode_during_training(p):
    if not p.tags & {'batchnorm', 'dropout'}: return None
    cls = "class EvalDuringTraining(Callback):\n    order = 1\n    def before_batch(self): self.model.eval()\n"
    return with_callback(p.text, cls, 'EvalDuringTraining()')

@operator('loop/callbacks', 'fault', "IS Structural bug > control and sequence (the inputs zeroed in the training batches only); TX Tensors & Inputs > wrong input",
          names=('constant_inputs', 'ConstantInputGuard'))
def train_inputs_zeroed(p):
    if p.app in ('text', 'lm', 'collab', 'tabular'): return None
    cls = ("class ZeroTrainInputs(Callback):\n    def before_batch(self):\n        if self.training: self.learn.xb = tuple(torch.zeros_like(x) for x in self.xb)\n")
    return with_callback(p.text, cls, 'ZeroTrainInputs()')

@operator('loop/callbacks', 'tuning', "DC change_earlystopping_patience: a tuning choice")
def early_stopping_patience_0(p):
    new = with_callback(p.text, '', "EarlyStoppingCallback(monitor='valid_loss', patience=0)")
    return constant(new, 'EPOCHS', lambda n: n + 1) if new else None

# ------------------------------------------------------------------------------------------------------------ validation/metrics
@operator('validation/metrics', 'fault', "TX Training > Validation/Testing > wrong performance metric (multi-label accuracy on logits, no sigmoid)",
          contract=True, names=('check_metric_activation',))
def metric_without_sigmoid(p):
    return sub(p.text, "metrics=partial(accuracy_multi, thresh=0.5)", "metrics=partial(accuracy_multi, thresh=0.5, sigmoid=False)")

@operator('validation/metrics', 'fault', "TX Training > Validation/Testing > wrong performance metric (the model's quality reported on the training set)",
          contract=True, names=('scored_on_training_items',))
def report_on_training_set(p):
    "The number the script reports is `validate` on the training loader"
    if p.app == 'torch': return None
    return insert(p.text, 'after', "print('accuracy reported:', learn.validate(dl=learn.dls.train))")

@operator('validation/metrics', 'fault', "TX Training > Validation/Testing (the tracker monitors the training loss and keeps the model it likes best); user_bug_04",
          names=('check_tracker_monitor',))
def save_best_on_train_loss(p):
    return with_callback(p.text, '', "SaveModelCallback(monitor='train_loss', fname='best')") if p.app != 'torch' else None

# ------------------------------------------------------------------------------------------------------------ save/load/export
@operator('save/load/export', 'fault', "TX Training > Training process > wrong model loading (the initial weights loaded after the fit)",
          names=('discarded_fit', 'LoadGuard'))
def load_initial_weights_after_fit(p):
    if p.app == 'torch': return None
    new = insert(p.text, 'learner', "learn.save('checkpoint')")
    return insert(new, 'after', "learn.load('checkpoint')")

@operator('save/load/export', 'fault', "TX Training > Training process > wrong model saving (the Learner exported before the fit, the export used after it)",
          names=('discarded_fit', 'LoadGuard', 'export_refers_to_paranoid'))
def export_before_fit(p):
    if p.app in ('torch', 'lm'): return None
    new = insert(p.text, 'learner', "learn.export('model.pkl')")
    return insert(new, 'after', "learn = load_learner('model.pkl')")
