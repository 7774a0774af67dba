"""A seeded PyTorch CPU training with Adam whose one unseeded draw comes at
a chosen step: at step NOISE_AT, noise from os.urandom is added to
the last layer's weight gradient only (layer3.weight; layerN.weight with
N layers). Two runs with real entropy therefore part at that step, in
that parameter, and nowhere before. Prints a SHA-256 of the final
weights. With 10 layers a step has 80 tensors: its record is in five
parts, and the noisy weight is in the second.
Usage: steps_torch.py [steps (6)] [noise_at (4; 0: never)] [layers (3)]"""
import hashlib
import os
import sys

import torch

steps = int(sys.argv[1]) if len(sys.argv) > 1 else 6
noise_at = int(sys.argv[2]) if len(sys.argv) > 2 else 4
layers = int(sys.argv[3]) if len(sys.argv) > 3 else 3


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        sizes = [16] + [32] * (layers - 1) + [4]
        for i in range(layers):
            setattr(self, "layer%d" % (i + 1), torch.nn.Linear(sizes[i], sizes[i + 1]))

    def forward(self, x):
        for i in range(1, layers):
            x = torch.relu(getattr(self, "layer%d" % i)(x))
        return getattr(self, "layer%d" % layers)(x)


torch.manual_seed(0)
model = Net()
opt = torch.optim.Adam(model.parameters(), lr=0.01)
x, y = torch.randn(64, 16), torch.randint(0, 4, (64,))
for step in range(1, steps + 1):
    opt.zero_grad()
    torch.nn.functional.cross_entropy(model(x), y).backward()
    if step == noise_at:
        seed = int.from_bytes(os.urandom(8), "little") % (2**63)
        last = getattr(model, "layer%d" % layers).weight
        noise = torch.randn(last.shape, generator=torch.Generator().manual_seed(seed))
        last.grad += 1e-3 * noise
    opt.step()
h = hashlib.sha256()
for p in model.parameters():
    h.update(p.detach().numpy().tobytes())
print("weights", h.hexdigest())
