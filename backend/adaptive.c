/* backend/adaptive.c: the policies of an adaptive final log (MaxPar or
 * Stitched by phase): parsing, the per-phase decision a streaming recorder
 * can call, and the off-line plan over a MaxPar log. */
#include "backend/adaptive.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/dag.h"
#include "formats/io.h"
#include "rru/alloc.h"

struct adaptive_meter {
    uint32_t cpus;
    uint64_t *lane_cycles;     /* per cpu: recorded cycles in the phase */
    adaptive_phase_stats st;
};

adaptive_meter *adaptive_meter_new(uint32_t cpus)
{
    adaptive_meter *m = xcalloc(1, sizeof *m);
    m->cpus = cpus;
    m->lane_cycles = xcalloc(cpus, sizeof *m->lane_cycles);
    return m;
}

void adaptive_meter_free(adaptive_meter *m)
{
    if (!m)
        return;
    free(m->lane_cycles);
    free(m);
}

static uint64_t sat_add(uint64_t a, uint64_t b) { return b > UINT64_MAX - a ? UINT64_MAX : a + b; }

void adaptive_meter_add(adaptive_meter *m, const rnr_final_chunk *c, uint64_t bytes)
{
    m->st.chunks++;
    m->st.instructions = sat_add(m->st.instructions, c->cs);
    m->st.maxpar_bytes += bytes;
    if (c->cpu < m->cpus) {
        uint64_t *l = &m->lane_cycles[c->cpu];
        *l = sat_add(*l, c->dur);
        if (*l > m->st.cycles)
            m->st.cycles = *l;
    }
}

void adaptive_meter_stats(const adaptive_meter *m, adaptive_phase_stats *st) { *st = m->st; }

void adaptive_meter_reset(adaptive_meter *m)
{
    memset(m->lane_cycles, 0, m->cpus * sizeof *m->lane_cycles);
    memset(&m->st, 0, sizeof m->st);
}

uint32_t adaptive_policy_decide(const adaptive_policy *p, const adaptive_phase_stats *st,
                                uint64_t follower_lag)
{
    switch (p->kind) {
    case ADAPTIVE_BANDWIDTH: {
        /* What the link carries while the phase runs: bytes_per_s over the
         * phase's recorded time. A log without durations has time 0. */
        double budget = p->bytes_per_s * ((double)st->cycles / p->hz);
        return (double)st->maxpar_bytes <= budget ? RNR_PHASE_MAXPAR : RNR_PHASE_STITCHED;
    }
    case ADAPTIVE_LAG:
        return follower_lag > p->lag_chunks ? RNR_PHASE_MAXPAR : RNR_PHASE_STITCHED;
    default:
        return RNR_PHASE_STITCHED;
    }
}

void adaptive_policy_free(adaptive_policy *p)
{
    free(p->start);
    free(p->format);
    memset(p, 0, sizeof *p);
}

/* Appends phase (START, FORMAT), merged into the last one when that has the
 * same format. */
static void add_phase(adaptive_policy *p, size_t *cap, uint64_t start, uint32_t format)
{
    if (p->nphases && p->format[p->nphases - 1] == format)
        return;
    if (p->nphases == *cap) {
        *cap = *cap ? *cap * 2 : 8;
        p->start = xrealloc(p->start, *cap * sizeof *p->start);
        p->format = xrealloc(p->format, *cap * sizeof *p->format);
    }
    p->start[p->nphases] = start;
    p->format[p->nphases++] = format;
}

static int parse_u64(const char *s, char **end, uint64_t *out)
{
    if (!isdigit((unsigned char)*s))
        return -1;
    errno = 0;
    unsigned long long v = strtoull(s, end, 10);
    if (errno)
        return -1;
    *out = v;
    return 0;
}

/* The phases file (docs/backend.md, "Adaptive"): per line `START-END FORMAT`
 * or `START- FORMAT` (to the end), instructions in walk positions, ranges
 * ascending and disjoint; `#` starts a comment. Instructions no range
 * covers are Stitched. */
static int read_phases(const char *path, adaptive_policy *p, char *err, size_t errlen)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return -1;
    }
    char line[1024];
    size_t cap = 0;
    unsigned lineno = 0;
    uint64_t pos = 0;          /* end of the last range */
    int open_end = 0, ranges = 0;
    while (fgets(line, sizeof line, f)) {
        lineno++;
        size_t len = strlen(line);
        if (len == sizeof line - 1 && line[len - 1] != '\n' && !feof(f)) {
            snprintf(err, errlen, "%s:%u: line too long", path, lineno);
            goto fail;
        }
        char *hash = strchr(line, '#');
        if (hash)
            *hash = 0;
        char *s = line;
        while (isspace((unsigned char)*s))
            s++;
        if (!*s)
            continue;
        uint64_t a, b = UINT64_MAX;
        char *e;
        if (parse_u64(s, &e, &a) < 0 || *e != '-') {
            snprintf(err, errlen, "%s:%u: expected START-END FORMAT or START- FORMAT "
                     "(instructions, decimal)", path, lineno);
            goto fail;
        }
        s = e + 1;
        int closed = !isspace((unsigned char)*s);
        if (closed && (parse_u64(s, &e, &b) < 0 || !isspace((unsigned char)*e))) {
            snprintf(err, errlen, "%s:%u: bad range end (a decimal instruction count, or "
                     "nothing for the end of the run)", path, lineno);
            goto fail;
        }
        if (closed)
            s = e;
        while (isspace((unsigned char)*s))
            s++;
        char *word = s;
        while (*s && !isspace((unsigned char)*s))
            s++;
        char *rest = s;
        while (isspace((unsigned char)*rest))
            rest++;
        *s = 0;
        uint32_t fmt = strcmp(word, "maxpar") == 0     ? RNR_PHASE_MAXPAR
                       : strcmp(word, "stitched") == 0 ? RNR_PHASE_STITCHED
                                                       : 0;
        if (!fmt || *rest) {
            snprintf(err, errlen, "%s:%u: the format must be maxpar or stitched%s", path, lineno,
                     *rest ? ", and nothing after it" : "");
            goto fail;
        }
        if (closed && b <= a) {
            snprintf(err, errlen, "%s:%u: empty range %llu-%llu (END must be above START)", path,
                     lineno, (unsigned long long)a, (unsigned long long)b);
            goto fail;
        }
        if (open_end || (ranges && a < pos)) {
            snprintf(err, errlen, "%s:%u: range starts at %llu, inside or before the range "
                     "above it (ranges must be ascending and disjoint)", path, lineno,
                     (unsigned long long)a);
            goto fail;
        }
        if (a > pos)
            add_phase(p, &cap, pos, RNR_PHASE_STITCHED);   /* the gap before it */
        add_phase(p, &cap, a, fmt);
        pos = b;
        open_end = !closed;
        ranges++;
    }
    if (ferror(f)) {
        snprintf(err, errlen, "%s: read error", path);
        goto fail;
    }
    if (!ranges) {
        snprintf(err, errlen, "%s: no phase in the file (lines START-END FORMAT)", path);
        goto fail;
    }
    if (!open_end)
        add_phase(p, &cap, pos, RNR_PHASE_STITCHED);
    fclose(f);
    return 0;
fail:
    fclose(f);
    return -1;
}

int adaptive_policy_parse(const char *policy, adaptive_policy *p, char *err, size_t errlen)
{
    memset(p, 0, sizeof *p);
    const char *colon = strchr(policy, ':');
    size_t klen = colon ? (size_t)(colon - policy) : strlen(policy);
    const char *arg = colon ? colon + 1 : "";
    if (klen == 6 && strncmp(policy, "phases", 6) == 0) {
        if (!*arg) {
            snprintf(err, errlen, "policy '%s': phases:FILE needs a file", policy);
            return -1;
        }
        p->kind = ADAPTIVE_PHASES;
        if (read_phases(arg, p, err, errlen) < 0) {
            adaptive_policy_free(p);
            return -1;
        }
        return 0;
    }
    if (klen == 9 && strncmp(policy, "bandwidth", 9) == 0) {
        char *e;
        errno = 0;
        double bw = strtod(arg, &e);
        if (e == arg || errno || !isfinite(bw) || bw < 0 || !isdigit((unsigned char)*arg)) {
            snprintf(err, errlen, "policy '%s': BYTES_PER_S must be a number >= 0", policy);
            return -1;
        }
        p->kind = ADAPTIVE_BANDWIDTH;
        p->bytes_per_s = bw;
        p->phase_insns = ADAPTIVE_PHASE_INSNS_DEFAULT;
        p->hz = ADAPTIVE_HZ_DEFAULT;
        if (*e == ':') {
            const char *s = e + 1;
            if (parse_u64(s, &e, &p->phase_insns) < 0 || p->phase_insns == 0) {
                snprintf(err, errlen, "policy '%s': PHASE_INSNS must be an instruction count >= 1",
                         policy);
                return -1;
            }
        }
        if (*e == ':') {
            const char *s = e + 1;
            errno = 0;
            p->hz = strtod(s, &e);
            if (e == s || errno || !isfinite(p->hz) || p->hz <= 0) {
                snprintf(err, errlen, "policy '%s': HZ must be a clock rate > 0", policy);
                return -1;
            }
        }
        if (*e) {
            snprintf(err, errlen, "policy '%s': expected bandwidth:BYTES_PER_S[:PHASE_INSNS[:HZ]]",
                     policy);
            return -1;
        }
        return 0;
    }
    if (klen == 3 && strncmp(policy, "lag", 3) == 0) {
        char *e;
        if (parse_u64(arg, &e, &p->lag_chunks) < 0 || *e) {
            snprintf(err, errlen, "policy '%s': lag:CHUNKS needs a chunk count", policy);
            return -1;
        }
        p->kind = ADAPTIVE_LAG;
        return 0;
    }
    snprintf(err, errlen, "unknown policy '%s' (phases:FILE, bandwidth:BYTES_PER_S, lag:CHUNKS)",
             policy);
    return -1;
}

/* ---- the off-line plan ---- */

static long discard_write(void *ctx, const void *buf, size_t n)
{
    (void)ctx;
    (void)buf;
    return (long)n;
}

struct adaptive_planner {
    const adaptive_policy *p;
    adaptive_policy out;       /* the phases decided so far */
    size_t cap;
    uint64_t phase_insns;
    adaptive_meter *meter;     /* BANDWIDTH: the held phase's statistics */
    rnr_writer *sizer;         /* BANDWIDTH: encodes the chunks to measure their records */
    uint64_t walk_insns, phase;
    int have;                  /* a phase is open (BANDWIDTH: held in the meter) */
};

adaptive_planner *adaptive_planner_new(const adaptive_policy *p, const rnr_log_header *h,
                                       char *err, size_t errlen)
{
    adaptive_planner *pl = xcalloc(1, sizeof *pl);
    pl->p = p;
    pl->phase_insns = p->phase_insns ? p->phase_insns : ADAPTIVE_PHASE_INSNS_DEFAULT;
    if (p->kind == ADAPTIVE_PHASES) {
        for (size_t i = 0; i < p->nphases; i++)
            add_phase(&pl->out, &pl->cap, p->start[i], p->format[i]);
    } else if (p->kind == ADAPTIVE_BANDWIDTH) {
        static const rnr_io_ops discard = { NULL, discard_write, NULL, NULL };
        rnr_log_header mh = *h;
        mh.kind = RNR_LOG_MAXPAR;
        pl->sizer = rnr_writer_open_io(rnr_io_custom(&discard, NULL, "<measure>", 1), &mh, NULL,
                                       err, errlen);
        if (!pl->sizer) {
            free(pl);
            return NULL;
        }
        pl->meter = adaptive_meter_new(h->cpus);
    }
    return pl;
}

void adaptive_planner_free(adaptive_planner *pl)
{
    if (!pl)
        return;
    adaptive_meter_free(pl->meter);
    if (pl->sizer)
        rnr_writer_abandon(pl->sizer);
    adaptive_policy_free(&pl->out);
    free(pl);
}

/* BANDWIDTH: the held phase decided on its own statistics. */
static void decide_held(adaptive_planner *pl)
{
    adaptive_phase_stats st;
    adaptive_meter_stats(pl->meter, &st);
    add_phase(&pl->out, &pl->cap, pl->phase * pl->phase_insns, adaptive_policy_decide(pl->p, &st, 0));
    adaptive_meter_reset(pl->meter);
    pl->have = 0;
}

int adaptive_planner_add(adaptive_planner *pl, const rnr_final_chunk *c, uint64_t follower_lag)
{
    uint64_t phase = pl->walk_insns / pl->phase_insns;
    pl->walk_insns = sat_add(pl->walk_insns, c->cs);
    int decided = 0;
    switch (pl->p->kind) {
    case ADAPTIVE_BANDWIDTH:
        if (pl->have && phase != pl->phase) {
            decide_held(pl);
            decided = 1;
        }
        pl->phase = phase;
        pl->have = 1;
        if (rnr_writer_put_final(pl->sizer, c) < 0)
            return -1;
        adaptive_meter_add(pl->meter, c, rnr_writer_record_bytes(pl->sizer));
        break;
    case ADAPTIVE_LAG:
        /* Decided as the phase begins, on the follower's lag then. */
        if (!pl->have || phase != pl->phase)
            add_phase(&pl->out, &pl->cap, phase * pl->phase_insns,
                      adaptive_policy_decide(pl->p, NULL, follower_lag));
        pl->phase = phase;
        pl->have = 1;
        break;
    default:
        break;
    }
    return decided;
}

int adaptive_planner_kind(const adaptive_planner *pl) { return pl->p->kind; }

const char *adaptive_planner_error(const adaptive_planner *pl)
{
    return pl->sizer ? rnr_writer_error(pl->sizer) : "";
}

void adaptive_planner_finish(adaptive_planner *pl)
{
    if (pl->p->kind == ADAPTIVE_BANDWIDTH && pl->have)
        decide_held(pl);
    if (!pl->out.nphases)
        add_phase(&pl->out, &pl->cap, 0, RNR_PHASE_STITCHED);
    pl->out.start[0] = 0;
}

size_t adaptive_planner_phases(const adaptive_planner *pl, const uint64_t **start,
                               const uint32_t **format)
{
    *start = pl->out.start;
    *format = pl->out.format;
    return pl->out.nphases;
}

static int plan_visit(void *ctx, const dag_node *n, uint64_t out[2])
{
    out[0] = out[1] = 0;
    return adaptive_planner_add(ctx, n->c, 0) < 0 ? -1 : 0;
}

int adaptive_plan(const adaptive_policy *p, rnr_reader *r, uint64_t **start, uint32_t **format,
                  size_t *n, char *err, size_t errlen)
{
    *start = NULL;
    *format = NULL;
    *n = 0;
    if (p->kind == ADAPTIVE_LAG) {
        snprintf(err, errlen, "policy lag:%llu decides by a follower's lag: it is on-line only "
                 "(rnr record --stream HOST:PORT --stream-format adaptive); off-line use "
                 "phases:FILE or bandwidth:BYTES_PER_S", (unsigned long long)p->lag_chunks);
        return -1;
    }
    adaptive_planner *pl = adaptive_planner_new(p, rnr_reader_header(r), err, errlen);
    if (!pl)
        return -1;
    int rc = 0;
    if (p->kind != ADAPTIVE_PHASES) {
        dag_result dr;
        rc = dag_walk(r, plan_visit, pl, &dr, err, errlen);
        if (rc < 0 && *adaptive_planner_error(pl))
            snprintf(err, errlen, "%s", adaptive_planner_error(pl));
        if (rc == 0 && dr.stuck) {
            snprintf(err, errlen, "%s: the log cannot be replayed (a cycle or a missing token)",
                     rnr_reader_name(r));
            rc = -1;
        }
    }
    if (rc == 0) {
        adaptive_planner_finish(pl);
        *start = pl->out.start;
        *format = pl->out.format;
        *n = pl->out.nphases;
        memset(&pl->out, 0, sizeof pl->out);
    }
    adaptive_planner_free(pl);
    return rc;
}

/* ---- the phases of an adaptive log ---- */

typedef struct measure_ctx {
    adaptive_phase_report *ph;
    size_t n, cap;
    rnr_writer *sizer;
    uint32_t cpus;
    uint64_t walk_insns;
    uint64_t *lane_phase;      /* per cpu: phase + 1 of its last chunk */
    uint64_t *lane_finish;     /* per cpu: that chunk's finish within its phase */
    uint64_t *lane_cycles;     /* per cpu: recorded cycles in the current phase */
} measure_ctx;

static int measure_visit(void *ctx, const dag_node *n, uint64_t out[2])
{
    measure_ctx *x = ctx;
    const rnr_final_chunk *c = n->c;
    if (c->phase != RNR_PHASE_NONE || !x->n) {
        if (x->n == x->cap) {
            x->cap = x->cap ? x->cap * 2 : 8;
            x->ph = xrealloc(x->ph, x->cap * sizeof *x->ph);
        }
        x->ph[x->n++] = (adaptive_phase_report){ .format = c->phase, .start = x->walk_insns };
        memset(x->lane_cycles, 0, x->cpus * sizeof *x->lane_cycles);
    }
    uint64_t k = x->n;                      /* phase + 1 */
    adaptive_phase_report *p = &x->ph[k - 1];
    if (rnr_writer_put_final(x->sizer, c) < 0)
        return -1;
    p->bytes += rnr_writer_record_bytes(x->sizer);
    p->entries++;
    p->instructions = sat_add(p->instructions, c->cs);
    p->tokens += c->nstv;
    x->walk_insns = sat_add(x->walk_insns, c->cs);
    x->lane_cycles[c->cpu] = sat_add(x->lane_cycles[c->cpu], c->dur);
    if (x->lane_cycles[c->cpu] > p->cycles)
        p->cycles = x->lane_cycles[c->cpu];
    /* The longest path ending with this chunk through chunks of its phase. */
    uint64_t start = x->lane_phase[c->cpu] == k ? x->lane_finish[c->cpu] : 0;
    for (uint32_t i = 0; i < n->npred; i++)
        if (n->pred[i].value[0] == k && n->pred[i].value[1] > start)
            start = n->pred[i].value[1];
    uint64_t finish = sat_add(start, c->cs);
    x->lane_phase[c->cpu] = k;
    x->lane_finish[c->cpu] = finish;
    if (finish > p->critical_path)
        p->critical_path = finish;
    out[0] = k;
    out[1] = finish;
    return 0;
}

int adaptive_measure(rnr_reader *r, adaptive_phase_report **out, size_t *n, char *err,
                     size_t errlen)
{
    *out = NULL;
    *n = 0;
    static const rnr_io_ops discard = { NULL, discard_write, NULL, NULL };
    const rnr_log_header *h = rnr_reader_header(r);
    if (h->kind != RNR_LOG_ADAPTIVE) {
        snprintf(err, errlen, "%s: not an adaptive log", rnr_reader_name(r));
        return -1;
    }
    measure_ctx x = { .cpus = h->cpus };
    x.sizer = rnr_writer_open_io(rnr_io_custom(&discard, NULL, "<measure>", 1), h, NULL, err,
                                 errlen);
    if (!x.sizer)
        return -1;
    x.lane_phase = xcalloc(h->cpus, sizeof *x.lane_phase);
    x.lane_finish = xcalloc(h->cpus, sizeof *x.lane_finish);
    x.lane_cycles = xcalloc(h->cpus, sizeof *x.lane_cycles);
    dag_result dr;
    int rc = dag_walk(r, measure_visit, &x, &dr, err, errlen);
    if (rc < 0 && *rnr_writer_error(x.sizer))
        snprintf(err, errlen, "%s", rnr_writer_error(x.sizer));
    if (rc == 0 && dr.stuck) {
        snprintf(err, errlen, "%s: the log cannot be replayed (a cycle or a missing token)",
                 rnr_reader_name(r));
        rc = -1;
    }
    rnr_writer_abandon(x.sizer);
    free(x.lane_phase);
    free(x.lane_finish);
    free(x.lane_cycles);
    if (rc < 0) {
        free(x.ph);
        return -1;
    }
    *out = x.ph;
    *n = x.n;
    return 0;
}
