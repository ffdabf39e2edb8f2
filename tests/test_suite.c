/* tests/test_suite.c: the research suite of workloads/suite/ (docs/suite.md)
 * end to end under `rnr run`: every program at its small size passes its
 * self-check on 8 cores with two seeds and prints one result line of the
 * expected shape, the same line for both seeds and for other core and
 * thread counts (the results do not depend on the interleaving); and every
 * self-check fails, with one line on stderr, when -x injects an error, so
 * that no check is vacuous. Under valgrind only the lightest program runs. */
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/testutil.h"

/* hashtable's final entries for its 16384 keys: all k but k % 6 == 3,
 * and the 16 hot counters. */
_Static_assert(16384 - (16384 + 2) / 6 + 16 == 13669, "hashtable's expected entries");

/* One program: its name, the result line at the small size on the default
 * 8 threads (an extended regular expression), and whether it is light
 * enough to run under valgrind. */
static const struct program {
    const char *name, *line;
    int light;
} programs[] = {
    {"fft", "^fft n=16384 threads=8 ok checksum=[0-9a-f]{16}\n$", 0},
    {"lu", "^lu n=160 threads=8 ok checksum=[0-9a-f]{16}\n$", 0},
    {"radix", "^radix n=131072 threads=8 ok checksum=[0-9a-f]{16}\n$", 0},
    {"ocean", "^ocean n=48 threads=8 ok iterations=[0-9]+ checksum=[0-9a-f]{16}\n$", 0},
    {"water", "^water n=256 steps=4 threads=8 ok energy=-?[0-9]+\\.[0-9]{6} checksum=[0-9a-f]{16}\n$", 0},
    {"barnes", "^barnes n=512 steps=2 threads=8 ok checksum=[0-9a-f]{16}\n$", 0},
    /* 2680 solutions: the known count for 11 queens. */
    {"taskq", "^taskq queens=11 threads=8 ok solutions=2680 tasks=[0-9]+\n$", 1},
    {"hashtable", "^hashtable keys=16384 threads=8 ok entries=13669 checksum=[0-9a-f]{16}\n$", 0},
};
#define PROGRAMS (int)(sizeof programs / sizeof programs[0])

static int skipped(int i) { return tu_under_valgrind() && !programs[i].light; }

static const char *guest(const char *name)
{
    static char path[4096];
    snprintf(path, sizeof path, "%s/suite/%s", tu_env("RNR_GUEST_DIR"), name);
    return path;
}

/* Runs `rnr run -n CORES --seed SEED -- PROGRAM ARGS...` (ARGS NULL-terminated). */
static void run_program(tu_output *o, const char *cores, const char *seed, const char *program,
                        const char *const *args)
{
    const char *a[16] = {"run", "-n", cores, "--seed", seed, "--", guest(program)};
    size_t n = 7;
    for (size_t i = 0; args && args[i] && n < 15; i++)
        a[n++] = args[i];
    a[n] = NULL;
    tu_rnr(o, a);
}

static void assert_line_shape(const struct program *p, const char *out)
{
    regex_t re;
    ck_assert_int_eq(regcomp(&re, p->line, REG_EXTENDED | REG_NOSUB), 0);
    int match = regexec(&re, out, 0, NULL, 0) == 0;
    regfree(&re);
    ck_assert_msg(match, "%s: the result line\n%s does not match %s", p->name, out, p->line);
}

START_TEST(suite_program_passes_its_check_with_two_seeds)
{
    const struct program *p = &programs[_i];
    if (skipped(_i))
        return;
    tu_output one, two;
    run_program(&one, "8", "1", p->name, NULL);
    ck_assert_msg(one.status == 0 && one.err_len == 0, "%s, seed 1: status %d, stderr: %s", p->name, one.status,
                  one.err);
    assert_line_shape(p, one.out);
    run_program(&two, "8", "2", p->name, NULL);
    ck_assert_msg(two.status == 0 && two.err_len == 0, "%s, seed 2: status %d, stderr: %s", p->name, two.status,
                  two.err);
    ck_assert_msg(strcmp(one.out, two.out) == 0, "%s: seeds 1 and 2 disagree:\n%s%s", p->name, one.out, two.out);
    tu_output_free(&one);
    tu_output_free(&two);
}
END_TEST

/* The line of `-t THREADS` is the 8-thread line with threads=8 replaced. */
START_TEST(suite_program_result_does_not_depend_on_cores_or_threads)
{
    const struct program *p = &programs[_i];
    if (tu_under_valgrind())
        return;
    static const struct { const char *cores, *seed, *threads; } runs[] = {
        {"8", "3", "8"}, {"2", "4", "3"}, {"16", "5", "16"}, {"1", "6", "1"},
    };
    char *want = NULL;
    for (size_t r = 0; r < sizeof runs / sizeof runs[0]; r++) {
        tu_output o;
        run_program(&o, runs[r].cores, runs[r].seed, p->name, (const char *[]){"-t", runs[r].threads, NULL});
        ck_assert_msg(o.status == 0, "%s on %s cores, %s threads: status %d, stderr: %s", p->name, runs[r].cores,
                      runs[r].threads, o.status, o.err);
        char tag[32];
        snprintf(tag, sizeof tag, " threads=%s ", runs[r].threads);
        char *at = strstr(o.out, tag);
        ck_assert_msg(at != NULL, "%s: no '%s' in %s", p->name, tag, o.out);
        /* Normalize to threads=8 and compare with the first run. */
        char line[512];
        snprintf(line, sizeof line, "%.*s threads=8 %s", (int)(at - o.out), o.out, at + strlen(tag));
        if (!want) {
            assert_line_shape(p, line);
            want = strdup(line);
        }
        ck_assert_msg(strcmp(line, want) == 0, "%s on %s cores, %s threads:\n%s differs from\n%s", p->name,
                      runs[r].cores, runs[r].threads, o.out, want);
        tu_output_free(&o);
    }
    free(want);
}
END_TEST

START_TEST(suite_program_check_fails_on_an_injected_error)
{
    const struct program *p = &programs[_i];
    if (skipped(_i))
        return;
    tu_output o;
    run_program(&o, "8", "1", p->name, (const char *[]){"-x", NULL});
    char want_err[64];
    snprintf(want_err, sizeof want_err, "%s: check failed: ", p->name);
    ck_assert_msg(o.status == 1, "%s -x: status %d (stdout %s)", p->name, o.status, o.out);
    ck_assert_msg(strstr(o.out, " FAILED ") != NULL && tu_count_lines(o.out) == 1, "%s -x: %s", p->name, o.out);
    ck_assert_msg(strncmp(o.err, want_err, strlen(want_err)) == 0, "%s -x: stderr %s", p->name, o.err);
    ck_assert_msg(tu_count_lines(o.err) >= 1 && tu_count_lines(o.err) <= 3, "%s -x: stderr %s", p->name, o.err);
    tu_output_free(&o);
}
END_TEST

START_TEST(suite_programs_reject_bad_usage)
{
    static const char *const bad[][3] = {{"-t", "0", NULL}, {"-s", "tiny", NULL}, {"-q", NULL}, {"extra", NULL}};
    for (size_t b = 0; b < sizeof bad / sizeof bad[0]; b++) {
        tu_output o;
        run_program(&o, "2", "1", "taskq", bad[b]);
        ck_assert_msg(o.status == 2 && strstr(o.err, "usage: taskq") && o.out_len == 0, "taskq %s: %d %s",
                      bad[b][0], o.status, o.err);
        tu_output_free(&o);
    }
    /* Sizes a program cannot take: not a power of 4, not 4 k^3 molecules. */
    static const char *const sizes[][2] = {{"fft", "1000"}, {"water", "100"}, {"taskq", "19"}};  /* program, N */
    for (size_t b = 0; b < sizeof sizes / sizeof sizes[0]; b++) {
        tu_output o;
        run_program(&o, "2", "1", sizes[b][0], (const char *[]){"-s", sizes[b][1], NULL});
        ck_assert_msg(o.status == 2 && strstr(o.err, "usage: "), "%s -s %s: %d %s", sizes[b][0], sizes[b][1],
                      o.status, o.err);
        tu_output_free(&o);
    }
}
END_TEST

/* The research pipeline on each program's small size: recorded on 8 CPUs
 * with the truth and the backend, every format verified against every
 * real conflict, and replayed from MaxPar on 2 workers and StSerial on 1,
 * each replay reproducing the recording (rnr replay compares). */
START_TEST(suite_program_is_recorded_verified_and_replayed)
{
    const struct program *p = &programs[_i];
    const char *m = getenv("CK_TIMEOUT_MULTIPLIER");
    if (tu_under_valgrind() || ((m && atoi(m) > 1) && !p->light))
        return;   /* the sanitizers and valgrind take the lightest one */
    char *tmp = tu_tmpdir();
    char *dir = strdup(tu_path(tmp, "b"));
    char prog[64];
    snprintf(prog, sizeof prog, "suite/%s", p->name);
    tu_output o;
    const char *opts[] = {"-n", "8", "--seed", "5", "--truth", "--backend", NULL};
    ck_assert_msg(tu_record(&o, dir, prog, opts, NULL) == 0, "%s: %s", p->name, o.err);
    assert_line_shape(p, o.out);
    tu_output_free(&o);
    static const char *const formats[] = {"maxpar", "stitched", "serial", "stserial"};
    for (int f = 0; f < 4; f++) {
        tu_rnr(&o, (const char *[]){"verify", dir, formats[f], NULL});
        ck_assert_msg(o.status == 0 && strstr(o.out, "ground-truth"), "%s %s: %s%s", p->name,
                      formats[f], o.out, o.err);
        tu_output_free(&o);
    }
    tu_rnr(&o, (const char *[]){"replay", "-j", "2", dir, NULL});
    ck_assert_msg(o.status == 0 && strstr(o.err, "verified"), "%s: %s", p->name, o.err);
    assert_line_shape(p, o.out);
    tu_output_free(&o);
    tu_rnr(&o, (const char *[]){"replay", "-j", "1", "--format", "stserial", "--quiet", dir, NULL});
    ck_assert_msg(o.status == 0, "%s: %s", p->name, o.err);
    tu_output_free(&o);
    tu_rmtree(tmp);
    free(tmp);
    free(dir);
}
END_TEST

TU_SUITE(suite)
{
    Suite *s = suite_create("suite");
    TCase *tc = tu_tcase(s, "self_check", 60);
    tcase_add_loop_test(tc, suite_program_passes_its_check_with_two_seeds, 0, PROGRAMS);
    tcase_add_loop_test(tc, suite_program_check_fails_on_an_injected_error, 0, PROGRAMS);
    tcase_add_test(tc, suite_programs_reject_bad_usage);
    tc = tu_tcase(s, "independence", 60);
    tcase_add_loop_test(tc, suite_program_result_does_not_depend_on_cores_or_threads, 0, PROGRAMS);
    tc = tu_tcase(s, "pipeline", 120);
    tcase_add_loop_test(tc, suite_program_is_recorded_verified_and_replayed, 0, PROGRAMS);
    return s;
}
