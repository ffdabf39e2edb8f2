/* driver/record.h: the recorder inside the driver: an RRU on every core of
 * the machine, fed in simulation order, programmed by the scheduler and the
 * system calls, drained under bounded silence (docs/recorder.md). Internal
 * to driver/: proc.c, sched.c and syscall.c call it where a thread starts
 * or leaves a core and where a system call begins and ends. */
#ifndef RNR_DRIVER_RECORD_H
#define RNR_DRIVER_RECORD_H

#include <stdint.h>

#include "driver/driver.h"
#include "rru/rru_unit.h"

struct drv_proc;
typedef struct rec rec;

typedef drv_record_stats rec_stats;

/* Attaches an RRU (configured by P's config, cpus = cores) to every core of
 * P's machine. Aborts when out of memory (like rru_unit_new). */
rec *rec_new(struct drv_proc *p);
void rec_free(rec *r);

/* A thread (TID) was put on CORE: recording is enabled with its tag. */
void rec_switch_in(rec *r, unsigned core, uint32_t tid);
/* The thread on CORE leaves it (blocked, preempted, exited: REASON is
 * RNR_END_SWITCH or RNR_END_EXIT), while the core still holds its
 * registers: its chunk ends and the core serializes. */
void rec_switch_out(rec *r, unsigned core, uint32_t reason);
/* CORE stopped at an ECALL (at ECALL_PC): the chunk before it ends there;
 * for a GLOBAL call every other core serializes; the ECALL starts the
 * call's own chunk, which holds the call's memory accesses. */
void rec_syscall_enter(rec *r, unsigned core, uint64_t ecall_pc, int global);
/* The call returned to the thread still on CORE (a0 written): its chunk
 * ends (GLOBAL: with a serialization of CORE). */
void rec_syscall_exit(rec *r, unsigned core, int global);
/* The run is over: every RRU stops and everything is drained. 0, or -1
 * if the chunk sink failed. */
int rec_finish(rec *r);
void rec_stats_get(const rec *r, rec_stats *out);

/* The order of a drain: NRUNS runs of timestamps, run k being
 * TS[run_end[k - 1] .. run_end[k]) (from 0 for k = 0), merged into ORDER
 * (run_end[NRUNS - 1] indices into TS): by TS, a tie to the lower index,
 * i.e. the stable sort by TS. 0, or -1 if a run's TS decrease or NRUNS
 * exceeds RRU_MAX_CORES (ORDER is then incomplete). */
int rec_merge_runs(const uint64_t *ts, const size_t *run_end, unsigned nruns, uint32_t *order);

#endif
