/* driver/inputlog.c: the input-log writer over formats/log.h. */
#include "driver/inputlog.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "formats/log.h"

struct inlog {
    rnr_writer *w;
    int failed;
    uint64_t records;
};

inlog *inlog_open(const char *path, unsigned cpus, const uint8_t program_sha256[32], char *err,
                  size_t errlen)
{
    rnr_log_header h;
    memset(&h, 0, sizeof h);
    h.kind = RNR_LOG_INPUT;
    h.cpus = cpus;
    if (program_sha256)
        memcpy(h.program_sha256, program_sha256, 32);
    rnr_writer_opts o = {0, 1};   /* zlib's fastest level: the recorder writes it live */
    rnr_writer *w = rnr_writer_open(path, &h, &o, err, errlen);
    if (!w)
        return NULL;
    inlog *l = calloc(1, sizeof *l);
    if (!l) {
        rnr_writer_abandon(w);
        snprintf(err, errlen, "%s: out of memory", path);
        return NULL;
    }
    l->w = w;
    return l;
}

static int put(inlog *l, const rnr_input_record *r)
{
    if (l->failed)
        return -1;
    if (rnr_writer_put_input(l->w, r) < 0) {
        l->failed = 1;
        return -1;
    }
    l->records++;
    return 0;
}

int inlog_syscall(inlog *l, uint32_t tid, uint64_t nr, int64_t value)
{
    rnr_input_record r = {RNR_IN_SYSCALL, tid, nr, value, 0, 0, NULL};
    return put(l, &r);
}

int inlog_csr(inlog *l, uint32_t tid, uint32_t csr, uint64_t value)
{
    rnr_input_record r = {RNR_IN_CSR, tid, csr, (int64_t)value, 0, 0, NULL};
    return put(l, &r);
}

int inlog_sc(inlog *l, uint32_t tid, uint64_t ordinal, uint64_t rd_value, uint64_t addr)
{
    rnr_input_record r = {RNR_IN_SC, tid, ordinal, (int64_t)rd_value, addr, 0, NULL};
    return put(l, &r);
}

int inlog_flush(inlog *l)
{
    if (l->failed || rnr_writer_flush(l->w) < 0) {
        l->failed = 1;
        return -1;
    }
    return 0;
}

int inlog_check(inlog *l, uint32_t tid, uint64_t instret, uint64_t pc, uint64_t hash)
{
    rnr_input_record r = {RNR_IN_CHECK, tid, instret, (int64_t)pc, hash, 0, NULL};
    return put(l, &r);
}

static int put_bytes(inlog *l, uint32_t type, uint32_t tid, uint64_t addr, const void *data,
                     uint64_t len)
{
    const uint8_t *d = data;
    do {
        uint64_t n = len > INLOG_MEM_PIECE ? INLOG_MEM_PIECE : len;
        rnr_input_record r = {type, tid, 0, 0, addr, n, d};
        if (put(l, &r) < 0)
            return -1;
        addr += n;
        d += n;
        len -= n;
    } while (len > 0);
    return 0;
}

int inlog_mem(inlog *l, uint32_t tid, uint64_t addr, const void *data, uint64_t len)
{
    return put_bytes(l, RNR_IN_MEM, tid, addr, data, len);
}

int inlog_start(inlog *l, uint32_t tid, uint64_t addr, const void *data, uint64_t len)
{
    return put_bytes(l, RNR_IN_START, tid, addr, data, len);
}

const char *inlog_error(const inlog *l)
{
    return l->failed ? rnr_writer_error(l->w) : "";
}

uint64_t inlog_records(const inlog *l) { return l->records; }

int inlog_close(inlog *l, char *err, size_t errlen)
{
    int rc = rnr_writer_close(l->w, err, errlen);
    free(l);
    return rc;
}

void inlog_pending_add(inlog_pending *p, uint64_t addr, const void *data, uint64_t len)
{
    if (p->n == p->cap) {
        p->cap = p->cap ? 2 * p->cap : 4;
        p->v = realloc(p->v, p->cap * sizeof *p->v);
        if (!p->v)
            abort();
    }
    uint8_t *copy = malloc(len ? len : 1);
    if (!copy)
        abort();
    memcpy(copy, data, len);
    p->v[p->n++] = (inlog_piece){addr, len, copy};
}

int inlog_pending_flush(inlog *l, uint32_t tid, inlog_pending *p)
{
    int rc = 0;
    for (size_t i = 0; i < p->n; i++) {
        if (l && rc == 0)
            rc = inlog_mem(l, tid, p->v[i].addr, p->v[i].data, p->v[i].len);
        free(p->v[i].data);
    }
    p->n = 0;
    return rc;
}

void inlog_pending_free(inlog_pending *p)
{
    inlog_pending_flush(NULL, 0, p);
    free(p->v);
    memset(p, 0, sizeof *p);
}
