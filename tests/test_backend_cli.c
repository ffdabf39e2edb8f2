/* tests/test_backend_cli.c: the backend commands as a user runs them:
 * rnr synth, maxpar, stitch, serial, backend, verify, stats, dot: help,
 * usage and input errors (exit 2, one line naming the file), a bundle end
 * to end, and verify failing (exit 1) on a tampered log. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "formats/log.h"
#include "tests/testutil.h"

static tu_output rnr(const char *const *args)
{
    tu_output o;
    tu_rnr(&o, args);
    return o;
}

START_TEST(backend_commands_have_help)
{
    static const char *const cmds[] = { "synth", "maxpar", "stitch", "serial", "backend", "verify", "dot", "stats" };
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
        tu_output o = rnr((const char *[]){ cmds[i], "--help", NULL });
        ck_assert_int_eq(o.status, 0);
        ck_assert_msg(strstr(o.out, "usage: rnr ") && strstr(o.out, cmds[i]), "%s: %s", cmds[i], o.out);
        tu_output_free(&o);
    }
}
END_TEST

/* Bad usage and bad input: exit 2 and one line that says what is wrong. */
START_TEST(backend_commands_reject_bad_usage_and_input)
{
    char *dir = tu_tmpdir();
    const char *notlog = tu_path(dir, "notalog");
    tu_write_file(notlog, "hello\n", 6);
    struct { const char *args[6]; const char *want; } cases[] = {
        { { "maxpar", NULL }, "missing IN and OUT" },
        { { "maxpar", "a", NULL }, "missing OUT" },
        { { "maxpar", "--bogus", "a", "b", NULL }, "unknown option '--bogus'" },
        { { "maxpar", "/nonexistent/in.log", "-", NULL }, "/nonexistent/in.log: No such file" },
        { { "maxpar", notlog, "-", NULL }, "not an rnr log" },
        { { "stitch", "--window", "0", "a", "b", NULL }, "--window wants a number" },
        { { "serial", notlog, notlog, NULL }, "IN and OUT are the same file" },
        { { "backend", NULL }, "missing DIR" },
        { { "backend", dir, NULL }, "manifest" },
        { { "verify", NULL }, "missing DIR" },
        { { "verify", dir, "bogus", NULL }, "unknown FORMAT 'bogus'" },
        { { "verify", dir, NULL }, "manifest" },
        { { "dot", NULL }, "missing FILE" },
        { { "dot", notlog, NULL }, "not an rnr log" },
        { { "synth", NULL }, "missing -o DIR" },
        { { "synth", "-n", "0", "-o", dir, NULL }, "-n wants a number from 1 to 64" },
        { { "synth", "--sig", "fuzzy", "-o", dir, NULL }, "--sig wants exact or bloom:BITS" },
        { { "stats", "--token-latency", NULL }, "needs a value" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        tu_output o = rnr(cases[i].args);
        ck_assert_msg(o.status == 2, "case %zu (%s): status %d, stderr '%s'", i, cases[i].args[0], o.status, o.err);
        ck_assert_msg(strstr(o.err, cases[i].want), "case %zu: stderr '%s' lacks '%s'", i, o.err, cases[i].want);
        ck_assert_msg(strncmp(o.err, "rnr ", 4) == 0, "case %zu: '%s'", i, o.err);
        tu_output_free(&o);
    }
    tu_rmtree(dir);
    free(dir);
}
END_TEST

/* The wrong kind of log for a pass, a truncated one and a damaged one. */
START_TEST(backend_passes_reject_wrong_and_damaged_logs)
{
    char *dir = tu_tmpdir();
    tu_output o = rnr((const char *[]){ "synth", "-n", "3", "--insns", "20000", "-o", dir, NULL });
    ck_assert_int_eq(o.status, 0);
    tu_output_free(&o);
    const char *in = tu_path(dir, "initial.log"), *mp = tu_path(dir, "maxpar.log");
    o = rnr((const char *[]){ "stitch", in, mp, NULL });
    ck_assert_int_eq(o.status, 2);
    ck_assert_ptr_nonnull(strstr(o.err, "this is an initial log; the pass reads a maxpar log"));
    tu_output_free(&o);
    /* Cut the initial log in the middle (a recording that was killed): the
     * pass works on the complete prefix, with a warning naming the cut. */
    size_t n;
    uint8_t *bytes = tu_read_file(in, &n);
    const char *cut = tu_path(dir, "cut.log");
    tu_write_file(cut, bytes, n / 2);
    o = rnr((const char *[]){ "maxpar", cut, mp, NULL });
    ck_assert_int_eq(o.status, 0);
    ck_assert_msg(strstr(o.err, "cut.log") && strstr(o.err, "truncated") && strstr(o.err, "warning"),
                  "%s", o.err);
    tu_output_free(&o);
    o = rnr((const char *[]){ "stats", mp, NULL });
    ck_assert_msg(o.status == 0 && strstr(o.err, "warning") == NULL, "%s", o.err);
    tu_output_free(&o);
    /* A damaged one (a byte changed inside a block) is refused, and no
     * output is left behind. */
    bytes[n / 2] ^= 0x55;
    const char *bad = tu_path(dir, "bad.log"), *out = tu_path(dir, "out.log");
    tu_write_file(bad, bytes, n);
    free(bytes);
    o = rnr((const char *[]){ "maxpar", bad, out, NULL });
    ck_assert_int_eq(o.status, 2);
    ck_assert_msg(strstr(o.err, "bad.log") && strstr(o.err, "truncated") == NULL, "%s", o.err);
    tu_output_free(&o);
    FILE *f = fopen(out, "r");
    ck_assert_ptr_null(f);
    tu_rmtree(dir);
    free(dir);
}
END_TEST

/* synth -> backend -> verify -> stats -> dot, as a user would; then one
 * token removed from maxpar.log makes verify fail naming the dependence. */
START_TEST(backend_bundle_end_to_end_and_tampering)
{
    char *dir = tu_tmpdir();
    tu_output o = rnr((const char *[]){ "synth", "-n", "4", "--threads", "6", "--quantum", "3000",
                                        "--insns", "30000", "--sharing", "high", "--seed", "9", "-o", dir, NULL });
    ck_assert_msg(o.status == 0, "%s", o.err);
    ck_assert_ptr_nonnull(strstr(o.out, "chunks: "));
    tu_output_free(&o);
    o = rnr((const char *[]){ "backend", dir, NULL });
    ck_assert_msg(o.status == 0, "%s", o.err);
    ck_assert_msg(strstr(o.out, "maxpar ") && strstr(o.out, "stserial "), "%s", o.out);
    tu_output_free(&o);
    o = rnr((const char *[]){ "verify", dir, NULL });
    ck_assert_msg(o.status == 0, "%s%s", o.out, o.err);
    ck_assert_uint_eq(tu_count_lines(o.out), 4);
    ck_assert_ptr_nonnull(strstr(o.out, "maxpar.log: ok: "));
    ck_assert_ptr_nonnull(strstr(o.out, "ground-truth dependences"));
    tu_output_free(&o);
    o = rnr((const char *[]){ "verify", dir, "initial", NULL });
    ck_assert_msg(o.status == 0, "%s", o.err);
    tu_output_free(&o);
    o = rnr((const char *[]){ "stats", tu_path(dir, "maxpar.log"), NULL });
    ck_assert_int_eq(o.status, 0);
    ck_assert_msg(strstr(o.out, "critical_path: ") && strstr(o.out, "parallelism: ") &&
                  strstr(o.out, "replay.cycles.w1: ") && strstr(o.out, "replay.cycles.w4: ") &&
                  strstr(o.out, "entries: "), "%s", o.out);
    tu_output_free(&o);
    o = rnr((const char *[]){ "stats", dir, NULL });
    ck_assert_int_eq(o.status, 0);
    ck_assert_msg(strstr(o.out, "parallel") && strstr(o.out, "stserial"), "%s", o.out);
    tu_output_free(&o);
    o = rnr((const char *[]){ "dot", tu_path(dir, "stitched.log"), NULL });
    ck_assert_int_eq(o.status, 0);
    ck_assert_msg(strncmp(o.out, "digraph \"stitched\" {", 20) == 0 && strstr(o.out, " -> "), "%s", o.out);
    tu_output_free(&o);

    /* Copy maxpar.log without the tokens of the first pair of CPUs that
     * has any: well formed, replayable, and wrong. */
    char err[RNR_ERR_MAX];
    const char *mp = tu_path(dir, "maxpar.log"), *bad = tu_path(dir, "bad.log");
    rnr_reader *r = rnr_reader_open(mp, err, sizeof err);
    ck_assert_msg(r != NULL, "%s", err);
    rnr_writer *w = rnr_writer_open(bad, rnr_reader_header(r), NULL, err, sizeof err);
    ck_assert_msg(w != NULL, "%s", err);
    rnr_final_chunk c;
    int found = 0;
    uint32_t from = 0, to = 0, removed = 0;
    while (rnr_reader_next_final(r, &c) == 1) {
        uint32_t stv[1024];
        rnr_ptv_entry ptv[1024];
        uint32_t ns = 0, np = 0;
        if (!found && c.nstv) {
            found = 1;
            from = c.cpu;
            to = c.stv[0];
        }
        for (uint32_t i = 0; i < c.nstv; i++)
            if (!(found && c.cpu == from && c.stv[i] == to))
                stv[ns++] = c.stv[i];
        for (uint32_t i = 0; i < c.nptv; i++)
            if (!(found && c.cpu == to && c.ptv[i].cpu == from))
                ptv[np++] = c.ptv[i];
        removed += c.nstv - ns;
        c.stv = stv;
        c.nstv = ns;
        c.ptv = ptv;
        c.nptv = np;
        ck_assert_msg(rnr_writer_put_final(w, &c) == 0, "%s", rnr_writer_error(w));
    }
    ck_assert_uint_gt(removed, 0);
    rnr_reader_close(r);
    ck_assert_int_eq(rnr_writer_close(w, err, sizeof err), 0);
    ck_assert_int_eq(rename(bad, mp), 0);
    /* Behind the manifest's digest (which names the change: exit 2), the
     * dependence check: the forged log with its digest in the manifest. */
    o = rnr((const char *[]){ "verify", dir, "maxpar", NULL });
    ck_assert_msg(o.status == 2 && strstr(o.err, "not the recorded file"), "%s", o.err);
    tu_output_free(&o);
    tu_bundle_resign(dir, NULL, NULL);
    o = rnr((const char *[]){ "verify", dir, "maxpar", NULL });
    ck_assert_int_eq(o.status, 1);
    char want[64];
    snprintf(want, sizeof want, "from cpu %u chunk ", from);
    ck_assert_msg(strstr(o.err, "maxpar.log does not enforce the dependence") && strstr(o.err, want), "%s", o.err);
    ck_assert_uint_eq(tu_count_lines(o.err), 1);
    tu_output_free(&o);
    tu_rmtree(dir);
    free(dir);
}
END_TEST

/* The passes chain through pipes ('-'): the same bytes as through files. */
START_TEST(backend_passes_chain_through_standard_streams)
{
    char *dir = tu_tmpdir();
    tu_output o = rnr((const char *[]){ "synth", "-n", "3", "--insns", "20000", "-o", dir, NULL });
    ck_assert_int_eq(o.status, 0);
    tu_output_free(&o);
    o = rnr((const char *[]){ "backend", dir, NULL });
    ck_assert_int_eq(o.status, 0);
    tu_output_free(&o);
    const char *argv[] = { tu_rnr_bin(), "maxpar", "-", "-", NULL };
    tu_run(argv, tu_path(dir, "initial.log"), &o);
    ck_assert_int_eq(o.status, 0);
    size_t n;
    uint8_t *want = tu_read_file(tu_path(dir, "maxpar.log"), &n);
    ck_assert_uint_eq(o.out_len, n);
    ck_assert(memcmp(o.out, want, n) == 0);
    free(want);
    tu_output_free(&o);
    const char *argv2[] = { tu_rnr_bin(), "serial", "-", tu_path(dir, "s2.log"), NULL };
    tu_run(argv2, tu_path(dir, "stitched.log"), &o);
    ck_assert_int_eq(o.status, 0);
    tu_output_free(&o);
    uint8_t *a = tu_read_file(tu_path(dir, "s2.log"), &n);
    size_t m;
    uint8_t *b = tu_read_file(tu_path(dir, "stserial.log"), &m);
    ck_assert(n == m && memcmp(a, b, n) == 0);
    free(a);
    free(b);
    tu_rmtree(dir);
    free(dir);
}
END_TEST

/* Same options, same bundle. */
START_TEST(synth_command_is_deterministic)
{
    char *a = tu_tmpdir(), *b = tu_tmpdir();
    const char *args[] = { "--sig", "bloom:256", "--os-cpus", "1", "--quantum", "2000", "--insns", "10000" };
    for (int k = 0; k < 2; k++) {
        const char *v[16] = { "synth", "-o", k ? b : a };
        memcpy(v + 3, args, sizeof args);
        tu_output o = rnr(v);
        ck_assert_int_eq(o.status, 0);
        tu_output_free(&o);
    }
    static const char *const files[] = { "initial.log", "truth.deps", "manifest" };
    for (int i = 0; i < 3; i++) {
        size_t n, m;
        uint8_t *x = tu_read_file(tu_path(a, files[i]), &n), *y = tu_read_file(tu_path(b, files[i]), &m);
        ck_assert_msg(n == m && memcmp(x, y, n) == 0, "%s differs", files[i]);
        free(x);
        free(y);
    }
    tu_rmtree(a);
    tu_rmtree(b);
    free(a);
    free(b);
}
END_TEST

TU_SUITE(backend_cli)
{
    Suite *s = suite_create("backend_cli");
    TCase *tc = tu_tcase(s, "cli", 60);
    tcase_add_test(tc, backend_commands_have_help);
    tcase_add_test(tc, backend_commands_reject_bad_usage_and_input);
    tcase_add_test(tc, backend_passes_reject_wrong_and_damaged_logs);
    tcase_add_test(tc, backend_bundle_end_to_end_and_tampering);
    tcase_add_test(tc, backend_passes_chain_through_standard_streams);
    tcase_add_test(tc, synth_command_is_deterministic);
    return s;
}
