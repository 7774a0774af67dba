/* Real-symbol resolution finds definitions in libraries loaded RTLD_LOCAL
 * (where RTLD_NEXT cannot see), and a symbol nobody defines is a clear
 * error, never a jump to NULL. */
#include <dlfcn.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "core/core.h"

static void test_finds_symbol_in_library_loaded_rtld_local(void **state)
{
    (void)state;
    void *h = dlopen("libopenblas.so.0", RTLD_NOW | RTLD_LOCAL);
    assert_non_null(h);
    assert_null(dlsym(RTLD_NEXT, "cblas_ddot")); /* the case the walk exists for */
    void *want = dlsym(h, "cblas_ddot");
    assert_non_null(want);
    assert_ptr_equal(resolve_real("cblas_ddot"), want);
    void *cache = NULL;
    assert_ptr_equal(resolve_real_cached(&cache, "cblas_ddot"), want);
    assert_ptr_equal(cache, want);
    typedef double (*ddot_fn)(int, const double *, int, const double *, int);
    double x[3] = { 1, 2, 3 };
    assert_true(((ddot_fn)(uintptr_t)cache)(3, x, 1, x, 1) == 14.0);
}

static void test_unknown_symbol_resolves_to_null(void **state)
{
    (void)state;
    assert_null(resolve_real("detshim_no_such_symbol_anywhere"));
}

static void test_missing_real_symbol_exits_2_naming_it(void **state)
{
    (void)state;
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    pid_t pid = fork();
    if (pid == 0) {
        dup2(fds[1], 2);
        void *cache = NULL;
        resolve_real_cached(&cache, "sgemm_64_nowhere");
        _exit(0); /* not reached */
    }
    close(fds[1]);
    char buf[512] = "";
    ssize_t n = read(fds[0], buf, sizeof buf - 1);
    buf[n > 0 ? n : 0] = 0;
    int status;
    waitpid(pid, &status, 0);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 2);
    assert_non_null(strstr(buf, "detshim: sgemm_64_nowhere was called but no loaded library defines it"));
    assert_non_null(strchr(buf, '\n'));
    assert_ptr_equal(strchr(buf, '\n'), buf + strlen(buf) - 1); /* one line */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_finds_symbol_in_library_loaded_rtld_local),
        cmocka_unit_test(test_unknown_symbol_resolves_to_null),
        cmocka_unit_test(test_missing_real_symbol_exits_2_naming_it),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
