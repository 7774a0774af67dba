"""An unmodified, unseeded JAX training through the seams beyond a plain
jax.jit: its PRNGKey comes from os.urandom, its data from numpy's
default_rng; SGD with momentum written in jax (optax is not installed
here), its state a NamedTuple as optax keeps it. Prints a SHA-256 of the
final weights.
Usage: jax_seams_train.py pmap|donate [extra]
  pmap    the step is jax.pmap'd over 2 CPU devices (the program asks XLA
          for them), gradients averaged with lax.pmean, params and state
          replicated;
  donate  the step is jax.jit'd with donate_argnums=(0, 1): params and
          state buffers are handed to XLA;
  extra   one more step after the training."""
import hashlib
import os
import sys
from typing import NamedTuple

os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=2"
import numpy as np  # noqa: E402
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402

mode = sys.argv[1]


class TraceState(NamedTuple):
    """optax.trace's state: the momentum of every parameter."""
    trace: dict


def loss(params, x, y):
    h = jax.nn.relu(x @ params["dense1"]["w"] + params["dense1"]["b"])
    logits = h @ params["dense2"]["w"] + params["dense2"]["b"]
    return -jnp.mean(jnp.take_along_axis(jax.nn.log_softmax(logits), y[:, None], axis=1))


def update(params, state, grads):
    trace = jax.tree_util.tree_map(lambda t, g: 0.9 * t + g, state.trace, grads)
    params = jax.tree_util.tree_map(lambda p, t: p - 0.05 * t, params, trace)
    return params, TraceState(trace)


def pmap_step(params, state, x, y):
    grads = jax.lax.pmean(jax.grad(loss)(params, x, y), "devices")
    return update(params, state, grads)


def donate_step(params, state, x, y):
    return update(params, state, jax.grad(loss)(params, x, y))


key = jax.random.PRNGKey(int.from_bytes(os.urandom(4), "little"))
k1, k2 = jax.random.split(key)
params = {"dense1": {"w": jax.random.normal(k1, (16, 32)) * 0.25, "b": jnp.zeros(32)},
          "dense2": {"w": jax.random.normal(k2, (32, 2)) * 0.18, "b": jnp.zeros(2)}}
state = TraceState(jax.tree_util.tree_map(jnp.zeros_like, params))
data = np.random.default_rng()
x = data.normal(size=(128, 16)).astype(np.float32)
y = (x[:, :4].sum(axis=1) > 0).astype(np.int32)

if mode == "pmap":
    step = jax.pmap(pmap_step, axis_name="devices")
    replicate = lambda t: jax.tree_util.tree_map(lambda a: jnp.stack([a, a]), t)  # noqa: E731
    params, state = replicate(params), replicate(state)
    shard = lambda a: a.reshape((2, -1) + a.shape[1:])  # noqa: E731
else:
    step = jax.jit(donate_step, donate_argnums=(0, 1))
    shard = lambda a: a  # noqa: E731
batches = [(shard(x[i:i + 32]), shard(y[i:i + 32])) for i in range(0, 128, 32)]
if sys.argv[2:] == ["extra"]:
    batches.append(batches[0])
for bx, by in batches:
    params, state = step(params, state, bx, by)

h = hashlib.sha256()
for leaf in jax.tree_util.tree_leaves(params):
    h.update(np.asarray(leaf).tobytes())
print("weights", h.hexdigest())
