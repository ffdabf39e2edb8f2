/* tests/test_oracle.c: the truth-based bounds on replay parallelism
 * (backend/oracle.c): a hand-built log and truth with the bounds worked
 * out, a cycle reported, and on real recordings the instruction bound
 * never below the chunk bound, shown by rnr stats beside the formats; the
 * stream against the whole graph (random synthetic runs and recordings,
 * windows that hold and windows that must be given up), and its memory
 * flat on a log ten times longer. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/oracle.h"
#include "backend/synth.h"
#include "formats/log.h"
#include "tests/testutil.h"

static void write_initial_msp(const char *path, const rnr_initial_chunk *c, size_t n, uint32_t cpus,
                              uint64_t msp)
{
    rnr_log_header h = {RNR_LOG_INITIAL, cpus, msp, {0}};
    char err[RNR_ERR_MAX];
    rnr_writer *w = rnr_writer_open(path, &h, NULL, err, sizeof err);
    ck_assert_msg(w != NULL, "%s", err);
    for (size_t i = 0; i < n; i++)
        ck_assert_int_eq(rnr_writer_put_initial(w, &c[i]), 0);
    ck_assert_int_eq(rnr_writer_close(w, err, sizeof err), 0);
}

static void write_initial(const char *path, const rnr_initial_chunk *c, size_t n, uint32_t cpus)
{
    write_initial_msp(path, c, n, cpus, 100000);
}

START_TEST(oracle_bounds_of_a_worked_example)
{
    /* cpu 0 runs A (100 instructions), cpu 1 runs B (100); the only true
     * dependence goes from A's instruction 49 to B's instruction 50.
     * Chunks: A -> B, critical path 200, parallelism 1. Instructions: A's
     * first half precedes B's second half: critical path 100, parallelism 2. */
    char *dir = tu_tmpdir();
    const char *log = tu_path(dir, "initial.log"), *truth = tu_path(dir, "truth.deps");
    rnr_initial_chunk c[2] = {{0, 10, 500, 100, RNR_END_STOP, 0, 0, NULL},
                              {1, 11, 600, 100, RNR_END_STOP, 0, 0, NULL}};
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

/* unmap's threads spin on sched_yield: chunks of a few instructions,
 * more than rnr stats' window of 4,096 within one MSP, and drained out of
 * TS order (a chunk waits while its cluster may still gain SV entries).
 * rnr stats streams the oracle without giving it up (ORACLE_HOLD_MSP; it
 * used to hold the whole graph) and prints the whole graph's bounds. */
START_TEST(oracle_rows_of_a_recording_of_tiny_chunks_stream)
{
    char *tmp = tu_tmpdir();
    char *dir = strdup(tu_path(tmp, "b"));
    tu_output o;
    tu_rnr(&o, (const char *[]){"record", "--quiet", "--truth", "-n", "5", "--seed", "587", "--sig", "bloom:64",
                                "-o", dir, "--", tu_path(tu_env("RNR_GUEST_DIR"), "unmap"), "3", NULL});
    ck_assert_msg(o.status == 0, "%s", o.err);
    tu_output_free(&o);
    char log[4200], truth[4200], err[512], want[128];
    snprintf(log, sizeof log, "%s/initial.log", dir);
    snprintf(truth, sizeof truth, "%s/truth.deps", dir);
    oracle_bounds g;
    ck_assert_msg(oracle_compute(log, truth, &g, err, sizeof err) == 0, "%s", err);
    ck_assert_uint_gt(g.chunks, 4 * ORACLE_WINDOW);
    tu_rnr(&o, (const char *[]){"stats", dir, NULL});
    ck_assert_msg(o.status == 0, "%s", o.err);
    ck_assert_msg(!strstr(o.out, "held whole"), "%s", o.out);
    snprintf(want, sizeof want, " %llu %9.3f\n", (unsigned long long)g.chunk_critical_path, g.chunk_parallelism);
    const char *ch = strstr(o.out, "\noracle.ch ");
    ck_assert_msg(ch && strstr(ch, want) && strstr(ch, want) < strchr(ch + 1, '\n') + 1, "want '%s' in\n%s",
                  want, o.out);
    tu_output_free(&o);
    tu_rmtree(tmp);
    free(tmp);
    free(dir);
}
END_TEST

/* The stream's bounds are the whole graph's, field by field. */
static void expect_same(const oracle_bounds *w, const oracle_bounds *g, const char *what)
{
    ck_assert_msg(w->instructions == g->instructions && w->chunks == g->chunks && w->deps == g->deps,
                  "%s: counts differ", what);
    ck_assert_msg(w->chunk_critical_path == g->chunk_critical_path,
                  "%s: chunk critical path %llu, whole graph %llu", what,
                  (unsigned long long)w->chunk_critical_path, (unsigned long long)g->chunk_critical_path);
    ck_assert_msg(w->insn_critical_path == g->insn_critical_path,
                  "%s: instruction critical path %llu, whole graph %llu", what,
                  (unsigned long long)w->insn_critical_path, (unsigned long long)g->insn_critical_path);
    ck_assert_msg(w->segments == g->segments, "%s: %llu segments, whole graph %llu", what,
                  (unsigned long long)w->segments, (unsigned long long)g->segments);
    ck_assert(w->chunk_parallelism == g->chunk_parallelism && w->insn_parallelism == g->insn_parallelism);
}

/* Compares the stream on DIR with WINDOWS[0..n) (0: none) against the
 * whole graph; counts the windows given up and kept. The unbounded one
 * and BIG must hold. */
static void compare_windows(const char *dir, const uint64_t *windows, size_t n, uint64_t big, int *given_up,
                            int *kept, int *two_passes)
{
    char log[4096], truth[4096], err[512], what[4200];
    snprintf(log, sizeof log, "%s/initial.log", dir);
    snprintf(truth, sizeof truth, "%s/truth.deps", dir);
    oracle_bounds g, w;
    ck_assert_msg(oracle_compute(log, truth, &g, err, sizeof err) == 0, "%s", err);
    for (size_t i = 0; i < n; i++) {
        int rc = oracle_compute_window(log, truth, windows[i], 0, &w, err, sizeof err);
        ck_assert_msg(rc >= 0, "%s", err);
        snprintf(what, sizeof what, "%s, window %llu", dir, (unsigned long long)windows[i]);
        if (windows[i] == 0 || windows[i] >= big)
            ck_assert_msg(rc == 0, "%s: given up: %s", what, w.why);
        if (rc == 1) {
            ck_assert(w.why != NULL);
            (*given_up)++;
            continue;
        }
        expect_same(&w, &g, what);
        if (windows[i])
            ck_assert_uint_le(w.peak_chunks, windows[i] + 1);
        (*kept)++;
        *two_passes += w.passes == 2;
    }
    /* The file form: the same bounds, and it says when it held the graph whole. */
    ck_assert_msg(oracle_compute_file(log, truth, 1, 0, &w, err, sizeof err) == 0, "%s", err);
    expect_same(&w, &g, "oracle_compute_file");
    ck_assert_int_eq(w.window_given_up, w.why != NULL);
}


/* Random synthetic runs (idle CPUs, more threads than CPUs, preemption,
 * adversarial drains): every window gives the whole graph's bounds or is
 * given up, never different numbers; no window and a large one always
 * hold; windows of a few chunks must be given up somewhere; and some runs
 * need the second pass (sources behind the window). */
START_TEST(oracle_stream_equals_the_whole_graph_on_random_runs)
{
    uint64_t rng = tu_seed(0x0a11ce) + (uint64_t)_i * 7919;
    int given_up = 0, kept = 0, two = 0;
    char *tmp = tu_tmpdir();
    for (int round = 0; round < 10; round++) {
        synth_config c;
        tu_synth_random(&c, &rng, 8000);
        char dir[4096], err[512];
        snprintf(dir, sizeof dir, "%s/r%d", tmp, round);
        synth_result res;
        ck_assert_msg(synth_bundle(&c, dir, 1, &res, err, sizeof err) == 0, "%s", err);
        static const uint64_t windows[] = {0, 1, 2, 5, 16, 64, 1u << 20};
        compare_windows(dir, windows, sizeof windows / sizeof windows[0], 1u << 20, &given_up, &kept, &two);
    }
    tu_rmtree(tmp);
    free(tmp);
    ck_assert_int_gt(given_up, 0);
    ck_assert_int_gt(kept, 0);
    ck_assert_int_gt(two, 0);
}
END_TEST

/* Recordings of the guest programs with --truth, the same comparison. */
START_TEST(oracle_stream_equals_the_whole_graph_on_recordings)
{
    static const char *const progs[][4] = {
        {"parloop", "4", "3000", NULL},
        {"mutex", NULL},
        {"condvar", NULL},
        {"atomics", NULL},
    };
    char *tmp = tu_tmpdir();
    int given_up = 0, kept = 0, two = 0;
    for (size_t i = 0; i < sizeof progs / sizeof progs[0]; i++) {
        char dir[4096];
        snprintf(dir, sizeof dir, "%s/b%zu", tmp, i);
        const char *args[16] = {"record", "--quiet", "--truth", "-n", "4", "-o", dir, "--",
                                tu_path(tu_env("RNR_GUEST_DIR"), progs[i][0])};
        size_t k = 9;
        for (size_t j = 1; j < 4 && progs[i][j]; j++)
            args[k++] = progs[i][j];
        args[k] = NULL;
        tu_output o;
        tu_rnr(&o, args);
        ck_assert_msg(o.status == 0, "%s: %s", progs[i][0], o.err);
        tu_output_free(&o);
        static const uint64_t windows[] = {0, 1, 3, 8, 64, ORACLE_WINDOW};
        compare_windows(dir, windows, sizeof windows / sizeof windows[0], ORACLE_WINDOW, &given_up, &kept,
                        &two);
    }
    tu_rmtree(tmp);
    free(tmp);
    ck_assert_int_gt(given_up, 0);
    ck_assert_int_gt(kept, 0);
    ck_assert_int_gt(two, 0);
}
END_TEST

/* Hand-built: cpu 0 runs B, C, D (10 instructions each, TS 100, 200,
 * 300), then cpu 1's A (1000 instructions, TS 50) comes last in the log,
 * as bounded silence allows; A's first instruction precedes B's sixth.
 * Whole graph: A -> B -> C -> D, 1030; instructions: 1000. With a window
 * of one chunk, B is dropped before A is read: the dependence must give
 * the window up (taking it as if it were not there gives 1000), and
 * oracle_compute_file then holds the graph whole and says so. */
START_TEST(oracle_stream_gives_up_a_dependence_into_a_dropped_chunk)
{
    char *dir = tu_tmpdir();
    const char *log = tu_path(dir, "initial.log"), *truth = tu_path(dir, "truth.deps");
    rnr_initial_chunk c[4] = {{0, 10, 100, 10, RNR_END_SIZE, 0, 0, NULL},
                              {0, 10, 200, 10, RNR_END_SIZE, 0, 0, NULL},
                              {0, 10, 300, 10, RNR_END_STOP, 0, 0, NULL},
                              {1, 11, 50, 1000, RNR_END_STOP, 0, 0, NULL}};
    write_initial(log, c, 4, 2);
    const char *t = "rnr-truth 1 cpus 2\nraw 40 1 11 0 0 10 0 10 5 5 60\n";
    tu_write_file(truth, t, strlen(t));
    oracle_bounds b;
    char err[512];
    ck_assert_msg(oracle_compute_window(log, truth, 0, 0, &b, err, sizeof err) == 0, "%s", b.why ? b.why : err);
    ck_assert_uint_eq(b.chunk_critical_path, 1030);
    ck_assert_uint_eq(b.insn_critical_path, 1000);
    ck_assert_uint_eq(b.segments, 4);
    ck_assert_int_eq(oracle_compute_window(log, truth, 1, 0, &b, err, sizeof err), 1);
    ck_assert_msg(strstr(b.why, "dropped"), "%s", b.why);
    ck_assert_msg(oracle_compute_file(log, truth, 1, 0, &b, err, sizeof err) == 0, "%s", err);
    ck_assert_int_eq(b.window_given_up, 1);
    ck_assert_uint_eq(b.chunk_critical_path, 1030);
    tu_rmtree(dir);
    free(dir);
}
END_TEST

/* Hand-built: cpu 0's A (1000 instructions) ends before cpu 1's X1..X5
 * and cpu 2's B; A's last instruction precedes B's first. With a window
 * of two chunks A is dropped before B is read: a second pass keeps A's
 * values for B (chunk path 1010, instructions 1010; without them, 1000). */
START_TEST(oracle_stream_keeps_a_source_behind_the_window)
{
    char *dir = tu_tmpdir();
    const char *log = tu_path(dir, "initial.log"), *truth = tu_path(dir, "truth.deps");
    rnr_initial_chunk c[7] = {{0, 10, 1000, 1000, RNR_END_STOP, 0, 0, NULL}};
    for (int i = 1; i <= 5; i++)
        c[i] = (rnr_initial_chunk){1, 11, 1000 + 100 * (uint64_t)i, 10, RNR_END_SIZE, 0, 0, NULL};
    c[6] = (rnr_initial_chunk){2, 12, 2000, 10, RNR_END_STOP, 0, 0, NULL};
    write_initial(log, c, 7, 3);
    const char *t = "rnr-truth 1 cpus 3\nraw 40 0 10 999 999 990 2 12 0 0 1990\n";
    tu_write_file(truth, t, strlen(t));
    oracle_bounds b;
    char err[512];
    ck_assert_msg(oracle_compute_window(log, truth, 2, 0, &b, err, sizeof err) == 0, "%s", b.why ? b.why : err);
    ck_assert_uint_eq(b.passes, 2);
    ck_assert_uint_eq(b.far_positions, 1);
    ck_assert_uint_le(b.peak_chunks, 3);
    ck_assert_uint_eq(b.chunk_critical_path, 1010);
    ck_assert_uint_eq(b.insn_critical_path, 1010);
    ck_assert_uint_eq(b.segments, 3);
    ck_assert_msg(oracle_compute(log, truth, &b, err, sizeof err) == 0, "%s", err);
    ck_assert_uint_eq(b.chunk_critical_path, 1010);
    ck_assert_uint_eq(b.segments, 3);
    tu_rmtree(dir);
    free(dir);
}
END_TEST

/* The same shape with more positions behind the window than the window
 * has chunks: A's last 40 instructions are each the source of a
 * dependence into one of B's 40 instructions (window of two chunks, 40
 * distinct sources behind it). The stream keeps them all and gives the
 * whole graph's numbers; it used to give the window up past WINDOW
 * positions and hold everything instead. */
START_TEST(oracle_stream_keeps_more_sources_behind_the_window_than_its_size)
{
    char *dir = tu_tmpdir();
    const char *log = tu_path(dir, "initial.log"), *truth = tu_path(dir, "truth.deps");
    rnr_initial_chunk c[7] = {{0, 10, 1000, 1000, RNR_END_STOP, 0, 0, NULL}};
    for (int i = 1; i <= 5; i++)
        c[i] = (rnr_initial_chunk){1, 11, 1000 + 100 * (uint64_t)i, 10, RNR_END_SIZE, 0, 0, NULL};
    c[6] = (rnr_initial_chunk){2, 12, 2000, 40, RNR_END_STOP, 0, 0, NULL};
    write_initial(log, c, 7, 3);
    char t[8192] = "rnr-truth 1 cpus 3\n";
    for (unsigned i = 0; i < 40; i++) {
        size_t n = strlen(t);
        snprintf(t + n, sizeof t - n, "raw %x 0 10 %u %u %u 2 12 %u %u %u\n", 0x40 * (i + 1), 960 + i,
                 960 + i, 960 + i, i, i, 1960 + i);
    }
    tu_write_file(truth, t, strlen(t));
    oracle_bounds g, b;
    char err[512];
    ck_assert_msg(oracle_compute(log, truth, &g, err, sizeof err) == 0, "%s", err);
    ck_assert_msg(oracle_compute_window(log, truth, 2, 0, &b, err, sizeof err) == 0, "%s", b.why ? b.why : err);
    ck_assert_uint_eq(b.passes, 2);
    ck_assert_uint_ge(b.far_positions, 40);
    ck_assert_uint_le(b.peak_chunks, 3);
    expect_same(&b, &g, "40 sources behind a window of 2");
    ck_assert_msg(oracle_compute_file(log, truth, 2, 0, &b, err, sizeof err) == 0, "%s", err);
    ck_assert_int_eq(b.window_given_up, 0);
    tu_rmtree(dir);
    free(dir);
}
END_TEST

/* Hand-built, MSP 1000: cpu 1's B (TS 200) and C1..C3 (TS 300..500) are
 * drained before cpu 0's A (TS 150), as a recorder drains a chunk whose
 * cluster stays open; A's instruction 5 precedes B's first. A window of
 * two chunks finalizes B (the oldest held) before A is read and gives up;
 * with ORACLE_HOLD_MSP nothing within one MSP of the latest TS is
 * finalized, so the stream holds and equals the whole graph. Ten later
 * chunks, each an MSP after the last, are then finalized as they pass:
 * the chunks held stay within the window and one MSP's worth. */
START_TEST(oracle_stream_holds_one_msp_of_chunks_with_hold_msp)
{
    char *dir = tu_tmpdir();
    const char *log = tu_path(dir, "initial.log"), *truth = tu_path(dir, "truth.deps");
    rnr_initial_chunk c[15] = {{1, 11, 200, 10, RNR_END_SIZE, 0, 0, NULL},
                               {1, 11, 300, 10, RNR_END_SIZE, 0, 0, NULL},
                               {1, 11, 400, 10, RNR_END_SIZE, 0, 0, NULL},
                               {1, 11, 500, 10, RNR_END_SIZE, 0, 0, NULL},
                               {0, 10, 150, 10, RNR_END_STOP, 0, 0, NULL}};
    for (int i = 5; i < 15; i++)
        c[i] = (rnr_initial_chunk){1, 11, 1000 * (uint64_t)i, 10, i == 14 ? RNR_END_STOP : RNR_END_SIZE, 0, 0,
                                   NULL};
    write_initial_msp(log, c, 15, 2, 1000);
    const char *t = "rnr-truth 1 cpus 2\nraw 40 0 10 5 5 145 1 11 0 0 195\n";
    tu_write_file(truth, t, strlen(t));
    oracle_bounds g, b;
    char err[512];
    ck_assert_msg(oracle_compute(log, truth, &g, err, sizeof err) == 0, "%s", err);
    ck_assert_uint_eq(g.chunk_critical_path, 150);
    ck_assert_int_eq(oracle_compute_window(log, truth, 2, 0, &b, err, sizeof err), 1);
    ck_assert_msg(strstr(b.why, "dropped"), "%s", b.why);
    ck_assert_msg(oracle_compute_window(log, truth, 2, ORACLE_HOLD_MSP, &b, err, sizeof err) == 0, "%s",
                  b.why ? b.why : err);
    expect_same(&b, &g, "hold one MSP");
    ck_assert_uint_ge(b.peak_chunks, 5);
    ck_assert_uint_le(b.peak_chunks, 6);
    ck_assert_msg(oracle_compute_file(log, truth, 2, ORACLE_HOLD_MSP, &b, err, sizeof err) == 0, "%s", err);
    ck_assert_int_eq(b.window_given_up, 0);
    tu_rmtree(dir);
    free(dir);
}
END_TEST

/* Two orders the stream cannot follow, each given up even without a
 * window (and the whole graph gives the bounds): (1) a dependence from a
 * chunk with a later TS (cpu 1's A, TS 500, into cpu 0's B, TS 100: B is
 * finalized first; taking it without A gives 1000 instead of 1010);
 * (2) a thread's chunk X (TS 100) read after bounded silence settled its
 * later chunk Y (TS 200, after another thread's W on cpu 1): the thread order is X -> Y,
 * 110; following the log's order instead gives W -> Y -> X, 120. */
START_TEST(oracle_stream_gives_up_orders_it_cannot_follow)
{
    char *dir = tu_tmpdir();
    const char *log = tu_path(dir, "initial.log"), *truth = tu_path(dir, "truth.deps");
    oracle_bounds b;
    char err[512];
    rnr_initial_chunk c1[2] = {{0, 10, 100, 10, RNR_END_STOP, 0, 0, NULL}, {1, 11, 500, 1000, RNR_END_STOP, 0, 0, NULL}};
    write_initial(log, c1, 2, 2);
    const char *t = "rnr-truth 1 cpus 2\nraw 40 1 11 0 0 10 0 10 5 5 60\n";
    tu_write_file(truth, t, strlen(t));
    ck_assert_int_eq(oracle_compute_window(log, truth, 0, 0, &b, err, sizeof err), 1);
    ck_assert_msg(oracle_compute_file(log, truth, 0, 0, &b, err, sizeof err) == 0, "%s", err);
    ck_assert_uint_eq(b.chunk_critical_path, 1010);

    rnr_initial_chunk c2[4] = {{1, 12, 150, 100, RNR_END_SWITCH, 0, 0, NULL},  /* W */
                               {1, 10, 200, 10, RNR_END_STOP, 0, 0, NULL},     /* Y */
                               {2, 11, 5000, 10, RNR_END_STOP, 0, 0, NULL},
                               {0, 10, 100, 10, RNR_END_SWITCH, 0, 0, NULL}};  /* X */
    write_initial_msp(log, c2, 4, 3, 100);
    t = "rnr-truth 1 cpus 3\n";
    tu_write_file(truth, t, strlen(t));
    ck_assert_int_eq(oracle_compute_window(log, truth, 0, 0, &b, err, sizeof err), 1);
    ck_assert_msg(strstr(b.why, "bounded silence"), "%s", b.why);
    ck_assert_msg(oracle_compute_file(log, truth, 0, 0, &b, err, sizeof err) == 0, "%s", err);
    ck_assert_uint_eq(b.chunk_critical_path, 110);
    tu_rmtree(dir);
    free(dir);
}
END_TEST

/* On a synthetic run ten times longer, the stream with a window of 256
 * chunks holds: exact bounds, at most the window's chunks (a small part of
 * the log), as many edges and positions behind the window (within the
 * noise) as on the short one. Holding the graph whole fails it. */
START_TEST(oracle_stream_memory_is_flat_on_a_ten_times_longer_log)
{
    char *tmp = tu_tmpdir();
    uint64_t chunks[2], insns[2], edges[2], far[2], held[2];
    for (int k = 0; k < 2; k++) {
        synth_config c;
        synth_config_windowed(&c, tu_seed(1234), k ? 1000000 : 100000);
        c.shared_lines = 8;        /* lines shared often: dependences stay within the window */
        char dir[4096], log[4200], truth[4200], err[512];
        snprintf(dir, sizeof dir, "%s/l%d", tmp, k);
        synth_result res;
        ck_assert_msg(synth_bundle(&c, dir, 1, &res, err, sizeof err) == 0, "%s", err);
        snprintf(log, sizeof log, "%s/initial.log", dir);
        snprintf(truth, sizeof truth, "%s/truth.deps", dir);
        oracle_bounds g, w;
        ck_assert_msg(oracle_compute(log, truth, &g, err, sizeof err) == 0, "%s", err);
        int rc = oracle_compute_window(log, truth, 256, 0, &w, err, sizeof err);
        ck_assert_msg(rc == 0, "given up: %s", rc == 1 ? w.why : err);
        expect_same(&w, &g, "windowed log");
        chunks[k] = w.chunks;
        insns[k] = w.instructions;
        held[k] = w.peak_chunks;
        edges[k] = w.peak_edges;
        far[k] = w.far_positions;
        printf("oracle: %llu chunks, %llu deps: peak %llu chunks, %llu edges held, %llu positions behind, "
               "%u passes\n", (unsigned long long)w.chunks, (unsigned long long)w.deps,
               (unsigned long long)w.peak_chunks, (unsigned long long)w.peak_edges,
               (unsigned long long)w.far_positions, w.passes);
    }
    tu_rmtree(tmp);
    free(tmp);
    ck_assert_uint_ge(insns[1], 10 * insns[0]);
    ck_assert_uint_le(held[1], 257);
    ck_assert_msg(edges[1] <= edges[0] + edges[0] / 2 + 16, "edges held %llu, then %llu",
                  (unsigned long long)edges[0], (unsigned long long)edges[1]);
    ck_assert_msg(far[1] <= far[0] + far[0] / 2 + 16, "positions behind %llu, then %llu",
                  (unsigned long long)far[0], (unsigned long long)far[1]);
    ck_assert_uint_lt(held[1] * 10, chunks[1]);
}
END_TEST

TU_SUITE(oracle)
{
    Suite *s = suite_create("oracle");
    TCase *tc = tu_tcase(s, "bounds", 60);
    tcase_add_test(tc, oracle_bounds_of_a_worked_example);
    tcase_add_test(tc, oracle_rows_beside_the_formats_of_a_recording);
    tcase_add_test(tc, oracle_rows_of_a_recording_of_tiny_chunks_stream);
    tc = tu_tcase(s, "stream", 120);
    tcase_add_test(tc, oracle_stream_gives_up_a_dependence_into_a_dropped_chunk);
    tcase_add_test(tc, oracle_stream_keeps_a_source_behind_the_window);
    tcase_add_test(tc, oracle_stream_keeps_more_sources_behind_the_window_than_its_size);
    tcase_add_test(tc, oracle_stream_holds_one_msp_of_chunks_with_hold_msp);
    tcase_add_test(tc, oracle_stream_gives_up_orders_it_cannot_follow);
    tcase_add_loop_test(tc, oracle_stream_equals_the_whole_graph_on_random_runs, 0, 3);
    tcase_add_test(tc, oracle_stream_equals_the_whole_graph_on_recordings);
    tcase_add_test(tc, oracle_stream_memory_is_flat_on_a_ten_times_longer_log);
    return s;
}
