/* backend/metrics.c: critical path and simulated replay time of a final
 * log's DAG (list scheduling on W replay CPUs, event by event), computed
 * while the log streams past: the chunks come from dag_walk in a
 * topological order, and each simulation decides what it can prove.
 *
 * Critical path. A chunk's longest path ends with its own instructions
 * after the longest of its predecessors' (its lane predecessor, the
 * senders of the tokens it consumes), all visited before it: one number
 * per chunk, computed when it is visited.
 *
 * The simulations. One per W and timing model: a chunk lasts its
 * instruction count (1 IPC), or its recorded duration (the log's chunk
 * durations, when it has them); the model changes only a chunk's length,
 * nothing below depends on which (lengths may be 0: fin(P) >= now is all
 * the argument needs). The schedule: at each event time t, the
 * chunks finishing at t finish (their successors' ready times and
 * predecessor counts are updated), then every idle replay CPU takes the
 * runnable chunk with the smallest key (ready, walk position) among those
 * with ready <= t. A simulation works on the chunks visited so far and
 * processes its events in time order; `now` is the time of the last event
 * it processed.
 *
 * When is that the schedule of the whole log? Claim: if every chunk Y,
 * when it is visited, either has a predecessor not yet finished in the
 * simulation or has ready(Y) >= now, then the streaming simulation makes
 * exactly the decisions of one that had the whole DAG from the start.
 * Proof: a chunk not yet visited is not runnable in the whole-DAG
 * simulation before its predecessors finish, and those are visited first
 * (topological walk); the decisions at an event time t depend only on
 * the chunks with ready <= t. A chunk with an unfinished predecessor P has
 * ready >= fin(P) > now. A chunk with ready(Y) > now takes part in no
 * decision made so far. A chunk with ready(Y) = now may take part in the
 * decisions at now: there, the idle CPUs took the eligible chunks by key,
 * and every chunk visited before Y has a smaller walk position, so a
 * smaller key at a ready time <= now: the whole-DAG simulation took them
 * first too, and Y is taken at now if a CPU is still idle, as the
 * streaming one does when Y arrives (its next event is at now again).
 * Chunks arriving later at ready = now follow in walk order, their keys'
 * order. So the condition is checked for every chunk (`ahead`), and it
 * always holds when a simulation never passes
 *
 *   LB = min over lanes L of: fin(X_L) if L's last visited chunk X_L has
 *        finished in it, 0 if L has no visited chunk, +inf otherwise,
 *
 * a lower bound of the ready time of every chunk still to come (Y's lane
 * predecessor is X_L or comes after it; a lane never seen may start at 0;
 * an unfinished X_L finishes at an event > now). Events at t <= LB are
 * safe: a chunk arriving afterwards has ready >= LB >= now.
 *
 * Memory. A simulation proceeds while every lane has visited work it has
 * not finished: the chunks it holds are those visited and not finished,
 * a window as long as the walk runs ahead of the slowest lane. A lane that
 * stays idle (a CPU without a thread, or one whose last chunk is behind
 * it) stops its LB: the simulations then wait for it and hold what is
 * read meanwhile, up to the whole log. metrics_compute_window bounds that:
 * a simulation holding more than WINDOW undecided chunks runs ahead of LB
 * until it holds WINDOW / 2, and if a chunk visited afterwards breaks the
 * condition above (ready < now: it would have been runnable in the past
 * the simulation has decided), the result is given up and the caller
 * reads the log again without a window. A chunk is freed when it has
 * finished in every simulation, is no longer its lane's last, and no
 * token it sent is still in flight (those wait in dag_walk for a CPU's
 * next chunk: docs/backend.md, "Memory while a CPU stays idle"). */
#include "backend/heap.h"
#include "rru/alloc.h"
#include "backend/metrics.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/dag.h"

typedef struct mnode mnode;

/* A chunk's state in one simulation. */
typedef struct msim_state {
    uint64_t ready, fin;
    uint32_t left;              /* predecessors not finished in it */
    uint8_t done;
} msim_state;

/* A successor waiting for this chunk in some simulation. */
typedef struct msucc {
    mnode *to;
    uint64_t latency;           /* 0 for the lane edge, the token latency otherwise */
} msucc;

struct mnode {
    mnode *prev, *next;         /* the list of live chunks */
    uint64_t cs, order, path;   /* path: the longest path ending with it */
    uint64_t dur, rpath;        /* recorded duration; the longest path in recorded cycles */
    uint32_t lane;
    uint32_t refs;              /* simulations it is unfinished in + tokens in flight + lane's last */
    uint32_t unfinished;        /* simulations it has not finished in */
    uint32_t nsucc, capsucc;
    msucc *succ;
    msim_state st[];            /* one per simulation */
};

typedef struct hent {
    uint64_t key, order;
    mnode *n;
} hent;

static int less(const hent *a, const hent *b)
{
    return a->key < b->key || (a->key == b->key && a->order < b->order);
}

/* A binary min-heap by (key, walk position). */
HEAP_DEFINE(heap, hent, less)

typedef struct sim {
    uint32_t k;                 /* its index in the chunks' st[] */
    uint32_t w, idle;
    int recorded;               /* a chunk lasts its recorded duration, not its instructions */
    uint64_t now, end;
    uint64_t lb;                /* a cached value <= LB */
    uint64_t unfinished;        /* chunks visited and not finished */
    heap runnable, running;
} sim;

typedef struct mctx {
    uint32_t cpus, nsim;
    uint32_t lanes;             /* the recorded cpus; 1 for Serial and StSerial (one chain) */
    uint64_t latency, window;
    sim s[2 * METRICS_MAX_W];   /* the instruction-count model, then the recorded timing */
    mnode **last;               /* [lane] its last visited chunk, or NULL */
    mnode *live;                /* the live chunks */
    uint64_t nlive, peak;
    uint64_t chunks, instructions, path, rpath;
    int ahead;                  /* a chunk broke the condition: give up */
} mctx;

static void event_push(heap *h, uint64_t key, mnode *n)
{
    heap_push(h, (hent){ key, n->order, n });
}

static void release(mctx *c, mnode *n)
{
    if (--n->refs)
        return;
    if (n->prev)
        n->prev->next = n->next;
    else
        c->live = n->next;
    if (n->next)
        n->next->prev = n->prev;
    c->nlive--;
    free(n->succ);
    free(n);
}

static void add_succ(mnode *p, mnode *to, uint64_t latency)
{
    if (p->nsucc == p->capsucc) {
        p->capsucc = p->capsucc ? 2 * p->capsucc : 4;
        p->succ = xrealloc(p->succ, p->capsucc * sizeof *p->succ);
    }
    p->succ[p->nsucc++] = (msucc){ to, latency };
}

/* N finishes at T in simulation S: its successors there learn it. */
static void finish(mctx *c, sim *s, mnode *n, uint64_t t)
{
    msim_state *st = &n->st[s->k];
    st->done = 1;
    s->idle++;
    s->unfinished--;
    if (t > s->end)
        s->end = t;
    for (uint32_t i = 0; i < n->nsucc; i++) {
        msim_state *y = &n->succ[i].to->st[s->k];
        if (t + n->succ[i].latency > y->ready)
            y->ready = t + n->succ[i].latency;
        if (--y->left == 0)
            event_push(&s->runnable, y->ready, n->succ[i].to);
    }
    if (c->last[n->lane] == n && t < s->lb)
        s->lb = t;                  /* its lane's next chunk may be ready at t */
    if (--n->unfinished == 0) {
        free(n->succ);
        n->succ = NULL;
        n->nsucc = n->capsucc = 0;
    }
    release(c, n);
}

/* The time of S's next event, UINT64_MAX if none. */
static uint64_t next_event(const sim *s)
{
    uint64_t t = UINT64_MAX;
    if (s->running.n)
        t = s->running.e[0].key;
    if (s->idle && s->runnable.n) {
        uint64_t r = s->runnable.e[0].key > s->now ? s->runnable.e[0].key : s->now;
        if (r < t)
            t = r;
    }
    return t;
}

static void process_event(mctx *c, sim *s, uint64_t t)
{
    s->now = t;
    while (s->running.n && s->running.e[0].key <= t) {
        mnode *n = s->running.e[0].n;
        (void)heap_pop(&s->running);
        finish(c, s, n, t);
    }
    while (s->idle && s->runnable.n && s->runnable.e[0].key <= t) {
        mnode *n = s->runnable.e[0].n;
        (void)heap_pop(&s->runnable);
        s->idle--;
        n->st[s->k].fin = t + (s->recorded ? n->dur : n->cs);
        event_push(&s->running, n->st[s->k].fin, n);
    }
}

static uint64_t lower_bound(const mctx *c, const sim *s)
{
    uint64_t lb = UINT64_MAX;
    for (uint32_t l = 0; l < c->lanes; l++) {
        const mnode *x = c->last[l];
        uint64_t v = !x ? 0 : x->st[s->k].done ? x->st[s->k].fin : UINT64_MAX;
        if (v < lb)
            lb = v;
    }
    return lb;
}

/* Processes S's events up to LB (all of them when FINAL), then, with a
 * window, runs ahead while S holds more than the window. */
static void advance(mctx *c, sim *s, int final)
{
    for (;;) {
        uint64_t t = next_event(s);
        if (t == UINT64_MAX)
            break;
        if (!final && t > s->lb) {
            s->lb = lower_bound(c, s);
            if (t > s->lb)
                break;
        }
        process_event(c, s, t);
    }
    if (c->window && s->unfinished > c->window) {
        while (s->unfinished > c->window / 2) {
            uint64_t t = next_event(s);
            if (t == UINT64_MAX)
                break;
            process_event(c, s, t);
        }
    }
}

static int visit(void *ctx, const dag_node *nd, uint64_t out[2])
{
    mctx *c = ctx;
    uint32_t lane = nd->c->cpu;
    mnode *y = xmalloc(sizeof *y + c->nsim * sizeof *y->st);
    memset(y, 0, sizeof *y + c->nsim * sizeof *y->st);
    y->cs = nd->c->cs;
    y->dur = nd->c->dur;
    y->order = nd->order;
    y->lane = lane;
    y->unfinished = c->nsim;
    y->refs = c->nsim + 1 + nd->c->nstv;    /* the simulations, its lane, its tokens */
    y->next = c->live;
    if (c->live)
        c->live->prev = y;
    c->live = y;
    if (++c->nlive > c->peak)
        c->peak = c->nlive;
    c->chunks++;
    c->instructions += y->cs;

    /* Its predecessors: the lane's last chunk, the senders of its tokens. */
    mnode *x = c->last[lane];
    uint64_t path = 0, rpath = 0;
    for (uint32_t i = 0; i <= nd->npred; i++) {
        mnode *p = i < nd->npred ? (mnode *)(uintptr_t)nd->pred[i].value[0] : x;
        if (!p)
            continue;
        uint64_t lat = i < nd->npred ? c->latency : 0;
        if (p->path > path)
            path = p->path;
        if (p->rpath > rpath)
            rpath = p->rpath;
        for (uint32_t k = 0; k < c->nsim; k++) {
            if (p->st[k].done) {
                if (p->st[k].fin + lat > y->st[k].ready)
                    y->st[k].ready = p->st[k].fin + lat;
            } else {
                y->st[k].left++;
            }
        }
        if (p->unfinished)
            add_succ(p, y, lat);
    }
    y->path = path + y->cs;
    if (y->path > c->path)
        c->path = y->path;
    y->rpath = rpath + y->dur;
    if (y->rpath > c->rpath)
        c->rpath = y->rpath;
    for (uint32_t i = 0; i < nd->npred; i++)
        release(c, (mnode *)(uintptr_t)nd->pred[i].value[0]);
    c->last[lane] = y;
    if (x)
        release(c, x);
    for (uint32_t k = 0; k < c->nsim; k++) {
        sim *s = &c->s[k];
        s->unfinished++;
        if (y->st[k].left == 0) {
            if (y->st[k].ready < s->now)
                c->ahead = 1;
            event_push(&s->runnable, y->st[k].ready, y);
        }
    }
    out[0] = (uint64_t)(uintptr_t)y;
    out[1] = 0;
    if (c->ahead)
        return -1;
    for (uint32_t k = 0; k < c->nsim; k++)
        advance(c, &c->s[k], 0);
    return 0;
}

/* The metrics with WINDOW (0: none), simulating the replay on the NW
 * replay CPU counts W (NULL: 1, 2, 4, ... up to the recorded count). */
static int compute(rnr_reader *r, uint64_t token_latency, uint64_t window, const uint32_t *w,
                   uint32_t nw, dag_metrics *m, char *err, size_t errlen)
{
    memset(m, 0, sizeof *m);
    m->token_latency = token_latency;
    mctx c;
    memset(&c, 0, sizeof c);
    c.cpus = rnr_reader_header(r)->cpus;
    c.lanes = rnr_log_kind_has_tokens(rnr_reader_header(r)->kind) ? c.cpus : 1;
    c.latency = token_latency;
    c.window = window;
    c.last = xcalloc(c.cpus, sizeof *c.last);
    for (uint32_t k = 1, i = 0; c.nsim < METRICS_MAX_W; k *= 2, i++) {
        if (w && i >= nw)
            break;
        uint32_t ww = w ? w[i] : k < c.cpus ? k : c.cpus;
        sim *s = &c.s[c.nsim];
        s->k = c.nsim++;
        s->w = s->idle = ww;
        if (!w && ww == c.cpus)
            break;
    }
    uint32_t nw_used = c.nsim;
    m->recorded = rnr_reader_has_durations(r);
    if (m->recorded) {                  /* the same counts on the recorded timing */
        for (uint32_t i = 0; i < nw_used; i++) {
            sim *s = &c.s[c.nsim];
            s->k = c.nsim++;
            s->w = s->idle = c.s[i].w;
            s->recorded = 1;
        }
    }
    dag_result dr;
    int rc = dag_walk(r, visit, &c, &dr, err, errlen);
    if (rc < 0 && c.ahead) {
        rc = 1;
    } else if (rc == 0 && dr.stuck) {
        snprintf(err, errlen, "%s: the log cannot be replayed: cpu %u chunk %llu awaits tokens from "
                 "cpu %u that are never sent", rnr_reader_name(r), dr.stuck_cpu,
                 (unsigned long long)dr.stuck_lane_index, dr.stuck_from);
        rc = -1;
    }
    if (rc == 0) {
        for (uint32_t k = 0; k < c.nsim; k++)
            advance(&c, &c.s[k], 1);
        m->chunks = c.chunks;
        m->instructions = c.instructions;
        m->tokens = dr.tokens_sent;
        m->critical_path = c.path;
        m->parallelism = c.path ? (double)c.instructions / (double)c.path : 0;
        m->nw = nw_used;
        m->critical_path_recorded = c.rpath;
        for (uint32_t k = 0; k < nw_used; k++) {
            m->workers[k] = c.s[k].w;
            m->makespan[k] = c.s[k].end;
            if (m->recorded)
                m->makespan_recorded[k] = c.s[nw_used + k].end;
        }
    }
    m->peak_chunks = c.peak;
    m->peak_tokens = dr.tokens_sent ? dr.peak_tokens : 0;
    while (c.live) {
        mnode *n = c.live;
        c.live = n->next;
        free(n->succ);
        free(n);
    }
    for (uint32_t k = 0; k < c.nsim; k++) {
        free(c.s[k].runnable.e);
        free(c.s[k].running.e);
    }
    free(c.last);
    return rc;
}

int metrics_compute_window(rnr_reader *r, uint64_t token_latency, uint64_t window, dag_metrics *m,
                           char *err, size_t errlen)
{
    return compute(r, token_latency, window, NULL, 0, m, err, errlen);
}

int metrics_compute(rnr_reader *r, uint64_t token_latency, dag_metrics *m, char *err, size_t errlen)
{
    return compute(r, token_latency, 0, NULL, 0, m, err, errlen);
}

int metrics_compute_on(rnr_reader *r, uint64_t token_latency, const uint32_t *w, uint32_t nw,
                       dag_metrics *m, char *err, size_t errlen)
{
    return compute(r, token_latency, 0, nw ? w : NULL, nw, m, err, errlen);
}

int metrics_compute_file(const char *path, uint64_t token_latency, uint64_t window, const uint32_t *w,
                         uint32_t nw, dag_metrics *m, char *err, size_t errlen)
{
    for (int pass = 0; pass < 2; pass++) {
        rnr_reader *r = rnr_reader_open(path, err, errlen);
        if (!r)
            return -1;
        int rc = compute(r, token_latency, pass ? 0 : window, nw ? w : NULL, nw, m, err, errlen);
        rnr_reader_close(r);
        if (rc <= 0) {
            m->window_given_up = pass;
            return rc;
        }
    }
    return -1;                      /* not reached: without a window nothing is given up */
}
