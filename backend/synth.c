/* backend/synth.c: the synthetic execution that drives the RRU model
 * (rru/rru_unit.h) and the driver model that drains it.
 *
 * Time is in cycles. Each core has the time of its next event; the core
 * with the smallest goes next (ties: lowest cpu), so every RRU call is made
 * in nondecreasing time. An event of a core running a thread retires a
 * run of private instructions ending with one memory access; an access
 * that misses is a bus transaction, and at most one bus transaction
 * happens per cycle (an event that finds the bus taken moves to the next
 * free cycle), so bus times are distinct, as the RRU contract asks. */
#include "rru/alloc.h"
#include "backend/synth.h"
#include "formats/bundle.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "backend/passes.h"
#include "formats/manifest.h"

void synth_config_default(synth_config *c, uint32_t cpus)
{
    memset(c, 0, sizeof *c);
    c->cpus = cpus;
    c->threads = cpus;
    c->seed = 1;
    c->insns = 200000;
    c->shared_lines = 512;
    c->sharing = 0.002;
    c->write_frac = 0.3;
    c->private_lines = 256;
    c->private_rate = 0.01;
    c->os_cpus = 0;
    c->os_rate = 0.2;
    c->quantum = 0;
    c->block_rate = 0;
    c->block_cycles = 2000;
    c->syscall_rate = 0.02;
    c->miss_latency = 60;
    c->adversarial = 1;
    rru_config_default(&c->rru, cpus);
    c->rru.msp = 20000;
}

void synth_config_windowed(synth_config *c, uint64_t seed, uint64_t insns)
{
    synth_config_default(c, 8);
    c->seed = seed;
    c->insns = insns;
    c->rru.msp = 8000;
    c->rru.chunk_max = 2000;
}

int synth_set_sharing(synth_config *c, const char *level)
{
    if (strcmp(level, "low") == 0)
        c->sharing = 0.0005;
    else if (strcmp(level, "medium") == 0)
        c->sharing = 0.002;
    else if (strcmp(level, "high") == 0)
        c->sharing = 0.01;
    else
        return -1;
    return 0;
}

int synth_config_check(const synth_config *c, char *err, size_t errlen)
{
    const char *bad = NULL;
    if (c->cpus < 1 || c->cpus > SYNTH_MAX_CPUS)
        bad = "cpu count must be 1..64";
    else if (c->rru.cpus != c->cpus)
        bad = "RRU cpu count differs from the machine's";
    else if (c->threads < 1 || c->threads > 100000)
        bad = "thread count must be 1..100000";
    else if (c->os_cpus >= c->cpus)
        bad = "at least one cpu must run threads";
    else if (c->insns < 1 || c->insns > (1ull << 40))
        bad = "instructions per thread out of range";
    else if (c->shared_lines < 1 || c->private_lines < 1 || c->shared_lines > (1u << 24) ||
             c->private_lines > (1u << 20))
        bad = "line counts out of range";
    else if (!(c->sharing >= 0 && c->sharing <= 1) || !(c->private_rate >= 0 && c->private_rate <= 1) ||
             c->sharing + c->private_rate <= 0 || !(c->write_frac >= 0 && c->write_frac <= 1))
        bad = "access rates must be in 0..1 and not both 0";
    else if (!(c->os_rate >= 0 && c->os_rate <= 1000) || !(c->block_rate >= 0 && c->block_rate <= 1) ||
             !(c->syscall_rate >= 0 && c->syscall_rate <= 1000))
        bad = "event rates out of range";
    else if (c->miss_latency > 100000 || c->block_cycles > (1ull << 32) || c->quantum > (1ull << 40))
        bad = "latencies out of range";
    if (bad) {
        snprintf(err, errlen, "%s", bad);
        return -1;
    }
    return rru_config_check(&c->rru, err, errlen);
}

/* ---- state ---- */

enum { T_RUNNABLE, T_RUNNING, T_BLOCKED, T_DONE };

typedef struct thread {
    uint32_t tid;
    int state;
    uint64_t left;         /* instructions still to run */
    uint64_t tinsn;        /* monitored instructions run */
    uint64_t ready_at;     /* runnable from this time */
} thread;

typedef struct core {
    rru_unit *rru;
    uint64_t clock;        /* time of its next event */
    int thread;            /* index, -1 when it runs no thread */
    uint64_t quantum_end;
    uint64_t gap;          /* instructions before its next access (running) */
    uint64_t lane;         /* monitored instructions retired */
    uint64_t drain_at;     /* next planned drain of its RRU buffer, UINT64_MAX = none */
} core;

typedef struct reader_rec {
    truth_access a;
    int valid;
} reader_rec;

typedef struct line_state {
    uint64_t sharers;      /* cores holding the line */
    int16_t owner;         /* core holding it modified, -1 */
    truth_access last_write;
    int has_write;
    reader_rec *readers;   /* [cpus], reads since the last write; allocated on first read */
} line_state;

typedef struct sim {
    const synth_config *cfg;
    const synth_sink *sink;
    synth_result *res;
    uint64_t rng;
    core *cores;
    thread *threads;
    uint32_t *runq;        /* ring of thread indices */
    uint32_t runq_head, runq_n;
    line_state *lines;
    uint64_t nlines;
    uint64_t last_bus;     /* time of the last bus transaction + 1 */
    uint64_t now;
    uint64_t guard;        /* drain this long before a deadline at the latest */
    uint64_t tick_every;
    uint64_t next_global_tick;
    uint32_t done;
    uint32_t nblocked;
} sim;

static inline uint64_t rnd(sim *s)
{
    uint64_t z = (s->rng += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static inline double unif(sim *s) { return (double)(rnd(s) >> 11) * (1.0 / 9007199254740992.0); }
static inline uint64_t below(sim *s, uint64_t n) { return n ? rnd(s) % n : 0; }

/* A geometric count >= 1 with the given mean. */
static uint64_t geometric(sim *s, double mean)
{
    if (mean <= 1.0)
        return 1;
    double u = unif(s);
    double g = 1.0 + floor(log(1.0 - u) / log(1.0 - 1.0 / mean));
    return g > 1e12 ? (uint64_t)1e12 : (uint64_t)g;
}

static uint64_t jitter(sim *s, uint64_t mean)
{
    return mean ? mean / 2 + below(s, mean + 1) : 0;
}


/* ---- the driver: draining buffers ---- */

static void emit_chunk(void *ctx, const rnr_initial_chunk *c, uint64_t start)
{
    sim *s = ctx;
    s->res->chunks++;
    s->res->instructions += c->cs;
    s->sink->chunk(s->sink->ctx, c, start);
    pass_progress_tick(s->cfg->progress, s->res->chunks);
}

/* Plans the next drain of core C: eagerly now, or at a random time before
 * the deadline of its oldest chunk (keeping a guard for event spacing). */
static void plan_drain(sim *s, uint32_t c)
{
    core *k = &s->cores[c];
    uint64_t deadline = rru_deadline(k->rru);
    if (deadline == UINT64_MAX || rru_ready(k->rru) == 0) {
        k->drain_at = deadline == UINT64_MAX ? UINT64_MAX : s->now + s->guard / 4;
        return;
    }
    if (!s->cfg->adversarial) {
        k->drain_at = s->now;
        return;
    }
    uint64_t latest = deadline > s->guard ? deadline - s->guard : 0;
    k->drain_at = latest <= s->now ? s->now : s->now + below(s, latest - s->now + 1);
}

static void drain_core(sim *s, uint32_t c)
{
    core *k = &s->cores[c];
    uint32_t ready = rru_ready(k->rru);
    uint32_t n = ready;
    /* Adversarial: a random part of what is ready, but every chunk close
     * to its deadline. */
    if (s->cfg->adversarial && ready > 1 && below(s, 2)) {
        n = 1 + (uint32_t)below(s, ready);
        while (n < ready && rru_deadline(k->rru) <= s->now + s->guard)
            n++;
    }
    uint32_t got = 0;
    while (got < n) {
        uint32_t d = rru_drain(k->rru, 1, emit_chunk, s);
        if (!d)
            break;
        got++;
        if (got >= n && rru_ready(k->rru) && rru_deadline(k->rru) <= s->now + s->guard)
            n++;
    }
    plan_drain(s, c);
}

static void driver(sim *s)
{
    for (uint32_t c = 0; c < s->cfg->cpus; c++) {
        core *k = &s->cores[c];
        if (k->drain_at == UINT64_MAX && rru_buffered(k->rru))
            plan_drain(s, c);
        if (k->drain_at <= s->now || rru_deadline(k->rru) <= s->now + s->guard)
            drain_core(s, c);
    }
}

/* ---- ground truth ---- */

static void truth_emit(sim *s, uint32_t kind, uint64_t line, const truth_access *src,
                       const truth_access *dst)
{
    if (src->cpu == dst->cpu && src->tid == dst->tid)
        return;                          /* program order of one thread on one cpu */
    s->res->deps++;
    if (!s->sink->dep)
        return;
    truth_dep d = { kind, line, *src, *dst };
    s->sink->dep(s->sink->ctx, &d);
}

static void truth_access_done(sim *s, uint64_t line, const truth_access *a, int write)
{
    line_state *l = &s->lines[line];
    if (l->has_write)
        truth_emit(s, write ? TRUTH_WAW : TRUTH_RAW, line, &l->last_write, a);
    if (!write) {
        if (!l->readers)
            l->readers = xcalloc(s->cfg->cpus, sizeof *l->readers);
        l->readers[a->cpu].a = *a;
        l->readers[a->cpu].valid = 1;
        return;
    }
    if (l->readers) {
        for (uint32_t r = 0; r < s->cfg->cpus; r++) {
            if (l->readers[r].valid) {
                truth_emit(s, TRUTH_WAR, line, &l->readers[r].a, a);
                l->readers[r].valid = 0;
            }
        }
    }
    l->last_write = *a;
    l->has_write = 1;
}

/* ---- memory ---- */

/* Would core C's access miss (need a bus transaction)? */
static int misses(const sim *s, uint32_t c, uint64_t line, int write)
{
    const line_state *l = &s->lines[line];
    if (write)
        return l->owner != (int16_t)c;
    return !(l->sharers & (1ull << c));
}

/* A bus transaction of core C at time T: every other RRU snoops it; the
 * line changes state. */
static void bus(sim *s, uint32_t c, uint64_t t, uint64_t line, int write)
{
    for (uint32_t o = 0; o < s->cfg->cpus; o++)
        if (o != c)
            rru_snoop(s->cores[o].rru, t, c, line, write);
    line_state *l = &s->lines[line];
    if (write) {
        l->sharers = 1ull << c;
        l->owner = (int16_t)c;
    } else {
        l->sharers |= 1ull << c;
        l->owner = -1;
    }
    s->last_bus = t + 1;
    s->res->bus_transactions++;
}

/* ---- scheduling ---- */

static void runq_push(sim *s, uint32_t t)
{
    s->runq[(s->runq_head + s->runq_n) % s->cfg->threads] = t;
    s->runq_n++;
}

/* The first runnable thread that is ready now, removed from the queue; -1. */
static int runq_take(sim *s)
{
    for (uint32_t i = 0; i < s->runq_n; i++) {
        uint32_t at = (s->runq_head + i) % s->cfg->threads;
        uint32_t t = s->runq[at];
        if (s->threads[t].ready_at > s->now)
            continue;
        for (uint32_t j = i; j > 0; j--) {      /* close the gap, keeping order */
            uint32_t to = (s->runq_head + j) % s->cfg->threads;
            uint32_t from = (s->runq_head + j - 1) % s->cfg->threads;
            s->runq[to] = s->runq[from];
        }
        s->runq_head = (s->runq_head + 1) % s->cfg->threads;
        s->runq_n--;
        return (int)t;
    }
    return -1;
}

static uint64_t next_gap(sim *s)
{
    return geometric(s, 1.0 / (s->cfg->sharing + s->cfg->private_rate));
}

static void start_thread(sim *s, uint32_t c, uint32_t t)
{
    core *k = &s->cores[c];
    thread *th = &s->threads[t];
    th->state = T_RUNNING;
    k->thread = (int)t;
    k->quantum_end = s->cfg->quantum ? s->now + jitter(s, s->cfg->quantum) : UINT64_MAX;
    k->gap = next_gap(s);
    rru_enable(k->rru, s->now, th->tid);
}

/* Core C gives up its thread: it takes the next ready one or goes idle. */
static void schedule_next(sim *s, uint32_t c)
{
    core *k = &s->cores[c];
    k->thread = -1;
    int t = runq_take(s);
    if (t >= 0) {
        start_thread(s, c, (uint32_t)t);
    } else {
        rru_disable(k->rru, s->now);
    }
    k->clock = s->now + 1;
}

static void wake_blocked(sim *s)
{
    if (!s->nblocked)
        return;
    for (uint32_t t = 0; t < s->cfg->threads; t++) {
        thread *th = &s->threads[t];
        if (th->state == T_BLOCKED && th->ready_at <= s->now) {
            th->state = T_RUNNABLE;
            s->nblocked--;
            runq_push(s, t);
        }
    }
}

/* ---- events ---- */

/* An event of core C, which runs a thread: a run of private instructions
 * that ends with one memory access (a long run is cut into steps of at
 * most msp/32 cycles, so that time and the driver keep up). */
static void run_event(sim *s, uint32_t c)
{
    const synth_config *cfg = s->cfg;
    core *k = &s->cores[c];
    thread *th = &s->threads[k->thread];
    if (th->left == 0) {
        rru_terminate(k->rru, s->now, RNR_END_EXIT);
        th->state = T_DONE;
        s->done++;
        schedule_next(s, c);
        return;
    }
    if (s->now >= k->quantum_end && s->runq_n) {
        /* Preemption: the switch serializes, so that the thread stays
         * ordered wherever it resumes (not before now + 2). */
        rru_serialize(k->rru, s->now, RNR_END_SWITCH);
        th->state = T_RUNNABLE;
        th->ready_at = s->now + 2;
        runq_push(s, (uint32_t)k->thread);
        s->res->switches++;
        schedule_next(s, c);
        return;
    }
    uint64_t step = cfg->rru.msp / 32;
    if (k->gap > step && th->left > step) {
        rru_retire(k->rru, s->now, step);
        k->lane += step;
        th->tinsn += step;
        th->left -= step;
        k->gap -= step;
        k->clock = s->now + step;
        return;
    }
    /* The access that ends this run of instructions. */
    int shared = unif(s) * (cfg->sharing + cfg->private_rate) < cfg->sharing;
    uint64_t line = shared ? below(s, cfg->shared_lines)
                           : cfg->shared_lines + (uint64_t)k->thread * cfg->private_lines +
                                 below(s, cfg->private_lines);
    int write = unif(s) < cfg->write_frac;
    int miss = misses(s, c, line, write);
    if (miss && s->last_bus > s->now) {
        k->clock = s->last_bus;              /* the bus is taken this cycle */
        return;
    }
    uint64_t n = k->gap < th->left ? k->gap : th->left;
    rru_retire(k->rru, s->now, n);
    k->lane += n;
    th->tinsn += n;
    th->left -= n;
    if (miss)
        bus(s, c, s->now, line, write);
    rru_access(k->rru, s->now, line, write, miss);
    truth_access a = { c, th->tid, k->lane - 1, th->tinsn - 1, s->now };
    truth_access_done(s, line, &a, write);
    k->gap = next_gap(s);
    uint64_t latency = miss ? jitter(s, cfg->miss_latency) : 0;
    uint64_t run = k->gap < step ? k->gap : step;
    k->clock = s->now + 1 + latency + (run > 1 ? run - 1 : 0);
    if (cfg->syscall_rate > 0 && unif(s) * 1000.0 < cfg->syscall_rate * (double)n) {
        rru_terminate(k->rru, s->now, RNR_END_SYSCALL);
        s->res->syscalls++;
        k->clock += 50;
    }
    if (cfg->block_rate > 0 && th->left && unif(s) < cfg->block_rate) {
        rru_serialize(k->rru, s->now, RNR_END_SWITCH);
        th->state = T_BLOCKED;
        th->ready_at = s->now + 2 + jitter(s, cfg->block_cycles);
        s->nblocked++;
        s->res->blocks++;
        schedule_next(s, c);
    }
}

/* An event of core C without a thread: it picks up a ready thread, or its
 * OS touches a shared line (a bus transaction nobody records, which other
 * cores' RRUs see as a dependence to C: Early or Unrelated). */
static void idle_event(sim *s, uint32_t c)
{
    const synth_config *cfg = s->cfg;
    core *k = &s->cores[c];
    if (c >= cfg->os_cpus) {
        int t = runq_take(s);
        if (t >= 0) {
            start_thread(s, c, (uint32_t)t);
            k->clock = s->now + 1;
            return;
        }
    }
    uint64_t idle_step = cfg->rru.msp / 32 ? cfg->rru.msp / 32 : 1;
    if (cfg->os_rate > 0 && unif(s) < 0.5) {
        uint64_t line = below(s, cfg->shared_lines);
        int write = unif(s) < cfg->write_frac;
        if (misses(s, c, line, write)) {
            if (s->last_bus > s->now) {
                k->clock = s->last_bus;
                return;
            }
            bus(s, c, s->now, line, write);
            s->res->os_accesses++;
        }
        uint64_t mean = (uint64_t)(2000.0 / cfg->os_rate);
        uint64_t step = 1 + jitter(s, mean);
        k->clock = s->now + (step < idle_step ? step : idle_step);
        return;
    }
    k->clock = s->now + 1 + below(s, idle_step);
}

static uint32_t next_core(const sim *s)
{
    uint32_t best = 0;
    for (uint32_t c = 1; c < s->cfg->cpus; c++)
        if (s->cores[c].clock < s->cores[best].clock)
            best = c;
    return best;
}

void synth_run(const synth_config *cfg, const synth_sink *sink, synth_result *res)
{
    memset(res, 0, sizeof *res);
    sim s;
    memset(&s, 0, sizeof s);
    s.cfg = cfg;
    s.sink = sink;
    s.res = res;
    s.rng = cfg->seed ^ 0x5eedull;
    s.guard = cfg->rru.msp / 8;
    s.tick_every = cfg->rru.msp / 16 ? cfg->rru.msp / 16 : 1;
    s.cores = xcalloc(cfg->cpus, sizeof *s.cores);
    s.threads = xcalloc(cfg->threads, sizeof *s.threads);
    s.runq = xcalloc(cfg->threads, sizeof *s.runq);
    s.nlines = cfg->shared_lines + (uint64_t)cfg->threads * cfg->private_lines;
    s.lines = xcalloc(s.nlines, sizeof *s.lines);
    for (uint64_t i = 0; i < s.nlines; i++)
        s.lines[i].owner = -1;
    for (uint32_t t = 0; t < cfg->threads; t++) {
        s.threads[t].tid = 100 + t;
        s.threads[t].left = cfg->insns;
        s.threads[t].state = T_RUNNABLE;
        runq_push(&s, t);
    }
    for (uint32_t c = 0; c < cfg->cpus; c++) {
        s.cores[c].rru = rru_unit_new(&cfg->rru, c);
        s.cores[c].thread = -1;
        s.cores[c].drain_at = UINT64_MAX;
        s.cores[c].clock = c;            /* staggered starts */
    }
    for (uint32_t c = cfg->os_cpus; c < cfg->cpus; c++) {
        int t = runq_take(&s);
        if (t < 0)
            break;
        start_thread(&s, c, (uint32_t)t);
    }
    while (s.done < cfg->threads) {
        uint32_t c = next_core(&s);
        if (s.next_global_tick <= s.cores[c].clock) {
            /* Time passes for every RRU at least every msp/16 cycles. */
            s.now = s.next_global_tick;
            wake_blocked(&s);
            for (uint32_t o = 0; o < cfg->cpus; o++)
                rru_tick(s.cores[o].rru, s.now);
            s.next_global_tick = s.now + s.tick_every;
            driver(&s);
            continue;
        }
        s.now = s.cores[c].clock;
        wake_blocked(&s);
        if (s.cores[c].thread >= 0)
            run_event(&s, c);
        else
            idle_event(&s, c);
        rru_tick(s.cores[c].rru, s.now);
        driver(&s);
    }
    /* The program ended: recording stops everywhere; the rest drains. */
    for (uint32_t c = 0; c < cfg->cpus; c++)
        rru_unit_stop(s.cores[c].rru, s.now);
    for (int any = 1; any;) {
        any = 0;
        for (uint32_t c = 0; c < cfg->cpus; c++) {
            uint32_t n = 1 + (uint32_t)below(&s, 4);
            if (rru_drain(s.cores[c].rru, cfg->adversarial ? n : UINT32_MAX, emit_chunk, &s))
                any = 1;
        }
    }
    res->cycles = s.now;
    for (uint32_t c = 0; c < cfg->cpus; c++) {
        const rru_counters *k = rru_unit_counters(s.cores[c].rru);
        res->rru.chunks += k->chunks;
        res->rru.clusters += k->clusters;
        res->rru.conflicts += k->conflicts;
        res->rru.evictions += k->evictions;
        res->rru.serializations += k->serializations;
        res->rru.sv_entries += k->sv_entries;
        rru_unit_free(s.cores[c].rru);
    }
    for (uint64_t i = 0; i < s.nlines; i++)
        free(s.lines[i].readers);
    free(s.lines);
    free(s.cores);
    free(s.threads);
    free(s.runq);
}

/* ---- outputs ---- */

typedef struct out_ctx {
    rnr_writer *w;
    FILE *truth;
    truth_set *tset;
    int failed;
} out_ctx;

static void out_chunk(void *ctx, const rnr_initial_chunk *c, uint64_t start)
{
    out_ctx *o = ctx;
    (void)start;
    if (rnr_writer_put_initial(o->w, c) < 0)
        o->failed = 1;
}

static void out_dep(void *ctx, const truth_dep *d)
{
    out_ctx *o = ctx;
    if (o->truth && truth_write(o->truth, d) < 0)
        o->failed = 1;
    if (o->tset)
        truth_add(o->tset, d);
}

static void header_for(const synth_config *c, rnr_log_header *h)
{
    memset(h, 0, sizeof *h);
    h->kind = RNR_LOG_INITIAL;
    h->cpus = c->cpus;
    h->msp = c->rru.msp;
}

void synth_to_memory(const synth_config *c, rnr_membuf *out, truth_set *truth, synth_result *res)
{
    rnr_log_header h;
    header_for(c, &h);
    char err[RNR_ERR_MAX];
    memset(out, 0, sizeof *out);
    rnr_writer *w = rnr_writer_open_io(rnr_io_mem_writer(out, "synthetic"), &h, NULL, err, sizeof err);
    if (!w) {
        fprintf(stderr, "rnr: internal error: %s\n", err);
        abort();
    }
    out_ctx o = { w, NULL, truth, 0 };
    if (truth) {
        memset(truth, 0, sizeof *truth);
        truth->cpus = c->cpus;
    }
    synth_sink sink = { out_chunk, truth ? out_dep : NULL, &o };
    synth_run(c, &sink, res);
    if (rnr_writer_close(w, err, sizeof err) < 0 || o.failed) {
        fprintf(stderr, "rnr: internal error: synthetic log rejected: %s\n", err);
        abort();
    }
}

int synth_bundle(const synth_config *c, const char *dir, int truth, synth_result *res, char *err,
                 size_t errlen)
{
    rnr_bundle *b = rnr_bundle_create(dir, "synthetic", err, errlen);
    if (!b)
        return -1;
    rnr_log_header h;
    header_for(c, &h);
    rnr_writer_opts wo = { 0, 6 };
    rnr_writer *w = rnr_writer_open(rnr_bundle_tmp_path(b, RNR_BF_INITIAL), &h, &wo, err, errlen);
    if (!w) {
        rnr_bundle_close(b);
        return -1;
    }
    out_ctx o = { w, NULL, NULL, 0 };
    if (truth) {
        const char *tp = rnr_bundle_tmp_path(b, RNR_BF_TRUTH);
        o.truth = fopen(tp, "w");
        if (!o.truth || truth_write_header(o.truth, c->cpus) < 0) {
            snprintf(err, errlen, "%s: %s", tp, strerror(errno));
            if (o.truth)
                fclose(o.truth);
            rnr_writer_abandon(w);
            rnr_bundle_close(b);
            return -1;
        }
    }
    synth_sink sink = { out_chunk, truth ? out_dep : NULL, &o };
    synth_run(c, &sink, res);
    int rc = 0;
    if (o.truth && (fclose(o.truth) != 0 || o.failed)) {
        snprintf(err, errlen, "%s/truth.deps: write error", dir);
        rc = -1;
    }
    if (rnr_writer_close(w, rc ? NULL : err, errlen) < 0)
        rc = -1;
    if (rc == 0 && (rnr_bundle_commit(b, RNR_BF_INITIAL, err, errlen) < 0 ||
                    (truth && rnr_bundle_commit(b, RNR_BF_TRUTH, err, errlen) < 0)))
        rc = -1;
    if (rc) {
        char e2[256];
        rnr_bundle_save(b, RNR_BUNDLE_INCOMPLETE ": could not write the logs", e2, sizeof e2);
        rnr_bundle_close(b);
        return -1;
    }
    rnr_manifest *m = rnr_bundle_manifest(b);
    rnr_manifest_set(m, "program", "synthetic");
    rnr_manifest_set_u64(m, "cpus", c->cpus);
    rnr_manifest_set_u64(m, "threads", c->threads);
    rnr_manifest_set_u64(m, "seed", c->seed);
    rnr_manifest_set_u64(m, "msp", c->rru.msp);
    rnr_manifest_set_u64(m, "clusters", c->rru.clusters);
    rnr_manifest_set(m, "signature", c->rru.sig_bits ? "bloom" : "exact");
    rnr_manifest_set_u64(m, "signature.bits", c->rru.sig_bits);
    rnr_manifest_set_u64(m, "chunk-max", c->rru.chunk_max);
    rnr_manifest_set_u64(m, "instructions", res->instructions);
    rnr_manifest_set_u64(m, "cycles", res->cycles);
    char buf[64];
    snprintf(buf, sizeof buf, "%.6g", c->sharing);
    rnr_manifest_set(m, "synth.sharing", buf);
    rnr_manifest_set_u64(m, "synth.chunks", res->chunks);
    rnr_manifest_set_u64(m, "synth.truth-deps", res->deps);
    rc = rnr_bundle_save(b, RNR_BUNDLE_COMPLETE, err, errlen);
    rnr_bundle_close(b);
    return rc;
}
