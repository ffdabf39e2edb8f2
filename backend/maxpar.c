/* backend/maxpar.c: backend pass 1 (initial log -> MaxPar), after the
 * reference's Figure 3.8: each CPU has a proxy with its open chunks in
 * chronological order and, per other CPU, a waiting list of that CPU's
 * dependences whose destination is (or will be) in this proxy. Adding a
 * chunk resolves the waiting entries it is the destination of (the first
 * chunk with TS > t) and binary-searches the open chunks of its successor
 * CPUs for its own; Trim writes chunks that are old enough and whose
 * predecessors are written; the Early Token Vector carries dependences to
 * CPUs that had no monitored chunk at the time.
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
 *     (BS), and the edge was resolved when the later of A and c was read.
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
 * Token safety (DESIGN.md section 7). Per pair (p, q) the waiting list
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

#define INLINE_SV 4
#define INLINE_PTV 4
#define BOUND_MAX (UINT64_MAX - 1)   /* "only at the end of the log" */

typedef struct mp_chunk {
    uint32_t cpu, tid;
    uint64_t ts, cs;
    uint64_t bound;          /* may be written once H > bound */
    uint32_t pending;        /* resolved in-edges whose source is not written yet */
    uint32_t nsv, nptv, ptv_cap;
    rnr_sv_entry *sv;        /* its dependences, cpus ascending */
    rnr_ptv_entry *ptv;      /* tokens it awaits (unsorted while open) */
    rnr_sv_entry sv_inline[INLINE_SV];
    rnr_ptv_entry ptv_inline[INLINE_PTV];
    struct mp_chunk *next_free;
} mp_chunk;

/* An edge of a waiting list: SRC's dependence at time T; DST once known. */
typedef struct mp_edge {
    mp_chunk *src, *dst;
    uint64_t t;
} mp_edge;

/* The waiting list of proxy q for source cpu p: a ring of edges, oldest
 * source first; entries [0, resolved) have their destination. */
typedef struct waiting_list {
    mp_edge *e;
    uint32_t head, n, cap, resolved;
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
    mp_chunk **open;         /* ring of open chunks, TS nondecreasing */
    uint64_t head, n, cap;
    waiting_list **waiting;  /* [cpus], allocated on first use */
    uint32_t *early;         /* [cpus] Early Token Vector, allocated on first use */
    uint64_t *early_t;       /* [cpus] latest dependence time behind the early tokens */
    uint64_t *unresolved;    /* bitset of source cpus with unresolved entries here */
    uint64_t *early_set;     /* bitset of source cpus with early tokens here */
    uint64_t last_ts;
    int seen, in_work;
    held_chunk held;
} proxy;

struct maxpar {
    uint32_t cpus, words;
    uint64_t msp, H, last_trim, trim_every;
    int eof, failed;
    proxy *px;
    maxpar_emit_fn emit;
    void *emit_ctx;
    mp_chunk *free_chunks;
    uint32_t *work;          /* ring: cpus whose head may be writable, in the order found */
    uint32_t work_head, nwork;
    uint32_t *stv_buf;       /* scratch for a chunk's STV */
    uint64_t open, edges, bytes;
    maxpar_stats st;
    char error[RNR_ERR_MAX];
};



static void account(maxpar *m, int64_t delta)
{
    m->bytes += (uint64_t)delta;
    if (m->bytes > m->st.peak_bytes)
        m->st.peak_bytes = m->bytes;
}

static int fail(maxpar *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
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

maxpar *maxpar_new(uint32_t cpus, uint64_t msp, maxpar_emit_fn emit, void *ctx)
{
    maxpar *m = xcalloc(1, sizeof *m);
    m->cpus = cpus;
    m->words = (cpus + 63) / 64;
    m->msp = msp;
    m->trim_every = msp / 16 ? msp / 16 : 1;
    m->emit = emit;
    m->emit_ctx = ctx;
    m->px = xcalloc(cpus, sizeof *m->px);
    for (uint32_t p = 0; p < cpus; p++) {
        proxy *x = &m->px[p];
        x->cap = 16;
        x->open = xmalloc(x->cap * sizeof *x->open);
        x->unresolved = xcalloc(m->words, sizeof *x->unresolved);
        x->early_set = xcalloc(m->words, sizeof *x->early_set);
        x->held.stv = xmalloc(cpus * sizeof *x->held.stv);
        x->held.ptv = xmalloc(cpus * sizeof *x->held.ptv);
    }
    m->work = xmalloc(cpus * sizeof *m->work);
    m->stv_buf = xmalloc(cpus * sizeof *m->stv_buf);
    account(m, (int64_t)(sizeof *m + cpus * (sizeof(proxy) + 16 * sizeof(mp_chunk *) +
                                             2 * cpus * sizeof(uint32_t) + 16 * m->words)));
    return m;
}

void maxpar_free(maxpar *m)
{
    if (!m)
        return;
    for (uint32_t p = 0; p < m->cpus; p++) {
        proxy *x = &m->px[p];
        for (uint64_t i = 0; i < x->n; i++) {
            mp_chunk *c = x->open[(x->head + i) & (x->cap - 1)];
            if (c->sv != c->sv_inline)
                free(c->sv);
            if (c->ptv != c->ptv_inline)
                free(c->ptv);
            free(c);
        }
        free(x->open);
        if (x->waiting) {
            for (uint32_t q = 0; q < m->cpus; q++) {
                if (x->waiting[q])
                    free(x->waiting[q]->e);
                free(x->waiting[q]);
            }
            free(x->waiting);
        }
        free(x->early);
        free(x->early_t);
        free(x->unresolved);
        free(x->early_set);
        free(x->held.stv);
        free(x->held.ptv);
    }
    while (m->free_chunks) {
        mp_chunk *c = m->free_chunks;
        m->free_chunks = c->next_free;
        free(c);
    }
    free(m->px);
    free(m->work);
    free(m->stv_buf);
    free(m);
}

const char *maxpar_error(const maxpar *m) { return m->error; }
const maxpar_stats *maxpar_get_stats(const maxpar *m) { return &m->st; }
uint64_t maxpar_open_chunks(const maxpar *m) { return m->open; }

/* ---- chunks ---- */

static mp_chunk *chunk_new(maxpar *m, const rnr_initial_chunk *in)
{
    mp_chunk *c = m->free_chunks;
    if (c)
        m->free_chunks = c->next_free;
    else
        c = xmalloc(sizeof *c);
    c->cpu = in->cpu;
    c->tid = in->tid;
    c->ts = in->ts;
    c->cs = in->cs;
    c->pending = 0;
    c->nptv = 0;
    c->ptv_cap = INLINE_PTV;
    c->ptv = c->ptv_inline;
    c->nsv = in->nsv;
    c->sv = in->nsv <= INLINE_SV ? c->sv_inline : xmalloc(in->nsv * sizeof *c->sv);
    if (in->nsv)
        memcpy(c->sv, in->sv, in->nsv * sizeof *c->sv);
    uint64_t last = in->ts;
    for (uint32_t i = 0; i < in->nsv; i++)
        if (in->sv[i].ts > last)
            last = in->sv[i].ts;
    c->bound = m->msp ? sat_add(last, m->msp) : BOUND_MAX;
    m->open++;
    if (m->open > m->st.peak_open)
        m->st.peak_open = m->open;
    account(m, (int64_t)(sizeof *c + (in->nsv > INLINE_SV ? in->nsv * sizeof *c->sv : 0)));
    return c;
}

static void chunk_free(maxpar *m, mp_chunk *c)
{
    int64_t extra = 0;
    if (c->sv != c->sv_inline) {
        extra += (int64_t)(c->nsv * sizeof *c->sv);
        free(c->sv);
    }
    if (c->ptv != c->ptv_inline) {
        extra += (int64_t)(c->ptv_cap * sizeof *c->ptv);
        free(c->ptv);
    }
    account(m, -(int64_t)sizeof *c - extra);
    c->next_free = m->free_chunks;
    m->free_chunks = c;
    m->open--;
}

/* One more predecessor token from CPU FROM (COUNT of them). */
static void ptv_add(maxpar *m, mp_chunk *c, uint32_t from, uint32_t count)
{
    for (uint32_t i = 0; i < c->nptv; i++) {
        if (c->ptv[i].cpu == from) {
            c->ptv[i].count += count;
            return;
        }
    }
    if (c->nptv == c->ptv_cap) {
        uint32_t cap = c->ptv_cap * 2;
        rnr_ptv_entry *p = xmalloc(cap * sizeof *p);
        memcpy(p, c->ptv, c->nptv * sizeof *p);
        if (c->ptv != c->ptv_inline) {
            account(m, -(int64_t)(c->ptv_cap * sizeof *p));
            free(c->ptv);
        }
        account(m, (int64_t)(cap * sizeof *p));
        c->ptv = p;
        c->ptv_cap = cap;
    }
    c->ptv[c->nptv].cpu = from;
    c->ptv[c->nptv].count = count;
    c->nptv++;
}

/* ---- proxies ---- */

static mp_chunk *open_at(const proxy *x, uint64_t i) { return x->open[(x->head + i) & (x->cap - 1)]; }

static void open_push(maxpar *m, proxy *x, mp_chunk *c)
{
    if (x->n == x->cap) {
        uint64_t cap = x->cap * 2;
        mp_chunk **o = xmalloc(cap * sizeof *o);
        for (uint64_t i = 0; i < x->n; i++)
            o[i] = open_at(x, i);
        free(x->open);
        account(m, (int64_t)(x->cap * sizeof *o));
        x->open = o;
        x->head = 0;
        x->cap = cap;
    }
    x->open[(x->head + x->n) & (x->cap - 1)] = c;
    x->n++;
}

/* The first open chunk of X with TS > t (binary search), or NULL. */
static mp_chunk *first_after(const proxy *x, uint64_t t)
{
    uint64_t lo = 0, hi = x->n;
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (open_at(x, mid)->ts > t)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo < x->n ? open_at(x, lo) : NULL;
}

static waiting_list *waiting(maxpar *m, uint32_t q, uint32_t p)
{
    proxy *x = &m->px[q];
    if (!x->waiting) {
        x->waiting = xcalloc(m->cpus, sizeof *x->waiting);
        account(m, (int64_t)(m->cpus * sizeof *x->waiting));
    }
    if (!x->waiting[p]) {
        waiting_list *l = xcalloc(1, sizeof *l);
        l->cap = 8;
        l->e = xmalloc(l->cap * sizeof *l->e);
        x->waiting[p] = l;
        account(m, (int64_t)(sizeof *l + l->cap * sizeof *l->e));
    }
    return x->waiting[p];
}

static mp_edge *edge_at(const waiting_list *l, uint32_t i) { return &l->e[(l->head + i) & (l->cap - 1)]; }

static void edge_push(maxpar *m, waiting_list *l, const mp_edge *e)
{
    if (l->n == l->cap) {
        uint32_t cap = l->cap * 2;
        mp_edge *ne = xmalloc(cap * sizeof *ne);
        for (uint32_t i = 0; i < l->n; i++)
            ne[i] = *edge_at(l, i);
        free(l->e);
        account(m, (int64_t)(l->cap * sizeof *ne));
        l->e = ne;
        l->head = 0;
        l->cap = cap;
    }
    *edge_at(l, l->n) = *e;
    l->n++;
    m->edges++;
    if (m->edges > m->st.peak_edges)
        m->st.peak_edges = m->edges;
}

static void work_add(maxpar *m, uint32_t p)
{
    if (!m->px[p].in_work) {
        m->px[p].in_work = 1;
        uint32_t i = m->work_head + m->nwork++;
        m->work[i < m->cpus ? i : i - m->cpus] = p;   /* nwork <= cpus: one wrap at most */
    }
}

/* An edge to a chunk that will not get its token from this source any
 * more (dropped, or decided): one pending predecessor fewer. */
static void edge_decided(maxpar *m, mp_chunk *dst)
{
    if (--dst->pending == 0) {
        proxy *x = &m->px[dst->cpu];
        if (x->n && open_at(x, 0) == dst)
            work_add(m, dst->cpu);
    }
}

/* Chunk C (just read, on proxy q = C's cpu) is the destination of every
 * waiting entry with t < C.ts. */
static void resolve_waiting(maxpar *m, mp_chunk *c)
{
    proxy *x = &m->px[c->cpu];
    for (uint32_t w = 0; w < m->words; w++) {
        uint64_t bits = x->unresolved[w];
        while (bits) {
            uint32_t p = w * 64 + (uint32_t)__builtin_ctzll(bits);
            bits &= bits - 1;
            waiting_list *l = x->waiting[p];
            while (l->resolved < l->n) {
                mp_edge *e = edge_at(l, l->resolved);
                if (e->t >= c->ts)
                    break;
                e->dst = c;
                c->pending++;
                l->resolved++;
            }
            if (l->resolved == l->n)
                bit_clear(x->unresolved, p);
        }
    }
}

/* Chunk C of cpu p depends on cpu q from time t. */
static void add_edge(maxpar *m, mp_chunk *c, uint32_t q, uint64_t t)
{
    uint32_t p = c->cpu;
    waiting_list *l = waiting(m, q, p);
    /* Older chunks' edges at t or later are implied by this one. */
    while (l->n && edge_at(l, l->n - 1)->t >= t) {
        mp_edge *e = edge_at(l, l->n - 1);
        l->n--;
        m->edges--;
        if (l->resolved > l->n)
            l->resolved = l->n;
        if (e->dst)
            edge_decided(m, e->dst);
        m->st.dropped_later++;
    }
    mp_edge e = { c, NULL, t };
    proxy *x = &m->px[q];
    if (l->resolved == l->n)           /* an earlier entry unresolved: so is this one */
        e.dst = first_after(x, t);
    if (e.dst) {
        e.dst->pending++;
        l->resolved++;
    } else {
        bit_set(x->unresolved, p);
    }
    edge_push(m, l, &e);
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
static void sort_ptv(rnr_ptv_entry *p, uint32_t n)
{
    for (uint32_t i = 1; i < n; i++) {
        rnr_ptv_entry x = p[i];
        uint32_t j = i;
        for (; j > 0 && p[j - 1].cpu > x.cpu; j--)
            p[j] = p[j - 1];
        p[j] = x;
    }
}

static void hold(proxy *x, const rnr_final_chunk *c)
{
    held_chunk *h = &x->held;
    h->valid = 1;
    h->c = *c;
    memcpy(h->stv, c->stv, c->nstv * sizeof *h->stv);
    memcpy(h->ptv, c->ptv, c->nptv * sizeof *h->ptv);
    h->c.stv = h->stv;
    h->c.ptv = h->ptv;
}

/* Output of a written chunk through the C0/C1 merge: C0 (held) and C1 are
 * merged when they belong to the same thread, C0 has no successor and C1
 * no predecessor: the recorded parallelism is unchanged. A chunk with a
 * successor is never held, so nothing waits behind a held chunk. */
static int output(maxpar *m, uint32_t p, const rnr_final_chunk *c)
{
    held_chunk *h = &m->px[p].held;
    if (h->valid && h->c.tid == c->tid && h->c.nstv == 0 && c->nptv == 0 &&
        h->c.cs <= (UINT64_MAX >> 1) - c->cs) {
        h->c.cs += c->cs;
        h->c.nstv = c->nstv;
        memcpy(h->stv, c->stv, c->nstv * sizeof *h->stv);
        m->st.merged++;
    } else {
        if (h->valid && emit(m, &h->c) < 0)
            return -1;
        hold(&m->px[p], c);
    }
    if (h->c.nstv) {
        h->valid = 0;
        return emit(m, &h->c);
    }
    return 0;
}

/* Writes C, the oldest open chunk of its cpu: decides its edges, sends
 * its tokens, and frees it. */
static int write_chunk(maxpar *m, mp_chunk *c)
{
    uint32_t p = c->cpu, nstv = 0;
    for (uint32_t i = 0; i < c->nsv; i++) {
        uint32_t q = c->sv[i].cpu;
        proxy *x = &m->px[q];
        waiting_list *l = x->waiting ? x->waiting[p] : NULL;
        if (!l || !l->n || edge_at(l, 0)->src != c)
            continue;                   /* dropped by a later chunk */
        mp_edge e = *edge_at(l, 0);
        const mp_edge *next = l->n > 1 ? edge_at(l, 1) : NULL;
        /* Implied by the next edge if that lands in the same chunk. Not
         * knowable for an Early edge: q's next chunk may end between the
         * two times, so each Early edge keeps its token. */
        int same = next && e.dst && e.dst->ts > next->t;
        l->head = (l->head + 1) & (l->cap - 1);
        l->n--;
        m->edges--;
        if (l->resolved)
            l->resolved--;
        if (l->n == 0)
            bit_clear(x->unresolved, p);
        if (e.dst) {
            if (same) {
                m->st.dropped_same++;
            } else {
                m->stv_buf[nstv++] = q;
                ptv_add(m, e.dst, p, 1);
            }
            edge_decided(m, e.dst);
        } else if (m->eof) {
            m->st.discarded++;          /* q never dumps a later chunk */
        } else {
            /* Early: q's next chunk to come is the destination. */
            if (!x->early) {
                x->early = xcalloc(m->cpus, sizeof *x->early);
                x->early_t = xcalloc(m->cpus, sizeof *x->early_t);
                account(m, (int64_t)(m->cpus * 12));
            }
            x->early[p]++;
            if (e.t > x->early_t[p])
                x->early_t[p] = e.t;
            bit_set(x->early_set, p);
            m->stv_buf[nstv++] = q;
            m->st.early_tokens++;
        }
    }
    m->st.tokens += nstv;
    sort_ptv(c->ptv, c->nptv);
    rnr_final_chunk f = { p, c->tid, c->cs, nstv, m->stv_buf, c->nptv, c->ptv };
    proxy *x = &m->px[p];
    x->head = (x->head + 1) & (x->cap - 1);
    x->n--;
    int rc = output(m, p, &f);
    chunk_free(m, c);
    if (x->n && open_at(x, 0)->pending == 0)
        work_add(m, p);
    return rc;
}

/* Trim: writes every chunk that is old enough, whose predecessors are
 * written, and whose cpu's earlier chunks are written. */
static int trim(maxpar *m)
{
    m->st.trims++;
    m->last_trim = m->H;
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
            mp_chunk *c = open_at(x, 0);
            if (c->pending || m->H <= c->bound)
                break;
            if (write_chunk(m, c) < 0)
                return -1;
        }
    }
    return 0;
}

int maxpar_add(maxpar *m, const rnr_initial_chunk *in)
{
    if (m->failed)
        return -1;
    if (m->eof)
        return fail(m, "chunk added after the end of the log");
    if (in->cpu >= m->cpus)
        return fail(m, "chunk of cpu %u in a log of %u cpus", in->cpu, m->cpus);
    proxy *x = &m->px[in->cpu];
    if (x->seen && in->ts < x->last_ts)
        return fail(m, "cpu %u timestamp goes back from %llu to %llu", in->cpu,
                    (unsigned long long)x->last_ts, (unsigned long long)in->ts);
    if (m->msp && sat_add(in->ts, m->msp) < m->H)
        return fail(m, "cpu %u chunk with TS %llu arrives after a chunk with TS %llu: the log "
                       "breaks bounded silence (MSP %llu)",
                    in->cpu, (unsigned long long)in->ts, (unsigned long long)m->H,
                    (unsigned long long)m->msp);
    for (uint32_t i = 0; i < in->nsv; i++) {
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
    if (in->cs == 0 || in->cs > (UINT64_MAX >> 1))
        return fail(m, "cpu %u chunk with TS %llu has size %llu, out of range", in->cpu,
                    (unsigned long long)in->ts, (unsigned long long)in->cs);
    x->seen = 1;
    x->last_ts = in->ts;
    if (in->ts > m->H)
        m->H = in->ts;
    m->st.chunks_in++;
    m->st.dependences += in->nsv;
    mp_chunk *c = chunk_new(m, in);
    open_push(m, x, c);
    resolve_waiting(m, c);
    /* Early tokens wait for this, the first chunk the cpu dumps after them. */
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
                            c->cpu, (unsigned long long)c->ts, s,
                            (unsigned long long)x->early_t[s], (unsigned long long)m->msp);
            ptv_add(m, c, s, x->early[s]);
            x->early[s] = 0;
        }
    }
    for (uint32_t i = 0; i < c->nsv; i++)
        add_edge(m, c, c->sv[i].cpu, c->sv[i].ts);
    if (m->H >= m->last_trim + m->trim_every)
        return trim(m);
    return 0;
}

int maxpar_finish(maxpar *m)
{
    if (m->failed)
        return -1;
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
