/* tools/cmd_record.c: `rnr record`: runs a program on the simulated
 * multicore with an RRU on every core and writes the recording bundle:
 * manifest, initial.log (written while the guest runs), input.log,
 * stdout, stderr, a copy of the program, optionally truth.deps and, with
 * --backend, the four final logs (MaxPar on the fly). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "backend/maxpar.h"
#include "backend/passes.h"
#include "backend/truth.h"
#include "driver/driver.h"
#include "formats/digest.h"
#include "formats/log.h"
#include "formats/manifest.h"
#include "tools/bundle.h"
#include "tools/cli.h"
#include "tools/machine_opts.h"

extern char **environ;

const char cmd_record_help[] =
    "usage: rnr record [options] -o DIR [--] PROG [ARGS...]\n"
    "Records the static riscv64 Linux program PROG (with ARGS and the current\n"
    "environment) on the simulated multicore with a Record-and-Replay Unit on\n"
    "every core, and writes the recording bundle DIR (created; it must not\n"
    "exist or be empty): manifest, initial.log, input.log, stdout, stderr and\n"
    "program (a copy of PROG). The guest's stdout and stderr also go to rnr's.\n"
    "With the same options and seed, the recording executes exactly what\n"
    "`rnr run` executes. rnr exits with the guest's status like rnr run; on\n"
    "SIGINT the guest stops, the bundle is finished (marked interrupted) and\n"
    "rnr exits 130.\n"
    "\n"
    "Options:\n"
    "  -o DIR             the bundle to write (required)\n"
    "  --backend          also run the backend: MaxPar on the fly while the\n"
    "                     guest runs, then Stitched, Serial and StSerial\n"
    "  --truth            write truth.deps: every line-level conflict between\n"
    "                     threads (the soundness oracle of rnr verify; slow)\n"
    "  --no-pack          do not copy PROG into the bundle\n"
    "  --initial-log PATH also stream the initial log to PATH ('-' = stdout,\n"
    "                     which then carries no guest output; a FIFO works):\n"
    "                     e.g. `rnr record --initial-log - ... | rnr maxpar - -`\n"
    "  --progress         progress on stderr (default: when it is a terminal)\n"
    "  --quiet            no progress, no summary\n"
    MACHINE_OPTS_HELP;

/* Set by SIGINT: the driver stops the guest at its next check. */
static volatile sig_atomic_t interrupted;

static void on_sigint(int sig)
{
    (void)sig;
    interrupted = 1;
}

typedef struct rec_out {
    const char *dir;
    rnr_writer *initial;       /* DIR/initial.log */
    rnr_writer *stream;        /* --initial-log */
    maxpar *mp;                /* --backend: pass 1 on the fly */
    rnr_writer *maxpar_w;
    truth_tracker *truth;
    FILE *truth_f;
    int fd_out, fd_err;        /* DIR/stdout, DIR/stderr */
    rnr_sha256 out_sha;
    uint64_t out_bytes, err_bytes, chunks;
    int failed;
    char err[8448];
    /* progress */
    drv_proc *p;
    int progress;
    double t0, last_report, last_flush;
} rec_out;

static double seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void fail(rec_out *o, const char *fmt, const char *what)
{
    if (o->failed)
        return;
    o->failed = 1;
    snprintf(o->err, sizeof o->err, fmt, what);
}

static int emit_maxpar(void *ctx, const rnr_final_chunk *c)
{
    rec_out *o = ctx;
    if (rnr_writer_put_final(o->maxpar_w, c) < 0) {
        fail(o, "%s", rnr_writer_error(o->maxpar_w));
        return -1;
    }
    return 0;
}

static int on_chunk(void *ctx, const rnr_initial_chunk *c)
{
    rec_out *o = ctx;
    if (o->failed)
        return -1;
    if (rnr_writer_put_initial(o->initial, c) < 0) {
        fail(o, "%s", rnr_writer_error(o->initial));
        return -1;
    }
    if (o->stream && rnr_writer_put_initial(o->stream, c) < 0) {
        fail(o, "%s", rnr_writer_error(o->stream));
        return -1;
    }
    if (o->mp && maxpar_add(o->mp, c) < 0) {
        fail(o, "MaxPar on the fly: %s", maxpar_error(o->mp));
        return -1;
    }
    o->chunks++;
    return 0;
}

static void write_all(rec_out *o, int fd, const uint8_t *data, size_t n, const char *name)
{
    while (n) {
        ssize_t w = write(fd, data, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0) {
            fail(o, "%s: cannot write the guest's output", name);
            return;
        }
        data += w;
        n -= (size_t)w;
    }
}

static void on_output(void *ctx, int fd, const uint8_t *data, size_t n)
{
    rec_out *o = ctx;
    if (fd == 1) {
        rnr_sha256_update(&o->out_sha, data, n);
        o->out_bytes += n;
        write_all(o, o->fd_out, data, n, "stdout");
    } else {
        o->err_bytes += n;
        write_all(o, o->fd_err, data, n, "stderr");
    }
}

static void on_truth(void *ctx, const truth_dep *d)
{
    rec_out *o = ctx;
    if (truth_write(o->truth_f, d) < 0)
        fail(o, "%s/truth.deps: write failed", o->dir);
}

static void on_access(void *ctx, const drv_access *a)
{
    rec_out *o = ctx;
    truth_access ta = {a->cpu, a->tid, a->insn, a->tinsn, a->time};
    uint64_t first = a->addr & ~(uint64_t)(RRU_LINE_SIZE - 1);
    uint64_t last = (a->addr + a->size - 1) & ~(uint64_t)(RRU_LINE_SIZE - 1);
    for (uint64_t line = first; line <= last; line += RRU_LINE_SIZE)
        truth_tracker_access(o->truth, line, &ta, a->write);
}

/* Called every MSP/16 simulated cycles: flushes the logs now and then, so
 * that a recording killed at any moment leaves its complete blocks, and
 * shows progress. */
static void on_tick(void *ctx)
{
    rec_out *o = ctx;
    double now = seconds();
    if (now - o->last_flush >= 0.25) {
        o->last_flush = now;
        if (rnr_writer_flush(o->initial) < 0 || (o->stream && rnr_writer_flush(o->stream) < 0) ||
            drv_proc_flush_input(o->p) < 0)
            fail(o, "%s", "a log could not be flushed");
    }
    if (o->progress && now - o->last_report >= 0.5) {
        o->last_report = now;
        drv_stats s;
        drv_proc_stats(o->p, &s);
        double t = now - o->t0;
        fprintf(stderr, "\rrnr record: %" PRIu64 " instructions, %" PRIu64 " chunks, %.1f MIPS, "
                "%" PRIu64 " KiB of initial log   ",
                s.instructions, o->chunks, t > 0 ? (double)s.instructions / t / 1e6 : 0.0,
                rnr_writer_counts(o->initial)->stored_bytes / 1024);
        fflush(stderr);
    }
}

static int make_bundle_dir(const char *dir)
{
    if (mkdir(dir, 0777) == 0)
        return 0;
    if (errno != EEXIST)
        return cli_bad_input("record", "%s: cannot create the bundle directory: %s", dir,
                             strerror(errno));
    struct stat st;
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
        return cli_bad_input("record", "%s: exists and is not a directory", dir);
    char probe[4096];
    snprintf(probe, sizeof probe, "%s/manifest", dir);
    if (access(probe, F_OK) == 0)
        return cli_bad_input("record", "%s: already holds a recording (remove it first)", dir);
    return 0;
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
        if (n < 0 || write(out, buf, (size_t)n) != n) {
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
    rnr_manifest_set(m, "kind", "recording");
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
    for (size_t i = 0; i < cfg->n_allow_write; i++) {
        char key[64];
        snprintf(key, sizeof key, "allow-write.%zu", i);
        rnr_manifest_set(m, key, cfg->allow_write[i]);
    }
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

static int open_out(const char *dir, const char *name, char *path, size_t len)
{
    snprintf(path, len, "%s/%s", dir, name);
    return open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
}

int cmd_record(int argc, char **argv)
{
    drv_config cfg;
    machine_opts mo;
    machine_opts_init(&mo, &cfg, argc);
    const char *dir = NULL, *stream_path = NULL;
    int backend = 0, truth = 0, pack = 1, quiet = 0, i = 1;
    int progress = isatty(STDERR_FILENO);
    int rc = RNR_EXIT_USAGE;
    rec_out o;
    memset(&o, 0, sizeof o);
    o.fd_out = o.fd_err = -1;
    rnr_manifest *man = NULL;
    drv_proc *p = NULL;
    int null_fd = -1;
    for (; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--") == 0) {
            i++;
            break;
        }
        if (a[0] != '-' || a[1] == 0)
            break;
        int m = machine_opts_parse(&mo, "record", argc, argv, &i);
        if (m < 0)
            goto out;
        if (m > 0)
            continue;
        if (strcmp(a, "--backend") == 0) {
            backend = 1;
        } else if (strcmp(a, "--truth") == 0) {
            truth = 1;
        } else if (strcmp(a, "--no-pack") == 0) {
            pack = 0;
        } else if (strcmp(a, "--progress") == 0) {
            progress = 1;
        } else if (strcmp(a, "--quiet") == 0) {
            quiet = 1;
        } else if (strcmp(a, "-o") == 0 || strcmp(a, "--initial-log") == 0) {
            if (i + 1 >= argc) {
                cli_usage("record", "option %s needs an argument", a);
                goto out;
            }
            if (a[1] == 'o')
                dir = argv[++i];
            else
                stream_path = argv[++i];
        } else {
            cli_usage("record", "unknown option '%s'", a);
            goto out;
        }
    }
    if (quiet)
        progress = 0;
    if (!dir) {
        cli_usage("record", "missing -o DIR");
        goto out;
    }
    if (i >= argc) {
        cli_usage("record", "missing PROG");
        goto out;
    }
    if (cfg.rru.msp < MACHINE_MIN_MSP) {
        cli_usage("record", "--msp must be at least %u", MACHINE_MIN_MSP);
        goto out;
    }
    cfg.rru.cpus = cfg.machine.cores;
    char err[8192];
    if (rru_config_check(&cfg.rru, err, sizeof err) < 0) {
        cli_usage("record", "%s", err);
        goto out;
    }
    const char *prog = argv[i];
    if (access(prog, R_OK) != 0) {
        rc = cli_bad_input("record", "%s: %s", prog, strerror(errno));
        goto out;
    }
    if ((rc = make_bundle_dir(dir)) != 0)
        goto out;
    rc = RNR_EXIT_USAGE;
    o.dir = dir;
    char path[4096];
    uint8_t sha[32];
    char hex[RNR_SHA256_HEX];
    if (rnr_sha256_file(prog, sha, err, sizeof err) < 0) {
        rc = cli_bad_input("record", "%s", err);
        goto out;
    }
    rnr_hex(sha, 32, hex);

    /* The manifest first, marked incomplete until the end. */
    man = rnr_manifest_new();
    rnr_manifest_set(man, "status", "incomplete");
    rnr_manifest_set(man, "program", prog);
    rnr_manifest_set(man, "program.sha256", hex);
    rnr_manifest_set(man, "program.packed", pack ? "program" : "no");
    rnr_manifest_set_u64(man, "argc", (uint64_t)(argc - i));
    for (int k = i; k < argc; k++) {
        char key[32];
        snprintf(key, sizeof key, "arg.%d", k - i);
        rnr_manifest_set(man, key, argv[k]);
    }
    size_t envc = 0;
    while (environ[envc]) {
        char key[32];
        snprintf(key, sizeof key, "env.%zu", envc);
        rnr_manifest_set(man, key, environ[envc]);
        envc++;
    }
    rnr_manifest_set_u64(man, "envc", envc);
    set_config(man, &cfg);
    snprintf(path, sizeof path, "%s/manifest", dir);
    if (rnr_manifest_save(man, path, err, sizeof err) < 0) {
        rc = cli_bad_input("record", "%s", err);
        goto out;
    }
    if (pack) {
        snprintf(path, sizeof path, "%s/program", dir);
        if (copy_file(prog, path, err, sizeof err) < 0) {
            rc = cli_bad_input("record", "%s", err);
            goto out;
        }
    }

    /* The logs. */
    rnr_log_header h;
    memset(&h, 0, sizeof h);
    h.kind = RNR_LOG_INITIAL;
    h.cpus = cfg.machine.cores;
    h.msp = cfg.rru.msp;
    memcpy(h.program_sha256, sha, 32);
    snprintf(path, sizeof path, "%s/initial.log", dir);
    o.initial = rnr_writer_open(path, &h, NULL, err, sizeof err);
    if (!o.initial) {
        rc = cli_bad_input("record", "%s", err);
        goto out;
    }
    if (stream_path) {
        o.stream = rnr_writer_open(stream_path, &h, NULL, err, sizeof err);
        if (!o.stream) {
            rc = cli_bad_input("record", "%s", err);
            goto out;
        }
        if (strcmp(stream_path, "-") == 0) {
            null_fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
            cfg.stdout_fd = null_fd;
        }
    }
    if (backend) {
        rnr_log_header mh = h;
        mh.kind = RNR_LOG_MAXPAR;
        snprintf(path, sizeof path, "%s/maxpar.log", dir);
        o.maxpar_w = rnr_writer_open(path, &mh, NULL, err, sizeof err);
        if (!o.maxpar_w) {
            rc = cli_bad_input("record", "%s", err);
            goto out;
        }
        o.mp = maxpar_new(cfg.machine.cores, cfg.rru.msp, emit_maxpar, &o);
    }
    if (truth) {
        snprintf(path, sizeof path, "%s/truth.deps", dir);
        o.truth_f = fopen(path, "w");
        if (!o.truth_f || truth_write_header(o.truth_f, cfg.machine.cores) < 0) {
            rc = cli_bad_input("record", "%s: %s", path, strerror(errno));
            goto out;
        }
        o.truth = truth_tracker_new(cfg.machine.cores, on_truth, &o);
        cfg.access = on_access;
        cfg.access_ctx = &o;
    }
    o.fd_out = open_out(dir, "stdout", path, sizeof path);
    o.fd_err = o.fd_out < 0 ? -1 : open_out(dir, "stderr", path, sizeof path);
    if (o.fd_out < 0 || o.fd_err < 0) {
        rc = cli_bad_input("record", "%s: %s", path, strerror(errno));
        goto out;
    }
    rnr_sha256_init(&o.out_sha);

    snprintf(path, sizeof path, "%s/input.log", dir);
    char inpath[4096];
    snprintf(inpath, sizeof inpath, "%s", path);
    cfg.input_log = inpath;
    cfg.record = 1;
    cfg.chunk = on_chunk;
    cfg.chunk_ctx = &o;
    cfg.output = on_output;
    cfg.output_ctx = &o;
    cfg.tick = on_tick;
    cfg.tick_ctx = &o;
    cfg.interrupt = &interrupted;
    p = drv_proc_new(&cfg, prog, (const char *const *)argv + i, (size_t)(argc - i),
                     (const char *const *)environ, envc, err, sizeof err);
    if (!p) {
        rc = cli_bad_input("record", "%s", err);
        goto out;
    }
    o.p = p;
    o.progress = progress;
    o.t0 = o.last_report = o.last_flush = seconds();
    struct sigaction sa, old_sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_sigint;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old_sa);
    fflush(stdout);
    drv_result r;
    int ok = drv_proc_run(p, &r);
    sigaction(SIGINT, &old_sa, NULL);
    if (progress)
        fputs("\r\033[K", stderr);
    if (r.message)
        fprintf(stderr, "rnr record: %s\n", r.message);

    /* Finish the logs. */
    if (o.mp && !o.failed && maxpar_finish(o.mp) < 0)
        fail(&o, "MaxPar on the fly: %s", maxpar_error(o.mp));
    if (rnr_writer_close(o.initial, err, sizeof err) < 0)
        fail(&o, "%s", err);
    o.initial = NULL;
    if (o.stream && rnr_writer_close(o.stream, err, sizeof err) < 0)
        fail(&o, "%s", err);
    o.stream = NULL;
    if (o.maxpar_w && rnr_writer_close(o.maxpar_w, err, sizeof err) < 0)
        fail(&o, "%s", err);
    o.maxpar_w = NULL;
    if (o.truth_f && fclose(o.truth_f) != 0)
        fail(&o, "%s/truth.deps: write failed", dir);
    o.truth_f = NULL;

    /* The manifest's results. */
    drv_stats s;
    drv_proc_stats(p, &s);
    drv_record_stats rs;
    drv_proc_record_stats(p, &rs);
    uint8_t digest[32];
    drv_proc_digest(p, digest);
    int status = ok < 0 ? RNR_EXIT_USAGE
                 : r.end == DRV_EXITED ? r.status
                 : r.end == DRV_SIGNALED ? 128 + r.status
                 : r.end == DRV_INTERRUPTED ? 130 : DRV_EXIT_DEADLOCK;
    rnr_manifest_set(man, "status", o.failed || ok < 0 ? "failed"
                                    : r.end == DRV_INTERRUPTED ? "interrupted" : "complete");
    rnr_manifest_set(man, "end", end_name(r.end));
    rnr_manifest_set_u64(man, "exit-status", (uint64_t)status);
    rnr_manifest_set_u64(man, "threads", drv_proc_threads(p));
    for (size_t t = 0; t < drv_proc_threads(p); t++) {
        uint32_t tid;
        uint64_t n;
        char key[64];
        drv_proc_thread(p, t, &tid, &n);
        snprintf(key, sizeof key, "thread.%zu.tid", t);
        rnr_manifest_set_u64(man, key, tid);
        snprintf(key, sizeof key, "thread.%zu.instructions", t);
        rnr_manifest_set_u64(man, key, n);
    }
    rnr_manifest_set_u64(man, "instructions", s.instructions);
    rnr_manifest_set_u64(man, "cycles", s.cycles);
    rnr_manifest_set_u64(man, "syscalls", s.syscalls);
    rnr_manifest_set_u64(man, "chunks", rs.chunks);
    rnr_manifest_set_u64(man, "checks", rs.checks);
    rnr_manifest_set_u64(man, "silence-violations", rs.silence_violations);
    rnr_manifest_set_u64(man, "max-drain-delay", rs.max_drain_delay);
    rnr_manifest_set_u64(man, "stdout.bytes", o.out_bytes);
    uint8_t osha[32];
    rnr_sha256_final(&o.out_sha, osha);
    rnr_hex(osha, 32, hex);
    rnr_manifest_set(man, "stdout.sha256", hex);
    rnr_manifest_set_u64(man, "stderr.bytes", o.err_bytes);
    rnr_hex(digest, 32, hex);
    rnr_manifest_set(man, "final.digest", hex);
    if (truth)
        rnr_manifest_set_u64(man, "truth.deps", truth_tracker_deps(o.truth));
    char num[64];
    snprintf(num, sizeof num, "%.3f", s.wall_seconds);
    rnr_manifest_set(man, "wall-seconds", num);
    snprintf(path, sizeof path, "%s/manifest", dir);
    if (rnr_manifest_save(man, path, err, sizeof err) < 0)
        fail(&o, "%s", err);

    if (backend && !o.failed && r.end != DRV_FAILED) {
        pass_options po = { progress, 0, 0 };
        if (backend_bundle_passes(dir, 1, &po, NULL, err, sizeof err) < 0)
            fail(&o, "%s", err);
    }
    if (o.failed) {
        fprintf(stderr, "rnr record: %s\n", o.err);
        rc = RNR_EXIT_USAGE;
        goto out;
    }
    if (!quiet)
        fprintf(stderr,
                "rnr record: %s: %" PRIu64 " instructions, %" PRIu64 " threads, %" PRIu64
                " chunks, %.3f s, %.1f MIPS\n",
                dir, s.instructions, (uint64_t)drv_proc_threads(p), rs.chunks, s.wall_seconds,
                s.wall_seconds > 0 ? (double)s.instructions / s.wall_seconds / 1e6 : 0.0);
    rc = status;
out:
    if (o.initial)
        rnr_writer_abandon(o.initial);
    if (o.stream)
        rnr_writer_abandon(o.stream);
    if (o.maxpar_w)
        rnr_writer_abandon(o.maxpar_w);
    if (o.truth_f)
        fclose(o.truth_f);
    maxpar_free(o.mp);
    truth_tracker_free(o.truth);
    if (o.fd_out >= 0)
        close(o.fd_out);
    if (o.fd_err >= 0)
        close(o.fd_err);
    if (null_fd >= 0)
        close(null_fd);
    drv_proc_free(p);
    rnr_manifest_free(man);
    machine_opts_free(&mo);
    return rc;
}
