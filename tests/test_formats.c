/* tests/test_formats.c: the log container and every record kind: random
 * round trips, corruption, truncation, bad headers, schema checks, pipes. */
#include <check.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <zlib.h>

#include "formats/dump.h"
#include "formats/log.h"
#include "formats/manifest.h"
#include "formats/net.h"
#include "tests/testutil.h"

/* ---- a random log held in memory, record by record ---- */

typedef struct stored_rec {
    rnr_initial_chunk ic;
    rnr_final_chunk fc;
    rnr_input_record in;
    rnr_sv_entry sv[16];
    uint32_t stv[16];
    rnr_ptv_entry ptv[16];
    uint8_t data[300];
} stored_rec;

typedef struct model {
    rnr_log_header h;
    stored_rec *recs;
    size_t n;
} model;

static void random_model(model *m, uint32_t kind, uint32_t cpus, size_t n, uint64_t *rng)
{
    memset(m, 0, sizeof *m);
    m->h.kind = kind;
    m->h.cpus = cpus;
    m->h.msp = tu_rand(rng) % 1000000;
    for (int i = 0; i < 32; i++)
        m->h.program_sha256[i] = (uint8_t)tu_rand(rng);
    m->recs = calloc(n, sizeof *m->recs);
    m->n = n;
    uint64_t ts[16] = { 0 };
    uint32_t cpu = 0, tid = 1;
    for (size_t i = 0; i < n; i++) {
        stored_rec *r = &m->recs[i];
        /* Batches: the cpu changes now and then; tids repeat often. */
        if (tu_below(rng, 4) == 0)
            cpu = (uint32_t)tu_below(rng, cpus);
        if (tu_below(rng, 3) == 0)
            tid = (uint32_t)tu_below(rng, 1u << (tu_below(rng, 32))) % 0xfffffffeu;
        /* Occasionally extreme values, to cover every varint length. */
        int extreme = tu_below(rng, 50) == 0;
        if (kind == RNR_LOG_INITIAL) {
            rnr_initial_chunk *c = &r->ic;
            c->cpu = cpu;
            c->tid = tid;
            ts[cpu] += extreme ? (UINT64_MAX - ts[cpu]) / 4 : tu_below(rng, 5000);
            c->ts = ts[cpu];
            c->cs = extreme ? UINT64_MAX : 1 + tu_below(rng, 100000);
            c->reason = (uint32_t)tu_below(rng, RNR_END_REASON_COUNT);
            c->dur = extreme ? UINT64_MAX : tu_below(rng, 20000);
            c->sv = r->sv;
            for (uint32_t k = 0; k < cpus; k++) {
                if (k == cpu || tu_below(rng, 3) != 0)
                    continue;
                uint64_t room = UINT64_MAX - c->ts;
                r->sv[c->nsv].cpu = k;
                r->sv[c->nsv].ts = c->ts + (extreme ? room : tu_below(rng, room < 9999 ? room + 1 : 9999));
                c->nsv++;
            }
        } else if (kind == RNR_LOG_INPUT) {
            rnr_input_record *in = &r->in;
            in->type = 1 + (uint32_t)tu_below(rng, RNR_IN_TYPE_MAX);
            in->tid = tid;
            if (in->type == RNR_IN_SYSCALL || in->type == RNR_IN_CSR || in->type == RNR_IN_SC ||
                in->type == RNR_IN_CHECK) {
                in->nr = extreme ? tu_rand(rng) : tu_below(rng, 500);
                in->value = extreme ? INT64_MIN : (int64_t)tu_rand(rng) >> tu_below(rng, 64);
                if (in->type == RNR_IN_SC || in->type == RNR_IN_CHECK)
                    in->addr = tu_rand(rng) >> tu_below(rng, 64);
            } else {
                in->addr = tu_rand(rng) >> tu_below(rng, 64);
                in->len = tu_below(rng, sizeof r->data);
                if (in->addr + in->len < in->addr)
                    in->addr = 0;
                for (size_t k = 0; k < in->len; k++)
                    r->data[k] = (uint8_t)tu_rand(rng);
                in->data = r->data;
            }
        } else {
            rnr_final_chunk *c = &r->fc;
            c->tid = tid;
            c->cs = extreme ? UINT64_MAX >> 1 : 1 + tu_below(rng, 100000);
            c->dur = extreme ? UINT64_MAX : tu_below(rng, 200000);
            c->stv = r->stv;
            c->ptv = r->ptv;
            if (rnr_log_kind_has_tokens(kind)) {
                c->cpu = cpu;
                for (uint32_t k = 0; k < cpus; k++) {
                    if (k == cpu)
                        continue;
                    if (tu_below(rng, 3) == 0)
                        r->stv[c->nstv++] = k;
                    if (tu_below(rng, 3) == 0) {
                        r->ptv[c->nptv].cpu = k;
                        r->ptv[c->nptv].count = extreme ? UINT32_MAX : 1 + (uint32_t)tu_below(rng, 4);
                        c->nptv++;
                    }
                }
            }
        }
    }
}

static void model_free(model *m) { free(m->recs); }

static int put(rnr_writer *w, uint32_t kind, const stored_rec *r)
{
    if (kind == RNR_LOG_INITIAL)
        return rnr_writer_put_initial(w, &r->ic);
    if (kind == RNR_LOG_INPUT)
        return rnr_writer_put_input(w, &r->in);
    return rnr_writer_put_final(w, &r->fc);
}

/* Encodes the model; returns the bytes (caller frees) and, per block, how
 * many records had been written when it ended (for truncation checks). */
static uint8_t *encode(const model *m, uint32_t block_bytes, int compress, size_t *len)
{
    char err[RNR_ERR_MAX];
    rnr_writer_opts o = { block_bytes, compress };
    rnr_membuf out = { 0 };
    rnr_writer *w = rnr_writer_open_io(rnr_io_mem_writer(&out, "mem"), &m->h, &o, err, sizeof err);
    ck_assert_msg(w != NULL, "%s", err);
    for (size_t i = 0; i < m->n; i++)
        ck_assert_msg(put(w, m->h.kind, &m->recs[i]) == 0, "record %zu: %s", i, rnr_writer_error(w));
    ck_assert_msg(rnr_writer_close(w, err, sizeof err) == 0, "%s", err);
    *len = out.len;
    return out.data;
}

static int same_record(uint32_t kind, const stored_rec *want, const void *got_rec)
{
    if (kind == RNR_LOG_INITIAL) {
        const rnr_initial_chunk *a = &want->ic, *b = got_rec;
        if (a->cpu != b->cpu || a->tid != b->tid || a->ts != b->ts || a->cs != b->cs ||
            a->reason != b->reason || a->dur != b->dur || a->nsv != b->nsv)
            return 0;
        for (uint32_t i = 0; i < a->nsv; i++)
            if (a->sv[i].cpu != b->sv[i].cpu || a->sv[i].ts != b->sv[i].ts)
                return 0;
        return 1;
    }
    if (kind == RNR_LOG_INPUT) {
        const rnr_input_record *a = &want->in, *b = got_rec;
        return a->type == b->type && a->tid == b->tid && a->nr == b->nr && a->value == b->value &&
               a->addr == b->addr && a->len == b->len &&
               (a->len == 0 || memcmp(a->data, b->data, a->len) == 0);
    }
    const rnr_final_chunk *a = &want->fc, *b = got_rec;
    if (a->cpu != b->cpu || a->tid != b->tid || a->cs != b->cs || a->dur != b->dur || a->nstv != b->nstv ||
        a->nptv != b->nptv)
        return 0;
    for (uint32_t i = 0; i < a->nstv; i++)
        if (a->stv[i] != b->stv[i])
            return 0;
    for (uint32_t i = 0; i < a->nptv; i++)
        if (a->ptv[i].cpu != b->ptv[i].cpu || a->ptv[i].count != b->ptv[i].count)
            return 0;
    return 1;
}

/* Reads one record of the reader's kind into a union buffer; 1/0/-1. */
static int next(rnr_reader *r, void *buf)
{
    uint32_t kind = rnr_reader_header(r)->kind;
    if (kind == RNR_LOG_INITIAL)
        return rnr_reader_next_initial(r, buf);
    if (kind == RNR_LOG_INPUT)
        return rnr_reader_next_input(r, buf);
    return rnr_reader_next_final(r, buf);
}

typedef union any_rec {
    rnr_initial_chunk ic;
    rnr_final_chunk fc;
    rnr_input_record in;
} any_rec;

/* Reads BYTES and compares with the model. Returns the number of records
 * that matched in order, sets *end to the last next() result (0 clean end,
 * -1 error, or 2 if a record differed), *open_failed if the header failed. */
static size_t read_back(const model *m, const uint8_t *bytes, size_t len, int *end,
                        char *err, size_t errlen)
{
    rnr_reader *r = rnr_reader_open_io(rnr_io_mem_reader(bytes, len, "mem"), err, errlen);
    if (!r) {
        *end = -1;
        return 0;
    }
    const rnr_log_header *h = rnr_reader_header(r);
    size_t i = 0;
    if (h->kind != m->h.kind || h->cpus != m->h.cpus || h->msp != m->h.msp ||
        memcmp(h->program_sha256, m->h.program_sha256, 32) != 0) {
        *end = 2;
        rnr_reader_close(r);
        return 0;
    }
    any_rec rec;
    int rc;
    while ((rc = next(r, &rec)) == 1) {
        if (i >= m->n || !same_record(m->h.kind, &m->recs[i], &rec)) {
            rc = 2;
            break;
        }
        i++;
    }
    if (rc < 0)
        snprintf(err, errlen, "%s", rnr_reader_error(r));
    *end = rc;
    rnr_reader_close(r);
    return i;
}

static const uint32_t all_kinds[] = {
    RNR_LOG_INITIAL, RNR_LOG_INPUT, RNR_LOG_MAXPAR, RNR_LOG_STITCHED, RNR_LOG_SERIAL,
    RNR_LOG_STSERIAL,
};

START_TEST(formats_roundtrip_random_records_every_kind)
{
    uint64_t seed = tu_seed(0x5eed0001u + (uint64_t)_i);
    uint64_t rng = seed;
    uint32_t kind = all_kinds[_i % 6];
    for (int round = 0; round < 6; round++) {
        uint32_t cpus = 1 + (uint32_t)tu_below(&rng, 16);
        size_t n = 500 + tu_below(&rng, 3000);
        model m;
        random_model(&m, kind, cpus, n, &rng);
        uint32_t block = round == 0 ? 1 : 16 + (uint32_t)tu_below(&rng, 20000);
        int level = round % 2 ? 1 + (int)tu_below(&rng, 9) : 0;
        size_t len;
        uint8_t *bytes = encode(&m, block, level, &len);
        int end;
        char err[RNR_ERR_MAX] = "";
        size_t got = read_back(&m, bytes, len, &end, err, sizeof err);
        ck_assert_msg(end == 0 && got == n,
                      "seed %#llx kind %s round %d: %zu of %zu records, end %d (%s)",
                      (unsigned long long)seed, rnr_log_kind_name(kind), round, got, n, end, err);
        free(bytes);
        model_free(&m);
    }
}
END_TEST

/* A compressed log: every block the writer compressed is one complete
 * zlib stream, byte for byte what compress2 makes of its records at the
 * log's level, and every block it stored is one compress2 would not have
 * shrunk; so compression does not stop after the first block (the writer
 * reuses one deflate stream, reset for each block). */
START_TEST(formats_compressed_blocks_are_compress2_streams)
{
    uint64_t rng = tu_seed(0x5eed00c0u);
    const int level = 1 + (int)tu_below(&rng, 9);
    model m;
    random_model(&m, RNR_LOG_INPUT, 4, 4000, &rng);
    size_t len;
    uint8_t *bytes = encode(&m, 4096, level, &len);
    size_t off = RNR_LOG_HEADER_SIZE, blocks = 0, packed = 0;
    uint8_t *raw = malloc(RNR_BLOCK_MAX), *again = malloc(compressBound(RNR_BLOCK_MAX));
    while (off + RNR_BLOCK_HEADER_SIZE <= len) {
        const uint8_t *h = bytes + off;
        uint32_t stored = h[0] | h[1] << 8 | h[2] << 16 | (uint32_t)h[3] << 24;
        uint32_t raw_len = h[4] | h[5] << 8 | h[6] << 16 | (uint32_t)h[7] << 24;
        uint32_t flags = h[12];
        const uint8_t *payload = h + RNR_BLOCK_HEADER_SIZE;
        ck_assert_uint_le(off + RNR_BLOCK_HEADER_SIZE + stored, len);
        if (!(flags & 2))
            blocks++;
        if (flags & 1) {
            uLongf n = raw_len;
            ck_assert_int_eq(uncompress(raw, &n, payload, stored), Z_OK);
            ck_assert_uint_eq(n, raw_len);
            uLongf m2 = compressBound(raw_len);
            ck_assert_int_eq(compress2(again, &m2, raw, raw_len, level), Z_OK);
            ck_assert_msg(m2 == stored && memcmp(again, payload, stored) == 0,
                          "block %zu (level %d): not what compress2 gives", blocks, level);
            packed++;
        } else if (!(flags & 2)) {
            uLongf m2 = compressBound(raw_len);
            ck_assert_int_eq(compress2(again, &m2, payload, raw_len, level), Z_OK);
            ck_assert_msg(m2 >= raw_len, "block %zu (level %d) stored, but compress2 shrinks it "
                          "from %u to %lu bytes", blocks, level, raw_len, (unsigned long)m2);
        }
        off += RNR_BLOCK_HEADER_SIZE + stored;
    }
    ck_assert_uint_eq(off, len);
    ck_assert_uint_ge(blocks, 4);
    ck_assert_msg(packed >= 2, "%zu of %zu data blocks compressed (level %d)", packed, blocks,
                  level);
    free(raw);
    free(again);
    free(bytes);
    model_free(&m);
}
END_TEST

/* Every single-byte change of a small log is either detected or gives back
 * exactly the same records with a clean end. */
START_TEST(formats_single_byte_corruption_is_detected)
{
    uint64_t seed = tu_seed(0x5eed0100u + (uint64_t)_i), rng = seed;
    uint32_t kind = all_kinds[_i % 6];
    model m;
    random_model(&m, kind, 4, 60, &rng);
    size_t len;
    uint8_t *bytes = encode(&m, 200, _i >= 6 ? 6 : 0, &len);
    uint8_t *copy = malloc(len);
    size_t detected = 0, tried = 0;
    /* Every offset; under valgrind (memory errors, not the property) every fifth. */
    const size_t stride = tu_under_valgrind() ? 5 : 1;
    for (size_t off = 0; off < len; off += stride) {
        for (int variant = 0; variant < 10; variant++) {
            uint8_t delta = variant < 8 ? (uint8_t)(1u << variant) : (uint8_t)(1 + tu_below(&rng, 255));
            memcpy(copy, bytes, len);
            copy[off] ^= delta;
            int end;
            char err[RNR_ERR_MAX];
            size_t got = read_back(&m, copy, len, &end, err, sizeof err);
            tried++;
            if (end == -1) {
                detected++;
                continue;
            }
            ck_assert_msg(end == 0 && got == m.n,
                          "seed %#llx: byte %zu ^ %#x changed the records undetected (%zu read, end %d)",
                          (unsigned long long)seed, off, delta, got, end);
        }
    }
    /* With CRCs on header and blocks nothing slips through. */
    ck_assert_uint_eq(detected, tried);
    free(copy);
    free(bytes);
    model_free(&m);
}
END_TEST

/* Cutting the file anywhere yields the records of the complete blocks
 * before the cut, then an error: never a clean end, never a wrong record. */
START_TEST(formats_truncation_yields_complete_prefix)
{
    uint64_t seed = tu_seed(0x5eed0200u + (uint64_t)_i), rng = seed;
    uint32_t kind = all_kinds[_i % 6];
    model m;
    random_model(&m, kind, 3, 200, &rng);
    size_t len;
    uint8_t *bytes = encode(&m, 300, _i >= 6 ? 6 : 0, &len);
    /* Block boundaries: re-read block by block through the counts. */
    size_t max_prefix = 0;
    /* As above; the last cut (all but the end block's last byte) always. */
    const size_t stride = tu_under_valgrind() ? 5 : 1;
    for (size_t cut = 0; cut < len; cut = cut + stride < len || cut + 1 == len ? cut + stride : len - 1) {
        int end;
        char err[RNR_ERR_MAX] = "";
        size_t got = read_back(&m, bytes, cut, &end, err, sizeof err);
        ck_assert_msg(end == -1, "seed %#llx: cut at %zu of %zu ended with %d", (unsigned long long)seed,
                      cut, len, end);
        ck_assert_msg(strstr(err, "truncated") || strstr(err, "empty file") || strstr(err, "bad magic"),
                      "cut at %zu: unexpected message '%s'", cut, err);
        ck_assert_msg(got >= max_prefix, "cut at %zu gave fewer records (%zu) than a shorter cut (%zu)",
                      cut, got, max_prefix);
        max_prefix = got;
    }
    /* Cutting just before the end block loses nothing but the end block. */
    ck_assert_uint_eq(max_prefix, m.n);
    free(bytes);
    model_free(&m);
}
END_TEST

static uint8_t *small_log(uint32_t kind, size_t *len, model *m)
{
    uint64_t rng = 42;
    random_model(m, kind, 4, 20, &rng);
    return encode(m, 64, 0, len);
}

START_TEST(formats_rejects_bad_headers_with_offset_and_reason)
{
    model m;
    size_t len;
    uint8_t *bytes = small_log(RNR_LOG_MAXPAR, &len, &m);
    struct { size_t off; uint8_t val; int fix_crc; const char *want; } cases[] = {
        { 0, 'X', 0, "bad magic" },
        { 8, RNR_LOG_VERSION + 1, 1, "unsupported format version" },
        { 10, 9, 1, "unknown log kind 9" },
        { 12, 0, 1, "cpu count 0 out of range" },
        { 14, 0x10, 1, "cpu count" },
        { 56, 1, 1, "reserved header field" },
        { 30, 1, 0, "header checksum mismatch" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        uint8_t *copy = malloc(len);
        memcpy(copy, bytes, len);
        copy[cases[i].off] = cases[i].val;
        if (cases[i].fix_crc) {
            uint32_t crc = (uint32_t)crc32(0L, copy, 60);
            for (int k = 0; k < 4; k++)
                copy[60 + k] = (uint8_t)(crc >> (8 * k));
        }
        char err[RNR_ERR_MAX] = "";
        rnr_reader *r = rnr_reader_open_io(rnr_io_mem_reader(copy, len, "x.log"), err, sizeof err);
        ck_assert_msg(r == NULL, "case %zu accepted", i);
        ck_assert_msg(strstr(err, cases[i].want) && strncmp(err, "x.log: offset 0: ", 17) == 0,
                      "case %zu: message '%s' lacks '%s'", i, err, cases[i].want);
        free(copy);
    }
    free(bytes);
    model_free(&m);
}
END_TEST

/* A block header claiming a huge or impossible length is refused before
 * anything is allocated or read (length fields are checked, then the CRC). */
START_TEST(formats_rejects_impossible_block_lengths)
{
    model m;
    size_t len;
    uint8_t *bytes = small_log(RNR_LOG_SERIAL, &len, &m);
    struct { uint32_t stored, raw; const char *want; } cases[] = {
        { 0xffffffffu, 0xffffffffu, "exceeds the bound" },
        { 1000000, 1000000, "truncated block" },
        { 5, 7, "inconsistent" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        uint8_t *copy = malloc(len);
        memcpy(copy, bytes, len);
        for (int k = 0; k < 4; k++) {
            copy[64 + k] = (uint8_t)(cases[i].stored >> (8 * k));
            copy[68 + k] = (uint8_t)(cases[i].raw >> (8 * k));
        }
        char err[RNR_ERR_MAX] = "";
        rnr_reader *r = rnr_reader_open_io(rnr_io_mem_reader(copy, len, "b.log"), err, sizeof err);
        ck_assert_ptr_nonnull(r);
        rnr_final_chunk c;
        ck_assert_int_eq(rnr_reader_next_final(r, &c), -1);
        ck_assert_msg(strstr(rnr_reader_error(r), cases[i].want) &&
                      strstr(rnr_reader_error(r), "b.log: offset 64: "),
                      "case %zu: '%s'", i, rnr_reader_error(r));
        rnr_reader_close(r);
        free(copy);
    }
    free(bytes);
    model_free(&m);
}
END_TEST

START_TEST(formats_rejects_trailing_data_and_wrong_kind)
{
    model m;
    size_t len;
    uint8_t *bytes = small_log(RNR_LOG_INITIAL, &len, &m);
    uint8_t *copy = malloc(len + 1);
    memcpy(copy, bytes, len);
    copy[len] = 0;
    int end;
    char err[RNR_ERR_MAX] = "";
    size_t got = read_back(&m, copy, len + 1, &end, err, sizeof err);
    ck_assert_int_eq(end, -1);
    ck_assert_uint_eq(got, m.n);
    ck_assert_ptr_nonnull(strstr(err, "trailing data"));
    rnr_reader *r = rnr_reader_open_io(rnr_io_mem_reader(bytes, len, "k.log"), err, sizeof err);
    rnr_final_chunk c;
    ck_assert_int_eq(rnr_reader_next_final(r, &c), -1);
    ck_assert_ptr_nonnull(strstr(rnr_reader_error(r), "initial log, not the kind"));
    rnr_reader_close(r);
    free(copy);
    free(bytes);
    model_free(&m);
}
END_TEST

static rnr_writer *mem_writer(uint32_t kind, uint32_t cpus, rnr_membuf *out)
{
    rnr_log_header h = { .kind = kind, .cpus = cpus };
    char err[RNR_ERR_MAX];
    rnr_writer *w = rnr_writer_open_io(rnr_io_mem_writer(out, "w.log"), &h, NULL, err, sizeof err);
    ck_assert_msg(w != NULL, "%s", err);
    return w;
}

/* The writer refuses records that break the schema, with a reason. */
START_TEST(formats_writer_rejects_invalid_records)
{
    rnr_sv_entry sv_bad_order[2] = { { 2, 10 }, { 1, 10 } };
    rnr_sv_entry sv_self[1] = { { 0, 10 } };
    rnr_sv_entry sv_early[1] = { { 1, 5 } };
    struct { rnr_initial_chunk c; const char *want; } ic[] = {
        { { .cpu = 4, .tid = 1, .ts = 1, .cs = 1 }, "cpu 4 out of range" },
        { { .cpu = 0, .tid = 1, .ts = 1, .cs = 0 }, "size 0" },
        { { .cpu = 0, .tid = 1, .ts = 1, .cs = 1, .reason = 8 }, "end reason" },
        { { .cpu = 0, .tid = 1, .ts = 1, .cs = 1, .nsv = 2, .sv = sv_bad_order }, "out of order" },
        { { .cpu = 0, .tid = 1, .ts = 1, .cs = 1, .nsv = 1, .sv = sv_self }, "own cpu" },
        { { .cpu = 0, .tid = 1, .ts = 10, .cs = 1, .nsv = 1, .sv = sv_early }, "precedes" },
        { { .cpu = 0, .tid = UINT32_MAX, .ts = 1, .cs = 1 }, "reserved" },
    };
    for (size_t i = 0; i < sizeof ic / sizeof ic[0]; i++) {
        rnr_membuf out = { 0 };
        rnr_writer *w = mem_writer(RNR_LOG_INITIAL, 4, &out);
        ck_assert_int_eq(rnr_writer_put_initial(w, &ic[i].c), -1);
        ck_assert_msg(strstr(rnr_writer_error(w), ic[i].want), "case %zu: '%s'", i, rnr_writer_error(w));
        /* The error is sticky: the log is not finished. */
        char err[RNR_ERR_MAX];
        ck_assert_int_eq(rnr_writer_close(w, err, sizeof err), -1);
        free(out.data);
    }
    /* Timestamps of one cpu never go back. */
    rnr_membuf out = { 0 };
    rnr_writer *w = mem_writer(RNR_LOG_INITIAL, 2, &out);
    rnr_initial_chunk a = { .cpu = 1, .tid = 3, .ts = 100, .cs = 5 };
    ck_assert_int_eq(rnr_writer_put_initial(w, &a), 0);
    a.ts = 99;
    ck_assert_int_eq(rnr_writer_put_initial(w, &a), -1);
    ck_assert_ptr_nonnull(strstr(rnr_writer_error(w), "goes back"));
    rnr_writer_abandon(w);
    free(out.data);

    uint32_t stv_dup[2] = { 1, 1 };
    rnr_ptv_entry ptv_zero[1] = { { 1, 0 } };
    struct { uint32_t kind; rnr_final_chunk c; const char *want; } fc[] = {
        { RNR_LOG_MAXPAR, { .cpu = 0, .tid = 1, .cs = 1, .nstv = 2, .stv = stv_dup }, "repeated" },
        { RNR_LOG_MAXPAR, { .cpu = 0, .tid = 1, .cs = 1, .nptv = 1, .ptv = ptv_zero }, "is 0" },
        { RNR_LOG_STITCHED, { .cpu = 3, .tid = 1, .cs = 1 }, "out of range" },
        { RNR_LOG_SERIAL, { .cpu = 1, .tid = 1, .cs = 1 }, "no cpu and no tokens" },
        { RNR_LOG_STSERIAL, { .tid = 1, .cs = 0 }, "out of range" },
    };
    for (size_t i = 0; i < sizeof fc / sizeof fc[0]; i++) {
        rnr_membuf o2 = { 0 };
        rnr_writer *w2 = mem_writer(fc[i].kind, 3, &o2);
        ck_assert_int_eq(rnr_writer_put_final(w2, &fc[i].c), -1);
        ck_assert_msg(strstr(rnr_writer_error(w2), fc[i].want), "final case %zu: '%s'", i,
                      rnr_writer_error(w2));
        rnr_writer_abandon(w2);
        free(o2.data);
    }
    /* A record of another kind is refused. */
    rnr_membuf o3 = { 0 };
    rnr_writer *w3 = mem_writer(RNR_LOG_SERIAL, 2, &o3);
    ck_assert_int_eq(rnr_writer_put_initial(w3, &ic[0].c), -1);
    ck_assert_ptr_nonnull(strstr(rnr_writer_error(w3), "does not belong in a serial log"));
    rnr_writer_abandon(w3);
    free(o3.data);
}
END_TEST

/* ---- streaming through a pipe: the reader sees each flushed batch while
 * the writer waits for it (a writer that only wrote at close would make
 * this test hang and time out). ---- */

typedef struct pipe_test {
    int fd;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int acked;          /* batches the reader has fully seen */
    int batches, per_batch;
    int writer_rc;
} pipe_test;

static void *pipe_writer(void *arg)
{
    pipe_test *t = arg;
    rnr_log_header h = { .kind = RNR_LOG_STSERIAL, .cpus = 1 };
    char err[RNR_ERR_MAX];
    rnr_writer_opts o = { 1u << 20, 1 };   /* blocks far larger than a batch */
    rnr_writer *w = rnr_writer_open_io(rnr_io_from_fd(t->fd, "pipe", 1, 1), &h, &o, err, sizeof err);
    if (!w) {
        t->writer_rc = -1;
        return NULL;
    }
    for (int b = 0; b < t->batches; b++) {
        for (int i = 0; i < t->per_batch; i++) {
            rnr_final_chunk c = { .tid = (uint32_t)b, .cs = (uint64_t)i + 1 };
            rnr_writer_put_final(w, &c);
        }
        rnr_writer_flush(w);
        pthread_mutex_lock(&t->mu);
        while (t->acked <= b)
            pthread_cond_wait(&t->cv, &t->mu);
        pthread_mutex_unlock(&t->mu);
    }
    t->writer_rc = rnr_writer_close(w, err, sizeof err);
    return NULL;
}

START_TEST(formats_reader_consumes_pipe_while_written)
{
    int fds[2];
    ck_assert_int_eq(pipe(fds), 0);
    pipe_test t = { .fd = fds[1], .batches = 5, .per_batch = 1000 };
    pthread_mutex_init(&t.mu, NULL);
    pthread_cond_init(&t.cv, NULL);
    pthread_t th;
    ck_assert_int_eq(pthread_create(&th, NULL, pipe_writer, &t), 0);
    char err[RNR_ERR_MAX];
    rnr_reader *r = rnr_reader_open_io(rnr_io_from_fd(fds[0], "pipe", 0, 1), err, sizeof err);
    ck_assert_msg(r != NULL, "%s", err);
    rnr_final_chunk c;
    for (int b = 0; b < t.batches; b++) {
        for (int i = 0; i < t.per_batch; i++) {
            ck_assert_int_eq(rnr_reader_next_final(r, &c), 1);
            ck_assert_uint_eq(c.tid, (uint32_t)b);
            ck_assert_uint_eq(c.cs, (uint64_t)i + 1);
            /* One block per batch: the reader knows when the next call
             * would wait on the pipe. */
            ck_assert_uint_eq(rnr_reader_buffered(r), (uint32_t)(t.per_batch - 1 - i));
        }
        pthread_mutex_lock(&t.mu);
        t.acked = b + 1;
        pthread_cond_signal(&t.cv);
        pthread_mutex_unlock(&t.mu);
    }
    ck_assert_int_eq(rnr_reader_next_final(r, &c), 0);
    pthread_join(th, NULL);
    ck_assert_int_eq(t.writer_rc, 0);
    rnr_reader_close(r);
}
END_TEST

START_TEST(formats_summary_counts_records_instructions_tokens)
{
    char *dir = tu_tmpdir();
    const char *path = tu_path(dir, "m.log");
    rnr_log_header h = { .kind = RNR_LOG_MAXPAR, .cpus = 3 };
    char err[RNR_ERR_MAX];
    rnr_writer *w = rnr_writer_open(path, &h, NULL, err, sizeof err);
    ck_assert_msg(w != NULL, "%s", err);
    uint32_t stv[2] = { 1, 2 };
    rnr_ptv_entry ptv[1] = { { 0, 3 } };
    uint64_t insns = 0, tokens = 0, awaited = 0;
    for (uint32_t i = 0; i < 100; i++) {
        rnr_final_chunk c = { .cpu = i % 3, .tid = 10 + i % 4, .cs = 7 + i };
        if (i % 3 == 0) {
            c.nstv = 2;
            c.stv = stv;
            tokens += 2;
        } else {
            c.nptv = 1;
            c.ptv = ptv;
            ptv[0].cpu = 0;
            awaited += 3;
        }
        insns += c.cs;
        ck_assert_int_eq(rnr_writer_put_final(w, &c), 0);
    }
    ck_assert_int_eq(rnr_writer_close(w, err, sizeof err), 0);
    rnr_log_summary s;
    ck_assert_msg(rnr_log_summarize(path, &s, err, sizeof err) == 0, "%s", err);
    ck_assert_uint_eq(s.counts.records, 100);
    ck_assert_uint_eq(s.instructions, insns);
    ck_assert_uint_eq(s.tokens, tokens);
    ck_assert_uint_eq(s.tokens_awaited, awaited);
    ck_assert_uint_eq(s.threads, 4);
    ck_assert_uint_gt(s.zlib_bytes, 0);
    ck_assert_uint_lt(s.zlib_bytes, s.counts.raw_bytes);
    size_t flen;
    free(tu_read_file(path, &flen));
    ck_assert_uint_eq(s.counts.stored_bytes, flen);
    tu_rmtree(dir);
    free(dir);
}
END_TEST

START_TEST(formats_manifest_roundtrip_and_errors)
{
    char *dir = tu_tmpdir();
    const char *path = tu_path(dir, "manifest");
    rnr_manifest *m = rnr_manifest_new();
    rnr_manifest_set(m, "program", "/bin/prog with spaces");
    rnr_manifest_set(m, "arg.0", " lead\\ing\nnew\tline\x01\x7f\xff ");
    rnr_manifest_set_u64(m, "seed", UINT64_MAX);
    rnr_manifest_set(m, "program", "/bin/other");
    char err[RNR_ERR_MAX];
    ck_assert_msg(rnr_manifest_save(m, path, err, sizeof err) == 0, "%s", err);
    rnr_manifest *b = rnr_manifest_load(path, err, sizeof err);
    ck_assert_msg(b != NULL, "%s", err);
    ck_assert_uint_eq(rnr_manifest_count(b), 3);
    ck_assert_str_eq(rnr_manifest_key(b, 0), "program");
    ck_assert_str_eq(rnr_manifest_get(b, "program"), "/bin/other");
    ck_assert_str_eq(rnr_manifest_get(b, "arg.0"), " lead\\ing\nnew\tline\x01\x7f\xff ");
    uint64_t v;
    ck_assert_int_eq(rnr_manifest_get_u64(b, "seed", &v), 0);
    ck_assert_uint_eq(v, UINT64_MAX);
    ck_assert_int_eq(rnr_manifest_get_u64(b, "program", &v), -1);
    ck_assert_ptr_null(rnr_manifest_get(b, "missing"));
    rnr_manifest_free(b);
    rnr_manifest *m2 = m;

    struct { const char *text; const char *want; } bad[] = {
        { "program = x\n", "line 1: the first line is not 'rnr-manifest = 2'" },
        { "# c\n\n", "no 'rnr-manifest = 2' line" },
        { "rnr-manifest = 3\n", "line 1: manifest version 3, this rnr reads version 2" },
        { "rnr-manifest = 1\n", "(recorded by an older rnr: record again)" },
        { "rnr-manifest = 2\nk = 1\n", "no 'manifest.sha256' line at the end" },
        { "rnr-manifest = 2\nk = 1\nmanifest.sha256 = 00\n", "line 3: checksum 00 does not match" },
        { "rnr-manifest = 2\nnot a pair\n", "line 2: expected 'key = value'" },
        { "rnr-manifest = 2\nk = a\\qb\n", "line 2: invalid escape" },
        { "rnr-manifest = 2\nk = 1\nk = 2\n", "line 3: key appears twice" },
        { "rnr-manifest = 2\nb@d = 1\n", "line 2: invalid key" },
        { "rnr-manifest = 2\nrnr-manifest = 2\n", "line 2: the version line is not the first" },
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        tu_write_file(path, bad[i].text, strlen(bad[i].text));
        ck_assert_ptr_null(rnr_manifest_load(path, err, sizeof err));
        ck_assert_msg(strstr(err, bad[i].want), "case %zu: '%s'", i, err);
    }
    /* A valid manifest with a line after its checksum, or one byte changed. */
    ck_assert_int_eq(rnr_manifest_save(m2, path, err, sizeof err), 0);
    size_t n;
    char *text = (char *)tu_read_file(path, &n);
    char *more = malloc(n + 8);
    memcpy(more, text, n);
    memcpy(more + n, "x = 1\n", 6);
    tu_write_file(path, more, n + 6);
    ck_assert_ptr_null(rnr_manifest_load(path, err, sizeof err));
    ck_assert_msg(strstr(err, "a line after the checksum line"), "'%s'", err);
    text[n / 3] ^= 1;
    tu_write_file(path, text, n);
    ck_assert_ptr_null(rnr_manifest_load(path, err, sizeof err));
    ck_assert_msg(strstr(err, "does not match") || strstr(err, "invalid"), "'%s'", err);
    free(more);
    free(text);
    rnr_manifest_free(m2);
    tu_rmtree(dir);
    free(dir);
}
END_TEST

/* A manifest with a key per thread of a program that made 20,000 threads
 * (the recorder writes thread.K.tid and thread.K.instructions): every key
 * is found, overwriting keeps a key's place, missing keys are missing,
 * and the file keeps the order. Keys are found through an index; a
 * linear search made such a recording quadratic. */
/* [HOST:]PORT: the default host, brackets, and every malformed form named;
 * a listener on a free loopback port takes a connection. */
START_TEST(formats_net_addresses_and_a_loopback_connection)
{
    char host[RNR_NET_HOST_MAX], err[512];
    unsigned port = 1;
    ck_assert_int_eq(rnr_net_split("7", RNR_NET_LOOPBACK, host, &port, err, sizeof err), 0);
    ck_assert_str_eq(host, "127.0.0.1");
    ck_assert_uint_eq(port, 7);
    ck_assert_int_eq(rnr_net_split("[::1]:65535", NULL, host, &port, err, sizeof err), 0);
    ck_assert_str_eq(host, "::1");
    ck_assert_uint_eq(port, 65535);
    ck_assert_int_eq(rnr_net_split("example.org:0", NULL, host, &port, err, sizeof err), 0);
    ck_assert_str_eq(host, "example.org");
    ck_assert_uint_eq(port, 0);
    static const struct { const char *spec, *why; } bad[] = {
        { "5", "not HOST:PORT" },     /* no default host */
        { ":5", "host before ':' is empty" },
        { "h:65536", "not a port number" },
        { "h:", "not a port number" },
        { "h:-1", "not a port number" },
        { "h:5x", "not a port number" },
        { "h: 5", "not a port number" },
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        err[0] = 0;
        ck_assert_int_eq(rnr_net_split(bad[i].spec, NULL, host, &port, err, sizeof err), -1);
        ck_assert_msg(strstr(err, bad[i].why) && strstr(err, bad[i].spec), "%s: %s", bad[i].spec, err);
    }
    unsigned bound = 0;
    int l = rnr_net_listen(RNR_NET_LOOPBACK, 0, &bound, err, sizeof err);
    ck_assert_msg(l >= 0, "%s", err);
    ck_assert_uint_gt(bound, 0);
    int c = rnr_net_connect(RNR_NET_LOOPBACK, bound, 4096, err, sizeof err);
    ck_assert_msg(c >= 0, "%s", err);
    int a = accept(l, NULL, NULL);
    ck_assert_int_ge(a, 0);
    ck_assert_int_eq(write(c, "rnr", 3), 3);
    char got[4] = { 0 };
    ck_assert_int_eq(read(a, got, 3), 3);
    ck_assert_str_eq(got, "rnr");
    close(a);
    close(c);
    close(l);
    /* Nobody listens there any more: refused, with the address. */
    ck_assert_int_eq(rnr_net_connect(RNR_NET_LOOPBACK, bound, 0, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "127.0.0.1:") && strstr(err, "refused"), "%s", err);
}
END_TEST

START_TEST(formats_manifest_with_many_keys)
{
    char *dir = tu_tmpdir();
    const char *path = tu_path(dir, "manifest");
    rnr_manifest *m = rnr_manifest_new();
    char key[64];
    for (int i = 0; i < 20000; i++) {
        snprintf(key, sizeof key, "thread.%d.instructions", i);
        rnr_manifest_set_u64(m, key, (uint64_t)i);
    }
    for (int i = 0; i < 20000; i += 3) {
        snprintf(key, sizeof key, "thread.%d.instructions", i);
        rnr_manifest_set_u64(m, key, (uint64_t)i * 7);
    }
    char err[RNR_ERR_MAX];
    ck_assert_msg(rnr_manifest_save(m, path, err, sizeof err) == 0, "%s", err);
    rnr_manifest *b = rnr_manifest_load(path, err, sizeof err);
    ck_assert_msg(b != NULL, "%s", err);
    const rnr_manifest *both[] = {m, b};
    for (int k = 0; k < 2; k++) {
        ck_assert_uint_eq(rnr_manifest_count(both[k]), 20000);
        for (int i = 0; i < 20000; i++) {
            snprintf(key, sizeof key, "thread.%d.instructions", i);
            uint64_t v;
            ck_assert_int_eq(rnr_manifest_get_u64(both[k], key, &v), 0);
            ck_assert_uint_eq(v, i % 3 ? (uint64_t)i : (uint64_t)i * 7);
            ck_assert_str_eq(rnr_manifest_key(both[k], (size_t)i), key);
        }
        ck_assert_ptr_null(rnr_manifest_get(both[k], "thread.20000.instructions"));
        ck_assert_ptr_null(rnr_manifest_get(both[k], "thread.1.instruction"));
    }
    rnr_manifest_free(b);
    rnr_manifest_free(m);
    tu_rmtree(dir);
    free(dir);
}
END_TEST

/* The bytes of the worked example in docs/formats.md: if the encoding
 * changes, this fails until the document (and the version) are updated. */
START_TEST(formats_encoding_matches_documented_example)
{
    static const uint8_t want[] = {
        0x89, 0x52, 0x4e, 0x52, 0x4c, 0x4f, 0x47, 0x0a, 0x04, 0x00, 0x03, 0x00, 0x02, 0x00, 0x00, 0x00,
        0xa0, 0x86, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x35, 0xde, 0xb5, 0xc3,
        0x17, 0x00, 0x00, 0x00, 0x17, 0x00, 0x00, 0x00, 0x03, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
        0x3a, 0xe5, 0xc0, 0x43, 0x05, 0x90, 0x03, 0xc8, 0x01, 0x1e, 0x07, 0x00, 0x07, 0xac, 0x02, 0x01,
        0x01, 0x0b, 0x01, 0x08, 0x96, 0x01, 0x01, 0x00, 0x01, 0x00, 0x14, 0x01, 0x00, 0x00, 0x00, 0x01,
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0xa1, 0xe1, 0x16, 0x70, 0x03,
    };
    rnr_log_header h = { .kind = RNR_LOG_MAXPAR, .cpus = 2, .msp = 100000 };
    rnr_membuf out = { 0 };
    char err[RNR_ERR_MAX];
    rnr_writer *w = rnr_writer_open_io(rnr_io_mem_writer(&out, "ex"), &h, NULL, err, sizeof err);
    uint32_t stv[1] = { 1 };
    rnr_ptv_entry ptv[1] = { { 0, 1 } };
    rnr_final_chunk a = { .cpu = 0, .tid = 7, .cs = 300, .dur = 400, .nstv = 1, .stv = stv };
    rnr_final_chunk b = { .cpu = 1, .tid = 8, .cs = 150, .dur = 200, .nptv = 1, .ptv = ptv };
    rnr_final_chunk c = { .cpu = 1, .tid = 8, .cs = 20, .dur = 30 };
    ck_assert_int_eq(rnr_writer_put_final(w, &a), 0);
    ck_assert_int_eq(rnr_writer_put_final(w, &b), 0);
    ck_assert_int_eq(rnr_writer_put_final(w, &c), 0);
    ck_assert_int_eq(rnr_writer_close(w, err, sizeof err), 0);
    ck_assert_uint_eq(out.len, sizeof want);
    ck_assert_mem_eq(out.data, want, sizeof want);
    free(out.data);
}
END_TEST

/* A successor vector with every other cpu at one time (a serialization)
 * takes one varint instead of two per cpu, and reads back the same. */
START_TEST(formats_uniform_successor_vector_is_compact_and_exact)
{
    rnr_sv_entry sv[63], one[63];
    for (uint32_t q = 0, i = 0; q < 64; q++)
        if (q != 5) {
            sv[i] = (rnr_sv_entry){ q, 900 };
            one[i] = (rnr_sv_entry){ q, i == 40 ? 901 : 900 };   /* not uniform */
            i++;
        }
    const rnr_initial_chunk chunks[2] = { { 5, 7, 800, 100, RNR_END_SERIALIZE, 0, 63, sv },
                                          { 5, 7, 850, 100, RNR_END_SIZE, 0, 63, one } };
    uint64_t raw[2];
    for (int k = 0; k < 2; k++) {
        rnr_log_header h = { .kind = RNR_LOG_INITIAL, .cpus = 64, .msp = 1000 };
        rnr_membuf out = { 0 };
        char err[RNR_ERR_MAX];
        rnr_writer *w = rnr_writer_open_io(rnr_io_mem_writer(&out, "u"), &h, NULL, err, sizeof err);
        ck_assert_int_eq(rnr_writer_put_initial(w, &chunks[k]), 0);
        ck_assert_int_eq(rnr_writer_close(w, err, sizeof err), 0);
        rnr_reader *r = rnr_reader_open_io(rnr_io_mem_reader(out.data, out.len, "u"), err, sizeof err);
        ck_assert_ptr_nonnull(r);
        rnr_initial_chunk c;
        ck_assert_int_eq(rnr_reader_next_initial(r, &c), 1);
        ck_assert_uint_eq(c.nsv, 63);
        for (uint32_t i = 0; i < 63; i++) {
            ck_assert_uint_eq(c.sv[i].cpu, chunks[k].sv[i].cpu);
            ck_assert_uint_eq(c.sv[i].ts, chunks[k].sv[i].ts);
        }
        ck_assert_int_eq(rnr_reader_next_initial(r, &c), 0);
        raw[k] = rnr_reader_counts(r)->raw_bytes;
        rnr_reader_close(r);
        free(out.data);
    }
    ck_assert_msg(raw[0] < 12, "the uniform record took %llu bytes", (unsigned long long)raw[0]);
    ck_assert_msg(raw[1] > 120, "the list of 63 entries took %llu bytes", (unsigned long long)raw[1]);
}
END_TEST

/* Dense token vectors in a log of 64 cpus take the bitmap form and read
 * back the same; sparse ones keep the list. */
START_TEST(formats_dense_token_vectors_are_bitmaps)
{
    uint32_t all[63], few[2] = { 3, 40 };
    rnr_ptv_entry pall[63];
    for (uint32_t q = 0, i = 0; q < 64; q++)
        if (q != 9) {
            all[i] = q;
            pall[i] = (rnr_ptv_entry){ q, 1 + q % 3 };
            i++;
        }
    const rnr_final_chunk chunks[2] = { { 9, 4, 1000, 0, 63, all, 63, pall, 0 },
                                        { 9, 4, 1000, 0, 2, few, 0, NULL, 0 } };
    uint64_t raw[2];
    for (int k = 0; k < 2; k++) {
        rnr_log_header h = { .kind = RNR_LOG_MAXPAR, .cpus = 64, .msp = 1000 };
        rnr_membuf out = { 0 };
        char err[RNR_ERR_MAX];
        rnr_writer *w = rnr_writer_open_io(rnr_io_mem_writer(&out, "t"), &h, NULL, err, sizeof err);
        ck_assert_int_eq(rnr_writer_put_final(w, &chunks[k]), 0);
        ck_assert_int_eq(rnr_writer_close(w, err, sizeof err), 0);
        rnr_reader *r = rnr_reader_open_io(rnr_io_mem_reader(out.data, out.len, "t"), err, sizeof err);
        ck_assert_ptr_nonnull(r);
        rnr_final_chunk c;
        ck_assert_int_eq(rnr_reader_next_final(r, &c), 1);
        ck_assert_uint_eq(c.nstv, chunks[k].nstv);
        ck_assert_uint_eq(c.nptv, chunks[k].nptv);
        for (uint32_t i = 0; i < c.nstv; i++)
            ck_assert_uint_eq(c.stv[i], chunks[k].stv[i]);
        for (uint32_t i = 0; i < c.nptv; i++) {
            ck_assert_uint_eq(c.ptv[i].cpu, chunks[k].ptv[i].cpu);
            ck_assert_uint_eq(c.ptv[i].count, chunks[k].ptv[i].count);
        }
        ck_assert_int_eq(rnr_reader_next_final(r, &c), 0);
        raw[k] = rnr_reader_counts(r)->raw_bytes;
        rnr_reader_close(r);
        free(out.data);
    }
    /* 63 tokens: 8 + 8 bytes of bitmaps and 63 counts, not 2 x 64 + 63. */
    ck_assert_msg(raw[0] < 90, "dense record took %llu bytes", (unsigned long long)raw[0]);
    ck_assert_msg(raw[1] <= 8, "sparse record took %llu bytes", (unsigned long long)raw[1]);
}
END_TEST

/* The blocks' duration sections are counted apart from the records: the
 * same records written with large durations and with none have the same
 * raw bytes and hand on_block the same payloads (so bytes.raw and
 * bytes.zlib do not move); the section's bytes are duration_bytes, the
 * same for writer and reader, and every duration reads back. */
typedef struct payload_buf {
    uint8_t *p;
    size_t len;
} payload_buf;

static void collect_payload(void *ctx, const uint8_t *raw, size_t n)
{
    payload_buf *b = ctx;
    b->p = realloc(b->p, b->len + n);
    ck_assert_ptr_nonnull(b->p);
    memcpy(b->p + b->len, raw, n);
    b->len += n;
}

START_TEST(formats_durations_are_counted_apart_from_the_records)
{
    enum { N = 3000 };
    uint64_t raw[2], dbytes[2], stored[2];
    payload_buf payload[2] = { { 0 }, { 0 } };
    for (int k = 0; k < 2; k++) {
        rnr_log_header h = { .kind = RNR_LOG_MAXPAR, .cpus = 4, .msp = 1000 };
        rnr_membuf out = { 0 };
        char err[RNR_ERR_MAX];
        rnr_writer_opts o = { 4096, 0 };
        rnr_writer *w = rnr_writer_open_io(rnr_io_mem_writer(&out, "t"), &h, &o, err, sizeof err);
        for (uint32_t i = 0; i < N; i++) {
            rnr_final_chunk c = { .cpu = i % 4, .tid = 10 + i % 4, .cs = 7 + i,
                                  .dur = k ? 1000003ull * i : 0 };
            ck_assert_int_eq(rnr_writer_put_final(w, &c), 0);
        }
        ck_assert_int_eq(rnr_writer_flush(w), 0);
        const rnr_log_counts wc = *rnr_writer_counts(w);
        ck_assert_int_eq(rnr_writer_close(w, err, sizeof err), 0);
        rnr_reader *r = rnr_reader_open_io(rnr_io_mem_reader(out.data, out.len, "t"), err, sizeof err);
        ck_assert_ptr_nonnull(r);
        ck_assert_uint_eq(rnr_reader_version(r), RNR_LOG_VERSION);
        ck_assert_int_eq(rnr_reader_has_durations(r), 1);
        rnr_reader_on_block(r, collect_payload, &payload[k]);
        rnr_final_chunk c;
        for (uint32_t i = 0; i < N; i++) {
            ck_assert_int_eq(rnr_reader_next_final(r, &c), 1);
            ck_assert_uint_eq(c.cs, 7 + i);
            ck_assert_uint_eq(c.dur, k ? 1000003ull * i : 0);
        }
        ck_assert_int_eq(rnr_reader_next_final(r, &c), 0);
        const rnr_log_counts *rc = rnr_reader_counts(r);
        ck_assert_uint_eq(rc->raw_bytes, wc.raw_bytes);
        ck_assert_uint_eq(rc->duration_bytes, wc.duration_bytes);
        ck_assert_uint_eq(rc->stored_bytes, out.len);
        ck_assert_uint_eq(rc->blocks, wc.blocks);
        /* File = header, frames, end block, records and duration sections. */
        ck_assert_uint_eq(out.len, RNR_LOG_HEADER_SIZE + (rc->blocks + 1) * RNR_BLOCK_HEADER_SIZE + 2 +
                                       rc->raw_bytes + rc->duration_bytes);
        raw[k] = rc->raw_bytes;
        dbytes[k] = rc->duration_bytes;
        stored[k] = rc->stored_bytes;
        rnr_reader_close(r);
        free(out.data);
    }
    ck_assert_uint_eq(raw[0], raw[1]);
    ck_assert_uint_eq(payload[0].len, raw[0]);
    ck_assert_uint_eq(payload[1].len, raw[1]);
    ck_assert(memcmp(payload[0].p, payload[1].p, payload[0].len) == 0);
    ck_assert_uint_gt(dbytes[0], (uint64_t)N);       /* one byte per 0, and the sections' lengths */
    ck_assert_uint_gt(dbytes[1], dbytes[0] + 2 * (uint64_t)N);
    ck_assert_uint_eq(stored[1] - stored[0], dbytes[1] - dbytes[0]);
    free(payload[0].p);
    free(payload[1].p);
}
END_TEST

/* Logs of the previous version (tests/data/v3, written before chunks had
 * durations) still read: every chunk with duration 0 (unknown), and
 * `rnr dump` and `rnr stats` print what they printed then. */
static char *read_text(const char *path)
{
    size_t n;
    uint8_t *b = tu_read_file(path, &n);
    char *t = realloc(b, n + 1);
    ck_assert_ptr_nonnull(t);
    t[n] = 0;
    return t;
}

/* TEXT without its lines starting with PREFIX (a malloc'd copy). */
static char *without_lines(const char *text, const char *prefix)
{
    char *out = malloc(strlen(text) + 1);
    ck_assert_ptr_nonnull(out);
    size_t at = 0, plen = strlen(prefix);
    for (const char *l = text; *l;) {
        const char *e = strchr(l, '\n');
        size_t len = e ? (size_t)(e - l) + 1 : strlen(l);
        if (strncmp(l, prefix, plen) != 0) {
            memcpy(out + at, l, len);
            at += len;
        }
        l += len;
    }
    out[at] = 0;
    return out;
}

START_TEST(formats_reads_version_3_logs)
{
    static const char *const kinds[] = { "initial", "maxpar", "stitched", "serial", "stserial" };
    const char *data = tu_env("RNR_TEST_DATA");
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
        char log[4096], want_dump[4096], want_stats[4096];
        snprintf(log, sizeof log, "%s/v3/%s.log", data, kinds[i]);
        snprintf(want_dump, sizeof want_dump, "%s/v3/%s.dump", data, kinds[i]);
        snprintf(want_stats, sizeof want_stats, "%s/v3/%s.stats", data, kinds[i]);
        char err[RNR_ERR_MAX];
        rnr_reader *r = rnr_reader_open(log, err, sizeof err);
        ck_assert_msg(r != NULL, "%s", err);
        ck_assert_uint_eq(rnr_reader_version(r), 3);
        ck_assert_int_eq(rnr_reader_has_durations(r), 0);
        uint64_t n = 0;
        int rc;
        if (rnr_reader_header(r)->kind == RNR_LOG_INITIAL) {
            rnr_initial_chunk c;
            while ((rc = rnr_reader_next_initial(r, &c)) == 1) {
                ck_assert_uint_eq(c.dur, 0);
                n++;
            }
        } else {
            rnr_final_chunk c;
            while ((rc = rnr_reader_next_final(r, &c)) == 1) {
                ck_assert_uint_eq(c.dur, 0);
                n++;
            }
        }
        ck_assert_msg(rc == 0, "%s", rnr_reader_error(r));
        ck_assert_uint_gt(n, 0);
        ck_assert_uint_eq(rnr_reader_counts(r)->duration_bytes, 0);
        rnr_reader_close(r);
        tu_output o;
        tu_rnr(&o, (const char *[]){ "dump", log, NULL });
        ck_assert_int_eq(o.status, 0);
        char *want = read_text(want_dump);
        ck_assert_str_eq(o.out, want);
        free(want);
        tu_output_free(&o);
        tu_rnr(&o, (const char *[]){ "stats", log, NULL });
        ck_assert_int_eq(o.status, 0);
        want = read_text(want_stats);
        char *a = without_lines(o.out, "file: "), *b = without_lines(want, "file: ");
        ck_assert_str_eq(a, b);
        free(a);
        free(b);
        free(want);
        tu_output_free(&o);
    }
}
END_TEST

/* CHECK records of threads that take turns (as chunks end on a busy
 * machine) store each instret as a delta from the same thread's last
 * CHECK and the hash in 8 bytes: 1000 records of 4 threads at instrets
 * near 10^12 take at most 16 bytes each (head, 2-byte tid, 2-byte delta,
 * 3-byte pc, hash), where absolute instrets (6 bytes) and varint hashes
 * (10) would take 22; and every field reads back. */
START_TEST(formats_check_records_are_thread_deltas)
{
    uint64_t rng = 0xc4ec;
    enum { N = 1000 };
    rnr_input_record in[N];
    uint64_t instret[4] = { 1000000000000ull, 2000000000000ull, 3000000000000ull, 4000000000000ull };
    for (int i = 0; i < N; i++) {
        uint32_t t = (uint32_t)tu_below(&rng, 4);
        instret[t] += 1 + tu_below(&rng, 8000);
        in[i] = (rnr_input_record){ .type = RNR_IN_CHECK, .tid = 1000 + t, .nr = instret[t],
                                    .value = (int64_t)(0x10000 + tu_below(&rng, 0x1f0000)),
                                    .addr = tu_rand(&rng) };
    }
    in[N - 1].addr = UINT64_MAX;   /* every hash bit */
    rnr_log_header h = { .kind = RNR_LOG_INPUT, .cpus = 4 };
    rnr_membuf out = { 0 };
    char err[RNR_ERR_MAX];
    rnr_writer *w = rnr_writer_open_io(rnr_io_mem_writer(&out, "c"), &h, NULL, err, sizeof err);
    for (int i = 0; i < N; i++)
        ck_assert_int_eq(rnr_writer_put_input(w, &in[i]), 0);
    ck_assert_int_eq(rnr_writer_close(w, err, sizeof err), 0);
    rnr_reader *r = rnr_reader_open_io(rnr_io_mem_reader(out.data, out.len, "c"), err, sizeof err);
    ck_assert_ptr_nonnull(r);
    rnr_input_record got;
    for (int i = 0; i < N; i++) {
        ck_assert_int_eq(rnr_reader_next_input(r, &got), 1);
        ck_assert_uint_eq(got.type, RNR_IN_CHECK);
        ck_assert_uint_eq(got.tid, in[i].tid);
        ck_assert_uint_eq(got.nr, in[i].nr);
        ck_assert_int_eq(got.value, in[i].value);
        ck_assert_uint_eq(got.addr, in[i].addr);
    }
    ck_assert_int_eq(rnr_reader_next_input(r, &got), 0);
    uint64_t raw = rnr_reader_counts(r)->raw_bytes;
    rnr_reader_close(r);
    free(out.data);
    ck_assert_msg(raw <= 16 * N, "%d CHECK records took %llu bytes", N, (unsigned long long)raw);
}
END_TEST

TU_SUITE(formats)
{
    Suite *s = suite_create("formats");
    TCase *tc = tu_tcase(s, "roundtrip", 60);
    tcase_add_test(tc, formats_compressed_blocks_are_compress2_streams);
    tcase_add_loop_test(tc, formats_roundtrip_random_records_every_kind, 0, 12);
    tc = tu_tcase(s, "damage", 120);
    tcase_add_loop_test(tc, formats_single_byte_corruption_is_detected, 0, 12);
    tcase_add_loop_test(tc, formats_truncation_yields_complete_prefix, 0, 12);
    tcase_add_test(tc, formats_rejects_bad_headers_with_offset_and_reason);
    tcase_add_test(tc, formats_rejects_impossible_block_lengths);
    tcase_add_test(tc, formats_rejects_trailing_data_and_wrong_kind);
    tc = tu_tcase(s, "schema", 20);
    tcase_add_test(tc, formats_writer_rejects_invalid_records);
    tcase_add_test(tc, formats_encoding_matches_documented_example);
    tcase_add_test(tc, formats_uniform_successor_vector_is_compact_and_exact);
    tcase_add_test(tc, formats_dense_token_vectors_are_bitmaps);
    tcase_add_test(tc, formats_check_records_are_thread_deltas);
    tcase_add_test(tc, formats_durations_are_counted_apart_from_the_records);
    tcase_add_test(tc, formats_reads_version_3_logs);
    tc = tu_tcase(s, "stream", 20);
    tcase_add_test(tc, formats_reader_consumes_pipe_while_written);
    tcase_add_test(tc, formats_summary_counts_records_instructions_tokens);
    tcase_add_test(tc, formats_manifest_roundtrip_and_errors);
    tcase_add_test(tc, formats_manifest_with_many_keys);
    tcase_add_test(tc, formats_net_addresses_and_a_loopback_connection);
    return s;
}
