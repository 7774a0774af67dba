"""One ATen op whose result depends on something outside its inputs: a
float sum over 2^20 elements, which ATen splits across its intra-op
threads, each thread's partial sum rounding on its own. The program sets
its thread count itself (the first argument), as a program may, so two
runs at 1 and 2 threads compute every op alike but that one. (CPU
index_add_ adds serially: it gives the same bits at any thread count.)
Prints the sum. Usage: ops_torch.py THREADS"""
import sys

import torch


def features(n):
    g = torch.Generator().manual_seed(0)
    return torch.randn(n, generator=g) * 3 + 1


def main():
    torch.set_num_threads(int(sys.argv[1]))
    x = features(1 << 20)
    total = x.sum()
    print("sum %.9g" % (total * 2).item())


main()
