/* backend/maxpar.c: backend pass 1 (initial log -> MaxPar), after the
 * reference's Figure 3.8: each CPU has a proxy with its open chunks in
 * chronological order and, per other CPU, a waiting list of that CPU's
 * dependences whose destination is (or will be) in this proxy. A chunk
 * becomes the destination of the waiting entries with t below its TS
 * that no earlier chunk took (the first chunk with TS > t; matched once
 * per batch of chunks, resolve_waiting), and a new dependence whose
 * destination is already read finds it by binary search over the open
 * chunks of its CPU; Trim writes chunks that are old enough and whose
 * predecessors are written; the Early Token Vector carries dependences to
 * CPUs that had no monitored chunk at the time.
 *
 * Data layout (for speed; the algorithm is the reference's): a proxy's
 * open chunks are a ring of 64-byte structs indexed by per-cpu sequence
 * number, which names them in the waiting lists; their SV cpus wait in a
 * per-proxy FIFO until they are written; a proxy keeps, per source cpu
 * with unresolved entries, the time of the oldest (due), so that a batch
 * touches only the lists it resolves something in. The waiting lists of
 * proxy q are stored with their source cpus (px[p].out[q]), where chunks
 * add and write their edges. Destinations are found by searches without
 * data-dependent branches (the batch's TS in one array with sentinels;
 * the newest open chunks first), and the hot loops keep what they use in
 * locals, so that the core neither mispredicts nor reloads.
 *
 * Why a chunk c may be written once H > bound(c) = max(c.ts, t_max) + MSP,
 * H being the largest TS read so far and t_max the latest time in c's SV.
 *
 * Bounded silence (the recorder's promise): a chunk X reaches the log
 * within MSP cycles of its start, and the log is in dump order; so if Y
 * precedes X in the log, Y.ts <= D(Y) <= D(X) <= X.start + MSP. Hence
 *   (BS) once a chunk with TS = H has been read, every chunk still to come
 *        starts at or after H - MSP.
 * A cluster is never dumped while it may gain SV entries, so every SV time
 * t of c satisfies t <= D(c) <= c.start + MSP: bound(c) <= c.ts + 2 MSP.
 *
 * What must be final before c is written:
 * (1) Its predecessors. An edge A -> c stems from an SV time t with
 *     A.ts <= t < c.ts. A.start <= A.ts < c.ts < H - MSP, so A was read by
 *     (BS), and the edge was resolved when the later of A and c was read
 *     (at the end of that chunk's batch, which comes before any Trim).
 * (2) The fate of its in-edges. A's edge to c's CPU is dropped only by a
 *     later chunk B of A's CPU with a dependence to the same CPU at
 *     t_B <= t (below), or when A itself is written (before c).
 *     B.start <= t_B < c.ts < H - MSP: B was read.
 * (3) Its out-edges. For an SV time t to CPU q the destination is the
 *     first chunk X of q with X.ts > t. If X is not read yet, then
 *     X.start >= H - MSP > t by (BS): X is the next chunk q will dump, and
 *     the dependence is Early (or Unrelated): the token goes to q's Early
 *     Token Vector, and q's next chunk awaits it. A later chunk B of c's
 *     CPU that could make c's edge cross or be implied has a dependence to
 *     q at t_B <= t, so B.start <= t < H - MSP: B was read.
 * So every decision about c's tokens is taken; Trim writes c once its
 * predecessors and the earlier chunks of its CPU are written. A written
 * edge is never undone: c was written at H > t + MSP, and a chunk B read
 * later has B.ts >= H - MSP > t (the pass checks that much of bounded
 * silence on every chunk and fails otherwise), so B's dependences come
 * after t and can neither cross c's edge nor imply it.
 *
 * Token safety (docs/design.md, "Invariants"). Per pair (p, q) the waiting list
 * holds the undecided edges of p's chunks to q, in p's order, with
 * strictly increasing times: a new edge (B, t_B) first drops every edge
 * (A, t_A) at the tail with t_A >= t_B, because A < B on p and
 * dest(t_B) <= dest(t_A) on q, so A -> dest(t_A) follows from program
 * order and B's edge, and keeping it could make the pair's edges cross.
 * Increasing times give nondecreasing destinations: the kept edges never
 * cross, and with one SV entry per CPU a chunk sends at most one token to
 * a CPU. When A is written, if the next edge (B, t_B) of the list has the
 * same destination (A's destination is known and has TS > t_B), A's edge
 * is implied by B's and dropped too. */
#include "rru/alloc.h"
#include "backend/maxpar.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define INLINE_PTV 3
#define BOUND_MAX (UINT64_MAX - 1)   /* "only at the end of the log" */
/* Growth, first use and failure: out of the per-chunk paths. */
#define COLD __attribute__((cold, noinline))

/* An open chunk. It lives in its proxy's ring, at the slot of its sequence
 * number (the how-many-th chunk of its cpu it is), and is named by that
 * number elsewhere. The ring moves chunks when it grows, so a chunk holds
 * no pointer into itself. One cache line: what the edges of other cpus
 * touch (ts, pending, the PTV) and what Trim tests (pending, bound) are
 * together; its SV cpus are in its proxy's successor FIFO. */
typedef struct mp_chunk {
    uint64_t ts, cs;
    uint64_t bound;          /* may be written once H > bound */
    uint32_t tid;
    uint32_t pending;        /* resolved in-edges whose source is not written yet */
    uint16_t nsv, nptv;      /* < RNR_MAX_CPUS */
    uint32_t ptv_cpus;       /* bit cpu % 32 of every cpu in the PTV (a filter) */
    union {                  /* the PTV, unsorted while open */
        rnr_ptv_entry in[INLINE_PTV];    /* nptv <= INLINE_PTV */
        rnr_ptv_entry *spill;            /* nptv > INLINE_PTV: a spill buffer */
    } ptv;
} mp_chunk;

_Static_assert(sizeof(mp_chunk) == 64, "an open chunk is one cache line");

/* An edge of a waiting list: the dependence at time T of the source cpu's
 * chunk number SRC; DST, the number of its destination on the list's
 * proxy, is valid for the list's entries [0, resolved).
 * Sequence numbers are 32 bits and wrap: only open chunks are ever named,
 * and fewer than 2^32 chunks of a cpu are open at once, so they stay
 * distinct (and ring slots are seq & mask, the same for the wrapped value). */
typedef struct mp_edge {
    uint64_t t;
    uint32_t src, dst;
} mp_edge;

/* The waiting list of proxy q for source cpu p: a ring of edges, oldest
 * source first; entries [0, resolved) have their destination. It is kept
 * with the source (px[p].out[q]): the cpus that add and write edges find
 * their lists with one load fewer than through the destination. */
typedef struct waiting_list {
    mp_edge *e;              /* NULL until the first edge */
    uint32_t head, n, mask, resolved;
    uint64_t last_t;         /* while n > 0: the time of the newest entry */
} waiting_list;

/* The C0 of the merge: the last chunk of a CPU, held back while it has no
 * successor in case the next chunk can be merged into it. */
typedef struct held_chunk {
    int valid;
    rnr_final_chunk c;
    uint32_t *stv;
    rnr_ptv_entry *ptv;
} held_chunk;

typedef struct proxy {
    mp_chunk *ring;          /* open chunks, TS nondecreasing: number s at ring[s & mask] */
    uint64_t *dur;           /* their recorded durations, beside the ring (the slot of
                              * ring[i] is dur[i]): read only when a chunk is written */
    uint32_t mask;
    uint32_t head, n;        /* number of the oldest open chunk; open chunks */
    uint16_t *succ;          /* FIFO of the SV cpus of the open chunks, in chunk order */
    uint32_t succ_head, succ_n, succ_mask;
    waiting_list *out;       /* [cpus] the waiting lists of this cpu's dependences, one per
                                destination cpu; allocated with the first dependence */
    uint32_t *early;         /* [cpus] Early Token Vector, allocated on first use */
    uint64_t *early_t;       /* [cpus] latest dependence time behind the early tokens */
    uint64_t *unresolved;    /* bitset of source cpus with unresolved entries here */
    uint64_t *due;           /* [cpus] per source cpu in unresolved, the time of its oldest
                                unresolved entry (packed for the scan); allocated with the
                                first unresolved entry */
    uint64_t *early_set;     /* bitset of source cpus with early tokens here */
    int has_early;           /* early_set is not empty */
    uint32_t unmatched;      /* number of the first chunk resolve_waiting has not seen */
    uint64_t last_ts;        /* TS of the cpu's last chunk read, 0 before the first */
    int in_work;
    held_chunk held;
} proxy;

struct maxpar {
    uint32_t cpus, words;
    uint64_t msp, H, next_trim, trim_every;   /* Trim is due once H >= next_trim */
    int eof, failed;
    proxy *px;
    maxpar_emit_fn emit;
    void *emit_ctx;
    void *spill_free;        /* recycled PTV spill buffers, linked through their first word */
    size_t spill_size;
    uint32_t *work;          /* ring: cpus whose head may be writable, in the order found */
    uint32_t work_head, nwork;
    uint32_t batch_cpu;      /* the cpu of the batch being read (UINT32_MAX: none) */
    uint64_t *batch_ts;      /* [batch_cap] the TS of the batch's chunks in order, then
                                UINT64_MAX up to the end (sentinels for resolve_waiting) */
    uint32_t batch_cap;      /* a power of two >= every proxy's ring: >= any batch */
    uint32_t *stv_buf;       /* scratch for a chunk's STV */
    uint64_t open, edges, bytes;
    maxpar_stats st;
    char error[RNR_ERR_MAX];
};

static inline void account(maxpar *m, int64_t delta)
{
    m->bytes += (uint64_t)delta;
    if (m->bytes > m->st.peak_bytes)
        m->st.peak_bytes = m->bytes;
}

static int fail(maxpar *m, const char *fmt, ...) __attribute__((format(printf, 2, 3))) COLD;
static int fail(maxpar *m, const char *fmt, ...)
{
    if (!m->failed) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(m->error, sizeof m->error, fmt, ap);
        va_end(ap);
        m->failed = 1;
    }
    return -1;
}

static inline uint64_t sat_add(uint64_t a, uint64_t b)
{
    return a > BOUND_MAX - b ? BOUND_MAX : a + b;
}

static inline void bit_set(uint64_t *b, uint32_t i) { b[i >> 6] |= 1ull << (i & 63); }
static inline void bit_clear(uint64_t *b, uint32_t i) { b[i >> 6] &= ~(1ull << (i & 63)); }

static COLD void *spill_new(maxpar *m)
{
    account(m, (int64_t)m->spill_size);
    return xmalloc(m->spill_size);
}

static inline void *spill_get(maxpar *m)
{
    void *b = m->spill_free;
    if (!b)
        return spill_new(m);
    memcpy(&m->spill_free, b, sizeof(void *));
    return b;
}

static inline void spill_put(maxpar *m, void *b)
{
    memcpy(b, &m->spill_free, sizeof(void *));
    m->spill_free = b;
}

static mp_chunk *ring_alloc(size_t n)
{
    return xoom(aligned_alloc(sizeof(mp_chunk), n * sizeof(mp_chunk)));
}

/* Room for N TS in the batch's array, sentinels after them. */
static COLD void batch_ts_grow(maxpar *m, uint32_t n)
{
    uint32_t cap = m->batch_cap;
    m->batch_ts = xrealloc(m->batch_ts, (size_t)n * sizeof *m->batch_ts);
    for (uint32_t i = cap; i < n; i++)
        m->batch_ts[i] = UINT64_MAX;
    account(m, (int64_t)((n - cap) * sizeof *m->batch_ts));
    m->batch_cap = n;
}

maxpar *maxpar_new(uint32_t cpus, uint64_t msp, maxpar_emit_fn emit, void *ctx)
{
    maxpar *m = xcalloc(1, sizeof *m);
    m->cpus = cpus;
    m->words = (cpus + 63) / 64;
    m->msp = msp;
    m->trim_every = msp / 16 ? msp / 16 : 1;
    m->next_trim = m->trim_every;
    m->batch_cpu = UINT32_MAX;
    m->emit = emit;
    m->emit_ctx = ctx;
    /* Room for cpus - 1 PTV entries, or the free-list link. */
    m->spill_size = (cpus > 2 ? cpus - 1 : 1) * sizeof(rnr_ptv_entry);
    m->px = xcalloc(cpus, sizeof *m->px);
    for (uint32_t p = 0; p < cpus; p++) {
        proxy *x = &m->px[p];
        x->mask = 15;
        x->ring = ring_alloc(x->mask + 1);
        x->dur = xmalloc((x->mask + 1) * sizeof *x->dur);
        x->succ_mask = 63;
        x->succ = xmalloc((x->succ_mask + 1) * sizeof *x->succ);
        x->unresolved = xcalloc(m->words, sizeof *x->unresolved);
        x->early_set = xcalloc(m->words, sizeof *x->early_set);
        x->held.stv = xmalloc(cpus * sizeof *x->held.stv);
        x->held.ptv = xmalloc((cpus > INLINE_PTV ? cpus : INLINE_PTV) * sizeof *x->held.ptv);
    }
    m->work = xmalloc(cpus * sizeof *m->work);
    m->stv_buf = xmalloc(cpus * sizeof *m->stv_buf);
    batch_ts_grow(m, 16);               /* the rings' first size */
    account(m, (int64_t)(sizeof *m + cpus * (sizeof(proxy) + 16 * (sizeof(mp_chunk) + 8) + 64 * sizeof(uint16_t) +
                                             2 * cpus * sizeof(uint32_t) + 16 * m->words)));
    return m;
}

static inline mp_chunk *chunk_at(const proxy *x, uint32_t seq) { return &x->ring[seq & x->mask]; }
static inline mp_chunk *open_at(const proxy *x, uint32_t i) { return chunk_at(x, x->head + i); }
static inline rnr_ptv_entry *ptv_of(mp_chunk *c) { return c->nptv > INLINE_PTV ? c->ptv.spill : c->ptv.in; }

void maxpar_free(maxpar *m)
{
    if (!m)
        return;
    for (uint32_t p = 0; p < m->cpus; p++) {
        proxy *x = &m->px[p];
        for (uint32_t i = 0; i < x->n; i++) {
            mp_chunk *c = open_at(x, i);
            if (c->nptv > INLINE_PTV)
                free(c->ptv.spill);
        }
        free(x->ring);
        free(x->dur);
        free(x->succ);
        if (x->out) {
            for (uint32_t q = 0; q < m->cpus; q++)
                free(x->out[q].e);
            free(x->out);
        }
        free(x->due);
        free(x->early);
        free(x->early_t);
        free(x->unresolved);
        free(x->early_set);
        free(x->held.stv);
        free(x->held.ptv);
    }
    while (m->spill_free) {
        void *b = m->spill_free;
        memcpy(&m->spill_free, b, sizeof(void *));
        free(b);
    }
    free(m->px);
    free(m->work);
    free(m->stv_buf);
    free(m->batch_ts);
    free(m);
}

const char *maxpar_error(const maxpar *m) { return m->error; }
const maxpar_stats *maxpar_get_stats(const maxpar *m) { return &m->st; }
uint64_t maxpar_open_chunks(const maxpar *m) { return m->open; }

/* ---- chunks ---- */

static COLD void ring_grow(maxpar *m, proxy *x)
{
    uint32_t mask = 2 * x->mask + 1;
    if (mask + 1 > m->batch_cap)
        batch_ts_grow(m, mask + 1);
    mp_chunk *r = ring_alloc((size_t)mask + 1);
    uint64_t *d = xmalloc(((size_t)mask + 1) * sizeof *d);
    for (uint32_t i = 0; i < x->n; i++) {
        r[(x->head + i) & mask] = *open_at(x, i);
        d[(x->head + i) & mask] = x->dur[(x->head + i) & x->mask];
    }
    free(x->ring);
    free(x->dur);
    account(m, (int64_t)(((size_t)x->mask + 1) * (sizeof *r + sizeof *d)));
    x->ring = r;
    x->dur = d;
    x->mask = mask;
}

/* Appends chunk IN (checked; its latest SV time LAST) to proxy X as its
 * newest open chunk. */
static mp_chunk *chunk_push(maxpar *m, proxy *x, const rnr_initial_chunk *in, uint64_t last)
{
    if (x->n == x->mask + 1)
        ring_grow(m, x);
    mp_chunk *c = open_at(x, x->n);
    x->dur[(x->head + x->n) & x->mask] = in->dur;
    x->n++;
    c->tid = in->tid;
    c->ts = in->ts;
    c->cs = in->cs;
    c->pending = 0;
    c->nptv = 0;
    c->ptv_cpus = 0;
    for (uint32_t i = 0; i < INLINE_PTV; i++)
        c->ptv.in[i] = (rnr_ptv_entry){ UINT32_MAX, 0 };  /* sentinels for sort_ptv */
    c->nsv = (uint16_t)in->nsv;
    c->bound = m->msp ? sat_add(last, m->msp) : BOUND_MAX;
    m->open++;
    if (m->open > m->st.peak_open)
        m->st.peak_open = m->open;
    return c;
}

/* Room in X's successor FIFO for N more cpus. */
static COLD void succ_grow(maxpar *m, proxy *x, uint32_t n)
{
    uint32_t mask = x->succ_mask;
    while (x->succ_n + n > mask + 1)
        mask = 2 * mask + 1;
    uint16_t *f = xmalloc(((size_t)mask + 1) * sizeof *f);
    for (uint32_t i = 0; i < x->succ_n; i++)
        f[i] = x->succ[(x->succ_head + i) & x->succ_mask];
    free(x->succ);
    account(m, (int64_t)(((size_t)mask - x->succ_mask) * sizeof *f));
    x->succ = f;
    x->succ_head = 0;
    x->succ_mask = mask;
}

static inline void succ_reserve(maxpar *m, proxy *x, uint32_t n)
{
    if (x->succ_n + n > x->succ_mask + 1)
        succ_grow(m, x, n);
}

/* Gives back what chunk C (no longer open) held outside its ring slot. */
static void chunk_release(maxpar *m, mp_chunk *c)
{
    if (c->nptv > INLINE_PTV)
        spill_put(m, c->ptv.spill);
    m->open--;
}

/* COUNT more predecessor tokens from CPU FROM. */
static inline void ptv_add(maxpar *m, mp_chunk *c, uint32_t from, uint32_t count)
{
    rnr_ptv_entry *p = ptv_of(c);
    uint32_t bit = 1u << (from & 31);
    if (c->ptv_cpus & bit) {
        for (uint32_t i = 0; i < c->nptv; i++) {
            if (p[i].cpu == from) {
                p[i].count += count;
                return;
            }
        }
    }
    c->ptv_cpus |= bit;
    if (c->nptv == INLINE_PTV) {
        /* A chunk awaits tokens from at most cpus - 1 others: the spill
         * buffer never needs to grow. */
        p = spill_get(m);
        memcpy(p, c->ptv.in, sizeof c->ptv.in);
        c->ptv.spill = p;
    }
    p[c->nptv].cpu = from;
    p[c->nptv].count = count;
    c->nptv++;
}

/* ---- proxies ---- */

/* The number of the first of X's LEN >= 1 chunks numbered from FIRST with
 * TS > t, given that the last of them has one. A search over the ring
 * (a batch's own chunks are searched in m->batch_ts: batch_after) without
 * a data-dependent branch: its steps depend on LEN alone, so the loop is
 * predicted. Each step keeps the answer within [base, base + len): if
 * the chunk before the upper half has TS <= t, the answer is in the
 * upper half, of len - half chunks; otherwise in the lower half, of
 * half <= len - half chunks. It stops at len = 1. */
static inline uint32_t ring_first_after(const proxy *x, uint32_t first, uint32_t len, uint64_t t)
{
    uint32_t base = first;
    while (len > 1) {
        uint32_t half = len / 2;
        base = chunk_at(x, base + half - 1)->ts <= t ? base + half : base;
        len -= half;
    }
    return base;
}

/* The index among X's open chunks of the first with TS > t, or X->n if
 * none. The search has no data-dependent branch (ring_first_after). A
 * new dependence's time is recent: when its destination is read already,
 * it is nearly always among the newest NEAR_CHUNKS open chunks, which are
 * searched alone (fewer steps, and chunks more likely in the cache) unless
 * the one before them already has TS > t. */
#define NEAR_CHUNKS 16
static inline uint32_t first_after(const proxy *x, uint64_t t)
{
    uint32_t n = x->n;
    if (!n || open_at(x, n - 1)->ts <= t)
        return n;                       /* the common case: not dumped yet */
    uint32_t lo = n > NEAR_CHUNKS ? n - NEAR_CHUNKS : 0;
    if (lo && open_at(x, lo - 1)->ts > t)
        return ring_first_after(x, x->head, lo, t) - x->head;
    return ring_first_after(x, x->head + lo, n - lo, t) - x->head;
}

/* The waiting lists of cpu P's dependences ([cpus], by destination). */
static COLD waiting_list *out_alloc(maxpar *m, proxy *x)
{
    x->out = xcalloc(m->cpus, sizeof *x->out);
    account(m, (int64_t)(m->cpus * sizeof *x->out));
    return x->out;
}

static COLD void due_alloc(maxpar *m, proxy *x)
{
    x->due = xcalloc(m->cpus, sizeof *x->due);
    account(m, (int64_t)(m->cpus * sizeof *x->due));
}

static inline mp_edge *edge_at(const waiting_list *l, uint32_t i) { return &l->e[(l->head + i) & l->mask]; }

/* Keeps proxy X's record of list L (source P) exact: in unresolved iff
 * it has unresolved entries, and then the time of the oldest in due. */
static inline void note_unresolved(proxy *x, const waiting_list *l, uint32_t p)
{
    if (l->resolved < l->n) {
        bit_set(x->unresolved, p);
        x->due[p] = edge_at(l, l->resolved)->t;
    } else {
        bit_clear(x->unresolved, p);
    }
}

/* Room for one more edge in L (which has none allocated, or is full). */
static COLD void edges_grow(maxpar *m, waiting_list *l)
{
    if (!l->e) {
        l->mask = 7;
        l->e = xmalloc((l->mask + 1) * sizeof *l->e);
        account(m, (int64_t)((l->mask + 1) * sizeof *l->e));
        return;
    }
    uint32_t mask = 2 * l->mask + 1;
    mp_edge *ne = xmalloc(((size_t)mask + 1) * sizeof *ne);
    for (uint32_t i = 0; i < l->n; i++)
        ne[i] = *edge_at(l, i);
    free(l->e);
    account(m, (int64_t)(((size_t)l->mask + 1) * sizeof *ne));
    l->e = ne;
    l->head = 0;
    l->mask = mask;
}

static inline void edge_push(maxpar *m, waiting_list *l, const mp_edge *e)
{
    if (!l->e || l->n == l->mask + 1)
        edges_grow(m, l);
    *edge_at(l, l->n) = *e;
    l->n++;
    m->edges++;
    if (m->edges > m->st.peak_edges)
        m->st.peak_edges = m->edges;
}

static inline void work_add(maxpar *m, uint32_t p)
{
    if (!m->px[p].in_work) {
        m->px[p].in_work = 1;
        uint32_t i = m->work_head + m->nwork++;
        m->work[i < m->cpus ? i : i - m->cpus] = p;   /* nwork <= cpus: one wrap at most */
    }
}

/* An edge to chunk D, number DST of cpu Q, that will not get its token
 * from this source any more (dropped, or decided): one pending
 * predecessor fewer. */
static inline void edge_decided(maxpar *m, uint32_t q, mp_chunk *d, uint32_t dst)
{
    /* Only the oldest open chunk of Q can become writable: that is tested
     * first (D is open, so Q has open chunks), on the proxy, which is at
     * hand, and is rarely so; the count, just loaded from D, is tested
     * only then, instead of a branch on it for every edge. */
    uint32_t left = --d->pending;
    if (m->px[q].head == dst && left == 0)
        work_add(m, q);
}

/* The index in TS (the batch's TS, nondecreasing, then UINT64_MAX
 * sentinels up to a length of at least 2 * TOP) of the first TS > t, given
 * that the batch has one; TOP is the largest power of two below the
 * batch's length, or 0 for a batch of one. The answer is the number of
 * TS <= t. Invariant before the step of size s: the first pos TS are
 * <= t, and the answer is below pos + 2s (at the start: it is below the
 * batch's length, at most 2 * TOP). The step adds s to pos iff
 * ts[pos + s - 1] <= t (TS nondecreasing: then the first pos + s are),
 * after which the answer is below pos + s: the invariant for the next
 * step, s / 2, and after the step of 1, pos <= answer < pos + 1. Indexes
 * read stay below 2 * TOP <= the batch's ring size <= batch_cap; those
 * past the batch hold sentinels, never <= t (t is below the batch's last
 * TS). The steps depend on TOP only, the same for every entry of a
 * batch: no data-dependent branch. */
static inline uint32_t batch_after(const uint64_t *ts, uint32_t top, uint64_t t)
{
    uint32_t pos = 0;
    for (uint32_t step = top; step; step >>= 1)
        pos += ts[pos + step - 1] <= t ? step : 0;
    return pos;
}

/* Matches the chunks of proxy X read since its last match (numbers
 * [x->unmatched, head + n)) with its waiting lists: every waiting entry
 * with t below the newest one's TS gets as its destination the first of
 * them with TS > t. A list's entries have increasing times, so those are
 * a prefix of its unresolved entries, and only lists whose oldest
 * unresolved time (due) is below that TS have any.
 *
 * The chunks of a batch (a run of consecutive chunks of one cpu in the
 * log) are matched together when the batch ends, before anything else
 * reads X's lists or pending counts: maxpar_add of another cpu's chunk
 * (whose edges may go to X's lists), Trim, and the end. The result is the
 * one of matching each chunk as it arrives: an entry that none of the
 * batch's earlier chunks took has t >= their TS, so the first chunk of
 * the batch with TS > t is its destination either way; nothing else
 * happens to X's lists during the batch (a chunk's edges go to other
 * cpus' lists). One scan of the lists per batch, not per chunk. */
static void resolve_waiting(maxpar *m, uint32_t q)
{
    proxy *x = &m->px[q];
    uint32_t first = x->unmatched, end = x->head + x->n;
    x->unmatched = end;
    if (first == end)
        return;
    uint32_t len = end - first, top = len > 1 ? 1u << (31 - __builtin_clz(len - 1)) : 0;
    const uint64_t *bts = m->batch_ts;  /* the batch is [first, end): q is batch_cpu */
    uint64_t ts = bts[len - 1];
    for (uint32_t w = 0; w < m->words; w++) {
        /* The lists with work, found without a branch per list (which
         * of them have work is close to random). */
        uint64_t due = 0;
        for (uint64_t bits = x->unresolved[w]; bits; bits &= bits - 1) {
            uint32_t b = (uint32_t)__builtin_ctzll(bits);
            due |= (uint64_t)(x->due[w * 64 + b] < ts) << b;
        }
        for (; due; due &= due - 1) {
            uint32_t p = w * 64 + (uint32_t)__builtin_ctzll(due);
            waiting_list *l = &m->px[p].out[q];
            mp_edge *e = l->e;
            uint32_t head = l->head, mask = l->mask, n = l->n, r = l->resolved;
            do {
                mp_edge *ed = &e[(head + r++) & mask];
                uint32_t seq = first + batch_after(bts, top, ed->t);
                ed->dst = seq;
                chunk_at(x, seq)->pending++;
            } while (r < n && e[(head + r) & mask].t < ts);
            l->resolved = r;
            if (r < n)
                x->due[p] = e[(head + r) & mask].t;
            else
                bit_clear(x->unresolved, p);
        }
    }
    for (uint32_t i = 0; i < len; i++)
        m->batch_ts[i] = UINT64_MAX;    /* sentinels again for the next batch */
}

/* Ends the current batch: matches its chunks (resolve_waiting). */
static void end_batch(maxpar *m)
{
    if (m->batch_cpu != UINT32_MAX) {
        resolve_waiting(m, m->batch_cpu);
        m->batch_cpu = UINT32_MAX;
    }
}

/* Chunk number SEQ of cpu p depends on cpu q from time t; L is the
 * waiting list of q for p. */
static void add_edge(maxpar *m, waiting_list *l, uint32_t p, uint32_t seq, uint32_t q, uint64_t t)
{
    proxy *x = &m->px[q];
    /* Older chunks' edges at t or later are implied by this one. */
    if (l->n && l->last_t >= t) {
        do {
            l->n--;
            m->edges--;
            if (l->resolved > l->n) {
                uint32_t dst = edge_at(l, l->n)->dst;
                l->resolved = l->n;
                edge_decided(m, q, chunk_at(x, dst), dst);
            }
            m->st.dropped_later++;
        } while (l->n && edge_at(l, l->n - 1)->t >= t);
    }
    mp_edge e = { t, seq, 0 };
    /* An earlier entry unresolved: so is this one, and the list's oldest
     * unresolved entry (its due time) stays what it was (the drops above
     * take entries from the tail only). Otherwise the destination is
     * looked up, and the list is unresolved from this entry on if there
     * is none yet. */
    if (l->resolved == l->n) {
        uint32_t i = first_after(x, t);
        if (i < x->n) {
            e.dst = x->head + i;
            open_at(x, i)->pending++;
            l->resolved++;
            bit_clear(x->unresolved, p);
        } else {
            if (!x->due)
                due_alloc(m, x);
            bit_set(x->unresolved, p);
            x->due[p] = t;
        }
    }
    edge_push(m, l, &e);
    l->last_t = t;
}

/* ---- writing ---- */

static int emit(maxpar *m, const rnr_final_chunk *c)
{
    if (m->emit(m->emit_ctx, c) < 0)
        return fail(m, "output failed");
    m->st.chunks_out++;
    return 0;
}

/* PTVs are short: insertion sort by cpu. */
static inline void ptv_order(rnr_ptv_entry *a, rnr_ptv_entry *b)
{
    rnr_ptv_entry x = *a, y = *b;
    int swap = x.cpu > y.cpu;
    *a = swap ? y : x;
    *b = swap ? x : y;
}

/* Sorts C's PTV by cpu. The common short one (inline, at most
 * INLINE_PTV = 3 entries) goes through a three-step sorting network with
 * the free slots as sentinels (chunk_push sets their cpu to UINT32_MAX,
 * sorted last): no loop, and the sentinels' compares are predictable. */
static void sort_ptv(mp_chunk *c)
{
    uint32_t n = c->nptv;
    if (n <= INLINE_PTV) {
        rnr_ptv_entry *p = c->ptv.in;
        ptv_order(&p[0], &p[1]);
        ptv_order(&p[1], &p[2]);
        ptv_order(&p[0], &p[1]);
        return;
    }
    rnr_ptv_entry *p = c->ptv.spill;
    for (uint32_t i = 1; i < n; i++) {
        rnr_ptv_entry x = p[i];
        uint32_t j = i;
        for (; j > 0 && p[j - 1].cpu > x.cpu; j--)
            p[j] = p[j - 1];
        p[j] = x;
    }
}

/* Holds open chunk C of cpu P, without successors, as P's C0 (its PTV
 * sorted). The held copy is built field by field from C, which was
 * written long ago, not copied from a struct just assembled on the stack:
 * wide loads of narrower stores still in flight stall the core (store
 * forwarding fails). A PTV of at most INLINE_PTV entries is C's inline
 * array, whose free slots hold sentinels: copied whole, without a loop on
 * its length (h->ptv has room for INLINE_PTV entries). */
static void hold(held_chunk *h, uint32_t p, const mp_chunk *c, uint64_t dur)
{
    h->valid = 1;
    h->c.cpu = p;
    h->c.tid = c->tid;
    h->c.cs = c->cs;
    h->c.dur = dur;
    h->c.nstv = 0;
    h->c.stv = h->stv;
    h->c.nptv = c->nptv;
    h->c.ptv = h->ptv;
    if (c->nptv <= INLINE_PTV) {
        for (uint32_t i = 0; i < INLINE_PTV; i++)
            h->ptv[i] = c->ptv.in[i];
    } else {
        for (uint32_t i = 0; i < c->nptv; i++)
            h->ptv[i] = c->ptv.spill[i];
    }
}

/* Output of open chunk C of cpu P, being written with the NSTV successor
 * cpus in m->stv_buf and its PTV sorted, through the C0/C1 merge: C0
 * (held) and C1 are merged when they belong to the same thread, C0 has no
 * successor and C1 no predecessor: the recorded parallelism is unchanged.
 * A chunk with a successor is never held (so a held chunk has nstv == 0),
 * and nothing waits behind a held chunk; it goes out at once (the arrays
 * handed to emit need to outlive only that call). */
static int output(maxpar *m, uint32_t p, mp_chunk *c, uint32_t nstv)
{
    held_chunk *h = &m->px[p].held;
    uint64_t dur = m->px[p].dur[c - m->px[p].ring];
    if (h->valid && h->c.tid == c->tid && c->nptv == 0 && h->c.cs <= (UINT64_MAX >> 1) - c->cs) {
        h->c.cs += c->cs;
        h->c.dur = sat_add(h->c.dur, dur);   /* merged chunks: their durations add */
        m->st.merged++;
        if (nstv == 0)
            return 0;
        h->valid = 0;
        h->c.nstv = nstv;
        h->c.stv = m->stv_buf;
        int rc = emit(m, &h->c);
        h->c.nstv = 0;
        h->c.stv = h->stv;
        return rc;
    }
    if (h->valid) {
        if (emit(m, &h->c) < 0)
            return -1;
        h->valid = 0;
    }
    if (nstv) {
        rnr_final_chunk f = { .cpu = p, .tid = c->tid, .cs = c->cs, .dur = dur, .nstv = nstv,
                              .stv = m->stv_buf, .nptv = c->nptv, .ptv = ptv_of(c) };
        return emit(m, &f);
    }
    hold(h, p, c, dur);
    return 0;
}

static COLD void early_alloc(maxpar *m, proxy *y)
{
    y->early = xcalloc(m->cpus, sizeof *y->early);
    y->early_t = xcalloc(m->cpus, sizeof *y->early_t);
    account(m, (int64_t)(m->cpus * 12));
}

/* Decides the edges of chunk number SEQ of cpu P, being written: pops
 * each from the head of its waiting list (unless a later chunk's edge
 * dropped it), drops it if implied, sends its token otherwise. The
 * successor cpus are the NSV at SUCC[(head + i) & mask]; those that get a
 * token go to STV. Returns their number. The list and the counters are
 * read into locals: stores through the chunk and list pointers could
 * alias them, and would force reloads every iteration. */
static uint32_t decide_edges(maxpar *m, uint32_t p, uint32_t seq, const uint16_t *succ, uint32_t head0,
                             uint32_t mask0, uint32_t nsv, uint32_t *stv)
{
    proxy *px = m->px;
    waiting_list *out = px[p].out;      /* allocated: the chunk added an edge to each */
    uint32_t nstv = 0, popped = 0, implied = 0;
    for (uint32_t i = 0; i < nsv; i++) {
        uint32_t q = succ[(head0 + i) & mask0];
        waiting_list *l = &out[q];
        uint32_t n = l->n, head = l->head;
        mp_edge *e = l->e;
        if (!n || e[head].src != seq)
            continue;                   /* dropped by a later chunk */
        uint32_t next = (head + 1) & l->mask, resolved = l->resolved;
        l->head = next;
        l->n = n - 1;
        popped++;
        proxy *y = &px[q];
        if (resolved) {
            /* Resolved (the destination is known) iff among the first
             * `resolved` entries; popping it leaves the unresolved ones
             * as they were. */
            uint32_t dst = e[head].dst;
            mp_chunk *d = chunk_at(y, dst);
            l->resolved = resolved - 1;
            /* Implied by the next edge if that lands in the same chunk.
             * Not knowable for an Early edge: q's next chunk may end
             * between the two times, so each Early edge keeps its token. */
            if (n > 1 && d->ts > e[next].t) {
                implied++;
            } else {
                stv[nstv++] = q;
                ptv_add(m, d, p, 1);
            }
            edge_decided(m, q, d, dst);
            continue;
        }
        note_unresolved(y, l, p);
        if (m->eof) {
            m->st.discarded++;          /* q never dumps a later chunk */
        } else {
            /* Early: q's next chunk to come is the destination. */
            if (!y->early)
                early_alloc(m, y);
            y->early[p]++;
            if (e[head].t > y->early_t[p])
                y->early_t[p] = e[head].t;
            bit_set(y->early_set, p);
            y->has_early = 1;
            stv[nstv++] = q;
            m->st.early_tokens++;
        }
    }
    m->edges -= popped;
    m->st.dropped_same += implied;
    m->st.tokens += nstv;
    return nstv;
}

/* Writes the oldest open chunk of cpu P: decides its edges, sends its
 * tokens, and frees it. */
static int write_chunk(maxpar *m, uint32_t p)
{
    proxy *x = &m->px[p];
    uint32_t seq = x->head, nsv;
    mp_chunk *c = chunk_at(x, seq);
    nsv = c->nsv;
    uint32_t nstv = nsv ? decide_edges(m, p, seq, x->succ, x->succ_head, x->succ_mask, nsv, m->stv_buf) : 0;
    sort_ptv(c);
    x->head++;
    x->n--;
    x->succ_head = (x->succ_head + nsv) & x->succ_mask;
    x->succ_n -= nsv;
    /* C's slot is reused only by a later push to this proxy, after output. */
    int rc = output(m, p, c, nstv);
    chunk_release(m, c);
    if (x->n && open_at(x, 0)->pending == 0)
        work_add(m, p);
    return rc;
}

/* Trim: writes every chunk that is old enough, whose predecessors are
 * written, and whose cpu's earlier chunks are written. */
static int trim(maxpar *m)
{
    m->st.trims++;
    m->next_trim = m->H + m->trim_every;
    for (uint32_t p = 0; p < m->cpus; p++)
        work_add(m, p);
    while (m->nwork) {
        uint32_t p = m->work[m->work_head];
        if (++m->work_head == m->cpus)
            m->work_head = 0;
        m->nwork--;
        proxy *x = &m->px[p];
        x->in_work = 0;
        while (x->n) {
            const mp_chunk *c = open_at(x, 0);
            if (c->pending || m->H <= c->bound)
                break;
            if (write_chunk(m, p) < 0)
                return -1;
        }
    }
    return 0;
}

/* The first thing wrong with IN's successor vector. */
static COLD int sv_error(maxpar *m, const rnr_initial_chunk *in)
{
    for (uint32_t i = 0;; i++) {
        const rnr_sv_entry *e = &in->sv[i];
        if (e->cpu >= m->cpus || e->cpu == in->cpu || e->ts < in->ts ||
            (i && e->cpu <= in->sv[i - 1].cpu))
            return fail(m, "cpu %u chunk with TS %llu has a malformed successor vector", in->cpu,
                        (unsigned long long)in->ts);
        if (m->msp && e->ts > sat_add(in->ts, m->msp))
            return fail(m, "cpu %u chunk with TS %llu has a dependence to cpu %u at %llu, more "
                           "than MSP %llu later: the log breaks bounded silence",
                        in->cpu, (unsigned long long)in->ts, e->cpu, (unsigned long long)e->ts,
                        (unsigned long long)m->msp);
    }
}

/* Chunk C, just read, is the first cpu X dumped since its Early tokens
 * were sent: they become its PTV. 0, or -1 if one of them was sent for a
 * dependence at or after C's TS (the log breaks bounded silence). */
static COLD int early_claim(maxpar *m, proxy *x, mp_chunk *c)
{
    uint32_t cpu = (uint32_t)(x - m->px);
    x->has_early = 0;
    for (uint32_t w = 0; w < m->words; w++) {
        uint64_t bits = x->early_set[w];
        x->early_set[w] = 0;
        while (bits) {
            uint32_t s = w * 64 + (uint32_t)__builtin_ctzll(bits);
            bits &= bits - 1;
            if (x->early_t[s] >= c->ts)
                return fail(m, "cpu %u chunk with TS %llu is the destination of a dependence "
                               "from cpu %u at %llu that was taken as Early: the log breaks "
                               "bounded silence (MSP %llu)",
                            cpu, (unsigned long long)c->ts, s,
                            (unsigned long long)x->early_t[s], (unsigned long long)m->msp);
            ptv_add(m, c, s, x->early[s]);
            x->early[s] = 0;
        }
    }
    return 0;
}

int maxpar_add(maxpar *m, const rnr_initial_chunk *in)
{
    if (m->failed | m->eof)
        return m->failed ? -1 : fail(m, "chunk added after the end of the log");
    if (in->cpu >= m->cpus)
        return fail(m, "chunk of cpu %u in a log of %u cpus", in->cpu, m->cpus);
    if (in->cpu != m->batch_cpu)
        end_batch(m);
    proxy *x = &m->px[in->cpu];
    if (in->ts < x->last_ts)
        return fail(m, "cpu %u timestamp goes back from %llu to %llu", in->cpu,
                    (unsigned long long)x->last_ts, (unsigned long long)in->ts);
    uint64_t limit = m->msp ? sat_add(in->ts, m->msp) : UINT64_MAX;   /* for SV times */
    if (limit < m->H)
        return fail(m, "cpu %u chunk with TS %llu arrives after a chunk with TS %llu: the log "
                       "breaks bounded silence (MSP %llu)",
                    in->cpu, (unsigned long long)in->ts, (unsigned long long)m->H,
                    (unsigned long long)m->msp);
    /* One pass over the SV: checked without a branch per entry, its cpus
     * copied to the successor FIFO (kept only if it is well formed), its
     * latest time noted. */
    succ_reserve(m, x, in->nsv);
    uint64_t last = in->ts;
    uint32_t lo = 0;                    /* the least cpu the next entry may name */
    int bad = 0;
    for (uint32_t i = 0; i < in->nsv; i++) {
        const rnr_sv_entry *e = &in->sv[i];
        /* Unsigned differences: lo <= cpu < cpus and ts <= e->ts <= limit,
         * one compare each (a value below the range wraps above it). */
        bad |= (e->cpu - lo >= m->cpus - lo) | (e->cpu == in->cpu) |
               (e->ts - in->ts > limit - in->ts);
        lo = e->cpu + 1;
        last = e->ts > last ? e->ts : last;
        x->succ[(x->succ_head + x->succ_n + i) & x->succ_mask] = (uint16_t)e->cpu;
    }
    if (bad)
        return sv_error(m, in);
    if (in->cs - 1 >= UINT64_MAX >> 1)  /* cs == 0 wraps: 1 <= cs <= UINT64_MAX >> 1 */
        return fail(m, "cpu %u chunk with TS %llu has size %llu, out of range", in->cpu,
                    (unsigned long long)in->ts, (unsigned long long)in->cs);
    x->last_ts = in->ts;
    m->H = in->ts > m->H ? in->ts : m->H;
    m->st.chunks_in++;
    m->st.dependences += in->nsv;
    x->succ_n += in->nsv;
    uint32_t seq = x->head + x->n;
    mp_chunk *c = chunk_push(m, x, in, last);
    m->batch_ts[seq - x->unmatched] = in->ts;   /* seq - unmatched < ring size <= batch_cap */
    m->batch_cpu = in->cpu;             /* matched with the waiting lists at the batch's end */
    /* Early tokens wait for this, the first chunk the cpu dumps after them. */
    if (x->has_early && early_claim(m, x, c) < 0)
        return -1;
    if (in->nsv) {
        waiting_list *out = x->out ? x->out : out_alloc(m, x);
        for (uint32_t i = 0; i < in->nsv; i++)
            add_edge(m, &out[in->sv[i].cpu], in->cpu, seq, in->sv[i].cpu, in->sv[i].ts);
    }
    if (m->H >= m->next_trim) {
        end_batch(m);
        return trim(m);
    }
    return 0;
}

int maxpar_finish(maxpar *m)
{
    if (m->failed)
        return -1;
    end_batch(m);
    m->eof = 1;
    m->H = UINT64_MAX;
    if (trim(m) < 0)
        return -1;
    for (uint32_t p = 0; p < m->cpus; p++) {
        proxy *x = &m->px[p];
        if (x->n)
            return fail(m, "internal error: %llu chunks of cpu %u could not be written",
                        (unsigned long long)x->n, p);
        if (x->held.valid) {
            x->held.valid = 0;
            if (emit(m, &x->held.c) < 0)
                return -1;
        }
        /* Early tokens no later chunk of this cpu claimed: Unrelated
         * dependences (the cpu never ran monitored code again). */
        for (uint32_t q = 0; x->early && q < m->cpus; q++)
            m->st.early_unclaimed += x->early[q];
    }
    return 0;
}
