/* backend/oracle.c: the truth-based bounds on replay parallelism
 * (backend/oracle.h). Both are longest paths in a DAG of weighted nodes,
 * computed in a topological order (Kahn's algorithm); a cycle would mean
 * that the truth contradicts the log, and is an error. */
#include "backend/oracle.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/truth.h"
#include "formats/log.h"
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

int oracle_compute(const char *initial_log, const char *truth_path, oracle_bounds *out, char *err,
                   size_t errlen)
{
    memset(out, 0, sizeof *out);
    rnr_reader *r = rnr_reader_open(initial_log, err, errlen);
    if (!r)
        return -1;
    if (rnr_reader_header(r)->kind != RNR_LOG_INITIAL) {
        snprintf(err, errlen, "%s: not an initial log", initial_log);
        rnr_reader_close(r);
        return -1;
    }
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
