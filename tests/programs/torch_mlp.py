"""The issue #3 reference run: a fully seeded PyTorch CPU MLP (512-1024-
1024-10, batch 256, SGD, 30 steps). Prints a SHA-256 of the final weights.
Without the shim its hash depends on OPENBLAS_CORETYPE and OMP_NUM_THREADS."""
import hashlib

import torch

torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(512, 1024), torch.nn.ReLU(),
                            torch.nn.Linear(1024, 1024), torch.nn.ReLU(),
                            torch.nn.Linear(1024, 10))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
x = torch.randn(256, 512)
y = torch.randint(0, 10, (256,))
for _ in range(30):
    opt.zero_grad()
    torch.nn.functional.cross_entropy(model(x), y).backward()
    opt.step()
h = hashlib.sha256()
for p in model.parameters():
    h.update(p.detach().numpy().tobytes())
print(h.hexdigest())
