/* tests/test_adaptive.c: the adaptive final log (MaxPar or Stitched by
 * phase; backend/adaptive.h): random phase splits of random recordings
 * verify and keep each phase's format, the pure splits give the pure
 * formats record for record, the policies and their errors
 * (tests/test_adaptive_cli.c: the commands). */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "backend/adaptive.h"
#include "backend/metrics.h"
#include "backend/passes.h"
#include "backend/synth.h"
#include "backend/verify.h"
#include "formats/io.h"
#include "tests/testutil.h"

static rnr_membuf run_pass(pass_kind k, const rnr_membuf *in, uint64_t seed)
{
    rnr_membuf out;
    char err[RNR_ERR_MAX];
    ck_assert_msg(pass_run_memory(k, in->data, in->len, &out, NULL, NULL, err, sizeof err) == 0,
                  "seed %#llx: %s", (unsigned long long)seed, err);
    return out;
}

static rnr_reader *mem_reader(const rnr_membuf *log)
{
    char err[RNR_ERR_MAX];
    rnr_reader *r = rnr_reader_open_io(rnr_io_mem_reader(log->data, log->len, "log"), err, sizeof err);
    ck_assert_msg(r != NULL, "%s", err);
    return r;
}

/* The adaptive log of MaxPar log MP with the N phases START/FORMAT. */
static rnr_membuf run_adaptive(const rnr_membuf *mp, const uint64_t *start, const uint32_t *format,
                               size_t n, uint64_t seed)
{
    rnr_membuf out = { 0 };
    char err[RNR_ERR_MAX];
    rnr_reader *r = mem_reader(mp);
    rnr_log_header h = *rnr_reader_header(r);
    h.kind = RNR_LOG_ADAPTIVE;
    rnr_writer *w = rnr_writer_open_io(rnr_io_mem_writer(&out, "adaptive"), &h, NULL, err, sizeof err);
    ck_assert_msg(w != NULL, "%s", err);
    int rc = pass_adaptive(r, w, start, format, n, 0, NULL, NULL, NULL, err, sizeof err);
    ck_assert_msg(rc == 0, "seed %#llx: %s", (unsigned long long)seed, err);
    ck_assert_msg(rnr_writer_close(w, err, sizeof err) == 0, "%s", err);
    rnr_reader_close(r);
    return out;
}

/* The chunks of a final log, copied (vectors as bitsets of 64 cpus). */
typedef struct fchunk {
    uint32_t cpu, tid, phase;
    uint64_t cs, stv, ptv_sum;
    uint64_t lane_start, walk_start;
} fchunk;

static fchunk *read_chunks(const rnr_membuf *log, size_t *n)
{
    rnr_reader *r = mem_reader(log);
    uint32_t cpus = rnr_reader_header(r)->cpus;
    uint64_t *lane = calloc(cpus, sizeof *lane), walk = 0;
    size_t cap = 64;
    fchunk *v = malloc(cap * sizeof *v);
    *n = 0;
    rnr_final_chunk c;
    int rc;
    while ((rc = rnr_reader_next_final(r, &c)) == 1) {
        if (*n == cap)
            v = realloc(v, (cap *= 2) * sizeof *v);
        fchunk *f = &v[(*n)++];
        *f = (fchunk){ c.cpu, c.tid, c.phase, c.cs, 0, 0, lane[c.cpu], walk };
        for (uint32_t i = 0; i < c.nstv; i++)
            f->stv |= 1ull << c.stv[i];
        for (uint32_t i = 0; i < c.nptv; i++)
            f->ptv_sum += (uint64_t)c.ptv[i].count << (8 * (c.ptv[i].cpu % 8));
        lane[c.cpu] += c.cs;
        walk += c.cs;
    }
    ck_assert_msg(rc == 0, "%s", rnr_reader_error(r));
    free(lane);
    rnr_reader_close(r);
    return v;
}

/* Record for record the same chunks (the phase marks aside). */
static void assert_same_chunks(const rnr_membuf *a, const rnr_membuf *b, const char *what,
                               uint64_t seed)
{
    size_t na, nb;
    fchunk *x = read_chunks(a, &na), *y = read_chunks(b, &nb);
    ck_assert_msg(na == nb, "seed %#llx %s: %zu records against %zu", (unsigned long long)seed, what,
                  na, nb);
    for (size_t i = 0; i < na; i++)
        ck_assert_msg(x[i].cpu == y[i].cpu && x[i].tid == y[i].tid && x[i].cs == y[i].cs &&
                          x[i].stv == y[i].stv && x[i].ptv_sum == y[i].ptv_sum,
                      "seed %#llx %s: record %zu differs", (unsigned long long)seed, what, i);
    free(x);
    free(y);
}

static size_t phase_of(const uint64_t *start, size_t n, uint64_t pos)
{
    size_t k = 0;
    while (k + 1 < n && start[k + 1] <= pos)
        k++;
    return k;
}

/* Every adaptive record is a run of MaxPar chunks of its lane: one chunk
 * in a MaxPar phase, chunks of one Stitched phase otherwise (by their walk
 * positions in the MaxPar log); a record whose phase differs from the
 * record before it carries that phase's format. */
static void assert_phases_kept(const rnr_membuf *mp, const rnr_membuf *ad, const uint64_t *start,
                               const uint32_t *format, size_t n, uint64_t seed)
{
    size_t nm, na;
    fchunk *m = read_chunks(mp, &nm), *a = read_chunks(ad, &na);
    size_t last_phase = SIZE_MAX;
    for (size_t i = 0; i < na; i++) {
        size_t first = SIZE_MAX, count = 0, phase = SIZE_MAX;
        for (size_t j = 0; j < nm; j++) {
            if (m[j].cpu != a[i].cpu || m[j].lane_start < a[i].lane_start ||
                m[j].lane_start >= a[i].lane_start + a[i].cs)
                continue;
            size_t k = phase_of(start, n, m[j].walk_start);
            if (first == SIZE_MAX) {
                first = j;
                phase = k;
                ck_assert_msg(m[j].lane_start == a[i].lane_start,
                              "seed %#llx: record %zu does not begin at a MaxPar chunk",
                              (unsigned long long)seed, i);
            }
            ck_assert_msg(k == phase, "seed %#llx: record %zu spans phases %zu and %zu",
                          (unsigned long long)seed, i, phase, k);
            count++;
        }
        ck_assert_msg(count >= 1, "seed %#llx: record %zu holds no MaxPar chunk",
                      (unsigned long long)seed, i);
        ck_assert_msg(count == 1 || format[phase] == RNR_PHASE_STITCHED,
                      "seed %#llx: record %zu merges %zu chunks in MaxPar phase %zu",
                      (unsigned long long)seed, i, count, phase);
        if (phase != last_phase)
            ck_assert_msg(a[i].phase == format[phase], "seed %#llx: record %zu starts phase %zu "
                          "(%s) but is marked %u", (unsigned long long)seed, i, phase,
                          rnr_phase_format_name(format[phase]), a[i].phase);
        else
            ck_assert_msg(a[i].phase == RNR_PHASE_NONE, "seed %#llx: record %zu marks a phase "
                          "inside phase %zu", (unsigned long long)seed, i, phase);
        ck_assert_msg(last_phase == SIZE_MAX || phase >= last_phase,
                      "seed %#llx: record %zu goes back to phase %zu", (unsigned long long)seed, i,
                      phase);
        last_phase = phase;
    }
    free(m);
    free(a);
}

static void put_crc(uint8_t *p, uint32_t crc)
{
    for (int k = 0; k < 4; k++)
        p[k] = (uint8_t)(crc >> (8 * k));
}

/* The schema of kind 7: the writer refuses a first record that starts no
 * phase and an unknown phase format; a reader refuses the same, and head
 * bit 6 in a MaxPar log. */
START_TEST(adaptive_records_are_checked_both_ways)
{
    rnr_log_header h = { .kind = RNR_LOG_ADAPTIVE, .cpus = 2 };
    char err[RNR_ERR_MAX];
    static const struct { uint32_t phase; const char *want; } bad[] = {
        { RNR_PHASE_NONE, "the first record of an adaptive log starts no phase" },
        { 3, "phase format 3 unknown" },
    };
    for (size_t i = 0; i < 2; i++) {
        rnr_membuf out = { 0 };
        rnr_writer *w = rnr_writer_open_io(rnr_io_mem_writer(&out, "a"), &h, NULL, err, sizeof err);
        rnr_final_chunk c = { .cpu = 0, .tid = 1, .cs = 5, .phase = bad[i].phase };
        ck_assert_int_eq(rnr_writer_put_final(w, &c), -1);
        ck_assert_msg(strstr(rnr_writer_error(w), bad[i].want), "%s", rnr_writer_error(w));
        rnr_writer_abandon(w);
        free(out.data);
    }
    /* A good log: one record, starting a MaxPar phase, stored. */
    rnr_membuf out = { 0 };
    rnr_writer *w = rnr_writer_open_io(rnr_io_mem_writer(&out, "a"), &h, NULL, err, sizeof err);
    rnr_final_chunk c = { .cpu = 1, .tid = 1, .cs = 5, .dur = 7, .phase = RNR_PHASE_MAXPAR };
    ck_assert_int_eq(rnr_writer_put_final(w, &c), 0);
    ck_assert_int_eq(rnr_writer_close(w, err, sizeof err), 0);
    /* Header 64, frame 20, durations (length 1, one byte), then the record:
     * head 0x41 (phase, cpu), phase 1, cpu 1, ... */
    ck_assert_uint_eq(out.data[84], 1);
    ck_assert_uint_eq(out.data[86], 0x43);
    ck_assert_uint_eq(out.data[87], RNR_PHASE_MAXPAR);
    static const struct { int kind_to; int at; uint8_t val; const char *want; } cases[] = {
        { RNR_LOG_MAXPAR, 0, 0, "has unknown bits" },
        { 0, 87, 3, "phase format 3 unknown" },
        { 0, 86, 0x03, "the first record of an adaptive log starts no phase" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        uint8_t *copy = malloc(out.len);
        memcpy(copy, out.data, out.len);
        if (cases[i].kind_to) {
            copy[10] = (uint8_t)cases[i].kind_to;
            put_crc(copy + 60, (uint32_t)crc32(0L, copy, 60));
        } else {
            copy[cases[i].at] = cases[i].val;
            size_t stored = copy[64] | (size_t)copy[65] << 8;
            if (cases[i].at == 86) {             /* drop the phase byte: one byte shorter */
                memmove(copy + 87, copy + 88, out.len - 88);
                stored--;
                for (int k = 0; k < 2; k++) {
                    copy[64 + k] = (uint8_t)(stored >> (8 * k));
                    copy[68 + k] = (uint8_t)(stored >> (8 * k));
                }
            }
            uLong crc = crc32(0L, copy + 64, 16);
            put_crc(copy + 80, (uint32_t)crc32(crc, copy + 84, (uInt)stored));
        }
        rnr_reader *r = rnr_reader_open_io(rnr_io_mem_reader(copy, out.len, "x.log"), err, sizeof err);
        ck_assert_msg(r != NULL, "%s", err);
        rnr_final_chunk got;
        ck_assert_int_eq(rnr_reader_next_final(r, &got), -1);
        ck_assert_msg(strstr(rnr_reader_error(r), cases[i].want), "case %zu: %s", i,
                      rnr_reader_error(r));
        rnr_reader_close(r);
        free(copy);
    }
    rnr_reader *r = rnr_reader_open_io(rnr_io_mem_reader(out.data, out.len, "a"), err, sizeof err);
    rnr_final_chunk got;
    ck_assert_int_eq(rnr_reader_next_final(r, &got), 1);
    ck_assert_uint_eq(got.phase, RNR_PHASE_MAXPAR);
    ck_assert_uint_eq(got.cs, 5);
    rnr_reader_close(r);
    free(out.data);
}
END_TEST

static int rounds(int n) { return tu_under_valgrind() ? (n + 9) / 10 : n; }

/* Random phase splits (1 to 8 phases at random walk positions, random
 * formats) of random synthetic recordings: the adaptive log verifies
 * against the recorded dependences and the ground truth, keeps each
 * phase's format, and its critical path is at least MaxPar's. */
START_TEST(adaptive_random_phase_splits_verify)
{
    uint64_t rng = tu_seed(0xada9000) + (uint64_t)_i * 104729;
    for (int round = 0; round < rounds(60); round++) {
        uint64_t seed = rng;
        rnr_membuf in;
        truth_set truth;
        synth_result res;
        tu_synth_log(&rng, 4000, &in, &truth, &res);
        char err[RNR_ERR_MAX];
        verify_ctx *v = verify_open_mem(in.data, in.len, "initial", err, sizeof err);
        ck_assert_msg(v != NULL, "%s", err);
        ck_assert_msg(verify_add_truth(v, &truth, err, sizeof err) == 0, "%s", err);
        rnr_membuf mp = run_pass(PASS_MAXPAR, &in, seed);
        size_t n = 1 + tu_below(&rng, 8);
        uint64_t start[8];
        uint32_t format[8];
        for (size_t k = 0; k < n; k++) {
            start[k] = k == 0 ? 0 : tu_below(&rng, res.instructions + 1);
            format[k] = 1 + (uint32_t)tu_below(&rng, 2);
        }
        for (size_t k = 2; k < n; k++)          /* ascending: insertion sort */
            for (size_t j = k; j > 1 && start[j - 1] > start[j]; j--) {
                uint64_t t = start[j];
                start[j] = start[j - 1];
                start[j - 1] = t;
            }
        rnr_membuf ad = run_adaptive(&mp, start, format, n, seed);
        rnr_reader *r = mem_reader(&ad);
        verify_report rep;
        ck_assert_msg(verify_final(v, r, &rep, err, sizeof err) == 0, "%s", err);
        ck_assert_msg(rep.ok, "seed %#llx (case %d round %d), %zu phases: %s",
                      (unsigned long long)seed, _i, round, n, rep.message);
        ck_assert_uint_eq(rep.truth, truth.n);
        rnr_reader_close(r);
        assert_phases_kept(&mp, &ad, start, format, n, seed);
        dag_metrics m_mp, m_ad;
        r = mem_reader(&mp);
        ck_assert_msg(metrics_compute(r, 100, &m_mp, err, sizeof err) == 0, "%s", err);
        rnr_reader_close(r);
        r = mem_reader(&ad);
        ck_assert_msg(metrics_compute(r, 100, &m_ad, err, sizeof err) == 0, "%s", err);
        rnr_reader_close(r);
        ck_assert_uint_le(m_mp.critical_path, m_ad.critical_path);
        verify_free(v);
        truth_free(&truth);
        free(in.data);
        free(mp.data);
        free(ad.data);
    }
}
END_TEST

/* One MaxPar phase gives the MaxPar log, one Stitched phase the Stitched
 * log; the bandwidth policy reaches both ends (budget 0: Stitched; a
 * budget nothing exceeds: MaxPar). */
START_TEST(adaptive_pure_splits_are_the_pure_formats)
{
    uint64_t rng = tu_seed(0xada9100) + (uint64_t)_i * 7919;
    for (int round = 0; round < rounds(10); round++) {
        uint64_t seed = rng;
        rnr_membuf in;
        truth_set truth;
        synth_result res;
        tu_synth_log(&rng, 4000, &in, &truth, &res);
        rnr_membuf mp = run_pass(PASS_MAXPAR, &in, seed);
        rnr_membuf st = run_pass(PASS_STITCH, &mp, seed);
        uint64_t zero = 0;
        uint32_t fm = RNR_PHASE_MAXPAR, fs = RNR_PHASE_STITCHED;
        rnr_membuf a = run_adaptive(&mp, &zero, &fm, 1, seed);
        assert_same_chunks(&mp, &a, "all maxpar", seed);
        free(a.data);
        a = run_adaptive(&mp, &zero, &fs, 1, seed);
        assert_same_chunks(&st, &a, "all stitched", seed);
        free(a.data);
        static const char *const policies[2] = { "bandwidth:0:1000", "bandwidth:1e30:1000" };
        const rnr_membuf *want[2] = { &st, &mp };
        for (int p = 0; p < 2; p++) {
            adaptive_policy pol;
            char err[RNR_ERR_MAX];
            ck_assert_msg(adaptive_policy_parse(policies[p], &pol, err, sizeof err) == 0, "%s", err);
            uint64_t *start;
            uint32_t *format;
            size_t n;
            rnr_reader *r = mem_reader(&mp);
            ck_assert_msg(adaptive_plan(&pol, r, &start, &format, &n, err, sizeof err) == 0, "%s",
                          err);
            rnr_reader_close(r);
            ck_assert_uint_eq(n, 1);
            ck_assert_uint_eq(format[0], p ? RNR_PHASE_MAXPAR : RNR_PHASE_STITCHED);
            a = run_adaptive(&mp, start, format, n, seed);
            assert_same_chunks(want[p], &a, policies[p], seed);
            free(a.data);
            free(start);
            free(format);
            adaptive_policy_free(&pol);
        }
        truth_free(&truth);
        free(in.data);
        free(mp.data);
        free(st.data);
    }
}
END_TEST

/* The decision a streaming recorder calls: bandwidth compares the phase's
 * MaxPar bytes with the budget over its recorded time, lag the follower's
 * lag with the bound. */
START_TEST(adaptive_policy_decides_by_budget_and_lag)
{
    adaptive_policy p;
    char err[RNR_ERR_MAX];
    ck_assert_msg(adaptive_policy_parse("bandwidth:1000:4096:1000", &p, err, sizeof err) == 0, "%s",
                  err);
    ck_assert_uint_eq(p.phase_insns, 4096);
    /* 500 cycles at 1000 Hz: 0.5 s, a budget of 500 bytes. */
    adaptive_phase_stats st = { .chunks = 3, .instructions = 100, .maxpar_bytes = 500, .cycles = 500 };
    ck_assert_uint_eq(adaptive_policy_decide(&p, &st, 0), RNR_PHASE_MAXPAR);
    st.maxpar_bytes = 501;
    ck_assert_uint_eq(adaptive_policy_decide(&p, &st, 0), RNR_PHASE_STITCHED);
    st.cycles = 0;          /* unknown time: no budget */
    st.maxpar_bytes = 1;
    ck_assert_uint_eq(adaptive_policy_decide(&p, &st, 0), RNR_PHASE_STITCHED);
    adaptive_policy_free(&p);
    ck_assert_msg(adaptive_policy_parse("lag:7", &p, err, sizeof err) == 0, "%s", err);
    ck_assert_uint_eq(adaptive_policy_decide(&p, &st, 7), RNR_PHASE_STITCHED);
    ck_assert_uint_eq(adaptive_policy_decide(&p, &st, 8), RNR_PHASE_MAXPAR);
    uint64_t *s;
    uint32_t *f;
    size_t n;
    ck_assert_int_eq(adaptive_plan(&p, NULL, &s, &f, &n, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "on-line only"), "%s", err);
    adaptive_policy_free(&p);
    /* The meter: the busiest lane's cycles, bytes and instructions add up. */
    adaptive_meter *m = adaptive_meter_new(2);
    rnr_final_chunk c0 = { .cpu = 0, .tid = 1, .cs = 10, .dur = 30 };
    rnr_final_chunk c1 = { .cpu = 1, .tid = 2, .cs = 5, .dur = 50 };
    adaptive_meter_add(m, &c0, 4);
    adaptive_meter_add(m, &c0, 4);
    adaptive_meter_add(m, &c1, 3);
    adaptive_meter_stats(m, &st);
    ck_assert_uint_eq(st.chunks, 3);
    ck_assert_uint_eq(st.instructions, 25);
    ck_assert_uint_eq(st.maxpar_bytes, 11);
    ck_assert_uint_eq(st.cycles, 60);
    adaptive_meter_reset(m);
    adaptive_meter_stats(m, &st);
    ck_assert_uint_eq(st.chunks + st.cycles + st.maxpar_bytes, 0);
    adaptive_meter_free(m);
}
END_TEST

/* The planner a streaming recorder feeds chunk by chunk. lag: each phase
 * (65536 walk positions) is decided by the lag given with its first
 * chunk, later chunks' lags do not count, equal neighbours merge.
 * bandwidth: add says 1 exactly at the first chunk of a new phase (the
 * held chunks may go), and finish decides the last one. */
START_TEST(adaptive_planner_decides_phases_as_chunks_come)
{
    adaptive_policy p;
    char err[RNR_ERR_MAX];
    ck_assert_msg(adaptive_policy_parse("lag:7", &p, err, sizeof err) == 0, "%s", err);
    rnr_log_header h = { .kind = RNR_LOG_MAXPAR, .cpus = 2 };
    adaptive_planner *pl = adaptive_planner_new(&p, &h, err, sizeof err);
    ck_assert_msg(pl != NULL, "%s", err);
    /* Chunks of 40000: phase 0 = chunks 0-1, 1 = 2-3 (80000..), 2 = 4, 3 = 5-6. */
    static const uint64_t lags[] = { 10, 0, 0, 100, 3, 9, 0 };
    rnr_final_chunk c = { .cpu = 0, .tid = 1, .cs = 40000 };
    for (size_t i = 0; i < sizeof lags / sizeof lags[0]; i++)
        ck_assert_int_eq(adaptive_planner_add(pl, &c, lags[i]), 0);
    adaptive_planner_finish(pl);
    const uint64_t *start;
    const uint32_t *format;
    size_t n = adaptive_planner_phases(pl, &start, &format);
    ck_assert_uint_eq(n, 3);
    ck_assert_uint_eq(start[0], 0);
    ck_assert_uint_eq(format[0], RNR_PHASE_MAXPAR);
    ck_assert_uint_eq(start[1], 65536);
    ck_assert_uint_eq(format[1], RNR_PHASE_STITCHED);
    ck_assert_uint_eq(start[2], 3 * 65536);
    ck_assert_uint_eq(format[2], RNR_PHASE_MAXPAR);
    adaptive_planner_free(pl);
    adaptive_policy_free(&p);

    ck_assert_msg(adaptive_policy_parse("bandwidth:1000:4096:1000", &p, err, sizeof err) == 0, "%s",
                  err);
    pl = adaptive_planner_new(&p, &h, err, sizeof err);
    ck_assert_msg(pl != NULL, "%s", err);
    /* Positions 0, 3000 | 6000 | 9000 (phase 2 at 8192). */
    c.cs = 3000;
    c.dur = 1000000;   /* 1000 s per chunk: any phase fits the budget */
    static const int released[] = { 0, 0, 1, 1 };
    for (size_t i = 0; i < 4; i++)
        ck_assert_int_eq(adaptive_planner_add(pl, &c, 0), released[i]);
    ck_assert_uint_eq(adaptive_planner_phases(pl, &start, &format), 1);   /* 0 and 1 merged */
    adaptive_planner_finish(pl);
    n = adaptive_planner_phases(pl, &start, &format);
    ck_assert_uint_eq(n, 1);
    ck_assert_uint_eq(format[0], RNR_PHASE_MAXPAR);
    adaptive_planner_free(pl);
    adaptive_policy_free(&p);
}
END_TEST

/* Bad policies and phases files: one message naming the policy, or the
 * file and line, and what is wrong. */
START_TEST(adaptive_policy_errors_name_the_file_and_line)
{
    char *dir = tu_tmpdir();
    struct { const char *text; const char *want; } files[] = {
        { "0-100 maxpar\n100-50 stitched\n", ":2: empty range" },
        { "# ok\n0-100 maxpar\n\n50-200 stitched\n", ":4: range starts at 50" },
        { "0- maxpar\n200-300 stitched\n", ":2: range starts at 200" },
        { "0-100 fast\n", ":1: the format must be maxpar or stitched" },
        { "0-100 maxpar extra\n", ":1: the format must be maxpar or stitched, and nothing" },
        { "x-100 maxpar\n", ":1: expected START-END FORMAT" },
        { "10-1x maxpar\n", ":1: bad range end" },
        { "# nothing\n\n", "no phase in the file" },
    };
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        char name[32], policy[4200], err[RNR_ERR_MAX + 4200];
        snprintf(name, sizeof name, "ph%zu", i);
        const char *path = tu_path(dir, name);
        tu_write_file(path, files[i].text, strlen(files[i].text));
        snprintf(policy, sizeof policy, "phases:%s", path);
        adaptive_policy p;
        ck_assert_int_eq(adaptive_policy_parse(policy, &p, err, sizeof err), -1);
        ck_assert_msg(strstr(err, path) && strstr(err, files[i].want), "case %zu: %s", i, err);
    }
    static const char *const bad[][2] = {
        { "fast", "unknown policy 'fast'" },
        { "phases:", "needs a file" },
        { "phases:/nonexistent/ph", "/nonexistent/ph: No such file" },
        { "bandwidth:", "BYTES_PER_S must be a number" },
        { "bandwidth:-5", "BYTES_PER_S must be a number" },
        { "bandwidth:100:0", "PHASE_INSNS must be" },
        { "bandwidth:100:10:0", "HZ must be" },
        { "bandwidth:100:10:5:1", "expected bandwidth:" },
        { "lag:x", "lag:CHUNKS needs a chunk count" },
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        adaptive_policy p;
        char err[RNR_ERR_MAX];
        ck_assert_int_eq(adaptive_policy_parse(bad[i][0], &p, err, sizeof err), -1);
        ck_assert_msg(strstr(err, bad[i][1]), "%s: %s", bad[i][0], err);
    }
    /* Ranges, gaps and the default: gaps are Stitched, neighbours of one
     * format merge. */
    const char *path = tu_path(dir, "good");
    const char *text = "100-200 maxpar  # a comment\n200-300 maxpar\n400-500 stitched\n600- maxpar\n";
    tu_write_file(path, text, strlen(text));
    char policy[4200], err[RNR_ERR_MAX + 4200];
    snprintf(policy, sizeof policy, "phases:%s", path);
    adaptive_policy p;
    ck_assert_msg(adaptive_policy_parse(policy, &p, err, sizeof err) == 0, "%s", err);
    static const uint64_t want_start[] = { 0, 100, 300, 600 };
    static const uint32_t want_format[] = { RNR_PHASE_STITCHED, RNR_PHASE_MAXPAR,
                                            RNR_PHASE_STITCHED, RNR_PHASE_MAXPAR };
    ck_assert_uint_eq(p.nphases, 4);
    for (size_t k = 0; k < 4; k++) {
        ck_assert_uint_eq(p.start[k], want_start[k]);
        ck_assert_uint_eq(p.format[k], want_format[k]);
    }
    adaptive_policy_free(&p);
    tu_rmtree(dir);
    free(dir);
}
END_TEST

TU_SUITE(adaptive)
{
    Suite *s = suite_create("adaptive");
    TCase *tc = tu_tcase(s, "random", 120);
    tcase_add_loop_test(tc, adaptive_random_phase_splits_verify, 0, 8);
    tcase_add_loop_test(tc, adaptive_pure_splits_are_the_pure_formats, 0, 4);
    tc = tu_tcase(s, "policy", 30);
    tcase_add_test(tc, adaptive_policy_decides_by_budget_and_lag);
    tcase_add_test(tc, adaptive_planner_decides_phases_as_chunks_come);
    tcase_add_test(tc, adaptive_records_are_checked_both_ways);
    tcase_add_test(tc, adaptive_policy_errors_name_the_file_and_line);
    return s;
}
