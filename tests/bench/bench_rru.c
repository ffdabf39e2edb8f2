/* tests/bench/bench_rru.c: simulator throughput (MIPS) of rru/: one hart on
 * an integer loop and on a double-precision multiply-add loop, the integer
 * loop on N cores of the machine interleaved (private data, and a variant
 * with a shared counter), and a standalone replay-style hart executing
 * fixed-size chunks. Run by `make bench`. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rru/hart.h"
#include "rru/machine.h"
#include "rru/mem.h"
#include "tests/rru_enc.h"

#define CODE 0x10000ull
#define DATA 0x100000ull
#define DATA_PER_CORE 0x10000ull

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* a0 = iterations, a1 = private array, a4 = shared word (or private). */
static const uint32_t loop[] = {
    /* 0  */ I_LD(T0, A1, 0),
    /* 4  */ I_ADD(T1, T0, A0),
    /* 8  */ enc_r(0x33, 4, 0, T1, T1, A2),   /* xor t1, t1, a2 */
    /* 12 */ enc_i(0x13, 1, T2, T1, 3),       /* slli t2, t1, 3 */
    /* 16 */ I_ADD(A2, A2, T2),
    /* 20 */ I_SD(T1, A1, 8),
    /* 24 */ enc_i(0x13, 7, 28, A0, 255),     /* andi t3, a0, 255 */
    /* 28 */ enc_i(0x13, 1, 28, 28, 3),       /* slli t3, t3, 3 */
    /* 32 */ I_ADD(28, 28, A1),
    /* 36 */ I_LD(29, 28, 0),                 /* ld t4, 0(t3) */
    /* 40 */ I_ADD(A3, A3, 29),
    /* 44 */ I_ADDI(A0, A0, -1),
    /* 48 */ I_BNE(A0, ZERO, -48),
    /* 52 */ I_ECALL,
};
#define LOOP_INSNS 13

/* The same with a racy increment of a shared word every iteration. */
static const uint32_t shared_loop[] = {
    I_LD(T0, A4, 0), I_ADDI(T0, T0, 1), I_SD(T0, A4, 0),
    I_LD(T1, A1, 0), I_ADD(T1, T1, A0), I_SD(T1, A1, 8),
    I_ADDI(A0, A0, -1), I_BNE(A0, ZERO, -28), I_ECALL,
};
#define SHARED_INSNS 8

/* a0 = iterations, a1 = data (c, x), f3 = y. Every result rounds (c = 0.9,
 * x = 0.1); the values stay normal and bounded, as in real FP kernels. The
 * rounding mode is dynamic (frm = RNE), as compilers emit it. */
#define FLD(rd, rs1, imm) enc_i(0x07, 3, rd, rs1, imm)
#define FSD(rs2, rs1, imm) enc_s(0x27, 3, rs1, rs2, imm)
#define FMADD_D(rd, rs1, rs2, rs3) enc_r4(0x43, 7, 1, rd, rs1, rs2, rs3)
#define FMUL_D(rd, rs1, rs2) enc_r(0x53, 7, 0x09, rd, rs1, rs2)
#define FADD_D(rd, rs1, rs2) enc_r(0x53, 7, 0x01, rd, rs1, rs2)
static const uint32_t fp_loop[] = {
    /* 0  */ FLD(1, A1, 0),                   /* c */
    /* 4  */ FLD(2, A1, 8),                   /* x */
    /* 8  */ FMADD_D(3, 3, 1, 2),             /* y = y*c + x */
    /* 12 */ FMUL_D(4, 3, 1),                 /* t = y*c */
    /* 16 */ FADD_D(5, 5, 4),                 /* s += t */
    /* 20 */ FMADD_D(6, 4, 2, 6),             /* u += t*x */
    /* 24 */ FSD(3, A1, 16),
    /* 28 */ I_ADDI(A0, A0, -1),
    /* 32 */ I_BNE(A0, ZERO, -24),
    /* 36 */ I_ECALL,
};
#define FP_LOOP_INSNS 7

static rru_mem *make_mem(const uint32_t *code, size_t n, unsigned cores)
{
    rru_mem *m = rru_mem_new();
    rru_mem_map(m, CODE, 0x1000, RRU_PROT_R | RRU_PROT_X);
    rru_mem_map(m, DATA, DATA_PER_CORE * (cores + 1), RRU_PROT_R | RRU_PROT_W);
    rru_mem_write(m, CODE, code, n * 4);
    return m;
}

static void init_ctx(rru_ctx *c, unsigned core, uint64_t iters)
{
    rru_ctx_init(c, CODE);
    c->x[A0] = iters;
    c->x[A1] = DATA + DATA_PER_CORE * (core + 1);
    c->x[A4] = DATA;
}

static void bench_single(uint64_t iters)
{
    rru_mem *m = make_mem(loop, sizeof loop / 4, 1);
    rru_hart *h = rru_hart_new(m, 0);
    rru_ctx c;
    init_ctx(&c, 0, iters);
    rru_hart_load(h, &c);
    rru_stop st;
    double t0 = now_s();
    rru_hart_execute(h, UINT64_MAX, &st);
    double dt = now_s() - t0;
    printf("single hart, integer loop:      %8.1f MIPS  (%llu instructions, %.3f s)\n",
           (double)st.insns / dt / 1e6, (unsigned long long)st.insns, dt);
    rru_hart_free(h);
    rru_mem_free(m);
}

/* SOFTFP_ONLY: every F/D operation through rru/softfp.c (the reference). */
static void bench_single_fp(uint64_t iters, int softfp_only)
{
    rru_mem *m = make_mem(fp_loop, sizeof fp_loop / 4, 1);
    const double cx[2] = { 0.9, 0.1 };
    rru_mem_write(m, DATA + DATA_PER_CORE, cx, sizeof cx);
    rru_hart *h = rru_hart_new(m, 0);
    rru_hart_set_softfp_only(h, softfp_only);
    rru_ctx c;
    init_ctx(&c, 0, iters);
    rru_hart_load(h, &c);
    rru_stop st;
    double t0 = now_s();
    rru_hart_execute(h, UINT64_MAX, &st);
    double dt = now_s() - t0;
    printf("single hart, FP multiply-add:   %8.1f MIPS  (%llu instructions, %.3f s, fflags %02x%s)"
           "\n", (double)st.insns / dt / 1e6, (unsigned long long)st.insns, dt,
           (unsigned)rru_hart_ctx(h)->fflags, softfp_only ? ", softfp only" : "");
    rru_hart_free(h);
    rru_mem_free(m);
}

static void bench_chunks(uint64_t iters, uint64_t chunk)
{
    rru_mem *m = make_mem(loop, sizeof loop / 4, 1);
    rru_hart *h = rru_hart_new(m, 0);
    rru_ctx c;
    init_ctx(&c, 0, iters);
    rru_stop st;
    uint64_t total = 0;
    double t0 = now_s();
    for (;;) {
        rru_hart_load(h, &c);
        rru_stop_reason r = rru_hart_execute(h, chunk, &st);
        rru_hart_save(h, &c);
        total += st.insns;
        if (r != RRU_STOP_LIMIT)
            break;
    }
    double dt = now_s() - t0;
    printf("replay hart, %5llu-insn chunks:  %8.1f MIPS\n", (unsigned long long)chunk,
           (double)total / dt / 1e6);
    rru_hart_free(h);
    rru_mem_free(m);
}

static void bench_machine(unsigned cores, uint64_t iters, int shared)
{
    const uint32_t *code = shared ? shared_loop : loop;
    size_t n = shared ? sizeof shared_loop / 4 : sizeof loop / 4;
    rru_mem *m = make_mem(code, n, cores);
    rru_machine_config cfg;
    rru_machine_config_default(&cfg);
    cfg.cores = cores;
    char err[128];
    rru_machine *mc = rru_machine_new(&cfg, m, err, sizeof err);
    if (!mc) {
        fprintf(stderr, "rru-bench: %s\n", err);
        exit(1);
    }
    for (unsigned i = 0; i < cores; i++) {
        rru_ctx c;
        init_ctx(&c, i, iters);
        rru_machine_load(mc, i, &c);
    }
    double t0 = now_s();
    unsigned done = 0;
    rru_stop st;
    while (done < cores) {
        rru_stop_reason r = rru_machine_run(mc, &st);
        if (r != RRU_STOP_ECALL) {
            fprintf(stderr, "rru-bench: unexpected stop %s\n", rru_stop_name(r));
            exit(1);
        }
        rru_machine_set_idle(mc, st.core);
        done++;
    }
    double dt = now_s() - t0;
    uint64_t insns = 0, cycles = 0, bus = 0;
    for (unsigned i = 0; i < cores; i++) {
        rru_core_stats s;
        rru_machine_stats(mc, i, &s);
        insns += s.retired;
        bus += s.bus_reads + s.bus_exclusive;
        if (s.clock > cycles)
            cycles = s.clock;
    }
    printf("machine %2u cores, %s: %8.1f MIPS aggregate  (%llu insns, %llu cycles, %llu bus)\n",
           cores, shared ? "shared counter" : "private loop  ", (double)insns / dt / 1e6,
           (unsigned long long)insns, (unsigned long long)cycles, (unsigned long long)bus);
    rru_machine_free(mc);
    rru_mem_free(m);
}

int main(int argc, char **argv)
{
    uint64_t scale = argc > 1 ? strtoull(argv[1], NULL, 0) : 1;
    if (scale == 0)
        scale = 1;
    bench_single(100000000 * scale / LOOP_INSNS);
    bench_single_fp(50000000 * scale / FP_LOOP_INSNS, 0);
    bench_single_fp(20000000 * scale / FP_LOOP_INSNS, 1);
    bench_chunks(4000000 * scale, 10000);
    bench_chunks(4000000 * scale, 500);
    bench_machine(1, 8000000 * scale, 0);
    bench_machine(8, 1000000 * scale, 0);
    bench_machine(8, 1000000 * scale, 1);
    bench_machine(64, 150000 * scale, 0);
    (void)SHARED_INSNS;
    return 0;
}
