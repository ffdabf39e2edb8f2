/* tests/test_synth.c: the RRU model (signatures, rru_unit) and the
 * synthetic execution that drives it: conflicts, eviction, serialization,
 * bounded silence, determinism, and ground truth the initial log enforces. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "backend/synth.h"
#include "backend/verify.h"
#include "rru/rru_unit.h"
#include "rru/signature.h"
#include "tests/testutil.h"

/* ---- signatures ---- */

START_TEST(signature_exact_set_matches_a_reference_set)
{
    uint64_t seed = tu_seed(0x51a0), rng = seed;
    sig *s = sig_new(0, 0);
    uint64_t ref[600];
    for (int round = 0; round < 40; round++) {
        size_t n = tu_below(&rng, 600);
        for (size_t i = 0; i < n; i++) {
            ref[i] = tu_below(&rng, 4) ? tu_below(&rng, 1000) : tu_rand(&rng);
            sig_insert(s, ref[i]);
        }
        for (size_t i = 0; i < n; i++)
            ck_assert_msg(sig_test(s, ref[i]), "seed %#llx: inserted line missing", (unsigned long long)seed);
        for (int k = 0; k < 2000; k++) {
            uint64_t x = tu_below(&rng, 2) ? tu_below(&rng, 1000) : tu_rand(&rng);
            int in = 0;
            for (size_t i = 0; i < n && !in; i++)
                in = ref[i] == x;
            ck_assert_msg(sig_test(s, x) == in, "seed %#llx: line %llx answered %d", (unsigned long long)seed,
                          (unsigned long long)x, !in);
        }
        sig_clear(s);
        ck_assert(sig_empty(s));
        for (size_t i = 0; i < n; i++)
            ck_assert(!sig_test(s, ref[i]));
    }
    sig_free(s);
}
END_TEST

/* Line addresses (multiples of 64) as the machine reports them: pages
 * shared by many lines, neighbouring lines of other pages, growth of the
 * table across clears, and the distinct count. */
START_TEST(signature_exact_set_of_line_addresses)
{
    uint64_t seed = tu_seed(0x51a2), rng = seed;
    sig *s = sig_new(0, 0);
    enum { N = 3000 };
    static uint64_t ref[N];
    for (int round = 0; round < 12; round++) {
        size_t n = tu_below(&rng, N), distinct = 0;
        uint64_t pages = 1 + tu_below(&rng, 200);
        for (size_t i = 0; i < n; i++) {
            uint64_t line = (0x7fff0000ull + tu_below(&rng, pages)) << 12 | tu_below(&rng, 64) << 6;
            int dup = 0;
            for (size_t j = 0; j < distinct && !dup; j++)
                dup = ref[j] == line;
            if (!dup)
                ref[distinct++] = line;
            sig_insert(s, line);
        }
        ck_assert_msg(sig_count(s) == distinct, "seed %#llx: count %llu, %zu distinct lines",
                      (unsigned long long)seed, (unsigned long long)sig_count(s), distinct);
        for (size_t i = 0; i < distinct; i++)
            ck_assert_msg(sig_test(s, ref[i]), "seed %#llx: inserted line missing", (unsigned long long)seed);
        for (int k = 0; k < 3000; k++) {
            /* a line of a page in the set, of a neighbouring page, or one
             * differing in a low bit (not a line address: another key) */
            uint64_t x = (0x7fff0000ull + tu_below(&rng, pages + 2)) << 12 | tu_below(&rng, 64) << 6;
            if (k % 7 == 0)
                x |= 1ull << tu_below(&rng, 6);
            int in = 0;
            for (size_t i = 0; i < distinct && !in; i++)
                in = ref[i] == x;
            ck_assert_msg(sig_test(s, x) == in, "seed %#llx: line %llx answered %d", (unsigned long long)seed,
                          (unsigned long long)x, !in);
        }
        sig_clear(s);
        ck_assert(sig_empty(s) && sig_count(s) == 0);
        for (size_t i = 0; i < distinct; i++)
            ck_assert(!sig_test(s, ref[i]));
    }
    sig_free(s);
}
END_TEST

START_TEST(signature_bloom_has_no_false_negatives_and_few_false_positives)
{
    uint64_t rng = tu_seed(0x51a1);
    sig *s = sig_new(4096, 4);
    uint64_t in[200];
    for (int i = 0; i < 200; i++) {
        in[i] = tu_rand(&rng);
        sig_insert(s, in[i]);
    }
    for (int i = 0; i < 200; i++)
        ck_assert(sig_test(s, in[i]));
    int fp = 0;
    for (int i = 0; i < 10000; i++)
        fp += sig_test(s, tu_rand(&rng));
    /* 200 lines in 4096 bits with 4 hashes: about 0.2% false positives. */
    ck_assert_int_lt(fp, 200);
    ck_assert_int_gt(fp, 0);       /* it is a Bloom filter, not a set */
    sig_clear(s);
    for (int i = 0; i < 200; i++)
        ck_assert(!sig_test(s, in[i]));
    sig_free(s);
}
END_TEST

/* ---- rru_unit ---- */

typedef struct drained {
    rnr_initial_chunk c[64];
    rnr_sv_entry sv[64][8];
    uint64_t start[64];
    int n;
} drained;

static void keep(void *ctx, const rnr_initial_chunk *c, uint64_t start)
{
    drained *d = ctx;
    ck_assert_int_lt(d->n, 64);
    d->c[d->n] = *c;
    if (c->nsv)
        memcpy(d->sv[d->n], c->sv, c->nsv * sizeof *c->sv);
    d->c[d->n].sv = d->sv[d->n];
    d->start[d->n] = start;
    d->n++;
}

static rru_unit *unit(uint32_t cpus, uint32_t k, uint32_t cluster_chunks, rru_config *cfg)
{
    rru_config_default(cfg, cpus);
    cfg->clusters = k;
    cfg->cluster_chunks = cluster_chunks;
    cfg->msp = 100000;
    return rru_unit_new(cfg, 0);
}

START_TEST(rru_conflict_with_current_cluster_ends_chunk_at_snoop_time)
{
    rru_config cfg;
    rru_unit *u = unit(3, 4, 4, &cfg);
    rru_enable(u, 0, 7);
    rru_retire(u, 5, 10);
    rru_access(u, 5, 0x40, 1, 1);
    rru_retire(u, 8, 3);
    ck_assert_int_eq(rru_snoop(u, 9, 2, 0x99, 1), 0);  /* another line */
    ck_assert_int_eq(rru_snoop(u, 10, 1, 0x40, 0), 1);  /* reads what we wrote */
    rru_retire(u, 12, 4);                                /* the next chunk */
    drained d = { .n = 0 };
    rru_drain(u, 64, keep, &d);
    ck_assert_int_eq(d.n, 0);      /* its cluster may still gain entries (from cpu 2) */
    rru_serialize(u, 20, RNR_END_SWITCH);
    rru_drain(u, 64, keep, &d);
    ck_assert_int_eq(d.n, 0);      /* the older cluster is still in the window */
    rru_tick(u, 10 + cfg.msp / 4); /* ... until it grows old: evicted */
    rru_drain(u, 64, keep, &d);
    ck_assert_int_eq(d.n, 2);
    ck_assert_uint_eq(d.c[0].ts, 10);
    ck_assert_uint_eq(d.c[0].cs, 13);
    ck_assert_uint_eq(d.c[0].tid, 7);
    ck_assert_uint_eq(d.c[0].reason, RNR_END_CONFLICT);
    ck_assert_uint_eq(d.start[0], 5);
    /* cpu 1 at 10 (the conflict), cpu 2 at the eviction. */
    ck_assert_uint_eq(d.c[0].nsv, 2);
    ck_assert_uint_eq(d.c[0].sv[0].cpu, 1);
    ck_assert_uint_eq(d.c[0].sv[0].ts, 10);
    ck_assert_uint_eq(d.c[0].sv[1].cpu, 2);
    ck_assert_uint_eq(d.c[0].sv[1].ts, 10 + cfg.msp / 4);
    /* The serialization: every entry of the newest cluster at 20. */
    ck_assert_uint_eq(d.c[1].sv[0].ts, 20);
    ck_assert_uint_eq(d.c[1].sv[1].ts, 20);
    ck_assert_uint_eq(d.c[1].reason, RNR_END_SWITCH);
    ck_assert_uint_eq(d.c[1].cs, 4);
    ck_assert_uint_eq(d.c[1].nsv, 2);
    rru_unit_free(u);
}
END_TEST

START_TEST(rru_conflict_with_older_cluster_sets_sv_without_ending_chunk)
{
    rru_config cfg;
    rru_unit *u = unit(2, 4, 1, &cfg);            /* one chunk per cluster */
    rru_enable(u, 0, 1);
    rru_retire(u, 1, 5);
    rru_access(u, 1, 0x80, 1, 1);
    rru_terminate(u, 2, RNR_END_SYSCALL);         /* chunk and cluster end */
    rru_retire(u, 3, 5);
    ck_assert_int_eq(rru_snoop(u, 4, 1, 0x80, 0), 1);
    rru_retire(u, 5, 5);                          /* the current chunk goes on */
    drained d = { .n = 0 };
    rru_drain(u, 64, keep, &d);
    ck_assert_int_eq(d.n, 1);                     /* SV complete: final at once */
    ck_assert_uint_eq(d.c[0].reason, RNR_END_SYSCALL);
    ck_assert_uint_eq(d.c[0].ts, 2);
    ck_assert_uint_eq(d.c[0].nsv, 1);
    ck_assert_uint_eq(d.c[0].sv[0].ts, 4);
    rru_terminate(u, 6, RNR_END_EXIT);
    rru_unit_stop(u, 7);
    rru_drain(u, 64, keep, &d);
    ck_assert_int_eq(d.n, 2);
    ck_assert_uint_eq(d.c[1].cs, 10);
    ck_assert_uint_eq(d.c[1].nsv, 0);             /* stop adds no eviction dependences */
    rru_unit_free(u);
}
END_TEST

START_TEST(rru_reads_of_read_lines_do_not_conflict)
{
    rru_config cfg;
    rru_unit *u = unit(2, 2, 4, &cfg);
    rru_enable(u, 0, 1);
    rru_retire(u, 1, 1);
    rru_access(u, 1, 0x10, 0, 1);
    ck_assert_int_eq(rru_snoop(u, 2, 1, 0x10, 0), 0);   /* read vs read */
    ck_assert_int_eq(rru_snoop(u, 3, 1, 0x10, 1), 1);   /* write vs read */
    rru_unit_free(u);
}
END_TEST

START_TEST(rru_eviction_sets_every_null_entry_to_now)
{
    rru_config cfg;
    rru_unit *u = unit(3, 2, 1, &cfg);            /* K = 2: one closed cluster kept */
    rru_enable(u, 0, 1);
    for (uint64_t t = 1; t <= 3; t++) {
        rru_retire(u, 10 * t, 5);
        rru_access(u, 10 * t, 0x100 + t, 1, 1);
        if (t == 1)
            ck_assert_int_eq(rru_snoop(u, 10 * t + 1, 2, 0x101, 0), 1);
        rru_terminate(u, 10 * t + 2, RNR_END_SIZE);
    }
    drained d = { .n = 0 };
    rru_drain(u, 64, keep, &d);
    /* Closing the third cluster evicted the second; the first was evicted
     * when the second closed (at 22): its cpu 1 entry became 22, its cpu 2
     * entry stayed the conflict at 11. */
    ck_assert_int_eq(d.n, 2);
    ck_assert_uint_eq(d.c[0].nsv, 2);
    ck_assert_uint_eq(d.c[0].sv[0].cpu, 1);
    ck_assert_uint_eq(d.c[0].sv[0].ts, 22);
    ck_assert_uint_eq(d.c[0].sv[1].cpu, 2);
    ck_assert_uint_eq(d.c[0].sv[1].ts, 11);
    ck_assert_uint_eq(d.c[1].sv[0].ts, 32);
    ck_assert_uint_eq(d.c[1].sv[1].ts, 32);
    rru_unit_free(u);
}
END_TEST

START_TEST(rru_bus_access_gives_the_chunk_a_later_ts)
{
    rru_config cfg;
    rru_unit *u = unit(2, 2, 4, &cfg);
    rru_enable(u, 0, 1);
    rru_retire(u, 100, 3);
    rru_access(u, 100, 0x5, 0, 1);
    rru_terminate(u, 100, RNR_END_SYSCALL);
    rru_retire(u, 101, 3);
    rru_access(u, 101, 0x6, 0, 0);                /* a hit: no bus */
    rru_terminate(u, 101, RNR_END_SYSCALL);
    rru_unit_stop(u, 102);
    drained d = { .n = 0 };
    rru_drain(u, 64, keep, &d);
    ck_assert_int_eq(d.n, 2);
    ck_assert_uint_eq(d.c[0].ts, 101);            /* > its bus access at 100 */
    ck_assert_uint_eq(d.c[1].ts, 101);
    rru_unit_free(u);
}
END_TEST

/* Bounded silence with only time passing: every chunk ends by age, becomes
 * final within 5/8 MSP of its start, and the deadline is start + MSP. */
START_TEST(rru_age_ends_chunks_and_evicts_within_bounded_silence)
{
    rru_config cfg;
    rru_unit *u = unit(4, 4, 4, &cfg);
    cfg.msp = 1600;
    rru_unit_free(u);
    u = rru_unit_new(&cfg, 0);
    rru_enable(u, 0, 1);
    drained d = { .n = 0 };
    for (uint64_t t = 1; t < 20000 && d.n < 60; t += 10) {
        rru_retire(u, t, 10);
        rru_access(u, t, t % 50, t % 3 == 0, 0);
        rru_tick(u, t);
        while (rru_ready(u)) {
            ck_assert_uint_le(t, rru_deadline(u));
            rru_drain(u, 1, keep, &d);
            ck_assert_uint_le(t, d.start[d.n - 1] + cfg.msp * 5 / 8 + 10);
        }
    }
    ck_assert_int_ge(d.n, 20);
    for (int i = 0; i < d.n; i++) {
        ck_assert_uint_eq(d.c[i].reason, RNR_END_AGE);
        ck_assert_uint_le(d.c[i].ts - d.start[i], cfg.msp / 4 + 10);
    }
    rru_unit_free(u);
}
END_TEST

/* ---- the synthetic execution ---- */

typedef struct capture {
    uint64_t n, cap;
    rnr_initial_chunk *c;
    uint64_t *start;
    rnr_sv_entry *sv;            /* all SV entries, copied */
    uint64_t nsv, svcap;
} capture;

static void cap_chunk(void *ctx, const rnr_initial_chunk *c, uint64_t start)
{
    capture *k = ctx;
    if (k->n == k->cap) {
        k->cap = k->cap ? 2 * k->cap : 256;
        k->c = realloc(k->c, k->cap * sizeof *k->c);
        k->start = realloc(k->start, k->cap * sizeof *k->start);
    }
    if (k->nsv + c->nsv > k->svcap) {
        k->svcap = 2 * (k->nsv + c->nsv) + 256;
        k->sv = realloc(k->sv, k->svcap * sizeof *k->sv);
    }
    k->c[k->n] = *c;
    k->c[k->n].sv = (rnr_sv_entry *)(uintptr_t)k->nsv;   /* an offset until the end */
    if (c->nsv)
        memcpy(k->sv + k->nsv, c->sv, c->nsv * sizeof *c->sv);
    k->nsv += c->nsv;
    k->start[k->n++] = start;
}

static void random_config(synth_config *c, uint64_t *rng)
{
    uint32_t cpus = 2 + (uint32_t)tu_below(rng, 6);
    synth_config_default(c, cpus);
    c->seed = tu_rand(rng);
    c->threads = cpus + (uint32_t)tu_below(rng, 3);
    c->os_cpus = (uint32_t)tu_below(rng, 2);
    c->insns = 2000 + tu_below(rng, 6000);
    c->shared_lines = 4 + (uint32_t)tu_below(rng, 60);
    c->sharing = 0.002 + 0.03 * (double)tu_below(rng, 100) / 100.0;
    c->private_lines = 16;
    c->os_rate = (double)tu_below(rng, 10);
    c->quantum = tu_below(rng, 2) ? 300 + tu_below(rng, 3000) : 0;
    c->block_rate = tu_below(rng, 2) ? 0.002 : 0;
    c->syscall_rate = 0.1 * (double)tu_below(rng, 3);
    c->adversarial = tu_below(rng, 4) != 0;
    c->rru.clusters = 2 + (uint32_t)tu_below(rng, 4);
    c->rru.cluster_chunks = 1 + (uint32_t)tu_below(rng, 4);
    c->rru.sig_bits = tu_below(rng, 2) ? 64u << tu_below(rng, 4) : 0;
    c->rru.chunk_max = 100 + tu_below(rng, 3000);
    c->rru.msp = 1000 + tu_below(rng, 8000);
}

START_TEST(synth_log_keeps_bounded_silence_and_log_invariants)
{
    uint64_t seed = tu_seed(0x5e00) + (uint64_t)_i, rng = seed;
    for (int round = 0; round < 10; round++) {
        synth_config c;
        random_config(&c, &rng);
        char err[RNR_ERR_MAX];
        ck_assert_msg(synth_config_check(&c, err, sizeof err) == 0, "%s", err);
        capture k = { 0 };
        synth_sink sink = { cap_chunk, NULL, &k };
        synth_result res;
        synth_run(&c, &sink, &res);
        ck_assert_uint_eq(res.chunks, k.n);
        ck_assert_uint_eq(res.instructions, (uint64_t)c.threads * c.insns);
        uint64_t maxts = 0, last_ts[SYNTH_MAX_CPUS] = { 0 };
        /* Y before X in the log => Y.ts <= X.start + MSP (dump order). */
        for (uint64_t i = 0; i < k.n; i++) {
            const rnr_initial_chunk *x = &k.c[i];
            ck_assert_msg(maxts <= k.start[i] + c.rru.msp,
                          "seed %#llx round %d: chunk %llu (start %llu) follows a chunk with TS %llu",
                          (unsigned long long)seed, round, (unsigned long long)i,
                          (unsigned long long)k.start[i], (unsigned long long)maxts);
            ck_assert_uint_ge(x->ts, last_ts[x->cpu]);
            ck_assert_uint_ge(x->ts, k.start[i]);
            last_ts[x->cpu] = x->ts;
            const rnr_sv_entry *sv = k.sv + (uintptr_t)x->sv;
            for (uint32_t j = 0; j < x->nsv; j++) {
                ck_assert_uint_ge(sv[j].ts, x->ts);
                /* a cluster is final before its deadline */
                ck_assert_uint_le(sv[j].ts, k.start[i] + c.rru.msp);
            }
            if (x->ts > maxts)
                maxts = x->ts;
        }
        free(k.c);
        free(k.start);
        free(k.sv);
    }
}
END_TEST

START_TEST(synth_is_deterministic_in_its_config)
{
    synth_config c;
    synth_config_default(&c, 4);
    c.insns = 20000;
    c.quantum = 1000;
    c.threads = 6;
    rnr_membuf a, b, x;
    synth_result r;
    synth_to_memory(&c, &a, NULL, &r);
    synth_to_memory(&c, &b, NULL, &r);
    c.seed++;
    synth_to_memory(&c, &x, NULL, &r);
    ck_assert_uint_eq(a.len, b.len);
    ck_assert(memcmp(a.data, b.data, a.len) == 0);
    ck_assert(x.len != a.len || memcmp(a.data, x.data, a.len) != 0);
    free(a.data);
    free(b.data);
    free(x.data);
}
END_TEST

/* The recorder is sound: the initial log's own DAG orders every
 * conflicting pair of monitored accesses (exact or Bloom signatures,
 * eviction, idle cpus, migrations, adversarial drains). */
START_TEST(synth_initial_log_enforces_the_ground_truth)
{
    uint64_t seed = tu_seed(0x5e40) + (uint64_t)_i, rng = seed;
    for (int round = 0; round < 12; round++) {
        synth_config c;
        random_config(&c, &rng);
        rnr_membuf m;
        truth_set t;
        synth_result res;
        synth_to_memory(&c, &m, &t, &res);
        char err[RNR_ERR_MAX];
        verify_ctx *v = verify_open_mem(m.data, m.len, "initial", err, sizeof err);
        ck_assert_msg(v != NULL, "%s", err);
        ck_assert_msg(verify_add_truth(v, &t, err, sizeof err) == 0, "seed %#llx: %s",
                      (unsigned long long)seed, err);
        verify_report rep;
        ck_assert_msg(verify_initial(v, &rep, err, sizeof err) == 0, "seed %#llx: %s",
                      (unsigned long long)seed, err);
        ck_assert_msg(rep.ok, "seed %#llx round %d: %s", (unsigned long long)seed, round, rep.message);
        ck_assert_uint_eq(rep.truth, t.n);
        verify_free(v);
        truth_free(&t);
        free(m.data);
    }
}
END_TEST

/* The recorder's shortcuts against a reference unit. Unit A has exact
 * signatures and is driven the way driver/record.c drives it: reports
 * through rru_report while the room it keeps from rru_report_room allows
 * (else retire + access), snoops
 * skipped when its summary bit is clear or rru_snoop_hits says 0. Unit B
 * has a Bloom signature so large that it has no false positives on these
 * few lines, no summaries, and gets every call plainly. Both must record
 * the same snoop hits and drain the same log: a summary with a false
 * negative (say, a union word rebuilt without a live cluster), a snoop
 * skipped wrongly, or a report counted into the wrong chunk shows up as
 * a difference. Small chunks, clusters and MSP make clusters end, get
 * evicted and be released (the unions' stale words) all the time. */
typedef struct chunk_log {
    rnr_initial_chunk c[4096];
    rnr_sv_entry sv[4096][4];
    int n;
} chunk_log;

static void keep_log(void *ctx, const rnr_initial_chunk *c, uint64_t start)
{
    chunk_log *d = ctx;
    (void)start;
    ck_assert_int_lt(d->n, 4096);
    d->c[d->n] = *c;
    if (c->nsv)
        memcpy(d->sv[d->n], c->sv, c->nsv * sizeof *c->sv);
    d->c[d->n].sv = NULL;
    d->n++;
}

START_TEST(rru_recorder_shortcuts_match_a_unit_without_them)
{
    uint64_t rng = tu_seed(0x5eed0000u + (uint64_t)_i);
    rru_config ca, cb;
    rru_config_default(&ca, 4);
    ca.clusters = 2 + (uint32_t)tu_below(&rng, 3);
    ca.cluster_chunks = 1 + (uint32_t)tu_below(&rng, 3);
    ca.chunk_max = 8 + tu_below(&rng, 40);
    ca.msp = 256 + tu_below(&rng, 512);
    cb = ca;
    cb.sig_bits = SIG_MAX_BITS;
    cb.sig_hashes = 8;
    rru_unit *a = rru_unit_new(&ca, 0), *b = rru_unit_new(&cb, 0);
    ck_assert_ptr_nonnull(rru_snoop_summary(a, 0));
    ck_assert_ptr_null(rru_snoop_summary(b, 1));
    static chunk_log la, lb;
    la.n = lb.n = 0;
    uint64_t now = 1, pending = 0, hits = 0, skipped = 0, room;
    rru_enable(a, now, 7);
    rru_enable(b, now, 7);
    room = rru_report_room(a);
    /* Under valgrind (memory errors, not the property) a fifth. */
    const int steps = tu_under_valgrind() ? 4000 : 20000;
    for (int step = 0; step < steps; step++) {
        now += tu_below(&rng, 4);
        /* 48 lines over 3 pages: groups shared, summary bits reused */
        uint64_t line = (tu_below(&rng, 3) << 12) + (tu_below(&rng, 16) << 6);
        int write = (int)tu_below(&rng, 2);
        unsigned op = (unsigned)tu_below(&rng, 100);
        if (op < 40) {                          /* instructions retired */
            pending += 1 + tu_below(&rng, 6);
            continue;
        }
        if (op < 75) {                          /* a report */
            if (room && pending <= room) {
                room -= pending;
                rru_report(a, line, write, pending);
                ck_assert_uint_eq(room, rru_report_room(a));
            } else {
                rru_retire(a, now, pending);
                rru_access(a, now, line, write, 0);
                room = rru_report_room(a);
            }
            rru_retire(b, now, pending);
            rru_access(b, now, line, write, 0);
            pending = 0;
            continue;
        }
        rru_retire(a, now, pending);
        rru_retire(b, now, pending);
        pending = 0;
        if (op < 95) {                          /* a snoop from another cpu */
            uint32_t from = 1 + (uint32_t)tu_below(&rng, 3);
            now++;
            const uint64_t *sum = rru_snoop_summary(a, write);
            uint32_t bit = rru_summary_bit(line);
            int predicted = ((sum[bit >> 6] >> (bit & 63)) & 1) &&
                            rru_snoop_hits(a, from, line, rru_line_hash(line), write);
            int ha = predicted ? rru_snoop(a, now, from, line, write) : 0;
            int hb = rru_snoop(b, now, from, line, write);
            ck_assert_int_eq(ha, hb);
            if (predicted)
                ck_assert_int_eq(ha, 1);
            hits += (uint64_t)hb;
            skipped += (uint64_t)!predicted;
            now++;
        } else if (op < 98) {
            rru_tick(a, now);
            rru_tick(b, now);
        } else if (op < 99) {
            rru_terminate(a, now, RNR_END_SYSCALL);
            rru_terminate(b, now, RNR_END_SYSCALL);
        } else {
            rru_serialize(a, now, RNR_END_SERIALIZE);
            rru_serialize(b, now, RNR_END_SERIALIZE);
            now += 2;
        }
        rru_drain(a, UINT32_MAX, keep_log, &la);
        rru_drain(b, UINT32_MAX, keep_log, &lb);
        room = rru_report_room(a);
    }
    rru_retire(a, now, pending);
    rru_retire(b, now, pending);
    rru_unit_stop(a, now);
    rru_unit_stop(b, now);
    rru_drain(a, UINT32_MAX, keep_log, &la);
    rru_drain(b, UINT32_MAX, keep_log, &lb);
    /* the run exercised what it is about (100 of each in 20000 steps) */
    ck_assert_uint_gt(hits, (uint64_t)steps / 200);
    ck_assert_uint_gt(skipped, (uint64_t)steps / 200);
    ck_assert_uint_gt(rru_unit_counters(a)->clusters, (uint64_t)steps / 200);
    ck_assert_int_eq(la.n, lb.n);
    for (int i = 0; i < la.n; i++) {
        const rnr_initial_chunk *x = &la.c[i], *y = &lb.c[i];
        ck_assert_uint_eq(x->ts, y->ts);
        ck_assert_uint_eq(x->cs, y->cs);
        ck_assert_uint_eq(x->reason, y->reason);
        ck_assert_uint_eq(x->nsv, y->nsv);
        ck_assert_int_eq(memcmp(la.sv[i], lb.sv[i], x->nsv * sizeof la.sv[i][0]), 0);
    }
    rru_unit_free(a);
    rru_unit_free(b);
}
END_TEST

TU_SUITE(synth)
{
    Suite *s = suite_create("synth");
    TCase *tc = tu_tcase(s, "signature", 20);
    tcase_add_test(tc, signature_exact_set_matches_a_reference_set);
    tcase_add_test(tc, signature_exact_set_of_line_addresses);
    tcase_add_test(tc, signature_bloom_has_no_false_negatives_and_few_false_positives);
    tc = tu_tcase(s, "rru", 20);
    tcase_add_test(tc, rru_conflict_with_current_cluster_ends_chunk_at_snoop_time);
    tcase_add_test(tc, rru_conflict_with_older_cluster_sets_sv_without_ending_chunk);
    tcase_add_test(tc, rru_reads_of_read_lines_do_not_conflict);
    tcase_add_test(tc, rru_eviction_sets_every_null_entry_to_now);
    tcase_add_test(tc, rru_bus_access_gives_the_chunk_a_later_ts);
    tcase_add_test(tc, rru_age_ends_chunks_and_evicts_within_bounded_silence);
    tcase_add_loop_test(tc, rru_recorder_shortcuts_match_a_unit_without_them, 0, 8);
    tc = tu_tcase(s, "generator", 60);
    tcase_add_loop_test(tc, synth_log_keeps_bounded_silence_and_log_invariants, 0, 8);
    tcase_add_test(tc, synth_is_deterministic_in_its_config);
    tcase_add_loop_test(tc, synth_initial_log_enforces_the_ground_truth, 0, 8);
    return s;
}
