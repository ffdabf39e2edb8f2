/* tests/test_adaptive_cli.c: adaptive logs (rnr backend --adaptive) as a
 * user makes and reads them: a recorded program replayed from one on 1 and
 * 2 workers, verify, stats, dump, and the command's errors. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "formats/log.h"
#include "tests/testutil.h"

static char *file_text(const char *path)
{
    size_t n;
    uint8_t *d = tu_read_file(path, &n);
    char *s = malloc(n + 1);
    memcpy(s, d, n);
    s[n] = 0;
    free(d);
    return s;
}

/* A recorded program: adaptive logs from a phases file that switches four
 * times (five phases) replay on 1 and 2 workers with the recorded stdout (the replay
 * checks exit status and final state itself), verify, and show their
 * phases in stats and dump. */
START_TEST(adaptive_log_of_a_recording_replays_and_verifies)
{
    char *tmp = tu_tmpdir();
    const char *dir = tu_path(tmp, "rec");
    tu_output o;
    int st = tu_record(&o, dir, "suite/taskq", (const char *[]){ "-n", "4", NULL },
                       (const char *[]){ "-t", "4", "-s", "7", NULL });
    ck_assert_msg(st == 0, "record: %s", o.err);
    tu_output_free(&o);
    const char *ph = tu_path(tmp, "phases");
    const char *text = "# four switches\n0-20000 maxpar\n40000-60000 maxpar\n80000- maxpar\n";
    tu_write_file(ph, text, strlen(text));
    char policy[4200];
    snprintf(policy, sizeof policy, "phases:%s", ph);
    tu_rnr(&o, (const char *[]){ "backend", "--adaptive", policy, dir, NULL });
    ck_assert_msg(o.status == 0 && strstr(o.out, "adaptive"), "%d %s %s", o.status, o.out, o.err);
    tu_output_free(&o);
    char *want = file_text(tu_path(dir, "stdout"));
    static const char *const js[] = { "1", "2" };
    for (int j = 0; j < 2; j++) {
        tu_rnr(&o, (const char *[]){ "replay", "-j", js[j], "--format", "adaptive", dir, NULL });
        ck_assert_msg(o.status == 0 && strstr(o.err, "verified"), "-j %s: %d %s", js[j], o.status,
                      o.err);
        ck_assert_msg(strcmp(o.out, want) == 0, "-j %s printed %s", js[j], o.out);
        tu_output_free(&o);
    }
    tu_rnr(&o, (const char *[]){ "verify", dir, "adaptive", NULL });
    ck_assert_msg(o.status == 0 && strstr(o.out, "adaptive.log: ok"), "%s %s", o.out, o.err);
    tu_output_free(&o);
    tu_rnr(&o, (const char *[]){ "stats", "--format", "csv", tu_path(dir, "adaptive.log"), NULL });
    ck_assert_msg(o.status == 0, "%s", o.err);
    /* Five phases, alternating from MaxPar. */
    ck_assert_msg(strstr(o.out, "phase.4.format") && !strstr(o.out, "phase.5.format"), "%s", o.out);
    tu_output_free(&o);
    tu_rnr(&o, (const char *[]){ "stats", "--format", "json", tu_path(dir, "adaptive.log"), NULL });
    ck_assert_msg(strstr(o.out, "\"phase.0.format\": \"maxpar\"") &&
                      strstr(o.out, "\"phase.1.format\": \"stitched\"") &&
                      strstr(o.out, "\"phase.3.format\": \"stitched\"") &&
                      strstr(o.out, "\"phase.4.format\": \"maxpar\""), "%s", o.out);
    tu_output_free(&o);
    tu_rnr(&o, (const char *[]){ "stats", dir, NULL });
    ck_assert_msg(o.status == 0 && strstr(o.out, "adaptive phases") && strstr(o.out, "adaptive.w2"),
                  "%s", o.out);
    tu_output_free(&o);
    tu_rnr(&o, (const char *[]){ "dump", tu_path(dir, "adaptive.log"), NULL });
    ck_assert_msg(strstr(o.out, "# rnr adaptive log") && strstr(o.out, "\n0 phase maxpar cpu ") &&
                      strstr(o.out, " phase stitched cpu "), "%.400s", o.out);
    tu_output_free(&o);
    /* The debugger's serial replay (replayer/serial.c) runs it to the end. */
    if (access("/usr/bin/gdb-multiarch", X_OK) == 0) {
        tu_rnr(&o, (const char *[]){ "debug", "--format", "adaptive", dir, "--", "-batch", "-nx",
                                     "-ex", "continue", NULL });
        ck_assert_msg(strstr(o.out, "replay verified") || strstr(o.err, "replay verified"),
                      "%s\n%s", o.out, o.err);
        tu_output_free(&o);
    }
    /* Bandwidth policies write logs that replay too. */
    tu_rnr(&o, (const char *[]){ "backend", "--adaptive", "bandwidth:50000000:8192", dir, NULL });
    ck_assert_msg(o.status == 0, "%s", o.err);
    tu_output_free(&o);
    tu_rnr(&o, (const char *[]){ "replay", "-j", "2", "--format", "adaptive", dir, NULL });
    ck_assert_msg(o.status == 0 && strcmp(o.out, want) == 0, "%s", o.err);
    tu_output_free(&o);
    free(want);
    tu_rmtree(tmp);
    free(tmp);
}
END_TEST

/* The command's errors: exit 2 and one line. */
START_TEST(adaptive_backend_rejects_bad_policies)
{
    char *tmp = tu_tmpdir();
    const char *dir = tu_path(tmp, "syn");
    tu_output o;
    tu_rnr(&o, (const char *[]){ "synth", "-n", "2", "--insns", "2000", "-o", dir, NULL });
    ck_assert_msg(o.status == 0, "%s", o.err);
    tu_output_free(&o);
    const char *ph = tu_path(tmp, "bad");
    tu_write_file(ph, "0-10 maxpar\n5-20 maxpar\n", 24);
    char policy[4200];
    snprintf(policy, sizeof policy, "phases:%s", ph);
    char want[4200];
    snprintf(want, sizeof want, "%s:2: range starts at 5", ph);
    struct { const char *policy; const char *want; } cases[] = {
        { "nonsense", "unknown policy 'nonsense'" },
        { "lag:10", "on-line only" },
        { "bandwidth:abc", "BYTES_PER_S must be a number" },
        { policy, want },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        tu_rnr(&o, (const char *[]){ "backend", "--adaptive", cases[i].policy, dir, NULL });
        ck_assert_msg(o.status == 2 && strstr(o.err, cases[i].want) && tu_count_lines(o.err) == 1,
                      "%s: %d %s", cases[i].policy, o.status, o.err);
        tu_output_free(&o);
    }
    tu_rnr(&o, (const char *[]){ "backend", "--adaptive", NULL });
    ck_assert_msg(o.status == 2 && strstr(o.err, "--adaptive needs a policy"), "%s", o.err);
    tu_output_free(&o);
    tu_rnr(&o, (const char *[]){ "verify", dir, "adaptive", NULL });
    ck_assert_msg(o.status == 2 && strstr(o.err, "no such log"), "%s", o.err);
    tu_output_free(&o);
    tu_rnr(&o, (const char *[]){ "backend", "--help", NULL });
    ck_assert_msg(strstr(o.out, "--adaptive POLICY") && strstr(o.out, "phases:FILE"), "%s", o.out);
    tu_output_free(&o);
    tu_rmtree(tmp);
    free(tmp);
}
END_TEST

TU_SUITE(adaptive_cli)
{
    Suite *s = suite_create("adaptive_cli");
    TCase *tc = tu_tcase(s, "cli", 120);
    tcase_add_test(tc, adaptive_log_of_a_recording_replays_and_verifies);
    tcase_add_test(tc, adaptive_backend_rejects_bad_policies);
    return s;
}
