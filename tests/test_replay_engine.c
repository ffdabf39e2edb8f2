/* tests/test_replay_engine.c: the parallel replay engine (replayer/engine.h)
 * against an independent oracle: logs from `rnr synth` + `rnr backend` and
 * hand-written ones, an exec function that records when each chunk starts
 * and ends (one atomic clock) and dawdles at random, then every token edge
 * (computed here from the documented matching rule, cross-checked with the
 * backend's DAG walk) and every lane edge must be respected, and every
 * chunk run exactly once. Also: deadlocks, exec failures, bad logs, the
 * window bound, real parallelism, sleeping idle workers, streaming. */
#include <check.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "backend/dag.h"
#include "formats/log.h"
#include "replayer/engine.h"
#include "replayer/input.h"
#include "tests/testutil.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void sleep_us(unsigned us)
{
    struct timespec ts = { 0, (long)us * 1000 };
    nanosleep(&ts, NULL);
}

/* ---- the oracle: a final log read whole, with its DAG ---- */

typedef struct mchunk {
    uint32_t cpu, tid;          /* cpu = lane (0 for Serial, StSerial) */
    uint64_t cs, lane_index;
    uint32_t nstv, nptv;
    uint32_t *stv;
    rnr_ptv_entry *ptv;
} mchunk;

typedef struct model {
    uint32_t kind, lanes;
    uint64_t n, insns, tokens;
    mchunk *c;
    uint64_t nedges;
    uint64_t (*edge)[2];        /* token edges: sender seq -> consumer seq */
    uint64_t unmatched;         /* awaited tokens nobody sends */
    uint64_t first_unmatched;   /* the consumer seq of the first of them (in log order) */
    uint64_t *pred_at;          /* [n + 1]: chunk i's predecessors are pred[pred_at[i] .. pred_at[i + 1]) */
    uint64_t *pred;             /* lane predecessor and token senders, by seq */
} model;

/* Token edges by the rule of docs/backend.md §1: the j-th token lane p
 * sends to lane q goes to the j-th PTV slot for p on q, both counted in
 * lane order (= log order restricted to the lane). */
static void model_edges(model *m)
{
    uint32_t L = m->lanes;
    uint64_t **send = calloc((size_t)L * L, sizeof *send), **take = calloc((size_t)L * L, sizeof *take);
    uint64_t *ns = calloc((size_t)L * L, sizeof *ns), *nt = calloc((size_t)L * L, sizeof *nt);
    for (uint64_t i = 0; i < m->n; i++) {
        const mchunk *c = &m->c[i];
        for (uint32_t k = 0; k < c->nstv; k++) {
            size_t pq = (size_t)c->cpu * L + c->stv[k];
            send[pq] = realloc(send[pq], (ns[pq] + 1) * sizeof **send);
            send[pq][ns[pq]++] = i;
        }
        for (uint32_t k = 0; k < c->nptv; k++) {
            size_t pq = (size_t)c->ptv[k].cpu * L + c->cpu;
            take[pq] = realloc(take[pq], (nt[pq] + c->ptv[k].count) * sizeof **take);
            for (uint32_t j = 0; j < c->ptv[k].count; j++)
                take[pq][nt[pq]++] = i;
        }
    }
    m->first_unmatched = UINT64_MAX;
    for (size_t pq = 0; pq < (size_t)L * L; pq++) {
        for (uint64_t j = 0; j < nt[pq]; j++) {
            if (j < ns[pq]) {
                m->edge = realloc(m->edge, (m->nedges + 1) * sizeof *m->edge);
                m->edge[m->nedges][0] = send[pq][j];
                m->edge[m->nedges][1] = take[pq][j];
                m->nedges++;
            } else {
                m->unmatched++;
                if (take[pq][j] < m->first_unmatched)
                    m->first_unmatched = take[pq][j];
            }
        }
        free(send[pq]);
        free(take[pq]);
    }
    free(send);
    free(take);
    free(ns);
    free(nt);
    /* Every chunk's direct predecessors: lane, then tokens. */
    m->pred_at = calloc(m->n + 1, sizeof *m->pred_at);
    m->pred = malloc((m->n + m->nedges + 1) * sizeof *m->pred);
    uint64_t *last = malloc(L * sizeof *last), *fill = calloc(m->n + 1, sizeof *fill);
    for (uint32_t q = 0; q < L; q++)
        last[q] = UINT64_MAX;
    for (uint64_t i = 0; i < m->n; i++) {
        fill[i] = last[m->c[i].cpu] != UINT64_MAX;
        last[m->c[i].cpu] = i;
    }
    for (uint64_t e = 0; e < m->nedges; e++)
        fill[m->edge[e][1]]++;
    for (uint64_t i = 0; i < m->n; i++)
        m->pred_at[i + 1] = m->pred_at[i] + fill[i];
    for (uint32_t q = 0; q < L; q++)
        last[q] = UINT64_MAX;
    for (uint64_t i = 0; i < m->n; i++) {
        fill[i] = m->pred_at[i];
        if (last[m->c[i].cpu] != UINT64_MAX)
            m->pred[fill[i]++] = last[m->c[i].cpu];
        last[m->c[i].cpu] = i;
    }
    for (uint64_t e = 0; e < m->nedges; e++)
        m->pred[fill[m->edge[e][1]]++] = m->edge[e][0];
    free(last);
    free(fill);
}

static void model_load(model *m, const char *path)
{
    memset(m, 0, sizeof *m);
    char err[RNR_ERR_MAX];
    rnr_reader *r = rnr_reader_open(path, err, sizeof err);
    ck_assert_msg(r != NULL, "%s", err);
    m->kind = rnr_reader_header(r)->kind;
    int tokens = rnr_log_kind_has_tokens(m->kind);
    m->lanes = tokens ? rnr_reader_header(r)->cpus : 1;
    uint64_t *lane_n = calloc(m->lanes, sizeof *lane_n), cap = 0;
    rnr_final_chunk fc;
    int rc;
    while ((rc = rnr_reader_next_final(r, &fc)) == 1) {
        if (m->n == cap) {
            cap = cap ? cap * 2 : 256;
            m->c = realloc(m->c, cap * sizeof *m->c);
        }
        mchunk *c = &m->c[m->n++];
        memset(c, 0, sizeof *c);
        c->cpu = tokens ? fc.cpu : 0;
        c->tid = fc.tid;
        c->cs = fc.cs;
        c->lane_index = lane_n[c->cpu]++;
        c->nstv = fc.nstv;
        c->nptv = fc.nptv;
        c->stv = malloc((fc.nstv + 1) * sizeof *c->stv);
        c->ptv = malloc((fc.nptv + 1) * sizeof *c->ptv);
        if (fc.nstv)
            memcpy(c->stv, fc.stv, fc.nstv * sizeof *c->stv);
        if (fc.nptv)
            memcpy(c->ptv, fc.ptv, fc.nptv * sizeof *c->ptv);
        m->insns += fc.cs;
        m->tokens += fc.nstv;
    }
    ck_assert_msg(rc == 0, "%s", rnr_reader_error(r));
    rnr_reader_close(r);
    free(lane_n);
    model_edges(m);
}

static void model_free(model *m)
{
    for (uint64_t i = 0; i < m->n; i++) {
        free(m->c[i].stv);
        free(m->c[i].ptv);
    }
    free(m->c);
    free(m->edge);
    free(m->pred_at);
    free(m->pred);
    memset(m, 0, sizeof *m);
}

static int count_visit(void *ctx, const dag_node *n, uint64_t out[2])
{
    (void)ctx;
    (void)n;
    out[0] = out[1] = 0;
    return 0;
}

/* The backend's walk consumes exactly the tokens the oracle matched. */
static void model_cross_check(const model *m, const char *path)
{
    char err[RNR_ERR_MAX];
    rnr_reader *r = rnr_reader_open(path, err, sizeof err);
    ck_assert_msg(r != NULL, "%s", err);
    dag_result res;
    ck_assert_msg(dag_walk(r, count_visit, NULL, &res, err, sizeof err) == 0, "%s", err);
    rnr_reader_close(r);
    ck_assert_uint_eq(res.nodes, m->n);
    ck_assert_uint_eq(res.tokens_consumed, m->nedges);
    ck_assert_int_eq(res.stuck, m->unmatched != 0);
}

/* ---- the exec function under test's eyes ---- */

typedef struct run_ctx {
    const model *m;
    _Atomic uint64_t clock;
    _Atomic uint64_t *start, *finish;   /* clock + 1; 0 = never */
    _Atomic uint32_t *runs;
    uint64_t *memory;                   /* plain, like guest memory: chunk i writes memory[i] */
    _Atomic uint64_t stale_reads;       /* a chunk did not see what a predecessor wrote */
    _Atomic unsigned concurrent, max_concurrent;
    _Atomic uint64_t mismatches;        /* chunks handed out unlike the log */
    _Atomic uint64_t bad_worker;
    unsigned workers;
    uint64_t seed;
    int dawdle;                         /* 0: none, 1: random spins and short sleeps, 2: sleep 2 ms, 3: 20 ms */
    uint64_t fail_seq;                  /* UINT64_MAX: never */
    const char *fail_msg;
    _Atomic int failed;
    _Atomic uint64_t started_after_failure;
} run_ctx;

static void run_ctx_init(run_ctx *x, const model *m, unsigned workers, uint64_t seed, int dawdle)
{
    memset(x, 0, sizeof *x);
    x->m = m;
    x->workers = workers;
    x->seed = seed;
    x->dawdle = dawdle;
    x->fail_seq = UINT64_MAX;
    x->start = calloc(m->n + 1, sizeof *x->start);
    x->finish = calloc(m->n + 1, sizeof *x->finish);
    x->runs = calloc(m->n + 1, sizeof *x->runs);
    x->memory = calloc(m->n + 1, sizeof *x->memory);
}

static void run_ctx_free(run_ctx *x)
{
    free((void *)x->start);
    free((void *)x->finish);
    free((void *)x->runs);
    free(x->memory);
}

static void dawdle(const run_ctx *x, uint64_t seq)
{
    uint64_t h = x->seed ^ (seq * 0x9e3779b97f4a7c15ull);
    uint64_t r = tu_rand(&h);
    if (x->dawdle >= 2) {
        sleep_us(x->dawdle == 2 ? 2000 : 20000);
    } else if (x->dawdle == 1) {
        if (r % 16 == 0) {
            sleep_us((unsigned)(20 + (r >> 8) % 150));
        } else {
            /* A busy wait the compiler keeps (a volatile read each turn). */
            volatile uint64_t sink = 0;
            for (uint64_t i = (r >> 8) % 3000; i > 0; i--)
                sink = sink + i;
            (void)sink;
        }
    }
}

/* The bookkeeping uses relaxed atomics only, so that it adds no
 * happens-before edge of its own: under ThreadSanitizer, the plain accesses
 * to x->memory are ordered by the engine or reported. The clock still
 * orders: two RMWs of one atomic, one happening before the other, take
 * their places in its modification order in that order. */
#define RLX memory_order_relaxed

static int record_exec(void *ctx, unsigned worker, const rp_chunk *c, char *msg, size_t msglen)
{
    run_ctx *x = ctx;
    uint64_t t = atomic_fetch_add_explicit(&x->clock, 1, RLX);
    if (atomic_load_explicit(&x->failed, RLX))
        atomic_fetch_add_explicit(&x->started_after_failure, 1, RLX);
    if (worker >= x->workers)
        atomic_fetch_add_explicit(&x->bad_worker, 1, RLX);
    if (c->seq >= x->m->n) {
        atomic_fetch_add_explicit(&x->mismatches, 1, RLX);
        return 0;
    }
    const mchunk *mc = &x->m->c[c->seq];
    if (mc->cpu != c->cpu || mc->tid != c->tid || mc->cs != c->cs || mc->lane_index != c->lane_index)
        atomic_fetch_add_explicit(&x->mismatches, 1, RLX);
    atomic_store_explicit(&x->start[c->seq], t + 1, RLX);
    atomic_fetch_add_explicit(&x->runs[c->seq], 1, RLX);
    unsigned cur = atomic_fetch_add_explicit(&x->concurrent, 1, RLX) + 1;
    unsigned seen = atomic_load_explicit(&x->max_concurrent, RLX);
    while (cur > seen && !atomic_compare_exchange_weak_explicit(&x->max_concurrent, &seen, cur, RLX, RLX))
        ;
    if (c->seq == x->fail_seq) {
        if (x->fail_msg)
            snprintf(msg, msglen, "%s", x->fail_msg);
        atomic_store_explicit(&x->failed, 1, RLX);
        atomic_fetch_sub_explicit(&x->concurrent, 1, RLX);
        return -1;
    }
    /* Plain reads of what the predecessors wrote, and a plain write, like
     * a guest's: the engine's ordering must make them visible (and, under
     * ThreadSanitizer, race free) whatever threads the chunks run on. */
    const model *m = x->m;
    for (uint64_t k = m->pred_at[c->seq]; k < m->pred_at[c->seq + 1]; k++)
        if (x->memory[m->pred[k]] != m->pred[k] * 3 + 1)
            atomic_fetch_add_explicit(&x->stale_reads, 1, RLX);
    dawdle(x, c->seq);
    x->memory[c->seq] = c->seq * 3 + 1;
    atomic_fetch_sub_explicit(&x->concurrent, 1, RLX);
    atomic_store_explicit(&x->finish[c->seq], atomic_fetch_add_explicit(&x->clock, 1, RLX) + 1, RLX);
    return 0;
}

/* A complete, correct run: every chunk once, handed out as in the log,
 * after its lane predecessor and every chunk whose token it awaits. */
static void check_run(const model *m, run_ctx *x, const rp_result *res, const char *what)
{
    ck_assert_msg(res->status == RP_OK, "%s: status %d: %s", what, res->status, res->message);
    ck_assert_msg(res->message[0] == '\0', "%s: %s", what, res->message);
    ck_assert_msg(res->chunks == m->n && res->read == m->n, "%s: %llu of %llu chunks", what,
                  (unsigned long long)res->chunks, (unsigned long long)m->n);
    ck_assert_uint_eq(res->instructions, m->insns);
    ck_assert_uint_eq(res->tokens, m->tokens);
    ck_assert_msg(atomic_load(&x->mismatches) == 0, "%s: chunks handed out unlike the log", what);
    ck_assert_msg(atomic_load(&x->bad_worker) == 0, "%s: worker number out of range", what);
    ck_assert_msg(atomic_load(&x->stale_reads) == 0, "%s: %llu reads missed a predecessor's write", what,
                  (unsigned long long)atomic_load(&x->stale_reads));
    for (uint64_t i = 0; i < m->n; i++)
        ck_assert_msg(atomic_load(&x->runs[i]) == 1, "%s: chunk %llu ran %u times", what,
                      (unsigned long long)i, atomic_load(&x->runs[i]));
    uint64_t *last = malloc(m->lanes * sizeof *last);
    for (uint32_t q = 0; q < m->lanes; q++)
        last[q] = UINT64_MAX;
    for (uint64_t i = 0; i < m->n; i++) {
        uint64_t prev = last[m->c[i].cpu];
        if (prev != UINT64_MAX)
            ck_assert_msg(atomic_load(&x->finish[prev]) < atomic_load(&x->start[i]),
                          "%s: chunk %llu started before its lane predecessor %llu finished", what,
                          (unsigned long long)i, (unsigned long long)prev);
        last[m->c[i].cpu] = i;
    }
    free(last);
    for (uint64_t e = 0; e < m->nedges; e++) {
        uint64_t a = m->edge[e][0], b = m->edge[e][1];
        ck_assert_msg(atomic_load(&x->finish[a]) < atomic_load(&x->start[b]),
                      "%s: chunk %llu (cpu %u) started before chunk %llu (cpu %u) sent its token", what,
                      (unsigned long long)b, m->c[b].cpu, (unsigned long long)a, m->c[a].cpu);
    }
}

/* Replays PATH with W workers and WINDOW, checks the run; returns the result. */
static rp_result replay_checked(const model *m, const char *path, unsigned w, uint64_t window, uint64_t seed,
                                int dawdle_mode, const char *what)
{
    /* The hand-off threshold, from the seed: the default, every ready
     * chunk handed on at once, one within the synthetic chunks' sizes, and
     * none ever handed on while a chunk runs (every chunk is "short"). The
     * order checks must hold, and no replay may hang, with each. */
    static const uint64_t handoffs[] = { 0, 1, 500, UINT64_C(1) << 40 };
    uint64_t handoff = handoffs[(seed >> 2) % 4];
    char what_h[256];
    snprintf(what_h, sizeof what_h, "%s, handoff %llu", what, (unsigned long long)handoff);
    run_ctx x;
    run_ctx_init(&x, m, w, seed, dawdle_mode);
    rp_options o = { .workers = w, .window = window, .handoff_insns = handoff };
    rp_result res;
    int rc = rp_replay_log(path, &o, record_exec, &x, &res);
    ck_assert_int_eq(rc, res.status);
    check_run(m, &x, &res, what_h);
    ck_assert_uint_le(res.peak_window, window ? window : RP_WINDOW_DEFAULT);
    ck_assert(res.wall_seconds > 0 && res.busy_seconds_sum >= 0);
    run_ctx_free(&x);
    return res;
}

/* ---- logs ---- */

static const char *const format_names[] = { "maxpar", "stitched", "serial", "stserial" };

/* A synthetic bundle with all four final logs; free the result. */
static char *make_bundle(const char *const *synth_args)
{
    char *dir = tu_tmpdir();
    const char *args[40];
    size_t n = 0;
    args[n++] = "synth";
    for (; synth_args[n - 1]; n++)
        args[n] = synth_args[n - 1];
    args[n++] = "-o";
    args[n++] = dir;
    args[n] = NULL;
    tu_output o;
    tu_rnr(&o, args);
    ck_assert_msg(o.status == 0, "synth: %s", o.err);
    tu_output_free(&o);
    tu_rnr(&o, (const char *[]){ "backend", dir, NULL });
    ck_assert_msg(o.status == 0, "backend: %s", o.err);
    tu_output_free(&o);
    return dir;
}

static void drop_bundle(char *dir)
{
    tu_rmtree(dir);
    free(dir);
}

static const char *log_path(const char *dir, const char *format)
{
    static char buf[4][4096];
    static unsigned next;
    char *b = buf[next++ % 4];
    snprintf(b, sizeof buf[0], "%s/%s.log", dir, format);
    return b;
}

/* Writes a hand-made log: one row per chunk, "CPU TID CS [>Q,Q...] [<P:K,P:K...]"
 * (STV after '>', PTV after '<'); Serial kinds: "TID CS". */
static void write_log(const char *path, uint32_t kind, uint32_t cpus, const char *const *rows)
{
    rnr_log_header h = { .kind = kind, .cpus = cpus, .msp = 1000 };
    char err[RNR_ERR_MAX];
    rnr_writer_opts wo = { 256, 0 };    /* small blocks: many reads */
    rnr_writer *w = rnr_writer_open(path, &h, &wo, err, sizeof err);
    ck_assert_msg(w != NULL, "%s", err);
    for (size_t i = 0; rows[i]; i++) {
        uint32_t stv[64];
        rnr_ptv_entry ptv[64];
        rnr_final_chunk c = { .stv = stv, .ptv = ptv };
        const char *p = rows[i];
        char *end;
        if (rnr_log_kind_has_tokens(kind))
            c.cpu = (uint32_t)strtoul(p, &end, 10), p = end;
        c.tid = (uint32_t)strtoul(p, &end, 10), p = end;
        c.cs = strtoull(p, &end, 10), p = end;
        while (*p) {
            while (*p == ' ')
                p++;
            char what = *p;
            if (!what)
                break;
            p++;
            for (;;) {
                uint32_t cpu = (uint32_t)strtoul(p, &end, 10);
                p = end;
                if (what == '>') {
                    stv[c.nstv++] = cpu;
                } else {
                    ck_assert_int_eq(*p, ':');
                    ptv[c.nptv].cpu = cpu;
                    ptv[c.nptv++].count = (uint32_t)strtoul(p + 1, &end, 10);
                    p = end;
                }
                if (*p != ',')
                    break;
                p++;
            }
        }
        ck_assert_msg(rnr_writer_put_final(w, &c) == 0, "row %zu: %s", i, rnr_writer_error(w));
    }
    ck_assert_msg(rnr_writer_close(w, err, sizeof err) == 0, "%s", err);
}

/* ---- tests ---- */

static const unsigned worker_counts[] = { 1, 2, 3, 8 };

/* Every format of a synthetic recording, on 1, 2, 3 and 8 workers. */
START_TEST(replay_respects_tokens_and_lanes_in_every_format_on_1_2_3_8_workers)
{
    char *dir = make_bundle((const char *[]){ "-n", "6", "--threads", "9", "--quantum", "4000", "--insns", "30000",
                                              "--sharing", "medium", "--chunk-max", "800", "--seed", "5", NULL });
    for (size_t f = 0; f < 4; f++) {
        model m;
        const char *path = log_path(dir, format_names[f]);
        model_load(&m, path);
        model_cross_check(&m, path);
        ck_assert_uint_eq(m.unmatched, 0);
        for (size_t wi = 0; wi < sizeof worker_counts / sizeof worker_counts[0]; wi++) {
            char what[64];
            snprintf(what, sizeof what, "%s, %u workers", format_names[f], worker_counts[wi]);
            replay_checked(&m, path, worker_counts[wi], 0, 17 + wi, 1, what);
        }
        model_free(&m);
    }
    drop_bundle(dir);
}
END_TEST

typedef struct hand_log {
    const char *name;
    uint32_t kind, cpus;
    const char *rows[16];
} hand_log;

static const hand_log hand_logs[] = {
    /* docs/formats.md's worked example */
    { "worked example", RNR_LOG_MAXPAR, 2, { "0 7 300 >1", "1 8 150 <0:1", "1 8 20", NULL } },
    /* one chunk awaiting two tokens from one cpu, and tokens from two */
    { "diamond", RNR_LOG_MAXPAR, 4,
      { "0 1 10 >1,2", "1 2 10 >3", "2 3 10 >3", "0 1 5 >3", "3 4 10 <0:1,1:1,2:1", "3 4 10", NULL } },
    { "two tokens in one slot", RNR_LOG_STITCHED, 2,
      { "0 1 10 >1", "0 1 10 >1", "0 1 10", "1 2 10 <0:2", "1 2 10", NULL } },
    /* the j-th token to the j-th slot: the second chunk of cpu 1 waits for
     * the second token, the third for none */
    { "matching in lane order", RNR_LOG_MAXPAR, 2,
      { "0 1 10 >1", "1 2 10 <0:1", "0 1 10 >1", "1 2 10 <0:1", "1 2 10", "0 1 10", NULL } },
    /* tokens both ways, and a token nobody awaits (cpu 2 never runs again) */
    { "ping pong", RNR_LOG_MAXPAR, 3,
      { "0 1 10 >1,2", "1 2 10 <0:1 >0", "0 1 10 <1:1 >1", "1 2 10 <0:1 >0,2", "0 1 10 <1:1", "2 3 10 <0:1",
        NULL } },
    /* a log out of topological order: the sender comes after its consumer */
    { "consumer first", RNR_LOG_MAXPAR, 2, { "1 2 10 <0:1", "1 2 10", "0 1 10", "0 1 10 >1", NULL } },
    { "one cpu", RNR_LOG_MAXPAR, 1, { "0 1 10", "0 1 20", "0 2 30", NULL } },
    { "serial", RNR_LOG_SERIAL, 4, { "1 10", "2 10", "1 30", "3 5", NULL } },
    { "stserial", RNR_LOG_STSERIAL, 2, { "7 100", NULL } },
};

START_TEST(replay_hand_written_logs_follow_the_matching_rule)
{
    const hand_log *hl = &hand_logs[_i];
    char *dir = tu_tmpdir();
    const char *path = tu_path(dir, "hand.log");
    write_log(path, hl->kind, hl->cpus, hl->rows);
    model m;
    model_load(&m, path);
    model_cross_check(&m, path);
    ck_assert_uint_eq(m.unmatched, 0);
    for (size_t wi = 0; wi < sizeof worker_counts / sizeof worker_counts[0]; wi++) {
        for (int rep = 0; rep < 20; rep++) {
            char what[96];
            snprintf(what, sizeof what, "%s, %u workers, run %d", hl->name, worker_counts[wi], rep);
            replay_checked(&m, path, worker_counts[wi], rep % 2 ? 0 : 4, (uint64_t)rep, 1, what);
        }
    }
    model_free(&m);
    tu_rmtree(dir);
    free(dir);
}
END_TEST

/* Many random recordings, formats, worker counts and windows. */
START_TEST(replay_random_recordings_respect_their_dags)
{
    uint64_t seed = tu_seed(0x7e9a1a00u + (uint64_t)_i), rng = seed;
    char cpus[8], threads[8], insns[16], sharing[8], chunk[8], quantum[8], sd[24];
    uint64_t ncpu = 2 + tu_below(&rng, 7);
    snprintf(cpus, sizeof cpus, "%llu", (unsigned long long)ncpu);
    snprintf(threads, sizeof threads, "%llu", (unsigned long long)(1 + tu_below(&rng, ncpu + 3)));
    snprintf(insns, sizeof insns, "%llu", (unsigned long long)(2000 + tu_below(&rng, 20000)));
    snprintf(sharing, sizeof sharing, "%llu", (unsigned long long)(1 + tu_below(&rng, 12)));
    snprintf(chunk, sizeof chunk, "%llu", (unsigned long long)(50 + tu_below(&rng, 2000)));
    snprintf(quantum, sizeof quantum, "%llu", (unsigned long long)(tu_below(&rng, 2) ? 0 : 1000 + tu_below(&rng, 8000)));
    snprintf(sd, sizeof sd, "%llu", (unsigned long long)(seed & 0xffffff));
    char *dir = make_bundle((const char *[]){ "-n", cpus, "--threads", threads, "--insns", insns, "--sharing", sharing,
                                              "--chunk-max", chunk, "--quantum", quantum, "--seed", sd, "--os-cpus",
                                              tu_below(&rng, 3) ? "0" : "1", NULL });
    static const uint64_t windows[] = { 1, 2, 7, 64, 0 };
    int rounds = tu_under_valgrind() ? 2 : 6;
    for (int k = 0; k < rounds; k++) {
        const char *fmt = format_names[tu_below(&rng, 4)];
        unsigned w = 1 + (unsigned)tu_below(&rng, 8);
        uint64_t window = windows[tu_below(&rng, 5)];
        model m;
        const char *path = log_path(dir, fmt);
        model_load(&m, path);
        ck_assert_uint_eq(m.unmatched, 0);
        char what[160];
        snprintf(what, sizeof what, "seed %#llx: %s, %u workers, window %llu", (unsigned long long)seed, fmt, w,
                 (unsigned long long)window);
        replay_checked(&m, path, w, window, seed + (uint64_t)k, 1, what);
        model_free(&m);
    }
    drop_bundle(dir);
}
END_TEST

/* One worker: chunks one at a time, in an order the oracle accepts; and
 * since the oldest runnable chunk runs first and these logs are in a
 * topological order, exactly the log's order. */
START_TEST(replay_single_worker_runs_one_chunk_at_a_time_in_a_valid_order)
{
    char *dir = make_bundle((const char *[]){ "-n", "8", "--insns", "50000", "--sharing", "low", "--seed", "2", NULL });
    for (size_t f = 0; f < 4; f++) {
        model m;
        const char *path = log_path(dir, format_names[f]);
        model_load(&m, path);
        run_ctx x;
        run_ctx_init(&x, &m, 1, 3, 1);
        rp_options o = { .workers = 1 };
        rp_result res;
        rp_replay_log(path, &o, record_exec, &x, &res);
        check_run(&m, &x, &res, format_names[f]);
        ck_assert_uint_eq(atomic_load(&x.max_concurrent), 1);
        /* start, finish, start, finish...: no two chunks overlap */
        for (uint64_t i = 0; i < m.n; i++) {
            ck_assert_uint_eq(atomic_load(&x.finish[i]), atomic_load(&x.start[i]) + 1);
            ck_assert_uint_eq(atomic_load(&x.start[i]), 2 * i + 1);
        }
        run_ctx_free(&x);
        model_free(&m);
    }
    drop_bundle(dir);
}
END_TEST

/* Serial and StSerial: strictly the log's order, one at a time, whatever
 * the number of workers. */
START_TEST(replay_serial_logs_run_in_log_order_one_at_a_time)
{
    char *dir = make_bundle((const char *[]){ "-n", "4", "--threads", "7", "--quantum", "3000", "--insns", "20000",
                                              "--seed", "8", NULL });
    for (size_t f = 2; f < 4; f++) {
        model m;
        const char *path = log_path(dir, format_names[f]);
        model_load(&m, path);
        for (size_t wi = 0; wi < sizeof worker_counts / sizeof worker_counts[0]; wi++) {
            run_ctx x;
            run_ctx_init(&x, &m, worker_counts[wi], 4, 1);
            rp_options o = { .workers = worker_counts[wi], .window = wi == 3 ? 3 : 0 };
            rp_result res;
            rp_replay_log(path, &o, record_exec, &x, &res);
            check_run(&m, &x, &res, format_names[f]);
            ck_assert_uint_eq(atomic_load(&x.max_concurrent), 1);
            for (uint64_t i = 0; i < m.n; i++)
                ck_assert_uint_eq(atomic_load(&x.start[i]), 2 * i + 1);
            run_ctx_free(&x);
        }
        model_free(&m);
    }
    drop_bundle(dir);
}
END_TEST

/* Two lanes without tokens, two workers: each chunk waits (at most 10 s)
 * until the other lane's chunk has started. Only a replay that runs them
 * at the same time passes: with every ready chunk handed on at once
 * (handoff 1), and with the default when the chunk that waits is long
 * enough to be worth a hand-off. */
typedef struct meet_ctx {
    _Atomic int started[2];
    _Atomic int met;
} meet_ctx;

static int meet_exec(void *ctx, unsigned worker, const rp_chunk *c, char *msg, size_t msglen)
{
    meet_ctx *x = ctx;
    atomic_store(&x->started[c->cpu], 1);
    double until = now() + 10;
    while (!atomic_load(&x->started[1 - c->cpu])) {
        if (now() > until) {
            snprintf(msg, msglen, "cpu %u chunk %llu ran alone", c->cpu, (unsigned long long)c->lane_index);
            return -1;
        }
        sleep_us(100);
    }
    atomic_fetch_add(&x->met, 1);
    return 0;
}

START_TEST(replay_runs_independent_lanes_concurrently)
{
    char *dir = tu_tmpdir();
    const char *path = tu_path(dir, "two.log");
    char second[32];
    snprintf(second, sizeof second, "1 2 %u", RP_HANDOFF_DEFAULT);
    for (int k = 0; k < 2; k++) {
        write_log(path, RNR_LOG_MAXPAR, 2, (const char *[]){ "0 1 100", k ? second : "1 2 100", NULL });
        meet_ctx x;
        memset(&x, 0, sizeof x);
        rp_options o = { .workers = 2, .handoff_insns = k ? 0 : 1 };
        rp_result res;
        rp_replay_log(path, &o, meet_exec, &x, &res);
        ck_assert_msg(res.status == RP_OK, "%s", res.message);
        ck_assert_int_eq(atomic_load(&x.met), 2);
        ck_assert_uint_eq(res.chunks, 2);
    }
    tu_rmtree(dir);
    free(dir);
}
END_TEST

/* Short chunks are not handed to an idle worker while a short chunk runs
 * and the ready ones hold fewer than the threshold's instructions: two
 * independent lanes of 100 chunks of 10 instructions, each taking 200 us,
 * on two workers, never run two at a time with the default; with every
 * chunk handed on at once (handoff 1) they do. */
typedef struct overlap_ctx {
    _Atomic int now, max;
} overlap_ctx;

static int overlap_exec(void *ctx, unsigned worker, const rp_chunk *c, char *msg, size_t msglen)
{
    overlap_ctx *x = ctx;
    int n = atomic_fetch_add(&x->now, 1) + 1;
    for (int m = atomic_load(&x->max); n > m && !atomic_compare_exchange_weak(&x->max, &m, n);)
        ;
    sleep_us(200);
    atomic_fetch_sub(&x->now, 1);
    return 0;
}

/* Replays PATH (CHUNKS chunks) with overlap_exec; the most chunks that ran
 * at once. */
static int max_overlap(const char *path, unsigned workers, uint64_t handoff, uint64_t chunks)
{
    overlap_ctx x;
    memset(&x, 0, sizeof x);
    rp_options o = { .workers = workers, .handoff_insns = handoff };
    rp_result res;
    rp_replay_log(path, &o, overlap_exec, &x, &res);
    ck_assert_msg(res.status == RP_OK, "%s", res.message);
    ck_assert_uint_eq(res.chunks, chunks);
    return atomic_load(&x.max);
}

START_TEST(replay_keeps_short_chunks_on_one_worker)
{
    char *dir = tu_tmpdir();
    const char *path = tu_path(dir, "short.log");
    const char *rows[201];
    for (int i = 0; i < 200; i++)
        rows[i] = i % 2 ? "1 2 10" : "0 1 10";
    rows[200] = NULL;
    write_log(path, RNR_LOG_MAXPAR, 2, rows);
    int max = max_overlap(path, 2, 0, 200);
    ck_assert_msg(max == 1, "default hand-off: %d short chunks ran at once", max);
    max = max_overlap(path, 2, 1, 200);
    if (!tu_under_valgrind())
        ck_assert_msg(max == 2, "handoff 1: the two lanes never ran at once");
    tu_rmtree(dir);
    free(dir);
}
END_TEST

/* At most as many chunks run at once as the host has cores: eight lanes of
 * long independent chunks (past the hand-off threshold) on eight workers. */
START_TEST(replay_runs_at_most_a_chunk_per_host_core)
{
    char *dir = tu_tmpdir();
    const char *path = tu_path(dir, "wide.log");
    static char rows_text[40][32];
    const char *rows[41];
    for (int i = 0; i < 40; i++) {
        snprintf(rows_text[i], sizeof rows_text[i], "%d %d %u", i % 8, 1 + i % 8, 4 * RP_HANDOFF_DEFAULT);
        rows[i] = rows_text[i];
    }
    rows[40] = NULL;
    write_log(path, RNR_LOG_MAXPAR, 8, rows);
    cpu_set_t set;
    int cores = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 1;
    int max = max_overlap(path, 8, 0, 40);
    ck_assert_msg(max <= cores, "%d chunks ran at once on %d host cores", max, cores);
    if (cores >= 2 && !tu_under_valgrind())
        ck_assert_msg(max >= 2, "long independent chunks never ran at once");
    tu_rmtree(dir);
    free(dir);
}
END_TEST

/* An idle worker sleeps: eight workers on a chain of chunks that each
 * sleep 1 ms use little processor time. */
static int nap_exec(void *ctx, unsigned worker, const rp_chunk *c, char *msg, size_t msglen)
{
    sleep_us(1000);
    return 0;
}

static double cpu_seconds(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + 1e-6 * (double)ru.ru_utime.tv_usec + (double)ru.ru_stime.tv_sec +
           1e-6 * (double)ru.ru_stime.tv_usec;
}

START_TEST(replay_idle_workers_sleep)
{
    /* valgrind serializes threads and inflates processor time: the
     * release and sanitizer runs measure this. */
    if (tu_under_valgrind())
        return;
    char *dir = tu_tmpdir();
    const char *path = tu_path(dir, "chain.log");
    const char *rows[202];
    for (int i = 0; i < 200; i++)
        rows[i] = i % 2 ? "1 2 10 <0:1 >0" : i ? "0 1 10 <1:1 >1" : "0 1 10 >1";
    rows[200] = NULL;
    write_log(path, RNR_LOG_MAXPAR, 2, rows);
    rp_options o = { .workers = 8 };
    rp_result res;
    double c0 = cpu_seconds();
    rp_replay_log(path, &o, nap_exec, NULL, &res);
    double used = cpu_seconds() - c0;
    ck_assert_msg(res.status == RP_OK, "%s", res.message);
    ck_assert_uint_eq(res.chunks, 200);
    ck_assert_msg(used < 0.5 * res.wall_seconds, "%.3f s of processor time in %.3f s", used, res.wall_seconds);
    tu_rmtree(dir);
    free(dir);
}
END_TEST

/* Lanes in lock step: chunk i of every lane awaits a token from chunk
 * i - 1 of every other lane, so a chunk's tokens and its lane predecessor
 * arrive at about the same time, over and over: the finishing workers
 * contend for the lock while tokens are in flight. No dawdling: this is
 * for the sanitizers. */
START_TEST(replay_lock_step_lanes_under_contention)
{
    char *dir = tu_tmpdir();
    const char *path = tu_path(dir, "lockstep.log");
    uint32_t lanes = 2 + (uint32_t)_i;
    rnr_log_header h = { .kind = RNR_LOG_MAXPAR, .cpus = lanes };
    char err[RNR_ERR_MAX];
    rnr_writer *w = rnr_writer_open(path, &h, NULL, err, sizeof err);
    ck_assert_msg(w != NULL, "%s", err);
    uint64_t rounds = tu_under_valgrind() ? 300 : 3000;
    for (uint64_t i = 0; i < rounds; i++) {
        for (uint32_t q = 0; q < lanes; q++) {
            uint32_t to[8], n = 0;
            rnr_ptv_entry from[8];
            for (uint32_t p = 0; p < lanes; p++) {
                if (p == q)
                    continue;
                to[n] = p;
                from[n++] = (rnr_ptv_entry){ p, 1 };
            }
            rnr_final_chunk c = { .cpu = q, .tid = q + 1, .cs = 10, .nstv = i + 1 < rounds ? n : 0, .stv = to,
                                  .nptv = i ? n : 0, .ptv = from };
            ck_assert_int_eq(rnr_writer_put_final(w, &c), 0);
        }
    }
    ck_assert_int_eq(rnr_writer_close(w, err, sizeof err), 0);
    model m;
    model_load(&m, path);
    for (size_t wi = 1; wi < sizeof worker_counts / sizeof worker_counts[0]; wi++) {
        char what[64];
        snprintf(what, sizeof what, "%u lanes, %u workers", lanes, worker_counts[wi]);
        replay_checked(&m, path, worker_counts[wi], 0, 1, 0, what);
    }
    model_free(&m);
    tu_rmtree(dir);
    free(dir);
}
END_TEST

/* ---- deadlocks ---- */

static rp_result replay_expect(const char *path, unsigned w, uint64_t window, int status)
{
    model m;
    model_load(&m, path);
    run_ctx x;
    run_ctx_init(&x, &m, w, 1, 1);
    rp_options o = { .workers = w, .window = window };
    rp_result res;
    double t0 = now();
    int rc = rp_replay_log(path, &o, record_exec, &x, &res);
    ck_assert_msg(rc == status, "status %d (%s), wanted %d", rc, res.message, status);
    ck_assert_msg(now() - t0 < 5, "took %.1f s", now() - t0);
    for (uint64_t i = 0; i < m.n; i++)
        ck_assert_uint_le(atomic_load(&x.runs[i]), 1);
    run_ctx_free(&x);
    model_free(&m);
    return res;
}

START_TEST(replay_reports_a_token_never_sent_as_deadlock)
{
    char *dir = tu_tmpdir();
    const char *path = tu_path(dir, "short.log");
    write_log(path, RNR_LOG_MAXPAR, 3,
              (const char *[]){ "0 7 10 >1", "2 9 10", "1 8 10 <0:2", "1 8 10", "2 9 10 <1:1", NULL });
    for (size_t wi = 0; wi < sizeof worker_counts / sizeof worker_counts[0]; wi++) {
        rp_result res = replay_expect(path, worker_counts[wi], 0, RP_DEADLOCK);
        ck_assert_msg(strstr(res.message, "deadlock: 3 chunks can never run (the log has ended") &&
                          strstr(res.message, ": cpu 1 chunk 0 (record 2, tid 8) awaits 1 more token from cpu 0 "
                                              "(counter cpu 0 -> cpu 1: 1 sent, 2 needed); "
                                              "cpu 2 chunk 1 (record 4, tid 9) awaits 1 more token from cpu 1 "
                                              "(counter cpu 1 -> cpu 2: 0 sent, 1 needed)"),
                      "%s", res.message);
        ck_assert_uint_eq(res.chunks, 2);
    }
    /* A cycle: each waits for the other. */
    write_log(path, RNR_LOG_MAXPAR, 2, (const char *[]){ "0 1 10 <1:1 >1", "1 2 10 <0:1 >0", NULL });
    rp_result res = replay_expect(path, 2, 0, RP_DEADLOCK);
    ck_assert_msg(strstr(res.message, "cpu 0 chunk 0 (record 0, tid 1) awaits 1 more token from cpu 1") &&
                      strstr(res.message, "cpu 1 chunk 0 (record 1, tid 2) awaits 1 more token from cpu 0"),
                  "%s", res.message);
    tu_rmtree(dir);
    free(dir);
}
END_TEST

/* A MaxPar log of a recording whose last token between two CPUs is
 * removed from its sender's STV: status 3 within seconds, naming the chunk
 * that waits for it, with the short counter. */
START_TEST(replay_deadlocks_when_an_stv_bit_is_removed)
{
    char *dir = make_bundle((const char *[]){ "-n", "4", "--threads", "6", "--quantum", "3000", "--insns", "30000",
                                              "--sharing", "high", "--seed", "9", NULL });
    const char *mp = log_path(dir, "maxpar"), *bad = tu_path(dir, "bad.log");
    model m;
    model_load(&m, mp);
    ck_assert_uint_gt(m.nedges, 0);
    /* the last token of the pair of the first edge */
    uint32_t p = m.c[m.edge[0][0]].cpu, q = m.c[m.edge[0][1]].cpu;
    uint64_t last = 0;
    for (uint64_t e = 0; e < m.nedges; e++)
        if (m.c[m.edge[e][0]].cpu == p && m.c[m.edge[e][1]].cpu == q)
            last = e;
    uint64_t sender = m.edge[last][0], waiter = m.edge[last][1];
    model_free(&m);
    char err[RNR_ERR_MAX];
    rnr_reader *r = rnr_reader_open(mp, err, sizeof err);
    ck_assert_msg(r != NULL, "%s", err);
    rnr_writer *w = rnr_writer_open(bad, rnr_reader_header(r), NULL, err, sizeof err);
    ck_assert_msg(w != NULL, "%s", err);
    rnr_final_chunk c;
    for (uint64_t seq = 0; rnr_reader_next_final(r, &c) == 1; seq++) {
        uint32_t stv[64], ns = 0;
        for (uint32_t i = 0; i < c.nstv; i++)
            if (!(seq == sender && c.stv[i] == q))
                stv[ns++] = c.stv[i];
        c.stv = stv;
        c.nstv = ns;
        ck_assert_msg(rnr_writer_put_final(w, &c) == 0, "%s", rnr_writer_error(w));
    }
    rnr_reader_close(r);
    ck_assert_int_eq(rnr_writer_close(w, err, sizeof err), 0);
    model_load(&m, bad);
    ck_assert_uint_eq(m.unmatched, 1);
    ck_assert_uint_eq(m.first_unmatched, waiter);
    const mchunk *x = &m.c[waiter];
    char want[160];
    snprintf(want, sizeof want, ": cpu %u chunk %llu (record %llu, tid %u) awaits 1 more token from cpu %u (counter "
             "cpu %u -> cpu %u: ", q, (unsigned long long)x->lane_index, (unsigned long long)waiter, x->tid, p, p, q);
    for (size_t wi = 0; wi < sizeof worker_counts / sizeof worker_counts[0]; wi++) {
        for (int win = 0; win < 2; win++) {
            rp_result res = replay_expect(bad, worker_counts[wi], win ? 16 : 0, RP_DEADLOCK);
            ck_assert_msg(strstr(res.message, "deadlock: ") && strstr(res.message, want), "%s\nwanted: %s",
                          res.message, want);
            ck_assert_uint_lt(res.chunks, m.n);
        }
    }
    model_free(&m);
    drop_bundle(dir);
}
END_TEST

/* A sender that comes later in the log than the window reaches: the window
 * fills with chunks that cannot run. A larger window replays the log. */
START_TEST(replay_reports_a_full_window_that_cannot_run)
{
    char *dir = tu_tmpdir();
    const char *path = tu_path(dir, "late.log");
    write_log(path, RNR_LOG_MAXPAR, 2,
              (const char *[]){ "1 2 10 <0:1", "1 2 10", "1 2 10", "1 2 10", "1 2 10", "1 2 10", "0 1 10 >1", NULL });
    rp_result res = replay_expect(path, 2, 4, RP_DEADLOCK);
    ck_assert_msg(strstr(res.message, "deadlock: 4 chunks can never run (the window is full") &&
                      strstr(res.message, "cpu 1 chunk 0 (record 0, tid 2) awaits 1 more token from cpu 0"),
                  "%s", res.message);
    ck_assert_uint_eq(res.chunks, 0);
    model m;
    model_load(&m, path);
    replay_checked(&m, path, 2, 7, 1, 1, "window 7");
    replay_checked(&m, path, 2, 0, 1, 1, "default window");
    model_free(&m);
    tu_rmtree(dir);
    free(dir);
}
END_TEST

/* ---- failures ---- */

START_TEST(replay_exec_failure_stops_every_worker_promptly)
{
    char *dir = make_bundle((const char *[]){ "-n", "8", "--insns", "100000", "--sharing", "low", "--chunk-max",
                                              "2000", "--seed", "4", NULL });
    const char *path = log_path(dir, "maxpar");
    model m;
    model_load(&m, path);
    ck_assert_uint_gt(m.n, 100);
    for (size_t wi = 0; wi < sizeof worker_counts / sizeof worker_counts[0]; wi++) {
        unsigned w = worker_counts[wi];
        run_ctx x;
        /* The other chunks take 20 ms: the failure is recorded long before
         * any of them ends, even on a busy machine. */
        run_ctx_init(&x, &m, w, 5, 3);
        x.fail_seq = 12;
        x.fail_msg = "chunk 12 diverged at pc 0x10a4c";
        rp_options o = { .workers = w };
        rp_result res;
        int rc = rp_replay_log(path, &o, record_exec, &x, &res);
        ck_assert_int_eq(rc, RP_EXEC_FAILED);
        ck_assert_str_eq(res.message, "chunk 12 diverged at pc 0x10a4c");
        /* Once it failed, at most the other workers' current chunks finish. */
        ck_assert_msg(atomic_load(&x.started_after_failure) < w, "%u workers: %llu chunks started after the failure",
                      w, (unsigned long long)atomic_load(&x.started_after_failure));
        ck_assert_uint_lt(res.chunks, m.n);
        run_ctx_free(&x);
    }
    /* Without a message, the engine names the chunk; the last chunk too. */
    run_ctx x;
    run_ctx_init(&x, &m, 3, 5, 0);
    x.fail_seq = m.n - 1;
    rp_options o = { .workers = 3 };
    rp_result res;
    ck_assert_int_eq(rp_replay_log(path, &o, record_exec, &x, &res), RP_EXEC_FAILED);
    char want[128];
    snprintf(want, sizeof want, "chunk %llu (cpu %u, chunk %llu of its lane, tid %u) failed",
             (unsigned long long)(m.n - 1), m.c[m.n - 1].cpu, (unsigned long long)m.c[m.n - 1].lane_index,
             m.c[m.n - 1].tid);
    ck_assert_str_eq(res.message, want);
    ck_assert_uint_le(res.chunks, m.n - 1);
    run_ctx_free(&x);
    model_free(&m);
    drop_bundle(dir);
}
END_TEST

static int never_exec(void *ctx, unsigned worker, const rp_chunk *c, char *msg, size_t msglen)
{
    atomic_fetch_add((_Atomic uint64_t *)ctx, 1);
    return 0;
}

START_TEST(replay_reports_bad_logs_with_file_and_offset)
{
    char *dir = make_bundle((const char *[]){ "-n", "4", "--insns", "40000", "--seed", "6", NULL });
    const char *notlog = tu_path(dir, "notalog");
    tu_write_file(notlog, "hello\n", 6);
    _Atomic uint64_t ran = 0;
    rp_options o = { .workers = 3 };
    rp_result res;
    struct { const char *path; const char *want[2]; } cases[] = {
        { "/nonexistent/maxpar.log", { "/nonexistent/maxpar.log", "No such file" } },
        { notlog, { "notalog: offset 0", "not an rnr log" } },
        { tu_path(dir, "initial.log"), { "initial.log: ", "this is an initial log, not a final log" } },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ck_assert_int_eq(rp_replay_log(cases[i].path, &o, never_exec, (void *)&ran, &res), RP_BAD_LOG);
        ck_assert_msg(strstr(res.message, cases[i].want[0]) && strstr(res.message, cases[i].want[1]), "%s",
                      res.message);
    }
    ck_assert_uint_eq(atomic_load(&ran), 0);
    /* Truncated and corrupted copies of each final log. */
    for (size_t f = 0; f < 4; f++) {
        size_t n;
        uint8_t *bytes = tu_read_file(log_path(dir, format_names[f]), &n);
        const char *cut = tu_path(dir, "cut.log"), *bent = tu_path(dir, "bent.log");
        tu_write_file(cut, bytes, n - 3);
        ck_assert_int_eq(rp_replay_log(cut, &o, never_exec, (void *)&ran, &res), RP_BAD_LOG);
        ck_assert_msg(strstr(res.message, "cut.log: offset ") && strstr(res.message, "truncated"), "%s",
                      res.message);
        bytes[RNR_LOG_HEADER_SIZE + RNR_BLOCK_HEADER_SIZE + 2] ^= 0x10;
        tu_write_file(bent, bytes, n);
        ck_assert_int_eq(rp_replay_log(bent, &o, never_exec, (void *)&ran, &res), RP_BAD_LOG);
        ck_assert_msg(strstr(res.message, "bent.log: offset 64: block checksum mismatch"), "%s", res.message);
        free(bytes);
    }
    drop_bundle(dir);
}
END_TEST

/* ---- memory, progress, streaming ---- */

/* A long log through a small window: never more chunks held than the
 * window, whatever the log's length; the slot pages follow the chunks
 * held (they are recycled), not the log: at most what the window spans,
 * with the default window too (a window as long as the log would fail). */
START_TEST(replay_memory_is_bounded_by_the_window)
{
    char *dir = tu_tmpdir();
    const char *path = tu_path(dir, "long.log");
    /* A window of one or three chunks hands every chunk over alone: a
     * shorter log for those. */
    uint64_t scale = tu_under_valgrind() ? 10 : 1;
    static const struct { uint64_t n, window; } runs[] = {
        { 20000, 1 }, { 20000, 3 }, { 200000, 256 }, { 200000, 5000 }, { 200000, 0 },
    };
    for (size_t k = 0; k < sizeof runs / sizeof runs[0]; k++) {
        uint64_t n = runs[k].n / scale;
        rnr_log_header h = { .kind = RNR_LOG_MAXPAR, .cpus = 4 };
        char err[RNR_ERR_MAX];
        rnr_writer *w = rnr_writer_open(path, &h, NULL, err, sizeof err);
        ck_assert_msg(w != NULL, "%s", err);
        /* a ring: each chunk sends a token to the next cpu, which awaits it */
        for (uint64_t i = 0; i < n; i++) {
            uint32_t cpu = (uint32_t)(i % 4), stv = (cpu + 1) % 4;
            rnr_ptv_entry ptv = { (cpu + 3) % 4, 1 };
            rnr_final_chunk c = { .cpu = cpu, .tid = cpu + 1, .cs = 1 + i % 7, .nstv = 1, .stv = &stv,
                                  .nptv = i ? 1 : 0, .ptv = &ptv };
            ck_assert_int_eq(rnr_writer_put_final(w, &c), 0);
        }
        ck_assert_int_eq(rnr_writer_close(w, err, sizeof err), 0);
        _Atomic uint64_t ran = 0;
        rp_options o = { .workers = 3, .window = runs[k].window };
        rp_result res;
        ck_assert_msg(rp_replay_log(path, &o, never_exec, (void *)&ran, &res) == RP_OK, "%s", res.message);
        ck_assert_uint_eq(res.chunks, n);
        ck_assert_uint_eq(atomic_load(&ran), n);
        uint64_t window = runs[k].window ? runs[k].window : RP_WINDOW_DEFAULT;
        uint64_t page = window < 1024 ? window : 1024;
        ck_assert_uint_le(res.peak_window, window);
        ck_assert_uint_ge(res.peak_window, 1);
        ck_assert_uint_le(res.slot_pages, (window + page - 1) / page + 1);
        ck_assert_uint_le(res.slot_pages, res.peak_window / page + 2);
        /* Only a log ten times the window tells the two apart (valgrind
         * runs shorter logs). */
        if (n >= 10 * window)
            ck_assert_uint_le(res.slot_pages * page * 10, n + 2 * page);
    }
    tu_rmtree(dir);
    free(dir);
}
END_TEST

typedef struct progress_log {
    rp_progress p[4096];
    unsigned n;
} progress_log;

static void keep_progress(void *ctx, const rp_progress *p)
{
    progress_log *pl = ctx;
    if (pl->n < 4096)
        pl->p[pl->n++] = *p;
}

START_TEST(replay_reports_progress_on_the_calling_thread)
{
    char *dir = make_bundle((const char *[]){ "-n", "4", "--insns", "30000", "--seed", "7", NULL });
    const char *path = log_path(dir, "maxpar");
    model m;
    model_load(&m, path);
    run_ctx x;
    run_ctx_init(&x, &m, 2, 1, 2);    /* 2 ms per chunk */
    static progress_log pl;
    pl.n = 0;
    rp_options o = { .workers = 2, .progress = keep_progress, .progress_seconds = 0.005, .progress_ctx = &pl };
    rp_result res;
    rp_replay_log(path, &o, record_exec, &x, &res);
    check_run(&m, &x, &res, "progress");
    ck_assert_uint_ge(pl.n, 3);
    for (unsigned i = 1; i < pl.n; i++) {
        ck_assert_uint_ge(pl.p[i].chunks, pl.p[i - 1].chunks);
        ck_assert_uint_ge(pl.p[i].instructions, pl.p[i - 1].instructions);
        ck_assert_uint_ge(pl.p[i].read, pl.p[i].chunks);
        ck_assert(pl.p[i].seconds >= pl.p[i - 1].seconds);
    }
    ck_assert_uint_eq(pl.p[pl.n - 1].chunks, m.n);
    ck_assert_uint_eq(pl.p[pl.n - 1].instructions, m.insns);
    ck_assert_uint_lt(pl.p[0].chunks, m.n);
    run_ctx_free(&x);
    model_free(&m);
    drop_bundle(dir);
}
END_TEST

/* A log on a pipe whose writer sends the next batch only once the replay
 * has executed the previous one: the engine must hand on what it has read
 * before it waits for more. */
typedef struct stream_test {
    int fd;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    uint64_t done;          /* chunks executed */
    int batches, per_batch;
    int writer_rc;
    int stalled;            /* the writer gave up waiting for the replay */
} stream_test;

static void *stream_writer(void *arg)
{
    stream_test *t = arg;
    rnr_log_header h = { .kind = RNR_LOG_MAXPAR, .cpus = 2 };
    char err[RNR_ERR_MAX];
    rnr_writer *w = rnr_writer_open_io(rnr_io_from_fd(t->fd, "pipe", 1, 1), &h, NULL, err, sizeof err);
    if (!w) {
        t->writer_rc = -1;
        return NULL;
    }
    uint32_t one = 1;
    rnr_ptv_entry from0 = { 0, 1 };
    for (int b = 0; b < t->batches; b++) {
        for (int i = 0; i < t->per_batch; i++) {
            rnr_final_chunk c = { .cpu = (uint32_t)(i % 2), .tid = 1 + (uint32_t)(i % 2), .cs = 5 };
            if (i % 2 == 0) {
                c.nstv = 1;
                c.stv = &one;
            } else {
                c.nptv = 1;
                c.ptv = &from0;
            }
            rnr_writer_put_final(w, &c);
        }
        rnr_writer_flush(w);
        pthread_mutex_lock(&t->mu);
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_sec += 3;
        while (!t->stalled && t->done < (uint64_t)(b + 1) * (uint64_t)t->per_batch)
            if (pthread_cond_timedwait(&t->cv, &t->mu, &until) != 0)
                t->stalled = 1;
        pthread_mutex_unlock(&t->mu);
    }
    t->writer_rc = rnr_writer_close(w, err, sizeof err);
    return NULL;
}

static int stream_exec(void *ctx, unsigned worker, const rp_chunk *c, char *msg, size_t msglen)
{
    stream_test *t = ctx;
    pthread_mutex_lock(&t->mu);
    t->done++;
    pthread_cond_signal(&t->cv);
    pthread_mutex_unlock(&t->mu);
    return 0;
}

START_TEST(replay_streams_a_log_from_a_pipe)
{
    int fds[2];
    ck_assert_int_eq(pipe(fds), 0);
    stream_test t = { .fd = fds[1], .batches = 20, .per_batch = 10 };
    pthread_mutex_init(&t.mu, NULL);
    pthread_cond_init(&t.cv, NULL);
    pthread_t th;
    ck_assert_int_eq(pthread_create(&th, NULL, stream_writer, &t), 0);
    char err[RNR_ERR_MAX];
    rnr_reader *r = rnr_reader_open_io(rnr_io_from_fd(fds[0], "pipe", 0, 1), err, sizeof err);
    ck_assert_msg(r != NULL, "%s", err);
    rp_options o = { .workers = 2 };
    rp_result res;
    double t0 = now();
    rp_replay_reader(r, &o, stream_exec, &t, &res);
    rnr_reader_close(r);
    pthread_join(th, NULL);
    ck_assert_msg(res.status == RP_OK, "%s", res.message);
    ck_assert_uint_eq(res.chunks, 200);
    ck_assert_int_eq(t.writer_rc, 0);
    ck_assert_msg(!t.stalled, "the writer waited in vain for chunks the engine held back");
    ck_assert_msg(now() - t0 < 5, "%.1f s", now() - t0);
    pthread_mutex_destroy(&t.mu);
    pthread_cond_destroy(&t.cv);
}
END_TEST

/* ---- the input log's two cursors (replayer/input.c) ---- */

/* Thread 1 makes a system call at the start and one at the end; threads 2
 * and 3 end N chunks each in between (a check each) and make a system
 * call every 64 chunks. Thread 1 taking its second record reads the log
 * to its end: what waits in queues then is the other threads' system
 * calls, not their checks, and every check is still found afterwards. */
START_TEST(replay_input_queues_hold_records_not_the_checks_in_between)
{
    const uint64_t n = 20000;
    char *dir = tu_tmpdir();
    const char *path = tu_path(dir, "input.log");
    rnr_log_header h = {.kind = RNR_LOG_INPUT, .cpus = 3};
    char err[256];
    rnr_writer *w = rnr_writer_open(path, &h, NULL, err, sizeof err);
    ck_assert_msg(w != NULL, "%s", err);
    rnr_input_record sys = {.type = RNR_IN_SYSCALL, .tid = 1, .nr = 64, .value = 5};
    ck_assert_int_eq(rnr_writer_put_input(w, &sys), 0);
    uint64_t syscalls = 0;
    for (uint64_t i = 1; i <= n; i++) {
        for (uint32_t tid = 2; tid <= 3; tid++) {
            rnr_input_record c = {.type = RNR_IN_CHECK, .tid = tid, .nr = 100 * i,
                                  .value = (int64_t)(0x1000 + i), .addr = i * 7 + tid};
            ck_assert_int_eq(rnr_writer_put_input(w, &c), 0);
            if (i % 64 == 0) {
                rnr_input_record r = {.type = RNR_IN_SYSCALL, .tid = tid, .nr = 172,
                                      .value = (int64_t)i};
                ck_assert_int_eq(rnr_writer_put_input(w, &r), 0);
                syscalls++;
            }
        }
    }
    sys.value = 6;
    ck_assert_int_eq(rnr_writer_put_input(w, &sys), 0);
    ck_assert_msg(rnr_writer_close(w, err, sizeof err) == 0, "%s", err);

    rp_input *in = rp_input_load(path, err, sizeof err);
    ck_assert_msg(in != NULL, "%s", err);
    rnr_input_record r;
    ck_assert_int_eq(rp_input_peek(in, 1, &r), 1);
    ck_assert_int_eq(r.value, 5);
    rp_input_take(in, 1);
    ck_assert_int_eq(rp_input_peek(in, 1, &r), 1);
    ck_assert_int_eq(r.value, 6);
    /* The other threads' system calls wait (and a record or two more);
     * their 2n checks do not. */
    ck_assert_uint_le(rp_input_peak(in), syscalls + 2);
    rp_input_take(in, 1);
    /* Thread 2 in its program order: every check found, every record. */
    uint64_t pc, hash, found = 0;
    for (uint64_t i = 1; i <= n; i++) {
        if (rp_input_check(in, 2, 100 * i, &pc, &hash) && pc == 0x1000 + i && hash == i * 7 + 2)
            found++;
        if (i % 64 == 0) {
            ck_assert_int_eq(rp_input_peek(in, 2, &r), 1);
            ck_assert_int_eq(r.value, (int64_t)i);
            rp_input_take(in, 2);
        }
    }
    ck_assert_uint_eq(found, n);
    ck_assert_int_eq(rp_input_peek(in, 2, &r), 0);
    /* Thread 3's checks that the check cursor met on the way wait. */
    ck_assert_int_eq(rp_input_check(in, 3, 100 * 64, &pc, &hash), 1);
    ck_assert_uint_eq(hash, 64 * 7 + 3);
    rp_input_free(in);
    tu_rmtree(dir);
    free(dir);
}
END_TEST

TU_SUITE(replay_engine)
{
    Suite *s = suite_create("replay_engine");
    TCase *tc = tu_tcase(s, "order", 120);
    tcase_add_test(tc, replay_respects_tokens_and_lanes_in_every_format_on_1_2_3_8_workers);
    tcase_add_loop_test(tc, replay_hand_written_logs_follow_the_matching_rule, 0,
                        (int)(sizeof hand_logs / sizeof hand_logs[0]));
    tcase_add_test(tc, replay_single_worker_runs_one_chunk_at_a_time_in_a_valid_order);
    tcase_add_test(tc, replay_serial_logs_run_in_log_order_one_at_a_time);
    tc = tu_tcase(s, "random", 240);
    tcase_add_loop_test(tc, replay_random_recordings_respect_their_dags, 0, 24);
    tc = tu_tcase(s, "parallel", 30);
    tcase_add_test(tc, replay_runs_independent_lanes_concurrently);
    tcase_add_test(tc, replay_keeps_short_chunks_on_one_worker);
    tcase_add_test(tc, replay_runs_at_most_a_chunk_per_host_core);
    tcase_add_test(tc, replay_idle_workers_sleep);
    tcase_add_loop_test(tc, replay_lock_step_lanes_under_contention, 0, 3);
    tc = tu_tcase(s, "errors", 60);
    tcase_add_test(tc, replay_reports_a_token_never_sent_as_deadlock);
    tcase_add_test(tc, replay_deadlocks_when_an_stv_bit_is_removed);
    tcase_add_test(tc, replay_reports_a_full_window_that_cannot_run);
    tcase_add_test(tc, replay_exec_failure_stops_every_worker_promptly);
    tcase_add_test(tc, replay_reports_bad_logs_with_file_and_offset);
    tc = tu_tcase(s, "stream", 60);
    tcase_add_test(tc, replay_memory_is_bounded_by_the_window);
    tcase_add_test(tc, replay_reports_progress_on_the_calling_thread);
    tcase_add_test(tc, replay_streams_a_log_from_a_pipe);
    tcase_add_test(tc, replay_input_queues_hold_records_not_the_checks_in_between);
    return s;
}
