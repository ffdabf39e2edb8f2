/* tests/fuzz/fuzz_stream.c: the on-line stream's parser (formats/stream.c)
 * on any bytes, fed in pieces cut where the first byte says, as a stream
 * with a header and as a back channel; and the same bytes framed as valid
 * blocks must come back whole, however they are cut. */
#include <stdlib.h>
#include <string.h>

#include "formats/stream.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef struct expect {
    const uint8_t *data;    /* the blocks' payloads, in order, back to back */
    size_t at, n, blocks;
} expect;

static int ignore(void *ctx, uint32_t type, const uint8_t *p, size_t len)
{
    (void)ctx;
    uint64_t v[3];
    if (type == RNR_ST_PROGRESS)
        rnr_stream_get_u64s(p, len, v, 3);
    if (type == RNR_ST_EXEC) {
        uint8_t sha[32];
        uint64_t size, off;
        const uint8_t *bytes;
        size_t n;
        /* A block it accepts has its bytes inside the payload and the size. */
        if (rnr_stream_get_exec(p, len, sha, &size, &off, &bytes, &n) == 0 &&
            (bytes + n != p + len || off > size || n > size - off))
            abort();
    }
    return 0;
}

static int check(void *ctx, uint32_t type, const uint8_t *p, size_t len)
{
    expect *e = ctx;
    if (type < 1 || type > RNR_ST_MAX || e->at + len > e->n || memcmp(e->data + e->at, p, len) != 0)
        abort();
    e->at += len;
    e->blocks++;
    return 0;
}

static void feed_cut(rnr_stream_parser *p, const uint8_t *d, size_t n, size_t step,
                     rnr_stream_block_fn fn, void *ctx)
{
    for (size_t at = 0; at < n;) {
        size_t k = n - at < step ? n - at : step;
        if (rnr_stream_feed(p, d + at, k, fn, ctx) < 0)
            return;
        at += k;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    size_t step = size ? 1 + data[0] % 64 : 1;
    rnr_stream_parser *p = rnr_stream_parser_new("fuzz", 1);
    feed_cut(p, data, size, step, ignore, NULL);
    rnr_stream_parser_free(p);
    p = rnr_stream_parser_new("acks", 0);
    feed_cut(p, data, size, step, ignore, NULL);
    rnr_stream_parser_free(p);

    /* Valid framing: the bytes cut into blocks of types and lengths the
     * bytes choose; the parser must hand back exactly those payloads. */
    rnr_membuf m = { NULL, 0, 0 };
    rnr_stream_put_header(&m);
    size_t blocks = 0;
    for (size_t at = 1; at < size;) {
        uint32_t type = 1 + data[at] % RNR_ST_MAX;
        size_t len = at + 1 < size ? data[at + 1] : 0;
        at += 2;
        if (len > size - (at < size ? at : size))
            len = at < size ? size - at : 0;
        rnr_stream_put_block(&m, type, at < size ? data + at : NULL, len);
        blocks++;
        at += len;
    }
    uint8_t *payloads = malloc(size + 1);
    size_t np = 0;
    for (size_t at = 1; at < size;) {
        size_t len = at + 1 < size ? data[at + 1] : 0;
        at += 2;
        if (len > size - (at < size ? at : size))
            len = at < size ? size - at : 0;
        if (len)
            memcpy(payloads + np, data + at, len);
        np += len;
        at += len;
    }
    expect e = { payloads, 0, np, 0 };
    p = rnr_stream_parser_new("framed", 1);
    feed_cut(p, m.data, m.len, step, check, &e);
    if (*rnr_stream_parser_error(p) || e.blocks != blocks || e.at != np ||
        rnr_stream_parser_pending(p) != 0)
        abort();
    rnr_stream_parser_free(p);
    free(payloads);
    free(m.data);
    return 0;
}
