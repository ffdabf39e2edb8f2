/* formats/codec.h: internal to formats/: varints, growable buffers, and the
 * per-kind record codecs that formats/log.c frames into blocks. */
#ifndef RNR_FORMATS_CODEC_H
#define RNR_FORMATS_CODEC_H

#include <stddef.h>
#include <stdint.h>

#include "formats/log.h"

#define TID_NONE UINT32_MAX   /* "no thread seen yet"; never a valid tid */
#define CPU_NONE UINT32_MAX

/* A growable byte buffer; aborts when memory is exhausted. */
typedef struct rnr_buf {
    uint8_t *p;
    size_t len, cap;
} rnr_buf;

void rnr_buf_reserve(rnr_buf *b, size_t more);
void rnr_buf_put_bytes(rnr_buf *b, const void *p, size_t n);
void rnr_buf_free(rnr_buf *b);

static inline void buf_put_varint(rnr_buf *b, uint64_t v)
{
    if (b->cap - b->len < 10)           /* the call only when the buffer must grow */
        rnr_buf_reserve(b, 10);
    uint8_t *p = b->p + b->len;
    while (v >= 0x80) {
        *p++ = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    *p++ = (uint8_t)v;
    b->len = (size_t)(p - b->p);
}

static inline uint64_t zigzag(int64_t v) { return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63); }
static inline int64_t unzigzag(uint64_t v) { return (int64_t)(v >> 1) ^ -(int64_t)(v & 1); }

/* A read position in a decoded block payload. */
typedef struct rnr_cursor {
    const uint8_t *p, *end;
} rnr_cursor;

/* Reads a canonical LEB128 value of at most 64 bits; -1 if the bytes run
 * out, the value overflows, or the encoding is longer than needed. */
static inline int cur_varint(rnr_cursor *c, uint64_t *out)
{
    if (c->p < c->end && *c->p < 0x80) {
        *out = *c->p++;                 /* one byte (most values): always canonical */
        return 0;
    }
    uint64_t v = 0;
    for (unsigned shift = 0; shift < 64; shift += 7) {
        if (c->p >= c->end)
            return -1;
        uint8_t byte = *c->p++;
        if (shift == 63 && byte > 1)
            return -1;
        v |= (uint64_t)(byte & 0x7f) << shift;
        if (!(byte & 0x80)) {
            if (byte == 0 && shift > 0)
                return -1;          /* overlong */
            *out = v;
            return 0;
        }
    }
    return -1;
}

/* A value per thread: open addressing keyed by tid (TID_NONE, which no
 * record carries, marks an empty slot). Zero-initialize; rnr_tid_map_free. */
typedef struct tid_map {
    uint32_t *tid;
    uint64_t *val;
    uint32_t cap, n;          /* cap: 0 or a power of two; n: threads in it */
} tid_map;

/* TID's value (0 for a thread not seen before, which joins the map). */
uint64_t *rnr_tid_map_at(tid_map *m, uint32_t tid);
void rnr_tid_map_free(tid_map *m);

/* Delta state shared by the encoder and decoder of one stream. */
typedef struct codec_state {
    const rnr_log_header *h;
    uint32_t last_cpu;
    uint32_t last_tid;        /* serial kinds and input */
    uint32_t *cpu_tid;        /* per CPU: last tid (TID_NONE) */
    uint64_t *cpu_ts;         /* per CPU: last ts (initial) */
    tid_map check_instret;    /* input: each thread's last CHECK instret */
} codec_state;

void rnr_codec_state_init(codec_state *s, const rnr_log_header *h);

/* Decodes the optional cpu and tid of a chunk record (present when HAS_CPU /
 * HAS_TID, else carried over from the stream state); 0, or -1 with err. */
int rnr_codec_get_cpu_tid(const codec_state *s, rnr_cursor *cur, int has_cpu, int has_tid,
                      uint32_t *cpu, uint32_t *tid, char *err, size_t errlen);

/* Allocation for formats/: aborts with a message when memory runs out. */
void *rnr_xrealloc(void *p, size_t n);
char *rnr_xstrdup(const char *s);
void rnr_codec_state_free(codec_state *s);

/* Scratch arrays a decoder fills; they grow as needed and belong to the reader. */
typedef struct decode_scratch {
    rnr_sv_entry *sv;
    uint32_t sv_cap;
    uint32_t *stv;
    uint32_t stv_cap;
    rnr_ptv_entry *ptv;
    uint32_t ptv_cap;
} decode_scratch;

void rnr_decode_scratch_free(decode_scratch *d);

/* Per kind: check a record against the schema and the stream's state
 * (0, or -1 with the problem in err), encode it (assumes it checks), decode
 * one (0, or -1 with the problem in err). Decode also checks. */
int rnr_initial_check(const codec_state *s, const rnr_initial_chunk *c, char *err, size_t errlen);
void rnr_initial_encode(codec_state *s, const rnr_initial_chunk *c, rnr_buf *out);
int rnr_initial_decode(codec_state *s, rnr_cursor *cur, decode_scratch *d,
                   rnr_initial_chunk *c, char *err, size_t errlen);

int rnr_final_check(const codec_state *s, const rnr_final_chunk *c, char *err, size_t errlen);
void rnr_final_encode(codec_state *s, const rnr_final_chunk *c, rnr_buf *out);
int rnr_final_decode(codec_state *s, rnr_cursor *cur, decode_scratch *d,
                 rnr_final_chunk *c, char *err, size_t errlen);

int rnr_input_check(const codec_state *s, const rnr_input_record *r, char *err, size_t errlen);
void rnr_input_encode(codec_state *s, const rnr_input_record *r, rnr_buf *out);
int rnr_input_decode(codec_state *s, rnr_cursor *cur, rnr_input_record *r, char *err, size_t errlen);

#endif
