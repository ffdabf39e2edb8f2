/* driver/driver.h: the kernel-driver shim's public interface: a guest
 * process (static riscv64 ELF) on the simulated multicore, with its Linux
 * system calls, threads and scheduler. `rnr run` uses it; record and replay
 * build on it. docs/driver.md describes the model. */
#ifndef RNR_DRIVER_DRIVER_H
#define RNR_DRIVER_DRIVER_H

#include <stddef.h>
#include <stdint.h>

#include "rru/machine.h"

/* Exit status of `rnr run` when every guest thread is blocked forever. */
#define DRV_EXIT_DEADLOCK 124

/* Where AT_RANDOM and getrandom bytes come from. */
typedef enum drv_random {
    DRV_RANDOM_SEED = 0,   /* a generator seeded with the run's seed (rnr run) */
    DRV_RANDOM_HOST = 1,   /* the host's getrandom (record: logged as input) */
} drv_random;

typedef struct drv_config {
    rru_machine_config machine;  /* cores, seed, latencies */
    uint64_t quantum;            /* preemption quantum in cycles (mean; seeded jitter) */
    drv_random random;
    /* Host directories (absolute or relative) under which the guest may
     * create, truncate and write files; none = read-only. */
    const char *const *allow_write;
    size_t n_allow_write;
    /* Host file descriptors that receive the guest's fd 0 (read), 1 and 2
     * (written). */
    int stdin_fd, stdout_fd, stderr_fd;
    /* Called with every byte the guest writes to its fd 1 or 2 (NULL: none). */
    void (*output)(void *ctx, int fd, const uint8_t *data, size_t n);
    void *output_ctx;
    /* If not NULL: write the nondeterministic inputs to this log file. */
    const char *input_log;
    /* Accepted for recording (later issues); unused by rnr run. */
    uint64_t msp, clusters, chunk_max;
    const char *sig;
} drv_config;

/* Defaults: 8 cores, seed 1, quantum 100000 cycles, read-only files,
 * stdio passthrough, no input log. */
void drv_config_default(drv_config *c);

typedef enum drv_end {
    DRV_EXITED = 0,      /* exit/exit_group: status = exit code (0..255) */
    DRV_SIGNALED = 1,    /* killed by a signal: status = signal number */
    DRV_DEADLOCK = 2,    /* every thread blocked forever */
    DRV_FAILED = 3,      /* the simulator could not go on (message) */
} drv_end;

typedef struct drv_result {
    drv_end end;
    int status;
    uint64_t pc;         /* DRV_SIGNALED: where */
    uint32_t tid;        /* DRV_SIGNALED: which thread */
    char *message;       /* one or more lines for stderr (owned by the process), or NULL */
} drv_result;

typedef struct drv_stats {
    unsigned cores;
    uint64_t retired[RRU_MAX_CORES];     /* instructions per core */
    uint64_t clock[RRU_MAX_CORES];       /* cycles per core */
    uint64_t bus_reads, bus_exclusive;   /* bus transactions, all cores */
    uint64_t instructions;               /* sum of retired */
    uint64_t cycles;                     /* largest core clock */
    uint64_t threads;                    /* threads created, main included */
    uint64_t syscalls;
    uint64_t context_switches;
    uint64_t page_faults;                /* first touches of absent pages (demand paging) */
    uint64_t guest_pages;                /* pages held in the machine's memory at the end */
    double wall_seconds;                 /* host time of drv_proc_run */
} drv_stats;

typedef struct drv_proc drv_proc;

/* Loads PROGRAM with ARGV (argc strings; argv[0] as the guest sees it) and
 * ENVP (envc strings) under CONFIG (copied; its strings must outlive the
 * process). NULL on failure with one line "PROGRAM: problem" in err (not an
 * ELF, wrong architecture, dynamically linked, ...). */
drv_proc *drv_proc_new(const drv_config *config, const char *program, const char *const *argv,
                       size_t argc, const char *const *envp, size_t envc, char *err,
                       size_t errlen);
/* Runs the guest to its end; fills *result. 0, or -1 if the run could not
 * be carried out (result->message says why). */
int drv_proc_run(drv_proc *p, drv_result *result);
void drv_proc_stats(const drv_proc *p, drv_stats *out);
/* SHA-256 over the final state: the memory digest, then every live
 * thread's registers in tid order (docs/driver.md, "Final state"). */
void drv_proc_digest(const drv_proc *p, uint8_t out[32]);
void drv_proc_free(drv_proc *p);

/* ---- the system call table, for tools and the replayer ---- */

/* How a system call is recorded and replayed (docs/driver.md). */
typedef enum drv_replay {
    DRV_RP_EMULATE = 1,   /* deterministic: replay re-executes it, result is a check */
    DRV_RP_RESULT = 2,    /* result from the log, no guest memory written */
    DRV_RP_RESULT_MEM = 3,/* result and guest memory bytes from the log */
    DRV_RP_ADDRSPACE = 4, /* address-space change redone at the logged address */
    DRV_RP_OUTPUT = 5,    /* result from the log, bytes regenerated and compared */
} drv_replay;

typedef struct drv_syscall_info {
    uint32_t nr;
    const char *name;
    drv_replay replay;    /* 0 if the shim does not implement it */
} drv_syscall_info;

/* What the table says about NR: name ("?" if unknown to Linux too) and
 * replay policy (0 = not implemented, returns -ENOSYS). */
drv_syscall_info drv_syscall_lookup(uint32_t nr);
const char *drv_replay_name(drv_replay r);

#endif
