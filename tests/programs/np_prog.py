"""numpy work that reaches BLAS (matmul, dot, solve-free linear algebra),
for the integration tests: prints numpy's version and a hash of every
result, so runs with and without the shim can be compared bit for bit."""
import hashlib

import numpy as np

rng = np.random.RandomState(1234)
h = hashlib.sha256()
a = rng.standard_normal((96, 80))
b = rng.standard_normal((80, 72))
for x in (a @ b, a.astype(np.float32) @ b.astype(np.float32),
          (a + 1j * a) @ (b - 1j * b), a.T @ a, np.dot(a[0], a[1]),
          a @ b[:, 0], np.linalg.norm(a[:, 3])):
    h.update(np.ascontiguousarray(x).tobytes())
print(np.__version__, h.hexdigest())
