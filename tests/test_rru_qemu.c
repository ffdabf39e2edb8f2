/* tests/test_rru_qemu.c: the cases where the lock-step oracle (Unicorn
 * 2.0.1) disagrees with the ISA manual, settled against qemu-riscv64: the
 * guest program tests/rru_qemu/probe.S runs under qemu-riscv64 and on an
 * rru hart; the outputs must be equal, and each case equal to the value the
 * manual prescribes (which is what makes the lock-step exceptions E1-E7 of
 * tests/test_rru_lockstep.c legitimate). */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rru/hart.h"
#include "rru/mem.h"
#include "rru_probe.h"
#include "tests/testutil.h"

#define STACK_TOP 0x7fff0000ull

/* Runs the probe on a hart; returns what it wrote to stdout (malloc'd). */
static uint8_t *run_on_rru(size_t *len)
{
    rru_mem *m = rru_mem_new();
    uint64_t text_len = (sizeof rru_probe_text + RRU_PAGE_SIZE - 1) & ~(RRU_PAGE_SIZE - 1);
    ck_assert_int_eq(rru_mem_map(m, 0x10000, text_len, RRU_PROT_R | RRU_PROT_X), 0);
    ck_assert_int_eq(rru_mem_write(m, 0x10000, rru_probe_text, sizeof rru_probe_text), 0);
    ck_assert_int_eq(rru_mem_map(m, STACK_TOP - 0x10000, 0x10000, RRU_PROT_R | RRU_PROT_W), 0);
    rru_hart *h = rru_hart_new(m, 0);
    rru_ctx c;
    rru_ctx_init(&c, 0x10000);
    c.x[2] = STACK_TOP - 256;
    rru_hart_load(h, &c);
    uint8_t *out = NULL;
    *len = 0;
    for (;;) {
        rru_stop st;
        rru_stop_reason r = rru_hart_execute(h, 100000, &st);
        ck_assert_msg(r == RRU_STOP_ECALL, "probe stopped: %s at 0x%llx", rru_stop_name(r),
                      (unsigned long long)st.pc);
        rru_ctx *x = rru_hart_ctx(h);
        if (x->x[17] == 93)
            break;
        ck_assert_uint_eq(x->x[17], 64);
        size_t n = (size_t)x->x[12];
        out = realloc(out, *len + n);
        ck_assert_int_eq(rru_mem_read(m, x->x[11], out + *len, n), 0);
        *len += n;
        x->x[10] = n;
    }
    rru_hart_free(h);
    rru_mem_free(m);
    return out;
}

START_TEST(rru_matches_qemu_where_unicorn_does_not)
{
    tu_output o;
    const char *argv[] = { "/usr/bin/qemu-riscv64", rru_probe_elf, NULL };
    tu_run(argv, NULL, &o);
    ck_assert_msg(o.status == 0, "qemu-riscv64: status %d: %s", o.status, o.err);
    size_t n;
    uint8_t *mine = run_on_rru(&n);
    ck_assert_uint_eq(n, o.out_len);
    uint64_t q[64], r[64];
    ck_assert_uint_le(n, sizeof q);
    memcpy(q, o.out, n);
    memcpy(r, mine, n);
    for (size_t i = 0; i < n / 8; i++)
        ck_assert_msg(q[i] == r[i], "word %zu: qemu 0x%llx, rru 0x%llx", i,
                      (unsigned long long)q[i], (unsigned long long)r[i]);
    /* What the manual prescribes, where Unicorn 2.0.1 does otherwise. */
    static const uint64_t want[] = {
        0xffffffff7fc00000ull, 0,       /* E2: unboxed input is the canonical NaN */
        0xffffffff40000000ull, 0,       /* E1: single results are boxed */
        0xffffffffffc00000ull, 0,
        0x7ff8000000000000ull, 0,
        1u << 9,                        /* fclass of an unboxed value: quiet NaN */
        0xffffffff3f800000ull, 0x10,    /* E3: fmin(sNaN, 1) = 1, invalid */
        0x4000000000000000ull, 0x10,
        0xffffffff7fc00000ull, 0x10,
        0xffffffff7fc00000ull, 0x10,    /* E6: 0 x inf + qNaN raises invalid */
        0x7ff8000000000000ull, 0x10,
        0xffffffff3f800001ull, 0x01,    /* RMM */
        0x7fffffff, 0x10, 0, ~0ull, 0x10,
        5, 5,                           /* E7: amomax.w with a negative low half */
        0x000000009abcdef0ull,          /* amomin.w */
        3,                              /* amominu.w */
        0x80000000, 0xffffffff80000000ull,
        0x40000, 0xffffffffb5a3778cull,   /* amomax.w: -x < 0x40000 */
        0x0000000807060504ull,          /* misaligned ld */
    };
    ck_assert_uint_eq(n, sizeof want);
    for (size_t i = 0; i < n / 8; i++)
        ck_assert_msg(r[i] == want[i], "word %zu: 0x%llx, the manual says 0x%llx", i,
                      (unsigned long long)r[i], (unsigned long long)want[i]);
    free(mine);
    tu_output_free(&o);
}
END_TEST

TU_SUITE(rru_qemu)
{
    Suite *s = suite_create("rru_qemu");
    TCase *tc = tu_tcase(s, "qemu", 30);
    tcase_add_test(tc, rru_matches_qemu_where_unicorn_does_not);
    return s;
}
