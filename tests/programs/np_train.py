"""An unseeded numpy training loop, written the way people write one:
synthetic data from np.random.default_rng() with no seed, a two-layer
network trained by minibatch SGD in a shuffled order, with dropout. Its
matrix products reach BLAS, its randomness comes from entropy the process
reads. Prints one line: `weights <SHA-256 of the final weights>`."""
import hashlib

import numpy as np

rng = np.random.default_rng()
x = rng.standard_normal((1024, 48))
y = np.tanh(x @ rng.standard_normal((48, 1)))
w1 = rng.standard_normal((48, 64)) * 0.1
w2 = rng.standard_normal((64, 1)) * 0.1
for epoch in range(4):
    order = rng.permutation(len(x))
    for start in range(0, len(x), 64):
        idx = order[start:start + 64]
        xb, yb = x[idx], y[idx]
        keep = rng.random((len(idx), 64)) > 0.1
        h = np.maximum(xb @ w1, 0) * keep / 0.9
        err = h @ w2 - yb
        g2 = h.T @ err / len(idx)
        gh = (err @ w2.T) * (h > 0) * keep / 0.9
        g1 = xb.T @ gh / len(idx)
        w1 -= 0.05 * g1
        w2 -= 0.05 * g2
digest = hashlib.sha256(w1.tobytes() + w2.tobytes()).hexdigest()
print("weights", digest)
