/* tests/fuzz/fuzz_serial.c: the serial record decoder on fuzz bytes framed
 * into blocks with valid checksums. */
#include "tests/fuzz/fuzz_frame.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return fuzz_framed(RNR_LOG_SERIAL, data, size);
}
