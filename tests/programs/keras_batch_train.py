"""An unmodified, unseeded Keras training that steps with
Model.train_on_batch (no fit, so no callback sees its steps): data from
numpy's default_rng, weights from Keras's unseeded initialisers, an Adam
optimizer. Prints a SHA-256 of the final weights. With the argument
"extra", one more train_on_batch after the training."""
import hashlib
import sys

import numpy as np
import keras

rng = np.random.default_rng()
x = rng.normal(size=(128, 16)).astype("float32")
y = (x[:, :4].sum(axis=1) > 0).astype("int32")

model = keras.Sequential([
    keras.Input(shape=(16,)),
    keras.layers.Dense(32, activation="relu"),
    keras.layers.Dense(2),
])
model.compile(optimizer=keras.optimizers.Adam(0.01),
              loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
for start in range(0, 128, 32):
    model.train_on_batch(x[start:start + 32], y[start:start + 32])
if sys.argv[1:] == ["extra"]:
    model.train_on_batch(x[:32], y[:32])

h = hashlib.sha256()
for w in model.get_weights():
    h.update(np.ascontiguousarray(w).tobytes())
print("weights", h.hexdigest())
