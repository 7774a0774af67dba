/* Policy files parse strictly: every mistake is an error naming file:line,
 * and names are found beside the library in the build tree or an install. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "core/policy.h"

static char dir[] = "/tmp/detshim-test-policy-XXXXXX";

/* Writes len bytes of text (NULs included) as dir/name; returns its path. */
static const char *write_policy_bytes(const char *name, const char *text, size_t len)
{
    static char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    fwrite(text, 1, len, f);
    fclose(f);
    return path;
}

static const char *write_policy(const char *name, const char *text)
{
    return write_policy_bytes(name, text, strlen(text));
}

static int setup(void **state)
{
    (void)state;
    return mkdtemp(dir) ? 0 : -1;
}

static void test_valid_policy_sets_every_key_and_digests_the_file(void **state)
{
    (void)state;
    struct policy p;
    char err[512] = "";
    const char *path = write_policy("ok.policy", "# comment\n[blas]\nmode = passthrough\n"
                                                 "[trace]\nframes = 7\n[rng]\nseed = 42\n"
                                                 "pin = none\nexempt_modules = libfoo, libbar.so\n"
                                                 "never_pin_programs = vault, my-agent\n");
    assert_int_equal(policy_load(path, NULL, &p, err, sizeof err), 0);
    assert_int_equal(p.trace_frames, 7);
    assert_int_equal(p.seed, 42);
    assert_int_equal(p.rng_pin, RNG_PIN_NONE);
    assert_string_equal(p.rng_exempt, "libfoo, libbar.so");
    assert_string_equal(p.rng_never_pin, "vault, my-agent");
    assert_int_equal(strlen(p.digest), 64);
    /* sha256 of the exact bytes: a one-byte change must change it */
    char first[65];
    memcpy(first, p.digest, 65);
    path = write_policy("ok.policy", "# comment!\n[blas]\nmode = passthrough\n"
                                     "[trace]\nframes = 7\n[rng]\nseed = 42\n");
    assert_int_equal(policy_load(path, NULL, &p, err, sizeof err), 0);
    assert_string_not_equal(first, p.digest);
}

static void expect_error(const char *text, const char *want)
{
    struct policy p;
    char err[512] = "";
    const char *path = write_policy("bad.policy", text);
    assert_int_equal(policy_load(path, NULL, &p, err, sizeof err), -1);
    if (!strstr(err, want))
        fail_msg("error '%s' does not contain '%s'", err, want);
}

/* [trace] steps and ops become the variables the start-up hook reads, as
 * defaults a user's own value beats; off removes an included on. */
static void test_trace_steps_and_ops_set_the_hook_variables(void **state)
{
    (void)state;
    struct policy p;
    char err[512] = "";
    const char *path = write_policy("fw.policy", "[trace]\nsteps = on\nops = on\n");
    assert_int_equal(policy_load(path, NULL, &p, err, sizeof err), 0);
    const struct policy_env *e = policy_env_get(&p, "DETSHIM_TRACE_STEPS");
    assert_non_null(e);
    assert_string_equal(e->value, "on");
    assert_int_equal(e->op, ENV_DEFAULT);
    assert_non_null(policy_env_get(&p, "DETSHIM_TRACE_OPS"));
    path = write_policy("fw.policy", "[trace]\nsteps = on\nops = on\nops = off\n");
    assert_int_equal(policy_load(path, NULL, &p, err, sizeof err), 0);
    assert_null(policy_env_get(&p, "DETSHIM_TRACE_OPS"));
    expect_error("[trace]\nops = yes\n", "bad.policy:2: bad value 'yes' for [trace] ops");
}

static void test_unknown_key_names_file_and_line(void **state)
{
    (void)state;
    expect_error("[blas]\nmode = passthrough\ncores = 4\n", "bad.policy:3: unknown key 'cores' in [blas]");
}

static void test_unknown_section_names_file_and_line(void **state)
{
    (void)state;
    expect_error("[blas]\nmode = passthrough\n\n[gpu]\nx = 1\n", "bad.policy:4: unknown section [gpu]");
    expect_error("[blas]\nmode = passthrough\n[empty]\n", "bad.policy:3: unknown section [empty]");
}

static void test_bad_values_are_errors(void **state)
{
    (void)state;
    expect_error("[blas]\nmode = fast\n", "bad.policy:2: bad value 'fast' for [blas] mode");
    expect_error("[blas]\nthreads = 0\n", "bad.policy:2: bad value '0' for [blas] threads");
    expect_error("[trace]\nframes = 17\n", "bad.policy:2: bad value '17' for [trace] frames");
    expect_error("[trace]\nframes = -1\n", "bad.policy:2:");
    expect_error("[rng]\nseed = 12abc\n", "bad.policy:2: bad value '12abc' for [rng] seed");
    expect_error("[rng]\npin = some\n", "bad.policy:2: bad value 'some' for [rng] pin");
    expect_error("[rng]\nexempt_modules = lib/evil;rm\n", "bad.policy:2: bad value 'lib/evil;rm' for [rng] exempt_modules");
}

static void test_trace_level_and_window_are_read_and_checked(void **state)
{
    (void)state;
    struct policy p;
    char err[512] = "";
    const char *path = write_policy("ok.policy", "[trace]\nframes = 2\n");
    assert_int_equal(policy_load(path, NULL, &p, err, sizeof err), 0);
    assert_int_equal(p.trace_summary, 0);
    assert_int_equal(p.trace_window, POLICY_DEFAULT_WINDOW);
    path = write_policy("ok.policy", "[trace]\nlevel = summary\nwindow = 1\n");
    assert_int_equal(policy_load(path, NULL, &p, err, sizeof err), 0);
    assert_int_equal(p.trace_summary, 1);
    assert_int_equal(p.trace_window, 1);
    expect_error("[trace]\nlevel = steps\n", "bad.policy:2: bad value 'steps' for [trace] level");
    expect_error("[trace]\nwindow = 0\n", "bad.policy:2: bad value '0' for [trace] window");
    expect_error("[trace]\nwindow = 1048577\n", "bad.policy:2: bad value '1048577' for [trace] window");
}

static void test_syntax_error_names_the_line(void **state)
{
    (void)state;
    expect_error("[blas]\nmode passthrough\n", "bad.policy:2: syntax error");
    expect_error("mode = passthrough\n", "bad.policy:1: key 'mode' is outside any section");
}

static void test_include_reads_the_included_file_first_and_later_lines_win(void **state)
{
    (void)state;
    struct policy p;
    char err[512] = "";
    write_policy("base.policy", "[blas]\nmode = pinned\nthreads = 3\n[env]\nunsafe = yes\nA = base\n"
                                "B ?= base\nFLAGS = --x\n");
    const char *path = write_policy("top.policy", "include = base\n[blas]\nthreads = 2\n"
                                                  "[env]\nunsafe = yes\nA = top\nFLAGS += --y\n");
    assert_int_equal(policy_load(path, NULL, &p, err, sizeof err), 0);
    assert_int_equal(p.blas_mode, BLAS_MODE_PINNED);
    assert_int_equal(p.blas_threads, 2);
    assert_string_equal(policy_env_get(&p, "A")->value, "top");
    assert_int_equal(policy_env_get(&p, "B")->op, ENV_DEFAULT);
    assert_string_equal(policy_env_get(&p, "FLAGS")->value, "--x --y");
    assert_non_null(strstr(p.files, "top.policy <- "));
    assert_non_null(strstr(p.files, "base.policy"));
    /* the digest covers the included file: changing it changes the digest */
    char first[65];
    memcpy(first, p.digest, 65);
    write_policy("base.policy", "[blas]\nmode = pinned\nthreads = 4\n");
    assert_int_equal(policy_load(path, NULL, &p, err, sizeof err), 0);
    assert_string_not_equal(first, p.digest);
}

static void test_env_operators_and_family_sections_become_variables(void **state)
{
    (void)state;
    struct policy p;
    char err[512] = "";
    const char *path = write_policy(
        "env.policy", "[env]\nunsafe = yes\nX = 1\nY ?= 2\nXLA_FLAGS += --a=true\nEMPTY =\n"
                      "[cuda]\ntf32 = deny\ncublas_workspace = :4096:8:16:8\n"
                      "[nccl]\nalgo = Ring\nproto = Simple\nnvls = off\n"
                      "[pytorch]\ndeterministic = warn_only\n[blas]\nmode = canonical\n");
    assert_int_equal(policy_load(path, NULL, &p, err, sizeof err), 0);
    assert_int_equal(policy_env_get(&p, "X")->op, ENV_SET);
    assert_int_equal(policy_env_get(&p, "Y")->op, ENV_DEFAULT);
    assert_int_equal(policy_env_get(&p, "XLA_FLAGS")->op, ENV_APPEND);
    assert_string_equal(policy_env_get(&p, "XLA_FLAGS")->value, "--a=true");
    assert_string_equal(policy_env_get(&p, "EMPTY")->value, "");
    assert_string_equal(policy_env_get(&p, "NVIDIA_TF32_OVERRIDE")->value, "0");
    assert_string_equal(policy_env_get(&p, "CUBLAS_WORKSPACE_CONFIG")->value, ":4096:8:16:8");
    assert_string_equal(policy_env_get(&p, "NCCL_ALGO")->value, "Ring");
    assert_string_equal(policy_env_get(&p, "NCCL_PROTO")->value, "Simple");
    assert_string_equal(policy_env_get(&p, "NCCL_NVLS_ENABLE")->value, "0");
    assert_int_equal(p.torch, TORCH_WARN_ONLY);
    /* canonical BLAS implies MKL's reproducibility switches */
    assert_string_equal(policy_env_get(&p, "MKL_CBWR")->value, "AUTO");
    path = write_policy("fw.policy", "[pytorch]\ncpu_capability = avx2\n[tensorflow]\n"
                                     "deterministic = on\n");
    assert_int_equal(policy_load(path, NULL, &p, err, sizeof err), 0);
    assert_string_equal(policy_env_get(&p, "ATEN_CPU_CAPABILITY")->value, "avx2");
    assert_int_equal(policy_env_get(&p, "ATEN_CPU_CAPABILITY")->cpu_isa, ISA_AVX2);
    assert_string_equal(policy_env_get(&p, "TF_DETERMINISTIC_OPS")->value, "1");
    assert_int_equal(p.tf_seed_hook, 1);
    /* tf32 = allow in an including file removes the included deny */
    write_policy("deny.policy", "[cuda]\ntf32 = deny\n");
    path = write_policy("allow.policy", "include = deny\n[cuda]\ntf32 = allow\n");
    assert_int_equal(policy_load(path, NULL, &p, err, sizeof err), 0);
    assert_null(policy_env_get(&p, "NVIDIA_TF32_OVERRIDE"));
    assert_int_equal(p.cuda_tf32, TF32_ALLOW);
}

static void test_cuda_mode_and_tf32_are_read_and_default_to_untouched(void **state)
{
    (void)state;
    struct policy p;
    char err[512] = "";
    /* No [cuda] section: the family only traces, TF32 is the framework's. */
    const char *path = write_policy("nocuda.policy", "[blas]\nmode = pinned\n");
    assert_int_equal(policy_load(path, NULL, &p, err, sizeof err), 0);
    assert_int_equal(p.cuda_mode, CUDA_MODE_PASSTHROUGH);
    assert_int_equal(p.cuda_tf32, TF32_ALLOW);
    path = write_policy("cuda.policy", "[cuda]\nmode = pinned\ntf32 = deny\n");
    assert_int_equal(policy_load(path, NULL, &p, err, sizeof err), 0);
    assert_int_equal(p.cuda_mode, CUDA_MODE_PINNED);
    assert_int_equal(p.cuda_tf32, TF32_DENY);
    /* An including file's mode wins over the included one's. */
    path = write_policy("cudapass.policy", "include = cuda\n[cuda]\nmode = passthrough\n");
    assert_int_equal(policy_load(path, NULL, &p, err, sizeof err), 0);
    assert_int_equal(p.cuda_mode, CUDA_MODE_PASSTHROUGH);
    assert_int_equal(p.cuda_tf32, TF32_DENY);
}

static void test_nccl_mode_conflict_channels_and_collnet_are_read(void **state)
{
    (void)state;
    struct policy p;
    char err[512] = "";
    const char *path = write_policy("nonccl.policy", "[blas]\nmode = pinned\n");
    assert_int_equal(policy_load(path, NULL, &p, err, sizeof err), 0);
    assert_int_equal(p.nccl_mode, NCCL_MODE_PASSTHROUGH);
    assert_int_equal(p.nccl_conflict, NCCL_CONFLICT_OVERRIDE);
    path = write_policy("nccl.policy", "[nccl]\nmode = canonical\nconflict = refuse\n"
                                       "channels = 4\ncollnet = off\n");
    assert_int_equal(policy_load(path, NULL, &p, err, sizeof err), 0);
    assert_int_equal(p.nccl_mode, NCCL_MODE_CANONICAL);
    assert_int_equal(p.nccl_conflict, NCCL_CONFLICT_REFUSE);
    assert_string_equal(policy_env_get(&p, "NCCL_MIN_NCHANNELS")->value, "4");
    assert_string_equal(policy_env_get(&p, "NCCL_MAX_NCHANNELS")->value, "4");
    assert_string_equal(policy_env_get(&p, "NCCL_COLLNET_ENABLE")->value, "0");
    /* channels = auto in an including file leaves NCCL's choice. */
    path = write_policy("ncclauto.policy", "include = nccl\n[nccl]\nchannels = auto\nmode = pinned\n");
    assert_int_equal(policy_load(path, NULL, &p, err, sizeof err), 0);
    assert_null(policy_env_get(&p, "NCCL_MAX_NCHANNELS"));
    assert_int_equal(p.nccl_mode, NCCL_MODE_PINNED);
    expect_error("[nccl]\nmode = fast\n", "bad.policy:2: bad value 'fast' for [nccl] mode "
                                           "(expected: passthrough, pinned or canonical)");
    expect_error("[nccl]\nconflict = warn\n", "bad.policy:2: bad value 'warn' for [nccl] conflict");
    expect_error("[nccl]\nchannels = 0\n", "bad.policy:2: bad value '0' for [nccl] channels");
    expect_error("[nccl]\ncollnet = maybe\n", "bad.policy:2: bad value 'maybe' for [nccl] nvls or collnet");
    expect_error("[nccl]\nalgorithm = Ring\n", "bad.policy:2: unknown key 'algorithm' in [nccl]");
}

static void test_bad_include_and_include_cycle_name_file_and_line(void **state)
{
    (void)state;
    expect_error("\ninclude = nosuch\n", "bad.policy:2: cannot include 'nosuch'");
    expect_error("[blas]\ninclude = default\n", "bad.policy:2: include in [blas]");
    write_policy("loop_a.policy", "include = loop_b\n");
    write_policy("loop_b.policy", "# b\ninclude = loop_a\n");
    struct policy p;
    char err[512] = "";
    char path[512];
    snprintf(path, sizeof path, "%s/loop_a.policy", dir);
    assert_int_equal(policy_load(path, NULL, &p, err, sizeof err), -1);
    if (!strstr(err, "loop_b.policy:2: include cycle: 'loop_a'") ||
        !strstr(err, "(included from loop_a.policy:1)"))
        fail_msg("unexpected cycle error: %s", err);
    /* an error inside an included file names that file's line */
    write_policy("broken.policy", "[blas]\nmode = turbo\n");
    expect_error("include = broken\n", "broken.policy:2: bad value 'turbo' for [blas] mode");
    expect_error("include = bad\n", "include cycle");
}

static void test_bad_env_lines_are_errors(void **state)
{
    (void)state;
    expect_error("[env]\nLD_PRELOAD = /x.so\n", "bad.policy:2: [env] cannot set LD_PRELOAD");
    expect_error("[env]\nLD_AUDIT = /x.so\n", "bad.policy:2: [env] cannot set LD_AUDIT");
    expect_error("[env]\nDETSHIM_SEED = 3\n", "bad.policy:2: [env] cannot set DETSHIM_SEED");
    expect_error("[env]\nBAD-NAME = 1\n", "bad.policy:2: bad variable name 'BAD-NAME'");
    expect_error("[env]\n9LIVES = 1\n", "bad.policy:2: bad variable name");
    expect_error("[cuda]\ntf32 = maybe\n", "bad.policy:2: bad value 'maybe' for [cuda] tf32");
    expect_error("[cuda]\nmode = canonical\n",
                 "bad.policy:2: bad value 'canonical' for [cuda] mode (expected: passthrough or pinned)");
    expect_error("[cuda]\ncublas_workspace = 4096\n", "bad.policy:2: bad value '4096'");
    expect_error("[nccl]\nalgo = Ring;rm\n", "bad.policy:2: bad value 'Ring;rm' for [nccl] algo");
    expect_error("[nccl]\nnvls = maybe\n", "bad.policy:2: bad value 'maybe' for [nccl] nvls");
    expect_error("[pytorch]\ndeterministic = yes\n", "bad.policy:2: bad value 'yes'");
    expect_error("[pytorch]\ncpu_capability = avx\n", "bad.policy:2: bad value 'avx' for [pytorch] cpu_capability");
    expect_error("[tensorflow]\ndeterministic = 1\n", "bad.policy:2: bad value '1' for [tensorflow]");
    char text[600];
    snprintf(text, sizeof text, "[env]\nXLA_FLAGS = %0300d\n", 7);
    expect_error(text, "bad.policy:2: line longer than 198 characters");
}

static void test_env_may_set_only_determinism_switches(void **state)
{
    (void)state;
    static const char *const refused[] = { "PYTHONPATH", "PATH", "LD_LIBRARY_PATH",
                                           "GLIBC_TUNABLES", "BASH_ENV", "PERL5OPT",
                                           "NODE_OPTIONS", "JAVA_TOOL_OPTIONS", "IFS" };
    char text[256], want[128];
    for (size_t i = 0; i < sizeof refused / sizeof *refused; i++) {
        /* refused outright, with or without unsafe = yes */
        snprintf(text, sizeof text, "[env]\nunsafe = yes\n%s = x\n", refused[i]);
        snprintf(want, sizeof want, "bad.policy:3: [env] cannot set %s: ", refused[i]);
        expect_error(text, want);
    }
    expect_error("[env]\nMY_SWITCH = 1\n",
                 "bad.policy:2: [env] MY_SWITCH is not a known determinism switch");
    expect_error("[env]\nXLA_FLAGS = --xla_dump_to=/tmp/x\n",
                 "bad.policy:2: [env] XLA_FLAGS: flag '--xla_dump_to=/tmp/x' is not a known");
    expect_error("[env]\nunsafe = maybe\n", "bad.policy:2: bad value 'maybe' for [env] unsafe");
    struct policy p;
    char err[512] = "";
    const char *path = write_policy("ok.policy", "[env]\nOMP_NUM_THREADS = 2\nXLA_FLAGS = "
                                                 "--xla_cpu_enable_fast_math=false\n"
                                                 "unsafe = yes\nMY_SWITCH = 1\n");
    assert_int_equal(policy_load(path, NULL, &p, err, sizeof err), 0);
    assert_int_equal(policy_env_get(&p, "OMP_NUM_THREADS")->unsafe, 0);
    assert_int_equal(policy_env_get(&p, "XLA_FLAGS")->unsafe, 0);
    assert_int_equal(policy_env_get(&p, "MY_SWITCH")->unsafe, 1);
    /* unsafe = yes covers its own file only, not one that includes it */
    path = write_policy("inc.policy", "include = ok\n[env]\nOTHER = 1\n");
    assert_int_equal(policy_load(path, NULL, &p, err, sizeof err), -1);
    assert_non_null(strstr(err, "inc.policy:3: [env] OTHER is not a known"));
}

static void test_control_characters_in_a_policy_are_errors(void **state)
{
    (void)state;
    /* a NUL would hide the rest of its line from every other check */
    static const char nul[] = "[rng]\n# comment\0\nseed = 77\n";
    const char *path = write_policy_bytes("nul.policy", nul, sizeof nul - 1);
    struct policy p;
    char err[512] = "";
    assert_int_equal(policy_load(path, NULL, &p, err, sizeof err), -1);
    assert_non_null(strstr(err, "nul.policy:2: control character 0x00 at column 10"));
    expect_error("[rng]\nseed = 1\r\n", "bad.policy:2: control character 0x0d");
    expect_error("[rng]\nseed = \0331\n", "bad.policy:2: control character 0x1b");
    /* tabs are plain text */
    const char *ok = write_policy("tab.policy", "[rng]\n\tseed\t= 5\n");
    assert_int_equal(policy_load(ok, NULL, &p, err, sizeof err), 0);
    assert_int_equal(p.seed, 5);
}

static void test_find_by_name_in_build_tree_and_install_layout(void **state)
{
    (void)state;
    char libdir[600], path[1024], err[512];
    /* build tree: <dir>/build/libdetshim.so, <dir>/policies/x.policy */
    snprintf(libdir, sizeof libdir, "%s/build", dir);
    mkdir(libdir, 0755);
    snprintf(path, sizeof path, "%s/policies", dir);
    mkdir(path, 0755);
    write_policy("policies/tree.policy", "[blas]\nmode = passthrough\n");
    assert_int_equal(policy_find("tree", libdir, path, sizeof path, err, sizeof err), 0);
    assert_non_null(strstr(path, "/policies/tree.policy"));
    /* installed: <prefix>/lib, <prefix>/share/detshim/policies */
    snprintf(path, sizeof path, "%s/share", dir);
    mkdir(path, 0755);
    snprintf(path, sizeof path, "%s/share/detshim", dir);
    mkdir(path, 0755);
    snprintf(path, sizeof path, "%s/share/detshim/policies", dir);
    mkdir(path, 0755);
    write_policy("share/detshim/policies/inst.policy", "[blas]\nmode = passthrough\n");
    assert_int_equal(policy_find("inst", libdir, path, sizeof path, err, sizeof err), 0);
    assert_non_null(strstr(path, "share/detshim/policies/inst.policy"));
}

static void test_unknown_name_and_missing_path_are_errors(void **state)
{
    (void)state;
    char path[1024], err[512];
    assert_int_equal(policy_find("nosuch", dir, path, sizeof path, err, sizeof err), -1);
    assert_non_null(strstr(err, "DETSHIM_POLICY=nosuch: no policy of that name"));
    assert_int_equal(policy_find("/no/such/file.policy", dir, path, sizeof path, err, sizeof err), -1);
    assert_non_null(strstr(err, "no such policy file"));
    assert_int_equal(policy_find("", dir, path, sizeof path, err, sizeof err), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_valid_policy_sets_every_key_and_digests_the_file),
        cmocka_unit_test(test_unknown_key_names_file_and_line),
        cmocka_unit_test(test_unknown_section_names_file_and_line),
        cmocka_unit_test(test_bad_values_are_errors),
        cmocka_unit_test(test_trace_level_and_window_are_read_and_checked),
        cmocka_unit_test(test_syntax_error_names_the_line),
        cmocka_unit_test(test_include_reads_the_included_file_first_and_later_lines_win),
        cmocka_unit_test(test_env_operators_and_family_sections_become_variables),
        cmocka_unit_test(test_cuda_mode_and_tf32_are_read_and_default_to_untouched),
        cmocka_unit_test(test_nccl_mode_conflict_channels_and_collnet_are_read),
        cmocka_unit_test(test_bad_include_and_include_cycle_name_file_and_line),
        cmocka_unit_test(test_bad_env_lines_are_errors),
        cmocka_unit_test(test_trace_steps_and_ops_set_the_hook_variables),
        cmocka_unit_test(test_env_may_set_only_determinism_switches),
        cmocka_unit_test(test_control_characters_in_a_policy_are_errors),
        cmocka_unit_test(test_find_by_name_in_build_tree_and_install_layout),
        cmocka_unit_test(test_unknown_name_and_missing_path_are_errors),
    };
    int rc = cmocka_run_group_tests(tests, setup, NULL);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0)
        return 1;
    return rc;
}
