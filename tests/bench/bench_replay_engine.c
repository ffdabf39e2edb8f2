/* tests/bench/bench_replay_engine.c: the replay engine's own cost (`make
 * bench`). A synthetic recording (8 CPUs, low sharing: MaxPar parallelism
 * near 8) goes through `rnr synth` and `rnr backend`; each final log is
 * replayed on 1, 2 and 8 workers with an exec function that spins CS
 * iterations of a trivial loop per chunk ("spin"), 16 CS iterations
 * (nearer an interpreter's pace: "spin16"), and nothing ("nop": the engine
 * alone). Prints chunks/s, iterations/s, the workers' busy share, the
 * engine's time per chunk, and the speedup over W = 1. The host's load
 * average is printed first: on a shared machine it bounds the speedup.
 * Usage: bench_replay_engine RNR_BINARY WORKDIR [--quick] */
#include <errno.h>
#include <spawn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "formats/log.h"
#include "replayer/engine.h"

extern char **environ;

static void die(const char *what, const char *err)
{
    fprintf(stderr, "bench_replay_engine: %s: %s\n", what, err);
    exit(1);
}

static void run_rnr(const char *rnr, const char *const *args)
{
    const char *argv[32];
    size_t n = 0;
    argv[n++] = rnr;
    for (; args[n - 1]; n++)
        argv[n] = args[n - 1];
    argv[n] = NULL;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", 1, 0);
    pid_t pid;
    if (posix_spawn(&pid, rnr, &fa, NULL, (char *const *)argv, environ) != 0)
        die(rnr, strerror(errno));
    posix_spawn_file_actions_destroy(&fa);
    int status;
    if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
        die(args[0], "the command failed");
}

static _Atomic uint64_t exec_ns;   /* time inside spin_exec, all workers */

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* CTX: iterations per instruction. Times itself: the engine's busy time
 * counts its own work between chunks as well. */
static int spin_exec(void *ctx, unsigned worker, const rp_chunk *c, char *msg, size_t msglen)
{
    uint64_t t0 = now_ns();
    volatile uint64_t sink = 0;
    for (uint64_t i = c->cs * *(const unsigned *)ctx; i > 0; i--)
        sink += i;
    atomic_fetch_add(&exec_ns, now_ns() - t0);
    return 0;
}

/* Best of REPS replays. */
static rp_result replay(const char *path, unsigned workers, const unsigned *scale, int reps)
{
    rp_result best;
    memset(&best, 0, sizeof best);
    for (int i = 0; i < reps; i++) {
        /* Hand every ready chunk on at once: these exec functions run a chunk
         * 100 times faster per instruction than the interpreter, for which
         * the default threshold is set; this measures the engine itself. */
        rp_options o = { .workers = workers, .handoff_insns = 1 };
        rp_result r;
        atomic_store(&exec_ns, 0);
        if (rp_replay_log(path, &o, spin_exec, (void *)scale, &r) != RP_OK)
            die(path, r.message);
        r.busy_seconds_sum = (double)atomic_load(&exec_ns) * 1e-9;  /* inside the exec function */
        if (i == 0 || r.wall_seconds < best.wall_seconds)
            best = r;
    }
    return best;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: bench_replay_engine RNR_BINARY WORKDIR [--quick]\n");
        return 2;
    }
    const char *rnr = argv[1], *work = argv[2];
    int quick = argc > 3 && strcmp(argv[3], "--quick") == 0;
    char dir[4096], path[4200];
    snprintf(dir, sizeof dir, "%s/bundle", work);
    mkdir(work, 0777);
    const char *insns = quick ? "1000000" : "25000000";
    run_rnr(rnr, (const char *[]){ "synth", "-n", "8", "--sharing", "low", "--chunk-max", "500", "--insns", insns,
                                   "--seed", "1", "-o", dir, NULL });
    run_rnr(rnr, (const char *[]){ "backend", dir, NULL });
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    int reps = quick ? 1 : 3;
    double load[3] = { 0, 0, 0 };
    getloadavg(load, 3);
    printf("replay engine: 8 recorded CPUs, low sharing, %s instructions per thread; host: %ld cores, "
           "load average %.2f; best of %d\n", insns, cores, load[0], reps);
    printf("%-9s %-6s %2s %9s %8s %12s %10s %7s %10s %8s\n", "format", "exec", "W", "chunks", "wall_s", "chunks/s",
           "Miter/s", "busy%", "engine_us", "speedup");
    static const char *const formats[] = { "maxpar", "stitched", "serial", "stserial" };
    static const unsigned workers[] = { 1, 2, 8 };
    static const unsigned scales[] = { 1, 16, 0 };
    static const char *const exec_names[] = { "spin", "spin16", "nop" };
    for (size_t f = 0; f < 4; f++) {
        snprintf(path, sizeof path, "%s/%s.log", dir, formats[f]);
        for (size_t e = 0; e < 3; e++) {
            double w1 = 0;
            for (size_t k = 0; k < 3; k++) {
                rp_result r = replay(path, workers[k], &scales[e], reps);
                if (k == 0)
                    w1 = r.wall_seconds;
                /* The engine's time per chunk: what the workers spent
                 * outside the exec function, per chunk, with at most one
                 * worker per host core counted. */
                double lanes = workers[k] < cores ? workers[k] : (double)cores;
                double engine_us = (lanes * r.wall_seconds - r.busy_seconds_sum) / (double)r.chunks * 1e6;
                printf("%-9s %-6s %2u %9llu %8.3f %12.0f %10.1f %7.1f %10.3f %8.2f\n", formats[f], exec_names[e],
                       workers[k], (unsigned long long)r.chunks, r.wall_seconds, (double)r.chunks / r.wall_seconds,
                       (double)r.instructions * scales[e] / r.wall_seconds / 1e6,
                       100 * r.busy_seconds_sum / (lanes * r.wall_seconds), engine_us < 0 ? 0 : engine_us,
                       w1 / r.wall_seconds);
            }
        }
    }
    return 0;
}
