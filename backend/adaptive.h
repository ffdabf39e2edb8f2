/* backend/adaptive.h: the policies of an adaptive final log, which switches
 * between MaxPar and Stitched by phase (docs/backend.md, "Adaptive").
 * A phase is a range of walk positions in instructions: a chunk of the
 * MaxPar log is at position P when the chunks before it in the log's walk
 * order (dag_walk; for a MaxPar log its own order) hold P instructions.
 * A policy turns what it knows of a phase into its format; the pass
 * (pass_adaptive, backend/passes.h) then stitches only inside Stitched
 * phases. */
#ifndef RNR_BACKEND_ADAPTIVE_H
#define RNR_BACKEND_ADAPTIVE_H

#include <stddef.h>
#include <stdint.h>

#include "formats/log.h"

typedef enum adaptive_kind {
    ADAPTIVE_PHASES = 1,     /* phases:FILE, explicit ranges */
    ADAPTIVE_BANDWIDTH = 2,  /* bandwidth:BYTES_PER_S[:PHASE_INSNS[:HZ]] */
    ADAPTIVE_LAG = 3,        /* lag:CHUNKS, on-line only */
} adaptive_kind;

#define ADAPTIVE_PHASE_INSNS_DEFAULT 65536u   /* bandwidth: phase length */
#define ADAPTIVE_HZ_DEFAULT 1000000000.0       /* bandwidth: cycles per second */

typedef struct adaptive_policy {
    int kind;                  /* adaptive_kind */
    /* ADAPTIVE_PHASES: phase i starts at start[i] (ascending, start[0] = 0) */
    uint64_t *start;
    uint32_t *format;          /* RNR_PHASE_MAXPAR or RNR_PHASE_STITCHED */
    size_t nphases;
    /* ADAPTIVE_BANDWIDTH */
    double bytes_per_s, hz;
    uint64_t phase_insns;
    /* ADAPTIVE_LAG */
    uint64_t lag_chunks;
} adaptive_policy;

/* What a policy may know of a phase when it decides. */
typedef struct adaptive_phase_stats {
    uint64_t chunks;           /* MaxPar chunks in the phase */
    uint64_t instructions;
    uint64_t maxpar_bytes;     /* their MaxPar records' encoded bytes (bytes.raw) */
    uint64_t cycles;           /* recorded time: the busiest lane's recorded durations */
} adaptive_phase_stats;

/* Parses POLICY (the text after --adaptive); PHASES reads its file. 0, or
 * -1 with a one-line message in err (naming the file and line for a bad
 * phases file). Free with adaptive_policy_free. */
int adaptive_policy_parse(const char *policy, adaptive_policy *p, char *err, size_t errlen);
void adaptive_policy_free(adaptive_policy *p);

/* The format (RNR_PHASE_MAXPAR or RNR_PHASE_STITCHED) of the next phase:
 * the API a streaming recorder calls at each phase boundary.
 * BANDWIDTH: MaxPar when ST's MaxPar bytes fit in bytes_per_s over its
 * recorded time (cycles / hz), else Stitched (ST is the phase itself: a
 * streaming recorder holds one phase of MaxPar chunks before it writes
 * them). LAG: MaxPar when FOLLOWER_LAG (chunks recorded and not yet
 * replayed by the follower) exceeds lag_chunks, else Stitched. PHASES has
 * no decision to make (the file decided): Stitched. */
uint32_t adaptive_policy_decide(const adaptive_policy *p, const adaptive_phase_stats *st,
                                uint64_t follower_lag);

/* Accumulates a phase's statistics chunk by chunk (for a pass or a
 * streaming recorder). */
typedef struct adaptive_meter adaptive_meter;
adaptive_meter *adaptive_meter_new(uint32_t cpus);
void adaptive_meter_free(adaptive_meter *m);
/* Adds MaxPar chunk C whose record takes BYTES. */
void adaptive_meter_add(adaptive_meter *m, const rnr_final_chunk *c, uint64_t bytes);
/* The statistics since the last reset. */
void adaptive_meter_stats(const adaptive_meter *m, adaptive_phase_stats *st);
void adaptive_meter_reset(adaptive_meter *m);

/* What each phase of an adaptive log holds (rnr stats). */
typedef struct adaptive_phase_report {
    uint32_t format;           /* RNR_PHASE_MAXPAR or RNR_PHASE_STITCHED */
    uint64_t start;            /* instructions of the log before its first chunk */
    uint64_t entries, instructions, tokens;
    uint64_t bytes;            /* its records' encoded bytes (their share of bytes.raw) */
    uint64_t cycles;           /* recorded time: the busiest lane's durations */
    uint64_t critical_path;    /* longest path through the phase's own chunks */
} adaptive_phase_report;

/* Reads the adaptive log R to its end in its walk order (for a log rnr
 * wrote, its own order) and reports its phases: *OUT (malloc'd, *N
 * entries). A phase's critical path counts only edges between its own
 * chunks (its parallelism is instructions / critical path, the replay's
 * within the phase). 0, or -1 with a one-line message in err. */
int adaptive_measure(rnr_reader *r, adaptive_phase_report **out, size_t *n, char *err,
                     size_t errlen);

/* The phases of a policy decided chunk by chunk, on-line (a streaming
 * recorder) or off-line (adaptive_plan). Phases are phase_insns walk
 * positions long (lag: ADAPTIVE_PHASE_INSNS_DEFAULT); consecutive phases of
 * one format are merged, so the list grows only at switches.
 *   PHASES: the file's, known from the start.
 *   BANDWIDTH: a phase is decided on its own statistics once the first
 *     chunk after it arrives (or at finish): its chunks must be held until
 *     then, adaptive_planner_add saying when (1).
 *   LAG: a phase is decided when its first chunk arrives, on the
 *     follower's lag given with that chunk.
 * H: the MaxPar log's header (cpus; the sizer's encoding). NULL with err
 * only if the sizer cannot be made. P must outlive the planner. */
typedef struct adaptive_planner adaptive_planner;
adaptive_planner *adaptive_planner_new(const adaptive_policy *p, const rnr_log_header *h,
                                       char *err, size_t errlen);
void adaptive_planner_free(adaptive_planner *pl);
/* Chunk C, the next in walk order. 1: the phase before C's was decided
 * (BANDWIDTH: release the chunks held before C); 0: nothing decided that
 * needs a release; -1 on an encoding error (adaptive_planner_error). */
int adaptive_planner_add(adaptive_planner *pl, const rnr_final_chunk *c, uint64_t follower_lag);
const char *adaptive_planner_error(const adaptive_planner *pl);
/* Its policy's kind (adaptive_kind). */
int adaptive_planner_kind(const adaptive_planner *pl);
/* No more chunks: the last phase decided; the list is never empty and
 * starts at 0. */
void adaptive_planner_finish(adaptive_planner *pl);
/* The phases decided so far (pointers valid until the next add/finish). */
size_t adaptive_planner_phases(const adaptive_planner *pl, const uint64_t **start,
                               const uint32_t **format);

/* Off-line: the phases for the MaxPar log R (read to its end), by a
 * planner. LAG is refused (it needs a follower). 0 with *START and *FORMAT
 * (malloc'd, n entries, free both), or -1 with a one-line message in err. */
int adaptive_plan(const adaptive_policy *p, rnr_reader *r, uint64_t **start, uint32_t **format,
                  size_t *n, char *err, size_t errlen);

#endif
