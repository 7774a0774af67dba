#!/usr/bin/env python3
"""Which CUDA library calls of a PyTorch CUDA build the shim sees.

`make gpu-coverage` runs this. PyTorch's CUDA wheel links cuBLAS,
cuBLASLt, cuDNN and NCCL dynamically, so the undefined dynamic symbols of
torch/lib/libtorch_cuda.so are the calls an LD_PRELOAD shim can and must
catch. Each import of the families below is classified by the table RULES
(compute, set-up, or no wrapper needed, each with its reason) and looked
up among the shim's exports (nm -D --defined-only build/libdetshim.so).
Exit status 1 when a compute call or a pinned set-up call of
libtorch_cuda.so has no wrapper, or an import matches no rule (a new
torch imports something nobody has reasoned about yet); 2 on trouble.

Where the libraries come from:
  default      the newest torch on PyPI: `pip download --no-deps`
               into a temporary directory, only libtorch_cuda.so and
               libtorch_cuda_linalg.so extracted, the wheel deleted at once
               (it is over 500 MB); --out docs/gpu-coverage.md is written
  --lib-dir D  an installed torch's lib folder (scripts/gpu-check.sh runs
               it against the device's own torch); prints the table only
libtorch_cuda_linalg.so (MAGMA, linked statically into it, and cuSOLVER)
is counted and listed, not failed on: see docs/gpu.md.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile

FAMILIES = ("cublasLt", "cublas", "cudnn", "nccl", "curand")
LIBS = ("libtorch_cuda.so", "libtorch_cuda_linalg.so")

COMPUTE, PINNED, SETUP, NONE = "compute", "set-up, pinned", "set-up", "no wrapper needed"

# (regex over the unversioned name, class, reason); the first match wins.
RULES = [
    # --- cuBLASLt
    (r"cublasLtMatmul$", COMPUTE, "addmm/linear with bias and epilogues"),
    (r"cublasLtMatmulAlgoGetHeuristic$", PINNED, "the algorithm choice: reduction schemes "
     "masked to NONE"),
    (r"cublasLtMatmulAlgo(Init|Check|ConfigSetAttribute)$", SETUP, "TunableOp builds "
     "algorithms by hand; the pytorch policy turns TunableOp off and cublasLtMatmul records "
     "the algorithm it gets (id, split-K, reduction scheme)"),
    (r"cublasLt(MatmulAlgoConfigGetAttribute|GetVersion)$", NONE, "a query"),
    (r"cublasLtMatmulPreferenceSetAttribute$", NONE, "a preference: the reduction-scheme "
     "mask is set to NONE again at each heuristic query"),
    (r"cublasLt(MatmulDesc|MatrixLayout|MatmulPreference)(Create|Destroy|SetAttribute)$",
     NONE, "descriptors: cublasLtMatmul reads them back when it records"),
    # --- cuBLAS compute: level 3, 2, 1 and the batched solvers
    (r"cublas[SDCZH]?gemm(_v2|Ex|StridedBatched|Batched)?(_64)?$", COMPUTE, "GEMM"),
    (r"cublasGemm(Ex|BatchedEx|StridedBatchedEx)(_64)?$", COMPUTE, "GEMM"),
    (r"cublas[SDCZ]gemv(_v2)?(_64)?$", COMPUTE, "mv/addmv"),
    (r"cublas([SD]dot|[CZ]dot[cu])(_v2)?(_64)?$", COMPUTE, "dot/vdot"),
    (r"cublasDotEx(_64)?$", COMPUTE, "dot of half/bfloat16"),
    (r"cublas[SDCZ]trsm(_v2|Batched)(_64)?$", COMPUTE, "triangular solve"),
    (r"cublas[SDCZ](getrf|getrs|geqrf|gels)Batched$", COMPUTE, "batched LU, QR, least squares"),
    (r"cublas[SDCZI]\w*(axpy|copy|scal|swap|rot|rotg|rotm|rotmg|asum|nrm2|amax|amin|ger|gerc|"
     r"geru|symv|hemv|syr|syr2|her|her2|trmv|trsv|symm|hemm|syrk|herk|syr2k|her2k|trmm)"
     r"(_v2)?(_64)?$", COMPUTE, "BLAS (MAGMA's calls in libtorch_cuda_linalg.so)"),
    # --- cuBLAS set-up
    (r"cublasCreate_v2$", PINNED, "atomics off, default math under tf32 = deny"),
    (r"cublasSetMathMode$", PINNED, "TF32 math overridden under tf32 = deny"),
    (r"cublasSetAtomicsMode$", PINNED, "atomics refused"),
    (r"cublasSetSmCountTarget$", PINNED, "an SM carveout changes kernels: refused in pinned "
     "mode, recorded"),
    (r"cublasSetWorkspace_v2$", SETUP, "one workspace per handle and stream, as "
     "CUBLAS_WORKSPACE_CONFIG asks; the size is torch's and the same run to run"),
    (r"cublas(SetStream_v2|SetPointerMode_v2)$", SETUP, "read back by each compute wrapper"),
    (r"cublas(Destroy_v2|Get\w*)$", NONE, "teardown or a query"),
    (r"cublas(Set|Get)(Matrix|Vector)(Async)?$", NONE, "copies, no arithmetic"),
    # --- cuDNN compute
    (r"cudnnConvolution(Forward|BackwardData|BackwardFilter|BiasActivationForward)$", COMPUTE,
     "convolution"),
    (r"cudnnBackendExecute$", COMPUTE, "graph API (convolutions, attention)"),
    (r"cudnnBatchNormalization(ForwardTrainingEx|BackwardEx|ForwardInference|ForwardTraining|"
     r"Backward)$", COMPUTE, "BatchNorm"),
    (r"cudnnRNN(Forward|BackwardData_v8|BackwardWeights_v8)$", COMPUTE, "RNN/LSTM/GRU"),
    (r"cudnnCTCLoss(_v8)?$", COMPUTE, "CTC loss"),
    (r"cudnnSpatialTf(GridGenerator|Sampler)(Forward|Backward)$", COMPUTE,
     "affine_grid/grid_sample"),
    (r"cudnnPooling(Forward|Backward)$", COMPUTE, "pooling"),
    # --- cuDNN set-up
    (r"cudnn(Find|Get)Convolution\w*Algorithm(Ex|_v7)?$", PINNED, "the algorithm list, "
     "filtered to deterministic ones"),
    (r"cudnnBackend(Finalize|GetAttribute)$", PINNED, "engine choice: nondeterministic "
     "engines named"),
    (r"cudnnSetConvolutionMathType$", PINNED, "tensor-op math with FP32 conversion (TF32) "
     "lowered under tf32 = deny"),
    (r"cudnn(Set|Restore)DropoutDescriptor$", PINNED, "the RNN dropout seed, derived from "
     "the run's seed"),
    (r"cudnnGet(BatchNormalization\w*|CTCLossWorkspaceSize(_v8)?)$", PINNED, "a size query "
     "answered for the mode or algorithm pinned mode runs"),
    (r"cudnnSetSpatialTransformerNdDescriptor$", PINNED, "its dims, which cuDNN cannot be "
     "asked for, size the grid generator's digests"),
    (r"cudnn(Get\w*(WorkspaceSize|SpaceSizes?)|DropoutGetStatesSize)$", NONE, "a size query"),
    (r"cudnn(Create|Destroy|Set|Get)\w*Descriptor(Ex|_v8|_v9)?$", NONE, "descriptors: read "
     "back by the compute wrappers"),
    (r"cudnnSetConvolutionGroupCount$", NONE, "a descriptor field"),
    (r"cudnnBackend(Create|Destroy)Descriptor$|cudnnBackendSetAttribute$", NONE,
     "descriptors: the plan is checked at Finalize"),
    (r"cudnn(Create|Destroy|SetStream|GetStream|GetVersion|GetCudartVersion|GetErrorString|"
     r"GetLastErrorString|GetRNNWeightParams)$", NONE, "handle, stream or a query"),
    # --- NCCL (issue 17)
    (r"nccl(AllReduce|AllGather|ReduceScatter|Reduce|Bcast|Broadcast|AlltoAll|Gather|Scatter|"
     r"Send|Recv|PutSignal)$", COMPUTE, "collective or point-to-point (issue 17)"),
    (r"nccl(Signal|WaitSignal)$", NONE, "a signal, no data"),
    (r"nccl(CommInit\w*|CommSplit|CommShrink|CommGrow|GroupStart|GroupEnd|GroupSimulateEnd)$",
     SETUP, "communicator set-up and grouping: algorithm and protocol pinned by environment"),
    (r"nccl\w+$", NONE, "communicator bookkeeping, memory, or a query"),
    # --- cuRAND
    (r"curandGenerate\w*$", COMPUTE, "random numbers"),
    (r"curand\w+$", SETUP, "generator set-up"),
]


def die(msg):
    print(f"gpu-coverage: {msg}", file=sys.stderr)
    sys.exit(2)


def family(name):
    return next((f for f in FAMILIES if name.startswith(f)), None)


def classify(name):
    for pat, cls, why in RULES:
        if re.match(pat, name):
            return cls, why
    return None, "matches no rule of scripts/gpu-coverage.py: classify it"


def nm(path, defined):
    flag = "--defined-only" if defined else "--undefined-only"
    out = subprocess.run(["nm", "-D", flag, path], capture_output=True, text=True)
    if out.returncode != 0:
        die(f"nm failed on {path}: {out.stderr.strip()}")
    names = set()
    for line in out.stdout.splitlines():
        parts = line.split()
        if parts:
            names.add(parts[-1].split("@")[0])
    return names


def newest_torch():
    out = subprocess.run([sys.executable, "-m", "pip", "index", "versions", "torch"],
                         capture_output=True, text=True)
    m = re.search(r"^torch \(([^)]+)\)", out.stdout, re.M)
    if not m:
        die("cannot read the newest torch version from `pip index versions torch`: "
            + (out.stderr.strip().splitlines() or ["no output"])[-1])
    return m.group(1)


def fetch_libs(version, dest):
    """Extracts LIBS of torch==version's wheel into dest; returns torch.__version__."""
    free = shutil.disk_usage(dest).free
    if free < 3 << 30:
        die(f"{dest} has {free >> 20} MiB free; the wheel needs about 1 GiB and its "
            "libraries 600 MB: free space or set TMPDIR")
    wheels = os.path.join(dest, "wheel")
    rc = subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--no-cache-dir",
                         "-q", f"torch=={version}", "-d", wheels]).returncode
    found = [f for f in os.listdir(wheels)] if os.path.isdir(wheels) else []
    if rc != 0 or len(found) != 1:
        die(f"pip download torch=={version} failed")
    wheel = os.path.join(wheels, found[0])
    try:
        with zipfile.ZipFile(wheel) as z:
            for lib in LIBS:
                if f"torch/lib/{lib}" in z.namelist():
                    z.extract(f"torch/lib/{lib}", dest)
            tv = z.read("torch/version.py").decode()
    finally:
        os.unlink(wheel)
    m = re.search(r"^__version__ = '([^']+)'", tv, re.M)
    return os.path.join(dest, "torch", "lib"), m.group(1) if m else version


def table(rows, exports):
    lines = ["| family | import | class | wrapped | why |", "|---|---|---|---|---|"]
    for name in sorted(rows, key=lambda n: (family(n), n)):
        cls, why = classify(name)
        lines.append(f"| {family(name)} | `{name}` | {cls or 'UNCLASSIFIED'} | "
                     f"{'yes' if name in exports else 'no'} | {why} |")
    return lines


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lib-dir", help="an installed torch's lib folder (no download)")
    ap.add_argument("--version", help="torch version to download (default: PyPI's newest)")
    ap.add_argument("--shim", default="build/libdetshim.so")
    ap.add_argument("--out", help="markdown file to write (default with a download: "
                    "docs/gpu-coverage.md)")
    a = ap.parse_args()
    if not os.path.exists(a.shim):
        die(f"{a.shim} not found: run `make all` first")
    exports = nm(a.shim, True)
    tmp = None
    try:
        if a.lib_dir:
            libdir, version = a.lib_dir, a.version or "installed"
            vfile = os.path.join(libdir, "..", "version.py")
            if os.path.exists(vfile):
                m = re.search(r"^__version__ = '([^']+)'", open(vfile).read(), re.M)
                version = m.group(1) if m else version
        else:
            tmp = tempfile.mkdtemp(prefix="gpu-coverage.")
            libdir, version = fetch_libs(a.version or newest_torch(), tmp)
            a.out = a.out or "docs/gpu-coverage.md"
        imports, cusolver = {}, 0
        for lib in LIBS:
            path = os.path.join(libdir, lib)
            if os.path.exists(path):
                names = nm(path, False)
                imports[lib] = {n for n in names if family(n)}
                if lib != "libtorch_cuda.so":
                    cusolver = sum(n.startswith("cusolver") for n in names)
        if "libtorch_cuda.so" not in imports:
            die(f"no libtorch_cuda.so in {libdir}: not a CUDA build of torch")
        report(a, version, imports, exports, cusolver)
    finally:
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)


def report(a, version, imports, exports, cusolver):
    main_imp = imports["libtorch_cuda.so"]
    bad = []
    for n in sorted(main_imp):
        cls, _ = classify(n)
        if cls is None or (cls in (COMPUTE, PINNED) and n not in exports):
            bad.append((n, cls or "unclassified"))
    out = [f"torch {version}: libtorch_cuda.so imports {len(main_imp)} functions of "
           f"{', '.join(FAMILIES)}"]
    for fam in FAMILIES:
        names = [n for n in main_imp if family(n) == fam]
        comp = [n for n in names if classify(n)[0] == COMPUTE]
        out.append(f"  {fam:9s} {len(names):3d} imports, {len(comp):3d} compute, "
                   f"{sum(n in exports for n in comp):3d} of them wrapped")
    linalg = imports.get("libtorch_cuda_linalg.so", set())
    extra = sorted(n for n in linalg if n not in main_imp)
    lin_comp = [n for n in linalg if classify(n)[0] == COMPUTE]
    out.append(f"libtorch_cuda_linalg.so (MAGMA): {len(linalg)} cuBLAS imports, {len(extra)} "
               f"not imported by libtorch_cuda.so; {sum(n in exports for n in lin_comp)} of "
               f"its {len(lin_comp)} compute calls wrapped; {cusolver} cuSOLVER imports "
               "(a family the shim does not intercept)")
    for n, cls in bad:
        out.append(f"UNWRAPPED {cls}: {n}")
    out.append(f"verdict: {len(bad)} unwrapped compute or pinned set-up calls in "
               f"libtorch_cuda.so")
    print("\n".join(out))
    if a.out:
        with open(a.out, "w") as f:
            f.write(f"# GPU coverage: torch {version}\n\n"
                    "Written by `make gpu-coverage` (scripts/gpu-coverage.py); do not edit by "
                    "hand. What the classes mean and what the shim does for each call: "
                    "[gpu.md](gpu.md#coverage-of-a-pytorch-training-step).\n\n"
                    "```\n" + "\n".join(out) + "\n```\n\n## libtorch_cuda.so\n\n"
                    + "\n".join(table(main_imp, exports)) + "\n\n"
                    "## libtorch_cuda_linalg.so, beyond libtorch_cuda.so's\n\n"
                    "Counted, not failed on: MAGMA's and cuSOLVER's linear algebra "
                    "(torch.linalg on CUDA) is not part of a training step's "
                    "forward and backward.\n\n"
                    + "\n".join(table(extra, exports)) + "\n")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
