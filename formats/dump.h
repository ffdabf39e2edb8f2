/* formats/dump.h: the human-readable text of a log (`rnr dump`) and its
 * size summary (`rnr stats`). */
#ifndef RNR_FORMATS_DUMP_H
#define RNR_FORMATS_DUMP_H

#include <stdint.h>
#include <stdio.h>

#include "formats/log.h"

/* Prints the header line and one line per record, stable across versions
 * of the same format so that dumps can be diffed. 0 at a clean end; 1 if
 * the log is truncated, -1 if it is damaged (either way the complete prefix
 * was printed; message in err). */
int rnr_log_dump(rnr_reader *r, FILE *out, char *err, size_t errlen);
/* The name of system call NR ("brk"), or NULL if it has none. */
typedef const char *(*rnr_syscall_namer)(uint64_t nr);
/* rnr_log_dump, an input log's SYSCALL lines also naming the call through
 * NAMER ("syscall 214 brk = ..."); NULL: numbers only. The formats know no
 * system call table: the driver's is passed in (rnr dump does). */
int rnr_log_dump_named(rnr_reader *r, FILE *out, rnr_syscall_namer namer, char *err,
                       size_t errlen);

/* One line of a record, without the index and newline, into buf. */
void rnr_format_initial(const rnr_initial_chunk *c, char *buf, size_t n);
void rnr_format_final(uint32_t kind, const rnr_final_chunk *c, char *buf, size_t n);

typedef struct rnr_log_summary {
    rnr_log_header header;
    rnr_log_counts counts;
    uint64_t zlib_bytes;        /* the raw records compressed as one zlib stream (level 9) */
    uint64_t instructions;      /* chunk logs: sum of chunk sizes */
    uint64_t threads;           /* distinct tids */
    uint64_t tokens;            /* MaxPar/Stitched: STV bits set (tokens sent) */
    uint64_t tokens_awaited;    /* MaxPar/Stitched: sum of PTV counts */
    uint64_t sv_entries;        /* initial: successor-vector entries */
    uint64_t mem_bytes;         /* input: bytes in MEM and START records */
    /* Input logs, per record type (index = RNR_IN_*, 0 unused): records,
     * their encoded bytes (they add up to counts.raw_bytes), and those
     * bytes compressed alone as one zlib stream at level 9 (these do not
     * add up to zlib_bytes: the kinds compress with each other in the log). */
    uint64_t in_records[RNR_IN_TYPE_MAX + 1];
    uint64_t in_raw[RNR_IN_TYPE_MAX + 1];
    uint64_t in_zlib[RNR_IN_TYPE_MAX + 1];
} rnr_log_summary;

/* Reads the whole log at PATH; 0; 1 if it is truncated (the complete
 * prefix is summarized, the message in err); -1 with err if it is damaged
 * (nothing is summarized). */
int rnr_log_summarize(const char *path, rnr_log_summary *s, char *err, size_t errlen);

#endif
