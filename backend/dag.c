/* backend/dag.c: walking a final log in a topological order by simulating
 * its token counters (Kahn's algorithm with the log order as priority). */
#include "rru/alloc.h"
#include "backend/dag.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A chunk read but not runnable yet: a copy of its record. */
typedef struct waiting_chunk {
    rnr_final_chunk c;
    uint64_t log_index, lane_index;
} waiting_chunk;

typedef struct lane {
    waiting_chunk **q;      /* ring, oldest first */
    uint64_t head, n, cap;
    uint64_t read;          /* chunks of this lane read so far */
} lane;

/* Tokens sent by one lane to another and not consumed yet. */
typedef struct token_fifo {
    dag_pred *e;
    uint64_t head, n, cap;
} token_fifo;

typedef struct walker {
    uint32_t cpus;
    lane *lanes;
    token_fifo **in;        /* [dest * cpus + src], allocated on first token */
    dag_pred *pred;
    uint64_t pred_cap;
    uint32_t *work;
    uint32_t nwork;
    uint8_t *in_work;
    uint64_t waiting, tokens, order;
    dag_visit_fn fn;
    void *ctx;
    dag_result *res;
} walker;


static token_fifo *fifo(walker *w, uint32_t dest, uint32_t src, int create)
{
    token_fifo **f = &w->in[(uint64_t)dest * w->cpus + src];
    if (!*f && create) {
        *f = xmalloc(sizeof **f);
        (*f)->cap = 8;
        (*f)->head = (*f)->n = 0;
        (*f)->e = xmalloc((*f)->cap * sizeof *(*f)->e);
    }
    return *f;
}

static void fifo_push(token_fifo *f, const dag_pred *p)
{
    if (f->n == f->cap) {
        uint64_t cap = f->cap * 2;
        dag_pred *e = xmalloc(cap * sizeof *e);
        for (uint64_t i = 0; i < f->n; i++)
            e[i] = f->e[(f->head + i) & (f->cap - 1)];
        free(f->e);
        f->e = e;
        f->head = 0;
        f->cap = cap;
    }
    f->e[(f->head + f->n) & (f->cap - 1)] = *p;
    f->n++;
}

static int runnable(walker *w, uint32_t cpu, const rnr_final_chunk *c)
{
    for (uint32_t i = 0; i < c->nptv; i++) {
        token_fifo *f = fifo(w, cpu, c->ptv[i].cpu, 0);
        if (!f || f->n < c->ptv[i].count)
            return 0;
    }
    return 1;
}

static void work_add(walker *w, uint32_t cpu)
{
    if (!w->in_work[cpu]) {
        w->in_work[cpu] = 1;
        w->work[w->nwork++] = cpu;
    }
}

/* Runs chunk C of lane CPU: consumes its tokens, visits it, sends its own. */
static int run(walker *w, uint32_t cpu, const rnr_final_chunk *c, uint64_t log_index,
               uint64_t lane_index)
{
    uint64_t np = 0;
    for (uint32_t i = 0; i < c->nptv; i++)
        np += c->ptv[i].count;
    if (np > w->pred_cap) {
        free(w->pred);
        w->pred_cap = np * 2;
        w->pred = xmalloc(w->pred_cap * sizeof *w->pred);
    }
    np = 0;
    for (uint32_t i = 0; i < c->nptv; i++) {
        token_fifo *f = fifo(w, cpu, c->ptv[i].cpu, 0);
        for (uint32_t k = 0; k < c->ptv[i].count; k++) {
            w->pred[np++] = f->e[f->head];
            f->head = (f->head + 1) & (f->cap - 1);
            f->n--;
        }
    }
    w->tokens -= np;
    w->res->tokens_consumed += np;
    dag_node n = { c, log_index, lane_index, w->order++, (uint32_t)np, w->pred };
    dag_pred out = { cpu, lane_index, { 0, 0 } };
    if (w->fn(w->ctx, &n, out.value) < 0)
        return -1;
    w->res->nodes++;
    for (uint32_t i = 0; i < c->nstv; i++) {
        uint32_t d = c->stv[i];
        fifo_push(fifo(w, d, cpu, 1), &out);
        if (w->lanes[d].n)
            work_add(w, d);
    }
    w->tokens += c->nstv;
    w->res->tokens_sent += c->nstv;
    if (w->tokens > w->res->peak_tokens)
        w->res->peak_tokens = w->tokens;
    return 0;
}

static int drain_work(walker *w)
{
    while (w->nwork) {
        uint32_t cpu = w->work[--w->nwork];
        w->in_work[cpu] = 0;
        lane *l = &w->lanes[cpu];
        while (l->n) {
            waiting_chunk *h = l->q[l->head & (l->cap - 1)];
            if (!runnable(w, cpu, &h->c))
                break;
            l->head++;
            l->n--;
            w->waiting--;
            int rc = run(w, cpu, &h->c, h->log_index, h->lane_index);
            free(h);
            if (rc < 0)
                return -1;
        }
    }
    return 0;
}

static void enqueue(walker *w, uint32_t cpu, const rnr_final_chunk *c, uint64_t log_index,
                    uint64_t lane_index)
{
    lane *l = &w->lanes[cpu];
    if (l->n == l->cap) {
        uint64_t cap = l->cap ? l->cap * 2 : 16;
        waiting_chunk **q = xmalloc(cap * sizeof *q);
        for (uint64_t i = 0; i < l->n; i++)
            q[i] = l->q[(l->head + i) & (l->cap - 1)];
        free(l->q);
        l->q = q;
        l->head = 0;
        l->cap = cap;
    }
    size_t arrays = c->nstv * sizeof *c->stv + c->nptv * sizeof *c->ptv;
    waiting_chunk *h = xmalloc(sizeof *h + arrays);
    h->c = *c;
    h->c.ptv = (rnr_ptv_entry *)(void *)(h + 1);
    h->c.stv = (uint32_t *)(void *)(h->c.ptv + c->nptv);
    if (c->nptv)
        memcpy(h->c.ptv, c->ptv, c->nptv * sizeof *c->ptv);
    if (c->nstv)
        memcpy(h->c.stv, c->stv, c->nstv * sizeof *c->stv);
    h->log_index = log_index;
    h->lane_index = lane_index;
    l->q[(l->head + l->n) & (l->cap - 1)] = h;
    l->n++;
    w->waiting++;
    if (w->waiting > w->res->peak_waiting)
        w->res->peak_waiting = w->waiting;
}

static void report_stuck(walker *w)
{
    dag_result *res = w->res;
    const waiting_chunk *first = NULL;
    uint32_t first_cpu = 0;
    for (uint32_t cpu = 0; cpu < w->cpus; cpu++) {
        lane *l = &w->lanes[cpu];
        res->stuck_count += l->n;
        if (!l->n)
            continue;
        const waiting_chunk *h = l->q[l->head & (l->cap - 1)];
        if (!first || h->log_index < first->log_index) {
            first = h;
            first_cpu = cpu;
        }
    }
    if (!first)
        return;
    res->stuck = 1;
    res->stuck_cpu = first_cpu;
    res->stuck_lane_index = first->lane_index;
    res->stuck_log_index = first->log_index;
    for (uint32_t i = 0; i < first->c.nptv; i++) {
        token_fifo *f = fifo(w, first_cpu, first->c.ptv[i].cpu, 0);
        uint64_t have = f ? f->n : 0;
        if (have < first->c.ptv[i].count) {
            res->stuck_from = first->c.ptv[i].cpu;
            res->stuck_awaits = first->c.ptv[i].count;
            res->stuck_have = (uint32_t)have;
            break;
        }
    }
}

static void walker_free(walker *w)
{
    for (uint32_t cpu = 0; cpu < w->cpus; cpu++) {
        lane *l = &w->lanes[cpu];
        for (uint64_t i = 0; i < l->n; i++)
            free(l->q[(l->head + i) & (l->cap - 1)]);
        free(l->q);
    }
    for (uint64_t i = 0; i < (uint64_t)w->cpus * w->cpus; i++) {
        if (w->in[i]) {
            w->res->tokens_unconsumed += w->in[i]->n;
            free(w->in[i]->e);
            free(w->in[i]);
        }
    }
    free(w->lanes);
    free(w->in);
    free(w->pred);
    free(w->work);
    free(w->in_work);
}

int dag_walk(rnr_reader *r, dag_visit_fn fn, void *ctx, dag_result *res, char *err, size_t errlen)
{
    memset(res, 0, sizeof *res);
    const rnr_log_header *h = rnr_reader_header(r);
    if (!rnr_log_kind_is_chunks(h->kind) || h->kind == RNR_LOG_INITIAL) {
        snprintf(err, errlen, "%s: a %s log is not a final log", rnr_reader_name(r),
                 rnr_log_kind_name(h->kind));
        return -1;
    }
    walker w;
    memset(&w, 0, sizeof w);
    w.cpus = h->cpus;
    w.lanes = xcalloc(w.cpus, sizeof *w.lanes);
    w.in = xcalloc((size_t)w.cpus * w.cpus, sizeof *w.in);
    w.work = xmalloc(w.cpus * sizeof *w.work);
    w.in_work = xcalloc(w.cpus, 1);
    w.fn = fn;
    w.ctx = ctx;
    w.res = res;
    int rc;
    rnr_final_chunk c;
    while ((rc = rnr_reader_next_final(r, &c)) == 1) {
        uint32_t cpu = c.cpu;
        uint64_t lane_index = w.lanes[cpu].read++;
        uint64_t log_index = res->records++;
        if (w.lanes[cpu].n == 0 && runnable(&w, cpu, &c)) {
            if (run(&w, cpu, &c, log_index, lane_index) < 0 || drain_work(&w) < 0) {
                rc = -2;
                break;
            }
        } else {
            enqueue(&w, cpu, &c, log_index, lane_index);
        }
    }
    if (rc == -1)
        snprintf(err, errlen, "%s", rnr_reader_error(r));
    if (rc == 0)
        report_stuck(&w);
    walker_free(&w);
    return rc < 0 ? -1 : 0;
}
