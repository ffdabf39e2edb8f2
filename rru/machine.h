/* rru/machine.h: the simulated multicore: N harts (cores) on one guest
 * memory, one global cycle clock, per-line MSI-like coherence with bus
 * transactions, a deterministic seeded schedule, and the per-core hook table
 * the RRU attaches to. docs/machine.md describes the timing and coherence
 * model and proves that timestamps follow the real order.
 *
 * Single host thread: every function here runs on the thread that calls
 * rru_machine_run (hooks run inside it and may call the query/flush/event
 * functions below, but not run, load, save or free). */
#ifndef RNR_RRU_MACHINE_H
#define RNR_RRU_MACHINE_H

#include <stddef.h>
#include <stdint.h>

#include "rru/hart.h"
#include "rru/mem.h"

#define RRU_MAX_CORES 64

typedef struct rru_machine_config {
    unsigned cores;          /* 1..RRU_MAX_CORES (default 8) */
    uint64_t seed;           /* drives the latency jitter (default 1) */
    uint32_t miss_latency;   /* cycles of a bus transaction (default 40) */
    uint32_t miss_jitter;    /* plus a seeded draw in [0, jitter) (default 24) */
    uint32_t slice;          /* run-ahead bound in cycles (default 200, >= 1) */
    uint32_t time_div;       /* cycles per tick of the time CSR (default 100) */
} rru_machine_config;

/* Fills the defaults above. */
void rru_machine_config_default(rru_machine_config *c);

typedef struct rru_machine rru_machine;

/* A machine on MEM (not owned; it must outlive the machine). Every core
 * starts idle at clock 0. NULL on a bad config (message in err) or when
 * memory is exhausted. */
rru_machine *rru_machine_new(const rru_machine_config *c, rru_mem *mem, char *err,
                             size_t errlen);
void rru_machine_free(rru_machine *m);   /* NULL is fine; frees the cores too */
unsigned rru_machine_cores(const rru_machine *m);
rru_mem *rru_machine_mem(const rru_machine *m);
const rru_machine_config *rru_machine_config_of(const rru_machine *m);

/* Core C's executor: its loaded registers are rru_hart_ctx(...) (read and
 * write them while the core is stopped or idle). Owned by the machine. */
rru_hart *rru_machine_hart(rru_machine *m, unsigned core);

/* ---- threads on cores ---- */

/* Puts a thread on core C: copies its context in, clears the reservation
 * (an OS context switch does), and makes the core runnable. */
void rru_machine_load(rru_machine *m, unsigned core, const rru_ctx *c);
/* CORE runs on MEM from now on (rru_hart_set_mem): the memory of the
 * process whose thread it gets. Coherence stays by address: lines of two
 * memories at one address are one line to the directory (false sharing,
 * never a missed conflict). Syscall accesses (rru_machine_read/write) go
 * to the core's memory. */
void rru_machine_set_mem(rru_machine *m, unsigned core, rru_mem *mem);
/* Copies the context of core C out (the core keeps it). */
void rru_machine_save(const rru_machine *m, unsigned core, rru_ctx *c);
/* The core has no thread: it is not scheduled and its clock stands still. */
void rru_machine_set_idle(rru_machine *m, unsigned core);
/* After a stop, makes core C runnable again with the context it holds
 * (e.g. after writing a syscall's result into a0). */
void rru_machine_resume(rru_machine *m, unsigned core);
/* 1 if core C is runnable (loaded and not stopped), else 0. */
int rru_machine_runnable(const rru_machine *m, unsigned core);
/* 1 if core C holds no thread. */
int rru_machine_is_idle(const rru_machine *m, unsigned core);

/* ---- running ---- */

/* Runs the runnable cores, always the one with the smallest clock for a
 * bounded slice, until one of them stops; *stop says which core and why
 * (that core is then stopped: not runnable until resume/load/set_idle).
 * stop->insns counts only the stopping core's last slice: use the
 * context's instret or rru_machine_retired for totals.
 * Returns RRU_STOP_IDLE when no core is runnable, RRU_STOP_ALARM when the
 * smallest clock of the runnable cores reached the alarm (which is then
 * cleared). Deterministic: same memory, contexts, config and calls give the
 * same result. */
rru_stop_reason rru_machine_run(rru_machine *m, rru_stop *stop);
/* Core C stops with RRU_STOP_REQUEST at the end of its current basic block
 * (or before it next runs). For hooks and the driver. */
void rru_machine_request_stop(rru_machine *m, unsigned core);
/* Core C stops with RRU_STOP_TIMER at the first basic-block boundary with
 * clock >= t (UINT64_MAX = never); one-shot. Preemption quantum. */
void rru_machine_set_timer(rru_machine *m, unsigned core, uint64_t t);
/* rru_machine_run returns RRU_STOP_ALARM (core = that of the smallest clock)
 * once the smallest clock of the runnable cores is >= t; UINT64_MAX = none. */
void rru_machine_set_alarm(rru_machine *m, uint64_t t);

/* ---- time ---- */

/* Core C's clock in cycles: exact, also from a hook in the middle of C's
 * instruction (then the time of that instruction's access). */
uint64_t rru_machine_clock(const rru_machine *m, unsigned core);
/* clock = max(clock, t): a woken thread resumes no earlier than its waker. */
void rru_machine_advance_clock(rru_machine *m, unsigned core, uint64_t t);
/* Smallest clock of the runnable cores, or the largest clock of all cores
 * when none is runnable. */
uint64_t rru_machine_time(const rru_machine *m);
/* Instructions retired on core C since the machine started (any thread);
 * exact, also from a hook in the middle of C's instruction (then the
 * instructions before it). */
uint64_t rru_machine_retired(const rru_machine *m, unsigned core);

/* ---- guest memory as a core (syscall effects) ---- */

/* Reads / writes N bytes at ADDR as a guest access of core C at its clock:
 * user permissions are checked (R, W), every line touched goes through
 * coherence (bus transactions, snoops, the RRU's access hook) exactly like a
 * load or store of C, and C's clock advances by any miss latency. 0, or -1
 * if a byte is unmapped or not permitted (Linux: EFAULT; bytes before the
 * bad page may have been accessed). */
int rru_machine_read(rru_machine *m, unsigned core, uint64_t addr, void *buf, size_t n);
int rru_machine_write(rru_machine *m, unsigned core, uint64_t addr, const void *buf, size_t n);

/* The lines of [addr, addr+len) leave the coherence directory (the driver
 * unmapped that memory): no core holds them any more, filters and LR
 * reservations on them are dropped, and a line that is accessed again
 * starts afresh (its first transaction is no earlier than the last one of
 * any forgotten line, so timestamps still follow the real order). */
void rru_machine_forget(rru_machine *m, uint64_t addr, uint64_t len);

/* ---- nondeterministic inputs (driver) ---- */

/* Environment callbacks of every core (see rru_env_ops in hart.h; the hart
 * argument is rru_machine_hart(m, core), rru_hart_id = core). */
void rru_machine_set_env(rru_machine *m, const rru_env_ops *ops, void *env);

/* ---- RRU hook points (per core) ---- */

/* A bus transaction: core REQUESTER missed on LINE (or needed to upgrade
 * a shared copy) and asks for it shared (exclusive = 0: a read) or
 * exclusive (exclusive = 1: a write, AMO or successful SC). TIME is the
 * transaction's time: the access happens then. Guarantee (proof in
 * docs/machine.md): every earlier access to the line that conflicts with
 * this request happened at a time <= time, and time >= clock + 1 of every
 * core holding the line in a conflicting state (modified for a read; any
 * copy for an exclusive request). */
typedef struct rru_bus {
    unsigned requester;
    uint64_t line;           /* line address (multiple of RRU_LINE_SIZE) */
    int exclusive;
    uint64_t time;
} rru_bus;

/* Callbacks of one core's RRU; any may be NULL. With no ops attached a
 * core costs nothing extra. */
typedef struct rru_core_ops {
    /* Core CORE accesses LINE (write = 1 for a store/AMO/SC, 0 for a load)
     * at TIME, and the line is not in its filter: the first such access
     * since the last rru_machine_flush_filter (or since the line left the
     * filter, so duplicates happen). Called after the access's bus
     * transaction, if any. Instruction fetches are not data accesses.
     * RETIRED is rru_machine_retired(core) at the call (the instructions
     * before the one making the access), passed because it is cheap here. */
    void (*access)(void *rru, unsigned core, uint64_t line, int write, uint64_t time,
                   uint64_t retired);
    /* Every bus transaction of another core is snooped here, whether or not
     * this core holds the line, before the requester's access. */
    void (*snoop)(void *rru, unsigned core, const rru_bus *b);
    /* The core's event (rru_machine_set_event) fired, at an instruction
     * boundary: rru_machine_retired/clock give the exact point. */
    void (*event)(void *rru, unsigned core);
} rru_core_ops;

/* Every bus transaction, once, before the cores' snoop hooks and the
 * requester's access hook: for an observer of all cores (one recorder),
 * cheaper than a snoop hook per core. NULL turns it off. */
typedef void (*rru_bus_fn)(void *ctx, const rru_bus *b);
void rru_machine_set_bus(rru_machine *m, rru_bus_fn fn, void *ctx);

/* Attaches OPS with context RRU to core C (ops NULL detaches). The filter
 * is flushed. OPS must outlive the attachment. */
void rru_machine_attach(rru_machine *m, unsigned core, const rru_core_ops *ops, void *rru);
/* Forgets which lines core C has accessed: the next access to each line
 * calls access() again (cluster boundary). Cheap (O(1) amortized). */
void rru_machine_flush_filter(rru_machine *m, unsigned core);
/* One-shot event of core C: ops->event runs at the first instruction
 * boundary where retired >= retired_at (exact: no instruction beyond it
 * runs first) or clock >= time_at; UINT64_MAX disables either. */
void rru_machine_set_event(rru_machine *m, unsigned core, uint64_t retired_at, uint64_t time_at);

/* ---- statistics and debugging ---- */

typedef struct rru_core_stats {
    uint64_t retired;        /* instructions retired on this core */
    uint64_t clock;          /* its clock */
    uint64_t bus_reads;      /* transactions for a shared copy */
    uint64_t bus_exclusive;  /* transactions for an exclusive copy (incl. upgrades) */
    uint64_t stall_cycles;   /* cycles spent waiting for transactions */
} rru_core_stats;

void rru_machine_stats(const rru_machine *m, unsigned core, rru_core_stats *out);

/* Every data access of every core (guest and rru_machine_read/write), in
 * simulation order, with its time. Slows everything: tests only (NULL off). */
typedef void (*rru_trace_fn)(void *ctx, unsigned core, uint64_t addr, unsigned size, int write,
                             uint64_t time);
void rru_machine_set_trace(rru_machine *m, rru_trace_fn fn, void *ctx);

/* Coherence state of the line holding ADDR: bit c of *sharers set if core c
 * holds a copy; *owner = the core holding it modified, or -1. */
void rru_machine_line_state(const rru_machine *m, uint64_t addr, uint64_t *sharers, int *owner);

#endif
