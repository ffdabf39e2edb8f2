/* replayer/engine.c: the token-passing engine (replayer/engine.h).
 *
 * Semantics (docs/backend.md §1). A lane per recorded CPU holds its chunks
 * in log order. For each ordered pair (p, q) the engine counts the tokens
 * p has sent to q. A chunk X of lane q with PTV[p] = k may start when the
 * tokens q received from p reach the sum of PTV[p] over q's chunks up to
 * and including X (the j-th token p sends to q matches the j-th awaited
 * slot of p on q), and when X's lane predecessor is done. When X is done,
 * it sends one token to each CPU of its STV. Serial logs have one lane
 * and no tokens: their chunks run one after the other.
 *
 * Why concurrent chunks never race on guest memory: two chunks run at the
 * same time only if neither is ordered before the other in the log's DAG;
 * the backend puts an edge (a token, or lane order) between any two chunks
 * that access a line in conflict (verify proves it on every log), so such
 * chunks share only lines that both read. All engine state (lanes, token
 * counts, the window) is under one mutex: a chunk's completion (its
 * tokens) is published by the unlock of the worker that ran it and seen by
 * the lock of the worker that takes a successor, so every guest store of a
 * chunk happens-before every access of its successors, also on other host
 * threads.
 *
 * Memory: at most `window` chunks are held. MaxPar and Stitched logs are
 * written in a topological order, so the oldest chunk held has all its
 * predecessors done (they are older): a full window always has a runnable
 * chunk, and the window never causes a deadlock on a valid log. */
#include "replayer/engine.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rru/alloc.h"

typedef struct need {
    uint32_t from;
    uint64_t total;            /* tokens from `from` this lane must have received */
} need;

typedef struct slot {
    rp_chunk c;
    need *ptv;
    uint32_t nptv, nstv;
    uint32_t *stv;
    struct slot *next;         /* the next chunk of its lane */
    int running;
} slot;

typedef struct lane {
    slot *head, *tail;
    uint64_t appended;         /* chunks of this lane read so far */
    uint64_t *awaited;         /* [cpus]: PTV sums of the chunks read so far */
} lane;

typedef struct engine {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    rnr_reader *r;
    int eof;
    uint32_t cpus;
    lane *lanes;
    uint64_t *sent;            /* [p * cpus + q]: tokens p has sent to q */
    uint64_t held, peak, window, seq;
    uint64_t chunks, insns;
    unsigned running, waiting;
    int stop;
    rp_result *res;
    rp_exec_fn fn;
    void *ctx;
    void (*progress)(void *pctx, uint64_t chunks, uint64_t insns);
    void *pctx;
    uint64_t next_progress;
    _Atomic uint64_t gen;      /* bumped at every completion: what spinners watch */
    double busy;
} engine;

#if defined(__x86_64__) || defined(__i386__)
#define CPU_RELAX() __builtin_ia32_pause()
#else
#define CPU_RELAX() ((void)0)
#endif

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void fail(engine *e, int status, const char *msg)
{
    if (e->stop)
        return;
    e->stop = 1;
    e->res->status = status;
    snprintf(e->res->message, sizeof e->res->message, "%s", msg);
    pthread_cond_broadcast(&e->cv);
}

/* Reads chunks into the window while it has room (under the lock). */
static void fill(engine *e)
{
    while (!e->eof && !e->stop && e->held < e->window) {
        rnr_final_chunk fc;
        int rc = rnr_reader_next_final(e->r, &fc);
        if (rc == 0) {
            e->eof = 1;
            break;
        }
        if (rc < 0) {
            fail(e, RP_BAD_LOG, rnr_reader_error(e->r));
            return;
        }
        uint32_t cpu = fc.cpu < e->cpus ? fc.cpu : 0;
        lane *l = &e->lanes[cpu];
        slot *s = xcalloc(1, sizeof *s);
        s->c = (rp_chunk){e->seq++, fc.cpu, fc.tid, fc.cs, l->appended++};
        s->nptv = fc.nptv;
        s->ptv = xmalloc((fc.nptv ? fc.nptv : 1) * sizeof *s->ptv);
        for (uint32_t i = 0; i < fc.nptv; i++) {
            uint32_t from = fc.ptv[i].cpu < e->cpus ? fc.ptv[i].cpu : 0;
            l->awaited[from] += fc.ptv[i].count;
            s->ptv[i] = (need){from, l->awaited[from]};
        }
        s->nstv = fc.nstv;
        s->stv = xmalloc((fc.nstv ? fc.nstv : 1) * sizeof *s->stv);
        for (uint32_t i = 0; i < fc.nstv; i++)
            s->stv[i] = fc.stv[i] < e->cpus ? fc.stv[i] : 0;
        if (l->tail)
            l->tail->next = s;
        else
            l->head = s;
        l->tail = s;
        if (++e->held > e->peak)
            e->peak = e->held;
    }
}

static int tokens_arrived(const engine *e, uint32_t q, const slot *s)
{
    for (uint32_t i = 0; i < s->nptv; i++)
        if (e->sent[(uint64_t)s->ptv[i].from * e->cpus + q] < s->ptv[i].total)
            return 0;
    return 1;
}

/* The runnable lane head that was read first, or NULL. */
static slot *pick(engine *e)
{
    slot *best = NULL;
    for (uint32_t q = 0; q < e->cpus; q++) {
        slot *s = e->lanes[q].head;
        if (s && !s->running && (!best || s->c.seq < best->c.seq) && tokens_arrived(e, q, s))
            best = s;
    }
    return best;
}

static void complete(engine *e, slot *s)
{
    uint32_t p = s->c.cpu < e->cpus ? s->c.cpu : 0;
    lane *l = &e->lanes[p];
    l->head = s->next;
    if (!l->head)
        l->tail = NULL;
    for (uint32_t i = 0; i < s->nstv; i++)
        e->sent[(uint64_t)p * e->cpus + s->stv[i]]++;
    e->held--;
    e->chunks++;
    e->insns += s->c.cs;
    free(s->ptv);
    free(s->stv);
    free(s);
    atomic_fetch_add_explicit(&e->gen, 1, memory_order_relaxed);
    if (e->progress && e->chunks >= e->next_progress) {
        e->next_progress = e->chunks + 256;
        e->progress(e->pctx, e->chunks, e->insns);
    }
}

/* Nothing runs and nothing can: name the chunks that wait for tokens. */
static void deadlock(engine *e)
{
    char msg[2048];
    size_t n = (size_t)snprintf(msg, sizeof msg, "replay deadlock: tokens that can never arrive:");
    int shown = 0;
    for (uint32_t q = 0; q < e->cpus && n < sizeof msg; q++) {
        slot *s = e->lanes[q].head;
        if (!s)
            continue;
        for (uint32_t i = 0; i < s->nptv && n < sizeof msg; i++) {
            uint64_t have = e->sent[(uint64_t)s->ptv[i].from * e->cpus + q];
            if (have >= s->ptv[i].total)
                continue;
            if (shown++ < 6)
                n += (size_t)snprintf(msg + n, sizeof msg - n,
                                      " cpu %u chunk %" PRIu64 " (log record %" PRIu64
                                      ", thread %u) awaits %" PRIu64 " token(s) from cpu %u, which "
                                      "sent %" PRIu64 ";",
                                      q, s->c.lane_index, s->c.seq, s->c.tid,
                                      s->ptv[i].total - have, s->ptv[i].from, have);
        }
    }
    if (n < sizeof msg && shown > 6)
        snprintf(msg + n, sizeof msg - n, " and %d more", shown - 6);
    fail(e, RP_DEADLOCK, msg);
}

typedef struct worker_arg {
    engine *e;
    unsigned w;
} worker_arg;

static void *worker(void *arg)
{
    engine *e = ((worker_arg *)arg)->e;
    unsigned w = ((worker_arg *)arg)->w;
    char msg[2048];
    pthread_mutex_lock(&e->mu);
    for (;;) {
        if (e->stop)
            break;
        fill(e);
        slot *s = pick(e);
        if (s) {
            s->running = 1;
            e->running++;
            rp_chunk c = s->c;
            pthread_mutex_unlock(&e->mu);
            double t0 = now_s();
            int rc = e->fn(e->ctx, w, &c, msg, sizeof msg);
            double t1 = now_s();
            pthread_mutex_lock(&e->mu);
            e->running--;
            e->busy += t1 - t0;
            if (rc < 0) {
                fail(e, RP_FAILED, msg);
                break;
            }
            complete(e, s);
            if (e->waiting)
                pthread_cond_broadcast(&e->cv);
            continue;
        }
        if (e->eof && e->held == 0) {
            e->stop = 1;
            pthread_cond_broadcast(&e->cv);
            break;
        }
        if (e->running == 0 && (e->eof || e->held >= e->window)) {
            deadlock(e);
            break;
        }
        /* Wait for a completion: spin briefly, then block. */
        uint64_t g = atomic_load_explicit(&e->gen, memory_order_relaxed);
        pthread_mutex_unlock(&e->mu);
        for (int i = 0; i < 2000 && atomic_load_explicit(&e->gen, memory_order_relaxed) == g; i++)
            CPU_RELAX();
        pthread_mutex_lock(&e->mu);
        if (atomic_load_explicit(&e->gen, memory_order_relaxed) != g || e->stop)
            continue;
        e->waiting++;
        pthread_cond_wait(&e->cv, &e->mu);
        e->waiting--;
    }
    pthread_mutex_unlock(&e->mu);
    return NULL;
}

int rp_replay(rnr_reader *log, unsigned workers, uint64_t window, rp_exec_fn fn, void *ctx,
              void (*progress)(void *pctx, uint64_t chunks, uint64_t instructions), void *pctx,
              rp_result *out)
{
    memset(out, 0, sizeof *out);
    const rnr_log_header *h = rnr_reader_header(log);
    if (h->kind < RNR_LOG_MAXPAR || h->kind > RNR_LOG_STSERIAL) {
        out->status = RP_BAD_LOG;
        snprintf(out->message, sizeof out->message, "%s: a %s log, not a final log",
                 rnr_reader_name(log), rnr_log_kind_name(h->kind));
        return out->status;
    }
    engine e;
    memset(&e, 0, sizeof e);
    pthread_mutex_init(&e.mu, NULL);
    pthread_cond_init(&e.cv, NULL);
    e.r = log;
    e.cpus = rnr_log_kind_has_tokens(h->kind) ? h->cpus : 1;
    e.lanes = xcalloc(e.cpus, sizeof *e.lanes);
    for (uint32_t q = 0; q < e.cpus; q++)
        e.lanes[q].awaited = xcalloc(e.cpus, sizeof *e.lanes[q].awaited);
    e.sent = xcalloc((size_t)e.cpus * e.cpus, sizeof *e.sent);
    e.window = window ? window : 65536;
    e.res = out;
    e.fn = fn;
    e.ctx = ctx;
    e.progress = progress;
    e.pctx = pctx;
    if (workers < 1)
        workers = 1;
    pthread_t *t = xcalloc(workers, sizeof *t);
    worker_arg *args = xcalloc(workers, sizeof *args);
    double t0 = now_s();
    unsigned started = 0;
    for (unsigned w = 0; w < workers; w++) {
        args[w] = (worker_arg){&e, w};
        if (pthread_create(&t[w], NULL, worker, &args[w]) != 0)
            break;
        started++;
    }
    if (started == 0) {
        out->status = RP_FAILED;
        snprintf(out->message, sizeof out->message, "cannot start a worker thread");
    }
    for (unsigned w = 0; w < started; w++)
        pthread_join(t[w], NULL);
    out->wall_seconds = now_s() - t0;
    out->busy_seconds = e.busy;
    out->chunks = e.chunks;
    out->instructions = e.insns;
    out->peak_window = e.peak;
    for (uint32_t q = 0; q < e.cpus; q++) {
        for (slot *s = e.lanes[q].head, *n; s; s = n) {
            n = s->next;
            free(s->ptv);
            free(s->stv);
            free(s);
        }
        free(e.lanes[q].awaited);
    }
    free(e.lanes);
    free(e.sent);
    free(t);
    free(args);
    pthread_cond_destroy(&e.cv);
    pthread_mutex_destroy(&e.mu);
    return out->status;
}
