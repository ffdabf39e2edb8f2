/* backend/oracle.c: the truth-based bounds on replay parallelism
 * (backend/oracle.h). Both are longest paths in a DAG of weighted nodes.
 * oracle_compute builds the whole graph and computes them in a topological
 * order (Kahn's algorithm); a cycle would mean that the truth contradicts
 * the log, and is an error. oracle_compute_window streams the files with a
 * window of chunks (below, "the stream", with the argument that it gives
 * the same numbers). */
#include "backend/oracle.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/truth.h"
#include "formats/log.h"
#include "backend/heap.h"
#include "rru/alloc.h"

typedef struct ochunk {
    uint32_t cpu, tid;
    uint64_t ts, cs, start;    /* start: its first instruction's index in its lane */
} ochunk;

typedef struct edge {
    uint64_t from, to;
} edge;

typedef struct graph {
    uint64_t n;
    uint64_t *weight;
    edge *e;
    size_t ne, cap;
} graph;

static void add_edge(graph *g, uint64_t from, uint64_t to)
{
    if (from == to)
        return;
    if (g->ne == g->cap) {
        g->cap = g->cap ? 2 * g->cap : 1024;
        g->e = xrealloc(g->e, g->cap * sizeof *g->e);
    }
    g->e[g->ne++] = (edge){from, to};
}

/* The longest weighted path; UINT64_MAX if the graph has a cycle. */
static uint64_t longest_path(const graph *g)
{
    uint64_t *deg = xcalloc(g->n, sizeof *deg), *off = xcalloc(g->n + 1, sizeof *off);
    for (size_t i = 0; i < g->ne; i++) {
        deg[g->e[i].to]++;
        off[g->e[i].from + 1]++;
    }
    for (uint64_t i = 0; i < g->n; i++)
        off[i + 1] += off[i];
    uint64_t *adj = xmalloc((g->ne ? g->ne : 1) * sizeof *adj), *fill = xmalloc((g->n + 1) * sizeof *fill);
    memcpy(fill, off, (g->n + 1) * sizeof *fill);
    for (size_t i = 0; i < g->ne; i++)
        adj[fill[g->e[i].from]++] = g->e[i].to;
    uint64_t *start = xcalloc(g->n, sizeof *start), *queue = xmalloc((g->n ? g->n : 1) * sizeof *queue);
    uint64_t head = 0, tail = 0, best = 0;
    for (uint64_t i = 0; i < g->n; i++)
        if (!deg[i])
            queue[tail++] = i;
    while (head < tail) {
        uint64_t v = queue[head++], fin = start[v] + g->weight[v];
        if (fin > best)
            best = fin;
        for (uint64_t k = off[v]; k < off[v + 1]; k++) {
            uint64_t w = adj[k];
            if (fin > start[w])
                start[w] = fin;
            if (--deg[w] == 0)
                queue[tail++] = w;
        }
    }
    int cyclic = tail != g->n;
    free(deg);
    free(off);
    free(adj);
    free(fill);
    free(start);
    free(queue);
    return cyclic ? UINT64_MAX : best;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Index of the last element <= V in the sorted array A[0..n). */
static uint64_t floor_index(const uint64_t *a, uint64_t n, uint64_t v)
{
    uint64_t lo = 0, hi = n;
    while (hi - lo > 1) {
        uint64_t mid = (lo + hi) / 2;
        if (a[mid] <= v)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

typedef struct lanes {
    uint32_t cpus;
    uint64_t *n;               /* [cpu] chunks */
    uint64_t **ids;            /* [cpu] chunk ids in lane order */
    uint64_t *len;             /* [cpu] instructions */
} lanes;

/* The chunk of lane P holding instruction OFF, or UINT64_MAX. */
static uint64_t chunk_at(const lanes *l, const ochunk *ch, uint32_t p, uint64_t off)
{
    if (p >= l->cpus || off >= l->len[p])
        return UINT64_MAX;
    uint64_t lo = 0, hi = l->n[p];
    while (hi - lo > 1) {
        uint64_t mid = (lo + hi) / 2;
        if (ch[l->ids[p][mid]].start <= off)
            lo = mid;
        else
            hi = mid;
    }
    return l->ids[p][lo];
}

static int by_thread_time(const void *a, const void *b, void *arg)
{
    const ochunk *ch = arg;
    const ochunk *x = &ch[*(const uint64_t *)a], *y = &ch[*(const uint64_t *)b];
    if (x->tid != y->tid)
        return x->tid < y->tid ? -1 : 1;
    if (x->ts != y->ts)
        return x->ts < y->ts ? -1 : 1;
    return *(const uint64_t *)a < *(const uint64_t *)b ? -1 : 1;
}

/* The initial log at PATH opened, or NULL with "PATH: ..." in err. */
static rnr_reader *open_initial(const char *path, char *err, size_t errlen)
{
    rnr_reader *r = rnr_reader_open(path, err, errlen);
    if (r && rnr_reader_header(r)->kind != RNR_LOG_INITIAL) {
        snprintf(err, errlen, "%s: not an initial log", path);
        rnr_reader_close(r);
        return NULL;
    }
    return r;
}

int oracle_compute(const char *initial_log, const char *truth_path, oracle_bounds *out, char *err,
                   size_t errlen)
{
    memset(out, 0, sizeof *out);
    rnr_reader *r = open_initial(initial_log, err, errlen);
    if (!r)
        return -1;
    lanes l = {rnr_reader_header(r)->cpus, NULL, NULL, NULL};
    l.n = xcalloc(l.cpus, sizeof *l.n);
    l.ids = xcalloc(l.cpus, sizeof *l.ids);
    l.len = xcalloc(l.cpus, sizeof *l.len);
    ochunk *ch = NULL;
    size_t nch = 0, cap = 0;
    rnr_initial_chunk c;
    int rc;
    while ((rc = rnr_reader_next_initial(r, &c)) == 1) {
        if (nch == cap) {
            cap = cap ? 2 * cap : 1024;
            ch = xrealloc(ch, cap * sizeof *ch);
        }
        ch[nch] = (ochunk){c.cpu, c.tid, c.ts, c.cs, l.len[c.cpu]};
        l.len[c.cpu] += c.cs;
        l.ids[c.cpu] = xrealloc(l.ids[c.cpu], (l.n[c.cpu] + 1) * sizeof **l.ids);
        l.ids[c.cpu][l.n[c.cpu]++] = nch++;
        out->instructions += c.cs;
    }
    if (rc < 0)
        snprintf(err, errlen, "%s", rnr_reader_error(r));
    rnr_reader_close(r);
    truth_set ts = {0};
    int result = -1;
    uint64_t *order = NULL, **cuts = NULL, *ncut = NULL, *seg_base = NULL;
    graph g = {0};
    if (rc < 0 || truth_load(truth_path, &ts, err, errlen) < 0)
        goto out;
    out->chunks = nch;
    out->deps = ts.n;
    for (size_t i = 0; i < ts.n; i++) {
        const truth_dep *d = &ts.dep[i];
        if (chunk_at(&l, ch, d->src.cpu, d->src.insn) == UINT64_MAX ||
            chunk_at(&l, ch, d->dst.cpu, d->dst.insn) == UINT64_MAX) {
            snprintf(err, errlen, "%s: a dependence names an instruction the initial log does not "
                     "have (cpu %u instruction %llu)", truth_path, d->src.cpu,
                     (unsigned long long)d->src.insn);
            goto out;
        }
    }
    /* Each thread's chunks in time order: consecutive ones on two CPUs. */
    order = xmalloc((nch ? nch : 1) * sizeof *order);
    for (size_t i = 0; i < nch; i++)
        order[i] = i;
    qsort_r(order, nch, sizeof *order, by_thread_time, ch);

    /* The chunk bound. */
    g.n = nch;
    g.weight = xmalloc((nch ? nch : 1) * sizeof *g.weight);
    for (size_t i = 0; i < nch; i++)
        g.weight[i] = ch[i].cs;
    for (uint32_t p = 0; p < l.cpus; p++)
        for (uint64_t k = 1; k < l.n[p]; k++)
            add_edge(&g, l.ids[p][k - 1], l.ids[p][k]);
    for (size_t i = 1; i < nch; i++)
        if (ch[order[i]].tid == ch[order[i - 1]].tid && ch[order[i]].cpu != ch[order[i - 1]].cpu)
            add_edge(&g, order[i - 1], order[i]);
    for (size_t i = 0; i < ts.n; i++)
        add_edge(&g, chunk_at(&l, ch, ts.dep[i].src.cpu, ts.dep[i].src.insn),
                 chunk_at(&l, ch, ts.dep[i].dst.cpu, ts.dep[i].dst.insn));
    out->chunk_critical_path = longest_path(&g);
    free(g.weight);
    free(g.e);
    memset(&g, 0, sizeof g);

    /* The instruction bound: each lane cut at dependence ends and where a
     * thread leaves or joins it. */
    cuts = xcalloc(l.cpus, sizeof *cuts);
    ncut = xcalloc(l.cpus, sizeof *ncut);
    uint64_t *capc = xcalloc(l.cpus, sizeof *capc);
#define CUT(p, at)                                                                   \
    do {                                                                             \
        if (ncut[p] == capc[p]) {                                                    \
            capc[p] = capc[p] ? 2 * capc[p] : 64;                                    \
            cuts[p] = xrealloc(cuts[p], capc[p] * sizeof **cuts);                    \
        }                                                                            \
        cuts[p][ncut[p]++] = (at);                                                   \
    } while (0)
    for (uint32_t p = 0; p < l.cpus; p++)
        CUT(p, 0);
    for (size_t i = 0; i < ts.n; i++) {
        CUT(ts.dep[i].src.cpu, ts.dep[i].src.insn + 1);
        CUT(ts.dep[i].dst.cpu, ts.dep[i].dst.insn);
    }
    for (size_t i = 1; i < nch; i++) {
        const ochunk *a = &ch[order[i - 1]], *b = &ch[order[i]];
        if (a->tid == b->tid && a->cpu != b->cpu) {
            CUT(a->cpu, a->start + a->cs);
            CUT(b->cpu, b->start);
        }
    }
    free(capc);
    seg_base = xcalloc((size_t)l.cpus + 1, sizeof *seg_base);
    for (uint32_t p = 0; p < l.cpus; p++) {
        qsort(cuts[p], ncut[p], sizeof **cuts, cmp_u64);
        uint64_t m = 0;
        for (uint64_t k = 0; k < ncut[p]; k++)
            if (cuts[p][k] < l.len[p] && (m == 0 || cuts[p][k] != cuts[p][m - 1]))
                cuts[p][m++] = cuts[p][k];
        ncut[p] = m;
        seg_base[p + 1] = seg_base[p] + m;
    }
    g.n = seg_base[l.cpus];
    g.weight = xmalloc((g.n ? g.n : 1) * sizeof *g.weight);
    for (uint32_t p = 0; p < l.cpus; p++)
        for (uint64_t k = 0; k < ncut[p]; k++) {
            uint64_t end = k + 1 < ncut[p] ? cuts[p][k + 1] : l.len[p];
            g.weight[seg_base[p] + k] = end - cuts[p][k];
            if (k)
                add_edge(&g, seg_base[p] + k - 1, seg_base[p] + k);
        }
#define SEG(p, insn) (seg_base[p] + floor_index(cuts[p], ncut[p], (insn)))
    for (size_t i = 0; i < ts.n; i++) {
        const truth_dep *d = &ts.dep[i];
        add_edge(&g, SEG(d->src.cpu, d->src.insn), SEG(d->dst.cpu, d->dst.insn));
    }
    for (size_t i = 1; i < nch; i++) {
        const ochunk *a = &ch[order[i - 1]], *b = &ch[order[i]];
        if (a->tid == b->tid && a->cpu != b->cpu)
            add_edge(&g, SEG(a->cpu, a->start + a->cs - 1), SEG(b->cpu, b->start));
    }
    out->segments = g.n;
    out->insn_critical_path = longest_path(&g);
    if (out->chunk_critical_path == UINT64_MAX || out->insn_critical_path == UINT64_MAX) {
        snprintf(err, errlen, "%s: the dependences form a cycle with the log's order", truth_path);
        goto out;
    }
    out->chunk_parallelism = out->chunk_critical_path
                                 ? (double)out->instructions / (double)out->chunk_critical_path : 0;
    out->insn_parallelism = out->insn_critical_path
                                ? (double)out->instructions / (double)out->insn_critical_path : 0;
    result = 0;
out:
    free(g.weight);
    free(g.e);
    for (uint32_t p = 0; cuts && p < l.cpus; p++)
        free(cuts[p]);
    free(cuts);
    free(ncut);
    free(seg_base);
    free(order);
    truth_free(&ts);
    for (uint32_t p = 0; p < l.cpus; p++)
        free(l.ids[p]);
    free(l.ids);
    free(l.n);
    free(l.len);
    free(ch);
    return result;
}

/* ---- the stream ----
 *
 * The same two longest paths, with the initial log and the truth read side
 * by side and at most a window of chunks held.
 *
 * Chunks are read in log order; a dependence is taken as soon as the
 * chunks holding both its ends have been read; a chunk takes its place in
 * its thread (the edge from the thread's previous chunk) once bounded
 * silence says no earlier chunk of it can come (settle, below). A chunk
 * is *finalized* when more than the window is held, the oldest by (TS,
 * log index) first, and at the end: its values are computed and it is
 * dropped.
 *
 * Values. Chunk graph: fin(C) = max(fin of C's predecessors) + cs(C).
 * Instruction graph: every instruction is a node of weight 1 with an edge
 * to the next one of its lane, and f(i) = max(f(i - 1), f(j) for every
 * edge j -> i) + 1; along a lane f grows by one per instruction except at
 * the destinations of edges, so a chunk's f is its lane's f before it and
 * the values of the edges into it. A forward dependence on one CPU is
 * implied by the lane's order in both graphs and only adds its cuts. A
 * predecessor finalized earlier hands
 * its value over (an edge out of a held chunk waits in it; the thread's
 * last chunk leaves its values in the thread's entry); one dropped before
 * the dependence was read is a *far* source: a first pass notes its
 * position, and a second pass, which takes the same decisions (they
 * depend on TS, log indices and instruction counts only, never on
 * values), keeps its value when its chunk is finalized.
 *
 * Why the result is the whole graph's. Give up when a dependence lands in
 * a chunk already finalized, when a chunk is finalized while a
 * predecessor is still held (an edge against the finalizing order, or a
 * cycle), when a thread's chunks come out of (TS, log index) order, when a
 * migration involves an empty chunk, when a dependence on one CPU goes
 * backward, and when a position the first pass noted is missing in the
 * second. Otherwise every
 * edge of the whole graph reached its destination before that was
 * finalized, and came from a source finalized before it; so finalizing is
 * a topological order, each value is computed from all its predecessors'
 * final values, and by induction each equals the whole graph's: fin is the
 * longest path ending at the chunk, f(i) the longest ending at instruction
 * i. The chunk bound is the largest fin. The instruction bound: oracle_compute
 * contracts each lane into segments between cuts (a source's next
 * instruction, a destination, a migration's two ends); an edge leaves a
 * segment only from its last instruction and enters only at its first, so
 * a path through the segments is a path through their instructions of the
 * same weight and back (no edge on one CPU goes backward, so no edge stays
 * inside a segment): the largest f at a lane's end. Its node count is the
 * number of distinct cuts: each is attached to the chunk holding it (a cut
 * at a lane's read end waits for its next non-empty chunk, one in a chunk
 * dropped already was noted by the first pass and attached when the
 * second reads that chunk) and counted once when the chunk is finalized.
 * A cycle would put some edge against the finalizing order, so it is
 * given up and oracle_compute reports it.
 *
 * Memory: the window's chunks and the edges into and out of them, the far
 * positions (24 bytes each; each comes from a dependence reaching back past
 * the window, which the whole graph would hold, with every other one), one
 * entry per thread; the files are read once, or twice when there are far
 * positions. */

typedef struct sin {
    uint64_t d, v;             /* destination instruction; the source's f, then f(d) */
} sin;

typedef struct snode snode;

typedef struct sout {
    snode *to;
    uint64_t s, d;             /* source instruction (here), destination (in to) */
} sout;

struct snode {
    uint32_t cpu, tid;
    uint64_t ts, idx, cs, start;
    uint64_t begin;            /* the largest fin of the predecessors finalized */
    uint32_t waiting;          /* predecessors held and not finalized */
    uint32_t nout, capout, nin, capin, ncut, capcut;
    sout *out;
    sin *in;
    uint64_t *cut;
};

typedef struct poslist {
    uint64_t *pos, *f, *fin;   /* sorted positions; f and fin: the second pass's values */
    size_t n, cap, next;
} poslist;

typedef struct slane {
    snode **q;                 /* held chunks in lane order: q[head..n) */
    size_t head, n, cap;
    uint64_t len;              /* instructions read */
    uint64_t done;             /* instructions finalized */
    uint64_t fend, lastfin;    /* f of the last finalized instruction; fin of its chunk */
    int pending_cut;           /* a cut at len, for the next non-empty chunk */
    poslist farv, farc;        /* far sources; far cut points */
} slane;

typedef struct sthread {
    uint64_t key;              /* tid + 1; 0: empty */
    snode *held;               /* its last settled chunk while held */
    uint32_t cpu;
    uint64_t ts, idx, end, cs, fin, fend;
} sthread;

static int node_before(const snode *a, const snode *b)
{
    return a->ts < b->ts || (a->ts == b->ts && a->idx < b->idx);
}

#define NODE_LESS(a, b) node_before(*(a), *(b))
/* A binary min-heap of chunks by (TS, log index). */
HEAP_DEFINE(nheap, snode *, NODE_LESS)

typedef struct stream {
    uint32_t cpus;
    uint64_t window;
    int hold_msp;              /* ORACLE_HOLD_MSP */
    int pass;                  /* 1: note far positions; 2: use them */
    int need_second;
    uint64_t msp, hmax;        /* the log's MSP; the largest TS read */
    slane *lane;
    nheap held_heap;           /* every chunk held, finalized from the top */
    nheap unsettled;           /* the chunks whose place in their thread may still change */
    sthread *thr;
    size_t capthr, nthr;
    uint64_t held, edges, far;
    uint64_t far_compact;      /* pos_add makes the lists unique past this */
    uint64_t instructions, chunks, deps, chunk_path, insn_path, segments;
    oracle_bounds *out;
    const char *why;
} stream;

#define GROW(arr, n, cap, first)                                      \
    do {                                                              \
        if ((n) == (cap)) {                                           \
            (cap) = (cap) ? 2 * (cap) : (first);                      \
            (arr) = xrealloc((arr), (size_t)(cap) * sizeof *(arr));   \
        }                                                             \
    } while (0)

static void give_up(stream *s, const char *why)
{
    if (!s->why)
        s->why = why;
}

static void count_edges(stream *s, int64_t delta)
{
    s->edges = (uint64_t)((int64_t)s->edges + delta);
    if (s->edges > s->out->peak_edges)
        s->out->peak_edges = s->edges;
}


static size_t thr_slot(const stream *s, uint64_t key)
{
    size_t j = (size_t)((key * 0x9e3779b97f4a7c15ull) >> 20) & (s->capthr - 1);
    while (s->thr[j].key && s->thr[j].key != key)
        j = (j + 1) & (s->capthr - 1);
    return j;
}

/* The entry of thread TID, made empty (key 0 until filled) if new. */
static sthread *thr_get(stream *s, uint32_t tid, int create)
{
    uint64_t key = (uint64_t)tid + 1;
    if (create && (s->nthr + 1) * 2 > s->capthr) {
        size_t cap = s->capthr ? 2 * s->capthr : 64;
        sthread *old = s->thr;
        size_t oldcap = s->capthr;
        s->thr = xcalloc(cap, sizeof *s->thr);
        s->capthr = cap;
        for (size_t i = 0; i < oldcap; i++)
            if (old[i].key)
                s->thr[thr_slot(s, old[i].key)] = old[i];
        free(old);
    }
    if (!s->capthr)
        return NULL;
    sthread *t = &s->thr[thr_slot(s, key)];
    if (!t->key && create) {
        t->key = key;
        s->nthr++;
        return t;
    }
    return t->key ? t : NULL;
}

static size_t pos_unique(poslist *p)
{
    if (p->n > 1)
        qsort(p->pos, p->n, sizeof *p->pos, cmp_u64);
    size_t m = 0;
    for (size_t i = 0; i < p->n; i++)
        if (m == 0 || p->pos[i] != p->pos[m - 1])
            p->pos[m++] = p->pos[i];
    size_t dropped = p->n - m;
    p->n = m;
    return dropped;
}

/* Notes a far position (first pass). Duplicates are frequent (one source,
 * several readers): each time the lists have doubled since they were last
 * made unique, they are made unique again (sorting: n log n in all).
 * There is no limit on distinct positions: each comes from at least one
 * dependence, which the whole graph would hold too, and more. */
static void pos_add(stream *s, poslist *p, uint64_t x)
{
    GROW(p->pos, p->n, p->cap, 16);
    p->pos[p->n++] = x;
    s->far++;
    s->need_second = 1;
    if (s->far > s->far_compact) {
        for (uint32_t q = 0; q < s->cpus; q++) {
            s->far -= pos_unique(&s->lane[q].farv);
            s->far -= pos_unique(&s->lane[q].farc);
        }
        s->far_compact = 2 * (s->far > 4096 ? s->far : 4096);
    }
}

static void pos_finish(stream *s, poslist *p)
{
    s->far -= pos_unique(p);
    p->next = 0;
    p->f = xcalloc(p->n, sizeof *p->f);
    p->fin = xcalloc(p->n, sizeof *p->fin);
}

/* Index of X in P (sorted), or SIZE_MAX. */
static size_t pos_find(const poslist *p, uint64_t x)
{
    size_t lo = 0, hi = p->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (p->pos[mid] < x)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < p->n && p->pos[lo] == x ? lo : SIZE_MAX;
}

/* The held chunk of lane L holding instruction X (done <= X < len). */
static snode *held_at(const slane *l, uint64_t x)
{
    size_t lo = l->head, hi = l->n;
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (l->q[mid]->start <= x)
            lo = mid;
        else
            hi = mid;
    }
    return l->q[lo];
}

static void node_cut(stream *s, snode *n, uint64_t x)
{
    GROW(n->cut, n->ncut, n->capcut, 4);
    n->cut[n->ncut++] = x;
    (void)s;
}

/* A cut before instruction X of lane P (X <= the lane's read length). */
static void add_cut(stream *s, uint32_t p, uint64_t x)
{
    slane *l = &s->lane[p];
    if (x >= l->len) {
        l->pending_cut = 1;
    } else if (x >= l->done) {
        node_cut(s, held_at(l, x), x);
    } else if (s->pass == 1) {
        pos_add(s, &l->farc, x);
    } else if (pos_find(&l->farc, x) == SIZE_MAX) {
        give_up(s, "the second pass found a cut the first did not");
    }
}

static void add_chunk(stream *s, const rnr_initial_chunk *c)
{
    slane *l = &s->lane[c->cpu];
    snode *n = xcalloc(1, sizeof *n);
    *n = (snode){.cpu = c->cpu, .tid = c->tid, .ts = c->ts, .idx = s->chunks, .cs = c->cs,
                 .start = l->len};
    s->chunks++;
    s->instructions += c->cs;
    if (l->head > 0 && l->head * 2 >= l->n) {
        memmove(l->q, l->q + l->head, (l->n - l->head) * sizeof *l->q);
        l->n -= l->head;
        l->head = 0;
    }
    GROW(l->q, l->n, l->cap, 16);
    l->q[l->n++] = n;
    l->len += c->cs;
    nheap_push(&s->held_heap, n);
    if (++s->held > s->out->peak_chunks)
        s->out->peak_chunks = s->held;
    if (c->cs && l->pending_cut) {
        node_cut(s, n, n->start);
        l->pending_cut = 0;
    }
    for (; s->pass == 2 && l->farc.next < l->farc.n && l->farc.pos[l->farc.next] < l->len; l->farc.next++)
        node_cut(s, n, l->farc.pos[l->farc.next]);

    nheap_push(&s->unsettled, n);
    if (c->ts > s->hmax)
        s->hmax = c->ts;
}

/* N takes its place in its thread: the thread's previous chunk, and a
 * migration from it. Bounded silence says every chunk still to be read has
 * TS >= H - MSP, so one below that is settled (in (TS, log index) order,
 * its thread's order); one settled early (finalized while the window is
 * full, or at the end) and then passed by a late chunk of its thread
 * gives the window up. */
static void settle(stream *s, snode *n)
{
    sthread *t = thr_get(s, n->tid, 0);
    if (t && (n->ts < t->ts || (n->ts == t->ts && n->idx < t->idx))) {
        give_up(s, "a thread's chunk comes later in the log than bounded silence allows");
    } else if (t && t->cpu != n->cpu) {
        if (!t->cs || !n->cs) {
            give_up(s, "a thread migrates with an empty chunk");
        } else {
            add_cut(s, t->cpu, t->end);
            node_cut(s, n, n->start);
            if (t->held) {
                sout e = {n, t->end - 1, n->start};
                GROW(t->held->out, t->held->nout, t->held->capout, 4);
                t->held->out[t->held->nout++] = e;
                n->waiting++;
            } else {
                GROW(n->in, n->nin, n->capin, 4);
                n->in[n->nin++] = (sin){n->start, t->fend};
                if (t->fin > n->begin)
                    n->begin = t->fin;
            }
            count_edges(s, 1);
        }
    }
    if (!t)
        t = thr_get(s, n->tid, 1);
    t->held = n;
    t->cpu = n->cpu;
    t->ts = n->ts;
    t->idx = n->idx;
    t->end = n->start + n->cs;
    t->cs = n->cs;
}

static void settle_below(stream *s, uint64_t frontier)
{
    while (s->unsettled.n && s->unsettled.e[0]->ts < frontier && !s->why)
        settle(s, nheap_pop(&s->unsettled));
}

/* A truth dependence whose two ends have been read. */
static void add_dep(stream *s, const truth_dep *d)
{
    s->deps++;
    slane *ls = &s->lane[d->src.cpu], *ld = &s->lane[d->dst.cpu];
    if (d->dst.insn < ld->done) {
        give_up(s, "a dependence reaches a chunk already dropped (the window is too small)");
        return;
    }
    if (d->src.cpu == d->dst.cpu) {
        /* Implied by the lane's order, but for its cuts. */
        if (d->dst.insn <= d->src.insn) {
            give_up(s, "a dependence goes backward on one cpu");
            return;
        }
        add_cut(s, d->src.cpu, d->src.insn + 1);
        add_cut(s, d->dst.cpu, d->dst.insn);
        return;
    }
    snode *b = held_at(ld, d->dst.insn);
    add_cut(s, d->dst.cpu, d->dst.insn);
    add_cut(s, d->src.cpu, d->src.insn + 1);
    if (d->src.insn >= ls->done) {
        snode *a = held_at(ls, d->src.insn);
        GROW(a->out, a->nout, a->capout, 4);
        a->out[a->nout++] = (sout){b, d->src.insn, d->dst.insn};
        b->waiting++;
        count_edges(s, 1);
        return;
    }
    uint64_t v = 0, fin = 0;
    if (s->pass == 1) {
        pos_add(s, &ls->farv, d->src.insn);
    } else {
        size_t k = pos_find(&ls->farv, d->src.insn);
        if (k == SIZE_MAX) {
            give_up(s, "the second pass found a source the first did not");
            return;
        }
        v = ls->farv.f[k];
        fin = ls->farv.fin[k];
    }
    GROW(b->in, b->nin, b->capin, 4);
    b->in[b->nin++] = (sin){d->dst.insn, v};
    if (fin > b->begin)
        b->begin = fin;
    count_edges(s, 1);
}

static int by_dst(const void *a, const void *b)
{
    const sin *x = a, *y = b;
    return x->d < y->d ? -1 : x->d > y->d;
}

/* f at instruction X of N, after finalize turned N's in-edges into (d, f(d)). */
static uint64_t f_at(const snode *n, uint64_t fstart, uint64_t x)
{
    size_t lo = 0, hi = n->nin;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (n->in[mid].d <= x)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0)
        return fstart + (x + 1 - n->start);
    return n->in[lo - 1].v + (x - n->in[lo - 1].d);
}

static void finalize(stream *s, snode *n)
{
    slane *l = &s->lane[n->cpu];
    while (s->unsettled.n && !node_before(n, s->unsettled.e[0]) && !s->why)
        settle(s, nheap_pop(&s->unsettled));
    if (s->why)
        return;
    if (n->waiting) {
        give_up(s, "a dependence runs against the log's time order (or closes a cycle)");
        return;
    }
    if (l->head == l->n || l->q[l->head] != n) {
        give_up(s, "a cpu's chunks are not in time order");
        return;
    }
    uint64_t fin = (n->begin > l->lastfin ? n->begin : l->lastfin) + n->cs;
    /* f along the chunk: fold the in-edges, in order, into (d, f(d)). */
    if (n->nin > 1)
        qsort(n->in, n->nin, sizeof *n->in, by_dst);
    uint64_t fprev = l->fend, at = n->start;   /* fprev = f(at - 1) */
    for (size_t i = 0; i < n->nin;) {
        uint64_t d = n->in[i].d, best = fprev + (d - at);
        size_t j = i;
        for (; j < n->nin && n->in[j].d == d; j++)
            if (n->in[j].v > best)
                best = n->in[j].v;
        fprev = best + 1;
        at = d + 1;
        for (; i < j; i++)
            n->in[i].v = fprev;
    }
    uint64_t fend = n->cs ? f_at(n, l->fend, n->start + n->cs - 1) : l->fend;
    for (uint32_t i = 0; i < n->nout; i++) {
        snode *to = n->out[i].to;
        GROW(to->in, to->nin, to->capin, 4);
        to->in[to->nin++] = (sin){n->out[i].d, f_at(n, l->fend, n->out[i].s)};
        if (fin > to->begin)
            to->begin = fin;
        to->waiting--;
    }
    for (poslist *p = &l->farv; s->pass == 2 && p->next < p->n && p->pos[p->next] < n->start + n->cs;
         p->next++) {
        p->f[p->next] = f_at(n, l->fend, p->pos[p->next]);
        p->fin[p->next] = fin;
    }
    if (n->ncut > 1)
        qsort(n->cut, n->ncut, sizeof *n->cut, cmp_u64);
    for (uint32_t i = 0; i < n->ncut; i++)
        if (i == 0 || n->cut[i] != n->cut[i - 1])
            s->segments++;
    sthread *t = thr_get(s, n->tid, 0);
    if (t && t->held == n) {
        t->held = NULL;
        t->fin = fin;
        t->fend = fend;
    }
    if (fin > s->chunk_path)
        s->chunk_path = fin;
    if (fend > s->insn_path)
        s->insn_path = fend;
    l->lastfin = fin;
    l->fend = fend;
    l->done = n->start + n->cs;
    l->head++;
    count_edges(s, -(int64_t)n->nin);   /* its out-edges now wait in their destinations */
    s->held--;
    free(n->out);
    free(n->in);
    free(n->cut);
    free(n);
}

static int covered(const stream *s, const truth_dep *d)
{
    return s->lane[d->src.cpu].len > d->src.insn && s->lane[d->dst.cpu].len > d->dst.insn;
}

/* One pass over both files. 0 (s->why set if the window was given up), or -1 with err. */
static int stream_pass(stream *s, const char *initial_log, const char *truth_path, char *err,
                       size_t errlen)
{
    rnr_reader *r = open_initial(initial_log, err, errlen);
    if (!r)
        return -1;
    truth_reader *tr = truth_reader_open(truth_path, err, errlen);
    if (!tr) {
        rnr_reader_close(r);
        return -1;
    }
    if (!s->lane) {
        s->cpus = rnr_reader_header(r)->cpus;
        s->msp = rnr_reader_header(r)->msp;
        s->lane = xcalloc(s->cpus, sizeof *s->lane);
    }
    for (uint32_t p = 0; p < s->cpus; p++)
        s->lane[p].pending_cut = 1;           /* every lane starts a segment at 0 */
    truth_dep d;
    int have = truth_reader_next(tr, &d, err, errlen), rc = 1, result = 0;
    while (have >= 0 && !s->why) {
        rnr_initial_chunk c;
        if (rc == 1 && (rc = rnr_reader_next_initial(r, &c)) == 1) {
            add_chunk(s, &c);
            if (s->hmax > s->msp)
                settle_below(s, s->hmax - s->msp);
        }
        if (rc < 0) {
            snprintf(err, errlen, "%s", rnr_reader_error(r));
            result = -1;
            break;
        }
        for (; have == 1 && !s->why; have = truth_reader_next(tr, &d, err, errlen)) {
            if (d.src.cpu >= s->cpus || d.dst.cpu >= s->cpus)
                give_up(s, "a dependence names a cpu the log does not have");
            else if (!covered(s, &d))
                break;
            else
                add_dep(s, &d);
        }
        /* Past the window, the oldest chunk is finalized; with
         * hold_msp only once bounded silence says every chunk up to its
         * TS has been read (each is drained within MSP of its start): a
         * log of many tiny chunks, more than the window in one MSP, then
         * holds them all instead of dropping one whose predecessors are
         * still to come. */
        while (s->window && s->held > s->window && !s->why &&
               (!s->hold_msp || s->held_heap.e[0]->ts + s->msp <= s->hmax))
            finalize(s, nheap_pop(&s->held_heap));
        if (rc == 0) {
            if (have == 1)
                give_up(s, "a dependence names an instruction the log does not have");
            break;
        }
    }
    if (have < 0)
        result = -1;
    while (result == 0 && !s->why && s->held_heap.n)
        finalize(s, nheap_pop(&s->held_heap));
    truth_reader_close(tr);
    rnr_reader_close(r);
    return result;
}

/* Frees what a pass holds; KEEP_FAR keeps the far positions (and resets their cursors). */
static void stream_reset(stream *s, int keep_far)
{
    free(s->held_heap.e);
    free(s->unsettled.e);
    memset(&s->held_heap, 0, sizeof s->held_heap);
    memset(&s->unsettled, 0, sizeof s->unsettled);
    s->hmax = 0;
    free(s->thr);
    for (uint32_t p = 0; s->lane && p < s->cpus; p++) {
        slane *l = &s->lane[p];
        for (size_t i = l->head; i < l->n; i++) {    /* the chunks held (a given-up pass) */
            free(l->q[i]->out);
            free(l->q[i]->in);
            free(l->q[i]->cut);
            free(l->q[i]);
        }
        free(l->q);
        poslist v = l->farv, c = l->farc;
        if (!keep_far) {
            free(v.pos);
            free(v.f);
            free(v.fin);
            free(c.pos);
            free(c.f);
            free(c.fin);
        }
        memset(l, 0, sizeof *l);
        if (keep_far) {
            l->farv = v;
            l->farc = c;
        }
    }
    if (!keep_far) {
        free(s->lane);
        s->lane = NULL;
    }
    s->thr = NULL;
    s->capthr = s->nthr = 0;
    s->held = s->edges = 0;
    s->instructions = s->chunks = s->deps = s->chunk_path = s->insn_path = s->segments = 0;
}

int oracle_compute_window(const char *initial_log, const char *truth_path, uint64_t window,
                          unsigned flags, oracle_bounds *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    stream s;
    memset(&s, 0, sizeof s);
    s.window = window;
    s.hold_msp = (flags & ORACLE_HOLD_MSP) != 0;
    s.out = out;
    int rc = 0;
    for (s.pass = 1; s.pass <= 2; s.pass++) {
        out->passes = (uint32_t)s.pass;
        rc = stream_pass(&s, initial_log, truth_path, err, errlen);
        if (rc < 0 || s.why || !s.need_second)
            break;
        if (s.pass == 1) {
            for (uint32_t p = 0; p < s.cpus; p++) {
                pos_finish(&s, &s.lane[p].farv);
                pos_finish(&s, &s.lane[p].farc);
            }
            out->far_positions = s.far;
            stream_reset(&s, 1);
        }
    }
    if (rc == 0 && !s.why) {
        out->instructions = s.instructions;
        out->chunks = s.chunks;
        out->deps = s.deps;
        out->chunk_critical_path = s.chunk_path;
        out->segments = s.segments;
        out->insn_critical_path = s.insn_path;
        out->chunk_parallelism = s.chunk_path ? (double)s.instructions / (double)s.chunk_path : 0;
        out->insn_parallelism = s.insn_path ? (double)s.instructions / (double)s.insn_path : 0;
    }
    if (s.pass == 1 || !out->far_positions)
        out->far_positions = s.far;
    out->why = s.why;
    stream_reset(&s, 0);
    if (rc < 0)
        return -1;
    return out->why ? 1 : 0;
}

int oracle_compute_file(const char *initial_log, const char *truth_path, uint64_t window,
                        unsigned flags, oracle_bounds *out, char *err, size_t errlen)
{
    int rc = oracle_compute_window(initial_log, truth_path, window, flags, out, err, errlen);
    if (rc != 1)
        return rc;
    oracle_bounds streamed = *out;
    rc = oracle_compute(initial_log, truth_path, out, err, errlen);
    out->peak_chunks = streamed.peak_chunks;
    out->peak_edges = streamed.peak_edges;
    out->far_positions = streamed.far_positions;
    out->passes = streamed.passes;
    out->why = streamed.why;
    out->window_given_up = 1;
    return rc;
}
