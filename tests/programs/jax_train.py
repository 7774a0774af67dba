"""An unmodified, unseeded JAX training script: its PRNGKey comes from
os.urandom, its data from numpy's default_rng and its shuffling from Python's
random module; a small MLP trained with jax.grad, dropout from jax.random and a
hand-written Adam update. Prints a SHA-256 of the final weights. With the
argument "extra", one more optimizer step after the training."""
import hashlib
import os
import random
import sys

import numpy as np
import jax
import jax.numpy as jnp

key = jax.random.PRNGKey(int.from_bytes(os.urandom(4), "little"))
data_rng = np.random.default_rng()
x = data_rng.normal(size=(256, 16)).astype(np.float32)
y = ((x[:, :4].sum(axis=1) > 0).astype(np.int32) + 2 * (x[:, 4] > 0)).astype(np.int32)


def init(key, sizes):
    params = []
    for n_in, n_out in zip(sizes[:-1], sizes[1:]):
        key, sub = jax.random.split(key)
        params.append((jax.random.normal(sub, (n_in, n_out)) * jnp.sqrt(2.0 / n_in),
                       jnp.zeros(n_out)))
    return params


def forward(params, x, key, train):
    for i, (w, b) in enumerate(params):
        x = x @ w + b
        if i < len(params) - 1:
            x = jax.nn.relu(x)
            if train:
                key, sub = jax.random.split(key)
                keep = jax.random.bernoulli(sub, 0.8, x.shape)
                x = jnp.where(keep, x / 0.8, 0.0)
    return x


def loss(params, x, y, key):
    logits = forward(params, x, key, True)
    return -jnp.mean(jnp.take_along_axis(jax.nn.log_softmax(logits), y[:, None], axis=1))


@jax.jit
def step(params, m, v, t, x, y, key):
    grads = jax.grad(loss)(params, x, y, key)
    m = jax.tree_util.tree_map(lambda m, g: 0.9 * m + 0.1 * g, m, grads)
    v = jax.tree_util.tree_map(lambda v, g: 0.999 * v + 0.001 * g * g, v, grads)
    lr = 0.01 * jnp.sqrt(1 - 0.999 ** t) / (1 - 0.9 ** t)
    params = jax.tree_util.tree_map(lambda p, m, v: p - lr * m / (jnp.sqrt(v) + 1e-8),
                                    params, m, v)
    return params, m, v


key, sub = jax.random.split(key)
params = init(sub, [16, 32, 32, 4])
m = jax.tree_util.tree_map(jnp.zeros_like, params)
v = jax.tree_util.tree_map(jnp.zeros_like, params)
order = list(range(len(x)))
t = 0
for epoch in range(10):
    random.shuffle(order)
    for start in range(0, len(order), 32):
        idx = order[start:start + 32]
        key, sub = jax.random.split(key)
        t += 1
        params, m, v = step(params, m, v, t, x[idx], y[idx], sub)
if sys.argv[1:] == ["extra"]:
    t += 1
    params, m, v = step(params, m, v, t, x[:32], y[:32], key)

h = hashlib.sha256()
for w, b in params:
    h.update(np.asarray(w).tobytes())
    h.update(np.asarray(b).tobytes())
print("weights", h.hexdigest())
