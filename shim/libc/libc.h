/* The libc interposers: every C-library function the shim defines to stand
 * in front of libc's, in one folder, each file with its reason. They call
 * the real function and tell the modules below; nothing else lives here.
 *   files.c    open, openat, creat, fopen, close, fclose, rename: the random
 *              devices are served the pinned stream; artifacts are followed
 *   reads.c    read, pread, fread: a random device's reads are served
 *   entropy.c  getrandom, getentropy, syscall(SYS_getrandom), arc4random:
 *              the derived stream, or real entropy where the rule says so
 *   seeds.c    srand, srandom, initstate, srand48, seed48, lcong48: the
 *              program's seed replaced by a derived one
 *   random_device.c  libstdc++'s std::random_device (not libc, but an
 *              entropy source the program calls the same way): pinned
 *   exec.c     execve and the exec family: the old image's trace is closed
 *              first (exec runs no destructor) and the new one named
 *   exit.c     _exit, _Exit: the trace closed (they run no destructor)
 *   vfork.c    vfork: the child is marked, so it records nothing
 * Kept out of the unit tests, whose own open and read must be libc's.
 */
#ifndef DETSHIM_LIBC_H
#define DETSHIM_LIBC_H

/* Resolve the real exec and _exit functions at start-up (the lifecycle
 * calls them): a vfork child that execs or _exits must not run the
 * dynamic loader's lookup in its parent's memory. */
void libc_exec_prepare(void);
void libc_exit_prepare(void);

#endif
