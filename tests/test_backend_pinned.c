/* tests/test_backend_pinned.c: MaxPar's output pinned on fixed synthetic
 * recordings. For each row of the table the test generates the initial log
 * (fixed seed and configuration), runs the pass and compares three SHA-256
 * digests with the ones written below, taken from the implementation as of
 * commit 1409b72:
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
      .input = "e427a48d1824b8c222e853af2387fe2d254f5063352c9ed335b143eaa5409030",
      .output = "3d5c39f935a29f5872a2a220679dcd2feda95268a4a7605135e781edca420946",
      .schedule = "d40d614bef4ece4b52c82d3d63079c571a171a0a26e4c6a529d4bde328ff2b8e" },
    { .name = "8 cpus, high sharing, K=2, Bloom 256", .cpus = 8, .sharing = "high", .insns = 1000000, .seed = 11,
      .clusters = 2, .cluster_chunks = 2, .sig_bits = 256, .chunk_max = 800, .msp = 20000,
      .input = "8be1c6899257df461c48eac424624a8396222b3a7d49aac49b4194f1cce96d17",
      .output = "9878407b1d17a33915023e18c984c97c349a6f473ca994c54937a70859345a73",
      .schedule = "caef1c5e647baca0ee898feb41ae0bc302beb53079931caf347f75774199878d" },
    { .name = "4 cpus, high, K=4, Bloom 64, tight MSP, blocking", .cpus = 4, .threads = 5, .os_cpus = 1,
      .sharing = "high", .insns = 300000, .seed = 12, .clusters = 4, .cluster_chunks = 1, .sig_bits = 64,
      .chunk_max = 300, .msp = 400, .quantum = 3000, .block_rate = 0.002,
      .input = "7c44acfde57f83f4196219d4a65096a10f4bcbdb26622fbfbdaccc2181bfbe12",
      .output = "b349411347f2600192f9484c1526c49e8e449418dd409a3421a67e7d261af11d",
      .schedule = "6f379a11c6b98bc9d055eb2f5c54efde4b4825043645dbe6bc5e5cf9ae6d1399" },
    { .name = "16 cpus, high, K=4, Bloom 512, idle cpus, migrations", .cpus = 16, .threads = 18, .os_cpus = 2,
      .sharing = "high", .insns = 300000, .seed = 13, .clusters = 4, .cluster_chunks = 3, .sig_bits = 512,
      .chunk_max = 1000, .msp = 20000, .quantum = 5000, .block_rate = 0.001,
      .input = "7361e3d874e4d45b550da277c2c7569be9aeac71979621fbc6f983186174f445",
      .output = "1e74317a567578cf0c3da7d3920581fef987f7dc91c8763071def5aaef445652",
      .schedule = "ea9817ede8e977139f3fa75e67be5ad21ebd7ec66c78ef14ed2bd376f44bc1ca" },
    { .name = "16 cpus, medium, K=2, tight MSP", .cpus = 16, .sharing = "medium", .insns = 200000, .seed = 19,
      .clusters = 2, .cluster_chunks = 2, .chunk_max = 400, .msp = 300,
      .input = "4799314cdc8476dc08019ad2f3c53932902b5ceb3e93c22af1f49624f988a1d9",
      .output = "59ad2c88bf44d4312f60a3f06d3c74853473136721bc829c1923e2683e59cf8f",
      .schedule = "0d652d51b0025ae41dbfe0d7e97ae27fe29f1c59d532a7a0887477bf4d07e80e" },
    { .name = "32 cpus, medium, K=2, one chunk per cluster", .cpus = 32, .sharing = "medium", .insns = 100000,
      .seed = 14, .clusters = 2, .cluster_chunks = 1, .chunk_max = 2000, .msp = 6000,
      .input = "c7cef66d02bb8da367122e6d261564a47fdea00c8a45315240778af5234511bb",
      .output = "1eb54a08aec1b661b4fe51057e062bf8abed53c22564d734b187b0504644a318",
      .schedule = "073f38a803fe378aacca3b0ee7a1db806308d208ccc5d1caad04156eafd7c4cc" },
    { .name = "64 cpus, high, K=4, exact, idle cpus, preemption", .cpus = 64, .os_cpus = 4, .sharing = "high",
      .insns = 50000, .seed = 15, .clusters = 4, .cluster_chunks = 4, .chunk_max = 1000, .msp = 20000,
      .quantum = 4000,
      .input = "791e2f75451de715e87fd28bb0cc63127793e03582d3525f397294279ea2532a",
      .output = "d5bddf28d1d37002df02a5c696ee8f748f791c46acf1abce5c0a04fbdabd0323",
      .schedule = "745da4e813b67c2d30fc64871aa7f3856fef156cd11d260ade107c7daa80b489" },
    { .name = "64 cpus, high, K=2, Bloom 64 (dense vectors)", .cpus = 64, .sharing = "high", .insns = 30000,
      .seed = 16, .clusters = 2, .cluster_chunks = 2, .sig_bits = 64, .chunk_max = 600, .msp = 20000,
      .input = "4d13c431604c34d2d333f93005678ca57f5bd8c987f378385ff2db1972ee621a",
      .output = "58a3c9c637b73f481abe18b6139a6c6fae89de24e68b00b3656f89319bdde819",
      .schedule = "67bddd6b18de567f4739f0379d1a5ec39b68262272529ed3f81ae6e22608f02c" },
    { .name = "2 cpus, low, eager drains", .cpus = 2, .sharing = "low", .insns = 5000000, .seed = 17, .clusters = 3,
      .cluster_chunks = 4, .chunk_max = 2000, .msp = 20000, .quantum = 2000, .eager = 1,
      .input = "3e1c7b1fa5e54246638f1fcbb6f45892b2af8d208eeda2309172bce4f5a6c49b",
      .output = "ac5262c21e4a7b28d9557b1ccf23cabf0ec3654af05be0c1c16474e7445217f3",
      .schedule = "1c3b9c4d967547481b2d5ba8f59c22ecabbe0cf0f24adf2844cb94b68200e5d1" },
    { .name = "8 cpus, high, MSP unknown to the pass", .cpus = 8, .os_cpus = 1, .sharing = "high", .insns = 200000,
      .seed = 18, .clusters = 4, .cluster_chunks = 2, .sig_bits = 128, .chunk_max = 700, .msp = 20000,
      .quantum = 3000, .msp_unknown = 1,
      .input = "6dba60c42dd38dcd14322ec2a83a62eb9808a88e048cc33729597d46599c27a5",
      .output = "167de4c8d10aec676b5e5b73c09c58f36e6e4b297db592124dd78087f16607e6",
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
