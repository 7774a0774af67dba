"""Secrets and training randomness interleaved in one program, for
test-security: lines starting "pinned" must repeat run to run under the
shim, lines starting "real" must not."""
import multiprocessing
import os
import random
import secrets
import tempfile
import uuid

import numpy as np
import torch

print("pinned random.random", random.random())
print("real secrets.token_bytes", secrets.token_bytes(16).hex())
print("pinned numpy default_rng", np.random.default_rng().integers(0, 10**9, 3).tolist())
print("real uuid.uuid4", uuid.uuid4())
print("pinned secrets.randbits (numpy's SeedSequence entropy)", secrets.randbits(64))
print("real multiprocessing authkey", multiprocessing.current_process().authkey.hex())
print("pinned torch.seed", torch.seed())
print("real secrets.token_hex", secrets.token_hex(16))
print("real tempfile name", os.path.basename(tempfile.mktemp()))
print("pinned os.urandom", os.urandom(8).hex())
