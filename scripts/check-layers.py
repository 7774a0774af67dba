#!/usr/bin/env python3
"""Checks that the shim's modules form layers, from the objects' own symbol
tables (nm), not by eye: module A depends on module B when an object of A
leaves undefined a symbol that an object of B defines. The interposed libc
names (open, read, getrandom...) are set aside: every module calls libc's,
and the shim defines them only to stand in front of libc. Prints the
dependency edges and exits 1 naming a cycle if there is one.

    check-layers.py OBJDIR    (build/obj: OBJDIR/shim/<module>/*.o)

Every folder of shim/ is a module (a new one, such as framework, is read
as soon as it has objects), but for the separate programs named below.
"""
import os
import subprocess
import sys


def symbols(path, defined):
    """Global symbol names an object defines (or leaves undefined)."""
    args = ["nm", "--defined-only" if defined else "--undefined-only", path]
    out = subprocess.run(args, capture_output=True, text=True, check=True).stdout
    names = set()
    for line in out.splitlines():
        parts = line.split()
        if not parts:
            continue
        kind, name = parts[-2], parts[-1]
        if defined and kind not in "TDBRVWG":
            continue  # local (lower-case) symbols are the object's own
        names.add(name)
    return names


def libc_names():
    """What the C library exports: an interposer's name, not a module's."""
    for lib in ("/lib/x86_64-linux-gnu/libc.so.6", "/usr/lib/x86_64-linux-gnu/libc.so.6"):
        if os.path.exists(lib):
            out = subprocess.run(["nm", "-D", "--defined-only", lib], capture_output=True,
                                 text=True, check=True).stdout
            return {l.split()[-1].split("@")[0] for l in out.splitlines() if l.split()}
    sys.exit("check-layers: no libc.so.6 to tell interposed names apart")


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: check-layers.py OBJDIR")
    root = os.path.join(sys.argv[1], "shim")
    # Programs of their own, not layers of the preloaded library.
    apart = {"detdiff", "detverify", "audit"}
    modules = sorted(m for m in os.listdir(root)
                     if os.path.isdir(os.path.join(root, m)) and m not in apart)
    if not modules:
        sys.exit("check-layers: no module objects under %s; run make first" % root)
    defined, undefined = {}, {}
    for m in modules:
        d, u = set(), set()
        for f in os.listdir(os.path.join(root, m)):
            if f.endswith(".o"):
                p = os.path.join(root, m, f)
                d |= symbols(p, True)
                u |= symbols(p, False)
        defined[m], undefined[m] = d, u
    libc = libc_names()
    owner = {}
    for m in modules:
        for s in defined[m] - libc:
            owner[s] = m
    edges = {m: sorted({owner[s] for s in undefined[m] if s in owner and owner[s] != m})
             for m in modules}
    for m in modules:
        print("%-10s -> %s" % (m, ", ".join(edges[m]) or "(libraries only)"))
    # A cycle: a path back to where it started.
    state = {}

    def visit(m, path):
        state[m] = 1
        for n in edges[m]:
            if state.get(n) == 1:
                return path[path.index(n):] + [n]
            if not state.get(n):
                found = visit(n, path + [n])
                if found:
                    return found
        state[m] = 2
        return None

    for m in modules:
        if not state.get(m):
            cycle = visit(m, [m])
            if cycle:
                print("check-layers: modules depend on each other in a circle: %s"
                      % " -> ".join(cycle))
                sys.exit(1)
    print("check-layers: %d modules, no circle" % len(modules))


if __name__ == "__main__":
    main()
