/* driver/internal.h: the types the driver's modules share: threads, the
 * process, its file table, and the helpers system-call handlers use. Not
 * for use outside driver/. */
#ifndef RNR_DRIVER_INTERNAL_H
#define RNR_DRIVER_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "driver/driver.h"
#include "driver/inputlog.h"
#include "driver/linux_abi.h"
#include "driver/loader.h"
#include "driver/record.h"
#include "driver/vm.h"
#include "formats/digest.h"
#include "rru/machine.h"

/* ---- threads ---- */

typedef enum thr_state {
    THR_RUNNABLE = 0,    /* in the run queue */
    THR_RUNNING = 1,     /* on a core */
    THR_BLOCKED = 2,     /* waiting (futex, sleep) */
    THR_DEAD = 3,
} thr_state;

typedef enum thr_wait {
    WAIT_NONE = 0,
    WAIT_FUTEX = 1,
    WAIT_SLEEP = 2,
    WAIT_PIPE = 3,               /* wait_addr = the pipe's id */
    WAIT_POLL = 4,               /* ppoll: any pipe's change, or the deadline */
    WAIT_LOCK = 5,               /* a file lock held by another owner (locks.c) */
    WAIT_CHILD = 6,              /* wait4, waitid: a child process's end */
    WAIT_VFORK = 7,              /* vfork: the child's execve or end */
    WAIT_SIGNAL = 8,             /* rt_sigsuspend: a signal with a handler */
} thr_wait;

typedef struct thread thread;
typedef struct process process;
struct thread {
    process *proc;               /* the process it belongs to */
    uint32_t tid;                /* its id in rnr's records: creation order from the pid */
    /* The id the guest sees (gettid, tgkill, robust futexes): tid, except
     * for a thread that executed a program while not the first thread,
     * which then has the first thread's id, the pid, as in Linux
     * (drv_proc.leader_alias). */
    uint32_t vtid;
    thr_state state;
    int core;                    /* RUNNING: its core, else -1 */
    int last_core;               /* core it ran on last, -1 if never */
    rru_ctx ctx;                 /* saved registers while not RUNNING */
    uint64_t check_instret;      /* recording: instret of its last CHECK record, or at its start */
    uint64_t ready_time;         /* may not run before this cycle */
    uint64_t clear_child_tid;    /* CLONE_CHILD_CLEARTID / set_tid_address */
    uint64_t robust_list;        /* set_robust_list head (bookkeeping) */
    uint64_t sigmask;            /* blocked signals, bit (sig - 1) */
    uint64_t pending;            /* signals sent to this thread, blocked */
    uint64_t altstack_sp, altstack_size;
    int altstack_flags;
    /* A signal whose handler runs when the current system call returns
     * (0: none), and its siginfo code. */
    int deliver, deliver_code;
    /* A child's end (SIGCHLD with CLD_EXITED or CLD_KILLED): the child's
     * pid and status for the handler's siginfo, as delivered now and as
     * waiting among the signals from elsewhere (async). */
    uint32_t deliver_chld_pid, async_chld_pid;
    int deliver_chld_status, async_chld_status;
    /* The same for a child's end signal left pending (blocked): its
     * signal (0: none), code, the child's pid and status. */
    int pending_chld_sig, pending_chld_code, pending_chld_status;
    uint32_t pending_chld_pid;
    /* rt_sigsuspend: its mask is in force (sigmask), and the one before
     * it, which the next handler's frame saves, is suspend_saved. */
    int suspending;
    uint64_t suspend_saved;
    /* Signals with a handler that came from elsewhere (another thread, the
     * timer, SIGPIPE): taken at the thread's next system call entry, with
     * their siginfo codes; interrupted: it was woken from a wait for one,
     * so that call ends with EINTR (or runs again under SA_RESTART). */
    uint64_t async;
    int async_code[LX_NSIG + 1];
    int interrupted;
    /* Blocking: what it waits for and until when. */
    thr_wait wait;
    uint64_t wait_addr;          /* futex word */
    uint32_t wait_bitset;
    uint64_t deadline;           /* cycle of the timeout, UINT64_MAX = none */
    int64_t wake_result;         /* a0 when it resumes */
    uint64_t block_nr, block_pc; /* the blocking syscall and its ecall pc */
    uint64_t wait_seq;           /* arrival order among waiters */
    /* Links of the run queue or the futex wait list. */
    thread *next, *prev;
    uint64_t sc_count;           /* store-conditionals executed (input log ordinals) */
    uint64_t instret_base;       /* ctx.instret when it was created (a clone inherits one) */
    char name[16];               /* prctl PR_SET_NAME (comm): NUL-terminated, a clone inherits it */
    int policy;                  /* SCHED_OTHER, SCHED_BATCH or SCHED_IDLE; a clone inherits it */
    int no_new_privs;            /* prctl PR_SET_NO_NEW_PRIVS; a clone inherits it */
    int pdeathsig;               /* prctl PR_SET_PDEATHSIG; 0 in a clone, as in Linux */
    int polling;                 /* blocked in ppoll or pselect6: poll_deadline holds */
    uint64_t poll_deadline;      /* its deadline (UINT64_MAX: none), kept across restarts */
    /* Memory records of the current syscall, logged after its result. */
    inlog_pending log;
};

/* Takes T out of the doubly linked list *HEAD .. *TAIL it is on (the run
 * queue or the futex waiters). */
static inline void thread_unlink(thread **head, thread **tail, thread *t)
{
    if (t->prev)
        t->prev->next = t->next;
    else
        *head = t->next;
    if (t->next)
        t->next->prev = t->prev;
    else
        *tail = t->prev;
    t->next = t->prev = NULL;
}

/* ---- files ---- */

typedef enum file_kind {
    FILE_STDIN = 0, FILE_STDOUT = 1, FILE_STDERR = 2, /* the host's stdio */
    FILE_HOST = 3,                                    /* a host file or directory */
    FILE_PIPE_R = 4, FILE_PIPE_W = 5,                 /* ends of a simulated pipe */
} file_kind;

/* A pipe between the guest's threads (pipe2): a ring buffer. */
typedef struct pipe_buf {
    uint64_t id;                 /* wait_addr of the threads blocked on it */
    uint8_t *data;
    size_t cap, head, len;
    unsigned readers, writers;   /* open ends */
} pipe_buf;
#define PIPE_CAPACITY (64u << 10)

typedef struct file_obj {
    unsigned refs;
    file_kind kind;
    int host_fd;                 /* -1 for nothing */
    int flags;                   /* LX_O_* status flags given at open */
    int writable;                /* the user allowed writes to it */
    pipe_buf *pipe;              /* FILE_PIPE_R / FILE_PIPE_W */
    int proc;                    /* FILE_HOST holding a /proc file's text */
} file_obj;

typedef struct fd_entry {
    file_obj *file;              /* NULL = free slot */
    int cloexec;
} fd_entry;

#define FD_MAX 1024
#define RNR_ERR_MAX_DRV 320     /* room for a log error message */

/* ---- the process ---- */

typedef struct sigaction_state {
    uint64_t handler, flags, mask;
} sigaction_state;

typedef struct syscall_row syscall_row;
typedef struct lock_rec lock_rec;
typedef struct shared_map shared_map;

/* A process: an address space with its own descriptors, signal actions
 * and limits, and the threads whose thread.proc names it. */
struct process {
    uint32_t pid;
    uint32_t pgid, sid;          /* its process group and session (a fork's are its parent's) */
    process *parent;             /* NULL for the first process */
    size_t live;                 /* its threads not DEAD */
    int ended;                   /* every thread of it ended: a zombie until reaped */
    int reaped;                  /* wait4 or waitid collected it */
    int wstatus;                 /* the wait status word its end left (Linux's encoding) */
    int exit_signal;             /* sent to the parent at its end (clone's low byte), 0: none */
    int leader_status;           /* the exit status of its first thread's exit */
    /* vfork: the parent's thread waiting for this child's execve or end,
     * and the child runs on the parent's memory and address space until
     * then (shares_mem: mem and vm are not its own). */
    thread *vfork_parent;
    int shares_mem;
    uint8_t digest[32];          /* ended: the memory part of its final state */
    thread *leader_alias;        /* the thread the guest knows by the pid since its execve, or NULL */
    rru_mem *mem;
    vm *vm;
    loader_image img;
    char *exe_path;              /* absolute path of the program (/proc/self/exe) */
    shared_map *shmaps;          /* writable shared file mappings (shmap.c), owned */
    size_t nshmaps, cap_shmaps;
    int nice;                    /* setpriority: 0 to 19 */
    fd_entry fds[FD_MAX];
    sigaction_state sigactions[LX_NSIG + 1];
    uint64_t rlim_cur[LX_RLIM_NLIMITS], rlim_max[LX_RLIM_NLIMITS];
    uint32_t umask;
    /* ITIMER_REAL: its next expiry on the simulated clock (UINT64_MAX:
     * disarmed) and its interval (0: one-shot). */
    uint64_t itimer_at, itimer_every;
    /* The page holding the return path of signal handlers (li a7, 139;
     * ecall), mapped at the first handler that runs; 0 before. */
    uint64_t sigtramp;
    uint64_t random_addr;        /* AT_RANDOM */
    uint8_t random_bytes[16];
};

struct drv_proc {
    drv_config cfg;
    char **allow_write;          /* absolute paths, owned */
    size_t n_allow_write;
    char *private_root;          /* --private-tmp: a host directory of its own, owned, */
    char *private_tmp;           /* ... its tmp/, the guest's /tmp, owned */
    char *private_shm;           /* ... its shm/, the guest's /dev/shm, owned */
    lock_rec *locks;             /* advisory file locks (locks.c), owned */
    size_t nlocks, caplocks;
    /* The processes, by creation order (procs[0] the first: its end ends
     * the run); cur is the one of the thread the driver serves now. */
    process **procs;
    size_t nprocs, cap_procs;
    process *cur;
    uint32_t tid_base;           /* the first thread's id: threads[tid - tid_base] */
    /* Programs execve loaded lately, with their SHA-256 (sys_exec.c): a
     * file whose bytes are one of these is not hashed again. Owned. */
    struct exec_seen {
        uint8_t *bytes;
        size_t n;
        char sha[RNR_SHA256_HEX];
    } exec_seen[4];
    unsigned exec_seen_next;
    drv_exec_image *execs;       /* recording: the images execve loaded (sys_exec.c), owned */
    size_t nexecs, cap_execs;    /* (a replay counts its execs in nexecs) */
    rru_machine *m;
    unsigned ncores;
    thread *core_thread[RRU_MAX_CORES];
    thread **threads;            /* every thread ever created, by creation order */
    size_t nthreads, cap_threads;
    size_t live;                 /* threads not DEAD */
    thread **alive;              /* the threads not DEAD, in creation order; dead ones
                                    leave it in batches (sched_exit_thread): skip them */
    size_t nalive, cap_alive;
    thread *runq_head, *runq_tail;
    thread *futex_head, *futex_tail;  /* waiters in arrival order */
    uint64_t wait_seq;
    uint64_t pipe_seq;           /* ids given to pipes */
    uint64_t rng;                /* driver's own generator (slices, random bytes) */
    /* The system call in progress (for guest memory helpers and the log). */
    int sys_core;                /* -1 outside a system call */
    thread *sys_thread;
    const syscall_row *sys_row;
    uint8_t unknown_reported[512 / 8];
    uint8_t warned[16];          /* one-time messages, by warn_id */
    inlog *in;
    rec *rec;                    /* the recorder, when recording */
    /* The child whose end signal_send is sending now (process_end), and
     * its status: 0 outside. */
    uint32_t chld_pid;
    int chld_status;
    /* The end. */
    int done;
    drv_result result;
    char *message;
    /* Counters. */
    uint64_t syscalls, switches;
    uint64_t page_faults, demand_pages;
    double wall;
};

/* One-time warnings (bit index into warned[]). */
enum {
    WARN_CLONE_FLAGS, WARN_WRITE_DENIED, WARN_FUTEX_OP, WARN_MMAP_SHARED,
    WARN_PROC_PATH, WARN_TIMER_BLOCKED, WARN_ITIMER_KIND, WARN_DEV_SHM,
    WARN_SHMAP_ELSEWHERE,
};
/* Prints "rnr: warning: ..." on stderr once per id. */
void proc_warn_once(drv_proc *p, int id, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Ends the process with MESSAGE (printf-style) as a simulator failure. */
void proc_fail(drv_proc *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Ends the current process: exit status (DRV_EXITED) or signal
 * (DRV_SIGNALED). The first process's end ends the run (processes still
 * alive end with it, as in a PID namespace whose init ends); another's
 * ends its threads, leaves it a zombie for its parent (process_end). */
void proc_exit(drv_proc *p, drv_end end, int status, const thread *t, uint64_t pc);

/* ---- processes (sys_proc.c) ---- */

/* A SYSCALL record no ECALL makes (syscall numbers stay below 1024): the
 * thread ended its process, not the first, with a fatal fault there
 * (value: the signal). A replay has no call to find that end at: it
 * applies it when every chunk has run (drv_replay_finish). */
#define DRV_FAULT_MARK 0x7ffffff0u

/* A child of the current process for clone without CLONE_VM (fork: a copy
 * of its memory and address space) or with CLONE_VM|CLONE_VFORK (the same
 * memory until its execve); descriptors, signal actions and limits
 * copied. NULL with *err = -errno. */
process *process_fork(drv_proc *p, int vfork, int exit_signal, int64_t *err);
/* The current process ends with wait status WSTATUS: its threads end (T,
 * if not NULL, among them), its descriptors close, its parent gets its
 * exit signal and wakes from wait4. Not for the first process. */
void process_end(drv_proc *p, int wstatus);
/* A vfork child executed a program: its own memory and address space from
 * now on (empty: the loader fills them), and the parent goes on. 0, or -1
 * out of memory. */
int process_vfork_done(drv_proc *p);
/* The process with id PID, or NULL. */
process *process_by_pid(const drv_proc *p, int64_t pid);
/* Frees a process's own state (its descriptors are closed by files.c). */
void process_free(process *pr);
/* Adds process PR's memory (regions and nonzero pages) to digest S. */
void process_digest(const process *pr, rnr_sha256 *s);
/* Every other live thread of the current process but T ends (execve, the
 * process's end): through the scheduler when recording, marked ended in a
 * replay (REPLAY). */
void proc_end_threads(drv_proc *p, thread *t, int replay);

/* Writable shared file mappings (shmap.c). A replay keeps the list with
 * no host descriptors and writes nothing. */
/* 0, or -ENODEV (with the one-time warning) if pages [OFF, OFF+LEN) of the
 * file HOST_FD are already mapped writable and shared. */
int64_t shmap_check(drv_proc *p, int host_fd, uint64_t off, uint64_t len);
/* CHILD (a fork of the current process) gets its parent's mappings: the
 * same pages (rru_mem_share), written back from either. */
void shmap_fork(drv_proc *p, process *child);
/* Records a new mapping at ADDR (HOST_FD -1 in a replay). */
void shmap_add(drv_proc *p, uint64_t addr, uint64_t len, int host_fd, uint64_t off);
/* Writes the mapped pages of [ADDR, ADDR+LEN) to their files (msync). */
void shmap_sync(drv_proc *p, uint64_t addr, uint64_t len);
/* The same for every mapping of the file HOST_FD (before a read of it). */
void shmap_sync_file(drv_proc *p, int host_fd);
/* execve (sys_exec.c): the new program's image replaces the address space
 * (proc.c: the old one unmapped, IMG loaded as at the start, its initial
 * stack built with ARGV and ENVP and AT_EXECFN = GUEST_PATH; IMG is taken
 * over); *CTX gets its first registers. 0, or -1 with ERR (the process is
 * past the point of no return). */
int proc_exec_image(drv_proc *p, loader_image *img, const char *host_path, const char *guest_path,
                    const char *const *argv, size_t argc, const char *const *envp, size_t envc,
                    rru_ctx *ctx, char *err, size_t errlen);
/* Replay of a successful execve or execveat (NR) by T (arguments A) on the recording's next
 * image: 0 with *CTX the new registers, or -1 with MSG. */
int64_t exec_replay(drv_proc *p, thread *t, rru_ctx *ctx, uint64_t nr, const uint64_t a[6], char *msg,
                    size_t msglen);
/* N bytes DATA were written at file offset OFF of HOST_FD through a
 * descriptor: they show in the file's writable shared mappings at once. */
void shmap_file_written(drv_proc *p, int host_fd, uint64_t off, const uint8_t *data, uint64_t n);
/* The file (DEV, INO) changed size (ftruncate, truncate); FROM is the
 * smaller of the two sizes: its mapped bytes from there on read as zeros. */
void shmap_file_resized(drv_proc *p, uint64_t dev, uint64_t ino, uint64_t from);
/* Writes back and forgets the mappings' pages in [ADDR, ADDR+LEN) (munmap,
 * a MAP_FIXED mapping over them). */
void shmap_drop(drv_proc *p, uint64_t addr, uint64_t len);
/* 1 if a mapping has a page in [ADDR, ADDR+LEN). */
int shmap_overlaps(const drv_proc *p, uint64_t addr, uint64_t len);
/* The process ended: everything written back, the list freed. */
void shmap_end(drv_proc *p);

/* Creates the absent pages of mapped regions in [addr, addr+len) (demand
 * paging, proc.c); 0 or -1 when host memory runs out. */
int proc_materialize(drv_proc *p, uint64_t addr, uint64_t len);
/* A fault of CAUSE (12 fetch, 13 load, 15 store) at ADDR: if the address
 * lies in a region that allows the access and its page is absent, creates
 * it and a few neighbours: 1; 0 if it is a real fault; -1 out of memory. */
int proc_demand_page(drv_proc *p, unsigned cause, uint64_t addr);

/* ---- scheduler (sched.c) ---- */

/* Creates a thread (RUNNABLE, not queued) with a copy of CTX; NULL if out
 * of memory. */
thread *sched_new_thread(drv_proc *p, const rru_ctx *ctx);
/* The thread TID names (dead or not), or NULL: tids are given in creation
 * order from the process id up. */
static inline thread *proc_thread(const drv_proc *p, int64_t tid)
{
    if (tid < (int64_t)p->tid_base || (uint64_t)(tid - (int64_t)p->tid_base) >= p->nthreads)
        return NULL;
    return p->threads[tid - (int64_t)p->tid_base];
}
/* The same if that thread has not ended, else NULL. */
static inline thread *proc_live_thread(const drv_proc *p, int64_t tid)
{
    thread *t = proc_thread(p, tid);
    return t && t->state != THR_DEAD ? t : NULL;
}
/* The live thread of the current process the guest's id ID names
 * (gettid's ids: thread.vtid), or NULL. */
static inline thread *proc_guest_thread(const drv_proc *p, int64_t id)
{
    if (p->cur->leader_alias && id == (int64_t)p->cur->pid)
        return p->cur->leader_alias->state != THR_DEAD ? p->cur->leader_alias : NULL;
    thread *t = proc_live_thread(p, id);
    return t && (int64_t)t->vtid == id && t->proc == p->cur ? t : NULL;
}
/* The driver serves thread T now: its process is the current one. */
static inline void proc_select(drv_proc *p, const thread *t) { p->cur = t->proc; }
/* Makes T runnable no earlier than cycle WHEN with a0 = RESULT (if
 * set_result), and puts it on an idle core if there is one. */
void sched_make_ready(drv_proc *p, thread *t, uint64_t when);
/* Takes the RUNNING thread T off its core (registers saved), leaving the
 * core to the next runnable thread or idle. */
void sched_release_core(drv_proc *p, thread *t);
/* Puts runnable threads on idle cores while both exist. */
void sched_fill_idle(drv_proc *p);
/* The preemption deadline for a core from now (seeded slice). */
void sched_arm_timer(drv_proc *p, unsigned core);
/* Preemption of CORE's thread (the timer fired, or it yields): it goes
 * to the back of the run queue if another thread waits, else keeps the core. */
void sched_preempt(drv_proc *p, unsigned core);
/* Blocks the RUNNING thread T (WAIT, deadline) and frees its core. */
void sched_block(drv_proc *p, thread *t, thr_wait wait, uint64_t deadline);
/* Wakes blocked thread T to run its system call again (ERESTARTSYS: pc
 * back on the ecall) at time WHEN. */
void sched_restart(drv_proc *p, thread *t, uint64_t when);
/* Wakes blocked thread T with a0 = RESULT at time WHEN. */
void sched_wake(drv_proc *p, thread *t, int64_t result, uint64_t when);
/* Thread T ends (its core, if any, is freed). */
void sched_exit_thread(drv_proc *p, thread *t);
/* T (not the caller) ends where it stands, in whatever state: execve ends
 * the caller's other threads. */
void sched_kill_thread(drv_proc *p, thread *t);
/* A thread was set DEAD (record: sched_exit_thread; replay: its exit): one
 * live thread less, and the alive list compacted now and then. */
void sched_thread_died(drv_proc *p, thread *t);
/* The earliest deadline: a blocked thread's or the interval timer's,
 * UINT64_MAX if none. */
uint64_t sched_next_deadline(const drv_proc *p);
/* The earliest deadline of a blocked thread alone (UINT64_MAX: none). */
uint64_t sched_next_wake(const drv_proc *p);
/* Fires the interval timer if due, then wakes every blocked thread whose
 * deadline is <= NOW. */
void sched_expire(drv_proc *p, uint64_t now);
/* Current cycle of thread T's core (T RUNNING) or its ready time. */
uint64_t sched_now(const drv_proc *p, const thread *t);
/* T's registers as they are now: its core's while it runs, else saved. */
rru_ctx *sched_ctx(drv_proc *p, thread *t);
/* Seeded generator of the driver. */
uint64_t proc_rand(drv_proc *p);
/* The deadlock report for the current state (owned string). */
char *sched_deadlock_report(const drv_proc *p);

/* ---- threads (sys_thread.c) ---- */

/* clone(A) by T whose registers are PARENT (pc past the ECALL): checks
 * the flags, creates the child (not yet runnable) and makes the TID
 * stores. The child, or NULL with *err = -errno. */
thread *thread_clone(drv_proc *p, thread *t, const rru_ctx *parent, const uint64_t a[6],
                     int64_t *err);
/* The end of thread T: the CLEARTID store (no wake: the caller's). Returns
 * the CLEARTID address, 0 if none. */
uint64_t thread_clear_tid(drv_proc *p, thread *t);
/* The end of thread T, before that: its robust futex list (set_robust_list)
 * walked as Linux walks it, each futex T still owns marked OWNER_DIED.
 * Stores in WAKE (at most MAX) the futexes with waiters, which the run
 * wakes (one waiter each) and replay does not need; returns their count. */
size_t thread_robust_exit(drv_proc *p, thread *t, uint64_t *wake, size_t max);

/* ---- futex (futex.c) ---- */

void futex_enqueue(drv_proc *p, thread *t);
void futex_dequeue(drv_proc *p, thread *t);
/* Wakes up to N waiters on ADDR whose bitset meets BITSET; returns the count. */
int futex_wake(drv_proc *p, uint64_t addr, int n, uint32_t bitset, uint64_t when);
/* Moves up to N waiters from ADDR to ADDR2; returns the count. */
int futex_requeue(drv_proc *p, uint64_t addr, uint64_t addr2, int n);

/* ---- system calls (syscall.c) ---- */

/* Handler results beside a return value. */
#define SC_BLOCKED INT64_MIN            /* the thread blocked: its result comes at wake-up */
#define SC_GONE (INT64_MIN + 1)         /* the thread or the process ended */
#define SC_SWITCHED (INT64_MIN + 2)     /* the thread left its core runnable (a0 set) */

typedef int64_t (*syscall_fn)(drv_proc *p, thread *t, const uint64_t a[6]);

struct syscall_row {
    uint32_t nr;
    const char *name;
    syscall_fn fn;
    drv_replay replay;
    drv_order order;
};

/* Handles the ECALL that stopped CORE. */
void syscall_dispatch(drv_proc *p, unsigned core, const rru_stop *stop);
/* Runs the handler of NR for T (a replay re-executing an emulated call);
 * -ENOSYS if the table has none. */
int64_t syscall_emulate(drv_proc *p, thread *t, uint32_t nr, const uint64_t a[6]);
/* Logs the result of T's syscall NR (and its pending memory records). */
void syscall_log_result(drv_proc *p, thread *t, uint64_t nr, int64_t result);

/* Guest memory for handlers: as accesses of the calling core (sys_core),
 * permission-checked. 0, or -LX_EFAULT. Writes are logged as input when
 * the current row's policy says the bytes come from the host. */
int64_t guest_read(drv_proc *p, uint64_t addr, void *buf, size_t n);
int64_t guest_write(drv_proc *p, uint64_t addr, const void *buf, size_t n);
/* The same, logged whatever the row's policy (a replay applies the bytes
 * after the call's own effect: shmap_file_written's, after a write). */
int64_t guest_write_logged(drv_proc *p, uint64_t addr, const void *buf, size_t n);
int64_t guest_read_u32(drv_proc *p, uint64_t addr, uint32_t *v);
/* A struct timespec at ADDR as cycles (at most UINT64_MAX / 2); 0,
 * -LX_EFAULT or -LX_EINVAL (negative, or nanoseconds past a second). */
int64_t guest_read_timespec(drv_proc *p, uint64_t addr, uint64_t *cycles);
int64_t guest_write_u32(drv_proc *p, uint64_t addr, uint32_t v);
int64_t guest_write_u64(drv_proc *p, uint64_t addr, uint64_t v);
int64_t guest_read_u64(drv_proc *p, uint64_t addr, uint64_t *v);

/* Little-endian 64-bit values in byte buffers of guest structures. */
static inline void le64_put(uint8_t *b, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        b[i] = (uint8_t)(v >> (8 * i));
}

static inline uint64_t le64_get(const uint8_t *b)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | b[i];
    return v;
}
/* A NUL-terminated string of at most MAX bytes (NUL included): its length,
 * -LX_EFAULT, or -LX_ENAMETOOLONG. */
int64_t guest_read_str(drv_proc *p, uint64_t addr, char *buf, size_t max);
/* 1 if [addr, addr+n) is mapped with PROT (LX_PROT_*). */
int guest_ok(drv_proc *p, uint64_t addr, uint64_t n, int prot);

/* The handlers, by file (each is a row of syscalls.def). */
#define SYSCALL(nr, name, fn, replay, order) int64_t fn(drv_proc *p, thread *t, const uint64_t a[6]);
#include "driver/syscalls.def"
#undef SYSCALL

/* ---- files (files.c) ---- */

void files_init(drv_proc *p);
void files_close_all(drv_proc *p);
/* The open file of guest fd FD, or NULL. */
file_obj *files_get(drv_proc *p, int64_t fd);
/* Installs FILE at the lowest free fd >= MIN; the fd or -LX_EMFILE. */
int64_t files_install(drv_proc *p, file_obj *f, int64_t min, int cloexec);
file_obj *files_new(file_kind kind, int host_fd, int flags, int writable);
/* Drops a reference; the last one closes the host descriptor or the pipe
 * end (waking threads blocked on the pipe). */
void files_unref(drv_proc *p, file_obj *f);
/* Threads blocked on pipe P are woken to run their call again. */
void files_pipe_wake(drv_proc *p, pipe_buf *pb);
/* 1 if the user allowed writes to host path PATH (relative to host
 * directory DIRFD_HOST); a final symbolic link is judged by its target if
 * FOLLOW, else by where the link itself is. */
int files_write_allowed(const drv_proc *p, int dirfd_host, const char *path, int follow);
/* With a private /tmp, rewrites guest path PATH (of SIZE bytes) naming
 * /tmp or /dev/shm or below into the host directory's path: 0, or
 * -ENAMETOOLONG. */
int64_t files_map_tmp(const drv_proc *p, char *path, size_t size);
/* 1 if the absolute guest PATH is one the simulated system does not have
 * (/proc, /sys, /dev but for /dev/null and /dev/zero): ENOENT. */
int files_hidden(const char *path);
/* Creates the private /tmp and /dev/shm (drv_config.private_tmp) and
 * allows writes under them: 0, or -1 with a message in ERR. */
int files_private_tmp(drv_proc *p, char *err, size_t errlen);
/* Removes the private /tmp and all it holds. */
void files_private_tmp_remove(drv_proc *p);
/* 1 if the user allowed writes to the file host descriptor HOST_FD has
 * open (by its path now). */
int files_fd_write_allowed(const drv_proc *p, int host_fd);

/* ---- advisory file locks (locks.c) ---- */

enum { LOCKS_RD = 0, LOCKS_WR = 1, LOCKS_UN = 2 };          /* F_RDLCK, F_WRLCK, F_UNLCK */
enum { LOCKS_GET = 0, LOCKS_SET = 1, LOCKS_SETW = 2 };      /* F_GETLK, F_SETLK, F_SETLKW */

/* An fcntl lock request by the calling thread on F (OFD: owned by the
 * description, else by the process) for bytes [START, START+LEN) (LEN 0:
 * to the end, negative: before START), START absolute. LOCKS_GET fills
 * the OUT_ values with the first conflicting lock (type LOCKS_UN: none;
 * pid -1 for an OFD lock). 0, -errno (EAGAIN: a conflict under
 * LOCKS_SET), or SC_BLOCKED (LOCKS_SETW: the thread waits and the call
 * runs again). */
int64_t locks_fcntl(drv_proc *p, file_obj *f, int ofd, int cmd, int type, int64_t start,
                    int64_t len, uint64_t *out_start, uint64_t *out_len, int *out_type,
                    int32_t *out_pid);
/* flock(2) on F's description: TYPE LOCKS_RD (LOCK_SH), LOCKS_WR
 * (LOCK_EX) or LOCKS_UN; 0, -EAGAIN (NONBLOCK), -errno or SC_BLOCKED. */
int64_t locks_flock(drv_proc *p, file_obj *f, int type, int nonblock);
/* A descriptor of F is being closed: the process's POSIX locks on its file go. */
void locks_closing(drv_proc *p, const file_obj *f);
/* Process PR ended: its POSIX locks go. */
void locks_process_ended(drv_proc *p, const process *pr);
/* Description F is gone (its last reference): its OFD and flock locks go. */
void locks_released(drv_proc *p, const file_obj *f);
/* Frees the lock table. */
void locks_free(drv_proc *p);

/* ---- signals (sys_signal.c) ---- */

/* Sends SIG to thread T (or to the process if T is NULL) from thread FROM
 * with siginfo code CODE (LX_SI_USER, LX_SI_TKILL; -1: no handler may run,
 * as for SIGPIPE, whose write replay does not execute). 0, or SC_GONE if
 * the signal ended the process. */
int64_t signal_send(drv_proc *p, thread *to, int sig, thread *from, int code);
/* If the system call T makes now set a signal to deliver (T->deliver),
 * its handler's frame goes on T's stack and C (T's registers, the call's
 * result in a0) enters the handler; a frame that cannot be written ends
 * the process with SIGSEGV, as Linux does. Record, run and replay call it
 * at the same point: after the result, before the call's exit. */
void signal_deliver(drv_proc *p, thread *t, rru_ctx *c);
/* At the entry of T's system call NR (its ECALL at ECALL_PC, registers C):
 * 1 if a signal from elsewhere is taken there instead (its handler entered,
 * the call not run: a SYSCALL record with signal_mark's result says so),
 * else 0. */
int signal_take_async(drv_proc *p, thread *t, rru_ctx *c, uint32_t nr, uint64_t ecall_pc);
/* Replay of T's rt_sigsuspend (registers C, at the call) that blocked in
 * the recording: its mask in force from here. Nothing for another call. */
void signal_replay_suspend(drv_proc *p, thread *t, const rru_ctx *c);
/* Replay: 1 if RESULT is such a record's, its handler entered on C. */
int signal_replay_mark(drv_proc *p, thread *t, rru_ctx *c, int64_t result);
/* Delivers T's pending signals that are no longer blocked. */
int64_t signal_check_pending(drv_proc *p, thread *t);
/* ITIMER_REAL expired: SIGALRM to the process, outside any system call. */
void signal_timer(drv_proc *p);
/* 1 if the timer's SIGALRM would change nothing now (ignored, or blocked by
 * every thread: dropped). */
int signal_timer_void(const drv_proc *p);
/* "SIGSEGV" for 11; "signal N" for numbers without a name. */
const char *signal_name(int sig);

/* ---- time ---- */

#define DRV_HZ 1000000000ull                 /* simulated cycles per second */
#define DRV_EPOCH 1700000000ull              /* CLOCK_REALTIME at cycle 0 (seconds) */

/* ---- the output of the guest ---- */

#define IOV_MAX_GUEST 1024      /* iovecs of a readv or writev, at most */

/* Writes N bytes to guest fd 1 or 2's host descriptor and hands the
 * output hook what the host took: the bytes written, or the negative
 * error of the host write when none were. */
int64_t proc_output(drv_proc *p, file_obj *f, const uint8_t *data, size_t n);
/* The bytes of one write to the standard stream F: the CNT guest pieces V
 * (address, length), LIMIT bytes of them at most, read in order and
 * gathered into blocks of DRV_OUTPUT_BLOCK bytes, each put out by
 * proc_output (REPLAY: handed to the output hook alone). A write of up to
 * a block stays one host write, and the driver holds one block, whatever
 * the write's length. Returns the bytes put out, or when none were the
 * negative error of the guest read or host write that stopped it. */
int64_t proc_output_iov(drv_proc *p, file_obj *f, const uint64_t (*v)[2], uint64_t cnt,
                        uint64_t limit, int replay);

#endif
