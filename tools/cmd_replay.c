/* tools/cmd_replay.c: `rnr replay`: replays a recording bundle from one of
 * its final logs on W worker threads and proves that the replay reproduced
 * the recording: stdout, exit status, per-thread instruction counts and
 * the final state digest. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "formats/log.h"
#include "replayer/engine.h"
#include "replayer/exec.h"
#include "debugger/server.h"
#include "tools/cli.h"

const char cmd_replay_help[] =
    "usage: rnr replay [-j W] [--format maxpar|stitched|serial|stserial|adaptive]\n"
    "                  [--program PATH] [--window CHUNKS] [--handoff INSNS] [--quiet]\n"
    "                  [--gdb [HOST:]PORT [--checkpoint-interval N] [--checkpoints K]] DIR\n"
    "DIR 'latest' is the latest recording of `rnr record` without -o (the\n"
    "link latest in $RNR_BUNDLE_DIR, default ./rnr-bundles).\n"
    "Replays the recording bundle DIR from its final log of FORMAT (default\n"
    "maxpar; run `rnr backend DIR` or record with --backend first) on W worker\n"
    "threads (default: the host's cores; at most the recorded CPU count), any\n"
    "worker taking any chunk whose predecessors are done. The guest's stdout is\n"
    "printed as the recording printed it. At the end the replay's stdout,\n"
    "stderr, exit status, per-thread instruction counts and final memory and\n"
    "register digest are compared with the recording's; a one-line summary\n"
    "goes to stderr: workers, chunks, instructions, wall time, MIPS and the\n"
    "concurrency achieved (the workers' busy time over the wall time; the\n"
    "DAG's bound is the parallelism of rnr stats).\n"
    "  -j W, -jW        worker threads (any W >= 1; capped at the recorded CPUs)\n"
    "  --format F, --format=F  maxpar, stitched, serial, stserial or adaptive (rnr\n"
    "                          backend --adaptive), in any case\n"
    "  --program PATH   the program to run (default: the bundle's copy); it must\n"
    "                   have the recorded SHA-256\n"
    "  --window CHUNKS  chunks read ahead of the oldest unfinished one, at most\n"
    "                   (memory; default 4096)\n"
    "  --handoff INSNS  while a chunk shorter than INSNS instructions runs, an idle\n"
    "                   worker takes ready chunks only once they hold INSNS\n"
    "                   instructions (default 4096: shorter ones cost more to hand\n"
    "                   to another host core than they take to run; 1: hand every\n"
    "                   ready chunk to an idle worker at once; docs/replayer.md)\n"
    "  --quiet          print neither the guest's output nor the summary\n"
    "  --gdb [HOST:]PORT  replay under gdb's control instead (see rnr debug):\n"
    "                   serve the gdb remote protocol on HOST (default 127.0.0.1)\n"
    "                   and PORT (0: a free one; the port is printed); one hart,\n"
    "                   the log's order; default format stitched\n"
    "  --checkpoint-interval N, --checkpoints K  with --gdb: as rnr debug's\n"
    "Exit status: 0 the replay reproduced the recording; 1 it diverged (the\n"
    "first chunk that differs is named) or the logs cannot be replayed\n"
    "(a deadlock of tokens); 2 bad usage or a bad bundle.\n";

/* Progress on a terminal: one rewritten line (the engine calls it every
 * half second, on this thread). */
static void on_progress(void *ctx, const rp_progress *p)
{
    uint64_t total = *(const uint64_t *)ctx;
    fprintf(stderr, "\rrnr replay: %" PRIu64 " chunk%s, %" PRIu64 " of %" PRIu64
            " instruction%s (%.0f%%), %.1f s   ",
            p->chunks, cli_s(p->chunks), p->instructions, total, cli_s(total),
            total ? 100.0 * (double)p->instructions / (double)total : 0.0, p->seconds);
    fflush(stderr);
}

static int run_chunk(void *ctx, unsigned w, const rp_chunk *c, char *msg, size_t msglen)
{
    return rp_exec_chunk(ctx, w, c->cpu, c->lane_index, c->tid, c->cs, msg, msglen);
}

int cmd_replay(int argc, char **argv)
{
    const char *dir = NULL, *format = NULL, *program = NULL, *gdb = NULL;
    uint64_t workers = 0, window = RP_WINDOW_DEFAULT, handoff = RP_HANDOFF_DEFAULT;
    int quiet = 0, options = 1, ck_opt = 0;
    uint64_t interval = DBG_INTERVAL_DEFAULT;
    unsigned keep = DBG_KEEP_DEFAULT;
    static const char *const valued[] = {"-j", "--format", "--program", "--window", "--gdb", "--handoff",
                                         "--checkpoint-interval", "--checkpoints", NULL};
    cli_normalize(valued, 0, &argc, &argv);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!options || a[0] != '-' || !a[1]) {
            if (dir)
                return cli_usage("replay", "too many arguments");
            dir = a;
        } else if (strcmp(a, "--") == 0) {
            options = 0;
        } else if (strncmp(a, "--checkpoint", 12) == 0) {
            int ck = cli_checkpoint_opt("replay", argc, argv, &i, &interval, &keep);
            if (ck < 0)
                return RNR_EXIT_USAGE;
            if (!ck)
                return cli_usage("replay", "unknown option '%s'", a);
            ck_opt = 1;
        } else if (strcmp(a, "-j") == 0 || strcmp(a, "--format") == 0 || strcmp(a, "--program") == 0 ||
            strcmp(a, "--window") == 0 || strcmp(a, "--gdb") == 0 || strcmp(a, "--handoff") == 0) {
            if (i + 1 >= argc)
                return cli_usage("replay", "option %s needs an argument", a);
            const char *v = argv[++i];
            if (a[1] == 'j') {
                if (cli_parse_u64("replay", a, v, 1, 4096, &workers) < 0)
                    return RNR_EXIT_USAGE;
            } else if (a[2] == 'w') {
                if (cli_parse_u64("replay", a, v, 1, 1u << 30, &window) < 0)
                    return RNR_EXIT_USAGE;
            } else if (a[2] == 'h') {
                if (cli_parse_u64("replay", a, v, 1, UINT64_C(1) << 40, &handoff) < 0)
                    return RNR_EXIT_USAGE;
            } else if (a[2] == 'g') {
                gdb = v;
            } else if (a[2] == 'f') {
                format = v;
            } else {
                program = v;
            }
        } else if (strcmp(a, "--quiet") == 0) {
            quiet = 1;
        } else {
            return cli_usage("replay", "unknown option '%s'", a);
        }
    }
    if (!dir)
        return cli_usage("replay", "missing DIR");
    if (!format)
        format = gdb ? "stitched" : "maxpar";
    int kind = cli_log_kind(format);
    if (kind != RNR_LOG_MAXPAR && kind != RNR_LOG_STITCHED && kind != RNR_LOG_SERIAL &&
        kind != RNR_LOG_STSERIAL && kind != RNR_LOG_ADAPTIVE)
        return cli_usage("replay", "--format wants maxpar, stitched, serial, stserial or adaptive, "
                         "not '%s'", format);
    format = rnr_log_kind_name((uint32_t)kind);
    if (gdb)
        return cli_gdb_serve(dir, kind, program, quiet, gdb, interval, keep);
    if (ck_opt)
        return cli_usage("replay", "--checkpoint-interval and --checkpoints go with --gdb");
    long host = sysconf(_SC_NPROCESSORS_ONLN);
    if (workers == 0)
        workers = host > 0 ? (uint64_t)host : 1;
    char err[8192];
    rp_exec_options eo = {.workers = (unsigned)workers, .program = program, .out = quiet ? NULL : stdout};
    rp_exec *x = rp_exec_open(dir, &eo, err, sizeof err);
    if (!x)
        return cli_bad_input("replay", "%s", err);
    dir = rp_exec_dir(x);
    if (workers > rp_exec_cpus(x)) {
        if (!quiet)
            fprintf(stderr, "rnr replay: note: %" PRIu64 " worker%s asked, the recording has %u CPU%s: "
                    "using %u\n", workers, cli_s(workers), rp_exec_cpus(x), cli_s(rp_exec_cpus(x)),
                    rp_exec_cpus(x));
        workers = rp_exec_cpus(x);
    }
    rnr_reader *r = rp_exec_open_log(x, (uint32_t)kind, err, sizeof err);
    if (!r) {
        rp_exec_free(x);
        return cli_bad_input("replay", "%s", err);
    }
    rp_result res;
    uint64_t total = rp_exec_instructions(x);
    int progress = !quiet && isatty(STDERR_FILENO);
    rp_options ro;
    memset(&ro, 0, sizeof ro);
    ro.workers = (unsigned)workers;
    ro.window = window;
    ro.handoff_insns = handoff;
    ro.progress = progress ? on_progress : NULL;
    ro.progress_ctx = &total;
    rp_replay_reader(r, &ro, run_chunk, x, &res);
    if (progress)
        fputs("\r\033[K", stderr);
    rnr_reader_close(r);
    int status = RNR_EXIT_OK;
    if (res.status == RP_BAD_LOG) {
        fprintf(stderr, "rnr replay: %s\n", res.message);
        status = RNR_EXIT_USAGE;
    } else if (res.status == RP_ERROR) {
        fprintf(stderr, "rnr replay: %s\n", res.message);
        status = RNR_EXIT_USAGE;
    } else if (res.status != RP_OK) {
        fprintf(stderr, "rnr replay: %s\n", res.message);
        status = RNR_EXIT_FAILED;
    } else if (rp_exec_finish(x, err, sizeof err) != 0) {
        fprintf(stderr, "rnr replay: verification failed: %s\n", err);
        status = RNR_EXIT_FAILED;
    }
    double wall = res.wall_seconds;
    if (status == RNR_EXIT_OK && !quiet)
        /* concurrency: the workers' busy time over the wall time, what
         * the host achieved (not the DAG's parallelism of rnr stats). */
        fprintf(stderr, "rnr replay: %s: verified: %s log, %" PRIu64 " worker%s, %" PRIu64
                " chunk%s, %" PRIu64 " instruction%s, %.3f s, %.1f MIPS, concurrency %.2f\n",
                dir, format, workers, cli_s(workers), res.chunks, cli_s(res.chunks),
                res.instructions, cli_s(res.instructions), wall,
                wall > 0 ? (double)res.instructions / wall / 1e6 : 0.0,
                wall > 0 ? res.busy_seconds_sum / wall : 0.0);
    rp_exec_free(x);
    return status;
}
