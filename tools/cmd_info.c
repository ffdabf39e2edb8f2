/* tools/cmd_info.c: `rnr info DIR`: one screen about a bundle: its status,
 * program, arguments, environment, configuration, results and files, each
 * file checked against the manifest's digest. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "formats/bundle.h"
#include "formats/log.h"
#include "tools/cli.h"

const char cmd_info_help[] =
    "usage: rnr info DIR\n"
    "DIR 'latest' is the latest recording of `rnr record` without -o (the\n"
    "link latest in $RNR_BUNDLE_DIR, default ./rnr-bundles).\n"
    "Describes the bundle DIR on one screen: its status (and why it ended),\n"
    "the program and its SHA-256, argv, the environment the guest ran with,\n"
    "seed, CPUs and RRU options, instructions per thread, exit status, the\n"
    "files with their sizes and whether each matches its recorded digest.\n"
    "A bundle still being recorded or one that never finished is shown with\n"
    "what its manifest holds. Exit status 0: the manifest is intact and every\n"
    "file matches; 1: a file is missing or differs from its digest; 2: bad\n"
    "usage, or no readable manifest.\n";

static void show(const rnr_manifest *m, const char *label, const char *key)
{
    const char *v = rnr_manifest_get(m, key);
    if (v)
        printf("%-14s %s\n", label, v);
}

/* Prints every KEY.N for N below the value of COUNT_KEY, one per line. */
static void show_list(const rnr_manifest *m, const char *label, const char *count_key,
                      const char *prefix)
{
    uint64_t n;
    if (rnr_manifest_get_u64(m, count_key, &n) < 0)
        return;
    printf("%-14s %" PRIu64 "\n", label, n);
    for (uint64_t i = 0; i < n; i++) {
        char key[64];
        snprintf(key, sizeof key, "%s.%" PRIu64, prefix, i);
        const char *v = rnr_manifest_get(m, key);
        printf("  [%" PRIu64 "] %s\n", i, v ? v : "(missing)");
    }
}

int cmd_info(int argc, char **argv)
{
    const char *dir = NULL;
    int options = 1;
    static const char *const valued[] = {NULL};
    cli_normalize(valued, 0, &argc, &argv);
    for (int i = 1; i < argc; i++) {
        if (options && strcmp(argv[i], "--") == 0) {
            options = 0;
            continue;
        }
        if (options && argv[i][0] == '-' && argv[i][1])
            return cli_usage("info", "unknown option '%s'", argv[i]);
        if (dir)
            return cli_usage("info", "too many arguments");
        dir = argv[i];
    }
    if (!dir)
        return cli_usage("info", "missing DIR");
    char err[1024];
    rnr_bundle *b = rnr_bundle_open(dir, RNR_BUNDLE_ANY, err, sizeof err);
    if (!b)
        return cli_bad_input("info", "%s", err);
    char resolved[4096];   /* "latest" resolved; DIR outlives the bundle handle */
    snprintf(resolved, sizeof resolved, "%s", rnr_bundle_dir(b));
    dir = resolved;
    rnr_bundle_unlock(b);
    const rnr_manifest *m = rnr_bundle_get(b);
    printf("%-14s %s\n", "bundle", dir);
    printf("%-14s %s\n", "kind", rnr_bundle_kind(b));
    printf("%-14s %s\n", "status", rnr_bundle_status(b));
    show(m, "end", "end");
    show(m, "exit status", "exit-status");
    show(m, "program", "program");
    show(m, "program sha256", "program.sha256");
    show(m, "packed", "program.packed");
    show_list(m, "argc", "argc", "arg");
    show_list(m, "environment", "envc", "env");
    show(m, "cpus", "cpus");
    show(m, "seed", "seed");
    show(m, "quantum", "quantum");
    show(m, "msp", "msp");
    show(m, "clusters", "clusters");
    show(m, "signature", "sig");
    show(m, "chunk-max", "chunk-max");
    show(m, "check-every", "check-every");
    show(m, "mem-limit", "mem-limit");
    show_list(m, "allow-write", "allow-write", "allow-write");
    show(m, "instructions", "instructions");
    show(m, "cycles", "cycles");
    show(m, "chunks", "chunks");
    show(m, "wall seconds", "wall-seconds");
    show(m, "processes", "processes");
    uint64_t threads;
    if (rnr_manifest_get_u64(m, "threads", &threads) == 0) {
        printf("%-14s %" PRIu64 "\n", "threads", threads);
        for (uint64_t t = 0; t < threads; t++) {
            char k1[64], k2[64];
            snprintf(k1, sizeof k1, "thread.%" PRIu64 ".tid", t);
            snprintf(k2, sizeof k2, "thread.%" PRIu64 ".instructions", t);
            const char *tid = rnr_manifest_get(m, k1), *n = rnr_manifest_get(m, k2);
            printf("  tid %-8s %s instructions\n", tid ? tid : "?", n ? n : "?");
        }
    }
    uint64_t execs = 0;
    if (rnr_manifest_get_u64(m, "exec.count", &execs) == 0) {
        printf("%-14s %" PRIu64 "\n", "execve", execs);
        for (uint64_t k = 0; k < execs; k++) {
            char kp[64], kf[64];
            snprintf(kp, sizeof kp, "exec.%" PRIu64 ".path", k);
            snprintf(kf, sizeof kf, "exec.%" PRIu64 ".file", k);
            const char *path = rnr_manifest_get(m, kp), *file = rnr_manifest_get(m, kf);
            printf("  %-3" PRIu64 " %s  (%s)\n", k, path ? path : "?", file ? file : "not packed");
        }
    }
    printf("files:\n");
    int rc = RNR_EXIT_OK;
    for (int f = 0; f < RNR_BF_COUNT; f++) {
        if (!rnr_bundle_has(b, (rnr_bundle_file)f))
            continue;
        char path[4096], cerr[1024];
        int ok = rnr_bundle_check_file(b, (rnr_bundle_file)f, path, sizeof path, cerr,
                                       sizeof cerr) == 0;
        struct stat st;
        if (stat(path, &st) == 0)
            printf("  %-13s %12jd bytes  %s\n", rnr_bundle_file_name((rnr_bundle_file)f),
                   (intmax_t)st.st_size, ok ? "matches its digest" : "DIFFERS from its digest");
        else
            printf("  %-13s %12s        MISSING\n", rnr_bundle_file_name((rnr_bundle_file)f), "-");
        if (!ok) {
            fprintf(stderr, "rnr info: %s\n", cerr);
            rc = RNR_EXIT_FAILED;
        }
    }
    /* The programs execve loaded that the bundle packs, each once. */
    for (uint64_t k = 0; k < execs; k++) {
        char kf[64], ks[64], path[4096], cerr[1024];
        snprintf(kf, sizeof kf, "exec.%" PRIu64 ".file", k);
        snprintf(ks, sizeof ks, "exec.%" PRIu64 ".sha256", k);
        const char *file = rnr_manifest_get(m, kf), *sha = rnr_manifest_get(m, ks);
        if (!file || !sha || strncmp(file, RNR_BUNDLE_PROGRAMS "/", sizeof RNR_BUNDLE_PROGRAMS) != 0)
            continue;
        int seen = 0;
        for (uint64_t j = 0; j < k && !seen; j++) {
            char kj[64];
            snprintf(kj, sizeof kj, "exec.%" PRIu64 ".file", j);
            const char *fj = rnr_manifest_get(m, kj);
            seen = fj && strcmp(fj, file) == 0;
        }
        if (seen)
            continue;
        int ok = rnr_bundle_check_program(b, sha, path, sizeof path, cerr, sizeof cerr) == 0;
        struct stat st;
        if (stat(path, &st) == 0)
            printf("  %.21s... %12jd bytes  %s\n", file, (intmax_t)st.st_size,
                   ok ? "matches its digest" : "DIFFERS from its digest");
        else
            printf("  %.21s... %12s        MISSING\n", file, "-");
        if (!ok) {
            fprintf(stderr, "rnr info: %s\n", cerr);
            rc = RNR_EXIT_FAILED;
        }
    }
    rnr_bundle_close(b);
    return rc;
}
