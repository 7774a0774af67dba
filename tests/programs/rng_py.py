"""Python's sources of randomness, for the integration tests: one line
each, so two runs can be compared line by line."""
import os
import random
import secrets
import subprocess
import sys

import numpy as np
import torch

print("os.urandom", os.urandom(8).hex())
print("random.random", random.random())
print("numpy default_rng", np.random.default_rng().integers(0, 10**9, 3).tolist())
# randbits is how numpy's SeedSequence draws entropy: training randomness,
# pinned. secrets' tokens stay real (test-security).
print("secrets.randbits", secrets.randbits(64))
# Twenty strings: two random hash seeds giving one order is vanishingly rare.
print("set order", list({f"word{i}" for i in range(20)}))
print("torch.seed", torch.seed())
child = subprocess.run([sys.executable, "-c", "import os; print(os.urandom(8).hex())"],
                       capture_output=True, text=True, check=True)
print("subprocess child", child.stdout.strip())
