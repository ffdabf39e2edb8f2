/* tests/test_stats.c: `rnr stats` on an initial log: chunks and
 * instructions per CPU, mean chunk size, termination reasons, SV entries,
 * and what MaxPar makes of the dependences (Early, Unrelated), on a
 * hand-built log whose answers are worked out below; replay times; an
 * input log's records and bytes per record type. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/metrics.h"
#include "formats/log.h"
#include "tests/testutil.h"

/* Four CPUs, MSP 1000. A (cpu 0) sources dependences to cpu 1 at 200
 * (resolved: X2, the first chunk with TS > 200), to cpu 2 at 160 and to
 * cpu 3 at 170. A is written at H = 2000 > 1200 before cpu 2 or 3 dumped a
 * later chunk: both tokens go to the Early Token Vectors (3 tokens in all).
 * cpu 3 dumps D at 5000, which awaits its token: Early; cpu 2 never dumps:
 * Unrelated. */
static void write_log(const char *path)
{
    rnr_log_header h = {RNR_LOG_INITIAL, 4, 1000, {0}};
    char err[RNR_ERR_MAX];
    rnr_writer *w = rnr_writer_open(path, &h, NULL, err, sizeof err);
    ck_assert_msg(w != NULL, "%s", err);
    rnr_sv_entry sv[3] = {{1, 200}, {2, 160}, {3, 170}};
    const rnr_initial_chunk c[] = {
        {0, 10, 150, 50, RNR_END_CONFLICT, 0, 3, sv},   /* A */
        {1, 11, 200, 40, RNR_END_SIZE, 0, 0, NULL},     /* X1 */
        {1, 11, 300, 60, RNR_END_SYSCALL, 0, 0, NULL},  /* X2 */
        {0, 10, 2000, 30, RNR_END_AGE, 0, 0, NULL},
        {3, 13, 5000, 20, RNR_END_SWITCH, 0, 0, NULL},  /* D */
    };
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++)
        ck_assert_msg(rnr_writer_put_initial(w, &c[i]) == 0, "%s", rnr_writer_error(w));
    ck_assert_int_eq(rnr_writer_close(w, err, sizeof err), 0);
}

static void expect_line(const char *out, const char *line)
{
    ck_assert_msg(strstr(out, line) != NULL, "no '%s' in:\n%s", line, out);
}

START_TEST(stats_of_an_initial_log_counts_reasons_and_the_fate_of_dependences)
{
    char *dir = tu_tmpdir();
    char *log = strdup(tu_path(dir, "initial.log"));
    write_log(log);
    tu_output o;
    tu_rnr(&o, (const char *[]){"stats", log, NULL});
    ck_assert_msg(o.status == 0, "%s", o.err);
    expect_line(o.out, "\ncpu.0: 2 chunks, 80 instructions\n");
    expect_line(o.out, "\ncpu.1: 2 chunks, 100 instructions\n");
    expect_line(o.out, "\ncpu.2: 0 chunks, 0 instructions\n");
    expect_line(o.out, "\ncpu.3: 1 chunks, 20 instructions\n");
    expect_line(o.out, "\nmean_chunk_size: 40.0\n");
    expect_line(o.out, "\nend.conflict: 1\nend.size: 1\nend.syscall: 1\nend.switch: 1\n");
    expect_line(o.out, "\nend.age: 1\n");
    expect_line(o.out, "\nsv_entries: 3\n");
    expect_line(o.out, "\nmaxpar.dependences: 3\n");
    expect_line(o.out, "\nmaxpar.early: 1\n");
    expect_line(o.out, "\nmaxpar.unrelated: 1\n");
    expect_line(o.out, "\nmaxpar.tokens: 3\n");
    tu_output_free(&o);
    tu_rmtree(dir);
    free(dir);
    free(log);
}
END_TEST

/* A MaxPar log on 4 CPUs: A (cpu 0, 100 instructions) sends a token to B
 * (cpu 1, 50), C and D (cpus 2, 3, 100 each) are independent. Token
 * latency 100. On 1 replay CPU: A, C, D back to back (0..300), B ready at
 * 200 runs at 300: 350 cycles. On 2: A and C at 0, D at 100, B at 200
 * (its token): 250. On 3: A, C, D at 0, B at 200: 250. On 4 or more: the
 * same. With latency 0: on 1, B is still last (C and D have been runnable
 * longer): 350; on 2, D and B at 100: 200; on 3: B at 100, 150. */
static void write_final_log(const char *path)
{
    rnr_log_header h = {RNR_LOG_MAXPAR, 4, 1000, {0}};
    char err[RNR_ERR_MAX];
    rnr_writer *w = rnr_writer_open(path, &h, NULL, err, sizeof err);
    ck_assert_msg(w != NULL, "%s", err);
    uint32_t stv1[] = {1};
    rnr_ptv_entry ptv0[] = {{0, 1}};
    const rnr_final_chunk c[] = {
        {0, 10, 100, 0, 1, stv1, 0, NULL, 0},   /* A */
        {1, 11, 50, 0, 0, NULL, 1, ptv0, 0},    /* B */
        {2, 12, 100, 0, 0, NULL, 0, NULL, 0},   /* C */
        {3, 13, 100, 0, 0, NULL, 0, NULL, 0},   /* D */
    };
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++)
        ck_assert_msg(rnr_writer_put_final(w, &c[i]) == 0, "%s", rnr_writer_error(w));
    ck_assert_int_eq(rnr_writer_close(w, err, sizeof err), 0);
}

START_TEST(stats_cpus_simulates_replay_on_the_listed_cpu_counts)
{
    char *dir = tu_tmpdir();
    char *log = strdup(tu_path(dir, "maxpar.log"));
    write_final_log(log);
    tu_output o;
    tu_rnr(&o, (const char *[]){"stats", log, NULL});
    ck_assert_msg(o.status == 0, "%s", o.err);
    expect_line(o.out, "\nreplay.cycles.w1: 350\nreplay.cycles.w2: 250\nreplay.cycles.w4: 250\n");
    tu_output_free(&o);
    tu_rnr(&o, (const char *[]){"stats", "--cpus", "3,1", log, NULL});
    ck_assert_msg(o.status == 0, "%s", o.err);
    expect_line(o.out, "\nreplay.cycles.w3: 250\nreplay.cycles.w1: 350\n");
    ck_assert_msg(strstr(o.out, "replay.cycles.w2") == NULL, "%s", o.out);
    tu_output_free(&o);
    tu_rnr(&o, (const char *[]){"stats", "--cpus", "1-3,8", "--token-latency", "0", log, NULL});
    ck_assert_msg(o.status == 0, "%s", o.err);
    expect_line(o.out, "\nreplay.cycles.w1: 350\nreplay.cycles.w2: 200\nreplay.cycles.w3: 150\n"
                       "replay.cycles.w8: 150\n");
    tu_output_free(&o);
    const char *bad[] = {"0", "9-2", "1,,2", "x", "65", "1-17", ""};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        tu_rnr(&o, (const char *[]){"stats", "--cpus", bad[i], log, NULL});
        ck_assert_msg(o.status == 2, "--cpus '%s': status %d", bad[i], o.status);
        ck_assert_msg(strstr(o.err, "--cpus") != NULL, "--cpus '%s': %s", bad[i], o.err);
        tu_output_free(&o);
    }
    tu_rmtree(dir);
    free(dir);
    free(log);
}
END_TEST

/* Field NAME of CSV row ROW (0 = the header) of TEXT, in OUT; 0 if absent.
 * The fields here hold no commas or quotes. */
static int csv_field_of(const char *text, int row, const char *name, char *out, size_t n)
{
    const char *hdr = text, *line = text;
    for (int r = 0; r < row; r++) {
        line = strchr(line, '\n');
        if (!line)
            return 0;
        line++;
    }
    if (!*line)
        return 0;
    int col = 0;
    size_t nlen = strlen(name);
    for (const char *h = hdr; *h && *h != '\n'; col++) {
        const char *e = h + strcspn(h, ",\n");
        if ((size_t)(e - h) == nlen && strncmp(h, name, nlen) == 0) {
            const char *f = line;
            for (int c = 0; c < col && f; c++) {
                f = strpbrk(f, ",\n");
                f = f && *f == ',' ? f + 1 : NULL;
            }
            if (!f)
                return 0;
            size_t len = strcspn(f, ",\n");
            snprintf(out, n, "%.*s", (int)len, f);
            return len > 0;
        }
        h = *e == ',' ? e + 1 : e;
    }
    return 0;
}

/* A synthetic bundle with every format: `rnr stats` gives each final log
 * its simulated replay on the recorded timing, the figures the metrics
 * library computes on the same file, and for the bundle the ratios to the
 * manifest's recorded cycles; the text has the second table. A log of
 * version 3 (no durations) gets none of it (tests/test_formats.c). */
START_TEST(stats_reports_replay_on_the_recorded_timing)
{
    char *dir = tu_tmpdir();
    char *b = strdup(tu_path(dir, "b"));
    tu_output o;
    tu_rnr(&o, (const char *[]){"synth", "-n", "4", "--insns", "40000", "--sharing", "high", "-o", b, NULL});
    ck_assert_msg(o.status == 0, "%s", o.err);
    tu_output_free(&o);
    tu_rnr(&o, (const char *[]){"backend", b, NULL});
    ck_assert_msg(o.status == 0, "%s", o.err);
    tu_output_free(&o);
    char *cyc = tu_manifest_value(b, "cycles");
    uint64_t recorded = strtoull(cyc, NULL, 10);
    ck_assert_uint_gt(recorded, 0);
    tu_output csv;
    tu_rnr(&csv, (const char *[]){"stats", "--format", "csv", b, NULL});
    ck_assert_msg(csv.status == 0, "%s", csv.err);
    static const char *const kinds[] = {"maxpar", "stitched", "serial", "stserial"};
    for (int k = 0; k < 4; k++) {
        char log[4096], err[RNR_ERR_MAX];
        snprintf(log, sizeof log, "%s/%s.log", b, kinds[k]);
        dag_metrics m;
        ck_assert_msg(metrics_compute_file(log, 100, 0, NULL, 0, &m, err, sizeof err) == 0, "%s", err);
        ck_assert_int_eq(m.recorded, 1);
        ck_assert_uint_eq(m.workers[m.nw - 1], 4);
        tu_rnr(&o, (const char *[]){"stats", log, NULL});
        ck_assert_msg(o.status == 0, "%s", o.err);
        char want[128], got[64];
        snprintf(want, sizeof want, "\ncritical_path.recorded: %llu\n",
                 (unsigned long long)m.critical_path_recorded);
        expect_line(o.out, want);
        int row = 0;
        for (int r = 1; csv_field_of(csv.out, r, "log", got, sizeof got); r++)
            if (strcmp(got, kinds[k]) == 0)
                row = r;
        ck_assert_int_gt(row, 0);
        for (uint32_t i = 0; i < m.nw; i++) {
            snprintf(want, sizeof want, "\nreplay.recorded.cycles.w%u: %llu\n", m.workers[i],
                     (unsigned long long)m.makespan_recorded[i]);
            expect_line(o.out, want);
            char name[64];
            snprintf(name, sizeof name, "replay.recorded.cycles.w%u", m.workers[i]);
            ck_assert_msg(csv_field_of(csv.out, row, name, got, sizeof got), "no %s", name);
            ck_assert_uint_eq(strtoull(got, NULL, 10), m.makespan_recorded[i]);
            snprintf(name, sizeof name, "replay.recorded.ratio.w%u", m.workers[i]);
            ck_assert_msg(csv_field_of(csv.out, row, name, got, sizeof got), "no %s", name);
            snprintf(want, sizeof want, "%.3f", (double)m.makespan_recorded[i] / (double)recorded);
            ck_assert_str_eq(got, want);
            snprintf(name, sizeof name, "replay.ratio.w%u", m.workers[i]);
            ck_assert_msg(csv_field_of(csv.out, row, name, got, sizeof got), "no %s", name);
            snprintf(want, sizeof want, "%.3f", (double)m.makespan[i] / (double)recorded);
            ck_assert_str_eq(got, want);
        }
        ck_assert_msg(csv_field_of(csv.out, row, "bytes.duration", got, sizeof got), "no bytes.duration");
        tu_output_free(&o);
    }
    tu_output_free(&csv);
    tu_rnr(&o, (const char *[]){"stats", b, NULL});
    ck_assert_msg(o.status == 0, "%s", o.err);
    expect_line(o.out, "\nmaxpar.w4 ");
    expect_line(o.out, "\nstserial.w1 ");
    tu_output_free(&o);
    free(cyc);
    free(b);
    tu_rmtree(dir);
    free(dir);
}
END_TEST

/* An input log with every record type, sizes worked out from the
 * encoding (docs/formats.md, "Input log"): each record of thread 7 after
 * the first omits its tid; small numbers take one varint byte. */
static void write_input_log(const char *path)
{
    rnr_log_header h = {RNR_LOG_INPUT, 2, 0, {0}};
    char err[RNR_ERR_MAX];
    rnr_writer *w = rnr_writer_open(path, &h, NULL, err, sizeof err);
    ck_assert_msg(w != NULL, "%s", err);
    static const uint8_t rnd[16] = {1, 2, 3}, four[4] = {9, 8, 7, 6};
    const rnr_input_record r[] = {
        {RNR_IN_START, 7, 0, 0, 0x100, 16, rnd},     /* head tid addr(2) len 16 bytes: 21 */
        {RNR_IN_SYSCALL, 7, 64, 5, 0, 0, NULL},      /* head nr value: 3 */
        {RNR_IN_MEM, 7, 0, 0, 0x10, 4, four},        /* head addr len 4 bytes: 7 */
        {RNR_IN_CHECK, 7, 10, 0x40, 0x1122334455667788ull, 0, NULL},  /* head delta pc 8 bytes: 11 */
        {RNR_IN_CHECK, 7, 30, 0x40, 1, 0, NULL},     /* 11 */
        {RNR_IN_CSR, 7, 0xc01, 3, 0, 0, NULL},       /* head nr(2) value: 4 */
        {RNR_IN_SC, 7, 0, 0, 0x20, 0, NULL},         /* head nr value addr: 4 */
        {RNR_IN_CHECK, 7, 50, 0x44, 2, 0, NULL},     /* 11 */
    };
    for (size_t i = 0; i < sizeof r / sizeof r[0]; i++)
        ck_assert_msg(rnr_writer_put_input(w, &r[i]) == 0, "%s", rnr_writer_error(w));
    ck_assert_int_eq(rnr_writer_close(w, err, sizeof err), 0);
}

static uint64_t csv_u64(const char *csv, int row, const char *name)
{
    char got[64];
    ck_assert_msg(csv_field_of(csv, row, name, got, sizeof got), "no %s in:\n%s", name, csv);
    return strtoull(got, NULL, 10);
}

/* rnr stats gives an input log's records and bytes per record type:
 * counts and encoded sizes as the encoding makes them, adding up to the
 * log's records and bytes.raw; a type absent has 0 of everything; the
 * same names in JSON and text. On a recording, the CHECK records are the
 * manifest's checks, with a check at every chunk end as with the default
 * sparse ones (fewer), and the types' bytes add up to the input log's in
 * the bundle's table too. */
START_TEST(stats_reports_each_input_record_type)
{
    char *dir = tu_tmpdir();
    char *log = strdup(tu_path(dir, "input.log"));
    write_input_log(log);
    tu_output o;
    tu_rnr(&o, (const char *[]){"stats", "--format", "csv", log, NULL});
    ck_assert_msg(o.status == 0, "%s", o.err);
    static const struct { const char *type; uint64_t records, raw; } want[] = {
        {"syscall", 1, 3}, {"mem", 1, 7}, {"csr", 1, 4}, {"start", 1, 21}, {"sc", 1, 4}, {"check", 3, 33},
    };
    uint64_t records = 0, raw = 0;
    char name[96];
    for (size_t k = 0; k < sizeof want / sizeof want[0]; k++) {
        snprintf(name, sizeof name, "input.%s.records", want[k].type);
        ck_assert_uint_eq(csv_u64(o.out, 1, name), want[k].records);
        snprintf(name, sizeof name, "input.%s.bytes.raw", want[k].type);
        ck_assert_uint_eq(csv_u64(o.out, 1, name), want[k].raw);
        snprintf(name, sizeof name, "input.%s.bytes.zlib", want[k].type);
        ck_assert_uint_gt(csv_u64(o.out, 1, name), 0);
        records += want[k].records;
        raw += want[k].raw;
    }
    ck_assert_uint_eq(csv_u64(o.out, 1, "records"), records);
    ck_assert_uint_eq(csv_u64(o.out, 1, "bytes.raw"), raw);
    tu_output_free(&o);
    tu_rnr(&o, (const char *[]){"stats", "--format", "json", log, NULL});
    ck_assert_msg(o.status == 0, "%s", o.err);
    expect_line(o.out, "\"input.check.bytes.raw\": 33");
    tu_output_free(&o);
    tu_rnr(&o, (const char *[]){"stats", log, NULL});
    expect_line(o.out, "\ninput.check.records: 3\n");
    tu_output_free(&o);

    uint64_t checks[2];
    for (int every = 0; every < 2; every++) {
        char *b = strdup(tu_path(dir, every ? "sparse" : "chunk"));
        const char *opts[] = {"-n", "2", "--check-every", every ? "20000" : "chunk", NULL};
        const char *args[] = {"2", "20", NULL};
        tu_output rec;
        tu_record(&rec, b, "barrier", opts, args);
        ck_assert_msg(rec.status == 0, "%s", rec.err);
        tu_output_free(&rec);
        tu_rnr(&o, (const char *[]){"stats", "--format", "csv", b, NULL});
        ck_assert_msg(o.status == 0, "%s", o.err);
        char got[64];
        int row = 0;
        for (int r = 1; csv_field_of(o.out, r, "log", got, sizeof got); r++)
            if (strcmp(got, "input") == 0)
                row = r;
        ck_assert_int_gt(row, 0);
        char *m = tu_manifest_value(b, "checks");
        checks[every] = csv_u64(o.out, row, "input.check.records");
        ck_assert_uint_eq(checks[every], strtoull(m, NULL, 10));
        free(m);
        raw = 0;
        for (size_t k = 0; k < sizeof want / sizeof want[0]; k++) {
            snprintf(name, sizeof name, "input.%s.bytes.raw", want[k].type);
            raw += csv_u64(o.out, row, name);
        }
        ck_assert_uint_eq(raw, csv_u64(o.out, row, "bytes.raw"));
        tu_output_free(&o);
        free(b);
    }
    ck_assert_msg(checks[1] * 2 < checks[0], "checks: %llu every chunk, %llu sparse",
                  (unsigned long long)checks[0], (unsigned long long)checks[1]);
    free(log);
    tu_rmtree(dir);
    free(dir);
}
END_TEST

TU_SUITE(stats)
{
    Suite *s = suite_create("stats");
    TCase *tc = tu_tcase(s, "initial", 30);
    tcase_add_test(tc, stats_of_an_initial_log_counts_reasons_and_the_fate_of_dependences);
    tc = tu_tcase(s, "replay_time", 30);
    tcase_add_test(tc, stats_cpus_simulates_replay_on_the_listed_cpu_counts);
    tcase_add_test(tc, stats_reports_replay_on_the_recorded_timing);
    tc = tu_tcase(s, "input", 60);
    tcase_add_test(tc, stats_reports_each_input_record_type);
    return s;
}
