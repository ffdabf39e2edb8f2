/* tests/test_newuser.c: what a new user meets first: recordings without
 * -o in the directory of bundles and the 'latest' link, rnr ls, messages
 * that name the fix for a missing program or bundle, --exit-code, syscall
 * names in rnr dump, rnr dot's range and size limit. Every recording is
 * replayed and compared (replay exits 0 only when verified). */
#include <check.h>
#include <fcntl.h>
#include <limits.h>
#include <regex.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/testutil.h"

#define PYTHON "/usr/bin/python3"
#define CHILD_SECONDS 600

static const char *guest(const char *name) { return tu_path(tu_env("RNR_GUEST_DIR"), name); }

/* rnr ARGS must exit WANT; returns its output (free with tu_output_free). */
static void expect(tu_output *o, int want, const char *const *args)
{
    tu_rnr(o, args);
    ck_assert_msg(o->status == want, "rnr %s %s exited %d, not %d:\n%s%s", args[0],
                  args[1] ? args[1] : "", o->status, want, o->out, o->err);
}

static void expect_ok(const char *const *args)
{
    tu_output o;
    expect(&o, 0, args);
    tu_output_free(&o);
}

/* rnr ARGS exits WANT and its stderr holds TEXT. */
static void expect_err(int want, const char *text, const char *const *args)
{
    tu_output o;
    expect(&o, want, args);
    ck_assert_msg(strstr(o.err, text), "rnr %s: '%s' not in:\n%s", args[0], text, o.err);
    tu_output_free(&o);
}

/* The target of symbolic link PATH ("" if it is none). */
static char *link_target(const char *path)
{
    static char t[PATH_MAX];
    ssize_t n = readlink(path, t, sizeof t - 1);
    t[n < 0 ? 0 : n] = '\0';
    return t;
}

/* Records racy on 2 CPUs with the backend, without -o. */
static void record_racy_default(void)
{
    expect_ok((const char *[]){ "record", "-n", "2", "--backend", "--quiet", "--",
                                guest("racy"), "2", "200", NULL });
}

START_TEST(newuser_record_without_o_goes_to_the_bundle_dir_and_latest_follows)
{
    char *tmp = tu_tmpdir();
    char *home = strdup(tu_path(tmp, "home"));
    ck_assert_int_eq(setenv("RNR_BUNDLE_DIR", home, 1), 0);
    expect_err(2, "no recording in", (const char *[]){ "info", "latest", NULL });
    record_racy_default();
    ck_assert_str_eq(link_target(tu_path(home, "latest")), "racy-1");
    record_racy_default();
    ck_assert_str_eq(link_target(tu_path(home, "latest")), "racy-2");
    struct stat st;
    ck_assert_int_eq(stat(tu_path(home, "racy-1/manifest"), &st), 0);
    /* 'latest' is the second recording for every command that reads one. */
    tu_output o;
    expect(&o, 0, (const char *[]){ "replay", "-j", "2", "latest", NULL });
    ck_assert_msg(strstr(o.err, "racy-2: verified"), "%s", o.err);
    tu_output_free(&o);
    expect(&o, 0, (const char *[]){ "info", "latest", NULL });
    ck_assert_msg(strstr(o.out, "racy-2") && strstr(o.out, "complete"), "%s", o.out);
    tu_output_free(&o);
    expect(&o, 0, (const char *[]){ "stats", "latest", NULL });
    ck_assert_msg(strstr(o.out, "racy-2") && strstr(o.out, "maxpar"), "%s", o.out);
    tu_output_free(&o);
    expect_ok((const char *[]){ "verify", "latest", NULL });
    /* A message after the bundle is closed still names it. */
    expect_err(2, "racy-2: no ground truth", (const char *[]){ "verify", "latest", "initial", NULL });
    expect_ok((const char *[]){ "backend", "latest", NULL });
    /* Without RNR_BUNDLE_DIR: ./rnr-bundles. */
    char cwd[PATH_MAX];
    ck_assert_ptr_nonnull(getcwd(cwd, sizeof cwd));
    ck_assert_int_eq(unsetenv("RNR_BUNDLE_DIR"), 0);
    ck_assert_int_eq(chdir(tmp), 0);
    record_racy_default();
    ck_assert_str_eq(link_target("rnr-bundles/latest"), "racy-1");
    expect_ok((const char *[]){ "replay", "latest", NULL });
    ck_assert_int_eq(chdir(cwd), 0);
    tu_rmtree(tmp);
    free(home);
    free(tmp);
}
END_TEST

/* Three recorders without -o started together: each gets its own N, and
 * every bundle replays and verifies. */
START_TEST(newuser_concurrent_recorders_without_o_get_their_own_number)
{
    char *tmp = tu_tmpdir();
    char *home = strdup(tu_path(tmp, "home"));
    ck_assert_int_eq(setenv("RNR_BUNDLE_DIR", home, 1), 0);
    enum { N = 3 };
    pid_t pids[N];
    for (int k = 0; k < N; k++) {
        pids[k] = fork();
        ck_assert_int_ge(pids[k], 0);
        if (pids[k] == 0) {
            alarm(CHILD_SECONDS);
            int null = open("/dev/null", O_WRONLY);
            dup2(null, 1);
            dup2(null, 2);
            execl(tu_rnr_bin(), tu_rnr_bin(), "record", "--quiet", "-n", "2", "--backend", "--",
                  guest("racy"), "2", "200", (char *)NULL);
            _exit(127);
        }
    }
    for (int k = 0; k < N; k++) {
        int st;
        ck_assert_int_eq(waitpid(pids[k], &st, 0), pids[k]);
        ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "recorder %d: status %d", k, st);
    }
    for (int k = 1; k <= N; k++) {
        char name[32];
        snprintf(name, sizeof name, "racy-%d", k);
        const char *b = tu_path(home, name);
        expect_ok((const char *[]){ "verify", b, NULL });
        expect_ok((const char *[]){ "replay", "-j", "2", b, NULL });
    }
    const char *l = link_target(tu_path(home, "latest"));
    ck_assert_msg(strncmp(l, "racy-", 5) == 0 && l[5] >= '1' && l[5] <= '0' + N && !l[6],
                  "latest -> '%s'", l);
    unsetenv("RNR_BUNDLE_DIR");
    tu_rmtree(tmp);
    free(home);
    free(tmp);
}
END_TEST

/* --no-pack keeps the program's absolute path: the bundle replays from
 * another directory although it was recorded with a relative one. A
 * program gone: the message names --program PATH, which then works. */
START_TEST(newuser_missing_program_messages_name_the_fix)
{
    char *tmp = tu_tmpdir();
    char cwd[PATH_MAX];
    ck_assert_ptr_nonnull(getcwd(cwd, sizeof cwd));
    ck_assert_int_eq(mkdir(tu_path(tmp, "src"), 0777), 0);
    size_t n;
    uint8_t *prog = tu_read_file(guest("racy"), &n);
    const char *copy = tu_path(tmp, "src/racy"), *spare = tu_path(tmp, "spare");
    tu_write_file(copy, prog, n);
    tu_write_file(spare, prog, n);
    free(prog);
    ck_assert_int_eq(chmod(copy, 0755), 0);
    ck_assert_int_eq(chdir(tmp), 0);
    expect_ok((const char *[]){ "record", "-n", "2", "--backend", "--quiet", "--no-pack", "-o",
                                "np", "--", "src/racy", "2", "200", NULL });
    expect_ok((const char *[]){ "record", "-n", "2", "--backend", "--quiet", "-o", "pk", "--",
                                "src/racy", "2", "200", NULL });
    ck_assert_int_eq(chdir("/"), 0);
    const char *np = tu_path(tmp, "np"), *pk = tu_path(tmp, "pk");
    expect_ok((const char *[]){ "replay", np, NULL });
    ck_assert_int_eq(unlink(copy), 0);
    expect_err(2, "--program PATH", (const char *[]){ "replay", np, NULL });
    expect_ok((const char *[]){ "replay", "--program", spare, np, NULL });
    ck_assert_int_eq(unlink(tu_path(pk, "program")), 0);
    expect_err(2, "--program PATH", (const char *[]){ "replay", pk, NULL });
    expect_ok((const char *[]){ "replay", "--program", spare, pk, NULL });
    /* A directory that does not exist is named as such, not its manifest. */
    tu_output o;
    expect(&o, 2, (const char *[]){ "replay", tu_path(tmp, "nosuchdir"), NULL });
    ck_assert_msg(strstr(o.err, "nosuchdir: no such bundle directory") && !strstr(o.err, "manifest"),
                  "%s", o.err);
    tu_output_free(&o);
    expect(&o, 2, (const char *[]){ "info", tu_path(tmp, "nosuchdir"), NULL });
    ck_assert_msg(!strstr(o.err, "manifest"), "%s", o.err);
    tu_output_free(&o);
    ck_assert_int_eq(chdir(cwd), 0);
    tu_rmtree(tmp);
    free(tmp);
}
END_TEST

/* A guest exiting 3: --exit-code guest (the default) gives 3, --exit-code
 * rnr gives 0 and still tells the guest's status. */
START_TEST(newuser_exit_code_modes_of_run_and_record)
{
    char *tmp = tu_tmpdir();
    const char *argenv = guest("argenv");
    const char *g = tu_path(tmp, "g"), *r = tu_path(tmp, "r");
    tu_output o;
    expect(&o, 3, (const char *[]){ "run", "--env", "RNRTEST_EXIT=3", "--", argenv, NULL });
    tu_output_free(&o);
    expect(&o, 3, (const char *[]){ "run", "--exit-code", "guest", "--env", "RNRTEST_EXIT=3", "--",
                                    argenv, NULL });
    tu_output_free(&o);
    expect(&o, 0, (const char *[]){ "run", "--exit-code=rnr", "--env", "RNRTEST_EXIT=3", "--",
                                    argenv, NULL });
    ck_assert_msg(strstr(o.err, "guest exit status 3"), "%s", o.err);
    tu_output_free(&o);
    expect(&o, 3, (const char *[]){ "record", "--backend", "--env", "RNRTEST_EXIT=3", "-o", g, "--",
                                    argenv, NULL });
    ck_assert_msg(strstr(o.err, "guest exit status 3"), "%s", o.err);
    tu_output_free(&o);
    expect(&o, 0, (const char *[]){ "record", "--exit-code", "rnr", "--backend", "--env",
                                    "RNRTEST_EXIT=3", "-o", r, "--", argenv, NULL });
    ck_assert_msg(strstr(o.err, "guest exit status 3"), "%s", o.err);
    tu_output_free(&o);
    char *v = tu_manifest_value(r, "exit-status");
    ck_assert_str_eq(v, "3");
    free(v);
    expect_ok((const char *[]){ "replay", g, NULL });
    expect_ok((const char *[]){ "replay", r, NULL });
    expect_err(2, "--exit-code", (const char *[]){ "run", "--exit-code", "zero", "--", argenv, NULL });
    expect_err(2, "--exit-code", (const char *[]){ "record", "--exit-code", "zero", "-o",
                                                   tu_path(tmp, "x"), "--", argenv, NULL });
    tu_rmtree(tmp);
    free(tmp);
}
END_TEST

/* rnr ls lists what a directory of bundles holds: status, program, CPUs,
 * instructions, exit status, the latest mark; an entry that is no bundle
 * or a damaged one gets its own line; the JSON parses. */
START_TEST(newuser_ls_lists_bundles_status_and_exit_code)
{
    char *tmp = tu_tmpdir();
    char *home = strdup(tu_path(tmp, "home"));
    ck_assert_int_eq(setenv("RNR_BUNDLE_DIR", home, 1), 0);
    tu_output o;
    expect(&o, 0, (const char *[]){ "ls", NULL });
    ck_assert_msg(strstr(o.err, "no recordings yet"), "%s", o.err);
    tu_output_free(&o);
    expect(&o, 3, (const char *[]){ "record", "-n", "3", "--backend", "--quiet", "--env", "RNRTEST_EXIT=3", "--",
                                    guest("argenv"), NULL });
    tu_output_free(&o);
    expect(&o, 152, (const char *[]){ "record", "-n", "2", "--backend", "--quiet", "--max-instructions", "5000",
                                      "--", guest("racy"), "2", "200000", NULL });
    tu_output_free(&o);
    record_racy_default();
    expect_ok((const char *[]){ "replay", tu_path(home, "argenv-1"), NULL });
    expect_ok((const char *[]){ "replay", tu_path(home, "racy-1"), NULL });
    expect_ok((const char *[]){ "replay", "latest", NULL });
    ck_assert_int_eq(mkdir(tu_path(home, "junk"), 0777), 0);
    ck_assert_int_eq(mkdir(tu_path(home, "bad"), 0777), 0);
    tu_write_file(tu_path(home, "bad/manifest"), "not a manifest\n", 15);
    expect(&o, 0, (const char *[]){ "ls", NULL });
    const char *l = strstr(o.out, "\nargenv-1 ");
    ck_assert_msg(l && strstr(l, "complete") && strstr(l, " 3 ") < strchr(l + 1, '\n'),
                  "argenv-1 line in:\n%s", o.out);
    l = strstr(o.out, "\nracy-1 ");
    ck_assert_msg(l && strstr(l, "interrupted: ") < strchr(l + 1, '\n'), "racy-1 in:\n%s", o.out);
    ck_assert_msg(strstr(o.out, "\nracy-2 *"), "latest not marked:\n%s", o.out);
    ck_assert_msg(strstr(o.out, "\njunk ") && strstr(o.out, "not a bundle"), "%s", o.out);
    ck_assert_msg(strstr(o.out, "\nbad ") && strstr(o.out, "damaged"), "%s", o.out);
    ck_assert_uint_eq(tu_count_lines(o.out), 6);
    tu_output_free(&o);
    expect(&o, 0, (const char *[]){ "ls", "--format", "JSON", home, NULL });
    const char *json = tu_path(tmp, "ls.json");
    tu_write_file(json, o.out, o.out_len);
    tu_output_free(&o);
    tu_output p;
    const char *argv[] = { PYTHON, "-c",
        "import json, sys\n"
        "v = {e['name']: e for e in json.load(open(sys.argv[1]))}\n"
        "assert sorted(v) == ['argenv-1', 'bad', 'junk', 'racy-1', 'racy-2'], sorted(v)\n"
        "a = v['argenv-1']\n"
        "assert (a['status'], a['exit_status'], a['cpus'], a['program']) == ('complete', 3, 3, 'argenv'), a\n"
        "assert a['instructions'] > 0 and a['disk_bytes'] > 0 and a['latest'] is False, a\n"
        "assert v['racy-1']['status'].startswith('interrupted: '), v['racy-1']\n"
        "assert v['racy-2']['latest'] is True and v['racy-2']['exit_status'] == 0\n"
        "assert v['bad']['status'] == 'damaged' and v['bad']['cpus'] is None, v['bad']\n"
        "assert v['junk']['status'] == 'not a bundle', v['junk']\n",
        json, NULL };
    tu_run(argv, NULL, &p);
    ck_assert_msg(p.status == 0, "python: %s%s", p.out, p.err);
    tu_output_free(&p);
    expect(&o, 0, (const char *[]){ "ls", "--format=csv", NULL });
    ck_assert_msg(strncmp(o.out, "name,path,status,latest,kind,program,cpus,threads,instructions,"
                                 "exit_status,disk_bytes,error\n", 84) == 0, "%s", o.out);
    ck_assert_uint_eq(tu_count_lines(o.out), 6);
    tu_output_free(&o);
    expect_err(2, "no such directory", (const char *[]){ "ls", tu_path(tmp, "nosuch"), NULL });
    unsetenv("RNR_BUNDLE_DIR");
    tu_rmtree(tmp);
    free(home);
    free(tmp);
}
END_TEST

/* rnr dump names an input log's system calls from the driver's table;
 * library warnings start with the command's name. */
START_TEST(newuser_dump_names_system_calls)
{
    char *tmp = tu_tmpdir();
    const char *b = tu_path(tmp, "b");
    expect_ok((const char *[]){ "record", "-n", "2", "--backend", "--quiet", "-o", b, "--",
                                guest("racy"), "2", "100", NULL });
    expect_ok((const char *[]){ "replay", b, NULL });
    tu_output o;
    expect(&o, 0, (const char *[]){ "dump", tu_path(b, "input.log"), NULL });
    ck_assert_msg(strstr(o.out, " syscall 64 write = ") && strstr(o.out, " syscall 214 brk = "),
                  "%.2000s", o.out);
    tu_output_free(&o);
    /* A warning the backend library prints names the command, not just rnr. */
    size_t n;
    uint8_t *log = tu_read_file(tu_path(b, "initial.log"), &n);
    tu_write_file(tu_path(tmp, "cut.log"), log, n / 2);
    free(log);
    expect(&o, 0, (const char *[]){ "maxpar", tu_path(tmp, "cut.log"), tu_path(tmp, "m.log"), NULL });
    ck_assert_msg(strncmp(o.err, "rnr maxpar: warning: ", 21) == 0, "%s", o.err);
    tu_output_free(&o);
    tu_rmtree(tmp);
    free(tmp);
}
END_TEST

/* Number of chunk boxes in a DOT text. */
static size_t boxes(const char *dot)
{
    size_t n = 0;
    for (const char *p = dot; (p = strstr(p, "[group=")); p++)
        n++;
    return n;
}

/* rnr dot draws a part of a log (--from CPU:N, --chunks K), refuses more
 * than 20000 chunks unless --force, and names an initial log's kind. */
START_TEST(newuser_dot_draws_a_part_and_refuses_a_huge_log)
{
    char *tmp = tu_tmpdir();
    const char *b = tu_path(tmp, "b"), *m = tu_path(tmp, "b/m.log");
    /* A synthetic recording whose MaxPar log has more than 20000 chunks. */
    expect_ok((const char *[]){ "synth", "-n", "4", "--chunk-max", "10", "--insns", "250000",
                                "--sharing", "high", "--no-truth", "-o", b, NULL });
    expect_ok((const char *[]){ "maxpar", tu_path(b, "initial.log"), m, NULL });
    tu_output o;
    expect(&o, 2, (const char *[]){ "dot", m, NULL });
    ck_assert_msg(strstr(o.err, "--force") && strstr(o.err, "--from") && o.out_len == 0, "%s", o.err);
    tu_output_free(&o);
    expect(&o, 0, (const char *[]){ "dot", "--force", m, NULL });
    ck_assert_uint_gt(boxes(o.out), 20000);
    tu_output_free(&o);
    expect(&o, 0, (const char *[]){ "dot", "--from", "2:100", "--chunks", "50", m, NULL });
    ck_assert_uint_eq(boxes(o.out), 50);
    ck_assert_msg(strstr(o.out, "n2_100 [group=cpu2") && !strstr(o.out, "n2_99 "), "%.500s", o.out);
    tu_output_free(&o);
    expect(&o, 0, (const char *[]){ "dot", "--chunks=7", m, NULL });
    ck_assert_uint_eq(boxes(o.out), 7);
    tu_output_free(&o);
    expect_err(2, "cpu 2 has no chunk 99999999", (const char *[]){ "dot", "--from", "2:99999999", "--chunks", "10", m, NULL });
    expect_err(2, "CPU:N", (const char *[]){ "dot", "--from", "2", m, NULL });
    expect(&o, 2, (const char *[]){ "dot", tu_path(b, "initial.log"), NULL });
    ck_assert_msg(strstr(o.err, "an initial log has no replay DAG") && !strstr(o.err, "?"), "%s",
                  o.err);
    tu_output_free(&o);
    tu_rmtree(tmp);
    free(tmp);
}
END_TEST

/* 1 if S matches the extended regular expression RE. */
static int matches(const char *s, const char *re)
{
    regex_t r;
    ck_assert_int_eq(regcomp(&r, re, REG_EXTENDED | REG_NOSUB), 0);
    int m = regexec(&r, s, 0, NULL, 0) == 0;
    regfree(&r);
    return m;
}

/* A deadlock report names the function of each blocked pc from the
 * program's symbol table. */
START_TEST(newuser_deadlock_report_symbolizes_pcs)
{
    char *tmp = tu_tmpdir();
    const char *b = tu_path(tmp, "b");
    tu_output o;
    expect(&o, 124, (const char *[]){ "record", "-n", "2", "--backend", "-o", b, "--",
                                      guest("deadlock"), NULL });
    ck_assert_msg(matches(o.err, "thread [0-9]+: futex \\(futex wait on 0x[0-9a-f]+\\) at pc "
                                 "0x[0-9a-f]+ \\([A-Za-z_][A-Za-z0-9_.]*\\+0x[0-9a-f]+\\)\n"),
                  "%s", o.err);
    tu_output_free(&o);
    expect(&o, 124, (const char *[]){ "run", "-n", "2", "--", guest("deadlock"), NULL });
    ck_assert_msg(matches(o.err, "at pc 0x[0-9a-f]+ \\([A-Za-z_][A-Za-z0-9_.]*\\+0x[0-9a-f]+\\)"),
                  "%s", o.err);
    tu_output_free(&o);
    expect_ok((const char *[]){ "replay", b, NULL });
    tu_rmtree(tmp);
    free(tmp);
}
END_TEST

/* The progress line of rnr record is cleared before the guest's output
 * reaches the terminal: on one stream, each progress line is followed by a
 * carriage return (a redraw or the clearing), never by the guest's text.
 * The recording lasts about 1.5 s on an idle host (with 20000 rounds it
 * took 0.5 s, the progress period, and often drew no line). */
START_TEST(newuser_progress_line_is_cleared_before_guest_output)
{
    char *tmp = tu_tmpdir();
    const char *b = tu_path(tmp, "b"), *out = tu_path(tmp, "out");
    const char *argv[] = { "/bin/sh", "-c", "exec \"$0\" record --progress --backend -n 2 -o \"$1\" -- "
                           "\"$2\" 2 60000 > \"$3\" 2>&1",
                           tu_rnr_bin(), b, guest("chatter"), out, NULL };
    tu_output o;
    tu_run(argv, NULL, &o);
    ck_assert_msg(o.status == 0, "record exited %d: %s", o.status, o.err);
    tu_output_free(&o);
    size_t n;
    char *text = (char *)tu_read_file(out, &n);
    int lines = 0;
    const char *end = "KiB of initial log   ";
    for (const char *p = text; (p = strstr(p, end)) != NULL; p++) {
        lines++;
        ck_assert_msg(p[strlen(end)] == '\r', "the guest's output follows a progress line: '%.60s'",
                      p + strlen(end));
    }
    ck_assert_msg(lines > 0, "no progress line drawn");
    free(text);
    expect_ok((const char *[]){ "replay", b, NULL });
    tu_rmtree(tmp);
    free(tmp);
}
END_TEST

TU_SUITE(newuser)
{
    Suite *s = suite_create("newuser");
    TCase *tc = tu_tcase(s, "newuser", 120);
    tcase_add_test(tc, newuser_record_without_o_goes_to_the_bundle_dir_and_latest_follows);
    tcase_add_test(tc, newuser_concurrent_recorders_without_o_get_their_own_number);
    tcase_add_test(tc, newuser_ls_lists_bundles_status_and_exit_code);
    tcase_add_test(tc, newuser_missing_program_messages_name_the_fix);
    tcase_add_test(tc, newuser_exit_code_modes_of_run_and_record);
    tcase_add_test(tc, newuser_dump_names_system_calls);
    tcase_add_test(tc, newuser_progress_line_is_cleared_before_guest_output);
    tcase_add_test(tc, newuser_deadlock_report_symbolizes_pcs);
    tcase_add_test(tc, newuser_dot_draws_a_part_and_refuses_a_huge_log);
    return s;
}
