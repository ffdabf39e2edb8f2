/* tests/test_backend_pinned.c: MaxPar's output pinned on fixed synthetic
 * recordings. For each row of the table the test generates the initial log
 * (fixed seed and configuration), runs the pass and compares three SHA-256
 * digests with the ones written below, taken from the implementation as of
 * commit 1409b72 (input and output re-pinned when RNR_LOG_VERSION became 3:
 * only the header's version byte and checksum moved; and again at version
 * 4, which added each block's duration section; the schedule digests,
 * which do not hash the durations, stayed as they were):
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
      .input = "a8a87691e803085736c56f2a8d2e8395c0165dd09e82f79b430d182a6075283b",
      .output = "d552733f1d802cd4ae1c19cfc382883c9a6c76eb177fdcbb17ad3d603d8ec7a6",
      .schedule = "d40d614bef4ece4b52c82d3d63079c571a171a0a26e4c6a529d4bde328ff2b8e" },
    { .name = "8 cpus, high sharing, K=2, Bloom 256", .cpus = 8, .sharing = "high", .insns = 1000000, .seed = 11,
      .clusters = 2, .cluster_chunks = 2, .sig_bits = 256, .chunk_max = 800, .msp = 20000,
      .input = "126429142dcec81457f4f25610e7d55a042153d7d852b9414ef95092fecd2807",
      .output = "4cc51a4ef214a0df0838bb65409c5b7aef4f98bf1a84b40a09860ea1a90e8b9c",
      .schedule = "caef1c5e647baca0ee898feb41ae0bc302beb53079931caf347f75774199878d" },
    { .name = "4 cpus, high, K=4, Bloom 64, tight MSP, blocking", .cpus = 4, .threads = 5, .os_cpus = 1,
      .sharing = "high", .insns = 300000, .seed = 12, .clusters = 4, .cluster_chunks = 1, .sig_bits = 64,
      .chunk_max = 300, .msp = 400, .quantum = 3000, .block_rate = 0.002,
      .input = "02167236178d3d54faf7c34a6103da07c1f4ff8516ade0ddcd41c36aa629a5a7",
      .output = "2c4de3ae192c473649f68cba1bd8aa41c57cdfb8abbcd7983b2cdeb64aff8a8e",
      .schedule = "6f379a11c6b98bc9d055eb2f5c54efde4b4825043645dbe6bc5e5cf9ae6d1399" },
    { .name = "16 cpus, high, K=4, Bloom 512, idle cpus, migrations", .cpus = 16, .threads = 18, .os_cpus = 2,
      .sharing = "high", .insns = 300000, .seed = 13, .clusters = 4, .cluster_chunks = 3, .sig_bits = 512,
      .chunk_max = 1000, .msp = 20000, .quantum = 5000, .block_rate = 0.001,
      .input = "b0f54d7ad4e88fb1fde3b57a34d925401a132784792ee817f82314656b4aa9bb",
      .output = "ab97d8053789453022dd0127f6b5b80f9bc9893bdff6debe712bb6af213282a5",
      .schedule = "ea9817ede8e977139f3fa75e67be5ad21ebd7ec66c78ef14ed2bd376f44bc1ca" },
    { .name = "16 cpus, medium, K=2, tight MSP", .cpus = 16, .sharing = "medium", .insns = 200000, .seed = 19,
      .clusters = 2, .cluster_chunks = 2, .chunk_max = 400, .msp = 300,
      .input = "04f86e72230cfd1e1aa6246d2b656c6badebaf2f0a9c93125f78d0a314125717",
      .output = "59c8f148f2d5a36cb60aeb79729ac21eea559141ccc00aa9368b35d460dc39db",
      .schedule = "0d652d51b0025ae41dbfe0d7e97ae27fe29f1c59d532a7a0887477bf4d07e80e" },
    { .name = "32 cpus, medium, K=2, one chunk per cluster", .cpus = 32, .sharing = "medium", .insns = 100000,
      .seed = 14, .clusters = 2, .cluster_chunks = 1, .chunk_max = 2000, .msp = 6000,
      .input = "c0034eadf3f51e21ac6fbd424f4560d0cddb69a14e0db826be4bc959ce9320fb",
      .output = "cc7df84b7fca0e775bbfa57294ae5e89304edad42af1849cf5c5cb4544d483f8",
      .schedule = "073f38a803fe378aacca3b0ee7a1db806308d208ccc5d1caad04156eafd7c4cc" },
    { .name = "64 cpus, high, K=4, exact, idle cpus, preemption", .cpus = 64, .os_cpus = 4, .sharing = "high",
      .insns = 50000, .seed = 15, .clusters = 4, .cluster_chunks = 4, .chunk_max = 1000, .msp = 20000,
      .quantum = 4000,
      .input = "822ff23c2a8106617f693839a5e7cc7763bb148541d9b9d69c20223f4f4734d8",
      .output = "e90bf27aaa420c9d84e44a4e22d2066433d605228a40209258ed103669e4e12c",
      .schedule = "745da4e813b67c2d30fc64871aa7f3856fef156cd11d260ade107c7daa80b489" },
    { .name = "64 cpus, high, K=2, Bloom 64 (dense vectors)", .cpus = 64, .sharing = "high", .insns = 30000,
      .seed = 16, .clusters = 2, .cluster_chunks = 2, .sig_bits = 64, .chunk_max = 600, .msp = 20000,
      .input = "2371904ebfba54d6d34fe865d3bedbd9bf549401c98aab55c8f6072a1f42a116",
      .output = "f86437e6195c27d732925d72aa87f96d5730b31d9b0f9afbf4670de01495dd90",
      .schedule = "67bddd6b18de567f4739f0379d1a5ec39b68262272529ed3f81ae6e22608f02c" },
    { .name = "2 cpus, low, eager drains", .cpus = 2, .sharing = "low", .insns = 5000000, .seed = 17, .clusters = 3,
      .cluster_chunks = 4, .chunk_max = 2000, .msp = 20000, .quantum = 2000, .eager = 1,
      .input = "434a4c265afd432c5b3b4c1068338c273699cb50c8290fc2fff3f23a0fc764f3",
      .output = "a94ff351458800d31edad5940c84a0db609b42cc85347a7c3514c5715432f15f",
      .schedule = "1c3b9c4d967547481b2d5ba8f59c22ecabbe0cf0f24adf2844cb94b68200e5d1" },
    { .name = "8 cpus, high, MSP unknown to the pass", .cpus = 8, .os_cpus = 1, .sharing = "high", .insns = 200000,
      .seed = 18, .clusters = 4, .cluster_chunks = 2, .sig_bits = 128, .chunk_max = 700, .msp = 20000,
      .quantum = 3000, .msp_unknown = 1,
      .input = "89683e7510148b9452999dfad2565eeec34041f3816c33a54ce4a91c8f79abdf",
      .output = "cfa36d8e09ad5b0c4913dced46562595411a6882e5954f43a4eb0a158005e8c1",
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
