"""Synthetic stand-ins for the datasets of the fastai book and fastai's tutorials, in each dataset's real folder and file
layout, so that the scripts beside this file run offline and follow the book's calls literally.

The data are learnable (a class shifts an image's colour and draws a class-specific stripe; a tabular target is a
noisy function of the columns; a rating is a user bias plus a film bias plus a dot product), so a healthy pipeline
learns, as it would on the real data. Everything is written once per process under a temporary folder."""
import os, random, tempfile
from pathlib import Path
import numpy as np
import pandas as pd
from PIL import Image

ROOT = Path(os.environ.get('EXTERNAL_DATA', tempfile.gettempdir())) / f'fastai_paranoid_external_{os.getpid()}'

PET_BREEDS = ['Abyssinian', 'Bengal', 'Birman', 'Bombay', 'british_shorthair', 'beagle', 'boxer', 'chihuahua']

def _image(label:int, n_classes:int, size:int, rng, mode='RGB'):
    "A noisy image whose colour and stripe position depend on `label`"
    h, w = (size, size) if isinstance(size, int) else size
    base = np.zeros((h, w, 3), np.float32)
    hue = np.array([np.cos(2 * np.pi * label / n_classes), np.sin(2 * np.pi * label / n_classes), 0.0])
    base += 128 + 60 * hue
    stripe = int(h * (label + 0.5) / n_classes)
    base[max(0, stripe - h // 16):stripe + h // 16 + 1, :, :] = 230
    base += rng.normal(0, 25, base.shape)
    img = Image.fromarray(base.clip(0, 255).astype(np.uint8))
    return img.convert('L') if mode == 'L' else img

def pets(n_per_breed=10, size=32, breeds=PET_BREEDS, seed=0):
    "URLs.PETS: `images/` of files named `<breed>_<n>.jpg`, cats capitalised (the book's `is_cat`)"
    path = ROOT / 'oxford-iiit-pet'
    if (path / 'images').exists(): return path
    (path / 'images').mkdir(parents=True)
    rng = np.random.default_rng(seed)
    for b, breed in enumerate(breeds):
        for i in range(n_per_breed):
            _image(b, len(breeds), size, rng).save(path / 'images' / f'{breed}_{i + 1}.jpg')
    return path

def image_folders(name, classes, n_per_class=16, size=28, mode='RGB', splits=('train', 'valid'), seed=0, ext='png'):
    "An ImageNet-style tree `<split>/<class>/<n>.<ext>` (URLs.MNIST_SAMPLE, URLs.IMAGENETTE, the bears of chapter 2)"
    path = ROOT / name
    if path.exists(): return path
    rng = np.random.default_rng(seed)
    for split in splits:
        for c, cls in enumerate(classes):
            folder = path / split / cls if split else path / cls
            folder.mkdir(parents=True)
            for i in range(n_per_class if split != 'valid' else max(4, n_per_class // 3)):
                _image(c, len(classes), size, rng, mode).save(folder / f'{i}.{ext}')
    return path

def pascal(n=80, size=48, seed=0):
    "URLs.PASCAL_2007: `train/` images and `train.csv` with fname, space-separated labels and is_valid"
    path = ROOT / 'pascal_2007'
    if path.exists(): return path
    (path / 'train').mkdir(parents=True)
    rng = np.random.default_rng(seed)
    cats = ['person', 'car', 'dog', 'cat', 'chair', 'bird']
    rows = []
    for i in range(n):
        k = rng.integers(1, 3)
        labels = sorted(rng.choice(len(cats), k, replace=False))
        img = np.asarray(_image(labels[0], len(cats), size, rng), np.float32)
        for l in labels[1:]: img[:, int(size * (l + 0.5) / len(cats))] = 20 # a dark column per extra label
        fname = f'{i:06d}.jpg'
        Image.fromarray(img.clip(0, 255).astype(np.uint8)).save(path / 'train' / fname)
        rows.append({'fname': fname, 'labels': ' '.join(cats[l] for l in labels), 'is_valid': bool(rng.random() < 0.25)})
    pd.DataFrame(rows).to_csv(path / 'train.csv', index=False)
    return path

def biwi(n_people=4, n_per=10, size=(48, 64), seed=0):
    "URLs.BIWI_HEAD_POSE: `<person>/frame_<n>_rgb.jpg` and `frame_<n>_pose.txt`; the book's get_ctr reads the centre"
    path = ROOT / 'biwi_head_pose'
    if path.exists(): return path
    rng = np.random.default_rng(seed)
    h, w = size
    for p in range(1, n_people + 1):
        folder = path / f'{p:02d}'
        folder.mkdir(parents=True)
        for i in range(n_per):
            cy, cx = rng.integers(h // 4, 3 * h // 4), rng.integers(w // 4, 3 * w // 4)
            img = rng.normal(100, 20, (h, w, 3))
            img[max(0, cy - 4):cy + 4, max(0, cx - 4):cx + 4] = 240 # the "head"
            Image.fromarray(img.clip(0, 255).astype(np.uint8)).save(folder / f'frame_{i:05d}_rgb.jpg')
            (folder / f'frame_{i:05d}_pose.txt').write_text(f'{cx} {cy}\n')
    return path

def camvid(n=24, size=(32, 48), n_codes=4, seed=0):
    "URLs.CAMVID_TINY: `images/<n>.png`, `labels/<n>_P.png` and `codes.txt`"
    path = ROOT / 'camvid_tiny'
    if path.exists(): return path
    (path / 'images').mkdir(parents=True)
    (path / 'labels').mkdir()
    rng = np.random.default_rng(seed)
    h, w = size
    codes = ['Sky', 'Road', 'Car', 'Void'][:n_codes]
    (path / 'codes.txt').write_text('\n'.join(codes) + '\n')
    for i in range(n):
        mask = np.zeros((h, w), np.uint8)
        mask[h // 3:2 * h // 3] = 1
        mask[2 * h // 3:] = 2
        x0 = rng.integers(0, w - 8)
        mask[h // 2:h // 2 + 6, x0:x0 + 8] = 3
        img = np.stack([mask * 60.0 + 30, 200 - mask * 40.0, mask * 20.0 + 50], -1) + rng.normal(0, 15, (h, w, 3))
        Image.fromarray(img.clip(0, 255).astype(np.uint8)).save(path / 'images' / f'f{i:03d}.png')
        Image.fromarray(mask).save(path / 'labels' / f'f{i:03d}_P.png')
    return path

def adult(n=600, seed=0):
    "URLs.ADULT_SAMPLE: `adult.csv` with the census columns and a `salary` of '>=50k' / '<50k' that depends on them"
    path = ROOT / 'adult_sample'
    if path.exists(): return path
    path.mkdir(parents=True)
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({
        'age': rng.integers(17, 90, n), 'workclass': rng.choice([' Private', ' Self-emp', ' State-gov', ' ?'], n),
        'fnlwgt': rng.integers(20_000, 1_000_000, n),
        'education': rng.choice([' HS-grad', ' Bachelors', ' Masters', ' Doctorate', ' 11th'], n),
        'education-num': rng.integers(1, 17, n).astype(float),
        'marital-status': rng.choice([' Married-civ-spouse', ' Never-married', ' Divorced'], n),
        'occupation': rng.choice([' Tech-support', ' Sales', ' Exec-managerial', ' Craft-repair', None], n),
        'relationship': rng.choice([' Husband', ' Wife', ' Own-child', ' Not-in-family'], n),
        'race': rng.choice([' White', ' Black', ' Asian-Pac-Islander'], n)})
    df.loc[rng.random(n) < 0.05, 'education-num'] = np.nan
    score = 0.04 * (df.age - 40) + 0.3 * (df['education-num'].fillna(9) - 9) + 1.0 * (df['marital-status'] == ' Married-civ-spouse')
    df['salary'] = np.where(score + rng.normal(0, 0.7, n) > 0.8, '>=50k', '<50k')
    df.to_csv(path / 'adult.csv', index=False)
    return path

def titanic(n=891, seed=0):
    "Kaggle's titanic `train.csv` (fastai course22, lessons 5-6): PassengerId, Survived, Pclass, Name ('Braund, Mr. Owen Harris'), Sex, Age (20% missing), SibSp, Parch, Ticket, Fare, Cabin (77% missing), Embarked; survival depends on sex, title, class and age"
    path = ROOT / 'titanic'
    if path.exists(): return path
    path.mkdir(parents=True)
    rng = np.random.default_rng(seed)
    sex = rng.choice(['male', 'female'], n, p=[0.65, 0.35])
    title = np.where(sex == 'male', rng.choice(['Mr', 'Master', 'Rev', 'Dr'], n, p=[0.88, 0.08, 0.02, 0.02]),
                     rng.choice(['Mrs', 'Miss'], n, p=[0.45, 0.55]))
    given = rng.choice(['Owen Harris', 'John Bradley', 'Laina', 'Jacques Heath', 'William Henry', 'Elisabeth'], n)
    pclass = rng.choice([1, 2, 3], n, p=[0.24, 0.21, 0.55])
    age = np.where(title == 'Master', rng.uniform(1, 12, n), rng.normal(30, 12, n).clip(14, 80)).round()
    sibsp, parch = rng.choice([0, 1, 2, 3], n, p=[0.68, 0.23, 0.06, 0.03]), rng.choice([0, 1, 2], n, p=[0.76, 0.13, 0.11])
    ticket = rng.integers(110_000, 110_000 + n // 2, n).astype(str)
    fare = (rng.exponential(12, n) + {1: 60, 2: 20, 3: 8}[1] * (pclass == 1) + 20 * (pclass == 2) + 8 * (pclass == 3)).round(4)
    cabin = np.where(rng.random(n) < 0.77, None, [f"{d}{k}" for d, k in zip(rng.choice(list('ABCDEFG'), n), rng.integers(1, 130, n))])
    score = 2.2 * (sex == 'female') + 2.0 * (title == 'Master') - 0.9 * (pclass - 2) - 0.02 * (age - 30) + rng.normal(0, 1, n)
    df = pd.DataFrame({'PassengerId': np.arange(1, n + 1), 'Survived': (score > 1.0).astype(int), 'Pclass': pclass,
                       'Name': [f"Surname{i}, {t}. {g}" for i, (t, g) in enumerate(zip(title, given))], 'Sex': sex,
                       'Age': np.where(rng.random(n) < 0.2, np.nan, age), 'SibSp': sibsp, 'Parch': parch, 'Ticket': ticket,
                       'Fare': fare, 'Cabin': cabin, 'Embarked': rng.choice(['S', 'C', 'Q', None], n, p=[0.72, 0.19, 0.088, 0.002])})
    df.to_csv(path / 'train.csv', index=False)
    return path

def movielens(n_users=60, n_movies=50, n_ratings=1500, n_factors=4, seed=0):
    "URLs.ML_100k: `u.data` (tab-separated user, movie, rating, timestamp) and `u.item` (movie, title, ...; latin-1, '|')"
    path = ROOT / 'ml-100k'
    if path.exists(): return path
    path.mkdir(parents=True)
    rng = np.random.default_rng(seed)
    u, m = rng.normal(0, 1, (n_users, n_factors)), rng.normal(0, 1, (n_movies, n_factors))
    bu, bm = rng.normal(0, 0.5, n_users), rng.normal(0, 0.5, n_movies)
    pairs = rng.choice(n_users * n_movies, n_ratings, replace=False)
    users, movies = pairs // n_movies, pairs % n_movies
    r = 3 + bu[users] + bm[movies] + 0.5 * (u[users] * m[movies]).sum(1) + rng.normal(0, 0.3, n_ratings)
    ratings = pd.DataFrame({'user': users + 1, 'movie': movies + 1, 'rating': r.round().clip(1, 5).astype(int),
                            'timestamp': rng.integers(874_724_710, 893_286_638, n_ratings)})
    ratings.to_csv(path / 'u.data', sep='\t', header=False, index=False)
    with open(path / 'u.item', 'w', encoding='latin-1') as f:
        for i in range(n_movies): f.write(f'{i + 1}|Film {i + 1} ({1950 + i})|01-Jan-1995||http://x|0|0|0\n')
    return path

def ml_sample(seed=0):
    "URLs.ML_SAMPLE: `ratings.csv` with userId, movieId, rating, timestamp"
    path = ROOT / 'movie_lens_sample'
    if path.exists(): return path
    src = movielens(seed=seed)
    path.mkdir(parents=True)
    df = pd.read_csv(src / 'u.data', sep='\t', header=None, names=['userId', 'movieId', 'rating', 'timestamp'])
    df.to_csv(path / 'ratings.csv', index=False)
    return path

def bulldozers(n=800, seed=0):
    "The Kaggle bluebook-for-bulldozers `TrainAndValid.csv`: a SalePrice driven by YearMade, ProductSize, the state..."
    path = ROOT / 'bluebook-for-bulldozers'
    if path.exists(): return path
    path.mkdir(parents=True)
    rng = np.random.default_rng(seed)
    sizes = ['Large', 'Large / Medium', 'Medium', 'Small', 'Mini', 'Compact']
    dates = pd.to_datetime('2005-01-01') + pd.to_timedelta(rng.integers(0, 365 * 7, n), unit='D')
    df = pd.DataFrame({'SalesID': np.arange(n) + 1_139_246, 'MachineID': rng.integers(1, 3000, n),
                       'ModelID': rng.integers(1, 60, n), 'YearMade': rng.integers(1960, 2011, n),
                       'ProductSize': rng.choice(sizes + [None], n), 'state': rng.choice(['Alabama', 'Texas', 'Ohio', 'Florida'], n),
                       'ProductGroup': rng.choice(['WL', 'TEX', 'SSL', 'BL'], n),
                       'Enclosure': rng.choice(['OROPS', 'EROPS', 'EROPS w AC', None], n),
                       'Hydraulics_Flow': rng.choice(['Standard', 'High Flow', None], n),
                       'saledate': dates.strftime('%m/%d/%Y 0:00')})
    df.loc[rng.random(n) < 0.05, 'YearMade'] = 1000 # the real data's placeholder year
    size_effect = df.ProductSize.map({s: 0.3 * (len(sizes) - i) for i, s in enumerate(sizes)}).fillna(0.5)
    log_price = 9.5 + 0.03 * (df.YearMade.clip(1950) - 1990) + size_effect + 0.2 * (df.ProductGroup == 'WL') + rng.normal(0, 0.2, n)
    df['SalePrice'] = np.exp(log_price).round(-2)
    df.to_csv(path / 'TrainAndValid.csv', index=False)
    return path

_WORDS = {'pos': 'great wonderful superb moving brilliant fun loved touching'.split(),
          'neg': 'boring awful dull terrible waste bad hated clumsy'.split()}
_FILLER = 'the movie film a it was and this of plot actor scene story i to watch is'.split()

def _review(label, rng, n_words=25):
    words = [rng.choice(_WORDS[label]) if rng.random() < 0.2 else rng.choice(_FILLER) for _ in range(n_words)]
    return ' '.join(words).capitalize() + '.'

def imdb(n_per=16, seed=0):
    "URLs.IMDB (or IMDB_SAMPLE's folder form): `train/{pos,neg}`, `test/{pos,neg}` and `unsup/` of text files"
    path = ROOT / 'imdb'
    if path.exists(): return path
    rng = np.random.default_rng(seed)
    for split in ('train', 'test', 'unsup'):
        for label in (('pos', 'neg') if split != 'unsup' else ('',)):
            folder = path / split / label
            folder.mkdir(parents=True, exist_ok=True)
            for i in range(n_per if split != 'test' else n_per // 2):
                (folder / f'{i}_{rng.integers(1, 10)}.txt').write_text(_review(label or rng.choice(['pos', 'neg']), rng))
    return path

def imdb_sample(n=120, seed=0):
    "URLs.IMDB_SAMPLE: `texts.csv` with label, text, is_valid"
    path = ROOT / 'imdb_sample'
    if path.exists(): return path
    path.mkdir(parents=True)
    rng = np.random.default_rng(seed)
    labels = rng.choice(['positive', 'negative'], n)
    df = pd.DataFrame({'label': labels, 'text': [_review('pos' if l == 'positive' else 'neg', rng) for l in labels],
                       'is_valid': rng.random(n) < 0.2})
    df.to_csv(path / 'texts.csv', index=False)
    return path

_ONES = 'zero one two three four five six seven eight nine'.split()
_TENS = {2: 'twenty', 3: 'thirty', 4: 'forty', 5: 'fifty', 6: 'sixty', 7: 'seventy', 8: 'eighty', 9: 'ninety'}
_TEENS = 'ten eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen nineteen'.split()

def _number(i):
    if i < 10: return _ONES[i]
    if i < 20: return _TEENS[i - 10]
    if i < 100: return _TENS[i // 10] + ('' if i % 10 == 0 else ' ' + _ONES[i % 10])
    return _ONES[i // 100] + ' hundred' + ('' if i % 100 == 0 else ' ' + _number(i % 100))

def human_numbers(n_train=600, n_valid=200):
    "URLs.HUMAN_NUMBERS: `train.txt` and `valid.txt`, one number written in words per line"
    path = ROOT / 'human_numbers'
    if path.exists(): return path
    path.mkdir(parents=True)
    (path / 'train.txt').write_text(' \n'.join(_number(i) for i in range(1, n_train + 1)) + ' \n')
    (path / 'valid.txt').write_text(' \n'.join(_number(i) for i in range(n_train + 1, n_train + n_valid + 1)) + ' \n')
    return path

def seed_everything(seed=42):
    random.seed(seed)
    np.random.seed(seed)
    import torch
    torch.manual_seed(seed)
