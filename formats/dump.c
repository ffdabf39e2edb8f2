/* formats/dump.c: text dump and size summary of any log kind. */
#include "formats/dump.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "formats/codec.h"
#include "formats/digest.h"

static size_t add(char *buf, size_t n, size_t at, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static size_t add(char *buf, size_t n, size_t at, const char *fmt, ...)
{
    if (at >= n)
        return at;
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(buf + at, n - at, fmt, ap);
    va_end(ap);
    return k < 0 ? at : at + (size_t)k;
}

void rnr_format_initial(const rnr_initial_chunk *c, char *buf, size_t n)
{
    size_t at = add(buf, n, 0, "cpu %u tid %u ts %" PRIu64 " cs %" PRIu64 " end %s", c->cpu,
                    c->tid, c->ts, c->cs, rnr_reason_name(c->reason));
    for (uint32_t i = 0; i < c->nsv; i++)
        at = add(buf, n, at, "%s%u@%" PRIu64, i ? "," : " sv ", c->sv[i].cpu, c->sv[i].ts);
    if (c->dur)
        add(buf, n, at, " dur %" PRIu64, c->dur);
}

void rnr_format_final(uint32_t kind, const rnr_final_chunk *c, char *buf, size_t n)
{
    if (!rnr_log_kind_has_tokens(kind)) {
        size_t at = add(buf, n, 0, "tid %u cs %" PRIu64, c->tid, c->cs);
        if (c->dur)
            add(buf, n, at, " dur %" PRIu64, c->dur);
        return;
    }
    size_t at = 0;
    if (kind == RNR_LOG_ADAPTIVE && c->phase != RNR_PHASE_NONE)
        at = add(buf, n, at, "phase %s ", rnr_phase_format_name(c->phase));
    at = add(buf, n, at, "cpu %u tid %u cs %" PRIu64, c->cpu, c->tid, c->cs);
    for (uint32_t i = 0; i < c->nstv; i++)
        at = add(buf, n, at, "%s%u", i ? "," : " stv ", c->stv[i]);
    for (uint32_t i = 0; i < c->nptv; i++)
        at = add(buf, n, at, "%s%u:%u", i ? "," : " ptv ", c->ptv[i].cpu, c->ptv[i].count);
    if (c->dur)
        add(buf, n, at, " dur %" PRIu64, c->dur);
}

static void dump_input(FILE *out, const rnr_input_record *r, rnr_syscall_namer namer)
{
    fprintf(out, "tid %u ", r->tid);
    switch (r->type) {
    case RNR_IN_SYSCALL: {
        const char *name = namer ? namer(r->nr) : NULL;
        fprintf(out, "syscall %" PRIu64 "%s%s = %" PRId64 "\n", r->nr, name ? " " : "",
                name ? name : "", r->value);
        return;
    }
    case RNR_IN_CSR:
        fprintf(out, "csr 0x%03" PRIx64 " = %" PRIu64 "\n", r->nr, (uint64_t)r->value);
        return;
    case RNR_IN_SC:
        fprintf(out, "sc %" PRIu64 " at 0x%" PRIx64 " = %" PRIu64 "\n", r->nr, r->addr,
                (uint64_t)r->value);
        return;
    case RNR_IN_CHECK:
        fprintf(out, "check insn %" PRIu64 " pc 0x%" PRIx64 " regs %016" PRIx64 "\n", r->nr,
                (uint64_t)r->value, r->addr);
        return;
    default:
        break;
    }
    fprintf(out, "%s 0x%" PRIx64 " len %" PRIu64 " ", r->type == RNR_IN_MEM ? "mem" : "start",
            r->addr, r->len);
    size_t shown = r->len <= 64 ? (size_t)r->len : 32;
    for (size_t i = 0; i < shown; i++)
        fprintf(out, "%02x", r->data[i]);
    if (shown < r->len)
        fprintf(out, "... crc32 %08lx", crc32(0L, r->data, (uInt)r->len));
    fputc('\n', out);
}

int rnr_log_dump(rnr_reader *r, FILE *out, char *err, size_t errlen)
{
    return rnr_log_dump_named(r, out, NULL, err, errlen);
}

int rnr_log_dump_named(rnr_reader *r, FILE *out, rnr_syscall_namer namer, char *err,
                       size_t errlen)
{
    const rnr_log_header *h = rnr_reader_header(r);
    char hex[RNR_SHA256_HEX];
    static const uint8_t zero[32];
    rnr_hex(h->program_sha256, 32, hex);
    fprintf(out, "# rnr %s log, format %u, cpus %u, msp %" PRIu64 ", program %s\n",
            rnr_log_kind_name(h->kind), rnr_reader_version(r), h->cpus, h->msp,
            memcmp(h->program_sha256, zero, 32) ? hex : "unknown");
    char line[16384];
    uint64_t i = 0;
    int rc;
    for (;; i++) {
        if (h->kind == RNR_LOG_INITIAL) {
            rnr_initial_chunk c;
            if ((rc = rnr_reader_next_initial(r, &c)) <= 0)
                break;
            rnr_format_initial(&c, line, sizeof line);
        } else if (h->kind == RNR_LOG_INPUT) {
            rnr_input_record in;
            if ((rc = rnr_reader_next_input(r, &in)) <= 0)
                break;
            fprintf(out, "%" PRIu64 " ", i);
            dump_input(out, &in, namer);
            continue;
        } else {
            rnr_final_chunk c;
            if ((rc = rnr_reader_next_final(r, &c)) <= 0)
                break;
            rnr_format_final(h->kind, &c, line, sizeof line);
        }
        fprintf(out, "%" PRIu64 " %s\n", i, line);
    }
    if (rc < 0) {
        fflush(out);
        snprintf(err, errlen, "%s", rnr_reader_error(r));
        return rnr_reader_truncated(r) ? 1 : -1;
    }
    return 0;
}

/* ---- summary ---- */

typedef struct deflater {
    z_stream z;
    uint8_t out[16384];
    uint64_t total;
    int ok;
} deflater;

static void deflate_drain(deflater *d, int flush)
{
    int rc;
    do {
        d->z.next_out = d->out;
        d->z.avail_out = sizeof d->out;
        rc = deflate(&d->z, flush);
        d->total += sizeof d->out - d->z.avail_out;
    } while (d->z.avail_out == 0 || (flush == Z_FINISH && rc == Z_OK));
    if (rc == Z_STREAM_ERROR)
        d->ok = 0;
}

static void on_block(void *ctx, const uint8_t *raw, size_t n)
{
    deflater *d = ctx;
    d->z.next_in = (Bytef *)(uintptr_t)raw;
    d->z.avail_in = (uInt)n;
    deflate_drain(d, Z_NO_FLUSH);
}

int rnr_log_summarize(const char *path, rnr_log_summary *s, char *err, size_t errlen)
{
    memset(s, 0, sizeof *s);
    rnr_reader *r = rnr_reader_open(path, err, errlen);
    if (!r)
        return -1;
    deflater d;
    memset(&d, 0, sizeof d);
    d.ok = deflateInit(&d.z, 9) == Z_OK;
    if (d.ok)
        rnr_reader_on_block(r, on_block, &d);
    s->header = *rnr_reader_header(r);
    uint32_t kind = s->header.kind;
    tid_map tids = { 0 };   /* the threads seen (values unused) */
    /* Input logs: each record encoded again with the writer's delta state
     * (the same bytes as in the log), counted and compressed by type. */
    codec_state enc;
    rnr_codec_state_init(&enc, &s->header);
    rnr_buf one = { 0 };
    deflater per[RNR_IN_TYPE_MAX + 1];
    memset(per, 0, sizeof per);
    for (int t = 1; kind == RNR_LOG_INPUT && t <= RNR_IN_TYPE_MAX; t++)
        per[t].ok = deflateInit(&per[t].z, 9) == Z_OK;
    int rc;
    for (;;) {
        if (kind == RNR_LOG_INITIAL) {
            rnr_initial_chunk c;
            if ((rc = rnr_reader_next_initial(r, &c)) <= 0)
                break;
            s->instructions += c.cs;
            s->sv_entries += c.nsv;
            rnr_tid_map_at(&tids, c.tid);
        } else if (kind == RNR_LOG_INPUT) {
            rnr_input_record in;
            if ((rc = rnr_reader_next_input(r, &in)) <= 0)
                break;
            s->mem_bytes += in.len;
            rnr_tid_map_at(&tids, in.tid);
            one.len = 0;
            rnr_input_encode(&enc, &in, &one);
            s->in_records[in.type]++;
            s->in_raw[in.type] += one.len;
            if (per[in.type].ok)
                on_block(&per[in.type], one.p, one.len);
        } else {
            rnr_final_chunk c;
            if ((rc = rnr_reader_next_final(r, &c)) <= 0)
                break;
            s->instructions += c.cs;
            s->tokens += c.nstv;
            for (uint32_t i = 0; i < c.nptv; i++)
                s->tokens_awaited += c.ptv[i].count;
            rnr_tid_map_at(&tids, c.tid);
        }
    }
    if (rc < 0)
        snprintf(err, errlen, "%s", rnr_reader_error(r));
    s->counts = *rnr_reader_counts(r);
    s->threads = tids.n;
    rnr_tid_map_free(&tids);
    if (d.ok) {
        d.z.avail_in = 0;
        deflate_drain(&d, Z_FINISH);
        s->zlib_bytes = d.total;
    }
    deflateEnd(&d.z);
    for (int t = 1; kind == RNR_LOG_INPUT && t <= RNR_IN_TYPE_MAX; t++) {
        if (per[t].ok) {
            per[t].z.avail_in = 0;
            deflate_drain(&per[t], Z_FINISH);
            s->in_zlib[t] = s->in_records[t] ? per[t].total : 0;   /* not an empty stream's 8 */
            deflateEnd(&per[t].z);
        }
    }
    rnr_buf_free(&one);
    rnr_codec_state_free(&enc);
    int truncated = rc < 0 && rnr_reader_truncated(r);
    rnr_reader_close(r);
    return rc < 0 ? (truncated ? 1 : -1) : 0;
}
