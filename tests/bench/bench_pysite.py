"""The cost of a Python call site: numpy's dot of two 16-element float64
vectors (one cblas_ddot each) in a Python loop, timed in the thread's CPU
time (a loaded machine's scheduling stays out of it) as the best of
several repetitions. scripts/bench.sh runs it traced with and without
DETSHIM_PYTHON_SITES=off and reports the difference.
Usage: bench_pysite.py [calls [repetitions]]   (default 20000 5)
Prints one line: "np.dot n=16: <ns> ns/call (...)"."""
import sys
import time

import numpy as np

calls = int(sys.argv[1]) if len(sys.argv) > 1 else 20000
reps = int(sys.argv[2]) if len(sys.argv) > 2 else 5
x = np.arange(16, dtype=np.float64)
y = np.ones(16, dtype=np.float64)
best = None
total = 0.0
for _ in range(reps):
    t0 = time.thread_time_ns()
    for _ in range(calls):
        total += np.dot(x, y)
    per_call = (time.thread_time_ns() - t0) / calls
    best = per_call if best is None or per_call < best else best
print(f"np.dot n=16: {best:.1f} ns/call of CPU time (best of {reps} runs of {calls} calls; checksum {total})")
