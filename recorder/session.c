/* recorder/session.c: a recording session: the guest on the simulated
 * multicore with an RRU on every core, and the bundle it writes through
 * formats/bundle.h (initial.log while the guest runs, input.log, stdout,
 * stderr, the program, optionally truth.deps and the final logs). */
#include "rru/clock.h"
#include "recorder/session.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "backend/maxpar.h"
#include "backend/passes.h"
#include "backend/truth.h"
#include "formats/bundle.h"
#include "formats/digest.h"
#include "formats/io.h"
#include "formats/log.h"
#include "formats/stream.h"
#include "recorder/stream.h"
#include "rru/alloc.h"

struct recording {
    recording_options o;
    char *prog;
    char **argv, **envp;
    size_t argc, envc;
    rnr_bundle *b;
    uint8_t (*streamed)[32];        /* the programs the stream carried (execve) */
    size_t n_streamed;
    drv_proc *p;
    rnr_writer *initial;       /* the bundle's initial.log */
    rnr_writer *stream;        /* initial_stream */
    maxpar *mp;                /* backend: pass 1 on the fly */
    rnr_writer *maxpar_w;
    rec_stream *online;        /* the on-line stream (recorder/stream.h) */
    truth_tracker *truth;
    FILE *truth_f;
    int fd_out, fd_err;        /* the bundle's stdout, stderr */
    int null_fd;
    uint64_t out_bytes, err_bytes, chunks;
    int failed;
    char err[8448];
    uint8_t program_sha[32];
    double t0, last_report, last_flush;
    /* Interrupts: set by recording_interrupt (async-signal safe). */
    volatile sig_atomic_t stop;         /* the driver's interrupt flag */
    volatile sig_atomic_t stop_signal;  /* the first signal's number, 0 if none */
    volatile sig_atomic_t finishing;    /* the guest has ended; the bundle is being finished */
    volatile sig_atomic_t finish_signals; /* signals received since */
    const char *limit;                  /* the limit that ended the run, or NULL */
    char limit_text[96];
    /* What a third signal writes: the manifest marked abandoned. */
    char *abandon_text, *abandon_tmp, *manifest_path;
    size_t abandon_len;
    char finishing_msg[512];
    char status[256];
};

static void fail(recording *r, const char *fmt, const char *what)
{
    if (r->failed)
        return;
    r->failed = 1;
    snprintf(r->err, sizeof r->err, fmt, what);
}

static int emit_maxpar(void *ctx, const rnr_final_chunk *c)
{
    recording *r = ctx;
    if (r->maxpar_w && rnr_writer_put_final(r->maxpar_w, c) < 0) {
        fail(r, "%s", rnr_writer_error(r->maxpar_w));
        return -1;
    }
    /* The stream's own trouble drops the stream, never the recording. */
    if (r->online)
        rec_stream_put_maxpar(r->online, c);
    return 0;
}

static int on_chunk(void *ctx, const rnr_initial_chunk *c)
{
    recording *r = ctx;
    if (r->failed)
        return -1;
    if (rnr_writer_put_initial(r->initial, c) < 0) {
        fail(r, "%s", rnr_writer_error(r->initial));
        return -1;
    }
    if (r->stream && rnr_writer_put_initial(r->stream, c) < 0) {
        fail(r, "%s", rnr_writer_error(r->stream));
        return -1;
    }
    if (r->mp && maxpar_add(r->mp, c) < 0) {
        fail(r, "MaxPar on the fly: %s", maxpar_error(r->mp));
        return -1;
    }
    r->chunks++;
    return 0;
}

static void on_output(void *ctx, int fd, const uint8_t *data, size_t n)
{
    recording *r = ctx;
    int to = fd == 1 ? r->fd_out : r->fd_err;
    if (fd == 1)
        r->out_bytes += n;
    else
        r->err_bytes += n;
    if (rnr_write_full(to, data, n) < 0)
        fail(r, "%s: cannot write the guest's output", fd == 1 ? "stdout" : "stderr");
    if (r->online)
        rec_stream_send(r->online, fd == 1 ? RNR_ST_STDOUT : RNR_ST_STDERR, data, n);
}

/* An execve loaded a program: packed into the bundle by its hash, unless
 * --no-pack (the replay then finds it by path). */
static int on_exec(void *ctx, const char *sha256, const uint8_t *file, size_t size, char *err,
                   size_t errlen)
{
    recording *r = ctx;
    if (r->online) {
        /* Each program's bytes go once; the stream's own program never. */
        uint8_t sha[32];
        rnr_unhex(sha256, sha, 32);
        int sent = memcmp(sha, r->program_sha, 32) == 0;
        for (size_t i = 0; i < r->n_streamed && !sent; i++)
            sent = memcmp(r->streamed[i], sha, 32) == 0;
        if (!sent) {
            r->streamed = xrealloc(r->streamed, (r->n_streamed + 1) * sizeof *r->streamed);
            memcpy(r->streamed[r->n_streamed++], sha, 32);
        }
        rec_stream_send_exec(r->online, sha, sent ? NULL : file, size);
    }
    if (!r->o.pack)
        return 0;
    return rnr_bundle_put_program(r->b, sha256, file, size, err, errlen);
}

static void on_output_begin(void *ctx)
{
    recording *r = ctx;
    if (r->o.progress_clear)
        r->o.progress_clear(r->o.ctx);
}

static void on_truth(void *ctx, const truth_dep *d)
{
    recording *r = ctx;
    if (truth_write(r->truth_f, d) < 0)
        fail(r, "%s/truth.deps: write failed", r->o.dir);
}

static void on_access(void *ctx, const drv_access *a)
{
    recording *r = ctx;
    truth_access ta = { a->cpu, a->tid, a->insn, a->tinsn, a->time };
    uint64_t first = a->addr & ~(uint64_t)(RRU_LINE_SIZE - 1);
    uint64_t last = (a->addr + a->size - 1) & ~(uint64_t)(RRU_LINE_SIZE - 1);
    for (uint64_t line = first; line <= last; line += RRU_LINE_SIZE)
        truth_tracker_access(r->truth, line, &ta, a->write);
}

static void stop_at_limit(recording *r, const char *fmt, double v)
{
    if (r->limit)
        return;
    snprintf(r->limit_text, sizeof r->limit_text, fmt, v);
    r->limit = r->limit_text;
    r->stop = 1;
}

/* Bytes of the logs and output written so far (for --max-log-bytes). */
static uint64_t bytes_written(recording *r)
{
    struct stat st;
    uint64_t in = stat(rnr_bundle_tmp_path(r->b, RNR_BF_INPUT), &st) == 0 ? (uint64_t)st.st_size : 0;
    return rnr_writer_counts(r->initial)->stored_bytes + in + r->out_bytes + r->err_bytes;
}

/* Called every MSP/16 simulated cycles: limits; now and then a flush of the
 * logs (a recording killed at any moment keeps its complete blocks) and
 * progress. */
static void on_tick(void *ctx)
{
    recording *r = ctx;
    drv_stats s;
    if (r->o.max_instructions) {
        drv_proc_stats(r->p, &s);
        if (s.instructions >= r->o.max_instructions)
            stop_at_limit(r, "max-instructions %.0f", (double)r->o.max_instructions);
    }
    double now = host_seconds();
    if (now - r->last_flush < 0.25)
        return;
    r->last_flush = now;
    if (rnr_writer_flush(r->initial) < 0 || (r->stream && rnr_writer_flush(r->stream) < 0) ||
        drv_proc_flush_input(r->p) < 0)
        fail(r, "%s", "a log could not be flushed");
    if (r->online && !r->failed) {
        rec_stream_tail(r->online, RNR_ST_INITIAL, rnr_bundle_tmp_path(r->b, RNR_BF_INITIAL));
        rec_stream_tail(r->online, RNR_ST_INPUT, rnr_bundle_tmp_path(r->b, RNR_BF_INPUT));
        drv_proc_stats(r->p, &s);
        rec_stream_tick(r->online, s.instructions, r->chunks);
    }
    if (r->o.max_seconds > 0 && now - r->t0 >= r->o.max_seconds)
        stop_at_limit(r, "max-seconds %g", r->o.max_seconds);
    if (r->o.max_log_bytes && bytes_written(r) >= r->o.max_log_bytes)
        stop_at_limit(r, "max-log-bytes %.0f", (double)r->o.max_log_bytes);
    if (r->o.progress && now - r->last_report >= 0.5) {
        r->last_report = now;
        drv_proc_stats(r->p, &s);
        recording_progress pr = { s.instructions, r->chunks,
                                  rnr_writer_counts(r->initial)->stored_bytes, now - r->t0,
                                  0, 0, 0, 0, 0, 0 };
        if (r->online) {
            rec_stream_lag l;
            rec_stream_lag_get(r->online, &l);
            pr.streaming = 1;
            pr.stream_dropped = l.dropped;
            pr.stream_bytes = l.sent_bytes;
            pr.stream_chunks = l.final_chunks;
            pr.stream_acked = l.acked_chunks;
            pr.stream_acks = l.acks;
        }
        r->o.progress(r->o.ctx, &pr);
    }
}

static int copy_file(const char *from, const char *to, char *err, size_t errlen)
{
    int in = open(from, O_RDONLY | O_CLOEXEC);
    if (in < 0) {
        snprintf(err, errlen, "%s: %s", from, strerror(errno));
        return -1;
    }
    int out = open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);
    if (out < 0) {
        snprintf(err, errlen, "%s: %s", to, strerror(errno));
        close(in);
        return -1;
    }
    char buf[65536];
    ssize_t n;
    int rc = 0;
    while ((n = read(in, buf, sizeof buf)) != 0) {
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 || rnr_write_full(out, buf, (size_t)n) < 0) {
            snprintf(err, errlen, "%s: copy failed: %s", to, strerror(errno));
            rc = -1;
            break;
        }
    }
    close(in);
    if (close(out) != 0 && rc == 0) {
        snprintf(err, errlen, "%s: %s", to, strerror(errno));
        rc = -1;
    }
    return rc;
}

static void set_config(rnr_manifest *m, const drv_config *cfg)
{
    char sig[64];
    rnr_manifest_set_u64(m, "cpus", cfg->machine.cores);
    rnr_manifest_set_u64(m, "seed", cfg->machine.seed);
    rnr_manifest_set_u64(m, "quantum", cfg->quantum);
    rnr_manifest_set_u64(m, "mem-limit", cfg->mem_limit);
    rnr_manifest_set_u64(m, "miss-latency", cfg->machine.miss_latency);
    rnr_manifest_set_u64(m, "miss-jitter", cfg->machine.miss_jitter);
    rnr_manifest_set_u64(m, "slice", cfg->machine.slice);
    rnr_manifest_set_u64(m, "time-div", cfg->machine.time_div);
    rnr_manifest_set_u64(m, "msp", cfg->rru.msp);
    rnr_manifest_set_u64(m, "clusters", cfg->rru.clusters);
    rnr_manifest_set(m, "signature", cfg->rru.sig_bits ? "bloom" : "exact");
    rnr_manifest_set_u64(m, "signature.bits", cfg->rru.sig_bits);
    rnr_manifest_set_u64(m, "signature.hashes", cfg->rru.sig_hashes);
    snprintf(sig, sizeof sig, cfg->rru.sig_bits ? "bloom:%u" : "exact", cfg->rru.sig_bits);
    rnr_manifest_set(m, "sig", sig);
    rnr_manifest_set_u64(m, "chunk-max", cfg->rru.chunk_max);
    rnr_manifest_set_u64(m, "cluster-chunks", cfg->rru.cluster_chunks);
    rnr_manifest_set_u64(m, "check-every", cfg->check_every);
    rnr_manifest_set_u64(m, "allow-write", cfg->n_allow_write);
    for (size_t i = 0; i < cfg->n_allow_write; i++) {
        char key[64];
        snprintf(key, sizeof key, "allow-write.%zu", i);
        rnr_manifest_set(m, key, cfg->allow_write[i]);
    }
}

static char **copy_strings(const char *const *v, size_t n)
{
    char **c = xcalloc(n + 1, sizeof *c);
    for (size_t i = 0; i < n; i++)
        c[i] = xoom(strdup(v[i]));
    return c;
}

static void free_strings(char **v, size_t n)
{
    for (size_t i = 0; v && i < n; i++)
        free(v[i]);
    free(v);
}

/* The fixed part of the manifest: the program, its arguments and
 * environment, the configuration. */
static void describe(recording *r)
{
    rnr_manifest *m = rnr_bundle_manifest(r->b);
    char hex[RNR_SHA256_HEX];
    rnr_hex(r->program_sha, 32, hex);
    rnr_manifest_set(m, "program", r->prog);
    rnr_manifest_set(m, "program.sha256", hex);
    rnr_manifest_set(m, "program.packed", r->o.pack ? "program" : "no");
    /* Not packed: where replay finds it from any directory ("program" stays
     * the path the guest was given, its AT_EXECFN). */
    char *abs = r->o.pack ? NULL : realpath(r->prog, NULL);
    if (abs)
        rnr_manifest_set(m, "program.path", abs);
    free(abs);
    rnr_manifest_set_u64(m, "argc", r->argc);
    for (size_t k = 0; k < r->argc; k++) {
        char key[32];
        snprintf(key, sizeof key, "arg.%zu", k);
        rnr_manifest_set(m, key, r->argv[k]);
    }
    rnr_manifest_set_u64(m, "envc", r->envc);
    for (size_t k = 0; k < r->envc; k++) {
        char key[32];
        snprintf(key, sizeof key, "env.%zu", k);
        rnr_manifest_set(m, key, r->envp[k]);
    }
    set_config(m, &r->o.cfg);
}

recording *recording_open(const recording_options *o, const char *prog, const char *const *argv,
                          size_t argc, const char *const *envp, size_t envc, char *err,
                          size_t errlen)
{
    drv_config cfg = o->cfg;
    cfg.rru.cpus = cfg.machine.cores;
    if (rru_config_check(&cfg.rru, err, errlen) < 0)
        return NULL;
    if (argc < 1) {
        snprintf(err, errlen, "no program arguments (argv[0] is needed)");
        return NULL;
    }
    /* The program must load before anything is created. */
    drv_config probe;
    drv_config_default(&probe);
    probe.machine = cfg.machine;
    drv_proc *p = drv_proc_new(&probe, prog, argv, argc, envp, envc, err, errlen);
    if (!p)
        return NULL;
    drv_proc_free(p);
    recording *r = xcalloc(1, sizeof *r);
    r->o = *o;
    r->o.cfg = cfg;
    r->fd_out = r->fd_err = r->null_fd = -1;
    r->prog = xoom(strdup(prog));
    r->argv = copy_strings(argv, argc);
    r->envp = copy_strings(envp, envc);
    r->argc = argc;
    r->envc = envc;
    if (rnr_sha256_file(prog, r->program_sha, err, errlen) < 0)
        goto fail;
    if (o->stream) {
        /* Before the bundle: a follower that is not there leaves nothing behind. */
        rnr_log_header sh;
        memset(&sh, 0, sizeof sh);
        sh.kind = RNR_LOG_MAXPAR;
        sh.cpus = cfg.machine.cores;
        sh.msp = cfg.rru.msp;
        memcpy(sh.program_sha256, r->program_sha, 32);
        r->online = rec_stream_open(o->stream, (rec_stream_format)o->stream_format,
                                    o->stream_policy, &sh, o->stream_buffer, err, errlen);
        if (!r->online)
            goto fail;
    }
    if (o->dir) {
        r->b = rnr_bundle_create(o->dir, "recording", err, errlen);
    } else {
        /* The default place: HOME/PROG-N, PROG the program's file name. */
        const char *base = strrchr(prog, '/');
        base = base && base[1] ? base + 1 : prog;
        r->b = rnr_bundle_create_next(rnr_bundle_home(), base[0] == '.' ? "prog" : base,
                                      "recording", err, errlen);
    }
    if (!r->b)
        goto fail;
    r->o.dir = rnr_bundle_dir(r->b);
    describe(r);
    if (rnr_bundle_save(r->b, RNR_BUNDLE_RECORDING, err, errlen) < 0)
        goto fail;
    if (o->pack && copy_file(prog, rnr_bundle_tmp_path(r->b, RNR_BF_PROGRAM), err, errlen) < 0)
        goto fail;
    if (r->online) {
        /* The manifest's fixed part and the program lead the stream. */
        size_t mlen;
        char *text = rnr_manifest_format(rnr_bundle_manifest(r->b), &mlen);
        rec_stream_send(r->online, RNR_ST_MANIFEST, text, mlen);
        free(text);
        if (rec_stream_send_file(r->online, RNR_ST_PROGRAM, prog, err, errlen) < 0)
            goto fail;
        rec_stream_end_channel(r->online, RNR_ST_PROGRAM);
    }

    /* The logs. */
    rnr_log_header h;
    memset(&h, 0, sizeof h);
    h.kind = RNR_LOG_INITIAL;
    h.cpus = cfg.machine.cores;
    h.msp = cfg.rru.msp;
    memcpy(h.program_sha256, r->program_sha, 32);
    r->initial = rnr_writer_open(rnr_bundle_tmp_path(r->b, RNR_BF_INITIAL), &h, NULL, err, errlen);
    if (!r->initial)
        goto fail;
    if (o->initial_stream) {
        r->stream = rnr_writer_open(o->initial_stream, &h, NULL, err, errlen);
        if (!r->stream)
            goto fail;
        if (strcmp(o->initial_stream, "-") == 0 && r->null_fd < 0) {
            r->null_fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
            r->o.cfg.stdout_fd = r->null_fd;
        }
    }
    if (o->backend) {
        rnr_log_header mh = h;
        mh.kind = RNR_LOG_MAXPAR;
        r->maxpar_w = rnr_writer_open(rnr_bundle_tmp_path(r->b, RNR_BF_MAXPAR), &mh, NULL, err,
                                      errlen);
        if (!r->maxpar_w)
            goto fail;
    }
    if (o->backend || r->online)
        r->mp = maxpar_new(cfg.machine.cores, cfg.rru.msp, emit_maxpar, r);
    if (o->truth) {
        const char *tp = rnr_bundle_tmp_path(r->b, RNR_BF_TRUTH);
        r->truth_f = fopen(tp, "w");
        if (!r->truth_f || truth_write_header(r->truth_f, cfg.machine.cores) < 0) {
            snprintf(err, errlen, "%s: %s", tp, strerror(errno));
            goto fail;
        }
        r->truth = truth_tracker_new(cfg.machine.cores, on_truth, r);
        r->o.cfg.access = on_access;
        r->o.cfg.access_ctx = r;
    }
    if (o->stream && strcmp(o->stream, "-") == 0 && r->null_fd < 0) {
        /* stdout carries the stream, not the guest's output. */
        r->null_fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
        r->o.cfg.stdout_fd = r->null_fd;
    }
    const rnr_bundle_file outs[2] = { RNR_BF_STDOUT, RNR_BF_STDERR };
    for (int k = 0; k < 2; k++) {
        const char *path = rnr_bundle_tmp_path(r->b, outs[k]);
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (fd < 0) {
            snprintf(err, errlen, "%s: %s", path, strerror(errno));
            goto fail;
        }
        *(k ? &r->fd_err : &r->fd_out) = fd;
    }
    r->o.cfg.input_log = rnr_bundle_tmp_path(r->b, RNR_BF_INPUT);
    r->o.cfg.record = 1;
    r->o.cfg.chunk = on_chunk;
    r->o.cfg.chunk_ctx = r;
    r->o.cfg.output = on_output;
    r->o.cfg.output_begin = on_output_begin;
    r->o.cfg.output_ctx = r;
    r->o.cfg.tick = on_tick;
    r->o.cfg.tick_ctx = r;
    r->o.cfg.exec_loaded = on_exec;
    r->o.cfg.exec_ctx = r;
    r->o.cfg.interrupt = &r->stop;
    r->p = drv_proc_new(&r->o.cfg, prog, argv, argc, envp, envc, err, errlen);
    if (!r->p)
        goto fail;
    return r;
fail:
    if (r->b) {
        char e2[256];
        rnr_bundle_save(r->b, RNR_BUNDLE_INCOMPLETE ": could not start", e2, sizeof e2);
    }
    recording_free(r);
    return NULL;
}

static const char *signal_name(int sig)
{
    switch (sig) {
    case SIGINT: return "SIGINT";
    case SIGTERM: return "SIGTERM";
    case SIGHUP: return "SIGHUP";
    case SIGQUIT: return "SIGQUIT";
    }
    return "a signal";
}

void recording_interrupt(recording *r, int sig)
{
    if (!r->stop_signal)
        r->stop_signal = sig;
    r->stop = 1;
    if (!r->finishing)
        return;
    if (++r->finish_signals == 1) {
        ssize_t w = write(STDERR_FILENO, r->finishing_msg, strlen(r->finishing_msg));
        (void)w;
        return;
    }
    /* Again: the bundle is abandoned; only async-signal-safe calls. */
    int fd = open(r->abandon_tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd >= 0) {
        ssize_t w = write(fd, r->abandon_text, r->abandon_len);
        if (close(fd) == 0 && w == (ssize_t)r->abandon_len)
            rename(r->abandon_tmp, r->manifest_path);
    }
    _exit(128 + sig);
}

/* Prepares what a second and a third signal do while the bundle is being
 * finished, then marks the session as finishing. */
static void arm_finishing(recording *r)
{
    const char *dir = rnr_bundle_dir(r->b);
    snprintf(r->finishing_msg, sizeof r->finishing_msg,
             "\nrnr record: finishing the bundle %s (logs%s, manifest); another signal abandons it\n",
             dir, r->o.backend ? ", backend passes" : "");
    rnr_manifest *m = rnr_bundle_manifest(r->b);
    rnr_manifest_set(m, "status", RNR_BUNDLE_ABANDONED ": signal while the bundle was finished");
    r->abandon_text = rnr_manifest_format(m, &r->abandon_len);
    rnr_manifest_set(m, "status", RNR_BUNDLE_RECORDING);
    size_t n = strlen(dir) + 64;
    r->manifest_path = xcalloc(n, 1);
    r->abandon_tmp = xcalloc(n, 1);
    snprintf(r->manifest_path, n, "%s/manifest", dir);
    snprintf(r->abandon_tmp, n, "%s/.manifest.abandoned", dir);
    /* Everything above is in memory before a handler can see finishing. */
    atomic_signal_fence(memory_order_seq_cst);
    r->finishing = 1;
}

static const char *end_name(drv_end e)
{
    switch (e) {
    case DRV_EXITED: return "exited";
    case DRV_SIGNALED: return "signaled";
    case DRV_DEADLOCK: return "deadlock";
    case DRV_FAILED: return "failed";
    case DRV_INTERRUPTED: return "interrupted";
    }
    return "?";
}

/* The bundle's final status for a run that ended as END (OK < 0: the
 * simulation failed; SIG: the first signal), into OUT. */
static void set_status(recording *r, int ok, drv_end end, int sig, char *out, size_t len)
{
    if (r->failed)
        snprintf(out, len, RNR_BUNDLE_INCOMPLETE ": %.200s", r->err);
    else if (ok < 0 || end == DRV_FAILED)
        snprintf(out, len, RNR_BUNDLE_INCOMPLETE ": the simulation failed");
    else if (end == DRV_INTERRUPTED)
        snprintf(out, len, RNR_BUNDLE_INTERRUPTED ": %s",
                 sig ? signal_name(sig) : r->limit ? r->limit : "interrupt");
    else
        snprintf(out, len, RNR_BUNDLE_COMPLETE);
}

/* The results of the run into the manifest. */
static void results(recording *r, const drv_result *res, int exit_status)
{
    rnr_manifest *m = rnr_bundle_manifest(r->b);
    drv_stats s;
    drv_proc_stats(r->p, &s);
    drv_record_stats rs;
    drv_proc_record_stats(r->p, &rs);
    uint8_t digest[32];
    char hex[RNR_SHA256_HEX];
    drv_proc_digest(r->p, digest);
    rnr_manifest_set(m, "end", end_name(res->end));
    rnr_manifest_set_u64(m, "exit-status", (uint64_t)exit_status);
    rnr_manifest_set_u64(m, "threads", drv_proc_threads(r->p));
    rnr_manifest_set_u64(m, "processes", drv_proc_processes(r->p));
    for (size_t t = 0; t < drv_proc_threads(r->p); t++) {
        uint32_t tid;
        uint64_t n;
        char key[64];
        drv_proc_thread(r->p, t, &tid, &n);
        snprintf(key, sizeof key, "thread.%zu.tid", t);
        rnr_manifest_set_u64(m, key, tid);
        snprintf(key, sizeof key, "thread.%zu.instructions", t);
        rnr_manifest_set_u64(m, key, n);
    }
    /* The programs execve loaded, which a replay loads again from the
     * bundle (packed: programs/HASH) or by path, checked by hash
     * (docs/formats.md). */
    if (drv_proc_execs(r->p)) {
        rnr_manifest_set_u64(m, "exec.count", drv_proc_execs(r->p));
        for (size_t k = 0; k < drv_proc_execs(r->p); k++) {
            const drv_exec_image *e = drv_proc_exec(r->p, k);
            char key[64];
            snprintf(key, sizeof key, "exec.%zu.path", k);
            rnr_manifest_set(m, key, e->path);
            snprintf(key, sizeof key, "exec.%zu.sha256", k);
            rnr_manifest_set(m, key, e->sha256);
            if (r->o.pack) {
                char file[sizeof RNR_BUNDLE_PROGRAMS + RNR_SHA256_HEX];
                rnr_bundle_program_name(r->b, e->sha256, file, sizeof file);
                snprintf(key, sizeof key, "exec.%zu.file", k);
                rnr_manifest_set(m, key, file);
            }
        }
    }
    rnr_manifest_set_u64(m, "instructions", s.instructions);
    rnr_manifest_set_u64(m, "cycles", s.cycles);
    rnr_manifest_set_u64(m, "syscalls", s.syscalls);
    rnr_manifest_set_u64(m, "chunks", rs.chunks);
    rnr_manifest_set_u64(m, "checks", rs.checks);
    rnr_manifest_set_u64(m, "silence-violations", rs.silence_violations);
    rnr_manifest_set_u64(m, "max-drain-delay", rs.max_drain_delay);
    rnr_hex(digest, 32, hex);
    rnr_manifest_set(m, "final.digest", hex);
    if (r->truth)
        rnr_manifest_set_u64(m, "truth.count", truth_tracker_deps(r->truth));
    char num[64];
    snprintf(num, sizeof num, "%.3f", s.wall_seconds);
    rnr_manifest_set(m, "wall-seconds", num);
}

int recording_run(recording *r, recording_result *res, char *err, size_t errlen)
{
    memset(res, 0, sizeof *res);
    r->t0 = r->last_report = r->last_flush = host_seconds();
    fflush(stdout);
    drv_result dr;
    int ok = drv_proc_run(r->p, &dr);
    if (dr.message)
        fprintf(stderr, "rnr record: %s\n", dr.message);
    arm_finishing(r);

    /* The logs. */
    if (r->mp && !r->failed && maxpar_finish(r->mp) < 0)
        fail(r, "MaxPar on the fly: %s", maxpar_error(r->mp));
    char e[8192];
    if (rnr_writer_close(r->initial, e, sizeof e) < 0)
        fail(r, "%s", e);
    r->initial = NULL;
    if (r->stream && rnr_writer_close(r->stream, e, sizeof e) < 0)
        fail(r, "%s", e);
    r->stream = NULL;
    if (r->maxpar_w && rnr_writer_close(r->maxpar_w, e, sizeof e) < 0)
        fail(r, "%s", e);
    r->maxpar_w = NULL;
    if (r->online) {
        /* The logs' last bytes (the files are closed, still at their temporary paths). */
        rec_stream_tail(r->online, RNR_ST_INITIAL, rnr_bundle_tmp_path(r->b, RNR_BF_INITIAL));
        rec_stream_tail(r->online, RNR_ST_INPUT, rnr_bundle_tmp_path(r->b, RNR_BF_INPUT));
    }
    if (r->truth_f && fclose(r->truth_f) != 0)
        fail(r, "%s/truth.deps: write failed", r->o.dir);
    r->truth_f = NULL;
    if (close(r->fd_out) != 0 || close(r->fd_err) != 0)
        fail(r, "%s/stdout: write failed", r->o.dir);
    r->fd_out = r->fd_err = -1;

    int sig = r->stop_signal;
    int status = ok < 0 ? 2
                 : dr.end == DRV_EXITED ? dr.status
                 : dr.end == DRV_SIGNALED ? 128 + dr.status
                 : dr.end == DRV_INTERRUPTED ? 128 + (sig ? sig : r->limit && strncmp(r->limit, "max-log", 7) == 0 ? SIGXFSZ : SIGXCPU)
                 : DRV_EXIT_DEADLOCK;
    if (!r->failed && ok >= 0 && dr.end != DRV_FAILED)
        results(r, &dr, status);
    if (r->online && !r->failed && ok >= 0 && dr.end != DRV_FAILED) {
        /* The stream ends here, before the backend's later passes (which
         * may take long): the results, and the status the bundle gets once
         * its files are in place. */
        rnr_manifest *m = rnr_bundle_manifest(r->b);
        char planned[256];
        size_t mlen;
        set_status(r, ok, dr.end, sig, planned, sizeof planned);
        rnr_manifest_set(m, "status", planned);
        char *text = rnr_manifest_format(m, &mlen);
        rnr_manifest_set(m, "status", RNR_BUNDLE_RECORDING);
        rec_stream_finish(r->online, text, mlen);
        free(text);
    }
    if (!r->failed && r->o.backend && ok >= 0 && dr.end != DRV_FAILED) {
        pass_options po = { r->o.progress_passes, 0, 0 };
        if (pass_bundle(r->b, 1, &po, NULL, e, sizeof e) < 0)
            fail(r, "%s", e);
    }
    /* Every file in place, then the status. */
    for (int f = 0; f < RNR_BF_COUNT && !r->failed; f++)
        if (rnr_bundle_written(r->b, (rnr_bundle_file)f) &&
            rnr_bundle_commit(r->b, (rnr_bundle_file)f, e, sizeof e) < 0)
            fail(r, "%s", e);
    set_status(r, ok, dr.end, sig, r->status, sizeof r->status);
    if (rnr_bundle_save(r->b, r->status, e, sizeof e) < 0)
        fail(r, "%s", e);

    drv_stats s;
    drv_proc_stats(r->p, &s);
    res->end = dr.end;
    res->exit_status = status;
    res->status = r->status;
    res->instructions = s.instructions;
    res->threads = drv_proc_threads(r->p);
    res->chunks = r->chunks;
    res->seconds = s.wall_seconds;
    if (r->failed) {
        snprintf(err, errlen, "%s", r->err);
        return -1;
    }
    return 0;
}

const char *recording_dir(const recording *r) { return rnr_bundle_dir(r->b); }

int recording_stream_lag(recording *r, rec_stream_lag *out)
{
    if (!r->online)
        return -1;
    rec_stream_lag_get(r->online, out);
    return 0;
}

void recording_free(recording *r)
{
    if (!r)
        return;
    if (r->initial)
        rnr_writer_abandon(r->initial);
    if (r->stream)
        rnr_writer_abandon(r->stream);
    if (r->maxpar_w)
        rnr_writer_abandon(r->maxpar_w);
    if (r->truth_f)
        fclose(r->truth_f);
    free(r->streamed);
    maxpar_free(r->mp);
    rec_stream_free(r->online);
    truth_tracker_free(r->truth);
    if (r->fd_out >= 0)
        close(r->fd_out);
    if (r->fd_err >= 0)
        close(r->fd_err);
    if (r->null_fd >= 0)
        close(r->null_fd);
    drv_proc_free(r->p);
    rnr_bundle_close(r->b);
    free_strings(r->argv, r->argc);
    free_strings(r->envp, r->envc);
    free(r->prog);
    free(r->abandon_text);
    free(r->abandon_tmp);
    free(r->manifest_path);
    free(r);
}
