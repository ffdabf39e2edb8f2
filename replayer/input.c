/* replayer/input.c: the input log split per thread (replayer/input.h),
 * streamed by two cursors over the file: one reads the records (system
 * calls, CSR reads, SC failures) when a thread needs one that has not been
 * read yet, the other the chunk checks when a chunk needs its check; each
 * passes over what the other reads. What one cursor meets of other threads
 * on the way waits in their queues, so memory is what the threads are
 * apart in the log, counted in records of that kind: a thread blocked for
 * the whole run (its next system call at the end of the log) makes the
 * record cursor queue the other threads' few system calls, not their many
 * checks. One mutex guards the cursors and the queues. */
#include <stdio.h>
#include "replayer/input.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "rru/alloc.h"

/* Records read ahead at most while looking for a chunk's check. */
#define CHECK_LOOKAHEAD 4096

typedef struct rp_check {
    uint64_t instret, pc, hash;
} rp_check;

/* A FIFO of records (data copied) or checks. */
typedef struct rp_queue {
    rnr_input_record *rec;
    size_t head, n, cap;       /* live records: rec[head .. head+n) modulo cap */
    rp_check *chk;
    size_t chead, nchk, capchk;
    uint64_t taken;            /* records the thread took */
    uint64_t passed;           /* its records the check cursor passed over */
} rp_queue;

struct rp_input {
    rnr_reader *r;             /* the record cursor */
    rnr_reader *rc;            /* the check cursor */
    int eof, ceof, failed;
    char error[RNR_ERR_MAX];
    rnr_log_header h;
    pthread_mutex_t mu;
    rp_queue *q;               /* indexed by tid - base */
    uint32_t base, nq;
    rnr_input_record start;
    int has_start;
    uint8_t *start_data;
    uint64_t held, peak;       /* records and checks queued now, at most */
};

static rp_queue *queue_of(rp_input *in, uint32_t tid, int create)
{
    if (in->nq == 0) {
        if (!create)
            return NULL;
        in->base = tid;
    }
    if (tid < in->base) {
        if (!create)
            return NULL;
        uint32_t d = in->base - tid;
        in->q = xrealloc(in->q, (in->nq + d) * sizeof *in->q);
        memmove(in->q + d, in->q, in->nq * sizeof *in->q);
        memset(in->q, 0, d * sizeof *in->q);
        in->nq += d;
        in->base = tid;
    }
    if (tid - in->base >= in->nq) {
        if (!create)
            return NULL;
        uint32_t n = tid - in->base + 1;
        in->q = xrealloc(in->q, n * sizeof *in->q);
        memset(in->q + in->nq, 0, (n - in->nq) * sizeof *in->q);
        in->nq = n;
    }
    return &in->q[tid - in->base];
}

static void push_record(rp_input *in, rp_queue *q, const rnr_input_record *rec)
{
    if (q->n == q->cap) {
        size_t cap = q->cap ? 2 * q->cap : 16;
        rnr_input_record *v = xmalloc(cap * sizeof *v);
        for (size_t i = 0; i < q->n; i++)
            v[i] = q->rec[(q->head + i) % (q->cap ? q->cap : 1)];
        free(q->rec);
        q->rec = v;
        q->cap = cap;
        q->head = 0;
    }
    rnr_input_record r = *rec;
    if (r.len) {
        uint8_t *d = xmalloc(r.len);
        memcpy(d, rec->data, r.len);
        r.data = d;
    } else {
        r.data = NULL;
    }
    q->rec[(q->head + q->n) % q->cap] = r;
    q->n++;
    if (++in->held > in->peak)
        in->peak = in->held;
}

static void push_check(rp_input *in, rp_queue *q, const rnr_input_record *rec)
{
    if (q->nchk == q->capchk) {
        size_t cap = q->capchk ? 2 * q->capchk : 16;
        rp_check *v = xmalloc(cap * sizeof *v);
        for (size_t i = 0; i < q->nchk; i++)
            v[i] = q->chk[(q->chead + i) % (q->capchk ? q->capchk : 1)];
        free(q->chk);
        q->chk = v;
        q->capchk = cap;
        q->chead = 0;
    }
    q->chk[(q->chead + q->nchk) % q->capchk] = (rp_check){rec->nr, (uint64_t)rec->value, rec->addr};
    q->nchk++;
    if (++in->held > in->peak)
        in->peak = in->held;
}

/* The next record of cursor R into *REC: 1, or 0 at the end of the log
 * (*EOF set) or on an error (the input fails, with the reader's message). */
static int cursor_next(rp_input *in, rnr_reader *r, int *eof, rnr_input_record *rec)
{
    if (*eof || in->failed)
        return 0;
    int rc = rnr_reader_next_input(r, rec);
    if (rc > 0)
        return 1;
    *eof = 1;
    if (rc < 0) {
        in->failed = 1;
        snprintf(in->error, sizeof in->error, "%s", rnr_reader_error(r));
    }
    return 0;
}

/* The record cursor: reads on to the next record that is not a check and
 * queues it; 0 at the end of the log or on error. */
static int read_record(rp_input *in)
{
    rnr_input_record rec;
    while (cursor_next(in, in->r, &in->eof, &rec)) {
        if (rec.type == RNR_IN_CHECK)
            continue;   /* the check cursor's */
        if (rec.type == RNR_IN_START) {
            in->start = rec;
            in->start_data = xmalloc(rec.len ? rec.len : 1);
            memcpy(in->start_data, rec.data, rec.len);
            in->start.data = in->start_data;
            in->has_start = 1;
        } else {
            push_record(in, queue_of(in, rec.tid, 1), &rec);
        }
        return 1;
    }
    return 0;
}

/* The check cursor: reads on to the next check and queues it, counting
 * the records of each thread it passes over; 0 at the end or on error. */
static int read_check(rp_input *in)
{
    rnr_input_record rec;
    while (cursor_next(in, in->rc, &in->ceof, &rec)) {
        if (rec.type == RNR_IN_START)
            continue;
        rp_queue *q = queue_of(in, rec.tid, 1);
        if (rec.type != RNR_IN_CHECK) {
            q->passed++;
            continue;
        }
        push_check(in, q, &rec);
        return 1;
    }
    return 0;
}

rp_input *rp_input_load(const char *path, char *err, size_t errlen)
{
    rnr_reader *r = rnr_reader_open(path, err, errlen);
    if (!r)
        return NULL;
    rp_input *in = xcalloc(1, sizeof *in);
    in->r = r;
    pthread_mutex_init(&in->mu, NULL);
    in->rc = rnr_reader_open(path, err, errlen);
    if (!in->rc) {
        rp_input_free(in);
        return NULL;
    }
    in->h = *rnr_reader_header(r);
    if (in->h.kind != RNR_LOG_INPUT) {
        snprintf(err, errlen, "%s: a %s log, not an input log", path, rnr_log_kind_name(in->h.kind));
        rp_input_free(in);
        return NULL;
    }
    /* A replay needs the whole log: one pass over it first (no record
     * kept) finds a damaged or truncated log before anything runs. */
    rnr_reader *scan = rnr_reader_open(path, err, errlen);
    if (!scan) {
        rp_input_free(in);
        return NULL;
    }
    rnr_input_record rec;
    int rc;
    while ((rc = rnr_reader_next_input(scan, &rec)) == 1)
        ;
    if (rc < 0) {
        snprintf(err, errlen, "%s", rnr_reader_error(scan));
        rnr_reader_close(scan);
        rp_input_free(in);
        return NULL;
    }
    rnr_reader_close(scan);
    /* The START record comes first (the process's start). */
    read_record(in);
    if (in->failed) {
        snprintf(err, errlen, "%s", in->error);
        rp_input_free(in);
        return NULL;
    }
    return in;
}

rp_input *rp_input_open_io(rnr_io *(*open)(void *ctx), void *ctx, const char *name, char *err,
                           size_t errlen)
{
    rp_input *in = xcalloc(1, sizeof *in);
    pthread_mutex_init(&in->mu, NULL);
    in->r = rnr_reader_open_io(open(ctx), err, errlen);
    if (in->r)
        in->rc = rnr_reader_open_io(open(ctx), err, errlen);
    if (!in->r || !in->rc) {
        rp_input_free(in);
        return NULL;
    }
    in->h = *rnr_reader_header(in->r);
    if (in->h.kind != RNR_LOG_INPUT) {
        snprintf(err, errlen, "%s: a %s log, not an input log", name, rnr_log_kind_name(in->h.kind));
        rp_input_free(in);
        return NULL;
    }
    read_record(in);
    if (in->failed) {
        snprintf(err, errlen, "%s", in->error);
        rp_input_free(in);
        return NULL;
    }
    return in;
}

void rp_input_free(rp_input *in)
{
    if (!in)
        return;
    for (uint32_t i = 0; i < in->nq; i++) {
        rp_queue *q = &in->q[i];
        for (size_t k = 0; k < q->n; k++)
            free((void *)q->rec[(q->head + k) % q->cap].data);
        free(q->rec);
        free(q->chk);
    }
    free(in->q);
    free(in->start_data);
    if (in->r)
        rnr_reader_close(in->r);
    if (in->rc)
        rnr_reader_close(in->rc);
    pthread_mutex_destroy(&in->mu);
    free(in);
}

const rnr_log_header *rp_input_header(const rp_input *in) { return &in->h; }
const rnr_input_record *rp_input_start(const rp_input *in) { return in->has_start ? &in->start : NULL; }

uint64_t rp_input_peak(const rp_input *in) { return in->peak; }

/* TID's queue with at least one record (reading on as needed), or NULL. */
static rp_queue *ready_queue(rp_input *in, uint32_t tid)
{
    rp_queue *q = queue_of(in, tid, 0);
    while ((!q || q->n == 0) && read_record(in))
        q = queue_of(in, tid, 0);
    return q && q->n ? q : NULL;
}

int rp_input_peek(rp_input *in, uint32_t tid, rnr_input_record *out)
{
    pthread_mutex_lock(&in->mu);
    rp_queue *q = ready_queue(in, tid);
    if (q)
        *out = q->rec[q->head];
    pthread_mutex_unlock(&in->mu);
    return q != NULL;
}

void rp_input_take(rp_input *in, uint32_t tid)
{
    pthread_mutex_lock(&in->mu);
    rp_queue *q = ready_queue(in, tid);
    if (q) {
        free((void *)q->rec[q->head].data);
        q->head = (q->head + 1) % q->cap;
        q->n--;
        q->taken++;
        in->held--;
    }
    pthread_mutex_unlock(&in->mu);
}

int rp_input_check(rp_input *in, uint32_t tid, uint64_t instret, uint64_t *pc, uint64_t *hash)
{
    pthread_mutex_lock(&in->mu);
    int found = 0, looked = 0;
    for (;;) {
        rp_queue *q = queue_of(in, tid, 0);
        /* Read on until this thread has a check at or past INSTRET, or a
         * record that comes after that point in its program order. */
        while (q && q->nchk && q->chk[q->chead].instret < instret) {
            q->chead = (q->chead + 1) % q->capchk;
            q->nchk--;
            in->held--;
        }
        if (q && q->nchk) {
            if (q->chk[q->chead].instret == instret) {
                *pc = q->chk[q->chead].pc;
                *hash = q->chk[q->chead].hash;
                q->chead = (q->chead + 1) % q->capchk;
                q->nchk--;
                in->held--;
                found = 1;
            }
            break;
        }
        /* No check queued: one may still be in the file, unless the check
         * cursor already passed a record of the thread it has not taken
         * (its next system call, after this point in its program order).
         * Reading on for it is bounded (a chunk end without a check, the
         * thread's last one for example, must not pull the rest of the log
         * in): a check not found within that is not compared. */
        if ((q && q->passed > q->taken) || ++looked > CHECK_LOOKAHEAD)
            break;
        if (!read_check(in))
            break;
    }
    pthread_mutex_unlock(&in->mu);
    return found;
}
