/* tools/cmd_synth.c: `rnr synth`, a synthetic recording bundle from a
 * random execution that drives the RRU model (backend/synth.h). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <unistd.h>

#include "backend/passes.h"
#include "backend/synth.h"
#include "tools/cli.h"

const char cmd_synth_help[] =
    "usage: rnr synth [options] -o DIR\n"
    "Runs a seeded random multithreaded execution on a simulated multicore\n"
    "whose cores carry the RRU model, and writes a recording bundle: DIR/manifest,\n"
    "DIR/initial.log (what the RRUs dumped) and DIR/truth.deps (the ground-truth\n"
    "line-level dependences, docs/backend.md). Same options, same bundle.\n"
    "Machine and RRU:\n"
    "  -n CPUS            cores (1..64, default 8)\n"
    "  --seed N           random seed (default 1)\n"
    "  --msp CYCLES       maximum silence period (default 20000)\n"
    "  --clusters K       signature window in clusters (2..64, default 4)\n"
    "  --sig exact|bloom:BITS   signatures (default exact)\n"
    "  --chunk-max INSNS  chunk size limit (default 10000)\n"
    "  --cluster-chunks N chunks per cluster (default 4)\n"
    "Program:\n"
    "  --threads T        threads (default: one per core)\n"
    "  --insns N          instructions per thread (default 200000)\n"
    "  --sharing LEVEL    low, medium, high, or shared accesses per 1000\n"
    "                     instructions (default medium = 2)\n"
    "  --lines N          shared cache lines (default 512)\n"
    "  --write-frac F     fraction of writes (default 0.3)\n"
    "  --os-cpus N        cores that run no thread, only OS activity (default 0)\n"
    "  --os-rate R        OS accesses per 1000 cycles on a core without a thread\n"
    "                     (default 0.2)\n"
    "  --quantum CYCLES   mean time slice before preemption (default 0: none)\n"
    "  --block-rate P     chance per access that a thread blocks (default 0)\n"
    "  --syscall-rate R   syscalls per 1000 instructions (default 0.02)\n"
    "Driver:\n"
    "  --drain eager|adversarial   drain RRU buffers at once, or at random\n"
    "                     times up to the bounded-silence deadline (default)\n"
    "  --no-truth         do not write truth.deps\n"
    "  --progress         report progress on stderr (default: when it is a terminal)\n";

static int parse_double(const char *opt, const char *s, double lo, double hi, double *out)
{
    char *end;
    double v = strtod(s, &end);
    if (!*s || *end || !(v >= lo && v <= hi)) {
        cli_usage("synth", "%s wants a number from %g to %g, not '%s'", opt, lo, hi, s);
        return -1;
    }
    *out = v;
    return 0;
}

int cmd_synth(int argc, char **argv)
{
    static const char *const valued[] = {
        "-o", "-n", "--seed", "--msp", "--clusters", "--sig", "--chunk-max", "--cluster-chunks",
        "--threads", "--insns", "--sharing", "--lines", "--write-frac", "--os-cpus", "--os-rate",
        "--quantum", "--block-rate", "--syscall-rate", "--drain", NULL};
    cli_normalize(valued, 0, &argc, &argv);
    synth_config c;
    uint64_t cpus = 8;
    /* First pass: the core count sets the defaults of everything else. */
    for (int i = 1; i + 1 < argc; i++)
        if (strcmp(argv[i], "-n") == 0 && cli_parse_u64("synth", "-n", argv[i + 1], 1, SYNTH_MAX_CPUS, &cpus) < 0)
            return RNR_EXIT_USAGE;
    synth_config_default(&c, (uint32_t)cpus);
    const char *dir = NULL;
    int truth = 1, threads_set = 0, progress = isatty(STDERR_FILENO);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--no-truth") == 0) {
            truth = 0;
            continue;
        }
        if (strcmp(a, "--progress") == 0) {
            progress = 1;
            continue;
        }
        if (a[0] != '-')
            return cli_usage("synth", "unexpected argument '%s'", a);
        if (i + 1 >= argc)
            return cli_usage("synth", "%s needs a value", a);
        const char *v = argv[++i];
        uint64_t n;
        double d;
        if (strcmp(a, "-o") == 0) {
            dir = v;
        } else if (strcmp(a, "-n") == 0) {
            continue;
        } else if (strcmp(a, "--seed") == 0) {
            if (cli_parse_u64("synth", a, v, 0, UINT64_MAX, &c.seed) < 0)
                return RNR_EXIT_USAGE;
        } else if (strcmp(a, "--msp") == 0) {
            if (cli_parse_u64("synth", a, v, 64, 1ull << 40, &c.rru.msp) < 0)
                return RNR_EXIT_USAGE;
        } else if (strcmp(a, "--clusters") == 0) {
            if (cli_parse_u64("synth", a, v, 2, 64, &n) < 0)
                return RNR_EXIT_USAGE;
            c.rru.clusters = (uint32_t)n;
        } else if (strcmp(a, "--sig") == 0) {
            if (strcmp(v, "exact") == 0) {
                c.rru.sig_bits = 0;
            } else if (strncmp(v, "bloom:", 6) == 0) {
                if (cli_parse_u64("synth", a, v + 6, 64, 1u << 24, &n) < 0)
                    return RNR_EXIT_USAGE;
                c.rru.sig_bits = (uint32_t)n;
            } else {
                return cli_usage("synth", "--sig wants exact or bloom:BITS, not '%s'", v);
            }
        } else if (strcmp(a, "--chunk-max") == 0) {
            if (cli_parse_u64("synth", a, v, 1, 1ull << 40, &c.rru.chunk_max) < 0)
                return RNR_EXIT_USAGE;
        } else if (strcmp(a, "--cluster-chunks") == 0) {
            if (cli_parse_u64("synth", a, v, 1, 1u << 20, &n) < 0)
                return RNR_EXIT_USAGE;
            c.rru.cluster_chunks = (uint32_t)n;
        } else if (strcmp(a, "--threads") == 0) {
            if (cli_parse_u64("synth", a, v, 1, 100000, &n) < 0)
                return RNR_EXIT_USAGE;
            c.threads = (uint32_t)n;
            threads_set = 1;
        } else if (strcmp(a, "--insns") == 0) {
            if (cli_parse_u64("synth", a, v, 1, 1ull << 40, &c.insns) < 0)
                return RNR_EXIT_USAGE;
        } else if (strcmp(a, "--sharing") == 0) {
            if (synth_set_sharing(&c, v) < 0) {
                if (parse_double(a, v, 0, 1000, &d) < 0)
                    return RNR_EXIT_USAGE;
                c.sharing = d / 1000.0;
            }
        } else if (strcmp(a, "--lines") == 0) {
            if (cli_parse_u64("synth", a, v, 1, 1u << 24, &n) < 0)
                return RNR_EXIT_USAGE;
            c.shared_lines = (uint32_t)n;
        } else if (strcmp(a, "--write-frac") == 0) {
            if (parse_double(a, v, 0, 1, &c.write_frac) < 0)
                return RNR_EXIT_USAGE;
        } else if (strcmp(a, "--os-cpus") == 0) {
            if (cli_parse_u64("synth", a, v, 0, SYNTH_MAX_CPUS, &n) < 0)
                return RNR_EXIT_USAGE;
            c.os_cpus = (uint32_t)n;
        } else if (strcmp(a, "--os-rate") == 0) {
            if (parse_double(a, v, 0, 1000, &c.os_rate) < 0)
                return RNR_EXIT_USAGE;
        } else if (strcmp(a, "--quantum") == 0) {
            if (cli_parse_u64("synth", a, v, 0, 1ull << 40, &c.quantum) < 0)
                return RNR_EXIT_USAGE;
        } else if (strcmp(a, "--block-rate") == 0) {
            if (parse_double(a, v, 0, 1, &c.block_rate) < 0)
                return RNR_EXIT_USAGE;
        } else if (strcmp(a, "--syscall-rate") == 0) {
            if (parse_double(a, v, 0, 1000, &c.syscall_rate) < 0)
                return RNR_EXIT_USAGE;
        } else if (strcmp(a, "--drain") == 0) {
            if (strcmp(v, "eager") == 0)
                c.adversarial = 0;
            else if (strcmp(v, "adversarial") == 0)
                c.adversarial = 1;
            else
                return cli_usage("synth", "--drain wants eager or adversarial, not '%s'", v);
        } else {
            return cli_usage("synth", "unknown option '%s'", a);
        }
    }
    if (!dir)
        return cli_usage("synth", "missing -o DIR");
    if (!threads_set)
        c.threads = c.cpus - c.os_cpus > 0 ? c.cpus - c.os_cpus : 1;
    char err[RNR_ERR_MAX];
    if (synth_config_check(&c, err, sizeof err) < 0)
        return cli_usage("synth", "%s", err);
    synth_result r;
    pass_progress pr;
    pass_progress_init(&pr, "synth", progress);
    c.progress = &pr;
    if (synth_bundle(&c, dir, truth, &r, err, sizeof err) < 0)
        return cli_bad_input("synth", "%s", err);
    pass_progress_end(&pr, r.chunks);
    printf("bundle: %s\nchunks: %" PRIu64 "\ninstructions: %" PRIu64 "\ncycles: %" PRIu64
           "\ntruth_deps: %" PRIu64 "\nbus_transactions: %" PRIu64 "\nos_accesses: %" PRIu64
           "\nswitches: %" PRIu64 "\nblocks: %" PRIu64 "\nsyscalls: %" PRIu64 "\nconflicts: %" PRIu64
           "\nevictions: %" PRIu64 "\nsv_entries: %" PRIu64 "\n",
           dir, r.chunks, r.instructions, r.cycles, r.deps, r.bus_transactions, r.os_accesses,
           r.switches, r.blocks, r.syscalls, r.rru.conflicts, r.rru.evictions, r.rru.sv_entries);
    return RNR_EXIT_OK;
}
