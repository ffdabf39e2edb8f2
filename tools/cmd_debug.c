/* tools/cmd_debug.c: `rnr debug`: a replay under gdb: the gdb server of
 * debugger/server.h on a free loopback port and gdb-multiarch (or
 * $RNR_GDB) started on the bundle's program, connected to it. Also the
 * server of `rnr replay --gdb` (cli_gdb_serve). */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "debugger/server.h"
#include "formats/log.h"
#include "formats/net.h"
#include "tools/cli.h"

const char cmd_debug_help[] =
    "usage: rnr debug [--format maxpar|stitched|serial|stserial|adaptive] [--program PATH]\n"
    "                 [--checkpoint-interval N] [--checkpoints K] DIR [-- GDB_ARGS...]\n"
    "Replays the recording bundle DIR under gdb: starts the replay's gdb server\n"
    "on a free port of 127.0.0.1 and runs gdb-multiarch (or the program named by\n"
    "$RNR_GDB) on the bundle's program, connected to it, with GDB_ARGS after\n"
    "its own. The replay runs on one hart, the log's chunks in the log's order;\n"
    "gdb sees every guest thread (named by its cpu and chunk), registers and\n"
    "memory, breakpoints, watchpoints (stopping right after the instruction that\n"
    "touched the watched bytes), continue, step and their reverse forms\n"
    "(reverse-continue, reverse-stepi, ...: the replay runs again from the\n"
    "nearest checkpoint to the last stop before the current point); writes are\n"
    "refused. monitor when (the replay's position), goto INSN, goto-chunk CPU:N,\n"
    "chunks, who-wrote ADDR [LEN] (the last instruction that wrote those bytes),\n"
    "checkpoint, checkpoints, restart N; monitor help lists them.\n"
    "Continuing to the end runs every check of rnr replay, prints 'replay\n"
    "verified' or the difference and stops before the process exits (the\n"
    "reverse commands work from there); one more continue ends it.\n"
    "docs/debugging.md has a worked example.\n"
    "  --format F       the final log to replay (default stitched)\n"
    "  --program PATH   the program to run (default: the bundle's copy)\n"
    "  --checkpoint-interval N  instructions between the checkpoints that reverse\n"
    "                   execution restarts from (default 5000000; 0: none, only\n"
    "                   the start and monitor checkpoint)\n"
    "  --checkpoints K  automatic checkpoints kept at most, older ones thinned out\n"
    "                   (1 to 500, default 64)\n"
    "Exit status: gdb's; 2 bad usage or a bad bundle.\n";

static int parse_kind(const char *cmd, const char *format)
{
    int kind = cli_log_kind(format);
    if (kind != RNR_LOG_MAXPAR && kind != RNR_LOG_STITCHED && kind != RNR_LOG_SERIAL &&
        kind != RNR_LOG_STSERIAL && kind != RNR_LOG_ADAPTIVE)
        return cli_usage(cmd, "--format wants maxpar, stitched, serial, stserial or adaptive, "
                         "not '%s'", format), -1;
    return kind;
}

int cli_checkpoint_opt(const char *cmd, int argc, char **argv, int *i, uint64_t *interval,
                       unsigned *keep)
{
    const char *a = argv[*i];
    int is_interval = strcmp(a, "--checkpoint-interval") == 0;
    if (!is_interval && strcmp(a, "--checkpoints") != 0)
        return 0;
    if (*i + 1 >= argc)
        return cli_usage(cmd, "option %s needs an argument", a), -1;
    uint64_t v;
    if (cli_parse_u64(cmd, a, argv[++*i], is_interval ? 0 : 1,
                      is_interval ? UINT64_MAX / 2 : DBG_KEEP_MAX, &v) < 0)
        return -1;
    if (is_interval)
        *interval = v;
    else
        *keep = (unsigned)v;
    return 1;
}

int cli_gdb_serve(const char *dir, int kind, const char *program, int quiet, const char *where,
                  uint64_t interval, unsigned keep)
{
    char host[RNR_NET_HOST_MAX], err[8192];
    unsigned port;
    if (rnr_net_split(where, RNR_NET_LOOPBACK, host, &port, err, sizeof err) < 0)
        return cli_usage("replay", "--gdb %s", err);
    dbg_options o = {dir, (uint32_t)kind, program, quiet ? NULL : stdout, "rnr replay", interval,
                     keep};
    dbg *d = dbg_open(&o, err, sizeof err);
    if (!d)
        return cli_bad_input("replay", "%s", err);
    unsigned bound;
    int fd = rnr_net_listen(host, port, &bound, err, sizeof err);
    if (fd < 0) {
        dbg_free(d);
        return cli_bad_input("replay", "--gdb %s", err);
    }
    const char *lb = strchr(host, ':') ? "[" : "", *rb = *lb ? "]" : "";
    fprintf(stderr, "rnr replay: listening for gdb on %s%s%s:%u (gdb-multiarch %s -ex 'target "
            "remote %s%s%s:%u')\n", lb, host, rb, bound, dbg_program(d), lb, host, rb, bound);
    fflush(stderr);
    int rc = dbg_serve(d, fd, 0, err, sizeof err);
    if (rc == 2)
        fprintf(stderr, "rnr replay: %s\n", err);
    dbg_free(d);
    return rc;
}

int cmd_debug(int argc, char **argv)
{
    const char *dir = NULL, *format = "stitched", *program = NULL;
    int gdb_args = argc;
    uint64_t interval = DBG_INTERVAL_DEFAULT;
    unsigned keep = DBG_KEEP_DEFAULT;
    static const char *const valued[] = {"--format", "--program", "--checkpoint-interval",
                                         "--checkpoints", NULL};
    cli_normalize(valued, 0, &argc, &argv);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int ck = strcmp(a, "--") == 0 ? 0 : cli_checkpoint_opt("debug", argc, argv, &i, &interval,
                                                                &keep);
        if (ck < 0)
            return RNR_EXIT_USAGE;
        if (ck)
            continue;
        if (strcmp(a, "--") == 0) {
            gdb_args = i + 1;
            break;
        }
        if (a[0] != '-' || !a[1]) {
            if (dir)
                return cli_usage("debug", "too many arguments (gdb's go after '--')");
            dir = a;
        } else if (strcmp(a, "--format") == 0 || strcmp(a, "--program") == 0) {
            if (i + 1 >= argc)
                return cli_usage("debug", "option %s needs an argument", a);
            if (a[2] == 'f')
                format = argv[++i];
            else
                program = argv[++i];
        } else {
            return cli_usage("debug", "unknown option '%s'", a);
        }
    }
    if (gdb_args > argc)
        gdb_args = argc;
    if (!dir)
        return cli_usage("debug", "missing DIR");
    int kind = parse_kind("debug", format);
    if (kind < 0)
        return RNR_EXIT_USAGE;
    char err[8192];
    dbg_options o = {dir, (uint32_t)kind, program, stdout, "rnr debug", interval, keep};
    dbg *d = dbg_open(&o, err, sizeof err);
    if (!d)
        return cli_bad_input("debug", "%s", err);
    unsigned port;
    int fd = rnr_net_listen(RNR_NET_LOOPBACK, 0, &port, err, sizeof err);
    if (fd < 0) {
        dbg_free(d);
        return cli_bad_input("debug", "%s", err);
    }
    const char *gdb = getenv("RNR_GDB");
    if (!gdb || !*gdb)
        gdb = "gdb-multiarch";
    char target[64];
    snprintf(target, sizeof target, "target remote 127.0.0.1:%u", port);
    size_t n = 0, cap = (size_t)(argc - gdb_args) + 12;
    char **av = calloc(cap, sizeof *av);
    if (!av)
        abort();
    av[n++] = (char *)gdb;
    av[n++] = "-q";
    av[n++] = "-ex";
    av[n++] = "set architecture riscv:rv64";
    av[n++] = "-ex";
    av[n++] = target;
    av[n++] = (char *)dbg_program(d);
    for (int i = gdb_args; i < argc; i++)
        av[n++] = argv[i];
    av[n] = NULL;
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        free(av);
        close(fd);
        dbg_free(d);
        return cli_bad_input("debug", "fork: %s", strerror(errno));
    }
    if (pid == 0) {
        close(fd);
        execvp(gdb, av);
        fprintf(stderr, "rnr debug: %s: %s\n", gdb, strerror(errno));
        _exit(127);
    }
    free(av);
    /* Ctrl-C is gdb's: it interrupts the replay through the protocol. */
    signal(SIGINT, SIG_IGN);
    int rc = dbg_serve(d, fd, pid, err, sizeof err);
    if (rc == 2)
        fprintf(stderr, "rnr debug: %s\n", err);
    dbg_free(d);
    int status;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    signal(SIGINT, SIG_DFL);
    if (WIFEXITED(status))
        return WEXITSTATUS(status);
    return 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}
