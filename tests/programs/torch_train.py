"""An unmodified, unseeded PyTorch CPU training script, written the way
people write them: nothing is seeded, so its synthetic data, its
initial weights, its shuffling, its augmentation noise (drawn in two
DataLoader worker processes) and its dropout masks all come from entropy
the process reads. Two plain runs give different weights; under the shim
they give the same. Prints one line: `weights <SHA-256 of the final
parameters in state_dict order>`."""
import hashlib

import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset

FEATURES, CLASSES, SAMPLES = 32, 4, 2048


class NoisyPoints(Dataset):
    """Points labelled by a random linear teacher, with fresh Gaussian noise
    added to each sample every time it is read (a stand-in for augmentation,
    which runs in the worker processes)."""

    def __init__(self):
        self.x = torch.randn(SAMPLES, FEATURES)
        teacher = torch.randn(FEATURES, CLASSES)
        self.y = (self.x @ teacher).argmax(dim=1)

    def __len__(self):
        return SAMPLES

    def __getitem__(self, i):
        return self.x[i] + 0.1 * torch.randn(FEATURES), self.y[i]


def main():
    loader = DataLoader(NoisyPoints(), batch_size=64, shuffle=True, num_workers=2)
    model = nn.Sequential(nn.Linear(FEATURES, 128), nn.ReLU(), nn.Dropout(0.2),
                          nn.Linear(128, 128), nn.ReLU(), nn.Dropout(0.2),
                          nn.Linear(128, CLASSES))
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    model.train()
    for _ in range(3):
        for x, y in loader:
            opt.zero_grad()
            nn.functional.cross_entropy(model(x), y).backward()
            opt.step()
    h = hashlib.sha256()
    for tensor in model.state_dict().values():
        h.update(tensor.detach().contiguous().numpy().tobytes())
    print("weights", h.hexdigest())


if __name__ == "__main__":
    main()
