/* formats/log.c: the log container: file header, CRC-checked (optionally
 * zlib-compressed) blocks, and the streaming reader and writer that carry
 * the per-kind records of formats/{initial,final,input}.c. */
#include "formats/log.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "formats/codec.h"
#include "formats/io.h"

enum { BLOCK_ZLIB = 1, BLOCK_END = 2 };

/* ---- small shared pieces ---- */

static char msg_prefix[64] = "rnr";

void rnr_set_msg_prefix(const char *prefix) { snprintf(msg_prefix, sizeof msg_prefix, "%s", prefix); }
const char *rnr_msg_prefix(void) { return msg_prefix; }

void *rnr_xrealloc(void *p, size_t n)
{
    p = realloc(p, n ? n : 1);
    if (!p) {
        fputs("rnr: out of memory\n", stderr);
        abort();
    }
    return p;
}

char *rnr_xstrdup(const char *s)
{
    size_t n = strlen(s) + 1;
    return memcpy(rnr_xrealloc(NULL, n), s, n);
}

int rnr_write_full(int fd, const void *p, size_t n)
{
    const char *c = p;
    while (n) {
        ssize_t w = write(fd, c, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            if (w == 0)
                errno = EIO;
            return -1;
        }
        c += w;
        n -= (size_t)w;
    }
    return 0;
}

#define FAIL(...) do { snprintf(err, errlen, __VA_ARGS__); return -1; } while (0)

int rnr_codec_get_cpu_tid(const codec_state *s, rnr_cursor *cur, int has_cpu, int has_tid,
                      uint32_t *cpu_out, uint32_t *tid_out, char *err, size_t errlen)
{
    uint64_t v;
    uint32_t cpu = s->last_cpu;
    if (has_cpu) {
        if (cur_varint(cur, &v) < 0)
            FAIL("malformed or cut cpu");
        if (v >= s->h->cpus)
            FAIL("cpu %llu out of range (log has %u cpus)", (unsigned long long)v, s->h->cpus);
        cpu = (uint32_t)v;
    } else if (cpu == CPU_NONE) {
        FAIL("first record omits its cpu");
    }
    uint32_t tid = s->cpu_tid[cpu];
    if (has_tid) {
        if (cur_varint(cur, &v) < 0)
            FAIL("malformed or cut tid");
        if (v >= TID_NONE)
            FAIL("tid %llu out of range", (unsigned long long)v);
        tid = (uint32_t)v;
    } else if (tid == TID_NONE) {
        FAIL("first chunk of cpu %u omits its tid", cpu);
    }
    *cpu_out = cpu;
    *tid_out = tid;
    return 0;
}

#undef FAIL

void rnr_buf_reserve(rnr_buf *b, size_t more)
{
    if (b->len + more <= b->cap)
        return;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + more)
        cap *= 2;
    b->p = rnr_xrealloc(b->p, cap);
    b->cap = cap;
}

void rnr_buf_put_bytes(rnr_buf *b, const void *p, size_t n)
{
    if (!n)
        return;
    rnr_buf_reserve(b, n);
    memcpy(b->p + b->len, p, n);
    b->len += n;
}

void rnr_buf_free(rnr_buf *b)
{
    free(b->p);
    memset(b, 0, sizeof *b);
}

void rnr_codec_state_init(codec_state *s, const rnr_log_header *h)
{
    s->h = h;
    s->last_cpu = CPU_NONE;
    s->last_tid = TID_NONE;
    s->cpu_tid = rnr_xrealloc(NULL, h->cpus * sizeof *s->cpu_tid);
    s->cpu_ts = rnr_xrealloc(NULL, h->cpus * sizeof *s->cpu_ts);
    for (uint32_t i = 0; i < h->cpus; i++) {
        s->cpu_tid[i] = TID_NONE;
        s->cpu_ts[i] = 0;
    }
    s->check_instret = (tid_map){ 0 };
}

void rnr_codec_state_free(codec_state *s)
{
    free(s->cpu_tid);
    free(s->cpu_ts);
    rnr_tid_map_free(&s->check_instret);
}

static uint32_t tid_slot(const tid_map *m, uint32_t tid)
{
    uint32_t mask = m->cap - 1, i = (uint32_t)((tid * 0x9e3779b9u) & mask);
    while (m->tid[i] != TID_NONE && m->tid[i] != tid)
        i = (i + 1) & mask;
    return i;
}

uint64_t *rnr_tid_map_at(tid_map *m, uint32_t tid)
{
    if (m->cap) {
        uint32_t i = tid_slot(m, tid);
        if (m->tid[i] == tid)
            return &m->val[i];
    }
    if (2 * (m->n + 1) > m->cap) {   /* at most half full */
        tid_map big = { NULL, NULL, m->cap ? 2 * m->cap : 16, m->n };
        big.tid = rnr_xrealloc(NULL, big.cap * sizeof *big.tid);
        big.val = rnr_xrealloc(NULL, big.cap * sizeof *big.val);
        for (uint32_t i = 0; i < big.cap; i++)
            big.tid[i] = TID_NONE;
        for (uint32_t i = 0; i < m->cap; i++) {
            if (m->tid[i] == TID_NONE)
                continue;
            uint32_t j = tid_slot(&big, m->tid[i]);
            big.tid[j] = m->tid[i];
            big.val[j] = m->val[i];
        }
        rnr_tid_map_free(m);
        *m = big;
    }
    uint32_t i = tid_slot(m, tid);
    m->tid[i] = tid;
    m->val[i] = 0;
    m->n++;
    return &m->val[i];
}

void rnr_tid_map_free(tid_map *m)
{
    free(m->tid);
    free(m->val);
    *m = (tid_map){ 0 };
}

void rnr_decode_scratch_free(decode_scratch *d)
{
    free(d->sv);
    free(d->stv);
    free(d->ptv);
}

static void put_le(uint8_t *p, uint64_t v, int n)
{
    for (int i = 0; i < n; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t get_le(const uint8_t *p, int n)
{
    uint64_t v = 0;
    for (int i = 0; i < n; i++)
        v |= (uint64_t)p[i] << (8 * i);
    return v;
}

static const char *const kind_names[RNR_LOG_KIND_MAX + 1] = {
    [RNR_LOG_INITIAL] = "initial", [RNR_LOG_INPUT] = "input",
    [RNR_LOG_MAXPAR] = "maxpar", [RNR_LOG_STITCHED] = "stitched",
    [RNR_LOG_SERIAL] = "serial", [RNR_LOG_STSERIAL] = "stserial",
    [RNR_LOG_ADAPTIVE] = "adaptive",
};

const char *rnr_input_type_name(uint32_t t)
{
    static const char *const names[RNR_IN_TYPE_MAX + 1] = {
        NULL, "syscall", "mem", "csr", "start", "sc", "check",
    };
    return t <= RNR_IN_TYPE_MAX ? names[t] : NULL;
}

const char *rnr_log_kind_name(uint32_t kind)
{
    return kind >= 1 && kind <= RNR_LOG_KIND_MAX ? kind_names[kind] : "?";
}

const char *rnr_log_kind_article(uint32_t kind)
{
    return kind == RNR_LOG_INITIAL || kind == RNR_LOG_INPUT ? "an" : "a";
}

int rnr_log_kind_parse(const char *name)
{
    for (int k = 1; k <= RNR_LOG_KIND_MAX; k++)
        if (strcmp(name, kind_names[k]) == 0)
            return k;
    return -1;
}

int rnr_log_kind_is_chunks(uint32_t kind)
{
    return kind >= 1 && kind <= RNR_LOG_KIND_MAX && kind != RNR_LOG_INPUT;
}

int rnr_log_kind_has_tokens(uint32_t kind)
{
    return kind == RNR_LOG_MAXPAR || kind == RNR_LOG_STITCHED || kind == RNR_LOG_ADAPTIVE;
}

const char *rnr_phase_format_name(uint32_t phase)
{
    return phase == RNR_PHASE_MAXPAR ? "maxpar" : phase == RNR_PHASE_STITCHED ? "stitched" : "?";
}

const char *rnr_reason_name(uint32_t reason)
{
    static const char *const names[RNR_END_REASON_COUNT] = {
        "conflict", "size", "syscall", "switch", "exit", "serialize", "age", "stop",
    };
    return reason < RNR_END_REASON_COUNT ? names[reason] : "?";
}

int rnr_log_header_check(const rnr_log_header *h, char *err, size_t errlen)
{
    if (h->kind < 1 || h->kind > RNR_LOG_KIND_MAX) {
        snprintf(err, errlen, "unknown log kind %u", h->kind);
        return -1;
    }
    if (h->cpus < 1 || h->cpus > RNR_MAX_CPUS) {
        snprintf(err, errlen, "cpu count %u out of range (1..%u)", h->cpus, RNR_MAX_CPUS);
        return -1;
    }
    return 0;
}

/* Header layout (64 bytes, little-endian): magic[8], version u16, kind u16,
 * cpus u32, msp u64, program_sha256[32], reserved u32 (0), crc32 u32 of
 * bytes 0..59. */
static void header_encode(const rnr_log_header *h, uint8_t out[RNR_LOG_HEADER_SIZE])
{
    memset(out, 0, RNR_LOG_HEADER_SIZE);
    memcpy(out, RNR_LOG_MAGIC, RNR_LOG_MAGIC_LEN);
    put_le(out + 8, RNR_LOG_VERSION, 2);
    put_le(out + 10, h->kind, 2);
    put_le(out + 12, h->cpus, 4);
    put_le(out + 16, h->msp, 8);
    memcpy(out + 24, h->program_sha256, 32);
    put_le(out + 60, crc32(0L, out, 60), 4);
}

/* ---- writer ---- */

struct rnr_writer {
    rnr_io *io;
    rnr_log_header h;
    rnr_writer_opts opts;
    codec_state state;
    rnr_buf block;        /* raw records of the current block */
    rnr_buf durs;         /* their durations (chunk kinds): the block's duration section */
    rnr_buf framed;       /* section length, section, records: the payload */
    int with_durs;        /* a chunk kind: blocks start with a duration section */
    rnr_buf record;       /* one encoded record */
    rnr_buf packed;       /* compressed block */
    /* One deflate stream for every block, reset between them: compress2
     * per block allocates and frees some 250 KB of zlib state each time,
     * which the heap gives back to the kernel and takes again (zeroed
     * pages) block after block. Output identical to compress2's. */
    z_stream z;
    int z_state;          /* 0 not set up, 1 ready, -1 could not (blocks stored) */
    uint32_t block_records;
    rnr_log_counts counts;
    int failed;
    char error[RNR_ERR_MAX];
};

static void writer_fail(rnr_writer *w, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void writer_fail(rnr_writer *w, const char *fmt, ...)
{
    if (w->failed)
        return;
    char msg[RNR_ERR_MAX - 64];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    w->failed = 1;
    snprintf(w->error, sizeof w->error, "%s: %s", rnr_io_name(w->io), msg);
}

static int writer_io_check(rnr_writer *w)
{
    if (rnr_io_failed(w->io)) {
        writer_fail(w, "%s", rnr_io_error(w->io));
        return -1;
    }
    return 0;
}

/* The deflate stream, reset for a new block; 0 if zlib could not set it
 * up (the blocks are then stored). */
static int deflater_ready(rnr_writer *w)
{
    if (w->z_state == 0)
        w->z_state = deflateInit(&w->z, w->opts.compress) == Z_OK ? 1 : -1;
    else if (w->z_state > 0 && deflateReset(&w->z) != Z_OK)
        w->z_state = -1;
    return w->z_state > 0;
}

static int emit_block(rnr_writer *w, const uint8_t *raw, size_t raw_len, uint32_t nrec,
                      int end)
{
    const uint8_t *payload = raw;
    size_t stored = raw_len;
    uint8_t flags = end ? BLOCK_END : 0;
    if (w->opts.compress > 0 && !end && deflater_ready(w)) {
        uLong bound = deflateBound(&w->z, (uLong)raw_len);
        w->packed.len = 0;
        rnr_buf_reserve(&w->packed, bound);
        w->z.next_in = (Bytef *)raw;
        w->z.avail_in = (uInt)raw_len;
        w->z.next_out = w->packed.p;
        w->z.avail_out = (uInt)bound;
        if (deflate(&w->z, Z_FINISH) == Z_STREAM_END && w->z.avail_in == 0 &&
            w->z.total_out < raw_len) {
            payload = w->packed.p;
            stored = w->z.total_out;
            flags |= BLOCK_ZLIB;
        }
    }
    uint8_t hdr[RNR_BLOCK_HEADER_SIZE];
    put_le(hdr, stored, 4);
    put_le(hdr + 4, raw_len, 4);
    put_le(hdr + 8, nrec, 4);
    put_le(hdr + 12, flags, 4);
    uLong crc = crc32(0L, hdr, 16);
    crc = crc32(crc, payload, (uInt)stored);
    put_le(hdr + 16, crc, 4);
    rnr_io_write(w->io, hdr, sizeof hdr);
    rnr_io_write(w->io, payload, stored);
    w->counts.stored_bytes += sizeof hdr + stored;
    if (!end)
        w->counts.blocks++;
    return writer_io_check(w);
}

/* Emits the current block. Chunk kinds: the payload is the length of the
 * duration section (varint), the section (one varint per record, in
 * record order), then the records; the section is counted apart from the
 * records' raw bytes, so that sizes compare with logs without it. */
static int finish_block(rnr_writer *w)
{
    if (w->block_records == 0)
        return 0;
    int rc;
    w->counts.raw_bytes += w->block.len;
    if (w->with_durs) {
        w->framed.len = 0;
        buf_put_varint(&w->framed, w->durs.len);
        rnr_buf_put_bytes(&w->framed, w->durs.p, w->durs.len);
        w->counts.duration_bytes += w->framed.len;
        rnr_buf_put_bytes(&w->framed, w->block.p, w->block.len);
        rc = emit_block(w, w->framed.p, w->framed.len, w->block_records, 0);
    } else {
        rc = emit_block(w, w->block.p, w->block.len, w->block_records, 0);
    }
    w->block.len = 0;
    w->durs.len = 0;
    w->block_records = 0;
    return rc;
}

rnr_writer *rnr_writer_open_io(rnr_io *io, const rnr_log_header *h,
                               const rnr_writer_opts *opts, char *err, size_t errlen)
{
    char why[RNR_ERR_MAX];
    if (rnr_log_header_check(h, why, sizeof why) < 0) {
        snprintf(err, errlen, "%s: %s", rnr_io_name(io), why);
        rnr_io_close(io);
        return NULL;
    }
    rnr_writer *w = rnr_xrealloc(NULL, sizeof *w);
    memset(w, 0, sizeof *w);
    w->io = io;
    w->h = *h;
    if (opts)
        w->opts = *opts;
    if (w->opts.block_bytes == 0 || w->opts.block_bytes > RNR_BLOCK_MAX)
        w->opts.block_bytes = RNR_BLOCK_DEFAULT;
    if (w->opts.compress > 9)
        w->opts.compress = 9;
    rnr_codec_state_init(&w->state, &w->h);
    w->with_durs = rnr_log_kind_is_chunks(w->h.kind);
    uint8_t hdr[RNR_LOG_HEADER_SIZE];
    header_encode(&w->h, hdr);
    rnr_io_write(io, hdr, sizeof hdr);
    w->counts.stored_bytes = sizeof hdr;
    if (writer_io_check(w) < 0) {
        snprintf(err, errlen, "%s", w->error);
        rnr_writer_abandon(w);
        return NULL;
    }
    return w;
}

rnr_writer *rnr_writer_open(const char *path, const rnr_log_header *h,
                            const rnr_writer_opts *opts, char *err, size_t errlen)
{
    rnr_io *io = rnr_io_open(path, 1, err, errlen);
    return io ? rnr_writer_open_io(io, h, opts, err, errlen) : NULL;
}

/* Appends the record in w->record (and, for chunk kinds, its duration
 * DUR) to the current block, first ending the block if the record would
 * push it past the hard bound. */
static int append_record(rnr_writer *w, uint64_t dur)
{
    size_t n = w->record.len;
    size_t extra = w->with_durs ? 20 : 0;   /* a duration and the section's length */
    if (n + extra > RNR_BLOCK_MAX) {
        writer_fail(w, "record of %zu bytes exceeds the block bound", n);
        return -1;
    }
    if (w->block.len + w->durs.len + n + extra > RNR_BLOCK_MAX && finish_block(w) < 0)
        return -1;
    if (w->with_durs)
        buf_put_varint(&w->durs, dur);
    rnr_buf_put_bytes(&w->block, w->record.p, n);
    w->block_records++;
    w->counts.records++;
    if (w->block.len >= w->opts.block_bytes)
        return finish_block(w);
    return 0;
}

/* The common part of the put functions: KIND_OK says whether the record
 * belongs in this log, CHECKED is the schema check's result (why = its
 * reason). Returns 0 when the record may be encoded into w->record. */
static int put_begin(rnr_writer *w, int kind_ok, int checked, const char *why)
{
    if (w->failed)
        return -1;
    if (!kind_ok) {
        writer_fail(w, "record does not belong in a %s log", rnr_log_kind_name(w->h.kind));
        return -1;
    }
    if (checked < 0) {
        writer_fail(w, "record %llu: %s", (unsigned long long)w->counts.records, why);
        return -1;
    }
    w->record.len = 0;
    return 0;
}

int rnr_writer_put_initial(rnr_writer *w, const rnr_initial_chunk *c)
{
    char why[RNR_ERR_MAX - 64];
    int ok = w->h.kind == RNR_LOG_INITIAL;
    if (put_begin(w, ok, ok ? rnr_initial_check(&w->state, c, why, sizeof why) : 0, why) < 0)
        return -1;
    rnr_initial_encode(&w->state, c, &w->record);
    return append_record(w, c->dur);
}

int rnr_writer_put_final(rnr_writer *w, const rnr_final_chunk *c)
{
    char why[RNR_ERR_MAX - 64];
    int ok = rnr_log_kind_is_chunks(w->h.kind) && w->h.kind != RNR_LOG_INITIAL;
    if (put_begin(w, ok, ok ? rnr_final_check(&w->state, c, why, sizeof why) : 0, why) < 0)
        return -1;
    rnr_final_encode(&w->state, c, &w->record);
    return append_record(w, c->dur);
}

int rnr_writer_put_input(rnr_writer *w, const rnr_input_record *r)
{
    char why[RNR_ERR_MAX - 64];
    int ok = w->h.kind == RNR_LOG_INPUT;
    if (put_begin(w, ok, ok ? rnr_input_check(&w->state, r, why, sizeof why) : 0, why) < 0)
        return -1;
    rnr_input_encode(&w->state, r, &w->record);
    return append_record(w, 0);
}

int rnr_writer_flush(rnr_writer *w)
{
    if (w->failed || finish_block(w) < 0)
        return -1;
    rnr_io_flush(w->io);
    return writer_io_check(w);
}

const char *rnr_writer_error(const rnr_writer *w) { return w->error; }
const rnr_log_counts *rnr_writer_counts(const rnr_writer *w) { return &w->counts; }
size_t rnr_writer_record_bytes(const rnr_writer *w) { return w->record.len; }

static void writer_free(rnr_writer *w)
{
    if (w->z_state != 0)
        deflateEnd(&w->z);
    rnr_codec_state_free(&w->state);
    rnr_buf_free(&w->block);
    rnr_buf_free(&w->durs);
    rnr_buf_free(&w->framed);
    rnr_buf_free(&w->record);
    rnr_buf_free(&w->packed);
    free(w);
}

int rnr_writer_close(rnr_writer *w, char *err, size_t errlen)
{
    if (!w->failed && finish_block(w) == 0) {
        rnr_buf end = { 0 };
        buf_put_varint(&end, w->counts.records);
        emit_block(w, end.p, end.len, 0, 1);
        rnr_buf_free(&end);
        rnr_io_flush(w->io);
        writer_io_check(w);
    }
    if (rnr_io_close(w->io) < 0)
        writer_fail(w, "close failed");
    int rc = w->failed ? -1 : 0;
    if (rc < 0 && err)
        snprintf(err, errlen, "%s", w->error);
    writer_free(w);
    return rc;
}

void rnr_writer_abandon(rnr_writer *w)
{
    rnr_io_close(w->io);
    writer_free(w);
}

/* ---- reader ---- */

struct rnr_reader {
    rnr_io *io;
    rnr_log_header h;
    codec_state state;
    decode_scratch scratch;
    rnr_buf stored, raw;      /* current block as read and as decoded */
    rnr_cursor cur;
    rnr_cursor dcur;          /* the block's duration section (version 4 chunk kinds) */
    unsigned version;
    int with_durs;
    uint64_t block_offset;    /* file offset of the current block */
    uint64_t block_index;
    uint32_t block_records, block_left;
    rnr_log_counts counts;
    int state_code;           /* 0 reading, 1 ended cleanly, -1 failed */
    int truncated;            /* failed because the file ends early */
    void (*on_block)(void *ctx, const uint8_t *raw, size_t n);
    void *on_block_ctx;
    char error[RNR_ERR_MAX];
};

static void reader_fail(rnr_reader *r, uint64_t offset, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void reader_fail(rnr_reader *r, uint64_t offset, const char *fmt, ...)
{
    if (r->state_code < 0)
        return;
    char msg[RNR_ERR_MAX - 64];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    r->state_code = -1;
    snprintf(r->error, sizeof r->error, "%s: offset %llu: %s", rnr_io_name(r->io),
             (unsigned long long)offset, msg);
}

static void reader_free(rnr_reader *r)
{
    rnr_io_close(r->io);
    rnr_codec_state_free(&r->state);
    rnr_decode_scratch_free(&r->scratch);
    rnr_buf_free(&r->stored);
    rnr_buf_free(&r->raw);
    free(r);
}

rnr_reader *rnr_reader_open_io(rnr_io *io, char *err, size_t errlen)
{
    uint8_t hdr[RNR_LOG_HEADER_SIZE];
    size_t n = rnr_io_read(io, hdr, sizeof hdr);
    const char *problem = NULL;
    char why[RNR_ERR_MAX - 64];
    rnr_log_header h;
    memset(&h, 0, sizeof h);
    if (rnr_io_failed(io)) {
        problem = rnr_io_error(io);
    } else if (n == 0) {
        problem = "empty file, not an rnr log";
    } else if (n < RNR_LOG_MAGIC_LEN || memcmp(hdr, RNR_LOG_MAGIC, RNR_LOG_MAGIC_LEN) != 0) {
        problem = "not an rnr log (bad magic)";
    } else if (n < sizeof hdr) {
        snprintf(why, sizeof why, "truncated header (%zu of %u bytes)", n, RNR_LOG_HEADER_SIZE);
        problem = why;
    } else if (get_le(hdr + 60, 4) != crc32(0L, hdr, 60)) {
        problem = "header checksum mismatch (corrupt header)";
    } else if (get_le(hdr + 8, 2) != RNR_LOG_VERSION &&
               get_le(hdr + 8, 2) != RNR_LOG_VERSION_OLDEST) {
        snprintf(why, sizeof why, "unsupported format version %u (this rnr reads versions %u and %u)",
                 (unsigned)get_le(hdr + 8, 2), RNR_LOG_VERSION_OLDEST, RNR_LOG_VERSION);
        problem = why;
    } else if (get_le(hdr + 56, 4) != 0) {
        problem = "reserved header field is not zero";
    } else {
        h.kind = (uint32_t)get_le(hdr + 10, 2);
        h.cpus = (uint32_t)get_le(hdr + 12, 4);
        h.msp = get_le(hdr + 16, 8);
        memcpy(h.program_sha256, hdr + 24, 32);
        if (rnr_log_header_check(&h, why, sizeof why) < 0)
            problem = why;
    }
    if (problem) {
        snprintf(err, errlen, "%s: offset 0: %s", rnr_io_name(io), problem);
        rnr_io_close(io);
        return NULL;
    }
    rnr_reader *r = rnr_xrealloc(NULL, sizeof *r);
    memset(r, 0, sizeof *r);
    r->io = io;
    r->h = h;
    r->version = (unsigned)get_le(hdr + 8, 2);
    r->with_durs = r->version >= 4 && rnr_log_kind_is_chunks(h.kind);
    rnr_codec_state_init(&r->state, &r->h);
    r->counts.stored_bytes = sizeof hdr;
    return r;
}

rnr_reader *rnr_reader_open(const char *path, char *err, size_t errlen)
{
    rnr_io *io = rnr_io_open(path, 0, err, errlen);
    return io ? rnr_reader_open_io(io, err, errlen) : NULL;
}

const rnr_log_header *rnr_reader_header(const rnr_reader *r) { return &r->h; }
unsigned rnr_reader_version(const rnr_reader *r) { return r->version; }
int rnr_reader_has_durations(const rnr_reader *r) { return r->with_durs; }

void rnr_reader_on_block(rnr_reader *r, void (*fn)(void *ctx, const uint8_t *raw, size_t n),
                         void *ctx)
{
    r->on_block = fn;
    r->on_block_ctx = ctx;
}
int rnr_reader_truncated(const rnr_reader *r) { return r->state_code < 0 && r->truncated; }
uint32_t rnr_reader_buffered(const rnr_reader *r) { return r->state_code == 0 ? r->block_left : 0; }

const char *rnr_reader_error(const rnr_reader *r) { return r->error; }
const char *rnr_reader_name(const rnr_reader *r) { return rnr_io_name(r->io); }
const rnr_log_counts *rnr_reader_counts(const rnr_reader *r) { return &r->counts; }
void rnr_reader_close(rnr_reader *r) { if (r) reader_free(r); }

/* Reads and checks the next block frame and payload. 1 = a data block is
 * ready in r->cur, 0 = the end block was read (and nothing follows), -1. */
static int next_block(rnr_reader *r)
{
    uint64_t off = rnr_io_offset(r->io);
    uint8_t hdr[RNR_BLOCK_HEADER_SIZE];
    size_t n = rnr_io_read(r->io, hdr, sizeof hdr);
    if (rnr_io_failed(r->io)) {
        reader_fail(r, off, "%s", rnr_io_error(r->io));
        return -1;
    }
    if (n == 0) {
        r->truncated = r->state_code >= 0;
        reader_fail(r, off, "truncated log: no end block after %llu records (the writer did not finish)",
                    (unsigned long long)r->counts.records);
        return -1;
    }
    if (n < sizeof hdr) {
        r->truncated = r->state_code >= 0;
        reader_fail(r, off, "truncated block header (%zu of %u bytes)", n, RNR_BLOCK_HEADER_SIZE);
        return -1;
    }
    uint32_t stored = (uint32_t)get_le(hdr, 4);
    uint32_t raw = (uint32_t)get_le(hdr + 4, 4);
    uint32_t nrec = (uint32_t)get_le(hdr + 8, 4);
    uint32_t flags = (uint32_t)get_le(hdr + 12, 4);
    uint32_t crc = (uint32_t)get_le(hdr + 16, 4);
    int64_t size = rnr_io_size(r->io);
    if (flags & ~(uint32_t)(BLOCK_ZLIB | BLOCK_END)) {
        reader_fail(r, off, "block has unknown flags 0x%x (corrupt block header)", flags);
        return -1;
    }
    if (raw > RNR_BLOCK_MAX || stored > RNR_BLOCK_MAX) {
        reader_fail(r, off, "block length %u exceeds the bound of %u bytes (corrupt block header)",
                    raw > stored ? raw : stored, RNR_BLOCK_MAX);
        return -1;
    }
    if (size >= 0 && (uint64_t)stored > (uint64_t)size - rnr_io_offset(r->io)) {
        r->truncated = r->state_code >= 0;
        reader_fail(r, off, "truncated block: %u payload bytes declared, %llu left in the file",
                    stored, (unsigned long long)((uint64_t)size - rnr_io_offset(r->io)));
        return -1;
    }
    if (!(flags & BLOCK_ZLIB) ? stored != raw : stored > compressBound(raw)) {
        reader_fail(r, off, "block sizes %u stored / %u raw are inconsistent (corrupt block header)",
                    stored, raw);
        return -1;
    }
    r->stored.len = 0;
    rnr_buf_reserve(&r->stored, stored);
    n = rnr_io_read(r->io, r->stored.p, stored);
    if (rnr_io_failed(r->io)) {
        reader_fail(r, off, "%s", rnr_io_error(r->io));
        return -1;
    }
    if (n < stored) {
        r->truncated = r->state_code >= 0;
        reader_fail(r, off, "truncated block: %u payload bytes declared, %zu present", stored, n);
        return -1;
    }
    r->stored.len = stored;
    uLong want = crc32(crc32(0L, hdr, 16), r->stored.p, stored);
    if (want != crc) {
        reader_fail(r, off, "block checksum mismatch (corrupt block)");
        return -1;
    }
    r->counts.stored_bytes += sizeof hdr + stored;
    const uint8_t *payload = r->stored.p;
    if (flags & BLOCK_ZLIB) {
        r->raw.len = 0;
        rnr_buf_reserve(&r->raw, raw);
        uLongf got = raw;
        if (uncompress(r->raw.p, &got, r->stored.p, stored) != Z_OK || got != raw) {
            reader_fail(r, off, "block does not decompress to its declared %u bytes", raw);
            return -1;
        }
        payload = r->raw.p;
    }
    r->cur.p = payload;
    r->cur.end = payload + raw;
    r->block_offset = off;
    if (flags & BLOCK_END) {
        uint64_t total;
        if (nrec != 0 || (flags & BLOCK_ZLIB) || cur_varint(&r->cur, &total) < 0 ||
            r->cur.p != r->cur.end) {
            reader_fail(r, off, "malformed end block");
            return -1;
        }
        if (total != r->counts.records) {
            reader_fail(r, off, "end block counts %llu records but the log holds %llu",
                        (unsigned long long)total, (unsigned long long)r->counts.records);
            return -1;
        }
        uint8_t extra;
        if (rnr_io_read(r->io, &extra, 1) != 0) {
            reader_fail(r, rnr_io_offset(r->io) - 1, "trailing data after the end block");
            return -1;
        }
        return 0;
    }
    if (nrec == 0 || nrec > raw) {
        reader_fail(r, off, "block declares %u records in %u bytes (corrupt block header)", nrec, raw);
        return -1;
    }
    if (r->with_durs) {
        uint64_t dlen;
        if (cur_varint(&r->cur, &dlen) < 0 || dlen > (uint64_t)(r->cur.end - r->cur.p) ||
            dlen < nrec) {
            reader_fail(r, off, "block's duration section is malformed (corrupt block)");
            return -1;
        }
        r->dcur.p = r->cur.p;
        r->dcur.end = r->cur.p + dlen;
        r->cur.p += dlen;
        r->counts.duration_bytes += (uint64_t)(r->cur.p - payload);
        payload = r->cur.p;
        raw = (uint32_t)(r->cur.end - r->cur.p);
    }
    r->counts.blocks++;
    r->counts.raw_bytes += raw;
    if (r->on_block)
        r->on_block(r->on_block_ctx, payload, raw);
    r->block_index++;
    r->block_records = nrec;
    r->block_left = nrec;
    return 1;
}

/* Positions the reader on the next record: 1 ready, 0 end, -1 error. */
static int reader_advance(rnr_reader *r, int kind_ok)
{
    if (r->state_code != 0)
        return r->state_code > 0 ? 0 : -1;
    if (!kind_ok) {
        reader_fail(r, 0, "this is a %s log, not the kind expected here",
                    rnr_log_kind_name(r->h.kind));
        return -1;
    }
    if (r->block_left == 0) {
        int rc = next_block(r);
        if (rc <= 0) {
            if (rc == 0)
                r->state_code = 1;
            return rc;
        }
    }
    return 1;
}

/* After one record was decoded (rc from the decoder, why its message):
 * 1 with the record delivered, or -1. */
static int reader_finish(rnr_reader *r, int rc, const char *why)
{
    uint32_t index = r->block_records - r->block_left;
    if (rc < 0) {
        reader_fail(r, r->block_offset, "block %llu, record %u: %s",
                    (unsigned long long)r->block_index, index, why);
        return -1;
    }
    r->block_left--;
    r->counts.records++;
    if (r->block_left == 0 && r->with_durs && r->dcur.p != r->dcur.end) {
        reader_fail(r, r->block_offset, "block %llu has %zu bytes after its last duration",
                    (unsigned long long)r->block_index, (size_t)(r->dcur.end - r->dcur.p));
    } else if (r->block_left == 0 && r->cur.p != r->cur.end) {
        /* The block's records are good but it has bytes after the last:
         * deliver this record; the next call reports the corruption. */
        reader_fail(r, r->block_offset, "block %llu has %zu bytes after its last record",
                    (unsigned long long)r->block_index, (size_t)(r->cur.end - r->cur.p));
    }
    return 1;
}

/* The record's duration from the block's section (0 for a log without
 * durations); 0, or -1 with the problem in err. */
static int read_duration(rnr_reader *r, uint64_t *dur, char *err, size_t errlen)
{
    *dur = 0;
    if (r->with_durs && cur_varint(&r->dcur, dur) < 0) {
        snprintf(err, errlen, "malformed or cut duration");
        return -1;
    }
    return 0;
}

int rnr_reader_next_initial(rnr_reader *r, rnr_initial_chunk *out)
{
    char why[RNR_ERR_MAX - 96];
    int rc = reader_advance(r, r->h.kind == RNR_LOG_INITIAL);
    if (rc <= 0)
        return rc;
    int dec = rnr_initial_decode(&r->state, &r->cur, &r->scratch, out, why, sizeof why);
    if (dec == 0 && read_duration(r, &out->dur, why, sizeof why) < 0)
        dec = -1;
    return reader_finish(r, dec, why);
}

int rnr_reader_next_final(rnr_reader *r, rnr_final_chunk *out)
{
    char why[RNR_ERR_MAX - 96];
    int rc = reader_advance(r, rnr_log_kind_is_chunks(r->h.kind) && r->h.kind != RNR_LOG_INITIAL);
    if (rc <= 0)
        return rc;
    int dec = rnr_final_decode(&r->state, &r->cur, &r->scratch, out, why, sizeof why);
    if (dec == 0 && read_duration(r, &out->dur, why, sizeof why) < 0)
        dec = -1;
    return reader_finish(r, dec, why);
}

int rnr_reader_next_input(rnr_reader *r, rnr_input_record *out)
{
    char why[RNR_ERR_MAX - 96];
    int rc = reader_advance(r, r->h.kind == RNR_LOG_INPUT);
    if (rc <= 0)
        return rc;
    return reader_finish(r, rnr_input_decode(&r->state, &r->cur, out, why, sizeof why), why);
}
