/* backend/stitch.c: backend pass 2 (MaxPar -> Stitched).
 *
 * Chunks arrive in a topological order of the MaxPar DAG (dag_walk): the
 * position of a chunk in that walk is a Lamport scalar clock, strictly
 * larger than the clocks of all its predecessors. Each lane has at most
 * one open stitched chunk SC; the clock of a stitched chunk is the clock
 * of its first chunk. As in the reference, the next chunk x of the lane
 * joins SC only if it is of the same thread and every predecessor of x
 * (every stitched chunk that sent a token x consumes) has a clock not
 * larger than SC's; otherwise SC ends and x starts the next one.
 *
 * No cycle: every edge between stitched chunks goes from a smaller clock
 * to a larger one. For program order this holds by construction. For a
 * token edge G -> SC, some chunk y of SC consumed a token of G: if y opened
 * SC, clock(G) <= clock(G's chunk that sent it) < clock(y) = clock(SC); if
 * y joined SC, the join test checked clock(G) < clock(SC) (clocks are
 * distinct). So the stitched chunks, ordered by clock, are a topological
 * order of the stitched DAG, and they are written in that order (a small
 * reorder buffer holds the ones that end while an older one is open):
 * the Stitched log is topological, like the MaxPar log.
 *
 * (The minimal Lamport numbering, 1 + the largest predecessor's clock,
 * works too when stitched chunks get their first chunk's clock and the
 * test is strict; comparing chunk clocks with "not larger", as the
 * reference words it, lets two lanes that stitch at once form a cycle:
 * a1 -> b2 and b1 -> a2 with clocks 1, 1, 2, 2 - tests/test_backend.c has
 * that case. Walk positions are used because they give the next property.)
 *
 * Serial >= StSerial entries: the Serial pass writes the MaxPar walk order
 * O1 with runs of one thread merged; StSerial writes the Stitched log's
 * order O2, which is O1 with the later chunks of each stitched chunk moved
 * next to its first. Taking elements out of a sequence never adds a run,
 * and putting a chunk of thread T next to one of T adds none: O2 has at
 * most as many runs as O1.
 *
 * Token safety: a stitched chunk sends one token to CPU q if any of its
 * chunks sent one to q; on q the token is awaited by the stitched chunk
 * holding the first chunk that consumed a token of it, and the later
 * tokens of the same stitched chunk are dropped there (implied by program
 * order on q). Stitched chunks are consecutive runs of their lane, so the
 * regrouped edges of a CPU pair still do not cross.
 *
 * Adaptive logs (stitch_set_phases; docs/backend.md, "Adaptive logs"): a
 * chunk joins only a group of its own phase, and only in a Stitched phase,
 * so a MaxPar phase's groups are single chunks. The arguments above use
 * only that groups are runs of one lane and thread whose joined chunks
 * passed the clock test; ending groups earlier keeps both, so they hold
 * across a switch. A group after a switch awaits one token per source
 * group whose token it consumes first on its lane, whichever phase the
 * source lies in (a MaxPar chunk is a group of one; a stitched source's
 * later tokens to this lane are implied by lane order), and a group sends
 * one token per cpu any of its chunks sent to: the counters on both sides
 * of a switch count the same edges, none lost, none twice. */
#include "rru/alloc.h"
#include "backend/stitch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A stitched chunk: open (one per lane at most) or ended and waiting in
 * the reorder buffer for the older ones to end. */
typedef struct group {
    int ended;
    uint64_t phase;           /* adaptive: the phase of its first chunk */
    rnr_final_chunk c;        /* stv and ptv point into the arrays below */
    uint32_t *stv;
    rnr_ptv_entry *ptv;
} group;

typedef struct lane {
    int open;
    uint64_t slot;            /* its open group's position in the reorder buffer */
    uint64_t clock;           /* the open group's clock (its first chunk's walk position) */
    uint64_t *stv;            /* bitset of cpus the open group sends a token to */
    uint32_t *ptv_count;      /* [cpus] tokens the open group awaits */
    uint32_t *ptv_cpus;
    uint32_t nptv;
} lane;

struct stitcher {
    uint32_t cpus, words;
    uint64_t window, next_sweep;
    lane *lanes;
    group *ring;              /* reorder buffer, by clock: groups head..next-1 */
    uint64_t head, next, cap;
    uint64_t *last_from;      /* [dest * cpus + src]: clock + 1 of the last source group counted */
    final_emit_fn emit;
    void *ctx;
    stitch_stats st;
    /* adaptive (stitch_set_phases): the phases, the current one, the walk's
     * instructions so far, and the phase of the last group written + 1 */
    uint64_t *phase_start;
    uint32_t *phase_format;
    size_t nphases, cur_phase, phase_cap;
    uint64_t walk_insns, written_phase;
    stitch_phase_fn src;      /* phases given during the walk (stitch_set_phase_source) */
    void *src_ctx;
};


stitcher *stitch_new(uint32_t cpus, uint64_t window, final_emit_fn emit, void *ctx)
{
    stitcher *s = xcalloc(1, sizeof *s);
    s->cpus = cpus;
    s->words = (cpus + 63) / 64;
    s->window = window ? window : STITCH_WINDOW_DEFAULT;
    s->next_sweep = s->window;
    s->lanes = xcalloc(cpus, sizeof *s->lanes);
    for (uint32_t p = 0; p < cpus; p++) {
        s->lanes[p].stv = xcalloc(s->words, sizeof *s->lanes[p].stv);
        s->lanes[p].ptv_count = xcalloc(cpus, sizeof *s->lanes[p].ptv_count);
        s->lanes[p].ptv_cpus = xcalloc(cpus, sizeof *s->lanes[p].ptv_cpus);
    }
    s->cap = 16;
    s->ring = xcalloc(s->cap, sizeof *s->ring);
    s->last_from = xcalloc((size_t)cpus * cpus, sizeof *s->last_from);
    s->emit = emit;
    s->ctx = ctx;
    return s;
}

void stitch_free(stitcher *s)
{
    if (!s)
        return;
    for (uint32_t p = 0; p < s->cpus; p++) {
        free(s->lanes[p].stv);
        free(s->lanes[p].ptv_count);
        free(s->lanes[p].ptv_cpus);
    }
    for (uint64_t i = 0; i < s->cap; i++) {
        free(s->ring[i].stv);
        free(s->ring[i].ptv);
    }
    free(s->lanes);
    free(s->ring);
    free(s->last_from);
    free(s->phase_start);
    free(s->phase_format);
    free(s);
}

void stitch_set_phase_source(stitcher *s, stitch_phase_fn fn, void *ctx)
{
    s->src = fn;
    s->src_ctx = ctx;
}

/* The phases the source has decided since the last call, appended. */
static void pull_phases(stitcher *s)
{
    uint64_t start;
    uint32_t format;
    while (s->src(s->src_ctx, s->nphases, &start, &format)) {
        if (s->nphases == s->phase_cap) {
            s->phase_cap = s->phase_cap ? 2 * s->phase_cap : 16;
            s->phase_start = xrealloc(s->phase_start, s->phase_cap * sizeof *s->phase_start);
            s->phase_format = xrealloc(s->phase_format, s->phase_cap * sizeof *s->phase_format);
        }
        s->phase_start[s->nphases] = start;
        s->phase_format[s->nphases++] = format;
    }
}

void stitch_set_phases(stitcher *s, const uint64_t *start, const uint32_t *format, size_t n)
{
    s->phase_start = xcalloc(n, sizeof *s->phase_start);
    s->phase_format = xcalloc(n, sizeof *s->phase_format);
    memcpy(s->phase_start, start, n * sizeof *start);
    memcpy(s->phase_format, format, n * sizeof *format);
    s->nphases = n;
}

const stitch_stats *stitch_get_stats(const stitcher *s) { return &s->st; }

static group *slot(const stitcher *s, uint64_t i) { return &s->ring[i & (s->cap - 1)]; }

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

/* Writes the ended groups at the head of the reorder buffer. */
static int flush_ended(stitcher *s)
{
    while (s->head < s->next && slot(s, s->head)->ended) {
        group *g = slot(s, s->head);
        s->head++;
        if (s->nphases && g->phase + 1 != s->written_phase) {
            /* Groups are written in clock order and a group's phase is its
             * first chunk's, so phases arrive in order: mark the first. */
            g->c.phase = s->phase_format[g->phase];
            s->written_phase = g->phase + 1;
        }
        s->st.chunks_out++;
        s->st.tokens_out += g->c.nstv;
        if (s->emit(s->ctx, &g->c) < 0)
            return -1;
    }
    return 0;
}

/* Ends lane P's open group: its tokens become a record in its slot. */
static int end_group(stitcher *s, uint32_t p)
{
    lane *l = &s->lanes[p];
    if (!l->open)
        return 0;
    l->open = 0;
    group *g = slot(s, l->slot);
    g->c.nstv = 0;
    for (uint32_t w = 0; w < s->words; w++) {
        uint64_t bits = l->stv[w];
        l->stv[w] = 0;
        while (bits) {
            g->stv[g->c.nstv++] = w * 64 + (uint32_t)__builtin_ctzll(bits);
            bits &= bits - 1;
        }
    }
    g->c.nptv = l->nptv;
    for (uint32_t i = 0; i < l->nptv; i++) {
        uint32_t q = l->ptv_cpus[i];
        g->ptv[i].cpu = q;
        g->ptv[i].count = l->ptv_count[q];
        l->ptv_count[q] = 0;
    }
    l->nptv = 0;
    sort_ptv(g->ptv, g->c.nptv);
    g->c.stv = g->stv;
    g->c.ptv = g->ptv;
    g->ended = 1;
    return flush_ended(s);
}

static void open_group(stitcher *s, uint32_t p, const rnr_final_chunk *c, uint64_t clock,
                       uint64_t phase)
{
    if (s->next - s->head == s->cap) {
        uint64_t cap = s->cap * 2;
        group *ring = xcalloc(cap, sizeof *ring);
        for (uint64_t i = 0; i < s->cap; i++) {   /* full: every slot is in use */
            uint64_t k = s->head + i;
            ring[k & (cap - 1)] = *slot(s, k);
        }
        free(s->ring);
        s->ring = ring;
        s->cap = cap;                             /* slot numbers are absolute */
    }
    group *g = slot(s, s->next);
    if (!g->stv) {
        g->stv = xcalloc(s->cpus, sizeof *g->stv);
        g->ptv = xcalloc(s->cpus, sizeof *g->ptv);
    }
    g->ended = 0;
    g->phase = phase;
    g->c = (rnr_final_chunk){ .cpu = p, .tid = c->tid, .stv = g->stv, .ptv = g->ptv };
    lane *l = &s->lanes[p];
    l->open = 1;
    l->slot = s->next++;
    l->clock = clock;
}

/* Ends the groups that began `window` walk positions ago or more, so that
 * the reorder buffer (and a reader's buffer behind a quiet lane) stays
 * small. */
static int sweep(stitcher *s, uint64_t order)
{
    for (uint32_t p = 0; p < s->cpus; p++) {
        lane *l = &s->lanes[p];
        if (l->open && l->clock + s->window <= order) {
            s->st.ended_window++;
            if (end_group(s, p) < 0)
                return -1;
        }
    }
    s->next_sweep = order + s->window / 4 + 1;
    return 0;
}

int stitch_visit(void *ctx, const dag_node *n, uint64_t out[2])
{
    stitcher *s = ctx;
    const rnr_final_chunk *c = n->c;
    uint32_t p = c->cpu;
    lane *l = &s->lanes[p];
    s->st.chunks_in++;
    if (n->order >= s->next_sweep && sweep(s, n->order) < 0)
        return -1;
    group *g = l->open ? slot(s, l->slot) : NULL;
    int join = g != NULL;
    /* Adaptive: a chunk joins only a group of its own phase, and only in a
     * Stitched phase. Ending a group earlier than pass 2 would is always
     * allowed: the arguments above hold for any grouping into runs of a
     * lane whose joins pass the clock test (docs/backend.md, "Adaptive"). */
    if (s->src) {
        pull_phases(s);
        if (!s->nphases)
            return -1;   /* the source broke its contract: phase 0 unknown */
    }
    while (s->cur_phase + 1 < s->nphases && s->phase_start[s->cur_phase + 1] <= s->walk_insns)
        s->cur_phase++;
    s->walk_insns += c->cs;
    if (join && s->nphases &&
        (g->phase != s->cur_phase || s->phase_format[s->cur_phase] != RNR_PHASE_STITCHED)) {
        join = 0;
        s->st.ended_phase++;
    }
    if (join && g->c.tid != c->tid) {
        join = 0;
        s->st.ended_thread++;
    }
    if (join && g->c.cs > (UINT64_MAX >> 1) - c->cs) {
        join = 0;
        s->st.ended_size++;
    }
    for (uint32_t i = 0; join && i < n->npred; i++) {
        if (n->pred[i].value[0] >= l->clock) {
            join = 0;
            s->st.ended_clock++;
        }
    }
    if (!join) {
        if (end_group(s, p) < 0)
            return -1;
        open_group(s, p, c, n->order, s->cur_phase);
        g = slot(s, l->slot);
    }
    g->c.cs += c->cs;
    g->c.dur = c->dur > UINT64_MAX - g->c.dur ? UINT64_MAX : g->c.dur + c->dur;
    for (uint32_t i = 0; i < c->nstv; i++)
        l->stv[c->stv[i] >> 6] |= 1ull << (c->stv[i] & 63);
    /* Each source group's token is awaited once on this lane: by the group
     * that first consumes one of its chunks' tokens. */
    for (uint32_t i = 0; i < n->npred; i++) {
        uint32_t q = n->pred[i].cpu;
        uint64_t *last = &s->last_from[(uint64_t)p * s->cpus + q];
        if (*last == n->pred[i].value[0] + 1)
            continue;
        *last = n->pred[i].value[0] + 1;
        if (l->ptv_count[q]++ == 0)
            l->ptv_cpus[l->nptv++] = q;
    }
    out[0] = l->clock;
    out[1] = 0;
    return 0;
}

int stitch_finish(stitcher *s)
{
    for (uint32_t p = 0; p < s->cpus; p++)
        if (end_group(s, p) < 0)
            return -1;
    return flush_ended(s);
}
