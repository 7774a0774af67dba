"""Costs of step and op records (docs/frameworks.md), in one process under
the shim with a trace: the training of tests/programs/torch_prog.py (a
seeded PyTorch MLP, SGD; and the same with Adam, whose state triples the
tensors), timed per step, against the time of one step record made by
the start-up hook's own code; then the same training with op records on.
Usage (scripts/bench.sh): LD_PRELOAD=libdetshim.so DETSHIM_TRACE=DIR
python3 bench_steps.py HOOK_DIR [steps (100)] [hidden (1024)]"""
import sys
import time

sys.path.insert(0, sys.argv[1])
import detshim_steps as ds  # noqa: E402 (from HOOK_DIR)
import torch  # noqa: E402

steps = int(sys.argv[2]) if len(sys.argv) > 2 else 100
hidden = int(sys.argv[3]) if len(sys.argv) > 3 else 1024
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(64, hidden), torch.nn.ReLU(),
                            torch.nn.Linear(hidden, hidden), torch.nn.ReLU(),
                            torch.nn.Linear(hidden, 10))
x = torch.randn(128, 64)
y = torch.randint(0, 10, (128,))
assert ds._reach_shim(), "bench_steps: run under LD_PRELOAD=libdetshim.so"
ds._torch = torch
names = ds._TorchNames(torch)


def per_step(opt, n):
    """Median seconds per step over three runs of n steps."""
    times = []
    for _ in range(3):
        t = time.perf_counter()
        for _ in range(n):
            opt.zero_grad()
            torch.nn.functional.cross_entropy(model(x), y).backward()
            opt.step()
        times.append((time.perf_counter() - t) / n)
    return sorted(times)[1]


def per_record(opt, n):
    times = []
    for _ in range(3):
        t = time.perf_counter()
        for _ in range(n):
            ds._record_torch_step(torch, names, opt)
        times.append((time.perf_counter() - t) / n)
    return sorted(times)[1]


for label, opt in (("SGD", torch.optim.SGD(model.parameters(), lr=0.01)),
                   ("Adam", torch.optim.Adam(model.parameters(), lr=1e-4))):
    step = per_step(opt, steps)
    record = per_record(opt, steps)
    tensors = sum(len(g["params"]) for g in opt.param_groups)
    tensors += sum(1 for s in opt.state.values() for v in s.values() if torch.is_tensor(v))
    print("  %-5s step %8.2f ms   step record %7.1f us (%d tensors)   %.2f%% of a step"
          % (label, step * 1e3, record * 1e6, tensors, 100 * record / step))

plain = per_step(opt, max(steps // 10, 3))
ds._hook_torch_ops(torch)
ops = per_step(opt, max(steps // 10, 3))
print("  ops on: step %.2f ms against %.2f ms: ratio %.2f (a debugging mode)"
      % (ops * 1e3, plain * 1e3, ops / plain))
