/* backend/truth.h: ground-truth dependences of a recorded (synthetic)
 * execution: every pair of conflicting monitored accesses that the replay
 * must order, at instruction granularity. The file is text (docs/backend.md,
 * "Ground truth"):
 *   rnr-truth 1 cpus N
 *   KIND LINE SRC_CPU SRC_TID SRC_INSN SRC_TINSN SRC_TIME DST_CPU DST_TID DST_INSN DST_TINSN DST_TIME
 * KIND is raw, war or waw; LINE is the cache line in hex; INSN is the
 * 0-based index of the accessing instruction among the monitored
 * instructions of its CPU (the initial log's chunks of that CPU, in order),
 * TINSN its index among the monitored instructions of its thread, TIME the
 * access time in cycles. */
#ifndef RNR_BACKEND_TRUTH_H
#define RNR_BACKEND_TRUTH_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define TRUTH_VERSION 1u   /* bump when a field changes meaning */

enum { TRUTH_RAW = 0, TRUTH_WAR = 1, TRUTH_WAW = 2 };

typedef struct truth_access {
    uint32_t cpu, tid;
    uint64_t insn, tinsn, time;
} truth_access;

typedef struct truth_dep {
    uint32_t kind;
    uint64_t line;
    truth_access src, dst;
} truth_dep;

typedef struct truth_set {
    uint32_t cpus;
    truth_dep *dep;
    size_t n, cap;
} truth_set;

const char *truth_kind_name(uint32_t kind);

/* Writing: the header line, then one line per dependence. -1 on a write
 * error (errno set). */
int truth_write_header(FILE *f, uint32_t cpus);
int truth_write(FILE *f, const truth_dep *d);

/* Reads PATH; 0, or -1 with "PATH: line N: problem" in err. The caller
 * frees with truth_free. */
int truth_load(const char *path, truth_set *out, char *err, size_t errlen);
void truth_add(truth_set *s, const truth_dep *d);

/* The same file one dependence at a time (memory: one line). NULL, or -1
 * from next, with "PATH[: line N]: problem" in err; next returns 1 with a
 * dependence, 0 at the end. */
typedef struct truth_reader truth_reader;
truth_reader *truth_reader_open(const char *path, char *err, size_t errlen);
uint32_t truth_reader_cpus(const truth_reader *t);
const char *truth_reader_name(const truth_reader *t);
int truth_reader_next(truth_reader *t, truth_dep *d, char *err, size_t errlen);
void truth_reader_close(truth_reader *t);
void truth_free(truth_set *s);

/* The tracker turns a stream of line accesses, in the order they happened,
 * into the dependences above (truth.c says which pairs it lists). */
typedef struct truth_tracker truth_tracker;
typedef void (*truth_emit_fn)(void *ctx, const truth_dep *d);
/* CPUS <= 64. Aborts when out of memory. */
truth_tracker *truth_tracker_new(uint32_t cpus, truth_emit_fn emit, void *ctx);
void truth_tracker_access(truth_tracker *t, uint64_t line, const truth_access *a, int write);
uint64_t truth_tracker_deps(const truth_tracker *t);
void truth_tracker_free(truth_tracker *t);

#endif
