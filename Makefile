# detshim: one GNU Makefile, wildcards, no generated build system.
#   make            build/libdetshim.so, build/libdetshim-audit.so, build/detdiff,
#                   build/libdetshim-reader.so (the trace reader, include/detshim.h)
#   make test       everything CI runs (installs missing packages first)
#   make check      every test that needs no network and no PyPI venv
#   make integration T=test-detdiff   one integration test (or several) alone
#   make demo       a small training run twice under the shim, diffed
#   make bench      overhead and throughput benchmarks
#   make install    PREFIX (/usr/local) and DESTDIR honoured

PREFIX ?= /usr/local
B := build
CC ?= cc
CFLAGS ?= -O2 -g
WERROR ?= -Werror
WARN := -Wall -Wextra $(WERROR)
CPPFLAGS += -Iinclude -Ishim -D_GNU_SOURCE
SHIM_CFLAGS := -std=c11 -fPIC -fvisibility=hidden $(WARN)
# Every compile writes the headers it read into a .d file beside its
# output, included below: a header change rebuilds exactly what uses it.
DEPFLAGS := -MMD -MP
PYTHON ?= /usr/bin/python3

CORE_SRC := $(wildcard shim/core/*.c)
# The reader is not part of the preloaded shim: it is libdetshim-reader.
READER_SRC := $(wildcard shim/trace/reader*.c)
TRACE_SRC := $(filter-out $(READER_SRC),$(wildcard shim/trace/*.c))
BLAS_SRC := $(wildcard shim/blas/*.c)
RNG_SRC := $(wildcard shim/rng/*.c)
CUDA_SRC := $(wildcard shim/cuda/*.c)
NCCL_SRC := $(wildcard shim/nccl/*.c)
ARTIFACT_SRC := $(wildcard shim/artifact/*.c)
# Records the Python start-up hook makes: training steps, framework ops.
FRAMEWORK_SRC := $(wildcard shim/framework/*.c)
# The libc interposers stay out of the unit tests: a test program's own
# open and read must be libc's.
LIBC_SRC := $(wildcard shim/libc/*.c)
DETDIFF_SRC := $(wildcard shim/detdiff/*.c)
GEN_BLAS := $(B)/gen/blas_wrappers.c

obj = $(patsubst %.c,$(B)/obj/%.o,$(1))
# The device digest kernels' PTX, embedded in the shim; built when nvcc is
# found (NVCC= to build without), else an empty string: copy-and-hash only.
NVCC ?= $(firstword $(wildcard /usr/local/cuda/bin/nvcc) $(shell command -v nvcc 2>/dev/null))
GEN_PTX := $(B)/gen/digest_ptx.c
PTX_OBJ := $(B)/obj/gen/digest_ptx.o
ifneq ($(NVCC),)
CPPFLAGS += -DDETSHIM_DIGEST_KERNEL=1
endif
LIB_OBJ := $(call obj,$(CORE_SRC) $(TRACE_SRC) $(BLAS_SRC) $(RNG_SRC) $(CUDA_SRC) \
    $(NCCL_SRC) $(ARTIFACT_SRC) $(FRAMEWORK_SRC)) $(PTX_OBJ)
LIBC_OBJ := $(call obj,$(LIBC_SRC))
# The lifecycle (constructor, fork handlers, destructor) lives apart so
# unit tests can link every other object without starting a shim.
CTOR_OBJ := $(call obj,$(wildcard shim/life/*.c))
GEN_OBJ := $(B)/obj/gen/blas_wrappers.o
# The reader library: the reader and the format code it shares with the
# writer (chain and roots, frame checks).
READER_OBJ := $(call obj,$(READER_SRC) shim/trace/chain.c shim/trace/sha256.c shim/trace/frame.c \
    shim/trace/zstd_lib.c)
READER_SONAME := libdetshim-reader.so.0
SHIM_LIBS := -lcrypto -linih -ldl -lpthread -lm

UNIT_SRC := $(wildcard tests/unit/test_*.c)
UNIT_BIN := $(patsubst tests/unit/%.c,$(B)/tests/%,$(UNIT_SRC))
FAKE_SRC := $(wildcard tests/fakes/*.c)
FAKE_LIB := $(patsubst tests/fakes/%.c,$(B)/fakes/lib%.so,$(FAKE_SRC))
PROG_SRC := $(wildcard tests/programs/*.c)
PROG_BIN := $(patsubst tests/programs/%.c,$(B)/programs/%,$(PROG_SRC))

.PHONY: all test check unit integration demo bench install deps clean
all: $(B)/libdetshim.so $(B)/libdetshim-audit.so $(B)/libdetshim-reader.so $(B)/detdiff \
    $(B)/detverify

$(B)/obj/%.o: %.c $(B)/obj/%.d
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(SHIM_CFLAGS) $(DEPFLAGS) -c -o $@ $<

# The files built for a wider instruction set; used only where the CPU
# has it (shim/trace/digest.c checks).
$(B)/obj/shim/trace/xxh3_avx2.o: SHIM_CFLAGS += -mavx2
$(B)/obj/shim/trace/xxh3_avx512.o: SHIM_CFLAGS += -mavx512f -mavx512dq
# Every file with AVX code, without GCC's IPA register allocation: with it,
# GCC 12 drops the VZEROUPPER before a call from AVX code to a function of
# the same file that uses no ymm register, so the canonical ddot, gemv,
# axpy ... returned with the upper halves of the vector registers dirty,
# and the caller's SSE code then ran up to 30 times slower on Intel
# (docs/blas.md, "The caller's vector state"; tests/unit/avx_state.h
# checks every call). Clang has no such flag and needs none.
AVX_SRC := shim/blas/canonical_blas_avx2.c shim/blas/canonical_blas_avx2_complex.c \
    shim/blas/canonical_blas_avx512.c shim/blas/canonical_gemm_avx2.c \
    shim/blas/canonical_gemm_avx512.c shim/trace/xxh3_avx2.c shim/trace/xxh3_avx512.c
NO_IPA_RA := $(shell $(CC) -Werror -fno-ipa-ra -x c -c -o /dev/null /dev/null 2>/dev/null && \
    echo -fno-ipa-ra)
$(patsubst %.c,$(B)/obj/%.o,$(AVX_SRC)): SHIM_CFLAGS += $(NO_IPA_RA)

$(GEN_BLAS): scripts/gen-blas-wrappers.py
	@mkdir -p $(dir $@)
	$(PYTHON) $< > $@.tmp && mv $@.tmp $@

$(GEN_OBJ): $(GEN_BLAS)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(SHIM_CFLAGS) $(DEPFLAGS) -c -o $@ $<

ifneq ($(NVCC),)
$(B)/gen/digest.ptx: shim/cuda/digest.cu shim/cuda/cuda_digest_kernel.h
	@mkdir -p $(dir $@)
	$(NVCC) --ptx -arch=compute_75 -Iinclude -Ishim -o $@ $<

$(GEN_PTX): scripts/embed-ptx.py $(B)/gen/digest.ptx
	$(PYTHON) $< $(B)/gen/digest.ptx > $@.tmp && mv $@.tmp $@
else
$(GEN_PTX): scripts/embed-ptx.py
	@mkdir -p $(dir $@)
	$(PYTHON) $< > $@.tmp && mv $@.tmp $@
endif

$(PTX_OBJ): $(GEN_PTX)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(SHIM_CFLAGS) $(DEPFLAGS) -c -o $@ $<

$(B)/libdetshim.so: $(LIB_OBJ) $(LIBC_OBJ) $(CTOR_OBJ) $(GEN_OBJ)
	$(CC) -shared -Wl,-z,defs -Wl,-soname,libdetshim.so -o $@ $^ $(SHIM_LIBS)

# The rtld-audit module (LD_AUDIT) stands alone: the dynamic linker loads
# it in a namespace of its own, before the program and the shim.
$(B)/libdetshim-audit.so: $(call obj,shim/audit/audit.c)
	$(CC) -shared -Wl,-z,defs -Wl,-soname,libdetshim-audit.so -o $@ $^

# Exports only the DETSHIM_API functions of include/detshim.h (hidden
# visibility for the rest); the .so link is for -ldetshim-reader.
$(B)/$(READER_SONAME): $(READER_OBJ)
	$(CC) -shared -Wl,-z,defs -Wl,-soname,$(READER_SONAME) -o $@ $^ -lcrypto

$(B)/libdetshim-reader.so: $(B)/$(READER_SONAME)
	ln -sf $(READER_SONAME) $@

# detdiff reads traces through the reader library, as any other tool
# would; it finds it beside itself (build/) or in ../lib once installed.
$(B)/detdiff: $(call obj,$(DETDIFF_SRC)) $(B)/libdetshim-reader.so
	$(CC) -o $@ $(filter %.o,$^) -L$(B) -ldetshim-reader -Wl,-rpath,'$$ORIGIN:$$ORIGIN/../lib'

# detverify reuses detdiff's comparison (diff.o, pair.o) and nothing of its output,
# and reads traces through the reader library as detdiff does.
DETVERIFY_SRC := $(wildcard shim/detverify/*.c)
$(call obj,$(DETVERIFY_SRC)): CPPFLAGS += -Ishim/detdiff
$(B)/detverify: $(call obj,$(DETVERIFY_SRC)) $(call obj,shim/detdiff/diff.c shim/detdiff/pair.c shim/detdiff/windows.c) $(B)/libdetshim-reader.so
	$(CC) -o $@ $(filter %.o,$^) -L$(B) -ldetshim-reader -lcrypto -Wl,-rpath,'$$ORIGIN:$$ORIGIN/../lib'

# Unit tests link the shim's objects directly (not the .so), so internal
# functions are reachable; wrappers and the constructor stay out.
$(B)/tests/%: tests/unit/%.c $(LIB_OBJ) $(READER_OBJ) $(call obj,$(DETDIFF_SRC))
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -std=c11 $(WARN) -Wno-unused-parameter $(DEPFLAGS) $(UNIT_EXTRA) -o $@ $< \
	    $(LIB_OBJ) $(call obj,$(READER_SRC)) \
	    $(filter-out $(B)/obj/shim/detdiff/main.o,$(call obj,$(DETDIFF_SRC))) \
	    $(SHIM_LIBS) -lcmocka -lm

# detdiff's comparison is tested alone; its header lives beside it.
$(B)/tests/test_diff: UNIT_EXTRA := -Ishim/detdiff

# The CUDA ABI test compares shim/cuda/cuda_api.h with the toolkit's
# headers where they are installed; elsewhere it reports itself skipped.
CUDA_INC ?= /usr/local/cuda/include
ifneq ($(wildcard $(CUDA_INC)/cublasLt.h $(CUDA_INC)/cudnn.h $(CUDA_INC)/curand.h),)
$(B)/tests/test_cuda_abi: UNIT_EXTRA := -DDETSHIM_HAVE_CUDA_HEADERS -isystem $(CUDA_INC) \
    -Wno-deprecated-declarations
endif

# The same for NCCL's ABI (shim/nccl/nccl_api.h) where nccl.h is installed.
NCCL_INC ?= $(firstword $(dir $(wildcard $(CUDA_INC)/nccl.h /usr/local/include/nccl.h \
    /usr/include/nccl.h)))
ifneq ($(NCCL_INC),)
ifneq ($(wildcard $(CUDA_INC)/cublasLt.h $(CUDA_INC)/cudnn.h $(CUDA_INC)/curand.h),)
$(B)/tests/test_nccl_abi: UNIT_EXTRA := -DDETSHIM_HAVE_NCCL_HEADER -isystem $(NCCL_INC) \
    -isystem $(CUDA_INC) -Wno-deprecated-declarations
endif
endif

# Device digests are tested on the fake driver, whose device memory is
# host memory; it is linked in so that dlopen("libcuda.so.1") finds it
# (test_framework: step records of device tensors).
$(B)/tests/test_cuda_digest $(B)/tests/test_framework: $(B)/fakes/libcuda.so.1
$(B)/tests/test_cuda_digest $(B)/tests/test_framework: UNIT_EXTRA := -Wl,--no-as-needed \
    $(B)/fakes/libcuda.so.1 -Wl,-rpath,$(abspath $(B)/fakes)

# The trace writer and core under ThreadSanitizer, for a stress test of
# their own code (tests/unit/tsan_trace.c, run by test-tsan.sh, which
# builds it and skips when no compiler here links -fsanitize=thread).
TSAN_CC ?= $(firstword $(shell command -v clang 2>/dev/null) $(CC))
TSAN_OBJ := $(patsubst %.c,$(B)/tsan/%.o,$(CORE_SRC) $(TRACE_SRC))
$(B)/tsan/%.o: %.c $(wildcard include/*.h include/detshim/*.h shim/*/*.h)
	@mkdir -p $(dir $@)
	$(TSAN_CC) $(CPPFLAGS) -O1 -g -fsanitize=thread $(SHIM_CFLAGS) -c -o $@ $<
$(B)/tsan/shim/trace/xxh3_avx2.o: SHIM_CFLAGS += -mavx2
$(B)/tsan/shim/trace/xxh3_avx512.o: SHIM_CFLAGS += -mavx512f -mavx512dq
$(B)/tests/tsan_trace: tests/unit/tsan_trace.c $(TSAN_OBJ)
	@mkdir -p $(dir $@)
	$(TSAN_CC) $(CPPFLAGS) -O1 -g -fsanitize=thread -std=c11 $(WARN) -o $@ $^ $(SHIM_LIBS)

$(B)/fakes/lib%.so: tests/fakes/%.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -std=gnu11 -fPIC -shared $(WARN) -o $@ $< -lm

# Fake CUDA libraries, built under the real libraries' sonames so that
# programs link and load them by those names (tests/fakes/cuda/fake.h).
GPU_FAKES := $(B)/fakes/libcuda.so.1 $(B)/fakes/libcublas.so.13 $(B)/fakes/libcublasLt.so.13 \
    $(B)/fakes/libcudnn.so.9 $(B)/fakes/libcurand.so.10
$(B)/fakes/libcuda.so.1: tests/fakes/cuda/cuda.c
$(B)/fakes/libcublas.so.13: tests/fakes/cuda/cublas.c tests/fakes/cuda/cublas_train.c
$(B)/fakes/libcublas.so.13: FAKE_LDFLAGS = -lm
$(B)/fakes/libcublasLt.so.13: tests/fakes/cuda/cublasLt.c
$(B)/fakes/libcudnn.so.9: tests/fakes/cuda/cudnn.c tests/fakes/cuda/cudnn_train.c \
    tests/fakes/cuda/cudnn_ops.c
$(B)/fakes/libcudnn.so.9: FAKE_LDFLAGS = -lm
$(B)/fakes/libcurand.so.10: tests/fakes/cuda/curand.c
# For gpu_dlsym: a vendor library that looks functions up itself, and a
# framework's stub that forwards to what dlsym answers.
GPU_FAKE_ADV := $(B)/fakes/libcudnn_adv.so.9 $(B)/fakes/libtfstub.so
$(B)/fakes/libcudnn_adv.so.9: tests/fakes/cuda/cudnn_adv.c
$(B)/fakes/libtfstub.so: tests/fakes/cuda/tfstub.c
$(B)/fakes/libtfstub.so: FAKE_LDFLAGS = -Wl,-rpath,$(abspath $(B)/fakes)
$(GPU_FAKES) $(GPU_FAKE_ADV): tests/fakes/cuda/fake.h shim/cuda/cuda_api.h shim/cuda/cuda_api_train.h \
    shim/cuda/cuda_digest_kernel.h
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -std=gnu11 -fPIC -shared $(WARN) -Wl,-soname,$(notdir $@) \
	    -o $@ $(filter %.c,$^) $(FAKE_LDFLAGS)

$(B)/programs/gpu_prog $(B)/programs/gpu_pending $(B)/programs/gpu_gemm64 \
    $(B)/programs/gpu_conv_algo $(B)/programs/gpu_train: $(B)/programs/%: tests/programs/%.c $(GPU_FAKES) \
    tests/programs/gpu_util.h
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) -Itests/fakes/cuda $(CFLAGS) -std=gnu11 $(WARN) -o $@ $< \
	    -Wl,--no-as-needed $(GPU_FAKES) -Wl,-rpath,$(abspath $(B)/fakes)

# A fake NCCL (tests/fakes/nccl), linked to the fake driver as the real
# one loads libcuda; its programs link both by soname.
NCCL_FAKE := $(B)/fakes/libnccl.so.2
$(NCCL_FAKE): tests/fakes/nccl/nccl.c shim/nccl/nccl_api.h shim/nccl/nccl_elem.h \
    $(B)/fakes/libcuda.so.1
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -std=gnu11 -fPIC -shared $(WARN) -Wl,-soname,$(notdir $@) \
	    -o $@ $< -Wl,--no-as-needed $(B)/fakes/libcuda.so.1 -Wl,-rpath,$(abspath $(B)/fakes) \
	    -lpthread -lrt
NCCL_PROGS := $(B)/programs/nccl_ranks $(B)/bench/bench_nccl
$(NCCL_PROGS): $(B)/%: tests/%.c $(NCCL_FAKE) tests/programs/nccl_launch.h
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) -Itests/programs $(CFLAGS) -std=gnu11 $(WARN) -o $@ $< -Wl,--no-as-needed $(NCCL_FAKE) \
	    $(B)/fakes/libcuda.so.1 -Wl,-rpath,$(abspath $(B)/fakes) -lm

# Linked to no NCCL: it dlopens the fake by soname, as JAX does.
$(B)/programs/nccl_dlsym: tests/programs/nccl_dlsym.c $(NCCL_FAKE)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -std=gnu11 $(WARN) -o $@ $< -ldl -Wl,-rpath,$(abspath $(B)/fakes)
# A fake cuBLAS whose symbols carry NVIDIA's version node, and a program
# linked against it that imports them versioned (test-gpu-versioned).
$(B)/fakes/versioned/libcublas.so.13: tests/fakes/cuda/cublas.c tests/fakes/cuda/cublas_train.c \
    tests/fakes/cuda/cublas.map tests/fakes/cuda/fake.h shim/cuda/cuda_api.h \
    shim/cuda/cuda_api_train.h
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -std=gnu11 -fPIC -shared $(WARN) -Wl,-soname,libcublas.so.13 \
	    -Wl,--version-script=tests/fakes/cuda/cublas.map -o $@ $(filter %.c,$^) -lm
$(B)/programs/gpu_versioned: tests/programs/gpu_versioned.c tests/programs/gpu_util.h \
    $(B)/fakes/versioned/libcublas.so.13 $(B)/fakes/libcuda.so.1
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) -Itests/fakes/cuda $(CFLAGS) -std=gnu11 $(WARN) -o $@ $< \
	    -Wl,--no-as-needed $(B)/fakes/versioned/libcublas.so.13 $(B)/fakes/libcuda.so.1 \
	    -Wl,-rpath,$(abspath $(B)/fakes/versioned):$(abspath $(B)/fakes)

# Linked to none of them: it dlopens each by soname, as TensorFlow does.
$(B)/programs/gpu_dlsym: tests/programs/gpu_dlsym.c tests/programs/gpu_util.h $(GPU_FAKES) \
    $(GPU_FAKE_ADV)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) -Itests/fakes/cuda $(CFLAGS) -std=gnu11 $(WARN) -o $@ $< -ldl \
	    -Wl,-rpath,$(abspath $(B)/fakes)

$(B)/programs/%: tests/programs/%.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(PROG_FLAGS) -std=gnu11 $(WARN) $(DEPFLAGS) -o $@ $< -lopenblas -lcrypto -lm -lpthread

# Linked to libgomp, whose constructor reads OMP_* before the shim's runs.
$(B)/programs/omp_prog: PROG_FLAGS = -fopenmp

deps:
	@scripts/install-deps.sh

# The unit tests run side by side, TEST_JOBS at a time (default: the CPUs
# this make may use, at most 4), each one's output kept together (-O);
# the slowest start first. TEST_JOBS=1 runs them one after another.
TEST_JOBS ?= $(shell n=$$(nproc 2>/dev/null || echo 1); [ $$n -le 4 ] || n=4; echo $$n)
UNIT_SLOW := test_canonical_l3_gemm test_canonical_l3_tri test_canonical_l1 \
    test_canonical_rank2k test_canonical_l2
UNIT_RUNS := $(addprefix unit-run/,$(filter $(UNIT_SLOW),$(UNIT_BIN:$(B)/tests/%=%)) \
    $(filter-out $(UNIT_SLOW),$(UNIT_BIN:$(B)/tests/%=%)))
unit: all $(UNIT_BIN)
	@$(MAKE) --no-print-directory -O -j$(TEST_JOBS) $(UNIT_RUNS)

.PHONY: $(UNIT_RUNS)
$(UNIT_RUNS): unit-run/%:
	@echo "== $(B)/tests/$*"; $(B)/tests/$*

# T=NAME (or several, quoted) runs those integration tests alone.
integration: all $(FAKE_LIB) $(GPU_FAKES) $(NCCL_FAKE) $(PROG_BIN)
	@OFFLINE=$(OFFLINE) TEST_JOBS=$(TEST_JOBS) scripts/run-integration.sh $(T)

test: deps
	@$(MAKE) --no-print-directory unit integration

# No deps step (it may download); tests marked "# needs: venv" say SKIP.
check:
	@$(MAKE) --no-print-directory unit integration OFFLINE=1

demo: deps
	@$(MAKE) --no-print-directory all
	@scripts/demo.sh

# Not part of `make test`: it downloads PyPI's newest torch CUDA wheel
# (over 500 MB, deleted at once) and rewrites docs/gpu-coverage.md with
# which of its CUDA library imports the shim wraps (docs/gpu.md).
.PHONY: gpu-coverage
gpu-coverage: all
	python3 scripts/gpu-coverage.py --out docs/gpu-coverage.md

bench: deps
	@$(MAKE) --no-print-directory all $(B)/bench/bench_overhead $(B)/bench/bench_digest \
	    $(B)/bench/bench_getrandom $(B)/bench/bench_canonical $(B)/bench/bench_canonical_blas \
	    $(B)/bench/bench_canonical_l3 \
	    $(B)/bench/bench_cublas $(B)/bench/bench_trace_calls $(B)/bench/bench_nccl
	@scripts/bench.sh

# The per-call benchmarks are plain programs: the shim reaches them only
# through LD_PRELOAD, never by linking.
$(B)/bench/bench_overhead $(B)/bench/bench_getrandom $(B)/bench/bench_trace_calls: \
    $(B)/bench/bench_%: tests/bench/bench_%.c \
    tests/bench/bench_util.h
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) -O2 -g -std=gnu11 $(WARN) -o $@ $< -lopenblas -lm -lpthread

# On the fake cuBLAS, linked by its soname as a real program would be.
$(B)/bench/bench_cublas: tests/bench/bench_cublas.c tests/bench/bench_util.h $(GPU_FAKES)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) -Itests/fakes/cuda -O2 -g -std=gnu11 $(WARN) -o $@ $< \
	    -Wl,--no-as-needed $(GPU_FAKES) -Wl,-rpath,$(abspath $(B)/fakes)

$(B)/bench/%: tests/bench/%.c $(LIB_OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) -O2 -g -std=gnu11 $(WARN) -o $@ $< $(LIB_OBJ) $(SHIM_LIBS) -lopenblas -lm

install: all
	install -d $(DESTDIR)$(PREFIX)/lib $(DESTDIR)$(PREFIX)/bin \
	    $(DESTDIR)$(PREFIX)/share/detshim/policies $(DESTDIR)$(PREFIX)/lib/pkgconfig \
	    $(DESTDIR)$(PREFIX)/include/detshim
	install -m 755 $(B)/libdetshim.so $(B)/libdetshim-audit.so $(B)/$(READER_SONAME) \
	    $(DESTDIR)$(PREFIX)/lib/
	ln -sf $(READER_SONAME) $(DESTDIR)$(PREFIX)/lib/libdetshim-reader.so
	install -m 755 $(B)/detdiff $(B)/detverify scripts/detrun scripts/detcheck \
	    $(DESTDIR)$(PREFIX)/bin/
	install -m 644 policies/*.policy $(DESTDIR)$(PREFIX)/share/detshim/policies/
	install -d $(DESTDIR)$(PREFIX)/share/detshim/policies/python
	install -m 644 policies/python/*.py $(DESTDIR)$(PREFIX)/share/detshim/policies/python/
	# Compiled now: an installed folder is not writable, and the start-up
	# hook would otherwise be compiled again at every Python start.
	-/usr/bin/python3 -m compileall -q $(DESTDIR)$(PREFIX)/share/detshim/policies/python
	install -d $(DESTDIR)$(PREFIX)/share/man/man1
	install -m 644 docs/man/*.1 $(DESTDIR)$(PREFIX)/share/man/man1/
	install -m 644 include/detshim.h $(DESTDIR)$(PREFIX)/include/
	install -m 644 include/detshim/trace_format.h $(DESTDIR)$(PREFIX)/include/detshim/
	sed -e 's|@PREFIX@|$(PREFIX)|g' scripts/detshim.pc.in > $(DESTDIR)$(PREFIX)/lib/pkgconfig/detshim.pc

# Each object's .d is a prerequisite named here (every source under shim/),
# so an object built before it had one, or whose .d was lost, is rebuilt
# rather than trusted.
OBJ_DEPS := $(patsubst %.o,%.d,$(call obj,$(wildcard shim/*/*.c shim/*/*/*.c)))
$(OBJ_DEPS):
-include $(wildcard $(OBJ_DEPS) $(GEN_OBJ:.o=.d) $(B)/tests/*.d $(B)/programs/*.d)

clean:
	rm -rf $(B)/obj $(B)/gen $(B)/tests $(B)/tsan $(B)/fakes $(B)/programs $(B)/bench \
	    $(B)/libdetshim.so $(B)/libdetshim-audit.so $(B)/libdetshim-reader.so* $(B)/detdiff \
	    $(B)/detverify $(B)/work

# ---- Fuzzing (tests/fuzz/, docs/fuzzing.md) ---------------------------
# libFuzzer harnesses for the trace reader, detdiff's printers and the
# policy parser, built with clang under ASan+UBSan: the code under test is
# compiled again into $(B)/fuzz/obj with coverage (fuzzer-no-link), apart
# from the ordinary objects. `make fuzz` runs each for FUZZ_SECONDS;
# tests/integration/test-fuzz-smoke.sh runs a short smoke in `make test`.
FUZZ_CC ?= clang
FUZZ_SECONDS ?= 300
FUZZ_SAN := -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined \
    -fno-sanitize-recover=undefined
FUZZ_BIN := $(B)/fuzz/fuzz_reader $(B)/fuzz/fuzz_detdiff $(B)/fuzz/fuzz_policy
fuzz_obj = $(patsubst %.c,$(B)/fuzz/obj/%.o,$(1))
FUZZ_READER_OBJ := $(call fuzz_obj,$(READER_SRC) shim/trace/chain.c shim/trace/sha256.c shim/trace/frame.c \
    shim/trace/zstd_lib.c \
    tests/fuzz/fuzz_common.c)
FUZZ_DETDIFF_OBJ := $(call fuzz_obj,$(filter-out shim/detdiff/main.c,$(DETDIFF_SRC)))
FUZZ_POLICY_OBJ := $(call fuzz_obj,shim/core/policy.c shim/core/policy_find.c shim/core/policy_env.c shim/trace/frame.c \
    tests/fuzz/fuzz_common.c)

$(B)/fuzz/obj/%.o: %.c $(wildcard include/*.h include/detshim/*.h shim/*/*.h tests/fuzz/*.h)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(CPPFLAGS) -Ishim/detdiff -Itests/fuzz $(FUZZ_SAN) -fsanitize=fuzzer-no-link \
	    $(SHIM_CFLAGS) -c -o $@ $<

$(B)/fuzz/fuzz_reader: $(call fuzz_obj,tests/fuzz/fuzz_reader.c) $(FUZZ_READER_OBJ)
$(B)/fuzz/fuzz_detdiff: $(call fuzz_obj,tests/fuzz/fuzz_detdiff.c) $(FUZZ_READER_OBJ) \
    $(FUZZ_DETDIFF_OBJ)
$(B)/fuzz/fuzz_policy: $(call fuzz_obj,tests/fuzz/fuzz_policy.c) $(FUZZ_POLICY_OBJ)
$(FUZZ_BIN):
	$(FUZZ_CC) $(FUZZ_SAN) -fsanitize=fuzzer -o $@ $^ -lcrypto -linih

.PHONY: fuzz fuzz-build
fuzz-build: $(FUZZ_BIN)

# Seed corpora are rebuilt from real traces and policies at each run.
fuzz: all $(PROG_BIN)
	@FUZZ_SECONDS=$(FUZZ_SECONDS) scripts/run-fuzz.sh

# ---- Sanitizers (docs/fuzzing.md) --------------------------------------
# The unit tests and the C integration tests on the shim, reader and
# detdiff built again into $(B)/sanitize with ASan+UBSan, the ASan runtime
# preloaded ahead of that shim. SANITIZE_TESTS="test-..." picks the tests;
# tests/integration/test-sanitize-smoke.sh runs a smoke of it in make test.
.PHONY: sanitize clean-fuzz
sanitize:
	@scripts/run-sanitize.sh

clean-fuzz:
	rm -rf $(B)/fuzz $(B)/sanitize $(B)/policies
clean: clean-fuzz
