/* rru/rru_unit.h: the Record-and-Replay Unit of one core, as a model the
 * machine drives with events (retired instructions, own accesses, snoops
 * from other cores, time) and the driver programs (enable, terminate,
 * serialize, drain). It knows nothing of threads: the driver's tag is
 * stamped on chunks as their TID. docs/backend.md ("The RRU model") states
 * the event contract the machine must keep; the short version:
 *
 *   - every call carries `now` (cycles); calls to all units of a machine
 *     are made in nondecreasing `now`;
 *   - bus transactions (accesses that snoop other cores) have distinct
 *     times; a snoop at time t reaches every other unit (rru_snoop) before
 *     any of that unit's own events at times > t;
 *   - rru_tick reaches every unit at least every msp/16 cycles;
 *   - a thread switched out (rru_serialize) at t resumes no earlier than
 *     t + 2.
 *
 * What it guarantees (the initial log's invariants, formats/log.h, plus):
 *   - a chunk containing a bus access at time y has TS > y; a chunk that
 *     sourced a conflict with its current cluster at time t has TS = t;
 *   - bounded silence: every chunk is final (its SV can no longer change)
 *     by start + 3/4 msp, and rru_deadline() says when the driver must have
 *     drained it (start + msp), start being the time of the chunk's first
 *     retired instruction. */
#ifndef RNR_RRU_RRU_UNIT_H
#define RNR_RRU_RRU_UNIT_H

#include <stddef.h>
#include <stdint.h>

#include "formats/log.h"

typedef struct rru_config {
    uint32_t cpus;            /* cores in the machine (SV width), 1..RNR_MAX_CPUS */
    uint32_t clusters;        /* K >= 2: signatures of the current cluster and K-1 closed ones */
    uint32_t sig_bits;        /* 0 = exact sets, else Bloom-filter bits per signature */
    uint32_t sig_hashes;      /* Bloom hash functions (1..8) */
    uint32_t cluster_chunks;  /* a cluster ends after this many chunks (>= 1) */
    uint64_t chunk_max;       /* instructions per chunk (>= 1) */
    uint64_t msp;             /* maximum silence period in cycles (>= 64) */
    /* 1: instructions reach rru_retire after the fact (a recorder that
     * reports them lazily), so a chunk that rru_retire ends at its size
     * limit does not end its cluster even when the cluster is full: the
     * driver ends full clusters at the next instruction boundary it sees
     * (rru_cluster_full, rru_terminate), where the core's access filter can
     * be flushed in time. 0 (default): clusters end right there. */
    int deferred_cluster_end;
} rru_config;

/* Defaults: K = 4, exact signatures, 4 chunks per cluster, 10000-instruction
 * chunks, MSP 100000 cycles. */
void rru_config_default(rru_config *c, uint32_t cpus);
/* 0, or -1 with the offending field in err. */
int rru_config_check(const rru_config *c, char *err, size_t errlen);

typedef struct rru_unit rru_unit;

/* The RRU of core CPU (< c->cpus), recording disabled. Aborts on bad
 * config (check it first) or when out of memory. */
rru_unit *rru_unit_new(const rru_config *c, uint32_t cpu);
void rru_unit_free(rru_unit *u);

/* ---- programming interface (the driver) ---- */

/* Starts recording; chunks from now on carry TAG (the driver's TID). If
 * recording was on with another tag, the current chunk ends first (reason
 * switch). */
void rru_enable(rru_unit *u, uint64_t now, uint32_t tag);
/* Stops recording: the current chunk (reason stop) and cluster end. The
 * window keeps checking snoops against past clusters. */
void rru_disable(rru_unit *u, uint64_t now);
/* Ends the current chunk (if it has instructions) with REASON. */
void rru_terminate(rru_unit *u, uint64_t now, uint32_t reason);
/* Serialization: a dependence from everything this core recorded up to
 * now to every other core, now: ends the current chunk (REASON) and
 * cluster and sets every SV entry of the newest open cluster. */
void rru_serialize(rru_unit *u, uint64_t now, uint32_t reason);
/* Recording is over for good (the program ended): the current chunk ends
 * (reason stop) and every buffered chunk becomes final, without eviction
 * dependences (no monitored code runs after this). */
void rru_unit_stop(rru_unit *u, uint64_t now);

/* Chunks in the buffer (ended, not yet drained), and how many of them at
 * its head are final (may be drained). */
uint32_t rru_buffered(const rru_unit *u);
uint32_t rru_ready(const rru_unit *u);
/* Latest time the oldest buffered chunk may be drained (its start + msp);
 * UINT64_MAX if the buffer is empty. */
uint64_t rru_deadline(const rru_unit *u);
/* Drains up to MAX final chunks from the head, oldest first, calling FN on
 * each (the record is valid during the call). Returns the count drained. */
uint32_t rru_drain(rru_unit *u, uint32_t max,
                   void (*fn)(void *ctx, const rnr_initial_chunk *c, uint64_t start), void *ctx);

/* ---- machine events ---- */

/* N instructions retired by this core, the last at time now. Splits at the
 * chunk size limit. Ignored while recording is off. */
void rru_retire(rru_unit *u, uint64_t now, uint64_t n);
/* The last retired instruction accessed LINE (write or read); BUS says it
 * caused a bus transaction (snooped by the others at this same time). */
void rru_access(rru_unit *u, uint64_t now, uint64_t line, int write, int bus);
/* A recorder's hot path. rru_report_room is the number of instructions
 * the current chunk can still take without ending (0 if recording is off
 * or the chunk is empty); it changes only through the calls of this
 * interface. While N <= that room and N > 0 or the room is not 0,
 * rru_report(u, line, write, n) is rru_retire(u, now, n) followed by
 * rru_access(u, now, line, write, 0), without `now`: neither can end a
 * chunk there. */
uint64_t rru_report_room(const rru_unit *u);
void rru_report(rru_unit *u, uint64_t line, int write, uint64_t n);
/* A bus transaction of core FROM on LINE (write = read-exclusive or
 * upgrade). Checks the window; returns 1 if it conflicted with a cluster
 * (and the dependence was recorded), else 0. */
int rru_snoop(rru_unit *u, uint64_t now, uint32_t from, uint64_t line, int write);
/* 1 if rru_snoop with these arguments would record a dependence now, with
 * no change to the unit. Retiring instructions, ending chunks and clusters
 * and evicting can only remove such hits (a cluster keeps its signatures
 * from open to final; an entry once set stays set), so a 0 here stays 0
 * after any of them: a driver may skip the snoop and the bookkeeping it
 * would do before it. (It may rebuild the unit's summaries: no state a
 * log or a snoop can see.) */
int rru_snoop_hits(rru_unit *u, uint32_t from, uint64_t line, uint64_t hash, int write);
/* The hash of LINE rru_snoop_hits takes (computed once per transaction). */
uint64_t rru_line_hash(uint64_t line);
/* The unit's summary for a snoop of the given kind (exact signatures
 * only; NULL with Bloom signatures): if bit rru_summary_bit(line) of this
 * array is clear, rru_snoop_hits returns 0 for that line. The array stays
 * at the same address for the unit's life, so a recorder may test it
 * inline before calling rru_snoop_hits. */
#define RRU_SUMMARY_BITS 4096u
static inline uint32_t rru_summary_bit(uint64_t line)
{
    return (uint32_t)(((line >> 6) * 0x9e3779b97f4a7c15ull) >> 52);   /* 12 bits */
}
const uint64_t *rru_snoop_summary(const rru_unit *u, int write);
/* Time passes: ends chunks that grew old, closes an idle cluster, evicts
 * closed clusters that grew old (conservatively). */
void rru_tick(rru_unit *u, uint64_t now);

typedef struct rru_counters {
    uint64_t chunks, clusters, conflicts, evictions, serializations;
    uint64_t sv_entries;      /* in dumped chunks */
} rru_counters;
const rru_counters *rru_unit_counters(const rru_unit *u);

/* Instructions the current chunk can still take before its size limit
 * (chunk_max when it is empty). The driver arms the core's exact event
 * there, so that the limit falls on an instruction boundary it sees. */
uint64_t rru_chunk_room(const rru_unit *u);
/* Clusters ended so far. When it changes, the core's access filter must
 * be flushed (rru_machine_flush_filter): every line of the next cluster
 * has to reach rru_access. */
uint64_t rru_cluster_ends(const rru_unit *u);
/* 1 if the current cluster holds cluster_chunks chunks or more (possible
 * only with deferred_cluster_end) and the current chunk has instructions:
 * the driver should end it (rru_terminate) at an instruction boundary. */
int rru_cluster_full(const rru_unit *u);
/* 1 while recording is enabled. */
int rru_enabled(const rru_unit *u);

#endif
