"""Costs of step and op records (docs/frameworks.md), in one process under
the shim with a trace, on two seeded PyTorch models, each trained with
SGD (momentum 0.9: one state tensor per parameter) and with Adam (three),
and the MLP also with plain SGD (no state: the optimizer of the training
benchmark, tests/programs/torch_prog.py, on which issue 16 sets its target):

  mlp          64 -> 1024 -> 1024 -> 10, batch 128: 1.1M parameters and
               the least compute per parameter a training has (each
               weight used once per sample), so the worst case for a
               record whose cost grows with the parameters;
  transformer  a 2-layer encoder (d_model 128, 4 heads, feed-forward
               512) over 64-token sequences of a 1000-word vocabulary,
               batch 16, and a linear head: 0.53M parameters in 29
               tensors, so two or three records per step (a record holds
               16 tensors), each weight used once per token;

timed per step (median and best of 5 runs: the best is the least
disturbed on a shared machine), against the time of one step record
made by the start-up hook's own code on the same optimizer (the same);
then the MLP with op records on.
Usage (scripts/bench.sh): LD_PRELOAD=libdetshim.so DETSHIM_TRACE=DIR
python3 bench_steps.py HOOK_DIR [steps (100)] [hidden (1024)]"""
import sys
import time

sys.path.insert(0, sys.argv[1])
import detshim_steps as ds  # noqa: E402 (from HOOK_DIR)
import torch  # noqa: E402

steps = int(sys.argv[2]) if len(sys.argv) > 2 else 100
hidden = int(sys.argv[3]) if len(sys.argv) > 3 else 1024
assert ds._reach_shim(), "bench_steps: run under LD_PRELOAD=libdetshim.so"
ds._torch = torch
names = ds._TorchNames(torch)
torch.manual_seed(0)


class Encoder(torch.nn.Module):
    def __init__(self, vocab=1000, d=128):
        super().__init__()
        self.embed = torch.nn.Embedding(vocab, d)
        layer = torch.nn.TransformerEncoderLayer(d, 4, 512, dropout=0.0, batch_first=True)
        self.encoder = torch.nn.TransformerEncoder(layer, 2)
        self.head = torch.nn.Linear(d, vocab)

    def forward(self, x):
        return self.head(self.encoder(self.embed(x)))


def mlp():
    model = torch.nn.Sequential(torch.nn.Linear(64, hidden), torch.nn.ReLU(),
                                torch.nn.Linear(hidden, hidden), torch.nn.ReLU(),
                                torch.nn.Linear(hidden, 10))
    x, y = torch.randn(128, 64), torch.randint(0, 10, (128,))
    return model, lambda: torch.nn.functional.cross_entropy(model(x), y), steps


def transformer():
    model = Encoder()
    x = torch.randint(0, 1000, (16, 64))
    y = torch.randint(0, 1000, (16 * 64,))
    return (model, lambda: torch.nn.functional.cross_entropy(model(x).reshape(-1, 1000), y),
            max(steps // 5, 3))


RUNS = 5


def per_step(opt, loss, n):
    """(median, best) seconds per step over RUNS runs of n steps."""
    times = []
    for _ in range(RUNS):
        t = time.perf_counter()
        for _ in range(n):
            opt.zero_grad()
            loss().backward()
            opt.step()
        times.append((time.perf_counter() - t) / n)
    return sorted(times)[RUNS // 2], min(times)


def per_record(opt, loss, n):
    """The same for one step record, each made where the hook makes it:
    right after a step (untimed), so the parameters lie where the
    optimizer left them and the canonical pool's threads as the step's
    BLAS calls left them."""
    times = []
    for _ in range(RUNS):
        spent = 0.0
        for _ in range(n):
            opt.zero_grad()
            loss().backward()
            opt.step()
            t = time.perf_counter()
            ds._record_torch_step(torch, names, opt)
            spent += time.perf_counter() - t
        times.append(spent / n)
    return sorted(times)[RUNS // 2], min(times)


for label, make in (("mlp", mlp), ("transformer", transformer)):
    model, loss, n = make()
    params = sum(p.numel() for p in model.parameters())
    print("  %s: %.2fM parameters in %d tensors" % (label, params / 1e6,
                                                   len(list(model.parameters()))))
    opts = [("SGD", torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)),
            ("Adam", torch.optim.Adam(model.parameters(), lr=1e-4))]
    if label == "mlp":  # the training benchmark's own optimizer (torch_prog.py)
        opts.insert(0, ("SGD0", torch.optim.SGD(model.parameters(), lr=0.05)))
    for name, opt in opts:
        (step, step_best), (record, record_best) = per_step(opt, loss, n), per_record(opt, loss, n)
        tensors = [p for g in opt.param_groups for p in g["params"]]
        tensors += [v for p in list(tensors) for v in opt.state[p].values() if torch.is_tensor(v)]
        mb = sum(t.numel() * t.element_size() for t in tensors) / 1e6
        print("    %-5s step %7.2f ms   step record %6.1f us (%d tensors, %.1f MB)   %.2f%% of a "
              "step (best runs: %.2f ms, %.1f us, %.2f%%)"
              % (name, step * 1e3, record * 1e6, len(tensors), mb, 100 * record / step,
                 step_best * 1e3, record_best * 1e6, 100 * record_best / step_best))
    if label == "mlp":
        mlp_opt, mlp_loss = opt, loss

plain = per_step(mlp_opt, mlp_loss, max(steps // 10, 3))[0]
ds._hook_torch_ops(torch)
ops = per_step(mlp_opt, mlp_loss, max(steps // 10, 3))[0]
print("  ops on (mlp, Adam): step %.2f ms against %.2f ms: ratio %.2f (a debugging mode)"
      % (ops * 1e3, plain * 1e3, ops / plain))
