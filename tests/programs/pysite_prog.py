"""Python call sites (tests/integration/test-pysite.sh): BLAS calls made
from a function, a method, a thread and a torch op (which releases the
GIL), and an entropy read, each on a line the test finds by its marker.
PYSITE_NUDGE=1 changes step's input, so detdiff names that call.
Usage: pysite_prog.py [numpy|torch]"""
import os
import sys
import threading

import numpy as np


def step(a, b):
    return np.dot(a, b)  # SITE:step


class Model:
    def forward(self, a):
        return a @ a  # SITE:forward


def worker(a, out):
    out.append(np.dot(a, a))  # SITE:worker


def torch_step(x):
    import torch
    return torch.mm(x, x)  # SITE:torch


def main():
    a = np.ones((8, 8))
    if os.environ.get("PYSITE_NUDGE") == "1":
        a[0, 0] = 2.0
    step(a, a)
    Model().forward(a)
    out = []
    t = threading.Thread(target=worker, args=(a, out))
    t.start()
    t.join()
    os.urandom(8)  # SITE:urandom
    if len(sys.argv) > 1 and sys.argv[1] == "torch":
        import torch
        torch_step(torch.ones(16, 16))
    print("done")


main()
