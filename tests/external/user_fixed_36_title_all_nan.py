"""fastai course22, lesson 6 "Why you should use a framework", on Titanic, as the course writes it: Title is the word
after the surname's comma, split on '.', mapped to Mr, Miss, Mrs, Master (issue 26, part 7's case, fixed). Offline: a
synthetic train.csv in Titanic's layout (synth.titanic). Healthy: should raise nothing."""
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
    df['Title'] = df.Name.str.split(', ', expand=True)[1].str.split('.', expand=True)[0]
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
