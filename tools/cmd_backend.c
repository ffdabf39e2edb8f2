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
#include "formats/bundle.h"
#include "tools/cli.h"

const char cmd_backend_help[] =
    "usage: rnr backend [--progress] [--compress LEVEL] DIR\n"
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
    "  --compress LEVEL  zlib level 1-9 for the output blocks (default 0: none)\n";

int cmd_backend(int argc, char **argv)
{
    pass_options opt = { isatty(STDERR_FILENO), 0, 0 };
    const char *dir = NULL;
    int options = 1;
    static const char *const valued[] = {"--compress", NULL};
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
        } else {
            return cli_usage("backend", "unknown option '%s'", argv[i]);
        }
    }
    if (!dir)
        return cli_usage("backend", "missing DIR");
    char err[RNR_ERR_MAX];
    rnr_bundle *b = rnr_bundle_open(dir, RNR_BUNDLE_UPDATE, err, sizeof err);
    if (!b)
        return cli_bad_input("backend", "%s", err);
    rnr_bundle_unlock(b);
    int rc = pass_bundle(b, 0, &opt, stdout, err, sizeof err) < 0 ||
             rnr_bundle_publish(b, err, sizeof err) < 0;
    rnr_bundle_close(b);
    if (rc)
        return cli_bad_input("backend", "%s", err);
    return RNR_EXIT_OK;
}
