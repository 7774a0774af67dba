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

#include "detshim/policy.h"

static char dir[] = "/tmp/detshim-test-policy-XXXXXX";

static const char *write_policy(const char *name, const char *text)
{
    static char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    return path;
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
                                                 "pin = none\nexempt_modules = libfoo, libbar.so\n");
    assert_int_equal(policy_load(path, &p, err, sizeof err), 0);
    assert_int_equal(p.trace_frames, 7);
    assert_int_equal(p.seed, 42);
    assert_int_equal(p.rng_pin, RNG_PIN_NONE);
    assert_string_equal(p.rng_exempt, "libfoo, libbar.so");
    assert_int_equal(strlen(p.digest), 64);
    /* sha256 of the exact bytes: a one-byte change must change it */
    char first[65];
    memcpy(first, p.digest, 65);
    path = write_policy("ok.policy", "# comment!\n[blas]\nmode = passthrough\n"
                                     "[trace]\nframes = 7\n[rng]\nseed = 42\n");
    assert_int_equal(policy_load(path, &p, err, sizeof err), 0);
    assert_string_not_equal(first, p.digest);
}

static void expect_error(const char *text, const char *want)
{
    struct policy p;
    char err[512] = "";
    const char *path = write_policy("bad.policy", text);
    assert_int_equal(policy_load(path, &p, err, sizeof err), -1);
    if (!strstr(err, want))
        fail_msg("error '%s' does not contain '%s'", err, want);
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

static void test_syntax_error_names_the_line(void **state)
{
    (void)state;
    expect_error("[blas]\nmode passthrough\n", "bad.policy:2: syntax error");
    expect_error("mode = passthrough\n", "bad.policy:1: key 'mode' is outside any section");
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
        cmocka_unit_test(test_syntax_error_names_the_line),
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
