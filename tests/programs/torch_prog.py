"""A small seeded PyTorch CPU MLP trained for a few SGD steps, for the
integration tests and the demo: prints a SHA-256 of the final weights.
Usage: torch_prog.py [steps] [hidden]"""
import hashlib
import sys

import torch

steps = int(sys.argv[1]) if len(sys.argv) > 1 else 5
hidden = int(sys.argv[2]) if len(sys.argv) > 2 else 128
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(64, hidden), torch.nn.ReLU(),
                            torch.nn.Linear(hidden, hidden), torch.nn.ReLU(),
                            torch.nn.Linear(hidden, 10))
opt = torch.optim.SGD(model.parameters(), lr=0.05)
x = torch.randn(128, 64)
y = torch.randint(0, 10, (128,))
for _ in range(steps):
    opt.zero_grad()
    loss = torch.nn.functional.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
h = hashlib.sha256()
for p in model.parameters():
    h.update(p.detach().numpy().tobytes())
print(h.hexdigest())
