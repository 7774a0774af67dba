/* vfork: the child shares the parent's memory (and the calling thread's
 * thread-locals) until it execs or exits, so it must record nothing: its
 * records would land in its parent's buffers. The wrapper marks the calling
 * thread as "in a vfork child" before the system call and the parent clears
 * the mark when it resumes, so the trace tells the child apart with one
 * thread-local load (trace_in_vfork_child) instead of a getpid(2) on every
 * record. It is written in assembly because a C function cannot return
 * twice from one stack frame: the return address is kept in a register
 * across the call, as glibc's own vfork does. Builds with shadow stacks
 * enabled (__CET__ & 2) keep libc's vfork and the trace falls back to
 * comparing pids.
 */
#include <errno.h>

#include "trace/trace.h"

#if defined(__x86_64__) && !(defined(__CET__) && (__CET__ & 2))

/* The failure path: errno from the negated system-call result. */
__attribute__((used, visibility("hidden"))) long libc_vfork_failed(long err)
{
    errno = (int)err;
    return -1;
}

__asm__(".text\n"
        ".globl vfork\n"
        ".type vfork, @function\n"
        "vfork:\n"
        "  .cfi_startproc\n"
        "  endbr64\n"
        "  movq trace_in_vfork_child@gottpoff(%rip), %rcx\n"
        "  movl $1, %fs:(%rcx)\n"
        "  popq %rdx\n" /* the return address: the child may overwrite this stack slot */
        "  .cfi_adjust_cfa_offset -8\n"
        "  .cfi_register %rip, %rdx\n"
        "  movl $58, %eax\n" /* SYS_vfork */
        "  syscall\n"
        "  pushq %rdx\n"
        "  .cfi_adjust_cfa_offset 8\n"
        "  .cfi_rel_offset %rip, 0\n"
        "  testq %rax, %rax\n"
        "  je 1f\n" /* the child: stays marked */
        "  movq trace_in_vfork_child@gottpoff(%rip), %rcx\n"
        "  movl $0, %fs:(%rcx)\n"
        "  cmpq $-4095, %rax\n"
        "  jae 2f\n"
        "1:\n"
        "  ret\n"
        "2:\n"
        "  negq %rax\n"
        "  movq %rax, %rdi\n"
        "  jmp libc_vfork_failed\n"
        "  .cfi_endproc\n"
        ".size vfork, .-vfork\n");

#endif
