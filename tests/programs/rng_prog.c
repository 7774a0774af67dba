/* C programs' randomness for the integration tests; prints what it drew.
 *   rng_prog srand     srand(time(NULL) ^ getpid()), then rand() and drand48()
 *   rng_prog urandom   fopen("/dev/urandom") + fread, and open + read
 *   rng_prog fork      parent and two forked children each draw getrandom
 *   rng_prog openssl   libcrypto's RAND_bytes: exempt, real entropy
 *   rng_prog arc4      arc4random, arc4random_uniform, arc4random_buf
 */
#include <fcntl.h>
#include <openssl/rand.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void hex(const char *label, const unsigned char *p, size_t n)
{
    printf("%s ", label);
    for (size_t i = 0; i < n; i++)
        printf("%02x", p[i]);
    printf("\n");
}

static void draw(const char *who)
{
    unsigned char b[8];
    if (getrandom(b, sizeof b, 0) != (ssize_t)sizeof b)
        exit(1);
    hex(who, b, sizeof b);
    fflush(stdout);
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    unsigned char b[16];
    if (strcmp(mode, "srand") == 0) {
        srand((unsigned)time(NULL) ^ (unsigned)getpid());
        int r1 = rand(), r2 = rand();
        srand48(time(NULL));
        printf("rand %d %d drand48 %.17g\n", r1, r2, drand48());
    } else if (strcmp(mode, "urandom") == 0) {
        FILE *f = fopen("/dev/urandom", "rb");
        if (!f || fread(b, 1, sizeof b, f) != sizeof b)
            return 1;
        fclose(f);
        hex("fread", b, sizeof b);
        int fd = open("/dev/urandom", O_RDONLY);
        if (fd < 0 || read(fd, b, sizeof b) != (ssize_t)sizeof b)
            return 1;
        close(fd);
        hex("read", b, sizeof b);
    } else if (strcmp(mode, "fork") == 0) {
        draw("parent-before");
        for (int k = 1; k <= 2; k++) {
            pid_t pid = fork();
            if (pid == 0) {
                char who[16];
                snprintf(who, sizeof who, "child%d", k);
                draw(who);
                _exit(0);
            }
            waitpid(pid, NULL, 0);
        }
        draw("parent-after");
    } else if (strcmp(mode, "openssl") == 0) {
        if (RAND_bytes(b, sizeof b) != 1)
            return 1;
        hex("RAND_bytes", b, sizeof b);
    } else if (strcmp(mode, "arc4") == 0) {
        arc4random_buf(b, sizeof b);
        printf("arc4random %u uniform %u ", arc4random(), arc4random_uniform(1000));
        hex("buf", b, sizeof b);
    } else {
        fprintf(stderr, "usage: rng_prog srand|urandom|fork|openssl|arc4\n");
        return 2;
    }
    return 0;
}
