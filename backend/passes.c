/* backend/passes.c: running the backend passes from a log reader to a log
 * writer. */
#include "rru/clock.h"
#include "backend/passes.h"

#include "rru/alloc.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* ---- progress ---- */

void pass_progress_init(pass_progress *p, const char *name, int on)
{
    memset(p, 0, sizeof *p);
    p->on = on;
    p->name = name;
    p->next_check = 1u << 16;
    if (on)
        p->last = host_seconds();
}

void pass_progress_tick(pass_progress *p, uint64_t done)
{
    if (!p || !p->on || done < p->next_check)
        return;
    p->next_check = done + (1u << 16);
    double t = host_seconds();
    if (t - p->last < 0.5)
        return;
    p->last = t;
    fprintf(stderr, "\r%s: %llu chunks", p->name, (unsigned long long)done);
    p->printed = 1;
}

void pass_progress_end(pass_progress *p, uint64_t done)
{
    if (p && p->on && p->printed)
        fprintf(stderr, "\r%s: %llu chunks, done\n", p->name, (unsigned long long)done);
}

uint64_t pass_vm_hwm_kib(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    if (!f)
        return 0;
    char line[256];
    unsigned long long kib = 0;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "VmHWM: %llu kB", &kib) == 1)
            break;
    fclose(f);
    return kib;
}

/* ---- input that tells when it is about to wait ---- */

typedef struct idle_input {
    int fd, own;
    void (*idle)(void *);
    void *ctx;
} idle_input;

static long idle_read(void *vctx, void *buf, size_t n)
{
    idle_input *in = vctx;
    if (in->idle) {
        struct pollfd pfd = { in->fd, POLLIN, 0 };
        if (poll(&pfd, 1, 0) == 0)
            in->idle(in->ctx);
    }
    for (;;) {
        ssize_t r = read(in->fd, buf, n);
        if (r >= 0 || errno != EINTR)
            return (long)r;
    }
}

static int idle_close(void *vctx)
{
    idle_input *in = vctx;
    int rc = in->own ? close(in->fd) : 0;
    free(in);
    return rc;
}

static const rnr_io_ops idle_ops = { idle_read, NULL, NULL, idle_close };

rnr_reader *pass_open_input(const char *path, void (*idle)(void *), void *ctx, char *err,
                            size_t errlen)
{
    int stdin_ = strcmp(path, "-") == 0;
    int fd = stdin_ ? STDIN_FILENO : open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return NULL;
    }
    struct stat st;
    if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
        snprintf(err, errlen, "%s: is a directory", path);
        close(fd);
        return NULL;
    }
    /* Regular files never make a reader wait: use the plain stream (which
     * also knows the file size for its truncation checks). */
    if (S_ISREG(st.st_mode) || !idle)
        return rnr_reader_open_io(rnr_io_from_fd(fd, stdin_ ? "<stdin>" : path, 0, !stdin_), err,
                                  errlen);
    idle_input *in = xmalloc(sizeof *in);
    *in = (idle_input){ fd, !stdin_, idle, ctx };
    return rnr_reader_open_io(rnr_io_custom(&idle_ops, in, stdin_ ? "<stdin>" : path, 0), err,
                              errlen);
}

void pass_output_header(const rnr_log_header *in, uint32_t kind, rnr_log_header *out)
{
    *out = *in;
    out->kind = kind;
}

uint32_t pass_serial_kind(uint32_t input_kind)
{
    if (input_kind == RNR_LOG_MAXPAR)
        return RNR_LOG_SERIAL;
    if (input_kind == RNR_LOG_STITCHED)
        return RNR_LOG_STSERIAL;
    return 0;
}

/* ---- the passes ---- */

typedef struct out_ctx {
    rnr_writer *w;
    pass_progress *pr;
    uint64_t done;
} out_ctx;

static int put(void *vctx, const rnr_final_chunk *c)
{
    out_ctx *o = vctx;
    return rnr_writer_put_final(o->w, c);
}

static int wrong_kind(const rnr_reader *in, const char *want, char *err, size_t errlen)
{
    snprintf(err, errlen, "%s: this is %s %s log; the pass reads %s", rnr_reader_name(in),
             rnr_log_kind_article(rnr_reader_header(in)->kind),
             rnr_log_kind_name(rnr_reader_header(in)->kind), want);
    return -1;
}

/* The message after a failure: the writer's if it failed, else REASON. */
static int failed(rnr_writer *out, const char *reason, char *err, size_t errlen)
{
    const char *werr = rnr_writer_error(out);
    snprintf(err, errlen, "%s", werr && *werr ? werr : reason);
    return -1;
}

int pass_maxpar(rnr_reader *in, rnr_writer *out, pass_progress *pr, maxpar_stats *st, char *err,
                size_t errlen)
{
    const rnr_log_header *h = rnr_reader_header(in);
    if (h->kind != RNR_LOG_INITIAL)
        return wrong_kind(in, "an initial log", err, errlen);
    out_ctx o = { out, pr, 0 };
    maxpar *m = maxpar_new(h->cpus, h->msp, put, &o);
    rnr_initial_chunk c;
    int rc;
    uint64_t n = 0;
    while ((rc = rnr_reader_next_initial(in, &c)) == 1) {
        if (maxpar_add(m, &c) < 0)
            break;
        pass_progress_tick(pr, ++n);
    }
    int result = 0;
    if (rc < 0 && rnr_reader_truncated(in)) {
        /* A recording that was killed: the complete prefix is a log. */
        fprintf(stderr, "%s: warning: %s (MaxPar of the complete prefix)\n", rnr_msg_prefix(),
                rnr_reader_error(in));
        rc = 0;
    }
    if (rc < 0) {
        snprintf(err, errlen, "%s", rnr_reader_error(in));
        result = -1;
    } else if (rc == 1 || maxpar_finish(m) < 0) {
        if (*rnr_writer_error(out))
            snprintf(err, errlen, "%s", rnr_writer_error(out));
        else
            snprintf(err, errlen, "%s: %s", rnr_reader_name(in), maxpar_error(m));
        result = -1;
    }
    if (st)
        *st = *maxpar_get_stats(m);
    pass_progress_end(pr, n);
    maxpar_free(m);
    return result;
}

static int stuck_message(const rnr_reader *in, const dag_result *dr, char *err, size_t errlen)
{
    snprintf(err, errlen, "%s: the log cannot be replayed: cpu %u chunk %llu (record %llu) awaits %u "
             "tokens from cpu %u, which sends only %u before it stops (a cycle or a missing token)",
             rnr_reader_name(in), dr->stuck_cpu, (unsigned long long)dr->stuck_lane_index,
             (unsigned long long)dr->stuck_log_index, dr->stuck_awaits, dr->stuck_from,
             dr->stuck_have);
    return -1;
}

typedef struct walk_ctx {
    dag_visit_fn fn;
    void *inner;
    pass_progress *pr;
    uint64_t n;
} walk_ctx;

static int visit_with_progress(void *vctx, const dag_node *n, uint64_t out[2])
{
    walk_ctx *w = vctx;
    pass_progress_tick(w->pr, ++w->n);
    return w->fn(w->inner, n, out);
}

/* Walks the final log IN in replay order, feeding each chunk to VISIT
 * (state INNER), then calls FINISH; the shared body of stitch and serial. */
static int walk_pass(rnr_reader *in, rnr_writer *out, pass_progress *pr, dag_visit_fn visit,
                     void *inner, int (*finish)(void *inner), dag_result *dr, char *err,
                     size_t errlen)
{
    walk_ctx w = { visit, inner, pr, 0 };
    dag_result r;
    int rc = dag_walk(in, visit_with_progress, &w, &r, err, errlen);
    if (rc == 0 && r.stuck)
        rc = stuck_message(in, &r, err, errlen);
    else if (rc == 0 && finish(inner) < 0)
        rc = failed(out, "output failed", err, errlen);
    else if (rc < 0 && *rnr_writer_error(out))
        rc = failed(out, "output failed", err, errlen);
    if (dr)
        *dr = r;
    pass_progress_end(pr, w.n);
    return rc;
}

static int finish_stitch(void *s) { return stitch_finish(s); }
static int finish_serial(void *s) { return serial_finish(s); }

int pass_stitch(rnr_reader *in, rnr_writer *out, uint64_t window, pass_progress *pr,
                stitch_stats *st, dag_result *dr, char *err, size_t errlen)
{
    const rnr_log_header *h = rnr_reader_header(in);
    if (h->kind != RNR_LOG_MAXPAR)
        return wrong_kind(in, "a maxpar log", err, errlen);
    out_ctx o = { out, pr, 0 };
    stitcher *s = stitch_new(h->cpus, window, put, &o);
    int rc = walk_pass(in, out, pr, stitch_visit, s, finish_stitch, dr, err, errlen);
    if (st)
        *st = *stitch_get_stats(s);
    stitch_free(s);
    return rc;
}

/* Pass 2 with phases: a list (START/FORMAT/N) or a source (FN). */
static int adaptive_pass(rnr_reader *in, rnr_writer *out, const uint64_t *start,
                         const uint32_t *format, size_t n, stitch_phase_fn fn, void *ctx,
                         uint64_t window, pass_progress *pr, stitch_stats *st, dag_result *dr,
                         char *err, size_t errlen)
{
    const rnr_log_header *h = rnr_reader_header(in);
    if (h->kind != RNR_LOG_MAXPAR)
        return wrong_kind(in, "a maxpar log", err, errlen);
    out_ctx o = { out, pr, 0 };
    stitcher *s = stitch_new(h->cpus, window, put, &o);
    if (fn)
        stitch_set_phase_source(s, fn, ctx);
    else
        stitch_set_phases(s, start, format, n);
    int rc = walk_pass(in, out, pr, stitch_visit, s, finish_stitch, dr, err, errlen);
    if (st)
        *st = *stitch_get_stats(s);
    stitch_free(s);
    return rc;
}

int pass_adaptive(rnr_reader *in, rnr_writer *out, const uint64_t *start, const uint32_t *format,
                  size_t n, uint64_t window, pass_progress *pr, stitch_stats *st, dag_result *dr,
                  char *err, size_t errlen)
{
    return adaptive_pass(in, out, start, format, n, NULL, NULL, window, pr, st, dr, err, errlen);
}

int pass_adaptive_online(rnr_reader *in, rnr_writer *out, stitch_phase_fn fn, void *ctx,
                         uint64_t window, stitch_stats *st, char *err, size_t errlen)
{
    return adaptive_pass(in, out, NULL, NULL, 0, fn, ctx, window, NULL, st, NULL, err, errlen);
}

int pass_serial(rnr_reader *in, rnr_writer *out, pass_progress *pr, serial_stats *st,
                dag_result *dr, char *err, size_t errlen)
{
    const rnr_log_header *h = rnr_reader_header(in);
    if (!pass_serial_kind(h->kind))
        return wrong_kind(in, "a maxpar or stitched log", err, errlen);
    out_ctx o = { out, pr, 0 };
    serializer *s = serial_new(put, &o);
    int rc = walk_pass(in, out, pr, serial_visit, s, finish_serial, dr, err, errlen);
    if (st)
        *st = *serial_get_stats(s);
    serial_free(s);
    return rc;
}

/* ---- whole files ---- */

typedef struct idle_flush {
    rnr_writer *w;
} idle_flush;

static void flush_output(void *ctx)
{
    idle_flush *f = ctx;
    if (f->w)
        rnr_writer_flush(f->w);
}

int pass_run_files(pass_kind kind, const char *in_path, const char *out_path,
                   const pass_options *opt, pass_summary *sum, char *err, size_t errlen)
{
    static const char *const names[] = { "maxpar", "stitch", "serial" };
    pass_summary local;
    if (!sum)
        sum = &local;
    memset(sum, 0, sizeof *sum);
    idle_flush fl = { NULL };
    rnr_reader *in = pass_open_input(in_path, flush_output, &fl, err, errlen);
    if (!in)
        return -1;
    const rnr_log_header *h = rnr_reader_header(in);
    uint32_t out_kind = kind == PASS_MAXPAR ? RNR_LOG_MAXPAR
                        : kind == PASS_STITCH ? RNR_LOG_STITCHED
                                              : pass_serial_kind(h->kind);
    uint32_t want = kind == PASS_MAXPAR ? RNR_LOG_INITIAL : kind == PASS_STITCH ? RNR_LOG_MAXPAR : 0;
    if ((want && h->kind != want) || !out_kind) {
        wrong_kind(in, want == RNR_LOG_INITIAL ? "an initial log"
                       : want == RNR_LOG_MAXPAR ? "a maxpar log"
                                                : "a maxpar or stitched log",
                   err, errlen);
        rnr_reader_close(in);
        return -1;
    }
    rnr_log_header oh;
    pass_output_header(h, out_kind, &oh);
    rnr_writer_opts wo = { 0, opt ? opt->compress : 0 };
    rnr_writer *out = rnr_writer_open(out_path, &oh, &wo, err, errlen);
    if (!out) {
        rnr_reader_close(in);
        return -1;
    }
    fl.w = out;
    pass_progress pr;
    pass_progress_init(&pr, names[kind], opt && opt->progress);
    int rc;
    if (kind == PASS_MAXPAR)
        rc = pass_maxpar(in, out, &pr, &sum->maxpar, err, errlen);
    else if (kind == PASS_STITCH)
        rc = pass_stitch(in, out, opt ? opt->window : 0, &pr, &sum->stitch, &sum->dag, err, errlen);
    else
        rc = pass_serial(in, out, &pr, &sum->serial, &sum->dag, err, errlen);
    sum->out_kind = out_kind;
    sum->in_counts = *rnr_reader_counts(in);
    rnr_reader_close(in);
    if (rc < 0) {
        rnr_writer_abandon(out);
        if (strcmp(out_path, "-") != 0)
            unlink(out_path);
        return -1;
    }
    if (rnr_writer_flush(out) < 0) {
        snprintf(err, errlen, "%s", rnr_writer_error(out));
        rnr_writer_abandon(out);
        return -1;
    }
    sum->out_counts = *rnr_writer_counts(out);
    sum->out_counts.stored_bytes += RNR_BLOCK_HEADER_SIZE + 1;   /* the end block to come */
    if (rnr_writer_close(out, err, errlen) < 0)
        return -1;
    return 0;
}

int pass_run_adaptive(const adaptive_policy *policy, const char *in_path, const char *out_path,
                      const pass_options *opt, pass_summary *sum, char *err, size_t errlen)
{
    pass_summary local;
    if (!sum)
        sum = &local;
    memset(sum, 0, sizeof *sum);
    uint64_t *start = NULL;
    uint32_t *format = NULL;
    size_t n = 0;
    rnr_reader *in = pass_open_input(in_path, NULL, NULL, err, errlen);
    if (!in)
        return -1;
    if (rnr_reader_header(in)->kind != RNR_LOG_MAXPAR) {
        wrong_kind(in, "a maxpar log", err, errlen);
        rnr_reader_close(in);
        return -1;
    }
    int rc = adaptive_plan(policy, in, &start, &format, &n, err, errlen);
    rnr_reader_close(in);
    if (rc < 0)
        return -1;
    in = pass_open_input(in_path, NULL, NULL, err, errlen);   /* again, from its start */
    rnr_writer *out = NULL;
    if (in) {
        rnr_log_header oh;
        pass_output_header(rnr_reader_header(in), RNR_LOG_ADAPTIVE, &oh);
        rnr_writer_opts wo = { 0, opt ? opt->compress : 0 };
        out = rnr_writer_open(out_path, &oh, &wo, err, errlen);
    }
    rc = -1;
    if (out) {
        pass_progress pr;
        pass_progress_init(&pr, "adaptive", opt && opt->progress);
        rc = pass_adaptive(in, out, start, format, n, opt ? opt->window : 0, &pr, &sum->stitch,
                           &sum->dag, err, errlen);
        sum->out_kind = RNR_LOG_ADAPTIVE;
        sum->in_counts = *rnr_reader_counts(in);
        if (rc < 0) {
            rnr_writer_abandon(out);
            if (strcmp(out_path, "-") != 0)
                unlink(out_path);
        } else if (rnr_writer_flush(out) < 0) {
            snprintf(err, errlen, "%s", rnr_writer_error(out));
            rnr_writer_abandon(out);
            rc = -1;
        } else {
            sum->out_counts = *rnr_writer_counts(out);
            sum->out_counts.stored_bytes += RNR_BLOCK_HEADER_SIZE + 1;   /* the end block */
            rc = rnr_writer_close(out, err, errlen);
        }
    }
    if (in)
        rnr_reader_close(in);
    free(start);
    free(format);
    return rc;
}

int pass_run_memory(pass_kind kind, const void *in, size_t len, rnr_membuf *out,
                    const pass_options *opt, pass_summary *sum, char *err, size_t errlen)
{
    pass_summary local;
    if (!sum)
        sum = &local;
    memset(sum, 0, sizeof *sum);
    memset(out, 0, sizeof *out);
    rnr_reader *r = rnr_reader_open_io(rnr_io_mem_reader(in, len, "<memory>"), err, errlen);
    if (!r)
        return -1;
    const rnr_log_header *h = rnr_reader_header(r);
    uint32_t out_kind = kind == PASS_MAXPAR ? RNR_LOG_MAXPAR
                        : kind == PASS_STITCH ? RNR_LOG_STITCHED
                                              : pass_serial_kind(h->kind);
    if (!out_kind)
        out_kind = RNR_LOG_SERIAL;     /* the pass reports the wrong input kind */
    rnr_log_header oh;
    pass_output_header(h, out_kind, &oh);
    rnr_writer_opts wo = { 0, opt ? opt->compress : 0 };
    rnr_writer *w = rnr_writer_open_io(rnr_io_mem_writer(out, "<memory>"), &oh, &wo, err, errlen);
    if (!w) {
        rnr_reader_close(r);
        return -1;
    }
    int rc;
    if (kind == PASS_MAXPAR)
        rc = pass_maxpar(r, w, NULL, &sum->maxpar, err, errlen);
    else if (kind == PASS_STITCH)
        rc = pass_stitch(r, w, opt ? opt->window : 0, NULL, &sum->stitch, &sum->dag, err, errlen);
    else
        rc = pass_serial(r, w, NULL, &sum->serial, &sum->dag, err, errlen);
    sum->out_kind = out_kind;
    sum->in_counts = *rnr_reader_counts(r);
    rnr_reader_close(r);
    if (rc < 0) {
        rnr_writer_abandon(w);
        free(out->data);
        memset(out, 0, sizeof *out);
        return -1;
    }
    rnr_writer_flush(w);
    sum->out_counts = *rnr_writer_counts(w);
    return rnr_writer_close(w, err, errlen);
}

/* The bundle's passes, in order: each reads the log of the step before. */
static const struct {
    pass_kind kind;
    rnr_bundle_file in, out;
} bundle_steps[] = {
    { PASS_MAXPAR, RNR_BF_INITIAL, RNR_BF_MAXPAR },
    { PASS_STITCH, RNR_BF_MAXPAR, RNR_BF_STITCHED },
    { PASS_SERIAL, RNR_BF_MAXPAR, RNR_BF_SERIAL },
    { PASS_SERIAL, RNR_BF_STITCHED, RNR_BF_STSERIAL },
};

int pass_bundle(rnr_bundle *b, int skip_maxpar, const pass_options *opt, FILE *report, char *err,
                size_t errlen)
{
    char in[4096];
    if (report)
        fprintf(report, "%-9s %12s %10s %12s %9s\n", "log", "entries", "tokens", "bytes", "seconds");
    for (size_t i = skip_maxpar ? 1 : 0; i < sizeof bundle_steps / sizeof bundle_steps[0]; i++) {
        rnr_bundle_file fi = bundle_steps[i].in, fo = bundle_steps[i].out;
        if (rnr_bundle_current_path(b, fi, in, sizeof in, err, errlen) < 0)
            return -1;
        /* A log this process did not just write must be the recorded one. */
        if (!rnr_bundle_written(b, fi)) {
            char p[4096];
            if (rnr_bundle_check_file(b, fi, p, sizeof p, err, errlen) < 0)
                return -1;
        }
        pass_summary s;
        double t0 = host_seconds();
        if (pass_run_files(bundle_steps[i].kind, in, rnr_bundle_tmp_path(b, fo), opt, &s, err,
                           errlen) < 0)
            return -1;
        double t = host_seconds() - t0;
        uint64_t tokens = bundle_steps[i].kind == PASS_MAXPAR ? s.maxpar.tokens
                          : bundle_steps[i].kind == PASS_STITCH ? s.stitch.tokens_out : 0;
        if (report)
            fprintf(report, "%-9s %12" PRIu64 " %10" PRIu64 " %12" PRIu64 " %9.3f\n",
                    rnr_log_kind_name(s.out_kind), s.out_counts.records, tokens,
                    s.out_counts.stored_bytes, t);
    }
    return 0;
}

int pass_bundle_adaptive(rnr_bundle *b, const adaptive_policy *policy, const pass_options *opt,
                         FILE *report, char *err, size_t errlen)
{
    char in[4096];
    pass_summary s;
    double t0 = host_seconds();
    if (rnr_bundle_current_path(b, RNR_BF_MAXPAR, in, sizeof in, err, errlen) < 0)
        return -1;
    if (!rnr_bundle_written(b, RNR_BF_MAXPAR)) {
        char p[4096];
        if (rnr_bundle_check_file(b, RNR_BF_MAXPAR, p, sizeof p, err, errlen) < 0)
            return -1;
    }
    if (pass_run_adaptive(policy, in, rnr_bundle_tmp_path(b, RNR_BF_ADAPTIVE), opt, &s, err,
                          errlen) < 0)
        return -1;
    if (report)
        fprintf(report, "%-9s %12" PRIu64 " %10" PRIu64 " %12" PRIu64 " %9.3f\n",
                rnr_log_kind_name(s.out_kind), s.out_counts.records, s.stitch.tokens_out,
                s.out_counts.stored_bytes, host_seconds() - t0);
    return 0;
}
