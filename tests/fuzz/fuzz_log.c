/* tests/fuzz/fuzz_log.c: any bytes as a whole log file (header, frames,
 * checksums, compression, records of the kind the header names). */
#include "tests/fuzz/fuzz_frame.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char err[RNR_ERR_MAX];
    rnr_reader *r = rnr_reader_open_io(rnr_io_mem_reader(data, size, "fuzz"), err, sizeof err);
    if (r) {
        drain_reader(r);
        rnr_reader_close(r);
    }
    return 0;
}
