/* tests/test_stream.c: the on-line stream's framing and parser
 * (formats/stream.h), in-process: blocks come back whole and in order
 * however the bytes are cut, and every kind of damage is named. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "formats/stream.h"
#include "tests/testutil.h"

typedef struct seen {
    uint32_t type[64];
    size_t len[64];
    uint8_t first[64];
    size_t n;
} seen;

static int collect(void *ctx, uint32_t type, const uint8_t *p, size_t len)
{
    seen *s = ctx;
    if (s->n < 64) {
        s->type[s->n] = type;
        s->len[s->n] = len;
        s->first[s->n] = len ? p[0] : 0;
        s->n++;
    }
    return 0;
}

/* A stream of N random blocks (types, lengths and bytes from RNG). */
static void random_stream(rnr_membuf *m, uint64_t *rng, size_t n, uint32_t *types, size_t *lens,
                          uint8_t *firsts)
{
    rnr_stream_put_header(m);
    for (size_t i = 0; i < n; i++) {
        size_t len = tu_below(rng, 3) == 0 ? 0 : tu_below(rng, 3000);
        uint8_t *p = malloc(len + 1);
        for (size_t k = 0; k < len; k++)
            p[k] = (uint8_t)tu_rand(rng);
        types[i] = 1 + (uint32_t)tu_below(rng, RNR_ST_MAX);
        lens[i] = len;
        firsts[i] = len ? p[0] : 0;
        rnr_stream_put_block(m, types[i], p, len);
        free(p);
    }
}

START_TEST(stream_blocks_come_back_whole_however_the_bytes_are_cut)
{
    uint64_t seed = tu_seed(7100), rng = seed;
    for (int round = 0; round < 40; round++) {
        rnr_membuf m = { NULL, 0, 0 };
        uint32_t types[32];
        size_t lens[32];
        uint8_t firsts[32];
        size_t n = 1 + tu_below(&rng, 32);
        random_stream(&m, &rng, n, types, lens, firsts);
        rnr_stream_parser *p = rnr_stream_parser_new("test", 1);
        seen s;
        memset(&s, 0, sizeof s);
        for (size_t at = 0; at < m.len;) {
            size_t k = 1 + tu_below(&rng, round % 2 ? 7 : 5000);
            if (k > m.len - at)
                k = m.len - at;
            ck_assert_msg(rnr_stream_feed(p, m.data + at, k, collect, &s) == 0, "seed %llu: %s",
                          (unsigned long long)seed, rnr_stream_parser_error(p));
            at += k;
        }
        ck_assert_msg(s.n == n, "seed %llu: %zu blocks of %zu", (unsigned long long)seed, s.n, n);
        for (size_t i = 0; i < n; i++)
            ck_assert_msg(s.type[i] == types[i] && s.len[i] == lens[i] && s.first[i] == firsts[i],
                          "seed %llu: block %zu differs", (unsigned long long)seed, i);
        ck_assert_uint_eq(rnr_stream_parser_pending(p), 0);
        rnr_stream_parser_free(p);
        free(m.data);
    }
}
END_TEST

/* Feeds BUF whole; returns the parser's error ("" if none). */
static const char *feed_error(rnr_stream_parser *p, const uint8_t *buf, size_t n)
{
    seen s;
    memset(&s, 0, sizeof s);
    rnr_stream_feed(p, buf, n, collect, &s);
    return rnr_stream_parser_error(p);
}

START_TEST(stream_parser_names_each_kind_of_damage)
{
    rnr_membuf m = { NULL, 0, 0 };
    rnr_stream_put_header(&m);
    rnr_stream_put_block(&m, RNR_ST_INPUT, "abcdef", 6);
    struct {
        size_t at;          /* byte to change */
        uint8_t value;
        const char *want;
    } cases[] = {
        { 0, 'x', "not an rnr stream" },
        { 8, 1, "stream version 1, this rnr reads version 2" },
        { 12, 1, "flags" },
        { 16, 0, "unknown block type 0" },
        { 16, 99, "unknown block type 99" },
        { 22, 0x10, "bytes (more than" },
        { 30, 'X', "CRC-32" },
        { 24, 0, "CRC-32" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        uint8_t *b = malloc(m.len);
        memcpy(b, m.data, m.len);
        b[cases[i].at] = cases[i].value;
        rnr_stream_parser *p = rnr_stream_parser_new("S", 1);
        const char *e = feed_error(p, b, m.len);
        ck_assert_msg(strstr(e, cases[i].want) && strncmp(e, "S: offset ", 10) == 0,
                      "case %zu: '%s' lacks '%s'", i, e, cases[i].want);
        /* Sticky: nothing more is accepted. */
        ck_assert_int_eq(rnr_stream_feed(p, m.data, m.len, collect, NULL), -1);
        rnr_stream_parser_free(p);
        free(b);
    }
    /* Garbage is refused from its first byte, before a whole header came. */
    rnr_stream_parser *p = rnr_stream_parser_new("S", 1);
    ck_assert_ptr_nonnull(strstr(feed_error(p, (const uint8_t *)"GET /", 5), "not an rnr stream"));
    rnr_stream_parser_free(p);
    /* A back channel has no header: blocks only. */
    p = rnr_stream_parser_new("acks", 0);
    uint64_t v[2] = { 5, 77 };
    rnr_membuf a = { NULL, 0, 0 };
    rnr_stream_put_u64s(&a, RNR_ST_ACK, v, 2);
    seen s;
    memset(&s, 0, sizeof s);
    ck_assert_int_eq(rnr_stream_feed(p, a.data, a.len, collect, &s), 0);
    ck_assert_uint_eq(s.n, 1);
    ck_assert_uint_eq(s.type[0], RNR_ST_ACK);
    uint64_t back[2];
    ck_assert_int_eq(rnr_stream_get_u64s(a.data + RNR_STREAM_FRAME_SIZE, 16, back, 2), 0);
    ck_assert(back[0] == 5 && back[1] == 77);
    ck_assert_int_eq(rnr_stream_get_u64s(a.data + RNR_STREAM_FRAME_SIZE, 15, back, 2), -1);
    rnr_stream_parser_free(p);
    free(a.data);
    free(m.data);
}
END_TEST

/* A program of 2.5 MiB goes as three exec blocks of at most a block's
 * payload, each naming the program, its size and its offset, and comes
 * back whole; a program sent before is one block at its size without
 * bytes; a block shorter than its head or with bytes past the size is
 * refused. */
static int exec_block(void *ctx, uint32_t type, const uint8_t *p, size_t len)
{
    rnr_membuf *m = ctx;
    ck_assert_uint_eq(type, RNR_ST_EXEC);
    uint8_t sha[32];
    uint64_t size, off;
    const uint8_t *bytes;
    size_t n;
    ck_assert_int_eq(rnr_stream_get_exec(p, len, sha, &size, &off, &bytes, &n), 0);
    ck_assert(sha[0] == 0xab && sha[31] == 0xcd && off == m->len);
    m->data = realloc(m->data, m->len + n + 1);
    memcpy(m->data + m->len, bytes, n);
    m->len += n;
    return 0;
}

START_TEST(stream_exec_blocks_carry_a_program_in_order)
{
    size_t size = (5u << 20) / 2;
    uint8_t *prog = malloc(size), sha[32] = { 0xab };
    sha[31] = 0xcd;
    uint64_t rng = tu_seed(7300);
    for (size_t i = 0; i < size; i++)
        prog[i] = (uint8_t)tu_rand(&rng);
    rnr_membuf m = { NULL, 0, 0 }, back = { NULL, 0, 0 };
    rnr_stream_put_header(&m);
    size_t head = m.len;
    rnr_stream_put_exec(&m, sha, prog, size);
    ck_assert_uint_eq(m.len - head, size + 3 * (RNR_STREAM_FRAME_SIZE + RNR_STREAM_EXEC_HEAD));
    rnr_stream_parser *p = rnr_stream_parser_new("S", 1);
    ck_assert_int_eq(rnr_stream_feed(p, m.data, m.len, exec_block, &back), 0);
    ck_assert(back.len == size && memcmp(back.data, prog, size) == 0);
    /* Again: one block, at the size, no bytes. */
    size_t before = m.len;
    rnr_stream_put_exec(&m, sha, NULL, size);
    ck_assert_uint_eq(m.len - before, RNR_STREAM_FRAME_SIZE + RNR_STREAM_EXEC_HEAD);
    uint8_t s2[32];
    uint64_t sz, off;
    const uint8_t *bytes;
    size_t n;
    const uint8_t *pl = m.data + before + RNR_STREAM_FRAME_SIZE;
    ck_assert_int_eq(rnr_stream_get_exec(pl, RNR_STREAM_EXEC_HEAD, s2, &sz, &off, &bytes, &n), 0);
    ck_assert(sz == size && off == size && n == 0 && memcmp(s2, sha, 32) == 0);
    ck_assert_int_eq(rnr_stream_get_exec(pl, RNR_STREAM_EXEC_HEAD - 1, s2, &sz, &off, &bytes, &n), -1);
    /* The first block's bytes past a size of 10. */
    uint8_t *first = malloc(RNR_STREAM_EXEC_HEAD + 11);
    memcpy(first, m.data + head + RNR_STREAM_FRAME_SIZE, RNR_STREAM_EXEC_HEAD + 11);
    first[32] = 10;
    memset(first + 33, 0, 7);
    ck_assert_int_eq(rnr_stream_get_exec(first, RNR_STREAM_EXEC_HEAD + 11, s2, &sz, &off, &bytes, &n), -1);
    ck_assert_int_eq(rnr_stream_get_exec(first, RNR_STREAM_EXEC_HEAD + 10, s2, &sz, &off, &bytes, &n), 0);
    free(first);
    rnr_stream_parser_free(p);
    free(back.data);
    free(m.data);
    free(prog);
}
END_TEST

TU_SUITE(stream)
{
    Suite *s = suite_create("stream");
    TCase *tc = tu_tcase(s, "parser", 30);
    tcase_add_test(tc, stream_blocks_come_back_whole_however_the_bytes_are_cut);
    tcase_add_test(tc, stream_parser_names_each_kind_of_damage);
    tcase_add_test(tc, stream_exec_blocks_carry_a_program_in_order);
    return s;
}
