"""A makemore-style MLP language model over characters, with its training loop: a
context of ``block_size`` characters is embedded, flattened, passed through a Linear,
BatchNorm1d and tanh, then a Linear to logits; minibatches drawn with ``randint``,
cross_entropy, and plain SGD by hand with a step decay of the learning rate."""

import torch
import torch.nn as nn
import torch.nn.functional as F


def build_dataset(words, stoi, block_size):
    X, Y = [], []
    for w in words:
        context = [0] * block_size
        for ch in w + ".":
            ix = stoi[ch]
            X.append(context)
            Y.append(ix)
            context = context[1:] + [ix]
    X = torch.tensor(X)
    Y = torch.tensor(Y)
    return X, Y


class MLP(nn.Module):
    def __init__(self, vocab_size, block_size=3, n_embd=10, n_hidden=64):
        super().__init__()
        self.block_size = block_size
        self.wte = nn.Embedding(vocab_size, n_embd)
        self.fc = nn.Linear(n_embd * block_size, n_hidden, bias=False)
        self.bn = nn.BatchNorm1d(n_hidden)
        self.out = nn.Linear(n_hidden, vocab_size)
        with torch.no_grad():
            self.out.weight *= 0.1  # a less confident start

    def forward(self, idx):
        emb = self.wte(idx)
        x = emb.view(emb.shape[0], -1)
        h = torch.tanh(self.bn(self.fc(x)))
        return self.out(h)


def build(**sizes):
    return MLP(**sizes)


def train_steps(model, Xtr, Ytr, max_steps, batch_size=32, indices=None, decay_at=2):
    """The lecture's loop: a random minibatch, forward, backward, ``p.data += -lr * grad``;
    the minibatch indices are ``indices[i]`` when given."""
    parameters = list(model.parameters())
    g = torch.Generator().manual_seed(2147483647)
    lossi = []
    for i in range(max_steps):
        if indices is None:
            ix = torch.randint(0, Xtr.shape[0], (batch_size,), generator=g)
        else:
            ix = indices[i]
        Xb, Yb = Xtr[ix], Ytr[ix]
        logits = model(Xb)
        loss = F.cross_entropy(logits, Yb)
        for p in parameters:
            p.grad = None
        loss.backward()
        lr = 0.1 if i < decay_at else 0.01
        for p in parameters:
            p.data += -lr * p.grad
        lossi.append(loss.log10().item())
    return lossi


@torch.no_grad()
def split_loss(model, X, Y):
    model.eval()
    logits = model(X)
    loss = F.cross_entropy(logits, Y)
    model.train()
    return loss.item()


@torch.no_grad()
def sample(model, block_size, generator=None):
    """One name, a character at a time, until the end token 0."""
    model.eval()
    out, context = [], [0] * block_size
    while True:
        logits = model(torch.tensor([context]))
        probs = F.softmax(logits, dim=1)
        ix = torch.multinomial(probs, num_samples=1, generator=generator).item()
        context = context[1:] + [ix]
        if ix == 0 or len(out) > 20:
            break
        out.append(ix)
    model.train()
    return out
