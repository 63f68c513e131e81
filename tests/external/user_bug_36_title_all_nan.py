"""fastai course22, lesson 6 "Why you should use a framework" (06-why-you-should-use-a-framework.ipynb), on Titanic:
`add_features` builds LogFare, Deck, Family, Alone, TicketFreq and Title, then `TabularPandas(df, splits=splits,
procs=[Categorify, FillMissing, Normalize], cat_names=["Sex","Pclass","Embarked","Deck","Title"], cont_names=[...],
y_names="Survived", y_block=CategoryBlock()).dataloaders(path=".")`, `tabular_learner(dls, metrics=accuracy,
layers=[10,10])`, `learn.fit(16, lr=0.03)`. This user's Title line splits the name on ' ' where the course splits on
'.': every title comes out as 'Mr.', 'Mrs.'..., the map to "Mr", "Mrs"... matches none, and Title is NaN on all 891
rows. Categorify codes every row #na#, the model trains, and nothing says that the feature built to carry the title is
empty. Offline: a synthetic train.csv in Titanic's layout (synth.titanic). Source: issue 26, part 7.
SHOULD BE CAUGHT: check_constant_features (warning, certain: Title is NaN on every training row)."""
from fastai.tabular.all import *
import synth

path = synth.titanic()
pd.options.display.float_format = '{:.2f}'.format
set_seed(42)

df = pd.read_csv(path/'train.csv')

def add_features(df):
    df['LogFare'] = np.log1p(df['Fare'])
    df['Deck'] = df.Cabin.str[0].map(dict(A="ABC", B="ABC", C="ABC", D="DE", E="DE", F="FG", G="FG"))
    df['Family'] = df.SibSp+df.Parch
    df['Alone'] = df.Family==1
    df['TicketFreq'] = df.groupby('Ticket')['Ticket'].transform('count')
    df['Title'] = df.Name.str.split(', ', expand=True)[1].str.split(' ', expand=True)[0]  # BUG: 'Mr.' (the course splits on '.')
    df['Title'] = df.Title.map(dict(Mr="Mr",Miss="Miss",Mrs="Mrs",Master="Master"))

add_features(df)
splits = RandomSplitter(seed=42)(df)
dls = TabularPandas(
    df, splits=splits,
    procs = [Categorify, FillMissing, Normalize],
    cat_names=["Sex","Pclass","Embarked","Deck", "Title"],
    cont_names=['Age', 'SibSp', 'Parch', 'LogFare', 'Alone', 'TicketFreq', 'Family'],
    y_names="Survived", y_block = CategoryBlock(),
).dataloaders(path=".")
learn = tabular_learner(dls, metrics=accuracy, layers=[10,10])
learn.fit(16, lr=0.03)
