/* tests/fuzz/fuzz_manifest.c: the bundle manifest parser on any bytes, and
 * on the same bytes framed as a manifest with a valid version line and
 * checksum (so that the key and value parser is reached); whatever parses
 * must save and parse again to the same pairs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "formats/digest.h"
#include "formats/manifest.h"
#include "tests/fuzz/fuzz_frame.h"

static void roundtrip(const char *text, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    roundtrip((const char *)data, size);
    static const char head[] = "rnr-manifest = " RNR_MANIFEST_VERSION_STR "\n";
    char *framed = malloc(sizeof head + size + 100);
    if (!framed)
        abort();
    size_t n = sizeof head - 1;
    memcpy(framed, head, n);
    memcpy(framed + n, data, size);
    n += size;
    framed[n++] = '\n';
    rnr_sha256 h;
    uint8_t d[RNR_SHA256_SIZE];
    char hex[RNR_SHA256_HEX];
    rnr_sha256_init(&h);
    rnr_sha256_update(&h, framed, n);
    rnr_sha256_final(&h, d);
    rnr_hex(d, sizeof d, hex);
    n += (size_t)sprintf(framed + n, RNR_MANIFEST_SUM_KEY " = %s\n", hex);
    roundtrip(framed, n);
    free(framed);
    return 0;
}

static void roundtrip(const char *text, size_t size)
{
    char err[256];
    rnr_manifest *m = rnr_manifest_parse(text, size, "fuzz", err, sizeof err);
    if (!m)
        return;
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
}
