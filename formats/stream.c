/* formats/stream.c: the on-line stream's framing and incremental parser
 * (formats/stream.h, docs/online.md). */
#include "formats/stream.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "formats/codec.h"

static const char *const type_names[RNR_ST_MAX + 1] = {
    "?", "manifest", "program", "initial", "input", "final", "stdout", "stderr",
    "progress", "end", "ack", "exec",
};

const char *rnr_stream_type_name(uint32_t type)
{
    return type >= 1 && type <= RNR_ST_MAX ? type_names[type] : "?";
}

static void put_le(uint8_t *p, uint64_t v, unsigned n)
{
    for (unsigned i = 0; i < n; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t get_le(const uint8_t *p, unsigned n)
{
    uint64_t v = 0;
    for (unsigned i = 0; i < n; i++)
        v |= (uint64_t)p[i] << (8 * i);
    return v;
}

static uint8_t *grow(rnr_membuf *out, size_t n)
{
    if (out->len + n > out->cap) {
        size_t cap = out->cap ? out->cap : 4096;
        while (cap < out->len + n)
            cap *= 2;
        out->data = rnr_xrealloc(out->data, cap);
        out->cap = cap;
    }
    uint8_t *p = out->data + out->len;
    out->len += n;
    return p;
}

void rnr_stream_put_header(rnr_membuf *out)
{
    uint8_t *p = grow(out, RNR_STREAM_HEADER_SIZE);
    memcpy(p, RNR_STREAM_MAGIC, RNR_STREAM_MAGIC_LEN);
    put_le(p + 8, RNR_STREAM_VERSION, 4);
    put_le(p + 12, 0, 4);
}

/* The frame's CRC covers its type and length and then the payload. */
static uint32_t frame_crc(const uint8_t *frame8, const uint8_t *payload, size_t n)
{
    uLong c = crc32(0L, frame8, 8);
    return (uint32_t)crc32(c, payload, (uInt)n);
}

void rnr_stream_put_block(rnr_membuf *out, uint32_t type, const void *payload, size_t n)
{
    if (n > RNR_STREAM_BLOCK_MAX) {
        fprintf(stderr, "rnr: internal error: a stream block of %zu bytes\n", n);
        abort();
    }
    uint8_t *p = grow(out, RNR_STREAM_FRAME_SIZE + n);
    put_le(p, type, 4);
    put_le(p + 4, n, 4);
    if (n)
        memcpy(p + RNR_STREAM_FRAME_SIZE, payload, n);
    put_le(p + 8, frame_crc(p, p + RNR_STREAM_FRAME_SIZE, n), 4);
}

void rnr_stream_put_u64s(rnr_membuf *out, uint32_t type, const uint64_t *v, size_t n)
{
    uint8_t buf[8 * 8];
    if (n > 8)
        abort();
    for (size_t i = 0; i < n; i++)
        put_le(buf + 8 * i, v[i], 8);
    rnr_stream_put_block(out, type, buf, 8 * n);
}

int rnr_stream_get_u64s(const uint8_t *p, size_t len, uint64_t *v, size_t n)
{
    if (len != 8 * n)
        return -1;
    for (size_t i = 0; i < n; i++)
        v[i] = get_le(p + 8 * i, 8);
    return 0;
}

struct rnr_stream_parser {
    char *name;
    int want_header, started, failed;
    uint8_t *buf;              /* an incomplete header or block */
    size_t len, cap;
    uint64_t offset;           /* bytes fed */
    uint64_t at;               /* stream offset of buf[0] */
    char error[RNR_ERR_MAX];
};

rnr_stream_parser *rnr_stream_parser_new(const char *name, int header)
{
    rnr_stream_parser *p = rnr_xrealloc(NULL, sizeof *p);
    memset(p, 0, sizeof *p);
    p->name = rnr_xrealloc(NULL, strlen(name) + 1);
    memcpy(p->name, name, strlen(name) + 1);
    p->want_header = header;
    p->started = !header;
    return p;
}

void rnr_stream_parser_free(rnr_stream_parser *p)
{
    if (!p)
        return;
    free(p->buf);
    free(p->name);
    free(p);
}

const char *rnr_stream_parser_error(const rnr_stream_parser *p) { return p->error; }
int rnr_stream_parser_started(const rnr_stream_parser *p) { return p->started; }
uint64_t rnr_stream_parser_offset(const rnr_stream_parser *p) { return p->offset; }
size_t rnr_stream_parser_pending(const rnr_stream_parser *p) { return p->len; }

#define FAIL(...)                                                                            \
    do {                                                                                     \
        int k_ = snprintf(p->error, sizeof p->error, "%s: offset %" PRIu64 ": ", p->name, at); \
        if (k_ > 0 && (size_t)k_ < sizeof p->error)                                          \
            snprintf(p->error + k_, sizeof p->error - (size_t)k_, __VA_ARGS__);             \
        p->failed = 1;                                                                       \
        return -1;                                                                           \
    } while (0)

/* The header at H (RNR_STREAM_HEADER_SIZE bytes, or fewer if the stream
 * has shown that many and they already differ from the magic). */
static int check_header(rnr_stream_parser *p, const uint8_t *h, size_t n, uint64_t at)
{
    size_t m = n < RNR_STREAM_MAGIC_LEN ? n : RNR_STREAM_MAGIC_LEN;
    if (memcmp(h, RNR_STREAM_MAGIC, m) != 0)
        FAIL("not an rnr stream (no stream magic: is the other end `rnr record --stream`?)");
    if (n < RNR_STREAM_HEADER_SIZE)
        return 0;
    uint64_t v = get_le(h + 8, 4), flags = get_le(h + 12, 4);
    if (v != RNR_STREAM_VERSION)
        FAIL("stream version %" PRIu64 ", this rnr reads version %u (use the same rnr on both ends)",
             v, RNR_STREAM_VERSION);
    if (flags != 0)
        FAIL("stream header flags 0x%" PRIx64 " unknown to this rnr", flags);
    return 0;
}

/* One block whose frame is at F with its payload after it: checked, then
 * handed to FN. */
static int check_frame(rnr_stream_parser *p, const uint8_t *f, uint64_t at, uint32_t *type,
                       uint32_t *len)
{
    *type = (uint32_t)get_le(f, 4);
    *len = (uint32_t)get_le(f + 4, 4);
    if (*type < 1 || *type > RNR_ST_MAX)
        FAIL("unknown block type %" PRIu32, *type);
    if (*len > RNR_STREAM_BLOCK_MAX)
        FAIL("a %s block of %" PRIu32 " bytes (more than %u)", rnr_stream_type_name(*type), *len,
             RNR_STREAM_BLOCK_MAX);
    return 0;
}

int rnr_stream_feed(rnr_stream_parser *p, const uint8_t *in, size_t n, rnr_stream_block_fn fn,
                    void *ctx)
{
    if (p->failed)
        return -1;
    p->offset += n;
    /* Simplest correct form: append, then consume every complete unit from
     * the front. The buffer holds at most one header or block plus N. */
    if (p->len + n > p->cap) {
        size_t cap = p->cap ? p->cap : 4096;
        while (cap < p->len + n)
            cap *= 2;
        p->buf = rnr_xrealloc(p->buf, cap);
        p->cap = cap;
    }
    if (n)
        memcpy(p->buf + p->len, in, n);
    p->len += n;
    size_t pos = 0;
    int rc = 0;
    while (rc == 0) {
        uint64_t at = p->at + pos;
        const uint8_t *b = p->buf + pos;
        size_t left = p->len - pos;
        if (p->want_header) {
            if (check_header(p, b, left < RNR_STREAM_HEADER_SIZE ? left : RNR_STREAM_HEADER_SIZE,
                             at) < 0)
                return -1;
            if (left < RNR_STREAM_HEADER_SIZE)
                break;
            p->want_header = 0;
            p->started = 1;
            pos += RNR_STREAM_HEADER_SIZE;
            continue;
        }
        if (left < RNR_STREAM_FRAME_SIZE)
            break;
        uint32_t type, len;
        if (check_frame(p, b, at, &type, &len) < 0)
            return -1;
        if (left < RNR_STREAM_FRAME_SIZE + (size_t)len)
            break;
        uint32_t want = (uint32_t)get_le(b + 8, 4);
        uint32_t got = frame_crc(b, b + RNR_STREAM_FRAME_SIZE, len);
        if (want != got)
            FAIL("%s block of %" PRIu32 " bytes: CRC-32 %08" PRIx32 ", the frame says %08" PRIx32,
                 rnr_stream_type_name(type), len, got, want);
        pos += RNR_STREAM_FRAME_SIZE + len;
        if (fn(ctx, type, b + RNR_STREAM_FRAME_SIZE, len) < 0) {
            p->failed = 1;
            rc = -1;
        }
    }
    if (pos && p->len > pos)
        memmove(p->buf, p->buf + pos, p->len - pos);
    p->len -= pos;
    p->at += pos;
    return rc;
}

void rnr_stream_put_exec(rnr_membuf *out, const uint8_t sha[32], const void *file, uint64_t size)
{
    const size_t room = RNR_STREAM_BLOCK_MAX - RNR_STREAM_EXEC_HEAD;
    uint8_t *buf = malloc(RNR_STREAM_BLOCK_MAX);
    if (!buf)
        abort();
    uint64_t off = file ? 0 : size;
    do {
        uint64_t k = size - off < room ? size - off : room;
        memcpy(buf, sha, 32);
        put_le(buf + 32, size, 8);
        put_le(buf + 40, off, 8);
        if (k)
            memcpy(buf + RNR_STREAM_EXEC_HEAD, (const uint8_t *)file + off, (size_t)k);
        rnr_stream_put_block(out, RNR_ST_EXEC, buf, RNR_STREAM_EXEC_HEAD + (size_t)k);
        off += k;
    } while (off < size);
    free(buf);
}

int rnr_stream_get_exec(const uint8_t *p, size_t len, uint8_t sha[32], uint64_t *size,
                        uint64_t *offset, const uint8_t **bytes, size_t *n)
{
    if (len < RNR_STREAM_EXEC_HEAD)
        return -1;
    memcpy(sha, p, 32);
    *size = get_le(p + 32, 8);
    *offset = get_le(p + 40, 8);
    *bytes = p + RNR_STREAM_EXEC_HEAD;
    *n = len - RNR_STREAM_EXEC_HEAD;
    return *offset <= *size && *n <= *size - *offset ? 0 : -1;
}
