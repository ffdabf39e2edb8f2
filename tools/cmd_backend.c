/* tools/cmd_backend.c: `rnr backend DIR`, the three backend passes over a
 * recording bundle: initial.log -> maxpar.log -> stitched.log, and
 * serial.log, stserial.log; with --adaptive also adaptive.log. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "backend/passes.h"
#include "formats/bundle.h"
#include "tools/cli.h"

const char cmd_backend_help[] =
    "usage: rnr backend [--progress] [--compress LEVEL] [--adaptive POLICY] DIR\n"
    "DIR 'latest' is the latest recording of `rnr record` without -o (the\n"
    "link latest in $RNR_BUNDLE_DIR, default ./rnr-bundles).\n"
    "Runs the backend passes on the recording bundle DIR (DIR/manifest and\n"
    "DIR/initial.log) and writes DIR/maxpar.log (pass 1), DIR/stitched.log\n"
    "(pass 2), DIR/serial.log and DIR/stserial.log (pass 3 on each), replacing\n"
    "earlier ones. The bundle's initial.log must match its recorded digest.\n"
    "The new logs are written under temporary names and put in place with the\n"
    "manifest's digests in one step, so that a replay running at the same time\n"
    "reads the old logs or the new, never a mix. A bundle still being recorded\n"
    "is refused. Prints one line per log: entries, tokens, file bytes, seconds.\n"
    "  --progress        report progress on stderr (default: when it is a terminal)\n"
    "  --compress LEVEL  zlib level 1-9 for the output blocks (default 0: none)\n"
    "  --adaptive POLICY also write DIR/adaptive.log, MaxPar or Stitched by phase\n"
    "                    (a phase: a range of instructions of the MaxPar log's\n"
    "                    replay order; docs/backend.md, \"Adaptive\"). POLICY:\n"
    "     phases:FILE    the phases of FILE, one per line: START-END FORMAT or\n"
    "                    START- FORMAT (to the end), FORMAT maxpar or stitched,\n"
    "                    ranges ascending and disjoint, # comments; instructions\n"
    "                    no range covers are stitched\n"
    "     bandwidth:BYTES_PER_S[:PHASE_INSNS[:HZ]]\n"
    "                    phases of PHASE_INSNS instructions (default 65536); a\n"
    "                    phase is MaxPar when its MaxPar records fit in\n"
    "                    BYTES_PER_S over its recorded time (the busiest CPU's\n"
    "                    recorded cycles in it / HZ, default 1e9), else Stitched\n"
    "     lag:CHUNKS     on-line only (a follower's lag decides): refused here\n";

int cmd_backend(int argc, char **argv)
{
    pass_options opt = { isatty(STDERR_FILENO), 0, 0 };
    const char *dir = NULL;
    int options = 1;
    static const char *const valued[] = {"--compress", "--adaptive", NULL};
    const char *policy = NULL;
    cli_normalize(valued, 0, &argc, &argv);
    for (int i = 1; i < argc; i++) {
        uint64_t v;
        if (!options || argv[i][0] != '-' || !argv[i][1]) {
            if (dir)
                return cli_usage("backend", "too many arguments");
            dir = argv[i];
        } else if (strcmp(argv[i], "--") == 0) {
            options = 0;
        } else if (strcmp(argv[i], "--progress") == 0) {
            opt.progress = 1;
        } else if (strcmp(argv[i], "--compress") == 0) {
            if (++i >= argc)
                return cli_usage("backend", "--compress needs a value");
            if (cli_parse_u64("backend", "--compress", argv[i], 0, 9, &v) < 0)
                return RNR_EXIT_USAGE;
            opt.compress = (int)v;
        } else if (strcmp(argv[i], "--adaptive") == 0) {
            if (++i >= argc)
                return cli_usage("backend", "--adaptive needs a policy");
            policy = argv[i];
        } else {
            return cli_usage("backend", "unknown option '%s'", argv[i]);
        }
    }
    if (!dir)
        return cli_usage("backend", "missing DIR");
    char err[RNR_ERR_MAX + 4200];
    adaptive_policy ap = { 0 };
    if (policy && adaptive_policy_parse(policy, &ap, err, sizeof err) < 0)
        return cli_bad_input("backend", "--adaptive: %s", err);
    if (ap.kind == ADAPTIVE_LAG) {
        uint64_t *st;
        uint32_t *fm;
        size_t n;
        adaptive_plan(&ap, NULL, &st, &fm, &n, err, sizeof err);
        return cli_bad_input("backend", "--adaptive: %s", err);
    }
    rnr_bundle *b = rnr_bundle_open(dir, RNR_BUNDLE_UPDATE, err, sizeof err);
    if (!b) {
        adaptive_policy_free(&ap);
        return cli_bad_input("backend", "%s", err);
    }
    rnr_bundle_unlock(b);
    int rc = pass_bundle(b, 0, &opt, stdout, err, sizeof err) < 0 ||
             (policy && pass_bundle_adaptive(b, &ap, &opt, stdout, err, sizeof err) < 0) ||
             rnr_bundle_publish(b, err, sizeof err) < 0;
    adaptive_policy_free(&ap);
    rnr_bundle_close(b);
    if (rc)
        return cli_bad_input("backend", "%s", err);
    return RNR_EXIT_OK;
}
