"""An unmodified, unseeded PyTorch training script: its seed comes from
os.urandom, its vocabulary order from a set, its data from numpy's
default_rng, and it trains with dropout, Adam and a shuffling DataLoader
with two worker processes. Prints a SHA-256 of the final weights."""
import hashlib
import os
import random

import numpy as np
import torch
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(int.from_bytes(os.urandom(8), "little") % (2**63))
vocab = list({"red", "green", "blue", "cyan", "magenta", "yellow", "black", "white"})
words = random.choices(vocab, k=512)
labels = torch.tensor([vocab.index(w) % 4 for w in words])
features = torch.tensor(np.random.default_rng().normal(size=(512, 16)), dtype=torch.float32)
loader = DataLoader(TensorDataset(features, labels), batch_size=64, shuffle=True, num_workers=2)
model = torch.nn.Sequential(torch.nn.Linear(16, 64), torch.nn.ReLU(), torch.nn.Dropout(0.2),
                            torch.nn.Linear(64, 4))
opt = torch.optim.Adam(model.parameters(), lr=0.01)
for epoch in range(3):
    for x, y in loader:
        opt.zero_grad()
        torch.nn.functional.cross_entropy(model(x), y).backward()
        opt.step()
h = hashlib.sha256()
for p in model.parameters():
    h.update(p.detach().numpy().tobytes())
print(h.hexdigest())
