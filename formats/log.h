/* formats/log.h: every rnr log kind (initial, input, MaxPar, Stitched,
 * Serial, StSerial) as a stream of records in CRC-checked blocks.
 * docs/formats.md is the schema; this header is its C interface. */
#ifndef RNR_FORMATS_LOG_H
#define RNR_FORMATS_LOG_H

#include <stddef.h>
#include <stdint.h>

#include "formats/io.h"

/* Bump RNR_LOG_VERSION when the meaning of any byte of the file header,
 * the block frame or a record encoding changes, or a field is added.
 * Readers accept this version and RNR_LOG_VERSION_OLDEST (docs/formats.md,
 * "Versioning"): version 3 logs have no chunk durations (read as 0). */
#define RNR_LOG_VERSION 4u
#define RNR_LOG_VERSION_OLDEST 3u
#define RNR_LOG_MAGIC "\x89RNRLOG\n"
#define RNR_LOG_MAGIC_LEN 8u
#define RNR_LOG_HEADER_SIZE 64u
#define RNR_BLOCK_HEADER_SIZE 20u
#define RNR_MAX_CPUS 1024u               /* header cpu count bound */
#define RNR_BLOCK_MAX (16u << 20)        /* raw payload bound per block */
#define RNR_BLOCK_DEFAULT (64u << 10)    /* writer's default block target */
#define RNR_ERR_MAX 320u                 /* room for any message here */

typedef enum rnr_log_kind {
    RNR_LOG_INITIAL = 1,   /* recorder output: chunks with TS and SV */
    RNR_LOG_INPUT = 2,     /* nondeterministic inputs per thread */
    RNR_LOG_MAXPAR = 3,    /* pass 1: chunks with STV/PTV */
    RNR_LOG_STITCHED = 4,  /* pass 2: stitched chunks with STV/PTV */
    RNR_LOG_SERIAL = 5,    /* pass 3 on MaxPar: total order of {TID, CS} */
    RNR_LOG_STSERIAL = 6,  /* pass 3 on Stitched */
    RNR_LOG_ADAPTIVE = 7,  /* MaxPar or Stitched by phase; records mark the switches */
} rnr_log_kind;
#define RNR_LOG_KIND_MAX 7

/* The format of a phase of an adaptive log (rnr_final_chunk.phase). */
typedef enum rnr_phase_format {
    RNR_PHASE_NONE = 0,      /* the record continues the current phase */
    RNR_PHASE_MAXPAR = 1,    /* the record starts a phase of MaxPar chunks */
    RNR_PHASE_STITCHED = 2,  /* the record starts a phase of stitched chunks */
} rnr_phase_format;
#define RNR_PHASE_FORMAT_MAX 2

/* Why a chunk ended (initial log). */
typedef enum rnr_chunk_reason {
    RNR_END_CONFLICT = 0,   /* the current cluster sourced a dependence */
    RNR_END_SIZE = 1,       /* chunk size limit */
    RNR_END_SYSCALL = 2,    /* driver request: system call */
    RNR_END_SWITCH = 3,     /* driver request: context switch */
    RNR_END_EXIT = 4,       /* driver request: thread exit */
    RNR_END_SERIALIZE = 5,  /* driver request: serialization */
    RNR_END_AGE = 6,        /* bounded silence: the chunk grew too old */
    RNR_END_STOP = 7,       /* recording stopped */
} rnr_chunk_reason;
#define RNR_END_REASON_COUNT 8

typedef struct rnr_log_header {
    uint32_t kind;               /* rnr_log_kind */
    uint32_t cpus;               /* CPUs recorded, 1..RNR_MAX_CPUS */
    uint64_t msp;                /* maximum silence period in cycles, 0 = unknown */
    uint8_t program_sha256[32];  /* guest binary, all zero = unknown */
} rnr_log_header;

/* One successor-vector entry: this chunk's cluster sourced a dependence to
 * CPU `cpu` at time `ts` (>= the chunk's ts). */
typedef struct rnr_sv_entry {
    uint32_t cpu;
    uint64_t ts;
} rnr_sv_entry;

/* A chunk of the initial log. Per CPU, ts never decreases along the log. */
typedef struct rnr_initial_chunk {
    uint32_t cpu;
    uint32_t tid;
    uint64_t ts;            /* termination timestamp, cycles */
    uint64_t cs;            /* instructions, >= 1 */
    uint32_t reason;        /* rnr_chunk_reason */
    uint64_t dur;           /* recorded duration in cycles (docs/formats.md); 0 = unknown */
    uint32_t nsv;
    rnr_sv_entry *sv;       /* nsv entries, cpus ascending, none == cpu */
} rnr_initial_chunk;

/* Predecessor-token-vector entry: `count` tokens from CPU `cpu`. */
typedef struct rnr_ptv_entry {
    uint32_t cpu;
    uint32_t count;         /* >= 1 */
} rnr_ptv_entry;

/* A chunk of a final log. MaxPar, Stitched and adaptive use every field
 * but phase, which only adaptive logs carry (the first record of one must
 * start a phase; other kinds read 0 and their writers ignore it); Serial
 * and StSerial only tid and cs (cpu = 0, no vectors). */
typedef struct rnr_final_chunk {
    uint32_t cpu;
    uint32_t tid;
    uint64_t cs;            /* instructions, >= 1 */
    uint64_t dur;           /* recorded cycles: the sum of its initial chunks'; 0 = unknown */
    uint32_t nstv;
    uint32_t *stv;          /* successor CPUs: one token to each, ascending, none == cpu */
    uint32_t nptv;
    rnr_ptv_entry *ptv;     /* tokens awaited, cpus ascending, none == cpu */
    uint32_t phase;         /* adaptive logs: rnr_phase_format this record starts, or NONE */
} rnr_final_chunk;

typedef enum rnr_input_type {
    RNR_IN_SYSCALL = 1,  /* nr = syscall number, value = return value */
    RNR_IN_MEM = 2,      /* bytes the preceding syscall of tid wrote at addr */
    RNR_IN_CSR = 3,      /* nr = CSR number (time, cycle, instret), value read */
    RNR_IN_START = 4,    /* process start: bytes placed at addr (AT_RANDOM...) */
    RNR_IN_SC = 5,       /* a store-conditional's outcome: nr = the thread's SC
                          * ordinal, value = what SC wrote to rd, addr = its address */
    RNR_IN_CHECK = 6,    /* a chunk of tid ended: nr = the thread's instret there,
                          * value = its pc, addr = rru_ctx_hash of its registers */
} rnr_input_type;
#define RNR_IN_TYPE_MAX 6

/* The lower-case name of input record type T ("syscall", "check"), or
 * NULL if T is no type. */
const char *rnr_input_type_name(uint32_t t);

/* A record of the input log, per thread in program order. */
typedef struct rnr_input_record {
    uint32_t type;          /* rnr_input_type */
    uint32_t tid;
    uint64_t nr;            /* SYSCALL, CSR */
    int64_t value;          /* SYSCALL, CSR */
    uint64_t addr;          /* MEM, START */
    uint64_t len;           /* MEM, START: bytes at data */
    const uint8_t *data;
} rnr_input_record;

/* Size accounting of a stream (what `rnr stats` reports). */
typedef struct rnr_log_counts {
    uint64_t records;
    uint64_t blocks;        /* data blocks, not counting the end block */
    uint64_t raw_bytes;     /* encoded records, before compression, without durations */
    uint64_t duration_bytes; /* the blocks' duration sections (chunk kinds, version 4) */
    uint64_t stored_bytes;  /* file bytes: header, frames, payloads, end block */
} rnr_log_counts;

typedef struct rnr_writer_opts {
    uint32_t block_bytes;   /* raw bytes per block before it is emitted; 0 = default */
    int compress;           /* 0 = store, 1..9 = zlib level; blocks that do not shrink are stored */
} rnr_writer_opts;

typedef struct rnr_writer rnr_writer;
typedef struct rnr_reader rnr_reader;

const char *rnr_log_kind_name(uint32_t kind);          /* "maxpar", or "?" */
const char *rnr_log_kind_article(uint32_t kind);       /* "an" (initial, input) or "a" */
int rnr_log_kind_parse(const char *name);              /* kind, or -1 */
int rnr_log_kind_is_chunks(uint32_t kind);             /* every kind but INPUT */
int rnr_log_kind_has_tokens(uint32_t kind);            /* MAXPAR, STITCHED, ADAPTIVE */
const char *rnr_phase_format_name(uint32_t phase);     /* "maxpar", "stitched", or "?" */
const char *rnr_reason_name(uint32_t reason);

/* The start of the warnings library code prints itself ("rnr backend");
 * "rnr" until set. PREFIX is copied (truncated to 63 bytes). */
void rnr_set_msg_prefix(const char *prefix);
const char *rnr_msg_prefix(void);

/* ---- writing ---- */

/* Starts a log on PATH ("-" = stdout) and writes its header. NULL on
 * failure with "PATH: reason" in err. opts may be NULL (defaults). */
rnr_writer *rnr_writer_open(const char *path, const rnr_log_header *h,
                            const rnr_writer_opts *opts, char *err, size_t errlen);
/* The same on a stream; the writer owns io from now on, also on failure. */
rnr_writer *rnr_writer_open_io(rnr_io *io, const rnr_log_header *h,
                               const rnr_writer_opts *opts, char *err, size_t errlen);

/* Append one record of the log's kind. The record is checked against the
 * schema first; 0 on success, -1 (sticky) with rnr_writer_error(). */
int rnr_writer_put_initial(rnr_writer *w, const rnr_initial_chunk *c);
int rnr_writer_put_final(rnr_writer *w, const rnr_final_chunk *c);
int rnr_writer_put_input(rnr_writer *w, const rnr_input_record *r);

/* Ends the current block (if it has records) and pushes it to the stream,
 * so that a reader at the other end of a pipe sees it. 0 or -1. */
int rnr_writer_flush(rnr_writer *w);
const char *rnr_writer_error(const rnr_writer *w);
const rnr_log_counts *rnr_writer_counts(const rnr_writer *w);
/* Encoded bytes of the record last put (0 before the first): what it adds
 * to bytes.raw. */
size_t rnr_writer_record_bytes(const rnr_writer *w);

/* Writes the end block, closes and frees. 0 on success; -1 with the first
 * error in err (if err is not NULL). */
int rnr_writer_close(rnr_writer *w, char *err, size_t errlen);
/* Frees without an end block: readers will report the log as truncated. */
void rnr_writer_abandon(rnr_writer *w);

/* ---- reading ---- */

/* Opens PATH ("-" = stdin) and checks its header. NULL on failure with
 * "PATH: offset N: problem" in err. */
rnr_reader *rnr_reader_open(const char *path, char *err, size_t errlen);
/* The same on a stream; the reader owns io from now on, also on failure. */
rnr_reader *rnr_reader_open_io(rnr_io *io, char *err, size_t errlen);
const rnr_log_header *rnr_reader_header(const rnr_reader *r);
/* The version in the log's header (RNR_LOG_VERSION_OLDEST..RNR_LOG_VERSION). */
unsigned rnr_reader_version(const rnr_reader *r);
/* 1 if the log's chunks carry their recorded durations (a chunk log of
 * version 4 or later; a version 3 log reads them as 0). */
int rnr_reader_has_durations(const rnr_reader *r);

/* Next record: 1 = one stored in *out (arrays and data owned by the reader,
 * valid until the next call), 0 = clean end of log, -1 = error (message in
 * rnr_reader_error). Every complete block is delivered before an error about
 * what follows it. The kind must match the log's. */
int rnr_reader_next_initial(rnr_reader *r, rnr_initial_chunk *out);
int rnr_reader_next_final(rnr_reader *r, rnr_final_chunk *out);
int rnr_reader_next_input(rnr_reader *r, rnr_input_record *out);

/* Calls FN with the raw (decoded, uncompressed) payload of every data block
 * as it is read, e.g. to measure how well the records compress. */
void rnr_reader_on_block(rnr_reader *r, void (*fn)(void *ctx, const uint8_t *raw, size_t n),
                         void *ctx);

/* Records of the block in hand not delivered yet. 0 means the next call
 * reads from the stream (and may wait on a pipe): a consumer that batches
 * records hands its batch on before that. */
uint32_t rnr_reader_buffered(const rnr_reader *r);

const char *rnr_reader_error(const rnr_reader *r);
/* 1 if the reader failed only because the file ends early (a recording
 * that was killed, a log still being written): every complete block before
 * that point was delivered, so the records read are a complete prefix. */
int rnr_reader_truncated(const rnr_reader *r);
const char *rnr_reader_name(const rnr_reader *r);
const rnr_log_counts *rnr_reader_counts(const rnr_reader *r);
void rnr_reader_close(rnr_reader *r);

/* Checks a header's fields; 0 or -1 with the problem in err. */
int rnr_log_header_check(const rnr_log_header *h, char *err, size_t errlen);

#endif
