/* tests/testutil.c: shared test helpers. */
#include "tests/testutil.h"

#include "formats/bundle.h"
#include "formats/digest.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

const char *tu_env(const char *name)
{
    const char *v = getenv(name);
    ck_assert_msg(v && *v, "environment variable %s is not set (run the tests through make)", name);
    return v;
}

const char *tu_rnr_bin(void) { return tu_env("RNR_BIN"); }

int tu_under_valgrind(void) { return getenv("RNR_VALGRIND") != NULL; }

static char *slurp_fd(int fd, size_t *n)
{
    size_t cap = 4096, len = 0;
    char *buf = malloc(cap);
    ck_assert_ptr_nonnull(buf);
    lseek(fd, 0, SEEK_SET);
    for (;;) {
        if (len + 1 >= cap) {
            cap *= 2;
            buf = realloc(buf, cap);
            ck_assert_ptr_nonnull(buf);
        }
        ssize_t r = read(fd, buf + len, cap - len - 1);
        if (r < 0 && errno == EINTR)
            continue;
        ck_assert_int_ge(r, 0);
        if (r == 0)
            break;
        len += (size_t)r;
    }
    buf[len] = '\0';
    *n = len;
    return buf;
}

static int scratch_fd(void)
{
    char name[] = "/tmp/rnr-test-out-XXXXXX";
    int fd = mkstemp(name);
    ck_assert_int_ge(fd, 0);
    unlink(name);
    return fd;
}

void tu_run(const char *const *argv, const char *stdin_path, tu_output *o)
{
    memset(o, 0, sizeof *o);
    int out = scratch_fd(), err = scratch_fd();
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, stdin_path ? stdin_path : "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&fa, out, 1);
    posix_spawn_file_actions_adddup2(&fa, err, 2);
    /* Only the three standard streams reach the child: a descriptor the
     * test runner inherited (a CI harness's pipe, say) would be open under
     * qemu-riscv64, which passes host descriptors through, and not under
     * rnr, whose guest starts with 0-2 alone. */
    posix_spawn_file_actions_addclosefrom_np(&fa, 3);
    pid_t pid;
    int rc = posix_spawn(&pid, argv[0], &fa, NULL, (char *const *)argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    ck_assert_msg(rc == 0, "cannot start %s: %s", argv[0], strerror(rc));
    int status;
    while (waitpid(pid, &status, 0) < 0)
        ck_assert_int_eq(errno, EINTR);
    o->status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    o->out = slurp_fd(out, &o->out_len);
    o->err = slurp_fd(err, &o->err_len);
    close(out);
    close(err);
}

void tu_rnr(tu_output *o, const char *const *args)
{
    const char *argv[64];
    size_t n = 0;
    argv[n++] = tu_rnr_bin();
    for (; args[n - 1] && n < 63; n++)
        argv[n] = args[n - 1];
    argv[n] = NULL;
    tu_run(argv, NULL, o);
}

int tu_record(tu_output *o, const char *dir, const char *prog, const char *const *opts,
              const char *const *args)
{
    const char *a[48];
    size_t n = 0;
    a[n++] = "record";
    a[n++] = "--quiet";
    for (size_t i = 0; opts && opts[i] && i < 16; i++)
        a[n++] = opts[i];
    a[n++] = "-o";
    a[n++] = dir;
    a[n++] = "--";
    a[n++] = tu_path(tu_env("RNR_GUEST_DIR"), prog);
    for (size_t i = 0; args && args[i] && i < 16; i++)
        a[n++] = args[i];
    a[n] = NULL;
    tu_rnr(o, a);
    return o->status;
}

void tu_output_free(tu_output *o)
{
    free(o->out);
    free(o->err);
    memset(o, 0, sizeof *o);
}

size_t tu_count_lines(const char *s)
{
    size_t n = 0;
    for (; *s; s++)
        n += *s == '\n';
    return n;
}

char *tu_tmpdir(void)
{
    const char *base = getenv("TMPDIR");
    char *path;
    ck_assert_int_gt(asprintf(&path, "%s/rnr-test-XXXXXX", base && *base ? base : "/tmp"), 0);
    ck_assert_ptr_nonnull(mkdtemp(path));
    return path;
}

void tu_rmtree(const char *path)
{
    DIR *d = opendir(path);
    if (d) {
        struct dirent *e;
        while ((e = readdir(d))) {
            if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
                continue;
            char *sub;
            ck_assert_int_gt(asprintf(&sub, "%s/%s", path, e->d_name), 0);
            struct stat st;
            if (lstat(sub, &st) == 0 && S_ISDIR(st.st_mode))
                tu_rmtree(sub);
            else
                unlink(sub);
            free(sub);
        }
        closedir(d);
    }
    rmdir(path);
}

const char *tu_path(const char *dir, const char *name)
{
    static char bufs[8][4096];
    static unsigned next;
    char *b = bufs[next++ % 8];
    snprintf(b, sizeof bufs[0], "%s/%s", dir, name);
    return b;
}

void tu_write_file(const char *path, const void *data, size_t n)
{
    FILE *f = fopen(path, "wb");
    ck_assert_msg(f != NULL, "cannot create %s: %s", path, strerror(errno));
    ck_assert_uint_eq(fwrite(data, 1, n, f), n);
    ck_assert_int_eq(fclose(f), 0);
}

size_t tu_write_counting(const char *path, int count)
{
    FILE *f = fopen(path, "w");
    ck_assert_msg(f != NULL, "cannot create %s: %s", path, strerror(errno));
    size_t n = 0;
    for (int i = 1; i <= count; i++)
        n += (size_t)fprintf(f, "%d\n", i);
    ck_assert_int_eq(fclose(f), 0);
    return n;
}

uint8_t *tu_read_file(const char *path, size_t *n)
{
    int fd = open(path, O_RDONLY);
    ck_assert_msg(fd >= 0, "cannot open %s: %s", path, strerror(errno));
    char *p = slurp_fd(fd, n);
    close(fd);
    return (uint8_t *)p;
}

uint64_t tu_seed(uint64_t base)
{
    const char *s = getenv("RNR_TEST_SEED");
    return s && *s ? strtoull(s, NULL, 0) : base;
}

TCase *tu_tcase(Suite *s, const char *name, double timeout)
{
    TCase *tc = tcase_create(name);
    tcase_set_timeout(tc, timeout);
    suite_add_tcase(s, tc);
    return tc;
}

void tu_synth_random(synth_config *c, uint64_t *rng, uint64_t insns_spread)
{
    uint32_t cpus = 2 + (uint32_t)tu_below(rng, 7);
    synth_config_default(c, cpus);
    c->seed = tu_rand(rng);
    c->threads = 1 + (uint32_t)tu_below(rng, cpus + 2);
    c->os_cpus = (uint32_t)tu_below(rng, 2);
    if (c->threads <= c->os_cpus)
        c->threads = c->os_cpus + 1;
    c->insns = 1000 + tu_below(rng, insns_spread);
    c->shared_lines = 2 + (uint32_t)tu_below(rng, 40);
    c->sharing = 0.001 + 0.04 * (double)tu_below(rng, 100) / 100.0;
    c->quantum = tu_below(rng, 2) ? 200 + tu_below(rng, 2000) : 0;
    c->block_rate = tu_below(rng, 3) == 0 ? 0.005 : 0;
    c->syscall_rate = 0.2 * (double)tu_below(rng, 3);
    c->rru.chunk_max = 50 + tu_below(rng, 1000);
    c->rru.msp = 800 + tu_below(rng, 6000);
}

void tu_synth_log(uint64_t *rng, uint64_t insns_spread, rnr_membuf *in, truth_set *truth,
                  synth_result *res)
{
    synth_config c;
    tu_synth_random(&c, rng, insns_spread);
    synth_result r;
    synth_to_memory(&c, in, truth, res ? res : &r);
}

void tu_bundle_resign(const char *dir, const char *key, const char *value)
{
    char err[1024];
    rnr_manifest *m = rnr_manifest_load(tu_path(dir, "manifest"), err, sizeof err);
    ck_assert_msg(m != NULL, "%s", err);
    rnr_manifest *out = rnr_manifest_new();
    for (size_t i = 0; i < rnr_manifest_count(m); i++) {
        const char *k = rnr_manifest_key(m, i);
        if (strncmp(k, "file.", 5) != 0)
            rnr_manifest_set(out, k, key && strcmp(k, key) == 0 ? value : rnr_manifest_value(m, i));
    }
    if (key && !rnr_manifest_get(out, key))
        rnr_manifest_set(out, key, value);
    for (int f = 0; f < RNR_BF_COUNT; f++) {
        const char *name = rnr_bundle_file_name((rnr_bundle_file)f);
        char kb[128], ks[128];
        snprintf(kb, sizeof kb, "file.%s.bytes", name);
        snprintf(ks, sizeof ks, "file.%s.sha256", name);
        struct stat st;
        if (stat(tu_path(dir, name), &st) != 0)
            continue;
        uint8_t d[32];
        char hex[RNR_SHA256_HEX];
        ck_assert_msg(rnr_sha256_file(tu_path(dir, name), d, err, sizeof err) == 0, "%s", err);
        rnr_hex(d, 32, hex);
        rnr_manifest_set_u64(out, kb, (uint64_t)st.st_size);
        rnr_manifest_set(out, ks, hex);
    }
    ck_assert_msg(rnr_manifest_save(out, tu_path(dir, "manifest"), err, sizeof err) == 0, "%s", err);
    rnr_manifest_free(m);
    rnr_manifest_free(out);
}

char *tu_manifest_value(const char *dir, const char *key)
{
    char err[1024];
    rnr_manifest *m = rnr_manifest_load(tu_path(dir, "manifest"), err, sizeof err);
    ck_assert_msg(m != NULL, "%s", err);
    const char *v = rnr_manifest_get(m, key);
    char *c = v ? strdup(v) : NULL;
    rnr_manifest_free(m);
    return c;
}

void tu_wait_part(const char *dir, const char *name, long pid, long n, char *path, size_t len)
{
    snprintf(path, len, "%s/.%s.%ld.part", dir, name, pid);
    for (int i = 0; i < 6000; i++) {
        struct stat st;
        if (stat(path, &st) == 0 && st.st_size > n)
            return;
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    ck_abort_msg("%s never held more than %ld bytes", path, n);
}

/* Each runs in well under a second on 4 CPUs. Three end by a signal:
 * itimer kill and pause by SIGALRM (status 142), sighandler abort by
 * SIGABRT after its handler returned (134). */
const tu_workload tu_threaded[] = {
    {"racy", {"4", "300"}}, {"mutex", {0}}, {"barrier", {0}}, {"condvar", {0}},
    {"parloop", {"4", "3000"}}, {"rwlock", {0}}, {"atomics", {0}}, {"manythreads", {0}},
    {"pipes", {0}}, {"tls", {0}}, {"unmap", {"2"}}, {"chatter", {"3", "8"}},
    {"malloc_stress", {0}}, {"sysprobe", {"time"}}, {"mmapfile", {0}}, {"redirect", {"3"}},
    {"sysprobe", {"misc"}}, {"counters", {"4", "mix"}}, {"sysprobe", {"proc"}}, {"sysprobe", {"maps", "strict"}},
    {"pollpipe", {"3"}}, {"itimer", {"kill"}}, {"itimer", {"pause"}}, {"itimer", {"ignored"}},
    {"openmp", {"4", "3000"}}, {"sighandler", {0}}, {"sighandler", {"abort"}}, {"robust", {0}},
    {"sigthreads", {0}}, {"bigread", {"64"}},
};
const size_t tu_threaded_count = sizeof tu_threaded / sizeof tu_threaded[0];
