/* replayer/serial.c: a final log's chunks in the log's order, one at a time
 * (replayer/serial.h). */
#include "replayer/serial.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rru/alloc.h"

struct rp_serial {
    rnr_reader *r;
    uint32_t lanes;
    int tokens;
    uint64_t seq;
    uint64_t *lane_index;   /* [lane] chunks read */
    uint64_t *sent;         /* [from * lanes + to] tokens sent */
    uint64_t *awaited;      /* [from * lanes + to] PTV entries read */
    uint64_t **sent_by;     /* [from * lanes + to][k]: the sender's lane index of token k */
    uint64_t *sent_cap;
    rp_pred preds[16];      /* the last chunk's predecessors */
    size_t npreds;
};

rp_serial *rp_serial_new(rnr_reader *r, char *err, size_t errlen)
{
    const rnr_log_header *h = rnr_reader_header(r);
    if (!rnr_log_kind_is_chunks(h->kind) || h->kind == RNR_LOG_INITIAL) {
        snprintf(err, errlen, "%s: a %s log, not a final log", rnr_reader_name(r),
                 rnr_log_kind_name(h->kind));
        return NULL;
    }
    rp_serial *s = xcalloc(1, sizeof *s);
    s->r = r;
    s->tokens = rnr_log_kind_has_tokens(h->kind);
    s->lanes = s->tokens ? h->cpus : 1;
    if (s->lanes == 0)
        s->lanes = 1;
    s->lane_index = xcalloc(s->lanes, sizeof *s->lane_index);
    s->sent = xcalloc((size_t)s->lanes * s->lanes, sizeof *s->sent);
    s->awaited = xcalloc((size_t)s->lanes * s->lanes, sizeof *s->awaited);
    s->sent_by = xcalloc((size_t)s->lanes * s->lanes, sizeof *s->sent_by);
    s->sent_cap = xcalloc((size_t)s->lanes * s->lanes, sizeof *s->sent_cap);
    return s;
}

void rp_serial_free(rp_serial *s)
{
    if (!s)
        return;
    free(s->lane_index);
    free(s->sent);
    free(s->awaited);
    for (size_t i = 0; i < (size_t)s->lanes * s->lanes; i++)
        free(s->sent_by[i]);
    free(s->sent_by);
    free(s->sent_cap);
    free(s);
}

int rp_serial_next(rp_serial *s, rp_chunk *c, char *err, size_t errlen)
{
    rnr_final_chunk f;
    int rc = rnr_reader_next_final(s->r, &f);
    if (rc < 0) {
        snprintf(err, errlen, "%s", rnr_reader_error(s->r));
        return -1;
    }
    if (rc == 0)
        return 0;
    uint32_t lane = s->tokens ? f.cpu : 0;
    s->npreds = 0;
    if (lane >= s->lanes) {
        snprintf(err, errlen, "%s: chunk %" PRIu64 " is on cpu %u of a %u-cpu log",
                 rnr_reader_name(s->r), s->seq, f.cpu, s->lanes);
        return -1;
    }
    for (uint32_t i = 0; s->tokens && i < f.nptv; i++) {
        uint32_t p = f.ptv[i].cpu;
        if (p >= s->lanes) {
            snprintf(err, errlen, "%s: chunk %" PRIu64 " awaits cpu %u of a %u-cpu log",
                     rnr_reader_name(s->r), s->seq, p, s->lanes);
            return -1;
        }
        uint64_t *a = &s->awaited[(size_t)p * s->lanes + lane];
        *a += f.ptv[i].count;
        if (s->sent[(size_t)p * s->lanes + lane] < *a) {
            snprintf(err, errlen, "%s: chunk %" PRIu64 " (cpu %u) awaits tokens from cpu %u that no "
                     "earlier chunk sends: the log is not in a topological order",
                     rnr_reader_name(s->r), s->seq, f.cpu, p);
            return -1;
        }
        if (*a && s->npreds + 1 < sizeof s->preds / sizeof s->preds[0])
            s->preds[1 + s->npreds++] = (rp_pred){p, s->sent_by[(size_t)p * s->lanes + lane][*a - 1]};
    }
    for (uint32_t i = 0; s->tokens && i < f.nstv; i++)
        if (f.stv[i] < s->lanes) {
            size_t k = (size_t)lane * s->lanes + f.stv[i];
            if (s->sent[k] == s->sent_cap[k]) {
                s->sent_cap[k] = s->sent_cap[k] ? 2 * s->sent_cap[k] : 16;
                s->sent_by[k] = xrealloc(s->sent_by[k], s->sent_cap[k] * sizeof *s->sent_by[k]);
            }
            s->sent_by[k][s->sent[k]++] = s->lane_index[lane];
        }
    c->seq = s->seq++;
    c->cpu = s->tokens ? f.cpu : 0;
    c->tid = f.tid;
    c->cs = f.cs;
    c->lane_index = s->tokens ? s->lane_index[lane] : c->seq;
    /* The lane's previous chunk first (slot 0), then the token senders. */
    if (s->lane_index[lane]) {
        s->preds[0] = (rp_pred){c->cpu, s->lane_index[lane] - 1};
        s->npreds++;
    } else if (s->npreds) {
        memmove(s->preds, s->preds + 1, s->npreds * sizeof s->preds[0]);
    }
    s->lane_index[lane]++;
    return 1;
}

size_t rp_serial_preds(const rp_serial *s, rp_pred *out, size_t max)
{
    size_t n = s->npreds < max ? s->npreds : max;
    memcpy(out, s->preds, n * sizeof *out);
    return n;
}
