/* tests/rru_qemu/probe.S: instruction cases where Unicorn 2.0.1 (the
 * lock-step oracle) disagrees with the ISA manual. tests/test_rru_qemu.c runs
 * this program under qemu-riscv64 and on an rru hart; the outputs (result
 * bits and fflags of each case, 8 bytes each) must be equal, and equal to
 * what the manual says. No libc: write(1, ...) and exit(0) by ecall. */
    .option norvc
    .text
    .globl _start

.macro OUT reg
    sd \reg, 0(s0)
    addi s0, s0, 8
.endm

/* The raw 64 bits of freg and the accrued flags; flags cleared after. */
.macro FRES freg
    fmv.x.d t6, \freg
    OUT t6
    frflags t6
    OUT t6
    fsflags zero
.endm

.macro FSET freg, value
    li t6, \value
    fmv.d.x \freg, t6
.endm

_start:
    addi sp, sp, -2048
    mv s0, sp                   /* output buffer */
    addi s1, sp, 1536           /* scratch words for the AMOs */
    fsflags zero
    fsrmi 0

    FSET f1, 0x000000003f800000 /* 1.0f, not NaN-boxed */
    FSET f2, 0xffffffff3f800000 /* 1.0f, boxed */
    FSET f4, 0xffffffff7fa00000 /* signalling NaN, single */
    FSET f5, 0xffffffff7fc00000 /* quiet NaN, single */
    FSET f6, 0x7ff4000000000000 /* signalling NaN, double */
    FSET f7, 0x4000000000000000 /* 2.0 */
    FSET f8, 0xffffffff00000000 /* +0.0f */
    FSET f9, 0xffffffff7f800000 /* +inf single */
    FSET f10, 0x0000000000000000 /* +0.0 */
    FSET f11, 0x7ff0000000000000 /* +inf double */
    FSET f12, 0x7ff8000000000000 /* quiet NaN double */
    FSET f13, 0xffffffff33800000 /* 2^-24 */

    /* 1-2: NaN boxing of inputs and results */
    fadd.s f3, f1, f2
    FRES f3                     /* unboxed input reads as the canonical NaN */
    fadd.s f3, f2, f2
    FRES f3                     /* 2.0f, boxed */
    /* 3-5: more boxing */
    fsgnjn.s f3, f1, f1
    FRES f3                     /* -canonical NaN, boxed */
    fcvt.d.s f3, f1
    FRES f3                     /* canonical double NaN */
    fclass.s t0, f1
    OUT t0
    /* 6-8: fmin/fmax (2.2): a signalling NaN gives the other operand */
    fmin.s f3, f4, f2
    FRES f3
    fmax.d f3, f6, f7
    FRES f3
    fmin.s f3, f4, f5
    FRES f3                     /* both NaN: canonical */
    /* 9-10: 0 x inf + quiet NaN raises invalid */
    fmadd.s f3, f8, f9, f5
    FRES f3
    fmadd.d f3, f11, f10, f12
    FRES f3
    /* 11: RMM: 1 + 2^-24 rounds away */
    fadd.s f3, f2, f13, rmm
    FRES f3
    /* 12-14: saturating conversions */
    fcvt.w.s t0, f5, rtz
    OUT t0
    frflags t0
    OUT t0
    fsflags zero
    li t1, 0xbff0000000000000   /* -1.0 */
    fmv.d.x f3, t1
    fcvt.wu.d t0, f3, rtz
    OUT t0
    li t1, 0x43f0000000000000   /* 2^64 */
    fmv.d.x f3, t1
    fcvt.lu.d t0, f3, rtz
    OUT t0
    frflags t0
    OUT t0
    fsflags zero

    /* 15-19: 32-bit AMOs compare 32-bit values (upper half of rs2 ignored) */
    li t0, 5
    sd t0, 0(s1)
    li t1, 0x123456789abcdef0
    amomax.w t2, t1, (s1)
    ld t3, 0(s1)
    OUT t3
    OUT t2
    sd t0, 0(s1)
    amomin.w t2, t1, (s1)
    ld t3, 0(s1)
    OUT t3
    li t1, 0x1234567800000003
    sd t0, 0(s1)
    amominu.w t2, t1, (s1)
    ld t3, 0(s1)
    OUT t3
    li t0, 0x80000000
    sd t0, 0(s1)
    li t1, 0xffffffff00000003
    amomaxu.w t2, t1, (s1)
    ld t3, 0(s1)
    OUT t3
    OUT t2
    li t0, 0xb5a3778c           /* a negative word: max with a positive rs2 */
    sd t0, 0(s1)
    li t1, 0x40000
    amomax.w t2, t1, (s1)
    ld t3, 0(s1)
    OUT t3
    OUT t2

    /* 20: a misaligned load (Linux emulates it) */
    li t0, 0x0807060504030201
    sd t0, 8(s1)
    sd zero, 16(s1)
    ld t1, 11(s1)
    OUT t1

    li a0, 1
    mv a1, sp
    sub a2, s0, sp
    li a7, 64
    ecall
    li a0, 0
    li a7, 93
    ecall
