"""Offline stand-ins for the datasets that the held-out scripts beside this file download (`untar_data`, Kaggle), in each
dataset's own folder and file layout, so that every script keeps its source's fastai calls and only swaps the data.

Written for this held-out corpus (issue 40, item 3), independently of tests/external/synth.py: the signals differ on
purpose. Every dataset is learnable, as the real one is, so a healthy pipeline trains as it would on the real data:
- images: each class puts a bright disc at its own place on a textured background and tints the image its own way;
  multi-label images carry one disc per label; segmentation masks are the discs' pixels, labelled by class;
- tables: the target is a noisy function of several columns (categorical and continuous);
- ratings: a user bias plus an item bias plus a dot product of hidden factors, plus noise;
- text: reviews drawn from a random vocabulary of made-up words, where a positive review uses more words of one group
  and a negative one of another; a language-model corpus of sentences from a small random grammar.
Everything is written once per process, under a fresh temporary folder (removed at exit) whose path, as a real
dataset's, has no '_' before a digit."""
import atexit, os, random, re, shutil, tempfile
from pathlib import Path
import numpy as np
import pandas as pd
from PIL import Image

def _root() -> Path:
    r"""A fresh temporary folder with no '_' before a digit in its path, as a real dataset's: a label regex written for the
    whole path (walkwithfastai's r'/([^/]+)_\d+.*' takes the first `<name>_<digits>` anywhere in it) would read a folder
    such as `heldout_data_5kx9` for a pet's `<breed>_<n>` and label every image `heldout_data`; mkdtemp's suffix can hold one"""
    for _ in range(100):
        root = Path(tempfile.mkdtemp(prefix='heldout-data-'))
        if not re.search(r'_\d', str(root)): return root
        root.rmdir()
    return Path(tempfile.mkdtemp(prefix='heldout-data-'))

ROOT = _root()
atexit.register(shutil.rmtree, ROOT, True)

def seed_everything(seed=42):
    "Seed python, numpy and torch, as the recipes' set_seed does"
    import torch
    random.seed(seed); np.random.seed(seed); torch.manual_seed(seed)

# ---- images

def _centre(label:int, n_classes:int):
    "The disc's centre (fractions of height and width) for a class: classes go round a circle"
    a = 2 * np.pi * label / max(n_classes, 1)
    return 0.5 + 0.3 * np.sin(a), 0.5 + 0.3 * np.cos(a)

def _canvas(h, w, rng, tint):
    "A smooth random texture plus a per-class tint, float32 HxWx3 in 0..255"
    low = rng.uniform(60, 190, (max(2, h // 16), max(2, w // 16), 3)).astype(np.float32)
    img = np.asarray(Image.fromarray(low.astype(np.uint8)).resize((w, h), Image.BILINEAR), np.float32)
    return img + tint + rng.normal(0, 12, (h, w, 3)).astype(np.float32)

def _disc(h, w, centre, radius):
    yy, xx = np.mgrid[:h, :w]
    return ((yy - centre[0] * h) ** 2 + (xx - centre[1] * w) ** 2) <= radius ** 2

def class_image(label:int, n_classes:int, size, rng, mode='RGB') -> Image.Image:
    "An image of class `label`: a bright disc at the class's place, the background tinted by the class"
    h, w = (size, size) if isinstance(size, int) else size
    tint = 25 * np.array([np.cos(label), np.sin(label), np.cos(2 * label)], np.float32)
    img = _canvas(h, w, rng, tint)
    img[_disc(h, w, _centre(label, n_classes), min(h, w) * 0.13)] = (250, 245, 235)
    out = Image.fromarray(img.clip(0, 255).astype(np.uint8))
    return out.convert('L') if mode == 'L' else out

def image_tree(name, classes, n_per_class=10, size=64, splits=('train', 'valid'), n_valid=None, mode='RGB', ext='png', seed=0) -> Path:
    "`<name>/<split>/<class>/<i>.<ext>` (Imagenette, MNIST), or `<name>/<class>/<i>.<ext>` with splits=(None,) (a user's folder)"
    path = ROOT / name
    if path.exists(): return path
    rng = np.random.default_rng(seed)
    for split in splits:
        n = n_per_class if split in (None, 'train', 'training') else (n_valid or max(3, n_per_class // 4))
        for c, cls in enumerate(classes):
            folder = path / split / cls if split else path / cls
            folder.mkdir(parents=True)
            for i in range(n): class_image(c, len(classes), size, rng, mode).save(folder / f'{cls}_{i}.{ext}')
    return path

PETS = ['Abyssinian', 'Bengal', 'Birman', 'Bombay', 'British_Shorthair', 'Egyptian_Mau', 'Maine_Coon', 'Persian',
        'american_bulldog', 'american_pit_bull_terrier', 'basset_hound', 'beagle', 'boxer', 'chihuahua', 'english_cocker_spaniel',
        'havanese', 'keeshond', 'newfoundland', 'pomeranian', 'pug']

def pets(n_images=200, size=(160, 200), n_breeds=10, seed=0) -> Path:
    "URLs.PETS: `images/<breed>_<i>.png`, cat breeds capitalised (is_cat reads the first letter); n_images spread over n_breeds breeds (half cats, at most the 8 of PETS)"
    path = ROOT / f'oxford-iiit-pet-{n_images}-{n_breeds}'
    if path.exists(): return path
    (path / 'images').mkdir(parents=True)
    cats = PETS[:min(n_breeds // 2, 8)] # PETS[:n_breeds // 2] took dogs past 16 breeds, twice, and their files overwrote each other
    breeds = cats + PETS[8:8 + n_breeds - len(cats)]
    rng = np.random.default_rng(seed)
    for i in range(n_images):
        b = i % len(breeds)
        class_image(b, len(breeds), size, rng).save(path / 'images' / f'{breeds[b]}_{i // len(breeds) + 1}.png')
    return path

def multilabel(n=80, size=(96, 128), labels=('person', 'car', 'dog', 'cat', 'chair', 'bird'), valid_frac=0.25, folder='train', seed=0) -> Path:
    "PASCAL 2007 / Planet style: `<folder>/<i>.png` and `<folder>.csv` with fname, space-separated labels, is_valid"
    path = ROOT / f'multilabel_{folder}'
    if path.exists(): return path
    (path / folder).mkdir(parents=True)
    rng, rows = np.random.default_rng(seed), []
    h, w = size
    for i in range(n):
        ls = sorted(rng.choice(len(labels), rng.integers(1, 4), replace=False))
        img = _canvas(h, w, rng, np.zeros(3, np.float32))
        for l in ls: img[_disc(h, w, _centre(l, len(labels)), min(h, w) * 0.11)] = (250, 240, 230)
        fname = f'{i:06d}.png'
        Image.fromarray(img.clip(0, 255).astype(np.uint8)).save(path / folder / fname)
        rows.append(dict(fname=fname, labels=' '.join(labels[l] for l in ls), is_valid=bool(rng.random() < valid_frac)))
    pd.DataFrame(rows).to_csv(path / f'{folder}.csv', index=False)
    return path

CAMVID_CODES = ['Void', 'Building', 'Car', 'Pedestrian', 'Road', 'Sky', 'Tree', 'Sign']

def camvid(n=30, size=(96, 128), n_valid=6, seed=0) -> Path:
    "URLs.CAMVID(_TINY): `images/<stem>.png`, `labels/<stem>_P.png` (a code per pixel), `codes.txt`, `valid.txt`"
    path = ROOT / 'camvid'
    if path.exists(): return path
    for d in ('images', 'labels'): (path / d).mkdir(parents=True)
    rng, (h, w) = np.random.default_rng(seed), size
    names = []
    for i in range(n):
        img, mask = _canvas(h, w, rng, np.zeros(3, np.float32)), np.zeros((h, w), np.uint8)
        mask[h // 2:] = 4; img[h // 2:] = img[h // 2:] * 0.5 + 40   # road, darker
        mask[:h // 5] = 5; img[:h // 5] = img[:h // 5] * 0.4 + (110, 150, 200)  # sky, blue
        for k in rng.choice([1, 2, 3, 6, 7], 3, replace=False):
            d = _disc(h, w, (rng.uniform(0.3, 0.8), rng.uniform(0.15, 0.85)), min(h, w) * rng.uniform(0.08, 0.16))
            mask[d] = k; img[d] = 30 + 27 * k
        stem = f'0016E5_{i:05d}'
        Image.fromarray(img.clip(0, 255).astype(np.uint8)).save(path / 'images' / f'{stem}.png')
        Image.fromarray(mask).save(path / 'labels' / f'{stem}_P.png')
        names.append(f'{stem}.png')
    (path / 'codes.txt').write_text('\n'.join(CAMVID_CODES))
    (path / 'valid.txt').write_text('\n'.join(names[-n_valid:]))
    return path

# ---- tables

def adult(n=2000, seed=0) -> Path:
    "URLs.ADULT_SAMPLE: `adult.csv` with the census columns (some missing) and salary '>=50k' / '<50k'"
    path = ROOT / 'adult_sample'
    if path.exists(): return path
    path.mkdir(parents=True)
    rng = np.random.default_rng(seed)
    pick = lambda opts: rng.choice(opts, n)
    df = pd.DataFrame({'age': rng.integers(17, 80, n), 'workclass': pick([' Private', ' Self-emp-inc', ' State-gov', ' Local-gov', ' ?']),
                       'fnlwgt': rng.integers(20_000, 600_000, n),
                       'education': pick([' HS-grad', ' Bachelors', ' Masters', ' Some-college', ' Doctorate', ' 11th']),
                       'education-num': rng.integers(5, 17, n).astype(float),
                       'marital-status': pick([' Married-civ-spouse', ' Never-married', ' Divorced', ' Widowed']),
                       'occupation': pick([' Exec-managerial', ' Craft-repair', ' Sales', ' Prof-specialty', ' Other-service']),
                       'relationship': pick([' Husband', ' Wife', ' Own-child', ' Not-in-family', ' Unmarried']),
                       'race': pick([' White', ' Black', ' Asian-Pac-Islander', ' Other']), 'sex': pick([' Male', ' Female']),
                       'capital-gain': np.where(rng.random(n) < 0.1, rng.integers(1000, 20000, n), 0), 'capital-loss': 0,
                       'hours-per-week': rng.integers(10, 70, n), 'native-country': ' United-States'})
    score = (0.05 * (df.age - 40) + 0.35 * (df['education-num'] - 10) + 1.2 * (df['marital-status'] == ' Married-civ-spouse')
             + 0.8 * df.occupation.isin([' Exec-managerial', ' Prof-specialty']) + 0.02 * (df['hours-per-week'] - 40))
    df['salary'] = np.where(score + rng.normal(0, 0.8, n) > 1.0, '>=50k', '<50k')
    df.loc[rng.random(n) < 0.05, 'education-num'] = np.nan
    df.to_csv(path / 'adult.csv', index=False)
    return path

def titanic(n_train=891, n_test=418, seed=0) -> Path:
    "Kaggle titanic: `train.csv` (with Survived) and `test.csv`, the competition's columns"
    path = ROOT / 'titanic'
    if path.exists(): return path
    path.mkdir(parents=True)
    rng = np.random.default_rng(seed)
    def make(n, start):
        sex, pclass = rng.choice(['male', 'female'], n, p=[0.65, 0.35]), rng.choice([1, 2, 3], n, p=[0.25, 0.2, 0.55])
        title = np.where(sex == 'female', rng.choice(['Miss', 'Mrs'], n), rng.choice(['Mr', 'Master', 'Dr'], n, p=[0.85, 0.1, 0.05]))
        age = np.where(rng.random(n) < 0.2, np.nan, rng.gamma(6, 5, n).round())
        df = pd.DataFrame({'PassengerId': np.arange(start, start + n), 'Pclass': pclass,
                           'Name': [f'Surname{i}, {t}. Given' for i, t in zip(range(n), title)], 'Sex': sex, 'Age': age,
                           'SibSp': rng.poisson(0.5, n), 'Parch': rng.poisson(0.4, n), 'Ticket': [f'T{k}' for k in rng.integers(0, n // 2, n)],
                           'Fare': np.round(rng.gamma(2, 8 * (4 - pclass)), 2),
                           'Cabin': np.where(rng.random(n) < 0.25, [f'{d}{k}' for d, k in zip(rng.choice(list('ABCDEFG'), n), rng.integers(1, 99, n))], None),
                           'Embarked': rng.choice(['S', 'C', 'Q', None], n, p=[0.7, 0.19, 0.09, 0.02])})
        logit = 2.3 * (sex == 'female') - 0.9 * (pclass - 2) - 0.02 * (np.nan_to_num(age, nan=30) - 30) - 0.3
        return df, (logit + rng.logistic(size=n) > 0).astype(int)
    trn, y = make(n_train, 1)
    trn.insert(1, 'Survived', y)
    trn.to_csv(path / 'train.csv', index=False)
    make(n_test, n_train + 1)[0].to_csv(path / 'test.csv', index=False)
    return path

def movielens(n_users=100, n_items=80, n_ratings=4000, n_factors=4, seed=0) -> Path:
    "URLs.ML_SAMPLE / ML_100k style: `ratings.csv` (userId, movieId, rating, timestamp) and `movies.csv` (movieId, title)"
    path = ROOT / 'movielens'
    if path.exists(): return path
    path.mkdir(parents=True)
    rng = np.random.default_rng(seed)
    u, m = rng.normal(0, 0.8, (n_users, n_factors)), rng.normal(0, 0.8, (n_items, n_factors))
    bu, bm = rng.normal(0, 0.4, n_users), rng.normal(0, 0.5, n_items)
    pairs = rng.choice(n_users * n_items, n_ratings, replace=False)
    us, ms = pairs // n_items, pairs % n_items
    r = 3.5 + bu[us] + bm[ms] + (u[us] * m[ms]).sum(1) * 0.5 + rng.normal(0, 0.3, n_ratings)
    pd.DataFrame({'userId': us + 1, 'movieId': ms + 1, 'rating': np.clip(np.round(r * 2) / 2, 0.5, 5.0),
                  'timestamp': rng.integers(9e8, 1.2e9, n_ratings)}).to_csv(path / 'ratings.csv', index=False)
    pd.DataFrame({'movieId': np.arange(1, n_items + 1), 'title': [f'Film number {i} ({1950 + i % 60})' for i in range(n_items)]}).to_csv(path / 'movies.csv', index=False)
    return path

# ---- text

def _words(n, rng, length=(3, 8)):
    letters = list('abcdefghijklmnoprstuvw')
    out = set()
    while len(out) < n: out.add(''.join(rng.choice(letters, rng.integers(*length))))
    return sorted(out)

def _review(rng, common, pos, neg, label, n_words):
    "A review: common words, and ~15% words of its sentiment's group (3% of the other's), sentences with punctuation"
    words = []
    for _ in range(n_words):
        r = rng.random()
        words.append(rng.choice(pos if label else neg) if r < 0.15 else rng.choice(neg if label else pos) if r < 0.18 else rng.choice(common))
    words[0] = words[0].capitalize()
    for k in range(8, n_words, 9): words[k] += '.'
    return ' '.join(words) + '.'

def reviews(n=300, n_words=(40, 90), seed=0):
    "A DataFrame of n reviews: text, label ('positive'/'negative'), is_valid (20%)"
    rng = np.random.default_rng(seed)
    vocab = _words(400, rng)
    common, pos, neg = vocab[:340], vocab[340:370], vocab[370:]
    labels = rng.integers(0, 2, n)
    texts = [_review(rng, common, pos, neg, l, rng.integers(*n_words)) for l in labels]
    return pd.DataFrame({'text': texts, 'label': np.where(labels, 'positive', 'negative'), 'is_valid': rng.random(n) < 0.2})

def imdb(n_train=240, n_test=80, n_unsup=80, seed=0) -> Path:
    "URLs.IMDB: `train/{pos,neg}/*.txt`, `test/{pos,neg}/*.txt`, `unsup/*.txt`, and IMDB_SAMPLE's `texts.csv`"
    path = ROOT / 'imdb'
    if path.exists(): return path
    df = reviews(n_train + n_test + n_unsup, seed=seed)
    for i, row in df.iterrows():
        split = 'train' if i < n_train else 'test' if i < n_train + n_test else 'unsup'
        folder = path / split / ('' if split == 'unsup' else 'pos' if row.label == 'positive' else 'neg')
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f'{i}_{7 if row.label == "positive" else 2}.txt').write_text(row.text)
    df.iloc[:n_train + n_test].assign(is_valid=[i >= n_train for i in range(n_train + n_test)]).to_csv(path / 'texts.csv', index=False)
    return path

def _sentence(rng, nouns, verbs, adjs, dets):
    "One sentence of a tiny grammar: det (adj) noun verb det noun, so a language model has structure to learn"
    s = [rng.choice(dets)] + ([rng.choice(adjs)] if rng.random() < 0.5 else []) + [rng.choice(nouns), rng.choice(verbs), rng.choice(dets), rng.choice(nouns)]
    return ' '.join(s) + ' .'

def wikitext(n_train=60, n_valid=12, sentences=(6, 14), seed=0) -> Path:
    "URLs.WIKITEXT_TINY: `train.txt`/`valid.txt` of articles ' = Title = ' then paragraphs, and `train.csv`/`test.csv` (one article a row)"
    path = ROOT / 'wikitext-2'
    if path.exists(): return path
    path.mkdir(parents=True)
    rng = np.random.default_rng(seed)
    ws = _words(260, rng)
    nouns, verbs, adjs, dets = ws[:120], ws[120:190], ws[190:250], ['the', 'a', 'this', 'every', 'no']
    def article(i):
        paras = [' '.join(_sentence(rng, nouns, verbs, adjs, dets) for _ in range(rng.integers(*sentences))) for _ in range(2)]
        return f' = {nouns[i % len(nouns)].capitalize()} {i} = \n \n ' + ' \n '.join(paras) + ' \n'
    for name, n, off in (('train', n_train, 0), ('valid', n_valid, n_train), ('test', n_valid, n_train + n_valid)):
        arts = [article(off + i) for i in range(n)]
        (path / f'{name}.txt').write_text(' \n'.join(arts))
        if name != 'valid': pd.DataFrame({0: arts}).to_csv(path / f'{name}.csv', index=False, header=False)
    return path
