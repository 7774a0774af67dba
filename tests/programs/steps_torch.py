"""A seeded PyTorch CPU training with Adam whose one unseeded draw comes at
a chosen step: at step NOISE_AT, noise from os.urandom is added to
layer3.weight's gradient only. Two runs with real entropy therefore part
at that step, in that parameter, and nowhere before. Prints a SHA-256 of
the final weights.
Usage: steps_torch.py [steps (6)] [noise_at (4; 0: never)]"""
import hashlib
import os
import sys

import torch

steps = int(sys.argv[1]) if len(sys.argv) > 1 else 6
noise_at = int(sys.argv[2]) if len(sys.argv) > 2 else 4


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.layer1 = torch.nn.Linear(16, 32)
        self.layer2 = torch.nn.Linear(32, 32)
        self.layer3 = torch.nn.Linear(32, 4)

    def forward(self, x):
        return self.layer3(torch.relu(self.layer2(torch.relu(self.layer1(x)))))


torch.manual_seed(0)
model = Net()
opt = torch.optim.Adam(model.parameters(), lr=0.01)
x, y = torch.randn(64, 16), torch.randint(0, 4, (64,))
for step in range(1, steps + 1):
    opt.zero_grad()
    torch.nn.functional.cross_entropy(model(x), y).backward()
    if step == noise_at:
        seed = int.from_bytes(os.urandom(8), "little") % (2**63)
        noise = torch.randn(model.layer3.weight.shape, generator=torch.Generator().manual_seed(seed))
        model.layer3.weight.grad += 1e-3 * noise
    opt.step()
h = hashlib.sha256()
for p in model.parameters():
    h.update(p.detach().numpy().tobytes())
print("weights", h.hexdigest())
