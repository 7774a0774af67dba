#!/bin/sh
# The Python start-up hook (policies/python/sitecustomize.py) on its own,
# without the shim: with DETSHIM_TORCH_DETERMINISTIC=on or warn_only, torch
# comes out of its import deterministic whichever way it is imported; off
# or unset leaves torch alone; a program that never imports torch runs as
# without the hook; and the sitecustomize the hook hides (a user's,
# Debian's, a broken one) still runs as Python would run it.
. "$(dirname "$0")/lib.sh"
HOOK=$TOP/policies/python
unset DETSHIM_TORCH_DETERMINISTIC DETSHIM_TF_SEED PYTHONPATH

# The real torch: its import costs a second or two, so every run starts at
# once and the checks read their output afterwards.
cat > "$WORK/probe.py" <<'EOF'
import sys
exec(sys.argv[1])
import torch
cudnn = torch.backends.cudnn
print(torch.are_deterministic_algorithms_enabled(),
      torch.is_deterministic_algorithms_warn_only_enabled(),
      cudnn.benchmark, cudnn.deterministic)
EOF
# probe NAME MODE IMPORT: MODE "unset" leaves the variable out
probe() {
    if [ "$2" = unset ]; then
        PYTHONPATH=$HOOK $PY "$WORK/probe.py" "$3" > "$WORK/$1.out" 2> "$WORK/$1.err" &
    else
        DETSHIM_TORCH_DETERMINISTIC=$2 PYTHONPATH=$HOOK $PY "$WORK/probe.py" "$3" \
            > "$WORK/$1.out" 2> "$WORK/$1.err" &
    fi
}
probe on-import on "import torch"
probe on-from on "from torch import nn"
probe on-sub on "import torch.nn.functional"
probe warn warn_only "import torch"
probe off off "import torch"
probe unset unset "import torch"
wait
# expect_probe NAME WHAT WANT: the flags printed, and nothing on stderr
expect_probe() {
    expect_eq "$2 (deterministic, warn_only, cudnn benchmark, cudnn deterministic)" \
        "$3" "$(cat "$WORK/$1.out")"
    expect_eq "$2: nothing on stderr" "" "$(cat "$WORK/$1.err")"
}
expect_probe on-import "on, import torch" "True False False True"
expect_probe on-from "on, from torch import nn" "True False False True"
expect_probe on-sub "on, import torch.nn.functional" "True False False True"
expect_probe warn "warn_only, import torch" "True True False True"
expect_probe off "off: torch's defaults" "False False False False"
expect_probe unset "unset: torch's defaults" "False False False False"

# A stand-in torch, fast to import, for the ways in: it records each call.
mkdir -p "$WORK/fake/torch/backends" "$WORK/fake/torch/nn" "$WORK/old/torch/backends"
cat > "$WORK/fake/torch/__init__.py" <<'EOF'
calls = []
def use_deterministic_algorithms(mode, warn_only=False):
    calls.append((mode, warn_only))
EOF
printf 'benchmark = True\ndeterministic = False\n' > "$WORK/fake/torch/backends/cudnn.py"
touch "$WORK/fake/torch/backends/__init__.py" "$WORK/fake/torch/nn/__init__.py" \
    "$WORK/fake/torch/nn/functional.py"
printf 'import torch.nn.functional\n' > "$WORK/fake/uses_torch.py"
cat > "$WORK/fake-probe.py" <<'EOF'
import importlib, sys
if sys.argv[1] == "importlib":
    importlib.import_module("torch")
else:
    import uses_torch
import torch, torch.backends.cudnn
print(torch.calls, torch.backends.cudnn.benchmark, torch.backends.cudnn.deterministic,
      any(getattr(f, "detshim_hook_for", None) == "torch" for f in sys.meta_path))
EOF
out=$(DETSHIM_TORCH_DETERMINISTIC=on PYTHONPATH=$HOOK:$WORK/fake $PY "$WORK/fake-probe.py" importlib)
expect_eq "stand-in torch via importlib: set once, hook gone after" \
    "[(True, False)] False True False" "$out"
out=$(DETSHIM_TORCH_DETERMINISTIC=on PYTHONPATH=$HOOK:$WORK/fake $PY "$WORK/fake-probe.py" module)
expect_eq "stand-in torch imported by another module: set once, hook gone after" \
    "[(True, False)] False True False" "$out"
out=$(DETSHIM_TORCH_DETERMINISTIC=off PYTHONPATH=$HOOK:$WORK/fake $PY "$WORK/fake-probe.py" importlib)
expect_eq "stand-in torch, off: nothing called, no hook installed" "[] True False False" "$out"

# A program's torch.cuda.tunable.enable(True) (torch >= 2.3) under a policy
# that pins PYTORCH_TUNABLEOP_ENABLED=0: TunableOp stays off, said once.
mkdir -p "$WORK/fake/torch/cuda"
printf 'from . import tunable\n' > "$WORK/fake/torch/cuda/__init__.py"
printf 'state = []\ndef enable(val=True):\n    state.append(val)\n' \
    > "$WORK/fake/torch/cuda/tunable.py"
printf 'from . import cuda\n' >> "$WORK/fake/torch/__init__.py"
printf 'import torch\nt = torch.cuda.tunable\nt.enable()\nt.enable(True)\nt.enable(False)\nprint(t.state)\n' \
    > "$WORK/tunable-probe.py"
DETSHIM_TORCH_DETERMINISTIC=on PYTORCH_TUNABLEOP_ENABLED=0 PYTHONPATH=$HOOK:$WORK/fake \
    $PY "$WORK/tunable-probe.py" > "$WORK/tunable.out" 2> "$WORK/tunable.err"
expect_eq "TunableOp pinned off: the program's enable() calls reach torch as False" \
    "[False, False, False]" "$(cat "$WORK/tunable.out")"
expect_grep "TunableOp pinned off: says so, and what to do" \
    '^detshim: torch.cuda.tunable.enable\(True\) was ignored: the policy keeps TunableOp off .*remove the call' \
    "$WORK/tunable.err"
expect_lines "TunableOp pinned off: one line, however many calls" 1 "$WORK/tunable.err"
# The function torch.cuda.tunable.enable calls, called by the program itself.
printf 'cstate = []\ndef _cuda_tunableop_enable(val):\n    cstate.append(val)\n' \
    > "$WORK/fake/torch/_C.py"
printf 'from . import _C\n' >> "$WORK/fake/torch/__init__.py"
printf 'import torch\ntorch._C._cuda_tunableop_enable(True)\nprint(torch._C.cstate)\n' \
    > "$WORK/tunable-c-probe.py"
DETSHIM_TORCH_DETERMINISTIC=on PYTORCH_TUNABLEOP_ENABLED=0 PYTHONPATH=$HOOK:$WORK/fake \
    $PY "$WORK/tunable-c-probe.py" > "$WORK/tunable-c.out" 2> "$WORK/tunable-c.err"
expect_eq "TunableOp pinned off: torch._C._cuda_tunableop_enable(True) reaches torch as False" \
    "[False]" "$(cat "$WORK/tunable-c.out")"
expect_grep "TunableOp pinned off: the direct call is named" \
    '^detshim: torch._C._cuda_tunableop_enable\(True\) was ignored: the policy keeps TunableOp off' \
    "$WORK/tunable-c.err"
DETSHIM_TORCH_DETERMINISTIC=on PYTHONPATH=$HOOK:$WORK/fake $PY "$WORK/tunable-probe.py" \
    > "$WORK/tunable-free.out" 2>&1
expect_eq "TunableOp not pinned by the policy: the program's calls as they were" \
    "[True, True, False]" "$(cat "$WORK/tunable-free.out")"

# A torch too old for warn_only: one detshim line, and the program goes on.
printf 'def use_deterministic_algorithms(mode):\n    pass\n' > "$WORK/old/torch/__init__.py"
cp "$WORK/fake/torch/backends/"*.py "$WORK/old/torch/backends/"
DETSHIM_TORCH_DETERMINISTIC=warn_only PYTHONPATH=$HOOK:$WORK/old \
    $PY -c 'import torch; print("went on", torch.backends.cudnn.deterministic)' \
    > "$WORK/old.out" 2> "$WORK/old.err"
expect_eq "torch without warn_only: exit status" 0 $?
expect_eq "torch without warn_only: the program went on, cudnn still set" \
    "went on True" "$(cat "$WORK/old.out")"
expect_grep "torch without warn_only: says what and what to do" \
    '^detshim: could not call torch.use_deterministic_algorithms\(True, warn_only=True\).*DETSHIM_TORCH_DETERMINISTIC=on' \
    "$WORK/old.err"
expect_lines "torch without warn_only: one line" 1 "$WORK/old.err"

# A torch whose import fails: the user sees torch's own error.
mkdir -p "$WORK/broken/torch"
printf 'raise ImportError("libtorch_cpu.so: cannot open")\n' > "$WORK/broken/torch/__init__.py"
DETSHIM_TORCH_DETERMINISTIC=on PYTHONPATH=$HOOK:$WORK/broken $PY -c 'import torch' 2> "$WORK/broken.err"
expect_eq "torch that fails to import: exit status" 1 $?
expect_eq "torch that fails to import: torch's own error, nothing more" \
    "ImportError: libtorch_cpu.so: cannot open" "$(tail -1 "$WORK/broken.err")"
expect_no_grep "torch that fails to import: no detshim line" '^detshim:' "$WORK/broken.err"

# A program that never imports torch: same output, same modules loaded.
cat > "$WORK/no-torch.py" <<'EOF'
import atexit, json, sys
atexit.register(lambda: print("torch at exit:", "torch" in sys.modules))
print(json.dumps(sorted(sys.modules)))
EOF
$PY "$WORK/no-torch.py" > "$WORK/no-torch-plain.out" 2>&1
DETSHIM_TORCH_DETERMINISTIC=on PYTHONPATH=$HOOK $PY "$WORK/no-torch.py" > "$WORK/no-torch-hook.out" 2>&1
expect_eq "no torch: output identical with and without the hook" \
    "$(cat "$WORK/no-torch-plain.out")" "$(cat "$WORK/no-torch-hook.out")"
expect_grep "no torch: torch not loaded at exit" '^torch at exit: False$' "$WORK/no-torch-hook.out"

# A user's sitecustomize after ours on PYTHONPATH runs once, and is the one
# `import sitecustomize` gives, as without the hook.
mkdir -p "$WORK/user"
printf 'print("user sitecustomize ran")\n' > "$WORK/user/sitecustomize.py"
DETSHIM_TORCH_DETERMINISTIC=on PYTHONPATH=$HOOK:$WORK/user \
    $PY -c 'import sitecustomize; print(sitecustomize.__file__)' > "$WORK/user.out" 2>&1
expect_eq "user sitecustomize: runs once and stays the module" \
    "user sitecustomize ran
$WORK/user/sitecustomize.py" "$(cat "$WORK/user.out")"

# Debian's sitecustomize installs apport's exception hook when apport is
# there: a stand-in apport shows that it still runs, from the system file.
mkdir -p "$WORK/apport"
printf 'def install():\n    print("apport hook installed")\n' > "$WORK/apport/apport_python_hook.py"
show='import sitecustomize; print(sitecustomize.__file__)'
PYTHONPATH=$WORK/apport $PY -c "$show" > "$WORK/system-plain.out" 2>&1
DETSHIM_TORCH_DETERMINISTIC=on PYTHONPATH=$HOOK:$WORK/apport $PY -c "$show" > "$WORK/system-hook.out" 2>&1
expect_grep "system sitecustomize: runs without the hook (so the check means something)" \
    '^apport hook installed$' "$WORK/system-plain.out"
expect_eq "system sitecustomize: same effect and same module with the hook" \
    "$(cat "$WORK/system-plain.out")" "$(cat "$WORK/system-hook.out")"

# A sitecustomize that raises: reported as site.py reports it, and the
# program runs on.
mkdir -p "$WORK/raises"
printf 'raise RuntimeError("broken user sitecustomize")\n' > "$WORK/raises/sitecustomize.py"
PYTHONPATH=$WORK/raises $PY -c 'print("program ran")' > "$WORK/raises-plain.out" 2>&1
DETSHIM_TORCH_DETERMINISTIC=on PYTHONPATH=$HOOK:$WORK/raises $PY -c 'print("program ran")' \
    > "$WORK/raises-hook.out" 2>&1
expect_eq "raising sitecustomize: exit status" 0 $?
expect_eq "raising sitecustomize: same report and output as without the hook" \
    "$(cat "$WORK/raises-plain.out")" "$(cat "$WORK/raises-hook.out")"
expect_grep "raising sitecustomize: the program ran" '^program ran$' "$WORK/raises-hook.out"
# TensorFlow's seed, on a stand-in tensorflow: set right after its import,
# and a program's own tf.random.set_seed still wins.
mkdir -p "$WORK/fake/tensorflow"
cat > "$WORK/fake/tensorflow/__init__.py" <<'EOF'
class random:
    seeds = []
    @staticmethod
    def set_seed(s):
        random.seeds.append(s)
EOF
out=$(DETSHIM_TF_SEED=7 PYTHONPATH=$HOOK:$WORK/fake $PY -c '
import tensorflow as tf
tf.random.set_seed(42)
print(tf.random.seeds)')
expect_eq "DETSHIM_TF_SEED: seeded after import, the program's own seed after it" "[7, 42]" "$out"
out=$(PYTHONPATH=$HOOK:$WORK/fake $PY -c 'import tensorflow as tf; print(tf.random.seeds)')
expect_eq "DETSHIM_TF_SEED unset: tensorflow untouched" "[]" "$out"
DETSHIM_TF_SEED=abc PYTHONPATH=$HOOK $PY -c pass 2> "$WORK/tfseed.err"
expect_grep "DETSHIM_TF_SEED=abc: one line saying what to do" \
    "^detshim: DETSHIM_TF_SEED=abc is not a whole number" "$WORK/tfseed.err"
expect_lines "DETSHIM_TF_SEED=abc: one line" 1 "$WORK/tfseed.err"
finish
