/* tools/cmd_backend.c: `rnr backend DIR`, the three backend passes over a
 * recording bundle: initial.log -> maxpar.log -> stitched.log, and
 * serial.log, stserial.log. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "backend/passes.h"
#include "tools/bundle.h"
#include "tools/cli.h"

const char cmd_backend_help[] =
    "usage: rnr backend [--progress] [--compress LEVEL] DIR\n"
    "Runs the backend passes on the recording bundle DIR (DIR/manifest and\n"
    "DIR/initial.log) and writes DIR/maxpar.log (pass 1), DIR/stitched.log\n"
    "(pass 2), DIR/serial.log and DIR/stserial.log (pass 3 on each), replacing\n"
    "earlier ones. Prints one line per log: entries, tokens, file bytes, seconds.\n"
    "  --progress        report progress on stderr (default: when it is a terminal)\n"
    "  --compress LEVEL  zlib level 1-9 for the output blocks (default 0: none)\n";

static const struct {
    pass_kind kind;
    const char *in, *out;
} steps[] = {
    { PASS_MAXPAR, "initial", "maxpar" },
    { PASS_STITCH, "maxpar", "stitched" },
    { PASS_SERIAL, "maxpar", "serial" },
    { PASS_SERIAL, "stitched", "stserial" },
};

static double seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int backend_bundle_passes(const char *dir, int skip_maxpar, const pass_options *opt, FILE *report,
                          char *err, size_t errlen)
{
    char a[4096], b[4096];
    if (report)
        fprintf(report, "%-9s %12s %10s %12s %9s\n", "log", "entries", "tokens", "bytes", "seconds");
    for (size_t i = skip_maxpar ? 1 : 0; i < sizeof steps / sizeof steps[0]; i++) {
        snprintf(a, sizeof a, "%s/%s.log", dir, steps[i].in);
        snprintf(b, sizeof b, "%s/%s.log", dir, steps[i].out);
        pass_summary s;
        double t0 = seconds();
        if (pass_run_files(steps[i].kind, a, b, opt, &s, err, errlen) < 0)
            return -1;
        double t = seconds() - t0;
        uint64_t tokens = steps[i].kind == PASS_MAXPAR ? s.maxpar.tokens
                          : steps[i].kind == PASS_STITCH ? s.stitch.tokens_out : 0;
        if (report)
            fprintf(report, "%-9s %12" PRIu64 " %10" PRIu64 " %12" PRIu64 " %9.3f\n", steps[i].out,
                    s.out_counts.records, tokens, s.out_counts.stored_bytes, t);
    }
    return 0;
}

int cmd_backend(int argc, char **argv)
{
    pass_options opt = { isatty(STDERR_FILENO), 0, 0 };
    const char *dir = NULL;
    for (int i = 1; i < argc; i++) {
        uint64_t v;
        if (strcmp(argv[i], "--progress") == 0) {
            opt.progress = 1;
        } else if (strcmp(argv[i], "--compress") == 0) {
            if (++i >= argc)
                return cli_usage("backend", "--compress needs a value");
            if (cli_parse_u64("backend", "--compress", argv[i], 0, 9, &v) < 0)
                return RNR_EXIT_USAGE;
            opt.compress = (int)v;
        } else if (argv[i][0] == '-') {
            return cli_usage("backend", "unknown option '%s'", argv[i]);
        } else if (!dir) {
            dir = argv[i];
        } else {
            return cli_usage("backend", "too many arguments");
        }
    }
    if (!dir)
        return cli_usage("backend", "missing DIR");
    struct stat st;
    char a[4096], err[RNR_ERR_MAX];
    if (stat(dir, &st) != 0)
        return cli_bad_input("backend", "%s: %s", dir, strerror(errno));
    if (!S_ISDIR(st.st_mode))
        return cli_bad_input("backend", "%s: not a directory (a recording bundle)", dir);
    snprintf(a, sizeof a, "%s/manifest", dir);
    if (stat(a, &st) != 0)
        return cli_bad_input("backend", "%s: %s (is %s a recording bundle?)", a, strerror(errno), dir);
    if (backend_bundle_passes(dir, 0, &opt, stdout, err, sizeof err) < 0)
        return cli_bad_input("backend", "%s", err);
    return RNR_EXIT_OK;
}
