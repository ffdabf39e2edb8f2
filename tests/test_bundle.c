/* tests/test_bundle.c: the bundle (formats/bundle.h) and the recording
 * session (recorder/session.h) at their edges: exclusive creation, a
 * rejected program, concurrent recorders, every manifest byte, file
 * digests, signals, limits, the guest's environment, a replay racing
 * `rnr backend`. Every recording is replayed and compared. */
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

#include "formats/bundle.h"
#include "formats/log.h"
#include "tests/testutil.h"

static const char *guest(const char *name) { return tu_path(tu_env("RNR_GUEST_DIR"), name); }

/* Every process a case forks ends by SIGALRM after this many seconds (an
 * alarm survives exec), so that a failed case leaves no recorder running. */
#define CHILD_SECONDS 600

/* Starts `rnr ARGS...` (ARGS NULL-terminated) with stdout on /dev/null and
 * stderr on ERR_FD (-1: /dev/null); returns its pid. */
static pid_t spawn_rnr(int err_fd, const char *const *args)
{
    const char *argv[40] = { tu_rnr_bin() };
    size_t n = 1;
    for (size_t i = 0; args[i] && n < 39; i++)
        argv[n++] = args[i];
    argv[n] = NULL;
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        alarm(CHILD_SECONDS);
        int null = open("/dev/null", O_WRONLY);
        dup2(null, 1);
        dup2(err_fd >= 0 ? err_fd : null, 2);
        execv(argv[0], (char *const *)argv);
        _exit(127);
    }
    return pid;
}

static void expect_status(const char *dir, const char *want)
{
    char *v = tu_manifest_value(dir, "status");
    ck_assert_msg(v && strcmp(v, want) == 0, "%s: status '%s', expected '%s'", dir, v ? v : "(none)",
                  want);
    free(v);
}

/* Replays DIR in FORMAT on 2 workers; it must verify. */
static void replays(const char *dir, const char *format)
{
    tu_output o;
    tu_rnr(&o, (const char *[]){ "replay", "-j", "2", "--format", format, dir, NULL });
    ck_assert_msg(o.status == 0 && strstr(o.err, "verified"), "replay %s %s: status %d: %s", dir,
                  format, o.status, o.err);
    tu_output_free(&o);
}

/* A small recording with every format; the guest's environment empty. */
static void record_small(const char *dir)
{
    tu_output o;
    int rc = tu_record(&o, dir, "racy", (const char *[]){ "-n", "4", "--backend", "--env-clear",
                                                         NULL }, NULL);
    ck_assert_msg(rc == 0, "record: %d: %s", rc, o.err);
    tu_output_free(&o);
}

START_TEST(bundle_refuses_a_non_empty_directory_and_keeps_its_files)
{
    char *tmp = tu_tmpdir();
    const char *dir = tu_path(tmp, "b");
    ck_assert_int_eq(mkdir(dir, 0777), 0);
    tu_write_file(tu_path(dir, "stdout"), "mine\n", 5);
    tu_output o;
    int rc = tu_record(&o, dir, "racy", NULL, NULL);
    ck_assert_msg(rc == 2 && strstr(o.err, "is not empty"), "status %d: %s", rc, o.err);
    tu_output_free(&o);
    size_t n;
    uint8_t *kept = tu_read_file(tu_path(dir, "stdout"), &n);
    ck_assert_uint_eq(n, 5);
    ck_assert_int_eq(memcmp(kept, "mine\n", 5), 0);
    free(kept);
    ck_assert_int_ne(access(tu_path(dir, "manifest"), F_OK), 0);
    /* A bundle already there: refused the same way. */
    char *b2 = strdup(tu_path(tmp, "b2"));
    record_small(b2);
    rc = tu_record(&o, b2, "racy", NULL, NULL);
    ck_assert_msg(rc == 2 && strstr(o.err, "already holds a bundle"), "status %d: %s", rc, o.err);
    tu_output_free(&o);
    replays(b2, "maxpar");
    free(b2);
    tu_rmtree(tmp);
    free(tmp);
}
END_TEST

START_TEST(bundle_rejected_program_leaves_no_directory)
{
    char *tmp = tu_tmpdir();
    static const char *const progs[] = { "/bin/true", "/nonexistent/prog", "/etc/hostname" };
    for (size_t i = 0; i < sizeof progs / sizeof progs[0]; i++) {
        const char *dir = tu_path(tmp, "b");
        tu_output o;
        tu_rnr(&o, (const char *[]){ "record", "--quiet", "-o", dir, "--", progs[i], NULL });
        ck_assert_msg(o.status == 2 && strstr(o.err, progs[i]), "%s: status %d: %s", progs[i],
                      o.status, o.err);
        tu_output_free(&o);
        ck_assert_msg(access(dir, F_OK) != 0, "%s: the bundle directory was created", progs[i]);
    }
    /* A bad option is found before the directory is made, too. */
    const char *dir = tu_path(tmp, "b");
    tu_output o;
    tu_rnr(&o, (const char *[]){ "record", "--quiet", "--max-log-bytes", "12Q", "-o", dir, "--",
                                 guest("racy"), NULL });
    ck_assert_msg(o.status == 2 && strstr(o.err, "--max-log-bytes"), "status %d: %s", o.status, o.err);
    tu_output_free(&o);
    ck_assert(access(dir, F_OK) != 0);
    tu_rmtree(tmp);
    free(tmp);
}
END_TEST

/* Four recorders of one DIR started together: exactly one proceeds. */
START_TEST(bundle_concurrent_recorders_exactly_one_wins)
{
    char *tmp = tu_tmpdir();
    /* Under valgrind (slow), the trial with an empty directory only. */
    for (int trial = tu_under_valgrind() ? 2 : 0; trial < 3; trial++) {
        char *dir = strdup(tu_path(tmp, trial == 0 ? "c0" : trial == 1 ? "c1" : "c2"));
        if (trial == 2)
            ck_assert_int_eq(mkdir(dir, 0777), 0);   /* an empty directory given */
        pid_t pids[4];
        for (int k = 0; k < 4; k++)
            pids[k] = spawn_rnr(-1, (const char *[]){ "record", "--quiet", "-n", "4", "--env-clear", "-o",
                                                      dir, "--", guest(k % 2 ? "racy" : "mutex"), NULL });
        int ok = 0, refused = 0;
        for (int k = 0; k < 4; k++) {
            int st;
            ck_assert_int_eq(waitpid(pids[k], &st, 0), pids[k]);
            ck_assert(WIFEXITED(st));
            if (WEXITSTATUS(st) == 0)
                ok++;
            else if (WEXITSTATUS(st) == 2)
                refused++;
        }
        ck_assert_msg(ok == 1 && refused == 3, "trial %d: %d succeeded, %d refused", trial, ok,
                      refused);
        expect_status(dir, "complete");
        tu_output o;
        tu_rnr(&o, (const char *[]){ "backend", dir, NULL });
        ck_assert_msg(o.status == 0, "%s", o.err);
        tu_output_free(&o);
        tu_rnr(&o, (const char *[]){ "verify", dir, NULL });
        ck_assert_msg(o.status == 0, "%s%s", o.out, o.err);
        tu_output_free(&o);
        replays(dir, "stitched");
        free(dir);
    }
    tu_rmtree(tmp);
    free(tmp);
}
END_TEST

/* Every single-byte change of a manifest (each offset, two values) is
 * refused by the bundle module; replay and verify, which open bundles
 * through it, exit 1 or 2 on a sample of them. */
START_TEST(bundle_every_manifest_byte_flip_is_refused)
{
    char *tmp = tu_tmpdir();
    char *dir = strdup(tu_path(tmp, "b"));
    record_small(dir);
    size_t n;
    uint8_t *orig = tu_read_file(tu_path(dir, "manifest"), &n);
    ck_assert_uint_gt(n, 500);
    char err[1024];
    rnr_bundle *b = rnr_bundle_open(dir, RNR_BUNDLE_FINISHED, err, sizeof err);
    ck_assert_msg(b != NULL, "%s", err);
    rnr_bundle_close(b);
    static const uint8_t flips[] = { 0x01, 0x20 };
    size_t accepted = 0, tried = 0;
    for (size_t at = 0; at < n; at++) {
        for (size_t f = 0; f < sizeof flips; f++) {
            orig[at] ^= flips[f];
            tu_write_file(tu_path(dir, "manifest"), orig, n);
            b = rnr_bundle_open(dir, RNR_BUNDLE_FINISHED, err, sizeof err);
            tried++;
            if (b) {
                accepted++;
                fprintf(stderr, "manifest byte %zu ^ 0x%02x accepted\n", at, flips[f]);
                rnr_bundle_close(b);
            }
            if (at % (tu_under_valgrind() ? 997 : 211) == 17 && f == 0) {
                tu_output o;
                tu_rnr(&o, (const char *[]){ "replay", "-j", "1", dir, NULL });
                ck_assert_msg(o.status == 1 || o.status == 2, "replay, byte %zu: status %d", at,
                              o.status);
                tu_output_free(&o);
                tu_rnr(&o, (const char *[]){ "verify", dir, NULL });
                ck_assert_msg(o.status == 1 || o.status == 2, "verify, byte %zu: status %d", at,
                              o.status);
                tu_output_free(&o);
            }
            orig[at] ^= flips[f];
        }
    }
    ck_assert_msg(accepted == 0, "%zu of %zu changed manifests accepted", accepted, tried);
    /* The original again: it replays. */
    tu_write_file(tu_path(dir, "manifest"), orig, n);
    replays(dir, "serial");
    free(orig);
    free(dir);
    tu_rmtree(tmp);
    free(tmp);
}
END_TEST

/* A changed or missing file the manifest names is named with both whole
 * digests; nothing is skipped. */
START_TEST(bundle_files_are_checked_against_their_digests)
{
    char *tmp = tu_tmpdir();
    char *dir = strdup(tu_path(tmp, "b"));
    tu_output o;
    int rc = tu_record(&o, dir, "racy", (const char *[]){ "-n", "4", "--backend", "--truth",
                                                         "--env-clear", NULL }, NULL);
    ck_assert_msg(rc == 0, "%s", o.err);
    tu_output_free(&o);
    static const char *const files[] = { "stdout", "input.log", "maxpar.log", "program" };
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        size_t n;
        uint8_t *d = tu_read_file(tu_path(dir, files[i]), &n);
        ck_assert_uint_gt(n, 0);
        d[n / 2] ^= 0x40;
        tu_write_file(tu_path(dir, files[i]), d, n);
        tu_rnr(&o, (const char *[]){ "replay", "--format", "maxpar", dir, NULL });
        ck_assert_msg(o.status == 2 && strstr(o.err, files[i]) && strstr(o.err, "SHA-256") &&
                          strstr(o.err, "not the recorded file"),
                      "%s changed: status %d: %s", files[i], o.status, o.err);
        /* Whole digests: two 64-digit hex strings in the message. */
        const char *first = strstr(o.err, "SHA-256 ");
        ck_assert(first && strspn(first + 8, "0123456789abcdef") == 64);
        tu_output_free(&o);
        tu_rnr(&o, (const char *[]){ "info", dir, NULL });
        ck_assert_msg(o.status == 1 && strstr(o.out, "DIFFERS"), "info: %d %s", o.status, o.out);
        tu_output_free(&o);
        d[n / 2] ^= 0x40;
        tu_write_file(tu_path(dir, files[i]), d, n);
        free(d);
    }
    replays(dir, "maxpar");
    /* truth.deps deleted: verify no longer passes silently without it. */
    ck_assert_int_eq(unlink(tu_path(dir, "truth.deps")), 0);
    tu_rnr(&o, (const char *[]){ "verify", dir, NULL });
    ck_assert_msg(o.status == 2 && strstr(o.err, "truth.deps"), "status %d: %s", o.status, o.err);
    tu_output_free(&o);
    tu_rmtree(tmp);
    free(tmp);
    free(dir);
}
END_TEST

static pid_t spawn_record(const char *dir, const char *const *extra)
{
    const char *argv[32] = { "record", "--quiet", "-n", "4", "--env-clear" };
    size_t n = 5;
    for (size_t i = 0; extra && extra[i]; i++)
        argv[n++] = extra[i];
    argv[n++] = "-o";
    argv[n++] = dir;
    argv[n++] = "--";
    argv[n++] = guest("endless");
    argv[n] = NULL;
    return spawn_rnr(-1, argv);
}

static void wait_for_initial(const char *dir, pid_t pid, long n)
{
    char path[4096];
    tu_wait_part(dir, "initial.log", (long)pid, n, path, sizeof path);
}

/* SIGINT, SIGTERM and SIGHUP each finish a replayable bundle. */
START_TEST(bundle_signals_finish_a_replayable_bundle)
{
    static const int sigs[] = { SIGTERM, SIGHUP, SIGINT };
    static const char *const names[] = { "SIGTERM", "SIGHUP", "SIGINT" };
    char *tmp = tu_tmpdir();
    for (size_t i = 0; i < 3; i++) {
        char *dir = strdup(tu_path(tmp, names[i]));
        pid_t pid = spawn_record(dir, (const char *[]){ "--backend", NULL });
        wait_for_initial(dir, pid, 20000);
        kill(pid, sigs[i]);

        int st;
        ck_assert_int_eq(waitpid(pid, &st, 0), pid);
        ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 128 + sigs[i], "%s: status 0x%x", names[i],
                      st);
        char want[64];
        snprintf(want, sizeof want, "interrupted: %s", names[i]);
        expect_status(dir, want);
        replays(dir, "maxpar");
        replays(dir, "stserial");
        free(dir);
    }
    tu_rmtree(tmp);
    free(tmp);
}
END_TEST

/* While the bundle is being finished, a signal is answered with a line
 * saying what is being finished, and another abandons the bundle. The
 * finishing of a longer recording with the backend takes long enough for
 * a signal every 2 ms to land in it; a run that ends first is retried
 * with a longer recording. */
START_TEST(bundle_signals_while_finishing_say_so_then_abandon)
{
    /* Under valgrind the recording that makes the finishing long enough
     * takes minutes; the release, ASan and UBSan runs check this. */
    if (tu_under_valgrind())
        return;
    char *tmp = tu_tmpdir();
    int done = 0;
    for (int attempt = 0; attempt < 3 && !done; attempt++) {
        char name[32];
        snprintf(name, sizeof name, "b%d", attempt);
        char *dir = strdup(tu_path(tmp, name));
        int errpipe[2];
        ck_assert_int_eq(pipe(errpipe), 0);
        fcntl(errpipe[0], F_SETFD, FD_CLOEXEC);
        pid_t pid = spawn_rnr(errpipe[1], (const char *[]){ "record", "--quiet", "-n", "8", "--env-clear",
                                                             "--backend", "-o", dir, "--", guest("endless"),
                                                             NULL });
        close(errpipe[1]);
        fcntl(errpipe[0], F_SETFL, O_NONBLOCK);
        wait_for_initial(dir, pid, 400000L << attempt);
        kill(pid, SIGTERM);
        char err[4096] = "";
        size_t got = 0;
        int st = 0, exited = 0, said = 0;
        for (int i = 0; i < 30000 && !exited; i++) {
            ssize_t k = read(errpipe[0], err + got, sizeof err - 1 - got);
            if (k > 0) {
                got += (size_t)k;
                err[got] = 0;
            }
            if (!said && strstr(err, "finishing the bundle")) {
                said = 1;
                kill(pid, SIGTERM);   /* the one that abandons */
            } else if (!said) {
                kill(pid, SIGTERM);
            }
            exited = waitpid(pid, &st, WNOHANG) == pid;
            struct timespec ts = { 0, 2 * 1000 * 1000 };
            nanosleep(&ts, NULL);
        }
        if (!exited)
            ck_assert_int_eq(waitpid(pid, &st, 0), pid);
        close(errpipe[0]);
        ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 128 + SIGTERM, "status 0x%x: %s", st, err);
        char *status = tu_manifest_value(dir, "status");
        if (strstr(err, "finishing the bundle")) {
            ck_assert_msg(strstr(err, dir) && strstr(err, "another signal abandons it"), "%s", err);
            ck_assert_msg(status && strncmp(status, "abandoned", 9) == 0, "status '%s'", status);
            tu_output o;
            tu_rnr(&o, (const char *[]){ "replay", dir, NULL });
            ck_assert_msg(o.status == 2 && strstr(o.err, "abandoned"), "%d: %s", o.status, o.err);
            tu_output_free(&o);
            done = 1;
        } else {
            /* Finished before a signal landed in the finishing: whole. */
            ck_assert_msg(status && strcmp(status, "interrupted: SIGTERM") == 0, "status '%s'",
                          status);
            replays(dir, "maxpar");
        }
        free(status);
        free(dir);
    }
    ck_assert_msg(done, "no signal landed while the bundle was finished in 3 attempts");
    tu_rmtree(tmp);
    free(tmp);
}
END_TEST

/* A recording killed outright stays `recording`: refused with a reason. */
START_TEST(bundle_killed_recording_is_refused_with_its_reason)
{
    char *tmp = tu_tmpdir();
    char *dir = strdup(tu_path(tmp, "b"));
    pid_t pid = spawn_record(dir, NULL);
    wait_for_initial(dir, pid, 20000);
    tu_output o;
    tu_rnr(&o, (const char *[]){ "replay", dir, NULL });
    ck_assert_msg(o.status == 2 && strstr(o.err, "is being recorded"), "%d: %s", o.status, o.err);
    tu_output_free(&o);
    kill(pid, SIGKILL);
    int st;
    ck_assert_int_eq(waitpid(pid, &st, 0), pid);
    expect_status(dir, "recording");
    static const char *const cmds[] = { "replay", "backend", "verify", "stats" };
    for (size_t i = 0; i < 4; i++) {
        tu_rnr(&o, (const char *[]){ cmds[i], dir, NULL });
        ck_assert_msg(o.status == 2 && strstr(o.err, "never finished") && strstr(o.err, "gone"),
                      "%s: %d: %s", cmds[i], o.status, o.err);
        tu_output_free(&o);
    }
    /* The complete blocks of the temporary initial log are a prefix. */
    char part[4096];
    snprintf(part, sizeof part, "%s/.initial.log.%ld.part", dir, (long)pid);
    tu_rnr(&o, (const char *[]){ "dump", part, NULL });
    ck_assert_msg(o.status == 0 && tu_count_lines(o.out) > 100, "%d: %s", o.status, o.err);
    tu_output_free(&o);
    tu_rnr(&o, (const char *[]){ "info", dir, NULL });
    ck_assert_msg(o.status == 0 && strstr(o.out, "recording"), "%d: %s", o.status, o.err);
    tu_output_free(&o);
    tu_rmtree(tmp);
    free(tmp);
    free(dir);
}
END_TEST

/* Each limit ends the recording as interrupted, naming it; it replays. */
START_TEST(bundle_limits_end_the_recording_interrupted)
{
    static const struct {
        const char *opt, *value, *status;
        int exit;
    } limits[] = {
        { "--max-instructions", "300000", "interrupted: max-instructions 300000", 128 + SIGXCPU },
        { "--max-log-bytes", "64K", "interrupted: max-log-bytes 65536", 128 + SIGXFSZ },
        { "--max-seconds", "0.5", "interrupted: max-seconds 0.5", 128 + SIGXCPU },
    };
    char *tmp = tu_tmpdir();
    for (size_t i = 0; i < 3; i++) {
        char *dir = strdup(tu_path(tmp, limits[i].opt + 2));
        tu_output o;
        int rc = tu_record(&o, dir, "endless", (const char *[]){ "-n", "2", "--env-clear",
                                                                limits[i].opt, limits[i].value,
                                                                "--backend", NULL }, NULL);
        ck_assert_msg(rc == limits[i].exit, "%s: status %d: %s", limits[i].opt, rc, o.err);
        tu_output_free(&o);
        expect_status(dir, limits[i].status);
        char *insns = tu_manifest_value(dir, "instructions");
        ck_assert_ptr_nonnull(insns);
        if (i == 0)
            ck_assert_msg(strtoull(insns, NULL, 10) >= 300000 && strtoull(insns, NULL, 10) < 3000000,
                          "%s instructions", insns);
        free(insns);
        replays(dir, "stitched");
        free(dir);
    }
    tu_rmtree(tmp);
    free(tmp);
}
END_TEST

/* --env-clear, --env and --unset choose the guest's environment; the
 * bundle keeps it and the replay reproduces it. */
START_TEST(bundle_guest_environment_is_chosen_and_replayed)
{
    char *tmp = tu_tmpdir();
    char *dir = strdup(tu_path(tmp, "a")), *dir2 = strdup(tu_path(tmp, "c"));
    tu_output o;
    tu_run((const char *[]){ "/usr/bin/env", "RNRTEST_OUTSIDE=1", "RNRTEST_DROP=2", tu_rnr_bin(),
                             "record", "--quiet", "--env-clear", "--env", "RNRTEST_A=x=y",
                             "--env", "RNRTEST_B=2", "--unset", "RNRTEST_B", "-o", dir, "--",
                             guest("argenv"), NULL },
           NULL, &o);
    ck_assert_msg(o.status == 0, "%s", o.err);
    ck_assert_msg(strstr(o.out, "env 0 'RNRTEST_A=x=y'") && !strstr(o.out, "env 1") &&
                      !strstr(o.out, "OUTSIDE"),
                  "%s", o.out);
    tu_output_free(&o);
    char *envc = tu_manifest_value(dir, "envc");
    ck_assert_str_eq(envc, "1");
    free(envc);
    tu_run((const char *[]){ "/usr/bin/env", "RNRTEST_OUTSIDE=1", "RNRTEST_DROP=2", tu_rnr_bin(),
                             "record", "--quiet", "--unset", "RNRTEST_DROP", "-o", dir2, "--",
                             guest("argenv"), NULL },
           NULL, &o);
    ck_assert_msg(o.status == 0 && strstr(o.out, "RNRTEST_OUTSIDE=1") && !strstr(o.out, "DROP"),
                  "%s", o.out);
    tu_output_free(&o);
    for (int k = 0; k < 2; k++) {
        const char *d = k ? dir2 : dir;
        tu_rnr(&o, (const char *[]){ "backend", d, NULL });
        ck_assert_msg(o.status == 0, "%s", o.err);
        tu_output_free(&o);
        replays(d, "maxpar");
    }
    tu_rnr(&o, (const char *[]){ "record", "--env", "=x", "-o", tu_path(tmp, "bad"), "--",
                                 guest("argenv"), NULL });
    ck_assert_msg(o.status == 2 && strstr(o.err, "NAME=VALUE"), "%s", o.err);
    tu_output_free(&o);
    tu_rmtree(tmp);
    free(tmp);
    free(dir);
    free(dir2);
}
END_TEST

/* `rnr backend` rewriting the logs (with another compression, so other
 * bytes) while replays run: each replay sees old or new logs, never a mix. */
START_TEST(bundle_replay_racing_backend_sees_no_damage)
{
    char *tmp = tu_tmpdir();
    char *dir = strdup(tu_path(tmp, "b"));
    record_small(dir);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        /* One backend after another, each a child of this one. */
        alarm(CHILD_SECONDS);
        for (int k = 0; k < (tu_under_valgrind() ? 4 : 12); k++) {
            pid_t c = spawn_rnr(-1, (const char *[]){ "backend", "--compress", k % 2 ? "6" : "0", dir,
                                                      NULL });
            int st;
            if (waitpid(c, &st, 0) != c || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
                _exit(1);
        }
        _exit(0);
    }
    int replays_done = 0, st;
    while (waitpid(pid, &st, WNOHANG) == 0) {
        tu_output o;
        tu_rnr(&o, (const char *[]){ "replay", "-j", "2", "--format", replays_done % 2 ? "stitched"
                                                                                    : "serial",
                                     dir, NULL });
        ck_assert_msg(o.status == 0, "replay %d during rnr backend: status %d: %s", replays_done,
                      o.status, o.err);
        tu_output_free(&o);
        replays_done++;
    }
    ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "rnr backend failed: 0x%x", st);
    ck_assert_int_gt(replays_done, 0);
    replays(dir, "maxpar");
    tu_rmtree(tmp);
    free(tmp);
    free(dir);
}
END_TEST

TU_SUITE(bundle)
{
    Suite *s = suite_create("bundle");
    TCase *tc = tu_tcase(s, "bundle", 120);
    tcase_add_test(tc, bundle_refuses_a_non_empty_directory_and_keeps_its_files);
    tcase_add_test(tc, bundle_rejected_program_leaves_no_directory);
    tcase_add_test(tc, bundle_concurrent_recorders_exactly_one_wins);
    tcase_add_test(tc, bundle_every_manifest_byte_flip_is_refused);
    tcase_add_test(tc, bundle_files_are_checked_against_their_digests);
    tcase_add_test(tc, bundle_signals_finish_a_replayable_bundle);
    tcase_add_test(tc, bundle_signals_while_finishing_say_so_then_abandon);
    tcase_add_test(tc, bundle_killed_recording_is_refused_with_its_reason);
    tcase_add_test(tc, bundle_limits_end_the_recording_interrupted);
    tcase_add_test(tc, bundle_guest_environment_is_chosen_and_replayed);
    tcase_add_test(tc, bundle_replay_racing_backend_sees_no_damage);
    return s;
}
