/* backend/synth.h: synthetic initial logs. A seeded random execution of
 * threads on a simulated multicore (MSI-like line states, one bus
 * transaction per cycle, context switches, blocking, syscalls, idle cores
 * whose OS touches shared lines) drives one rru_unit per core exactly as
 * the machine will; a driver model drains the RRU buffers, adversarially
 * late when asked but always within bounded silence. The result is an
 * initial log plus the ground-truth dependences (backend/truth.h). */
#ifndef RNR_BACKEND_SYNTH_H
#define RNR_BACKEND_SYNTH_H

#include <stddef.h>
#include <stdint.h>

#include "backend/truth.h"
#include "formats/log.h"
#include "rru/rru_unit.h"

#define SYNTH_MAX_CPUS 64u

typedef struct synth_config {
    uint32_t cpus;             /* 1..SYNTH_MAX_CPUS */
    uint32_t threads;          /* >= 1 */
    uint64_t seed;
    uint64_t insns;            /* monitored instructions per thread */
    uint32_t shared_lines;     /* lines every thread may touch (>= 1) */
    double sharing;            /* shared-line accesses per instruction (0..1) */
    double write_frac;         /* fraction of accesses that write (0..1) */
    uint32_t private_lines;    /* per thread (>= 1) */
    double private_rate;       /* private-line accesses per instruction (0..1) */
    uint32_t os_cpus;          /* cpus that never run threads (only OS activity) */
    double os_rate;            /* OS accesses to shared lines per 1000 cycles on a
                                  cpu without a thread */
    uint64_t quantum;          /* mean cycles between preemptions; 0 = none */
    double block_rate;         /* per access: chance the thread blocks (futex) */
    uint64_t block_cycles;     /* mean time blocked */
    double syscall_rate;       /* syscalls per 1000 instructions */
    uint64_t miss_latency;     /* cycles per bus transaction (jittered +-50%) */
    int adversarial;           /* drain each buffer at random times up to its deadline */
    rru_config rru;
    struct pass_progress *progress;  /* reports chunks drained, or NULL */
} synth_config;

/* Defaults for CPUS cores: one thread per core, 200000 instructions each,
 * medium sharing over 512 lines, adversarial drains, rru_config_default
 * with an MSP of 20000 cycles. */
void synth_config_default(synth_config *c, uint32_t cpus);
/* The default on 8 cpus with SEED and INSNS, MSP 8000 and chunks of at
 * most 2000 instructions: a log whose bounded-silence window is small
 * against its length (the flat-memory tests of the streaming passes). */
void synth_config_windowed(synth_config *c, uint64_t seed, uint64_t insns);
/* Applies a named sharing level: "low" (0.5 shared accesses per 1000
 * instructions), "medium" (2), "high" (10). -1 if unknown. */
int synth_set_sharing(synth_config *c, const char *level);
int synth_config_check(const synth_config *c, char *err, size_t errlen);

typedef struct synth_sink {
    /* Each chunk as the driver drains it, in log order, with its start
     * time (not part of the log: tests use it to check bounded silence). */
    void (*chunk)(void *ctx, const rnr_initial_chunk *c, uint64_t start);
    /* Each ground-truth dependence, as the destination access happens. May be NULL. */
    void (*dep)(void *ctx, const truth_dep *d);
    void *ctx;
} synth_sink;

typedef struct synth_result {
    uint64_t chunks, instructions, cycles, deps;
    uint64_t bus_transactions, os_accesses, switches, blocks, syscalls;
    rru_counters rru;          /* summed over cores */
} synth_result;

/* Runs the execution (the config must check). Deterministic in the config. */
void synth_run(const synth_config *c, const synth_sink *sink, synth_result *res);

/* Runs it into a new bundle of kind synthetic (formats/bundle.h): manifest,
 * initial.log and, with TRUTH, truth.deps. DIR must not exist or be empty.
 * 0 or -1 with err. */
int synth_bundle(const synth_config *c, const char *dir, int truth, synth_result *res, char *err,
                 size_t errlen);

/* Runs it into an initial log in memory (the caller frees out->data). */
void synth_to_memory(const synth_config *c, rnr_membuf *out, truth_set *truth, synth_result *res);

#endif
