/* formats/digest.c: SHA-256 through nettle, and hex helpers. */
#include "formats/digest.h"

#include <errno.h>
#include <fcntl.h>
#include <nettle/sha2.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

_Static_assert(sizeof(struct sha256_ctx) <= sizeof(rnr_sha256), "rnr_sha256 too small");

void rnr_sha256_init(rnr_sha256 *s) { sha256_init((struct sha256_ctx *)(void *)s); }

void rnr_sha256_update(rnr_sha256 *s, const void *p, size_t n)
{
    sha256_update((struct sha256_ctx *)(void *)s, n, p);
}

void rnr_sha256_final(rnr_sha256 *s, uint8_t out[RNR_SHA256_SIZE])
{
    sha256_digest((struct sha256_ctx *)(void *)s, RNR_SHA256_SIZE, out);
}

int rnr_sha256_file(const char *path, uint8_t out[RNR_SHA256_SIZE], char *err, size_t errlen)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return -1;
    }
    rnr_sha256 s;
    rnr_sha256_init(&s);
    uint8_t buf[65536];
    for (;;) {
        ssize_t n = read(fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            snprintf(err, errlen, "%s: %s", path, strerror(errno));
            close(fd);
            return -1;
        }
        if (n == 0)
            break;
        rnr_sha256_update(&s, buf, (size_t)n);
    }
    close(fd);
    rnr_sha256_final(&s, out);
    return 0;
}

void rnr_hex(const uint8_t *p, size_t n, char *out)
{
    static const char digits[] = "0123456789abcdef";
    for (size_t i = 0; i < n; i++) {
        out[2 * i] = digits[p[i] >> 4];
        out[2 * i + 1] = digits[p[i] & 15];
    }
    out[2 * n] = '\0';
}

int rnr_hex_digit(int c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

int rnr_unhex(const char *s, uint8_t *out, size_t n)
{
    if (strlen(s) != 2 * n)
        return -1;
    for (size_t i = 0; i < n; i++) {
        int hi = rnr_hex_digit(s[2 * i]), lo = rnr_hex_digit(s[2 * i + 1]);
        if (hi < 0 || lo < 0)
            return -1;
        out[i] = (uint8_t)(hi << 4 | lo);
    }
    return 0;
}
