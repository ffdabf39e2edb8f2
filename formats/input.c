/* formats/input.c: the input-log record (reader and writer).
 * Encoding (docs/formats.md, "Input log"):
 *   head   varint  bits 0-2 type, bit 3 tid follows; higher bits zero
 *   [tid]  varint  present when tid differs from the previous record's
 *   SYSCALL: nr varint, value zigzag varint
 *   CSR:     nr varint, value varint (the 64-bit pattern)
 *   MEM, START: addr varint, len varint, len bytes
 *   SC:      nr varint, value varint, addr varint
 *   CHECK:   nr as a zigzag varint delta from the same thread's previous
 *            CHECK (from 0 for its first), value varint, addr as 8 bytes
 *            little-endian (a register hash: a varint would take 10) */
#include <stdio.h>

#include "formats/codec.h"

enum { HEAD_TYPE = 7, HEAD_TID = 8 };

int rnr_input_check(const codec_state *s, const rnr_input_record *r, char *err, size_t errlen)
{
    (void)s;
    if (r->type == 0 || r->type > RNR_IN_TYPE_MAX) {
        snprintf(err, errlen, "unknown input record type %u", r->type);
        return -1;
    }
    if (r->tid == TID_NONE) {
        snprintf(err, errlen, "tid %u is reserved", r->tid);
        return -1;
    }
    if ((r->type == RNR_IN_MEM || r->type == RNR_IN_START) &&
        (r->len > RNR_BLOCK_MAX - 32 || r->addr + r->len < r->addr)) {
        snprintf(err, errlen, "memory record of %llu bytes at 0x%llx is out of range",
                 (unsigned long long)r->len, (unsigned long long)r->addr);
        return -1;
    }
    return 0;
}

void rnr_input_encode(codec_state *s, const rnr_input_record *r, rnr_buf *out)
{
    int new_tid = r->tid != s->last_tid;
    buf_put_varint(out, r->type | (new_tid ? HEAD_TID : 0));
    if (new_tid)
        buf_put_varint(out, r->tid);
    switch (r->type) {
    case RNR_IN_SYSCALL:
        buf_put_varint(out, r->nr);
        buf_put_varint(out, zigzag(r->value));
        break;
    case RNR_IN_CSR:
        buf_put_varint(out, r->nr);
        buf_put_varint(out, (uint64_t)r->value);
        break;
    case RNR_IN_SC:
        buf_put_varint(out, r->nr);
        buf_put_varint(out, (uint64_t)r->value);
        buf_put_varint(out, r->addr);
        break;
    case RNR_IN_CHECK: {
        uint64_t *last = rnr_tid_map_at(&s->check_instret, r->tid);
        buf_put_varint(out, zigzag((int64_t)(r->nr - *last)));
        *last = r->nr;
        buf_put_varint(out, (uint64_t)r->value);
        uint8_t hash[8];
        for (int i = 0; i < 8; i++)
            hash[i] = (uint8_t)(r->addr >> (8 * i));
        rnr_buf_put_bytes(out, hash, sizeof hash);
        break;
    }
    default:
        buf_put_varint(out, r->addr);
        buf_put_varint(out, r->len);
        rnr_buf_put_bytes(out, r->data, r->len);
        break;
    }
    s->last_tid = r->tid;
}

#define FAIL(...) do { snprintf(err, errlen, __VA_ARGS__); return -1; } while (0)
#define GET(var, what) do { if (cur_varint(cur, &(var)) < 0) FAIL("malformed or cut " what); } while (0)

int rnr_input_decode(codec_state *s, rnr_cursor *cur, rnr_input_record *r, char *err, size_t errlen)
{
    uint64_t head, v;
    GET(head, "record head");
    if (head > (HEAD_TYPE | HEAD_TID))
        FAIL("record head 0x%llx has unknown bits", (unsigned long long)head);
    r->type = (uint32_t)(head & HEAD_TYPE);
    r->tid = s->last_tid;
    if (head & HEAD_TID) {
        GET(v, "tid");
        if (v >= TID_NONE)
            FAIL("tid %llu out of range", (unsigned long long)v);
        r->tid = (uint32_t)v;
    } else if (r->tid == TID_NONE) {
        FAIL("first record omits its tid");
    }
    r->nr = 0;
    r->value = 0;
    r->addr = 0;
    r->len = 0;
    r->data = NULL;
    switch (r->type) {
    case RNR_IN_SYSCALL:
        GET(r->nr, "syscall number");
        GET(v, "syscall result");
        r->value = unzigzag(v);
        break;
    case RNR_IN_CSR:
        GET(r->nr, "csr number");
        GET(v, "csr value");
        r->value = (int64_t)v;
        break;
    case RNR_IN_SC:
        GET(r->nr, "sc ordinal");
        GET(v, "sc result");
        r->value = (int64_t)v;
        GET(r->addr, "sc address");
        break;
    case RNR_IN_CHECK: {
        GET(v, "check instret");
        uint64_t *last = rnr_tid_map_at(&s->check_instret, r->tid);
        r->nr = *last + (uint64_t)unzigzag(v);
        *last = r->nr;
        GET(v, "check pc");
        r->value = (int64_t)v;
        if (cur->end - cur->p < 8)
            FAIL("malformed or cut check hash");
        for (int i = 0; i < 8; i++)
            r->addr |= (uint64_t)cur->p[i] << (8 * i);
        cur->p += 8;
        break;
    }
    case RNR_IN_MEM:
    case RNR_IN_START:
        GET(r->addr, "address");
        GET(r->len, "length");
        if (r->len > (uint64_t)(cur->end - cur->p))
            FAIL("memory record of %llu bytes runs past its block", (unsigned long long)r->len);
        r->data = cur->p;
        cur->p += r->len;
        break;
    default:
        FAIL("unknown input record type %u", r->type);
    }
    if (rnr_input_check(s, r, err, errlen) < 0)
        return -1;
    s->last_tid = r->tid;
    return 0;
}
