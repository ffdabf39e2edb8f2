/* tools/cmd_record.c: `rnr record`: parses the options of a recording
 * session (recorder/session.h), runs it and prints its summary. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "recorder/session.h"
#include "backend/adaptive.h"
#include "recorder/stream.h"
#include "rru/alloc.h"
#include "tools/cli.h"
#include "tools/guest_env.h"
#include "tools/machine_opts.h"

const char cmd_record_help[] =
    "usage: rnr record [options] [-o DIR] [--] PROG [ARGS...]\n"
    "Records the static riscv64 Linux program PROG (with ARGS and the current\n"
    "environment, or the one --env, --unset and --env-clear make) on the\n"
    "simulated multicore with a Record-and-Replay Unit on every core, and\n"
    "writes the recording bundle DIR: manifest, initial.log, input.log, stdout,\n"
    "stderr and program (a copy of PROG). Without -o, DIR is PROG-N (N the\n"
    "next free number) in the directory of bundles, $RNR_BUNDLE_DIR or else\n"
    "./rnr-bundles, whose symbolic link 'latest' then points at it: `rnr ls`\n"
    "lists that directory, and replay, stats, verify, info and backend read\n"
    "'latest' as that link's bundle. DIR must not exist or be an empty\n"
    "directory; anything else is refused and left untouched, and of several\n"
    "recorders given one DIR at once only one proceeds. Every file is written\n"
    "under a temporary name and put in place at the end; the manifest's status\n"
    "(recording, then complete, interrupted: REASON or incomplete: REASON)\n"
    "turns final last. The guest's stdout and stderr also go to rnr's. With\n"
    "the same options and seed, the recording executes exactly what `rnr run`\n"
    "executes.\n"
    "Exit status, with --exit-code guest (the default): the guest's, as rnr run\n"
    "(its exit code, 128 + a fatal signal, 124 on a deadlock); with --exit-code\n"
    "rnr: 0 once the bundle is finished whatever the guest's status (which the\n"
    "summary and the manifest's exit-status give). 2: bad usage, or the\n"
    "recording could not be made or finished.\n"
    "SIGINT, SIGTERM or SIGHUP stop the guest; the bundle is finished (status\n"
    "interrupted: SIGNAL, replayable) and rnr exits 128 + the signal. A second\n"
    "signal while the bundle is finished says what is being finished; a third\n"
    "abandons it (status abandoned) at once. A limit reached ends the recording\n"
    "the same way (status interrupted: LIMIT), exit 152 (time, instructions)\n"
    "or 153 (log bytes), as Linux's SIGXCPU and SIGXFSZ.\n"
    "A bundle carries the environment the guest ran with (rnr info DIR shows\n"
    "it): choose it with --env-clear, --env and --unset before sharing one.\n"
    "The options end at PROG (or at --): the arguments after it are the\n"
    "guest's. A value may be attached: -n8, -oDIR, --seed=3.\n"
    "\n"
    "Options:\n"
    "  -o DIR             the bundle to write (default: the directory of bundles)\n"
    "  --exit-code guest|rnr  exit with the guest's status (default) or 0 on\n"
    "                     success\n"
    "  --backend          also run the backend: MaxPar on the fly while the\n"
    "                     guest runs, then Stitched, Serial and StSerial\n"
    "  --truth            write truth.deps: every line-level conflict between\n"
    "                     threads (the soundness oracle of rnr verify; slow)\n"
    "  --no-pack          do not copy PROG into the bundle\n"
    "  --check-every N|chunk  a CHECK record (pc and register hash) in the\n"
    "                     input log once a thread ran N instructions since\n"
    "                     its previous one (default 100000); 0 or 'chunk':\n"
    "                     at every chunk end, which locates a divergence to\n"
    "                     its chunk, at a larger input log (docs/replayer.md)\n"
    "  --initial-log PATH also stream the initial log to PATH ('-' = stdout,\n"
    "                     which then carries no guest output; a FIFO works):\n"
    "                     e.g. `rnr record --initial-log - ... | rnr maxpar - -`\n"
    "  --stream HOST:PORT|-  also send, while the guest runs, everything a replay\n"
    "                     needs (manifest, program, logs, output, a final log\n"
    "                     made on the fly) to `rnr follow` listening at\n"
    "                     HOST:PORT, or to stdout ('-', which then carries no\n"
    "                     guest output): `rnr record --stream - ... | rnr follow -`\n"
    "                     (docs/online.md). The guest never waits for the\n"
    "                     follower: past --stream-buffer the stream is dropped\n"
    "                     with a warning; the bundle is written in full\n"
    "  --stream-format maxpar|stitched|adaptive  the final log streamed (default\n"
    "                     maxpar; stitched: fewer bytes, less parallel replay;\n"
    "                     adaptive: MaxPar or Stitched by phase, as --adaptive says)\n"
    "  --adaptive POLICY  with --stream-format adaptive: lag:CHUNKS (MaxPar while\n"
    "                     the follower is more than CHUNKS final-log chunks\n"
    "                     behind by its acknowledgements; TCP only),\n"
    "                     bandwidth:BYTES_PER_S[:PHASE_INSNS[:HZ]] (MaxPar where\n"
    "                     its bytes fit the budget; each phase is held until it\n"
    "                     is over) or phases:FILE (docs/online.md)\n"
    "  --stream-buffer B  bytes queued for a slow follower at most (K, M, G;\n"
    "                     default 64M)\n"
    GUEST_ENV_HELP
    "  --max-instructions N  stop after about N instructions (all threads)\n"
    "  --max-seconds S    stop after S seconds of host wall time\n"
    "  --max-log-bytes B  stop once logs and output hold B bytes (K, M, G)\n"
    "  --progress         progress on stderr (default: when it is a terminal)\n"
    "  --quiet            no progress, no summary\n"
    MACHINE_OPTS_HELP;

/* The session a signal handler interrupts. */
static recording *volatile active;

static void on_signal(int sig)
{
    recording *r = active;
    if (r)
        recording_interrupt(r, sig);
}

/* A progress line is on stderr (cleared before the guest's output). */
static int progress_drawn;

static void clear_progress(void *ctx)
{
    (void)ctx;
    if (progress_drawn) {
        fputs("\r\033[K", stderr);
        fflush(stderr);
        progress_drawn = 0;
    }
}

static void on_progress(void *ctx, const recording_progress *p)
{
    (void)ctx;
    progress_drawn = 1;
    fprintf(stderr, "\rrnr record: %" PRIu64 " instruction%s, %" PRIu64 " chunk%s, %.1f MIPS, "
            "%" PRIu64 " KiB of initial log",
            p->instructions, cli_s(p->instructions), p->chunks, cli_s(p->chunks), p->seconds > 0 ? (double)p->instructions / p->seconds / 1e6 : 0.0,
            p->initial_log_bytes / 1024);
    if (p->streaming && p->stream_dropped)
        fprintf(stderr, ", stream dropped");
    else if (p->streaming && p->stream_acks)
        fprintf(stderr, ", stream %" PRIu64 " KiB, follower %" PRIu64 " chunk%s behind",
                p->stream_bytes / 1024, p->stream_chunks - p->stream_acked,
                cli_s(p->stream_chunks - p->stream_acked));
    else if (p->streaming)
        fprintf(stderr, ", stream %" PRIu64 " KiB", p->stream_bytes / 1024);
    fputs("   ", stderr);
    fflush(stderr);
}

int cmd_record(int argc, char **argv)
{
    static const char *const valued[] = {MACHINE_OPTS_VALUED, "-o", "--initial-log", "--env",
                                         "--unset", "--max-instructions", "--max-seconds",
                                         "--max-log-bytes", "--exit-code", "--check-every", "--stream",
                                         "--stream-format", "--stream-buffer", "--adaptive", NULL};
    cli_normalize(valued, CLI_STOP_AT_OPERAND, &argc, &argv);
    recording_options ro;
    memset(&ro, 0, sizeof ro);
    machine_opts mo;
    machine_opts_init(&mo, &ro.cfg, argc);
    int quiet = 0, i = 1, rc = RNR_EXIT_USAGE, exit_rnr = 0, stream_format_given = 0;
    int progress = isatty(STDERR_FILENO);
    ro.pack = 1;
    guest_env env;
    guest_env_init(&env, argc);
    recording *r = NULL;
    adaptive_policy policy;
    memset(&policy, 0, sizeof policy);
    const char *policy_text = NULL;
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
        m = guest_env_parse(&env, "record", argc, argv, &i);
        if (m < 0)
            goto out;
        if (m > 0)
            continue;
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            fputs(cmd_record_help, stdout);
            rc = RNR_EXIT_OK;
            goto out;
        } else if (strcmp(a, "--backend") == 0) {
            ro.backend = 1;
        } else if (strcmp(a, "--truth") == 0) {
            ro.truth = 1;
        } else if (strcmp(a, "--no-pack") == 0) {
            ro.pack = 0;
        } else if (strcmp(a, "--progress") == 0) {
            progress = 1;
        } else if (strcmp(a, "--quiet") == 0) {
            quiet = 1;
        } else if (strcmp(a, "-o") == 0 || strcmp(a, "--initial-log") == 0 ||
                   strcmp(a, "--max-instructions") == 0 || strcmp(a, "--max-seconds") == 0 ||
                   strcmp(a, "--max-log-bytes") == 0 || strcmp(a, "--exit-code") == 0 ||
                   strcmp(a, "--check-every") == 0 || strcmp(a, "--stream") == 0 ||
                   strcmp(a, "--stream-format") == 0 || strcmp(a, "--stream-buffer") == 0 ||
                   strcmp(a, "--adaptive") == 0) {
            if (i + 1 >= argc) {
                cli_usage("record", "option %s needs an argument", a);
                goto out;
            }
            const char *v = argv[++i];
            if (strcmp(a, "-o") == 0) {
                ro.dir = v;
            } else if (strcmp(a, "--exit-code") == 0) {
                if (cli_exit_code_mode("record", v, &exit_rnr) < 0)
                    goto out;
            } else if (strcmp(a, "--check-every") == 0) {
                char *end = NULL;
                errno = 0;
                if (strcmp(v, "chunk") == 0) {
                    ro.cfg.check_every = 0;
                } else if (v[0] < '0' || v[0] > '9' ||
                           (ro.cfg.check_every = strtoull(v, &end, 10), errno || *end) ||
                           ro.cfg.check_every > (1ull << 40)) {
                    cli_usage("record", "--check-every wants a number of instructions "
                              "(0 to 2^40) or 'chunk', not '%s'", v);
                    goto out;
                }
            } else if (strcmp(a, "--initial-log") == 0) {
                ro.initial_stream = v;
            } else if (strcmp(a, "--stream") == 0) {
                ro.stream = v;
            } else if (strcmp(a, "--stream-format") == 0) {
                if (strcasecmp(v, "maxpar") == 0) {
                    ro.stream_format = REC_STREAM_MAXPAR;
                } else if (strcasecmp(v, "stitched") == 0) {
                    ro.stream_format = REC_STREAM_STITCHED;
                } else if (strcasecmp(v, "adaptive") == 0) {
                    ro.stream_format = REC_STREAM_ADAPTIVE;
                } else {
                    cli_usage("record", "--stream-format wants maxpar, stitched or adaptive, not "
                              "'%s'", v);
                    goto out;
                }
                stream_format_given = 1;
            } else if (strcmp(a, "--adaptive") == 0) {
                char perr[1024];
                adaptive_policy_free(&policy);
                if (adaptive_policy_parse(v, &policy, perr, sizeof perr) < 0) {
                    cli_usage("record", "--adaptive %s", perr);
                    goto out;
                }
                policy_text = v;
            } else if (strcmp(a, "--stream-buffer") == 0) {
                if (cli_parse_bytes("record", a, v, 4096, UINT64_MAX, &ro.stream_buffer) < 0)
                    goto out;
            } else if (strcmp(a, "--max-instructions") == 0) {
                if (cli_parse_u64("record", a, v, 1, UINT64_MAX, &ro.max_instructions) < 0)
                    goto out;
            } else if (strcmp(a, "--max-seconds") == 0) {
                char *end;
                ro.max_seconds = strtod(v, &end);
                if (end == v || *end || !(ro.max_seconds > 0) || ro.max_seconds > 1e9) {
                    cli_usage("record", "--max-seconds: '%s' is not a number of seconds > 0", v);
                    goto out;
                }
            } else if (cli_parse_bytes("record", a, v, 1, UINT64_MAX, &ro.max_log_bytes) < 0) {
                goto out;
            }
        } else {
            cli_usage("record", "unknown option '%s'", a);
            goto out;
        }
    }
    if (quiet)
        progress = 0;
    if (ro.stream && ro.initial_stream && strcmp(ro.stream, "-") == 0 &&
        strcmp(ro.initial_stream, "-") == 0) {
        cli_usage("record", "--stream - and --initial-log - both want stdout");
        goto out;
    }
    if ((stream_format_given || ro.stream_buffer) && !ro.stream) {
        cli_usage("record", "--stream-format and --stream-buffer need --stream");
        goto out;
    }
    if (ro.stream_format == REC_STREAM_ADAPTIVE && !policy_text) {
        cli_usage("record", "--stream-format adaptive needs --adaptive POLICY (lag:CHUNKS, "
                  "bandwidth:BYTES_PER_S or phases:FILE)");
        goto out;
    }
    if (policy_text && ro.stream_format != REC_STREAM_ADAPTIVE) {
        cli_usage("record", "--adaptive %s needs --stream HOST:PORT|- --stream-format adaptive "
                  "(for a recording already made: rnr backend --adaptive)", policy_text);
        goto out;
    }
    if (policy_text && policy.kind == ADAPTIVE_LAG && strcmp(ro.stream, "-") == 0) {
        cli_usage("record", "--adaptive %s decides by the follower's acknowledgements, which a "
                  "pipe (--stream -) does not carry: use --stream HOST:PORT", policy_text);
        goto out;
    }
    if (policy_text)
        ro.stream_policy = &policy;
    /* A follower that goes away is a warning, not a signal that kills rnr. */
    if (ro.stream)
        signal(SIGPIPE, SIG_IGN);
    if (i >= argc) {
        cli_usage("record", "missing PROG");
        goto out;
    }
    guest_env_build(&env);
    char err[8448];
    ro.progress_passes = progress;
    if (progress) {
        ro.progress = on_progress;
        ro.progress_clear = clear_progress;
        ro.ctx = NULL;
    }
    r = recording_open(&ro, argv[i], (const char *const *)argv + i, (size_t)(argc - i),
                       (const char *const *)env.v, env.n, err, sizeof err);
    if (!r) {
        rc = cli_bad_input("record", "%s", err);
        goto out;
    }
    struct sigaction sa, old[3];
    static const int sigs[3] = { SIGINT, SIGTERM, SIGHUP };
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sa.sa_flags = SA_RESTART;   /* the finishing's writes go on after a signal */
    sigemptyset(&sa.sa_mask);
    active = r;
    for (int k = 0; k < 3; k++)
        sigaction(sigs[k], &sa, &old[k]);
    recording_result res;
    int ok = recording_run(r, &res, err, sizeof err);
    if (progress)
        fputs("\r\033[K", stderr);
    for (int k = 0; k < 3; k++)
        sigaction(sigs[k], &old[k], NULL);
    active = NULL;
    if (ok < 0) {
        fprintf(stderr, "rnr record: %s\n", err);
        goto out;
    }
    if (!quiet)
        fprintf(stderr,
                "rnr record: %s: %s: %" PRIu64 " instruction%s, %" PRIu64 " thread%s, %" PRIu64
                " chunk%s, %.3f s, %.1f MIPS, guest exit status %d\n",
                recording_dir(r), res.status, res.instructions, cli_s(res.instructions), res.threads,
                cli_s(res.threads), res.chunks, cli_s(res.chunks), res.seconds,
                res.seconds > 0 ? (double)res.instructions / res.seconds / 1e6 : 0.0,
                res.exit_status);
    /* --exit-code rnr: an interruption's or a limit's status is rnr's own. */
    rc = exit_rnr && res.end != DRV_INTERRUPTED ? RNR_EXIT_OK : res.exit_status;
out:
    recording_free(r);
    adaptive_policy_free(&policy);
    guest_env_free(&env);
    machine_opts_free(&mo);
    return rc;
}
