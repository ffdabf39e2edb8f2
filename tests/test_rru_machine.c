/* tests/test_rru_machine.c: the multicore: determinism, seeds changing the
 * interleaving, atomicity of LR/SC and AMOs under contention, the
 * coherence invariants (single writer), timestamps following the real order
 * on random programs, the hook points, and the driver-facing controls
 * (syscall accesses as a core, idle/resume, timers, alarms). */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rru/machine.h"
#include "tests/rru_enc.h"
#include "tests/testutil.h"

/* An assertion for hot loops: Check records every passing ck_assert (a
 * write to its pipe), which would dominate these tests' run time. */
#define CHECK(cond, ...)                     \
    do {                                     \
        if (!(cond))                         \
            ck_abort_msg(__VA_ARGS__);       \
    } while (0)

#define CODE 0x10000ull
#define SHARED 0x100000ull
#define PRIV 0x200000ull
#define PRIV_STRIDE 0x1000ull

typedef struct mtest {
    rru_mem *mem;
    rru_machine *m;
    unsigned cores;
} mtest;

/* A machine whose core i runs code[i] (n[i] words) at CODE + i * 0x1000,
 * with a4 = SHARED, a1 = its private page, a0 = ARG. */
static mtest mt_new(unsigned cores, uint64_t seed, const uint32_t *const *code, const size_t *n,
                    uint64_t arg)
{
    mtest t;
    t.cores = cores;
    t.mem = rru_mem_new();
    rru_mem_map(t.mem, CODE, 0x1000ull * cores, RRU_PROT_R | RRU_PROT_X);
    rru_mem_map(t.mem, SHARED, 0x4000, RRU_PROT_R | RRU_PROT_W);
    rru_mem_map(t.mem, PRIV, PRIV_STRIDE * cores, RRU_PROT_R | RRU_PROT_W);
    rru_machine_config cfg;
    rru_machine_config_default(&cfg);
    cfg.cores = cores;
    cfg.seed = seed;
    char err[128];
    t.m = rru_machine_new(&cfg, t.mem, err, sizeof err);
    ck_assert_msg(t.m != NULL, "%s", err);
    for (unsigned i = 0; i < cores; i++) {
        rru_mem_write(t.mem, CODE + 0x1000ull * i, code[i], n[i] * 4);
        rru_ctx c;
        rru_ctx_init(&c, CODE + 0x1000ull * i);
        c.x[A0] = arg;
        c.x[A1] = PRIV + PRIV_STRIDE * i;
        c.x[A4] = SHARED;
        c.x[S1] = 0;
        rru_machine_load(t.m, i, &c);
    }
    return t;
}

static void mt_free(mtest *t)
{
    rru_machine_free(t->m);
    rru_mem_free(t->mem);
}

/* Runs until every core made its final ECALL (then it is left idle). */
static void mt_run_all(mtest *t)
{
    unsigned done = 0;
    rru_stop st;
    while (done < t->cores) {
        rru_stop_reason r = rru_machine_run(t->m, &st);
        ck_assert_msg(r == RRU_STOP_ECALL, "core %u: %s at 0x%llx", st.core, rru_stop_name(r),
                      (unsigned long long)st.pc);
        rru_machine_set_idle(t->m, st.core);
        done++;
    }
    ck_assert_int_eq(rru_machine_run(t->m, &st), RRU_STOP_IDLE);
}

static uint64_t shared_word(mtest *t, uint64_t off)
{
    uint64_t v;
    ck_assert_int_eq(rru_mem_read(t->mem, SHARED + off, &v, 8), 0);
    return v;
}

/* a0 iterations of a racy increment of the shared word, with some private
 * work in between. */
static const uint32_t racy[] = {
    /* 0 */ I_LD(T0, A4, 0),
    /* 4 */ I_ADDI(T0, T0, 1),
    /* 8 */ I_SD(T0, A4, 0),
    /* 12 */ I_LD(T1, A1, 0),
    /* 16 */ I_ADD(T1, T1, A0),
    /* 20 */ I_SD(T1, A1, 0),
    /* 24 */ I_ADDI(A0, A0, -1),
    /* 28 */ I_BNE(A0, ZERO, -28),
    /* 32 */ I_ECALL,
};

static mtest run_racy(unsigned cores, uint64_t seed, uint64_t iters)
{
    const uint32_t *code[RRU_MAX_CORES];
    size_t n[RRU_MAX_CORES];
    for (unsigned i = 0; i < cores; i++) {
        code[i] = racy;
        n[i] = sizeof racy / 4;
    }
    mtest t = mt_new(cores, seed, code, n, iters);
    mt_run_all(&t);
    return t;
}

START_TEST(rru_machine_same_seed_gives_identical_everything)
{
    uint8_t d1[32], d2[32];
    rru_core_stats s1[8], s2[8];
    mtest a = run_racy(8, 42, 3000), b = run_racy(8, 42, 3000);
    rru_mem_digest(a.mem, d1);
    rru_mem_digest(b.mem, d2);
    ck_assert_int_eq(memcmp(d1, d2, 32), 0);
    uint64_t bus = 0;
    for (unsigned i = 0; i < 8; i++) {
        rru_machine_stats(a.m, i, &s1[i]);
        rru_machine_stats(b.m, i, &s2[i]);
        ck_assert_int_eq(memcmp(&s1[i], &s2[i], sizeof s1[i]), 0);
        bus += s1[i].bus_reads + s1[i].bus_exclusive;
    }
    ck_assert_uint_gt(bus, 1000);   /* the cores did contend */
    mt_free(&a);
    mt_free(&b);
}
END_TEST

START_TEST(rru_machine_seeds_change_the_interleaving)
{
    /* Lost updates depend on where slices end, which depends on the seeded
     * latencies: several seeds must give at least two counter values. */
    uint64_t values[8];
    unsigned distinct = 0;
    for (uint64_t seed = 1; seed <= 8; seed++) {
        mtest t = run_racy(4, seed, 2000);
        uint64_t v = shared_word(&t, 0);
        ck_assert_uint_le(v, 4 * 2000);
        int seen = 0;
        for (unsigned k = 0; k < distinct; k++)
            seen |= values[k] == v;
        if (!seen)
            values[distinct++] = v;
        mt_free(&t);
    }
    ck_assert_uint_ge(distinct, 2);
}
END_TEST

/* LR/SC increment loop; s1 counts SC failures. */
static const uint32_t lrsc_inc[] = {
    /* 0 */ I_LR_D(T0, A4),
    /* 4 */ I_ADDI(T0, T0, 1),
    /* 8 */ I_SC_D(T1, A4, T0),
    /* 12 */ I_BEQ(T1, ZERO, 12),
    /* 16 */ I_ADDI(S1, S1, 1),
    /* 20 */ I_JAL(ZERO, -20),
    /* 24 */ I_ADDI(A0, A0, -1),
    /* 28 */ I_BNE(A0, ZERO, -28),
    /* 32 */ I_ECALL,
};

/* AMO increment of the word at SHARED + 64, and of a 32-bit word. */
static const uint32_t amo_inc[] = {
    /* 0 */ I_ADDI(T2, ZERO, 1),
    /* 4 */ I_ADDI(T0, A4, 64),
    /* 8 */ I_ADDI(T1, A4, 128),
    /* 12 */ I_AMOADD_D(ZERO, T0, T2),
    /* 16 */ I_AMOADD_W(ZERO, T1, T2),
    /* 20 */ I_ADDI(A0, A0, -1),
    /* 24 */ I_BNE(A0, ZERO, -12),
    /* 28 */ I_ECALL,
};

START_TEST(rru_machine_lr_sc_and_amos_are_atomic_under_contention)
{
    const unsigned cores = 8;
    const uint64_t iters = 1500;
    const uint32_t *code[8];
    size_t n[8];
    for (unsigned i = 0; i < cores; i++) {
        code[i] = (i & 1) ? amo_inc : lrsc_inc;
        n[i] = (i & 1) ? sizeof amo_inc / 4 : sizeof lrsc_inc / 4;
    }
    uint64_t failures = 0;
    for (uint64_t seed = 1; seed <= 3; seed++) {
        mtest t = mt_new(cores, seed, code, n, iters);
        mt_run_all(&t);
        ck_assert_uint_eq(shared_word(&t, 0), (cores / 2) * iters);
        ck_assert_uint_eq(shared_word(&t, 64), (cores / 2) * iters);
        ck_assert_uint_eq((uint32_t)shared_word(&t, 128), (cores / 2) * iters);
        for (unsigned i = 0; i < cores; i += 2)
            failures += rru_hart_ctx(rru_machine_hart(t.m, i))->x[S1];
        mt_free(&t);
    }
    ck_assert_uint_gt(failures, 0);   /* reservations were really broken */
}
END_TEST

START_TEST(rru_machine_another_cores_store_breaks_the_reservation)
{
    /* Core 0: lr.d, then spin 400 instructions, then sc.d. Core 1 stores to
     * the line meanwhile (it runs when core 0 is a slice ahead). */
    uint32_t c0[] = { I_LR_D(T0, A4), I_ADDI(T2, ZERO, 400), I_ADDI(T2, T2, -1),
                      I_BNE(T2, ZERO, -4), I_SC_D(T1, A4, A0), I_ECALL };
    uint32_t c1[] = { I_SD(A0, A4, 8), I_ECALL };
    const uint32_t *code[2] = { c0, c1 };
    size_t n[2] = { 6, 2 };
    mtest t = mt_new(2, 1, code, n, 5);
    mt_run_all(&t);
    ck_assert_uint_eq(rru_hart_ctx(rru_machine_hart(t.m, 0))->x[T1], 1);
    ck_assert_uint_eq(shared_word(&t, 0), 0);
    mt_free(&t);
    /* Without the other store, the SC succeeds. */
    uint32_t c1b[] = { I_SD(A0, A4, 64), I_ECALL };
    code[1] = c1b;
    t = mt_new(2, 1, code, n, 5);
    mt_run_all(&t);
    ck_assert_uint_eq(rru_hart_ctx(rru_machine_hart(t.m, 0))->x[T1], 0);
    ck_assert_uint_eq(shared_word(&t, 0), 5);
    mt_free(&t);
}
END_TEST

/* ---- timestamps follow the real order; single writer ---- */

#define TLINES 6
typedef struct order_check {
    rru_machine *m;
    uint64_t last_read[TLINES][RRU_MAX_CORES], last_write[TLINES][RRU_MAX_CORES];
    uint64_t accesses, checked, violations, sw_violations;
    uint64_t seed;
} order_check;

static void order_trace(void *ctx, unsigned core, uint64_t addr, unsigned size, int write,
                        uint64_t time)
{
    order_check *oc = ctx;
    oc->accesses++;
    if (addr < SHARED || addr >= SHARED + TLINES * RRU_LINE_SIZE)
        return;
    unsigned l = (unsigned)((addr - SHARED) / RRU_LINE_SIZE);
    CHECK((addr + size - 1 - SHARED) / RRU_LINE_SIZE == l, "access straddles lines");
    unsigned cores = rru_machine_cores(oc->m);
    for (unsigned i = 0; i < cores; i++) {
        if (i == core)
            continue;
        /* Every earlier conflicting access of another core is not later. */
        uint64_t bound = oc->last_write[l][i];
        if (write && oc->last_read[l][i] > bound)
            bound = oc->last_read[l][i];
        oc->checked++;
        if (bound > time)
            oc->violations++;
    }
    if (write)
        oc->last_write[l][core] = time;
    else
        oc->last_read[l][core] = time;
    /* Single writer: a write happens only in the owner, alone. */
    uint64_t sharers;
    int owner;
    rru_machine_line_state(oc->m, addr, &sharers, &owner);
    if (write ? (owner != (int)core || sharers != (1ull << core))
              : !(sharers & (1ull << core)) || (owner >= 0 && owner != (int)core))
        oc->sw_violations++;
}

/* A random program: accesses to the first TLINES lines of SHARED (a4),
 * to the private page (a1), and ALU filler, repeated a0 times; ends with
 * ECALL. */
static size_t random_program(uint32_t *out, size_t max, uint64_t *rng)
{
    size_t n = 0;
    while (n + 6 < max) {
        unsigned off = (unsigned)tu_below(rng, TLINES * RRU_LINE_SIZE / 8) * 8;
        switch (tu_below(rng, 9)) {
        case 0: case 1: out[n++] = I_LD(T0, A4, (int32_t)off); break;
        case 2: out[n++] = I_SD(T0, A4, (int32_t)off); break;
        case 3: out[n++] = I_LW(T1, A4, (int32_t)off + 4); break;
        case 4:
            out[n++] = I_ADDI(T2, A4, (int32_t)off);
            out[n++] = I_AMOADD_D(T1, T2, T0);
            break;
        case 5:
            out[n++] = I_ADDI(T2, A4, (int32_t)off);
            out[n++] = I_LR_D(T1, T2);
            out[n++] = I_SC_D(T1, T2, T0);
            break;
        case 6: out[n++] = I_SD(T0, A1, (int32_t)(off & 0x7f8)); break;
        default: {
            unsigned k = 1 + (unsigned)tu_below(rng, 30);
            for (unsigned j = 0; j < k && n + 6 < max; j++)
                out[n++] = I_ADDI(T0, T0, (int32_t)tu_below(rng, 100));
        }
        }
    }
    out[n] = I_ADDI(A0, A0, -1);
    out[n + 1] = I_BNE(A0, ZERO, -(int32_t)(4 * (n + 1)));
    n += 2;
    out[n++] = I_ECALL;
    return n;
}

START_TEST(rru_machine_timestamps_follow_real_order)
{
    uint64_t seed = tu_seed(1000 + (uint64_t)_i), rng = seed;
    unsigned cores = 2 + (unsigned)tu_below(&rng, 7);
    static uint32_t progs[8][900];
    const uint32_t *code[8];
    size_t n[8];
    for (unsigned i = 0; i < cores; i++) {
        n[i] = random_program(progs[i], 900, &rng);
        code[i] = progs[i];
    }
    mtest t = mt_new(cores, seed, code, n, 4);
    order_check *oc = calloc(1, sizeof *oc);
    oc->m = t.m;
    oc->seed = seed;
    rru_machine_set_trace(t.m, order_trace, oc);
    mt_run_all(&t);
    ck_assert_uint_gt(oc->checked, 1000);
    ck_assert_msg(oc->violations == 0, "seed %llu: %llu of %llu conflicting pairs out of order",
                  (unsigned long long)seed, (unsigned long long)oc->violations,
                  (unsigned long long)oc->checked);
    ck_assert_msg(oc->sw_violations == 0, "seed %llu: single-writer broken %llu times",
                  (unsigned long long)seed, (unsigned long long)oc->sw_violations);
    free(oc);
    mt_free(&t);
}
END_TEST

/* ---- hooks ---- */

typedef struct hook_log {
    rru_machine *m;
    uint64_t snoops[RRU_MAX_CORES], accesses[RRU_MAX_CORES], events[RRU_MAX_CORES];
    uint64_t event_retired[RRU_MAX_CORES];
    uint64_t bad_snoop_time;
    uint64_t seen_lines[RRU_MAX_CORES][64];
    unsigned nseen[RRU_MAX_CORES];
    int dup_in_epoch;
} hook_log;

static hook_log *hl;

static void h_access(void *rru, unsigned core, uint64_t line, int write, uint64_t time,
                     uint64_t retired)
{
    hook_log *l = rru;
    (void)write;
    CHECK(time == rru_machine_clock(l->m, core), "access time is not the core's clock");
    CHECK(retired == rru_machine_retired(l->m, core), "retired is not the core's count");
    l->accesses[core]++;
    for (unsigned k = 0; k < l->nseen[core]; k++)
        if (l->seen_lines[core][k] == (line | (uint64_t)write))
            l->dup_in_epoch = 1;
    if (l->nseen[core] < 64)
        l->seen_lines[core][l->nseen[core]++] = line | (uint64_t)write;
}

static void h_snoop(void *rru, unsigned core, const rru_bus *b)
{
    hook_log *l = rru;
    CHECK(core != b->requester, "a core snooped its own transaction");
    l->snoops[core]++;
    /* The RRU's guarantee: a conflicting holder's clock is before the time. */
    uint64_t sharers;
    int owner;
    rru_machine_line_state(l->m, b->line, &sharers, &owner);
    int conflicting = b->exclusive ? (sharers >> core) & 1 : owner == (int)core;
    if (conflicting && b->time < rru_machine_clock(l->m, core) + 1)
        l->bad_snoop_time++;
}

static void h_event(void *rru, unsigned core)
{
    hook_log *l = rru;
    l->events[core]++;
    l->event_retired[core] = rru_machine_retired(l->m, core);
}

static const rru_core_ops hook_ops = { h_access, h_snoop, h_event };

START_TEST(rru_machine_hooks_see_snoops_accesses_and_exact_events)
{
    const uint32_t *code[4];
    size_t n[4];
    for (unsigned i = 0; i < 4; i++) {
        code[i] = racy;
        n[i] = sizeof racy / 4;
    }
    mtest t = mt_new(4, 7, code, n, 500);
    hl = calloc(1, sizeof *hl);
    hl->m = t.m;
    for (unsigned i = 0; i < 4; i++)
        rru_machine_attach(t.m, i, &hook_ops, hl);
    rru_machine_set_event(t.m, 2, 777, UINT64_MAX);
    mt_run_all(&t);
    uint64_t bus = 0;
    for (unsigned i = 0; i < 4; i++) {
        rru_core_stats s;
        rru_machine_stats(t.m, i, &s);
        bus += s.bus_reads + s.bus_exclusive;
    }
    for (unsigned i = 0; i < 4; i++) {
        /* Every transaction of the three other cores was snooped here. */
        rru_core_stats s;
        rru_machine_stats(t.m, i, &s);
        ck_assert_uint_eq(hl->snoops[i], bus - s.bus_reads - s.bus_exclusive);
        ck_assert_uint_gt(hl->accesses[i], 0);
    }
    ck_assert_uint_eq(hl->bad_snoop_time, 0);
    ck_assert_uint_eq(hl->events[2], 1);
    ck_assert_uint_eq(hl->event_retired[2], 777);
    ck_assert_uint_eq(hl->events[0], 0);
    free(hl);
    mt_free(&t);
}
END_TEST

START_TEST(rru_machine_filter_reports_each_line_once_per_flush)
{
    /* One core touching 3 lines repeatedly: access() once per line and
     * kind, until the filter is flushed; then again. */
    uint32_t c0[] = { I_ADDI(A0, ZERO, 50),
                      /* 4 */ I_LD(T0, A1, 0), I_SD(T0, A1, 64), I_LD(T1, A1, 128), I_LD(T1, A1, 64),
                      I_ADDI(A0, A0, -1), I_BNE(A0, ZERO, -20), I_ECALL };
    const uint32_t *code[1] = { c0 };
    size_t n[1] = { sizeof c0 / 4 };
    mtest t = mt_new(1, 1, code, n, 0);
    hl = calloc(1, sizeof *hl);
    hl->m = t.m;
    rru_machine_attach(t.m, 0, &hook_ops, hl);
    rru_stop st;
    ck_assert_int_eq(rru_machine_run(t.m, &st), RRU_STOP_ECALL);
    /* ld line0, sd line1, ld line2; the ld of line1 is covered by the sd. */
    ck_assert_uint_eq(hl->accesses[0], 3);
    ck_assert_int_eq(hl->dup_in_epoch, 0);
    /* Flush, run the loop again: three more reports. */
    rru_machine_flush_filter(t.m, 0);
    hl->nseen[0] = 0;
    rru_hart_ctx(rru_machine_hart(t.m, 0))->pc = CODE;
    rru_machine_resume(t.m, 0);
    ck_assert_int_eq(rru_machine_run(t.m, &st), RRU_STOP_ECALL);
    ck_assert_uint_eq(hl->accesses[0], 6);
    /* 32767 flushes, one whole round of epochs: the epoch is the one the
     * entries were written in, so only the wrap's aging keeps them from
     * counting as reported. Still exactly one report each. */
    for (int k = 0; k < 32767; k++)
        rru_machine_flush_filter(t.m, 0);
    hl->nseen[0] = 0;
    rru_hart_ctx(rru_machine_hart(t.m, 0))->pc = CODE;
    rru_machine_resume(t.m, 0);
    ck_assert_int_eq(rru_machine_run(t.m, &st), RRU_STOP_ECALL);
    ck_assert_uint_eq(hl->accesses[0], 9);
    ck_assert_int_eq(hl->dup_in_epoch, 0);
    free(hl);
    mt_free(&t);
}
END_TEST

/* Ownership kept in a filter entry (bit 2) makes a core's first write to a
 * line it owns and has only read a hit: reported, no transaction. Losing
 * ownership to another core's read must take that bit away, or the old
 * owner's next write would skip the upgrade and leave a stale copy behind.
 * Driven through rru_machine_read/write, which take the same path as the
 * guest's slow accesses, with hooks attached (the shortcut's condition). */
START_TEST(rru_machine_ownership_in_the_filter_follows_the_directory)
{
    uint32_t halt[] = { I_ECALL };
    const uint32_t *code[2] = { halt, halt };
    size_t n[2] = { 1, 1 };
    mtest t = mt_new(2, 3, code, n, 0);
    hl = calloc(1, sizeof *hl);
    hl->m = t.m;
    for (unsigned i = 0; i < 2; i++)
        rru_machine_attach(t.m, i, &hook_ops, hl);
    uint64_t v = 0, a = SHARED + 0x100, line = a & ~(uint64_t)(RRU_LINE_SIZE - 1);
    rru_core_stats s0, s1;
    /* core 0 reads: the only copy, so it owns it */
    ck_assert_int_eq(rru_machine_read(t.m, 0, a, &v, 8), 0);
    uint64_t sharers;
    int owner;
    rru_machine_line_state(t.m, line, &sharers, &owner);
    ck_assert_int_eq(owner, 0);
    /* its first write: a report, no transaction; also after a flush */
    ck_assert_int_eq(rru_machine_write(t.m, 0, a, &v, 8), 0);
    rru_machine_flush_filter(t.m, 0);
    ck_assert_int_eq(rru_machine_read(t.m, 0, a, &v, 8), 0);
    ck_assert_int_eq(rru_machine_write(t.m, 0, a, &v, 8), 0);
    rru_machine_stats(t.m, 0, &s0);
    ck_assert_uint_eq(s0.bus_reads, 1);
    ck_assert_uint_eq(s0.bus_exclusive, 0);
    ck_assert_uint_eq(hl->accesses[0], 4);   /* read, write, and again after the flush */
    /* core 1 reads: core 0 is a sharer, no longer the owner */
    ck_assert_int_eq(rru_machine_read(t.m, 1, a, &v, 8), 0);
    rru_machine_line_state(t.m, line, &sharers, &owner);
    ck_assert_int_eq(owner, -1);
    ck_assert_uint_eq(sharers, 3);
    /* core 0 writes again, in this epoch and after a flush: each time an
     * upgrade that core 1 snoops */
    ck_assert_int_eq(rru_machine_write(t.m, 0, a, &v, 8), 0);
    rru_machine_stats(t.m, 0, &s0);
    ck_assert_uint_eq(s0.bus_exclusive, 1);
    ck_assert_uint_eq(hl->snoops[1], 2);   /* core 0's first read, then this */
    ck_assert_int_eq(rru_machine_read(t.m, 1, a, &v, 8), 0);   /* core 1 again */
    rru_machine_flush_filter(t.m, 0);
    ck_assert_int_eq(rru_machine_read(t.m, 0, a, &v, 8), 0);
    ck_assert_int_eq(rru_machine_write(t.m, 0, a, &v, 8), 0);
    rru_machine_stats(t.m, 0, &s0);
    rru_machine_stats(t.m, 1, &s1);
    ck_assert_uint_eq(s0.bus_exclusive, 2);
    ck_assert_uint_eq(s1.bus_reads, 2);
    rru_machine_line_state(t.m, line, &sharers, &owner);
    ck_assert_int_eq(owner, 0);
    ck_assert_uint_eq(sharers, 1);
    free(hl);
    mt_free(&t);
}
END_TEST

static unsigned rearm_count;
static rru_machine *rearm_m;
static void rearm_event(void *rru, unsigned core)
{
    (void)rru;
    rearm_count++;
    /* Re-arm at the point where we are: must not stall the machine. */
    rru_machine_set_event(rearm_m, core, rru_machine_retired(rearm_m, core),
                          rru_machine_clock(rearm_m, core));
}
static const rru_core_ops rearm_ops = { NULL, NULL, rearm_event };

START_TEST(rru_machine_rearmed_event_cannot_stall)
{
    uint32_t c0[] = { I_ADDI(A0, ZERO, 40), I_ADDI(A0, A0, -1), I_BNE(A0, ZERO, -4), I_ECALL };
    const uint32_t *code[1] = { c0 };
    size_t n[1] = { 4 };
    mtest t = mt_new(1, 1, code, n, 0);
    rearm_m = t.m;
    rearm_count = 0;
    rru_machine_attach(t.m, 0, &rearm_ops, NULL);
    rru_machine_set_event(t.m, 0, 0, UINT64_MAX);
    rru_stop st;
    ck_assert_int_eq(rru_machine_run(t.m, &st), RRU_STOP_ECALL);
    /* Fired first at the start, then at every block boundary after
     * progress: the 40 iterations of the two-instruction loop block. */
    ck_assert_uint_eq(rearm_count, 41);
    mt_free(&t);
}
END_TEST

START_TEST(rru_machine_private_line_needs_one_transaction)
{
    /* Read then write a line nobody else holds: the read miss grants it
     * exclusive (MESI's E), the write needs no second transaction. */
    uint32_t c0[] = { I_LD(T0, A1, 0), I_SD(T0, A1, 8), I_ECALL };
    uint32_t c1[] = { I_LD(T0, A4, 0), I_ECALL };
    const uint32_t *code[2] = { c0, c1 };
    size_t n[2] = { 3, 2 };
    mtest t = mt_new(2, 1, code, n, 0);
    mt_run_all(&t);
    rru_core_stats s;
    rru_machine_stats(t.m, 0, &s);
    ck_assert_uint_eq(s.bus_reads, 1);
    ck_assert_uint_eq(s.bus_exclusive, 0);
    uint64_t sharers;
    int owner;
    rru_machine_line_state(t.m, PRIV, &sharers, &owner);
    ck_assert_int_eq(owner, 0);
    ck_assert_uint_eq(sharers, 1);
    mt_free(&t);
}
END_TEST

/* ---- driver controls ---- */

START_TEST(rru_machine_syscall_accesses_go_through_coherence)
{
    uint32_t c0[] = { I_LD(T0, A4, 0), I_ECALL, I_LD(T1, A4, 0), I_ECALL };
    uint32_t c1[] = { I_ECALL };
    const uint32_t *code[2] = { c0, c1 };
    size_t n[2] = { 4, 1 };
    mtest t = mt_new(2, 1, code, n, 0);
    rru_stop st;
    /* Core 0 runs first (tie at clock 0 goes to core 0), reads the line. */
    ck_assert_int_eq(rru_machine_run(t.m, &st), RRU_STOP_ECALL);
    ck_assert_uint_eq(st.core, 0);
    ck_assert_int_eq(rru_machine_run(t.m, &st), RRU_STOP_ECALL);
    ck_assert_uint_eq(st.core, 1);
    /* Core 1 "writes a syscall result" into the shared word: a transaction
     * that invalidates core 0's copy and waits past core 0's clock. */
    uint64_t before = rru_machine_clock(t.m, 1), c0clock = rru_machine_clock(t.m, 0);
    uint64_t v = 99;
    ck_assert_int_eq(rru_machine_write(t.m, 1, SHARED, &v, 8), 0);
    ck_assert_uint_gt(rru_machine_clock(t.m, 1), before);
    ck_assert_uint_gt(rru_machine_clock(t.m, 1), c0clock);
    uint64_t sharers;
    int owner;
    rru_machine_line_state(t.m, SHARED, &sharers, &owner);
    ck_assert_int_eq(owner, 1);
    ck_assert_uint_eq(sharers, 2);
    rru_core_stats s;
    rru_machine_stats(t.m, 1, &s);
    ck_assert_uint_eq(s.bus_exclusive, 1);
    /* Core 0 sees the value. */
    rru_machine_resume(t.m, 0);
    ck_assert_int_eq(rru_machine_run(t.m, &st), RRU_STOP_ECALL);
    ck_assert_uint_eq(rru_hart_ctx(rru_machine_hart(t.m, 0))->x[T1], 99);
    /* Permissions: EFAULT-style failures. */
    ck_assert_int_eq(rru_machine_write(t.m, 1, CODE, &v, 8), -1);
    ck_assert_int_eq(rru_machine_read(t.m, 1, 0x9000000, &v, 8), -1);
    ck_assert_int_eq(rru_machine_read(t.m, 1, CODE, &v, 8), 0);
    /* A read spanning lines and pages. */
    uint8_t big[5000];
    memset(big, 7, sizeof big);
    ck_assert_int_eq(rru_machine_write(t.m, 1, SHARED + 10, big, sizeof big), 0);
    uint8_t back[5000];
    ck_assert_int_eq(rru_machine_read(t.m, 0, SHARED + 10, back, sizeof back), 0);
    ck_assert_int_eq(memcmp(big, back, sizeof big), 0);
    mt_free(&t);
}
END_TEST

/* The directory's lines are found again after rru_machine_forget (the
 * guest page still mapped keeps no pointer to the freed entry) and by a
 * second machine on the same memory (no pointer of the first is used):
 * each starts from an empty line, so each access below is a transaction. */
START_TEST(rru_machine_forgotten_or_foreign_directory_entries_are_not_reused)
{
    uint32_t c0[] = { I_ECALL };
    const uint32_t *code[1] = { c0 };
    size_t n[1] = { 1 };
    mtest t = mt_new(1, 1, code, n, 0);
    uint64_t v = 5;
    rru_core_stats s;
    ck_assert_int_eq(rru_machine_write(t.m, 0, SHARED, &v, 8), 0);
    ck_assert_int_eq(rru_machine_write(t.m, 0, PRIV, &v, 8), 0);   /* another page last */
    rru_machine_stats(t.m, 0, &s);
    ck_assert_uint_eq(s.bus_exclusive, 2);
    rru_machine_forget(t.m, SHARED, 0x1000);
    uint64_t sharers;
    int owner;
    rru_machine_line_state(t.m, SHARED, &sharers, &owner);
    ck_assert_uint_eq(sharers, 0);
    ck_assert_int_eq(owner, -1);
    ck_assert_int_eq(rru_machine_write(t.m, 0, SHARED, &v, 8), 0);
    rru_machine_stats(t.m, 0, &s);
    ck_assert_uint_eq(s.bus_exclusive, 3);
    rru_machine_line_state(t.m, SHARED, &sharers, &owner);
    ck_assert_int_eq(owner, 0);

    rru_machine_free(t.m);
    rru_machine_config cfg;
    rru_machine_config_default(&cfg);
    cfg.cores = 1;
    char err[128];
    t.m = rru_machine_new(&cfg, t.mem, err, sizeof err);
    ck_assert_msg(t.m != NULL, "%s", err);
    ck_assert_int_eq(rru_machine_write(t.m, 0, PRIV, &v, 8), 0);
    ck_assert_int_eq(rru_machine_write(t.m, 0, SHARED, &v, 8), 0);
    rru_machine_stats(t.m, 0, &s);
    ck_assert_uint_eq(s.bus_exclusive, 2);
    mt_free(&t);
}
END_TEST

/* Processes: a core moves between two memories at the same addresses
 * (rru_machine_set_mem). Loads, syscall accesses and decoded code are
 * the new memory's (a block decoded from the first memory at that pc
 * would give a0 = 1); a directory entry that both memories' pages cached
 * and rru_machine_forget freed is used by neither (under ASan a stale
 * pointer is a use after free): the next store is a new transaction. And
 * rru_mem_clone copies pages, permissions and bytes, apart from the
 * original from then on. */
START_TEST(rru_machine_cores_switch_between_memories)
{
    uint32_t c0[] = { I_LD(A0, A4, 0), I_ECALL };
    const uint32_t *code[1] = { c0 };
    size_t n[1] = { 2 };
    mtest t = mt_new(1, 1, code, n, 0);
    uint64_t one = 1, two = 2, v = 0;
    ck_assert_int_eq(rru_mem_write(t.mem, SHARED, &one, 8), 0);
    rru_mem *b = rru_mem_clone(t.mem);
    ck_assert_ptr_nonnull(b);
    ck_assert_uint_eq(rru_mem_pages(b), rru_mem_pages(t.mem));
    ck_assert_int_eq(rru_mem_prot(b, CODE), RRU_PROT_R | RRU_PROT_X);
    ck_assert_int_eq(rru_mem_prot(b, SHARED), RRU_PROT_R | RRU_PROT_W);
    ck_assert_int_eq(rru_mem_read(b, SHARED, &v, 8), 0);
    ck_assert_uint_eq(v, 1);
    ck_assert_int_eq(rru_mem_write(b, SHARED, &two, 8), 0);
    ck_assert_int_eq(rru_mem_read(t.mem, SHARED, &v, 8), 0);
    ck_assert_uint_eq(v, 1);
    /* The clone's code differs: li a0, 7. */
    uint32_t c1[] = { I_ADDI(A0, 0, 7), I_ECALL };
    ck_assert_int_eq(rru_mem_write(b, CODE, c1, sizeof c1), 0);

    rru_stop st;
    rru_ctx c;
    ck_assert_int_eq(rru_machine_run(t.m, &st), RRU_STOP_ECALL);
    rru_machine_save(t.m, 0, &c);
    ck_assert_uint_eq(c.x[A0], 1);
    rru_machine_set_mem(t.m, 0, b);
    ck_assert_int_eq(rru_machine_read(t.m, 0, SHARED, &v, 8), 0);
    ck_assert_uint_eq(v, 2);
    rru_ctx_init(&c, CODE);
    c.x[A4] = SHARED;
    rru_machine_load(t.m, 0, &c);
    ck_assert_int_eq(rru_machine_run(t.m, &st), RRU_STOP_ECALL);
    rru_machine_save(t.m, 0, &c);
    ck_assert_uint_eq(c.x[A0], 7);

    /* Both memories' SHARED pages point to one directory entry (each
     * looked up after another page's, so that the page keeps it). */
    rru_core_stats s0, s1;
    ck_assert_int_eq(rru_machine_write(t.m, 0, PRIV, &two, 8), 0);
    ck_assert_int_eq(rru_machine_write(t.m, 0, SHARED, &two, 8), 0);
    rru_machine_set_mem(t.m, 0, t.mem);
    ck_assert_int_eq(rru_machine_write(t.m, 0, PRIV, &one, 8), 0);
    ck_assert_int_eq(rru_machine_write(t.m, 0, SHARED + 8, &one, 8), 0);
    ck_assert_int_eq(rru_machine_write(t.m, 0, PRIV, &one, 8), 0);   /* another page last */
    rru_machine_forget(t.m, SHARED, 0x1000);
    rru_machine_stats(t.m, 0, &s0);
    rru_machine_set_mem(t.m, 0, b);
    ck_assert_int_eq(rru_machine_write(t.m, 0, SHARED, &one, 8), 0);
    rru_machine_stats(t.m, 0, &s1);
    ck_assert_uint_eq(s1.bus_exclusive, s0.bus_exclusive + 1);
    /* The transaction went to a live entry of the directory. */
    uint64_t sharers;
    int owner;
    rru_machine_line_state(t.m, SHARED, &sharers, &owner);
    ck_assert_int_eq(owner, 0);
    ck_assert_int_eq(rru_mem_read(b, SHARED, &v, 8), 0);
    ck_assert_uint_eq(v, 1);
    ck_assert_int_eq(rru_mem_read(t.mem, SHARED, &v, 8), 0);
    ck_assert_uint_eq(v, 1);
    ck_assert_int_eq(rru_mem_read(t.mem, SHARED + 8, &v, 8), 0);
    ck_assert_uint_eq(v, 1);
    mt_free(&t);
    rru_mem_free(b);
}
END_TEST

START_TEST(rru_machine_idle_timer_alarm_and_clocks)
{
    uint32_t spin[] = { I_ADDI(A0, A0, 1), I_JAL(ZERO, -4) };
    const uint32_t *code[2] = { spin, spin };
    size_t n[2] = { 2, 2 };
    mtest t = mt_new(2, 1, code, n, 0);
    rru_stop st;
    rru_machine_set_timer(t.m, 0, 1000);
    ck_assert_int_eq(rru_machine_run(t.m, &st), RRU_STOP_TIMER);
    ck_assert_uint_eq(st.core, 0);
    ck_assert_uint_ge(rru_machine_clock(t.m, 0), 1000);
    ck_assert_uint_lt(rru_machine_clock(t.m, 0), 1000 + 2);
    ck_assert_int_eq(rru_machine_runnable(t.m, 0), 0);
    /* Core 1 alone now; an alarm at 5000 stops it there. */
    rru_machine_set_alarm(t.m, 5000);
    ck_assert_int_eq(rru_machine_run(t.m, &st), RRU_STOP_ALARM);
    ck_assert_uint_eq(st.core, 1);
    ck_assert_uint_ge(rru_machine_time(t.m), 5000);
    /* Idle core 1 too: nothing runnable. */
    rru_machine_set_idle(t.m, 1);
    ck_assert_int_eq(rru_machine_is_idle(t.m, 1), 1);
    ck_assert_int_eq(rru_machine_run(t.m, &st), RRU_STOP_IDLE);
    /* A woken thread resumes no earlier than its waker. */
    rru_machine_advance_clock(t.m, 0, 9000);
    rru_machine_advance_clock(t.m, 0, 10);   /* never backwards */
    ck_assert_uint_eq(rru_machine_clock(t.m, 0), 9000);
    rru_machine_resume(t.m, 0);
    rru_machine_request_stop(t.m, 0);
    ck_assert_int_eq(rru_machine_run(t.m, &st), RRU_STOP_REQUEST);
    ck_assert_uint_eq(st.core, 0);
    /* Load a new thread on the idle core: runnable, reservation cleared. */
    rru_ctx c;
    rru_ctx_init(&c, CODE);
    c.resv_valid = 1;
    rru_machine_load(t.m, 1, &c);
    ck_assert_uint_eq(rru_hart_ctx(rru_machine_hart(t.m, 1))->resv_valid, 0);
    ck_assert_int_eq(rru_machine_runnable(t.m, 1), 1);
    rru_machine_save(t.m, 1, &c);
    ck_assert_uint_eq(c.pc, CODE);
    mt_free(&t);

    rru_machine_config cfg;
    rru_machine_config_default(&cfg);
    char err[128];
    cfg.cores = 0;
    ck_assert_ptr_null(rru_machine_new(&cfg, NULL, err, sizeof err));
    cfg.cores = 65;
    ck_assert_ptr_null(rru_machine_new(&cfg, NULL, err, sizeof err));
    ck_assert_ptr_nonnull(strstr(err, "1 to 64"));
}
END_TEST

START_TEST(rru_machine_csr_reads_go_through_the_environment)
{
    uint32_t c0[] = { I_CSRRS(A2, RRU_CSR_CYCLE, ZERO), I_CSRRS(A3, RRU_CSR_TIME, ZERO), I_ECALL };
    const uint32_t *code[1] = { c0 };
    size_t n[1] = { 3 };
    mtest t = mt_new(1, 1, code, n, 0);
    rru_machine_advance_clock(t.m, 0, 12345);
    rru_stop st;
    ck_assert_int_eq(rru_machine_run(t.m, &st), RRU_STOP_ECALL);
    ck_assert_uint_eq(rru_hart_ctx(rru_machine_hart(t.m, 0))->x[A2], 12345);
    ck_assert_uint_eq(rru_hart_ctx(rru_machine_hart(t.m, 0))->x[A3], 12346 / 100);
    mt_free(&t);
}
END_TEST

TU_SUITE(rru_machine)
{
    Suite *s = suite_create("rru_machine");
    TCase *tc = tu_tcase(s, "determinism", 60);
    tcase_add_test(tc, rru_machine_same_seed_gives_identical_everything);
    tcase_add_test(tc, rru_machine_seeds_change_the_interleaving);
    tc = tu_tcase(s, "atomicity", 60);
    tcase_add_test(tc, rru_machine_lr_sc_and_amos_are_atomic_under_contention);
    tcase_add_test(tc, rru_machine_another_cores_store_breaks_the_reservation);
    tc = tu_tcase(s, "order", 60);
    tcase_add_loop_test(tc, rru_machine_timestamps_follow_real_order, 0, 12);
    tc = tu_tcase(s, "hooks", 30);
    tcase_add_test(tc, rru_machine_hooks_see_snoops_accesses_and_exact_events);
    tcase_add_test(tc, rru_machine_filter_reports_each_line_once_per_flush);
    tcase_add_test(tc, rru_machine_ownership_in_the_filter_follows_the_directory);
    tcase_add_test(tc, rru_machine_csr_reads_go_through_the_environment);
    tcase_add_test(tc, rru_machine_rearmed_event_cannot_stall);
    tcase_add_test(tc, rru_machine_private_line_needs_one_transaction);
    tc = tu_tcase(s, "driver", 30);
    tcase_add_test(tc, rru_machine_syscall_accesses_go_through_coherence);
    tcase_add_test(tc, rru_machine_forgotten_or_foreign_directory_entries_are_not_reused);
    tcase_add_test(tc, rru_machine_cores_switch_between_memories);
    tcase_add_test(tc, rru_machine_idle_timer_alarm_and_clocks);
    return s;
}
