/* tests/test_backend_props.c: property tests of the backend over thousands
 * of small random synthetic recordings (every format verifies, against
 * the recorded dependences and the ground truth, also a truth whose
 * dependences come after their chunk's TS; parallelism and entry
 * counts are ordered as they must be), memory that does not grow with the
 * log, and MaxPar running on a pipe from a slow producer. */
#include <check.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "backend/metrics.h"
#include "backend/passes.h"
#include "backend/synth.h"
#include "backend/verify.h"
#include "tests/testutil.h"

extern char **environ;

/* Small, varied recordings; now and then a tight MSP against chunks and
 * dependences that come late (the write bound's worst case). */
static void random_config(synth_config *c, uint64_t *rng)
{
    uint32_t cpus = 2 + (uint32_t)tu_below(rng, 7);
    synth_config_default(c, cpus);
    c->seed = tu_rand(rng);
    c->threads = cpus + (uint32_t)tu_below(rng, 3) - (uint32_t)tu_below(rng, 2);
    c->os_cpus = (uint32_t)tu_below(rng, 2);
    if (c->threads <= c->os_cpus)
        c->threads = c->os_cpus + 1;
    c->insns = 1000 + tu_below(rng, 4000);
    c->shared_lines = 2 + (uint32_t)tu_below(rng, 40);
    c->sharing = 0.001 + 0.04 * (double)tu_below(rng, 100) / 100.0;
    c->write_frac = 0.1 + 0.6 * (double)tu_below(rng, 10) / 10.0;
    c->private_lines = 8;
    c->os_rate = (double)tu_below(rng, 20);
    c->quantum = tu_below(rng, 2) ? 200 + tu_below(rng, 2000) : 0;
    c->block_rate = tu_below(rng, 3) == 0 ? 0.005 : 0;
    c->syscall_rate = 0.2 * (double)tu_below(rng, 3);
    c->adversarial = tu_below(rng, 5) != 0;
    c->rru.clusters = 2 + (uint32_t)tu_below(rng, 6);
    c->rru.cluster_chunks = 1 + (uint32_t)tu_below(rng, 4);
    c->rru.sig_bits = tu_below(rng, 3) == 0 ? 64u << tu_below(rng, 3) : 0;
    c->rru.chunk_max = 50 + tu_below(rng, 2000);
    c->rru.msp = tu_below(rng, 3) == 0 ? 64 + tu_below(rng, 600) : 800 + tu_below(rng, 6000);
}

static verify_report check(verify_ctx *v, const rnr_membuf *log)
{
    char err[RNR_ERR_MAX];
    rnr_reader *r = rnr_reader_open_io(rnr_io_mem_reader(log->data, log->len, "final"), err, sizeof err);
    ck_assert_msg(r != NULL, "%s", err);
    verify_report rep;
    ck_assert_msg(verify_final(v, r, &rep, err, sizeof err) == 0, "%s", err);
    rnr_reader_close(r);
    return rep;
}

static dag_metrics metrics(const rnr_membuf *log)
{
    char err[RNR_ERR_MAX];
    rnr_reader *r = rnr_reader_open_io(rnr_io_mem_reader(log->data, log->len, "final"), err, sizeof err);
    ck_assert_msg(r != NULL, "%s", err);
    dag_metrics m;
    ck_assert_msg(metrics_compute(r, 100, &m, err, sizeof err) == 0, "%s", err);
    rnr_reader_close(r);
    return m;
}

static rnr_membuf pass(pass_kind k, const rnr_membuf *in, pass_summary *s, uint64_t seed)
{
    rnr_membuf out;
    char err[RNR_ERR_MAX];
    ck_assert_msg(pass_run_memory(k, in->data, in->len, &out, NULL, s, err, sizeof err) == 0,
                  "seed %#llx: %s", (unsigned long long)seed, err);
    return out;
}

/* Rounds per loop index; under valgrind (which checks memory, not the
 * properties) a tenth. */
static int rounds(int n) { return tu_under_valgrind() ? (n + 9) / 10 : n; }

START_TEST(props_every_format_verifies_and_metrics_are_ordered)
{
    uint64_t base = tu_seed(0xb0b0000) + (uint64_t)_i * 7919, rng = base;
    for (int round = 0; round < rounds(50); round++) {
        uint64_t seed = rng;
        synth_config c;
        random_config(&c, &rng);
        rnr_membuf in;
        truth_set truth;
        synth_result res;
        synth_to_memory(&c, &in, &truth, &res);
        char err[RNR_ERR_MAX];
        verify_ctx *v = verify_open_mem(in.data, in.len, "initial", err, sizeof err);
        ck_assert_msg(v != NULL, "%s", err);
        ck_assert_msg(verify_add_truth(v, &truth, err, sizeof err) == 0, "%s", err);
        pass_summary s_mp, s_st, s_se, s_sts;
        rnr_membuf mp = pass(PASS_MAXPAR, &in, &s_mp, seed);
        rnr_membuf st = pass(PASS_STITCH, &mp, &s_st, seed);
        rnr_membuf se = pass(PASS_SERIAL, &mp, &s_se, seed);
        rnr_membuf sts = pass(PASS_SERIAL, &st, &s_sts, seed);
        const rnr_membuf *logs[4] = { &mp, &st, &se, &sts };
        static const char *const names[4] = { "maxpar", "stitched", "serial", "stserial" };
        for (int f = 0; f < 4; f++) {
            verify_report rep = check(v, logs[f]);
            ck_assert_msg(rep.ok, "seed %#llx (case %d round %d) %s: %s", (unsigned long long)seed, _i, round,
                          names[f], rep.message);
            ck_assert_uint_eq(rep.truth, truth.n);
        }
        dag_metrics m_mp = metrics(&mp), m_st = metrics(&st), m_se = metrics(&se), m_sts = metrics(&sts);
        uint64_t total = res.instructions;
        /* Parallelism MaxPar >= Stitched >= Serial = StSerial = 1: the
         * critical paths in the other order. */
        ck_assert_msg(m_mp.critical_path <= m_st.critical_path, "seed %#llx: maxpar path %llu > stitched %llu",
                      (unsigned long long)seed, (unsigned long long)m_mp.critical_path,
                      (unsigned long long)m_st.critical_path);
        ck_assert_uint_le(m_st.critical_path, total);
        ck_assert_uint_eq(m_se.critical_path, total);
        ck_assert_uint_eq(m_sts.critical_path, total);
        ck_assert(m_mp.parallelism >= m_st.parallelism && m_st.parallelism >= 1.0);
        ck_assert(m_se.parallelism == 1.0 && m_sts.parallelism == 1.0);
        /* Entries: MaxPar >= Stitched, Serial >= StSerial. */
        uint64_t e_mp = s_mp.out_counts.records, e_st = s_st.out_counts.records;
        uint64_t e_se = s_se.out_counts.records, e_sts = s_sts.out_counts.records;
        ck_assert_msg(e_mp >= e_st && e_se >= e_sts,
                      "seed %#llx: entries maxpar %llu stitched %llu serial %llu stserial %llu",
                      (unsigned long long)seed, (unsigned long long)e_mp, (unsigned long long)e_st,
                      (unsigned long long)e_se, (unsigned long long)e_sts);
        ck_assert_uint_eq(s_mp.maxpar.chunks_in, res.chunks);
        verify_free(v);
        truth_free(&truth);
        free(in.data);
        free(mp.data);
        free(st.data);
        free(se.data);
        free(sts.data);
    }
}
END_TEST

/* A chunk of an initial log, with what a truth dependence into it names
 * and the TS of the next chunk of its cpu and of its thread (UINT64_MAX:
 * none). */
typedef struct tchunk {
    uint32_t cpu, tid;
    uint64_t ts, cs, lane_start, thread_start, next_lane_ts, next_thread_ts;
} tchunk;

static const tchunk *by_ts_key;
static int cmp_by_ts(const void *a, const void *b)
{
    uint64_t i = *(const uint64_t *)a, j = *(const uint64_t *)b;
    if (by_ts_key[i].ts != by_ts_key[j].ts)
        return by_ts_key[i].ts < by_ts_key[j].ts ? -1 : 1;
    return (i > j) - (i < j);
}

/* The chunks of the initial log IN, in log order; *N their count. Thread
 * positions follow (TS, log index), as the threads ran them. */
static tchunk *initial_chunks(const rnr_membuf *in, size_t *n)
{
    char err[RNR_ERR_MAX];
    rnr_reader *r = rnr_reader_open_io(rnr_io_mem_reader(in->data, in->len, "initial"), err, sizeof err);
    ck_assert_msg(r != NULL, "%s", err);
    uint32_t cpus = rnr_reader_header(r)->cpus;
    uint64_t *lane_total = calloc(cpus, sizeof *lane_total);
    size_t *lane_last = malloc(cpus * sizeof *lane_last);
    for (uint32_t k = 0; k < cpus; k++)
        lane_last[k] = SIZE_MAX;
    tchunk *c = NULL;
    size_t cap = 0;
    *n = 0;
    rnr_initial_chunk x;
    int rc;
    while ((rc = rnr_reader_next_initial(r, &x)) == 1) {
        if (*n == cap) {
            cap = cap ? 2 * cap : 256;
            c = realloc(c, cap * sizeof *c);
        }
        c[*n] = (tchunk){ x.cpu, x.tid, x.ts, x.cs, lane_total[x.cpu], 0, UINT64_MAX, UINT64_MAX };
        lane_total[x.cpu] += x.cs;
        if (lane_last[x.cpu] != SIZE_MAX)
            c[lane_last[x.cpu]].next_lane_ts = x.ts;
        lane_last[x.cpu] = *n;
        (*n)++;
    }
    ck_assert_msg(rc == 0, "%s", rnr_reader_error(r));
    rnr_reader_close(r);
    uint64_t *order = malloc((*n ? *n : 1) * sizeof *order);
    for (size_t i = 0; i < *n; i++)
        order[i] = i;
    by_ts_key = c;
    qsort(order, *n, sizeof *order, cmp_by_ts);
    for (size_t i = 0; i < *n; i++) {   /* quadratic in threads only */
        tchunk *t = &c[order[i]];
        for (size_t j = i; j-- > 0;)
            if (c[order[j]].tid == t->tid) {
                t->thread_start = c[order[j]].thread_start + c[order[j]].cs;
                c[order[j]].next_thread_ts = t->ts;
                break;
            }
    }
    free(order);
    free(lane_total);
    free(lane_last);
    return c;
}

/* The chunk of C (N chunks) holding instruction INSN of cpu CPU. */
static const tchunk *chunk_at(const tchunk *c, size_t n, uint32_t cpu, uint64_t insn)
{
    for (size_t i = 0; i < n; i++)
        if (c[i].cpu == cpu && insn >= c[i].lane_start && insn < c[i].lane_start + c[i].cs)
            return &c[i];
    return NULL;
}

static uint64_t verdict(verify_ctx *v, const rnr_membuf *log, verify_report *rep)
{
    char err[RNR_ERR_MAX];
    if (!log) {
        ck_assert_msg(verify_initial(v, rep, err, sizeof err) == 0, "%s", err);
    } else {
        *rep = check(v, log);
    }
    return rep->violations;
}

/* A system call's accesses belong to its ECALL, and when the call outlasts
 * the ECALL's chunk (it ends by age or a conflict while the call runs) the
 * truth lists them at their own times, after that chunk's TS, up to the
 * TS of the next chunk of its cpu and of its thread. On random recordings
 * the truth is given twice: every destination at most its chunk's TS, and
 * the same dependences with destinations at the last instruction of a
 * chunk moved to random times in (TS, the next chunks' TS] (a cpu or
 * thread that never runs again: up to 4 MSP after the log's last TS). To
 * the truth of the recording come dependences between random instructions,
 * many of which a final log does not enforce. Both truths must give the
 * same verdicts, in every format and for the initial log, and the count
 * of violations must be the same. The window once checked such an
 * instruction before the late dependences were read and failed (-1). */
START_TEST(props_verify_takes_truth_dependences_that_come_after_their_chunk)
{
    uint64_t base = tu_seed(0x1a7e000) + (uint64_t)_i * 104729, rng = base;
    uint64_t late_total = 0, violations_total = 0;
    for (int round = 0; round < rounds(10); round++) {
        uint64_t seed = rng;
        synth_config c;
        random_config(&c, &rng);
        rnr_membuf in;
        truth_set truth;
        synth_result res;
        synth_to_memory(&c, &in, &truth, &res);
        size_t n;
        tchunk *ch = initial_chunks(&in, &n);
        uint64_t last_ts = 0;
        for (size_t i = 0; i < n; i++)
            if (ch[i].ts > last_ts)
                last_ts = ch[i].ts;
        truth_set on = { truth.cpus, NULL, 0, 0 }, late = { truth.cpus, NULL, 0, 0 };
        for (size_t i = 0; i < truth.n; i++)
            truth_add(&on, &truth.dep[i]);
        for (int k = 0; n && k < 40; k++) {   /* random pairs: the recording does not order them */
            const tchunk *a = &ch[tu_below(&rng, n)], *b = &ch[tu_below(&rng, n)];
            uint64_t ai = tu_below(&rng, a->cs);
            truth_dep d = { (uint32_t)tu_below(&rng, 3), 64 * tu_below(&rng, 1000),
                            { a->cpu, a->tid, a->lane_start + ai, a->thread_start + ai, a->ts },
                            { b->cpu, b->tid, b->lane_start + b->cs - 1, b->thread_start + b->cs - 1,
                              b->ts } };
            truth_add(&on, &d);
        }
        for (size_t i = 0; i < on.n; i++) {
            truth_dep d = on.dep[i];
            const tchunk *x = chunk_at(ch, n, d.dst.cpu, d.dst.insn);
            ck_assert_ptr_nonnull(x);
            if (d.dst.time > x->ts)
                on.dep[i].dst.time = d.dst.time = x->ts;
            uint64_t bound = x->next_lane_ts < x->next_thread_ts ? x->next_lane_ts : x->next_thread_ts;
            if (bound == UINT64_MAX)
                bound = last_ts + 4 * c.rru.msp;
            if (d.dst.insn == x->lane_start + x->cs - 1 && bound > x->ts && tu_below(&rng, 2)) {
                d.dst.time = x->ts + 1 + tu_below(&rng, bound - x->ts);
                late_total++;
            }
            truth_add(&late, &d);
        }
        char err[RNR_ERR_MAX];
        verify_ctx *v_on = verify_open_mem(in.data, in.len, "initial", err, sizeof err);
        verify_ctx *v_late = verify_open_mem(in.data, in.len, "initial", err, sizeof err);
        ck_assert_msg(v_on && v_late, "%s", err);
        ck_assert_msg(verify_add_truth(v_on, &on, err, sizeof err) == 0, "%s", err);
        ck_assert_msg(verify_add_truth(v_late, &late, err, sizeof err) == 0, "%s", err);
        pass_summary s;
        rnr_membuf mp = pass(PASS_MAXPAR, &in, &s, seed), st = pass(PASS_STITCH, &mp, &s, seed);
        rnr_membuf se = pass(PASS_SERIAL, &mp, &s, seed), sts = pass(PASS_SERIAL, &st, &s, seed);
        const rnr_membuf *logs[5] = { NULL, &mp, &st, &se, &sts };
        static const char *const names[5] = { "initial", "maxpar", "stitched", "serial", "stserial" };
        for (int f = 0; f < 5; f++) {
            verify_report r_on, r_late;
            uint64_t x_on = verdict(v_on, logs[f], &r_on), x_late = verdict(v_late, logs[f], &r_late);
            ck_assert_msg(r_on.ok == r_late.ok && x_on == x_late && r_on.truth == r_late.truth &&
                              r_on.truth == on.n,
                          "seed %#llx (case %d round %d) %s: %llu violations on time (%s), %llu late (%s)",
                          (unsigned long long)seed, _i, round, names[f], (unsigned long long)x_on,
                          r_on.message, (unsigned long long)x_late, r_late.message);
            violations_total += x_on;
        }
        verify_free(v_on);
        verify_free(v_late);
        truth_free(&on);
        truth_free(&late);
        truth_free(&truth);
        free(ch);
        free(in.data);
        free(mp.data);
        free(st.data);
        free(se.data);
        free(sts.data);
    }
    /* The test is about something: late dependences, and violations. */
    ck_assert_uint_gt(late_total, 0);
    ck_assert_uint_gt(violations_total, 0);
}
END_TEST

/* A truth that breaks that bound (a destination time after the TS of the
 * chunk holding the next instruction of its cpu) cannot be checked once
 * the final log has passed that instruction: verify says so, and why. */
START_TEST(props_verify_names_a_truth_dependence_later_than_the_next_chunk)
{
    uint64_t rng = tu_seed(0x1a7e100);
    synth_config c;
    random_config(&c, &rng);
    c.insns = 20000;
    c.rru.msp = 2000;
    rnr_membuf in;
    truth_set truth;
    synth_result res;
    synth_to_memory(&c, &in, &truth, &res);
    size_t n;
    tchunk *ch = initial_chunks(&in, &n);
    uint64_t last_ts = 0;
    for (size_t i = 0; i < n; i++)
        if (ch[i].ts > last_ts)
            last_ts = ch[i].ts;
    ck_assert(n > 4 && ch[0].next_lane_ts < last_ts && ch[0].next_lane_ts + 2 * c.rru.msp < last_ts);
    truth_set bad = { truth.cpus, NULL, 0, 0 };
    /* Into the first chunk's last instruction, at the very end of the run. */
    truth_dep d = { TRUTH_RAW, 64, { ch[n - 1].cpu, ch[n - 1].tid, ch[n - 1].lane_start,
                                     ch[n - 1].thread_start, ch[n - 1].ts },
                    { ch[0].cpu, ch[0].tid, ch[0].lane_start + ch[0].cs - 1,
                      ch[0].thread_start + ch[0].cs - 1, last_ts + 1 } };
    truth_add(&bad, &d);
    char err[RNR_ERR_MAX];
    verify_ctx *v = verify_open_mem(in.data, in.len, "initial", err, sizeof err);
    ck_assert_msg(v != NULL, "%s", err);
    ck_assert_msg(verify_add_truth(v, &bad, err, sizeof err) == 0, "%s", err);
    pass_summary s;
    rnr_membuf mp = pass(PASS_MAXPAR, &in, &s, c.seed), se = pass(PASS_SERIAL, &mp, &s, c.seed);
    const rnr_membuf *logs[3] = { NULL, &mp, &se };
    for (int f = 0; f < 3; f++) {
        verify_report rep;
        int rc;
        if (!logs[f]) {
            rc = verify_initial(v, &rep, err, sizeof err);
        } else {
            rnr_reader *r = rnr_reader_open_io(rnr_io_mem_reader(logs[f]->data, logs[f]->len, "final"),
                                               err, sizeof err);
            ck_assert_msg(r != NULL, "%s", err);
            rc = verify_final(v, r, &rep, err, sizeof err);
            rnr_reader_close(r);
        }
        ck_assert_msg(rc < 0 && strstr(err, "later than a chunk holding an instruction after it") &&
                          strstr(err, "the truth does not match the initial log"),
                      "format %d: rc %d: %s", f, rc, rc < 0 ? err : rep.message);
    }
    verify_free(v);
    truth_free(&bad);
    truth_free(&truth);
    free(ch);
    free(in.data);
    free(mp.data);
    free(se.data);
}
END_TEST

/* The pass's memory follows the MSP window, not the log: the peak of open
 * chunks (and of its own heap) on a log ten times longer stays the same
 * within the noise of a different random stretch. */
START_TEST(props_maxpar_memory_is_flat_on_a_ten_times_longer_log)
{
    if (tu_under_valgrind())
        return;   /* a long log: the release and sanitizer runs check it */
    uint64_t peak_open[2], peak_bytes[2], chunks[2];
    for (int k = 0; k < 2; k++) {
        synth_config c;
        synth_config_windowed(&c, tu_seed(77), k ? 500000 : 30000);
        rnr_membuf in, mp;
        synth_result res;
        synth_to_memory(&c, &in, NULL, &res);
        pass_summary s;
        char err[RNR_ERR_MAX];
        ck_assert_msg(pass_run_memory(PASS_MAXPAR, in.data, in.len, &mp, NULL, &s, err, sizeof err) == 0, "%s", err);
        peak_open[k] = s.maxpar.peak_open;
        peak_bytes[k] = s.maxpar.peak_bytes;
        chunks[k] = s.maxpar.chunks_in;
        free(in.data);
        free(mp.data);
    }
    ck_assert_uint_ge(chunks[1], 10 * chunks[0]);
    printf("maxpar memory: %llu chunks: peak %llu open, %llu bytes; %llu chunks: %llu open, %llu bytes\n",
           (unsigned long long)chunks[0], (unsigned long long)peak_open[0], (unsigned long long)peak_bytes[0],
           (unsigned long long)chunks[1], (unsigned long long)peak_open[1], (unsigned long long)peak_bytes[1]);
    ck_assert_msg(peak_open[1] <= peak_open[0] + peak_open[0] / 2,
                  "open chunks: %llu on %llu chunks, %llu on %llu", (unsigned long long)peak_open[0],
                  (unsigned long long)chunks[0], (unsigned long long)peak_open[1], (unsigned long long)chunks[1]);
    ck_assert_msg(peak_bytes[1] <= peak_bytes[0] + peak_bytes[0] / 2, "bytes: %llu then %llu",
                  (unsigned long long)peak_bytes[0], (unsigned long long)peak_bytes[1]);
    /* ... and both are a small part of the log. */
    ck_assert_uint_lt(peak_open[1] * 10, chunks[1]);
}
END_TEST

/* verify holds a window of the initial log, not the log: on a log more
 * than ten times longer the peaks of initial chunks held, requirements
 * waiting for the final walk and dependences waiting for their destination
 * stay the same within the noise, in every format, with the ground truth,
 * and for the initial log's own check. Holding the whole log (a window of
 * MSP 0) fails the first and last assertions. */
START_TEST(props_verify_memory_is_flat_on_a_ten_times_longer_log)
{
    if (tu_under_valgrind())
        return;   /* a long log: the release and sanitizer runs check it */
    uint64_t peak[2][3], chunks[2];
    for (int k = 0; k < 2; k++) {
        synth_config c;
        synth_config_windowed(&c, tu_seed(78), k ? 2000000 : 180000);
        rnr_membuf in;
        truth_set truth;
        synth_result res;
        synth_to_memory(&c, &in, &truth, &res);
        char err[RNR_ERR_MAX];
        verify_ctx *v = verify_open_mem(in.data, in.len, "initial", err, sizeof err);
        ck_assert_msg(v != NULL, "%s", err);
        ck_assert_uint_eq(verify_window_msp(v), 8000);
        ck_assert_msg(verify_add_truth(v, &truth, err, sizeof err) == 0, "%s", err);
        pass_summary s;
        rnr_membuf mp = pass(PASS_MAXPAR, &in, &s, c.seed), st = pass(PASS_STITCH, &mp, &s, c.seed);
        rnr_membuf se = pass(PASS_SERIAL, &mp, &s, c.seed);
        const rnr_membuf *logs[3] = { &mp, &st, &se };
        memset(peak[k], 0, sizeof peak[k]);
        for (int f = 0; f < 4; f++) {
            verify_report rep;
            if (f < 3) {
                rep = check(v, logs[f]);
            } else {
                ck_assert_msg(verify_initial(v, &rep, err, sizeof err) == 0, "%s", err);
            }
            ck_assert_msg(rep.ok, "format %d: %s", f, rep.message);
            ck_assert_uint_eq(rep.truth, truth.n);
            uint64_t p[3] = { rep.peak_chunks, rep.peak_requirements, rep.peak_pending };
            for (int i = 0; i < 3; i++)
                if (p[i] > peak[k][i])
                    peak[k][i] = p[i];
        }
        chunks[k] = res.chunks;
        verify_free(v);
        truth_free(&truth);
        free(in.data);
        free(mp.data);
        free(st.data);
        free(se.data);
    }
    ck_assert_uint_ge(chunks[1], 10 * chunks[0]);
    printf("verify window: %llu chunks: peak %llu chunks, %llu requirements, %llu pending; "
           "%llu chunks: %llu, %llu, %llu\n",
           (unsigned long long)chunks[0], (unsigned long long)peak[0][0], (unsigned long long)peak[0][1],
           (unsigned long long)peak[0][2], (unsigned long long)chunks[1], (unsigned long long)peak[1][0],
           (unsigned long long)peak[1][1], (unsigned long long)peak[1][2]);
    static const char *const what[3] = { "chunks", "requirements", "pending dependences" };
    for (int i = 0; i < 3; i++)
        ck_assert_msg(peak[1][i] <= peak[0][i] + peak[0][i] / 2 + 16, "%s: %llu on %llu chunks, %llu on %llu",
                      what[i], (unsigned long long)peak[0][i], (unsigned long long)chunks[0],
                      (unsigned long long)peak[1][i], (unsigned long long)chunks[1]);
    ck_assert_uint_lt(peak[1][0] * 10, chunks[1]);
}
END_TEST

/* The tokens in flight of a topological final log's walk: after each
 * chunk, the tokens sent so far minus those awaited so far (docs/backend.md,
 * "Memory while a CPU stays idle"); the most of them over the log. */
static uint64_t tokens_in_flight_bound(const rnr_membuf *log)
{
    char err[RNR_ERR_MAX];
    rnr_reader *r = rnr_reader_open_io(rnr_io_mem_reader(log->data, log->len, "final"), err, sizeof err);
    ck_assert_msg(r != NULL, "%s", err);
    rnr_final_chunk c;
    uint64_t sent = 0, awaited = 0, peak = 0;
    int rc;
    while ((rc = rnr_reader_next_final(r, &c)) == 1) {
        for (uint32_t i = 0; i < c.nptv; i++)
            awaited += c.ptv[i].count;
        sent += c.nstv;
        if (sent - awaited > peak)
            peak = sent - awaited;
    }
    ck_assert_int_eq(rc, 0);
    rnr_reader_close(r);
    return peak;
}

/* A CPU that runs no thread for the whole recording (only OS activity the
 * others' RRUs see as dependences to it) receives a token for each of
 * them, Early ones its next chunk would await, and it never dumps one.
 * The walks under stitch, serial and the metrics hold exactly the stated
 * bound of tokens in flight: the most tokens sent by a prefix of the log
 * and not awaited in it. It grows with the idle stretch (the log ten times
 * longer holds several times more), which is why it is stated, not
 * bounded. */
START_TEST(props_tokens_in_flight_to_an_idle_cpu_are_the_stated_bound)
{
    if (tu_under_valgrind())
        return;   /* a long log: the release and sanitizer runs check it */
    uint64_t bound[2];
    for (int k = 0; k < 2; k++) {
        synth_config c;
        synth_config_default(&c, 4);
        c.seed = tu_seed(4242);
        c.threads = 3;
        c.os_cpus = 1;
        c.os_rate = 2;
        c.insns = k ? 1000000 : 100000;
        c.rru.msp = 8000;
        c.rru.chunk_max = 2000;
        rnr_membuf in;
        truth_set truth;
        synth_result res;
        synth_to_memory(&c, &in, &truth, &res);
        pass_summary s_mp, s_st, s_se, s_sts;
        rnr_membuf mp = pass(PASS_MAXPAR, &in, &s_mp, c.seed), st = pass(PASS_STITCH, &mp, &s_st, c.seed);
        rnr_membuf se = pass(PASS_SERIAL, &mp, &s_se, c.seed), sts = pass(PASS_SERIAL, &st, &s_sts, c.seed);
        uint64_t b_mp = tokens_in_flight_bound(&mp), b_st = tokens_in_flight_bound(&st);
        ck_assert_uint_eq(s_st.dag.peak_tokens, b_mp);
        ck_assert_uint_eq(s_se.dag.peak_tokens, b_mp);
        ck_assert_uint_eq(s_sts.dag.peak_tokens, b_st);
        ck_assert_uint_eq(s_st.dag.peak_waiting, 0);
        dag_metrics m = metrics(&mp);
        ck_assert_uint_eq(m.peak_tokens, b_mp);
        bound[k] = b_mp;
        truth_free(&truth);
        free(in.data);
        free(mp.data);
        free(st.data);
        free(se.data);
        free(sts.data);
    }
    printf("tokens in flight to an idle cpu: %llu, on a log ten times longer %llu\n",
           (unsigned long long)bound[0], (unsigned long long)bound[1]);
    ck_assert_uint_gt(bound[0], 50);
    ck_assert_uint_ge(bound[1], 5 * bound[0]);
}
END_TEST

/* ---- `rnr maxpar - -` fed by a slow producer ----
 * The producer writes the initial log in batches and, before each next
 * batch, waits until the reader of MaxPar's output has seen as many
 * records as the pass can write from the input so far (computed in
 * process). A pass that wrote only at the end, or did not push its output
 * while waiting for input, would leave the producer waiting: timeout. */

typedef struct pipe_run {
    const rnr_initial_chunk *chunks;
    const rnr_sv_entry *sv;          /* sv of chunk i at svoff[i] */
    const uint64_t *svoff;
    uint64_t n, batch;
    uint64_t *expect;                /* records writable after each batch */
    rnr_log_header h;
    int in_fd, out_fd;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    uint64_t seen;
    int reader_done, reader_rc;
} pipe_run;

static void *producer(void *arg)
{
    pipe_run *p = arg;
    char err[RNR_ERR_MAX];
    rnr_writer *w = rnr_writer_open_io(rnr_io_from_fd(p->in_fd, "pipe", 1, 1), &p->h, NULL, err, sizeof err);
    if (!w)
        return NULL;
    uint64_t b = 0;
    for (uint64_t i = 0; i < p->n; i++) {
        rnr_initial_chunk c = p->chunks[i];
        c.sv = (rnr_sv_entry *)(uintptr_t)(p->sv + p->svoff[i]);
        rnr_writer_put_initial(w, &c);
        if ((i + 1) % p->batch == 0 || i + 1 == p->n) {
            rnr_writer_flush(w);
            pthread_mutex_lock(&p->mu);
            while (p->seen < p->expect[b] && !p->reader_done)
                pthread_cond_wait(&p->cv, &p->mu);
            pthread_mutex_unlock(&p->mu);
            b++;
        }
    }
    rnr_writer_close(w, err, sizeof err);
    return NULL;
}

static void *consumer(void *arg)
{
    pipe_run *p = arg;
    char err[RNR_ERR_MAX];
    rnr_reader *r = rnr_reader_open_io(rnr_io_from_fd(p->out_fd, "out", 0, 1), err, sizeof err);
    int rc = -1;
    if (r) {
        rnr_final_chunk c;
        while ((rc = rnr_reader_next_final(r, &c)) == 1) {
            pthread_mutex_lock(&p->mu);
            p->seen++;
            pthread_cond_broadcast(&p->cv);
            pthread_mutex_unlock(&p->mu);
        }
        rnr_reader_close(r);
    }
    pthread_mutex_lock(&p->mu);
    p->reader_done = 1;
    p->reader_rc = rc;
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

typedef struct collect {
    rnr_initial_chunk *c;
    rnr_sv_entry *sv;
    uint64_t *svoff;
    uint64_t n, nsv;
} collect;

static void collect_chunk(void *ctx, const rnr_initial_chunk *c, uint64_t start)
{
    collect *k = ctx;
    (void)start;
    k->c = realloc(k->c, (k->n + 1) * sizeof *k->c);
    k->svoff = realloc(k->svoff, (k->n + 1) * sizeof *k->svoff);
    k->sv = realloc(k->sv, (k->nsv + c->nsv + 1) * sizeof *k->sv);
    k->c[k->n] = *c;
    k->svoff[k->n++] = k->nsv;
    if (c->nsv)
        memcpy(k->sv + k->nsv, c->sv, c->nsv * sizeof *c->sv);
    k->nsv += c->nsv;
}

static int count_emit(void *ctx, const rnr_final_chunk *c)
{
    (void)c;
    (*(uint64_t *)ctx)++;
    return 0;
}

START_TEST(props_maxpar_streams_from_a_slow_producer_through_pipes)
{
    synth_config c;
    synth_config_default(&c, 4);
    c.insns = 60000;
    c.rru.msp = 4000;
    c.rru.chunk_max = 1000;
    collect k = { 0 };
    synth_sink sink = { collect_chunk, NULL, &k };
    synth_result res;
    synth_run(&c, &sink, &res);
    pipe_run p;
    memset(&p, 0, sizeof p);
    p.chunks = k.c;
    p.sv = k.sv;
    p.svoff = k.svoff;
    p.n = k.n;
    p.batch = 40;
    p.h = (rnr_log_header){ .kind = RNR_LOG_INITIAL, .cpus = c.cpus, .msp = c.rru.msp };
    uint64_t nb = (p.n + p.batch - 1) / p.batch;
    p.expect = calloc(nb, sizeof *p.expect);
    /* What the pass writes from each prefix of the input. */
    uint64_t emitted = 0;
    maxpar *m = maxpar_new(c.cpus, c.rru.msp, count_emit, &emitted);
    for (uint64_t i = 0; i < p.n; i++) {
        rnr_initial_chunk x = k.c[i];
        x.sv = k.sv + k.svoff[i];
        ck_assert_int_eq(maxpar_add(m, &x), 0);
        if ((i + 1) % p.batch == 0 || i + 1 == p.n)
            p.expect[i / p.batch] = i + 1 == p.n ? 0 : emitted;
    }
    maxpar_free(m);
    ck_assert_uint_gt(p.expect[nb / 2], 0);      /* the test has teeth */
    int in[2], out[2];
    ck_assert_int_eq(pipe(in), 0);
    ck_assert_int_eq(pipe(out), 0);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, in[0], 0);
    posix_spawn_file_actions_adddup2(&fa, out[1], 1);
    posix_spawn_file_actions_addclose(&fa, in[1]);
    posix_spawn_file_actions_addclose(&fa, out[0]);
    const char *argv[] = { tu_rnr_bin(), "maxpar", "-", "-", NULL };
    pid_t pid;
    ck_assert_int_eq(posix_spawn(&pid, argv[0], &fa, NULL, (char *const *)argv, environ), 0);
    posix_spawn_file_actions_destroy(&fa);
    close(in[0]);
    close(out[1]);
    p.in_fd = in[1];
    p.out_fd = out[0];
    pthread_mutex_init(&p.mu, NULL);
    pthread_cond_init(&p.cv, NULL);
    pthread_t tp, tc;
    pthread_create(&tc, NULL, consumer, &p);
    pthread_create(&tp, NULL, producer, &p);
    pthread_join(tp, NULL);
    pthread_join(tc, NULL);
    int status;
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    ck_assert_int_eq(p.reader_rc, 0);
    ck_assert_uint_gt(p.seen, p.expect[nb - 2]);
    free(p.expect);
    free(k.c);
    free(k.sv);
    free(k.svoff);
}
END_TEST

TU_SUITE(backend_props)
{
    Suite *s = suite_create("backend_props");
    TCase *tc = tu_tcase(s, "random", 120);
    tcase_add_loop_test(tc, props_every_format_verifies_and_metrics_are_ordered, 0, 40);
    tcase_add_loop_test(tc, props_verify_takes_truth_dependences_that_come_after_their_chunk, 0, 8);
    tcase_add_test(tc, props_verify_names_a_truth_dependence_later_than_the_next_chunk);
    tc = tu_tcase(s, "stream", 60);
    tcase_add_test(tc, props_maxpar_memory_is_flat_on_a_ten_times_longer_log);
    tcase_add_test(tc, props_verify_memory_is_flat_on_a_ten_times_longer_log);
    tcase_add_test(tc, props_tokens_in_flight_to_an_idle_cpu_are_the_stated_bound);
    tcase_add_test(tc, props_maxpar_streams_from_a_slow_producer_through_pipes);
    return s;
}
