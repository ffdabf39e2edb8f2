/* backend/verify.c: the checker of final logs against the initial log's
 * dependences (and the ground truth), with vector clocks over CPU lanes,
 * streaming: the initial log, the truth file and the final log are read
 * side by side, and only a window of each is held.
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
 * or both are one entry (one thread) and A comes first.
 *
 * Streaming (the window). H is the largest TS read so far. Bounded silence
 * says a chunk not read yet has TS >= H - MSP; verify_open checks that the
 * log keeps it (every chunk arrives with TS + MSP >= H) and otherwise
 * settles nothing before the end (the whole log in memory, as MSP 0 does).
 * A chunk *settles* once its TS < F = H - MSP, in (TS, log index) order:
 *   - every chunk with a smaller TS has been read, so the chunks of its
 *     thread before it have settled: its thread position is final, and so
 *     is the thread-order requirement from its thread's previous chunk;
 *   - a dependence (q, t) of A binds to the first chunk X of q with
 *     TS > t. A.ts <= t < X.ts, so A settles before X; A's dependences wait
 *     in q's pending heap (by t) and X takes those with t < X.ts when it
 *     settles: the earlier chunks of q took the ones below their TS, so X
 *     gets exactly the dependences that bind to it;
 *   - ground-truth dependences are read while their destination time is
 *     below F (the file is in destination-time order) and become
 *     requirements once both ends have settled.
 *
 * When does the truth into an instruction arrive? Not by the TS of the
 * instruction's own chunk: a system call's accesses all belong to its
 * ECALL, at their own times, and a call can outlast the ECALL's chunk (a
 * read() filling 64 KiB takes longer than the default chunk age limit,
 * MSP/4: the chunk ends while the call still runs), so its later accesses come
 * after that TS, by as long as the call runs. The bound that holds is
 * one instruction further: (B) the accesses of instruction b of lane q
 * (thread tb) are made before the next instruction of q, and the next one
 * of tb, retire (a call returns, or blocks, before its core or its thread
 * runs on), and the chunk holding that instruction ends after it retired:
 * a truth dependence into b has a destination time <= the TS of the
 * chunk holding instruction b + 1 of q (and of tb). Hence, once the chunk
 * holding instruction e of lane q has settled, at a frontier F0, every
 * truth dependence into q below e has been read (time <= its TS < F0).
 * The only instruction of q still open to a dependence read later
 * ("late") is the last one of q's last settled chunk.
 *
 * So when lane q has settled past instruction e and no truth dependence
 * into q below e waits for its source, every requirement into q below
 * e - 1 is known, and into e - 1 too unless e ends q's last settled
 * chunk. The final chunk ending at e is checked then: waiting for q's next
 * chunk would hold everything read meanwhile (a cpu can stay idle for the
 * rest of the run). Instead, when e ends q's last settled chunk, that
 * chunk keeps the final chunk's clock, and a late dependence is checked
 * against it when it comes, which is exact: the clock is final. (Serial,
 * whose walk goes by threads: an entry ending at instruction e' of thread
 * tb keeps, in the chunk holding e' - 1, how far every thread had run
 * before the entry, when that chunk is the last settled one of both tb
 * and its lane; otherwise the next chunk of one of them has settled and
 * (B) has brought every dependence into e' - 1 already. The initial
 * log's own check keeps every held chunk's clock anyway.) A lane's
 * last settled chunk is not dropped before the end, and when the lane's
 * next chunk settles, the late dependences into it are read in that same
 * step (B). A dependence that names an instruction the check has passed
 * and that kept nothing therefore breaks (B): it comes after a chunk
 * holding a later instruction of its cpu or thread had settled; the
 * check stops (exit 2) and says that the truth does not match the log.
 *
 * Held: the chunks read and not settled (TS in [F, H]: an MSP window), the
 * settled chunks the final walk has not passed, and the requirements into
 * them; per lane its last settled chunk with one clock (Serial: one
 * count per thread); the final walk's own window (dag_walk). Dependences
 * into a CPU that dumps no chunk for a long time wait in its pending heap
 * until its next chunk (one entry per such dependence, like the Early
 * tokens the final logs carry for them; at the end they are the discarded
 * ones). */
#include "backend/heap.h"
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
enum { MODE_LANES, MODE_SERIAL, MODE_INITIAL };

/* What a message says about one chunk of the initial log. */
typedef struct cinfo {
    uint32_t cpu, tid;
    uint64_t log_index, lane_index, ts;
} cinfo;

typedef struct req {
    uint8_t kind;
    uint32_t p, q, ta, tb;
    uint64_t a_lane, b_lane, a_thr, b_thr;
    cinfo src, dst;
    uint64_t time;           /* dependence time; truth: index in the truth file */
    truth_dep td;            /* truth only */
} req;

struct verify_ctx {
    uint32_t cpus;
    char *path;              /* the initial log: a file, or */
    const void *mem;         /* a buffer (not owned) */
    size_t memlen;
    char *name;
    uint64_t window_msp;     /* MSP when the log keeps bounded silence, else 0 */
    truth_set truth;         /* truth in memory, by destination time */
    uint64_t *truth_index;   /* its dependences' positions in the original order */
    char *truth_path;        /* or a truth file read as it goes */
    int have_truth;
    pass_progress *progress;
};

void verify_set_progress(verify_ctx *v, pass_progress *p) { v->progress = p; }

static rnr_reader *open_initial(const verify_ctx *v, char *err, size_t errlen)
{
    if (v->path)
        return rnr_reader_open(v->path, err, errlen);
    return rnr_reader_open_io(rnr_io_mem_reader(v->mem, v->memlen, v->name), err, errlen);
}

/* Reads the log once: its own errors, and whether it keeps bounded silence. */
static verify_ctx *finish_open(verify_ctx *v, char *err, size_t errlen)
{
    rnr_reader *r = open_initial(v, err, errlen);
    if (!r) {
        verify_free(v);
        return NULL;
    }
    const rnr_log_header *h = rnr_reader_header(r);
    if (h->kind != RNR_LOG_INITIAL) {
        snprintf(err, errlen, "%s: this is %s %s log, not an initial log", rnr_reader_name(r),
                 rnr_log_kind_article(h->kind), rnr_log_kind_name(h->kind));
        rnr_reader_close(r);
        verify_free(v);
        return NULL;
    }
    v->cpus = h->cpus;
    v->window_msp = h->msp;
    uint64_t hmax = 0;
    rnr_initial_chunk c;
    int rc;
    while ((rc = rnr_reader_next_initial(r, &c)) == 1) {
        if (c.ts + v->window_msp < hmax)
            v->window_msp = 0;
        if (c.ts > hmax)
            hmax = c.ts;
    }
    if (rc < 0) {
        snprintf(err, errlen, "%s", rnr_reader_error(r));
        rnr_reader_close(r);
        verify_free(v);
        return NULL;
    }
    rnr_reader_close(r);
    return v;
}

verify_ctx *verify_open(const char *path, char *err, size_t errlen)
{
    verify_ctx *v = xcalloc(1, sizeof *v);
    v->path = xmalloc(strlen(path) + 1);
    memcpy(v->path, path, strlen(path) + 1);
    return finish_open(v, err, errlen);
}

verify_ctx *verify_open_mem(const void *data, size_t len, const char *name, char *err, size_t errlen)
{
    verify_ctx *v = xcalloc(1, sizeof *v);
    v->mem = data;
    v->memlen = len;
    v->name = xmalloc(strlen(name) + 1);
    memcpy(v->name, name, strlen(name) + 1);
    return finish_open(v, err, errlen);
}

uint64_t verify_window_msp(const verify_ctx *v) { return v->window_msp; }

void verify_free(verify_ctx *v)
{
    if (!v)
        return;
    free(v->path);
    free(v->name);
    truth_free(&v->truth);
    free(v->truth_index);
    free(v->truth_path);
    free(v);
}

static const truth_set *sort_key_set;
static int cmp_truth_time(const void *a, const void *b)
{
    const truth_dep *x = &sort_key_set->dep[*(const uint64_t *)a];
    const truth_dep *y = &sort_key_set->dep[*(const uint64_t *)b];
    if (x->dst.time != y->dst.time)
        return x->dst.time < y->dst.time ? -1 : 1;
    uint64_t i = *(const uint64_t *)a, j = *(const uint64_t *)b;
    return (i > j) - (i < j);
}

/* Keeps a copy of T sorted by destination time (stable). */
static void keep_truth(verify_ctx *v, const truth_set *t)
{
    uint64_t *idx = xmalloc((t->n ? t->n : 1) * sizeof *idx);
    for (size_t i = 0; i < t->n; i++)
        idx[i] = i;
    sort_key_set = t;
    qsort(idx, t->n, sizeof *idx, cmp_truth_time);
    truth_free(&v->truth);
    free(v->truth_index);
    v->truth.cpus = t->cpus;
    for (size_t i = 0; i < t->n; i++)
        truth_add(&v->truth, &t->dep[idx[i]]);
    v->truth_index = idx;
    v->have_truth = 1;
}

int verify_add_truth(verify_ctx *v, const truth_set *t, char *err, size_t errlen)
{
    if (t->cpus != v->cpus) {
        snprintf(err, errlen, "the ground truth is for %u cpus, the initial log has %u", t->cpus, v->cpus);
        return -1;
    }
    free(v->truth_path);
    v->truth_path = NULL;
    keep_truth(v, t);
    return 0;
}

int verify_set_truth_file(verify_ctx *v, const char *path, char *err, size_t errlen)
{
    truth_reader *t = truth_reader_open(path, err, errlen);
    if (!t)
        return -1;
    if (truth_reader_cpus(t) != v->cpus) {
        snprintf(err, errlen, "%s: the ground truth is for %u cpus, the initial log has %u", path,
                 truth_reader_cpus(t), v->cpus);
        truth_reader_close(t);
        return -1;
    }
    /* One pass: its syntax, and whether it is in destination-time order
     * (as the recorder and rnr synth write it); if not, it is sorted in
     * memory. */
    truth_dep d;
    uint64_t last = 0;
    int rc, sorted = 1;
    while ((rc = truth_reader_next(t, &d, err, errlen)) == 1) {
        sorted &= d.dst.time >= last;
        last = d.dst.time;
    }
    truth_reader_close(t);
    if (rc < 0)
        return -1;
    if (sorted) {
        truth_free(&v->truth);
        free(v->truth_path);
        v->truth_path = xmalloc(strlen(path) + 1);
        memcpy(v->truth_path, path, strlen(path) + 1);
        v->have_truth = 1;
        return 0;
    }
    truth_set all;
    if (truth_load(path, &all, err, errlen) < 0)
        return -1;
    keep_truth(v, &all);
    truth_free(&all);
    v->truth_path = xmalloc(strlen(path) + 1);
    memcpy(v->truth_path, path, strlen(path) + 1);
    v->have_truth = 2;          /* in memory; the path names it in messages */
    return 0;
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

/* ---- the run: one pass over the initial log, the truth and a final log ---- */

typedef struct uchunk {      /* read, not settled */
    cinfo ci;
    uint64_t cs, lane_start;
    uint32_t nsv;
    rnr_sv_entry *sv;
} uchunk;

typedef struct done_snap {   /* serial: instructions each thread had run before an entry */
    uint32_t n;
    uint32_t *tid;           /* ascending; a thread not listed had run none */
    uint64_t *done;
} done_snap;

typedef struct lentry {      /* settled and still held */
    cinfo ci;
    uint64_t lane_start, cs, thread_start;
    /* Initial mode: VC_in. Lanes mode: the clock (VC_out) of the final
     * chunk holding its last instruction, and serial mode: the threads'
     * progress before the entry holding it, kept when the final log ran
     * that instruction while this was the lane's last settled chunk (a
     * truth dependence into it can still come: "late" at the top). */
    uint64_t *vc;
    done_snap *snap;
} lentry;

typedef struct pend {        /* a dependence waiting for its destination chunk */
    uint64_t t;
    cinfo src;
    uint64_t a_lane, a_thr;
    uint64_t *vc;            /* initial mode: the source's VC_out */
} pend;

typedef struct hreq {
    uint64_t key;
    req r;
} hreq;

#define HREQ_LESS(a, b) ((a)->key < (b)->key)
/* Requirements by key (destination instruction). */
HEAP_DEFINE(rheap, hreq, HREQ_LESS)

typedef struct thread_st {
    uint32_t tid;
    uint64_t total;          /* instructions of its settled chunks */
    int has_last;
    cinfo last;
    uint64_t last_lane_end, last_thr_end;
    uint64_t done;           /* serial: instructions the final log ran */
    rheap reqs;              /* serial: requirements into it, by b_thr */
} thread_st;

typedef struct lane_st {
    uint64_t read_total, read_n;
    uint64_t settled_total;
    lentry *dq;              /* ring of settled chunks, oldest first */
    uint64_t head, n, cap;
    int has_last;
    cinfo last;
    uint64_t last_thr_end;
    uint64_t *last_vc;       /* initial mode: VC_out of its last settled chunk */
    pend *pend;              /* heap by t */
    uint64_t npend, cappend;
    rheap reqs;              /* lanes: requirements into it, by b_lane */
    uint64_t pos;            /* lanes: instructions the final walk ran */
    uint64_t min_truth;      /* lowest instruction a waiting truth dependence names here */
    uint64_t min_truth_dst;  /* ... as its destination */
    uint64_t *final_last;    /* lanes: VC_out of its last final chunk */
} lane_st;

typedef struct truth_wait {
    truth_dep d;
    uint64_t index;
} truth_wait;

typedef struct checker {
    verify_report *rep;
    const char *name;
    int has_first;
    req first;               /* the first violated requirement */
    int structural;          /* the message is about structure, not a dependence */
} checker;

typedef struct run {
    verify_ctx *v;
    int mode;
    checker k;
    rnr_reader *r;
    int ended;
    uint64_t h, nread;
    uchunk *u;               /* heap by (ts, log index) */
    uint64_t nu, capu;
    lane_st *lanes;
    thread_st **threads;     /* by tid */
    uint32_t nthreads, capthreads;
    truth_reader *tr;
    const char *tname;
    uint64_t tnext;          /* next dependence of the in-memory truth, or index of the file's */
    int tpeek_have, tended;
    truth_wait tpeek;
    truth_wait *tq;          /* read, waiting for both ends to settle */
    uint64_t ntq, captq;
    vc_pool pool;
    uint64_t ndep, ndiscarded, norder, ncpu, ntruth;
    uint64_t live_chunks, live_reqs, live_pend;
    char *err;
    size_t errlen;
    int failed;
} run;

static int fail(run *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(run *w, const char *fmt, ...)
{
    if (!w->failed) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(w->err, w->errlen, fmt, ap);
        va_end(ap);
    }
    w->failed = 1;
    return -1;
}

static void peaks(run *w)
{
    verify_report *rep = w->k.rep;
    if (w->live_chunks > rep->peak_chunks)
        rep->peak_chunks = w->live_chunks;
    if (w->live_reqs > rep->peak_requirements)
        rep->peak_requirements = w->live_reqs;
    if (w->live_pend > rep->peak_pending)
        rep->peak_pending = w->live_pend;
}

/* ---- reporting ---- */

static int rank_before(const req *a, const req *b)
{
    if (a->kind != b->kind)
        return a->kind < b->kind;
    if (a->src.log_index != b->src.log_index)
        return a->src.log_index < b->src.log_index;
    return a->dst.log_index < b->dst.log_index;
}

static void violated(checker *k, const req *r)
{
    k->rep->violations++;
    k->rep->ok = 0;
    if (!k->has_first || rank_before(r, &k->first)) {
        k->first = *r;
        k->has_first = 1;
    }
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
    if (k->structural || !k->has_first)
        return;
    const req *r = &k->first;
    const cinfo *a = &r->src, *b = &r->dst;
    char *m = k->rep->message;
    size_t n = sizeof k->rep->message;
    if (r->kind == REQ_TRUTH) {
        const truth_dep *d = &r->td;
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
                      k->name, what[r->kind], a->cpu, a->lane_index, a->log_index, a->tid, a->ts,
                      b->cpu, b->lane_index, b->log_index, b->tid, b->ts);
    if (r->kind == REQ_DEP && at > 0 && (size_t)at < n)
        snprintf(m + at, n - (size_t)at, " recorded at time %" PRIu64, r->time);
}

/* ---- heaps ---- */

static void req_push(run *w, rheap *h, uint64_t key, const req *r)
{
    rheap_push(h, (hreq){ key, *r });
    w->live_reqs++;
    peaks(w);
}

/* Removes the smallest into *OUT. */
static void req_pop(run *w, rheap *h, req *out)
{
    *out = rheap_pop(h).r;
    w->live_reqs--;
}

static int u_less(const uchunk *a, const uchunk *b)
{
    return a->ci.ts < b->ci.ts || (a->ci.ts == b->ci.ts && a->ci.log_index < b->ci.log_index);
}

static void u_push(run *w, const uchunk *x)
{
    if (w->nu == w->capu) {
        w->capu = w->capu ? 2 * w->capu : 64;
        w->u = xrealloc(w->u, w->capu * sizeof *w->u);
    }
    uint64_t i = w->nu++;
    while (i && u_less(x, &w->u[(i - 1) / 2])) {
        w->u[i] = w->u[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    w->u[i] = *x;
}

static void u_pop(run *w, uchunk *out)
{
    *out = w->u[0];
    uchunk last = w->u[--w->nu];
    uint64_t i = 0;
    for (;;) {
        uint64_t c = 2 * i + 1;
        if (c >= w->nu)
            break;
        if (c + 1 < w->nu && u_less(&w->u[c + 1], &w->u[c]))
            c++;
        if (!u_less(&w->u[c], &last))
            break;
        w->u[i] = w->u[c];
        i = c;
    }
    if (w->nu)
        w->u[i] = last;
}

static void pend_push(run *w, lane_st *l, const pend *x)
{
    if (l->npend == l->cappend) {
        l->cappend = l->cappend ? 2 * l->cappend : 16;
        l->pend = xrealloc(l->pend, l->cappend * sizeof *l->pend);
    }
    uint64_t i = l->npend++;
    while (i && l->pend[(i - 1) / 2].t > x->t) {
        l->pend[i] = l->pend[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    l->pend[i] = *x;
    w->live_pend++;
    peaks(w);
}

static void pend_pop(run *w, lane_st *l, pend *out)
{
    *out = l->pend[0];
    pend last = l->pend[--l->npend];
    uint64_t i = 0;
    for (;;) {
        uint64_t c = 2 * i + 1;
        if (c >= l->npend)
            break;
        if (c + 1 < l->npend && l->pend[c + 1].t < l->pend[c].t)
            c++;
        if (l->pend[c].t >= last.t)
            break;
        l->pend[i] = l->pend[c];
        i = c;
    }
    if (l->npend)
        l->pend[i] = last;
    w->live_pend--;
}

/* ---- threads and lanes ---- */

static thread_st *thread_find(const run *w, uint32_t tid, uint32_t *at)
{
    uint32_t lo = 0, hi = w->nthreads;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (w->threads[mid]->tid < tid)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (at)
        *at = lo;
    return lo < w->nthreads && w->threads[lo]->tid == tid ? w->threads[lo] : NULL;
}

static thread_st *thread_get(run *w, uint32_t tid)
{
    uint32_t at;
    thread_st *t = thread_find(w, tid, &at);
    if (t)
        return t;
    if (w->nthreads == w->capthreads) {
        w->capthreads = w->capthreads ? 2 * w->capthreads : 16;
        w->threads = xrealloc(w->threads, w->capthreads * sizeof *w->threads);
    }
    memmove(w->threads + at + 1, w->threads + at, (w->nthreads - at) * sizeof *w->threads);
    t = xcalloc(1, sizeof *t);
    t->tid = tid;
    w->threads[at] = t;
    w->nthreads++;
    return t;
}

static lentry *dq_at(const lane_st *l, uint64_t i) { return &l->dq[(l->head + i) & (l->cap - 1)]; }

static void dq_push(lane_st *l, const lentry *e)
{
    if (l->n == l->cap) {
        uint64_t cap = l->cap ? 2 * l->cap : 16;
        lentry *dq = xmalloc(cap * sizeof *dq);
        for (uint64_t i = 0; i < l->n; i++)
            dq[i] = *dq_at(l, i);
        free(l->dq);
        l->dq = dq;
        l->head = 0;
        l->cap = cap;
    }
    *dq_at(l, l->n) = *e;
    l->n++;
}

/* The held settled chunk of lane L holding instruction OFF, or NULL. */
static lentry *dq_find(const lane_st *l, uint64_t off)
{
    uint64_t lo = 0, hi = l->n;
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        const lentry *e = dq_at(l, mid);
        if (e->lane_start + e->cs <= off)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == l->n)
        return NULL;
    lentry *e = dq_at(l, lo);
    return e->lane_start <= off ? e : NULL;
}

static void snap_free(done_snap *s)
{
    if (!s)
        return;
    free(s->tid);
    free(s->done);
    free(s);
}

/* Drops the settled chunks nothing needs any more: the final walk has
 * passed them (lanes), no waiting truth dependence names them, they are
 * more than an MSP older than the settled frontier (a truth dependence
 * read later can still name them as its source), and they are not the
 * lane's last settled chunk, whose last instruction a truth dependence
 * read later can still name as its destination ("late" at the top). */
static void retire(run *w, uint32_t p, uint64_t frontier)
{
    lane_st *l = &w->lanes[p];
    uint64_t msp = w->v->window_msp;
    while (l->n > (w->ended ? 0u : 1u)) {
        lentry *e = dq_at(l, 0);
        uint64_t end = e->lane_start + e->cs;
        if (w->mode == MODE_LANES && end > l->pos)
            break;
        if (end > l->min_truth || !msp || e->ci.ts + msp >= frontier)
            break;
        vc_release(&w->pool, e->vc);
        snap_free(e->snap);
        l->head++;
        l->n--;
        w->live_chunks--;
    }
}

/* The held chunk of lane L whose last instruction is OFF and that kept
 * what the final log did before running it ("late"), or NULL. */
static const lentry *late_slot(const lane_st *l, uint64_t off)
{
    const lentry *e = dq_find(l, off);
    return e && (e->vc || e->snap) && off == e->lane_start + e->cs - 1 ? e : NULL;
}

static uint64_t snap_done(const done_snap *s, uint32_t tid)
{
    uint32_t lo = 0, hi = s->n;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (s->tid[mid] < tid)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < s->n && s->tid[lo] == tid ? s->done[lo] : 0;
}

/* A truth dependence that names an instruction the check has passed and
 * that kept nothing for it: its destination time is later than the TS of
 * a chunk holding an instruction after it (on its cpu, or in serial mode
 * its cpu or its thread), which settled before the dependence was read. */
static int late_bad(run *w, const req *r)
{
    return fail(w, "%s: ground-truth dependence %" PRIu64 " reaches cpu %u instruction %" PRIu64
                " (thread %u instruction %" PRIu64 ") at time %" PRIu64 ", later than a chunk "
                "holding an instruction after it on its cpu or thread ended: the truth does not "
                "match the initial log", w->tname, r->time, r->q, r->b_lane, r->tb, r->b_thr,
                r->td.dst.time);
}

/* ---- requirements ---- */

static int dispatch(run *w, const req *r)
{
    switch (w->mode) {
    case MODE_LANES: {
        if (r->kind == REQ_CPU)
            return 0;            /* lanes keep it */
        if (r->b_lane >= w->lanes[r->q].pos) {
            req_push(w, &w->lanes[r->q].reqs, r->b_lane, r);
            return 0;
        }
        const lentry *e = late_slot(&w->lanes[r->q], r->b_lane);   /* late */
        if (!e || !e->vc)
            return late_bad(w, r);
        if (r->p == r->q ? r->a_lane >= r->b_lane : e->vc[1 + r->p] <= r->a_lane)
            violated(&w->k, r);
        return 0;
    }
    case MODE_SERIAL: {
        thread_st *t = thread_get(w, r->tb);
        if (r->b_thr >= t->done) {
            req_push(w, &t->reqs, r->b_thr, r);
            return 0;
        }
        const lentry *e = late_slot(&w->lanes[r->q], r->b_lane);   /* late */
        if (!e || !e->snap || e->ci.tid != r->tb)
            return late_bad(w, r);
        if (r->ta == r->tb ? r->a_thr >= r->b_thr : snap_done(e->snap, r->ta) <= r->a_thr)
            violated(&w->k, r);
        return 0;
    }
    default: {                   /* the initial log's own DAG: truth only */
        if (r->kind != REQ_TRUTH)
            return 0;
        lentry *e = dq_find(&w->lanes[r->q], r->b_lane);
        if (!e || !e->vc)
            return late_bad(w, r);
        if (r->p == r->q ? r->a_lane >= r->b_lane : e->vc[1 + r->p] <= r->a_lane)
            violated(&w->k, r);
        return 0;
    }
    }
}

/* One end of a truth dependence against the settled chunk holding it. */
static int truth_end(run *w, const truth_access *a, cinfo *ci)
{
    lane_st *l = &w->lanes[a->cpu];
    if (a->insn >= l->settled_total)
        return 0;
    const lentry *e = dq_find(l, a->insn);
    if (!e) {                    /* dropped already (a source older than the window): only its
                                  * lane position is validated, not its tid and thread count */
        *ci = (cinfo){ a->cpu, a->tid, UINT64_MAX, UINT64_MAX, a->time };
        return 1;
    }
    *ci = e->ci;
    return e->ci.tid == a->tid && e->thread_start + (a->insn - e->lane_start) == a->tinsn;
}

static int truth_bad(run *w, const truth_wait *x)
{
    return fail(w, "%s: ground-truth dependence %" PRIu64 " (line %#" PRIx64 ") names an instruction "
                "that the initial log does not have with that cpu, tid and counts", w->tname, x->index,
                x->d.line);
}

/* Turns the waiting truth dependences whose ends have settled into
 * requirements; notes per lane the lowest instruction the others name. */
static int scan_truth(run *w)
{
    for (uint32_t p = 0; p < w->v->cpus; p++)
        w->lanes[p].min_truth = w->lanes[p].min_truth_dst = UINT64_MAX;
    uint64_t keep = 0;
    for (uint64_t i = 0; i < w->ntq; i++) {
        truth_wait *x = &w->tq[i];
        const truth_dep *d = &x->d;
        int ready = d->src.insn < w->lanes[d->src.cpu].settled_total &&
                    d->dst.insn < w->lanes[d->dst.cpu].settled_total;
        if (!ready) {
            if (w->ended)
                return truth_bad(w, x);
            lane_st *a = &w->lanes[d->src.cpu], *b = &w->lanes[d->dst.cpu];
            if (d->src.insn < a->min_truth)
                a->min_truth = d->src.insn;
            if (d->dst.insn < b->min_truth)
                b->min_truth = d->dst.insn;
            if (d->dst.insn < b->min_truth_dst)
                b->min_truth_dst = d->dst.insn;
            w->tq[keep++] = *x;
            continue;
        }
        cinfo ca, cb;
        if (!truth_end(w, &d->src, &ca) || !truth_end(w, &d->dst, &cb))
            return truth_bad(w, x);
        req r = { REQ_TRUTH, d->src.cpu, d->dst.cpu, d->src.tid, d->dst.tid, d->src.insn, d->dst.insn,
                  d->src.tinsn, d->dst.tinsn, ca, cb, x->index, *d };
        w->ntruth++;
        if (dispatch(w, &r) < 0)
            return -1;
    }
    w->ntq = keep;
    return 0;
}

/* The next truth dependence, into tpeek; 0 at the end, -1 on an error. */
static int truth_peek(run *w)
{
    if (w->tpeek_have)
        return 1;
    if (w->tended)
        return 0;
    verify_ctx *v = w->v;
    if (!w->tr) {
        if (!v->have_truth || w->tnext >= v->truth.n) {
            w->tended = 1;
            return 0;
        }
        w->tpeek = (truth_wait){ v->truth.dep[w->tnext], v->truth_index[w->tnext] };
        w->tnext++;
        w->tpeek_have = 1;
        return 1;
    }
    int rc = truth_reader_next(w->tr, &w->tpeek.d, w->err, w->errlen);
    if (rc < 0) {
        w->failed = 1;
        return -1;
    }
    if (rc == 0) {
        w->tended = 1;
        return 0;
    }
    w->tpeek.index = w->tnext++;
    w->tpeek_have = 1;
    return 1;
}

/* Settles chunk U (see the top of the file). */
static int settle(run *w, uchunk *u)
{
    verify_ctx *v = w->v;
    uint32_t q = u->ci.cpu;
    lane_st *l = &w->lanes[q];
    thread_st *t = thread_get(w, u->ci.tid);
    lentry e = { u->ci, u->lane_start, u->cs, t->total, NULL, NULL };
    uint64_t end = u->lane_start + u->cs;
    t->total += u->cs;
    l->settled_total = end;
    req rs[2];
    int nr = 0;
    if (t->has_last && t->last.cpu != q) {
        rs[nr++] = (req){ REQ_THREAD, t->last.cpu, q, t->tid, t->tid, t->last_lane_end - 1, e.lane_start,
                          t->last_thr_end - 1, e.thread_start, t->last, u->ci, t->last.ts, { 0 } };
        w->norder++;
    }
    if (l->has_last && l->last.tid != u->ci.tid) {
        rs[nr++] = (req){ REQ_CPU, q, q, l->last.tid, u->ci.tid, e.lane_start - 1, e.lane_start,
                          l->last_thr_end - 1, e.thread_start, l->last, u->ci, l->last.ts, { 0 } };
        w->ncpu++;
    }
    uint64_t *vc = NULL;
    if (w->mode == MODE_INITIAL) {
        vc = vc_new(&w->pool);
        if (l->last_vc)
            memcpy(vc + 1, l->last_vc + 1, v->cpus * sizeof *vc);
        else
            memset(vc + 1, 0, v->cpus * sizeof *vc);
    }
    while (l->npend && l->pend[0].t < u->ci.ts) {
        pend x;
        pend_pop(w, l, &x);
        req r = { REQ_DEP, x.src.cpu, q, x.src.tid, u->ci.tid, x.a_lane, e.lane_start, x.a_thr,
                  e.thread_start, x.src, u->ci, x.t, { 0 } };
        w->ndep++;
        if (vc) {
            for (uint32_t i = 0; i < v->cpus; i++)
                if (x.vc[1 + i] > vc[1 + i])
                    vc[1 + i] = x.vc[1 + i];
            vc_release(&w->pool, x.vc);
        }
        if (dispatch(w, &r) < 0)
            return -1;
    }
    for (int i = 0; i < nr; i++) {
        if (vc && rs[i].kind == REQ_THREAD && vc[1 + rs[i].p] <= rs[i].a_lane)
            violated(&w->k, &rs[i]);
        if (dispatch(w, &rs[i]) < 0)
            return -1;
    }
    uint64_t *out = NULL;
    if (vc) {
        vc[0] = 1;
        e.vc = vc;               /* VC_in, held with the chunk for the truth */
        out = vc_new(&w->pool);
        memcpy(out + 1, vc + 1, v->cpus * sizeof *out);
        out[1 + q] = end;
        out[0] = 1 + u->nsv;
        vc_release(&w->pool, l->last_vc);
        l->last_vc = out;
    }
    for (uint32_t i = 0; i < u->nsv; i++) {
        pend x = { u->sv[i].ts, u->ci, end - 1, e.thread_start + u->cs - 1, out };
        pend_push(w, &w->lanes[u->sv[i].cpu], &x);
    }
    free(u->sv);
    t->has_last = 1;
    t->last = u->ci;
    t->last_lane_end = end;
    t->last_thr_end = e.thread_start + u->cs;
    l->has_last = 1;
    l->last = u->ci;
    l->last_thr_end = t->last_thr_end;
    dq_push(l, &e);
    return 0;
}

/* Settles what the frontier allows, reads the truth up to it, and turns
 * the truth dependences whose ends have settled into requirements. */
static int advance(run *w)
{
    uint64_t msp = w->v->window_msp;
    uint64_t frontier = w->ended ? UINT64_MAX : (msp && w->h > msp ? w->h - msp : 0);
    while (w->nu && w->u[0].ci.ts < frontier) {
        uchunk u;
        u_pop(w, &u);
        if (settle(w, &u) < 0)
            return -1;
    }
    int rc;
    while ((rc = truth_peek(w)) == 1 && w->tpeek.d.dst.time < frontier) {
        if (w->ntq == w->captq) {
            w->captq = w->captq ? 2 * w->captq : 64;
            w->tq = xrealloc(w->tq, w->captq * sizeof *w->tq);
        }
        w->tq[w->ntq++] = w->tpeek;
        w->tpeek_have = 0;
    }
    if (rc < 0 || scan_truth(w) < 0)
        return -1;
    for (uint32_t p = 0; p < w->v->cpus; p++)
        retire(w, p, frontier);
    return 0;
}

/* Reads the next chunk of the initial log (or notes its end) and advances. */
static int feed(run *w)
{
    if (w->ended)
        return 0;
    rnr_initial_chunk c;
    int rc = rnr_reader_next_initial(w->r, &c);
    if (rc < 0)
        return fail(w, "%s", rnr_reader_error(w->r));
    if (rc == 0) {
        w->ended = 1;
        if (advance(w) < 0)
            return -1;
        for (uint32_t p = 0; p < w->v->cpus; p++)
            w->ndiscarded += w->lanes[p].npend;
        return 0;
    }
    lane_st *l = &w->lanes[c.cpu];
    uchunk u = { { c.cpu, c.tid, w->nread++, l->read_n++, c.ts }, c.cs, l->read_total, c.nsv, NULL };
    l->read_total += c.cs;
    if (c.nsv) {
        u.sv = xmalloc(c.nsv * sizeof *u.sv);
        memcpy(u.sv, c.sv, c.nsv * sizeof *u.sv);
    }
    u_push(w, &u);
    w->live_chunks++;
    peaks(w);
    if (c.ts > w->h)
        w->h = c.ts;
    /* Settle in batches of a sixteenth of the window. */
    uint64_t msp = w->v->window_msp;
    if (msp && w->nu && w->u[0].ci.ts + msp + msp / 16 < w->h)
        return advance(w);
    return 0;
}

static int feed_to_end(run *w)
{
    while (!w->ended)
        if (feed(w) < 0)
            return -1;
    return 0;
}

static int run_open(run *w, verify_ctx *v, int mode, verify_report *rep, const char *name, char *err,
                    size_t errlen)
{
    memset(w, 0, sizeof *w);
    w->v = v;
    w->mode = mode;
    w->k.rep = rep;
    w->k.name = name;
    w->err = err;
    w->errlen = errlen;
    w->pool.n = v->cpus;
    w->tname = v->truth_path ? v->truth_path : "the ground truth";
    w->r = open_initial(v, err, errlen);
    if (!w->r)
        return -1;
    if (v->have_truth == 1 && v->truth_path) {
        w->tr = truth_reader_open(v->truth_path, err, errlen);
        if (!w->tr) {
            rnr_reader_close(w->r);
            return -1;
        }
    }
    w->lanes = xcalloc(v->cpus, sizeof *w->lanes);
    return 0;
}

static void run_close(run *w)
{
    for (uint32_t p = 0; p < w->v->cpus; p++) {
        lane_st *l = &w->lanes[p];
        for (uint64_t i = 0; i < l->n; i++)
            snap_free(dq_at(l, i)->snap);
        free(l->dq);
        free(l->pend);
        free(l->reqs.e);
    }
    for (uint64_t i = 0; i < w->nu; i++)
        free(w->u[i].sv);
    free(w->u);
    for (uint32_t i = 0; i < w->nthreads; i++) {
        free(w->threads[i]->reqs.e);
        free(w->threads[i]);
    }
    free(w->threads);
    free(w->lanes);
    free(w->tq);
    vc_pool_free(&w->pool);
    truth_reader_close(w->tr);
    rnr_reader_close(w->r);
}

static void fill_counts(const run *w, verify_report *rep, int serial)
{
    rep->dependences = w->ndep;
    rep->discarded = w->ndiscarded;
    rep->truth = w->ntruth;
    rep->order = w->norder + (serial ? w->ncpu : 0);
}

/* ---- MaxPar and Stitched: vector clocks over the lanes ---- */

/* Reads the initial log until every requirement into lane Q below
 * instruction END is known (or the log has ended). */
static int ensure_lane(run *w, uint32_t q, uint64_t end)
{
    lane_st *l = &w->lanes[q];
    while (!w->ended && (l->settled_total < end || l->min_truth_dst < end))
        if (feed(w) < 0)
            return -1;
    return 0;
}

static int lane_visit(void *ctx, const dag_node *n, uint64_t out[2])
{
    run *w = ctx;
    verify_ctx *v = w->v;
    const rnr_final_chunk *c = n->c;
    uint32_t q = c->cpu;
    lane_st *l = &w->lanes[q];
    uint64_t start = l->pos, end = start + c->cs;
    w->k.rep->final_chunks++;
    pass_progress_tick(v->progress, w->k.rep->final_chunks);
    if (end < start)
        end = UINT64_MAX;
    if (ensure_lane(w, q, end) < 0)
        return -1;
    if (end > l->settled_total) {   /* the initial log has ended */
        structural(&w->k, "cpu %u chunk %" PRIu64 " (record %" PRIu64 ") runs instructions %" PRIu64
                   "..%" PRIu64 " of the cpu, which recorded only %" PRIu64,
                   q, n->lane_index, n->log_index, start, start + c->cs - 1, l->settled_total);
        end = l->settled_total > start ? l->settled_total : start;
    }
    /* Every initial chunk it overlaps is of its thread. */
    for (uint64_t i = 0; i < l->n; i++) {
        const lentry *x = dq_at(l, i);
        if (x->lane_start >= end)
            break;
        if (x->lane_start + x->cs <= start)
            continue;
        if (x->ci.tid != c->tid)
            structural(&w->k, "cpu %u chunk %" PRIu64 " (record %" PRIu64 ") is of thread %u but "
                       "covers instructions the initial log gives to thread %u (its chunk %" PRIu64 ")",
                       q, n->lane_index, n->log_index, c->tid, x->ci.tid, x->ci.lane_index);
    }
    l->pos = end;
    uint64_t *vc = vc_new(&w->pool);
    if (l->final_last)
        memcpy(vc + 1, l->final_last + 1, v->cpus * sizeof *vc);
    else
        memset(vc + 1, 0, v->cpus * sizeof *vc);
    for (uint32_t i = 0; i < n->npred; i++) {
        uint64_t *src = (uint64_t *)(uintptr_t)n->pred[i].value[0];
        for (uint32_t r = 0; r < v->cpus; r++)
            if (src[1 + r] > vc[1 + r])
                vc[1 + r] = src[1 + r];
        vc_release(&w->pool, src);
    }
    while (l->reqs.n && l->reqs.e[0].key < end) {
        req r;
        req_pop(w, &l->reqs, &r);
        if (r.p == q ? r.a_lane >= r.b_lane : vc[1 + r.p] <= r.a_lane)
            violated(&w->k, &r);
    }
    vc[1 + q] = end;            /* now VC_out */
    vc[0] = 1 + c->nstv;
    /* Late: the chunk ran the last instruction of the lane's last settled
     * chunk; a truth dependence into it can still come. VC_out differs
     * from VC_in only in lane q, which a check never reads. */
    if (!w->ended && end > start && end == l->settled_total && l->n) {
        lentry *x = dq_at(l, l->n - 1);
        if (x->lane_start + x->cs == end) {
            vc_release(&w->pool, x->vc);
            vc[0]++;
            x->vc = vc;
        }
    }
    vc_release(&w->pool, l->final_last);
    l->final_last = vc;
    out[0] = (uint64_t)(uintptr_t)vc;
    out[1] = 0;
    return 0;
}

static int verify_lanes(run *w, rnr_reader *r)
{
    checker *k = &w->k;
    dag_result dr;
    int rc = dag_walk(r, lane_visit, w, &dr, w->err, w->errlen);
    if (rc < 0 && !w->failed)
        w->failed = 1;           /* dag_walk's own message is in err */
    if (rc == 0 && feed_to_end(w) < 0)
        rc = -1;
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
            for (uint32_t q = 0; q < w->v->cpus; q++)
                if (w->lanes[q].pos != w->lanes[q].settled_total)
                    structural(k, "cpu %u runs %" PRIu64 " instructions, the initial log recorded %"
                               PRIu64, q, w->lanes[q].pos, w->lanes[q].settled_total);
        }
    }
    return rc;
}

/* ---- Serial and StSerial ---- */

/* Reads the initial log until every requirement into thread TID below
 * instruction END is known (or the log has ended). */
static int ensure_thread(run *w, uint32_t tid, uint64_t end)
{
    for (;;) {
        if (w->ended)
            return 0;
        const thread_st *t = thread_find(w, tid, NULL);
        int ready = t && t->total >= end;
        for (uint64_t i = 0; ready && i < w->ntq; i++)
            ready = !(w->tq[i].d.dst.tid == tid && w->tq[i].d.dst.tinsn < end);
        if (ready)
            return 0;
        if (feed(w) < 0)
            return -1;
    }
}

/* Late (serial): thread T's entry about to run ends at the last
 * instruction of its last settled chunk, which is also its lane's last
 * settled chunk: a truth dependence into that instruction can still come,
 * so the chunk keeps what every other thread had run before the entry. */
static void keep_snap(run *w, const thread_st *t)
{
    lane_st *l = &w->lanes[t->last.cpu];
    if (l->settled_total != t->last_lane_end || !l->n)
        return;
    lentry *x = dq_at(l, l->n - 1);
    if (x->lane_start + x->cs != t->last_lane_end)
        return;
    done_snap *s = xcalloc(1, sizeof *s);
    for (uint32_t i = 0; i < w->nthreads; i++)
        s->n += w->threads[i]->done > 0;
    s->tid = xmalloc((s->n ? s->n : 1) * sizeof *s->tid);
    s->done = xmalloc((s->n ? s->n : 1) * sizeof *s->done);
    s->n = 0;
    for (uint32_t i = 0; i < w->nthreads; i++)
        if (w->threads[i]->done) {
            s->tid[s->n] = w->threads[i]->tid;
            s->done[s->n++] = w->threads[i]->done;
        }
    snap_free(x->snap);
    x->snap = s;
}

static int verify_serial(run *w, rnr_reader *r)
{
    checker *k = &w->k;
    rnr_final_chunk c;
    int rc;
    uint64_t entry = 0;
    while ((rc = rnr_reader_next_final(r, &c)) == 1) {
        k->rep->final_chunks++;
        pass_progress_tick(w->v->progress, k->rep->final_chunks);
        uint64_t want = c.cs;
        const thread_st *known = thread_find(w, c.tid, NULL);
        if (known)
            want = known->done + c.cs < known->done ? UINT64_MAX : known->done + c.cs;
        if (ensure_thread(w, c.tid, want) < 0)
            return -1;
        thread_st *t = thread_find(w, c.tid, NULL);
        if (!t) {
            structural(k, "entry %" PRIu64 " runs thread %u, which the initial log does not have",
                       entry, c.tid);
            entry++;
            continue;
        }
        uint64_t start = t->done, end = start + c.cs;
        if (end > t->total || end < start)
            structural(k, "entry %" PRIu64 " runs instructions %" PRIu64 "..%" PRIu64 " of thread %u, "
                       "which recorded only %" PRIu64, entry, start, end - 1, c.tid, t->total);
        else if (!w->ended && end > start && end == t->total && t->has_last)
            keep_snap(w, t);
        while (t->reqs.n && t->reqs.e[0].key < end) {
            req q;
            req_pop(w, &t->reqs, &q);
            int ok;
            if (q.ta == q.tb) {
                ok = q.a_thr < q.b_thr;
            } else {
                const thread_st *a = thread_find(w, q.ta, NULL);
                ok = a && a->done > q.a_thr;
            }
            if (!ok)
                violated(k, &q);
        }
        if (!t->reqs.n && t->reqs.cap) {   /* memory: threads that ended keep none */
            free(t->reqs.e);
            t->reqs.e = NULL;
            t->reqs.cap = 0;
        }
        t->done = end;
        entry++;
    }
    if (rc < 0) {
        fail(w, "%s", rnr_reader_error(r));
        return -1;
    }
    if (feed_to_end(w) < 0)
        return -1;
    for (uint32_t i = 0; i < w->nthreads; i++) {
        thread_st *t = w->threads[i];
        if (t->done != t->total)
            structural(k, "thread %u runs %" PRIu64 " instructions, the initial log recorded %" PRIu64,
                       t->tid, t->done, t->total);
        while (t->reqs.n) {      /* their destination never ran */
            req q;
            req_pop(w, &t->reqs, &q);
            violated(k, &q);
        }
    }
    return 0;
}

int verify_final(verify_ctx *v, rnr_reader *r, verify_report *rep, char *err, size_t errlen)
{
    memset(rep, 0, sizeof *rep);
    rep->ok = 1;
    const rnr_log_header *h = rnr_reader_header(r);
    if (!rnr_log_kind_is_chunks(h->kind) || h->kind == RNR_LOG_INITIAL) {
        snprintf(err, errlen, "%s: a %s log is not a final log", rnr_reader_name(r),
                 rnr_log_kind_name(h->kind));
        return -1;
    }
    int serial = !rnr_log_kind_has_tokens(h->kind);
    run w;
    if (run_open(&w, v, serial ? MODE_SERIAL : MODE_LANES, rep, rnr_reader_name(r), err, errlen) < 0)
        return -1;
    int rc = 0;
    if (!serial && h->cpus != v->cpus) {
        structural(&w.k, "has %u cpus, the initial log %u", h->cpus, v->cpus);
        rc = feed_to_end(&w);
    } else {
        rc = serial ? verify_serial(&w, r) : verify_lanes(&w, r);
    }
    fill_counts(&w, rep, serial);
    if (rc == 0)
        describe(&w.k);
    run_close(&w);
    return rc < 0 ? -1 : 0;
}

/* ---- the initial log's own DAG against the truth ---- */

/* Settlement order is TS order, a topological order of the recorded edges
 * (they go from TS <= t to TS > t): each chunk's VC_in is the join of its
 * lane predecessor's VC_out and its recorded sources' VC_out, and the truth
 * and thread order are checked against it. */
int verify_initial(verify_ctx *v, verify_report *rep, char *err, size_t errlen)
{
    memset(rep, 0, sizeof *rep);
    rep->ok = 1;
    run w;
    if (run_open(&w, v, MODE_INITIAL, rep, "initial.log", err, errlen) < 0)
        return -1;
    int rc = feed_to_end(&w);
    fill_counts(&w, rep, 0);
    if (rc == 0)
        describe(&w.k);
    run_close(&w);
    return rc;
}
