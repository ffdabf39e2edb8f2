/* tests/test_oracle.c: the truth-based bounds on replay parallelism
 * (backend/oracle.c): a hand-built log and truth with the bounds worked
 * out, a cycle reported, and on real recordings the instruction bound
 * never below the chunk bound, shown by rnr stats beside the formats. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/oracle.h"
#include "formats/log.h"
#include "tests/testutil.h"

static void write_initial(const char *path, const rnr_initial_chunk *c, size_t n, uint32_t cpus)
{
    rnr_log_header h = {RNR_LOG_INITIAL, cpus, 100000, {0}};
    char err[RNR_ERR_MAX];
    rnr_writer *w = rnr_writer_open(path, &h, NULL, err, sizeof err);
    ck_assert_msg(w != NULL, "%s", err);
    for (size_t i = 0; i < n; i++)
        ck_assert_int_eq(rnr_writer_put_initial(w, &c[i]), 0);
    ck_assert_int_eq(rnr_writer_close(w, err, sizeof err), 0);
}

START_TEST(oracle_bounds_of_a_worked_example)
{
    /* cpu 0 runs A (100 instructions), cpu 1 runs B (100); the only true
     * dependence goes from A's instruction 49 to B's instruction 50.
     * Chunks: A -> B, critical path 200, parallelism 1. Instructions: A's
     * first half precedes B's second half: critical path 100, parallelism 2. */
    char *dir = tu_tmpdir();
    const char *log = tu_path(dir, "initial.log"), *truth = tu_path(dir, "truth.deps");
    rnr_initial_chunk c[2] = {{0, 10, 500, 100, RNR_END_STOP, 0, NULL},
                              {1, 11, 600, 100, RNR_END_STOP, 0, NULL}};
    write_initial(log, c, 2, 2);
    const char *t = "rnr-truth 1 cpus 2\nraw 40 0 10 49 49 450 1 11 50 50 550\n";
    tu_write_file(truth, t, strlen(t));
    oracle_bounds b;
    char err[512];
    ck_assert_msg(oracle_compute(log, truth, &b, err, sizeof err) == 0, "%s", err);
    ck_assert_uint_eq(b.instructions, 200);
    ck_assert_uint_eq(b.deps, 1);
    ck_assert_uint_eq(b.chunk_critical_path, 200);
    ck_assert_uint_eq(b.insn_critical_path, 100);
    ck_assert_uint_eq(b.segments, 4);
    ck_assert(b.insn_parallelism > 1.99 && b.insn_parallelism < 2.01);
    /* A dependence back from B's end to A's start closes a cycle. */
    const char *t2 = "rnr-truth 1 cpus 2\nraw 40 0 10 49 49 450 1 11 50 50 550\n"
                     "raw 80 1 11 99 99 590 0 10 0 0 400\n";
    tu_write_file(truth, t2, strlen(t2));
    ck_assert_int_eq(oracle_compute(log, truth, &b, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "cycle"), "%s", err);
    /* A dependence past the log's instructions is named. */
    const char *t3 = "rnr-truth 1 cpus 2\nraw 40 0 10 149 149 450 1 11 50 50 550\n";
    tu_write_file(truth, t3, strlen(t3));
    ck_assert_int_eq(oracle_compute(log, truth, &b, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "does not have"), "%s", err);
    tu_rmtree(dir);
    free(dir);
}
END_TEST

START_TEST(oracle_rows_beside_the_formats_of_a_recording)
{
    char *tmp = tu_tmpdir();
    char *dir = strdup(tu_path(tmp, "b"));
    tu_output o;
    tu_rnr(&o, (const char *[]){"record", "--quiet", "--truth", "--backend", "-n", "4", "-o", dir, "--",
                                tu_path(tu_env("RNR_GUEST_DIR"), "parloop"), "4", "3000", NULL});
    ck_assert_msg(o.status == 0, "%s", o.err);
    tu_output_free(&o);
    tu_rnr(&o, (const char *[]){"stats", dir, NULL});
    ck_assert_msg(o.status == 0, "%s", o.err);
    const char *ch = strstr(o.out, "\noracle.ch "), *in = strstr(o.out, "\noracle.in ");
    ck_assert_msg(ch && in, "%s", o.out);
    /* The last column of each row is its parallelism. */
    char *lc = strndup(ch + 1, strcspn(ch + 1, "\n")), *li = strndup(in + 1, strcspn(in + 1, "\n"));
    double pc = atof(strrchr(lc, ' ') + 1), pi = atof(strrchr(li, ' ') + 1);
    free(lc);
    free(li);
    ck_assert_msg(pc >= 1.0 && pi >= pc, "chunk bound %f, instruction bound %f\n%s", pc, pi, o.out);
    tu_output_free(&o);
    tu_rmtree(tmp);
    free(tmp);
    free(dir);
}
END_TEST

TU_SUITE(oracle)
{
    Suite *s = suite_create("oracle");
    TCase *tc = tu_tcase(s, "bounds", 60);
    tcase_add_test(tc, oracle_bounds_of_a_worked_example);
    tcase_add_test(tc, oracle_rows_beside_the_formats_of_a_recording);
    return s;
}
