/* tests/bench/bench_backend.c: the backend benchmark (`make bench`).
 * Part 1: throughput of each pass on a large synthetic log (chunks per
 * second: the MaxPar pass alone on chunks already in memory, and each pass
 * from log bytes to log bytes), and the peak memory of each `rnr` pass
 * command run on files (the process's maxrss) and of the passes' own
 * structures. Part 2: for 8 CPUs at low, medium and high sharing, per
 * format: entries, bytes and bits per kilo-instruction (raw and zlib),
 * tokens, critical path, replay parallelism and simulated replay time.
 * Usage: bench_backend RNR_BINARY WORKDIR [--quick] */
#include <errno.h>
#include <inttypes.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "backend/maxpar.h"
#include "backend/metrics.h"
#include "backend/passes.h"
#include "backend/synth.h"
#include "formats/dump.h"

extern char **environ;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* This thread's CPU time: on a shared machine, what the pass itself took
 * (time it waited for a core does not count). */
static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void die(const char *what, const char *err)
{
    fprintf(stderr, "bench_backend: %s: %s\n", what, err);
    exit(1);
}

static rnr_membuf read_file(const char *path)
{
    rnr_membuf m = { 0 };
    FILE *f = fopen(path, "rb");
    if (!f)
        die(path, strerror(errno));
    fseek(f, 0, SEEK_END);
    m.len = (size_t)ftell(f);
    rewind(f);
    m.data = malloc(m.len ? m.len : 1);
    if (!m.data || fread(m.data, 1, m.len, f) != m.len)
        die(path, "read error");
    fclose(f);
    return m;
}

static void write_file(const char *path, const rnr_membuf *m)
{
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(m->data, 1, m->len, f) != m->len || fclose(f) != 0)
        die(path, strerror(errno));
}

/* ---- the MaxPar pass alone ---- */

typedef struct chunk_array {
    rnr_initial_chunk *c;
    rnr_sv_entry *sv;
    uint64_t n, nsv;
} chunk_array;

static void load_chunks(const rnr_membuf *log, chunk_array *a)
{
    char err[RNR_ERR_MAX];
    rnr_reader *r = rnr_reader_open_io(rnr_io_mem_reader(log->data, log->len, "initial"), err, sizeof err);
    if (!r)
        die("initial log", err);
    uint64_t cap = 1 << 16, svcap = 1 << 18;
    memset(a, 0, sizeof *a);
    a->c = malloc(cap * sizeof *a->c);
    a->sv = malloc(svcap * sizeof *a->sv);
    rnr_initial_chunk c;
    while (rnr_reader_next_initial(r, &c) == 1) {
        if (a->n == cap)
            a->c = realloc(a->c, (cap *= 2) * sizeof *a->c);
        if (a->nsv + c.nsv > svcap)
            a->sv = realloc(a->sv, (svcap *= 2) * sizeof *a->sv);
        a->c[a->n] = c;
        a->c[a->n++].sv = (rnr_sv_entry *)(uintptr_t)a->nsv;
        if (c.nsv)
            memcpy(a->sv + a->nsv, c.sv, c.nsv * sizeof *c.sv);
        a->nsv += c.nsv;
    }
    rnr_reader_close(r);
    for (uint64_t i = 0; i < a->n; i++)
        a->c[i].sv = a->sv + (uintptr_t)a->c[i].sv;
}

static int count_emit(void *ctx, const rnr_final_chunk *c)
{
    (void)c;
    (*(uint64_t *)ctx)++;
    return 0;
}

/* Best of REPS runs of the pass over chunks in memory: chunks per second
 * of wall time, and (in *per_cpu_s) of the thread's CPU time. */
static double maxpar_alone(const chunk_array *a, uint32_t cpus, uint64_t msp, int reps, maxpar_stats *st,
                           double *per_cpu_s)
{
    double best = 1e30, best_cpu = 1e30;
    for (int k = 0; k < reps; k++) {
        uint64_t out = 0;
        maxpar *m = maxpar_new(cpus, msp, count_emit, &out);
        double t0 = now(), c0 = cpu_now();
        for (uint64_t i = 0; i < a->n; i++)
            if (maxpar_add(m, &a->c[i]) < 0)
                die("maxpar", maxpar_error(m));
        if (maxpar_finish(m) < 0)
            die("maxpar", maxpar_error(m));
        double t = now() - t0, c = cpu_now() - c0;
        if (t < best)
            best = t;
        if (c < best_cpu)
            best_cpu = c;
        *st = *maxpar_get_stats(m);
        maxpar_free(m);
    }
    *per_cpu_s = (double)a->n / best_cpu;
    return (double)a->n / best;
}

/* Best of REPS runs of a pass from log bytes to log bytes. */
static double pass_bytes(pass_kind k, const rnr_membuf *in, rnr_membuf *out, int reps, pass_summary *s)
{
    double best = 1e30;
    char err[RNR_ERR_MAX];
    for (int i = 0; i < reps; i++) {
        if (i)
            free(out->data);
        double t0 = now();
        if (pass_run_memory(k, in->data, in->len, out, NULL, s, err, sizeof err) < 0)
            die("pass", err);
        double t = now() - t0;
        if (t < best)
            best = t;
    }
    return (double)s->in_counts.records / best;
}

/* Runs `rnr PASS --stats IN OUT` and returns the peak resident memory it
 * reports (VmHWM, KiB; measured inside it, so the benchmark's own memory
 * does not count) and its wall time. */
static uint64_t run_pass_command(const char *rnr, const char *pass, const char *in, const char *out,
                                 double *seconds)
{
    char tmp[] = "/tmp/rnr-bench-XXXXXX";
    int fd = mkstemp(tmp);
    if (fd < 0)
        die("temporary file", strerror(errno));
    unlink(tmp);
    const char *argv[] = { rnr, pass, "--stats", in, out, NULL };
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fd, 2);
    pid_t pid;
    double t0 = now();
    if (posix_spawn(&pid, rnr, &fa, NULL, (char *const *)argv, environ) != 0)
        die(rnr, strerror(errno));
    posix_spawn_file_actions_destroy(&fa);
    int status;
    if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
        die(pass, "the command failed");
    *seconds = now() - t0;
    char buf[1024];
    ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
    close(fd);
    buf[n > 0 ? n : 0] = '\0';
    const char *p = strstr(buf, "vm_hwm_kib=");
    return p ? strtoull(p + 11, NULL, 10) : 0;
}

/* ---- per-format report ---- */

static void format_row(const char *name, const char *path, uint64_t insns)
{
    char err[RNR_ERR_MAX];
    rnr_log_summary sum;
    if (rnr_log_summarize(path, &sum, err, sizeof err) < 0)
        die(path, err);
    int final = sum.header.kind != RNR_LOG_INITIAL;
    printf("  %-9s %9" PRIu64 " %11" PRIu64 " %11" PRIu64 " %8.2f %8.2f %8" PRIu64, name, sum.counts.records,
           sum.counts.raw_bytes, sum.zlib_bytes, 8000.0 * (double)sum.counts.raw_bytes / (double)insns,
           8000.0 * (double)sum.zlib_bytes / (double)insns, final ? sum.tokens : sum.sv_entries);
    if (!final) {
        printf(" %11s %8s\n", "-", "-");
        return;
    }
    rnr_reader *r = rnr_reader_open(path, err, sizeof err);
    dag_metrics m;
    if (!r || metrics_compute(r, 100, &m, err, sizeof err) < 0)
        die(path, err);
    rnr_reader_close(r);
    printf(" %11" PRIu64 " %8.2f", m.critical_path, m.parallelism);
    for (uint32_t i = 0; i < m.nw; i++)
        printf(" %9" PRIu64, m.makespan[i]);
    printf("\n");
}

static void sharing_report(const char *rnr, const char *dir, const char *level, uint64_t insns)
{
    synth_config c;
    synth_config_default(&c, 8);
    synth_set_sharing(&c, level);
    c.insns = insns;
    c.seed = 2024;
    char path[2048], err[RNR_ERR_MAX];
    snprintf(path, sizeof path, "%s/%s", dir, level);
    synth_result res;
    double t0 = now();
    if (synth_bundle(&c, path, 0, &res, err, sizeof err) < 0)
        die(path, err);
    double tgen = now() - t0;
    printf("\n== 8 cpus, %s sharing (%.1f shared accesses per 1000 instructions): %" PRIu64
           " instructions, %" PRIu64 " initial chunks, %" PRIu64 " cycles (generated in %.2f s)\n",
           level, c.sharing * 1000, res.instructions, res.chunks, res.cycles, tgen);
    /* Each pass: throughput in process (log bytes to log bytes, best of
     * 3), and as a command on the files, its peak resident memory. */
    struct { pass_kind kind; const char *cmd, *in, *out; } steps[] = {
        { PASS_MAXPAR, "maxpar", "initial", "maxpar" },
        { PASS_STITCH, "stitch", "maxpar", "stitched" },
        { PASS_SERIAL, "serial", "maxpar", "serial" },
        { PASS_SERIAL, "serial", "stitched", "stserial" },
    };
    printf("  %-22s %14s %16s\n", "pass", "M chunks/s", "peak memory KiB");
    for (int i = 0; i < 4; i++) {
        char a[4096], b[4096];
        snprintf(a, sizeof a, "%s/%s.log", path, steps[i].in);
        snprintf(b, sizeof b, "%s/%s.log", path, steps[i].out);
        double t;
        uint64_t hwm = run_pass_command(rnr, steps[i].cmd, a, b, &t);
        rnr_membuf in = read_file(a), out;
        pass_summary s;
        double rate = pass_bytes(steps[i].kind, &in, &out, 3, &s);
        free(in.data);
        free(out.data);
        char label[64];
        snprintf(label, sizeof label, "rnr %s %s", steps[i].cmd, steps[i].in);
        printf("  %-22s %14.2f %16" PRIu64 "\n", label, rate / 1e6, hwm);
    }
    printf("  %-9s %9s %11s %11s %8s %8s %8s %11s %8s %9s %9s %9s %9s\n", "format", "entries", "bytes.raw",
           "bytes.zlib", "bpki.raw", "bpki.zl", "tokens", "crit.path", "parallel", "w1.cyc", "w2.cyc",
           "w4.cyc", "w8.cyc");
    printf("  (initial: 'tokens' counts its successor-vector entries)\n");
    static const char *const logs[] = { "initial", "maxpar", "stitched", "serial", "stserial" };
    for (int i = 0; i < 5; i++) {
        snprintf(path, sizeof path, "%s/%s/%s.log", dir, level, logs[i]);
        format_row(logs[i], path, res.instructions);
    }
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: bench_backend RNR_BINARY WORKDIR [--quick]\n");
        return 2;
    }
    const char *rnr = argv[1], *dir = argv[2];
    int quick = argc > 3 && strcmp(argv[3], "--quick") == 0;
    mkdir(dir, 0777);

    /* ---- part 1: throughput and memory on a large log ---- */
    synth_config c;
    synth_config_default(&c, 8);
    c.insns = quick ? 8000000 : 125000000;
    c.rru.chunk_max = 500;
    c.seed = 7;
    rnr_membuf in;
    synth_result res;
    double t0 = now();
    synth_to_memory(&c, &in, NULL, &res);
    double tgen = now() - t0;
    printf("backend benchmark: 8 cpus, medium sharing, chunks of at most 500 instructions, MSP %" PRIu64
           "\nlarge log: %" PRIu64 " chunks, %" PRIu64 " instructions, %zu bytes (generated in %.1f s, "
           "%.2f M chunks/s)\n\n",
           c.rru.msp, res.chunks, res.instructions, in.len, tgen, (double)res.chunks / tgen / 1e6);
    chunk_array a;
    load_chunks(&in, &a);
    maxpar_stats mst;
    double alone_cpu;
    double alone = maxpar_alone(&a, c.cpus, c.rru.msp, 3, &mst, &alone_cpu);
    rnr_membuf mp, st, se, sts;
    pass_summary s_mp, s_st, s_se, s_sts;
    double r_mp = pass_bytes(PASS_MAXPAR, &in, &mp, 3, &s_mp);
    double r_st = pass_bytes(PASS_STITCH, &mp, &st, 3, &s_st);
    double r_se = pass_bytes(PASS_SERIAL, &mp, &se, 3, &s_se);
    double r_sts = pass_bytes(PASS_SERIAL, &st, &sts, 3, &s_sts);
    printf("%-34s %14s %s\n", "pass (one core, best of 3)", "M chunks/s", "its own peak memory");
    printf("%-34s %14.2f %" PRIu64 " open chunks, %" PRIu64 " waiting-list entries, %" PRIu64 " bytes\n",
           "maxpar, chunks in memory", alone / 1e6, mst.peak_open, mst.peak_edges, mst.peak_bytes);
    printf("%-34s %14.2f (the same runs timed by the thread's CPU time)\n", "maxpar, chunks in memory, cpu", alone_cpu / 1e6);
    printf("%-34s %14.2f (decoding and encoding included)\n", "maxpar, log bytes to log bytes", r_mp / 1e6);
    printf("%-34s %14.2f %" PRIu64 " chunks waiting, %" PRIu64 " tokens in flight\n",
           "stitch, log bytes to log bytes", r_st / 1e6, s_st.dag.peak_waiting, s_st.dag.peak_tokens);
    printf("%-34s %14.2f %" PRIu64 " chunks waiting, %" PRIu64 " tokens in flight\n",
           "serial (maxpar), bytes to bytes", r_se / 1e6, s_se.dag.peak_waiting, s_se.dag.peak_tokens);
    printf("%-34s %14.2f %" PRIu64 " chunks waiting, %" PRIu64 " tokens in flight\n",
           "serial (stitched), bytes to bytes", r_sts / 1e6, s_sts.dag.peak_waiting, s_sts.dag.peak_tokens);
    printf("maxpar target (issue 11): >= 10 M chunks/s on one core: %s\n", alone >= 10e6 ? "met" : "NOT met");

    char path[2048];
    snprintf(path, sizeof path, "%s/large", dir);
    mkdir(path, 0777);
    char ip[4096], mpp[4096];
    snprintf(ip, sizeof ip, "%s/initial.log", path);
    snprintf(mpp, sizeof mpp, "%s/maxpar.log", path);
    write_file(ip, &in);
    double t;
    uint64_t hwm = run_pass_command(rnr, "maxpar", ip, mpp, &t);
    printf("rnr maxpar on the large log's file: %.2f s, %.2f M chunks/s, peak memory %" PRIu64 " KiB\n", t,
           (double)res.chunks / t / 1e6, hwm);
    /* The same pass on a log a tenth as long: memory does not follow length. */
    uint64_t full = c.insns;
    c.insns = full / 10;
    rnr_membuf small;
    synth_result rs;
    synth_to_memory(&c, &small, NULL, &rs);
    write_file(ip, &small);
    uint64_t hwm_small = run_pass_command(rnr, "maxpar", ip, mpp, &t);
    printf("rnr maxpar on a log a tenth as long (%" PRIu64 " chunks): peak memory %" PRIu64 " KiB\n",
           rs.chunks, hwm_small);
    unlink(ip);
    unlink(mpp);
    rmdir(path);
    free(small.data);
    free(a.c);
    free(a.sv);
    free(in.data);
    free(mp.data);
    free(st.data);
    free(se.data);
    free(sts.data);

    /* ---- part 2: the numbers per sharing level ---- */
    uint64_t insns = quick ? 300000 : 20000000;
    static const char *const levels[] = { "low", "medium", "high" };
    printf("\nper format (bpki = bits per kilo-instruction; crit.path in instructions; "
           "parallel = instructions / crit.path;\nwN.cyc = simulated replay time on N replay cpus at "
           "1 IPC, 100-cycle tokens)");
    for (int i = 0; i < 3; i++)
        sharing_report(rnr, dir, levels[i], insns);
    return 0;
}
