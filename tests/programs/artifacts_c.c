/* For test-artifacts: a C program that writes an artifact with fopen and
 * fwrite and exits without closing it, and one with open and write. */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(void)
{
    FILE *f = fopen("stream.npy", "wb");
    if (!f)
        return 1;
    fputs("written by fwrite, never closed", f);
    int fd = open("raw.bin", O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0 || write(fd, "raw", 3) != 3)
        return 1;
    close(fd);
    return 0; /* exit flushes f; the shim hashes it at exit */
}
