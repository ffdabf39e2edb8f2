/* tests/test_record.c: `rnr record` end to end on the guest programs of
 * workloads/: a recording executes exactly what `rnr run` executes; every
 * final log of a recording orders every real conflict (rnr verify against
 * the recorder's truth.deps) for every workload, seed, signature kind and
 * window; address-space changes and interleaved output under several
 * threads; bounded silence; the initial log through a pipe during the
 * recording; MaxPar on the fly; SIGINT and SIGKILL; bad usage. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "backend/truth.h"
#include "driver/driver.h"
#include "formats/log.h"
#include "formats/manifest.h"
#include "tests/testutil.h"

static const char *guest(const char *name) { return tu_path(tu_env("RNR_GUEST_DIR"), name); }

/* Valgrind and the sanitizers run the same tests 10-50 times slower: the
 * sweeps then take a representative slice. */
static int slow_build(void)
{
    const char *m = getenv("CK_TIMEOUT_MULTIPLIER");
    return tu_under_valgrind() || (m && atoi(m) > 1);
}

static void expect_manifest(const char *dir, const char *key, const char *want)
{
    char *v = tu_manifest_value(dir, key);
    ck_assert_msg(v && strcmp(v, want) == 0, "%s: %s = %s, expected %s", dir, key, v ? v : "(none)",
                  want);
    free(v);
}

/* The value after "KEY: " on a line of TEXT (owned copy). */
static char *stat_line(const char *text, const char *key)
{
    char pat[64];
    snprintf(pat, sizeof pat, "%s: ", key);
    const char *at = strstr(text, pat);
    ck_assert_msg(at != NULL, "no '%s' in:\n%.2000s", key, text);
    at += strlen(pat);
    return strndup(at, strcspn(at, "\n"));
}

typedef struct workload {
    const char *name;
    const char *args[4];
} workload;

/* Every workload that ends by itself, with small arguments. */
static const workload all_workloads[] = {
    {"racy", {"4", "300"}}, {"mutex", {0}}, {"barrier", {0}}, {"condvar", {0}},
    {"parloop", {"4", "4000"}}, {"rwlock", {0}}, {"atomics", {0}}, {"manythreads", {0}},
    {"pipes", {0}}, {"malloc_stress", {0}}, {"tls", {0}}, {"unmap", {"3"}},
    {"chatter", {"3", "12"}}, {"intmath", {"3000"}}, {"fpmath", {0}}, {"strings", {0}},
    {"sort", {0}}, {"argenv", {"a b", "c"}}, {"signals", {"exit", "7"}}, {"fileio", {0}},
    {"mmapfile", {0}}, {"redirect", {"3"}}, {"exitblocked", {0}}, {"counters", {"3", "mix"}},
    {"sysprobe", {"proc"}}, {"sysprobe", {"maps", "strict"}}, {"pollpipe", {"3"}},
    {"itimer", {"kill"}}, {"itimer", {"ignored"}}, {"itimer", {"query"}},
    {"openmp", {"4", "3000"}}, {"sighandler", {0}}, {"sighandler", {"abort"}}, {"robust", {0}},
    {"sigthreads", {0}}, {"bigread", {"64"}}, {"execer", {"1"}}, {"execer", {"threaded"}},
    {"execer", {"fromthread"}}, {"execer", {"at"}}, {"forker", {"2"}}, {"forker", {"segv"}},
    {"forker", {"threads"}},
};

/* Records W with OPTS (NULL-terminated) into DIR; returns the exit status
 * and fills *o. */
static int record(tu_output *o, const char *dir, const workload *w, const char *const *opts)
{
    const char *args[5] = {w->args[0], w->args[1], w->args[2], w->args[3], NULL};
    return tu_record(o, dir, w->name, opts, args);
}

static void compare_with_run(const workload *w, const char *seed, const char *cpus)
{
    char *tmp = tu_tmpdir();
    char *dir = strdup(tu_path(tmp, "b"));
    tu_output r, o;
    const char *a[20];
    size_t n = 0;
    a[n++] = "run";
    a[n++] = "--stats";
    a[n++] = "-n";
    a[n++] = cpus;
    a[n++] = "--seed";
    a[n++] = seed;
    a[n++] = "--";
    a[n++] = guest(w->name);
    for (size_t i = 0; i < 4 && w->args[i]; i++)
        a[n++] = w->args[i];
    a[n] = NULL;
    tu_rnr(&r, a);
    const char *opts[] = {"-n", cpus, "--seed", seed, NULL};
    int st = record(&o, dir, w, opts);
    ck_assert_msg(st == r.status, "%s seed %s: record exit %d, run exit %d (%.300s)", w->name, seed,
                  st, r.status, o.err);
    ck_assert_msg(o.out_len == r.out_len && memcmp(o.out, r.out, r.out_len) == 0,
                  "%s seed %s: record's stdout differs from run's", w->name, seed);
    size_t len;
    uint8_t *saved = tu_read_file(tu_path(dir, "stdout"), &len);
    ck_assert_msg(len == r.out_len && memcmp(saved, r.out, len) == 0,
                  "%s: the bundle's stdout differs from run's", w->name);
    free(saved);
    char *digest = stat_line(r.err, "digest");
    expect_manifest(dir, "final.digest", digest);
    free(digest);
    char *insns = stat_line(r.err, "instructions");
    expect_manifest(dir, "instructions", insns);
    free(insns);
    /* Per thread: "thread.K: tid T instructions N" against the manifest. */
    char *nthreads = stat_line(r.err, "threads");
    expect_manifest(dir, "threads", nthreads);
    for (long k = 0; k < atol(nthreads); k++) {
        char key[32], mkey[48];
        snprintf(key, sizeof key, "thread.%ld", k);
        char *line = stat_line(r.err, key);
        const char *ins = strstr(line, "instructions ");
        ck_assert_ptr_nonnull(ins);
        snprintf(mkey, sizeof mkey, "thread.%ld.instructions", k);
        expect_manifest(dir, mkey, ins + 13);
        free(line);
    }
    free(nthreads);
    expect_manifest(dir, "status", "complete");
    expect_manifest(dir, "silence-violations", "0");
    tu_output_free(&r);
    tu_output_free(&o);
    tu_rmtree(tmp);
    free(tmp);
    free(dir);
}

START_TEST(record_executes_exactly_what_run_executes)
{
    size_t n = sizeof all_workloads / sizeof all_workloads[0];
    for (size_t i = 0; i < n; i++) {
        if (slow_build() && i % 5 != 0)
            continue;
        compare_with_run(&all_workloads[i], "1", "4");
        if (!slow_build())
            compare_with_run(&all_workloads[i], "7", "8");
    }
}
END_TEST

/* Records W with the truth into DIR, runs the backend, and requires rnr
 * verify to pass on the initial log and every final log. OPTS has at least
 * four entries before its NULL (the messages name them). */
static void verify_all_in(const workload *w, const char *const *opts, const char *dir)
{
    const char *o2[24];
    size_t n = 0;
    o2[n++] = "--truth";
    o2[n++] = "--backend";
    for (size_t i = 0; opts[i]; i++)
        o2[n++] = opts[i];
    o2[n] = NULL;
    tu_output o;
    int st = record(&o, dir, w, o2);
    ck_assert_msg(st == 0 || (strcmp(w->name, "signals") == 0 && st == 7) ||
                      (strcmp(w->name, "itimer") == 0 && st == 142),
                  "%s: record exit %d: %.500s", w->name, st, o.err);
    tu_output_free(&o);
    expect_manifest(dir, "silence-violations", "0");
    static const char *const formats[] = {"initial", "maxpar", "stitched", "serial", "stserial"};
    for (size_t f = 0; f < 5; f++) {
        tu_output v;
        tu_rnr(&v, (const char *[]){"verify", dir, formats[f], NULL});
        ck_assert_msg(v.status == 0, "%s %s %s %s: verify %s exit %d:\n%.800s%.800s", w->name,
                      opts[0] ? opts[0] : "", opts[1] ? opts[1] : "", opts[3] ? opts[3] : "",
                      formats[f], v.status, v.out, v.err);
        ck_assert_msg(strstr(v.out, "ground-truth dependences") != NULL, "%s", v.out);
        tu_output_free(&v);
    }
}

static void verify_all(const workload *w, const char *const *opts)
{
    char *tmp = tu_tmpdir();
    char *dir = strdup(tu_path(tmp, "b"));
    verify_all_in(w, opts, dir);
    tu_rmtree(tmp);
    free(tmp);
    free(dir);
}

static const workload threaded[] = {
    {"racy", {"4", "300"}}, {"mutex", {0}}, {"barrier", {0}}, {"condvar", {0}},
    {"parloop", {"4", "3000"}}, {"rwlock", {0}}, {"atomics", {0}}, {"manythreads", {0}},
    {"pipes", {0}}, {"tls", {0}}, {"unmap", {"2"}}, {"chatter", {"3", "8"}},
    {"mmapfile", {0}}, {"redirect", {"3"}}, {"sysprobe", {"proc"}},
    {"sysprobe", {"maps", "strict"}}, {"pollpipe", {"3"}}, {"itimer", {"kill"}},
    {"itimer", {"ignored"}}, {"openmp", {"4", "3000"}}, {"sighandler", {0}}, {"robust", {0}},
    {"sigthreads", {0}}, {"bigread", {"64"}}, {"forker", {"2"}}, {"forker", {"threads"}},
};

START_TEST(record_orders_every_real_conflict_of_every_workload)
{
    /* Loop index: the workload. 3 seeds x {exact, bloom:1024} x K {2, 4};
     * K = 2 with chunks of 800 instructions and clusters of 2 chunks. */
    const workload *w = &threaded[_i];
    static const char *const seeds[] = {"1", "2", "3"};
    static const char *const sigs[] = {"exact", "bloom:1024"};
    static const char *const ks[] = {"2", "4"};
    for (int s = 0; s < 3; s++)
        for (int g = 0; g < 2; g++)
            for (int k = 0; k < 2; k++) {
                if (slow_build() && (s > 0 || g != k))
                    continue;
                /* With K = 2 also short chunks and clusters: windows turn over. */
                const char *opts[] = {"--seed", seeds[s], "--sig", sigs[g], "--clusters", ks[k],
                                      "-n", "4", k ? NULL : "--chunk-max", "800", "--cluster-chunks",
                                      "2", NULL};
                verify_all(w, opts);
            }
}
END_TEST

/* A thread preempted on one core and resumed on another, in a loop that
 * keeps its data in registers (parloop: four threads on two cores, a
 * quantum of 5000 cycles), touches no line its chunks on the old core
 * touched: no conflict orders its chunks across the migration. The
 * serialization at the switch does (docs/recorder.md, "Leaving a core"):
 * every final log then keeps each thread's order, and the replay on two
 * workers reproduces the recording. The test also requires that threads
 * did migrate (consecutive chunks of one thread on the two cores), or it
 * would prove nothing. */
START_TEST(record_orders_a_thread_that_migrates_without_touching_memory)
{
    char *tmp = tu_tmpdir();
    char *dir = strdup(tu_path(tmp, "b"));
    const workload w = {"parloop", {"4", "3000"}};
    const char *opts[] = {"-n", "2", "--quantum", "5000", NULL};
    verify_all_in(&w, opts, dir);
    tu_output o;
    tu_rnr(&o, (const char *[]){"dump", tu_path(dir, "initial.log"), NULL});
    ck_assert_int_eq(o.status, 0);
    /* Migrations: consecutive chunks of a thread on two cores. */
    unsigned last_cpu[64], migrations = 0;
    memset(last_cpu, 0xff, sizeof last_cpu);
    for (const char *line = o.out; line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
        unsigned long long idx;
        unsigned cpu, tid;
        if (sscanf(line, "%llu cpu %u tid %u", &idx, &cpu, &tid) != 3)
            continue;
        if (last_cpu[tid % 64] != 0xffffffffu && last_cpu[tid % 64] != cpu)
            migrations++;
        last_cpu[tid % 64] = cpu;
    }
    ck_assert_msg(migrations > 0, "no thread migrated:\n%.2000s", o.out);
    tu_output_free(&o);
    tu_rnr(&o, (const char *[]){"replay", "--quiet", "-j", "2", dir, NULL});
    ck_assert_msg(o.status == 0, "replay exit %d: %s", o.status, o.err);
    tu_output_free(&o);
    tu_rmtree(tmp);
    free(tmp);
    free(dir);
}
END_TEST

/* A serialization is a dependence from the chunk it ends to every other
 * core (docs/recorder.md: at a global call's entry every other core
 * serializes, at its exit the calling core; the replay relies on no other
 * ordering of global calls): in the initial log of mutex on 4 CPUs, every
 * chunk ended by a serialization names the 3 other CPUs in its successor
 * vector, at its TS or later. */
START_TEST(record_serializations_reach_every_other_cpu)
{
    char *tmp = tu_tmpdir();
    char *dir = strdup(tu_path(tmp, "b"));
    const workload w = {"mutex", {0}};
    tu_output o;
    int st = record(&o, dir, &w, (const char *[]){"-n", "4", NULL});
    ck_assert_msg(st == 0, "record exit %d: %s", st, o.err);
    tu_output_free(&o);
    tu_rnr(&o, (const char *[]){"dump", tu_path(dir, "initial.log"), NULL});
    ck_assert_int_eq(o.status, 0);
    unsigned serializations = 0;
    for (const char *line = o.out; line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
        unsigned long long idx, ts, cs;
        unsigned cpu, tid;
        int used = 0;
        if (sscanf(line, "%llu cpu %u tid %u ts %llu cs %llu end serialize%n", &idx, &cpu, &tid, &ts, &cs,
                   &used) != 5 || !used)
            continue;
        serializations++;
        unsigned seen = 0;
        const char *sv = line + used, *nl = strchr(line, '\n');
        if (strncmp(sv, " sv ", 4) == 0)
            for (sv += 4; sv < (nl ? nl : sv + strlen(sv));) {
                unsigned q;
                unsigned long long t;
                int n = 0;
                if (sscanf(sv, "%u@%llu%n", &q, &t, &n) != 2 || !n)
                    break;
                ck_assert_msg(q != cpu && q < 4 && t >= ts, "record %llu: entry %u@%llu", idx, q, t);
                seen |= 1u << q;
                sv += n + (sv[n] == ',');
            }
        ck_assert_msg(seen == (0xfu & ~(1u << cpu)), "record %llu (cpu %u, ts %llu) ends by a serialization "
                      "but its successor vector names cpus %#x: %.200s", idx, cpu, ts, seen, line);
    }
    ck_assert_uint_gt(serializations, 0);
    tu_output_free(&o);
    tu_rmtree(tmp);
    free(tmp);
    free(dir);
}
END_TEST

/* At the exit of a global system call the calling core serializes (the
 * call's chunk precedes every later chunk of every core): intmath, one
 * thread on 2 CPUs (the other core idle, so no serialization at a call's
 * entry), has exactly one chunk ended by a serialization per global call
 * that returned (a SYSCALL record in the input log whose number the
 * system-call table marks global), and makes some. */
START_TEST(record_serializes_at_the_exit_of_every_global_call)
{
    char *tmp = tu_tmpdir();
    char *dir = strdup(tu_path(tmp, "b"));
    const workload w = {"intmath", {"200"}};
    tu_output o;
    int st = record(&o, dir, &w, (const char *[]){"-n", "2", NULL});
    ck_assert_msg(st == 0, "record exit %d: %s", st, o.err);
    tu_output_free(&o);
    char err[RNR_ERR_MAX];
    rnr_reader *r = rnr_reader_open(tu_path(dir, "input.log"), err, sizeof err);
    ck_assert_msg(r != NULL, "%s", err);
    uint64_t global = 0, serialized = 0;
    rnr_input_record in;
    while (rnr_reader_next_input(r, &in) == 1)
        global += in.type == RNR_IN_SYSCALL && drv_syscall_lookup((uint32_t)in.nr).order == DRV_ORD_GLOBAL;
    rnr_reader_close(r);
    r = rnr_reader_open(tu_path(dir, "initial.log"), err, sizeof err);
    ck_assert_msg(r != NULL, "%s", err);
    rnr_initial_chunk c;
    while (rnr_reader_next_initial(r, &c) == 1)
        serialized += c.reason == RNR_END_SERIALIZE;
    rnr_reader_close(r);
    ck_assert_uint_gt(global, 0);
    ck_assert_uint_eq(serialized, global);
    tu_rmtree(tmp);
    free(tmp);
    free(dir);
}
END_TEST

START_TEST(record_orders_conflicts_with_many_cpus_and_small_windows)
{
    /* Tight settings: chunks of 500, MSP at its minimum, clusters of 1
     * chunk, 8 and 16 CPUs, a short preemption quantum. */
    const char *o1[] = {"-n", "8", "--chunk-max", "500", "--msp", "4096", "--cluster-chunks", "1",
                        "--quantum", "20000", NULL};
    const char *o2[] = {"-n", "16", "--sig", "bloom:256", "--clusters", "2", "--seed", "9", NULL};
    verify_all(&threaded[1], o1);
    verify_all(&threaded[10], o1);
    if (!slow_build()) {
        verify_all(&threaded[0], o2);
        verify_all(&threaded[7], o2);
    }
}
END_TEST

/* Chunks of 13 instructions end inside nearly every decoded block: the
 * truth must number each access by the instruction that made it, not by
 * the start of its block (a trace taken after the access hook once saw the
 * block start, so the truth put accesses into the chunk before theirs and
 * verify reported violations the log did not have). */
START_TEST(record_truth_numbers_accesses_inside_blocks)
{
    const char *o[] = {"-n", "4", "--chunk-max", "13", "--seed", "1", NULL};
    verify_all(&threaded[2], o);   /* barrier */
    if (!slow_build()) {
        verify_all(&threaded[3], o);   /* condvar */
        verify_all(&threaded[5], o);   /* rwlock */
    }
}
END_TEST

/* The most by which a ground-truth dependence of bundle DIR reaches its
 * destination instruction after the TS of the initial chunk holding that
 * instruction (0 if none does). */
static uint64_t truth_after_its_chunk(const char *dir)
{
    char err[512];
    rnr_reader *r = rnr_reader_open(tu_path(dir, "initial.log"), err, sizeof err);
    ck_assert_msg(r != NULL, "%s", err);
    uint32_t cpus = rnr_reader_header(r)->cpus;
    uint64_t **end = calloc(cpus, sizeof *end), **ts = calloc(cpus, sizeof *ts);
    size_t *n = calloc(cpus, sizeof *n), *cap = calloc(cpus, sizeof *cap);
    rnr_initial_chunk c;
    int rc;
    while ((rc = rnr_reader_next_initial(r, &c)) == 1) {
        if (n[c.cpu] == cap[c.cpu]) {
            cap[c.cpu] = cap[c.cpu] ? 2 * cap[c.cpu] : 64;
            end[c.cpu] = realloc(end[c.cpu], cap[c.cpu] * sizeof **end);
            ts[c.cpu] = realloc(ts[c.cpu], cap[c.cpu] * sizeof **ts);
        }
        end[c.cpu][n[c.cpu]] = (n[c.cpu] ? end[c.cpu][n[c.cpu] - 1] : 0) + c.cs;
        ts[c.cpu][n[c.cpu]++] = c.ts;
    }
    ck_assert_msg(rc == 0, "%s", rnr_reader_error(r));
    rnr_reader_close(r);
    truth_set t;
    ck_assert_msg(truth_load(tu_path(dir, "truth.deps"), &t, err, sizeof err) == 0, "%s", err);
    uint64_t most = 0;
    for (size_t i = 0; i < t.n; i++) {
        const truth_access *d = &t.dep[i].dst;
        size_t lo = 0, hi = n[d->cpu];
        while (lo < hi) {   /* the first chunk of the cpu ending after it */
            size_t mid = lo + (hi - lo) / 2;
            if (end[d->cpu][mid] <= d->insn)
                lo = mid + 1;
            else
                hi = mid;
        }
        ck_assert_msg(lo < n[d->cpu], "truth dependence %zu names no instruction of the log", i);
        if (d->time > ts[d->cpu][lo] && d->time - ts[d->cpu][lo] > most)
            most = d->time - ts[d->cpu][lo];
    }
    truth_free(&t);
    for (uint32_t k = 0; k < cpus; k++) {
        free(end[k]);
        free(ts[k]);
    }
    free(end);
    free(ts);
    free(n);
    free(cap);
    return most;
}

/* One read() system call (bigread: a buffer that three threads wrote
 * before, filled line by line, each line taken from another core) outlasts
 * its chunk: the chunk holding the ECALL ends by age while the call runs,
 * and the truth gives the call's later accesses to the ECALL at their own
 * times, after that chunk's TS (the test checks that the bundle has such
 * a dependence). verify once assumed that no access comes after its
 * chunk's TS: it checked the final chunk holding the ECALL before those
 * dependences were read and stopped with exit 2 ("ground-truth dependence
 * N reaches cpu 0 instruction M after the final log was checked there");
 * with a call longer than an MSP past the chunk, the initial log's own
 * check too. 64 KiB at the default MSP, 16 KiB at the smallest. The replay
 * of the bundle is exact. */
START_TEST(record_truth_verifies_a_system_call_that_outlasts_its_chunk)
{
    static const struct { const char *kib, *msp, *seed; } cases[] = {
        {"64", "100000", "1"}, {"16", "4096", "2"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *tmp = tu_tmpdir();
        char *dir = strdup(tu_path(tmp, "b"));
        const workload w = {"bigread", {cases[i].kib}};
        const char *opts[] = {"--msp", cases[i].msp, "--seed", cases[i].seed, "-n", "4", NULL};
        verify_all_in(&w, opts, dir);
        ck_assert_msg(truth_after_its_chunk(dir) > 0,
                      "bigread %s KiB, MSP %s: no truth dependence comes after its chunk's TS",
                      cases[i].kib, cases[i].msp);
        size_t len;
        uint8_t *out = tu_read_file(tu_path(dir, "stdout"), &len);
        static const char *const formats[] = {"maxpar", "stserial"};
        for (int f = 0; f < 2; f++) {
            tu_output o;
            tu_rnr(&o, (const char *[]){"replay", "-j", "2", "--format", formats[f], dir, NULL});
            ck_assert_msg(o.status == 0 && strstr(o.err, "verified") != NULL,
                          "bigread %s: replay %s exit %d:\n%.1500s", cases[i].kib, formats[f],
                          o.status, o.err);
            ck_assert_msg(o.out_len == len && memcmp(o.out, out, len) == 0,
                          "bigread %s: replay %s printed other output than the recording",
                          cases[i].kib, formats[f]);
            tu_output_free(&o);
        }
        free(out);
        tu_rmtree(tmp);
        free(tmp);
        free(dir);
    }
}
END_TEST

/* Spawns `rnr record` on endless (4 threads, no end) into DIR without
 * waiting; returns its pid. Its output goes to /dev/null. */
static pid_t spawn_endless(const char *dir)
{
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        alarm(600);   /* survives exec: a failed case leaves no recorder running */
        int null = open("/dev/null", O_RDWR);
        dup2(null, 0);
        dup2(null, 1);
        dup2(null, 2);
        execl(tu_rnr_bin(), tu_rnr_bin(), "record", "--quiet", "-n", "4", "-o", dir, "--",
              guest("endless"), (char *)NULL);
        _exit(127);
    }
    return pid;
}

START_TEST(record_sigint_finishes_the_bundle_marked_interrupted)
{
    char *tmp = tu_tmpdir();
    char *dir = strdup(tu_path(tmp, "b"));
    pid_t pid = spawn_endless(dir);
    char part[4096];
    tu_wait_part(dir, "initial.log", (long)pid, 30000, part, sizeof part);
    kill(pid, SIGINT);
    int status;
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 130, "status 0x%x", status);
    expect_manifest(dir, "status", "interrupted: SIGINT");
    expect_manifest(dir, "exit-status", "130");
    expect_manifest(dir, "silence-violations", "0");
    tu_output o;
    tu_rnr(&o, (const char *[]){"stats", dir, NULL});
    ck_assert_msg(o.status == 0 && strstr(o.err, "warning") == NULL, "%s", o.err);
    tu_output_free(&o);
    tu_rnr(&o, (const char *[]){"backend", dir, NULL});
    ck_assert_msg(o.status == 0, "%s", o.err);
    tu_output_free(&o);
    tu_rnr(&o, (const char *[]){"verify", dir, "maxpar", NULL});
    ck_assert_msg(o.status == 0, "%s%s", o.out, o.err);
    tu_output_free(&o);
    tu_rmtree(tmp);
    free(tmp);
    free(dir);
}
END_TEST

START_TEST(record_killed_leaves_logs_with_their_complete_prefix)
{
    char *tmp = tu_tmpdir();
    char *dir = strdup(tu_path(tmp, "b"));
    pid_t pid = spawn_endless(dir);
    char part[4096];
    tu_wait_part(dir, "initial.log", (long)pid, 100000, part, sizeof part);
    /* The input log too has had a flush (every quarter second). */
    char inpart[4096];
    tu_wait_part(dir, "input.log", (long)pid, 4096, inpart, sizeof inpart);
    kill(pid, SIGKILL);
    int status;
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert(WIFSIGNALED(status));
    expect_manifest(dir, "status", "recording");
    tu_output o;
    /* The bundle is refused; its temporary logs keep a complete prefix. */
    tu_rnr(&o, (const char *[]){"stats", dir, NULL});
    ck_assert_msg(o.status == 2 && strstr(o.err, "never finished"), "status %d: %s", o.status, o.err);
    tu_output_free(&o);
    tu_rnr(&o, (const char *[]){"stats", part, NULL});
    ck_assert_msg(o.status == 0 && strstr(o.err, "truncated") && strstr(o.err, "warning"),
                  "status %d: %s", o.status, o.err);
    tu_output_free(&o);
    tu_rnr(&o, (const char *[]){"dump", part, NULL});
    ck_assert_msg(o.status == 0 && strstr(o.err, "truncated") && tu_count_lines(o.out) > 100,
                  "status %d: %s", o.status, o.err);
    tu_output_free(&o);
    tu_rnr(&o, (const char *[]){"dump", inpart, NULL});
    ck_assert_msg(o.status == 0 && tu_count_lines(o.out) > 10, "status %d: %s", o.status, o.err);
    tu_output_free(&o);
    tu_rnr(&o, (const char *[]){"maxpar", part, tu_path(tmp, "maxpar.log"), NULL});
    ck_assert_msg(o.status == 0 && strstr(o.err, "truncated"), "status %d: %s", o.status, o.err);
    tu_output_free(&o);
    /* The MaxPar log of the prefix is a complete log. */
    tu_rnr(&o, (const char *[]){"stats", tu_path(tmp, "maxpar.log"), NULL});
    ck_assert_msg(o.status == 0 && strstr(o.err, "warning") == NULL, "%s", o.err);
    tu_output_free(&o);
    tu_rmtree(tmp);
    free(tmp);
    free(dir);
}
END_TEST

START_TEST(record_streams_the_initial_log_through_a_pipe_and_runs_maxpar_on_the_fly)
{
    char *tmp = tu_tmpdir();
    char *dir = strdup(tu_path(tmp, "b"));
    char cmd[4096];
    snprintf(cmd, sizeof cmd,
             "'%s' record --quiet --backend -n 4 --seed 3 --initial-log - -o '%s' -- '%s' 4 3000 | "
             "'%s' maxpar - '%s'",
             tu_rnr_bin(), dir, guest("parloop"), tu_rnr_bin(), tu_path(tmp, "piped.log"));
    tu_output o;
    tu_run((const char *[]){"/bin/sh", "-c", cmd, NULL}, NULL, &o);
    ck_assert_msg(o.status == 0, "%s", o.err);
    tu_output_free(&o);
    /* Through the pipe, on the fly inside record, and from the file: the
     * same MaxPar log, byte for byte. */
    tu_rnr(&o, (const char *[]){"maxpar", tu_path(dir, "initial.log"), tu_path(tmp, "file.log"), NULL});
    ck_assert_int_eq(o.status, 0);
    tu_output_free(&o);
    size_t a, b, c;
    uint8_t *x = tu_read_file(tu_path(tmp, "piped.log"), &a);
    uint8_t *y = tu_read_file(tu_path(tmp, "file.log"), &b);
    uint8_t *z = tu_read_file(tu_path(dir, "maxpar.log"), &c);
    ck_assert_msg(a == b && memcmp(x, y, a) == 0, "piped MaxPar differs (%zu vs %zu bytes)", a, b);
    ck_assert_msg(c == b && memcmp(z, y, c) == 0, "on-the-fly MaxPar differs (%zu vs %zu bytes)", c, b);
    free(x);
    free(y);
    free(z);
    static const char *const logs[] = {"stitched.log", "serial.log", "stserial.log"};
    for (int i = 0; i < 3; i++) {
        struct stat st;
        ck_assert_msg(stat(tu_path(dir, logs[i]), &st) == 0, "no %s", logs[i]);
    }
    tu_rmtree(tmp);
    free(tmp);
    free(dir);
}
END_TEST

/* rnr's stdout a non-blocking pipe that nobody reads, 1000 bytes in it
 * already: the guest's write of 1 MiB puts out what the pipe takes (the
 * rest of its 64 KiB on Linux: part of one host write) and returns
 * that count, its next write fails with EAGAIN (outflood exits 1). The
 * bundle's stdout holds exactly the bytes the pipe received from it (the
 * write's result, which the replay regenerates), not none of them, and
 * the replay verifies. */
START_TEST(record_keeps_in_the_bundle_what_its_stdout_took_of_a_write)
{
    char *tmp = tu_tmpdir();
    char *dir = strdup(tu_path(tmp, "b"));
    int fds[2];
    ck_assert_int_eq(pipe(fds), 0);
    ck_assert_int_eq(fcntl(fds[1], F_SETFL, O_NONBLOCK), 0);
    char before[1000];
    memset(before, 'p', sizeof before);
    ck_assert_int_eq(write(fds[1], before, sizeof before), (ssize_t)sizeof before);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        int null = open("/dev/null", O_RDWR);
        dup2(null, 0);
        dup2(fds[1], 1);
        dup2(null, 2);
        closefrom(3);
        execl(tu_rnr_bin(), tu_rnr_bin(), "record", "--quiet", "--backend", "-n", "1", "-o", dir,
              "--", guest("outflood"), "1M", "1", "1M", (char *)NULL);
        _exit(127);
    }
    close(fds[1]);
    int status;
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 1, "status 0x%x", status);
    size_t cap = 2u << 20, got = 0;
    uint8_t *piped = malloc(cap);
    for (ssize_t r; (r = read(fds[0], piped + got, cap - got)) > 0;)
        got += (size_t)r;
    close(fds[0]);
    ck_assert_msg(got > sizeof before && got < (1u << 20), "the pipe took %zu bytes", got);
    ck_assert(memcmp(piped, before, sizeof before) == 0);
    got -= sizeof before;
    size_t n;
    uint8_t *kept = tu_read_file(tu_path(dir, "stdout"), &n);
    ck_assert_msg(n == got && memcmp(kept, piped + sizeof before, n) == 0, "the bundle's stdout "
                  "holds %zu bytes, the pipe took %zu", n, got);
    char want[32];
    snprintf(want, sizeof want, "%zu", got);
    expect_manifest(dir, "file.stdout.bytes", want);
    expect_manifest(dir, "exit-status", "1");
    tu_output o;
    tu_rnr(&o, (const char *[]){"replay", "--quiet", dir, NULL});
    ck_assert_msg(o.status == 0, "replay exit %d: %s", o.status, o.err);
    tu_output_free(&o);
    free(kept);
    free(piped);
    tu_rmtree(tmp);
    free(tmp);
    free(dir);
}
END_TEST

START_TEST(record_rejects_bad_usage_with_one_line)
{
    char *tmp = tu_tmpdir();
    char *dir = strdup(tu_path(tmp, "b"));
    tu_output o;
    tu_rnr(&o, (const char *[]){"record", "-o", dir, "--", NULL});
    ck_assert_msg(o.status == 2 && strstr(o.err, "missing PROG") && tu_count_lines(o.err) == 2,
                  "%s", o.err);
    tu_output_free(&o);
    tu_rnr(&o, (const char *[]){"record", "-o", dir, "--msp", "100", "--", guest("racy"), NULL});
    ck_assert_msg(o.status == 2 && strstr(o.err, "--msp"), "%s", o.err);
    tu_output_free(&o);
    tu_write_file(tu_path(tmp, "notelf"), "hello\n", 6);
    tu_rnr(&o, (const char *[]){"record", "-o", dir, "--", tu_path(tmp, "notelf"), NULL});
    ck_assert_msg(o.status == 2 && strstr(o.err, "notelf") && tu_count_lines(o.err) == 1, "%s", o.err);
    tu_output_free(&o);
    tu_rmtree(dir);
    tu_rnr(&o, (const char *[]){"record", "--quiet", "-o", dir, "--", guest("racy"), "2", "10", NULL});
    ck_assert_int_eq(o.status, 0);
    tu_output_free(&o);
    tu_rnr(&o, (const char *[]){"record", "-o", dir, "--", guest("racy"), NULL});
    ck_assert_msg(o.status == 2 && strstr(o.err, "already holds a bundle"), "%s", o.err);
    tu_output_free(&o);
    tu_rmtree(tmp);
    free(tmp);
    free(dir);
}
END_TEST

TU_SUITE(record)
{
    Suite *s = suite_create("record");
    TCase *tc = tu_tcase(s, "same_as_run", 600);
    tcase_add_test(tc, record_executes_exactly_what_run_executes);
    tc = tu_tcase(s, "soundness", 600);
    tcase_add_loop_test(tc, record_orders_every_real_conflict_of_every_workload, 0,
                        (int)(sizeof threaded / sizeof threaded[0]));
    tcase_add_test(tc, record_orders_conflicts_with_many_cpus_and_small_windows);
    tcase_add_test(tc, record_truth_numbers_accesses_inside_blocks);
    tcase_add_test(tc, record_truth_verifies_a_system_call_that_outlasts_its_chunk);
    tc = tu_tcase(s, "serialize", 120);
    tcase_add_test(tc, record_orders_a_thread_that_migrates_without_touching_memory);
    tcase_add_test(tc, record_serializations_reach_every_other_cpu);
    tcase_add_test(tc, record_serializes_at_the_exit_of_every_global_call);
    tc = tu_tcase(s, "bundle", 120);
    tcase_add_test(tc, record_sigint_finishes_the_bundle_marked_interrupted);
    tcase_add_test(tc, record_killed_leaves_logs_with_their_complete_prefix);
    tcase_add_test(tc, record_streams_the_initial_log_through_a_pipe_and_runs_maxpar_on_the_fly);
    tcase_add_test(tc, record_keeps_in_the_bundle_what_its_stdout_took_of_a_write);
    tcase_add_test(tc, record_rejects_bad_usage_with_one_line);
    return s;
}
