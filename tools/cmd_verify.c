/* tools/cmd_verify.c: `rnr verify DIR [FORMAT]`, proof that the final logs
 * of a recording bundle enforce every dependence of its initial log (and of
 * its ground truth, when the bundle has one), and are acyclic. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include <unistd.h>

#include "backend/passes.h"
#include "backend/verify.h"
#include "formats/log.h"
#include "formats/bundle.h"
#include "tools/cli.h"

const char cmd_verify_help[] =
    "usage: rnr verify [--progress] [--truth FILE | --no-truth] DIR [FORMAT]\n"
    "DIR 'latest' is the latest recording of `rnr record` without -o (the\n"
    "link latest in $RNR_BUNDLE_DIR, default ./rnr-bundles).\n"
    "Proves that a final log of the recording bundle DIR enforces every\n"
    "dependence of DIR/initial.log under the token-counter semantics of replay,\n"
    "and can be replayed (no cycle, no token that never comes). FORMAT is maxpar,\n"
    "stitched, serial, stserial, adaptive (in any case: MaxPar), or all (the\n"
    "default:"
    "every one DIR has).\n"
    "Checked: each recorded dependence (source chunk -> the first chunk of the\n"
    "successor CPU with TS > the dependence time; none: legitimately discarded),\n"
    "each thread's order across CPUs, for Serial/StSerial each CPU's order, and,\n"
    "if the bundle has truth.deps (rnr record --truth, rnr synth) or --truth is\n"
    "given, every ground-truth dependence. Every file used must match the\n"
    "manifest's digest; a truth.deps the manifest names must be there. FORMAT initial checks only the initial log's own\n"
    "DAG against the ground truth (did the recorder miss a dependence?).\n"
    "Exit status 0: all hold; 1: a log violates one (the first is named: CPUs,\n"
    "chunk indices, TIDs, times); 2: bad usage or unreadable input.\n"
    "  --progress   report progress on stderr (default: when it is a terminal)\n";

static const char *const formats[] = { "maxpar", "stitched", "serial", "stserial", "adaptive" };
#define NFORMATS (sizeof formats / sizeof formats[0])

static void print_ok(const char *file, const verify_report *r, int initial)
{
    printf("%s: ok: %" PRIu64 " dependence%s enforced (%" PRIu64 " discarded: no later chunk on "
           "their cpu), %" PRIu64 " order requirement%s",
           file, r->dependences, cli_s(r->dependences), r->discarded, r->order, cli_s(r->order));
    if (r->truth)
        printf(", %" PRIu64 " ground-truth dependence%s", r->truth, cli_s(r->truth));
    if (!initial)
        printf(", %" PRIu64 " chunk%s, acyclic, %" PRIu64 " token%s (%" PRIu64 " never awaited)",
               r->final_chunks, cli_s(r->final_chunks), r->tokens, cli_s(r->tokens),
               r->tokens_unconsumed);
    putchar('\n');
}

int cmd_verify(int argc, char **argv)
{
    const char *dir = NULL, *format = NULL, *truth_path = NULL;
    int no_truth = 0, progress = isatty(STDERR_FILENO), options = 1;
    static const char *const valued[] = {"--truth", NULL};
    cli_normalize(valued, 0, &argc, &argv);
    for (int i = 1; i < argc; i++) {
        if (!options || argv[i][0] != '-' || !argv[i][1]) {
            if (!dir)
                dir = argv[i];
            else if (!format)
                format = argv[i];
            else
                return cli_usage("verify", "too many arguments");
        } else if (strcmp(argv[i], "--") == 0) {
            options = 0;
        } else if (strcmp(argv[i], "--progress") == 0) {
            progress = 1;
        } else if (strcmp(argv[i], "--truth") == 0) {
            if (++i >= argc)
                return cli_usage("verify", "--truth needs a file");
            truth_path = argv[i];
        } else if (strcmp(argv[i], "--no-truth") == 0) {
            no_truth = 1;
        } else {
            return cli_usage("verify", "unknown option '%s'", argv[i]);
        }
    }
    if (!dir)
        return cli_usage("verify", "missing DIR");
    if (format && strcasecmp(format, "all") == 0) {
        format = "all";
    } else if (format) {
        /* Any case: the README writes MaxPar. */
        int kind = cli_log_kind(format), known = kind == RNR_LOG_INITIAL;
        for (size_t i = 0; i < NFORMATS && kind > 0; i++)
            known |= strcmp(rnr_log_kind_name((uint32_t)kind), formats[i]) == 0;
        if (known)
            format = rnr_log_kind_name((uint32_t)kind);
        else
            return cli_usage("verify", "unknown FORMAT '%s' (maxpar, stitched, serial, stserial, "
                             "adaptive, initial or all)", format);
    }
    char path[4096], err[RNR_ERR_MAX];
    rnr_bundle *b = rnr_bundle_open(dir, RNR_BUNDLE_FINISHED, err, sizeof err);
    if (!b)
        return cli_bad_input("verify", "%s", err);
    char resolved[4096];   /* "latest" resolved; DIR outlives the bundle handle */
    snprintf(resolved, sizeof resolved, "%s", rnr_bundle_dir(b));
    dir = resolved;
    if (rnr_bundle_check_file(b, RNR_BF_INITIAL, path, sizeof path, err, sizeof err) < 0) {
        rnr_bundle_close(b);
        return cli_bad_input("verify", "%s", err);
    }
    verify_ctx *v = verify_open(path, err, sizeof err);
    if (!v) {
        rnr_bundle_close(b);
        return cli_bad_input("verify", "%s", err);
    }
    /* The bundle's truth, when it names one, must be there and intact. */
    if (!truth_path && !no_truth && rnr_bundle_has(b, RNR_BF_TRUTH)) {
        if (rnr_bundle_check_file(b, RNR_BF_TRUTH, path, sizeof path, err, sizeof err) < 0) {
            verify_free(v);
            rnr_bundle_close(b);
            return cli_bad_input("verify", "%s", err);
        }
        truth_path = path;
    }
    char tpath[4096];
    if (truth_path && !no_truth) {
        snprintf(tpath, sizeof tpath, "%s", truth_path);
        truth_path = tpath;
        if (verify_set_truth_file(v, tpath, err, sizeof err) < 0) {
            verify_free(v);
            rnr_bundle_close(b);
            return cli_bad_input("verify", "%s", err);
        }
    }
    int rc = RNR_EXIT_OK, checked = 0;
    verify_report rep;
    if (format && strcmp(format, "initial") == 0) {
        if (!truth_path || no_truth) {
            verify_free(v);
            rnr_bundle_close(b);
            return cli_bad_input("verify", "%s: no ground truth to check the initial log against "
                                 "(truth.deps or --truth FILE)", dir);
        }
        if (verify_initial(v, &rep, err, sizeof err) < 0) {
            verify_free(v);
            rnr_bundle_close(b);
            return cli_bad_input("verify", "%s", err);
        }
        if (rep.ok)
            print_ok("initial.log", &rep, 1);
        else
            fprintf(stderr, "rnr verify: %s (%" PRIu64 " violation%s)\n", rep.message, rep.violations,
                    cli_s(rep.violations));
        verify_free(v);
        rnr_bundle_close(b);
        return rep.ok ? RNR_EXIT_OK : RNR_EXIT_FAILED;
    }
    for (size_t i = 0; i < NFORMATS; i++) {
        int wanted = !format || strcmp(format, "all") == 0 || strcmp(format, formats[i]) == 0;
        if (!wanted)
            continue;
        rnr_bundle_file bf = (rnr_bundle_file)rnr_bundle_file_of_kind(
            (uint32_t)rnr_log_kind_parse(formats[i]));
        if (!rnr_bundle_has(b, bf)) {
            if (format && strcmp(format, "all") != 0)
                rc = cli_bad_input("verify", "%s/%s.log: the bundle has no such log (run 'rnr backend "
                                   "%s')", dir, formats[i], dir);
            continue;
        }
        checked++;
        if (rnr_bundle_check_file(b, bf, path, sizeof path, err, sizeof err) < 0) {
            rc = cli_bad_input("verify", "%s", err);
            continue;
        }
        rnr_reader *r = rnr_reader_open(path, err, sizeof err);
        if (!r) {
            rc = cli_bad_input("verify", "%s", err);
            continue;
        }
        if (rnr_reader_header(r)->kind != (uint32_t)rnr_log_kind_parse(formats[i])) {
            rc = cli_bad_input("verify", "%s: this is %s %s log, not a %s log", path,
                               rnr_log_kind_article(rnr_reader_header(r)->kind),
                               rnr_log_kind_name(rnr_reader_header(r)->kind), formats[i]);
            rnr_reader_close(r);
            continue;
        }
        pass_progress pr;
        pass_progress_init(&pr, formats[i], progress);
        verify_set_progress(v, &pr);
        int vrc = verify_final(v, r, &rep, err, sizeof err);
        pass_progress_end(&pr, rep.final_chunks);
        if (vrc < 0) {
            rc = cli_bad_input("verify", "%s", err);
        } else if (!rep.ok) {
            fprintf(stderr, "rnr verify: %s (%" PRIu64 " violation%s)\n", rep.message, rep.violations,
                    cli_s(rep.violations));
            if (rc == RNR_EXIT_OK)
                rc = RNR_EXIT_FAILED;
        } else {
            snprintf(path, sizeof path, "%s.log", formats[i]);
            print_ok(path, &rep, 0);
        }
        rnr_reader_close(r);
    }
    verify_free(v);
    rnr_bundle_close(b);
    if (!checked && rc == RNR_EXIT_OK)
        return cli_bad_input("verify", "%s: no final logs (run 'rnr backend %s' first)", dir, dir);
    return rc;
}
