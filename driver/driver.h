/* driver/driver.h: the kernel-driver shim's public interface: a guest
 * process (static riscv64 ELF) on the simulated multicore, with its Linux
 * system calls, threads and scheduler. `rnr run` uses it; record and replay
 * build on it. docs/driver.md describes the model. */
#ifndef RNR_DRIVER_DRIVER_H
#define RNR_DRIVER_DRIVER_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "formats/log.h"
#include "rru/machine.h"
#include "rru/rru_unit.h"

/* The most bytes of a write to the guest's stdout or stderr the driver
 * holds at once (drv_config.output gets a longer one in pieces). */
#define DRV_OUTPUT_BLOCK 65536u

/* Exit status of `rnr run` when every guest thread is blocked forever. */
#define DRV_EXIT_DEADLOCK 124

/* The guest's memory limit unless configured (drv_config.mem_limit): 4 GiB
 * of committed memory (driver/vm.h). */
#define DRV_MEM_LIMIT_DEFAULT (4ull << 30)
/* drv_config.mem_limit for no limit (RLIM_INFINITY). */
#define DRV_MEM_UNLIMITED UINT64_MAX
/* A limit this large (the whole Sv39 user address space) never refuses. */
#define DRV_MEM_LIMIT_MAX (256ull << 30)

typedef struct drv_access drv_access;

/* The default of drv_config.check_every: instructions of a thread between
 * two CHECK records (docs/recorder.md, "Checks", has the measurements). */
#define DRV_CHECK_EVERY_DEFAULT 100000u

/* A program an execve loaded: its absolute path and SHA-256 (hex). */
typedef struct drv_exec_image {
    char *path;
    char sha256[65];
} drv_exec_image;

typedef struct drv_config {
    rru_machine_config machine;  /* cores, seed, latencies */
    uint64_t quantum;            /* preemption quantum in cycles (mean; seeded jitter) */
    /* The guest's RLIMIT_AS (soft and hard), in bytes: mmap, brk, mremap
     * and mprotect that would commit more memory than this fail with
     * ENOMEM, and the program and its stack must fit (docs/driver.md,
     * "Memory limit"). A replay must be given the recording's.
     * DRV_MEM_UNLIMITED: no limit. */
    uint64_t mem_limit;
    /* Host directories (absolute or relative) under which the guest may
     * create, truncate and write files; none = read-only. */
    const char *const *allow_write;
    size_t n_allow_write;
    /* The guest's /tmp is a new, empty, writable host directory of its own
     * (under $TMPDIR or /tmp), removed when the process is freed: absolute
     * guest paths /tmp and /tmp/... name it and what lies under it. */
    int private_tmp;
    /* Host file descriptors that receive the guest's fd 0 (read), 1 and 2
     * (written). */
    int stdin_fd, stdout_fd, stderr_fd;
    /* Called with every byte the guest writes to its fd 1 or 2 (NULL: none),
     * in order, at most DRV_OUTPUT_BLOCK bytes per call: a longer write
     * comes in several calls. */
    void (*output)(void *ctx, int fd, const uint8_t *data, size_t n);
    void *output_ctx;
    /* Called (with output_ctx) before the guest's output goes to the host's
     * fd 1 or 2 (NULL: nothing): a progress line on the terminal is
     * cleared there first. */
    void (*output_begin)(void *ctx);
    /* If not NULL: write the nondeterministic inputs to this log file. */
    const char *input_log;
    /* Replay: the program path the guest saw (AT_EXECFN; NULL = the path
     * loaded) and the AT_RANDOM bytes to place (16; NULL = from the seed). */
    const char *execfn;
    const uint8_t *random_bytes;
    /* Replay: the programs the recording's successful execve calls loaded,
     * in order (the manifest's exec.N.*); each is checked by its hash. */
    const drv_exec_image *exec_images;
    size_t n_exec_images;
    /* Recording: called after every successful execve, before the new
     * program runs, with the SHA-256 (hex) and the bytes of the file it
     * loaded (the recorder packs them into the bundle). Nonzero ends the
     * run as a failure with ERR. NULL: nothing. */
    int (*exec_loaded)(void *ctx, const char *sha256, const uint8_t *file, size_t size, char *err,
                       size_t errlen);
    /* Replay: the program of the recording's execve number INDEX (from 0)
     * past exec_images, whose path (PATHLEN bytes at most) and SHA-256
     * (hex) it writes: a follower's stream brings them while it replays,
     * and the call may wait for one. 0, or -1 with ERR. NULL: the list is
     * all there is. */
    int (*exec_image)(void *ctx, size_t index, char *path, size_t pathlen, char *sha256, char *err,
                      size_t errlen);
    void *exec_ctx;                /* for exec_loaded and exec_image */
    /* Recording: with `record` set, an RRU (configured by `rru`; its cpus
     * is set from the machine) sits on every core, the driver programs it
     * and drains its chunks, in log order, to `chunk` (a nonzero return
     * stops the run as a failure). The input log then also gets CHECK
     * records (below). Recording does not change what the guest executes. */
    int record;
    rru_config rru;
    /* Recording: a chunk end gets a CHECK record when its thread has run
     * at least this many instructions since its previous CHECK (since its
     * start for the first); 0 = at every chunk end that can carry one.
     * DRV_CHECK_EVERY_DEFAULT by default (docs/recorder.md, "Checks"). */
    uint64_t check_every;
    int (*chunk)(void *ctx, const rnr_initial_chunk *c);
    void *chunk_ctx;
    /* Soundness oracle (record only): every data access of a guest thread,
     * in simulation order (slows the machine: its filters are off). */
    void (*access)(void *ctx, const drv_access *a);
    void *access_ctx;
    /* Called now and then while recording (about every MSP/16 cycles of
     * simulated time), e.g. to show progress. */
    void (*tick)(void *ctx);
    void *tick_ctx;
    /* When it becomes nonzero (a signal handler sets it), the guest is
     * stopped at the next check and the run ends as DRV_INTERRUPTED. */
    volatile sig_atomic_t *interrupt;
} drv_config;

/* One data access for the oracle: the accessing instruction's index among
 * its core's instructions (all of them are recorded: the initial log's
 * chunks of that CPU, in order) and among its thread's, and the recorder's
 * time. A system call's accesses belong to its ECALL. */
struct drv_access {
    uint32_t cpu, tid;
    uint64_t insn, tinsn, time;
    uint64_t addr;
    uint32_t size;
    int write;
};

/* Defaults: 8 cores, seed 1, quantum 100000 cycles, a memory limit of
 * DRV_MEM_LIMIT_DEFAULT, read-only files, stdio passthrough, no input log,
 * no recording (RRU defaults of rru_config_default). */
void drv_config_default(drv_config *c);

typedef enum drv_end {
    DRV_EXITED = 0,      /* exit/exit_group: status = exit code (0..255) */
    DRV_SIGNALED = 1,    /* killed by a signal: status = signal number */
    DRV_DEADLOCK = 2,    /* every thread blocked forever */
    DRV_FAILED = 3,      /* the simulator could not go on (message) */
    DRV_INTERRUPTED = 4, /* config.interrupt was set */
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

/* Threads ever created (the main thread first): their count, and the tid
 * and instruction count of the I-th. */
size_t drv_proc_threads(const drv_proc *p);
/* Processes created, the first included (fork, vfork). */
size_t drv_proc_processes(const drv_proc *p);
void drv_proc_thread(const drv_proc *p, size_t i, uint32_t *tid, uint64_t *instructions);

/* Recording: the programs successful execve calls loaded, in order (for
 * the manifest's exec.N.*); NULL past the last. */
size_t drv_proc_execs(const drv_proc *p);
/* The file of the program the process runs now: the first one, or the one
 * its last execve loaded (in a replay, the copy it was loaded from). */
const char *drv_proc_exe(const drv_proc *p);
const drv_exec_image *drv_proc_exec(const drv_proc *p, size_t i);

/* What the recorder did (all zero when not recording). */
typedef struct drv_record_stats {
    uint64_t chunks;             /* drained into the initial log */
    uint64_t checks;             /* CHECK records in the input log */
    uint64_t drains;             /* drain points that had chunks */
    uint64_t global_syscalls;    /* system calls ordered against every core */
    uint64_t silence_violations; /* chunks drained later than start + MSP (must be 0) */
    uint64_t max_drain_delay;    /* largest (drain time - chunk start), cycles */
    uint64_t clusters, conflicts, evictions, serializations, sv_entries;   /* RRU counters */
} drv_record_stats;
void drv_proc_record_stats(const drv_proc *p, drv_record_stats *out);
/* Pushes the input log's complete blocks to its file (crash safety). 0 or -1. */
int drv_proc_flush_input(drv_proc *p);
/* SHA-256 over the final state: the memory digest, then every live
 * thread's registers in tid order (docs/driver.md, "Final state"). */
void drv_proc_digest(const drv_proc *p, uint8_t out[32]);
/* "NAME+0xOFF" for guest address PC from the program's symbol table into
 * OUT; 0, or -1 (OUT "") if no function of the table holds PC. */
int drv_proc_symbolize(const drv_proc *p, uint64_t pc, char *out, size_t len);
void drv_proc_free(drv_proc *p);

/* ---- the system call table, for tools and the replayer ---- */

/* How a system call is recorded and replayed (docs/driver.md). */
typedef enum drv_replay {
    DRV_RP_EMULATE = 1,   /* deterministic: replay re-executes it, result is a check */
    DRV_RP_RESULT = 2,    /* result from the log, no guest memory written */
    DRV_RP_RESULT_MEM = 3,/* result and guest memory bytes from the log */
    DRV_RP_ADDRSPACE = 4, /* address-space change redone at the logged address */
    DRV_RP_OUTPUT = 5,    /* result from the log, bytes regenerated and compared */
    DRV_RP_EXEC = 6,      /* execve: done again on the recorded image (drv_config.exec_images) */
} drv_replay;

/* How a recording orders a system call against the other cores
 * (driver/syscalls.def). */
typedef enum drv_order {
    DRV_ORD_LOCAL = 0,    /* its memory accesses are ordered by the RRU like any */
    DRV_ORD_GLOBAL = 1,   /* every core serializes around it */
} drv_order;

typedef struct drv_syscall_info {
    uint32_t nr;
    const char *name;
    drv_replay replay;    /* 0 if the shim does not implement it */
    drv_order order;
} drv_syscall_info;

/* What the table says about NR: name ("?" if unknown to Linux too) and
 * replay policy (0 = not implemented, returns -ENOSYS). */
drv_syscall_info drv_syscall_lookup(uint32_t nr);
const char *drv_replay_name(drv_replay r);

#endif
