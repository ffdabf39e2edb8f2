/* formats/initial.c: the initial-log chunk record (reader and writer).
 * Encoding (docs/formats.md, "Initial log"):
 *   head   varint  bits 0-3 reason, bit 4 cpu follows, bit 5 tid follows,
 *                  bit 6 successor vector follows; higher bits zero
 *   [cpu]  varint  present when cpu differs from the previous record's
 *   [tid]  varint  present when tid differs from this cpu's previous chunk
 *   dts    varint  ts minus this cpu's previous ts (0 before its first chunk)
 *   cs     varint  >= 1
 *   [sv]   varint n >= 1, then n x (cpu gap, ts - chunk ts), cpu gap being
 *                  the cpu for the first entry and cpu - previous - 1 after
 *   [svall] varint ts - chunk ts: bit 7 of the head says the successor
 *                  vector holds every other cpu at that one time (what a
 *                  serialization or an eviction writes; dense, so the list
 *                  form would cost two bytes a cpu) */
#include <stdio.h>
#include <stdlib.h>

#include "formats/codec.h"

enum {
    HEAD_REASON = 0x0f,
    HEAD_CPU = 0x10,
    HEAD_TID = 0x20,
    HEAD_SV = 0x40,
    HEAD_SVALL = 0x80,
};

/* 1 if C's SV holds every other cpu, all at one time. */
static int sv_is_uniform(const codec_state *s, const rnr_initial_chunk *c)
{
    if (s->h->cpus < 3 || c->nsv != s->h->cpus - 1)
        return 0;
    for (uint32_t i = 1; i < c->nsv; i++)
        if (c->sv[i].ts != c->sv[0].ts)
            return 0;
    return 1;
}

int rnr_initial_check(const codec_state *s, const rnr_initial_chunk *c, char *err, size_t errlen)
{
    uint32_t cpus = s->h->cpus;
    if (c->cpu >= cpus) {
        snprintf(err, errlen, "cpu %u out of range (log has %u cpus)", c->cpu, cpus);
        return -1;
    }
    if (c->tid == TID_NONE) {
        snprintf(err, errlen, "tid %u is reserved", c->tid);
        return -1;
    }
    if (c->reason >= RNR_END_REASON_COUNT) {
        snprintf(err, errlen, "unknown chunk end reason %u", c->reason);
        return -1;
    }
    if (c->cs == 0) {
        snprintf(err, errlen, "chunk of cpu %u has size 0", c->cpu);
        return -1;
    }
    if (c->ts < s->cpu_ts[c->cpu]) {
        snprintf(err, errlen, "cpu %u timestamp goes back from %llu to %llu", c->cpu,
                 (unsigned long long)s->cpu_ts[c->cpu], (unsigned long long)c->ts);
        return -1;
    }
    if (c->nsv > cpus - 1) {
        snprintf(err, errlen, "successor vector has %u entries for %u cpus", c->nsv, cpus);
        return -1;
    }
    for (uint32_t i = 0; i < c->nsv; i++) {
        const rnr_sv_entry *e = &c->sv[i];
        if (e->cpu >= cpus || e->cpu == c->cpu || (i > 0 && e->cpu <= c->sv[i - 1].cpu)) {
            snprintf(err, errlen, "successor vector entry for cpu %u is out of range, "
                     "repeated, out of order or the chunk's own cpu", e->cpu);
            return -1;
        }
        if (e->ts < c->ts) {
            snprintf(err, errlen, "successor time %llu precedes the chunk's timestamp %llu",
                     (unsigned long long)e->ts, (unsigned long long)c->ts);
            return -1;
        }
    }
    return 0;
}

void rnr_initial_encode(codec_state *s, const rnr_initial_chunk *c, rnr_buf *out)
{
    uint64_t head = c->reason;
    int new_cpu = c->cpu != s->last_cpu;
    int new_tid = c->tid != s->cpu_tid[c->cpu];
    if (new_cpu)
        head |= HEAD_CPU;
    if (new_tid)
        head |= HEAD_TID;
    int uniform = sv_is_uniform(s, c);
    if (uniform)
        head |= HEAD_SVALL;
    else if (c->nsv)
        head |= HEAD_SV;
    buf_put_varint(out, head);
    if (new_cpu)
        buf_put_varint(out, c->cpu);
    if (new_tid)
        buf_put_varint(out, c->tid);
    buf_put_varint(out, c->ts - s->cpu_ts[c->cpu]);
    buf_put_varint(out, c->cs);
    if (uniform) {
        buf_put_varint(out, c->sv[0].ts - c->ts);
    } else if (c->nsv) {
        buf_put_varint(out, c->nsv);
        uint32_t prev = 0;
        for (uint32_t i = 0; i < c->nsv; i++) {
            buf_put_varint(out, i == 0 ? c->sv[i].cpu : c->sv[i].cpu - prev - 1);
            buf_put_varint(out, c->sv[i].ts - c->ts);
            prev = c->sv[i].cpu;
        }
    }
    s->last_cpu = c->cpu;
    s->cpu_tid[c->cpu] = c->tid;
    s->cpu_ts[c->cpu] = c->ts;
}

#define FAIL(...) do { snprintf(err, errlen, __VA_ARGS__); return -1; } while (0)
#define GET(var, what) do { if (cur_varint(cur, &(var)) < 0) FAIL("malformed or cut " what); } while (0)

int rnr_initial_decode(codec_state *s, rnr_cursor *cur, decode_scratch *d,
                   rnr_initial_chunk *c, char *err, size_t errlen)
{
    uint64_t head, v, dts, cs;
    uint32_t cpus = s->h->cpus;
    GET(head, "record head");
    if (head > (HEAD_REASON | HEAD_CPU | HEAD_TID | HEAD_SV | HEAD_SVALL) ||
        ((head & HEAD_SV) && (head & HEAD_SVALL)) || ((head & HEAD_SVALL) && cpus < 3))
        FAIL("record head 0x%llx has unknown bits", (unsigned long long)head);
    uint32_t cpu, tid;
    if (rnr_codec_get_cpu_tid(s, cur, head & HEAD_CPU, head & HEAD_TID, &cpu, &tid, err, errlen) < 0)
        return -1;
    GET(dts, "timestamp");
    if (dts > UINT64_MAX - s->cpu_ts[cpu])
        FAIL("timestamp overflows");
    GET(cs, "chunk size");
    c->cpu = cpu;
    c->tid = tid;
    c->ts = s->cpu_ts[cpu] + dts;
    c->cs = cs;
    c->reason = (uint32_t)(head & HEAD_REASON);
    c->nsv = 0;
    c->sv = d->sv;
    if (head & HEAD_SVALL) {
        uint64_t dt;
        GET(dt, "successor time");
        if (dt > UINT64_MAX - c->ts)
            FAIL("successor time overflows");
        if (cpus - 1 > d->sv_cap) {
            rnr_sv_entry *p = realloc(d->sv, (cpus - 1) * sizeof *p);
            if (!p)
                FAIL("out of memory");
            d->sv = p;
            d->sv_cap = cpus - 1;
        }
        c->sv = d->sv;
        for (uint32_t q = 0, i = 0; q < cpus; q++)
            if (q != cpu)
                d->sv[i++] = (rnr_sv_entry){q, c->ts + dt};
        c->nsv = cpus - 1;
    }
    if (head & HEAD_SV) {
        GET(v, "successor count");
        if (v == 0 || v > cpus - 1)
            FAIL("successor vector has %llu entries for %u cpus", (unsigned long long)v, cpus);
        uint32_t n = (uint32_t)v;
        if (n > d->sv_cap) {
            rnr_sv_entry *p = realloc(d->sv, n * sizeof *p);
            if (!p)
                FAIL("out of memory");
            d->sv = p;
            d->sv_cap = n;
        }
        c->sv = d->sv;
        uint64_t at = 0;
        for (uint32_t i = 0; i < n; i++) {
            uint64_t gap, dt;
            GET(gap, "successor cpu");
            GET(dt, "successor time");
            at = i == 0 ? gap : at + gap + 1;
            if (gap >= cpus || at >= cpus)
                FAIL("successor cpu out of range (log has %u cpus)", cpus);
            if (dt > UINT64_MAX - c->ts)
                FAIL("successor time overflows");
            d->sv[i].cpu = (uint32_t)at;
            d->sv[i].ts = c->ts + dt;
        }
        c->nsv = n;
    }
    if (rnr_initial_check(s, c, err, errlen) < 0)
        return -1;
    s->last_cpu = cpu;
    s->cpu_tid[cpu] = tid;
    s->cpu_ts[cpu] = c->ts;
    return 0;
}
