/* tests/test_backend.c: the backend passes on hand-built logs with their
 * expected output written out: the reference's example (a dependence from
 * a CPU running the OS deferred to its next monitored chunk, one
 * discarded), token safety (crossing and implied edges), the write bound,
 * bounded-silence violations, stitching without cycles, serial order, and
 * verify catching broken final logs. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/dag.h"
#include "backend/maxpar.h"
#include "backend/passes.h"
#include "backend/verify.h"
#include "formats/dump.h"
#include "tests/testutil.h"

/* ---- building logs ---- */

typedef struct ispec {
    uint32_t cpu, tid;
    uint64_t ts, cs;
    const char *sv;              /* "1@200,3@100" or NULL */
} ispec;

typedef struct fspec {
    uint32_t cpu, tid;
    uint64_t cs;
    const char *stv;             /* "1,3" or NULL */
    const char *ptv;             /* "0:1,2:2" (cpu:count) or NULL */
} fspec;

static rnr_membuf initial_log(uint32_t cpus, uint64_t msp, const ispec *s, size_t n)
{
    rnr_membuf out = { 0 };
    rnr_log_header h = { .kind = RNR_LOG_INITIAL, .cpus = cpus, .msp = msp };
    char err[RNR_ERR_MAX];
    rnr_writer *w = rnr_writer_open_io(rnr_io_mem_writer(&out, "initial"), &h, NULL, err, sizeof err);
    ck_assert_msg(w != NULL, "%s", err);
    for (size_t i = 0; i < n; i++) {
        rnr_sv_entry sv[16];
        rnr_initial_chunk c = { s[i].cpu, s[i].tid, s[i].ts, s[i].cs, RNR_END_SIZE, 0, 0, sv };
        for (const char *p = s[i].sv; p && *p;) {
            unsigned cpu;
            unsigned long long t;
            int used;
            ck_assert_int_eq(sscanf(p, "%u@%llu%n", &cpu, &t, &used), 2);
            sv[c.nsv++] = (rnr_sv_entry){ cpu, t };
            p += used;
            if (*p == ',')
                p++;
        }
        ck_assert_msg(rnr_writer_put_initial(w, &c) == 0, "%s", rnr_writer_error(w));
    }
    ck_assert_msg(rnr_writer_close(w, err, sizeof err) == 0, "%s", err);
    return out;
}

static rnr_membuf final_log(uint32_t kind, uint32_t cpus, const fspec *s, size_t n)
{
    rnr_membuf out = { 0 };
    rnr_log_header h = { .kind = kind, .cpus = cpus };
    char err[RNR_ERR_MAX];
    rnr_writer *w = rnr_writer_open_io(rnr_io_mem_writer(&out, "final"), &h, NULL, err, sizeof err);
    ck_assert_msg(w != NULL, "%s", err);
    for (size_t i = 0; i < n; i++) {
        uint32_t stv[16];
        rnr_ptv_entry ptv[16];
        rnr_final_chunk c = { s[i].cpu, s[i].tid, s[i].cs, 0, 0, stv, 0, ptv, 0 };
        for (const char *p = s[i].stv; p && *p;) {
            unsigned cpu;
            int used;
            ck_assert_int_eq(sscanf(p, "%u%n", &cpu, &used), 1);
            stv[c.nstv++] = cpu;
            p += used + (p[used] == ',');
        }
        for (const char *p = s[i].ptv; p && *p;) {
            unsigned cpu, count;
            int used;
            ck_assert_int_eq(sscanf(p, "%u:%u%n", &cpu, &count, &used), 2);
            ptv[c.nptv++] = (rnr_ptv_entry){ cpu, count };
            p += used + (p[used] == ',');
        }
        ck_assert_msg(rnr_writer_put_final(w, &c) == 0, "%s", rnr_writer_error(w));
    }
    ck_assert_msg(rnr_writer_close(w, err, sizeof err) == 0, "%s", err);
    return out;
}

/* Runs a pass; fails the test on error. */
static rnr_membuf run(pass_kind k, const rnr_membuf *in, pass_summary *sum)
{
    rnr_membuf out;
    char err[RNR_ERR_MAX];
    ck_assert_msg(pass_run_memory(k, in->data, in->len, &out, NULL, sum, err, sizeof err) == 0, "%s", err);
    return out;
}

/* The records of a final log as `rnr dump` prints them. */
static void expect_records(const rnr_membuf *log, const char *const *want, size_t n)
{
    char err[RNR_ERR_MAX], line[512];
    rnr_reader *r = rnr_reader_open_io(rnr_io_mem_reader(log->data, log->len, "out"), err, sizeof err);
    ck_assert_msg(r != NULL, "%s", err);
    uint32_t kind = rnr_reader_header(r)->kind;
    rnr_final_chunk c;
    size_t i = 0;
    int rc;
    while ((rc = rnr_reader_next_final(r, &c)) == 1) {
        rnr_format_final(kind, &c, line, sizeof line);
        ck_assert_msg(i < n, "extra record %zu: '%s'", i, line);
        ck_assert_msg(strcmp(line, want[i]) == 0, "record %zu: got '%s', want '%s'", i, line, want[i]);
        i++;
    }
    ck_assert_int_eq(rc, 0);
    ck_assert_msg(i == n, "%zu records, want %zu", i, n);
    rnr_reader_close(r);
}

static verify_report check(const rnr_membuf *initial, const rnr_membuf *final)
{
    char err[RNR_ERR_MAX];
    verify_ctx *v = verify_open_mem(initial->data, initial->len, "initial.log", err, sizeof err);
    ck_assert_msg(v != NULL, "%s", err);
    rnr_reader *r = rnr_reader_open_io(rnr_io_mem_reader(final->data, final->len, "final.log"), err, sizeof err);
    ck_assert_msg(r != NULL, "%s", err);
    verify_report rep;
    ck_assert_msg(verify_final(v, r, &rep, err, sizeof err) == 0, "%s", err);
    rnr_reader_close(r);
    verify_free(v);
    return rep;
}

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* ---- the reference's example ----
 *
 * Four CPUs, MSP 250, one chunk per cluster. CPU3 first runs the OS: at
 * 100 it writes B, which C00 (cpu 0) had read: C00 ends (TS 100) with
 * SV[3] = 100, an Early dependence. At 200 CPU1 writes A, read by C00 whose
 * cluster is still in the window (C01 does not end): SV[1] = 200, the
 * destination C10 (TS 250). C10 sources a dependence to CPU2 at 250 (C20),
 * C20 one to CPU1 at 420 (C11). C11 sources one to CPU2 at 520, when CPU2
 * runs the OS after its thread exited: discarded. CPU3 later runs C30, the
 * next chunk CPU3 dumps: it awaits the deferred token of C00, which was
 * written (at H = 500 > 450) before C30 was dumped: through the Early
 * Token Vector. C01 and C02 (one thread, no token between) merge. */
static const ispec reference_example[] = {
    { 0, 10, 100, 100, "1@200,3@100" },  /* C00 */
    { 1, 11, 250, 200, "2@250" },        /* C10 */
    { 0, 10, 300, 200, NULL },           /* C01 */
    { 0, 10, 350, 50, NULL },            /* C02 */
    { 2, 12, 400, 150, "1@420" },        /* C20 */
    { 1, 11, 500, 250, "2@520" },        /* C11 */
    { 3, 13, 600, 200, NULL },           /* C30 */
};

START_TEST(maxpar_reference_example_defers_early_and_discards_dependences)
{
    rnr_membuf in = initial_log(4, 250, reference_example, N(reference_example));
    pass_summary s;
    rnr_membuf mp = run(PASS_MAXPAR, &in, &s);
    static const char *const want[] = {
        "cpu 0 tid 10 cs 100 stv 1,3",       /* C00 */
        "cpu 1 tid 11 cs 200 stv 2 ptv 0:1", /* C10 */
        "cpu 2 tid 12 cs 150 stv 1 ptv 1:1", /* C20 */
        "cpu 0 tid 10 cs 250",               /* C01 + C02 */
        "cpu 1 tid 11 cs 250 ptv 2:1",       /* C11: its dependence to cpu 2 discarded */
        "cpu 3 tid 13 cs 200 ptv 0:1",       /* C30: the deferred token */
    };
    expect_records(&mp, want, N(want));
    ck_assert_uint_eq(s.maxpar.tokens, 4);
    ck_assert_uint_eq(s.maxpar.early_tokens, 1);
    ck_assert_uint_eq(s.maxpar.discarded, 1);
    ck_assert_uint_eq(s.maxpar.merged, 1);
    verify_report rep = check(&in, &mp);
    ck_assert_msg(rep.ok, "%s", rep.message);
    ck_assert_uint_eq(rep.dependences, 4);
    ck_assert_uint_eq(rep.discarded, 1);

    rnr_membuf st = run(PASS_STITCH, &mp, NULL);
    static const char *const want_st[] = {
        "cpu 0 tid 10 cs 350 stv 1,3",       /* C00 + C01 + C02 */
        "cpu 1 tid 11 cs 200 stv 2 ptv 0:1",
        "cpu 2 tid 12 cs 150 stv 1 ptv 1:1",
        "cpu 1 tid 11 cs 250 ptv 2:1",       /* C11 cannot join C10: it waits for C20 */
        "cpu 3 tid 13 cs 200 ptv 0:1",
    };
    expect_records(&st, want_st, N(want_st));
    rep = check(&in, &st);
    ck_assert_msg(rep.ok, "%s", rep.message);

    rnr_membuf se = run(PASS_SERIAL, &mp, NULL), sts = run(PASS_SERIAL, &st, NULL);
    static const char *const want_se[] = {
        "tid 10 cs 100", "tid 11 cs 200", "tid 12 cs 150", "tid 10 cs 250", "tid 11 cs 250", "tid 13 cs 200",
    };
    static const char *const want_sts[] = {
        "tid 10 cs 350", "tid 11 cs 200", "tid 12 cs 150", "tid 11 cs 250", "tid 13 cs 200",
    };
    expect_records(&se, want_se, N(want_se));
    expect_records(&sts, want_sts, N(want_sts));
    rep = check(&in, &se);
    ck_assert_msg(rep.ok, "%s", rep.message);
    rep = check(&in, &sts);
    ck_assert_msg(rep.ok, "%s", rep.message);
    free(in.data);
    free(mp.data);
    free(st.data);
    free(se.data);
    free(sts.data);
}
END_TEST

/* A (cpu 0) depends on cpu 1 at 50 (Y), the later B at 30 (X < Y): A -> Y
 * would cross B -> X and is implied by it (A < B -> X < Y): dropped. */
START_TEST(maxpar_drops_crossing_edge)
{
    static const ispec log[] = {
        { 0, 1, 10, 5, "1@50" },   /* A */
        { 0, 2, 20, 5, "1@30" },   /* B */
        { 1, 3, 40, 5, NULL },     /* X */
        { 1, 4, 60, 5, NULL },     /* Y */
    };
    rnr_membuf in = initial_log(2, 1000, log, N(log));
    pass_summary s;
    rnr_membuf mp = run(PASS_MAXPAR, &in, &s);
    static const char *const want[] = {
        "cpu 0 tid 1 cs 5",
        "cpu 0 tid 2 cs 5 stv 1",
        "cpu 1 tid 3 cs 5 ptv 0:1",
        "cpu 1 tid 4 cs 5",
    };
    expect_records(&mp, want, N(want));
    ck_assert_uint_eq(s.maxpar.dropped_later, 1);
    verify_report rep = check(&in, &mp);
    ck_assert_msg(rep.ok, "%s", rep.message);
    free(in.data);
    free(mp.data);
}
END_TEST

/* A at 20 and B at 30 both land in X (TS 40): A's edge is implied by B's;
 * X awaits one token, not two. */
START_TEST(maxpar_drops_edge_with_the_same_destination_as_a_later_one)
{
    static const ispec log[] = {
        { 0, 1, 10, 5, "1@20" },
        { 0, 2, 15, 5, "1@30" },
        { 1, 3, 40, 5, NULL },
    };
    rnr_membuf in = initial_log(2, 1000, log, N(log));
    pass_summary s;
    rnr_membuf mp = run(PASS_MAXPAR, &in, &s);
    static const char *const want[] = {
        "cpu 0 tid 1 cs 5",
        "cpu 0 tid 2 cs 5 stv 1",
        "cpu 1 tid 3 cs 5 ptv 0:1",
    };
    expect_records(&mp, want, N(want));
    ck_assert_uint_eq(s.maxpar.dropped_same, 1);
    free(in.data);
    free(mp.data);
}
END_TEST

/* The write bound is max(TS, latest SV time) + MSP, not TS + MSP: here A
 * (TS 100) depends on cpu 1 at 180 and B at 190; the chunk of cpu 2 with
 * TS 250 passes A.ts + MSP and B.ts + MSP, yet X (TS 185, start >= 150)
 * and Y may still come, and do. Written then, A and B would send Early
 * tokens to X, the next chunk of cpu 1, though B's destination is Y. */
START_TEST(maxpar_waits_for_the_latest_dependence_time_before_writing)
{
    static const ispec log[] = {
        { 0, 1, 100, 5, "1@180" },  /* A */
        { 0, 2, 120, 5, "1@190" },  /* B */
        { 2, 3, 250, 5, NULL },
        { 1, 4, 185, 5, NULL },     /* X */
        { 1, 5, 195, 5, NULL },     /* Y */
    };
    rnr_membuf in = initial_log(3, 100, log, N(log));
    rnr_membuf mp = run(PASS_MAXPAR, &in, NULL);
    static const char *const want[] = {
        "cpu 0 tid 1 cs 5 stv 1",
        "cpu 0 tid 2 cs 5 stv 1",
        "cpu 1 tid 4 cs 5 ptv 0:1",
        "cpu 1 tid 5 cs 5 ptv 0:1",
        "cpu 2 tid 3 cs 5",
    };
    expect_records(&mp, want, N(want));
    verify_report rep = check(&in, &mp);
    ck_assert_msg(rep.ok, "%s", rep.message);
    free(in.data);
    free(mp.data);
}
END_TEST

static void expect_maxpar_error(const ispec *log, size_t n, uint32_t cpus, uint64_t msp, const char *want)
{
    rnr_membuf in = initial_log(cpus, msp, log, n), out;
    char err[RNR_ERR_MAX] = "";
    ck_assert_int_eq(pass_run_memory(PASS_MAXPAR, in.data, in.len, &out, NULL, NULL, err, sizeof err), -1);
    ck_assert_msg(strstr(err, want) && strstr(err, "<memory>"), "message '%s' lacks '%s'", err, want);
    free(in.data);
}

START_TEST(maxpar_rejects_logs_that_break_bounded_silence)
{
    /* A chunk arriving after one more than MSP younger. */
    static const ispec late[] = { { 0, 1, 1000, 5, NULL }, { 1, 1, 10, 5, NULL } };
    expect_maxpar_error(late, N(late), 2, 100, "breaks bounded silence");
    /* A dependence more than MSP after its chunk's TS. */
    static const ispec far[] = { { 0, 1, 10, 5, "1@500" } };
    expect_maxpar_error(far, N(far), 2, 100, "more than MSP 100 later");
    /* A dependence earlier than its destination's predecessor could see
     * (after the chunk of cpu 1 with TS 300 was read, nothing before 200). */
    static const ispec early[] = {
        { 1, 2, 300, 5, NULL },
        { 0, 1, 150, 5, "1@190" },
    };
    expect_maxpar_error(early, N(early), 2, 100, "arrives after a chunk with TS 300");
}
END_TEST

static int drop_emit(void *ctx, const rnr_final_chunk *c)
{
    (void)ctx;
    (void)c;
    return 0;
}

/* Successor vectors the formats library would not write, fed to the pass
 * directly: each is refused with the message for its first bad entry,
 * whichever entry that is, and a good one after the same chunks passes. */
START_TEST(maxpar_rejects_malformed_successor_vectors)
{
    static const struct {
        rnr_sv_entry sv[3];
        uint32_t nsv;
        const char *want;            /* NULL: accepted */
    } rows[] = {
        { { { 0, 20 }, { 1, 30 }, { 3, 40 } }, 3, NULL },
        { { { 0, 20 }, { 1, 30 }, { 4, 40 } }, 3, "malformed successor vector" },   /* cpu out of range */
        { { { 1, 20 }, { 0, 30 } }, 2, "malformed successor vector" },              /* not ascending */
        { { { 1, 20 }, { 1, 30 } }, 2, "malformed successor vector" },              /* twice */
        { { { 2, 20 }, { 3, 30 } }, 2, "malformed successor vector" },              /* its own cpu */
        { { { 1, 20 }, { 3, 5 } }, 2, "malformed successor vector" },               /* before its TS */
        { { { 1, 20 }, { 3, 500 } }, 2, "to cpu 3 at 500, more than MSP 100 later" },
        { { { 1, 500 }, { 3, 5 } }, 2, "to cpu 1 at 500, more than MSP 100 later" }, /* the first wins */
        { { { 0, 5 }, { 1, 500 } }, 2, "malformed successor vector" },
    };
    for (size_t i = 0; i < N(rows); i++) {
        maxpar *m = maxpar_new(4, 100, drop_emit, NULL);
        rnr_initial_chunk before = { 0, 1, 10, 5, RNR_END_SIZE, 0, 0, NULL };
        ck_assert_int_eq(maxpar_add(m, &before), 0);
        rnr_initial_chunk c = { 2, 1, 10, 5, RNR_END_SIZE, 0, rows[i].nsv, (rnr_sv_entry *)rows[i].sv };
        int rc = maxpar_add(m, &c);
        if (!rows[i].want) {
            ck_assert_msg(rc == 0, "row %zu: %s", i, maxpar_error(m));
            ck_assert_int_eq(maxpar_finish(m), 0);
        } else {
            ck_assert_msg(rc == -1, "row %zu accepted", i);
            ck_assert_msg(strstr(maxpar_error(m), rows[i].want), "row %zu: '%s' lacks '%s'", i, maxpar_error(m),
                          rows[i].want);
        }
        maxpar_free(m);
    }
}
END_TEST

/* With the MSP unknown (0) nothing is written before the end, and the
 * result is the same DAG. */
START_TEST(maxpar_without_msp_writes_at_the_end)
{
    rnr_membuf in = initial_log(4, 0, reference_example, N(reference_example));
    pass_summary s;
    rnr_membuf mp = run(PASS_MAXPAR, &in, &s);
    ck_assert_uint_eq(s.maxpar.peak_open, N(reference_example));
    ck_assert_uint_eq(s.maxpar.early_tokens, 0);   /* C30 was there by then */
    verify_report rep = check(&in, &mp);
    ck_assert_msg(rep.ok, "%s", rep.message);
    free(in.data);
    free(mp.data);
}
END_TEST

/* ---- stitch ---- */

/* a1 -> b2 and b1 -> a2: stitching both lanes whole would make a cycle.
 * Walk clocks a1 = 0, b1 = 1, a2 = 2, b2 = 3: a2 may not join a1 (its
 * predecessor b1 has clock 1 > 0); b2 may join b1 (a1's clock 0 < 1). */
START_TEST(stitch_never_creates_a_cycle_when_two_lanes_stitch)
{
    static const fspec log[] = {
        { 0, 1, 10, "1", NULL },     /* a1 */
        { 1, 2, 10, "0", NULL },     /* b1 */
        { 0, 1, 10, NULL, "1:1" },   /* a2 */
        { 1, 2, 10, NULL, "0:1" },   /* b2 */
    };
    rnr_membuf mp = final_log(RNR_LOG_MAXPAR, 2, log, N(log));
    pass_summary s;
    rnr_membuf st = run(PASS_STITCH, &mp, &s);
    static const char *const want[] = {
        "cpu 0 tid 1 cs 10 stv 1",
        "cpu 1 tid 2 cs 20 stv 0 ptv 0:1",
        "cpu 0 tid 1 cs 10 ptv 1:1",
    };
    expect_records(&st, want, N(want));
    ck_assert_uint_eq(s.stitch.ended_clock, 1);
    /* And it replays. */
    rnr_membuf se = run(PASS_SERIAL, &st, &s);
    ck_assert(!s.dag.stuck);
    free(mp.data);
    free(st.data);
    free(se.data);
}
END_TEST

/* A stitched chunk holds one thread: two chunks of one lane, of two
 * threads, with no token between them, stay two. */
START_TEST(stitch_ends_a_group_where_the_thread_changes)
{
    static const fspec log[] = {
        { 0, 1, 10, NULL, NULL },
        { 0, 2, 10, NULL, NULL },
    };
    rnr_membuf mp = final_log(RNR_LOG_MAXPAR, 2, log, N(log));
    pass_summary s;
    rnr_membuf st = run(PASS_STITCH, &mp, &s);
    static const char *const want[] = { "cpu 0 tid 1 cs 10", "cpu 0 tid 2 cs 10" };
    expect_records(&st, want, N(want));
    ck_assert_uint_eq(s.stitch.ended_thread, 1);
    free(mp.data);
    free(st.data);
}
END_TEST

/* Tokens of one stitched chunk to one CPU collapse into one, awaited by the
 * first stitched chunk that consumed any of them. */
START_TEST(stitch_sends_one_token_per_cpu_per_stitched_chunk)
{
    static const fspec log[] = {
        { 0, 1, 10, "1", NULL },
        { 0, 1, 10, "1", NULL },
        { 1, 2, 10, NULL, "0:1" },
        { 1, 2, 10, NULL, "0:1" },
    };
    rnr_membuf mp = final_log(RNR_LOG_MAXPAR, 2, log, N(log));
    rnr_membuf st = run(PASS_STITCH, &mp, NULL);
    static const char *const want[] = {
        "cpu 0 tid 1 cs 20 stv 1",
        "cpu 1 tid 2 cs 20 ptv 0:1",
    };
    expect_records(&st, want, N(want));
    free(mp.data);
    free(st.data);
}
END_TEST

/* ---- serial and the DAG walk ---- */

START_TEST(serial_orders_a_log_that_is_not_topological)
{
    static const fspec log[] = {
        { 1, 2, 7, NULL, "0:2" },    /* needs both tokens of cpu 0 */
        { 0, 1, 5, "1", NULL },
        { 1, 2, 3, NULL, NULL },
        { 0, 1, 4, "1", NULL },
        { 0, 3, 4, NULL, NULL },
    };
    rnr_membuf mp = final_log(RNR_LOG_MAXPAR, 2, log, N(log));
    pass_summary s;
    rnr_membuf se = run(PASS_SERIAL, &mp, &s);
    static const char *const want[] = { "tid 1 cs 9", "tid 2 cs 10", "tid 3 cs 4" };
    expect_records(&se, want, N(want));
    ck_assert_uint_eq(s.dag.peak_waiting, 2);
    free(mp.data);
    free(se.data);
}
END_TEST

START_TEST(serial_rejects_a_log_that_cannot_be_replayed)
{
    static const fspec cycle[] = {
        { 0, 1, 5, "1", "1:1" },
        { 1, 2, 5, "0", "0:1" },
    };
    rnr_membuf mp = final_log(RNR_LOG_MAXPAR, 2, cycle, N(cycle)), out;
    char err[RNR_ERR_MAX] = "";
    ck_assert_int_eq(pass_run_memory(PASS_SERIAL, mp.data, mp.len, &out, NULL, NULL, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "cannot be replayed") && strstr(err, "cpu 0 chunk 0"), "%s", err);
    free(mp.data);
}
END_TEST

/* ---- verify catches what is wrong ---- */

START_TEST(verify_names_the_first_dependence_a_log_violates)
{
    rnr_membuf in = initial_log(4, 250, reference_example, N(reference_example));
    /* The MaxPar log of the example without C10's token to cpu 2. */
    static const fspec broken[] = {
        { 0, 10, 100, "1,3", NULL },
        { 1, 11, 200, NULL, "0:1" },
        { 2, 12, 150, "1", NULL },
        { 0, 10, 250, NULL, NULL },
        { 1, 11, 250, NULL, "2:1" },
        { 3, 13, 200, NULL, "0:1" },
    };
    rnr_membuf mp = final_log(RNR_LOG_MAXPAR, 4, broken, N(broken));
    verify_report rep = check(&in, &mp);
    ck_assert(!rep.ok);
    ck_assert_uint_eq(rep.violations, 1);
    ck_assert_msg(strstr(rep.message, "does not enforce the dependence from cpu 1 chunk 0 (record 1, "
                                      "tid 11, TS 250) to cpu 2 chunk 0 (record 4, tid 12, TS 400) "
                                      "recorded at time 250"), "%s", rep.message);
    free(mp.data);
    /* A serial log in the wrong order: C20 before C10. */
    static const fspec serial[] = {
        { 0, 10, 100, NULL, NULL }, { 0, 12, 150, NULL, NULL }, { 0, 11, 200, NULL, NULL },
        { 0, 10, 250, NULL, NULL }, { 0, 11, 250, NULL, NULL }, { 0, 13, 200, NULL, NULL },
    };
    rnr_membuf se = final_log(RNR_LOG_SERIAL, 4, serial, N(serial));
    rep = check(&in, &se);
    ck_assert(!rep.ok);
    ck_assert_msg(strstr(rep.message, "from cpu 1 chunk 0") && strstr(rep.message, "to cpu 2 chunk 0"),
                  "%s", rep.message);
    free(se.data);
    /* Right order, wrong sizes. */
    static const fspec sizes[] = {
        { 0, 10, 100, NULL, NULL }, { 0, 11, 200, NULL, NULL }, { 0, 12, 150, NULL, NULL },
        { 0, 10, 250, NULL, NULL }, { 0, 11, 250, NULL, NULL }, { 0, 13, 199, NULL, NULL },
    };
    se = final_log(RNR_LOG_SERIAL, 4, sizes, N(sizes));
    rep = check(&in, &se);
    ck_assert(!rep.ok);
    ck_assert_msg(strstr(rep.message, "thread 13 runs 199 instructions, the initial log recorded 200"),
                  "%s", rep.message);
    free(se.data);
    free(in.data);
}
END_TEST

/* A dependence binds the source chunk's last instruction: a final log
 * whose token leaves one instruction before it (the source chunk split
 * 9 + 1, the token sent by the first part) violates it, in MaxPar form
 * and in Serial form (thread 2 runs before thread 1's last instruction);
 * the logs that keep the whole chunk before the token pass. */
START_TEST(verify_requires_the_last_instruction_of_the_source_chunk)
{
    static const ispec init[] = {
        { 0, 1, 100, 10, "1@150" },
        { 1, 2, 200, 10, NULL },
    };
    rnr_membuf in = initial_log(2, 250, init, N(init));
    static const fspec whole[] = { { 0, 1, 10, "1", NULL }, { 1, 2, 10, NULL, "0:1" } };
    static const fspec early[] = { { 0, 1, 9, "1", NULL }, { 0, 1, 1, NULL, NULL }, { 1, 2, 10, NULL, "0:1" } };
    static const fspec s_whole[] = { { 0, 1, 10, NULL, NULL }, { 0, 2, 10, NULL, NULL } };
    static const fspec s_early[] = { { 0, 1, 9, NULL, NULL }, { 0, 2, 10, NULL, NULL }, { 0, 1, 1, NULL, NULL } };
    const struct {
        uint32_t kind;
        const fspec *f;
        size_t n;
        int ok;
    } cases[] = {
        { RNR_LOG_MAXPAR, whole, N(whole), 1 }, { RNR_LOG_MAXPAR, early, N(early), 0 },
        { RNR_LOG_SERIAL, s_whole, N(s_whole), 1 }, { RNR_LOG_SERIAL, s_early, N(s_early), 0 },
    };
    for (size_t i = 0; i < N(cases); i++) {
        rnr_membuf f = final_log(cases[i].kind, 2, cases[i].f, cases[i].n);
        verify_report rep = check(&in, &f);
        ck_assert_msg(rep.ok == cases[i].ok, "case %zu: ok %d: %s", i, rep.ok, rep.message);
        if (!cases[i].ok) {
            ck_assert_uint_eq(rep.violations, 1);
            ck_assert_msg(strstr(rep.message, "does not enforce the dependence from cpu 0 chunk 0") &&
                          strstr(rep.message, "to cpu 1 chunk 0"), "case %zu: %s", i, rep.message);
        }
        free(f.data);
    }
    free(in.data);
}
END_TEST

/* verify streams with an MSP window only over a log that keeps bounded
 * silence (every chunk read with TS + MSP >= the largest TS before it);
 * a chunk read later than that makes it hold the whole log (window 0),
 * and its verdict on a correct final log is still "ok". */
START_TEST(verify_holds_the_whole_log_when_it_breaks_bounded_silence)
{
    static const ispec kept[] = { { 0, 1, 100, 10, NULL }, { 1, 2, 300, 10, NULL }, { 0, 1, 320, 10, NULL } };
    static const ispec late[] = { { 0, 1, 100, 10, NULL }, { 1, 2, 400, 10, NULL }, { 0, 1, 120, 10, NULL } };
    static const fspec f[] = { { 0, 1, 10, NULL, NULL }, { 1, 2, 10, NULL, NULL }, { 0, 1, 10, NULL, NULL } };
    const struct {
        const ispec *s;
        uint64_t window;
    } cases[] = { { kept, 250 }, { late, 0 } };
    rnr_membuf fin = final_log(RNR_LOG_MAXPAR, 2, f, N(f));
    for (size_t i = 0; i < N(cases); i++) {
        rnr_membuf in = initial_log(2, 250, cases[i].s, 3);
        char err[RNR_ERR_MAX];
        verify_ctx *v = verify_open_mem(in.data, in.len, "initial.log", err, sizeof err);
        ck_assert_msg(v != NULL, "%s", err);
        ck_assert_uint_eq(verify_window_msp(v), cases[i].window);
        verify_free(v);
        verify_report rep = check(&in, &fin);
        ck_assert_msg(rep.ok, "case %zu: %s", i, rep.message);
        free(in.data);
    }
    free(fin.data);
}
END_TEST

START_TEST(verify_rejects_cycles_threads_and_sizes_that_do_not_match)
{
    rnr_membuf in = initial_log(4, 250, reference_example, N(reference_example));
    static const fspec cycle[] = {
        { 0, 10, 100, "1,3", "1:1" },
        { 1, 11, 200, "0,2", "0:1" },
        { 2, 12, 150, "1", "1:1" },
        { 0, 10, 250, NULL, NULL },
        { 1, 11, 250, NULL, "2:1" },
        { 3, 13, 200, NULL, "0:1" },
    };
    rnr_membuf mp = final_log(RNR_LOG_MAXPAR, 4, cycle, N(cycle));
    verify_report rep = check(&in, &mp);
    ck_assert(!rep.ok);
    ck_assert_msg(strstr(rep.message, "cannot be replayed"), "%s", rep.message);
    free(mp.data);
    static const fspec tid[] = {
        { 0, 10, 100, "1,3", NULL },
        { 1, 11, 200, "2", "0:1" },
        { 2, 12, 150, "1", "1:1" },
        { 0, 10, 250, NULL, NULL },
        { 1, 14, 250, NULL, "2:1" },
        { 3, 13, 200, NULL, "0:1" },
    };
    mp = final_log(RNR_LOG_MAXPAR, 4, tid, N(tid));
    rep = check(&in, &mp);
    ck_assert(!rep.ok);
    ck_assert_msg(strstr(rep.message, "is of thread 14 but covers instructions the initial log gives to "
                                      "thread 11"), "%s", rep.message);
    free(mp.data);
    free(in.data);
}
END_TEST

/* The j-th token a CPU sends to another is awaited by the j-th PTV slot for
 * it there: the walk pairs them so, and counts tokens nobody awaits. */
static int record_preds(void *ctx, const dag_node *n, uint64_t out[2])
{
    char *s = ctx;
    size_t at = strlen(s);
    at += (size_t)snprintf(s + at, 512 - at, "%u.%llu<", n->c->cpu, (unsigned long long)n->lane_index);
    for (uint32_t i = 0; i < n->npred; i++)
        at += (size_t)snprintf(s + at, 512 - at, "%u.%llu,", n->pred[i].cpu,
                               (unsigned long long)n->pred[i].index);
    snprintf(s + at, 512 - at, " ");
    out[0] = out[1] = 0;
    return 0;
}

START_TEST(dag_walk_matches_tokens_in_order)
{
    static const fspec log[] = {
        { 0, 1, 1, "1", NULL },      /* 0.0 */
        { 0, 1, 1, "1", NULL },      /* 0.1 */
        { 0, 1, 1, "1", NULL },      /* 0.2 */
        { 1, 2, 1, NULL, "0:2" },    /* 1.0 <- 0.0, 0.1 */
        { 1, 2, 1, NULL, "0:1" },    /* 1.1 <- 0.2 */
        { 0, 1, 1, "1", NULL },      /* 0.3: never awaited */
    };
    rnr_membuf mp = final_log(RNR_LOG_MAXPAR, 2, log, N(log));
    char err[RNR_ERR_MAX], got[512] = "";
    rnr_reader *r = rnr_reader_open_io(rnr_io_mem_reader(mp.data, mp.len, "m"), err, sizeof err);
    dag_result dr;
    ck_assert_int_eq(dag_walk(r, record_preds, got, &dr, err, sizeof err), 0);
    ck_assert_str_eq(got, "0.0< 0.1< 0.2< 1.0<0.0,0.1, 1.1<0.2, 0.3< ");
    ck_assert_uint_eq(dr.tokens_sent, 4);
    ck_assert_uint_eq(dr.tokens_unconsumed, 1);
    ck_assert(!dr.stuck);
    rnr_reader_close(r);
    free(mp.data);
}
END_TEST

/* Logs that break what MaxPar assumes (random times, dependences far in
 * the future, no bounded silence): the pass fails with a message or writes
 * a log that replays; with the MSP unknown it waits for the end and its
 * log must then enforce every dependence, whatever the dump order. */
START_TEST(maxpar_survives_random_logs_that_break_its_assumptions)
{
    uint64_t seed = tu_seed(0xbad10) + (uint64_t)_i, rng = seed;
    for (int round = 0; round < 60; round++) {
        uint32_t cpus = 1 + (uint32_t)tu_below(&rng, 6);
        uint64_t msp = tu_below(&rng, 3) == 0 ? 0 : 1 + tu_below(&rng, 500);
        size_t n = 1 + tu_below(&rng, 60);
        ispec *log = calloc(n, sizeof *log);
        char (*sv)[128] = calloc(n, sizeof *sv);
        uint64_t ts[8] = { 0 };
        for (size_t i = 0; i < n; i++) {
            uint32_t cpu = (uint32_t)tu_below(&rng, cpus);
            ts[cpu] += tu_below(&rng, 4) ? tu_below(&rng, 100) : tu_below(&rng, 5000);
            /* Threads never migrate: no thread order beyond the recorded
             * dependences (nothing serializes these random logs). */
            log[i] = (ispec){ cpu, 10 * cpu + (uint32_t)tu_below(&rng, 3), ts[cpu], 1 + tu_below(&rng, 50), NULL };
            size_t at = 0;
            for (uint32_t q = 0; q < cpus; q++) {
                if (q == cpu || tu_below(&rng, 3))
                    continue;
                at += (size_t)snprintf(sv[i] + at, sizeof sv[i] - at, "%s%u@%llu", at ? "," : "", q,
                                       (unsigned long long)(ts[cpu] + tu_below(&rng, 2) * tu_below(&rng, 800)));
            }
            log[i].sv = at ? sv[i] : NULL;
        }
        rnr_membuf in = initial_log(cpus, msp, log, n), mp;
        char err[RNR_ERR_MAX] = "";
        int rc = pass_run_memory(PASS_MAXPAR, in.data, in.len, &mp, NULL, NULL, err, sizeof err);
        ck_assert_msg(rc == 0 || (rc == -1 && *err), "seed %#llx: failed without a message",
                      (unsigned long long)seed);
        if (rc == 0) {
            pass_summary s;
            rnr_membuf st = run(PASS_STITCH, &mp, &s), se = run(PASS_SERIAL, &st, &s);
            verify_report rep = check(&in, &mp);
            if (msp == 0)
                ck_assert_msg(rep.ok, "seed %#llx round %d: %s", (unsigned long long)seed, round, rep.message);
            if (rep.ok) {
                rep = check(&in, &st);
                ck_assert_msg(rep.ok, "seed %#llx round %d: stitched: %s", (unsigned long long)seed, round,
                              rep.message);
                rep = check(&in, &se);
                ck_assert_msg(rep.ok, "seed %#llx round %d: stserial: %s", (unsigned long long)seed, round,
                              rep.message);
            }
            free(st.data);
            free(se.data);
            free(mp.data);
        }
        free(in.data);
        free(log);
        free(sv);
    }
}
END_TEST

/* The destination of a dependence recorded at t is the first chunk of its
 * CPU with TS strictly larger than t: a chunk that ended at t (X1) ended
 * before the access at t, so the token goes to X2. Both ways MaxPar finds
 * it: by binary search (A arrives after X1 and X2) and from the waiting
 * list (A arrives first). ">= t" would pick X1 (and merge X1 into X2);
 * verify's own rule must accept the token on X2 alone. */
START_TEST(maxpar_destination_is_the_first_chunk_with_a_larger_timestamp)
{
    static const ispec later[] = {
        { 1, 11, 200, 40, NULL },        /* X1: ended at 200 */
        { 1, 11, 300, 60, NULL },        /* X2 */
        { 0, 10, 150, 50, "1@200" },     /* A: a dependence to cpu 1 at exactly 200 */
        { 0, 10, 900, 10, NULL },
        { 1, 11, 950, 10, NULL },
    };
    static const ispec sooner[] = {
        { 0, 10, 150, 50, "1@200" },
        { 1, 11, 200, 40, NULL },
        { 1, 11, 300, 60, NULL },
        { 0, 10, 900, 10, NULL },
        { 1, 11, 950, 10, NULL },
    };
    /* X2 carries the token (and takes the last chunk of cpu 1 in). */
    static const char *const want[] = {
        "cpu 0 tid 10 cs 50 stv 1", "cpu 1 tid 11 cs 40", "cpu 0 tid 10 cs 10",
        "cpu 1 tid 11 cs 70 ptv 0:1",
    };
    const ispec *logs[2] = { later, sooner };
    for (int i = 0; i < 2; i++) {
        rnr_membuf in = initial_log(2, 100000, logs[i], 5);
        rnr_membuf mp = run(PASS_MAXPAR, &in, NULL);
        expect_records(&mp, want, 4);
        verify_report rep = check(&in, &mp);
        ck_assert_msg(rep.ok, "%s", rep.message);
        free(in.data);
        free(mp.data);
    }
}
END_TEST

TU_SUITE(backend)
{
    Suite *s = suite_create("backend");
    TCase *tc = tu_tcase(s, "maxpar", 20);
    tcase_add_test(tc, maxpar_reference_example_defers_early_and_discards_dependences);
    tcase_add_test(tc, maxpar_drops_crossing_edge);
    tcase_add_test(tc, maxpar_drops_edge_with_the_same_destination_as_a_later_one);
    tcase_add_test(tc, maxpar_waits_for_the_latest_dependence_time_before_writing);
    tcase_add_test(tc, maxpar_destination_is_the_first_chunk_with_a_larger_timestamp);
    tcase_add_test(tc, maxpar_rejects_logs_that_break_bounded_silence);
    tcase_add_test(tc, maxpar_rejects_malformed_successor_vectors);
    tcase_add_test(tc, maxpar_without_msp_writes_at_the_end);
    tcase_add_loop_test(tc, maxpar_survives_random_logs_that_break_its_assumptions, 0, 10);
    tc = tu_tcase(s, "stitch", 20);
    tcase_add_test(tc, stitch_never_creates_a_cycle_when_two_lanes_stitch);
    tcase_add_test(tc, stitch_sends_one_token_per_cpu_per_stitched_chunk);
    tcase_add_test(tc, stitch_ends_a_group_where_the_thread_changes);
    tc = tu_tcase(s, "serial", 20);
    tcase_add_test(tc, serial_orders_a_log_that_is_not_topological);
    tcase_add_test(tc, serial_rejects_a_log_that_cannot_be_replayed);
    tcase_add_test(tc, dag_walk_matches_tokens_in_order);
    tc = tu_tcase(s, "verify", 20);
    tcase_add_test(tc, verify_names_the_first_dependence_a_log_violates);
    tcase_add_test(tc, verify_rejects_cycles_threads_and_sizes_that_do_not_match);
    tcase_add_test(tc, verify_requires_the_last_instruction_of_the_source_chunk);
    tcase_add_test(tc, verify_holds_the_whole_log_when_it_breaks_bounded_silence);
    return s;
}
