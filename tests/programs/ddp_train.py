"""A 2-process DistributedDataParallel training on the CPU (gloo), run by
test-nccl-ddp.sh:
    ddp_train.py [own-hook]
starts its two ranks as torchrun does (Debian's torchrun 1.13 fails under
Python 3.11 before it starts a worker): a child process per rank with
RANK, WORLD_SIZE, MASTER_ADDR and MASTER_PORT in its environment, so the
shim names each rank's trace by its rank.
Unseeded, as programs often are: torch's seed and the data come from
os.urandom, so plain runs differ and runs under the shim do not. Each rank
trains on its own shard for 8 steps, then all-reduces its last loss with
torch.distributed directly and prints
    rank R weights <sha256 of the parameters> loss <the summed loss>
own-hook registers the program's own DDP communication hook (PyTorch's
allreduce_hook). DDP_PERTURB=R changes rank R's data at step 3.
"""
import hashlib
import os
import sys

import socket
import subprocess

if "RANK" not in os.environ:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = dict(os.environ, WORLD_SIZE="2", MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    ranks = [subprocess.Popen([sys.executable] + sys.argv, env=dict(env, RANK=str(r)))
             for r in range(2)]
    sys.exit(max(p.wait() for p in ranks))

import numpy as np
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel

dist.init_process_group("gloo")
rank, world = dist.get_rank(), dist.get_world_size()
torch.manual_seed(int.from_bytes(os.urandom(8), "little") % 2**63)
rng = np.random.default_rng()
x_all = torch.from_numpy(rng.standard_normal((8, 32, 6)).astype(np.float32))
y_all = torch.from_numpy(rng.standard_normal((8, 32, 1)).astype(np.float32))
model = torch.nn.Sequential(torch.nn.Linear(6, 16), torch.nn.Tanh(), torch.nn.Linear(16, 1))
ddp = DistributedDataParallel(model)
if "own-hook" in sys.argv[1:]:
    from torch.distributed.algorithms.ddp_comm_hooks import default_hooks
    ddp.register_comm_hook(None, default_hooks.allreduce_hook)
opt = torch.optim.SGD(ddp.parameters(), lr=0.1)
perturb = os.environ.get("DDP_PERTURB")
for step in range(8):
    # Each rank its own half of the batch.
    x = x_all[step, rank::world].clone()
    y = y_all[step, rank::world]
    if perturb is not None and int(perturb) == rank and step == 3:
        x[0, 0] += 1.0
    loss = ((ddp(x) - y) ** 2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
total = loss.detach().reshape(1).clone()
dist.all_reduce(total)
h = hashlib.sha256()
for p in model.parameters():
    h.update(p.detach().numpy().tobytes())
print("rank %d weights %s loss %.9g" % (rank, h.hexdigest()[:16], total.item()), flush=True)
dist.destroy_process_group()
