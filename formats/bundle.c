/* formats/bundle.c: the recording bundle: file names, the manifest's
 * schema, exclusive creation, atomic commits and the status. */
#include "formats/bundle.h"
#include "formats/codec.h"
#include "formats/digest.h"
#include "formats/io.h"
#include "formats/log.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *const file_names[RNR_BF_COUNT] = {
    [RNR_BF_PROGRAM] = "program",      [RNR_BF_INITIAL] = "initial.log",
    [RNR_BF_INPUT] = "input.log",      [RNR_BF_STDOUT] = "stdout",
    [RNR_BF_STDERR] = "stderr",        [RNR_BF_TRUTH] = "truth.deps",
    [RNR_BF_MAXPAR] = "maxpar.log",    [RNR_BF_STITCHED] = "stitched.log",
    [RNR_BF_SERIAL] = "serial.log",    [RNR_BF_STSERIAL] = "stserial.log",
    [RNR_BF_ADAPTIVE] = "adaptive.log",
};

const char *rnr_bundle_file_name(rnr_bundle_file f) { return file_names[f]; }

int rnr_bundle_file_of_kind(uint32_t kind)
{
    switch (kind) {
    case RNR_LOG_INITIAL: return RNR_BF_INITIAL;
    case RNR_LOG_INPUT: return RNR_BF_INPUT;
    case RNR_LOG_MAXPAR: return RNR_BF_MAXPAR;
    case RNR_LOG_STITCHED: return RNR_BF_STITCHED;
    case RNR_LOG_SERIAL: return RNR_BF_SERIAL;
    case RNR_LOG_STSERIAL: return RNR_BF_STSERIAL;
    case RNR_LOG_ADAPTIVE: return RNR_BF_ADAPTIVE;
    }
    return -1;
}

int rnr_bundle_path(const char *dir, const char *name, char *out, size_t len, char *err,
                    size_t errlen)
{
    int n = snprintf(out, len, "%s/%s", dir, name);
    if (n < 0 || (size_t)n >= len) {
        snprintf(err, errlen, "%.200s...: the bundle's path is too long", dir);
        return -1;
    }
    return 0;
}

/* ---- the manifest's schema ---- */

typedef enum key_type { T_U64, T_TEXT, T_HEX, T_DEC, T_SIG, T_END, T_PACKED } key_type;

enum { K_REC = 1, K_SYN = 2, K_ALL = 3 };

/* Each key a finished manifest of a kind must have (docs/formats.md,
 * "Bundle manifest", says what each means). Families (arg.N, env.N,
 * allow-write.N, thread.N.*, file.NAME.*) are checked in check_schema. */
static const struct schema_key {
    const char *key;
    key_type type;
    unsigned kinds;
} schema[] = {
    { "kind", T_TEXT, K_ALL },           { "status", T_TEXT, K_ALL },
    { "program", T_TEXT, K_ALL },        { "program.sha256", T_HEX, K_REC },
    { "program.packed", T_PACKED, K_REC }, { "program.path", T_TEXT, 0 },
    { "recorder.pid", T_U64, K_REC },
    { "argc", T_U64, K_REC },            { "envc", T_U64, K_REC },
    { "cpus", T_U64, K_ALL },            { "seed", T_U64, K_ALL },
    { "quantum", T_U64, K_REC },         { "miss-latency", T_U64, K_REC },
    { "miss-jitter", T_U64, K_REC },     { "slice", T_U64, K_REC },
    { "time-div", T_U64, K_REC },        { "msp", T_U64, K_ALL },
    { "clusters", T_U64, K_ALL },        { "signature", T_SIG, K_ALL },
    { "signature.bits", T_U64, K_ALL },  { "signature.hashes", T_U64, K_REC },
    { "sig", T_TEXT, K_REC },            { "chunk-max", T_U64, K_ALL },
    { "cluster-chunks", T_U64, K_REC },  { "allow-write", T_U64, K_REC },
    { "mem-limit", T_U64, K_REC },       { "end", T_END, K_REC },
    { "exit-status", T_U64, K_REC },     { "threads", T_U64, K_ALL },
    { "instructions", T_U64, K_ALL },    { "cycles", T_U64, K_ALL },
    { "syscalls", T_U64, K_REC },        { "chunks", T_U64, K_REC },
    { "checks", T_U64, K_REC },          { "silence-violations", T_U64, K_REC },
    { "max-drain-delay", T_U64, K_REC }, { "final.digest", T_HEX, K_REC },
    { "wall-seconds", T_DEC, K_REC },    { "truth.count", T_U64, 0 },
    { "check-every", T_U64, 0 },         { "exec.count", T_U64, 0 },
    { "processes", T_U64, 0 },
    { "synth.sharing", T_DEC, K_SYN },   { "synth.chunks", T_U64, K_SYN },
    { "synth.truth-deps", T_U64, K_SYN },
};

/* Files a finished bundle of each kind must name. */
static int file_required(unsigned kind, rnr_bundle_file f, int packed)
{
    if (kind == K_SYN)
        return f == RNR_BF_INITIAL;
    return f == RNR_BF_INITIAL || f == RNR_BF_INPUT || f == RNR_BF_STDOUT || f == RNR_BF_STDERR ||
           (f == RNR_BF_PROGRAM && packed);
}

static int valid(key_type t, const char *v)
{
    size_t n = strlen(v);
    switch (t) {
    case T_U64: {
        if (n == 0 || n > 20 || strspn(v, "0123456789") != n || (n > 1 && v[0] == '0'))
            return 0;
        return n < 20 || strcmp(v, "18446744073709551615") <= 0;
    }
    case T_TEXT: return 1;
    case T_HEX: return n == 64 && strspn(v, "0123456789abcdef") == 64;
    case T_DEC: {
        if (n == 0 || strspn(v, "0123456789.e+-") != n)
            return 0;
        char *end;
        strtod(v, &end);
        return *end == '\0';
    }
    case T_SIG: return strcmp(v, "exact") == 0 || strcmp(v, "bloom") == 0;
    case T_END:
        return strcmp(v, "exited") == 0 || strcmp(v, "signaled") == 0 ||
               strcmp(v, "deadlock") == 0 || strcmp(v, "interrupted") == 0;
    case T_PACKED: return strcmp(v, "program") == 0 || strcmp(v, "no") == 0;
    }
    return 0;
}

static const char *type_name(key_type t)
{
    switch (t) {
    case T_U64: return "an unsigned decimal";
    case T_TEXT: return "text";
    case T_HEX: return "64 lower-case hex digits";
    case T_DEC: return "a decimal number";
    case T_SIG: return "exact or bloom";
    case T_END: return "exited, signaled, deadlock or interrupted";
    case T_PACKED: return "program or no";
    }
    return "?";
}

/* ---- the handle ---- */

struct rnr_bundle {
    char *dir;
    char *manifest_path;
    rnr_manifest *m;
    int dir_fd;                       /* for flock; -1 if none */
    unsigned kind;                    /* K_REC or K_SYN */
    char *tmp[RNR_BF_COUNT];          /* temporary paths handed out */
    int written[RNR_BF_COUNT];        /* UPDATE: written, to publish */
};

static rnr_bundle *bundle_new(const char *dir)
{
    rnr_bundle *b = rnr_xrealloc(NULL, sizeof *b);
    memset(b, 0, sizeof *b);
    b->dir = rnr_xstrdup(dir);
    size_t n = strlen(dir) + sizeof "/manifest";
    b->manifest_path = rnr_xrealloc(NULL, n);
    snprintf(b->manifest_path, n, "%s/manifest", dir);
    b->dir_fd = -1;
    return b;
}

void rnr_bundle_close(rnr_bundle *b)
{
    if (!b)
        return;
    for (int f = 0; f < RNR_BF_COUNT; f++) {
        if (b->tmp[f])
            unlink(b->tmp[f]);
        free(b->tmp[f]);
    }
    if (b->dir_fd >= 0)
        close(b->dir_fd);
    rnr_manifest_free(b->m);
    free(b->manifest_path);
    free(b->dir);
    free(b);
}

rnr_manifest *rnr_bundle_manifest(rnr_bundle *b) { return b->m; }
const rnr_manifest *rnr_bundle_get(const rnr_bundle *b) { return b->m; }
const char *rnr_bundle_dir(const rnr_bundle *b) { return b->dir; }

const char *rnr_bundle_kind(const rnr_bundle *b)
{
    const char *k = rnr_manifest_get(b->m, "kind");
    return k ? k : "";
}

const char *rnr_bundle_status(const rnr_bundle *b)
{
    const char *s = rnr_manifest_get(b->m, "status");
    return s ? s : "";
}

/* 1 if DIR holds nothing but . and ..; 0 if it holds something; -1 on error. */
static int dir_empty(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return -1;
    struct dirent *e;
    int empty = 1;
    while ((e = readdir(d)) != NULL)
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) {
            empty = 0;
            break;
        }
    closedir(d);
    return empty;
}

rnr_bundle *rnr_bundle_create(const char *dir, const char *kind, char *err, size_t errlen)
{
    if (mkdir(dir, 0777) != 0) {
        if (errno != EEXIST) {
            snprintf(err, errlen, "%s: cannot create the bundle directory: %s", dir, strerror(errno));
            return NULL;
        }
        struct stat st;
        if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
            snprintf(err, errlen, "%s: exists and is not a directory", dir);
            return NULL;
        }
        int e = dir_empty(dir);
        if (e < 0) {
            snprintf(err, errlen, "%s: %s", dir, strerror(errno));
            return NULL;
        }
        if (!e) {
            char probe[4096];
            snprintf(probe, sizeof probe, "%s/manifest", dir);
            snprintf(err, errlen, "%s: %s; a bundle must go to a new or empty directory", dir,
                     access(probe, F_OK) == 0 ? "already holds a bundle (remove it first)"
                                              : "is not empty");
            return NULL;
        }
    }
    rnr_bundle *b = bundle_new(dir);
    b->m = rnr_manifest_new();
    b->kind = strcmp(kind, "synthetic") == 0 ? K_SYN : K_REC;
    rnr_manifest_set(b->m, "kind", kind);
    rnr_manifest_set(b->m, "status", RNR_BUNDLE_RECORDING);
    if (b->kind == K_REC)
        rnr_manifest_set_u64(b->m, "recorder.pid", (uint64_t)getpid());
    /* The claim: of several creators only one makes the manifest. */
    int fd = open(b->manifest_path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0) {
        if (errno == EEXIST)
            snprintf(err, errlen, "%s: another recorder took this directory first", dir);
        else
            snprintf(err, errlen, "%s: %s", b->manifest_path, strerror(errno));
        free(b->manifest_path);
        b->manifest_path = NULL;
        rnr_bundle_close(b);
        return NULL;
    }
    size_t len;
    char *text = rnr_manifest_format(b->m, &len);
    int bad = rnr_write_full(fd, text, len) < 0;
    free(text);
    if (close(fd) != 0 || bad) {
        snprintf(err, errlen, "%s: %s", b->manifest_path, strerror(errno ? errno : EIO));
        unlink(b->manifest_path);
        rnr_bundle_close(b);
        return NULL;
    }
    b->dir_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    return b;
}

/* ---- the default place ---- */

const char *rnr_bundle_home(void)
{
    const char *h = getenv(RNR_BUNDLE_HOME_ENV);
    return h && *h ? h : RNR_BUNDLE_HOME_DEFAULT;
}

int rnr_bundle_latest(const char *home, char *out, size_t len)
{
    char link[4096];
    if (len == 0 || snprintf(link, sizeof link, "%s/%s", home, RNR_BUNDLE_LATEST) >= (int)sizeof link) {
        errno = ENAMETOOLONG;
        return -1;
    }
    ssize_t n = readlink(link, out, len - 1);
    if (n < 0)
        return -1;
    out[n] = '\0';
    return 0;
}

int rnr_bundle_is_bundle(const char *dir)
{
    char path[4096];
    return snprintf(path, sizeof path, "%s/manifest", dir) < (int)sizeof path &&
           access(path, F_OK) == 0;
}

int rnr_bundle_resolve(const char *name, char *out, size_t len, char *err, size_t errlen)
{
    if (strcmp(name, RNR_BUNDLE_LATEST) != 0) {
        if (strlen(name) >= len) {
            snprintf(err, errlen, "%.200s...: the bundle's path is too long", name);
            return -1;
        }
        strcpy(out, name);
        return 0;
    }
    const char *home = rnr_bundle_home();
    char link[4096], target[4096];
    if (rnr_bundle_path(home, RNR_BUNDLE_LATEST, link, sizeof link, err, errlen) < 0)
        return -1;
    if (rnr_bundle_latest(home, target, sizeof target) < 0) {
        if (errno == ENOENT)
            snprintf(err, errlen, "latest: no recording in %s yet (rnr record without -o makes "
                     "one there; %s chooses the place)", home, RNR_BUNDLE_HOME_ENV);
        else
            snprintf(err, errlen, "%s: %s (it should be a symbolic link to the latest recording)",
                     link, strerror(errno));
        return -1;
    }
    if (target[0] == '/') {
        if (strlen(target) >= len) {
            snprintf(err, errlen, "%s: its target is too long", link);
            return -1;
        }
        strcpy(out, target);
        return 0;
    }
    return rnr_bundle_path(home, target, out, len, err, errlen);
}

/* The N of NAME if it is BASE-N (N decimal without leading zeros), else 0. */
static uint64_t bundle_number(const char *name, const char *base)
{
    size_t n = strlen(base);
    if (strncmp(name, base, n) != 0 || name[n] != '-' || name[n + 1] < '1' || name[n + 1] > '9')
        return 0;
    const char *d = name + n + 1;
    if (strspn(d, "0123456789") != strlen(d) || strlen(d) > 18)
        return 0;
    return strtoull(d, NULL, 10);
}

rnr_bundle *rnr_bundle_create_next(const char *home, const char *base, const char *kind,
                                   char *err, size_t errlen)
{
    if (mkdir(home, 0777) != 0 && errno != EEXIST) {
        snprintf(err, errlen, "%s: cannot create the directory of bundles: %s", home,
                 strerror(errno));
        return NULL;
    }
    DIR *d = opendir(home);
    if (!d) {
        snprintf(err, errlen, "%s: %s", home, strerror(errno));
        return NULL;
    }
    uint64_t next = 1;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        uint64_t k = bundle_number(e->d_name, base);
        if (k >= next)
            next = k + 1;
    }
    closedir(d);
    char dir[4096], name[512];
    for (;; next++) {
        snprintf(name, sizeof name, "%.400s-%" PRIu64, base, next);
        if (rnr_bundle_path(home, name, dir, sizeof dir, err, errlen) < 0)
            return NULL;
        if (mkdir(dir, 0777) == 0)
            break;
        if (errno != EEXIST) {
            snprintf(err, errlen, "%s: cannot create the bundle directory: %s", dir,
                     strerror(errno));
            return NULL;
        }
    }
    rnr_bundle *b = rnr_bundle_create(dir, kind, err, errlen);
    if (!b) {
        rmdir(dir);
        return NULL;
    }
    /* HOME/latest -> NAME: a new link under a temporary name, renamed over
     * the old one. A failure here costs the link, not the recording. */
    char tmp[4096], link[4096], tname[64];
    snprintf(tname, sizeof tname, ".latest.%ld.tmp", (long)getpid());
    if (rnr_bundle_path(home, tname, tmp, sizeof tmp, err, errlen) == 0 &&
        rnr_bundle_path(home, RNR_BUNDLE_LATEST, link, sizeof link, err, errlen) == 0) {
        unlink(tmp);
        if (symlink(name, tmp) != 0 || rename(tmp, link) != 0) {
            fprintf(stderr, "%s: warning: %s: cannot point it at %s: %s\n", rnr_msg_prefix(), link,
                    name, strerror(errno));
            unlink(tmp);
        }
    }
    return b;
}

const char *rnr_bundle_tmp_path(rnr_bundle *b, rnr_bundle_file f)
{
    if (!b->tmp[f]) {
        size_t n = strlen(b->dir) + strlen(file_names[f]) + 48;
        b->tmp[f] = rnr_xrealloc(NULL, n);
        snprintf(b->tmp[f], n, "%s/.%s.%ld.part", b->dir, file_names[f], (long)getpid());
    }
    b->written[f] = 1;
    return b->tmp[f];
}

int rnr_bundle_written(const rnr_bundle *b, rnr_bundle_file f)
{
    return b->tmp[f] && b->written[f];
}

int rnr_bundle_current_path(const rnr_bundle *b, rnr_bundle_file f, char *out, size_t len,
                            char *err, size_t errlen)
{
    if (b->tmp[f] && b->written[f]) {
        if (strlen(b->tmp[f]) >= len) {
            snprintf(err, errlen, "%s: the path is too long", b->tmp[f]);
            return -1;
        }
        strcpy(out, b->tmp[f]);
        return 0;
    }
    return rnr_bundle_path(b->dir, file_names[f], out, len, err, errlen);
}

void rnr_bundle_discard(rnr_bundle *b, rnr_bundle_file f)
{
    if (b->tmp[f])
        unlink(b->tmp[f]);
    free(b->tmp[f]);
    b->tmp[f] = NULL;
    b->written[f] = 0;
}

/* DIR/programs/HASH (or, with TMP, DIR/programs/.HASH.PID.part). */
static int program_path(const char *dir, const char *sha_hex, int tmp, char *out, size_t len,
                        char *err, size_t errlen)
{
    int n = tmp ? snprintf(out, len, "%s/" RNR_BUNDLE_PROGRAMS "/.%s.%ld.part", dir, sha_hex,
                           (long)getpid())
                : snprintf(out, len, "%s/" RNR_BUNDLE_PROGRAMS "/%s", dir, sha_hex);
    if (n < 0 || (size_t)n >= len) {
        snprintf(err, errlen, "%.200s...: the bundle's path is too long", dir);
        return -1;
    }
    return 0;
}

/* 1 if SHA_HEX is the hash of the first program and the bundle holds it
 * ("program"): a program that executes itself is not packed twice. */
static int is_first_program(const rnr_bundle *b, const char *sha_hex)
{
    const char *packed = rnr_manifest_get(b->m, "program.packed");
    const char *sha = rnr_manifest_get(b->m, "program.sha256");
    return packed && sha && strcmp(packed, "program") == 0 && strcmp(sha, sha_hex) == 0;
}

void rnr_bundle_program_name(const rnr_bundle *b, const char *sha_hex, char *out, size_t len)
{
    if (is_first_program(b, sha_hex))
        snprintf(out, len, "%s", file_names[RNR_BF_PROGRAM]);
    else
        snprintf(out, len, RNR_BUNDLE_PROGRAMS "/%s", sha_hex);
}

int rnr_bundle_put_program(rnr_bundle *b, const char *sha_hex, const void *data, size_t n,
                           char *err, size_t errlen)
{
    char path[4096], tmp[4096];
    if (!valid(T_HEX, sha_hex)) {
        snprintf(err, errlen, "%s: a program's hash '%.80s' is not 64 lower-case hex digits",
                 b->dir, sha_hex);
        return -1;
    }
    if (program_path(b->dir, sha_hex, 0, path, sizeof path, err, errlen) < 0 ||
        program_path(b->dir, sha_hex, 1, tmp, sizeof tmp, err, errlen) < 0)
        return -1;
    if (is_first_program(b, sha_hex) || access(path, F_OK) == 0)
        return 0;
    char *slash = strrchr(path, '/');
    *slash = '\0';
    if (mkdir(path, 0755) != 0 && errno != EEXIST) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return -1;
    }
    *slash = '/';
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);
    if (fd < 0) {
        snprintf(err, errlen, "%s: %s", tmp, strerror(errno));
        return -1;
    }
    if (rnr_write_full(fd, data, n) < 0 || fsync(fd) != 0) {
        snprintf(err, errlen, "%s: %s", tmp, strerror(errno));
        close(fd);
        unlink(tmp);
        return -1;
    }
    if (close(fd) != 0 || rename(tmp, path) != 0) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        unlink(tmp);
        return -1;
    }
    return 0;
}

int rnr_bundle_check_program(const rnr_bundle *b, const char *sha_hex, char *path, size_t len,
                             char *err, size_t errlen)
{
    if (is_first_program(b, sha_hex))
        return rnr_bundle_check_file(b, RNR_BF_PROGRAM, path, len, err, errlen);
    if (program_path(b->dir, sha_hex, 0, path, len, err, errlen) < 0)
        return -1;
    struct stat st;
    if (stat(path, &st) != 0) {
        snprintf(err, errlen, "%s: %s (a program the recording executed with execve, packed in "
                 "the bundle)", path, strerror(errno));
        return -1;
    }
    uint8_t d[RNR_SHA256_SIZE];
    char hex[RNR_SHA256_HEX];
    if (rnr_sha256_file(path, d, err, errlen) < 0)
        return -1;
    rnr_hex(d, sizeof d, hex);
    if (strcmp(hex, sha_hex) != 0) {
        snprintf(err, errlen, "%s: not the recorded program: its SHA-256 is %s, not the hash "
                 "that names it", path, hex);
        return -1;
    }
    return 0;
}

/* Size and SHA-256 (hex) of PATH; 0 or -1 with err. */
static int file_digest(const char *path, uint64_t *size, char hex[RNR_SHA256_HEX], char *err,
                       size_t errlen)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return -1;
    }
    uint8_t d[RNR_SHA256_SIZE];
    if (rnr_sha256_file(path, d, err, errlen) < 0)
        return -1;
    *size = (uint64_t)st.st_size;
    rnr_hex(d, sizeof d, hex);
    return 0;
}

static void file_key(char *key, size_t len, rnr_bundle_file f, const char *what)
{
    snprintf(key, len, "file.%s.%s", file_names[f], what);
}

/* Hashes F's temporary file into the manifest's keys and renames it. */
static int put_in_place(rnr_bundle *b, rnr_bundle_file f, char *err, size_t errlen)
{
    char path[4096];
    if (!b->tmp[f]) {
        snprintf(err, errlen, "%s/%s: was never written", b->dir, file_names[f]);
        return -1;
    }
    if (rnr_bundle_path(b->dir, file_names[f], path, sizeof path, err, errlen) < 0)
        return -1;
    int fd = open(b->tmp[f], O_RDONLY | O_CLOEXEC);
    if (fd < 0 || fsync(fd) != 0) {
        snprintf(err, errlen, "%s: %s", b->tmp[f], strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    close(fd);
    uint64_t size;
    char hex[RNR_SHA256_HEX], key[128];
    if (file_digest(b->tmp[f], &size, hex, err, errlen) < 0)
        return -1;
    if (rename(b->tmp[f], path) != 0) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return -1;
    }
    free(b->tmp[f]);
    b->tmp[f] = NULL;
    b->written[f] = 0;
    file_key(key, sizeof key, f, "bytes");
    rnr_manifest_set_u64(b->m, key, size);
    file_key(key, sizeof key, f, "sha256");
    rnr_manifest_set(b->m, key, hex);
    return 0;
}

int rnr_bundle_commit(rnr_bundle *b, rnr_bundle_file f, char *err, size_t errlen)
{
    return put_in_place(b, f, err, errlen);
}

int rnr_bundle_save(rnr_bundle *b, const char *status, char *err, size_t errlen)
{
    rnr_manifest_set(b->m, "status", status);
    return rnr_manifest_save(b->m, b->manifest_path, err, errlen);
}

/* ---- reading ---- */

static int final_status(const char *s)
{
    return strcmp(s, RNR_BUNDLE_COMPLETE) == 0 ||
           strncmp(s, RNR_BUNDLE_INTERRUPTED, strlen(RNR_BUNDLE_INTERRUPTED)) == 0;
}

#define BAD(...) do { snprintf(err, errlen, __VA_ARGS__); return -1; } while (0)

/* Checks a key family NAME.0 .. NAME.(COUNT-1) [.SUFFIX] of type T. */
static int check_family(const rnr_bundle *b, const char *name, const char *suffix, uint64_t count,
                        key_type t, char *err, size_t errlen)
{
    for (uint64_t i = 0; i < count; i++) {
        char key[128];
        snprintf(key, sizeof key, "%s.%" PRIu64 "%s%s", name, i, suffix ? "." : "",
                 suffix ? suffix : "");
        const char *v = rnr_manifest_get(b->m, key);
        if (!v)
            BAD("%s: no '%s'", b->manifest_path, key);
        if (!valid(t, v))
            BAD("%s: '%s' is '%.80s', not %s", b->manifest_path, key, v, type_name(t));
    }
    return 0;
}

/* The index and suffix of a family key NAME.N[.SUFFIX]: 1 if KEY is one. */
static int family_key(const char *key, const char *name, uint64_t *index, const char **suffix)
{
    size_t n = strlen(name);
    if (strncmp(key, name, n) != 0 || key[n] != '.' || key[n + 1] < '0' || key[n + 1] > '9')
        return 0;
    char *end;
    errno = 0;
    unsigned long long i = strtoull(key + n + 1, &end, 10);
    if (errno || (key[n + 1] == '0' && end != key + n + 2))
        return 0;
    *index = i;
    *suffix = *end == '.' ? end + 1 : *end ? NULL : "";
    return *suffix != NULL;
}

static int check_schema(rnr_bundle *b, char *err, size_t errlen)
{
    const rnr_manifest *m = b->m;
    for (size_t i = 0; i < sizeof schema / sizeof schema[0]; i++) {
        const char *v = rnr_manifest_get(m, schema[i].key);
        if (!(schema[i].kinds & b->kind)) {
            if (v && !valid(schema[i].type, v))
                BAD("%s: '%s' is '%.80s', not %s", b->manifest_path, schema[i].key, v,
                    type_name(schema[i].type));
            continue;
        }
        if (!v)
            BAD("%s: no '%s'", b->manifest_path, schema[i].key);
        if (!valid(schema[i].type, v))
            BAD("%s: '%s' is '%.80s', not %s", b->manifest_path, schema[i].key, v,
                type_name(schema[i].type));
    }
    uint64_t cpus = rnr_bundle_u64(b, "cpus"), threads = rnr_bundle_u64(b, "threads");
    if (cpus < 1 || cpus > 64)
        BAD("%s: 'cpus' is %" PRIu64 ", not 1 to 64", b->manifest_path, cpus);
    if (threads < 1 || threads > (1u << 20))
        BAD("%s: 'threads' is %" PRIu64 ", not 1 to 2^20", b->manifest_path, threads);
    uint64_t argc = 0, envc = 0, allow = 0, execs = 0;
    if (b->kind == K_REC) {
        /* Programs execve loaded (optional: none before they were recorded). */
        if (rnr_manifest_get(m, "exec.count"))
            execs = rnr_bundle_u64(b, "exec.count");
        if (execs > 65536)
            BAD("%s: 'exec.count' is %" PRIu64 ", more than 65536", b->manifest_path, execs);
        if (check_family(b, "exec", "path", execs, T_TEXT, err, errlen) < 0 ||
            check_family(b, "exec", "sha256", execs, T_HEX, err, errlen) < 0)
            return -1;
        /* A packed one names its file: programs/HASH, or the first
         * program's when it is the same. */
        for (uint64_t i = 0; i < execs; i++) {
            char kf[64], ks[64], want[sizeof RNR_BUNDLE_PROGRAMS + RNR_SHA256_HEX];
            snprintf(kf, sizeof kf, "exec.%" PRIu64 ".file", i);
            snprintf(ks, sizeof ks, "exec.%" PRIu64 ".sha256", i);
            const char *v = rnr_manifest_get(m, kf);
            rnr_bundle_program_name(b, rnr_bundle_str(b, ks), want, sizeof want);
            if (v && strcmp(v, want) != 0)
                BAD("%s: '%s' is '%.80s', not '%s' (its SHA-256)", b->manifest_path, kf, v, want);
        }
        argc = rnr_bundle_u64(b, "argc");
        envc = rnr_bundle_u64(b, "envc");
        allow = rnr_bundle_u64(b, "allow-write");
        if (argc < 1 || argc > 65536 || envc > 65536 || allow > 4096)
            BAD("%s: 'argc', 'envc' or 'allow-write' out of range (argc %" PRIu64 ", envc %" PRIu64
                ", allow-write %" PRIu64 ")", b->manifest_path, argc, envc, allow);
        if (check_family(b, "arg", NULL, argc, T_TEXT, err, errlen) < 0 ||
            check_family(b, "env", NULL, envc, T_TEXT, err, errlen) < 0 ||
            check_family(b, "allow-write", NULL, allow, T_TEXT, err, errlen) < 0 ||
            check_family(b, "thread", "tid", threads, T_U64, err, errlen) < 0 ||
            check_family(b, "thread", "instructions", threads, T_U64, err, errlen) < 0)
            return -1;
        uint64_t sum = 0;
        for (uint64_t t = 0; t < threads; t++) {
            char key[64];
            snprintf(key, sizeof key, "thread.%" PRIu64 ".instructions", t);
            sum += rnr_bundle_u64(b, key);
        }
        if (sum != rnr_bundle_u64(b, "instructions"))
            BAD("%s: the threads' instructions add up to %" PRIu64 ", 'instructions' says %" PRIu64,
                b->manifest_path, sum, rnr_bundle_u64(b, "instructions"));
    }
    /* Files: both keys or neither; the required ones present. */
    int packed = b->kind == K_REC && strcmp(rnr_bundle_str(b, "program.packed"), "program") == 0;
    for (int f = 0; f < RNR_BF_COUNT; f++) {
        char kb[128], ks[128];
        file_key(kb, sizeof kb, f, "bytes");
        file_key(ks, sizeof ks, f, "sha256");
        const char *vb = rnr_manifest_get(m, kb), *vs = rnr_manifest_get(m, ks);
        if (!vb && !vs) {
            if (file_required(b->kind, f, packed))
                BAD("%s: no '%s' (the bundle must hold %s)", b->manifest_path, ks, file_names[f]);
            continue;
        }
        if (!vb || !valid(T_U64, vb))
            BAD("%s: '%s' is %s", b->manifest_path, kb, vb ? "not an unsigned decimal" : "missing");
        if (!vs || !valid(T_HEX, vs))
            BAD("%s: '%s' is %s", b->manifest_path, ks, vs ? "not 64 hex digits" : "missing");
    }
    /* Every key is one of the schema's. */
    for (size_t i = 0; i < rnr_manifest_count(m); i++) {
        const char *k = rnr_manifest_key(m, i);
        int known = 0;
        for (size_t j = 0; j < sizeof schema / sizeof schema[0] && !known; j++)
            known = strcmp(k, schema[j].key) == 0;
        uint64_t idx;
        const char *sfx;
        if (!known && family_key(k, "arg", &idx, &sfx))
            known = !*sfx && idx < argc;
        if (!known && family_key(k, "env", &idx, &sfx))
            known = !*sfx && idx < envc;
        if (!known && family_key(k, "allow-write", &idx, &sfx))
            known = !*sfx && idx < allow;
        if (!known && b->kind == K_REC && family_key(k, "thread", &idx, &sfx))
            known = idx < threads && (strcmp(sfx, "tid") == 0 || strcmp(sfx, "instructions") == 0);
        if (!known && b->kind == K_REC && family_key(k, "exec", &idx, &sfx))
            known = idx < execs && (strcmp(sfx, "path") == 0 || strcmp(sfx, "sha256") == 0 ||
                                    strcmp(sfx, "file") == 0);
        for (int f = 0; f < RNR_BF_COUNT && !known; f++) {
            char kb[128], ks[128];
            file_key(kb, sizeof kb, f, "bytes");
            file_key(ks, sizeof ks, f, "sha256");
            known = strcmp(k, kb) == 0 || strcmp(k, ks) == 0;
        }
        if (!known)
            BAD("%s: unknown key '%.80s'", b->manifest_path, k);
    }
    return 0;
}

/* The reason a bundle that is not finished cannot be used. */
static void not_finished(const rnr_bundle *b, const char *status, char *err, size_t errlen)
{
    if (strcmp(status, RNR_BUNDLE_RECORDING) == 0) {
        uint64_t pid = 0;
        const char *p = rnr_manifest_get(b->m, "recorder.pid");
        if (p)
            pid = strtoull(p, NULL, 10);
        if (pid && pid <= INT32_MAX && (kill((pid_t)pid, 0) == 0 || errno == EPERM))
            snprintf(err, errlen, "%s: is being recorded (status recording, recorder pid %" PRIu64
                     "): wait for it to finish", b->dir, pid);
        else
            snprintf(err, errlen, "%s: the recording never finished (status recording; its recorder, "
                     "pid %" PRIu64 ", is gone: killed?): it cannot be used", b->dir, pid);
        return;
    }
    snprintf(err, errlen, "%s: the recording did not finish (status %.200s): it cannot be used",
             b->dir, status);
}

rnr_bundle *rnr_bundle_open(const char *name, unsigned flags, char *err, size_t errlen)
{
    char dir[4096];
    if (rnr_bundle_resolve(name, dir, sizeof dir, err, errlen) < 0)
        return NULL;
    struct stat st;
    if (stat(dir, &st) != 0) {
        if (errno == ENOENT)
            snprintf(err, errlen, "%s: no such bundle directory", dir);
        else
            snprintf(err, errlen, "%s: %s", dir, strerror(errno));
        return NULL;
    }
    if (!S_ISDIR(st.st_mode)) {
        snprintf(err, errlen, "%s: not a directory (a recording bundle)", dir);
        return NULL;
    }
    rnr_bundle *b = bundle_new(dir);
    b->dir_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (b->dir_fd >= 0)
        while (flock(b->dir_fd, LOCK_SH) != 0 && errno == EINTR) {
        }
    char lerr[1024];
    b->m = rnr_manifest_load(b->manifest_path, lerr, sizeof lerr);
    if (!b->m) {
        if (access(b->manifest_path, F_OK) != 0)
            snprintf(err, errlen, "%s (is %s a recording bundle?)", lerr, dir);
        else
            snprintf(err, errlen, "%s", lerr);
        goto fail;
    }
    const char *kind = rnr_bundle_kind(b), *status = rnr_bundle_status(b);
    if (strcmp(kind, "recording") == 0) {
        b->kind = K_REC;
    } else if (strcmp(kind, "synthetic") == 0) {
        b->kind = K_SYN;
    } else {
        snprintf(err, errlen, "%s: 'kind' is '%.80s', not recording or synthetic", b->manifest_path,
                 kind);
        goto fail;
    }
    if (!final_status(status)) {
        if (flags & (RNR_BUNDLE_FINISHED | RNR_BUNDLE_UPDATE)) {
            not_finished(b, status, err, errlen);
            goto fail;
        }
        return b;   /* rnr info shows what there is */
    }
    if (check_schema(b, err, errlen) < 0)
        goto fail;
    return b;
fail:
    rnr_bundle_close(b);
    return NULL;
}

void rnr_bundle_unlock(rnr_bundle *b)
{
    if (b->dir_fd >= 0)
        flock(b->dir_fd, LOCK_UN);
}

int rnr_bundle_has(const rnr_bundle *b, rnr_bundle_file f)
{
    char key[128];
    file_key(key, sizeof key, f, "sha256");
    return rnr_manifest_get(b->m, key) != NULL;
}

int rnr_bundle_check_copy(const rnr_bundle *b, rnr_bundle_file f, const char *path, char *err,
                          size_t errlen)
{
    char kb[128], ks[128];
    file_key(kb, sizeof kb, f, "bytes");
    file_key(ks, sizeof ks, f, "sha256");
    const char *want = rnr_manifest_get(b->m, ks);
    uint64_t want_bytes;
    if (!want || rnr_manifest_get_u64(b->m, kb, &want_bytes) < 0) {
        snprintf(err, errlen, "%s: names no %s ('%s')", b->manifest_path, file_names[f], ks);
        return -1;
    }
    uint64_t size;
    char hex[RNR_SHA256_HEX];
    struct stat st;
    if (stat(path, &st) != 0 && errno == ENOENT) {
        snprintf(err, errlen, "%s: the manifest names it but it is missing", path);
        return -1;
    }
    if (file_digest(path, &size, hex, err, errlen) < 0)
        return -1;
    if (size != want_bytes || strcmp(hex, want) != 0) {
        snprintf(err, errlen, "%s: not the recorded file: %" PRIu64 " bytes, SHA-256 %s; the manifest "
                 "says %" PRIu64 " bytes, SHA-256 %s", path, size, hex, want_bytes, want);
        return -1;
    }
    return 0;
}

int rnr_bundle_check_file(const rnr_bundle *b, rnr_bundle_file f, char *path, size_t len,
                          char *err, size_t errlen)
{
    if (rnr_bundle_path(b->dir, file_names[f], path, len, err, errlen) < 0)
        return -1;
    return rnr_bundle_check_copy(b, f, path, err, errlen);
}

uint64_t rnr_bundle_u64(const rnr_bundle *b, const char *key)
{
    uint64_t v;
    if (rnr_manifest_get_u64(b->m, key, &v) < 0) {
        fprintf(stderr, "rnr: internal error: manifest key '%s' not checked\n", key);
        abort();
    }
    return v;
}

const char *rnr_bundle_str(const rnr_bundle *b, const char *key)
{
    const char *v = rnr_manifest_get(b->m, key);
    if (!v) {
        fprintf(stderr, "rnr: internal error: manifest key '%s' not checked\n", key);
        abort();
    }
    return v;
}

int rnr_bundle_publish(rnr_bundle *b, char *err, size_t errlen)
{
    if (b->dir_fd < 0) {
        snprintf(err, errlen, "%s: cannot lock the bundle", b->dir);
        return -1;
    }
    while (flock(b->dir_fd, LOCK_EX) != 0)
        if (errno != EINTR) {
            snprintf(err, errlen, "%s: cannot lock the bundle: %s", b->dir, strerror(errno));
            return -1;
        }
    /* Another updater may have published since we read the manifest. */
    char lerr[1024];
    rnr_manifest *now = rnr_manifest_load(b->manifest_path, lerr, sizeof lerr);
    int rc = -1;
    if (!now) {
        snprintf(err, errlen, "%s", lerr);
        goto out;
    }
    rnr_manifest_free(b->m);
    b->m = now;
    for (int f = 0; f < RNR_BF_COUNT; f++)
        if (b->written[f] && b->tmp[f] && put_in_place(b, f, err, errlen) < 0)
            goto out;
    rc = rnr_manifest_save(b->m, b->manifest_path, err, errlen);
out:
    flock(b->dir_fd, LOCK_UN);
    return rc;
}
