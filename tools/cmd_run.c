/* tools/cmd_run.c: `rnr run [machine options] -- PROG [ARGS...]`: runs a
 * static riscv64 program on the simulated multicore without recording. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "driver/driver.h"
#include "formats/digest.h"
#include "tools/cli.h"

extern char **environ;

const char cmd_run_help[] =
    "usage: rnr run [options] [--] PROG [ARGS...]\n"
    "Runs the static riscv64 Linux program PROG (with ARGS and the current\n"
    "environment) on the simulated multicore, without recording. The guest's\n"
    "stdin, stdout and stderr are rnr's; rnr exits with the guest's exit\n"
    "status, or 128+N with one line on stderr when signal N killed it, or\n"
    "124 with a report when every thread is blocked forever (deadlock).\n"
    "\n"
    "Machine options:\n"
    "  -n CPUS            simulated cores, 1..64 (default 8)\n"
    "  --seed N           seed of the interleaving and of random inputs (default 1)\n"
    "  --quantum CYCLES   mean preemption time slice (default 100000; 0 = none)\n"
    "  --msp CYCLES, --clusters K, --sig exact|bloom:BITS, --chunk-max INSNS\n"
    "                     recorder settings, accepted and checked for later use\n"
    "Other options:\n"
    "  --allow-write DIR  the guest may create and write files under DIR\n"
    "                     (repeatable; without it host files are read-only)\n"
    "  --input-log FILE   write the run's nondeterministic inputs (an input log)\n"
    "  --stats            print instructions per core, cycles, bus transactions,\n"
    "                     the final-state digest, wall time and MIPS on stderr\n"
    "The same program, arguments, input files, options and seed give the same\n"
    "run: identical output, instruction counts and final state.\n";

static int parse_sig(const char *s)
{
    if (strcmp(s, "exact") == 0)
        return 0;
    if (strncmp(s, "bloom:", 6) == 0) {
        char *end;
        unsigned long long bits = strtoull(s + 6, &end, 10);
        if (s[6] && !*end && bits >= 16 && bits <= (1ull << 24) && !(bits & (bits - 1)))
            return 0;
    }
    return -1;
}

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
    drv_config cfg;
    drv_config_default(&cfg);
    const char **allow = calloc((size_t)argc, sizeof *allow);
    if (!allow)
        return cli_bad_input("run", "out of memory");
    size_t nallow = 0;
    int stats = 0, i = 1;
    uint64_t v;
    int rc = RNR_EXIT_USAGE;
#define NEED_ARG()                                                     \
    do {                                                               \
        if (i + 1 >= argc) {                                           \
            cli_usage("run", "option %s needs an argument", argv[i]);  \
            goto out;                                                  \
        }                                                              \
    } while (0)
    for (; i < argc; i++) {
        const char *o = argv[i];
        if (strcmp(o, "--") == 0) {
            i++;
            break;
        }
        if (o[0] != '-' || o[1] == 0)
            break;
        if (strcmp(o, "-n") == 0 || strcmp(o, "--cpus") == 0) {
            NEED_ARG();
            if (cli_parse_u64("run", o, argv[++i], 1, RRU_MAX_CORES, &v) < 0)
                goto out;
            cfg.machine.cores = (unsigned)v;
        } else if (strcmp(o, "--seed") == 0) {
            NEED_ARG();
            if (cli_parse_u64("run", o, argv[++i], 0, UINT64_MAX, &v) < 0)
                goto out;
            cfg.machine.seed = v;
        } else if (strcmp(o, "--quantum") == 0) {
            NEED_ARG();
            if (cli_parse_u64("run", o, argv[++i], 0, UINT64_MAX / 4, &v) < 0)
                goto out;
            cfg.quantum = v;
        } else if (strcmp(o, "--msp") == 0) {
            NEED_ARG();
            if (cli_parse_u64("run", o, argv[++i], 1, UINT64_MAX / 4, &cfg.msp) < 0)
                goto out;
        } else if (strcmp(o, "--clusters") == 0) {
            NEED_ARG();
            if (cli_parse_u64("run", o, argv[++i], 2, 64, &cfg.clusters) < 0)
                goto out;
        } else if (strcmp(o, "--chunk-max") == 0) {
            NEED_ARG();
            if (cli_parse_u64("run", o, argv[++i], 1, UINT64_MAX / 4, &cfg.chunk_max) < 0)
                goto out;
        } else if (strcmp(o, "--sig") == 0) {
            NEED_ARG();
            if (parse_sig(argv[++i]) < 0) {
                cli_usage("run", "--sig wants 'exact' or 'bloom:BITS' (BITS a power of two, "
                                 "16..16777216), not '%s'", argv[i]);
                goto out;
            }
            cfg.sig = argv[i];
        } else if (strcmp(o, "--allow-write") == 0) {
            NEED_ARG();
            allow[nallow++] = argv[++i];
        } else if (strcmp(o, "--input-log") == 0) {
            NEED_ARG();
            cfg.input_log = argv[++i];
        } else if (strcmp(o, "--stats") == 0) {
            stats = 1;
        } else {
            cli_usage("run", "unknown option '%s'", o);
            goto out;
        }
    }
#undef NEED_ARG
    if (i >= argc) {
        cli_usage("run", "missing PROG");
        goto out;
    }
    cfg.allow_write = allow;
    cfg.n_allow_write = nallow;
    size_t envc = 0;
    while (environ[envc])
        envc++;
    char err[512];
    drv_proc *p = drv_proc_new(&cfg, argv[i], (const char *const *)argv + i, (size_t)(argc - i),
                               (const char *const *)environ, envc, err, sizeof err);
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
    drv_proc_free(p);
out:
    free(allow);
    return rc;
}
