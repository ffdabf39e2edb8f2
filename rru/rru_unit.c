/* rru/rru_unit.c: one core's Record-and-Replay Unit: the current chunk,
 * clusters with read/write signatures for the last K of them, source-only
 * dependence recording into successor vectors, conservative eviction, and
 * the chunk buffer the driver drains under bounded silence. */
#include "rru/rru_unit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rru/alloc.h"

#include "rru/signature.h"

#define SV_NONE UINT64_MAX

/* Summaries of what clusters accessed (exact signatures only): one bit per
 * line hash, in SUM_WORDS words. Each cluster keeps its own (lines accessed, lines
 * written); the unit keeps their union over the clusters still holding
 * signatures, so that a snoop of a line no live cluster touched (most of
 * them) costs one test. Bits are never false negatives: a cluster's bit
 * is set when its signature gets the line, and the union is rebuilt from
 * the clusters' own summaries after a cluster is released. */
#define SUM_WORDS 64u
_Static_assert(SUM_WORDS * 64 == RRU_SUMMARY_BITS, "summary size");
_Static_assert(SUM_WORDS == 64, "one stale bit per word of the unions (sum_stale)");

typedef struct cluster {
    sig *rd, *wr;
    uint64_t *sv;          /* [cpus]: time of the earliest dependence to each cpu */
    uint32_t nset;         /* entries of sv that are set */
    uint32_t chunks;       /* chunks ended in this cluster */
    uint64_t last;         /* buffer sequence number of its last chunk (closed clusters) */
    uint64_t last_ts;      /* TS of that chunk */
    uint64_t sum_any[SUM_WORDS], sum_wr[SUM_WORDS];
} cluster;

typedef struct buf_chunk {
    rnr_initial_chunk c;
    rnr_sv_entry *sv;      /* storage for c.sv: cpus - 1 entries, allocated on first use */
    uint64_t start;
    int final;
} buf_chunk;

struct rru_unit {
    rru_config cfg;
    uint32_t cpu;
    uint64_t age;          /* msp / 4: chunk age limit, idle-cluster and eviction age */
    int enabled;
    uint32_t tag;
    /* the current chunk */
    uint64_t cur_count, cur_start;
    uint64_t last_bus;     /* time of the last own bus access + 1, 0 if none */
    uint64_t last_ts;      /* TS of the last chunk ended */
    uint64_t span_from;    /* when the current chunk's time began: the enable, or the
                            * previous chunk's TS while the unit stayed enabled */
    /* clusters: K slots, the current one (cc) and the closed window,
     * oldest first */
    cluster *slot;
    int *free_slot;
    uint32_t nfree;
    int cc;
    sig *cur_sig[2];       /* read and write signatures of slot cc (valid while cc >= 0) */
    int *win;
    uint32_t nwin;
    int64_t tail;          /* ended chunk of cc not yet known to be its last, -1 */
    /* the buffer: chunks with sequence numbers head..next-1; those below
     * ready are final */
    buf_chunk *ring;
    uint64_t cap, head, next, ready;
    uint64_t cluster_ends; /* clusters ended so far (the core's filter must forget) */
    int in_retire;         /* splitting instructions reported after the fact */
    uint64_t sum_any[SUM_WORDS], sum_wr[SUM_WORDS];   /* unions over live clusters */
    uint64_t sum_stale;    /* bit w: word w of the unions may hold bits of released clusters */
    rru_counters counters;
};

static inline uint64_t max64(uint64_t a, uint64_t b) { return a > b ? a : b; }

void rru_config_default(rru_config *c, uint32_t cpus)
{
    memset(c, 0, sizeof *c);
    c->cpus = cpus;
    c->clusters = 4;
    c->sig_bits = 0;
    c->sig_hashes = 4;
    c->cluster_chunks = 4;
    c->chunk_max = 10000;
    c->msp = 100000;
}

int rru_config_check(const rru_config *c, char *err, size_t errlen)
{
    const char *bad = NULL;
    if (c->cpus < 1 || c->cpus > RNR_MAX_CPUS)
        bad = "cpu count out of range";
    else if (c->clusters < 2 || c->clusters > 64)
        bad = "clusters (K) must be 2..64";
    else if (c->sig_bits && (c->sig_bits < SIG_MIN_BITS || c->sig_bits > SIG_MAX_BITS))
        bad = "Bloom signature size must be 64..16777216 bits";
    else if (c->sig_hashes < 1 || c->sig_hashes > 8)
        bad = "Bloom hash count must be 1..8";
    else if (c->cluster_chunks < 1)
        bad = "chunks per cluster must be >= 1";
    else if (c->chunk_max < 1 || c->chunk_max > (UINT64_MAX >> 2))
        bad = "chunk size limit out of range";
    else if (c->msp < 64 || c->msp > (UINT64_MAX >> 4))
        bad = "MSP must be at least 64 cycles";
    if (bad) {
        snprintf(err, errlen, "%s", bad);
        return -1;
    }
    return 0;
}

rru_unit *rru_unit_new(const rru_config *c, uint32_t cpu)
{
    char err[128];
    if (rru_config_check(c, err, sizeof err) < 0 || cpu >= c->cpus) {
        fprintf(stderr, "rnr: internal error: bad RRU configuration (%s)\n",
                cpu >= c->cpus ? "cpu out of range" : err);
        abort();
    }
    rru_unit *u = xcalloc(1, sizeof *u);
    u->cfg = *c;
    u->cpu = cpu;
    u->age = c->msp / 4;
    u->cc = -1;
    u->tail = -1;
    uint32_t k = c->clusters;
    u->slot = xcalloc(k, sizeof *u->slot);
    u->free_slot = xcalloc(k, sizeof *u->free_slot);
    u->win = xcalloc(k, sizeof *u->win);
    for (uint32_t i = 0; i < k; i++) {
        u->slot[i].rd = sig_new(c->sig_bits, c->sig_hashes);
        u->slot[i].wr = sig_new(c->sig_bits, c->sig_hashes);
        u->slot[i].sv = xcalloc(c->cpus, sizeof *u->slot[i].sv);
        u->free_slot[u->nfree++] = (int)(k - 1 - i);
    }
    u->cap = 64;
    u->ring = xcalloc(u->cap, sizeof *u->ring);
    return u;
}

void rru_unit_free(rru_unit *u)
{
    if (!u)
        return;
    for (uint32_t i = 0; i < u->cfg.clusters; i++) {
        sig_free(u->slot[i].rd);
        sig_free(u->slot[i].wr);
        free(u->slot[i].sv);
    }
    for (uint64_t i = 0; i < u->cap; i++)
        free(u->ring[i].sv);
    free(u->slot);
    free(u->free_slot);
    free(u->win);
    free(u->ring);
    free(u);
}

const rru_counters *rru_unit_counters(const rru_unit *u) { return &u->counters; }
uint64_t rru_chunk_room(const rru_unit *u) { return u->cfg.chunk_max - u->cur_count; }
uint64_t rru_cluster_ends(const rru_unit *u) { return u->cluster_ends; }
int rru_enabled(const rru_unit *u) { return u->enabled; }

int rru_cluster_full(const rru_unit *u)
{
    return u->cc >= 0 && u->cur_count && u->slot[u->cc].chunks >= u->cfg.cluster_chunks;
}

/* ---- the buffer ---- */

static buf_chunk *at(const rru_unit *u, uint64_t seq) { return &u->ring[seq % u->cap]; }

static uint64_t push_chunk(rru_unit *u)
{
    if (u->next - u->head == u->cap) {  /* full: every slot holds a chunk */
        uint64_t cap = u->cap * 2;
        buf_chunk *ring = xcalloc(cap, sizeof *ring);
        for (uint64_t s = u->head; s < u->next; s++)
            ring[s % cap] = u->ring[s % u->cap];
        free(u->ring);
        u->ring = ring;
        u->cap = cap;
    }
    return u->next++;
}

static void advance_ready(rru_unit *u)
{
    while (u->ready < u->next && at(u, u->ready)->final)
        u->ready++;
}

static void finalize_chunk(rru_unit *u, uint64_t seq, const cluster *cl)
{
    buf_chunk *b = at(u, seq);
    b->c.nsv = 0;
    if (cl && cl->nset) {
        if (!b->sv)
            b->sv = xcalloc(u->cfg.cpus, sizeof *b->sv);
        for (uint32_t q = 0; q < u->cfg.cpus; q++) {
            if (q == u->cpu || cl->sv[q] == SV_NONE)
                continue;
            b->sv[b->c.nsv].cpu = q;
            b->sv[b->c.nsv].ts = cl->sv[q];
            b->c.nsv++;
        }
        u->counters.sv_entries += b->c.nsv;
    }
    b->c.sv = b->sv;
    b->final = 1;
    advance_ready(u);
}

uint32_t rru_buffered(const rru_unit *u) { return (uint32_t)(u->next - u->head); }
uint32_t rru_ready(const rru_unit *u) { return (uint32_t)(u->ready - u->head); }

uint64_t rru_deadline(const rru_unit *u)
{
    return u->head < u->next ? at(u, u->head)->start + u->cfg.msp : UINT64_MAX;
}

uint32_t rru_drain(rru_unit *u, uint32_t max,
                   void (*fn)(void *ctx, const rnr_initial_chunk *c, uint64_t start), void *ctx)
{
    uint32_t n = 0;
    while (n < max && u->head < u->ready) {
        buf_chunk *b = at(u, u->head);
        fn(ctx, &b->c, b->start);
        u->head++;
        n++;
    }
    return n;
}

/* ---- clusters ---- */

static int conflicts(const cluster *cl, uint64_t line, uint64_t h, int write)
{
    return sig_test_hashed(cl->wr, line, h) || (write && sig_test_hashed(cl->rd, line, h));
}

static void release_slot(rru_unit *u, int s)
{
    cluster *cl = &u->slot[s];
    sig_clear(cl->rd);
    sig_clear(cl->wr);
    memset(cl->sum_any, 0, sizeof cl->sum_any);
    memset(cl->sum_wr, 0, sizeof cl->sum_wr);
    u->sum_stale = ~0ull;
    cl->nset = 0;
    cl->chunks = 0;
    u->free_slot[u->nfree++] = s;
}

/* A closed cluster's SV can no longer change: its last chunk becomes final. */
static void finalize_cluster(rru_unit *u, int s)
{
    finalize_chunk(u, u->slot[s].last, &u->slot[s]);
    release_slot(u, s);
}

static void remove_from_window(rru_unit *u, uint32_t i)
{
    memmove(&u->win[i], &u->win[i + 1], (u->nwin - i - 1) * sizeof *u->win);
    u->nwin--;
}

/* Sets every null SV entry of cluster S to T. */
static void set_all(rru_unit *u, int s, uint64_t t)
{
    cluster *cl = &u->slot[s];
    for (uint32_t q = 0; q < u->cfg.cpus; q++) {
        if (q != u->cpu && cl->sv[q] == SV_NONE) {
            cl->sv[q] = t;
            cl->nset++;
        }
    }
}

/* Conservative eviction of the oldest closed cluster: once its signatures
 * are gone no conflict with it can be seen, so every dependence it might
 * still source is assumed to happen now. */
static void evict_oldest(rru_unit *u, uint64_t now)
{
    int s = u->win[0];
    remove_from_window(u, 0);
    set_all(u, s, max64(now, u->slot[s].last_ts));
    u->counters.evictions++;
    finalize_cluster(u, s);
}

static void open_cluster(rru_unit *u)
{
    int s = u->free_slot[--u->nfree];
    cluster *cl = &u->slot[s];
    for (uint32_t q = 0; q < u->cfg.cpus; q++)
        cl->sv[q] = SV_NONE;
    cl->nset = 0;
    cl->chunks = 0;
    u->cc = s;
    u->cur_sig[0] = cl->rd;
    u->cur_sig[1] = cl->wr;
    u->counters.clusters++;
}

/* The current cluster ends; its last chunk is the tail. */
static void end_cluster(rru_unit *u, uint64_t now)
{
    int s = u->cc;
    if (s < 0)
        return;
    u->cc = -1;
    u->cluster_ends++;
    cluster *cl = &u->slot[s];
    if (u->tail < 0) {                 /* no chunk of it is still unfinalized */
        release_slot(u, s);
        return;
    }
    cl->last = (uint64_t)u->tail;
    cl->last_ts = at(u, cl->last)->c.ts;
    u->tail = -1;
    if (cl->nset == u->cfg.cpus - 1) { /* nothing can change any more */
        finalize_cluster(u, s);
        return;
    }
    u->win[u->nwin++] = s;
    if (u->nwin > u->cfg.clusters - 1)
        evict_oldest(u, now);
}

/* ---- chunks ---- */

static void end_chunk(rru_unit *u, uint64_t now, uint32_t reason, int conflict)
{
    if (u->cur_count == 0)
        return;
    uint64_t ts = max64(now, u->last_ts);
    if (!conflict)
        ts = max64(ts, u->last_bus);   /* after its last bus access */
    uint64_t seq = push_chunk(u);
    buf_chunk *b = at(u, seq);
    b->c.cpu = u->cpu;
    b->c.tid = u->tag;
    b->c.ts = ts;
    b->c.cs = u->cur_count;
    b->c.reason = reason;
    b->c.dur = ts - u->span_from;
    u->span_from = ts;
    b->c.nsv = 0;
    b->c.sv = b->sv;
    b->start = u->cur_start;
    b->final = 0;
    u->tail = (int64_t)seq;
    u->last_ts = ts;
    u->cur_count = 0;
    u->counters.chunks++;
    cluster *cl = &u->slot[u->cc];
    if (++cl->chunks >= u->cfg.cluster_chunks && !(u->in_retire && u->cfg.deferred_cluster_end))
        end_cluster(u, now);
}

static void start_chunk(rru_unit *u, uint64_t now)
{
    if (u->cc < 0)
        open_cluster(u);
    if (u->tail >= 0) {               /* the previous chunk was not the cluster's last */
        finalize_chunk(u, (uint64_t)u->tail, NULL);
        u->tail = -1;
    }
    u->cur_start = now;
}

void rru_retire(rru_unit *u, uint64_t now, uint64_t n)
{
    if (!u->enabled)
        return;
    while (n) {
        if (u->cur_count == u->cfg.chunk_max) {
            u->in_retire = 1;
            end_chunk(u, now, RNR_END_SIZE, 0);
            u->in_retire = 0;
        }
        if (u->cur_count == 0)
            start_chunk(u, now);
        uint64_t take = u->cfg.chunk_max - u->cur_count;
        if (take > n)
            take = n;
        u->cur_count += take;
        n -= take;
    }
}

/* LINE joins the summaries and the current cluster's signature (last, so
 * that the insert is a tail call). */
static inline void insert_line(rru_unit *u, uint64_t line, int write)
{
    if (!u->cfg.sig_bits) {
        cluster *cl = &u->slot[u->cc];
        uint32_t b = rru_summary_bit(line);
        uint64_t bit = 1ull << (b & 63);
        cl->sum_any[b >> 6] |= bit;
        u->sum_any[b >> 6] |= bit;
        if (write) {
            cl->sum_wr[b >> 6] |= bit;
            u->sum_wr[b >> 6] |= bit;
        }
    }
    sig_insert(u->cur_sig[write != 0], line);
}

void rru_access(rru_unit *u, uint64_t now, uint64_t line, int write, int bus)
{
    if (!u->enabled || u->cur_count == 0)
        return;
    insert_line(u, line, write);
    if (bus)
        u->last_bus = now + 1;
}

uint64_t rru_report_room(const rru_unit *u)
{
    return u->enabled && u->cur_count ? u->cfg.chunk_max - u->cur_count : 0;
}

void rru_report(rru_unit *u, uint64_t line, int write, uint64_t n)
{
    u->cur_count += n;
    insert_line(u, line, write);
}

uint64_t rru_line_hash(uint64_t line) { return sig_hash(line); }

const uint64_t *rru_snoop_summary(const rru_unit *u, int write)
{
    if (u->cfg.sig_bits)
        return NULL;
    return write ? u->sum_any : u->sum_wr;
}

/* 0 if no live cluster can conflict with an access to the line of hash H
 * (the unions' test), else 1: the clusters must be asked. */
static int may_conflict(rru_unit *u, uint64_t line, int write)
{
    /* Bloom signatures answer with their false positives (part of the
     * model: their size is what a sweep studies), so only exact sets are
     * summarized. */
    if (u->cfg.sig_bits)
        return 1;
    uint32_t b = rru_summary_bit(line);
    const uint64_t *sum = write ? u->sum_any : u->sum_wr;
    /* Stale unions are a superset of the live clusters' ones: a clear bit
     * is still an answer, and only a set one needs the rebuild. */
    if (!((sum[b >> 6] >> (b & 63)) & 1))
        return 0;
    const uint32_t w = b >> 6;
    if ((u->sum_stale >> w) & 1) {
        /* Rebuilds that word of both unions from the live clusters: the
         * window, then the current one. */
        uint64_t any = 0, wr = 0;
        for (uint32_t i = 0; i <= u->nwin; i++) {
            int s = i < u->nwin ? u->win[i] : u->cc;
            if (s < 0)
                continue;
            any |= u->slot[s].sum_any[w];
            wr |= u->slot[s].sum_wr[w];
        }
        u->sum_any[w] = any;
        u->sum_wr[w] = wr;
        u->sum_stale &= ~(1ull << w);
        return (int)((sum[w] >> (b & 63)) & 1);
    }
    return 1;
}

int rru_snoop(rru_unit *u, uint64_t now, uint32_t from, uint64_t line, int write)
{
    if (from == u->cpu || from >= u->cfg.cpus)
        return 0;
    int hit = 0;
    uint64_t h = sig_hash(line);
    if (!may_conflict(u, line, write))
        return 0;
    for (uint32_t i = 0; i < u->nwin;) {
        int s = u->win[i];
        cluster *cl = &u->slot[s];
        if (cl->sv[from] == SV_NONE && conflicts(cl, line, h, write)) {
            cl->sv[from] = max64(now, cl->last_ts);
            cl->nset++;
            hit = 1;
            if (cl->nset == u->cfg.cpus - 1) {
                remove_from_window(u, i);
                finalize_cluster(u, s);
                continue;
            }
        }
        i++;
    }
    if (u->cc >= 0 && conflicts(&u->slot[u->cc], line, h, write)) {
        /* A dependence sourced by the current cluster: the chunk and the
         * cluster end now, so that the source precedes the destination. */
        cluster *cl = &u->slot[u->cc];
        cl->sv[from] = max64(now, u->last_ts);
        cl->nset++;
        hit = 1;
        end_chunk(u, now, RNR_END_CONFLICT, 1);
        end_cluster(u, now);
    }
    u->counters.conflicts += (uint64_t)hit;
    return hit;
}

int rru_snoop_hits(rru_unit *u, uint32_t from, uint64_t line, uint64_t h, int write)
{
    if (from == u->cpu || from >= u->cfg.cpus || !may_conflict(u, line, write))
        return 0;
    for (uint32_t i = 0; i < u->nwin; i++) {
        const cluster *cl = &u->slot[u->win[i]];
        if (cl->sv[from] == SV_NONE && conflicts(cl, line, h, write))
            return 1;
    }
    return u->cc >= 0 && conflicts(&u->slot[u->cc], line, h, write);
}

void rru_tick(rru_unit *u, uint64_t now)
{
    if (u->cur_count && (u->cur_count == u->cfg.chunk_max || now - u->cur_start >= u->age))
        end_chunk(u, now, u->cur_count == u->cfg.chunk_max ? RNR_END_SIZE : RNR_END_AGE, 0);
    if (u->cc >= 0 && u->cur_count == 0 && u->tail >= 0 && now >= at(u, (uint64_t)u->tail)->c.ts + u->age)
        end_cluster(u, now);
    while (u->nwin && now >= u->slot[u->win[0]].last_ts + u->age)
        evict_oldest(u, now);
}

/* ---- programming interface ---- */

void rru_enable(rru_unit *u, uint64_t now, uint32_t tag)
{
    if (u->enabled && tag != u->tag)
        end_chunk(u, now, RNR_END_SWITCH, 0);
    if (!u->enabled)
        u->span_from = now;
    u->enabled = 1;
    u->tag = tag;
}

void rru_disable(rru_unit *u, uint64_t now)
{
    end_chunk(u, now, RNR_END_STOP, 0);
    end_cluster(u, now);
    u->enabled = 0;
}

void rru_terminate(rru_unit *u, uint64_t now, uint32_t reason)
{
    end_chunk(u, now, reason, 0);
}

void rru_serialize(rru_unit *u, uint64_t now, uint32_t reason)
{
    u->counters.serializations++;
    end_chunk(u, now, reason, 0);
    if (u->cc >= 0) {
        if (u->tail >= 0)
            set_all(u, u->cc, max64(now, at(u, (uint64_t)u->tail)->c.ts));
        end_cluster(u, now);
        return;
    }
    /* No open cluster: the newest closed one still in the window carries
     * the dependences; older chunks precede it on this core, and clusters
     * already final had every SV entry set at or before now. */
    if (u->nwin) {
        int s = u->win[u->nwin - 1];
        remove_from_window(u, u->nwin - 1);
        set_all(u, s, max64(now, u->slot[s].last_ts));
        finalize_cluster(u, s);
    }
}

void rru_unit_stop(rru_unit *u, uint64_t now)
{
    end_chunk(u, now, RNR_END_STOP, 0);
    if (u->cc >= 0) {
        int s = u->cc;
        u->cc = -1;
        u->cluster_ends++;
        if (u->tail >= 0) {
            u->slot[s].last = (uint64_t)u->tail;
            u->tail = -1;
            finalize_cluster(u, s);
        } else {
            release_slot(u, s);
        }
    }
    while (u->nwin) {
        int s = u->win[0];
        remove_from_window(u, 0);
        finalize_cluster(u, s);
    }
    u->enabled = 0;
}
