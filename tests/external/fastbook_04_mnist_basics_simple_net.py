"""fastbook clean/04_mnist_basics.ipynb, "Putting It All Together" and "Adding a Nonlinearity":
`train_x = torch.cat([stacked_threes, stacked_sevens]).view(-1, 28*28)`, `train_y = tensor([1]*len(threes) + [0]*len(sevens)).unsqueeze(1)`,
`dset = list(zip(train_x,train_y))`, `dl = DataLoader(dset, batch_size=256)`, `dls = DataLoaders(dl, valid_dl)`,
`def mnist_loss(predictions, targets): predictions = predictions.sigmoid(); return torch.where(targets==1, 1-predictions, predictions).mean()`,
`def batch_accuracy(xb, yb): preds = xb.sigmoid(); correct = (preds>0.5) == yb; return correct.float().mean()`,
`simple_net = nn.Sequential(nn.Linear(28*28,30), nn.ReLU(), nn.Linear(30,1))`,
`learn = Learner(dls, simple_net, opt_func=SGD, loss_func=mnist_loss, metrics=batch_accuracy)`, `learn.fit(40, 0.1)`.
Offline: synthetic 3s and 7s (28 px) read back as the book does (tensor(Image.open(o)), /255); fit(2, 0.1).
Healthy (a loss that applies its own sigmoid, targets of shape (n, 1)): should raise nothing."""
from fastai.vision.all import *
import synth

synth.seed_everything()
path = synth.image_folders('mnist_sample', ['3', '7'], n_per_class=32, size=28, mode='L')
def stacked(folder): return torch.stack([tensor(Image.open(o)) for o in sorted((folder).ls())]).float()/255
stacked_threes, stacked_sevens = stacked(path/'train'/'3'), stacked(path/'train'/'7')
valid_3_tens, valid_7_tens = stacked(path/'valid'/'3'), stacked(path/'valid'/'7')
train_x = torch.cat([stacked_threes, stacked_sevens]).view(-1, 28*28)
train_y = tensor([1]*len(stacked_threes) + [0]*len(stacked_sevens)).unsqueeze(1)
valid_x = torch.cat([valid_3_tens, valid_7_tens]).view(-1, 28*28)
valid_y = tensor([1]*len(valid_3_tens) + [0]*len(valid_7_tens)).unsqueeze(1)
dset = list(zip(train_x,train_y))
valid_dset = list(zip(valid_x,valid_y))
def mnist_loss(predictions, targets):
    predictions = predictions.sigmoid()
    return torch.where(targets==1, 1-predictions, predictions).mean()
def batch_accuracy(xb, yb):
    preds = xb.sigmoid()
    correct = (preds>0.5) == yb
    return correct.float().mean()
dl = DataLoader(dset, batch_size=16, shuffle=True)
valid_dl = DataLoader(valid_dset, batch_size=16)
dls = DataLoaders(dl, valid_dl)
simple_net = nn.Sequential(nn.Linear(28*28,30), nn.ReLU(), nn.Linear(30,1))
learn = Learner(dls, simple_net, opt_func=SGD, loss_func=mnist_loss, metrics=batch_accuracy)
learn.fit(2, 0.1)
