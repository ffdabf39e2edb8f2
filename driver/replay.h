/* driver/replay.h: the driver's side of a replay: the same process as the
 * recording (loader, address space, initial stack, threads, system call
 * table) that never runs on the machine: the replayer's workers execute
 * its threads' chunks on their own harts, and each ECALL is replayed here
 * from the thread's input records by the call's replay policy
 * (driver/syscalls.def): record and replay are siblings over one process
 * model (docs/replayer.md).
 *
 * Threads: the functions below are not thread-safe; the replayer calls
 * drv_replay_syscall and drv_replay_fault under one lock. A thread's
 * registers (drv_replay_ctx) belong to the worker running its chunk. */
#ifndef RNR_DRIVER_REPLAY_H
#define RNR_DRIVER_REPLAY_H

#include <stddef.h>
#include <stdint.h>

#include "driver/driver.h"
#include "formats/log.h"
#include "rru/hart.h"
#include "rru/mem.h"

/* One thread's input records, in its program order (the replayer's). */
typedef struct drv_replay_input {
    /* The next record of TID that is not a CHECK: 1 and *out, or 0 if none. */
    int (*peek)(void *ctx, uint32_t tid, rnr_input_record *out);
    /* Consumes that record. */
    void (*take)(void *ctx, uint32_t tid);
    void *ctx;
} drv_replay_input;

/* The process of a recording: CONFIG as recorded (cores, limits), with
 * config->execfn the program path the guest saw and config->random_bytes
 * its AT_RANDOM bytes; PROGRAM the file to load (the bundle's copy). NULL
 * with one line in err. Free with drv_proc_free. */
drv_proc *drv_replay_new(const drv_config *config, const char *program, const char *const *argv,
                         size_t argc, const char *const *envp, size_t envc, char *err,
                         size_t errlen);
/* The first process's memory (a debugger's view). */
rru_mem *drv_replay_mem(drv_proc *p);
/* The memory thread TID runs on now: its process's (execve and a vfork
 * child's execve change it, at that thread's own system call). */
rru_mem *drv_replay_thread_mem(drv_proc *p, uint32_t tid);
/* The registers of live thread TID, or NULL (unknown, exited, or stuck in a
 * call that never returned: DRV_REPLAY_STUCK). */
rru_ctx *drv_replay_ctx(drv_proc *p, uint32_t tid);

/* How a replayed system call ended for its thread. */
enum {
    DRV_REPLAY_OK = 0,        /* the thread goes on (ctx updated) */
    DRV_REPLAY_EXITED = 1,    /* the thread ended */
    DRV_REPLAY_END = 2,       /* the process ended (exit_group, last exit, a signal) */
    DRV_REPLAY_STUCK = 3,     /* the call never returned in the recording (it was
                               * still blocked when the process ended): the
                               * thread goes no further */
    DRV_REPLAY_DIVERGED = -1, /* the log does not match (message) */
};

/* The ECALL of thread TID just retired (CTX = its registers, pc past the
 * ECALL): the call is replayed from the thread's input records by its
 * policy: results and memory bytes from the log, emulated calls executed
 * again (their results compared), address-space changes redone, clone and
 * exit applied, output bytes handed to config->output. Nothing is asked of
 * the host. DRV_REPLAY_*; the message names the thread and what differs. */
int drv_replay_syscall(drv_proc *p, uint32_t tid, rru_ctx *ctx, const drv_replay_input *in,
                       char *msg, size_t msglen);
/* A hart of the replay running thread TID stopped with a fault (STOP): 1 if it was demand
 * paging (the page now exists: run the instruction again), 0 if it is a
 * real fault, -1 out of host memory. */
int drv_replay_fault(drv_proc *p, uint32_t tid, const rru_stop *stop);
/* Every chunk has run: a process other than the first that a fatal
 * fault ended in the recording (its thread's next input record says so,
 * DRV_FAULT_MARK) ends now, as it did there. Its memory and threads are
 * as they were at the fault: nothing ran in it since. */
void drv_replay_finish(drv_proc *p, const drv_replay_input *in);
/* Reads N bytes of guest memory at ADDR as the guest would see them,
 * changing nothing (a page mapped but never touched reads as zeros): for
 * a debugger. 0, or -1 if a byte is not mapped. */
int drv_proc_peek(const drv_proc *p, uint64_t addr, uint8_t *buf, size_t n);
/* How the replayed process ended so far: 1 with *end and *status (as in
 * drv_result) if an exit, exit_group or signal ended it, else 0. */
int drv_replay_ended(const drv_proc *p, drv_end *end, int *status);

#endif
