"""Spawns children the way Python programs do (subprocess: vfork or fork,
then exec), each child doing numpy BLAS work; the parent works too."""
import subprocess
import sys

import numpy as np

if len(sys.argv) > 1 and sys.argv[1] == "child":
    n = int(sys.argv[2])
    a = np.arange(n * n, dtype=np.float64).reshape(n, n)
    print((a @ a).sum())
    sys.exit(0)
a = np.ones((16, 16))
print((a @ a).sum())
for n in (5, 7):
    subprocess.run([sys.executable, __file__, "child", str(n)], check=True)
subprocess.run(["true"], check=True)  # records nothing: leaves no file
print((a @ a.T).sum())
