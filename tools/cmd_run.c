/* tools/cmd_run.c: `rnr run [machine options] -- PROG [ARGS...]`: runs a
 * static riscv64 program on the simulated multicore without recording. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "driver/driver.h"
#include "formats/digest.h"
#include "tools/cli.h"
#include "tools/guest_env.h"
#include "tools/machine_opts.h"

const char cmd_run_help[] =
    "usage: rnr run [options] [--] PROG [ARGS...]\n"
    "Runs the static riscv64 Linux program PROG (with ARGS and the current\n"
    "environment, or the one --env, --unset and --env-clear make) on the\n"
    "simulated multicore, without recording. The guest's\n"
    "stdin, stdout and stderr are rnr's. Exit status, with --exit-code guest\n"
    "(the default): the guest's exit status, or 128+N with one line on stderr\n"
    "when signal N killed it, or 124 with a report when every thread is\n"
    "blocked forever (deadlock); with --exit-code rnr: 0 whatever the guest's\n"
    "status, which one line on stderr gives. 2: bad usage, a program that\n"
    "cannot be loaded, or a simulation that failed.\n"
    "The options end at PROG (or at --): the arguments after it are the\n"
    "guest's. A value may be attached: -n8, --seed=3, --input-log=FILE.\n"
    "\n"
    "Options:\n"
    "  --input-log FILE   write the run's nondeterministic inputs (an input log)\n"
    "  --exit-code guest|rnr  exit with the guest's status (default) or 0 on\n"
    "                     success\n"
    "  --stats            print instructions per core, cycles, bus transactions,\n"
    "                     the final-state digest, wall time and MIPS on stderr\n"
    GUEST_ENV_HELP
    MACHINE_OPTS_HELP
    "The RRU options are checked and otherwise unused by rnr run.\n"
    "The same program, arguments, environment, input files, options and seed\n"
    "give the same run: identical output, instruction counts and final state;\n"
    "`rnr record` with the same options executes exactly this run. The\n"
    "environment's size moves the guest's stack, so a run only repeats with the\n"
    "same environment: --env-clear and --env fix it whatever the caller's is.\n";

static void print_stats(const drv_proc *p)
{
    drv_stats s;
    drv_proc_stats(p, &s);
    uint8_t digest[32];
    char hex[RNR_SHA256_HEX];
    drv_proc_digest(p, digest);
    rnr_hex(digest, 32, hex);
    fprintf(stderr, "cores: %u\n", s.cores);
    for (unsigned c = 0; c < s.cores; c++)
        fprintf(stderr, "core.%u: instructions %" PRIu64 " cycles %" PRIu64 "\n", c,
                s.retired[c], s.clock[c]);
    fprintf(stderr, "instructions: %" PRIu64 "\n", s.instructions);
    fprintf(stderr, "cycles: %" PRIu64 "\n", s.cycles);
    fprintf(stderr, "bus_transactions: %" PRIu64 " (%" PRIu64 " shared, %" PRIu64 " exclusive)\n",
            s.bus_reads + s.bus_exclusive, s.bus_reads, s.bus_exclusive);
    fprintf(stderr, "threads: %" PRIu64 "\n", s.threads);
    for (size_t t = 0; t < drv_proc_threads(p); t++) {
        uint32_t tid;
        uint64_t n;
        drv_proc_thread(p, t, &tid, &n);
        fprintf(stderr, "thread.%zu: tid %u instructions %" PRIu64 "\n", t, tid, n);
    }
    fprintf(stderr, "syscalls: %" PRIu64 "\n", s.syscalls);
    fprintf(stderr, "context_switches: %" PRIu64 "\n", s.context_switches);
    fprintf(stderr, "page_faults: %" PRIu64 "\n", s.page_faults);
    fprintf(stderr, "guest_pages: %" PRIu64 "\n", s.guest_pages);
    fprintf(stderr, "digest: %s\n", hex);
    fprintf(stderr, "wall_seconds: %.3f\n", s.wall_seconds);
    fprintf(stderr, "mips: %.2f\n",
            s.wall_seconds > 0 ? (double)s.instructions / s.wall_seconds / 1e6 : 0.0);
}

int cmd_run(int argc, char **argv)
{
    static const char *const valued[] = {MACHINE_OPTS_VALUED, "--input-log", "--env", "--unset",
                                         "--exit-code", NULL};
    cli_normalize(valued, CLI_STOP_AT_OPERAND, &argc, &argv);
    drv_config cfg;
    machine_opts mo;
    machine_opts_init(&mo, &cfg, argc);
    int stats = 0, i = 1, exit_rnr = 0;
    int rc = RNR_EXIT_USAGE;
    guest_env env;
    guest_env_init(&env, argc);
    for (; i < argc; i++) {
        const char *o = argv[i];
        if (strcmp(o, "--") == 0) {
            i++;
            break;
        }
        if (o[0] != '-' || o[1] == 0)
            break;
        int m = machine_opts_parse(&mo, "run", argc, argv, &i);
        if (m < 0)
            goto out;
        if (m > 0)
            continue;
        m = guest_env_parse(&env, "run", argc, argv, &i);
        if (m < 0)
            goto out;
        if (m > 0)
            continue;
        if (strcmp(o, "--help") == 0 || strcmp(o, "-h") == 0) {
            fputs(cmd_run_help, stdout);
            rc = RNR_EXIT_OK;
            goto out;
        } else if (strcmp(o, "--input-log") == 0) {
            if (i + 1 >= argc) {
                cli_usage("run", "option %s needs an argument", o);
                goto out;
            }
            cfg.input_log = argv[++i];
        } else if (strcmp(o, "--exit-code") == 0) {
            if (i + 1 >= argc) {
                cli_usage("run", "option %s needs an argument", o);
                goto out;
            }
            if (cli_exit_code_mode("run", argv[++i], &exit_rnr) < 0)
                goto out;
        } else if (strcmp(o, "--stats") == 0) {
            stats = 1;
        } else {
            cli_usage("run", "unknown option '%s'", o);
            goto out;
        }
    }
    if (i >= argc) {
        cli_usage("run", "missing PROG");
        goto out;
    }
    guest_env_build(&env);
    char err[512];
    drv_proc *p = drv_proc_new(&cfg, argv[i], (const char *const *)argv + i, (size_t)(argc - i),
                               (const char *const *)env.v, env.n, err, sizeof err);
    if (!p) {
        rc = cli_bad_input("run", "%s", err);
        goto out;
    }
    fflush(stdout);
    drv_result r;
    int ok = drv_proc_run(p, &r);
    if (r.message)
        fprintf(stderr, "rnr run: %s\n", r.message);
    if (stats)
        print_stats(p);
    if (ok < 0)
        rc = RNR_EXIT_USAGE;
    else if (r.end == DRV_EXITED)
        rc = r.status;
    else if (r.end == DRV_SIGNALED)
        rc = 128 + r.status;
    else
        rc = DRV_EXIT_DEADLOCK;
    if (exit_rnr && ok >= 0) {
        fprintf(stderr, "rnr run: guest exit status %d\n", rc);
        rc = RNR_EXIT_OK;
    }
    drv_proc_free(p);
out:
    guest_env_free(&env);
    machine_opts_free(&mo);
    return rc;
}
