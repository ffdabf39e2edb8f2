/* formats/manifest.c: reading and writing the bundle manifest. Values are
 * escaped so that any byte string survives: \\ \n \t \r and \xHH. */
#include "formats/manifest.h"
#include "formats/codec.h"
#include "formats/digest.h"
#include "formats/io.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MANIFEST_MAX_BYTES (16u << 20)

struct rnr_manifest {
    char **keys, **values;
    size_t n, cap;
    size_t *slot;              /* open addressing by key hash: index + 1, 0 empty */
    size_t nslot;              /* a power of two, more than twice n (0: none yet) */
};

static size_t key_hash(const char *k)
{
    uint64_t h = 0xcbf29ce484222325ull;   /* FNV-1a */
    for (; *k; k++)
        h = (h ^ (unsigned char)*k) * 0x100000001b3ull;
    return (size_t)(h ^ (h >> 29));
}

/* The slot holding KEY, or the empty slot where it would go. */
static size_t *find_slot(const rnr_manifest *m, const char *key)
{
    size_t mask = m->nslot - 1, i = key_hash(key) & mask;
    while (m->slot[i] && strcmp(m->keys[m->slot[i] - 1], key) != 0)
        i = (i + 1) & mask;
    return &m->slot[i];
}

/* Room in the index for one more key: rebuilt twice as large past half. */
static void index_grow(rnr_manifest *m)
{
    if (2 * (m->n + 1) < m->nslot)
        return;
    free(m->slot);
    m->nslot = m->nslot ? 2 * m->nslot : 64;
    m->slot = rnr_xrealloc(NULL, m->nslot * sizeof *m->slot);
    memset(m->slot, 0, m->nslot * sizeof *m->slot);
    for (size_t i = 0; i < m->n; i++)
        *find_slot(m, m->keys[i]) = i + 1;
}


rnr_manifest *rnr_manifest_new(void)
{
    rnr_manifest *m = rnr_xrealloc(NULL, sizeof *m);
    memset(m, 0, sizeof *m);
    return m;
}

void rnr_manifest_free(rnr_manifest *m)
{
    if (!m)
        return;
    for (size_t i = 0; i < m->n; i++) {
        free(m->keys[i]);
        free(m->values[i]);
    }
    free(m->keys);
    free(m->values);
    free(m->slot);
    free(m);
}

static int key_ok(const char *k)
{
    if (!*k)
        return 0;
    for (; *k; k++)
        if (!((*k >= 'a' && *k <= 'z') || (*k >= 'A' && *k <= 'Z') || (*k >= '0' && *k <= '9') ||
              *k == '_' || *k == '.' || *k == '-'))
            return 0;
    return 1;
}

const char *rnr_manifest_get(const rnr_manifest *m, const char *key)
{
    if (!m->nslot)
        return NULL;
    size_t i = *find_slot(m, key);
    return i ? m->values[i - 1] : NULL;
}

int rnr_manifest_get_u64(const rnr_manifest *m, const char *key, uint64_t *out)
{
    const char *v = rnr_manifest_get(m, key);
    if (!v || *v < '0' || *v > '9')
        return -1;
    errno = 0;
    char *end;
    unsigned long long x = strtoull(v, &end, 10);
    if (errno || *end)
        return -1;
    *out = x;
    return 0;
}

void rnr_manifest_set(rnr_manifest *m, const char *key, const char *value)
{
    if (!key_ok(key)) {
        fprintf(stderr, "rnr: internal error: bad manifest key '%s'\n", key);
        abort();
    }
    index_grow(m);
    size_t *slot = find_slot(m, key);
    if (*slot) {
        free(m->values[*slot - 1]);
        m->values[*slot - 1] = rnr_xstrdup(value);
        return;
    }
    if (m->n == m->cap) {
        m->cap = m->cap ? 2 * m->cap : 16;
        m->keys = rnr_xrealloc(m->keys, m->cap * sizeof *m->keys);
        m->values = rnr_xrealloc(m->values, m->cap * sizeof *m->values);
    }
    m->keys[m->n] = rnr_xstrdup(key);
    m->values[m->n] = rnr_xstrdup(value);
    *slot = ++m->n;
}

void rnr_manifest_set_u64(rnr_manifest *m, const char *key, uint64_t value)
{
    char buf[24];
    snprintf(buf, sizeof buf, "%" PRIu64, value);
    rnr_manifest_set(m, key, buf);
}

size_t rnr_manifest_count(const rnr_manifest *m) { return m->n; }
const char *rnr_manifest_key(const rnr_manifest *m, size_t i) { return m->keys[i]; }
const char *rnr_manifest_value(const rnr_manifest *m, size_t i) { return m->values[i]; }

/* A growing text buffer (the manifest's serialized form). */
typedef struct text_buf {
    char *p;
    size_t n, cap;
} text_buf;

static void buf_put(text_buf *b, const char *s, size_t n)
{
    if (b->n + n + 1 > b->cap) {
        while (b->n + n + 1 > b->cap)
            b->cap = b->cap ? 2 * b->cap : 4096;
        b->p = rnr_xrealloc(b->p, b->cap);
    }
    memcpy(b->p + b->n, s, n);
    b->n += n;
    b->p[b->n] = '\0';
}

static void buf_puts(text_buf *b, const char *s) { buf_put(b, s, strlen(s)); }

static void put_escaped(text_buf *b, const char *s)
{
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        switch (*p) {
        case '\\': buf_puts(b, "\\\\"); break;
        case '\n': buf_puts(b, "\\n"); break;
        case '\t': buf_puts(b, "\\t"); break;
        case '\r': buf_puts(b, "\\r"); break;
        default:
            if (*p < 0x20 || *p == 0x7f || (p == (const unsigned char *)s && *p == ' ') ||
                (p[1] == '\0' && *p == ' ')) {
                char esc[8];
                snprintf(esc, sizeof esc, "\\x%02x", *p);
                buf_puts(b, esc);
            } else {
                buf_put(b, (const char *)p, 1);
            }
        }
    }
}

/* The SHA-256 of the N bytes at P in hex. */
static void text_sha256(const char *p, size_t n, char hex[RNR_SHA256_HEX])
{
    rnr_sha256 s;
    uint8_t d[RNR_SHA256_SIZE];
    rnr_sha256_init(&s);
    rnr_sha256_update(&s, p, n);
    rnr_sha256_final(&s, d);
    rnr_hex(d, sizeof d, hex);
}

char *rnr_manifest_format(const rnr_manifest *m, size_t *len)
{
    text_buf b = { NULL, 0, 0 };
    char line[64];
    snprintf(line, sizeof line, "rnr-manifest = %u\n", RNR_MANIFEST_VERSION);
    buf_puts(&b, line);
    for (size_t i = 0; i < m->n; i++) {
        if (strcmp(m->keys[i], "rnr-manifest") == 0 || strcmp(m->keys[i], RNR_MANIFEST_SUM_KEY) == 0)
            continue;
        buf_puts(&b, m->keys[i]);
        buf_puts(&b, " = ");
        put_escaped(&b, m->values[i]);
        buf_puts(&b, "\n");
    }
    char hex[RNR_SHA256_HEX];
    text_sha256(b.p, b.n, hex);
    buf_puts(&b, RNR_MANIFEST_SUM_KEY " = ");
    buf_puts(&b, hex);
    buf_puts(&b, "\n");
    *len = b.n;
    return b.p;
}

int rnr_manifest_save(const rnr_manifest *m, const char *path, char *err, size_t errlen)
{
    size_t n = strlen(path) + 32;
    char *tmp = rnr_xrealloc(NULL, n);
    snprintf(tmp, n, "%s.%ld.tmp", path, (long)getpid());
    size_t len;
    char *text = rnr_manifest_format(m, &len);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    int rc = -1;
    if (fd < 0) {
        snprintf(err, errlen, "%s: %s", tmp, strerror(errno));
    } else if (rnr_write_full(fd, text, len) < 0 || fsync(fd) != 0) {
        snprintf(err, errlen, "%s: %s", tmp, strerror(errno ? errno : EIO));
    } else if (close(fd) != 0) {
        fd = -1;
        snprintf(err, errlen, "%s: %s", tmp, strerror(errno));
    } else if (fd = -1, rename(tmp, path) != 0) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
    } else {
        rc = 0;
    }
    if (fd >= 0)
        close(fd);
    if (rc < 0)
        unlink(tmp);
    free(text);
    free(tmp);
    return rc;
}

/* Unescapes S in place; -1 on a bad escape or an escaped NUL. */
static int unescape(char *s)
{
    char *out = s;
    for (char *p = s; *p; p++) {
        if (*p != '\\') {
            *out++ = *p;
            continue;
        }
        p++;
        switch (*p) {
        case '\\': *out++ = '\\'; break;
        case 'n': *out++ = '\n'; break;
        case 't': *out++ = '\t'; break;
        case 'r': *out++ = '\r'; break;
        case 'x': {
            int hi = p[1] ? rnr_hex_digit(p[1]) : -1, lo = hi >= 0 && p[2] ? rnr_hex_digit(p[2]) : -1;
            if (hi < 0 || lo < 0 || (hi | lo) == 0)
                return -1;
            *out++ = (char)(hi << 4 | lo);
            p += 2;
            break;
        }
        default:
            return -1;
        }
    }
    *out = '\0';
    return 0;
}

rnr_manifest *rnr_manifest_parse(const char *text, size_t len, const char *name, char *err,
                                 size_t errlen)
{
    rnr_manifest *m = rnr_manifest_new();
    const char *problem = NULL;
    unsigned lineno = 0;
    int have_version = 0;
    unsigned lineno_meaningful = 0, sum_at = 0;
    char msg[256];
    char *line = rnr_xrealloc(NULL, len + 1);
    size_t at = 0;
    if (len > MANIFEST_MAX_BYTES)
        problem = "manifest is larger than 16 MiB";
    while (!problem && at < len) {
        size_t line_start = at;
        const char *nl = memchr(text + at, '\n', len - at);
        size_t n = nl ? (size_t)(nl - (text + at)) : len - at;
        memcpy(line, text + at, n);
        line[n] = '\0';
        at += n + (nl != NULL);
        lineno++;
        if (strlen(line) != n) {
            problem = "NUL byte in line";
            break;
        }
        if (n == 0 || line[0] == '#')
            continue;
        lineno_meaningful++;
        char *eq = strstr(line, " = ");
        if (!eq) {
            problem = "expected 'key = value'";
            break;
        }
        *eq = '\0';
        char *value = eq + 3;
        if (!key_ok(line)) {
            problem = "invalid key";
            break;
        }
        if (unescape(value) < 0) {
            problem = "invalid escape in value";
            break;
        }
        if (sum_at) {
            problem = "a line after the checksum line";
            break;
        }
        if (strcmp(line, "rnr-manifest") == 0) {
            if (have_version || lineno_meaningful != 1) {
                problem = "the version line is not the first line";
                break;
            }
            if (strcmp(value, RNR_MANIFEST_VERSION_STR) != 0) {
                snprintf(msg, sizeof msg, "manifest version %.32s, this rnr reads version %u%s",
                         value, RNR_MANIFEST_VERSION,
                         strcmp(value, "1") == 0 ? " (recorded by an older rnr: record again)" : "");
                problem = msg;
                break;
            }
            have_version = 1;
            continue;
        }
        if (!have_version) {
            problem = "the first line is not 'rnr-manifest = " RNR_MANIFEST_VERSION_STR "'";
            break;
        }
        if (strcmp(line, RNR_MANIFEST_SUM_KEY) == 0) {
            char hex[RNR_SHA256_HEX];
            text_sha256(text, line_start, hex);
            if (strcmp(hex, value) != 0) {
                snprintf(msg, sizeof msg, "checksum %.64s does not match the content (SHA-256 %s): "
                         "the manifest was changed or damaged", value, hex);
                problem = msg;
                break;
            }
            sum_at = lineno;
            continue;
        }
        if (rnr_manifest_get(m, line)) {
            problem = "key appears twice";
            break;
        }
        rnr_manifest_set(m, line, value);
    }
    free(line);
    if (!problem && !have_version) {
        problem = "not an rnr manifest (no 'rnr-manifest = " RNR_MANIFEST_VERSION_STR "' line)";
        lineno = 0;
    } else if (!problem && !sum_at) {
        problem = "no '" RNR_MANIFEST_SUM_KEY "' line at the end (cut short?)";
        lineno = 0;
    }
    if (problem) {
        if (lineno)
            snprintf(err, errlen, "%s: line %u: %s", name, lineno, problem);
        else
            snprintf(err, errlen, "%s: %s", name, problem);
        rnr_manifest_free(m);
        return NULL;
    }
    return m;
}

rnr_manifest *rnr_manifest_load(const char *path, char *err, size_t errlen)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return NULL;
    }
    size_t cap = 4096, len = 0;
    char *text = rnr_xrealloc(NULL, cap);
    for (;;) {
        if (len == cap) {
            if (cap > MANIFEST_MAX_BYTES) {
                break;
            }
            cap *= 2;
            text = rnr_xrealloc(text, cap);
        }
        size_t n = fread(text + len, 1, cap - len, f);
        len += n;
        if (n == 0)
            break;
    }
    int bad = ferror(f);
    fclose(f);
    if (bad) {
        snprintf(err, errlen, "%s: read error", path);
        free(text);
        return NULL;
    }
    rnr_manifest *m = rnr_manifest_parse(text, len, path, err, errlen);
    free(text);
    return m;
}
