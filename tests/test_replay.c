/* tests/test_replay.c: `rnr replay` end to end: every recorded workload,
 * over seeds, replayed from every format on 1, 2 and 3 workers reproduces
 * the recording (rnr replay compares stdout, stderr, exit status,
 * per-thread instruction counts and the final digest itself, and the
 * test also compares the printed stdout); bundles of 8, 16 and 32 CPUs on
 * 2 workers; a replay of a program whose file is gone; refusals at the
 * memory limit, replayed under the manifest's limit; and damage: a
 * corrupt final or input log, a changed chunk check, a changed input, a
 * token removed, the wrong program, an unfinished recording, each exiting
 * 1 or 2 with the named cause. */
#include <regex.h>
#include <signal.h>
#include <stdio.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "driver/driver.h"
#include "formats/digest.h"
#include "formats/log.h"
#include "tests/testutil.h"

static const char *guest(const char *name) { return tu_path(tu_env("RNR_GUEST_DIR"), name); }

static int slow_build(void)
{
    const char *m = getenv("CK_TIMEOUT_MULTIPLIER");
    return tu_under_valgrind() || (m && atoi(m) > 1);
}

typedef tu_workload workload;

/* Records W (with OPTS) into a new bundle under TMP; returns its path
 * (owned) and the recording's stdout in *out. */
static char *record(const char *tmp, const char *name, const workload *w, const char *const *opts,
                    tu_output *out)
{
    char *dir = strdup(tu_path(tmp, name));
    const char *o2[24] = {"--backend"};
    for (size_t i = 0; opts && opts[i] && i < 22; i++)
        o2[i + 1] = opts[i];
    const char *args[5] = {w->args[0], w->args[1], w->args[2], w->args[3], NULL};
    tu_record(out, dir, w->name, o2, args);
    /* signals exit 7 ends with status 7, itimer kill and pause by SIGALRM,
     * sighandler abort by SIGABRT after its handler returned, forker
     * orphan with 5. */
    ck_assert_msg(out->status == 0 || out->status == 7 || out->status == 142 || out->status == 134 ||
                  out->status == 5,
                  "%s: record exit %d: %.500s", w->name, out->status, out->err);
    return dir;
}

/* Replays DIR from FORMAT on J workers; requires exit 0, the summary, and
 * the recording's stdout printed as it was. */
static void replay_ok(const char *dir, const char *format, const char *j, const tu_output *rec,
                      const char *what)
{
    tu_output o;
    tu_rnr(&o, (const char *[]){"replay", "-j", j, "--format", format, dir, NULL});
    ck_assert_msg(o.status == 0, "%s: replay %s -j %s exit %d:\n%.1500s", what, format, j, o.status,
                  o.err);
    ck_assert_msg(strstr(o.err, "verified") != NULL, "%s: %s", what, o.err);
    ck_assert_msg(o.out_len == rec->out_len && memcmp(o.out, rec->out, o.out_len) == 0,
                  "%s: replay %s -j %s printed other output than the recording", what, format, j);
    tu_output_free(&o);
}

static const char *const formats[] = {"maxpar", "stitched", "serial", "stserial"};

START_TEST(replay_reproduces_every_workload_from_every_format)
{
    /* Loop index: the workload; 3 seeds x 4 formats x 1, 2, 3 workers. */
    const workload *w = &tu_threaded[_i];
    static const char *const seeds[] = {"1", "2", "3"};
    static const char *const js[] = {"1", "2", "3"};
    char *tmp = tu_tmpdir();
    for (int s = 0; s < 3; s++) {
        if (slow_build() && s > 0)
            continue;
        const char *opts[] = {"-n", "4", "--seed", seeds[s], NULL};
        tu_output rec;
        char *dir = record(tmp, seeds[s], w, opts, &rec);
        for (int f = 0; f < 4; f++)
            for (int j = 0; j < 3; j++) {
                if (slow_build() && j != f % 3)
                    continue;
                char what[128];
                snprintf(what, sizeof what, "%s seed %s", w->name, seeds[s]);
                replay_ok(dir, formats[f], js[j], &rec, what);
            }
        tu_output_free(&rec);
        free(dir);
    }
    tu_rmtree(tmp);
    free(tmp);
}
END_TEST

/* The replay keeps a descriptor table of its own (which descriptors hold
 * stdout and stderr) and routes a write's bytes by it. That is sound only
 * if the calls changing it and the writes reading it are totally ordered
 * in every final log, i.e. all ORD_GLOBAL (driver/replay.c, mirror_fds):
 * two threads' dup3 onto one descriptor are otherwise unordered, and which
 * one the replay runs last decides where a later write goes. A recording
 * cannot be made to show that race on demand, so the policy is checked
 * (fcntl's keeps memory too, for F_GETLK; replay mirrors its F_DUPFD all
 * the same). */
START_TEST(replay_orders_the_calls_that_move_the_standard_streams)
{
    static const struct { uint32_t nr; const char *name; drv_replay replay; } rows[] = {
        {23, "dup", DRV_RP_RESULT},      {24, "dup3", DRV_RP_RESULT},
        {25, "fcntl", DRV_RP_RESULT_MEM}, {57, "close", DRV_RP_RESULT},
        {64, "write", DRV_RP_OUTPUT},    {66, "writev", DRV_RP_OUTPUT},
        {68, "pwrite64", DRV_RP_OUTPUT},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        drv_syscall_info s = drv_syscall_lookup(rows[i].nr);
        ck_assert_str_eq(s.name, rows[i].name);
        ck_assert_msg(s.replay == rows[i].replay, "%s: replay policy %d", s.name, (int)s.replay);
        ck_assert_msg(s.order == DRV_ORD_GLOBAL, "%s is not ordered against every core", s.name);
    }
}
END_TEST

/* A guest refused memory at its limit: the replay executes mmap, brk,
 * mremap and mprotect again (driver/replay.c), under the limit the
 * manifest keeps, and is refused at the same points; told another limit,
 * it diverges. */
START_TEST(replay_refuses_memory_where_the_recording_did)
{
    static const char *const modes[] = {"malloc", "mmap", "brk", "mremap", "threads"};
    char *tmp = tu_tmpdir();
    for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++) {
        const workload w = {"memhog", {modes[i], "1M", "64M", NULL}};
        const char *opts[] = {"-n", "4", "--mem-limit", "24M", NULL};
        tu_output rec;
        char *dir = record(tmp, modes[i], &w, opts, &rec);
        const char *refused = strcmp(modes[i], "threads") == 0 ? "then EAGAIN\n" : "then ENOMEM\n";
        ck_assert_msg(strstr(rec.out, refused) != NULL, "%s", rec.out);
        for (int f = 0; f < 4; f++)
            replay_ok(dir, formats[f], f % 2 ? "2" : "1", &rec, modes[i]);
        if (i == 0) {
            char path[4096];
            snprintf(path, sizeof path, "%s/manifest", dir);
            size_t n;
            char *m = (char *)tu_read_file(path, &n);
            ck_assert_msg(strstr(m, "mem-limit = 25165824\n") != NULL, "%s", m);
            free(m);
            tu_bundle_resign(dir, "mem-limit", "33554432");
            tu_output o;
            tu_rnr(&o, (const char *[]){"replay", dir, NULL});
            ck_assert_msg(o.status == 1 && strstr(o.err, "diverged") != NULL, "status %d: %s",
                          o.status, o.err);
            tu_output_free(&o);
        }
        tu_output_free(&rec);
        free(dir);
    }
    tu_rmtree(tmp);
    free(tmp);
}
END_TEST

START_TEST(replay_of_many_recorded_cpus_on_two_workers)
{
    static const char *const cpus[] = {"8", "16", "32", "64"};
    char *tmp = tu_tmpdir();
    for (int c = 0; c < 4; c++) {
        if (slow_build() && c != 1)
            continue;
        const char *opts[] = {"-n", cpus[c], "--seed", "4", NULL};
        const workload w = {"parloop", {cpus[c], "2000"}};
        tu_output rec;
        char *dir = record(tmp, cpus[c], &w, opts, &rec);
        for (int f = 0; f < 4; f++)
            replay_ok(dir, formats[f], "2", &rec, cpus[c]);
        tu_output_free(&rec);
        free(dir);
    }
    tu_rmtree(tmp);
    free(tmp);
}
END_TEST

/* The loop above replays on 1, 2 and 3 workers; this one on 4 and 8, as
 * many as the recorded CPUs and more workers than the host has cores:
 * programs sharing at a fine grain (a barrier, condition variables, a
 * parallel loop), recorded on 8 CPUs, every format. A worker that ran a
 * chunk before its lane predecessor or an awaited token (a chunk taken
 * twice, a wake-up lost or a token check skipped under contention)
 * diverges or deadlocks here. */
START_TEST(replay_on_four_and_eight_workers_from_every_format)
{
    static const workload ws[] = {{"barrier", {0}}, {"condvar", {0}}, {"parloop", {"8", "2000"}}};
    static const char *const js[] = {"4", "8"};
    char *tmp = tu_tmpdir();
    for (int i = 0; i < 3; i++) {
        const char *opts[] = {"-n", "8", "--seed", "5", NULL};
        tu_output rec;
        char *dir = record(tmp, ws[i].name, &ws[i], opts, &rec);
        for (int f = 0; f < 4; f++)
            for (int j = 0; j < 2; j++) {
                if (slow_build() && j != f % 2)
                    continue;
                replay_ok(dir, formats[f], js[j], &rec, ws[i].name);
            }
        tu_output_free(&rec);
        free(dir);
    }
    tu_rmtree(tmp);
    free(tmp);
}
END_TEST

/* Output in megabytes from several threads, through stdout and stderr at
 * once, in calls longer than the blocks in which the replay compares and
 * the driver copies them (64 KiB; half of them writev of three pieces),
 * and one write of a whole MiB: every format on 1 and 2 workers
 * reproduces it, the same bytes printed on both streams. */
START_TEST(replay_reproduces_megabytes_of_output_from_several_threads)
{
    static const struct {
        const char *name, *cpus;
        workload w;
    } recs[] = {
        {"four", "4", {"outflood", {"4M", "4", "100000", "both"}}},
        {"one", "2", {"outflood", {"1M", "1", "1M"}}},
    };
    char *tmp = tu_tmpdir();
    for (size_t i = 0; i < sizeof recs / sizeof recs[0]; i++) {
        tu_output rec;
        char *dir = record(tmp, recs[i].name, &recs[i].w, (const char *[]){"-n", recs[i].cpus, NULL},
                           &rec);
        ck_assert_msg(rec.status == 0, "%s: record exit %d", recs[i].name, rec.status);
        ck_assert_uint_ge(rec.out_len, 1u << 20);
        ck_assert_uint_eq(rec.out_len + rec.err_len, i == 0 ? 4u << 20 : 1u << 20);
        for (int f = 0; f < 4; f++)
            for (int j = 1; j <= 2; j++) {
                if (slow_build() && j != 1 + f % 2)
                    continue;
                tu_output o;
                const char *js = j == 1 ? "1" : "2";
                tu_rnr(&o, (const char *[]){"replay", "-j", js, "--format", formats[f], dir, NULL});
                const char *said = strstr(o.err, "rnr replay: ");   /* after the guest's stderr */
                ck_assert_msg(o.status == 0 && said && strstr(said, "verified"), "%s: replay %s -j %s "
                              "exit %d: %.500s", recs[i].name, formats[f], js, o.status,
                              said ? said : "(no message)");
                ck_assert_msg(o.out_len == rec.out_len && memcmp(o.out, rec.out, o.out_len) == 0,
                              "%s: replay %s -j %s printed another stdout", recs[i].name, formats[f], js);
                ck_assert_msg(o.err_len > rec.err_len && memcmp(o.err, rec.err, rec.err_len) == 0,
                              "%s: replay %s -j %s printed another stderr", recs[i].name, formats[f], js);
                tu_output_free(&o);
            }
        tu_output_free(&rec);
        free(dir);
    }
    tu_rmtree(tmp);
    free(tmp);
}
END_TEST

/* One of the ways a recorded output file can differ from what the replay
 * writes (N bytes recorded in ORIG): KIND 0 one byte changed in the
 * middle, 1 one byte more at the end, 2 the last byte gone, 3 two bytes
 * changed (the first one counts). Written to PATH; returns the offset of
 * the first byte the replay must name. */
static size_t tamper(const char *path, const uint8_t *orig, size_t n, int kind)
{
    uint8_t *t = malloc(n + 1);
    memcpy(t, orig, n);
    size_t tn = n, at = n / 2;
    if (kind == 0)
        t[at] ^= 1;
    else if (kind == 1)
        t[tn++] = 'x', at = n;
    else if (kind == 2)
        at = --tn;
    else
        t[n / 2 + 3] ^= 0x40, t[at = n / 3 + 1] ^= 0x20;
    tu_write_file(path, t, tn);
    free(t);
    return at;
}

/* The replay compares its stdout and stderr with the bundle's files as
 * the bytes come (it holds one block of them, not the output): one byte
 * changed, two changed, one byte more or one byte less in either file
 * fails the replay (exit 1), naming the stream, the bytes the replay
 * wrote and the first byte that differs; the files as recorded pass.
 * redirect moves the standard streams while its threads write; outflood
 * writes 3 MiB from four threads, two on each stream, each in calls of
 * 100,000 bytes: there every format on 1 and 2 workers gives the same
 * message. */
START_TEST(replay_fails_when_its_output_differs_from_the_recording)
{
    static const struct {
        const char *name, *cpus;
        workload w;
        int all;                   /* every format on 1 and 2 workers */
    } recs[] = {
        {"redirect", "3", {"redirect", {"3"}}, 0},
        {"outflood", "4", {"outflood", {"3M", "4", "100000", "both"}}, 1},
    };
    static const char *const streams[] = {"stdout", "stderr"};
    char *tmp = tu_tmpdir();
    for (size_t r = 0; r < sizeof recs / sizeof recs[0]; r++) {
        tu_output rec;
        char *dir = record(tmp, recs[r].name, &recs[r].w, (const char *[]){"-n", recs[r].cpus, NULL},
                           &rec);
        replay_ok(dir, "maxpar", "2", &rec, "as recorded");
        for (int st = 0; st < 2; st++) {
            char path[4200];
            snprintf(path, sizeof path, "%s/%s", dir, streams[st]);
            size_t n;
            uint8_t *orig = tu_read_file(path, &n);
            ck_assert_uint_gt(n, 10);
            for (int k = 0; k < 4; k++) {
                size_t at = tamper(path, orig, n, k);
                /* The manifest's digest names the change (exit 2); behind
                 * it, the comparison as the bytes come, on a forged manifest. */
                tu_output d;
                tu_rnr(&d, (const char *[]){"replay", "--quiet", dir, NULL});
                ck_assert_msg(d.status == 2 && strstr(d.err, "not the recorded file"), "%s", d.err);
                tu_output_free(&d);
                tu_bundle_resign(dir, NULL, NULL);
                char want[128], from[64], first[512] = "";
                snprintf(want, sizeof want, "the replay's %s (%zu bytes) differs", streams[st], n);
                snprintf(from, sizeof from, "from byte %zu\n", at);
                for (int f = 0; f < 4; f++)
                    for (int j = 1; j <= 2; j++) {
                        if (!recs[r].all ? f != 0 || j != 2 : slow_build() && j != 1 + (f + k) % 2)
                            continue;
                        tu_output o;
                        const char *js = j == 1 ? "1" : "2";
                        tu_rnr(&o, (const char *[]){"replay", "--quiet", "-j", js, "--format",
                                                    formats[f], dir, NULL});
                        ck_assert_msg(o.status == 1 && strstr(o.err, want) && strstr(o.err, from),
                                      "%s %s, case %d, %s -j %s: exit %d: %s", recs[r].name,
                                      streams[st], k, formats[f], js, o.status, o.err);
                        if (!first[0])
                            snprintf(first, sizeof first, "%s", o.err);
                        ck_assert_msg(strcmp(o.err, first) == 0, "%s %s, case %d, %s -j %s: '%s', "
                                      "not '%s'", recs[r].name, streams[st], k, formats[f], js,
                                      o.err, first);
                        tu_output_free(&o);
                    }
            }
            tu_write_file(path, orig, n);
            free(orig);
            tu_bundle_resign(dir, NULL, NULL);
        }
        replay_ok(dir, "stserial", "1", &rec, "files restored");
        tu_output_free(&rec);
        free(dir);
    }
    tu_rmtree(tmp);
    free(tmp);
}
END_TEST

/* Recordings whose last system call of a thread never returned: abort()
 * and raise() end the process inside tgkill, an unblocked pending SIGTERM
 * inside rt_sigprocmask, a deadlock leaves every
 * thread blocked in futex, exitblocked ends while two threads are blocked
 * (a pipe read, a condition wait); a fault ends it between calls. The replay runs
 * each to the recorded end and verifies it (status, threads, digest). */
START_TEST(replay_reproduces_endings_inside_a_system_call)
{
    static const workload ends[] = {
        {"signals", {"abort"}}, {"signals", {"raise"}}, {"signals", {"segv"}},
        {"signals", {"pending"}},
        {"deadlock", {0}}, {"signals", {"exit", "7"}}, {"exitblocked", {0}},
        {"exitblocked", {"abort"}},
    };
    char *tmp = tu_tmpdir();
    for (size_t i = 0; i < sizeof ends / sizeof ends[0]; i++) {
        char name[16];
        snprintf(name, sizeof name, "e%zu", i);
        tu_output rec;
        char *dir = strdup(tu_path(tmp, name));
        const char *o2[] = {"--backend", "-n", "3", NULL};
        const char *args[5] = {ends[i].args[0], ends[i].args[1], NULL};
        tu_record(&rec, dir, ends[i].name, o2, args);
        ck_assert_msg(rec.status != 0 && rec.status != 2, "%s %s: record exit %d: %.500s",
                      ends[i].name, args[0] ? args[0] : "", rec.status, rec.err);
        for (int f = 0; f < 4; f++) {
            char what[64];
            snprintf(what, sizeof what, "%s %s", ends[i].name, args[0] ? args[0] : "");
            replay_ok(dir, formats[f], f % 2 ? "2" : "1", &rec, what);
        }
        if (args[0] && strcmp(args[0], "pending") == 0) {
            /* The replay itself ends by the signal, and checks it: a
             * manifest claiming SIGABRT instead of SIGTERM fails it. */
            char path[4200];
            snprintf(path, sizeof path, "%s/manifest", dir);
            size_t n;
            char *m = (char *)tu_read_file(path, &n);
            ck_assert_ptr_nonnull(strstr(m, "exit-status = 143"));
            free(m);
            tu_bundle_resign(dir, "exit-status", "134");
            tu_output o;
            tu_rnr(&o, (const char *[]){"replay", "--quiet", dir, NULL});
            ck_assert_msg(o.status == 1 && strstr(o.err, "ends with status 143"), "exit %d: %s",
                          o.status, o.err);
            tu_output_free(&o);
        }
        tu_output_free(&rec);
        free(dir);
    }
    tu_rmtree(tmp);
    free(tmp);
}
END_TEST

START_TEST(replay_needs_neither_the_program_path_nor_the_input_files)
{
    /* fileio reads a file: the replay runs with that file and the
     * original program gone, and asks the host for nothing. */
    char *tmp = tu_tmpdir();
    char *prog = strdup(tu_path(tmp, "prog")), *data = strdup(tu_path(tmp, "data.txt"));
    size_t n;
    uint8_t *bytes = tu_read_file(guest("fileio"), &n);
    tu_write_file(prog, bytes, n);
    free(bytes);
    chmod(prog, 0755);
    tu_write_file(data, "one two\nthree four five\nsix\n", 28);
    char *dir = strdup(tu_path(tmp, "b"));
    tu_output rec;
    tu_rnr(&rec, (const char *[]){"record", "--quiet", "--backend", "-o", dir, "--", prog, data, NULL});
    ck_assert_msg(rec.status == 0, "%s", rec.err);
    ck_assert_msg(strstr(rec.out, "lines 3") || rec.out_len > 0, "%s", rec.out);
    unlink(prog);
    unlink(data);
    replay_ok(dir, "maxpar", "2", &rec, "program and file gone");
    replay_ok(dir, "stserial", "1", &rec, "program and file gone");
    tu_output_free(&rec);

    /* mmapfile maps a file: its pages come from the input log. */
    bytes = tu_read_file(guest("mmapfile"), &n);
    tu_write_file(prog, bytes, n);
    tu_write_file(data, bytes, n);
    free(bytes);
    chmod(prog, 0755);
    char *dir2 = strdup(tu_path(tmp, "b2"));
    tu_rnr(&rec, (const char *[]){"record", "--quiet", "--backend", "-n", "4", "-o", dir2, "--", prog,
                                  data, "3", NULL});
    ck_assert_msg(rec.status == 0, "%s", rec.err);
    ck_assert_msg(strstr(rec.out, "same bytes as pread: yes") != NULL, "%s", rec.out);
    unlink(prog);
    unlink(data);
    replay_ok(dir2, "maxpar", "2", &rec, "mapped file gone");
    replay_ok(dir2, "serial", "1", &rec, "mapped file gone");
    tu_output_free(&rec);
    free(dir2);

    /* fsprobe lists a directory, stats and access()es its entries and
     * readv()s a file: all of it comes from the input log. */
    char *listed = strdup(tu_path(tmp, "listed"));
    ck_assert_int_eq(mkdir(listed, 0755), 0);
    char sub[4200];
    snprintf(sub, sizeof sub, "%s/data.txt", listed);
    tu_write_file(sub, "one two three four five six seven\n", 34);
    snprintf(sub, sizeof sub, "%s/sub", listed);
    ck_assert_int_eq(mkdir(sub, 0755), 0);
    char *dir3 = strdup(tu_path(tmp, "b3"));
    tu_rnr(&rec, (const char *[]){"record", "--quiet", "--backend", "-n", "2", "-o", dir3, "--",
                                  guest("fsprobe"), listed, NULL});
    ck_assert_msg(rec.status == 0, "%s", rec.err);
    ck_assert_msg(strstr(rec.out, "readv 34: 'one ' 'two thre'") != NULL, "%s", rec.out);
    tu_rmtree(listed);
    replay_ok(dir3, "maxpar", "2", &rec, "listed directory gone");
    replay_ok(dir3, "stserial", "1", &rec, "listed directory gone");
    tu_output_free(&rec);
    free(dir3);
    free(listed);

    /* filewrite with --allow-write creates, appends to, renames, truncates
     * and removes files: the replay writes nothing on the host (the
     * directory, deleted after the recording, stays absent) and prints
     * what the recording printed. */
    char *wdir = strdup(tu_path(tmp, "writable")), *dir5 = strdup(tu_path(tmp, "b5"));
    ck_assert_int_eq(mkdir(wdir, 0755), 0);
    char wfile[4200];
    snprintf(wfile, sizeof wfile, "%s/f.txt", wdir);
    tu_rnr(&rec, (const char *[]){"record", "--quiet", "--backend", "-n", "2", "--allow-write", wdir, "-o",
                                  dir5, "--", guest("filewrite"), wfile, "3", "fs", NULL});
    ck_assert_msg(rec.status == 0, "%s", rec.err);
    ck_assert_msg(strstr(rec.out, "read back 7 'line 0\n'") != NULL, "%s", rec.out);
    tu_rmtree(wdir);
    replay_ok(dir5, "maxpar", "2", &rec, "written directory gone");
    replay_ok(dir5, "serial", "1", &rec, "written directory gone");
    ck_assert_int_ne(access(wdir, F_OK), 0);
    tu_output_free(&rec);
    free(dir5);
    free(wdir);

    /* stdinsum's threads read standard input (a file here): the replay
     * runs with /dev/null as its standard input, the file deleted, and
     * prints what each thread read in the recording. */
    char *in = strdup(tu_path(tmp, "in.txt")), *dir4 = strdup(tu_path(tmp, "b4"));
    ck_assert_uint_eq(tu_write_counting(in, 3000), 13893);
    tu_run((const char *[]){tu_rnr_bin(), "record", "--quiet", "--backend", "-n", "3", "-o", dir4, "--",
                            guest("stdinsum"), "-v", "4", NULL},
           in, &rec);
    ck_assert_msg(rec.status == 0, "%s", rec.err);
    ck_assert_msg(strstr(rec.out, "13893 bytes, 3000 lines") != NULL, "%s", rec.out);
    unlink(in);
    replay_ok(dir4, "maxpar", "2", &rec, "standard input gone");
    replay_ok(dir4, "stitched", "3", &rec, "standard input gone");
    replay_ok(dir4, "stserial", "1", &rec, "standard input gone");
    tu_output_free(&rec);
    free(dir4);
    free(in);
    tu_rmtree(tmp);
    free(tmp);
    free(dir);
    free(prog);
    free(data);
}
END_TEST

/* How many SYSCALL records of call NR in the input log at PATH say it
 * blocked and ran again (-512, ERESTARTSYS). */
static unsigned restarts_of(const char *path, uint64_t nr)
{
    char err[RNR_ERR_MAX];
    rnr_reader *r = rnr_reader_open(path, err, sizeof err);
    ck_assert_msg(r != NULL, "%s", err);
    rnr_input_record c;
    unsigned n = 0;
    while (rnr_reader_next_input(r, &c) == 1)
        n += c.type == RNR_IN_SYSCALL && c.nr == nr && c.value == -512;
    rnr_reader_close(r);
    return n;
}

/* fsmut changes files from several threads under --allow-write and makes
 * threads wait for OFD locks and flock held by others. Its recording holds
 * those waits (fcntl and flock records of -512) and replays from every
 * format with the directory gone: the replay takes every result from the
 * input log, changes nothing on the host (the directory stays absent) and
 * reproduces the output and final state. */
START_TEST(replay_reproduces_file_changes_and_lock_waits_from_every_format)
{
    char *tmp = tu_tmpdir();
    static const char *const seeds[] = {"1", "2"};
    for (int s = 0; s < 2; s++) {
        char *wdir = strdup(tu_path(tmp, "writable")), *dir = strdup(tu_path(tmp, seeds[s]));
        ck_assert_int_eq(mkdir(wdir, 0755), 0);
        tu_output rec;
        tu_rnr(&rec, (const char *[]){"record", "--quiet", "--backend", "-n", "4", "--seed", seeds[s],
                                      "--allow-write", wdir, "-o", dir, "--", guest("fsmut"), wdir,
                                      "4", "6", NULL});
        ck_assert_msg(rec.status == 0, "%s", rec.err);
        ck_assert_msg(strstr(rec.out, "ofd counter 24 of 24, flock counter 24 of 24\n") != NULL, "%s",
                      rec.out);
        ck_assert_msg(strstr(rec.out, "flock waiter: 0, holder had let go: yes\n") != NULL, "%s",
                      rec.out);
        char log[4200];
        snprintf(log, sizeof log, "%s/input.log", dir);
        ck_assert_uint_gt(restarts_of(log, 25), 0);   /* fcntl F_OFD_SETLKW waited */
        ck_assert_uint_gt(restarts_of(log, 32), 0);   /* flock waited */
        tu_rmtree(wdir);
        for (int f = 0; f < 4; f++) {
            char what[64];
            snprintf(what, sizeof what, "fsmut seed %s", seeds[s]);
            replay_ok(dir, formats[f], f % 2 ? "3" : "2", &rec, what);
        }
        ck_assert_int_ne(access(wdir, F_OK), 0);
        tu_output_free(&rec);
        free(dir);
        free(wdir);
    }
    /* Its scratch mode in a private /tmp (gone when the recording ends):
     * the replay needs neither that directory nor the option. */
    char *dir = strdup(tu_path(tmp, "scratch"));
    tu_output rec;
    tu_rnr(&rec, (const char *[]){"record", "--quiet", "--backend", "-n", "2", "--private-tmp", "-o",
                                  dir, "--", guest("fsmut"), "x", "scratch", NULL});
    ck_assert_msg(rec.status == 0, "%s", rec.err);
    ck_assert_msg(strstr(rec.out, "tmpfile read back 'scratch'\n") != NULL, "%s", rec.out);
    for (int f = 0; f < 4; f++)
        replay_ok(dir, formats[f], f % 2 ? "2" : "1", &rec, "fsmut scratch");
    tu_output_free(&rec);
    free(dir);
    tu_rmtree(tmp);
    free(tmp);
}
END_TEST

/* execve: execer executes itself twice, then a copy of argenv. The
 * recording lists the three images with their hashes; every format
 * replays the three programs exactly, also with checks at every chunk end
 * (the registers the new image starts with), and so an execve that ends
 * the caller's other threads. A copy changed or gone
 * since the recording is refused before anything runs (exit 2, naming
 * it). */
START_TEST(replay_reproduces_execve_from_every_format)
{
    char *tmp = tu_tmpdir();
    char *prog = strdup(tu_path(tmp, "argenv"));
    size_t n;
    uint8_t *bin = tu_read_file(tu_path(tu_env("RNR_GUEST_DIR"), "argenv"), &n);
    tu_write_file(prog, bin, n);
    ck_assert_int_eq(chmod(prog, 0755), 0);
    static const char *const checks[] = {"100000", "chunk"};
    for (int c = 0; c < 2; c++) {
        char name[32];
        snprintf(name, sizeof name, "rec%d", c);
        workload w = {"execer", {"2", prog, "a", NULL}};
        tu_output rec;
        char *dir = record(tmp, name, &w, (const char *[]){"-n", "4", "--check-every", checks[c], NULL}, &rec);
        ck_assert_msg(rec.status == 0 && strstr(rec.out, "execer round 0") && strstr(rec.out, "argv[1] 'a'"),
                      "%d %s", rec.status, rec.out);
        char *v = tu_manifest_value(dir, "exec.count");
        ck_assert_msg(v && strcmp(v, "3") == 0, "exec.count: %s", v ? v : "(none)");
        free(v);
        v = tu_manifest_value(dir, "exec.2.path");
        char real[PATH_MAX];
        ck_assert_msg(v && realpath(prog, real) && strcmp(v, real) == 0, "exec.2.path: %s", v ? v : "(none)");
        free(v);
        for (int f = 0; f < 4; f++)
            replay_ok(dir, formats[f], (f + c) % 2 ? "2" : "1", &rec, "execer");
        tu_output_free(&rec);
        free(dir);
    }
    /* The caller's other threads end at the execve (one blocked, one
     * running on another core): every format, checks at every chunk end. */
    for (int s = 1; s <= 5; s++) {
        char name[32], seed[16];
        snprintf(name, sizeof name, "threaded%d", s);
        snprintf(seed, sizeof seed, "%d", s);
        /* Seeds 3 and 4: the execve comes from the second thread, which
         * takes the first one's id; 5: execveat, then fexecve. */
        workload w = {"execer", {s <= 2 ? "threaded" : s <= 4 ? "fromthread" : "at", NULL}};
        tu_output rec;
        char *dir = record(tmp, name, &w, (const char *[]){"-n", "4", "--seed", seed, "--check-every", "chunk",
                                                           NULL}, &rec);
        ck_assert_msg(rec.status == 7 && strstr(rec.out, "execer round 0"), "%d %s", rec.status, rec.out);
        for (int f = 0; f < 4; f++)
            replay_ok(dir, formats[f], (f + s) % 2 ? "2" : "1", &rec, "execer threaded");
        tu_output_free(&rec);
        free(dir);
    }
    /* Packed: execer itself is the bundle's program, argenv's copy
     * programs/HASH; the list is complete (the schema). */
    char *dir = strdup(tu_path(tmp, "rec0"));
    char real[PATH_MAX], packed[PATH_MAX + 80];
    uint8_t sha[32];
    char hex[RNR_SHA256_HEX];
    ck_assert(realpath(prog, real) != NULL);
    rnr_sha256 h;
    rnr_sha256_init(&h);
    rnr_sha256_update(&h, bin, n);
    rnr_sha256_final(&h, sha);
    rnr_hex(sha, 32, hex);
    for (int k = 0; k < 3; k++) {
        char key[32];
        snprintf(key, sizeof key, "exec.%d.file", k);
        char *v = tu_manifest_value(dir, key);
        snprintf(packed, sizeof packed, "programs/%s", hex);
        ck_assert_msg(v && strcmp(v, k < 2 ? "program" : packed) == 0, "%s: %s", key, v ? v : "(none)");
        free(v);
    }
    snprintf(packed, sizeof packed, "%s/programs/%s", dir, hex);
    char packed_path[sizeof packed];
    snprintf(packed_path, sizeof packed_path, "%s", packed);
    size_t pn;
    uint8_t *pbin = tu_read_file(packed, &pn);
    ck_assert_msg(pn == n && memcmp(pbin, bin, n) == 0, "%s is not argenv's copy", packed);
    free(pbin);
    tu_output o;
    /* rnr ls counts the packed programs in the bundle's size. */
    tu_rnr(&o, (const char *[]){"ls", "--format", "json", dir, NULL});
    const char *db = strstr(o.out, "\"disk_bytes\": ");
    ck_assert_msg(o.status == 0 && db && strtoull(db + 14, NULL, 10) > n + 500000, "%s", o.out);
    tu_output_free(&o);
    tu_bundle_resign(dir, "exec.count", "4");
    tu_rnr(&o, (const char *[]){"replay", "--quiet", dir, NULL});
    ck_assert_msg(o.status == 2 && strstr(o.err, "no 'exec.3.path'"), "%d %s", o.status, o.err);
    tu_output_free(&o);
    tu_bundle_resign(dir, "exec.count", "3");
    tu_bundle_resign(dir, "exec.2.file", "programs/../stdout");
    tu_rnr(&o, (const char *[]){"replay", "--quiet", dir, NULL});
    ck_assert_msg(o.status == 2 && strstr(o.err, "'exec.2.file'"), "%d %s", o.status, o.err);
    tu_output_free(&o);
    snprintf(packed, sizeof packed, "programs/%s", hex);
    tu_bundle_resign(dir, "exec.2.file", packed);
    /* A packed recording needs no file outside it: the program changed,
     * then gone, it replays exactly. A packed copy damaged is refused. */
    tu_output rec = {0};
    rec.out = (char *)tu_read_file(tu_path(dir, "stdout"), &rec.out_len);
    bin[n / 2] ^= 1;
    tu_write_file(prog, bin, n);
    replay_ok(dir, "maxpar", "2", &rec, "execer, argenv changed");
    ck_assert_int_eq(unlink(prog), 0);
    replay_ok(dir, "stserial", "1", &rec, "execer, argenv gone");
    tu_rnr(&o, (const char *[]){"info", dir, NULL});
    ck_assert_msg(o.status == 0 && strstr(o.out, "(programs/") && strstr(o.out, "programs/") &&
                  !strstr(o.out, "DIFFERS"), "%d %s %s", o.status, o.out, o.err);
    tu_output_free(&o);
    tu_write_file(packed_path, bin, n);
    tu_rnr(&o, (const char *[]){"replay", dir, NULL});
    ck_assert_msg(o.status == 2 && strstr(o.err, "not the recorded program") && strstr(o.err, packed_path),
                  "%d %s", o.status, o.err);
    tu_output_free(&o);
    tu_rnr(&o, (const char *[]){"info", dir, NULL});
    ck_assert_msg(o.status == 1 && strstr(o.out, "DIFFERS from its digest") && strstr(o.err, packed_path),
                  "%d %s %s", o.status, o.out, o.err);
    tu_output_free(&o);
    tu_output_free(&rec);
    free(dir);
    /* --no-pack: the replay finds it by path and checks it: as recorded,
     * then changed, then gone. */
    bin[n / 2] ^= 1;
    tu_write_file(prog, bin, n);
    ck_assert_int_eq(chmod(prog, 0755), 0);
    workload w = {"execer", {"2", prog, "a", NULL}};
    dir = record(tmp, "nopack", &w, (const char *[]){"-n", "2", "--no-pack", NULL}, &rec);
    char *v = tu_manifest_value(dir, "exec.2.file");
    ck_assert_msg(!v && access(tu_path(dir, "programs"), F_OK) != 0, "--no-pack packed: %s", v);
    replay_ok(dir, "serial", "2", &rec, "execer --no-pack");
    tu_output_free(&rec);
    bin[n / 2] ^= 1;
    tu_write_file(prog, bin, n);
    free(bin);
    tu_rnr(&o, (const char *[]){"replay", dir, NULL});
    ck_assert_msg(o.status == 2 && strstr(o.err, "not the program the recording executed with execve") &&
                  strstr(o.err, prog), "%d %s", o.status, o.err);
    tu_output_free(&o);
    ck_assert_int_eq(unlink(prog), 0);
    tu_rnr(&o, (const char *[]){"replay", dir, NULL});
    ck_assert_msg(o.status == 2 && strstr(o.err, "exec.2.path") && strstr(o.err, prog), "%d %s", o.status,
                  o.err);
    tu_output_free(&o);
    free(dir);
    free(prog);
    tu_rmtree(tmp);
    free(tmp);
}
END_TEST

/* shmap's writable shared file mapping: the recording writes the file
 * (the stores the exit wrote back included); every format replays it
 * exactly with the directory gone, and the replay creates nothing. The
 * same for shmsem's shm_open and sem_open. */
/* Processes: forker forks workers with pipes back, reaps them, kills a
 * child blocked in read (waitid), counts SIGCHLD in a handler, and spawns
 * itself with posix_spawn (vfork, then execve). Each process's output
 * and end, and the final state of all of them, come back from every
 * format, on 1, 4 and 8 recorded CPUs, with checks at every chunk end. */
START_TEST(replay_reproduces_processes_from_every_format)
{
    char *tmp = tu_tmpdir();
    static const char *const cpus[] = {"1", "4", "8"};
    static const char *const expect[] = {
        "worker 0: sum 686606, parent seen yes, then end of file",
        "worker 2: reaped itself, exited 1 status 12",
        "signal 0 to a reaped child: -1 (No such process)",
        "total 2056931, table intact yes",
        "no child ended yet: 0",
        "waitid 0: code killed, signal 15, pid right",
        "spawned child: parent is the spawner",
        "spawned: exited 1 status 3",
        "no children left: ECHILD",
        "SIGCHLD handled, each siginfo naming a child and its status: yes",
        "a SIGCHLD held while blocked: names its child and status 42",
    };
    for (int s = 0; s < 3; s++) {
        char name[32], seed[16];
        snprintf(name, sizeof name, "forker%d", s);
        snprintf(seed, sizeof seed, "%d", s + 1);
        workload w = {"forker", {"3", NULL}};
        tu_output rec;
        char *dir = record(tmp, name, &w, (const char *[]){"-n", cpus[s], "--seed", seed, "--check-every",
                                                           "chunk", NULL}, &rec);
        ck_assert_msg(rec.status == 0, "%d %s", rec.status, rec.err);
        for (size_t k = 0; k < sizeof expect / sizeof expect[0]; k++)
            ck_assert_msg(strstr(rec.out, expect[k]), "missing '%s' in:\n%s", expect[k], rec.out);
        for (int f = 0; f < 4; f++)
            replay_ok(dir, formats[f], (f + s) % 2 ? "2" : "1", &rec, "forker");
        /* Seven processes: the first, three workers, the killed child, the
         * spawned one and the one whose SIGCHLD waits blocked; the
         * debugger refuses them. */
        char *procs = tu_manifest_value(dir, "processes");
        ck_assert_msg(procs && strcmp(procs, "7") == 0, "processes = %s", procs ? procs : "(none)");
        free(procs);
        if (s == 0) {
            tu_output g;
            tu_rnr(&g, (const char *[]){"debug", dir, "--", "-batch", NULL});
            ck_assert_msg(g.status == 2 && strstr(g.err, "the recording made 7 processes"), "%d %s",
                          g.status, g.err);
            tu_output_free(&g);
            tu_rnr(&g, (const char *[]){"info", dir, NULL});
            ck_assert_msg(g.status == 0 && strstr(g.out, "\nprocesses      7\n"), "%d %s", g.status, g.out);
            tu_output_free(&g);
        }
        tu_output_free(&rec);
        free(dir);
    }
    /* A child killed by SIGSEGV (its end has no system call: the replay
     * applies it from the log's mark), forks from a process whose other
     * threads write memory and from a second thread, children with
     * threads, and a parent that exits while its child waits. */
    static const struct {
        const char *mode, *line;
        int status;
    } modes[] = {
        {"segv", "child: signaled 1, signal 11\n", 0},
        {"threads", "threaded child 0: status 0\nthreaded child 1: status 3\nthreaded child 2: status 6\n"
                    "fork from a second thread: status 33\nworkers stopped\n", 0},
        {"orphan", "parent leaves its child waiting\n", 5},
        {"suspend", "round 0: sigsuspend -1 (Interrupted system call), handler ran 1 time(s), child named "
                    "status 20, SIGCHLD blocked again: yes\nround 1: sigsuspend -1 (Interrupted system call), "
                    "handler ran 1 time(s), child named status 21, SIGCHLD blocked again: yes\n", 0},
        {"groups", "own group: yes\nchild in a new session: status 30\nthe other child's group is its own: yes\n"
                   "kill(0, SIGUSR1): 0\nchild in the group: status 10\nthe caller took it too: yes\n"
                   "kill(-other group, SIGTERM): 0\nchild of the other group: killed by signal 15\n"
                   "kill of a group no process is in: -1 (No such process)\n", 0},
        {"shm", "counter 3000 (want 3000)\nlines from the shm object:\nchild wrote a line\nchild wrote a line\n"
                "child wrote a line\nevery child took a turn: yes\nshm object size 4096\n", 0},
    };
    for (int k = 0; k < 6; k++) {
        for (int s = 0; s < 2; s++) {
            char name[32], seed[16];
            snprintf(name, sizeof name, "%s%d", modes[k].mode, s);
            snprintf(seed, sizeof seed, "%d", s + 1);
            workload w = {"forker", {modes[k].mode, NULL}};
            tu_output rec;
            char *dir = record(tmp, name, &w, (const char *[]){"-n", s ? "4" : "2", "--seed", seed,
                                                               "--check-every", "chunk", "--private-tmp",
                                                               NULL}, &rec);
            ck_assert_msg(rec.status == modes[k].status && strcmp(rec.out, modes[k].line) == 0,
                          "%s: %d %s", modes[k].mode, rec.status, rec.out);
            for (int f = 0; f < 4; f++)
                replay_ok(dir, formats[f], (f + s) % 2 ? "2" : "1", &rec, modes[k].mode);
            tu_output_free(&rec);
            free(dir);
        }
    }
    /* POSIX record locks between two processes (a wait included). */
    char *files = strdup(tu_path(tmp, "files")), *lockf = NULL;
    ck_assert_int_eq(mkdir(files, 0755), 0);
    lockf = strdup(tu_path(files, "locked"));
    workload lw = {"forker", {"locks", lockf, NULL}};
    tu_output rec;
    char *dir = record(tmp, "locks", &lw, (const char *[]){"-n", "2", "--allow-write", files, NULL}, &rec);
    ck_assert_msg(rec.status == 0 && strstr(rec.out, "child waits, then: 0\n"), "%d %s", rec.status, rec.out);
    for (int f = 0; f < 4; f++)
        replay_ok(dir, formats[f], f % 2 ? "2" : "1", &rec, "locks");
    tu_output_free(&rec);
    free(dir);
    free(lockf);
    free(files);
    tu_rmtree(tmp);
    free(tmp);
}
END_TEST

START_TEST(replay_reproduces_a_shared_file_mapping_from_every_format)
{
    char *tmp = tu_tmpdir();
    char *wdir = strdup(tu_path(tmp, "writable")), *dir = strdup(tu_path(tmp, "rec"));
    ck_assert_int_eq(mkdir(wdir, 0700), 0);
    tu_output rec;
    tu_rnr(&rec, (const char *[]){"record", "--quiet", "--backend", "-n", "4", "--allow-write", wdir, "-o",
                                  dir, "--", guest("shmap"), wdir, "4", "100", NULL});
    ck_assert_msg(rec.status == 0, "%s", rec.err);
    ck_assert_msg(strstr(rec.out, "counter 400 of 400") != NULL, "%s", rec.out);
    size_t n;
    uint8_t *f = tu_read_file(tu_path(wdir, "shared"), &n);
    ck_assert_msg(n > 8004 && memcmp(f + 8000, "END!", 4) == 0, "the exit did not write back");
    free(f);
    tu_rmtree(wdir);
    for (int k = 0; k < 4; k++)
        replay_ok(dir, formats[k], k % 2 ? "2" : "1", &rec, "shmap");
    ck_assert_int_ne(access(wdir, F_OK), 0);
    tu_output_free(&rec);
    free(dir);
    free(wdir);
    /* shm_open and sem_open in the private /dev/shm of --private-tmp: the
     * replay needs neither the directory nor the option. */
    dir = strdup(tu_path(tmp, "shmsem"));
    tu_rnr(&rec, (const char *[]){"record", "--quiet", "--backend", "-n", "4", "--private-tmp", "-o", dir,
                                  "--", guest("shmsem"), "3", "40", NULL});
    ck_assert_msg(rec.status == 0 && strstr(rec.out, "counter 120 of 120\n"), "%s %s", rec.out, rec.err);
    for (int k = 0; k < 4; k++)
        replay_ok(dir, formats[k], k % 2 ? "1" : "3", &rec, "shmsem");
    tu_output_free(&rec);
    free(dir);
    tu_rmtree(tmp);
    free(tmp);
}
END_TEST

/* Copies input log FROM to TO record by record, letting EI change each
 * record (or drop it: return 0). */
typedef int (*edit_input_fn)(rnr_input_record *r, uint64_t index);

static void rewrite_log(const char *from, const char *to, edit_input_fn ei)
{
    char err[RNR_ERR_MAX];
    rnr_reader *r = rnr_reader_open(from, err, sizeof err);
    ck_assert_msg(r != NULL, "%s", err);
    rnr_writer *w = rnr_writer_open(to, rnr_reader_header(r), NULL, err, sizeof err);
    ck_assert_msg(w != NULL, "%s", err);
    uint64_t i = 0;
    rnr_input_record c;
    while (rnr_reader_next_input(r, &c) == 1)
        if (ei(&c, i++))
            ck_assert_int_eq(rnr_writer_put_input(w, &c), 0);
    ck_assert_int_eq(rnr_writer_close(w, err, sizeof err), 0);
    rnr_reader_close(r);
}

static int change_a_check(rnr_input_record *r, uint64_t i)
{
    static int done;
    if (i == 0)
        done = 0;
    if (r->type == RNR_IN_CHECK && !done && i > 40) {
        r->addr ^= 1;   /* the register hash */
        done = 1;
    }
    return 1;
}

static int change_a_result(rnr_input_record *r, uint64_t i)
{
    static int done;
    if (i == 0)
        done = 0;
    /* The bytes read from the file: the guest computes with other data. */
    if (r->type == RNR_IN_MEM && r->len >= 8 && !done && i > 10) {
        uint8_t *d = (uint8_t *)r->data;
        d[0] ^= 0xff;
        done = 1;
    }
    return 1;
}

/* Drops, from the first chunk after the twentieth that sends one, a token
 * that a later chunk awaits: that chunk can never run. */
static void drop_an_awaited_token(const char *from, const char *to)
{
    char err[RNR_ERR_MAX];
    static uint64_t awaited[64][64], sent[64][64];
    memset(awaited, 0, sizeof awaited);
    memset(sent, 0, sizeof sent);
    rnr_reader *r = rnr_reader_open(from, err, sizeof err);
    ck_assert_msg(r != NULL, "%s", err);
    rnr_final_chunk c;
    while (rnr_reader_next_final(r, &c) == 1)
        for (uint32_t i = 0; i < c.nptv; i++)
            awaited[c.ptv[i].cpu % 64][c.cpu % 64] += c.ptv[i].count;
    rnr_reader_close(r);
    r = rnr_reader_open(from, err, sizeof err);
    rnr_writer *w = rnr_writer_open(to, rnr_reader_header(r), NULL, err, sizeof err);
    ck_assert_msg(w != NULL, "%s", err);
    int dropped = 0;
    uint32_t stv[64];
    for (uint64_t k = 0; rnr_reader_next_final(r, &c) == 1; k++) {
        uint32_t n = 0;
        for (uint32_t i = 0; i < c.nstv; i++) {
            uint32_t q = c.stv[i];
            if (!dropped && k > 20 && sent[c.cpu % 64][q % 64] < awaited[c.cpu % 64][q % 64]) {
                dropped = 1;
                continue;
            }
            sent[c.cpu % 64][q % 64]++;
            stv[n++] = q;
        }
        c.stv = stv;
        c.nstv = n;
        ck_assert_int_eq(rnr_writer_put_final(w, &c), 0);
    }
    ck_assert_msg(dropped, "no awaited token to drop in %s", from);
    ck_assert_int_eq(rnr_writer_close(w, err, sizeof err), 0);
    rnr_reader_close(r);
}

static void expect_failure(const char *const *args, int status, const char *want, const char *what)
{
    tu_output o;
    tu_rnr(&o, args);
    ck_assert_msg(o.status == status && strstr(o.err, want) != NULL,
                  "%s: exit %d (want %d), stderr:\n%.1500s", what, o.status, status, o.err);
    tu_output_free(&o);
}

START_TEST(replay_names_what_is_damaged)
{
    char *tmp = tu_tmpdir();
    const workload w = {"fileio", {guest("fileio")}};
    tu_output rec;
    /* A check at every chunk end: there is one past record 40 to change. */
    char *dir = record(tmp, "b", &w, (const char *[]){"--check-every", "chunk", NULL}, &rec);
    tu_output_free(&rec);
    char path[4096], saved[4096];

    /* A corrupt final log: a byte of a block changed. */
    snprintf(path, sizeof path, "%s/maxpar.log", dir);
    size_t n;
    uint8_t *bytes = tu_read_file(path, &n);
    bytes[n - 30] ^= 0x40;
    snprintf(saved, sizeof saved, "%s/maxpar.saved", dir);
    rename(path, saved);
    tu_write_file(path, bytes, n);
    free(bytes);
    expect_failure((const char *[]){"replay", "--quiet", dir, NULL}, 2, "not the recorded file",
                   "changed maxpar");
    tu_bundle_resign(dir, NULL, NULL);
    expect_failure((const char *[]){"replay", "--quiet", dir, NULL}, 2, "maxpar.log", "corrupt maxpar");
    rename(saved, path);
    tu_bundle_resign(dir, NULL, NULL);

    /* A final log the manifest names is gone: named. A bundle without the
     * format asked for: the message names the command that writes it. */
    snprintf(path, sizeof path, "%s/stitched.log", dir);
    snprintf(saved, sizeof saved, "%s/stitched.saved", dir);
    rename(path, saved);
    expect_failure((const char *[]){"replay", "--format", "stitched", dir, NULL}, 2,
                   "stitched.log: the manifest names it but it is missing", "stitched log gone");
    tu_bundle_resign(dir, NULL, NULL);
    expect_failure((const char *[]){"replay", "--format", "stitched", dir, NULL}, 2,
                   "rnr backend", "no stitched log");
    rename(saved, path);
    tu_bundle_resign(dir, NULL, NULL);

    /* A corrupt input log. */
    snprintf(path, sizeof path, "%s/input.log", dir);
    snprintf(saved, sizeof saved, "%s/input.saved", dir);
    bytes = tu_read_file(path, &n);
    bytes[n / 2] ^= 0x40;
    rename(path, saved);
    tu_write_file(path, bytes, n);
    free(bytes);
    tu_bundle_resign(dir, NULL, NULL);
    expect_failure((const char *[]){"replay", "--quiet", dir, NULL}, 2, "input.log", "corrupt input");

    /* A chunk check that does not match: the first differing chunk is named. */
    rewrite_log(saved, path, change_a_check);
    tu_bundle_resign(dir, NULL, NULL);
    expect_failure((const char *[]){"replay", "--quiet", dir, NULL}, 1,
                   "replay diverged at cpu", "changed check");
    {
        /* ... with its pc's function from the program's symbol table. */
        tu_output o;
        tu_rnr(&o, (const char *[]){"replay", "--quiet", dir, NULL});
        regex_t re;
        ck_assert_int_eq(regcomp(&re, "diverged at cpu [0-9]+ chunk [0-9]+ \\(thread [0-9]+, pc "
                                      "0x[0-9a-f]+ [A-Za-z_][A-Za-z0-9_.]*\\+0x[0-9a-f]+\\)",
                                 REG_EXTENDED | REG_NOSUB), 0);
        ck_assert_msg(regexec(&re, o.err, 0, NULL, 0) == 0, "no symbol in: %s", o.err);
        regfree(&re);
        tu_output_free(&o);
    }

    /* An input the guest reads, changed: the replay diverges. */
    rewrite_log(saved, path, change_a_result);
    tu_bundle_resign(dir, NULL, NULL);
    expect_failure((const char *[]){"replay", "--quiet", dir, NULL}, 1, "diverge", "changed input");
    rename(saved, path);
    tu_bundle_resign(dir, NULL, NULL);

    /* A token removed (threads on 4 CPUs): the chunk waiting for it can
     * never run, and the replay says so instead of hanging. */
    const workload mw = {"mutex", {0}};
    const char *four[] = {"-n", "4", NULL};
    char *mdir = record(tmp, "m", &mw, four, &rec);
    tu_output_free(&rec);
    snprintf(path, sizeof path, "%s/maxpar.log", mdir);
    snprintf(saved, sizeof saved, "%s/maxpar.saved", mdir);
    rename(path, saved);
    drop_an_awaited_token(saved, path);
    tu_bundle_resign(mdir, NULL, NULL);
    expect_failure((const char *[]){"replay", "-j", "2", "--quiet", mdir, NULL}, 1, "deadlock",
                   "token removed");
    free(mdir);

    /* The wrong program. */
    expect_failure((const char *[]){"replay", "--program", guest("racy"), dir, NULL}, 2,
                   "not the recorded program", "wrong program");

    /* A manifest changed by hand: its checksum says so. */
    snprintf(path, sizeof path, "%s/manifest", dir);
    bytes = tu_read_file(path, &n);
    char *text = strndup((char *)bytes, n);
    char *st = strstr(text, "status = complete");
    ck_assert_ptr_nonnull(st);
    memcpy(st, "status = failed  ", 17);
    tu_write_file(path, text, n);
    free(text);
    expect_failure((const char *[]){"replay", dir, NULL}, 2, "the manifest was changed or damaged",
                   "manifest changed");
    tu_write_file(path, bytes, n);
    free(bytes);
    /* An unfinished recording (its manifest says so). */
    tu_bundle_resign(dir, "status", "incomplete: the test says so");
    expect_failure((const char *[]){"replay", dir, NULL}, 2, "did not finish", "unfinished");
    free(dir);
    tu_rmtree(tmp);
    free(tmp);
}
END_TEST

/* The end of a replay checks each result against the manifest: a manifest
 * (re-signed, so that its checksum holds) claiming another final digest,
 * exit status, thread id or per-thread count fails the replay (exit 1),
 * naming what differs; the true manifest passes. */
START_TEST(replay_fails_when_the_manifest_claims_other_results)
{
    char *tmp = tu_tmpdir();
    const workload w = {"mutex", {0}};
    tu_output rec;
    char *dir = record(tmp, "b", &w, (const char *[]){"-n", "4", NULL}, &rec);
    replay_ok(dir, "maxpar", "2", &rec, "as recorded");
    char *digest = tu_manifest_value(dir, "final.digest"), *tid = tu_manifest_value(dir, "thread.1.tid");
    char *n0 = tu_manifest_value(dir, "thread.0.instructions"), *n1 = tu_manifest_value(dir, "thread.1.instructions");
    ck_assert(digest && tid && n0 && n1);
    char other[80], t2[32], a[32], b[32];
    snprintf(other, sizeof other, "%s", digest);
    other[10] = other[10] == '0' ? '1' : '0';
    snprintf(t2, sizeof t2, "%llu", strtoull(tid, NULL, 10) + 100);
    /* One instruction moved between two threads: the total still adds up. */
    snprintf(a, sizeof a, "%llu", strtoull(n0, NULL, 10) + 1);
    snprintf(b, sizeof b, "%llu", strtoull(n1, NULL, 10) - 1);
    /* Thread 0 recorded one instruction more, then one fewer (with the
     * total, which the schema checks): the replay names it and both counts. */
    char *total = tu_manifest_value(dir, "instructions"), *tid0 = tu_manifest_value(dir, "thread.0.tid");
    ck_assert(total && tid0);
    unsigned long long r0 = strtoull(n0, NULL, 10), tot = strtoull(total, NULL, 10);
    char more[32], fewer[32], tmore[32], tfewer[32], want_more[160], want_fewer[160];
    snprintf(more, sizeof more, "%llu", r0 + 1);
    snprintf(tmore, sizeof tmore, "%llu", tot + 1);
    snprintf(fewer, sizeof fewer, "%llu", r0 - 1);
    snprintf(tfewer, sizeof tfewer, "%llu", tot - 1);
    snprintf(want_more, sizeof want_more, "thread %s ran %llu instructions in the replay, %llu in the "
             "recording", tid0, r0, r0 + 1);
    snprintf(want_fewer, sizeof want_fewer, "thread %s ran %llu instructions in the replay, %llu in the "
             "recording", tid0, r0, r0 - 1);
    static const char *const formats2[] = {"maxpar", "stserial"};
    for (int k = 0; k < 6; k++) {
        if (k == 0)
            tu_bundle_resign(dir, "final.digest", other);
        else if (k == 1)
            tu_bundle_resign(dir, "exit-status", "3");
        else if (k == 2)
            tu_bundle_resign(dir, "thread.1.tid", t2);
        else if (k == 3) {
            tu_bundle_resign(dir, "thread.0.instructions", a);
            tu_bundle_resign(dir, "thread.1.instructions", b);
        } else {
            tu_bundle_resign(dir, "thread.0.instructions", k == 4 ? more : fewer);
            tu_bundle_resign(dir, "instructions", k == 4 ? tmore : tfewer);
        }
        const char *const want[] = {"the final state differs", "ends with status 0, the recording with 3",
                                    "has tid", "instructions in the replay", want_more, want_fewer};
        for (int f = 0; f < 2; f++)
            expect_failure((const char *[]){"replay", "--quiet", "--format", formats2[f], dir, NULL}, 1,
                           want[k], want[k]);
        tu_bundle_resign(dir, "final.digest", digest);
        tu_bundle_resign(dir, "exit-status", "0");
        tu_bundle_resign(dir, "thread.1.tid", tid);
        tu_bundle_resign(dir, "thread.0.instructions", n0);
        tu_bundle_resign(dir, "thread.1.instructions", n1);
        tu_bundle_resign(dir, "instructions", total);
    }
    free(total);
    free(tid0);
    replay_ok(dir, "serial", "1", &rec, "manifest restored");
    free(digest);
    free(tid);
    free(n0);
    free(n1);
    free(dir);
    tu_output_free(&rec);
    tu_rmtree(tmp);
    free(tmp);
}
END_TEST

/* A forger of one input record: the first record of TYPE (and number NR,
 * unless NR is -1) past index AFTER gets FIELD changed: 0 its number
 * (XOR 1), 1 its value (+ DELTA), 2 its address (XOR 1). What it was is
 * kept, to derive the expected message. */
static struct {
    uint32_t type;
    int64_t nr;
    uint64_t after;
    int field;
    int64_t delta;
    int done;
    rnr_input_record old;
} forge;

static int forge_one(rnr_input_record *r, uint64_t i)
{
    if (i == 0)
        forge.done = 0;
    if (forge.done || i <= forge.after || r->type != forge.type ||
        (forge.nr >= 0 && r->nr != (uint64_t)forge.nr))
        return 1;
    forge.old = *r;
    forge.old.data = NULL;
    if (forge.field == 0)
        r->nr ^= 1;
    else if (forge.field == 1)
        r->value += forge.delta;
    else
        r->addr ^= 1;
    forge.done = 1;
    return 1;
}

/* Rewrites bundle DIR's input log (kept in SAVED) with the forger set as
 * asked, re-signs the bundle and replays it: exit 1, stderr into O. */
static void replay_forged(const char *dir, const char *saved, uint32_t type, int64_t nr,
                          uint64_t after, int field, int64_t delta, tu_output *o)
{
    forge.type = type;
    forge.nr = nr;
    forge.after = after;
    forge.field = field;
    forge.delta = delta;
    rewrite_log(saved, tu_path(dir, "input.log"), forge_one);
    ck_assert_msg(forge.done, "no input record of type %u (nr %lld) to forge", type, (long long)nr);
    tu_bundle_resign(dir, NULL, NULL);
    tu_rnr(o, (const char *[]){"replay", "--quiet", "-j", "2", dir, NULL});
    ck_assert_msg(o->status == 1, "forged record of type %u: exit %d: %s", type, o->status, o->err);
}

/* A chunk's CHECK record gives the pc and the register hash where the
 * recording ended it: a CHECK forged to another pc, or to another hash,
 * fails the replay at that chunk, and the message gives the recorded
 * value as forged and the replay's as the log had it, the other part
 * equal on both sides: each of the two comparisons fires alone. */
START_TEST(replay_names_the_chunk_whose_check_differs)
{
    char *tmp = tu_tmpdir();
    const workload w = {"fileio", {guest("fileio")}};
    tu_output rec;
    char *dir = record(tmp, "b", &w, (const char *[]){"--check-every", "chunk", NULL}, &rec);
    char saved[4200];
    snprintf(saved, sizeof saved, "%s/input.saved", dir);
    ck_assert_int_eq(rename(tu_path(dir, "input.log"), saved), 0);
    for (int field = 1; field <= 2; field++) {
        tu_output o;
        replay_forged(dir, saved, RNR_IN_CHECK, -1, 40, field, 4, &o);
        unsigned long long rpc, rhash, ppc, phash;
        const char *at = strstr(o.err, "the recording ended this chunk at pc ");
        ck_assert_msg(at && sscanf(at, "the recording ended this chunk at pc 0x%llx with registers %llx, "
                                   "the replay at pc 0x%llx with registers %llx", &rpc, &rhash, &ppc,
                                   &phash) == 4, "%s", o.err);
        ck_assert_msg(strstr(o.err, "replay diverged at cpu") != NULL, "%s", o.err);
        /* CHECK records: value = pc, addr = register hash. */
        uint64_t pc = (uint64_t)forge.old.value, hash = forge.old.addr;
        ck_assert_uint_eq(ppc, pc);
        ck_assert_uint_eq(phash, hash);
        ck_assert_uint_eq(rpc, field == 1 ? pc + 4 : pc);
        ck_assert_uint_eq(rhash, field == 2 ? (hash ^ 1) : hash);
        tu_output_free(&o);
    }
    ck_assert_int_eq(rename(saved, tu_path(dir, "input.log")), 0);
    tu_bundle_resign(dir, NULL, NULL);
    replay_ok(dir, "maxpar", "2", &rec, "input log restored");
    tu_output_free(&rec);
    free(dir);
    tu_rmtree(tmp);
    free(tmp);
}
END_TEST

/* The instrets of thread TID's CHECK records in input log PATH, in
 * order, into W (at most CAP); returns how many; *all = every thread's. */
static size_t checks_of(const char *path, uint32_t tid, uint64_t *w, size_t cap, size_t *all)
{
    char err[RNR_ERR_MAX];
    rnr_reader *r = rnr_reader_open(path, err, sizeof err);
    ck_assert_msg(r != NULL, "%s", err);
    rnr_input_record c;
    size_t n = 0;
    *all = 0;
    while (rnr_reader_next_input(r, &c) == 1) {
        if (c.type != RNR_IN_CHECK)
            continue;
        ++*all;
        if (c.tid == tid && n < cap)
            w[n++] = c.nr;
    }
    rnr_reader_close(r);
    return n;
}

/* The first byte of the first MEM record of 1024 bytes or more (the
 * program's file as fileio reads it) changed. */
static int change_file_data(rnr_input_record *r, uint64_t i)
{
    static int done;
    if (i == 0)
        done = 0;
    if (r->type == RNR_IN_MEM && r->len >= 1024 && !done) {
        ((uint8_t *)r->data)[0] ^= 0xff;
        done = 1;
    }
    return 1;
}

/* Every CHECK record past index change_after gets another register hash. */
static uint64_t change_after;

static int change_later_checks(rnr_input_record *r, uint64_t i)
{
    if (r->type == RNR_IN_CHECK && i > change_after)
        r->addr ^= 1;
    return 1;
}

/* Sparse checks (rnr record --check-every N): the manifest says N; each
 * thread's CHECK records lie at least N instructions apart (the first at
 * least N from its start), far fewer than the chunks; every format
 * replays on 1 and 2 workers, verified. A CHECK forged to another hash
 * still fails the replay, which names the chunk where the check failed
 * and the span of the thread's instructions the divergence lies in: from
 * after a check of the thread that matched (one of its unchanged checks)
 * to a changed check's instret (a replay compares a check only where one
 * of its chunks ends there, so every check of the log's second half is
 * changed: by then each thread had checks compared). An input the guest
 * reads, changed, still makes the replay diverge. */
START_TEST(replay_locates_a_divergence_between_sparse_checks)
{
    enum { EVERY = 5000 };
    char *tmp = tu_tmpdir();
    const workload w = {"barrier", {"4", "60"}};
    tu_output rec;
    char *dir = record(tmp, "b", &w, (const char *[]){"-n", "4", "--check-every", "5000", NULL}, &rec);
    char *every = tu_manifest_value(dir, "check-every"), *chunks = tu_manifest_value(dir, "chunks");
    char *threads = tu_manifest_value(dir, "threads");
    ck_assert_str_eq(every, "5000");
    for (int f = 0; f < 4; f++)
        replay_ok(dir, formats[f], f % 2 ? "2" : "1", &rec, "sparse checks");
    char input[4200], saved[4200];
    snprintf(input, sizeof input, "%s/input.log", dir);
    static uint64_t at[1 << 16];
    size_t all = 0, with_checks = 0;
    for (unsigned long long k = 0; k < strtoull(threads, NULL, 10); k++) {
        char key[64];
        snprintf(key, sizeof key, "thread.%llu.tid", k);
        char *t = tu_manifest_value(dir, key);
        uint32_t tid = (uint32_t)strtoul(t, NULL, 10);
        free(t);
        size_t n = checks_of(input, tid, at, sizeof at / sizeof at[0], &all);
        for (size_t i = 0; i < n; i++)
            ck_assert_msg(at[i] - (i ? at[i - 1] : 0) >= EVERY, "thread %u: checks at %llu and %llu",
                          tid, (unsigned long long)(i ? at[i - 1] : 0), (unsigned long long)at[i]);
        with_checks += n > 0;
    }
    ck_assert_uint_eq(with_checks, strtoull(threads, NULL, 10));
    ck_assert_uint_gt(all, 4);
    ck_assert_msg(all * 4 < strtoull(chunks, NULL, 10), "%zu checks for %s chunks", all, chunks);

    snprintf(saved, sizeof saved, "%s/input.saved", dir);
    ck_assert_int_eq(rename(input, saved), 0);
    {
        char err[RNR_ERR_MAX];
        rnr_reader *r = rnr_reader_open(saved, err, sizeof err);
        ck_assert_msg(r != NULL, "%s", err);
        rnr_input_record c;
        uint64_t records = 0;
        while (rnr_reader_next_input(r, &c) == 1)
            records++;
        rnr_reader_close(r);
        change_after = records / 2;
    }
    rewrite_log(saved, input, change_later_checks);
    tu_bundle_resign(dir, NULL, NULL);
    tu_output o;
    tu_rnr(&o, (const char *[]){"replay", "--quiet", "-j", "2", dir, NULL});
    ck_assert_msg(o.status == 1, "changed checks: exit %d: %s", o.status, o.err);
    unsigned long long every_n, p = 0, from = 0, to;
    unsigned tid;
    const char *m = strstr(o.err, "; with checks every ");
    ck_assert_msg(strstr(o.err, "replay diverged at cpu") && m &&
                  sscanf(m, "; with checks every %llu instructions, thread %u matched its "
                         "previous check at instruction %llu: it diverged in its "
                         "instructions %llu to %llu", &every_n, &tid, &p, &from, &to) == 5,
                  "%s", o.err);
    ck_assert_uint_eq(every_n, EVERY);
    /* TO is one of the thread's changed checks, P one of its unchanged
     * ones. */
    char err[RNR_ERR_MAX];
    rnr_reader *r = rnr_reader_open(saved, err, sizeof err);
    ck_assert_msg(r != NULL, "%s", err);
    rnr_input_record c;
    int to_changed = 0, p_unchanged = 0;
    for (uint64_t i = 0; rnr_reader_next_input(r, &c) == 1; i++) {
        if (c.type != RNR_IN_CHECK || c.tid != tid)
            continue;
        to_changed |= c.nr == to && i > change_after;
        p_unchanged |= c.nr == p && i <= change_after;
    }
    rnr_reader_close(r);
    ck_assert_msg(to_changed && p_unchanged && from == p + 1, "%s", o.err);
    tu_output_free(&o);
    /* Every check changed: the one that fails is its thread's first
     * compared, and the span reaches back to the thread's start. */
    change_after = 0;
    rewrite_log(saved, input, change_later_checks);
    tu_bundle_resign(dir, NULL, NULL);
    tu_rnr(&o, (const char *[]){"replay", "--quiet", "-j", "2", dir, NULL});
    m = strstr(o.err, "; with checks every ");
    ck_assert_msg(o.status == 1 && m &&
                  sscanf(m, "; with checks every %llu instructions, this is thread %u's first check "
                         "compared: it diverged in its instructions up to %llu", &every_n, &tid, &to) == 3,
                  "%s", o.err);
    ck_assert_uint_eq(every_n, EVERY);
    size_t n = checks_of(saved, tid, at, sizeof at / sizeof at[0], &all);
    int is_check = 0;
    for (size_t k = 0; k < n; k++)
        is_check |= at[k] == to;
    ck_assert_msg(is_check, "%llu is no check of thread %u: %s", to, tid, o.err);
    tu_output_free(&o);

    ck_assert_int_eq(rename(saved, input), 0);
    tu_bundle_resign(dir, NULL, NULL);
    replay_ok(dir, "maxpar", "2", &rec, "input log restored");

    /* A changed input (the file's bytes fileio reads) with sparse checks:
     * the replay diverges. */
    const workload fw = {"fileio", {guest("fileio")}};
    tu_output frec;
    char *fdir = record(tmp, "f", &fw, (const char *[]){"--check-every", "5000", NULL}, &frec);
    tu_output_free(&frec);
    snprintf(input, sizeof input, "%s/input.log", fdir);
    snprintf(saved, sizeof saved, "%s/input.saved", fdir);
    ck_assert_int_eq(rename(input, saved), 0);
    rewrite_log(saved, input, change_file_data);
    tu_bundle_resign(fdir, NULL, NULL);
    expect_failure((const char *[]){"replay", "--quiet", fdir, NULL}, 1, "diverge", "changed input");
    free(fdir);
    free(every);
    free(chunks);
    free(threads);
    tu_output_free(&rec);
    free(dir);
    tu_rmtree(tmp);
    free(tmp);
}
END_TEST

/* The input log's records must be the ones the replay asks for: a system
 * call record forged to another call's number, an emulated call's result
 * forged (set_tid_address: the replay computes the thread id itself), a
 * csr read forged to another csr, each fails the replay naming the call or
 * the csr as the replay made it and as the log has it. */
START_TEST(replay_names_the_input_record_that_differs)
{
    char *tmp = tu_tmpdir();
    const workload w = {"fileio", {guest("fileio")}}, cw = {"counters", {"2", "mix"}};
    tu_output rec;
    char *dir = record(tmp, "b", &w, NULL, &rec);
    tu_output_free(&rec);
    char *cdir = record(tmp, "c", &cw, NULL, &rec);
    tu_output_free(&rec);
    char saved[4200], want[256], want2[256];
    snprintf(saved, sizeof saved, "%s/input.saved", dir);
    ck_assert_int_eq(rename(tu_path(dir, "input.log"), saved), 0);

    tu_output o;
    replay_forged(dir, saved, RNR_IN_SYSCALL, -1, 0, 0, 0, &o);
    snprintf(want, sizeof want, "makes system call %llu (", (unsigned long long)forge.old.nr);
    snprintf(want2, sizeof want2, "but the input log's next record is system call %llu",
             (unsigned long long)(forge.old.nr ^ 1));
    ck_assert_msg(strstr(o.err, want) && strstr(o.err, want2), "want '%s' and '%s': %s", want, want2, o.err);
    tu_output_free(&o);

    replay_forged(dir, saved, RNR_IN_SYSCALL, 96, 0, 1, 1, &o);
    snprintf(want, sizeof want, "set_tid_address (system call 96) gives %lld in the replay, %lld in the "
             "recording", (long long)forge.old.value, (long long)forge.old.value + 1);
    ck_assert_msg(strstr(o.err, want) != NULL, "want '%s': %s", want, o.err);
    tu_output_free(&o);
    ck_assert_int_eq(rename(saved, tu_path(dir, "input.log")), 0);
    tu_bundle_resign(dir, NULL, NULL);

    snprintf(saved, sizeof saved, "%s/input.saved", cdir);
    ck_assert_int_eq(rename(tu_path(cdir, "input.log"), saved), 0);
    replay_forged(cdir, saved, RNR_IN_CSR, -1, 0, 0, 0, &o);
    snprintf(want, sizeof want, "reads csr 0x%03llx but the input log's next record is not that read",
             (unsigned long long)forge.old.nr);
    ck_assert_msg(strstr(o.err, want) != NULL, "want '%s': %s", want, o.err);
    tu_output_free(&o);
    ck_assert_int_eq(rename(saved, tu_path(cdir, "input.log")), 0);
    tu_bundle_resign(cdir, NULL, NULL);
    expect_failure((const char *[]){"replay", "--quiet", dir, NULL}, 0, "", "fileio restored");
    expect_failure((const char *[]){"replay", "--quiet", cdir, NULL}, 0, "", "counters restored");
    free(dir);
    free(cdir);
    tu_rmtree(tmp);
    free(tmp);
}
END_TEST

/* The end of the replay counts the threads and requires an exit where
 * the recording exited: a manifest (re-signed) claiming one thread more
 * (one that ran nothing: the total still adds up), or an exit where the
 * recording deadlocked, fails the replay with that message. */
START_TEST(replay_fails_on_another_thread_count_or_ending)
{
    char *tmp = tu_tmpdir();
    const workload w = {"mutex", {0}};
    tu_output rec;
    char *dir = record(tmp, "b", &w, (const char *[]){"-n", "4", NULL}, &rec);
    tu_output_free(&rec);
    char *threads = tu_manifest_value(dir, "threads");
    ck_assert_ptr_nonnull(threads);
    unsigned long long n = strtoull(threads, NULL, 10);
    char key[64], val[32], want[128];
    snprintf(val, sizeof val, "%llu", n + 1);
    tu_bundle_resign(dir, "threads", val);
    snprintf(key, sizeof key, "thread.%llu.tid", n);
    tu_bundle_resign(dir, key, "999999");
    snprintf(key, sizeof key, "thread.%llu.instructions", n);
    tu_bundle_resign(dir, key, "0");
    snprintf(want, sizeof want, "the replay created %llu threads, the recording %llu", n, n + 1);
    expect_failure((const char *[]){"replay", "--quiet", dir, NULL}, 1, want, "one thread more");
    free(threads);

    /* deadlock: every thread blocks for good; its manifest says so. */
    char *ddir = strdup(tu_path(tmp, "d"));
    tu_record(&rec, ddir, "deadlock", (const char *[]){"--backend", "-n", "3", NULL}, NULL);
    ck_assert_msg(rec.status != 0 && rec.status != 2, "deadlock: record exit %d: %s", rec.status, rec.err);
    tu_output_free(&rec);
    char *end = tu_manifest_value(ddir, "end"), *st = tu_manifest_value(ddir, "exit-status");
    ck_assert_msg(end && strcmp(end, "deadlock") == 0, "end = %s", end ? end : "(none)");
    expect_failure((const char *[]){"replay", "--quiet", ddir, NULL}, 0, "", "deadlock as recorded");
    tu_bundle_resign(ddir, "end", "exited");
    snprintf(want, sizeof want, "the recording exited (status %s) but the replay's threads never did", st);
    expect_failure((const char *[]){"replay", "--quiet", ddir, NULL}, 1, want, "deadlock claimed an exit");
    free(end);
    free(st);
    free(ddir);
    free(dir);
    tu_rmtree(tmp);
    free(tmp);
}
END_TEST

/* The bundle's schema, behind the manifest's checksum (re-signed): a
 * thread count that does not add up to the total, one instruction more
 * or fewer, and a value of the wrong type each refuse the bundle (exit 2)
 * naming the key; the true manifest passes. */
START_TEST(replay_refuses_a_manifest_that_breaks_its_schema)
{
    char *tmp = tu_tmpdir();
    const workload w = {"mutex", {0}};
    tu_output rec;
    char *dir = record(tmp, "b", &w, (const char *[]){"-n", "2", NULL}, &rec);
    tu_output_free(&rec);
    char *n0 = tu_manifest_value(dir, "thread.0.instructions"), *total = tu_manifest_value(dir, "instructions");
    char *seed = tu_manifest_value(dir, "seed");
    ck_assert(n0 && total && seed);
    unsigned long long r0 = strtoull(n0, NULL, 10), tot = strtoull(total, NULL, 10);
    for (int d = -1; d <= 1; d += 2) {
        char v[32], want[160];
        snprintf(v, sizeof v, "%llu", r0 + (unsigned long long)(long long)d);
        tu_bundle_resign(dir, "thread.0.instructions", v);
        snprintf(want, sizeof want, "the threads' instructions add up to %llu, 'instructions' says %llu",
                 tot + (unsigned long long)(long long)d, tot);
        expect_failure((const char *[]){"replay", "--quiet", dir, NULL}, 2, want, want);
    }
    tu_bundle_resign(dir, "thread.0.instructions", n0);
    tu_bundle_resign(dir, "seed", "12x");
    expect_failure((const char *[]){"replay", "--quiet", dir, NULL}, 2, "'seed' is '12x', not",
                   "seed of the wrong type");
    tu_bundle_resign(dir, "seed", seed);
    expect_failure((const char *[]){"replay", "--quiet", dir, NULL}, 0, "", "manifest restored");
    free(n0);
    free(total);
    free(seed);
    free(dir);
    tu_rmtree(tmp);
    free(tmp);
}
END_TEST

/* A bundle of the previous log format version (tests/data/v3/bundle: logs
 * of version 3, without chunk durations) still replays in every format,
 * each verified with the recorded stdout; verify, stats and a new backend
 * run (which writes version-4 logs) accept it, and the logs rnr backend
 * writes replay too. */
START_TEST(replay_reads_a_bundle_of_the_previous_log_version)
{
    char *tmp = tu_tmpdir();
    char *dir = strdup(tu_path(tmp, "b"));
    ck_assert_int_eq(mkdir(dir, 0777), 0);
    static const char *const files[] = {"manifest", "program", "initial.log", "input.log", "maxpar.log",
                                        "stitched.log", "serial.log", "stserial.log", "stdout", "stderr"};
    char src[4096], dst[4096];
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        snprintf(src, sizeof src, "%s/v3/bundle/%s", tu_env("RNR_TEST_DATA"), files[i]);
        snprintf(dst, sizeof dst, "%s/%s", dir, files[i]);
        size_t n;
        uint8_t *bytes = tu_read_file(src, &n);
        tu_write_file(dst, bytes, n);
        free(bytes);
    }
    snprintf(dst, sizeof dst, "%s/maxpar.log", dir);
    tu_output d;
    tu_rnr(&d, (const char *[]){"dump", dst, NULL});
    ck_assert_msg(d.status == 0 && strstr(d.out, "format 3"), "dump: %d %.300s%s", d.status, d.out, d.err);
    tu_output_free(&d);
    tu_output rec = {0};
    snprintf(src, sizeof src, "%s/stdout", dir);
    rec.out = (char *)tu_read_file(src, &rec.out_len);
    ck_assert_uint_gt(rec.out_len, 0);
    for (int f = 0; f < 4; f++)
        replay_ok(dir, formats[f], f % 2 ? "2" : "1", &rec, "version 3");
    expect_failure((const char *[]){"verify", dir, NULL}, 0, "", "verify of version 3");
    expect_failure((const char *[]){"stats", dir, NULL}, 0, "", "stats of version 3");
    expect_failure((const char *[]){"backend", dir, NULL}, 0, "", "backend on version 3");
    tu_rnr(&d, (const char *[]){"dump", dst, NULL});
    ck_assert_msg(d.status == 0 && strstr(d.out, "format 4"), "dump after backend: %.300s", d.out);
    tu_output_free(&d);
    for (int f = 0; f < 4; f++)
        replay_ok(dir, formats[f], "2", &rec, "version 3, logs rewritten");
    free(rec.out);
    free(dir);
    tu_rmtree(tmp);
    free(tmp);
}
END_TEST

START_TEST(replay_rejects_bad_usage)
{
    expect_failure((const char *[]){"replay", NULL}, 2, "missing DIR", "no dir");
    expect_failure((const char *[]){"replay", "--format", "initial", "x", NULL}, 2, "--format",
                   "bad format");
    expect_failure((const char *[]){"replay", "-j", "0", "x", NULL}, 2, "-j", "zero workers");
    expect_failure((const char *[]){"replay", "/nonexistent-bundle", NULL}, 2, "nonexistent-bundle",
                   "no bundle");
}
END_TEST

TU_SUITE(replay)
{
    Suite *s = suite_create("replay");
    TCase *tc = tu_tcase(s, "more_workers", 120);
    tcase_add_test(tc, replay_on_four_and_eight_workers_from_every_format);
    tc = tu_tcase(s, "reproduces", 600);
    tcase_add_loop_test(tc, replay_reproduces_every_workload_from_every_format, 0,
                        (int)tu_threaded_count);
    tcase_add_test(tc, replay_orders_the_calls_that_move_the_standard_streams);
    tcase_add_test(tc, replay_of_many_recorded_cpus_on_two_workers);
    tcase_add_test(tc, replay_refuses_memory_where_the_recording_did);
    tcase_add_test(tc, replay_reproduces_endings_inside_a_system_call);
    tcase_add_test(tc, replay_reproduces_megabytes_of_output_from_several_threads);
    tcase_add_test(tc, replay_needs_neither_the_program_path_nor_the_input_files);
    tcase_add_test(tc, replay_reads_a_bundle_of_the_previous_log_version);
    tc = tu_tcase(s, "files", 120);
    tcase_add_test(tc, replay_reproduces_file_changes_and_lock_waits_from_every_format);
    tcase_add_test(tc, replay_reproduces_a_shared_file_mapping_from_every_format);
    tcase_add_test(tc, replay_reproduces_execve_from_every_format);
    tcase_add_test(tc, replay_reproduces_processes_from_every_format);
    tc = tu_tcase(s, "damage", 120);
    tcase_add_test(tc, replay_names_what_is_damaged);
    tcase_add_test(tc, replay_rejects_bad_usage);
    tcase_add_test(tc, replay_refuses_a_manifest_that_breaks_its_schema);
    /* Each check of the replay's verdict made the one that fires (the
     * cases tests/mutants.txt names). */
    tc = tu_tcase(s, "verdict", 300);
    tcase_add_test(tc, replay_fails_when_its_output_differs_from_the_recording);
    tcase_add_test(tc, replay_fails_when_the_manifest_claims_other_results);
    tcase_add_test(tc, replay_names_the_chunk_whose_check_differs);
    tcase_add_test(tc, replay_locates_a_divergence_between_sparse_checks);
    tcase_add_test(tc, replay_names_the_input_record_that_differs);
    tcase_add_test(tc, replay_fails_on_another_thread_count_or_ending);
    return s;
}
