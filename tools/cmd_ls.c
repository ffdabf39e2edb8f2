/* tools/cmd_ls.c: `rnr ls [DIR]`: the bundles in a directory, one line
 * each (by default the directory of bundles `rnr record` fills without -o). */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "formats/bundle.h"
#include "rru/alloc.h"
#include "tools/cli.h"
#include "tools/out.h"

const char cmd_ls_help[] =
    "usage: rnr ls [--format text|csv|json] [DIR]\n"
    "Lists the recording bundles in DIR, one line each in the order of their\n"
    "names (racy-2 before racy-10): name, status (complete, interrupted:\n"
    "REASON, recording, ...), program (its file name), recorded CPUs,\n"
    "instructions, the guest's exit status and the size on disk. DIR defaults\n"
    "to the directory of bundles that `rnr record` without -o fills:\n"
    "$RNR_BUNDLE_DIR, or ./rnr-bundles; the bundle its 'latest' link names is\n"
    "marked. A DIR that is itself a bundle is listed alone. An entry that is\n"
    "not a bundle, or a bundle whose manifest is damaged, gets one line saying\n"
    "so. Only manifests are read (rnr info DIR checks every file's digest).\n"
    "--format csv or json (any case; default text) prints the same fields\n"
    "under stable names (docs/formats.md, \"Stats output\"): name, path,\n"
    "status, latest, kind, program, cpus, threads, instructions, exit_status,\n"
    "disk_bytes, error (what is wrong with an entry that is no usable bundle).\n"
    "Exit status: 0 (also when some entries are not bundles), 2 if DIR cannot\n"
    "be read.\n";

typedef struct ls_entry {
    char *name, *path;
    char *status, *kind, *program, *error;   /* error: not a bundle or damaged */
    char cpus[24], threads[24], instructions[24], exit_status[24];
    uint64_t disk_bytes;
    int latest;
} ls_entry;

/* Bytes DIR's files take on disk (st_blocks), with those of its
 * subdirectories (a bundle's programs/). */
static uint64_t disk_bytes(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    uint64_t sum = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        char p[4096];
        struct stat st;
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0 ||
            snprintf(p, sizeof p, "%s/%s", dir, e->d_name) >= (int)sizeof p || lstat(p, &st) != 0)
            continue;
        sum += S_ISDIR(st.st_mode) ? disk_bytes(p) : (uint64_t)st.st_blocks * 512;
    }
    closedir(d);
    return sum;
}

static void copy_key(char *out, size_t len, const rnr_manifest *m, const char *key)
{
    const char *v = rnr_manifest_get(m, key);
    snprintf(out, len, "%s", v ? v : "-");
}

/* Reads the bundle (or not) at E->path into E. */
static void ls_read(ls_entry *e)
{
    strcpy(e->cpus, "-");
    strcpy(e->threads, "-");
    strcpy(e->instructions, "-");
    strcpy(e->exit_status, "-");
    struct stat st;
    if (stat(e->path, &st) != 0 || !S_ISDIR(st.st_mode)) {
        e->error = xoom(strdup("not a bundle (not a directory)"));
        return;
    }
    e->disk_bytes = disk_bytes(e->path);
    if (!rnr_bundle_is_bundle(e->path)) {
        e->error = xoom(strdup("not a bundle (no manifest)"));
        return;
    }
    char err[1024];
    rnr_bundle *b = rnr_bundle_open(e->path, RNR_BUNDLE_ANY, err, sizeof err);
    if (!b) {
        char *msg;
        if (asprintf(&msg, "damaged: %s", err) < 0)
            msg = NULL;
        e->error = xoom(msg);
        return;
    }
    rnr_bundle_unlock(b);
    const rnr_manifest *m = rnr_bundle_get(b);
    e->status = xoom(strdup(rnr_bundle_status(b)));
    e->kind = xoom(strdup(rnr_bundle_kind(b)));
    const char *prog = rnr_manifest_get(m, "program");
    const char *base = prog ? strrchr(prog, '/') : NULL;
    e->program = xoom(strdup(base && base[1] ? base + 1 : prog ? prog : "-"));
    copy_key(e->cpus, sizeof e->cpus, m, "cpus");
    copy_key(e->threads, sizeof e->threads, m, "threads");
    copy_key(e->instructions, sizeof e->instructions, m, "instructions");
    copy_key(e->exit_status, sizeof e->exit_status, m, "exit-status");
    rnr_bundle_close(b);
}

static void ls_free(ls_entry *e)
{
    free(e->name);
    free(e->path);
    free(e->status);
    free(e->kind);
    free(e->program);
    free(e->error);
}

static int by_name(const void *a, const void *b)
{
    return strverscmp(((const ls_entry *)a)->name, ((const ls_entry *)b)->name);
}

/* "96K", "1.5M": bytes for a human. */
static void human(uint64_t n, char *out, size_t len)
{
    static const char units[] = "BKMGTP";
    double v = (double)n;
    int u = 0;
    while (v >= 1024 && u < 5) {
        v /= 1024;
        u++;
    }
    if (u == 0)
        snprintf(out, len, "%" PRIu64 "B", n);
    else
        snprintf(out, len, v < 10 ? "%.1f%c" : "%.0f%c", v, units[u]);
}

static void print_text(const ls_entry *v, size_t n)
{
    size_t wn = 4, ws = 6, wp = 7;
    for (size_t i = 0; i < n; i++) {
        size_t l = strlen(v[i].name) + 2;
        wn = l > wn ? l : wn;
        if (!v[i].error) {
            ws = strlen(v[i].status) > ws ? strlen(v[i].status) : ws;
            wp = strlen(v[i].program) > wp ? strlen(v[i].program) : wp;
        }
    }
    printf("%-*s  %-*s  %-*s  %4s  %14s  %4s  %6s\n", (int)wn, "NAME", (int)ws, "STATUS", (int)wp,
           "PROGRAM", "CPUS", "INSTRUCTIONS", "EXIT", "SIZE");
    for (size_t i = 0; i < n; i++) {
        char name[4096];
        snprintf(name, sizeof name, "%s%s", v[i].name, v[i].latest ? " *" : "");
        if (v[i].error) {
            printf("%-*s  %s\n", (int)wn, name, v[i].error);
            continue;
        }
        char size[32];
        human(v[i].disk_bytes, size, sizeof size);
        printf("%-*s  %-*s  %-*s  %4s  %14s  %4s  %6s\n", (int)wn, name, (int)ws, v[i].status,
               (int)wp, v[i].program, v[i].cpus, v[i].instructions, v[i].exit_status, size);
    }
}

static void add_number(const char *name, const char *v)
{
    if (strcmp(v, "-") == 0)
        OUT_NULL(name);
    else
        out_add(name, 0, "%s", v);
}

static void print_rows(const ls_entry *v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        out_row_start();
        OUT_S("name", v[i].name);
        OUT_S("path", v[i].path);
        OUT_S("status", v[i].error ? (strncmp(v[i].error, "damaged", 7) == 0 ? "damaged" : "not a bundle")
                                   : v[i].status);
        out_add("latest", 0, "%s", v[i].latest ? "true" : "false");
        OUT_S("kind", v[i].kind ? v[i].kind : "");
        OUT_S("program", v[i].program ? v[i].program : "");
        add_number("cpus", v[i].cpus);
        add_number("threads", v[i].threads);
        add_number("instructions", v[i].instructions);
        add_number("exit_status", v[i].exit_status);
        OUT_U64("disk_bytes", v[i].disk_bytes);
        OUT_S("error", v[i].error ? v[i].error : "");
    }
    out_flush(OUT_LIST);
}

int cmd_ls(int argc, char **argv)
{
    static const char *const valued[] = {"--format", NULL};
    cli_normalize(valued, 0, &argc, &argv);
    out_set_format("ls", NULL);
    const char *dir = NULL;
    int options = 1;
    for (int i = 1; i < argc; i++) {
        if (!options || argv[i][0] != '-' || !argv[i][1]) {
            if (dir)
                return cli_usage("ls", "too many arguments");
            dir = argv[i];
        } else if (strcmp(argv[i], "--") == 0) {
            options = 0;
        } else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            fputs(cmd_ls_help, stdout);
            return RNR_EXIT_OK;
        } else if (strcmp(argv[i], "--format") == 0) {
            if (i + 1 >= argc)
                return cli_usage("ls", "--format needs a value");
            if (out_set_format("ls", argv[++i]) < 0)
                return RNR_EXIT_USAGE;
        } else {
            return cli_usage("ls", "unknown option '%s'", argv[i]);
        }
    }
    int given = dir != NULL;
    if (!dir)
        dir = rnr_bundle_home();
    ls_entry *v = NULL;
    size_t n = 0;
    DIR *d = NULL;
    int listed = 0;   /* DIR's entries listed (not DIR itself) */
    if (rnr_bundle_is_bundle(dir)) {
        /* DIR is a bundle itself. */
        v = xcalloc(1, sizeof *v);
        v[0].name = xoom(strdup(dir));
        v[0].path = xoom(strdup(dir));
        n = 1;
    } else if (!(d = opendir(dir))) {
        if (errno == ENOENT && !given) {
            fprintf(stderr, "rnr ls: %s: no recordings yet (rnr record without -o makes them "
                    "there; %s chooses the place)\n", dir, RNR_BUNDLE_HOME_ENV);
            if (!out_is_text())
                out_flush(OUT_LIST);
            return RNR_EXIT_OK;
        }
        return cli_bad_input("ls", "%s: %s", dir, errno == ENOENT ? "no such directory"
                                                                   : strerror(errno));
    } else {
        struct dirent *e;
        while ((e = readdir(d)) != NULL) {
            if (e->d_name[0] == '.' || strcmp(e->d_name, RNR_BUNDLE_LATEST) == 0)
                continue;
            v = xrealloc(v, (n + 1) * sizeof *v);
            memset(&v[n], 0, sizeof *v);
            v[n].name = xoom(strdup(e->d_name));
            if (asprintf(&v[n].path, "%s/%s", dir, e->d_name) < 0)
                v[n].path = NULL;
            xoom(v[n].path);
            n++;
        }
        closedir(d);
        listed = 1;
    }
    if (n > 1)
        qsort(v, n, sizeof *v, by_name);
    char target[4096];
    int has_latest = listed && rnr_bundle_latest(dir, target, sizeof target) == 0;
    for (size_t i = 0; i < n; i++) {
        ls_read(&v[i]);
        v[i].latest = has_latest && strcmp(v[i].name, target) == 0;
    }
    if (out_is_text())
        print_text(v, n);
    else
        print_rows(v, n);
    for (size_t i = 0; i < n; i++)
        ls_free(&v[i]);
    free(v);
    return RNR_EXIT_OK;
}
