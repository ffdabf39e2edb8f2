/* backend/stitch.c: backend pass 2 (MaxPar -> Stitched).
 *
 * Chunks arrive in a topological order of the MaxPar DAG (dag_walk). Each
 * lane has at most one open stitched chunk SC. Every stitched chunk gets a
 * Lamport scalar clock L, fixed when it opens: one more than the clocks of
 * the previous stitched chunk of its lane and of the stitched chunks that
 * sent the tokens its first chunk consumed. A later chunk x of the same
 * thread joins SC only if every stitched chunk that sent a token x
 * consumes has a clock smaller than L(SC).
 *
 * No cycle: every edge between stitched chunks goes from a smaller clock
 * to a larger one. Program order does by construction. A token edge
 * G -> SC exists because a chunk of SC consumed a token of G: if that
 * chunk opened SC, L(SC) > L(G) by the definition of L; if it joined SC,
 * the join test checked L(G) < L(SC). An edge out of SC is checked by its
 * consumer the same way, and a chunk can join SC later only while that
 * stays true, so a chunk that depends on SC through a third stitched chunk
 * G (SC -> G -> x) cannot join SC: L(G) > L(SC). (Testing "not larger" as
 * the reference words it, with the clocks of the original chunks, lets two
 * lanes that stitch at once form a cycle: a1 -> b2 and b1 -> a2 with all
 * four clocks 1 and 2; tests/test_backend.c has that case.)
 *
 * Token safety: a stitched chunk sends one token to CPU q if any of its
 * chunks sent one to q; on q the token is awaited by the stitched chunk
 * holding the first chunk that consumed a token of it, and later tokens
 * of the same stitched chunk are dropped there (implied by program order
 * on q). Stitched chunks are consecutive runs of their lane, so the
 * regrouped edges of a CPU pair still do not cross. */
#include "backend/stitch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct group {
    int open;
    uint32_t tid;
    uint64_t cs;
    uint64_t clock;           /* Lamport clock */
    uint64_t id;              /* 1, 2, ... per lane */
    uint64_t last_order;      /* walk position of its last chunk */
    uint64_t *stv;            /* bitset of cpus it sends a token to */
    uint32_t *ptv_count;      /* [cpus] tokens awaited per cpu */
    uint32_t *ptv_cpus;       /* cpus with a nonzero count, in first-seen order */
    uint32_t nptv;
} group;

struct stitcher {
    uint32_t cpus, words;
    uint64_t window, next_sweep;
    group *g;                 /* [cpus] the open (or last) stitched chunk of each lane */
    uint64_t *last_from;      /* [dest * cpus + src]: last source group counted, 0 = none */
    uint32_t *stv_buf;
    rnr_ptv_entry *ptv_buf;
    final_emit_fn emit;
    void *ctx;
    stitch_stats st;
};

static void *xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size);
    if (!p) {
        fputs("rnr: out of memory\n", stderr);
        abort();
    }
    return p;
}

stitcher *stitch_new(uint32_t cpus, uint64_t window, final_emit_fn emit, void *ctx)
{
    stitcher *s = xcalloc(1, sizeof *s);
    s->cpus = cpus;
    s->words = (cpus + 63) / 64;
    s->window = window ? window : STITCH_WINDOW_DEFAULT;
    s->next_sweep = s->window;
    s->g = xcalloc(cpus, sizeof *s->g);
    for (uint32_t p = 0; p < cpus; p++) {
        s->g[p].stv = xcalloc(s->words, sizeof *s->g[p].stv);
        s->g[p].ptv_count = xcalloc(cpus, sizeof *s->g[p].ptv_count);
        s->g[p].ptv_cpus = xcalloc(cpus, sizeof *s->g[p].ptv_cpus);
    }
    s->last_from = xcalloc((size_t)cpus * cpus, sizeof *s->last_from);
    s->stv_buf = xcalloc(cpus, sizeof *s->stv_buf);
    s->ptv_buf = xcalloc(cpus, sizeof *s->ptv_buf);
    s->emit = emit;
    s->ctx = ctx;
    return s;
}

void stitch_free(stitcher *s)
{
    if (!s)
        return;
    for (uint32_t p = 0; p < s->cpus; p++) {
        free(s->g[p].stv);
        free(s->g[p].ptv_count);
        free(s->g[p].ptv_cpus);
    }
    free(s->g);
    free(s->last_from);
    free(s->stv_buf);
    free(s->ptv_buf);
    free(s);
}

const stitch_stats *stitch_get_stats(const stitcher *s) { return &s->st; }

static int cmp_ptv(const void *a, const void *b)
{
    const rnr_ptv_entry *x = a, *y = b;
    return (x->cpu > y->cpu) - (x->cpu < y->cpu);
}

/* Emits lane P's open stitched chunk. */
static int close_group(stitcher *s, uint32_t p)
{
    group *g = &s->g[p];
    if (!g->open)
        return 0;
    g->open = 0;
    rnr_final_chunk f = { p, g->tid, g->cs, 0, s->stv_buf, g->nptv, s->ptv_buf };
    for (uint32_t w = 0; w < s->words; w++) {
        uint64_t bits = g->stv[w];
        g->stv[w] = 0;
        while (bits) {
            s->stv_buf[f.nstv++] = w * 64 + (uint32_t)__builtin_ctzll(bits);
            bits &= bits - 1;
        }
    }
    for (uint32_t i = 0; i < g->nptv; i++) {
        uint32_t q = g->ptv_cpus[i];
        s->ptv_buf[i].cpu = q;
        s->ptv_buf[i].count = g->ptv_count[q];
        g->ptv_count[q] = 0;
    }
    g->nptv = 0;
    qsort(s->ptv_buf, f.nptv, sizeof *s->ptv_buf, cmp_ptv);
    s->st.chunks_out++;
    s->st.tokens_out += f.nstv;
    return s->emit(s->ctx, &f);
}

/* Closes the stitched chunks of lanes that received nothing for `window`
 * chunks of the walk. */
static int sweep(stitcher *s, uint64_t order)
{
    for (uint32_t p = 0; p < s->cpus; p++) {
        group *g = &s->g[p];
        if (g->open && g->last_order + s->window <= order) {
            s->st.ended_window++;
            if (close_group(s, p) < 0)
                return -1;
        }
    }
    s->next_sweep = order + s->window;
    return 0;
}

int stitch_visit(void *ctx, const dag_node *n, uint64_t out[2])
{
    stitcher *s = ctx;
    const rnr_final_chunk *c = n->c;
    uint32_t p = c->cpu;
    group *g = &s->g[p];
    s->st.chunks_in++;
    if (n->order >= s->next_sweep && sweep(s, n->order) < 0)
        return -1;
    int join = g->open;
    if (join && g->tid != c->tid) {
        join = 0;
        s->st.ended_thread++;
    }
    if (join && g->cs > (UINT64_MAX >> 1) - c->cs) {
        join = 0;
        s->st.ended_size++;
    }
    if (join) {
        for (uint32_t i = 0; i < n->npred; i++) {
            if (n->pred[i].value[1] >= g->clock) {
                join = 0;
                s->st.ended_clock++;
                break;
            }
        }
    }
    if (!join) {
        if (close_group(s, p) < 0)
            return -1;
        uint64_t clock = g->clock;    /* the previous stitched chunk of the lane (0: none) */
        for (uint32_t i = 0; i < n->npred; i++)
            if (n->pred[i].value[1] > clock)
                clock = n->pred[i].value[1];
        g->open = 1;
        g->clock = clock + 1;
        g->id++;
        g->tid = c->tid;
        g->cs = 0;
    }
    g->cs += c->cs;
    g->last_order = n->order;
    for (uint32_t i = 0; i < c->nstv; i++)
        g->stv[c->stv[i] >> 6] |= 1ull << (c->stv[i] & 63);
    /* Each source stitched chunk's token is awaited once on this lane: by
     * the stitched chunk that first consumes one of its chunks' tokens. */
    for (uint32_t i = 0; i < n->npred; i++) {
        uint32_t q = n->pred[i].cpu;
        uint64_t *last = &s->last_from[(uint64_t)p * s->cpus + q];
        if (*last == n->pred[i].value[0])
            continue;
        *last = n->pred[i].value[0];
        if (g->ptv_count[q]++ == 0)
            g->ptv_cpus[g->nptv++] = q;
    }
    out[0] = g->id;
    out[1] = g->clock;
    return 0;
}

int stitch_finish(stitcher *s)
{
    for (uint32_t p = 0; p < s->cpus; p++)
        if (close_group(s, p) < 0)
            return -1;
    return 0;
}
