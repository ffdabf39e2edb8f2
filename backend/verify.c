/* backend/verify.c: the checker of final logs against the initial log's
 * dependences (and the ground truth), with vector clocks over CPU lanes.
 *
 * A requirement says: instruction A of lane p (thread ta, its instruction
 * a_thr) completes before instruction B of lane q (thread tb, b_thr)
 * starts. Recorded dependences give A = the source chunk's last
 * instruction and B = the destination chunk's first.
 *
 * MaxPar/Stitched: dag_walk runs the final chunks in a topological order of
 * their token DAG; each gets the vector clock VC_in[r] = number of lane r's
 * instructions that complete before it may start (the join of its lane
 * predecessor's VC_out and of the VC_out of every chunk whose token it
 * awaits; VC_out = VC_in with its own lane advanced to its end). A
 * requirement into the final chunk F holding B holds iff VC_in(F)[p] > A.
 * Under the token-counter semantics this is exact: a chunk can start only
 * after its lane predecessor and the senders of the tokens it awaits (the
 * j-th token from p matches the j-th slot), and nothing else orders it.
 *
 * Serial/StSerial: each entry covers the next CS instructions of its thread;
 * a requirement holds iff the entry holding A precedes the one holding B,
 * or both are one entry (one thread) and A comes first. */
#include "rru/alloc.h"
#include "backend/verify.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/dag.h"
#include "backend/passes.h"

enum { REQ_DEP = 0, REQ_THREAD = 1, REQ_CPU = 2, REQ_TRUTH = 3 };

typedef struct ichunk {
    uint32_t cpu, tid;
    uint64_t ts, cs;
    uint64_t lane_start, thread_start, lane_index;
} ichunk;

typedef struct req {
    uint8_t kind;
    uint32_t p, q, ta, tb;
    uint64_t a_lane, b_lane, a_thr, b_thr;
    uint64_t src, dst;       /* initial chunk ids (log indices) */
    uint64_t time;           /* dependence time; truth: index in the truth set */
} req;

struct verify_ctx {
    uint32_t cpus;
    ichunk *ch;
    uint64_t nch;
    uint64_t **lane;         /* [cpu] chunk ids in lane order */
    uint64_t *lane_n, *lane_total;
    uint32_t *tids;          /* distinct tids, ascending */
    uint64_t *tid_total;
    uint32_t ntids;
    req *req;
    uint64_t nreq, reqcap;
    uint64_t ndep, ndiscarded, norder, ntruth;
    truth_dep *truth;        /* copies of the truth dependences, for messages */
    uint64_t ntruth_deps;
    pass_progress *progress;
};

void verify_set_progress(verify_ctx *v, pass_progress *p) { v->progress = p; }



static void add_req(verify_ctx *v, const req *r)
{
    if (v->nreq == v->reqcap) {
        v->reqcap = v->reqcap ? 2 * v->reqcap : 1024;
        v->req = xrealloc(v->req, v->reqcap * sizeof *v->req);
    }
    v->req[v->nreq++] = *r;
}

static void req_between(verify_ctx *v, uint8_t kind, uint64_t a, uint64_t b, uint64_t time)
{
    const ichunk *x = &v->ch[a], *y = &v->ch[b];
    req r = { kind, x->cpu, y->cpu, x->tid, y->tid,
              x->lane_start + x->cs - 1, y->lane_start, x->thread_start + x->cs - 1, y->thread_start,
              a, b, time };
    add_req(v, &r);
}

void verify_free(verify_ctx *v)
{
    if (!v)
        return;
    for (uint32_t c = 0; c < v->cpus; c++)
        free(v->lane[c]);
    free(v->lane);
    free(v->lane_n);
    free(v->lane_total);
    free(v->ch);
    free(v->tids);
    free(v->tid_total);
    free(v->req);
    free(v->truth);
    free(v);
}

static int cmp_thread_order(const void *a, const void *b, void *ctx)
{
    const verify_ctx *v = ctx;
    const ichunk *x = &v->ch[*(const uint64_t *)a], *y = &v->ch[*(const uint64_t *)b];
    if (x->tid != y->tid)
        return x->tid < y->tid ? -1 : 1;
    if (x->ts != y->ts)
        return x->ts < y->ts ? -1 : 1;
    uint64_t i = *(const uint64_t *)a, j = *(const uint64_t *)b;
    return (i > j) - (i < j);
}

typedef struct sv_rec {
    uint64_t chunk;
    uint32_t q;
    uint64_t t;
} sv_rec;

/* The first chunk of lane Q with TS > t, or UINT64_MAX. */
static uint64_t first_after(const verify_ctx *v, uint32_t q, uint64_t t)
{
    uint64_t lo = 0, hi = v->lane_n[q];
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (v->ch[v->lane[q][mid]].ts > t)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo < v->lane_n[q] ? v->lane[q][lo] : UINT64_MAX;
}

verify_ctx *verify_load(rnr_reader *r, char *err, size_t errlen)
{
    const rnr_log_header *h = rnr_reader_header(r);
    if (h->kind != RNR_LOG_INITIAL) {
        snprintf(err, errlen, "%s: this is a %s log, not an initial log", rnr_reader_name(r),
                 rnr_log_kind_name(h->kind));
        return NULL;
    }
    verify_ctx *v = xmalloc(sizeof *v);
    memset(v, 0, sizeof *v);
    v->cpus = h->cpus;
    uint64_t cap = 1024, svcap = 1024, nsv = 0;
    v->ch = xmalloc(cap * sizeof *v->ch);
    sv_rec *sv = xmalloc(svcap * sizeof *sv);
    v->lane_n = xcalloc(v->cpus, sizeof *v->lane_n);
    v->lane_total = xcalloc(v->cpus, sizeof *v->lane_total);
    v->lane = xcalloc(v->cpus, sizeof *v->lane);
    rnr_initial_chunk c;
    int rc;
    while ((rc = rnr_reader_next_initial(r, &c)) == 1) {
        if (v->nch == cap) {
            cap *= 2;
            v->ch = xrealloc(v->ch, cap * sizeof *v->ch);
        }
        ichunk *x = &v->ch[v->nch];
        *x = (ichunk){ c.cpu, c.tid, c.ts, c.cs, v->lane_total[c.cpu], 0, v->lane_n[c.cpu] };
        v->lane_total[c.cpu] += c.cs;
        v->lane_n[c.cpu]++;
        for (uint32_t i = 0; i < c.nsv; i++) {
            if (nsv == svcap) {
                svcap *= 2;
                sv = xrealloc(sv, svcap * sizeof *sv);
            }
            sv[nsv++] = (sv_rec){ v->nch, c.sv[i].cpu, c.sv[i].ts };
        }
        v->nch++;
    }
    if (rc < 0) {
        snprintf(err, errlen, "%s", rnr_reader_error(r));
        free(sv);
        verify_free(v);
        return NULL;
    }
    /* Lanes. */
    for (uint32_t p = 0; p < v->cpus; p++)
        v->lane[p] = xmalloc(v->lane_n[p] * sizeof *v->lane[p]);
    for (uint64_t i = 0; i < v->nch; i++)
        v->lane[v->ch[i].cpu][v->ch[i].lane_index] = i;
    /* Threads: each thread's chunks by TS give its instruction counts;
     * consecutive chunks of a thread on two cpus must stay ordered. */
    uint64_t *by_thread = xmalloc(v->nch * sizeof *by_thread);
    for (uint64_t i = 0; i < v->nch; i++)
        by_thread[i] = i;
    qsort_r(by_thread, v->nch, sizeof *by_thread, cmp_thread_order, v);
    v->tids = xmalloc(v->nch * sizeof *v->tids);
    v->tid_total = xmalloc(v->nch * sizeof *v->tid_total);
    for (uint64_t k = 0; k < v->nch; k++) {
        ichunk *x = &v->ch[by_thread[k]];
        if (k == 0 || v->tids[v->ntids - 1] != x->tid) {
            v->tids[v->ntids] = x->tid;
            v->tid_total[v->ntids++] = 0;
        }
        x->thread_start = v->tid_total[v->ntids - 1];
        v->tid_total[v->ntids - 1] += x->cs;
    }
    for (uint64_t k = 1; k < v->nch; k++) {
        const ichunk *a = &v->ch[by_thread[k - 1]], *b = &v->ch[by_thread[k]];
        if (a->tid == b->tid && a->cpu != b->cpu) {
            req_between(v, REQ_THREAD, by_thread[k - 1], by_thread[k], a->ts);
            v->norder++;
        }
    }
    free(by_thread);
    /* Consecutive chunks of two threads on one cpu (Serial formats). */
    for (uint32_t p = 0; p < v->cpus; p++) {
        for (uint64_t k = 1; k < v->lane_n[p]; k++) {
            uint64_t a = v->lane[p][k - 1], b = v->lane[p][k];
            if (v->ch[a].tid != v->ch[b].tid)
                req_between(v, REQ_CPU, a, b, v->ch[a].ts);
        }
    }
    /* Recorded dependences. */
    for (uint64_t i = 0; i < nsv; i++) {
        uint64_t x = first_after(v, sv[i].q, sv[i].t);
        if (x == UINT64_MAX) {
            v->ndiscarded++;
            continue;
        }
        req_between(v, REQ_DEP, sv[i].chunk, x, sv[i].t);
        v->ndep++;
    }
    free(sv);
    return v;
}

static int64_t tid_index(const verify_ctx *v, uint32_t tid)
{
    uint32_t lo = 0, hi = v->ntids;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (v->tids[mid] < tid)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < v->ntids && v->tids[lo] == tid ? (int64_t)lo : -1;
}

/* The chunk of lane P holding its instruction OFF, or UINT64_MAX. */
static uint64_t chunk_at(const verify_ctx *v, uint32_t p, uint64_t off)
{
    if (off >= v->lane_total[p])
        return UINT64_MAX;
    uint64_t lo = 0, hi = v->lane_n[p];
    while (hi - lo > 1) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (v->ch[v->lane[p][mid]].lane_start <= off)
            lo = mid;
        else
            hi = mid;
    }
    return v->lane[p][lo];
}

static int truth_access_ok(const verify_ctx *v, const truth_access *a, uint64_t *chunk)
{
    if (a->cpu >= v->cpus)
        return 0;
    uint64_t c = chunk_at(v, a->cpu, a->insn);
    if (c == UINT64_MAX || v->ch[c].tid != a->tid)
        return 0;
    *chunk = c;
    return v->ch[c].thread_start + (a->insn - v->ch[c].lane_start) == a->tinsn;
}

int verify_add_truth(verify_ctx *v, const truth_set *t, char *err, size_t errlen)
{
    if (t->cpus != v->cpus) {
        snprintf(err, errlen, "the ground truth is for %u cpus, the initial log has %u", t->cpus, v->cpus);
        return -1;
    }
    v->truth = xrealloc(v->truth, (v->ntruth_deps + t->n) * sizeof *v->truth);
    for (size_t i = 0; i < t->n; i++) {
        const truth_dep *d = &t->dep[i];
        uint64_t a, b;
        if (!truth_access_ok(v, &d->src, &a) || !truth_access_ok(v, &d->dst, &b)) {
            snprintf(err, errlen, "ground-truth dependence %zu (line %#" PRIx64 ") names an instruction "
                     "that the initial log does not have with that cpu, tid and counts", i, d->line);
            return -1;
        }
        req r = { REQ_TRUTH, d->src.cpu, d->dst.cpu, d->src.tid, d->dst.tid,
                  d->src.insn, d->dst.insn, d->src.tinsn, d->dst.tinsn, a, b, v->ntruth_deps };
        v->truth[v->ntruth_deps++] = *d;
        add_req(v, &r);
        v->ntruth++;
    }
    return 0;
}

/* ---- reporting ---- */

typedef struct checker {
    verify_ctx *v;
    verify_report *rep;
    const char *name;
    int64_t first;           /* index of the first violated requirement, -1 */
    int structural;          /* the message is about structure, not a dependence */
} checker;

static int rank_before(const verify_ctx *v, uint64_t i, uint64_t j)
{
    const req *a = &v->req[i], *b = &v->req[j];
    if (a->kind != b->kind)
        return a->kind < b->kind;
    if (a->src != b->src)
        return a->src < b->src;
    return a->dst < b->dst;
}

static void violated(checker *k, uint64_t i)
{
    k->rep->violations++;
    k->rep->ok = 0;
    if (k->first < 0 || rank_before(k->v, i, (uint64_t)k->first))
        k->first = (int64_t)i;
}

static void structural(checker *k, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void structural(checker *k, const char *fmt, ...)
{
    k->rep->ok = 0;
    if (k->structural)
        return;
    k->structural = 1;
    va_list ap;
    va_start(ap, fmt);
    char msg[512];
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    snprintf(k->rep->message, sizeof k->rep->message, "%s: %s", k->name, msg);
}

static void describe(checker *k)
{
    if (k->structural || k->first < 0)
        return;
    const verify_ctx *v = k->v;
    const req *r = &v->req[k->first];
    const ichunk *a = &v->ch[r->src], *b = &v->ch[r->dst];
    char *m = k->rep->message;
    size_t n = sizeof k->rep->message;
    if (r->kind == REQ_TRUTH) {
        const truth_dep *d = &v->truth[r->time];
        snprintf(m, n, "%s does not enforce the ground-truth %s dependence on line %#" PRIx64
                 " from cpu %u tid %u instruction %" PRIu64 " (time %" PRIu64 ") to cpu %u tid %u "
                 "instruction %" PRIu64 " (time %" PRIu64 ")",
                 k->name, truth_kind_name(d->kind), d->line, d->src.cpu, d->src.tid, d->src.insn,
                 d->src.time, d->dst.cpu, d->dst.tid, d->dst.insn, d->dst.time);
        return;
    }
    static const char *const what[] = { "the dependence", "the thread order", "the cpu order" };
    int at = snprintf(m, n, "%s does not enforce %s from cpu %u chunk %" PRIu64 " (record %" PRIu64
                      ", tid %u, TS %" PRIu64 ") to cpu %u chunk %" PRIu64 " (record %" PRIu64
                      ", tid %u, TS %" PRIu64 ")",
                      k->name, what[r->kind], a->cpu, a->lane_index, r->src, a->tid, a->ts, b->cpu,
                      b->lane_index, r->dst, b->tid, b->ts);
    if (r->kind == REQ_DEP && at > 0 && (size_t)at < n)
        snprintf(m + at, n - (size_t)at, " recorded at time %" PRIu64, r->time);
}

/* ---- vector clocks ---- */

typedef struct vc_pool {
    uint32_t n;              /* entries per clock */
    uint64_t **free_list;
    uint64_t nfree, capfree;
    uint64_t **all;
    uint64_t nall, capall;
} vc_pool;

/* A clock: [0] reference count, [1..n] the entries. */
static uint64_t *vc_new(vc_pool *p)
{
    uint64_t *c;
    if (p->nfree) {
        c = p->free_list[--p->nfree];
    } else {
        c = xmalloc((p->n + 1) * sizeof *c);
        if (p->nall == p->capall) {
            p->capall = p->capall ? 2 * p->capall : 256;
            p->all = xrealloc(p->all, p->capall * sizeof *p->all);
        }
        p->all[p->nall++] = c;
    }
    return c;
}

static void vc_release(vc_pool *p, uint64_t *c)
{
    if (!c || --c[0])
        return;
    if (p->nfree == p->capfree) {
        p->capfree = p->capfree ? 2 * p->capfree : 256;
        p->free_list = xrealloc(p->free_list, p->capfree * sizeof *p->free_list);
    }
    p->free_list[p->nfree++] = c;
}

static void vc_pool_free(vc_pool *p)
{
    for (uint64_t i = 0; i < p->nall; i++)
        free(p->all[i]);
    free(p->all);
    free(p->free_list);
}

static int cmp_req_dst(const void *a, const void *b, void *ctx)
{
    const verify_ctx *v = ctx;
    const req *x = &v->req[*(const uint64_t *)a], *y = &v->req[*(const uint64_t *)b];
    if (x->q != y->q)
        return x->q < y->q ? -1 : 1;
    return (x->b_lane > y->b_lane) - (x->b_lane < y->b_lane);
}

/* Requirement indices with a lane endpoint to check (not cpu order: lanes
 * keep it), sorted by destination lane and instruction; per lane, where
 * its requirements begin. */
static uint64_t *lane_requirements(verify_ctx *v, uint64_t **first, uint64_t *count)
{
    uint64_t *idx = xmalloc(v->nreq * sizeof *idx), n = 0;
    for (uint64_t i = 0; i < v->nreq; i++)
        if (v->req[i].kind != REQ_CPU)
            idx[n++] = i;
    qsort_r(idx, n, sizeof *idx, cmp_req_dst, v);
    *first = xmalloc((v->cpus + 1) * sizeof **first);
    uint64_t k = 0;
    for (uint32_t q = 0; q <= v->cpus; q++) {
        while (k < n && v->req[idx[k]].q < q)
            k++;
        (*first)[q] = k;
    }
    *count = n;
    return idx;
}

typedef struct lane_walk {
    checker k;
    vc_pool pool;
    uint64_t *idx, *next_req, *end_req;
    uint64_t *pos;           /* [cpu] instructions run on the lane */
    uint64_t *ic;            /* [cpu] index (in the lane) of the initial chunk holding pos */
    uint64_t **last;         /* [cpu] VC_out of the lane's last chunk */
} lane_walk;

/* Checks the requirements into the chunk covering [start, end) of lane Q
 * with clock VC. */
static void check_into(lane_walk *w, uint32_t q, uint64_t start, uint64_t end, const uint64_t *vc)
{
    verify_ctx *v = w->k.v;
    while (w->next_req[q] < w->end_req[q]) {
        uint64_t i = w->idx[w->next_req[q]];
        const req *r = &v->req[i];
        if (r->b_lane >= end)
            break;
        w->next_req[q]++;
        if (r->b_lane < start)
            continue;             /* cannot happen: chunks cover the lane in order */
        if (r->p == q ? r->a_lane >= r->b_lane : vc[1 + r->p] <= r->a_lane)
            violated(&w->k, i);
    }
}

static int lane_visit(void *ctx, const dag_node *n, uint64_t out[2])
{
    lane_walk *w = ctx;
    verify_ctx *v = w->k.v;
    const rnr_final_chunk *c = n->c;
    uint32_t q = c->cpu;
    uint64_t start = w->pos[q], end = start + c->cs;
    w->k.rep->final_chunks++;
    pass_progress_tick(v->progress, w->k.rep->final_chunks);
    if (end > v->lane_total[q] || end < start) {
        structural(&w->k, "cpu %u chunk %" PRIu64 " (record %" PRIu64 ") runs instructions %" PRIu64
                   "..%" PRIu64 " of the cpu, which recorded only %" PRIu64,
                   q, n->lane_index, n->log_index, start, end - 1, v->lane_total[q]);
        end = v->lane_total[q] > start ? v->lane_total[q] : start;
    }
    /* Every initial chunk it overlaps is of its thread. */
    while (w->ic[q] < v->lane_n[q]) {
        const ichunk *x = &v->ch[v->lane[q][w->ic[q]]];
        if (x->lane_start >= end)
            break;
        if (x->tid != c->tid)
            structural(&w->k, "cpu %u chunk %" PRIu64 " (record %" PRIu64 ") is of thread %u but "
                       "covers instructions the initial log gives to thread %u (its chunk %" PRIu64 ")",
                       q, n->lane_index, n->log_index, c->tid, x->tid, x->lane_index);
        if (x->lane_start + x->cs > end)
            break;
        w->ic[q]++;
    }
    w->pos[q] = end;
    uint64_t *vc = vc_new(&w->pool);
    if (w->last[q])
        memcpy(vc + 1, w->last[q] + 1, v->cpus * sizeof *vc);
    else
        memset(vc + 1, 0, v->cpus * sizeof *vc);
    for (uint32_t i = 0; i < n->npred; i++) {
        uint64_t *src = (uint64_t *)(uintptr_t)n->pred[i].value[0];
        for (uint32_t r = 0; r < v->cpus; r++)
            if (src[1 + r] > vc[1 + r])
                vc[1 + r] = src[1 + r];
        vc_release(&w->pool, src);
    }
    check_into(w, q, start, end, vc);
    vc[1 + q] = end;            /* now VC_out */
    vc[0] = 1 + c->nstv;
    vc_release(&w->pool, w->last[q]);
    w->last[q] = vc;
    out[0] = (uint64_t)(uintptr_t)vc;
    out[1] = 0;
    return 0;
}

static int verify_lanes(verify_ctx *v, rnr_reader *r, checker *k, char *err, size_t errlen)
{
    lane_walk w;
    memset(&w, 0, sizeof w);
    w.k = *k;
    w.pool.n = v->cpus;
    uint64_t count;
    w.idx = lane_requirements(v, &w.next_req, &count);
    w.end_req = xmalloc(v->cpus * sizeof *w.end_req);
    for (uint32_t q = 0; q < v->cpus; q++)
        w.end_req[q] = w.next_req[q + 1];
    w.pos = xcalloc(v->cpus, sizeof *w.pos);
    w.ic = xcalloc(v->cpus, sizeof *w.ic);
    w.last = xcalloc(v->cpus, sizeof *w.last);
    dag_result dr;
    int rc = dag_walk(r, lane_visit, &w, &dr, err, errlen);
    *k = w.k;
    if (rc == 0) {
        k->rep->tokens = dr.tokens_sent;
        k->rep->tokens_unconsumed = dr.tokens_unconsumed;
        if (dr.stuck) {
            structural(k, "the log cannot be replayed: cpu %u chunk %" PRIu64 " (record %" PRIu64
                       ") awaits %u tokens from cpu %u, which sends only %u before it stops "
                       "(a cycle, or tokens that are never sent)",
                       dr.stuck_cpu, dr.stuck_lane_index, dr.stuck_log_index, dr.stuck_awaits,
                       dr.stuck_from, dr.stuck_have);
        } else {
            for (uint32_t q = 0; q < v->cpus; q++)
                if (w.pos[q] != v->lane_total[q])
                    structural(k, "cpu %u runs %" PRIu64 " instructions, the initial log recorded %"
                               PRIu64, q, w.pos[q], v->lane_total[q]);
        }
    }
    vc_pool_free(&w.pool);
    free(w.idx);
    free(w.next_req);
    free(w.end_req);
    free(w.pos);
    free(w.ic);
    free(w.last);
    return rc;
}

/* ---- Serial and StSerial ---- */

typedef struct query {
    uint32_t tid;
    uint64_t off, req;
    int end;                  /* 0: A side, 1: B side */
} query;

static int cmp_query(const void *a, const void *b)
{
    const query *x = a, *y = b;
    if (x->tid != y->tid)
        return x->tid < y->tid ? -1 : 1;
    return (x->off > y->off) - (x->off < y->off);
}

static int verify_serial(verify_ctx *v, rnr_reader *r, checker *k, char *err, size_t errlen)
{
    uint64_t nq = 2 * v->nreq;
    query *qs = xmalloc(nq * sizeof *qs);
    for (uint64_t i = 0; i < v->nreq; i++) {
        qs[2 * i] = (query){ v->req[i].ta, v->req[i].a_thr, i, 0 };
        qs[2 * i + 1] = (query){ v->req[i].tb, v->req[i].b_thr, i, 1 };
    }
    qsort(qs, nq, sizeof *qs, cmp_query);
    uint64_t *pos = xmalloc(nq * sizeof *pos);   /* [2 * req + end] */
    for (uint64_t i = 0; i < nq; i++)
        pos[i] = UINT64_MAX;
    uint64_t *next = xmalloc(v->ntids * sizeof *next);
    uint64_t *done = calloc(v->ntids ? v->ntids : 1, sizeof *done);
    uint64_t qi = 0;
    for (uint32_t t = 0; t < v->ntids; t++) {
        while (qi < nq && qs[qi].tid < v->tids[t])
            qi++;
        next[t] = qi;
    }
    rnr_final_chunk c;
    int rc;
    uint64_t entry = 0;
    while ((rc = rnr_reader_next_final(r, &c)) == 1) {
        k->rep->final_chunks++;
        pass_progress_tick(v->progress, k->rep->final_chunks);
        int64_t t = tid_index(v, c.tid);
        if (t < 0) {
            structural(k, "entry %" PRIu64 " runs thread %u, which the initial log does not have",
                       entry, c.tid);
            entry++;
            continue;
        }
        uint64_t start = done[t], end = start + c.cs;
        if (end > v->tid_total[t] || end < start) {
            structural(k, "entry %" PRIu64 " runs instructions %" PRIu64 "..%" PRIu64 " of thread %u, "
                       "which recorded only %" PRIu64, entry, start, end - 1, c.tid, v->tid_total[t]);
        }
        while (next[t] < nq && qs[next[t]].tid == c.tid && qs[next[t]].off < end) {
            const query *x = &qs[next[t]++];
            pos[2 * x->req + (uint64_t)x->end] = entry;
        }
        done[t] = end;
        entry++;
    }
    if (rc < 0) {
        snprintf(err, errlen, "%s", rnr_reader_error(r));
    } else {
        for (uint32_t t = 0; t < v->ntids; t++)
            if (done[t] != v->tid_total[t])
                structural(k, "thread %u runs %" PRIu64 " instructions, the initial log recorded %"
                           PRIu64, v->tids[t], done[t], v->tid_total[t]);
        for (uint64_t i = 0; i < v->nreq; i++) {
            const req *q = &v->req[i];
            uint64_t pa = pos[2 * i], pb = pos[2 * i + 1];
            int ok = pa != UINT64_MAX && pb != UINT64_MAX &&
                     (pa < pb || (pa == pb && q->ta == q->tb && q->a_thr < q->b_thr));
            if (!ok)
                violated(k, i);
        }
    }
    free(qs);
    free(pos);
    free(next);
    free(done);
    return rc < 0 ? -1 : 0;
}

static void fill_counts(const verify_ctx *v, verify_report *rep, int serial)
{
    rep->dependences = v->ndep;
    rep->discarded = v->ndiscarded;
    rep->truth = v->ntruth;
    rep->order = v->norder;
    if (serial)
        for (uint64_t i = 0; i < v->nreq; i++)
            rep->order += v->req[i].kind == REQ_CPU;
}

int verify_final(verify_ctx *v, rnr_reader *r, verify_report *rep, char *err, size_t errlen)
{
    memset(rep, 0, sizeof *rep);
    rep->ok = 1;
    checker k = { v, rep, rnr_reader_name(r), -1, 0 };
    const rnr_log_header *h = rnr_reader_header(r);
    if (!rnr_log_kind_is_chunks(h->kind) || h->kind == RNR_LOG_INITIAL) {
        snprintf(err, errlen, "%s: a %s log is not a final log", rnr_reader_name(r),
                 rnr_log_kind_name(h->kind));
        return -1;
    }
    int serial = !rnr_log_kind_has_tokens(h->kind);
    fill_counts(v, rep, serial);
    if (!serial && h->cpus != v->cpus) {
        structural(&k, "has %u cpus, the initial log %u", h->cpus, v->cpus);
        return 0;
    }
    int rc = serial ? verify_serial(v, r, &k, err, errlen) : verify_lanes(v, r, &k, err, errlen);
    if (rc < 0)
        return -1;
    describe(&k);
    return 0;
}

/* ---- the initial log's own DAG against the truth ---- */

static int cmp_by_time(const void *a, const void *b, void *ctx)
{
    const verify_ctx *v = ctx;
    const ichunk *x = &v->ch[*(const uint64_t *)a], *y = &v->ch[*(const uint64_t *)b];
    if (x->ts != y->ts)
        return x->ts < y->ts ? -1 : 1;
    if (x->cpu != y->cpu)
        return x->cpu < y->cpu ? -1 : 1;
    return (x->lane_index > y->lane_index) - (x->lane_index < y->lane_index);
}

void verify_initial(verify_ctx *v, verify_report *rep)
{
    memset(rep, 0, sizeof *rep);
    rep->ok = 1;
    fill_counts(v, rep, 0);
    checker k = { v, rep, "initial.log", -1, 0 };
    /* Incoming recorded edges per chunk (CSR). */
    uint64_t *deg = xcalloc(v->nch + 1, sizeof *deg), *outdeg = xcalloc(v->nch, sizeof *outdeg);
    for (uint64_t i = 0; i < v->nreq; i++)
        if (v->req[i].kind == REQ_DEP) {
            deg[v->req[i].dst + 1]++;
            outdeg[v->req[i].src]++;
        }
    for (uint64_t i = 0; i < v->nch; i++)
        deg[i + 1] += deg[i];
    uint64_t *in = xmalloc((deg[v->nch] ? deg[v->nch] : 1) * sizeof *in);
    uint64_t *fill = xmalloc(v->nch * sizeof *fill);
    memcpy(fill, deg, v->nch * sizeof *fill);
    for (uint64_t i = 0; i < v->nreq; i++)
        if (v->req[i].kind == REQ_DEP)
            in[fill[v->req[i].dst]++] = v->req[i].src;
    free(fill);
    /* Recorded edges go from TS <= t to TS > t: TS order is topological. */
    uint64_t *order = xmalloc(v->nch * sizeof *order);
    for (uint64_t i = 0; i < v->nch; i++)
        order[i] = i;
    qsort_r(order, v->nch, sizeof *order, cmp_by_time, v);
    lane_walk w;
    memset(&w, 0, sizeof w);
    w.k = k;
    w.pool.n = v->cpus;
    uint64_t count;
    w.idx = lane_requirements(v, &w.next_req, &count);
    w.end_req = xmalloc(v->cpus * sizeof *w.end_req);
    for (uint32_t q = 0; q < v->cpus; q++)
        w.end_req[q] = w.next_req[q + 1];
    /* Only truth and thread order: recorded dependences hold by definition. */
    uint64_t **vc_of = xcalloc(v->nch, sizeof *vc_of);
    w.last = xcalloc(v->cpus, sizeof *w.last);
    for (uint64_t k2 = 0; k2 < v->nch; k2++) {
        uint64_t id = order[k2];
        const ichunk *x = &v->ch[id];
        uint64_t *vc = vc_new(&w.pool);
        if (w.last[x->cpu])
            memcpy(vc + 1, w.last[x->cpu] + 1, v->cpus * sizeof *vc);
        else
            memset(vc + 1, 0, v->cpus * sizeof *vc);
        for (uint64_t e = deg[id]; e < deg[id + 1]; e++) {
            uint64_t *src = vc_of[in[e]];
            for (uint32_t r = 0; r < v->cpus; r++)
                if (src[1 + r] > vc[1 + r])
                    vc[1 + r] = src[1 + r];
            vc_release(&w.pool, src);
        }
        uint64_t end = x->lane_start + x->cs;
        while (w.next_req[x->cpu] < w.end_req[x->cpu]) {
            uint64_t i = w.idx[w.next_req[x->cpu]];
            const req *r = &v->req[i];
            if (r->b_lane >= end)
                break;
            w.next_req[x->cpu]++;
            if (r->kind == REQ_DEP)
                continue;
            if (r->p == x->cpu ? r->a_lane >= r->b_lane : vc[1 + r->p] <= r->a_lane)
                violated(&w.k, i);
        }
        vc[1 + x->cpu] = end;
        vc[0] = 1 + outdeg[id];
        vc_release(&w.pool, w.last[x->cpu]);
        w.last[x->cpu] = vc;
        vc_of[id] = vc;
    }
    k = w.k;
    describe(&k);
    vc_pool_free(&w.pool);
    free(vc_of);
    free(w.last);
    free(w.idx);
    free(w.next_req);
    free(w.end_req);
    free(order);
    free(in);
    free(deg);
    free(outdeg);
}
