"""For test-verify-frameworks: runs one of the framework training scripts
(argv[1]: keras_train.py or jax_train.py) as it is, then saves what it
trained the way that framework's users do: Keras with
model.save_weights("model.weights.h5") (HDF5), JAX with np.savez of the
parameters. argv[2] "poison" changes the weights first, as a lab that
post-trains after the published run would."""
import runpy
import sys

import numpy as np

trained = runpy.run_path(sys.argv[1], run_name="__main__")
poison = len(sys.argv) > 2 and sys.argv[2] == "poison"
if "model" in trained:  # Keras
    model = trained["model"]
    if poison:
        model.set_weights([w + 0.01 for w in model.get_weights()])
    model.save_weights("model.weights.h5")
else:  # JAX
    arrays = [np.asarray(a) for pair in trained["params"] for a in pair]
    if poison:
        arrays = [a + 0.01 for a in arrays]
    np.savez("params.npz", *arrays)
