/* tests/fuzz/fuzz_manifest.c: the bundle manifest parser on any bytes;
 * whatever parses must save and parse again to the same pairs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "formats/manifest.h"
#include "tests/fuzz/fuzz_frame.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char err[256];
    rnr_manifest *m = rnr_manifest_parse((const char *)data, size, "fuzz", err, sizeof err);
    if (!m)
        return 0;
    char path[] = "/tmp/rnr-fuzz-manifest-XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0)
        abort();
    close(fd);
    if (rnr_manifest_save(m, path, err, sizeof err) < 0)
        abort();
    rnr_manifest *b = rnr_manifest_load(path, err, sizeof err);
    unlink(path);
    if (!b || rnr_manifest_count(b) != rnr_manifest_count(m))
        abort();
    for (size_t i = 0; i < rnr_manifest_count(m); i++)
        if (strcmp(rnr_manifest_key(m, i), rnr_manifest_key(b, i)) != 0 ||
            strcmp(rnr_manifest_value(m, i), rnr_manifest_value(b, i)) != 0)
            abort();
    rnr_manifest_free(b);
    rnr_manifest_free(m);
    return 0;
}
