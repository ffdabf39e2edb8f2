/* tests/fuzz/fuzz_frame.h: shared by the libFuzzer targets: wraps fuzz
 * bytes into a log with valid header and block checksums, so that the
 * record decoders themselves are exercised (random bytes almost never pass
 * a CRC), and drains a reader of any kind. */
#ifndef RNR_TESTS_FUZZ_FRAME_H
#define RNR_TESTS_FUZZ_FRAME_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "formats/log.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static inline void put_le32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

/* Builds: header(kind, cpus) + the payload split into blocks at the cut
 * points given by the first bytes of DATA. Returns a malloc'd buffer. */
static inline uint8_t *frame_log(uint32_t kind, const uint8_t *data, size_t size, size_t *out_len)
{
    uint32_t cpus = size > 0 ? 1 + data[0] % 16 : 1;
    unsigned nblocks = size > 1 ? 1 + data[1] % 4 : 1;
    data += size > 2 ? 2 : size;
    size -= size > 2 ? 2 : size;
    uint8_t *out = malloc(RNR_LOG_HEADER_SIZE + size + (nblocks + 1) * RNR_BLOCK_HEADER_SIZE + 16);
    size_t at = 0;
    memset(out, 0, RNR_LOG_HEADER_SIZE);
    memcpy(out, RNR_LOG_MAGIC, RNR_LOG_MAGIC_LEN);
    out[8] = RNR_LOG_VERSION;
    out[10] = (uint8_t)kind;
    put_le32(out + 12, cpus);
    put_le32(out + 60, (uint32_t)crc32(0L, out, 60));
    at = RNR_LOG_HEADER_SIZE;
    size_t per = nblocks ? size / nblocks + 1 : size;
    for (size_t off = 0; off < size; off += per) {
        size_t n = size - off < per ? size - off : per;
        uint8_t *h = out + at;
        put_le32(h, (uint32_t)n);
        put_le32(h + 4, (uint32_t)n);
        /* Record count: one per 3 bytes, at least 1 (the decoder checks). */
        put_le32(h + 8, (uint32_t)(n / 3 ? n / 3 : 1));
        put_le32(h + 12, 0);
        memcpy(h + RNR_BLOCK_HEADER_SIZE, data + off, n);
        uLong crc = crc32(crc32(0L, h, 16), data + off, (uInt)n);
        put_le32(h + 16, (uint32_t)crc);
        at += RNR_BLOCK_HEADER_SIZE + n;
    }
    *out_len = at;
    return out;
}

/* Reads every record; returns the reader's final status. */
static inline int drain_reader(rnr_reader *r)
{
    uint32_t kind = rnr_reader_header(r)->kind;
    int rc;
    do {
        if (kind == RNR_LOG_INITIAL) {
            rnr_initial_chunk c;
            rc = rnr_reader_next_initial(r, &c);
        } else if (kind == RNR_LOG_INPUT) {
            rnr_input_record in;
            rc = rnr_reader_next_input(r, &in);
        } else {
            rnr_final_chunk c;
            rc = rnr_reader_next_final(r, &c);
        }
    } while (rc == 1);
    return rc;
}

static inline int fuzz_framed(uint32_t kind, const uint8_t *data, size_t size)
{
    size_t len;
    uint8_t *bytes = frame_log(kind, data, size, &len);
    char err[RNR_ERR_MAX];
    rnr_reader *r = rnr_reader_open_io(rnr_io_mem_reader(bytes, len, "fuzz"), err, sizeof err);
    if (r) {
        drain_reader(r);
        rnr_reader_close(r);
    }
    free(bytes);
    return 0;
}

#endif
