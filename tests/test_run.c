/* tests/test_run.c: `rnr run` end to end on the guest programs of
 * workloads/: identical stdout and exit status to qemu-riscv64 for the
 * single-threaded ones, known-correct results for the threaded ones on
 * 1, 2, 8 and 16 cores, determinism, seeds that change the interleaving,
 * deadlock reports, bad programs and bad options. */
#include <dirent.h>
#include <elf.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "formats/log.h"
#include "tests/testutil.h"

#define QEMU "/usr/bin/qemu-riscv64"

static const char *guest(const char *name) { return tu_path(tu_env("RNR_GUEST_DIR"), name); }

/* Runs ARGV (NULL-terminated, at most 24) under an environment of one
 * variable, RNRTEST_A, through env(1), so that rnr and qemu see the same.
 * (One: qemu-riscv64 reverses the order of the environment, Linux and rnr
 * keep it; run_keeps_the_environment_in_order checks rnr alone.) */
static void run_env_stdin(tu_output *o, const char *const *argv, const char *stdin_path)
{
    const char *full[32] = {"/usr/bin/env", "-i", "RNRTEST_A=with space"};
    size_t n = 3;
    for (size_t i = 0; argv[i] && n < 31; i++)
        full[n++] = argv[i];
    full[n] = NULL;
    tu_run(full, stdin_path, o);
}

/* Runs PROG with ARGS (NULL-terminated) under rnr run (extra rnr options
 * first) and under qemu; both stdout and exit status must be equal. */
static void same_as_qemu_stdin(const char *const *rnr_opts, const char *prog, const char *const *args,
                               const char *stdin_path);

static void same_as_qemu(const char *const *rnr_opts, const char *prog, const char *const *args)
{
    same_as_qemu_stdin(rnr_opts, prog, args, NULL);
}

/* The same with standard input from STDIN_PATH (NULL: /dev/null). */
static void same_as_qemu_stdin(const char *const *rnr_opts, const char *prog, const char *const *args,
                               const char *stdin_path)
{
    const char *a[32], *b[32];
    size_t n = 0, m = 0;
    a[n++] = tu_rnr_bin();
    a[n++] = "run";
    for (size_t i = 0; rnr_opts && rnr_opts[i]; i++)
        a[n++] = rnr_opts[i];
    a[n++] = "--";
    a[n++] = prog;
    b[m++] = QEMU;
    b[m++] = prog;
    for (size_t i = 0; args && args[i]; i++) {
        a[n++] = args[i];
        b[m++] = args[i];
    }
    a[n] = b[m] = NULL;
    tu_output r, q;
    run_env_stdin(&r, a, stdin_path);
    run_env_stdin(&q, b, stdin_path);
    ck_assert_msg(q.out_len > 0, "qemu printed nothing for %s: %s", prog, q.err);
    ck_assert_msg(r.out_len == q.out_len && memcmp(r.out, q.out, r.out_len) == 0,
                  "%s %s: stdout differs from qemu\n--- rnr (status %d, stderr %.300s)\n%.1500s\n--- qemu\n%.1500s",
                  prog, args && args[0] ? args[0] : "", r.status, r.err, r.out, q.out);
    ck_assert_msg(r.status == q.status, "%s %s: status %d, qemu %d (stderr: %.500s)", prog,
                  args && args[0] ? args[0] : "", r.status, q.status, r.err);
    tu_output_free(&r);
    tu_output_free(&q);
}

START_TEST(run_matches_qemu_on_single_threaded_workloads)
{
    static const char *const plain[] = {"intmath", "fpmath", "strings", "sort", "malloc_stress"};
    for (size_t i = 0; i < sizeof plain / sizeof plain[0]; i++)
        same_as_qemu(NULL, guest(plain[i]), NULL);
    const char *passes[] = {"40", NULL};
    same_as_qemu(NULL, guest("fploop"), passes);
}
END_TEST

START_TEST(run_matches_qemu_on_arguments_environment_and_exit_status)
{
    const char *args[] = {"one", "two words", "", "x=y", NULL};
    same_as_qemu(NULL, guest("argenv"), args);
    const char *opts[] = {"-n", "1", NULL};
    same_as_qemu(opts, guest("argenv"), NULL);
    const char *ex[] = {"exit", "7", NULL};
    same_as_qemu(NULL, guest("signals"), ex);
    const char *pie[] = {"a", "b", NULL};
    same_as_qemu(NULL, guest("pie_hello"), pie);
}
END_TEST

START_TEST(run_keeps_the_environment_in_order)
{
    const char *a[] = {"/usr/bin/env", "-i", "RNRTEST_B=2", "OTHER=x", "RNRTEST_A=1", "RNRTEST_EXIT=3",
                       tu_rnr_bin(), "run", "--", guest("argenv"), NULL};
    tu_output o;
    tu_run(a, NULL, &o);
    ck_assert_int_eq(o.status, 3);
    ck_assert_msg(strstr(o.out, "env 0 'RNRTEST_B=2'\nenv 1 'RNRTEST_A=1'\nenv 2 'RNRTEST_EXIT=3'\n") != NULL,
                  "%s", o.out);
    tu_output_free(&o);
}
END_TEST

static char *random_line(const char *out)
{
    const char *r = strstr(out, "random ");
    ck_assert_ptr_nonnull(r);
    return strndup(r, strcspn(r, "\n"));
}

START_TEST(run_builds_the_initial_stack_and_auxv_of_linux)
{
    tu_output o, o2, o3;
    tu_rnr(&o, (const char *[]){"run", "--seed", "5", "--", guest("sysprobe"), "auxv", NULL});
    ck_assert_int_eq(o.status, 0);
    static const char *const lines[] = {
        "hwcap 0x112d pagesz 4096 clktck 100\n",
        "uid 1000 euid 1000 gid 1000 egid 1000 secure 0 base 0 flags 0\n",
        "entry is _start 1 phdr in image 1 phent 56 phnum>1 1\n",
        "execfn is argv[0] 1 platform 0\n",
        "environ follows argv 1\n",
    };
    for (size_t i = 0; i < sizeof lines / sizeof lines[0]; i++)
        ck_assert_msg(strstr(o.out, lines[i]) != NULL, "missing '%s' in:\n%s", lines[i], o.out);
    /* AT_RANDOM: from the seed, so the same for the same seed only. */
    tu_rnr(&o2, (const char *[]){"run", "--seed", "5", "--", guest("sysprobe"), "auxv", NULL});
    tu_rnr(&o3, (const char *[]){"run", "--seed", "6", "--", guest("sysprobe"), "auxv", NULL});
    char *r1 = random_line(o.out), *r2 = random_line(o2.out), *r3 = random_line(o3.out);
    ck_assert_str_eq(r1, r2);
    ck_assert_str_ne(r1, r3);
    ck_assert_str_ne(r1, "random 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00");
    free(r1);
    free(r2);
    free(r3);
    tu_output_free(&o);
    tu_output_free(&o2);
    tu_output_free(&o3);
}
END_TEST

START_TEST(run_matches_qemu_on_file_input)
{
    char *dir = tu_tmpdir();
    const char *path = tu_path(dir, "input.txt");
    char text[4096];
    size_t n = 0;
    for (int i = 0; i < 120; i++)
        n += (size_t)snprintf(text + n, sizeof text - n, "line %d: %s\n", i,
                              i % 3 ? "some words here" : "\tand\ttabs");
    tu_write_file(path, text, n);
    char p1[4096], p2[4096];
    snprintf(p1, sizeof p1, "%s", path);
    snprintf(p2, sizeof p2, "%s/does-not-exist", dir);
    const char *args[] = {p1, p2, NULL};
    same_as_qemu(NULL, guest("fileio"), args);
    /* bigread: one read() of 64 KiB (of its own program file) into a
     * buffer that threads write before and hash after. */
    char self[4096];
    snprintf(self, sizeof self, "%s", guest("bigread"));
    const char *big[] = {"64", "3", self, NULL};
    same_as_qemu(NULL, self, big);
    tu_rmtree(dir);
    free(dir);
}
END_TEST

/* A directory with a file, an executable, a subdirectory and data.txt
 * for fsprobe (listing, access, stat, readv); returns its path (owned). */
static char *fsprobe_dir(void)
{
    char *dir = tu_tmpdir();
    tu_write_file(tu_path(dir, "data.txt"), "one two three four five six seven\n", 34);
    tu_write_file(tu_path(dir, "b.bin"), "x", 1);
    tu_write_file(tu_path(dir, "run.sh"), "#!/bin/sh\n", 10);
    ck_assert_int_eq(chmod(tu_path(dir, "run.sh"), 0755), 0);
    ck_assert_int_eq(mkdir(tu_path(dir, "sub"), 0755), 0);
    return dir;
}

START_TEST(run_matches_qemu_on_directories_access_and_readv)
{
    char *dir = fsprobe_dir();
    const char *args[] = {dir, NULL};
    same_as_qemu(NULL, guest("fsprobe"), args);
    tu_rmtree(dir);
    free(dir);
}
END_TEST

/* stdinsum's threads read standard input in pieces under a mutex: the
 * counts and checksum of a 13,893-byte input (and end of file repeated
 * through read() and stdio) equal qemu's, on 1 and on 4 CPUs; an empty
 * input too. */
START_TEST(run_matches_qemu_reading_standard_input)
{
    char *dir = tu_tmpdir();
    const char *path = tu_path(dir, "in.txt");
    ck_assert_uint_eq(tu_write_counting(path, 3000), 13893);
    const char *args[] = {"4", NULL};
    same_as_qemu_stdin(NULL, guest("stdinsum"), args, path);
    const char *opts[] = {"-n", "4", NULL};
    same_as_qemu_stdin(opts, guest("stdinsum"), args, path);
    same_as_qemu_stdin(opts, guest("stdinsum"), args, NULL);
    tu_rmtree(dir);
    free(dir);
}
END_TEST

/* mmapfile maps a file and reads it from threads: a file of 5 pages and
 * a part (the last page runs past its end) on one thread, then the
 * program's own file (its default) on eight. */
START_TEST(run_matches_qemu_on_file_mappings)
{
    char *dir = tu_tmpdir();
    const char *path = tu_path(dir, "data.bin");
    static uint8_t data[5 * 4096 + 333];
    uint64_t x = 0x9e3779b97f4a7c15ull;
    for (size_t i = 0; i < sizeof data; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        data[i] = (uint8_t)(i % 5 ? x : 0);
    }
    tu_write_file(path, data, sizeof data);
    char p1[4096];
    snprintf(p1, sizeof p1, "%s", path);
    const char *one[] = {p1, "1", NULL};
    same_as_qemu(NULL, guest("mmapfile"), one);
    const char *opts[] = {"-n", "8", NULL};
    same_as_qemu(opts, guest("mmapfile"), NULL);
    tu_rmtree(dir);
    free(dir);
}
END_TEST

START_TEST(run_matches_qemu_on_system_call_semantics)
{
    static const char *const modes[] = {"mem", "futex", "time", "misc", "proc", "maps"};
    for (size_t i = 0; i < 6; i++) {
        const char *args[] = {modes[i], NULL};
        same_as_qemu(NULL, guest("sysprobe"), args);
    }
    /* /proc/self/maps refuses what Linux refuses a user who is not root
     * (qemu-riscv64 opens its own copy of the file either way). */
    tu_output o;
    tu_rnr(&o, (const char *[]){"run", "--", guest("sysprobe"), "maps", "strict", NULL});
    ck_assert_int_eq(o.status, 0);
    ck_assert_ptr_nonnull(strstr(o.out, "main getattr 0 holds local 1 within limit 1\n"));
    ck_assert_ptr_nonnull(
        strstr(o.out, "write open EACCES\ndirectory open ENOTDIR\naccess write EACCES\n"));
    tu_output_free(&o);
    /* So do the real-time scheduling policies. */
    tu_rnr(&o, (const char *[]){"run", "--", guest("sysprobe"), "proc", "strict", NULL});
    ck_assert_int_eq(o.status, 0);
    ck_assert_ptr_nonnull(strstr(o.out, "setscheduler fifo EPERM\nsetscheduler rr EPERM\n"
                                        "setscheduler fifo priority 0 EINVAL\n"));
    tu_output_free(&o);
    /* poll on pipes between threads: ready, timeout, HUP, ERR, NVAL. */
    same_as_qemu(NULL, guest("pollpipe"), NULL);
    const char *two[] = {"-n", "2", NULL};
    same_as_qemu(two, guest("pollpipe"), NULL);
    /* The standard streams moved between descriptors (and /dev/null
     * opened for writing at descriptor 1). */
    same_as_qemu(NULL, guest("redirect"), NULL);
    /* The interval timer: its values, and SIGALRM ending a spinning and a
     * pausing process, or ignored while threads sleep. */
    static const char *const timer_modes[] = {"query", "kill", "pause", "ignored"};
    for (size_t i = 0; i < 4; i++) {
        const char *args[] = {timer_modes[i], NULL};
        same_as_qemu(NULL, guest("itimer"), args);
    }
    /* rdtime, rdcycle and rdinstret from three threads only grow. */
    const char *three[] = {"3", NULL};
    same_as_qemu(NULL, guest("counters"), three);
}
END_TEST

START_TEST(run_matches_qemu_on_a_pipe_between_threads)
{
    const char *one[] = {"-n", "1", NULL}, *eight[] = {"-n", "8", "--quantum", "2000", NULL};
    same_as_qemu(one, guest("pipes"), NULL);
    same_as_qemu(eight, guest("pipes"), NULL);
}
END_TEST

/* An OpenMP program (libgomp): its team, schedules, tasks, locks and
 * threadprivate data, with more threads than cores and fewer. */
START_TEST(run_matches_qemu_on_an_openmp_program)
{
    const char *two[] = {"-n", "2", NULL}, *eight[] = {"-n", "8", NULL};
    const char *four[] = {"4", "5000", NULL}, *three[] = {"3", "5000", NULL};
    same_as_qemu(two, guest("openmp"), four);
    same_as_qemu(eight, guest("openmp"), three);
}
END_TEST

/* Signal handlers: equal to qemu where qemu follows Linux; the sa_mask case (qemu-riscv64 runs the blocked signal at
 * once) against what Linux prints, checked on x86-64 Linux with the same
 * source: a signal raised under the handler's sa_mask runs after it. */
START_TEST(run_runs_signal_handlers)
{
    const char *nomask[] = {"nomask", NULL}, *ab[] = {"abort", NULL}, *two[] = {"-n", "2", NULL};
    same_as_qemu(NULL, guest("sighandler"), nomask);
    same_as_qemu(two, guest("sighandler"), nomask);
    same_as_qemu(NULL, guest("sighandler"), ab);
    /* From other threads, the timer and SIGPIPE, and pthread_cancel of
     * blocked threads (before: the process ended with the default action,
     * SIGUSR1's status 138). */
    const char *one[] = {"-n", "1", NULL}, *eight[] = {"-n", "8", NULL};
    same_as_qemu(NULL, guest("sigthreads"), NULL);
    same_as_qemu(one, guest("sigthreads"), NULL);
    same_as_qemu(eight, guest("sigthreads"), NULL);
    const char *a[] = {"run", "--", guest("sighandler"), NULL};
    tu_output o;
    tu_rnr(&o, a);
    ck_assert_msg(o.status == 0, "status %d: %s", o.status, o.err);
    ck_assert_msg(strstr(o.out, "\norder: usr1-begin usr1-end usr2 \n") != NULL, "%s", o.out);
    ck_assert_msg(strstr(o.out, "thread 1: 75 handler runs\n") != NULL, "%s", o.out);
    ck_assert_msg(o.err_len == 0, "stderr: %s", o.err);
    tu_output_free(&o);
}
END_TEST

/* Robust mutexes: the robust futex list is walked when a thread ends
 * (without it the waiter below blocks forever: status 124). */
START_TEST(run_matches_qemu_on_robust_mutexes)
{
    const char *one[] = {"-n", "1", NULL};
    same_as_qemu(NULL, guest("robust"), NULL);
    same_as_qemu(one, guest("robust"), NULL);
}
END_TEST

START_TEST(run_ends_with_the_signal_status_and_names_it)
{
    static const struct { const char *arg; int status; const char *name; } cases[] = {
        {"abort", 134, "SIGABRT"}, {"segv", 139, "SIGSEGV"}, {"ill", 132, "SIGILL"},
        {"raise", 143, "SIGTERM"},
    };
    for (size_t i = 0; i < 4; i++) {
        const char *args[] = {cases[i].arg, NULL};
        same_as_qemu(NULL, guest("signals"), args);
        const char *a[] = {"run", "--", guest("signals"), cases[i].arg, NULL};
        tu_output o;
        tu_rnr(&o, a);
        ck_assert_int_eq(o.status, cases[i].status);
        ck_assert_msg(strstr(o.err, cases[i].name) && strstr(o.err, "pc 0x"), "%s", o.err);
        ck_assert_uint_eq(tu_count_lines(o.err), 1);
        tu_output_free(&o);
    }
    const char *ign[] = {"ignored", NULL};
    same_as_qemu(NULL, guest("signals"), ign);
    /* pthread_cancel runs glibc's SIGCANCEL handler in the sleeping thread
     * (before, rnr ended the process with status 160). */
    const char *cancel[] = {"cancel", NULL};
    same_as_qemu(NULL, guest("signals"), cancel);
}
END_TEST

/* ---- threaded workloads ---- */

static void expect_line(const char *cores, const char *prog, const char *const *args,
                        const char *expect)
{
    const char *a[16] = {"run", "-n", cores, "--", guest(prog)};
    size_t n = 5;
    for (size_t i = 0; args[i]; i++)
        a[n++] = args[i];
    a[n] = NULL;
    tu_output o;
    tu_rnr(&o, a);
    ck_assert_msg(o.status == 0 && strcmp(o.out, expect) == 0,
                  "%s on %s cores: status %d\n got: %s want: %s stderr: %s", prog, cores, o.status,
                  o.out, expect, o.err);
    tu_output_free(&o);
}

START_TEST(run_threaded_workloads_are_correct_on_1_2_8_16_cores)
{
    static const char *const cores[] = {"1", "2", "8", "16"};
    char want[256];
    for (size_t c = 0; c < 4; c++) {
        /* Each expected result is computed here from its closed form. */
        uint64_t T = 5, I = 300;
        snprintf(want, sizeof want, "mutex: threads %" PRIu64 " total %" PRIu64 " expected %" PRIu64 " ok\n",
                 T, T * I * (I + 1) / 2, T * I * (I + 1) / 2);
        expect_line(cores[c], "mutex", (const char *[]){"5", "300", NULL}, want);

        uint64_t P = 3, items = 200, sum = 0;
        for (uint64_t p = 1; p <= P; p++)
            sum += p * 1000003u * items + items * (items - 1) / 2;
        snprintf(want, sizeof want, "condvar: producers %" PRIu64 " taken %" PRIu64 " sum %" PRIu64
                 " expected %" PRIu64 " ok\n", P, P * items, sum, sum);
        expect_line(cores[c], "condvar", (const char *[]){"3", "200", NULL}, want);

        snprintf(want, sizeof want, "rwlock: readers 3 writers 2 value 100 expected 100 torn 0 ok\n");
        expect_line(cores[c], "rwlock", (const char *[]){"3", "2", "50", NULL}, want);

        uint64_t n = 4, it = 300;
        snprintf(want, sizeof want, "atomics: threads %" PRIu64 " added %" PRIu64 " cas %" PRIu64
                 " spin %" PRIu64 " max %" PRIu64 " ok\n", n, n * it, it * n * (n + 1) / 2,
                 2 * n * it, n * 1000000 + it - 1);
        expect_line(cores[c], "atomics", (const char *[]){"4", "300", NULL}, want);

        uint64_t total = 0;
        for (uint64_t i = 1; i <= 6; i++)
            total += 7 + i * 100 + 100 * 1000000;
        snprintf(want, sizeof want, "tls: threads 6 total %" PRIu64 " main main 7 ok\n", total);
        expect_line(cores[c], "tls", (const char *[]){"6", "100", NULL}, want);
    }
}
END_TEST

START_TEST(run_barrier_and_many_threads_are_correct_on_1_2_8_16_cores)
{
    static const char *const cores[] = {"1", "2", "8", "16"};
    /* The barrier stencil's hash and manythreads' sum, computed here. */
    enum { CELLS = 256 };
    uint64_t g[2][CELLS];
    for (int i = 0; i < CELLS; i++)
        g[0][i] = (uint64_t)i * 0x9e3779b97f4a7c15ull;
    int phases = 10;
    for (int p = 0; p < phases; p++)
        for (int i = 0; i < CELLS; i++) {
            const uint64_t *s = g[p & 1];
            uint64_t l = s[(i + CELLS - 1) % CELLS], c = s[i], r = s[(i + 1) % CELLS];
            g[(p + 1) & 1][i] = (l * 3 + c * 5 + r * 7) ^ (c >> 3);
        }
    uint64_t h = 0;
    for (int i = 0; i < CELLS; i++)
        h = h * 1099511628211ull + g[phases & 1][i];
    char bar[128], many[128];
    snprintf(bar, sizeof bar, "barrier: threads 5 phases 10 hash %016" PRIx64 " ok\n", h);
    uint64_t sum = 0;
    for (uint64_t id = 0; id < 20; id++) {
        uint64_t x = id + 1;
        for (int i = 0; i < 50; i++)
            x = x * 6364136223846793005ull + 1442695040888963407ull;
        sum += x;
    }
    snprintf(many, sizeof many, "manythreads: threads 20 sum %016" PRIx64 " ok\n", sum);
    for (size_t c = 0; c < 4; c++) {
        expect_line(cores[c], "barrier", (const char *[]){"5", "10", NULL}, bar);
        expect_line(cores[c], "manythreads", (const char *[]){"20", "50", NULL}, many);
    }
}
END_TEST

/* ---- determinism ---- */

/* --stats lines without wall time and MIPS. */
static char *stable_stats(const char *err)
{
    char *copy = strdup(err), *out = calloc(1, strlen(err) + 1), *save = NULL;
    for (char *l = strtok_r(copy, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
        if (strncmp(l, "wall_seconds:", 13) == 0 || strncmp(l, "mips:", 5) == 0)
            continue;
        strcat(out, l);
        strcat(out, "\n");
    }
    free(copy);
    return out;
}

START_TEST(run_same_seed_gives_identical_stats_digest_and_output)
{
    const char *a[] = {"run", "-n", "4", "--seed", "77", "--quantum", "3000", "--stats", "--",
                       guest("racy"), "6", "300", NULL};
    tu_output o1, o2;
    tu_rnr(&o1, a);
    tu_rnr(&o2, a);
    ck_assert_int_eq(o1.status, 0);
    ck_assert_int_eq(o2.status, 0);
    ck_assert_str_eq(o1.out, o2.out);
    char *s1 = stable_stats(o1.err), *s2 = stable_stats(o2.err);
    ck_assert_msg(strstr(s1, "digest: ") && strstr(s1, "core.3: instructions"), "%s", s1);
    ck_assert_str_eq(s1, s2);
    free(s1);
    free(s2);
    tu_output_free(&o1);
    tu_output_free(&o2);
}
END_TEST

/* The value of the --stats line "KEY: VALUE" in ERR (owned), or NULL. */
static char *stats_value(const char *err, const char *key)
{
    size_t k = strlen(key);
    for (const char *l = err; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
        if (strncmp(l, key, k) == 0 && l[k] == ':' && l[k + 1] == ' ')
            return strndup(l + k + 2, strcspn(l + k + 2, "\n"));
    return NULL;
}

/* `rnr run` and `rnr record` with --env-clear --env execute the same
 * instructions whatever variables their caller has (a job runner adds
 * some: the environment's size moves the guest's stack), and the
 * recording executes what the run executes. */
START_TEST(run_and_record_with_a_fixed_environment_execute_the_same_whatever_the_callers)
{
    static const char *const callers[2][3] = {
        { "FOO=1", "RNRTEST_CALLER=1", NULL },
        { "FOO=123456789012345678901234567890", "BAR=x", "RNRTEST_CALLER=123456789012345678901234567890" },
    };
    char *tmp = tu_tmpdir();
    char *out[2] = { NULL, NULL }, *stats[2] = { NULL, NULL };
    for (int c = 0; c < 2; c++) {
        const char *argv[24];
        int n = 0;
        argv[n++] = "/usr/bin/env";
        for (int k = 0; k < 3 && callers[c][k]; k++)
            argv[n++] = callers[c][k];
        int base = n;
        argv[n++] = tu_rnr_bin();
        argv[n++] = "run";
        argv[n++] = "-n";
        argv[n++] = "2";
        argv[n++] = "--stats";
        argv[n++] = "--env-clear";
        argv[n++] = "--env";
        argv[n++] = "RNRTEST_A=1";
        argv[n++] = "--";
        argv[n++] = guest("argenv");
        argv[n++] = "x";
        argv[n] = NULL;
        tu_output r;
        tu_run(argv, NULL, &r);
        ck_assert_msg(r.status == 0, "%s", r.err);
        ck_assert_msg(strstr(r.out, "env 0 'RNRTEST_A=1'") && !strstr(r.out, "env 1") &&
                          !strstr(r.out, "RNRTEST_CALLER"),
                      "caller %d: %s", c, r.out);
        out[c] = strdup(r.out);
        stats[c] = stable_stats(r.err);
        char *insns = stats_value(r.err, "instructions"), *digest = stats_value(r.err, "digest");
        ck_assert_msg(insns && digest, "%s", r.err);
        tu_output_free(&r);
        /* The same options to rnr record, from the same caller. */
        char dir[64];
        snprintf(dir, sizeof dir, "b%d", c);
        const char *bundle = tu_path(tmp, dir);
        n = base + 2;
        argv[n++] = "-n";
        argv[n++] = "2";
        argv[n++] = "--quiet";
        argv[n++] = "-o";
        argv[n++] = bundle;
        argv[n++] = "--env-clear";
        argv[n++] = "--env";
        argv[n++] = "RNRTEST_A=1";
        argv[n++] = "--";
        argv[n++] = guest("argenv");
        argv[n++] = "x";
        argv[n] = NULL;
        argv[base + 1] = "record";
        tu_run(argv, NULL, &r);
        ck_assert_msg(r.status == 0, "%s", r.err);
        ck_assert_str_eq(r.out, out[c]);
        tu_output_free(&r);
        char *ri = tu_manifest_value(bundle, "instructions"), *rd = tu_manifest_value(bundle, "final.digest");
        ck_assert_msg(ri && strcmp(ri, insns) == 0, "record %s, run %s instructions", ri, insns);
        ck_assert_msg(rd && strcmp(rd, digest) == 0, "record digest %s, run %s", rd, digest);
        free(ri);
        free(rd);
        free(insns);
        free(digest);
    }
    ck_assert_str_eq(out[0], out[1]);
    ck_assert_str_eq(stats[0], stats[1]);
    for (int c = 0; c < 2; c++) {
        free(out[c]);
        free(stats[c]);
    }
    tu_output o;
    tu_rnr(&o, (const char *[]){ "run", "--env", "=x", "--", guest("argenv"), NULL });
    ck_assert_msg(o.status == 2 && strstr(o.err, "NAME=VALUE"), "%s", o.err);
    tu_output_free(&o);
    tu_rnr(&o, (const char *[]){ "run", "--unset", "A=B", "--", guest("argenv"), NULL });
    ck_assert_msg(o.status == 2 && strstr(o.err, "not a variable name"), "%s", o.err);
    tu_output_free(&o);
    tu_rmtree(tmp);
    free(tmp);
}
END_TEST

START_TEST(run_different_seeds_change_the_racy_counter)
{
    char seen[8][64];
    size_t nseen = 0;
    for (int seed = 1; seed <= 8; seed++) {
        char s[16];
        snprintf(s, sizeof s, "%d", seed);
        const char *a[] = {"run", "-n", "4", "--seed", s, "--", guest("racy"), "4", "300", NULL};
        tu_output o;
        tu_rnr(&o, a);
        ck_assert_int_eq(o.status, 0);
        ck_assert_msg(strncmp(o.out, "racy: threads 4 counter ", 24) == 0, "%s", o.out);
        int dup = 0;
        for (size_t i = 0; i < nseen; i++)
            dup |= strcmp(seen[i], o.out) == 0;
        if (!dup)
            snprintf(seen[nseen++], sizeof seen[0], "%s", o.out);
        tu_output_free(&o);
    }
    ck_assert_msg(nseen >= 2, "8 seeds gave one result: %s", seen[0]);
}
END_TEST

static uint64_t stat_value(const char *err, const char *key)
{
    const char *at = strstr(err, key);
    ck_assert_msg(at != NULL, "no '%s' in: %s", key, err);
    return strtoull(at + strlen(key), NULL, 10);
}

START_TEST(run_drops_a_timer_signal_that_every_thread_blocks)
{
    /* Linux would leave it pending and end the process at the unblocking;
     * rnr drops it with a warning (docs/driver.md: replay does not
     * simulate time), and the program goes on. */
    tu_output o;
    tu_rnr(&o, (const char *[]){"run", "--", guest("itimer"), "blocked", NULL});
    ck_assert_msg(o.status == 0, "status %d: %s", o.status, o.err);
    ck_assert_str_eq(o.out, "armed 0\nsurvived\n");
    ck_assert_ptr_nonnull(strstr(o.err, "SIGALRM of the interval timer is blocked by every thread"));
    tu_output_free(&o);
    /* Every thread waits for good and the timer's SIGALRM is ignored: a
     * deadlock, reported, not simulated time running on forever. */
    tu_rnr(&o, (const char *[]){"run", "--", guest("itimer"), "forever", NULL});
    ck_assert_msg(o.status == 124, "status %d: %s", o.status, o.err);
    ck_assert_ptr_nonnull(strstr(o.err, "deadlock"));
    tu_output_free(&o);
}
END_TEST

START_TEST(run_maps_pages_only_when_touched)
{
    /* sysprobe mem mallocs 8 MiB (an mmap) and touches two of its bytes;
     * threads get 8 MiB stacks; glibc reserves 64 MiB per malloc arena.
     * Only touched pages may cost host memory. */
    tu_output o;
    tu_rnr(&o, (const char *[]){"run", "--stats", "--", guest("sysprobe"), "mem", NULL});
    ck_assert_int_eq(o.status, 0);
    ck_assert_uint_lt(stat_value(o.err, "guest_pages: "), 1024);
    ck_assert_uint_gt(stat_value(o.err, "page_faults: "), 0);
    tu_output_free(&o);
    tu_rnr(&o, (const char *[]){"run", "--stats", "--", guest("manythreads"), "20", "10", NULL});
    ck_assert_int_eq(o.status, 0);
    ck_assert_uint_lt(stat_value(o.err, "guest_pages: "), 2048);
    tu_output_free(&o);
}
END_TEST

/* ---- the memory limit ---- */

#define MIB (1ull << 20)

/* Runs `rnr run [--mem-limit LIMIT] -- memhog MODE BLOCK MAX [LOWER]`
 * (LIMIT, LOWER NULL: none); requires exit 0 and returns the bytes memhog
 * got, its errno name in ERR, and the RLIMIT_AS it started with in
 * *RLIMIT. */
static uint64_t memhog(const char *limit, const char *mode, const char *block, const char *max,
                       const char *lower, char err[32], uint64_t *rlimit)
{
    const char *a[16] = {"run"};
    size_t n = 1;
    if (limit) {
        a[n++] = "--mem-limit";
        a[n++] = limit;
    }
    a[n++] = "--";
    a[n++] = guest("memhog");
    a[n++] = mode;
    a[n++] = block;
    a[n++] = max;
    a[n++] = lower;
    a[n] = NULL;
    tu_output o;
    tu_rnr(&o, a);
    ck_assert_msg(o.status == 0, "memhog %s %s under %s: status %d: %.500s", mode, block,
                  limit ? limit : "the default", o.status, o.err);
    unsigned long long cur = 0, max_lim = 0, got = 0, blocks = 0;
    ck_assert_msg(sscanf(o.out, "rlimit_as cur %llu max %llu", &cur, &max_lim) == 2, "%s", o.out);
    ck_assert_msg(cur == max_lim, "%s", o.out);
    *rlimit = cur;
    char want[64];
    snprintf(want, sizeof want, "%s got ", mode);
    const char *line = strstr(o.out, want);
    ck_assert_msg(line != NULL, "%s", o.out);
    ck_assert_msg(sscanf(line + strlen(want), "%llu bytes in %llu blocks, then %31[^\n]", &got,
                         &blocks, err) == 3, "%s", o.out);
    ck_assert_msg(strstr(o.out, "\nreleased: ok\n") != NULL, "memhog %s: %s", mode, o.out);
    tu_output_free(&o);
    return got;
}

START_TEST(run_mem_limit_makes_mmap_brk_mremap_malloc_and_threads_fail_near_it)
{
    /* Each way of taking memory, untouched, under 64 MiB and 32 MiB,
     * capped at 256 MiB: the refusal comes near the limit, as the
     * errno of Linux under RLIMIT_AS, and all is given back. The
     * difference between the two amounts is the difference of the limits
     * (the program, its 8 MiB stack and libc's own are the same in both). */
    static const char *const modes[] = {"malloc", "mmap", "brk", "mremap", "threads"};
    for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++) {
        const char *want = strcmp(modes[i], "threads") == 0 ? "EAGAIN" : "ENOMEM";
        char err64[32], err32[32];
        uint64_t lim64, lim32;
        uint64_t got64 = memhog("64M", modes[i], "1M", "256M", NULL, err64, &lim64);
        uint64_t got32 = memhog("32M", modes[i], "1M", "256M", NULL, err32, &lim32);
        ck_assert_uint_eq(lim64, 64 * MIB);
        ck_assert_uint_eq(lim32, 32 * MIB);
        ck_assert_msg(strcmp(err64, want) == 0 && strcmp(err32, want) == 0, "%s: %s, %s", modes[i],
                      err64, err32);
        ck_assert_msg(got64 <= 64 * MIB && got64 > 32 * MIB, "%s: %llu under 64 MiB", modes[i],
                      (unsigned long long)got64);
        ck_assert_msg(got32 <= 32 * MIB && got32 > 16 * MIB, "%s: %llu under 32 MiB", modes[i],
                      (unsigned long long)got32);
        uint64_t diff = got64 - got32;
        ck_assert_msg(diff >= 30 * MIB && diff <= 34 * MIB, "%s: %llu more under 64 MiB than 32",
                      modes[i], (unsigned long long)diff);
    }
}
END_TEST

START_TEST(run_mem_limit_is_the_guests_rlimit_as)
{
    /* Without --mem-limit: the default, 4 GiB (mappings never touched,
     * 64 MiB at a time, cost nothing to get there). */
    char err[32];
    uint64_t lim;
    uint64_t got = memhog(NULL, "mmap", "64M", "8G", NULL, err, &lim);
    ck_assert_uint_eq(lim, 4096 * MIB);
    ck_assert_str_eq(err, "ENOMEM");
    ck_assert_msg(got <= lim && got + 2 * 64 * MIB > lim, "%llu", (unsigned long long)got);
    /* The guest may lower its limit (and not raise the hard one). */
    tu_output o;
    tu_rnr(&o, (const char *[]){"run", "--mem-limit", "64M", "--", guest("memhog"), "malloc", "1M",
                                "256M", "24M", NULL});
    ck_assert_int_eq(o.status, 0);
    ck_assert_msg(strstr(o.out, "setrlimit ok, raising the hard limit EPERM\n") != NULL, "%s", o.out);
    tu_output_free(&o);
    uint64_t lowered = memhog("64M", "malloc", "1M", "256M", "24M", err, &lim);
    uint64_t at24 = memhog("24M", "malloc", "1M", "256M", NULL, err, &lim);
    ck_assert_str_eq(err, "ENOMEM");
    ck_assert_uint_eq(lowered, at24);
    /* Suffixes: 65536K is 64M. */
    ck_assert_uint_eq(memhog("65536K", "brk", "1M", "256M", NULL, err, &lim),
                      memhog("64M", "brk", "1M", "256M", NULL, err, &lim));
    ck_assert_uint_eq(lim, 64 * MIB);
}
END_TEST

static long children_maxrss_kib(void)
{
    struct rusage ru;
    ck_assert_int_eq(getrusage(RUSAGE_CHILDREN, &ru), 0);
    return ru.ru_maxrss;
}

START_TEST(run_mem_limit_bounds_the_host_memory_for_guest_pages)
{
    /* A guest writing every page it gets, up to 512 MiB, under a 32 MiB
     * limit: rnr's peak resident memory grows by a small multiple of the
     * limit (page data, page records, the coherence directory) over the
     * same program writing 1 MiB. Peak memory of a child is only its own
     * when every case runs in a process of its own (not under valgrind
     * or CK_FORK=no). */
    const char *fork_mode = getenv("CK_FORK");
    if (tu_under_valgrind() || (fork_mode && strcmp(fork_mode, "no") == 0))
        return;
    char err[32];
    uint64_t lim;
    memhog("32M", "touch", "1M", "1M", NULL, err, &lim);
    long base = children_maxrss_kib();
    uint64_t got = memhog("32M", "touch", "1M", "512M", NULL, err, &lim);
    ck_assert_str_eq(err, "ENOMEM");
    long peak = children_maxrss_kib();
    ck_assert_msg((uint64_t)(peak - base) * 1024 < 4 * 32 * MIB,
                  "rnr's peak memory %ld KiB, %ld KiB with 1 MiB: %llu bytes touched", peak, base,
                  (unsigned long long)got);
}
END_TEST

/* ---- deadlock, bad programs, options ---- */

START_TEST(run_reports_a_deadlock_and_exits_promptly)
{
    const char *a[] = {"run", "-n", "2", "--", guest("deadlock"), NULL};
    tu_output o;
    tu_rnr(&o, a);
    ck_assert_int_eq(o.status, 124);
    ck_assert_str_eq(o.out, "deadlock: starting\n");
    ck_assert_msg(strstr(o.err, "deadlock") && strstr(o.err, "thread 1000") &&
                  strstr(o.err, "thread 1001") && strstr(o.err, "futex") && strstr(o.err, "pc 0x"),
                  "%s", o.err);
    tu_output_free(&o);
    /* A thread waiting for a file lock that its joiner holds. */
    char *dir = tu_tmpdir();
    tu_rnr(&o, (const char *[]){"run", "-n", "2", "--allow-write", dir, "--", guest("fsmut"), dir,
                                "stuck", NULL});
    ck_assert_int_eq(o.status, 124);
    ck_assert_str_eq(o.out, "holding the lock\n");
    ck_assert_msg(strstr(o.err, "thread 1001: fcntl (file lock) at pc 0x") != NULL, "%s", o.err);
    tu_output_free(&o);
    tu_rmtree(dir);
    free(dir);
}
END_TEST

static void one_line_exit_2(const char *const *args, const char *needle)
{
    tu_output o;
    tu_rnr(&o, args);
    ck_assert_msg(o.status == 2, "status %d for %s: %s", o.status, needle, o.err);
    ck_assert_msg(strstr(o.err, needle) != NULL, "want '%s' in: %s", needle, o.err);
    ck_assert_msg(strncmp(o.err, "rnr run: ", 9) == 0, "%s", o.err);
    ck_assert_str_eq(o.out, "");
    tu_output_free(&o);
}

START_TEST(run_rejects_bad_programs_with_one_line)
{
    char *dir = tu_tmpdir();
    const char *missing = tu_path(dir, "missing");
    one_line_exit_2((const char *[]){"run", "--", missing, NULL}, "No such file");
    const char *text = tu_path(dir, "text");
    tu_write_file(text, "hello\n", 6);
    one_line_exit_2((const char *[]){"run", "--", text, NULL}, "not an ELF file");
    one_line_exit_2((const char *[]){"run", "--", "/bin/sh", NULL}, "not a 64-bit RISC-V");
    /* A riscv64 program with an interpreter: dynamically linked. */
    size_t n;
    uint8_t *b = tu_read_file(guest("intmath"), &n);
    Elf64_Ehdr *eh = (Elf64_Ehdr *)b;
    Elf64_Phdr *ph = (Elf64_Phdr *)(b + eh->e_phoff);
    for (int i = 0; i < eh->e_phnum; i++)
        if (ph[i].p_type == PT_NOTE)
            ph[i].p_type = PT_INTERP;
    const char *dyn = tu_path(dir, "dynamic");
    tu_write_file(dyn, b, n);
    free(b);
    one_line_exit_2((const char *[]){"run", "--", dyn, NULL}, "dynamically linked");
    one_line_exit_2((const char *[]){"run", "--", dir, NULL}, "directory");
    one_line_exit_2((const char *[]){"run", "--input-log", "/nonexistent-dir/in.log", "--",
                                     guest("intmath"), NULL}, "/nonexistent-dir/in.log");
    /* The program and its 8 MiB stack do not fit in 4 MiB. */
    one_line_exit_2((const char *[]){"run", "--mem-limit", "4M", "--", guest("intmath"), NULL},
                    "memory limit of 4194304 bytes");
    tu_rmtree(dir);
    free(dir);
}
END_TEST

START_TEST(run_rejects_bad_options)
{
    const char *const *cases[] = {
        (const char *[]){"run", NULL},
        (const char *[]){"run", "-n", "0", "--", "x", NULL},
        (const char *[]){"run", "-n", "65", "--", "x", NULL},
        (const char *[]){"run", "--seed", "abc", "--", "x", NULL},
        (const char *[]){"run", "--sig", "bloom:100", "--", "x", NULL},
        (const char *[]){"run", "--bogus", "--", "x", NULL},
        (const char *[]){"run", "--quantum", NULL},
        (const char *[]){"run", "--mem-limit", "0", "--", "x", NULL},
        (const char *[]){"run", "--mem-limit", "1023K", "--", "x", NULL},
        (const char *[]){"run", "--mem-limit", "257G", "--", "x", NULL},
        (const char *[]){"run", "--mem-limit", "12X", "--", "x", NULL},
        (const char *[]){"run", "--mem-limit", "M", "--", "x", NULL},
        (const char *[]){"run", "--mem-limit", "-1", "--", "x", NULL},
        (const char *[]){"run", "--mem-limit", "99999999999999999999", "--", "x", NULL},
        (const char *[]){"run", "--mem-limit", NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        tu_output o;
        tu_rnr(&o, cases[i]);
        ck_assert_msg(o.status == 2 && strncmp(o.err, "rnr run: ", 9) == 0, "case %zu: %d %s", i,
                      o.status, o.err);
        tu_output_free(&o);
    }
    tu_output o;
    tu_rnr(&o, (const char *[]){"run", "--help", NULL});
    ck_assert_int_eq(o.status, 0);
    ck_assert(strstr(o.out, "usage: rnr run") != NULL);
    ck_assert(strstr(o.out, "--mem-limit BYTES") != NULL);
    tu_output_free(&o);
}
END_TEST

START_TEST(run_reports_an_unknown_system_call_once)
{
    const char *a[] = {"run", "--", guest("sysprobe"), "unknown", NULL};
    tu_output o;
    tu_rnr(&o, a);
    ck_assert_int_eq(o.status, 0);
    ck_assert_str_eq(o.out, "unknown -1 ENOSYS -1 ENOSYS\n");
    ck_assert_msg(tu_count_lines(o.err) == 1 && strstr(o.err, "200 (bind)"), "%s", o.err);
    tu_output_free(&o);
}
END_TEST

START_TEST(run_writes_files_only_where_allowed)
{
    char *dir = tu_tmpdir(), *other = tu_tmpdir();
    char out[4096];
    snprintf(out, sizeof out, "%s/sub/out.txt", dir);
    char sub[4096];
    snprintf(sub, sizeof sub, "%s/sub", dir);
    ck_assert_int_eq(mkdir(sub, 0755), 0);
    /* No --allow-write: refused, nothing created, one warning line. */
    tu_output o;
    tu_rnr(&o, (const char *[]){"run", "--", guest("filewrite"), out, "3", NULL});
    ck_assert_int_eq(o.status, 1);
    ck_assert_msg(strstr(o.out, "Permission denied") != NULL, "%s", o.out);
    ck_assert_msg(strstr(o.err, "--allow-write") != NULL, "%s", o.err);
    ck_assert_int_ne(access(out, F_OK), 0);
    tu_output_free(&o);
    /* Another directory allowed: still refused. */
    tu_rnr(&o, (const char *[]){"run", "--allow-write", other, "--", guest("filewrite"), out, NULL});
    ck_assert_int_eq(o.status, 1);
    tu_output_free(&o);
    /* The parent of the file's directory allowed: written. */
    tu_rnr(&o, (const char *[]){"run", "--allow-write", dir, "--", guest("filewrite"), out, "3", NULL});
    ck_assert_msg(o.status == 0, "%s", o.err);
    const char *want = "line 0\nline 1\nline 2\nappended\n";
    ck_assert_str_eq(o.out, want);
    size_t n;
    uint8_t *content = tu_read_file(out, &n);
    ck_assert_str_eq((char *)content, want);
    free(content);
    tu_output_free(&o);
    /* Removing, renaming and making directories are writes too: refused
     * outside --allow-write (the file stays), done inside it. */
    const char *change[] = {"run", "--", guest("filewrite"), out, "0", "change", NULL};
    tu_rnr(&o, change);
    ck_assert_msg(o.status == 0, "%s", o.err);
    ck_assert_str_eq(o.out, "unlink Permission denied\nmkdir Permission denied\nrename Permission denied\n");
    ck_assert_int_eq(access(out, F_OK), 0);
    tu_output_free(&o);
    const char *fs[] = {"--allow-write", dir, NULL}, *fs_args[] = {out, "2", "fs", NULL};
    same_as_qemu(fs, guest("filewrite"), fs_args);
    ck_assert_int_eq(access(out, F_OK), -1);   /* renamed away, then removed */
    /* A symbolic link inside the allowed directory that leads out of it. */
    char link[4096], target[4096];
    snprintf(link, sizeof link, "%s/sub/escape", dir);
    snprintf(target, sizeof target, "%s/outside.txt", other);
    ck_assert_int_eq(symlink(target, link), 0);
    tu_rnr(&o, (const char *[]){"run", "--allow-write", dir, "--", guest("filewrite"), link, NULL});
    ck_assert_int_eq(o.status, 1);
    ck_assert_int_ne(access(target, F_OK), 0);
    tu_output_free(&o);
    /* A missing directory for --allow-write is bad input. */
    char nodir[4096];
    snprintf(nodir, sizeof nodir, "%s/nope", other);
    one_line_exit_2((const char *[]){"run", "--allow-write", nodir, "--", guest("filewrite"), out, NULL},
                    "nope");
    tu_rmtree(dir);
    tu_rmtree(other);
    free(dir);
    free(other);
}
END_TEST

/* fsmut's threads replace a file by rename, truncate, allocate and sync
 * it, count under OFD locks and flock, wait for locks held by another
 * thread, and link, chmod, touch and remove files: the output (each
 * call's result, the F_GETLK answers, the counters) is qemu-riscv64's,
 * i.e. the host kernel's, on 1 and 4 cores, with no warning (landlock
 * answers ENOSYS silently), and nothing is left in the directory. With
 * locks that always succeed, the counters lose updates, F_GETLK reports
 * nothing and the waiters do not wait. */
START_TEST(run_matches_qemu_changing_files_and_locking_from_threads)
{
    char *dir = tu_tmpdir();
    static const char *const cores[] = {"1", "4"};
    for (int i = 0; i < 2; i++) {
        const char *opts[] = {"-n", cores[i], "--allow-write", dir, NULL};
        const char *args[] = {dir, "4", "8", NULL};
        same_as_qemu(opts, guest("fsmut"), args);
        tu_output o;
        tu_rnr(&o, (const char *[]){"run", "-n", cores[i], "--allow-write", dir, "--", guest("fsmut"),
                                    dir, "3", "5", NULL});
        ck_assert_msg(o.status == 0, "%s", o.err);
        ck_assert_msg(strstr(o.out, "ofd counter 15 of 15, flock counter 15 of 15\n") != NULL, "%s",
                      o.out);
        ck_assert_msg(strstr(o.out, "ofd waiter: 0, holder had let go: yes\n") != NULL, "%s", o.out);
        ck_assert_msg(strstr(o.out, "flock waiter: 0, holder had let go: yes\n") != NULL, "%s", o.out);
        ck_assert_msg(o.err_len == 0, "warnings: %s", o.err);
        tu_output_free(&o);
        DIR *d = opendir(dir);
        ck_assert_ptr_nonnull(d);
        struct dirent *e;
        while ((e = readdir(d)) != NULL)
            ck_assert_msg(e->d_name[0] == '.', "left behind: %s", e->d_name);
        closedir(d);
    }
    /* UTIME_NOW is the simulated CLOCK_REALTIME (from 1700000000 s), not
     * the host's clock: the same in two runs. */
    tu_output a, b;
    const char *now[] = {"run", "--allow-write", dir, "--", guest("fsmut"), dir, "now", NULL};
    tu_rnr(&a, now);
    tu_rnr(&b, now);
    ck_assert_msg(a.status == 0, "%s", a.err);
    ck_assert_msg(strncmp(a.out, "mtime 1700000000.", 17) == 0, "%s", a.out);
    ck_assert_str_eq(a.out, b.out);
    tu_output_free(&a);
    tu_output_free(&b);
    tu_rmtree(dir);
    free(dir);
}
END_TEST

/* Outside --allow-write every changing call fails (EACCES with the
 * one-time hint; EPERM for the descriptor calls fchmod and futimens, as
 * for another user's file) and the file keeps its bytes, mode, times and
 * link count; nothing is created beside it. Also through a symbolic link
 * in an allowed directory that leads out of it, and with a hard link,
 * which would make the outside file writable from inside. */
START_TEST(run_refuses_file_changes_outside_the_allowed_directories)
{
    char *dir = tu_tmpdir(), *other = tu_tmpdir();
    char victim[4200], extra[4200];
    snprintf(victim, sizeof victim, "%s/victim", dir);
    tu_write_file(victim, "keep me\n", 8);
    ck_assert_int_eq(chmod(victim, 0644), 0);
    struct timespec times[2] = {{1234567, 0}, {1234567, 0}};
    ck_assert_int_eq(utimensat(AT_FDCWD, victim, times, 0), 0);
    const char *want = "truncate: Permission denied\nfchmod: Operation not permitted\n"
                       "fchmodat: Permission denied\nfchown: Operation not permitted\n"
                       "chown: Permission denied\nutimensat: Permission denied\n"
                       "futimens: Operation not permitted\nlink: Permission denied\n"
                       "symlink: Permission denied\nunlink: Permission denied\n"
                       "rename: Permission denied\nmkdir: Permission denied\n"
                       "fallocate on a read-only fd: Bad file descriptor\n";
    for (int allow_other = 0; allow_other < 2; allow_other++) {
        tu_output o;
        if (allow_other)
            tu_rnr(&o, (const char *[]){"run", "--allow-write", other, "--", guest("fsmut"), dir,
                                        "refused", NULL});
        else
            tu_rnr(&o, (const char *[]){"run", "--", guest("fsmut"), dir, "refused", NULL});
        ck_assert_msg(o.status == 0, "%s", o.err);
        ck_assert_str_eq(o.out, want);
        ck_assert_msg(strstr(o.err, "--allow-write") != NULL, "%s", o.err);
        ck_assert_msg(strchr(o.err, '\n') == o.err + o.err_len - 1, "more than one line: %s", o.err);
        tu_output_free(&o);
        struct stat st;
        ck_assert_int_eq(stat(victim, &st), 0);
        ck_assert_int_eq(st.st_size, 8);
        ck_assert_int_eq(st.st_mode & 07777, 0644);
        ck_assert_int_eq(st.st_mtim.tv_sec, 1234567);
        ck_assert_int_eq(st.st_nlink, 1);
        snprintf(extra, sizeof extra, "%s/other", dir);
        ck_assert_int_ne(access(extra, F_OK), 0);
    }
    /* A link in the allowed directory to the victim: changes through it
     * (truncate, chmod, times) are refused, a hard link to it too; the
     * link itself may be removed. */
    char link[4200], hard[4200];
    snprintf(link, sizeof link, "%s/victim", other);
    ck_assert_int_eq(symlink(victim, link), 0);
    snprintf(hard, sizeof hard, "%s/hard", other);
    const char *via[] = {"truncate", "chmod", "touch", "link", "chown", "give", "unlink"};
    const char *via_want[] = {"Permission denied", "Permission denied", "Permission denied",
                              "Permission denied", "Permission denied", "Permission denied", "0"};
    for (size_t i = 0; i < sizeof via / sizeof via[0]; i++) {
        tu_output o;
        tu_rnr(&o, (const char *[]){"run", "--allow-write", other, "--", guest("fsmut"), other,
                                    "via", via[i], NULL});
        ck_assert_msg(o.status == 0, "%s: %s", via[i], o.err);
        char line[128];
        snprintf(line, sizeof line, "%s: %s\n", via[i], via_want[i]);
        ck_assert_str_eq(o.out, line);
        tu_output_free(&o);
    }
    ck_assert_int_ne(access(link, F_OK), 0);   /* the link went */
    ck_assert_int_ne(access(hard, F_OK), 0);
    struct stat st, before;
    ck_assert_int_eq(stat(victim, &before), 0);
    /* Inside an allowed directory the guest, an unprivileged user, may
     * chown a file to the owner it has, never to another (rnr may run as
     * root: the host's owner must not change). */
    const char *own[] = {"chown", "give"}, *own_want[] = {"chown: 0\n", "give: Operation not permitted\n"};
    for (size_t i = 0; i < 2; i++) {
        tu_output o;
        tu_rnr(&o, (const char *[]){"run", "--allow-write", dir, "--", guest("fsmut"), dir, "via", own[i], NULL});
        ck_assert_msg(o.status == 0, "%s: %s", own[i], o.err);
        ck_assert_str_eq(o.out, own_want[i]);
        tu_output_free(&o);
    }
    ck_assert_int_eq(stat(victim, &st), 0);
    ck_assert_int_eq(st.st_uid, before.st_uid);
    ck_assert_int_eq(st.st_gid, before.st_gid);
    ck_assert_int_eq(st.st_size, 8);
    ck_assert_int_eq(st.st_mode & 07777, 0644);
    ck_assert_int_eq(st.st_mtim.tv_sec, 1234567);
    ck_assert_int_eq(st.st_nlink, 1);
    tu_rmtree(dir);
    tu_rmtree(other);
    free(dir);
    free(other);
}
END_TEST

/* shmap's threads fill slices of a writable shared file mapping and count
 * in it: what read() and the mapping show (after msync, before it, after
 * MADV_DONTNEED, past the file's end, after munmap) is qemu-riscv64's, on
 * 1 and 4 cores, and the file rnr leaves is byte for byte the one qemu
 * leaves, including the store the exit wrote back. A second mapping of
 * pages already mapped shared is refused (ENODEV, one warning); without
 * --allow-write the program cannot even open its file. */
START_TEST(run_matches_qemu_on_a_shared_file_mapping_between_threads)
{
    static const char *const cores[] = {"1", "4"};
    for (int i = 0; i < 2; i++) {
        char *dir = tu_tmpdir(), *qdir = tu_tmpdir();
        tu_output r, q;
        tu_rnr(&r, (const char *[]){"run", "-n", cores[i], "--allow-write", dir, "--", guest("shmap"), dir,
                                    "4", "100", NULL});
        const char *qa[] = {QEMU, guest("shmap"), qdir, "4", "100", NULL};
        run_env_stdin(&q, qa, NULL);
        ck_assert_msg(r.status == 0 && q.status == 0, "rnr %d %s, qemu %d", r.status, r.err, q.status);
        ck_assert_msg(strcmp(r.out, q.out) == 0, "stdout differs:\n--- rnr\n%s--- qemu\n%s", r.out, q.out);
        ck_assert_msg(strstr(r.out, "counter 400 of 400") != NULL, "%s", r.out);
        ck_assert_msg(r.err_len == 0, "warnings: %s", r.err);
        size_t a, b;
        uint8_t *rf = tu_read_file(tu_path(dir, "shared"), &a);
        uint8_t *qf = tu_read_file(tu_path(qdir, "shared"), &b);
        ck_assert_msg(a == b && memcmp(rf, qf, a) == 0, "the files differ (%zu and %zu bytes)", a, b);
        ck_assert_msg(a > 8004 && memcmp(rf + 8000, "END!", 4) == 0, "the exit did not write back");
        free(rf);
        free(qf);
        tu_output_free(&r);
        tu_output_free(&q);
        tu_rmtree(dir);
        tu_rmtree(qdir);
        free(dir);
        free(qdir);
    }
    char *dir = tu_tmpdir();
    tu_output o;
    tu_rnr(&o, (const char *[]){"run", "--allow-write", dir, "--", guest("shmap"), dir, "alias", NULL});
    ck_assert_msg(o.status == 0 && strcmp(o.out, "second mapping of page 0: No such device\n") == 0,
                  "%d %s", o.status, o.out);
    ck_assert_msg(strstr(o.err, "second writable shared mapping") && tu_count_lines(o.err) == 1, "%s",
                  o.err);
    tu_output_free(&o);
    tu_rmtree(dir);
    free(dir);
    dir = tu_tmpdir();
    tu_rnr(&o, (const char *[]){"run", "--", guest("shmap"), dir, NULL});
    ck_assert_msg(o.status == 1 && strstr(o.out, "open: Permission denied"), "%d %s", o.status, o.out);
    ck_assert_int_ne(access(tu_path(dir, "shared"), F_OK), 0);
    tu_output_free(&o);
    tu_rmtree(dir);
    free(dir);
}
END_TEST

/* execve: execer runs itself twice more and then argenv, from a copy in
 * a temporary directory. qemu-riscv64 cannot execute a riscv64 program
 * from a riscv64 one on a host without binfmt_misc (ENOEXEC), so it is the
 * reference for what comes before the first execve (the two failed calls'
 * errors); what execve does (the same pid, the close-on-exec descriptor
 * closed and the other kept, the caught signal back to its default,
 * AT_EXECFN, the new program's arguments and environment, its exit
 * status) is checked line by line against what Linux gives; the caller's
 * other threads end. From another thread than the first, execve is
 * refused (EINVAL, one warning). */
/* Processes: forker's fork, pipes, waitpid, kill, waitid and SIGCHLD
 * print what qemu-riscv64 prints, on 1 and 4 cores. qemu cannot execute
 * a riscv64 program from its guest (no binfmt_misc here): its posix_spawn
 * child ends with 127, where rnr's runs and ends with 3; the lines of
 * that spawn are compared apart. */
START_TEST(run_matches_qemu_on_processes)
{
    char *exe = strdup(guest("forker"));
    tu_output q;
    const char *qa[] = {QEMU, exe, "3", NULL};
    run_env_stdin(&q, qa, NULL);
    ck_assert_msg(q.status == 0, "qemu exit %d", q.status);
    const char *spawn_q = strstr(q.out, "spawned: exited 1 status 127\n");
    ck_assert_msg(spawn_q != NULL, "%s", q.out);
    for (int c = 0; c < 2; c++) {
        tu_output r;
        tu_rnr(&r, (const char *[]){"run", "-n", c ? "4" : "1", "--", exe, "3", NULL});
        ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
        const char *spawn_r = strstr(r.out, "spawned child: parent is the spawner\nspawned: exited 1 status 3\n");
        ck_assert_msg(spawn_r != NULL, "%s", r.out);
        size_t before = (size_t)(spawn_q - q.out);
        ck_assert_msg((size_t)(spawn_r - r.out) == before && memcmp(r.out, q.out, before) == 0,
                      "before the spawn:\n--- rnr\n%s--- qemu\n%s", r.out, q.out);
        const char *after_q = spawn_q + strlen("spawned: exited 1 status 127\n");
        const char *after_r = spawn_r + strlen("spawned child: parent is the spawner\nspawned: exited 1 status 3\n");
        ck_assert_msg(strcmp(after_r, after_q) == 0, "after the spawn:\n--- rnr\n%s--- qemu\n%s", after_r, after_q);
        tu_output_free(&r);
    }
    tu_output_free(&q);
    /* A child killed by SIGSEGV, and a parent that exits 5 leaving its
     * child blocked: as qemu. */
    static const char *const same[] = {"segv", "orphan", "suspend", "groups"};
    for (int k = 0; k < 4; k++) {
        tu_output a, b;
        const char *qb[] = {QEMU, exe, same[k], NULL};
        run_env_stdin(&b, qb, NULL);
        tu_rnr(&a, (const char *[]){"run", "-n", "2", "--", exe, same[k], NULL});
        ck_assert_msg(a.status == b.status && strcmp(a.out, b.out) == 0 && a.out_len > 0,
                      "%s: rnr %d %s, qemu %d %s", same[k], a.status, a.out, b.status, b.out);
        tu_output_free(&a);
        tu_output_free(&b);
    }
    /* Forks from a threaded process (qemu-riscv64 aborts on them: its
     * children's threads trip an assertion of its own). */
    tu_output th;
    tu_rnr(&th, (const char *[]){"run", "-n", "4", "--", exe, "threads", NULL});
    ck_assert_msg(th.status == 0 && strcmp(th.out, "threaded child 0: status 0\nthreaded child 1: status 3\n"
                                                  "threaded child 2: status 6\nfork from a second thread: "
                                                  "status 33\nworkers stopped\n") == 0,
                  "threads: %d %s", th.status, th.out);
    tu_output_free(&th);
    /* Memory shared across a fork: a MAP_SHARED page the child writes, and
     * a process-shared mutex, an shm_open object and sem_open semaphores
     * between three children and their parent: as qemu. */
    static const char *const shm_modes[] = {"shared", "shm"};
    tu_output r;
    for (int k = 0; k < 2; k++) {
        tu_output b;
        const char *qb[] = {QEMU, exe, shm_modes[k], NULL};
        run_env_stdin(&b, qb, NULL);
        tu_rnr(&r, (const char *[]){"run", "-n", "4", "--private-tmp", "--", exe, shm_modes[k], NULL});
        ck_assert_msg(r.status == 0 && b.status == 0 && strcmp(r.out, b.out) == 0 &&
                      (strstr(r.out, "child wrote 42") || strstr(r.out, "counter 3000 (want 3000)")),
                      "%s: rnr %d %s%s, qemu %d %s", shm_modes[k], r.status, r.out, r.err, b.status, b.out);
        tu_output_free(&r);
        tu_output_free(&b);
    }
    /* Two processes' writable shared mappings of one file would not share
     * pages: the second is refused (qemu makes both). */
    char *dir = tu_tmpdir();
    char *file = strdup(tu_path(dir, "mapped"));
    tu_rnr(&r, (const char *[]){"run", "--allow-write", dir, "--", exe, "mapfile", file, NULL});
    ck_assert_msg(r.status == 0 &&
                  strcmp(r.out, "child's mapping: made\nparent's mapping: No such device\nchild: status 0\n") == 0 &&
                  strstr(r.err, "a writable shared mapping of a file another process maps so is not supported"),
                  "exit %d: %s%s", r.status, r.out, r.err);
    tu_output_free(&r);
    /* The id calls of an unprivileged user (qemu runs as this host's
     * user, often root: no comparison). */
    tu_rnr(&r, (const char *[]){"run", "--", exe, "ids", NULL});
    ck_assert_msg(r.status == 0 && strcmp(r.out, "setuid(own) 0, setgid(own) 0\n"
                                                 "setuid(other) -1 Operation not permitted\n"
                                                 "setreuid(-1, own) 0, setresgid(own, -1, own) 0\n"
                                                 "setresuid(other) -1 Operation not permitted\n"
                                                 "getresuid all own: yes, getresgid all own: yes\n") == 0 &&
                  r.err_len == 0, "ids: %d %s%s", r.status, r.out, r.err);
    tu_output_free(&r);
    /* POSIX record locks between a parent and its child: as qemu. */
    char *lockf = strdup(tu_path(dir, "locked"));
    tu_output b;
    const char *qb[] = {QEMU, exe, "locks", lockf, NULL};
    run_env_stdin(&b, qb, NULL);
    unlink(lockf);
    tu_rnr(&r, (const char *[]){"run", "-n", "2", "--allow-write", dir, "--", exe, "locks", lockf, NULL});
    ck_assert_msg(r.status == 0 && b.status == 0 && strcmp(r.out, b.out) == 0 &&
                  strstr(r.out, "child sees a write lock of its parent at 0+10\nchild waits, then: 0\n"),
                  "locks: rnr %d %s%s, qemu %d %s", r.status, r.out, r.err, b.status, b.out);
    tu_output_free(&r);
    tu_output_free(&b);
    free(lockf);
    free(file);
    tu_rmtree(dir);
    free(dir);
    free(exe);
}
END_TEST

START_TEST(run_replaces_the_program_with_execve)
{
    char *dir = tu_tmpdir();
    char *exe = strdup(guest("execer")), *prog = strdup(tu_path(dir, "argenv"));
    size_t n;
    uint8_t *bin = tu_read_file(guest("argenv"), &n);
    tu_write_file(prog, bin, n);
    free(bin);
    ck_assert_int_eq(chmod(prog, 0755), 0);
    tu_output r, q;
    tu_rnr(&r, (const char *[]){"run", "-n", "2", "--", exe, "2", prog, "a", "b", NULL});
    const char *qa[] = {QEMU, exe, "2", prog, "a", "b", NULL};
    run_env_stdin(&q, qa, NULL);
    ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
    /* Up to the first execve that succeeds, qemu's lines (past the first,
     * which has the host's pid). */
    const char *q1 = strchr(q.out, '\n'), *r1 = strchr(r.out, '\n'), *q3 = q1;
    for (int i = 0; i < 2 && q3; i++)
        q3 = strchr(q3 + 1, '\n');
    ck_assert_msg(q3 && r1 && strncmp(r1, q1, (size_t)(q3 - q1)) == 0 && strstr(q.out, "Permission denied"),
                  "before execve:\n--- rnr\n%s--- qemu\n%s", r.out, q.out);
    char want[4096];
    snprintf(want, sizeof want,
             "execer round 2: pid 1000, 5 arguments, execfn %s\n"
             "  execve of a missing file: No such file or directory\n"
             "  execve of /dev/null: Permission denied\n"
             "execer round 1: pid 1000, 5 arguments, execfn %s\n"
             "  descriptor 3 after execve: open; close-on-exec 4: Bad file descriptor\n"
             "  SIGUSR1 action: default\n"
             "  execve of a missing file: No such file or directory\n"
             "  execve of /dev/null: Permission denied\n"
             "execer round 0: pid 1000, 5 arguments, execfn %s\n"
             "  descriptor 4 after execve: open; close-on-exec 5: Bad file descriptor\n"
             "  SIGUSR1 action: default\n"
             "argc 3\n"
             "argv[1] 'a' (1)\n"
             "argv[2] 'b' (1)\n",
             exe, exe, exe);
    ck_assert_msg(strncmp(r.out, want, strlen(want)) == 0, "rnr printed:\n%s\nwanted first:\n%s", r.out,
                  want);
    ck_assert_msg(strstr(r.out, "getenv(RNRTEST_MISSING) NULL"), "%s", r.out);
    ck_assert_msg(r.err_len == 0, "%s", r.err);
    tu_output_free(&r);
    tu_output_free(&q);
    /* The last program's exit status is the run's. */
    tu_rnr(&r, (const char *[]){"run", "--", exe, "1", NULL});
    ck_assert_msg(r.status == 7 && strstr(r.out, "execer round 0"), "exit %d: %s", r.status, r.out);
    tu_output_free(&r);
    /* The caller's other threads end (one blocked in read, one spinning),
     * on one core and on four. */
    static const char *const cores[] = {"1", "4"};
    for (int c = 0; c < 2; c++) {
        tu_rnr(&r, (const char *[]){"run", "-n", cores[c], "--", exe, "threaded", NULL});
        snprintf(want, sizeof want, "execer round 0: pid 1000, 2 arguments, execfn %s\n"
                 "  the old threads: gone\n", exe);
        ck_assert_msg(r.status == 7 && strcmp(r.out, want) == 0 && r.err_len == 0, "-n %s: exit %d: %s%s",
                      cores[c], r.status, r.out, r.err);
        tu_output_free(&r);
    }
    /* execveat: its errors, at a directory descriptor (AT_EXECFN
     * /dev/fd/D/NAME), then fexecve (AT_EMPTY_PATH, /dev/fd/F), as x86-64
     * Linux 6.x gives them (qemu-riscv64 has no execveat: ENOSYS). */
    tu_rnr(&r, (const char *[]){"run", "--", exe, "at", NULL});
    const char *base = strrchr(exe, '/') + 1;
    snprintf(want, sizeof want, "execer at: execfn %s\n"
             "  execveat with an unknown flag: Invalid argument\n"
             "  execveat of an empty path: No such file or directory\n"
             "  execveat at a descriptor that is not a directory: Not a directory\n"
             "  execveat of a missing file: No such file or directory\n"
             "execer at2: execfn /dev/fd/4/%s\n"
             "execer round 0: pid 1000, 2 arguments, execfn /dev/fd/5\n", exe, base);
    ck_assert_msg(r.status == 7 && strcmp(r.out, want) == 0 && r.err_len == 0, "exit %d: %s%s", r.status, r.out,
                  r.err);
    tu_output_free(&r);
    /* Through a symbolic link: AT_SYMLINK_NOFOLLOW refuses it; and
     * /proc/self/fd/N, which the simulated system does not have (on the
     * host it would be rnr's descriptor N), is ENOENT. */
    char *link = strdup(tu_path(dir, "execer-link"));
    ck_assert_int_eq(symlink(exe, link), 0);
    tu_rnr(&r, (const char *[]){"run", "--env", "EXECER_PROC=1", "--", link, "at", NULL});
    snprintf(want, sizeof want, "  execveat of a missing file: No such file or directory\n"
             "  execveat of a symbolic link with AT_SYMLINK_NOFOLLOW: Too many levels of symbolic links\n"
             "  execve of /proc/self/fd/0: No such file or directory\n"
             "  execveat of /proc/self/fd/0: No such file or directory\n"
             "execer at2: execfn /dev/fd/4/execer-link\n"
             "execer round 0: pid 1000, 2 arguments, execfn /dev/fd/5\n");
    ck_assert_msg(r.status == 7 && strstr(r.out, want) && r.err_len == 0, "exit %d: %s%s", r.status, r.out,
                  r.err);
    tu_output_free(&r);
    free(link);
    /* From another thread than the first, while the first waits in
     * pthread_join: the caller takes the first thread's id, as in Linux;
     * its own names nothing. */
    for (int c = 0; c < 2; c++) {
        tu_rnr(&r, (const char *[]){"run", "-n", cores[c], "--", exe, "fromthread", NULL});
        snprintf(want, sizeof want, "second thread: gettid() is not the pid\n"
                 "execer round 0: pid 1000, 2 arguments, execfn %s\n"
                 "  after execve from the second thread: gettid() is the pid; tgkill(pid, pid, 0) finds it; "
                 "tgkill(pid, pid + 1, 0) No such process\n", exe);
        ck_assert_msg(r.status == 7 && strcmp(r.out, want) == 0 && r.err_len == 0, "-n %s: exit %d: %s%s",
                      cores[c], r.status, r.out, r.err);
        tu_output_free(&r);
    }
    free(exe);
    free(prog);
    tu_rmtree(dir);
    free(dir);
}
END_TEST

/* shm_open and sem_open between threads need the guest's /dev/shm, which
 * --private-tmp gives: the counter kept under the named semaphore loses
 * no update, a second sem_open gives the same semaphore, the object reads
 * back through a new mapping and unlinks, as qemu-riscv64 says (when the
 * host has a /dev/shm for it); the host's /dev/shm gets nothing. Without
 * the option: ENOENT and one hint naming it. */
START_TEST(run_gives_shm_open_and_sem_open_a_private_dev_shm)
{
    const char *want = "second sem_open: the same semaphore, value 1\ncounter 200 of 200\n"
                       "read back through a new mapping: 200\n"
                       "sem_close 0 0, sem_unlink 0, shm_unlink 0\n"
                       "shm_open after unlink: No such file or directory\n";
    struct stat st;
    if (stat("/dev/shm", &st) == 0 && S_ISDIR(st.st_mode))
        same_as_qemu((const char *[]){"-n", "4", "--private-tmp", NULL}, guest("shmsem"), NULL);
    tu_output o;
    tu_rnr(&o, (const char *[]){"run", "-n", "4", "--private-tmp", "--", guest("shmsem"), "4", "50", NULL});
    ck_assert_msg(o.status == 0 && strcmp(o.out, want) == 0, "%d %s %s", o.status, o.out, o.err);
    ck_assert_msg(o.err_len == 0, "warnings: %s", o.err);
    tu_output_free(&o);
    ck_assert_int_ne(access("/dev/shm/rnr-shmsem-1000", F_OK), 0);
    tu_rnr(&o, (const char *[]){"run", "--", guest("shmsem"), NULL});
    ck_assert_msg(o.status == 1 && strcmp(o.out, "shm_open: No such file or directory\n") == 0, "%d %s",
                  o.status, o.out);
    ck_assert_msg(strstr(o.err, "--private-tmp") && tu_count_lines(o.err) == 1, "%s", o.err);
    tu_output_free(&o);
}
END_TEST

/* With --private-tmp the guest's /tmp is a new empty directory under
 * $TMPDIR: tmpfile and mkstemp work without --allow-write, the guest sees
 * none of the host's /tmp (it starts empty), the host's /tmp gets none of
 * its files, and the directory is gone at the end, with what the guest
 * left in it. Without the option, tmpfile is refused. */
START_TEST(run_private_tmp_is_a_scratch_directory_of_the_guests_own)
{
    char *base = tu_tmpdir();
    ck_assert_int_eq(setenv("TMPDIR", base, 1), 0);
    tu_output o;
    tu_rnr(&o, (const char *[]){"run", "--private-tmp", "--", guest("fsmut"), "x", "scratch", NULL});
    ck_assert_msg(o.status == 0, "%s", o.err);
    ck_assert_msg(strstr(o.out, "entries at the start 0\ntmpfile read back 'scratch'\n") != NULL,
                  "%s", o.out);
    ck_assert_msg(strstr(o.out, "entries 2\nmkdir /tmp/d 0\nrename into it 0\nstat 0 size 14\n"
                                "unlink 0 rmdir 0\nentries at the end 1\n") != NULL, "%s", o.out);
    const char *names = strstr(o.out, "mkstemp /tmp/");
    ck_assert_ptr_nonnull(names);
    char one[64] = "", two[64] = "";
    ck_assert_int_eq(sscanf(names, "mkstemp %63s %63s", one, two), 2);
    ck_assert_int_ne(access(two, F_OK), 0);   /* left in the guest's /tmp, not the host's */
    ck_assert_msg(o.err_len == 0, "%s", o.err);
    tu_output_free(&o);
    DIR *d = opendir(base);
    ck_assert_ptr_nonnull(d);
    for (struct dirent *e; (e = readdir(d)) != NULL;)
        ck_assert_msg(e->d_name[0] == '.', "left behind: %s", e->d_name);
    closedir(d);
    tu_rnr(&o, (const char *[]){"run", "--", guest("fsmut"), "x", "scratch", NULL});
    ck_assert_int_eq(o.status, 1);
    ck_assert_msg(strstr(o.out, "tmpfile: Permission denied\n") != NULL, "%s", o.out);
    tu_output_free(&o);
    /* A $TMPDIR where no directory can be made: one line, exit 2. */
    char bad[4200];
    snprintf(bad, sizeof bad, "%s/missing", base);
    ck_assert_int_eq(setenv("TMPDIR", bad, 1), 0);
    one_line_exit_2((const char *[]){"run", "--private-tmp", "--", guest("fsmut"), "x", "scratch", NULL},
                    "--private-tmp");
    unsetenv("TMPDIR");
    tu_rmtree(base);
    free(base);
}
END_TEST

START_TEST(run_input_log_holds_results_and_bytes_read)
{
    char *dir = tu_tmpdir();
    const char *in = tu_path(dir, "in.txt");
    const char *content = "first line\nsecond line\n";
    tu_write_file(in, content, strlen(content));
    char in_copy[4096], log[4096];
    snprintf(in_copy, sizeof in_copy, "%s", in);
    snprintf(log, sizeof log, "%s", tu_path(dir, "input.log"));
    const char *a[] = {"run", "--input-log", log, "--", guest("fileio"), in_copy, NULL};
    tu_output o;
    tu_rnr(&o, a);
    ck_assert_msg(o.status == 0, "%s", o.err);
    tu_output_free(&o);
    char err[RNR_ERR_MAX];
    rnr_reader *r = rnr_reader_open(log, err, sizeof err);
    ck_assert_msg(r != NULL, "%s", err);
    ck_assert_uint_eq(rnr_reader_header(r)->kind, RNR_LOG_INPUT);
    rnr_input_record rec;
    int saw_start = 0, saw_content = 0, saw_write = 0, rc;
    int64_t last_read_result = -1;
    uint64_t last_nr = 0;
    while ((rc = rnr_reader_next_input(r, &rec)) == 1) {
        ck_assert_uint_eq(rec.tid, 1000);
        if (rec.type == RNR_IN_START) {
            ck_assert_uint_eq(rec.len, 16);
            saw_start = 1;
        } else if (rec.type == RNR_IN_SYSCALL) {
            last_nr = rec.nr;
            if (rec.nr == 63)
                last_read_result = rec.value;
            saw_write |= rec.nr == 64 && rec.value > 0;
        } else if (rec.type == RNR_IN_MEM) {
            ck_assert_msg(last_nr != 64, "a write(2) must not log memory");
            if (last_nr == 63 && rec.len == strlen(content) &&
                memcmp(rec.data, content, rec.len) == 0) {
                ck_assert_int_eq(last_read_result, (int64_t)rec.len);
                saw_content = 1;
            }
        }
    }
    ck_assert_msg(rc == 0, "%s", rnr_reader_error(r));
    rnr_reader_close(r);
    ck_assert(saw_start && saw_content && saw_write);
    tu_rmtree(dir);
    free(dir);
}
END_TEST

TU_SUITE(run)
{
    Suite *s = suite_create("run");
    TCase *tc = tu_tcase(s, "differential", 120);
    tcase_add_test(tc, run_matches_qemu_on_single_threaded_workloads);
    tcase_add_test(tc, run_matches_qemu_on_arguments_environment_and_exit_status);
    tcase_add_test(tc, run_keeps_the_environment_in_order);
    tcase_add_test(tc, run_builds_the_initial_stack_and_auxv_of_linux);
    tcase_add_test(tc, run_matches_qemu_on_file_input);
    tcase_add_test(tc, run_matches_qemu_on_file_mappings);
    tcase_add_test(tc, run_matches_qemu_on_directories_access_and_readv);
    tcase_add_test(tc, run_matches_qemu_reading_standard_input);
    tcase_add_test(tc, run_matches_qemu_on_system_call_semantics);
    tcase_add_test(tc, run_matches_qemu_on_a_pipe_between_threads);
    tcase_add_test(tc, run_matches_qemu_on_an_openmp_program);
    tcase_add_test(tc, run_runs_signal_handlers);
    tcase_add_test(tc, run_matches_qemu_on_robust_mutexes);
    tcase_add_test(tc, run_ends_with_the_signal_status_and_names_it);
    tc = tu_tcase(s, "threads", 180);
    tcase_add_test(tc, run_threaded_workloads_are_correct_on_1_2_8_16_cores);
    tcase_add_test(tc, run_barrier_and_many_threads_are_correct_on_1_2_8_16_cores);
    tc = tu_tcase(s, "determinism", 120);
    tcase_add_test(tc, run_same_seed_gives_identical_stats_digest_and_output);
    tcase_add_test(tc, run_different_seeds_change_the_racy_counter);
    tcase_add_test(tc, run_and_record_with_a_fixed_environment_execute_the_same_whatever_the_callers);
    tcase_add_test(tc, run_maps_pages_only_when_touched);
    tcase_add_test(tc, run_drops_a_timer_signal_that_every_thread_blocks);
    tc = tu_tcase(s, "memory", 60);
    tcase_add_test(tc, run_mem_limit_makes_mmap_brk_mremap_malloc_and_threads_fail_near_it);
    tcase_add_test(tc, run_mem_limit_is_the_guests_rlimit_as);
    tcase_add_test(tc, run_mem_limit_bounds_the_host_memory_for_guest_pages);
    tc = tu_tcase(s, "errors", 60);
    tcase_add_test(tc, run_reports_a_deadlock_and_exits_promptly);
    tcase_add_test(tc, run_rejects_bad_programs_with_one_line);
    tcase_add_test(tc, run_rejects_bad_options);
    tcase_add_test(tc, run_reports_an_unknown_system_call_once);
    tcase_add_test(tc, run_writes_files_only_where_allowed);
    tcase_add_test(tc, run_input_log_holds_results_and_bytes_read);
    tc = tu_tcase(s, "files", 60);
    tcase_add_test(tc, run_matches_qemu_changing_files_and_locking_from_threads);
    tcase_add_test(tc, run_refuses_file_changes_outside_the_allowed_directories);
    tcase_add_test(tc, run_private_tmp_is_a_scratch_directory_of_the_guests_own);
    tcase_add_test(tc, run_matches_qemu_on_a_shared_file_mapping_between_threads);
    tcase_add_test(tc, run_gives_shm_open_and_sem_open_a_private_dev_shm);
    tcase_add_test(tc, run_replaces_the_program_with_execve);
    tcase_add_test(tc, run_matches_qemu_on_processes);
    return s;
}
