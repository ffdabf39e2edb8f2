/* tests/test_backend_pinned.c: MaxPar's output pinned on fixed synthetic
 * recordings. For each row of the table the test generates the initial log
 * (fixed seed and configuration), runs the pass and compares three SHA-256
 * digests with the ones written below, taken from the implementation as of
 * commit 1409b72 (input and output re-pinned when RNR_LOG_VERSION became 3:
 * only the header's version byte and checksum moved):
 *   input:    the initial log's bytes (if this one moved, backend/synth.c
 *             or the writer changed, not MaxPar: re-pin the row);
 *   output:   the MaxPar log's bytes, as `rnr maxpar` writes them;
 *   schedule: every emitted chunk with the number of input chunks the pass
 *             had been given when it emitted it, then the pass's counters:
 *             the order and the moment of every write, so that a change of
 *             the bounded-delay behaviour fails too, not only one of the
 *             bytes.
 * Any change to MaxPar that alters its output fails here. A deliberate
 * change of the output re-pins the rows (the failure prints all three)
 * and says why in its commit. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/maxpar.h"
#include "backend/passes.h"
#include "backend/synth.h"
#include "formats/digest.h"
#include "tests/testutil.h"

typedef struct pinned_case {
    const char *name;
    uint32_t cpus, threads, os_cpus;  /* threads 0: one per cpu */
    const char *sharing;          /* low, medium, high */
    uint64_t insns, seed;
    uint32_t clusters, cluster_chunks, sig_bits;
    uint64_t chunk_max, msp, quantum;
    double block_rate;
    int eager;                    /* drain eagerly instead of adversarially */
    int msp_unknown;              /* run the pass as if the MSP were 0 */
    const char *input, *output, *schedule;
} pinned_case;

static const pinned_case cases[] = {
    { .name = "8 cpus, medium, the benchmark's shape", .cpus = 8, .sharing = "medium", .insns = 2000000,
      .seed = 7, .clusters = 4, .cluster_chunks = 4, .chunk_max = 500, .msp = 20000,
      .input = "e42c180a75e84f30470b9b7a52e833f819a4f8e1666728e43647a871381e62a8",
      .output = "c90910e097fa09b8e49aa223c10aa39da9cca527cdd1fd80af34959410fbd828",
      .schedule = "d40d614bef4ece4b52c82d3d63079c571a171a0a26e4c6a529d4bde328ff2b8e" },
    { .name = "8 cpus, high sharing, K=2, Bloom 256", .cpus = 8, .sharing = "high", .insns = 1000000, .seed = 11,
      .clusters = 2, .cluster_chunks = 2, .sig_bits = 256, .chunk_max = 800, .msp = 20000,
      .input = "9287a4c730b6f6cf4fe241ecbe0645c5db0679b925e229a467014bf80aa8a55f",
      .output = "f0ad0513157eeffc6d2db999aa73fd8009557d67d62eef72ba64591c5c6b2b6f",
      .schedule = "caef1c5e647baca0ee898feb41ae0bc302beb53079931caf347f75774199878d" },
    { .name = "4 cpus, high, K=4, Bloom 64, tight MSP, blocking", .cpus = 4, .threads = 5, .os_cpus = 1,
      .sharing = "high", .insns = 300000, .seed = 12, .clusters = 4, .cluster_chunks = 1, .sig_bits = 64,
      .chunk_max = 300, .msp = 400, .quantum = 3000, .block_rate = 0.002,
      .input = "d1b8e3f9745b3897805a066ddbf39ebd35c03fa03d95db25d67fc479a13cfdaa",
      .output = "a3021bfe92e5d241556d63af069dd6d163381b77c25fea94ece00fbb5320f820",
      .schedule = "6f379a11c6b98bc9d055eb2f5c54efde4b4825043645dbe6bc5e5cf9ae6d1399" },
    { .name = "16 cpus, high, K=4, Bloom 512, idle cpus, migrations", .cpus = 16, .threads = 18, .os_cpus = 2,
      .sharing = "high", .insns = 300000, .seed = 13, .clusters = 4, .cluster_chunks = 3, .sig_bits = 512,
      .chunk_max = 1000, .msp = 20000, .quantum = 5000, .block_rate = 0.001,
      .input = "fdfe4b3eef80421fb748cb6e84b805d1ec31411ddf8007e36447be3b6e7e0dcc",
      .output = "0274c79d2c0506a894a77ce7554d21599124b936146a8674ab2efc057c9e20d2",
      .schedule = "ea9817ede8e977139f3fa75e67be5ad21ebd7ec66c78ef14ed2bd376f44bc1ca" },
    { .name = "16 cpus, medium, K=2, tight MSP", .cpus = 16, .sharing = "medium", .insns = 200000, .seed = 19,
      .clusters = 2, .cluster_chunks = 2, .chunk_max = 400, .msp = 300,
      .input = "40d8d8f5414cc12c63bdfa0f12b756440f68802dc53d620bb9701ece81ba5491",
      .output = "e1eb8db2f430ebb77587744b741ca194537ca2e39baba2ed6004e7cf4c5e0884",
      .schedule = "0d652d51b0025ae41dbfe0d7e97ae27fe29f1c59d532a7a0887477bf4d07e80e" },
    { .name = "32 cpus, medium, K=2, one chunk per cluster", .cpus = 32, .sharing = "medium", .insns = 100000,
      .seed = 14, .clusters = 2, .cluster_chunks = 1, .chunk_max = 2000, .msp = 6000,
      .input = "0cf870d462faccf64d9936bcc96bbb399ce235a7102e5f61ea82ce33b881efcc",
      .output = "80ab0cfc1aa04170daf136d29f31456fbce887463cc85fadb946a7ae7223188d",
      .schedule = "073f38a803fe378aacca3b0ee7a1db806308d208ccc5d1caad04156eafd7c4cc" },
    { .name = "64 cpus, high, K=4, exact, idle cpus, preemption", .cpus = 64, .os_cpus = 4, .sharing = "high",
      .insns = 50000, .seed = 15, .clusters = 4, .cluster_chunks = 4, .chunk_max = 1000, .msp = 20000,
      .quantum = 4000,
      .input = "e0e705bc4b1f1af620b4f892f04c6e933db3c93506deff22ee5aee3dc3dc1f2f",
      .output = "a123139c59cce053dd12b7d7732505b257cb139ca7e0195d6de7ac14eed7188c",
      .schedule = "745da4e813b67c2d30fc64871aa7f3856fef156cd11d260ade107c7daa80b489" },
    { .name = "64 cpus, high, K=2, Bloom 64 (dense vectors)", .cpus = 64, .sharing = "high", .insns = 30000,
      .seed = 16, .clusters = 2, .cluster_chunks = 2, .sig_bits = 64, .chunk_max = 600, .msp = 20000,
      .input = "525fc6a7fd8de957f0b4a9178e59be23bdb8a42b9b4113082182e9691f3384ae",
      .output = "1e9085b4fb0ecbb753c434c35791b7f55f846d9ad5275d4de2369496f1011510",
      .schedule = "67bddd6b18de567f4739f0379d1a5ec39b68262272529ed3f81ae6e22608f02c" },
    { .name = "2 cpus, low, eager drains", .cpus = 2, .sharing = "low", .insns = 5000000, .seed = 17, .clusters = 3,
      .cluster_chunks = 4, .chunk_max = 2000, .msp = 20000, .quantum = 2000, .eager = 1,
      .input = "95a7334efc73a27c50ff5ce9af567eb0056a127279405505caa5fe423c0c9aef",
      .output = "1d352d42eae55ef22b476314a1846bd2821a2f939048b86447cd52954b23bd1c",
      .schedule = "1c3b9c4d967547481b2d5ba8f59c22ecabbe0cf0f24adf2844cb94b68200e5d1" },
    { .name = "8 cpus, high, MSP unknown to the pass", .cpus = 8, .os_cpus = 1, .sharing = "high", .insns = 200000,
      .seed = 18, .clusters = 4, .cluster_chunks = 2, .sig_bits = 128, .chunk_max = 700, .msp = 20000,
      .quantum = 3000, .msp_unknown = 1,
      .input = "7fff85a52cb4fbbde093b9def3557de6fa5d1292be3d35172feafea6a2bc4cd3",
      .output = "98dc2fe440777525a7cce0a3e070928ccd34b1589030f3b3112b7f831ad1f18e",
      .schedule = "3e49c916ca711b64ed6cff5a8e67cfb71f02a2fabef03420067f3bec2eb78467" },
};

static void hex_digest(rnr_sha256 *s, char hex[RNR_SHA256_HEX])
{
    uint8_t d[RNR_SHA256_SIZE];
    rnr_sha256_final(s, d);
    rnr_hex(d, sizeof d, hex);
}

static void hash_u64(rnr_sha256 *s, uint64_t v)
{
    uint8_t b[8];
    for (int i = 0; i < 8; i++)
        b[i] = (uint8_t)(v >> (8 * i));
    rnr_sha256_update(s, b, sizeof b);
}

typedef struct schedule {
    rnr_sha256 sha;
    uint64_t added;               /* input chunks handed to the pass so far */
} schedule;

static int schedule_emit(void *ctx, const rnr_final_chunk *c)
{
    schedule *k = ctx;
    hash_u64(&k->sha, k->added);
    hash_u64(&k->sha, c->cpu);
    hash_u64(&k->sha, c->tid);
    hash_u64(&k->sha, c->cs);
    hash_u64(&k->sha, c->nstv);
    for (uint32_t i = 0; i < c->nstv; i++)
        hash_u64(&k->sha, c->stv[i]);
    hash_u64(&k->sha, c->nptv);
    for (uint32_t i = 0; i < c->nptv; i++) {
        hash_u64(&k->sha, c->ptv[i].cpu);
        hash_u64(&k->sha, c->ptv[i].count);
    }
    return 0;
}

/* The pass through its own interface, chunk by chunk: the digest of what
 * it emitted and when, and of its counters (not the memory high-water
 * marks, which depend on the data structures). */
static void schedule_digest(const rnr_membuf *in, uint64_t msp, char hex[RNR_SHA256_HEX])
{
    char err[RNR_ERR_MAX];
    rnr_reader *r = rnr_reader_open_io(rnr_io_mem_reader(in->data, in->len, "initial"), err, sizeof err);
    ck_assert_msg(r != NULL, "%s", err);
    schedule k;
    rnr_sha256_init(&k.sha);
    k.added = 0;
    maxpar *m = maxpar_new(rnr_reader_header(r)->cpus, msp, schedule_emit, &k);
    rnr_initial_chunk c;
    int rc;
    while ((rc = rnr_reader_next_initial(r, &c)) == 1) {
        k.added++;
        ck_assert_msg(maxpar_add(m, &c) == 0, "%s", maxpar_error(m));
    }
    ck_assert_int_eq(rc, 0);
    ck_assert_msg(maxpar_finish(m) == 0, "%s", maxpar_error(m));
    const maxpar_stats *st = maxpar_get_stats(m);
    const uint64_t counters[] = { st->chunks_in,    st->chunks_out,    st->merged,        st->dependences,
                                  st->tokens,       st->early_tokens,  st->early_unclaimed,
                                  st->dropped_later, st->dropped_same, st->discarded,     st->trims };
    for (size_t i = 0; i < sizeof counters / sizeof counters[0]; i++)
        hash_u64(&k.sha, counters[i]);
    hex_digest(&k.sha, hex);
    maxpar_free(m);
    rnr_reader_close(r);
}

static void bytes_digest(const rnr_membuf *b, char hex[RNR_SHA256_HEX])
{
    rnr_sha256 s;
    rnr_sha256_init(&s);
    rnr_sha256_update(&s, b->data, b->len);
    hex_digest(&s, hex);
}

START_TEST(maxpar_output_is_byte_identical_on_pinned_recordings)
{
    /* Under valgrind (memory errors, not the pins) every fourth row. */
    if (tu_under_valgrind() && _i % 4)
        return;
    const pinned_case *p = &cases[_i];
    synth_config c;
    synth_config_default(&c, p->cpus);
    ck_assert_int_eq(synth_set_sharing(&c, p->sharing), 0);
    if (p->threads)
        c.threads = p->threads;
    c.os_cpus = p->os_cpus;
    c.insns = p->insns;
    c.seed = p->seed;
    c.quantum = p->quantum;
    c.block_rate = p->block_rate;
    c.adversarial = !p->eager;
    c.rru.clusters = p->clusters;
    c.rru.cluster_chunks = p->cluster_chunks;
    c.rru.sig_bits = p->sig_bits;
    c.rru.chunk_max = p->chunk_max;
    c.rru.msp = p->msp;
    char err[RNR_ERR_MAX];
    ck_assert_msg(synth_config_check(&c, err, sizeof err) == 0, "%s: %s", p->name, err);
    rnr_membuf in, out;
    synth_result res;
    synth_to_memory(&c, &in, NULL, &res);
    pass_summary sum;
    ck_assert_msg(pass_run_memory(PASS_MAXPAR, in.data, in.len, &out, NULL, &sum, err, sizeof err) == 0, "%s: %s",
                  p->name, err);
    char h_in[RNR_SHA256_HEX], h_out[RNR_SHA256_HEX], h_sched[RNR_SHA256_HEX];
    bytes_digest(&in, h_in);
    bytes_digest(&out, h_out);
    schedule_digest(&in, p->msp_unknown ? 0 : c.rru.msp, h_sched);
    int ok = strcmp(h_in, p->input) == 0 && strcmp(h_out, p->output) == 0 && strcmp(h_sched, p->schedule) == 0;
    if (!ok)
        printf("pinned row %d (%s): %llu chunks, %llu dependences, %llu tokens, %llu early, %llu merged\n"
               "      \"%s\",\n      \"%s\",\n      \"%s\" },\n",
               _i, p->name, (unsigned long long)res.chunks, (unsigned long long)sum.maxpar.dependences,
               (unsigned long long)sum.maxpar.tokens, (unsigned long long)sum.maxpar.early_tokens,
               (unsigned long long)sum.maxpar.merged, h_in, h_out,
               h_sched);
    ck_assert_msg(strcmp(h_in, p->input) == 0,
                  "%s: the synthetic initial log changed (synth or the writer, not MaxPar): %s", p->name, h_in);
    ck_assert_msg(strcmp(h_out, p->output) == 0, "%s: MaxPar's output bytes changed: %s", p->name, h_out);
    ck_assert_msg(strcmp(h_sched, p->schedule) == 0,
                  "%s: MaxPar's output order, timing or counters changed: %s", p->name, h_sched);
    free(in.data);
    free(out.data);
}
END_TEST

TU_SUITE(backend_pinned)
{
    Suite *s = suite_create("backend_pinned");
    TCase *tc = tu_tcase(s, "maxpar", 60);
    tcase_add_loop_test(tc, maxpar_output_is_byte_identical_on_pinned_recordings, 0,
                        (int)(sizeof cases / sizeof cases[0]));
    return s;
}
