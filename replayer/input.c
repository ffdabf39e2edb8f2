/* replayer/input.c: the input log split per thread (replayer/input.h). */
#include "replayer/input.h"

#include <stdlib.h>
#include <string.h>

#include "rru/alloc.h"

typedef struct rp_check {
    uint64_t instret, pc, hash;
} rp_check;

typedef struct rp_stream {
    rnr_input_record *rec;    /* data points into the stream's own bytes */
    size_t n, cap, next;
    rp_check *chk;
    size_t nchk, capchk, nextchk;
} rp_stream;

struct rp_input {
    rnr_log_header h;
    rp_stream *s;             /* indexed by tid - base */
    uint32_t base, ns;
    rnr_input_record start;
    int has_start;
    uint8_t *start_data;
};

static rp_stream *stream_of(rp_input *in, uint32_t tid)
{
    if (tid < in->base || tid - in->base >= in->ns)
        return NULL;
    return &in->s[tid - in->base];
}

static rp_stream *stream_add(rp_input *in, uint32_t tid)
{
    if (in->ns == 0)
        in->base = tid;
    if (tid < in->base) {
        /* A smaller tid than the first: shift (does not happen with the
         * recorder's tids, which start with the main thread's). */
        uint32_t d = in->base - tid;
        in->s = xrealloc(in->s, (in->ns + d) * sizeof *in->s);
        memmove(in->s + d, in->s, in->ns * sizeof *in->s);
        memset(in->s, 0, d * sizeof *in->s);
        in->ns += d;
        in->base = tid;
    }
    if (tid - in->base >= in->ns) {
        uint32_t n = tid - in->base + 1;
        in->s = xrealloc(in->s, n * sizeof *in->s);
        memset(in->s + in->ns, 0, (n - in->ns) * sizeof *in->s);
        in->ns = n;
    }
    return &in->s[tid - in->base];
}

rp_input *rp_input_load(const char *path, char *err, size_t errlen)
{
    rnr_reader *r = rnr_reader_open(path, err, errlen);
    if (!r)
        return NULL;
    rp_input *in = xcalloc(1, sizeof *in);
    in->h = *rnr_reader_header(r);
    if (in->h.kind != RNR_LOG_INPUT) {
        snprintf(err, errlen, "%s: a %s log, not an input log", path, rnr_log_kind_name(in->h.kind));
        rnr_reader_close(r);
        rp_input_free(in);
        return NULL;
    }
    rnr_input_record rec;
    int rc;
    while ((rc = rnr_reader_next_input(r, &rec)) == 1) {
        if (rec.type == RNR_IN_START) {
            in->start = rec;
            in->start_data = xmalloc(rec.len);
            memcpy(in->start_data, rec.data, rec.len);
            in->start.data = in->start_data;
            in->has_start = 1;
            stream_add(in, rec.tid);
            continue;
        }
        rp_stream *s = stream_add(in, rec.tid);
        if (rec.type == RNR_IN_CHECK) {
            if (s->nchk == s->capchk) {
                s->capchk = s->capchk ? 2 * s->capchk : 64;
                s->chk = xrealloc(s->chk, s->capchk * sizeof *s->chk);
            }
            s->chk[s->nchk++] = (rp_check){rec.nr, (uint64_t)rec.value, rec.addr};
            continue;
        }
        if (s->n == s->cap) {
            s->cap = s->cap ? 2 * s->cap : 64;
            s->rec = xrealloc(s->rec, s->cap * sizeof *s->rec);
        }
        if (rec.len) {
            uint8_t *d = xmalloc(rec.len);
            memcpy(d, rec.data, rec.len);
            rec.data = d;
        } else {
            rec.data = NULL;
        }
        s->rec[s->n++] = rec;
    }
    if (rc < 0) {
        snprintf(err, errlen, "%s", rnr_reader_error(r));
        rnr_reader_close(r);
        rp_input_free(in);
        return NULL;
    }
    rnr_reader_close(r);
    return in;
}

void rp_input_free(rp_input *in)
{
    if (!in)
        return;
    for (uint32_t i = 0; i < in->ns; i++) {
        for (size_t k = 0; k < in->s[i].n; k++)
            free((void *)in->s[i].rec[k].data);
        free(in->s[i].rec);
        free(in->s[i].chk);
    }
    free(in->s);
    free(in->start_data);
    free(in);
}

const rnr_log_header *rp_input_header(const rp_input *in) { return &in->h; }
const rnr_input_record *rp_input_start(const rp_input *in) { return in->has_start ? &in->start : NULL; }

int rp_input_peek(rp_input *in, uint32_t tid, rnr_input_record *out)
{
    rp_stream *s = stream_of(in, tid);
    if (!s || s->next >= s->n)
        return 0;
    *out = s->rec[s->next];
    return 1;
}

void rp_input_take(rp_input *in, uint32_t tid)
{
    rp_stream *s = stream_of(in, tid);
    if (s && s->next < s->n)
        s->next++;
}

uint64_t rp_input_left(const rp_input *in, uint32_t tid)
{
    const rp_stream *s = stream_of((rp_input *)in, tid);
    return s ? s->n - s->next : 0;
}

int rp_input_check(rp_input *in, uint32_t tid, uint64_t instret, uint64_t *pc, uint64_t *hash)
{
    rp_stream *s = stream_of(in, tid);
    if (!s)
        return 0;
    while (s->nextchk < s->nchk && s->chk[s->nextchk].instret < instret)
        s->nextchk++;
    if (s->nextchk < s->nchk && s->chk[s->nextchk].instret == instret) {
        *pc = s->chk[s->nextchk].pc;
        *hash = s->chk[s->nextchk].hash;
        s->nextchk++;
        return 1;
    }
    return 0;
}
