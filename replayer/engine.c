/* replayer/engine.c: the token-passing parallel replay engine: a reader
 * (the calling thread) streams the final log into a bounded window, W
 * workers run every chunk once its lane predecessor has finished and its
 * tokens have arrived; among the runnable chunks, the oldest in log order
 * first (so the window's start moves as fast as it can, and one worker
 * replays a topological log in its own order). docs/replayer.md tells the
 * whole story.
 *
 * Memory ordering, and why chunks that may run concurrently never race.
 *
 * Shared state of the engine lives under one mutex (`lock`), except the
 * token counters `received[p * lanes + q]` (tokens lane p has sent to lane
 * q), which are C11 atomics: a worker adds a chunk's tokens right after
 * the exec function returned, with memory_order_release and without the
 * lock; whoever checks whether a chunk may start loads them with
 * memory_order_acquire.
 *
 * Claim: if chunk X is a successor of chunk A in the replay DAG (lane
 * order and token edges, transitively), A's exec call happens before X's.
 *  - Lane edge A -> X (same lane, consecutive): A's finish is recorded
 *    under the lock after A's exec returned; X is queued only after that
 *    (by a check under the lock that sees A finished) and taken from the
 *    queue under the lock: unlock/lock pairs order A's exec before X's.
 *  - Token edge A -> X (A on p is the sender of the j-th token p sends to
 *    q, X on q awaits it): X is queued only once an acquire load of
 *    received[p][q] returned at least X's threshold >= j. The counter is
 *    only changed by release fetch_adds, one per token, each after its
 *    sender's exec; an RMW continues every earlier release sequence, so
 *    the acquire load synchronizes with all the fetch_adds up to the value
 *    it read, among them A's. The checker then queues X under the lock and
 *    X's worker takes it under the lock. The tokens p sends to q are added
 *    in p's lane order (p's chunks run one at a time, in order), so the
 *    first j tokens are exactly those of p's first j senders to q: the
 *    counter reaching the threshold means every awaited sender has run.
 *  - Transitivity of happens-before gives the claim for paths.
 * The DAG holds every recorded dependence (DESIGN §7: the backend keeps or
 * implies each one), so two chunks with conflicting accesses to a guest
 * cache line (one of them a write) are ordered by a path, and their exec
 * calls by happens-before: chunks that may run concurrently only share
 * lines they both read, and guest memory written by a chunk is visible to
 * all its successors whatever host thread runs them. Serial and StSerial
 * logs are one lane: a total order, one chunk at a time.
 *
 * The rest (window slots, lanes, ready queue, counters of the result) is
 * only touched under the lock, or, for window slots not yet published, by
 * the reader alone. `stop` and `ready_hint` are atomic hints read without
 * the lock by spinning workers; every decision is taken again under it. */
#include "rru/clock.h"
#include "replayer/engine.h"

#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define NONE UINT64_MAX
#define SLOT_PAGE 1024u         /* window slots are allocated in pages of this many */
#define READ_BATCH 64u          /* chunks the reader publishes at once (at most) */
#define SPIN_SECONDS 10e-6      /* an idle worker spins this long before it sleeps (about a wake-up's cost) */
#define REFILL_MAX 4096u        /* a full window is refilled once this much is free */
#define REPORT_HEADS 6u         /* waiting chunks a deadlock message names */

/* Tokens a chunk awaits from one lane, as a cumulative threshold: the
 * chunk may start once received[from][its lane] >= threshold. */
typedef struct token_wait {
    uint32_t from;
    uint32_t count;             /* the PTV entry */
    uint64_t threshold;
} token_wait;

/* A chunk in the window. Filled by the reader while unpublished; after
 * publication only read (and next_in_lane, done changed under the lock). */
typedef struct slot {
    rp_chunk c;
    uint64_t next_in_lane;      /* seq of the lane's next chunk, NONE until it is read */
    uint32_t nwait, nstv;
    uint32_t wait_cap, stv_cap;
    token_wait *wait;           /* predecessor token vector as thresholds */
    uint32_t *stv;              /* successor token vector */
    int done;                   /* finished (until the window passes it) */
} slot;

/* One recorded CPU's chunks, in log order. */
typedef struct lane {
    uint64_t head, tail;        /* oldest unfinished chunk and newest read; NONE = none */
    int busy;                   /* head is in the ready queue or running */
} lane;

typedef struct engine engine;

typedef struct worker {
    engine *e;
    unsigned id;
    pthread_t thread;
    pthread_cond_t wake;
    int asleep;                 /* on the sleepers stack, not signalled yet */
    int short_chunk;            /* runs a chunk of fewer than handoff_insns instructions */
    double busy;                /* seconds not idle: running chunks and taking the next */
} worker;

struct engine {
    /* Fixed before the workers start. */
    uint32_t lanes;
    uint64_t window;
    unsigned nworkers, host_cpus;
    rp_exec_fn fn;
    void *ctx;
    int debug;
    uint64_t handoff_insns;         /* see handoff_ok */
    double t0;
    _Atomic uint64_t *received;     /* [from * lanes + to] tokens sent so far */
    /* Window slots in pages of `page` slots: chunk seq lives in page
     * seq / page, at ring[(seq / page) % nring]. The window spans at most
     * nring pages, so a position is free again when its page is. Pages
     * wholly behind the window's start go back to a free stack, and the
     * reader takes from there before it allocates: the pages held follow
     * how far the window is filled, not how long the log is. Only the
     * reader installs and recycles pages, outside the lock: the workers
     * look at slots in [base, nread) only, which are in installed pages
     * the reader does not touch (docs/replayer.md, "Memory"). */
    uint64_t page, nring;
    slot **ring;
    slot **free_pages;
    uint64_t nfree, pages_allocated;
    uint64_t page_old, page_next;   /* installed pages: [page_old, page_next) */
    worker *workers;

    _Atomic int stop;               /* set under the lock; read anywhere */
    _Atomic unsigned ready_hint;    /* = handoff_ok(), for spinning workers */

    pthread_mutex_t lock;
    pthread_cond_t coord;           /* the reader: window space, quiescence, stop */
    lane *lane;
    uint64_t *ready;                /* runnable chunks (seq), a min-heap; at most one per lane */
    uint32_t nready;
    uint64_t ready_insns;           /* instructions of the ready chunks */
    uint64_t base;                  /* oldest unfinished chunk: the window is [base, base + window) */
    uint64_t nread;                 /* chunks published by the reader */
    uint64_t finished, instructions, tokens;
    unsigned running;               /* chunks taken from the queue and not finished */
    unsigned running_short;         /* of them, those with fewer than handoff_insns instructions */
    unsigned spinning;              /* idle workers spinning without the lock */
    unsigned waking;                /* workers signalled that have not resumed yet */
    worker **sleepers;              /* stack of sleeping workers */
    unsigned nsleepers;
    int coord_waiting;
    uint64_t coord_want_base;       /* wake the reader when base reaches this */
    int status;
    char message[RP_MSG_MAX];
};

static void *xalloc(void *p, size_t n)
{
    p = realloc(p, n ? n : 1);
    if (!p) {
        fputs("rnr: out of memory\n", stderr);
        abort();
    }
    return p;
}

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#else
    atomic_signal_fence(memory_order_seq_cst);
#endif
}

static unsigned host_cpus(void)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0)
        return (unsigned)CPU_COUNT(&set);
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (unsigned)n : 1;
}

const char *rp_status_name(int status)
{
    switch (status) {
    case RP_OK: return "ok";
    case RP_EXEC_FAILED: return "exec failed";
    case RP_BAD_LOG: return "bad log";
    case RP_DEADLOCK: return "deadlock";
    case RP_ERROR: return "error";
    default: return "?";
    }
}

static slot *slot_at(const engine *e, uint64_t seq)
{
    return &e->ring[seq / e->page % e->nring][seq % e->page];
}

/* Wakes every sleeping worker and the reader (the engine stops). Under
 * the lock. */
static void wake_everyone(engine *e)
{
    while (e->nsleepers) {
        worker *w = e->sleepers[--e->nsleepers];
        w->asleep = 0;
        e->waking++;
        pthread_cond_signal(&w->wake);
    }
    pthread_cond_signal(&e->coord);
}

/* The first failure wins; the engine stops. Under the lock. */
static void fail(engine *e, int status, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void fail(engine *e, int status, const char *fmt, ...)
{
    if (e->status == RP_OK) {
        e->status = status;
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(e->message, sizeof e->message, fmt, ap);
        va_end(ap);
    }
    atomic_store(&e->stop, 1);
    wake_everyone(e);
}

/* ---- scheduling (all under the lock) ---- */

static int tokens_arrived(const engine *e, uint32_t lane_id, const slot *s)
{
    for (uint32_t i = 0; i < s->nwait; i++) {
        const token_wait *t = &s->wait[i];
        if (atomic_load_explicit(&e->received[(uint64_t)t->from * e->lanes + lane_id],
                                 memory_order_acquire) < t->threshold)
            return 0;
    }
    return 1;
}

/* Whether a worker may take a ready chunk now: fewer chunks run than the
 * host has cores, and no short chunk runs or the ready chunks hold at least
 * handoff_insns instructions between them. Every worker asks, the one that
 * has just finished a chunk too.
 * Why the cores: a chunk never waits for anything once started, so more
 * chunks at once than cores only lets the host preempt a worker in the
 * middle of a chunk that others wait for.
 * Why the threshold: handing a chunk to another worker costs a wake-up, or at least
 * moving the chunk's thread state and guest lines between host cores:
 * microseconds, as long as thousands of instructions take. When the running
 * chunk is shorter than that, its worker is back for the ready chunks
 * sooner than another would start them, and two workers trading tiny
 * chunks are slower than one (docs/replayer.md, "Hand-offs").
 * Progress: a ready chunk is left waiting only while a chunk runs
 * (running >= host_cpus >= 1, or running_short > 0), and that chunk's
 * worker, once it finishes, asks again: nready > 0 implies that a chunk is
 * running, so the engine is never quiescent with chunks ready (the deadlock
 * check stays exact), and once no chunk runs (running = running_short = 0)
 * any worker may take the waiting ones. */
static int handoff_ok(const engine *e)
{
    return e->nready && e->running < e->host_cpus &&
           (e->running_short == 0 || e->ready_insns >= e->handoff_insns);
}

/* The hint is set once per critical section that changed the queue or
 * the counters, just before the lock is released (worker_main, idle,
 * publish): set inside one, it would show a spinner a transient state (a
 * finishing worker has queued successors but not yet taken one itself),
 * and the spinner would take the lock only to find nothing for it, on
 * every chunk. It is a hint only: a spinner decides again under the lock,
 * and sleepers are woken by wake_workers, so a stale hint delays nothing
 * beyond the spin. */
static void update_hint(engine *e)
{
    atomic_store_explicit(&e->ready_hint, (unsigned)handoff_ok(e), memory_order_relaxed);
}

/* The runnable chunks: a binary min-heap by seq (the policy: the oldest
 * runnable chunk in log order runs first). */
static void ready_push(engine *e, uint64_t seq)
{
    uint32_t i = e->nready++;
    for (; i > 0 && e->ready[(i - 1) / 2] > seq; i = (i - 1) / 2)
        e->ready[i] = e->ready[(i - 1) / 2];
    e->ready[i] = seq;
    e->ready_insns += slot_at(e, seq)->c.cs;
}

static uint64_t ready_pop(engine *e)
{
    uint64_t top = e->ready[0], last = e->ready[--e->nready];
    uint32_t i = 0;
    for (;;) {
        uint32_t c = 2 * i + 1;
        if (c >= e->nready)
            break;
        if (c + 1 < e->nready && e->ready[c + 1] < e->ready[c])
            c++;
        if (e->ready[c] >= last)
            break;
        e->ready[i] = e->ready[c];
        i = c;
    }
    e->ready[i] = last;
    e->ready_insns -= slot_at(e, top)->c.cs;
    return top;
}

/* Queues LANE's oldest unfinished chunk if it may start now. */
static void check_lane(engine *e, uint32_t lane_id)
{
    lane *l = &e->lane[lane_id];
    if (l->busy || l->head == NONE || !tokens_arrived(e, lane_id, slot_at(e, l->head)))
        return;
    l->busy = 1;
    ready_push(e, l->head);
}

/* Wakes sleeping workers for the ready chunks that no awake worker will
 * take, if an idle worker may take them (handoff_ok), and no more than
 * there are host cores free of running, spinning and waking workers: a
 * worker woken beyond those finds the cores taken (handoff_ok false) and
 * sleeps again, having cost a wake-up and, moving its hart between cores,
 * the cache lines of the workers that do run.
 * Progress (with handoff_ok's): when no room is left, running + spinning
 * + waking >= host_cpus >= 1, and each of those asks handoff_ok again under
 * the lock (a running worker when its chunk ends, a spinner when its spin
 * ends, a woken worker when it resumes); whichever asks once no chunk runs
 * takes the ready chunks, so they are never left without a taker. */
static void wake_workers(engine *e)
{
    if (!handoff_ok(e))
        return;
    unsigned takers = e->spinning + e->waking;
    unsigned busy = e->running + takers;
    unsigned room = e->host_cpus > busy ? e->host_cpus - busy : 0;
    while (e->nready > takers && room && e->nsleepers) {
        room--;
        worker *w = e->sleepers[--e->nsleepers];
        w->asleep = 0;
        e->waking++;
        takers++;
        pthread_cond_signal(&w->wake);
    }
}

/* Nothing runs and nothing may start: only the reader can change that. */
static int quiescent(const engine *e)
{
    return e->running == 0 && e->nready == 0 && e->finished < e->nread;
}

static void wake_reader(engine *e)
{
    if (e->coord_waiting && (e->base >= e->coord_want_base || e->finished == e->nread || quiescent(e)))
        pthread_cond_signal(&e->coord);
}

/* Chunk S ran (its tokens were added): its lane moves on, its successors
 * may start, the window may slide. */
static void finish(engine *e, slot *s)
{
    lane *l = &e->lane[s->c.cpu];
    l->busy = 0;
    l->head = s->next_in_lane;
    if (l->head == NONE)
        l->tail = NONE;
    check_lane(e, s->c.cpu);
    for (uint32_t i = 0; i < s->nstv; i++)
        check_lane(e, s->stv[i]);
    s->done = 1;
    while (e->base < e->nread && slot_at(e, e->base)->done)
        e->base++;
    e->finished++;
    e->instructions += s->c.cs;
    e->tokens += s->nstv;
}

/* ---- workers ---- */

/* Runs S (taken by W: counted in running) and finishes it. Returns with
 * the lock held: 0, or -1 when it failed (the engine stops). */
static int execute(engine *e, worker *w, slot *s)
{
    char msg[RP_MSG_MAX];
    msg[0] = '\0';
    if (e->debug)
        fprintf(stderr, "replayer: worker %u starts seq %llu cpu %u chunk %llu tid %u cs %llu\n", w->id,
                (unsigned long long)s->c.seq, s->c.cpu, (unsigned long long)s->c.lane_index, s->c.tid,
                (unsigned long long)s->c.cs);
    int rc = e->fn(e->ctx, w->id, &s->c, msg, sizeof msg);
    msg[sizeof msg - 1] = '\0';
    if (rc != 0) {
        pthread_mutex_lock(&e->lock);
        e->running--;
        e->running_short -= (unsigned)w->short_chunk;
        update_hint(e);
        if (msg[0])
            fail(e, RP_EXEC_FAILED, "%s", msg);
        else
            fail(e, RP_EXEC_FAILED, "chunk %llu (cpu %u, chunk %llu of its lane, tid %u) failed",
                 (unsigned long long)s->c.seq, s->c.cpu, (unsigned long long)s->c.lane_index, s->c.tid);
        return -1;
    }
    /* Release: the chunk's effects happen before any acquire load that
     * sees these tokens (see the top of the file). */
    for (uint32_t i = 0; i < s->nstv; i++)
        atomic_fetch_add_explicit(&e->received[(uint64_t)s->c.cpu * e->lanes + s->stv[i]], 1,
                                  memory_order_release);
    pthread_mutex_lock(&e->lock);
    e->running--;
    e->running_short -= (unsigned)w->short_chunk;
    finish(e, s);
    return 0;
}

/* An idle worker: spins a little if a host core is free for it, then
 * sleeps until a chunk is queued for it or the engine stops. Called and
 * returns with the lock held. */
static void idle(engine *e, worker *w)
{
    update_hint(e);
    if (e->running + e->spinning < e->host_cpus) {
        e->spinning++;
        pthread_mutex_unlock(&e->lock);
        double until = host_seconds() + SPIN_SECONDS;
        for (unsigned i = 1;; i++) {
            if (atomic_load_explicit(&e->ready_hint, memory_order_relaxed) ||
                atomic_load_explicit(&e->stop, memory_order_relaxed))
                break;
            cpu_relax();
            if (i % 32 == 0 && host_seconds() > until)
                break;
        }
        pthread_mutex_lock(&e->lock);
        e->spinning--;
        if (handoff_ok(e) || atomic_load(&e->stop))
            return;
    }
    w->asleep = 1;
    e->sleepers[e->nsleepers++] = w;
    wake_reader(e);
    while (w->asleep && !atomic_load(&e->stop))
        pthread_cond_wait(&w->wake, &e->lock);
    if (w->asleep) {
        /* Stopped while nobody popped it: leave the stack. */
        for (unsigned i = 0; i < e->nsleepers; i++) {
            if (e->sleepers[i] == w) {
                e->sleepers[i] = e->sleepers[--e->nsleepers];
                break;
            }
        }
        w->asleep = 0;
    } else {
        e->waking--;
    }
}

static void *worker_main(void *arg)
{
    worker *w = arg;
    engine *e = w->e;
    /* Busy time is measured from leaving idle() to entering it again:
     * two clock reads per run of chunks, none per chunk (at 50 instructions
     * a chunk, reading the clock around each took 9 % of a replay). */
    double active_since = 0;
    int active = 0;
    pthread_mutex_lock(&e->lock);
    while (!atomic_load(&e->stop)) {
        if (!handoff_ok(e)) {
            if (active) {
                w->busy += host_seconds() - active_since;
                active = 0;
            }
            idle(e, w);
            continue;
        }
        if (!active) {
            active_since = host_seconds();
            active = 1;
        }
        slot *s = slot_at(e, ready_pop(e));
        e->running++;
        w->short_chunk = s->c.cs < e->handoff_insns;
        e->running_short += (unsigned)w->short_chunk;
        update_hint(e);
        wake_workers(e);
        pthread_mutex_unlock(&e->lock);
        if (execute(e, w, s) == 0)
            wake_reader(e);
    }
    if (active)
        w->busy += host_seconds() - active_since;
    pthread_mutex_unlock(&e->lock);
    return NULL;
}

/* ---- the reader (the calling thread) ---- */

typedef struct reader_state {
    uint64_t *lane_read;        /* chunks read per lane */
    uint64_t *awaited;          /* [from * lanes + to] PTV sums so far */
} reader_state;

/* Installs the page of chunk SEQ (its first). Pages wholly below BASE
 * (the window's start as the reader last saw it) are recycled first.
 * Position: SEQ < BASE + window, so the pages in use lie in
 * [BASE / page, SEQ / page], fewer than nring, and the page that last held
 * SEQ's position, SEQ / page - nring, is below BASE / page: recycled. */
static void install_page(engine *e, uint64_t seq, uint64_t base)
{
    for (; e->page_old < e->page_next && e->page_old < base / e->page; e->page_old++) {
        slot **pos = &e->ring[e->page_old % e->nring];
        e->free_pages[e->nfree++] = *pos;
        *pos = NULL;
    }
    slot *p;
    if (e->nfree) {
        p = e->free_pages[--e->nfree];
    } else {
        p = xalloc(NULL, e->page * sizeof *p);
        memset(p, 0, e->page * sizeof *p);
        e->pages_allocated++;
    }
    e->ring[seq / e->page % e->nring] = p;
    e->page_next = seq / e->page + 1;
}

/* Copies record C as chunk SEQ into its (free) window slot; BASE is the
 * window's start as the reader last saw it. */
static void fill(engine *e, reader_state *rs, uint64_t seq, uint64_t base, const rnr_final_chunk *c, int serial)
{
    if (seq / e->page == e->page_next)
        install_page(e, seq, base);
    slot *s = slot_at(e, seq);
    uint32_t lane_id = serial ? 0 : c->cpu;
    s->c.seq = seq;
    s->c.cpu = lane_id;
    s->c.tid = c->tid;
    s->c.cs = c->cs;
    s->c.lane_index = rs->lane_read[lane_id]++;
    s->next_in_lane = NONE;
    s->done = 0;
    s->nwait = serial ? 0 : c->nptv;
    s->nstv = serial ? 0 : c->nstv;
    if (s->nwait > s->wait_cap) {
        s->wait_cap = s->nwait;
        s->wait = xalloc(s->wait, s->wait_cap * sizeof *s->wait);
    }
    if (s->nstv > s->stv_cap) {
        s->stv_cap = s->nstv;
        s->stv = xalloc(s->stv, s->stv_cap * sizeof *s->stv);
    }
    for (uint32_t i = 0; i < s->nwait; i++) {
        uint64_t *sum = &rs->awaited[(uint64_t)c->ptv[i].cpu * e->lanes + lane_id];
        *sum += c->ptv[i].count;
        s->wait[i] = (token_wait){ c->ptv[i].cpu, c->ptv[i].count, *sum };
    }
    if (s->nstv)
        memcpy(s->stv, c->stv, s->nstv * sizeof *s->stv);
}

/* Hands the filled slots [e->nread, upto) to the workers. Under the lock. */
static void publish(engine *e, uint64_t upto)
{
    if (upto == e->nread)
        return;
    for (uint64_t seq = e->nread; seq < upto; seq++) {
        lane *l = &e->lane[slot_at(e, seq)->c.cpu];
        if (l->head == NONE) {
            l->head = l->tail = seq;
        } else {
            slot_at(e, l->tail)->next_in_lane = seq;
            l->tail = seq;
        }
    }
    uint64_t from = e->nread;
    e->nread = upto;
    for (uint64_t seq = from; seq < upto; seq++) {
        uint32_t lane_id = slot_at(e, seq)->c.cpu;
        if (e->lane[lane_id].head == seq)
            check_lane(e, lane_id);
    }
    update_hint(e);
    wake_workers(e);
}

/* Names the chunks that wait forever. Under the lock, with nothing
 * running and nothing runnable. */
static void report_deadlock(engine *e, int window_full)
{
    uint64_t heads[REPORT_HEADS];
    uint32_t nheads = 0, nlanes = 0;
    /* The oldest lane heads, by seq. */
    for (uint32_t q = 0; q < e->lanes; q++) {
        uint64_t h = e->lane[q].head;
        if (h == NONE)
            continue;
        nlanes++;
        uint32_t at = nheads < REPORT_HEADS ? nheads++ : REPORT_HEADS;
        while (at > 0 && heads[at - 1] > h) {
            if (at < REPORT_HEADS)
                heads[at] = heads[at - 1];
            at--;
        }
        if (at < REPORT_HEADS)
            heads[at] = h;
    }
    char text[RP_MSG_MAX];
    size_t n = 0;
#define PUT(...) do { if (n < sizeof text) n += (size_t)snprintf(text + n, sizeof text - n, __VA_ARGS__); } while (0)
    PUT("deadlock: %llu chunks can never run (%s; %llu of %llu read ran)",
        (unsigned long long)(e->nread - e->finished),
        window_full ? "the window is full and none of it can run: tokens never sent, or the log is "
                      "not in a topological order within the window"
                    : "the log has ended and tokens they await were never sent",
        (unsigned long long)e->finished, (unsigned long long)e->nread);
    for (uint32_t i = 0; i < nheads; i++) {
        const slot *s = slot_at(e, heads[i]);
        PUT("%s cpu %u chunk %llu (record %llu, tid %u) awaits", i ? ";" : ":", s->c.cpu,
            (unsigned long long)s->c.lane_index, (unsigned long long)s->c.seq, s->c.tid);
        for (uint32_t k = 0, shown = 0; k < s->nwait; k++) {
            const token_wait *t = &s->wait[k];
            uint64_t got = atomic_load_explicit(&e->received[(uint64_t)t->from * e->lanes + s->c.cpu],
                                                memory_order_acquire);
            if (got >= t->threshold)
                continue;
            PUT("%s %llu more token%s from cpu %u (counter cpu %u -> cpu %u: %llu sent, %llu needed)",
                shown++ ? "," : "", (unsigned long long)(t->threshold - got), t->threshold - got == 1 ? "" : "s",
                t->from, t->from, s->c.cpu, (unsigned long long)got, (unsigned long long)t->threshold);
        }
    }
    if (nlanes > nheads)
        PUT("; and %u more lanes", nlanes - nheads);
#undef PUT
    fail(e, RP_DEADLOCK, "%s", text);
}

typedef struct progress_clock {
    double every, next;
} progress_clock;

static void progress_now(engine *e, const rp_options *o, progress_clock *pc, int locked, int force)
{
    if (!o->progress)
        return;
    double t = host_seconds();
    if (!force && t < pc->next)
        return;
    pc->next = t + pc->every;
    if (!locked)
        pthread_mutex_lock(&e->lock);
    rp_progress p = { e->nread, e->finished, e->instructions, t - e->t0 };
    pthread_mutex_unlock(&e->lock);
    o->progress(o->progress_ctx, &p);
    if (locked)
        pthread_mutex_lock(&e->lock);
}

/* The reader waits, under the lock, for window space (NEXT is the next
 * chunk it reads: it waits until the window has room for a refill from
 * there, or for any room once nothing can run without more chunks), or,
 * with NEXT = NONE at the end of the log, until everything read has run.
 * Also returns when the engine stops. A state nothing can change any more
 * is a deadlock, reported here. */
static void reader_wait(engine *e, const rp_options *o, progress_clock *pc, uint64_t next, uint64_t refill)
{
    uint64_t want_base = next == NONE ? NONE : next + refill - e->window;
    for (;;) {
        if (atomic_load(&e->stop))
            return;
        if (next == NONE ? e->finished == e->nread : e->base >= want_base)
            return;
        if (quiescent(e)) {
            if (next != NONE && e->base + e->window > next)
                return;
            report_deadlock(e, next != NONE);
            return;
        }
        e->coord_want_base = want_base;
        e->coord_waiting = 1;
        if (o->progress) {
            double until = pc->next;
            struct timespec ts = { (time_t)until, (long)((until - (double)(time_t)until) * 1e9) };
            if (ts.tv_nsec >= 1000000000L)
                ts.tv_nsec = 999999999L;
            pthread_cond_timedwait(&e->coord, &e->lock, &ts);
        } else {
            pthread_cond_wait(&e->coord, &e->lock);
        }
        e->coord_waiting = 0;
        progress_now(e, o, pc, 1, 0);
    }
}

static void read_log(engine *e, rnr_reader *r, const rp_options *o, progress_clock *pc, rp_result *out)
{
    int serial = !rnr_log_kind_has_tokens(rnr_reader_header(r)->kind);
    reader_state rs;
    rs.lane_read = xalloc(NULL, e->lanes * sizeof *rs.lane_read);
    memset(rs.lane_read, 0, e->lanes * sizeof *rs.lane_read);
    rs.awaited = xalloc(NULL, (size_t)e->lanes * e->lanes * sizeof *rs.awaited);
    memset(rs.awaited, 0, (size_t)e->lanes * e->lanes * sizeof *rs.awaited);
    uint64_t refill = e->window / 2 < REFILL_MAX ? e->window / 2 : REFILL_MAX;
    if (refill == 0)
        refill = 1;
    /* Chunks [published, next) are filled, not yet handed on; slots below
     * base_seen + window are free to fill (base_seen: the window's start
     * when the reader last looked). */
    uint64_t next = 0, published = 0, base_seen = 0;
    int rc = 1;
    while (!atomic_load_explicit(&e->stop, memory_order_relaxed)) {
        if (next == base_seen + e->window) {
            pthread_mutex_lock(&e->lock);
            publish(e, next);
            published = next;
            reader_wait(e, o, pc, next, refill);
            base_seen = e->base;
            pthread_mutex_unlock(&e->lock);
            continue;
        }
        rnr_final_chunk c;
        rc = rnr_reader_next_final(r, &c);
        if (rc <= 0)
            break;
        fill(e, &rs, next++, base_seen, &c, serial);
        if (next - base_seen > out->peak_window)
            out->peak_window = next - base_seen;
        /* Hand on a batch, and always before a call that may wait on the
         * stream. */
        if (next - published >= READ_BATCH || rnr_reader_buffered(r) == 0) {
            pthread_mutex_lock(&e->lock);
            publish(e, next);
            published = next;
            base_seen = e->base;
            pthread_mutex_unlock(&e->lock);
            progress_now(e, o, pc, 0, 0);
        }
    }
    pthread_mutex_lock(&e->lock);
    publish(e, next);
    if (rc < 0)
        fail(e, RP_BAD_LOG, "%s", rnr_reader_error(r));
    else
        reader_wait(e, o, pc, NONE, 0);
    pthread_mutex_unlock(&e->lock);
    free(rs.lane_read);
    free(rs.awaited);
}

/* ---- set-up ---- */

int rp_replay_reader(rnr_reader *r, const rp_options *opts, rp_exec_fn fn, void *ctx, rp_result *out)
{
    rp_options o = { 0 };
    if (opts)
        o = *opts;
    memset(out, 0, sizeof *out);
    double t0 = host_seconds();
    const rnr_log_header *h = rnr_reader_header(r);
    if (!rnr_log_kind_is_chunks(h->kind) || h->kind == RNR_LOG_INITIAL) {
        snprintf(out->message, sizeof out->message, "%s: this is a%s %s log, not a final log", rnr_reader_name(r),
                 h->kind == RNR_LOG_INITIAL || h->kind == RNR_LOG_INPUT ? "n" : "", rnr_log_kind_name(h->kind));
        return out->status = RP_BAD_LOG;
    }
    engine e;
    memset(&e, 0, sizeof e);
    e.lanes = rnr_log_kind_has_tokens(h->kind) ? h->cpus : 1;
    e.window = o.window ? o.window : RP_WINDOW_DEFAULT;
    e.nworkers = o.workers ? o.workers : 1;
    e.host_cpus = host_cpus();
    e.fn = fn;
    e.ctx = ctx;
    e.debug = getenv("RNR_DEBUG_REPLAYER") != NULL;
    e.handoff_insns = o.handoff_insns ? o.handoff_insns : RP_HANDOFF_DEFAULT;
    e.t0 = t0;
    size_t pairs = (size_t)e.lanes * e.lanes;
    e.received = xalloc(NULL, pairs * sizeof *e.received);
    for (size_t i = 0; i < pairs; i++)
        atomic_init(&e.received[i], 0);
    e.page = e.window < SLOT_PAGE ? e.window : SLOT_PAGE;
    e.nring = (e.window + e.page - 1) / e.page + 1;
    e.ring = xalloc(NULL, e.nring * sizeof *e.ring);
    memset(e.ring, 0, e.nring * sizeof *e.ring);
    e.free_pages = xalloc(NULL, e.nring * sizeof *e.free_pages);
    e.lane = xalloc(NULL, e.lanes * sizeof *e.lane);
    for (uint32_t q = 0; q < e.lanes; q++)
        e.lane[q] = (lane){ NONE, NONE, 0 };
    e.ready = xalloc(NULL, e.lanes * sizeof *e.ready);
    e.sleepers = xalloc(NULL, e.nworkers * sizeof *e.sleepers);
    e.workers = xalloc(NULL, e.nworkers * sizeof *e.workers);
    atomic_init(&e.stop, 0);
    atomic_init(&e.ready_hint, 0);
    pthread_mutexattr_t ma;
    pthread_mutexattr_init(&ma);
#ifdef PTHREAD_ADAPTIVE_MUTEX_INITIALIZER_NP
    /* Critical sections are a few hundred nanoseconds: spin before sleeping. */
    pthread_mutexattr_settype(&ma, PTHREAD_MUTEX_ADAPTIVE_NP);
#endif
    pthread_mutex_init(&e.lock, &ma);
    pthread_mutexattr_destroy(&ma);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&e.coord, &ca);
    pthread_condattr_destroy(&ca);

    progress_clock pc = { o.progress_seconds > 0 ? o.progress_seconds : 0.5, t0 };
    pc.next = t0 + pc.every;
    unsigned started = 0;
    for (; started < e.nworkers; started++) {
        worker *w = &e.workers[started];
        w->e = &e;
        w->id = started;
        w->asleep = 0;
        w->busy = 0;
        pthread_cond_init(&w->wake, NULL);
        int err = pthread_create(&w->thread, NULL, worker_main, w);
        if (err) {
            pthread_cond_destroy(&w->wake);
            pthread_mutex_lock(&e.lock);
            fail(&e, RP_ERROR, "cannot start worker %u of %u: %s", started + 1, e.nworkers, strerror(err));
            pthread_mutex_unlock(&e.lock);
            break;
        }
    }
    if (started == e.nworkers)
        read_log(&e, r, &o, &pc, out);

    pthread_mutex_lock(&e.lock);
    atomic_store(&e.stop, 1);
    wake_everyone(&e);
    pthread_mutex_unlock(&e.lock);
    for (unsigned i = 0; i < started; i++) {
        pthread_join(e.workers[i].thread, NULL);
        pthread_cond_destroy(&e.workers[i].wake);
        out->busy_seconds_sum += e.workers[i].busy;
    }
    /* Only this thread is left: no lock needed from here. */
    out->read = e.nread;
    out->chunks = e.finished;
    out->instructions = e.instructions;
    out->tokens = e.tokens;
    out->status = e.status;
    memcpy(out->message, e.message, sizeof out->message);
    out->wall_seconds = host_seconds() - t0;
    if (o.progress) {
        rp_progress p = { e.nread, e.finished, e.instructions, out->wall_seconds };
        o.progress(o.progress_ctx, &p);
    }

    pthread_cond_destroy(&e.coord);
    pthread_mutex_destroy(&e.lock);
    out->slot_pages = e.pages_allocated;
    for (uint64_t i = 0; i < e.nring + e.nfree; i++) {
        slot *p = i < e.nring ? e.ring[i] : e.free_pages[i - e.nring];
        for (uint64_t k = 0; p && k < e.page; k++) {
            free(p[k].wait);
            free(p[k].stv);
        }
        free(p);
    }
    free(e.ring);
    free(e.free_pages);
    free(e.received);
    free(e.lane);
    free(e.ready);
    free(e.sleepers);
    free(e.workers);
    return out->status;
}

int rp_replay_log(const char *path, const rp_options *o, rp_exec_fn fn, void *ctx, rp_result *out)
{
    char err[RNR_ERR_MAX];
    rnr_reader *r = rnr_reader_open(path, err, sizeof err);
    if (!r) {
        memset(out, 0, sizeof *out);
        snprintf(out->message, sizeof out->message, "%s", err);
        return out->status = RP_BAD_LOG;
    }
    int rc = rp_replay_reader(r, o, fn, ctx, out);
    rnr_reader_close(r);
    return rc;
}
