/* formats/stream.h: the on-line stream of a recording (docs/online.md):
 * a header (magic, version) and a sequence of CRC-32-checked blocks, each
 * one channel's bytes (the manifest's fixed part, the program, the logs,
 * the guest's output) or a control message (progress, end, the follower's
 * acknowledgements). Framing and an incremental parser; no I/O. */
#ifndef RNR_FORMATS_STREAM_H
#define RNR_FORMATS_STREAM_H

#include <stddef.h>
#include <stdint.h>

#include "formats/io.h"

/* Bump RNR_STREAM_VERSION when the meaning of any byte of the header, the
 * block frame or a block type's payload changes, or a type is added that
 * a reader of the previous version could not skip. Readers accept exactly
 * this version. */
#define RNR_STREAM_VERSION 2u
#define RNR_STREAM_MAGIC "\x89RNRSTR\n"
#define RNR_STREAM_MAGIC_LEN 8u
#define RNR_STREAM_HEADER_SIZE 16u     /* magic, version u32, flags u32 (0) */
#define RNR_STREAM_FRAME_SIZE 12u      /* type u32, length u32, crc32 u32 */
#define RNR_STREAM_BLOCK_MAX (1u << 20) /* payload bound per block */

/* Block types. Channel blocks carry the next bytes of a file of the
 * bundle, in order; control blocks a fixed payload (little-endian u64s). */
typedef enum rnr_stream_type {
    RNR_ST_MANIFEST = 1,   /* the manifest's fixed part (text, status recording) */
    RNR_ST_PROGRAM = 2,    /* the program's bytes */
    RNR_ST_INITIAL = 3,    /* initial.log's bytes */
    RNR_ST_INPUT = 4,      /* input.log's bytes */
    RNR_ST_FINAL = 5,      /* the final log's bytes (its header names the kind) */
    RNR_ST_STDOUT = 6,     /* the guest's stdout */
    RNR_ST_STDERR = 7,     /* the guest's stderr */
    RNR_ST_PROGRESS = 8,   /* primary: instructions, initial chunks, final chunks sent */
    RNR_ST_END = 9,        /* primary: the final manifest (text); nothing follows */
    RNR_ST_ACK = 10,       /* follower: final chunks replayed, their instructions */
    RNR_ST_EXEC = 11,      /* primary: a program an execve loaded (rnr_stream_put_exec) */
} rnr_stream_type;
#define RNR_ST_MAX 11
#define RNR_ST_CHANNELS 8  /* types 1..7 are channels (index = type) */

/* The name of a type ("input"), or "?". */
const char *rnr_stream_type_name(uint32_t type);

/* Appends the stream header to OUT. */
void rnr_stream_put_header(rnr_membuf *out);
/* Appends one block of TYPE with N payload bytes (N <= RNR_STREAM_BLOCK_MAX). */
void rnr_stream_put_block(rnr_membuf *out, uint32_t type, const void *p, size_t n);
/* Appends a control block of N u64 values. */
void rnr_stream_put_u64s(rnr_membuf *out, uint32_t type, const uint64_t *v, size_t n);
/* Reads N u64 values from a control block's payload; 0, or -1 if it is
 * not exactly N values long. */
int rnr_stream_get_u64s(const uint8_t *p, size_t len, uint64_t *v, size_t n);

/* An exec block: the program's SHA-256 (32 bytes), its size (u64), the
 * offset (u64) of the bytes that follow, then those bytes (the rest of the
 * payload). Each successful execve sends one program: its bytes in blocks
 * in order from offset 0, or, for a program the stream carried before
 * (or the stream's program itself), one block at offset SIZE without
 * bytes. The last block of a program (offset + bytes = size) is the
 * execve's place in the list of programs loaded. */
#define RNR_STREAM_EXEC_HEAD 48u
/* Appends the exec blocks of the SIZE bytes FILE (NULL: the one block of
 * a program sent before). */
void rnr_stream_put_exec(rnr_membuf *out, const uint8_t sha[32], const void *file, uint64_t size);
/* Reads an exec block's payload: 0, or -1 if it is shorter than its head
 * or its bytes run past the size. */
int rnr_stream_get_exec(const uint8_t *p, size_t len, uint8_t sha[32], uint64_t *size,
                        uint64_t *offset, const uint8_t **bytes, size_t *n);

/* Receives a block; P (LEN bytes) is valid during the call. 0 goes on,
 * -1 stops the parser (rnr_stream_feed returns -1, error untouched). */
typedef int (*rnr_stream_block_fn)(void *ctx, uint32_t type, const uint8_t *p, size_t len);

typedef struct rnr_stream_parser rnr_stream_parser;

/* A parser for a stream that starts with the header (HEADER=1) or with
 * blocks only (0: the back channel). NAME is used in messages. */
rnr_stream_parser *rnr_stream_parser_new(const char *name, int header);
void rnr_stream_parser_free(rnr_stream_parser *p);
/* Feeds N bytes; every complete block goes to FN. 0, or -1 with the
 * problem in rnr_stream_parser_error: not a stream (magic), another
 * version, a bad frame (type, length, CRC), or FN's stop. Sticky. */
int rnr_stream_feed(rnr_stream_parser *p, const uint8_t *buf, size_t n, rnr_stream_block_fn fn,
                    void *ctx);
const char *rnr_stream_parser_error(const rnr_stream_parser *p);
/* 1 if the header has been read (and was good). */
int rnr_stream_parser_started(const rnr_stream_parser *p);
/* Bytes fed so far, and bytes held of an incomplete block (or header). */
uint64_t rnr_stream_parser_offset(const rnr_stream_parser *p);
size_t rnr_stream_parser_pending(const rnr_stream_parser *p);

#endif
