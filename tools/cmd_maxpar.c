/* tools/cmd_maxpar.c: `rnr maxpar IN OUT`, `rnr stitch IN OUT` and
 * `rnr serial IN OUT`: the three backend passes on files or pipes. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "rru/clock.h"
#include "backend/passes.h"
#include "tools/cli.h"

const char cmd_maxpar_help[] =
    "usage: rnr maxpar [--progress] [--stats] [--compress LEVEL] IN OUT\n"
    "Backend pass 1: reads the initial log IN and writes the MaxPar log OUT, the\n"
    "dependence DAG with maximum replay parallelism (tokens per CPU pair: each\n"
    "chunk's successor token vector and predecessor token counts). IN and OUT may\n"
    "be '-' (standard input/output); the pass streams, so it can run on a pipe\n"
    "while the recorder is still writing, with memory bounded by the chunks of\n"
    "two maximum silence periods (docs/backend.md).\n"
    "  --progress        report progress on stderr (default: when it is a terminal)\n"
    "  --stats           print the pass's counters on stderr at the end, one\n"
    "                    'name=value' list: chunks, tokens, dropped edges, peak open\n"
    "                    chunks and bytes, seconds, peak resident memory (KiB)\n"
    "  --compress LEVEL  zlib level 1-9 for the output blocks (default 0: none)\n";

const char cmd_stitch_help[] =
    "usage: rnr stitch [--progress] [--stats] [--compress LEVEL] [--window N] IN OUT\n"
    "Backend pass 2: reads the MaxPar log IN and writes the Stitched log OUT:\n"
    "consecutive chunks of one thread on one CPU merge into stitched chunks as\n"
    "long as Lamport clocks prove that no cycle forms. Fewer, larger entries;\n"
    "less replay parallelism. IN and OUT may be '-'.\n"
    "  --window N        end a stitched chunk at the latest N chunks of the walk\n"
    "                    after its first (default 4096)\n"
    "  --progress, --stats, --compress LEVEL   as for rnr maxpar\n";

const char cmd_serial_help[] =
    "usage: rnr serial [--progress] [--stats] [--compress LEVEL] IN OUT\n"
    "Backend pass 3: a total order of the DAG of IN, entries {TID, CS} with\n"
    "consecutive entries of one thread merged: MaxPar -> Serial, Stitched ->\n"
    "StSerial. IN and OUT may be '-'.\n"
    "  --progress, --stats, --compress LEVEL   as for rnr maxpar\n";

static void print_stats(const char *name, pass_kind kind, const pass_summary *s, double t)
{
    fprintf(stderr, "%s: chunks_in=%" PRIu64 " chunks_out=%" PRIu64, name, s->in_counts.records,
            s->out_counts.records);
    if (kind == PASS_MAXPAR) {
        const maxpar_stats *m = &s->maxpar;
        fprintf(stderr, " tokens=%" PRIu64 " early_tokens=%" PRIu64 " dropped_later=%" PRIu64
                " dropped_same=%" PRIu64 " discarded=%" PRIu64 " merged=%" PRIu64 " peak_open=%" PRIu64
                " peak_edges=%" PRIu64 " peak_bytes=%" PRIu64,
                m->tokens, m->early_tokens, m->dropped_later, m->dropped_same, m->discarded, m->merged,
                m->peak_open, m->peak_edges, m->peak_bytes);
    } else {
        fprintf(stderr, " tokens_in=%" PRIu64 " peak_waiting=%" PRIu64 " peak_tokens=%" PRIu64,
                s->dag.tokens_sent, s->dag.peak_waiting, s->dag.peak_tokens);
        if (kind == PASS_STITCH)
            fprintf(stderr, " tokens=%" PRIu64, s->stitch.tokens_out);
    }
    fprintf(stderr, " seconds=%.3f vm_hwm_kib=%" PRIu64 "\n", t, pass_vm_hwm_kib());
}

static int run_pass(const char *name, pass_kind kind, int argc, char **argv)
{
    pass_options opt = { isatty(STDERR_FILENO), 0, 0 };
    const char *files[2];
    int nfiles = 0, stats = 0, options = 1;
    static const char *const valued[] = {"--compress", "--window", NULL};
    cli_normalize(valued, 0, &argc, &argv);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        uint64_t v;
        if (!options || a[0] != '-' || !a[1]) {
            if (nfiles == 2)
                return cli_usage(name, "too many arguments");
            files[nfiles++] = a;
        } else if (strcmp(a, "--") == 0) {
            options = 0;
        } else if (strcmp(a, "--progress") == 0) {
            opt.progress = 1;
        } else if (strcmp(a, "--stats") == 0) {
            stats = 1;
        } else if (strcmp(a, "--compress") == 0 || (kind == PASS_STITCH && strcmp(a, "--window") == 0)) {
            if (i + 1 >= argc)
                return cli_usage(name, "%s needs a value", a);
            int compress = strcmp(a, "--compress") == 0;
            if (cli_parse_u64(name, a, argv[++i], compress ? 0 : 1, compress ? 9 : UINT32_MAX, &v) < 0)
                return RNR_EXIT_USAGE;
            if (compress)
                opt.compress = (int)v;
            else
                opt.window = v;
        } else {
            return cli_usage(name, "unknown option '%s'", a);
        }
    }
    if (nfiles < 2)
        return cli_usage(name, nfiles ? "missing OUT" : "missing IN and OUT");
    if (strcmp(files[0], "-") != 0 && strcmp(files[0], files[1]) == 0)
        return cli_usage(name, "IN and OUT are the same file");
    char err[RNR_ERR_MAX];
    pass_summary s;
    double t0 = host_seconds();
    if (pass_run_files(kind, files[0], files[1], &opt, &s, err, sizeof err) < 0)
        return cli_bad_input(name, "%s", err);
    if (stats)
        print_stats(name, kind, &s, host_seconds() - t0);
    return RNR_EXIT_OK;
}

int cmd_maxpar(int argc, char **argv) { return run_pass("maxpar", PASS_MAXPAR, argc, argv); }
int cmd_stitch(int argc, char **argv) { return run_pass("stitch", PASS_STITCH, argc, argv); }
int cmd_serial(int argc, char **argv) { return run_pass("serial", PASS_SERIAL, argc, argv); }
