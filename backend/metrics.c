/* backend/metrics.c: critical path and simulated replay time of a final
 * log's DAG (list scheduling on W replay CPUs, event by event). */
#include "rru/alloc.h"
#include "backend/metrics.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/dag.h"


/* The DAG in walk order: node i runs cs[i] instructions on lane[i]; its
 * token predecessors are pred[pstart[i] .. pstart[i + 1]). */
typedef struct graph {
    uint64_t n, cap, npred, predcap;
    uint64_t *cs, *pstart, *pred, *lane_prev;
    uint64_t *last_of_lane;          /* [cpus] last node of each lane + 1, 0 = none */
    uint64_t *finish;                /* longest path ending with the node */
    uint32_t cpus;
} graph;

static int collect(void *ctx, const dag_node *nd, uint64_t out[2])
{
    graph *g = ctx;
    if (g->n + 1 >= g->cap) {
        g->cap = g->cap ? 2 * g->cap : 1024;
        g->cs = xrealloc(g->cs, g->cap * sizeof *g->cs);
        g->pstart = xrealloc(g->pstart, (g->cap + 1) * sizeof *g->pstart);
        g->lane_prev = xrealloc(g->lane_prev, g->cap * sizeof *g->lane_prev);
        g->finish = xrealloc(g->finish, g->cap * sizeof *g->finish);
    }
    if (g->npred + nd->npred > g->predcap) {
        g->predcap = 2 * (g->npred + nd->npred) + 1024;
        g->pred = xrealloc(g->pred, g->predcap * sizeof *g->pred);
    }
    uint64_t i = g->n++;
    uint32_t lane = nd->c->cpu;
    g->cs[i] = nd->c->cs;
    g->pstart[i] = g->npred;
    g->lane_prev[i] = g->last_of_lane[lane];
    g->last_of_lane[lane] = i + 1;
    uint64_t start = g->lane_prev[i] ? g->finish[g->lane_prev[i] - 1] : 0;
    for (uint32_t k = 0; k < nd->npred; k++) {
        uint64_t p = nd->pred[k].value[0];
        g->pred[g->npred++] = p;
        if (g->finish[p] > start)
            start = g->finish[p];
    }
    g->pstart[i + 1] = g->npred;
    g->finish[i] = start + g->cs[i];
    out[0] = i;
    out[1] = 0;
    return 0;
}

/* A binary min-heap of (key, node). */
typedef struct heap {
    uint64_t (*e)[2];
    uint64_t n, cap;
} heap;

static int less(const uint64_t *a, const uint64_t *b)
{
    return a[0] < b[0] || (a[0] == b[0] && a[1] < b[1]);
}

static void heap_push(heap *h, uint64_t key, uint64_t node)
{
    if (h->n == h->cap) {
        h->cap = h->cap ? 2 * h->cap : 256;
        h->e = xrealloc(h->e, h->cap * sizeof *h->e);
    }
    uint64_t i = h->n++;
    h->e[i][0] = key;
    h->e[i][1] = node;
    while (i && less(h->e[i], h->e[(i - 1) / 2])) {
        uint64_t p = (i - 1) / 2, t0 = h->e[i][0], t1 = h->e[i][1];
        h->e[i][0] = h->e[p][0];
        h->e[i][1] = h->e[p][1];
        h->e[p][0] = t0;
        h->e[p][1] = t1;
        i = p;
    }
}

static void heap_pop(heap *h)
{
    h->n--;
    h->e[0][0] = h->e[h->n][0];
    h->e[0][1] = h->e[h->n][1];
    for (uint64_t i = 0;;) {
        uint64_t l = 2 * i + 1, r = l + 1, m = i;
        if (l < h->n && less(h->e[l], h->e[m]))
            m = l;
        if (r < h->n && less(h->e[r], h->e[m]))
            m = r;
        if (m == i)
            break;
        uint64_t t0 = h->e[i][0], t1 = h->e[i][1];
        h->e[i][0] = h->e[m][0];
        h->e[i][1] = h->e[m][1];
        h->e[m][0] = t0;
        h->e[m][1] = t1;
        i = m;
    }
}

/* Makespan of the graph on W replay CPUs. */
static uint64_t simulate(const graph *g, uint32_t w, uint64_t latency, const uint64_t *sstart,
                         const uint64_t *succ, const uint64_t *lane_next)
{
    uint64_t n = g->n;
    uint32_t *left = xmalloc(n * sizeof *left);
    uint64_t *ready = xmalloc(n * sizeof *ready);
    uint64_t *fin = xmalloc(n * sizeof *fin);
    heap runnable = { 0 }, running = { 0 };
    for (uint64_t i = 0; i < n; i++) {
        left[i] = (uint32_t)(g->pstart[i + 1] - g->pstart[i]) + (g->lane_prev[i] != 0);
        ready[i] = 0;
        if (!left[i])
            heap_push(&runnable, 0, i);
    }
    uint64_t now = 0, done = 0, end = 0;
    uint32_t idle = w;
    while (done < n) {
        while (idle && runnable.n && runnable.e[0][0] <= now) {
            uint64_t i = runnable.e[0][1];
            heap_pop(&runnable);
            idle--;
            fin[i] = now + g->cs[i];
            heap_push(&running, fin[i], i);
        }
        uint64_t next = UINT64_MAX;
        if (running.n)
            next = running.e[0][0];
        if (idle && runnable.n && runnable.e[0][0] < next)
            next = runnable.e[0][0];
        if (next == UINT64_MAX)
            break;                  /* cannot happen: the walk found no cycle */
        now = next;
        while (running.n && running.e[0][0] <= now) {
            uint64_t i = running.e[0][1];
            heap_pop(&running);
            idle++;
            done++;
            if (fin[i] > end)
                end = fin[i];
            /* Its lane's next chunk and the receivers of its tokens. */
            if (lane_next[i]) {
                uint64_t j = lane_next[i] - 1;
                if (fin[i] > ready[j])
                    ready[j] = fin[i];
                if (--left[j] == 0)
                    heap_push(&runnable, ready[j], j);
            }
            for (uint64_t e = sstart[i]; e < sstart[i + 1]; e++) {
                uint64_t j = succ[e];
                if (fin[i] + latency > ready[j])
                    ready[j] = fin[i] + latency;
                if (--left[j] == 0)
                    heap_push(&runnable, ready[j], j);
            }
        }
    }
    free(runnable.e);
    free(running.e);
    free(left);
    free(ready);
    free(fin);
    return end;
}

int metrics_compute(rnr_reader *r, uint64_t token_latency, dag_metrics *m, char *err, size_t errlen)
{
    return metrics_compute_on(r, token_latency, NULL, 0, m, err, errlen);
}

int metrics_compute_on(rnr_reader *r, uint64_t token_latency, const uint32_t *w, uint32_t nw,
                       dag_metrics *m, char *err, size_t errlen)
{
    memset(m, 0, sizeof *m);
    m->token_latency = token_latency;
    graph g;
    memset(&g, 0, sizeof g);
    g.cpus = rnr_reader_header(r)->cpus;
    g.last_of_lane = xcalloc(g.cpus, sizeof *g.last_of_lane);
    dag_result dr;
    int rc = dag_walk(r, collect, &g, &dr, err, errlen);
    if (rc == 0 && dr.stuck) {
        snprintf(err, errlen, "%s: the log cannot be replayed: cpu %u chunk %llu awaits tokens from "
                 "cpu %u that are never sent", rnr_reader_name(r), dr.stuck_cpu,
                 (unsigned long long)dr.stuck_lane_index, dr.stuck_from);
        rc = -1;
    }
    if (rc == 0) {
        m->chunks = g.n;
        m->tokens = dr.tokens_sent;
        for (uint64_t i = 0; i < g.n; i++) {
            m->instructions += g.cs[i];
            if (g.finish[i] > m->critical_path)
                m->critical_path = g.finish[i];
        }
        m->parallelism = m->critical_path ? (double)m->instructions / (double)m->critical_path : 0;
        /* Successor lists. */
        uint64_t *sstart = xcalloc(g.n + 1, sizeof *sstart);
        uint64_t *succ = xmalloc(g.npred * sizeof *succ);
        uint64_t *lane_next = xcalloc(g.n, sizeof *lane_next);
        for (uint64_t e = 0; e < g.npred; e++)
            sstart[g.pred[e] + 1]++;
        for (uint64_t i = 0; i < g.n; i++)
            sstart[i + 1] += sstart[i];
        uint64_t *fill = xmalloc(g.n * sizeof *fill);
        memcpy(fill, sstart, g.n * sizeof *fill);
        for (uint64_t i = 0; i < g.n; i++) {
            for (uint64_t e = g.pstart[i]; e < g.pstart[i + 1]; e++)
                succ[fill[g.pred[e]]++] = i;
            if (g.lane_prev[i])
                lane_next[g.lane_prev[i] - 1] = i + 1;
        }
        free(fill);
        uint32_t cpus = g.cpus;
        if (w && nw) {
            for (uint32_t k = 0; k < nw && k < METRICS_MAX_W; k++) {
                m->workers[m->nw] = w[k];
                m->makespan[m->nw++] = simulate(&g, w[k], token_latency, sstart, succ, lane_next);
            }
        } else {
            for (uint32_t k = 1; m->nw < METRICS_MAX_W; k *= 2) {
                uint32_t ww = k < cpus ? k : cpus;
                m->workers[m->nw] = ww;
                m->makespan[m->nw++] = simulate(&g, ww, token_latency, sstart, succ, lane_next);
                if (ww == cpus)
                    break;
            }
        }
        free(sstart);
        free(succ);
        free(lane_next);
    }
    free(g.cs);
    free(g.pstart);
    free(g.pred);
    free(g.lane_prev);
    free(g.finish);
    free(g.last_of_lane);
    return rc;
}
