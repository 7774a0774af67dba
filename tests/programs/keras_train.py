"""An unmodified, unseeded Keras training script: its data comes from numpy's
default_rng, its weight initialisers and dropout from TensorFlow's own unseeded
generators, and model.fit shuffles every epoch. Prints a SHA-256 of the final
weights. With the argument "extra", one more optimizer step (a fit of one
batch) after the training."""
import hashlib
import sys

import numpy as np
import keras

rng = np.random.default_rng()
x = rng.normal(size=(256, 16)).astype("float32")
y = (x[:, :4].sum(axis=1) > 0).astype("int32") + 2 * (x[:, 4] > 0)

model = keras.Sequential([
    keras.Input(shape=(16,)),
    keras.layers.Dense(32, activation="relu"),
    keras.layers.Dropout(0.2),
    keras.layers.Dense(32, activation="relu"),
    keras.layers.Dropout(0.2),
    keras.layers.Dense(4),
])
model.compile(optimizer=keras.optimizers.Adam(0.01),
              loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
model.fit(x, y, batch_size=32, epochs=3, shuffle=True, verbose=0)
if sys.argv[1:] == ["extra"]:
    model.fit(x[:32], y[:32], batch_size=32, epochs=1, shuffle=False, verbose=0)

h = hashlib.sha256()
for w in model.get_weights():
    h.update(np.ascontiguousarray(w).tobytes())
print("weights", h.hexdigest())
