/* workloads/pie_hello.S: a static-pie executable without libc (ET_DYN, no
 * interpreter): writes one line with PC-relative addressing and exits with
 * argc as its status. Tests the loader's static-pie path. */
    .text
    .globl _start
_start:
    li a0, 1
    lla a1, msg
    li a2, 15
    li a7, 64               /* write(1, msg, 15) */
    ecall
    ld a0, 0(sp)            /* argc */
    li a7, 94               /* exit_group(argc) */
    ecall
    .section .rodata
msg: .ascii "hello from pie\n"
