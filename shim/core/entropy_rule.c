/* The process half of the entropy rule (docs/security.md): some programs
 * make keys, tokens and identifiers out of nearly every random byte they
 * read (OpenSSH calls arc4random_buf from its own binary, the JVM reads
 * /dev/urandom for SecureRandom), so a process running one of them gets
 * real entropy throughout, whoever started it. The program is named by
 * its real executable (/proc/self/exe), not by argv[0], so a renamed link
 * or a wrapper cannot move it off the list. A Python that cannot run the
 * start-up hook (-I, -E, -S) cannot tell its secrets from its training
 * randomness either, so it stays real too, and says so once.
 */
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "core/core.h"
#include "core/policy.h"

const char core_never_pin_builtin[] =
    "ssh, ssh-keygen, ssh-agent, ssh-add, ssh-keyscan, sshd, scp, sftp, gpg, gpg2, "
    "gpg-agent, openssl, java, git, curl, wget, mktemp";

/* 1 if the comma-separated `list` holds `name` as a whole item. */
static int list_holds(const char *list, const char *name)
{
    size_t n = strlen(name), l;
    for (const char *p = list, *s; (s = core_list_next(&p, ", ", &l));)
        if (l == n && n && strncmp(s, name, n) == 0)
            return 1;
    return 0;
}

/* The flag among -I, -E, -S that keeps Python from importing the start-up
 * hook, read off this process's command line; 0 if none. Python's own
 * option syntax: short flags combine (-IS), and -c, -m, -W, -X take an
 * argument (glued on or the next word); -c and -m end the options. */
static char python_hook_blocker(void)
{
    char buf[8192];
    int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return 0;
    buf[n] = 0;
    const char *arg = buf + strlen(buf) + 1; /* skip argv[0] */
    for (; arg < buf + n; arg += strlen(arg) + 1) {
        if (arg[0] != '-' || !arg[1] || strcmp(arg, "--") == 0)
            return 0; /* the script, "-" (stdin) or the end of the options */
        if (arg[1] == '-')
            continue; /* --version, --help...: none blocks the hook */
        for (const char *c = arg + 1; *c; c++) {
            if (*c == 'I' || *c == 'E' || *c == 'S')
                return *c;
            if (*c == 'c' || *c == 'm')
                return 0;
            if (*c == 'W' || *c == 'X') {
                if (!c[1])
                    arg += strlen(arg) + 1; /* the argument is the next word */
                break;
            }
        }
    }
    return 0;
}

void core_entropy_rule_read(const char *policy_list)
{
    core_cfg.entropy_rule = CORE_ENTROPY_PIN;
    core_cfg.entropy_rule_text[0] = 0;
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0)
        return;
    exe[n] = 0;
    const char *base = strrchr(exe, '/');
    base = base ? base + 1 : exe;
    if (list_holds(core_never_pin_builtin, base) || list_holds(policy_list, base)) {
        core_cfg.entropy_rule = CORE_ENTROPY_REAL_PROGRAM;
        snprintf(core_cfg.entropy_rule_text, sizeof core_cfg.entropy_rule_text,
                 "real: %.200s is a never-pin program", base);
        return;
    }
    if (strncmp(base, "python", 6) != 0)
        return;
    char hook[4096];
    if (policy_hook_dir(resolve_self_dir(), hook, sizeof hook) != 0) {
        core_cfg.entropy_rule = CORE_ENTROPY_REAL_NO_HOOK;
        snprintf(core_cfg.entropy_rule_text, sizeof core_cfg.entropy_rule_text,
                 "real: the Python start-up hook is not installed beside the library");
        core_log(DS_LOG_QUIET, "%s: the Python start-up hook (policies/python/sitecustomize.py) is "
                 "not beside %s, so secrets cannot be told from training randomness and this "
                 "process's entropy stays real (not reproducible); reinstall detshim", base,
                 resolve_self_dir());
        return;
    }
    char flag = python_hook_blocker();
    if (!flag)
        return;
    core_cfg.entropy_rule = CORE_ENTROPY_REAL_NO_HOOK;
    snprintf(core_cfg.entropy_rule_text, sizeof core_cfg.entropy_rule_text,
             "real: %.200s started with -%c, so the start-up hook cannot run", base, flag);
    core_log(DS_LOG_QUIET, "%s started with -%c: the Python start-up hook cannot run, so "
             "secrets cannot be told from training randomness and this process's entropy "
             "stays real (not reproducible); run it without -%c to pin it", base, flag, flag);
}
