/* formats/final.c: final-log chunk records (reader and writer).
 * MaxPar and Stitched (docs/formats.md, "MaxPar and Stitched logs"):
 *   head   varint  bit 0 cpu follows, bit 1 tid follows, bit 2 STV follows,
 *                  bit 3 PTV follows, bits 4, 5 below; bit 6 (adaptive logs
 *                  only) a phase starts here; higher bits zero
 *   [phase] varint present iff head bit 6: 1 MaxPar, 2 Stitched
 *   [cpu]  varint  present when cpu differs from the previous record's
 *   [tid]  varint  present when tid differs from this cpu's previous chunk
 *   cs     varint  >= 1
 *   [stv]  varint n >= 1, then n cpu gaps (first: cpu; then cpu - prev - 1);
 *          or (head bit 4, logs of 16 cpus or more, when shorter) a bitmap
 *          of ceil(cpus/8) bytes, bit q of byte q/8 for cpu q
 *   [ptv]  varint n >= 1, then n x (cpu gap, count >= 1); or (head bit 5,
 *          likewise) the bitmap, then the n counts in ascending cpu order
 * Serial and StSerial ("Serial and StSerial logs"):
 *   head   varint  cs << 1 | (1 if tid follows)
 *   [tid]  varint  present when tid differs from the previous record's */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "formats/codec.h"

enum { HEAD_CPU = 1, HEAD_TID = 2, HEAD_STV = 4, HEAD_PTV = 8, HEAD_STV_MAP = 16, HEAD_PTV_MAP = 32,
       HEAD_PHASE = 64 };

/* Dense vectors (a serialization's tokens to every cpu) as bitmaps, where
 * that is shorter and the log has this many cpus or more. */
#define MAP_MIN_CPUS 16u

static unsigned varint_len(uint64_t v)
{
    unsigned n = 1;
    while (v >= 0x80) {
        v >>= 7;
        n++;
    }
    return n;
}

/* 1 if the N ascending cpus at CPU_AT (STRIDE bytes apart) are shorter as
 * a bitmap than as a gap list. */
static int map_is_shorter(uint32_t cpus, uint32_t n, const uint32_t *cpu_at, size_t stride)
{
    if (cpus < MAP_MIN_CPUS || n == 0)
        return 0;
    const uint8_t *base = (const uint8_t *)cpu_at;
    uint64_t list = varint_len(n);
    uint32_t prev = 0;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t cpu = *(const uint32_t *)(const void *)(base + i * stride);
        list += varint_len(i == 0 ? cpu : cpu - prev - 1);
        prev = cpu;
    }
    return (cpus + 7) / 8 < list;
}

static void put_map(rnr_buf *out, uint32_t cpus, uint32_t n, const uint32_t *cpu_at, size_t stride)
{
    uint8_t map[RNR_MAX_CPUS / 8] = {0};
    const uint8_t *base = (const uint8_t *)cpu_at;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t cpu = *(const uint32_t *)(const void *)(base + i * stride);
        map[cpu / 8] |= (uint8_t)(1u << (cpu % 8));
    }
    rnr_buf_put_bytes(out, map, (cpus + 7) / 8);
}

static int cpu_list_check(const char *what, uint32_t self, uint32_t cpus, uint32_t n,
                          const uint32_t *cpu_at, size_t stride, char *err, size_t errlen)
{
    if (n > cpus - 1) {
        snprintf(err, errlen, "%s has %u entries for %u cpus", what, n, cpus);
        return -1;
    }
    const uint8_t *base = (const uint8_t *)cpu_at;
    uint32_t prev = 0;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t cpu = *(const uint32_t *)(const void *)(base + i * stride);
        if (cpu >= cpus || cpu == self || (i > 0 && cpu <= prev)) {
            snprintf(err, errlen, "%s entry for cpu %u is out of range, repeated, "
                     "out of order or the chunk's own cpu", what, cpu);
            return -1;
        }
        prev = cpu;
    }
    return 0;
}

int rnr_final_check(const codec_state *s, const rnr_final_chunk *c, char *err, size_t errlen)
{
    uint32_t cpus = s->h->cpus;
    if (c->tid == TID_NONE) {
        snprintf(err, errlen, "tid %u is reserved", c->tid);
        return -1;
    }
    if (c->cs == 0 || c->cs > (UINT64_MAX >> 1)) {
        snprintf(err, errlen, "chunk size %llu out of range", (unsigned long long)c->cs);
        return -1;
    }
    if (!rnr_log_kind_has_tokens(s->h->kind)) {
        if (c->cpu != 0 || c->nstv || c->nptv) {
            snprintf(err, errlen, "%s entries carry no cpu and no tokens",
                     rnr_log_kind_name(s->h->kind));
            return -1;
        }
        return 0;
    }
    if (c->cpu >= cpus) {
        snprintf(err, errlen, "cpu %u out of range (log has %u cpus)", c->cpu, cpus);
        return -1;
    }
    if (s->h->kind == RNR_LOG_ADAPTIVE) {
        if (c->phase > RNR_PHASE_FORMAT_MAX) {
            snprintf(err, errlen, "phase format %u unknown (1 maxpar, 2 stitched)", c->phase);
            return -1;
        }
        if (c->phase == RNR_PHASE_NONE && s->last_cpu == CPU_NONE) {
            snprintf(err, errlen, "the first record of an adaptive log starts no phase");
            return -1;
        }
    }
    if (cpu_list_check("successor token vector", c->cpu, cpus, c->nstv, c->stv,
                       sizeof *c->stv, err, errlen) < 0)
        return -1;
    if (c->nptv && cpu_list_check("predecessor token vector", c->cpu, cpus, c->nptv,
                                  &c->ptv[0].cpu, sizeof *c->ptv, err, errlen) < 0)
        return -1;
    for (uint32_t i = 0; i < c->nptv; i++) {
        if (c->ptv[i].count == 0) {
            snprintf(err, errlen, "predecessor token count from cpu %u is 0", c->ptv[i].cpu);
            return -1;
        }
    }
    return 0;
}

void rnr_final_encode(codec_state *s, const rnr_final_chunk *c, rnr_buf *out)
{
    if (!rnr_log_kind_has_tokens(s->h->kind)) {
        int new_tid = c->tid != s->last_tid;
        buf_put_varint(out, c->cs << 1 | (uint64_t)new_tid);
        if (new_tid)
            buf_put_varint(out, c->tid);
        s->last_tid = c->tid;
        return;
    }
    uint32_t cpus = s->h->cpus;
    int new_cpu = c->cpu != s->last_cpu;
    int new_tid = c->tid != s->cpu_tid[c->cpu];
    int stv_map = map_is_shorter(cpus, c->nstv, c->stv, sizeof *c->stv);
    int ptv_map = c->nptv && map_is_shorter(cpus, c->nptv, &c->ptv[0].cpu, sizeof *c->ptv);
    int phase = s->h->kind == RNR_LOG_ADAPTIVE && c->phase != RNR_PHASE_NONE;
    uint64_t head = (new_cpu ? HEAD_CPU : 0) | (new_tid ? HEAD_TID : 0) |
                    (c->nstv ? (stv_map ? HEAD_STV_MAP : HEAD_STV) : 0) |
                    (c->nptv ? (ptv_map ? HEAD_PTV_MAP : HEAD_PTV) : 0) |
                    (phase ? HEAD_PHASE : 0);
    buf_put_varint(out, head);
    if (phase)
        buf_put_varint(out, c->phase);
    if (new_cpu)
        buf_put_varint(out, c->cpu);
    if (new_tid)
        buf_put_varint(out, c->tid);
    buf_put_varint(out, c->cs);
    if (stv_map) {
        put_map(out, cpus, c->nstv, c->stv, sizeof *c->stv);
    } else if (c->nstv) {
        buf_put_varint(out, c->nstv);
        for (uint32_t i = 0; i < c->nstv; i++)
            buf_put_varint(out, i == 0 ? c->stv[0] : c->stv[i] - c->stv[i - 1] - 1);
    }
    if (ptv_map) {
        put_map(out, cpus, c->nptv, &c->ptv[0].cpu, sizeof *c->ptv);
        for (uint32_t i = 0; i < c->nptv; i++)
            buf_put_varint(out, c->ptv[i].count);
    } else if (c->nptv) {
        buf_put_varint(out, c->nptv);
        for (uint32_t i = 0; i < c->nptv; i++) {
            buf_put_varint(out, i == 0 ? c->ptv[0].cpu : c->ptv[i].cpu - c->ptv[i - 1].cpu - 1);
            buf_put_varint(out, c->ptv[i].count);
        }
    }
    s->last_cpu = c->cpu;
    s->cpu_tid[c->cpu] = c->tid;
}

#define FAIL(...) do { snprintf(err, errlen, __VA_ARGS__); return -1; } while (0)
#define GET(var, what) do { if (cur_varint(cur, &(var)) < 0) FAIL("malformed or cut " what); } while (0)

/* Reads a list of N cpu gaps into ascending cpus; with COUNTS, each cpu is
 * followed by a token count. */
static int get_cpu_list(rnr_cursor *cur, uint32_t cpus, int map, uint32_t *n_out, uint32_t **cpu_buf,
                        uint32_t *cpu_cap, rnr_ptv_entry **ptv_buf, uint32_t *ptv_cap,
                        const char *what, char *err, size_t errlen)
{
    uint64_t n = 0, gap, at = 0, count;
    uint8_t bits[RNR_MAX_CPUS / 8];
    uint32_t nb = (cpus + 7) / 8;
    if (map) {
        if (cpus < MAP_MIN_CPUS)
            FAIL("%s as a bitmap in a log of %u cpus", what, cpus);
        if ((size_t)(cur->end - cur->p) < nb)
            FAIL("malformed or cut %s bitmap", what);
        memcpy(bits, cur->p, nb);
        cur->p += nb;
        for (uint32_t q = 0; q < cpus; q++)
            n += (bits[q / 8] >> (q % 8)) & 1;
        if ((cpus % 8) && (bits[nb - 1] >> (cpus % 8)))
            FAIL("%s bitmap names cpus past the log's %u", what, cpus);
    } else {
        GET(n, "vector length");
    }
    if (n == 0 || n > cpus - 1)
        FAIL("%s has %llu entries for %u cpus", what, (unsigned long long)n, cpus);
    if (cpu_buf && n > *cpu_cap) {
        uint32_t *p = realloc(*cpu_buf, n * sizeof *p);
        if (!p)
            FAIL("out of memory");
        *cpu_buf = p;
        *cpu_cap = (uint32_t)n;
    }
    if (ptv_buf && n > *ptv_cap) {
        rnr_ptv_entry *p = realloc(*ptv_buf, n * sizeof *p);
        if (!p)
            FAIL("out of memory");
        *ptv_buf = p;
        *ptv_cap = (uint32_t)n;
    }
    for (uint64_t i = 0; i < n; i++) {
        if (map) {
            /* The next set bit: the entries come in ascending cpu order. */
            if (i > 0)
                at++;
            while (!((bits[at / 8] >> (at % 8)) & 1))
                at++;
        } else {
            GET(gap, "vector entry");
            at = i == 0 ? gap : at + gap + 1;
            if (gap >= cpus || at >= cpus)
                FAIL("%s cpu out of range (log has %u cpus)", what, cpus);
        }
        if (cpu_buf) {
            (*cpu_buf)[i] = (uint32_t)at;
        } else {
            GET(count, "token count");
            if (count == 0 || count > UINT32_MAX)
                FAIL("%s count %llu out of range", what, (unsigned long long)count);
            (*ptv_buf)[i].cpu = (uint32_t)at;
            (*ptv_buf)[i].count = (uint32_t)count;
        }
    }
    *n_out = (uint32_t)n;
    return 0;
}

int rnr_final_decode(codec_state *s, rnr_cursor *cur, decode_scratch *d,
                 rnr_final_chunk *c, char *err, size_t errlen)
{
    uint64_t head, v;
    uint32_t cpus = s->h->cpus;
    c->nstv = c->nptv = 0;
    c->stv = d->stv;
    c->ptv = d->ptv;
    c->cpu = 0;
    c->phase = RNR_PHASE_NONE;
    if (!rnr_log_kind_has_tokens(s->h->kind)) {
        GET(head, "record head");
        uint32_t tid = s->last_tid;
        if (head & 1) {
            GET(v, "tid");
            if (v >= TID_NONE)
                FAIL("tid %llu out of range", (unsigned long long)v);
            tid = (uint32_t)v;
        } else if (tid == TID_NONE) {
            FAIL("first record omits its tid");
        }
        c->tid = tid;
        c->cs = head >> 1;
        if (rnr_final_check(s, c, err, errlen) < 0)
            return -1;
        s->last_tid = tid;
        return 0;
    }
    GET(head, "record head");
    uint64_t known = HEAD_CPU | HEAD_TID | HEAD_STV | HEAD_PTV | HEAD_STV_MAP | HEAD_PTV_MAP |
                     (s->h->kind == RNR_LOG_ADAPTIVE ? HEAD_PHASE : 0);
    if ((head & ~known) ||
        ((head & HEAD_STV) && (head & HEAD_STV_MAP)) || ((head & HEAD_PTV) && (head & HEAD_PTV_MAP)))
        FAIL("record head 0x%llx has unknown bits", (unsigned long long)head);
    if (head & HEAD_PHASE) {
        GET(v, "phase format");
        if (v == RNR_PHASE_NONE || v > RNR_PHASE_FORMAT_MAX)
            FAIL("phase format %llu unknown (1 maxpar, 2 stitched)", (unsigned long long)v);
        c->phase = (uint32_t)v;
    }
    uint32_t cpu, tid;
    if (rnr_codec_get_cpu_tid(s, cur, head & HEAD_CPU, head & HEAD_TID, &cpu, &tid, err, errlen) < 0)
        return -1;
    GET(c->cs, "chunk size");
    c->cpu = cpu;
    c->tid = tid;
    if ((head & (HEAD_STV | HEAD_STV_MAP)) &&
        get_cpu_list(cur, cpus, (head & HEAD_STV_MAP) != 0, &c->nstv, &d->stv, &d->stv_cap, NULL,
                     NULL, "successor token vector", err, errlen) < 0)
        return -1;
    if ((head & (HEAD_PTV | HEAD_PTV_MAP)) &&
        get_cpu_list(cur, cpus, (head & HEAD_PTV_MAP) != 0, &c->nptv, NULL, NULL, &d->ptv,
                     &d->ptv_cap, "predecessor token vector", err, errlen) < 0)
        return -1;
    c->stv = d->stv;
    c->ptv = d->ptv;
    if (rnr_final_check(s, c, err, errlen) < 0)
        return -1;
    s->last_cpu = cpu;
    s->cpu_tid[cpu] = tid;
    return 0;
}
