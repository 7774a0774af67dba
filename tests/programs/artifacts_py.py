"""Writes and reads the kinds of files a training run makes, for
test-artifacts: weights saved under a temporary name and renamed into
place (as safetensors and orbax do), a file rewritten every epoch, a
numpy array, a log that is no artifact, a data file read twice, and a
checkpoint a child process writes and the parent renames. argv[1]
"poison" changes the weights after the run, as a lab that post-trains
would."""
import os
import subprocess
import sys

import numpy as np
import torch

torch.manual_seed(0)
rows = open("data/train.csv").read().split()
again = open("data/train.csv").read()
model = torch.nn.Linear(3, 2)
for epoch in range(3):
    torch.save({"epoch": epoch, "state": model.state_dict()}, "last.pt")
torch.save(model.state_dict(), "weights.pt.tmp")
os.replace("weights.pt.tmp", "weights.pt")
np.save("embedding.npy", np.arange(6, dtype=np.float32))
with open("train.log", "w") as log:
    log.write("rows %d\n" % len(rows))
subprocess.run([sys.executable, "-c",
                "open('child.part', 'wb').write(b'child checkpoint')"], check=True)
os.rename("child.part", "child.ckpt")
if len(sys.argv) > 1 and sys.argv[1] == "poison":
    with torch.no_grad():
        model.weight.add_(0.01)
    torch.save(model.state_dict(), "weights.pt")
