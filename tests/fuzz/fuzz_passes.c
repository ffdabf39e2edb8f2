/* tests/fuzz/fuzz_passes.c: the backend passes on hostile input: fuzz
 * bytes framed as an initial log go through MaxPar, and whatever MaxPar
 * accepts goes on through Stitch and Serial. No input may crash a pass;
 * every log a pass writes must be readable again. */
#include "backend/passes.h"
#include "tests/fuzz/fuzz_frame.h"

/* Runs KIND on IN; on success returns the output (caller frees). */
static uint8_t *run(pass_kind kind, const uint8_t *in, size_t len, size_t *out_len)
{
    rnr_membuf out = { 0 };
    char err[RNR_ERR_MAX];
    if (pass_run_memory(kind, in, len, &out, NULL, NULL, err, sizeof err) < 0) {
        free(out.data);
        return NULL;
    }
    /* A pass's output must read back cleanly. */
    rnr_reader *r = rnr_reader_open_io(rnr_io_mem_reader(out.data, out.len, "out"), err, sizeof err);
    if (!r || drain_reader(r) != 0)
        abort();
    rnr_reader_close(r);
    *out_len = out.len;
    return out.data;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    size_t len, mp_len, st_len, s_len;
    uint8_t *initial = frame_log(RNR_LOG_INITIAL, data, size, &len);
    /* frame_log leaves out the end block; add one so that a well-formed
     * record stream is a complete log: count the records first. */
    char err[RNR_ERR_MAX];
    rnr_reader *r = rnr_reader_open_io(rnr_io_mem_reader(initial, len, "in"), err, sizeof err);
    uint64_t records = 0;
    rnr_initial_chunk c;
    while (r && rnr_reader_next_initial(r, &c) == 1)
        records++;
    rnr_reader_close(r);
    uint8_t *full = realloc(initial, len + RNR_BLOCK_HEADER_SIZE + 10);
    if (!full)
        abort();
    uint8_t *h = full + len;
    uint8_t payload[10];
    size_t n = 0;
    for (uint64_t v = records; ; v >>= 7) {
        payload[n++] = (uint8_t)(v >= 0x80 ? (v & 0x7f) | 0x80 : v);
        if (v < 0x80)
            break;
    }
    put_le32(h, (uint32_t)n);
    put_le32(h + 4, (uint32_t)n);
    put_le32(h + 8, 0);
    put_le32(h + 12, 2);
    memcpy(h + RNR_BLOCK_HEADER_SIZE, payload, n);
    put_le32(h + 16, (uint32_t)crc32(crc32(0L, h, 16), payload, (uInt)n));
    len += RNR_BLOCK_HEADER_SIZE + n;

    uint8_t *maxpar = run(PASS_MAXPAR, full, len, &mp_len);
    if (maxpar) {
        uint8_t *stitched = run(PASS_STITCH, maxpar, mp_len, &st_len);
        free(run(PASS_SERIAL, maxpar, mp_len, &s_len));
        if (stitched)
            free(run(PASS_SERIAL, stitched, st_len, &s_len));
        free(stitched);
        free(maxpar);
    }
    free(full);
    return 0;
}
