/* tests/fuzz/fuzz_maxpar.c: the maxpar record decoder on fuzz bytes framed
 * into blocks with valid checksums. */
#include "tests/fuzz/fuzz_frame.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return fuzz_framed(RNR_LOG_MAXPAR, data, size);
}
