/* tools/cmd_follow.c: `rnr follow`: the on-line follower (follower/follow.h):
 * receives the stream of `rnr record --stream` and replays it as it
 * arrives, with the verdict of `rnr replay`. */
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "follower/follow.h"
#include "tools/cli.h"

const char cmd_follow_help[] =
    "usage: rnr follow [-j W] [-o DIR] [--quiet] [--timeout S] --listen [HOST:]PORT | -\n"
    "Follows a recording while it is made: receives the stream of `rnr record\n"
    "--stream` on a TCP connection (--listen: HOST default 127.0.0.1, PORT 0 a\n"
    "free one; the address is printed; one primary, a second is refused) or on\n"
    "stdin ('-': `rnr record --stream - ... | rnr follow -`), and replays it as\n"
    "it arrives on W worker threads, comparing each chunk's recorded check as\n"
    "it goes (docs/online.md). Once the recording has ended, the replay's\n"
    "stdout, stderr, exit status, per-thread instruction counts and final\n"
    "digest are compared with the recording's, as `rnr replay` does. The\n"
    "replayed chunks are acknowledged to the primary on the connection.\n"
    "On a terminal, stderr shows about twice a second how far behind the\n"
    "primary the replay is: chunks, instructions, and bytes per second received.\n"
    "  -j W, -jW          worker threads (default: the host's cores; at most\n"
    "                     the recorded CPU count)\n"
    "  -o DIR             keep what was received as a bundle in DIR (new or\n"
    "                     empty; `rnr replay` and `rnr verify` read it); a stream\n"
    "                     that ended early leaves its prefix, status incomplete\n"
    "  --listen [HOST:]PORT  wait for the primary there (TCP)\n"
    "  --timeout S        give up after S seconds without a byte (default 10)\n"
    "  --quiet            print neither the guest's output nor the summary\n"
    "Exit status: 0 the replay reproduced the recording; 1 it diverged, or the\n"
    "stream ended before the recording did (the last chunk replayed is named);\n"
    "2 bad usage, or a stream that is not one (another version, garbage).\n";

static int lag_drawn;

static void on_lag(void *ctx, const follow_lag *l)
{
    (void)ctx;
    uint64_t ch = l->primary_chunks > l->chunks ? l->primary_chunks - l->chunks : 0;
    uint64_t in = l->primary_instructions > l->instructions ? l->primary_instructions - l->instructions : 0;
    fprintf(stderr, "\rrnr follow: %" PRIu64 " chunk%s replayed, %" PRIu64 " chunk%s and %" PRIu64
            " instruction%s behind, %.0f KiB/s received   ",
            l->chunks, cli_s(l->chunks), ch, cli_s(ch), in, cli_s(in), l->bytes_per_second / 1024);
    fflush(stderr);
    lag_drawn = 1;
}

int cmd_follow(int argc, char **argv)
{
    const char *listen_at = NULL, *dir = NULL;
    int from_stdin = 0, quiet = 0;
    uint64_t workers = 0;
    double timeout = 0;
    static const char *const valued[] = {"-j", "-o", "--listen", "--timeout", NULL};
    cli_normalize(valued, 0, &argc, &argv);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "-") == 0) {
            from_stdin = 1;
        } else if (strcmp(a, "--quiet") == 0) {
            quiet = 1;
        } else if (strcmp(a, "-j") == 0 || strcmp(a, "-o") == 0 || strcmp(a, "--listen") == 0 ||
                   strcmp(a, "--timeout") == 0) {
            if (i + 1 >= argc)
                return cli_usage("follow", "option %s needs an argument", a);
            const char *v = argv[++i];
            if (a[1] == 'j') {
                if (cli_parse_u64("follow", a, v, 1, 4096, &workers) < 0)
                    return RNR_EXIT_USAGE;
            } else if (a[1] == 'o') {
                dir = v;
            } else if (a[2] == 'l') {
                listen_at = v;
            } else {
                char *end;
                timeout = strtod(v, &end);
                if (end == v || *end || !(timeout > 0) || timeout > 1e6)
                    return cli_usage("follow", "--timeout: '%s' is not a number of seconds > 0", v);
            }
        } else {
            return cli_usage("follow", "unknown argument '%s'", a);
        }
    }
    if (!!listen_at == from_stdin)
        return cli_usage("follow", listen_at ? "--listen and - both name the stream's source"
                                             : "missing --listen [HOST:]PORT or -");
    signal(SIGPIPE, SIG_IGN);
    long host = sysconf(_SC_NPROCESSORS_ONLN);
    if (workers == 0)
        workers = host > 0 ? (uint64_t)host : 1;
    char err[1024], bound[300];
    int fd = 0, sock = 0;
    const char *name = "<stdin>";
    if (listen_at) {
        int lfd = follow_listen(listen_at, bound, sizeof bound, err, sizeof err);
        if (lfd < 0)
            return cli_bad_input("follow", "%s", err);
        fprintf(stderr, "rnr follow: listening on %s\n", bound);
        fflush(stderr);
        fd = follow_accept(lfd, err, sizeof err);
        if (fd < 0)
            return cli_bad_input("follow", "%s", err);
        sock = 1;
        name = bound;
    }
    follow_options fo;
    memset(&fo, 0, sizeof fo);
    fo.workers = (unsigned)workers;
    fo.dir = dir;
    fo.out = quiet ? NULL : stdout;
    fo.timeout = timeout;
    if (!quiet && isatty(STDERR_FILENO))
        fo.lag = on_lag;
    follow_result res;
    int rc = follow_run(fd, sock, name, &fo, &res);
    if (sock)
        close(fd);
    if (lag_drawn)
        fputs("\r\033[K", stderr);
    if (rc != 0)
        fprintf(stderr, "rnr follow: %s\n", res.message);
    else if (!quiet)
        fprintf(stderr, "rnr follow: verified: %s log, %u worker%s, %" PRIu64 " chunk%s, %" PRIu64
                " instruction%s, %.3f s (the primary %.3f s), %" PRIu64 " bytes received, lag %.1f "
                "chunks on average, %" PRIu64 " at most\n",
                res.format, res.workers, cli_s(res.workers), res.chunks, cli_s(res.chunks),
                res.instructions, cli_s(res.instructions), res.seconds, res.primary_seconds,
                res.bytes, res.lag_samples ? (double)res.lag_sum / (double)res.lag_samples : 0.0,
                res.lag_max);
    if (dir && res.bundle_status && (!quiet || rc != 0))
        fprintf(stderr, "rnr follow: %s: %s\n", dir, res.bundle_status);
    return rc == 0 ? RNR_EXIT_OK : rc == 1 ? RNR_EXIT_FAILED : RNR_EXIT_USAGE;
}
