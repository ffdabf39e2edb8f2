/* debugger/server.c: the gdb remote-protocol server on a serial replay
 * (debugger/server.h). */
#include "debugger/server.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <semaphore.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "debugger/gdbpkt.h"
#include "driver/driver.h"
#include "driver/replay.h"
#include "formats/log.h"
#include "replayer/exec.h"
#include "replayer/serial.h"
#include "rru/alloc.h"
#include "rru/hart.h"

#define MAX_BREAKS 256u
#define MAX_WATCHES 64u
#define SLICE (1u << 20)        /* instructions between looks at the socket when running free */
#define ACK_SECONDS 10          /* how long a sent packet waits for gdb's '+' */

typedef struct watchpoint {
    uint64_t addr, len;
    unsigned type;              /* 2 write, 3 read, 4 access */
} watchpoint;

/* A breakpoint: its address, gdb's kind (2 or 4 bytes) and, while it is
 * armed (an EBREAK written over the instruction for a run at full speed),
 * the bytes it covers. */
typedef struct breakpoint {
    uint64_t addr;
    unsigned kind;
    uint8_t orig[4];
} breakpoint;

/* Where each thread's latest chunk ran (qThreadExtraInfo). */
typedef struct thread_pos {
    uint32_t tid, cpu;
    uint64_t lane_index;
} thread_pos;

typedef struct scan_hit {
    uint64_t at;                /* position; UINT64_MAX: none */
    uint32_t tid;
    uint64_t pc, addr;
    int watch;                  /* the watchpoint's index, or -1 */
} scan_hit;

/* A checkpoint: a copy of the replay's process, made by fork() at
 * instruction AT and frozen in snapshot_wait() until told (CMD, then a
 * post of SEM) to give birth to the next live replay or to end. Slots
 * live in the shared page: any live process can wake any snapshot. */
typedef struct ckpt {
    int used;                   /* listed (the live process's view) */
    unsigned id;
    int manual;                 /* the start or monitor checkpoint: never thinned */
    uint64_t at;                /* instructions replayed when it was taken */
    pid_t pid;                  /* the snapshot process; 0 once it has ended */
    int cmd;                    /* CK_RESUME or CK_QUIT */
    sem_t sem;
} ckpt;

enum { CK_NONE, CK_RESUME, CK_QUIT };

/* A command that moves backwards is a continuation: it goes on in the live
 * process born of a checkpoint (restore() does not return). PEND_SCAN
 * scans [latest checkpoint before SEG_END, SEG_END) for the last position
 * that satisfies it, segment by segment towards the start; PEND_GOTO runs
 * from the nearest checkpoint at or before TARGET to TARGET, then REPLY
 * tells gdb. */
enum { PEND_NONE, PEND_SCAN, PEND_GOTO };
enum { REPLY_REVERSE, REPLY_WHO_WROTE, REPLY_GOTO, REPLY_RESTART, REPLY_CHUNK };

typedef struct pending {
    int op, reply;
    int what;                   /* SCAN_* */
    uint32_t tid, stop_tid;     /* the stepped thread; the stop to keep (who-wrote) */
    uint64_t addr, len;         /* who-wrote's bytes */
    uint64_t now, seg_end, target;
    scan_hit hit;
    unsigned id;                /* restart: the checkpoint */
    uint32_t cpu;               /* goto-chunk */
    uint64_t lane_index;
} pending;

#define MAX_CKPTS 512u

/* What outlives a restore: the session's state as gdb knows it, kept in a
 * MAP_SHARED page that every process of the session maps (the live one
 * is the only one that writes it). The replay's own state is in each
 * process's private memory: that is what a checkpoint keeps. */
typedef struct dbg_shared {
    pid_t supervisor;           /* the process that waits for the session's end */
    int noack;
    breakpoint breaks[MAX_BREAKS];
    unsigned nbreaks;
    watchpoint watches[MAX_WATCHES];
    unsigned nwatches;
    int64_t gthread;            /* Hg: registers of this thread (0: the stopped one) */
    int64_t cthread;            /* Hc: plain s steps this thread (0: the stopped one) */
    char stop_reply[2 * PATH_MAX + 64];   /* an exec stop names the program, in hex */
    int exec_events;            /* gdb takes exec stops (qSupported exec-events+) */
    int quiet;                  /* the guest's output was printed once: not again */
    gdb_rx rx;
    char in[4096];              /* bytes received from gdb; those before in_i handled */
    size_t in_n, in_i;
    uint64_t interval;          /* instructions between automatic checkpoints (0: none) */
    unsigned keep;              /* automatic checkpoints kept at most */
    unsigned next_id;
    ckpt ck[MAX_CKPTS];
    pending pend;
    uint64_t restored_at;       /* the position of the checkpoint restore() woke */
    char ahead[1400];           /* end_ahead's verdict */
    int ahead_watch;            /* ecall_writes_watched's answer */
    uint64_t ahead_addr;
    int ahead_done;
    int done, result;           /* the session's end, its dbg_serve status */
} dbg_shared;

/* A regular file open for reading, its offset when a checkpoint was taken:
 * the process born of the checkpoint opens it again (its own offset). */
typedef struct saved_fd {
    int fd, cloexec;
    off_t off;
} saved_fd;

/* Where each chunk of the log began (monitor goto-chunk, chunks). */
typedef struct chunk_start {
    rp_chunk c;
    uint64_t at;
    rp_pred preds[8];
    unsigned npreds;
} chunk_start;

struct dbg {
    const char *name;
    dbg_options o;
    char *dir, *program;
    rp_exec *x;
    rnr_reader *r;
    rp_serial *s;
    int fd;
    dbg_shared *sh;
    int in_chunk;               /* cur begun, instructions left */
    rp_chunk cur;               /* the chunk in progress, or the last one */
    uint64_t insns;             /* instructions replayed so far, all threads */
    int ended;                  /* the log is done (or the replay failed) */
    int failed;                 /* 1: diverged or final checks failed */
    char verdict[1400];         /* the end's one line */
    int armed;                  /* the breakpoints are written into guest memory */
    int hit;                    /* run() stopped at an EBREAK */
    int execd;                  /* run() stopped after an execve, not reported yet */
    uint32_t stop_tid;
    thread_pos *pos;
    size_t npos;
    chunk_start *chunks;        /* every chunk begun so far, in the log's order */
    size_t nchunks, capchunks;
    saved_fd *files;
    size_t nfiles;
    int no_checkpoints;         /* end_ahead's copy: takes none */
    jmp_buf top;                /* live_main: where a process born of a checkpoint starts */
    char out[2 * GDB_PKT_MAX + 8];
};

static const char *const xnames[32] = {
    "zero", "ra", "sp", "gp", "tp", "t0", "t1", "t2", "fp", "s1", "a0", "a1", "a2", "a3", "a4", "a5",
    "a6", "a7", "s2", "s3", "s4", "s5", "s6", "s7", "s8", "s9", "s10", "s11", "t3", "t4", "t5", "t6",
};
static const char *const fnames[32] = {
    "ft0", "ft1", "ft2", "ft3", "ft4", "ft5", "ft6", "ft7", "fs0", "fs1", "fa0", "fa1", "fa2",
    "fa3", "fa4", "fa5", "fa6", "fa7", "fs2", "fs3", "fs4", "fs5", "fs6", "fs7", "fs8", "fs9",
    "fs10", "fs11", "ft8", "ft9", "ft10", "ft11",
};
/* gdb's riscv register numbers: x0-x31 0-31, pc 32, f0-f31 33-64, then
 * the CSRs from 65 on: fflags 66, frm 67, fcsr 68 (65 does not exist). */
enum { REG_PC = 32, REG_F0 = 33, REG_FFLAGS = 66, REG_FRM = 67, REG_FCSR = 68 };

/* The target description: built once, the feature names and register
 * numbers gdb's riscv support expects. */
static char *target_xml(void)
{
    size_t cap = 8192, n = 0;
    char *s = xcalloc(1, cap);
#define ADD(...) (n += (size_t)snprintf(s + n, cap - n, __VA_ARGS__))
    ADD("<?xml version=\"1.0\"?>\n<!DOCTYPE target SYSTEM \"gdb-target.dtd\">\n<target version=\"1.0\">\n"
        "<architecture>riscv:rv64</architecture>\n<feature name=\"org.gnu.gdb.riscv.cpu\">\n");
    for (int i = 0; i < 32; i++)
        ADD("<reg name=\"%s\" bitsize=\"64\" type=\"%s\" regnum=\"%d\"/>\n", xnames[i],
            i == 1 ? "code_ptr" : i == 2 || i == 8 ? "data_ptr" : "int", i);
    ADD("<reg name=\"pc\" bitsize=\"64\" type=\"code_ptr\" regnum=\"32\"/>\n</feature>\n"
        "<feature name=\"org.gnu.gdb.riscv.fpu\">\n");
    for (int i = 0; i < 32; i++)
        ADD("<reg name=\"%s\" bitsize=\"64\" type=\"ieee_double\" regnum=\"%d\"/>\n", fnames[i],
            REG_F0 + i);
    ADD("<reg name=\"fflags\" bitsize=\"32\" type=\"int\" regnum=\"66\"/>\n"
        "<reg name=\"frm\" bitsize=\"32\" type=\"int\" regnum=\"67\"/>\n"
        "<reg name=\"fcsr\" bitsize=\"32\" type=\"int\" regnum=\"68\"/>\n</feature>\n</target>\n");
#undef ADD
    return s;
}

/* ---- opening ---- */

dbg *dbg_open(const dbg_options *o, char *err, size_t errlen)
{
    dbg *d = xcalloc(1, sizeof *d);
    d->fd = -1;
    d->name = o->name ? o->name : "rnr";
    d->o = *o;
    d->dir = strdup(o->dir);
    d->program = o->program ? strdup(o->program) : NULL;
    d->o.dir = d->dir;
    d->o.program = d->program;
    d->sh = mmap(NULL, sizeof *d->sh, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (d->sh == MAP_FAILED) {
        d->sh = NULL;
        snprintf(err, errlen, "mapping the session's shared state: %s", strerror(errno));
        goto fail;
    }
    d->sh->interval = o->checkpoint_interval;
    d->sh->keep = o->checkpoints < MAX_CKPTS - 8 ? o->checkpoints : MAX_CKPTS - 8;
    rp_exec_options eo = {.workers = 1, .program = o->program, .out = o->out};
    d->x = rp_exec_open(o->dir, &eo, err, errlen);
    if (!d->x)
        goto fail;
    /* Breakpoints live in one memory, which a fork would copy with them:
     * a recording of several processes is refused. */
    const rnr_manifest *mf = rp_exec_manifest(d->x);
    uint64_t procs = 1;
    if (mf && rnr_manifest_get(mf, "processes") && rnr_manifest_get_u64(mf, "processes", &procs) == 0 &&
        procs > 1) {
        snprintf(err, errlen, "%s: the recording made %" PRIu64 " processes (fork, vfork): the "
                 "debugger follows a recording of one process only", o->dir, procs);
        goto fail;
    }
    rp_exec_exec_stops(d->x, 0, 1);
    d->r = rp_exec_open_log(d->x, o->kind, err, errlen);
    if (!d->r)
        goto fail;
    d->s = rp_serial_new(d->r, err, errlen);
    if (!d->s)
        goto fail;
    return d;
fail:
    dbg_free(d);
    return NULL;
}

void dbg_free(dbg *d)
{
    if (!d)
        return;
    rp_serial_free(d->s);
    if (d->r)
        rnr_reader_close(d->r);
    rp_exec_free(d->x);
    if (d->fd >= 0)
        close(d->fd);
    free(d->pos);
    free(d->chunks);
    free(d->files);
    if (d->sh)
        munmap(d->sh, sizeof *d->sh);
    free(d->dir);
    free(d->program);
    free(d);
}

const char *dbg_program(const dbg *d) { return rp_exec_program(d->x); }

/* ---- the wire ---- */

static int write_all(int fd, const char *p, size_t n)
{
    while (n) {
        ssize_t k = send(fd, p, n, MSG_NOSIGNAL);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return -1;
        p += k;
        n -= (size_t)k;
    }
    return 0;
}

/* Sends BODY and, unless acks are off, waits for gdb's '+' (resending on
 * '-'). -1 when the connection is gone. */
static int send_body(dbg *d, const char *body, size_t n)
{
    if (d->fd < 0)
        return -1;
    size_t k = gdb_frame(body, n, d->out);
    for (int tries = 0; tries < 5; tries++) {
        if (write_all(d->fd, d->out, k) < 0)
            goto gone;
        if (d->sh->noack)
            return 0;
        for (;;) {
            struct pollfd pf = {d->fd, POLLIN, 0};
            int rc = poll(&pf, 1, ACK_SECONDS * 1000);
            if (rc < 0 && errno == EINTR)
                continue;
            if (rc <= 0)
                return 0;           /* no ack: go on rather than hang */
            char b;
            ssize_t got = recv(d->fd, &b, 1, 0);
            if (got <= 0)
                goto gone;
            if (b == '+')
                return 0;
            if (b == '-')
                break;
        }
    }
    return 0;
gone:
    close(d->fd);
    d->fd = -1;
    return -1;
}

static int send_str(dbg *d, const char *s) { return send_body(d, s, strlen(s)); }

static int sendf(dbg *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int sendf(dbg *d, const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    return send_str(d, buf);
}

/* Console text for gdb: 'O' packets (valid while gdb waits for a stop or
 * for a monitor command's answer). */
static void console(dbg *d, const char *text)
{
    char buf[2 * 512 + 2];
    for (size_t off = 0, n = strlen(text); off < n; off += 512) {
        size_t k = n - off < 512 ? n - off : 512;
        buf[0] = 'O';
        gdb_hex(text + off, k, buf + 1);
        send_str(d, buf);
    }
}

/* ---- state ---- */

static void note_chunk(dbg *d)
{
    for (size_t i = 0; i < d->npos; i++)
        if (d->pos[i].tid == d->cur.tid) {
            d->pos[i].cpu = d->cur.cpu;
            d->pos[i].lane_index = d->cur.lane_index;
            return;
        }
    d->pos = realloc(d->pos, (d->npos + 1) * sizeof *d->pos);
    if (!d->pos)
        abort();
    d->pos[d->npos++] = (thread_pos){d->cur.tid, d->cur.cpu, d->cur.lane_index};
}

static void disarm(dbg *d);

/* The end: the replay's final checks, or the failure that ended it. */
static void end_with(dbg *d, int failed, const char *msg)
{
    d->ended = 1;
    d->in_chunk = 0;
    d->failed = failed;
    if (failed)
        snprintf(d->verdict, sizeof d->verdict, "replay failed: %s", msg);
    else
        snprintf(d->verdict, sizeof d->verdict, "replay verified: %" PRIu64 " instructions, stdout, "
                 "exit status, per-thread counts and final digest as recorded", d->insns);
}

static int checkpoint(dbg *d, int manual);
static const ckpt *latest_ck(const dbg *d, uint64_t bound, int strict);

/* Begins the log's next chunk, after an automatic checkpoint when one is
 * due (the replay's chunk boundaries are where they are taken). 1 begun,
 * 0 the replay ended. */
static int next_chunk(dbg *d)
{
    char msg[RP_MSG_MAX];
    if (d->ended)
        return 0;
    if (d->sh->interval && !d->no_checkpoints) {
        const ckpt *k = latest_ck(d, d->insns, 0);
        if (k && d->insns - k->at >= d->sh->interval)
            checkpoint(d, 0);
    }
    int rc = rp_serial_next(d->s, &d->cur, msg, sizeof msg);
    if (rc < 0) {
        end_with(d, 1, msg);
        return 0;
    }
    if (rc == 0) {
        char why[1200];
        disarm(d);                  /* the final digest is of the recorded bytes */
        int bad = rp_exec_finish(d->x, why, sizeof why);
        end_with(d, bad, why);
        return 0;
    }
    if (rp_exec_begin(d->x, 0, d->cur.cpu, d->cur.lane_index, d->cur.tid, d->cur.cs, msg,
                      sizeof msg) < 0) {
        end_with(d, 1, msg);
        return 0;
    }
    d->in_chunk = 1;
    note_chunk(d);
    if (d->nchunks == d->capchunks) {
        d->capchunks = d->capchunks ? 2 * d->capchunks : 64;
        d->chunks = xrealloc(d->chunks, d->capchunks * sizeof *d->chunks);
    }
    chunk_start *cs = &d->chunks[d->nchunks++];
    cs->c = d->cur;
    cs->at = d->insns;
    cs->npreds = (unsigned)rp_serial_preds(d->s, cs->preds, sizeof cs->preds / sizeof cs->preds[0]);
    return 1;
}

/* Runs at most N instructions of the current chunk. */
static void run(dbg *d, uint64_t n)
{
    char msg[RP_MSG_MAX];
    uint64_t left = rp_exec_left(d->x, 0);
    int rc = rp_exec_run(d->x, 0, n, msg, sizeof msg);
    d->insns += left - (rc >= 1 ? rp_exec_left(d->x, 0) : 0);
    d->hit = rc == 2;
    if (rc == 3) {
        /* The breakpoints armed went with the old program's memory:
         * nothing to put back. */
        d->armed = 0;
        rp_exec_ebreak_stops(d->x, 0, 0);
        d->execd = 1;
    }
    if (rc < 0)
        end_with(d, 1, msg);
    else if (rc == 0)
        d->in_chunk = 0;
}

static int thread_alive(dbg *d, int64_t tid)
{
    return tid > 0 && tid <= UINT32_MAX && rp_exec_thread(d->x, (uint32_t)tid) != NULL;
}

/* The thread register reads and the stop name: the chosen one, or the
 * stopped one. */
static uint32_t reg_thread(dbg *d)
{
    return d->sh->gthread > 0 && thread_alive(d, d->sh->gthread) ? (uint32_t)d->sh->gthread : d->stop_tid;
}

/* A breakpoint at PC? */
static int break_at(const dbg *d, uint64_t pc)
{
    for (unsigned i = 0; i < d->sh->nbreaks; i++)
        if (d->sh->breaks[i].addr == pc)
            return 1;
    return 0;
}

/* Breakpoints at full speed: an EBREAK (c.ebreak for gdb's 2-byte kind)
 * over each breakpoint's instruction, so that whole chunks run and stop
 * there (rp_exec_ebreak_stops). Guest memory holds them only while the
 * replay runs free: every stop, scan and final check sees the recorded
 * bytes. 0, or -1 (nothing armed) when an instruction cannot be covered. */
static int arm(dbg *d)
{
    static const uint8_t ebreak[4] = {0x73, 0x00, 0x10, 0x00}, cebreak[2] = {0x02, 0x90};
    rru_mem *m = rp_exec_mem(d->x);
    if (d->armed || !d->sh->nbreaks)
        return 0;
    unsigned i;
    for (i = 0; i < d->sh->nbreaks; i++) {
        breakpoint *b = &d->sh->breaks[i];
        unsigned n = b->kind == 2 ? 2 : 4;
        if (rru_mem_read(m, b->addr, b->orig, n) < 0)
            break;
        /* Two breakpoints on one instruction: the first one's bytes. */
        for (unsigned j = 0; j < i; j++)
            if (d->sh->breaks[j].addr == b->addr)
                memcpy(b->orig, d->sh->breaks[j].orig, n);
        if (rru_mem_write(m, b->addr, n == 2 ? cebreak : ebreak, n) < 0)
            break;
    }
    if (i < d->sh->nbreaks) {
        while (i-- > 0)
            rru_mem_write(m, d->sh->breaks[i].addr, d->sh->breaks[i].orig, d->sh->breaks[i].kind == 2 ? 2 : 4);
        return -1;
    }
    d->armed = 1;
    rp_exec_ebreak_stops(d->x, 0, 1);
    return 0;
}

static void disarm(dbg *d)
{
    if (!d->armed)
        return;
    rru_mem *m = rp_exec_mem(d->x);
    for (unsigned i = d->sh->nbreaks; i-- > 0;)
        rru_mem_write(m, d->sh->breaks[i].addr, d->sh->breaks[i].orig, d->sh->breaks[i].kind == 2 ? 2 : 4);
    d->armed = 0;
    rp_exec_ebreak_stops(d->x, 0, 0);
}

/* The watchpoint the next instruction of the live thread triggers: its
 * index, with the address to report, or -1. */
static int watch_hit(dbg *d, uint64_t *report)
{
    uint32_t tid;
    rru_ctx *c = rp_exec_live(d->x, 0, &tid);
    if (!c)
        return -1;
    uint8_t b[4] = {0};
    rru_mem *m = rp_exec_mem(d->x);
    if (rru_mem_read(m, c->pc, b, 2) < 0 || ((b[0] & 3) == 3 && rru_mem_read(m, c->pc + 2, b + 2, 2) < 0))
        return -1;
    uint32_t bits = (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
    uint64_t a;
    unsigned size;
    int kind = rru_insn_access(bits, c, &a, &size);
    if (!kind)
        return -1;
    for (unsigned i = 0; i < d->sh->nwatches; i++) {
        const watchpoint *w = &d->sh->watches[i];
        int want = w->type == 2 ? RRU_ACCESS_WRITE : w->type == 3 ? RRU_ACCESS_READ
                                                                   : RRU_ACCESS_READ | RRU_ACCESS_WRITE;
        if (!(kind & want) || a >= w->addr + w->len || w->addr >= a + size)
            continue;
        *report = a > w->addr ? a : w->addr;
        return (int)i;
    }
    return -1;
}

/* Is the live thread's next instruction an ECALL (a system call, whose
 * writes to memory rru_insn_access does not describe)? */
static int at_ecall(dbg *d)
{
    rru_ctx *c = rp_exec_live(d->x, 0, NULL);
    uint8_t b[4];
    return c && drv_proc_peek(rp_exec_proc(d->x), c->pc, b, 4) == 0 && b[0] == 0x73 && !b[1] &&
           !b[2] && !b[3];
}

/* LEN bytes at ADDR as the guest sees them into BUF (unmapped: zeros). */
static void peek_bytes(dbg *d, uint64_t addr, uint64_t len, uint8_t *buf)
{
    const drv_proc *p = rp_exec_proc(d->x);
    if (drv_proc_peek(p, addr, buf, (size_t)len) == 0)
        return;
    for (uint64_t k = 0; k < len; k++)
        if (drv_proc_peek(p, addr + k, buf + k, 1) < 0)
            buf[k] = 0;
}

/* The bytes of the write and access watchpoints, one after another, into
 * BUF (MAX_WATCHES * 4096 bytes at most). */
static void watched_bytes(dbg *d, uint8_t *buf)
{
    size_t n = 0;
    for (unsigned i = 0; i < d->sh->nwatches; i++) {
        const watchpoint *w = &d->sh->watches[i];
        if (w->type != 3) {
            peek_bytes(d, w->addr, w->len, buf + n);
            n += w->len;
        }
    }
}

/* The first write or access watchpoint whose bytes differ from BEFORE
 * (watched_bytes), with the first changed byte's address; -1 if none. */
static int watched_changed(dbg *d, const uint8_t *before, uint64_t *addr)
{
    uint8_t now[4096];
    size_t n = 0;
    for (unsigned i = 0; i < d->sh->nwatches; i++) {
        const watchpoint *w = &d->sh->watches[i];
        if (w->type == 3)
            continue;
        peek_bytes(d, w->addr, w->len, now);
        for (uint64_t k = 0; k < w->len; k++)
            if (now[k] != before[n + k]) {
                *addr = w->addr + k;
                return (int)i;
            }
        n += w->len;
    }
    return -1;
}

/* Runs the live thread's ECALL and says whether it changed watched bytes
 * (the watchpoint's index, the address in *ADDR) or -1. */
static int run_ecall_watched(dbg *d, uint64_t *addr)
{
    uint8_t *before = xcalloc(MAX_WATCHES, 4096);
    watched_bytes(d, before);
    run(d, 1);
    int w = d->ended ? -1 : watched_changed(d, before, addr);
    free(before);
    return w;
}

/* Bytes from gdb while the replay runs: 1 if it asked for an interrupt. */
static int interrupted(dbg *d)
{
    for (;;) {
        struct pollfd pf = {d->fd, POLLIN, 0};
        if (d->fd < 0 || poll(&pf, 1, 0) <= 0)
            return 0;
        char buf[256];
        ssize_t n = recv(d->fd, buf, sizeof buf, 0);
        if (n <= 0)
            return 1;               /* gone: stop, the main loop notices */
        for (ssize_t i = 0; i < n; i++)
            if (gdb_rx_byte(&d->sh->rx, (uint8_t)buf[i]) == GDB_RX_INTERRUPT)
                return 1;
    }
}

/* Sends the stop reply (also kept for '?'). */
static void stop(dbg *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void stop(dbg *d, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(d->sh->stop_reply, sizeof d->sh->stop_reply, fmt, ap);
    va_end(ap);
    d->sh->gthread = 0;
    send_str(d, d->sh->stop_reply);
}

/* Thread TID's execve replaced the program: with exec events, gdb is
 * told which file the process now runs (it loads its symbols, and inserts
 * its breakpoints again, holding none inserted: the server forgets them
 * too); without, a plain stop. */
static void exec_stop(dbg *d, uint32_t tid)
{
    d->execd = 0;
    if (!d->sh->exec_events) {
        stop(d, "T05thread:%x;", tid);
        return;
    }
    d->sh->nbreaks = 0;
    d->sh->nwatches = 0;
    char abs[PATH_MAX], hex[2 * PATH_MAX + 1];
    const char *exe = drv_proc_exe(rp_exec_proc(d->x));
    if (!realpath(exe, abs))
        snprintf(abs, sizeof abs, "%s", exe);
    gdb_hex(abs, strlen(abs), hex);
    stop(d, "T05exec:%s;thread:%x;", hex, tid);
}

static void report_end(dbg *d)
{
    char line[1500];
    /* Ours first: gdb, on the same terminal, writes its copy in pieces. */
    fprintf(stderr, "%s: %s\n", d->name, d->verdict);
    fflush(stderr);
    snprintf(line, sizeof line, "rnr: %s\n", d->verdict);
    console(d, line);
    drv_end end;
    int status = 0;
    if (d->failed)
        snprintf(d->sh->stop_reply, sizeof d->sh->stop_reply, "W01");
    else if (drv_replay_ended(rp_exec_proc(d->x), &end, &status) && end == DRV_SIGNALED)
        snprintf(d->sh->stop_reply, sizeof d->sh->stop_reply, "X%02x", status & 0xff);
    else
        snprintf(d->sh->stop_reply, sizeof d->sh->stop_reply, "W%02x", status & 0xff);
    send_str(d, d->sh->stop_reply);
}

static void save_files(dbg *d);
static void restore_files(dbg *d);
static void run_to(dbg *d, uint64_t target);

/* The replay stands before the log's last instruction (the exit of the
 * process): a copy of it (fork) runs that instruction and the final
 * checks, and the verdict is printed; the replay stops here rather than
 * end, so that gdb can still go backwards ("replaylog:end"). Resuming
 * from here ends the process. */
static void end_ahead(dbg *d)
{
    dbg_shared *sh = d->sh;
    disarm(d);
    save_files(d);
    fflush(NULL);
    sh->ahead_done = 0;
    pid_t pid = fork();
    if (pid == 0) {
        restore_files(d);
        d->no_checkpoints = 1;
        rp_exec_print_to(d->x, NULL);   /* the real end prints it, if it comes */
        run_to(d, UINT64_MAX);
        snprintf(sh->ahead, sizeof sh->ahead, "%s", d->verdict);
        sh->ahead_done = 1;
        _exit(0);
    }
    int st = 0;
    while (pid > 0 && waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    char line[1500];
    if (pid < 0 || !sh->ahead_done)
        snprintf(sh->ahead, sizeof sh->ahead, "the final checks could not run ahead (%s): "
                 "continue to run them", pid < 0 ? strerror(errno) : "their process failed");
    fprintf(stderr, "%s: %s\n", d->name, sh->ahead);
    fflush(stderr);
    snprintf(line, sizeof line, "rnr: %s; stopped before the process exits: the reverse "
             "commands work from here, continue ends it\n", sh->ahead);
    console(d, line);
    stop(d, "T05replaylog:end;thread:%x;", d->cur.tid);
}

/* Would the ECALL the live thread stands at change watched bytes? A copy
 * of the replay (fork) runs it and tells: the watchpoint's index and the
 * address, or -1. The replay stays before the ECALL, where a watchpoint is
 * reported (gdb steps over the instruction, as over a store). */
static int ecall_writes_watched(dbg *d, uint64_t *addr)
{
    dbg_shared *sh = d->sh;
    disarm(d);
    save_files(d);
    fflush(NULL);
    sh->ahead_watch = -1;
    pid_t pid = fork();
    if (pid == 0) {
        restore_files(d);
        d->no_checkpoints = 1;
        rp_exec_print_to(d->x, NULL);
        uint64_t a = 0;
        int w = run_ecall_watched(d, &a);
        sh->ahead_addr = a;
        sh->ahead_watch = w;
        _exit(0);
    }
    int st;
    while (pid > 0 && waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    *addr = sh->ahead_addr;
    return pid > 0 ? sh->ahead_watch : -1;
}

/* Resumes the replay: a step of thread STEP_TID (0: continue) until the
 * next stop, which is reported. When gdb lets only thread FOCUS move (it
 * steps it over a breakpoint, with a step or a temporary breakpoint, and
 * expects no other thread to stop), the other threads' chunks still run
 * as the log needs them, their breakpoints and watchpoints ignored. */
static void resume(dbg *d, uint32_t step_tid, uint32_t focus)
{
    int first = 1;
    uint64_t polls = 0, last = rp_exec_instructions(d->x) - 1;
    d->execd = 0;   /* one a restore or goto passed is not news */
    for (;;) {
        if (!d->in_chunk && !next_chunk(d)) {
            report_end(d);
            return;
        }
        uint32_t tid = d->cur.tid;
        d->stop_tid = tid;
        if (d->insns == last && !first) {
            end_ahead(d);
            return;
        }
        /* Nothing to look for but breakpoints: whole slices, as a plain
         * replay runs, with the breakpoints armed (not over the first
         * instruction when it stands on one: that one is stepped). */
        if (!step_tid && !d->sh->nwatches &&
            !(first && break_at(d, rp_exec_live(d->x, 0, NULL)->pc)) && arm(d) == 0) {
            first = 0;
            run(d, d->insns < last && last - d->insns < SLICE ? last - d->insns : SLICE);
            if (d->execd) {
                exec_stop(d, tid);
                return;
            }
            if (d->hit) {
                uint64_t pc = rp_exec_live(d->x, 0, NULL)->pc;
                disarm(d);
                if (break_at(d, pc) && (!focus || tid == focus)) {
                    stop(d, "T05thread:%x;", tid);
                    return;
                }
                /* Another thread's breakpoint: its instruction, as
                 * recorded; the guest's own EBREAK: what a plain replay
                 * does with it. */
                run(d, 1);
            }
            if (d->execd) {
                exec_stop(d, tid);
                return;
            }
            if (d->ended) {
                report_end(d);
                return;
            }
            if (interrupted(d)) {
                disarm(d);
                stop(d, "T02thread:%x;", tid);
                return;
            }
            continue;
        }
        disarm(d);
        rru_ctx *c = rp_exec_live(d->x, 0, NULL);
        /* A breakpoint or watchpoint where the replay stands was reported
         * already: the first instruction of a resume goes past it. Watched
         * accesses are reported before the instruction, as RISC-V hardware
         * does: gdb then steps the thread over it and shows the state right
         * after the access. */
        int look = !first && (!focus || tid == focus);
        if (look && break_at(d, c->pc)) {
            stop(d, "T05thread:%x;", tid);
            return;
        }
        uint64_t waddr = 0;
        int w = d->sh->nwatches && look ? watch_hit(d, &waddr) : -1;
        if (w < 0 && d->sh->nwatches && look && at_ecall(d))
            w = ecall_writes_watched(d, &waddr);
        if (w >= 0) {
            unsigned t = d->sh->watches[w].type;
            stop(d, "T05%s:%" PRIx64 ";thread:%x;", t == 2 ? "watch" : t == 3 ? "rwatch" : "awatch",
                 waddr, tid);
            return;
        }
        first = 0;
        run(d, 1);
        if (d->ended) {
            report_end(d);
            return;
        }
        if (d->execd) {
            exec_stop(d, tid);
            return;
        }
        if (step_tid == tid) {
            stop(d, "T05thread:%x;", tid);
            return;
        }
        if (step_tid && !thread_alive(d, step_tid))
            step_tid = 0;           /* it ended: continue */
        if (++polls % 4096 == 0 && interrupted(d)) {
            stop(d, "T02thread:%x;", tid);
            return;
        }
    }
}

/* ---- going back: checkpoints and re-execution ----
 *
 * The replay is deterministic, so the state at global instruction P (P
 * instructions of the log's order executed) is found again by taking the
 * replay as it was at an earlier instruction C and running P - C
 * instructions. Checkpoints keep such states: a checkpoint is a fork() of
 * the whole replay process (guest memory, harts, the driver's threads,
 * files, futexes and fd table, the readers' positions in the final and
 * input logs), made between two chunks every sh->interval instructions
 * and at the start. Its pages are shared with the live process and copied
 * by the kernel on the first write after the fork, so it costs the pages
 * written since, and the live process does no work for it between
 * checkpoints. The snapshot process waits; restoring it makes it fork the
 * next live process, which starts over at live_main() and carries on with
 * the command in progress (sh->pend), while the previous live process
 * ends. What gdb knows (breakpoints, the packet being read, the
 * checkpoints) is in the shared page and outlives the switch.
 *
 * A reverse command scans, from the latest checkpoint before where the
 * replay stands up to there, for the last position that satisfies it (a
 * breakpoint, armed: whole chunks from one hit to the next; the stepped
 * thread's previous instruction: chunk by chunk; a watched access or a
 * write for who-wrote: one instruction at a time); if none, the segment
 * before, from the previous checkpoint; then it runs from the nearest
 * checkpoint at or before that position to it. The segments partition
 * [0, now), and each is scanned from a state equal to the forward
 * replay's at its start, so the position found is the one a scan from the
 * start would find. The guest's output is compared again on the way (the
 * final checks stay whole) but printed only the first time. */

static void save_files(dbg *d);

/* The latest checkpoint at or before BOUND (before it: STRICT), or NULL. */
static const ckpt *latest_ck(const dbg *d, uint64_t bound, int strict)
{
    const ckpt *best = NULL;
    for (unsigned i = 0; i < MAX_CKPTS; i++) {
        const ckpt *k = &d->sh->ck[i];
        if (k->used && (strict ? k->at < bound : k->at <= bound) && (!best || k->at > best->at))
            best = k;
    }
    return best;
}

/* Ends snapshot K's process and frees its slot. */
static void release(dbg *d, ckpt *k)
{
    k->used = 0;
    k->cmd = CK_QUIT;
    sem_post(&k->sem);
    (void)d;
}

/* Keeps at most sh->keep automatic checkpoints: drops the one whose
 * neighbours are closest together, so that the kept ones thin out
 * towards the past (about evenly spread over the replay so far). */
static void thin(dbg *d)
{
    dbg_shared *sh = d->sh;
    for (;;) {
        unsigned n = 0;
        for (unsigned i = 0; i < MAX_CKPTS; i++)
            n += sh->ck[i].used && !sh->ck[i].manual;
        if (n <= sh->keep)
            return;
        ckpt *drop = NULL;
        uint64_t gap = UINT64_MAX;
        for (unsigned i = 0; i < MAX_CKPTS; i++) {
            ckpt *k = &sh->ck[i];
            if (!k->used || k->manual)
                continue;
            const ckpt *prev = latest_ck(d, k->at, 1);
            uint64_t next = d->insns;
            for (unsigned j = 0; j < MAX_CKPTS; j++)
                if (sh->ck[j].used && sh->ck[j].at > k->at && sh->ck[j].at < next)
                    next = sh->ck[j].at;
            uint64_t g = next - (prev ? prev->at : 0);
            if (g < gap) {
                gap = g;
                drop = k;
            }
        }
        if (!drop)
            return;
        release(d, drop);
    }
}

static void restore_files(dbg *d)
{
    char path[64];
    for (size_t i = 0; i < d->nfiles; i++) {
        const saved_fd *f = &d->files[i];
        snprintf(path, sizeof path, "/proc/self/fd/%d", f->fd);
        int nfd = open(path, O_RDONLY | O_CLOEXEC);
        if (nfd < 0 || dup3(nfd, f->fd, f->cloexec ? O_CLOEXEC : 0) < 0 ||
            lseek(f->fd, f->off, SEEK_SET) != f->off) {
            fprintf(stderr, "%s: restoring a checkpoint: reopening %s: %s\n", d->name, path,
                    strerror(errno));
            _exit(3);
        }
        close(nfd);
    }
}

/* The snapshot process of slot SLOT: waits until told to end or to give
 * birth to a live process (which goes on in live_main); ends by itself
 * when the session's supervisor is gone. */
static void snapshot_wait(dbg *d, unsigned slot) __attribute__((noreturn));
static void snapshot_wait(dbg *d, unsigned slot)
{
    ckpt *k = &d->sh->ck[slot];
    for (;;) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_sec += 1;
        if (sem_timedwait(&k->sem, &ts) < 0) {
            if (errno == ETIMEDOUT && kill(d->sh->supervisor, 0) < 0 && errno == ESRCH)
                _exit(0);
            continue;
        }
        if (k->cmd != CK_RESUME) {
            k->pid = 0;
            _exit(0);
        }
        k->cmd = CK_NONE;
        /* Twice, so that the live process is the supervisor's child
         * (a subreaper) and this one has none left to reap. */
        pid_t mid = fork();
        if (mid == 0) {
            pid_t live = fork();
            if (live != 0)
                _exit(live < 0 ? 3 : 0);
            restore_files(d);
            longjmp(d->top, 1);
        }
        int st = 0;
        if (mid < 0 || waitpid(mid, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
            _exit(3);               /* no live process: the supervisor ends the session */
    }
}

/* Takes a checkpoint where the replay stands (MANUAL: monitor checkpoint
 * or the start, never thinned). Its number, or -1 (errno set when fork or
 * sem_init failed; else the table is full). */
static int checkpoint(dbg *d, int manual)
{
    dbg_shared *sh = d->sh;
    unsigned slot;
    for (slot = 0; slot < MAX_CKPTS; slot++)
        if (!sh->ck[slot].used && !sh->ck[slot].pid)
            break;
    if (slot == MAX_CKPTS)
        return -1;
    disarm(d);
    save_files(d);
    ckpt *k = &sh->ck[slot];
    *k = (ckpt){1, sh->next_id, manual, d->insns, 0, CK_NONE, {{0}}};
    if (sem_init(&k->sem, 1, 0) < 0) {
        k->used = 0;
        return -1;
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0)
        snapshot_wait(d, slot);
    if (pid < 0) {
        k->used = 0;
        return -1;
    }
    k->pid = pid;
    sh->next_id++;
    thin(d);
    return (int)k->id;
}

/* Goes on from checkpoint K, in a new live process: does not return. */
static void restore(dbg *d, const ckpt *k) __attribute__((noreturn));
static void restore(dbg *d, const ckpt *k)
{
    ckpt *w = &d->sh->ck[k - d->sh->ck];
    disarm(d);
    fflush(NULL);
    d->sh->quiet = 1;
    d->sh->restored_at = w->at;
    w->cmd = CK_RESUME;
    sem_post(&w->sem);
    _exit(0);
}

/* Runs forward, without stopping, to instruction TARGET (or the end). */
static void run_to(dbg *d, uint64_t target)
{
    while (d->insns < target && !d->ended) {
        if (!d->in_chunk && !next_chunk(d))
            return;
        uint64_t n = target - d->insns;
        run(d, n < SLICE ? n : SLICE);
    }
    if (!d->in_chunk && !d->ended)
        next_chunk(d);
    if (!d->ended)
        d->stop_tid = d->cur.tid;
}

enum { SCAN_STOPS, SCAN_THREAD, SCAN_WRITES };

/* Runs from here up to instruction END and returns the last position
 * before END at which WHAT holds: SCAN_STOPS a breakpoint or a watched
 * access, SCAN_THREAD thread TID's next instruction, SCAN_WRITES a write
 * to [ADDR, ADDR + LEN). The replay stands at END after it. */
static scan_hit scan(dbg *d, uint64_t end, int what, uint32_t tid, uint64_t addr, uint64_t len)
{
    scan_hit h = {UINT64_MAX, 0, 0, 0, -1};
    while (d->insns < end && !d->ended) {
        if (!d->in_chunk && !next_chunk(d))
            break;
        rru_ctx *c = rp_exec_live(d->x, 0, NULL);
        if (what == SCAN_THREAD) {
            /* Whole chunks: the thread's last instruction before END is
             * the last of its last chunk that starts before END. */
            uint64_t n = rp_exec_left(d->x, 0);
            if (n > end - d->insns)
                n = end - d->insns;
            if (d->cur.tid == tid)
                h = (scan_hit){d->insns + n - 1, tid, 0, 0, -1};
            for (uint64_t target = d->insns + n; d->insns < target && d->in_chunk && !d->ended;)
                run(d, target - d->insns < SLICE ? target - d->insns : SLICE);
            continue;
        }
        if (what == SCAN_STOPS && !d->sh->nwatches) {
            /* Breakpoints only: armed, at full speed, from one hit to the next. */
            if (break_at(d, c->pc))
                h = (scan_hit){d->insns, d->cur.tid, c->pc, 0, -1};
            run(d, 1);
            if (d->insns < end && d->in_chunk && !d->ended && arm(d) == 0) {
                uint64_t n = end - d->insns;
                run(d, n < SLICE ? n : SLICE);
                disarm(d);
            }
            continue;
        }
        uint64_t a = 0;
        int w = -1, hit = 0;
        if (at_ecall(d)) {
            /* A system call's writes: seen by comparing the bytes. */
            uint64_t at = d->insns, pc = c->pc;
            uint32_t t = d->cur.tid;
            if (what == SCAN_STOPS) {
                w = d->sh->nwatches ? run_ecall_watched(d, &a) : -1;
                hit = w >= 0 || break_at(d, pc);
            } else {
                uint8_t before[4096], after[4096];
                peek_bytes(d, addr, len, before);
                run(d, 1);
                if (!d->ended) {
                    peek_bytes(d, addr, len, after);
                    for (uint64_t k = 0; k < len && !hit; k++)
                        if (before[k] != after[k]) {
                            hit = 1;
                            a = addr + k;
                        }
                }
            }
            if (hit && at < end)
                h = (scan_hit){at, t, pc, a, w};
            continue;
        }
        if (what == SCAN_STOPS) {
            w = d->sh->nwatches ? watch_hit(d, &a) : -1;
            hit = w >= 0 || break_at(d, c->pc);
        } else {
            uint8_t b[4] = {0};
            unsigned size;
            const drv_proc *p = rp_exec_proc(d->x);
            if (drv_proc_peek(p, c->pc, b, 2) == 0 &&
                ((b[0] & 3) != 3 || drv_proc_peek(p, c->pc + 2, b + 2, 2) == 0)) {
                uint32_t bits = (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 |
                                (uint32_t)b[3] << 24;
                int k = rru_insn_access(bits, c, &a, &size);
                hit = (k & RRU_ACCESS_WRITE) && a < addr + len && addr < a + size;
            }
        }
        if (hit)
            h = (scan_hit){d->insns, d->cur.tid, c->pc, a, w};
        run(d, 1);
    }
    if (!d->in_chunk && !d->ended)
        next_chunk(d);
    return h;
}

static void continue_pending(dbg *d);

/* Goes to instruction AT (forward from here, or from the nearest
 * checkpoint at or before it), then answers as REPLY says. */
static void go_to_then(dbg *d, uint64_t at, int reply)
{
    d->sh->pend.op = PEND_GOTO;
    d->sh->pend.target = at;
    d->sh->pend.reply = reply;
    continue_pending(d);
}

/* A backwards scan for WHAT from here (see scan), then REPLY. */
static void scan_back(dbg *d, int what, uint32_t tid, uint64_t addr, uint64_t len, int reply)
{
    pending *p = &d->sh->pend;
    *p = (pending){PEND_SCAN, reply, what, tid, d->stop_tid, addr, len, d->insns, d->insns, 0,
                   {UINT64_MAX, 0, 0, 0, -1}, 0, 0, 0};
    continue_pending(d);
}

static void reply(dbg *d);

/* Carries on with sh->pend, here or (not returning) from a checkpoint. */
static void continue_pending(dbg *d)
{
    pending *p = &d->sh->pend;
    while (p->op == PEND_SCAN) {
        if (p->seg_end == 0) {
            p->op = PEND_GOTO;
            p->target = 0;
            break;
        }
        const ckpt *k = latest_ck(d, p->seg_end, 1);
        if (!k)
            abort();                /* the start's checkpoint is never dropped */
        if (d->insns != k->at || d->ended)
            restore(d, k);
        scan_hit h = scan(d, p->seg_end, p->what, p->tid, p->addr, p->len);
        if (h.at != UINT64_MAX || k->at == 0) {
            p->hit = h;
            p->op = PEND_GOTO;
            /* A watched access is reported right after it, in the writer:
             * gdb steps that thread back over it (as it steps forward over
             * one). who-wrote goes back to where it was asked. */
            p->target = p->reply == REPLY_WHO_WROTE ? p->now
                        : h.at == UINT64_MAX ? 0 : h.watch >= 0 ? h.at + 1 : h.at;
            break;
        }
        p->seg_end = k->at;
    }
    if (p->op != PEND_GOTO)
        return;
    if (p->target < d->insns || d->ended) {
        const ckpt *k = latest_ck(d, p->target, 0);
        if (!k)
            abort();
        if (d->insns != k->at || d->ended)
            restore(d, k);
    }
    run_to(d, p->target);
    p->op = PEND_NONE;
    reply(d);
}

/* bc, bs: back to the last stop before here (STEP: thread TID's previous
 * instruction), reported as a stop; the start of the log when there is
 * none ("replaylog:begin"). */
static void reverse(dbg *d, int step, uint32_t tid)
{
    scan_back(d, step ? SCAN_THREAD : SCAN_STOPS, tid, 0, 0, REPLY_REVERSE);
}

static void monitor_text(dbg *d, const char *text)
{
    console(d, text);
    send_str(d, "OK");
}

/* The answer of the command in sh->pend, where it has brought the replay. */
static void reply(dbg *d)
{
    const pending *p = &d->sh->pend;
    const scan_hit *h = &p->hit;
    char text[512];
    switch (p->reply) {
    case REPLY_REVERSE:
        if (d->ended) {
            report_end(d);
        } else if (h->at == UINT64_MAX) {
            stop(d, "T05replaylog:begin;thread:%x;", d->cur.tid);
        } else if (h->watch >= 0) {
            const watchpoint *w = &d->sh->watches[h->watch];
            d->stop_tid = h->tid;
            stop(d, "T05%s:%" PRIx64 ";thread:%x;",
                 w->type == 2 ? "watch" : w->type == 3 ? "rwatch" : "awatch",
                 h->addr > w->addr ? h->addr : w->addr, h->tid);
        } else {
            stop(d, "T05thread:%x;", d->cur.tid);
        }
        return;
    case REPLY_WHO_WROTE:
        d->stop_tid = p->stop_tid;
        if (h->at == UINT64_MAX)
            snprintf(text, sizeof text, "no instruction wrote 0x%" PRIx64 " (%" PRIu64 " byte%s) "
                     "before instruction %" PRIu64 "\n",
                     p->addr, p->len, p->len == 1 ? "" : "s", p->now);
        else
            snprintf(text, sizeof text, "0x%" PRIx64 " (%" PRIu64 " byte%s) was last written "
                     "before instruction %" PRIu64 " by thread %u at pc 0x%" PRIx64 ", instruction %"
                     PRIu64 " ('monitor goto %" PRIu64 "' stands right after it)\n", p->addr,
                     p->len, p->len == 1 ? "" : "s", p->now, h->tid, h->pc, h->at, h->at + 1);
        break;
    case REPLY_GOTO:
        snprintf(text, sizeof text, "at instruction %" PRIu64 ", thread %u%s (gdb caches "
                 "registers: 'maint flush register-cache' or a step shows the new state)\n",
                 d->insns, d->cur.tid, d->ended ? ": the end of the log" : "");
        break;
    case REPLY_RESTART:
        snprintf(text, sizeof text, "at checkpoint %u, instruction %" PRIu64 ", thread %u (gdb "
                 "caches registers: 'maint flush register-cache' or a step shows the new state)\n",
                 p->id, d->insns, d->cur.tid);
        break;
    default:
        snprintf(text, sizeof text, "at the start of chunk %u:%" PRIu64 " (log chunk %" PRIu64
                 "), instruction %" PRIu64 ", thread %u (gdb caches registers: 'maint flush "
                 "register-cache' or a step shows the new state)\n", d->cur.cpu,
                 d->cur.lane_index, d->cur.seq, d->insns, d->cur.tid);
        break;
    }
    if (!d->ended)
        d->sh->gthread = 0;
    monitor_text(d, text);
}

/* ---- commands ---- */

static int ctx_reg(const rru_ctx *c, unsigned r, char *out)
{
    uint64_t v;
    uint32_t v32;
    if (r < 32) {
        v = r ? c->x[r] : 0;
    } else if (r == REG_PC) {
        v = c->pc;
    } else if (r >= REG_F0 && r < REG_F0 + 32) {
        v = c->f[r - REG_F0];
    } else if (r >= REG_FFLAGS && r <= REG_FCSR) {
        v32 = r == REG_FFLAGS ? c->fflags : r == REG_FRM ? c->frm : (c->frm << 5 | c->fflags);
        gdb_hex(&v32, 4, out);  /* little-endian host, as the target */
        return 8;
    } else {
        return -1;
    }
    gdb_hex(&v, 8, out);
    return 16;
}

static void read_regs(dbg *d)
{
    const rru_ctx *c = rp_exec_thread(d->x, reg_thread(d));
    if (!c) {
        send_str(d, "E01");
        return;
    }
    char buf[2 * (65 * 8 + 3 * 4) + 1];
    size_t n = 0;
    for (unsigned r = 0; r <= REG_FCSR; r++) {
        int k = ctx_reg(c, r, buf + n);
        if (k > 0)
            n += (size_t)k;
    }
    send_body(d, buf, n);
}

static void read_mem(dbg *d, uint64_t addr, uint64_t len)
{
    uint8_t data[(GDB_PKT_MAX - 16) / 2];
    if (len > sizeof data)
        len = sizeof data;
    if (addr + len < addr)
        len = 0 - addr;
    const drv_proc *p = rp_exec_proc(d->x);
    size_t got = 0;
    if (len && drv_proc_peek(p, addr, data, (size_t)len) == 0)
        got = (size_t)len;
    else
        while (got < len && drv_proc_peek(p, addr + got, data + got, 1) == 0)
            got++;
    if (!got && len) {
        send_str(d, "E14");
        return;
    }
    char hex[GDB_PKT_MAX];
    gdb_hex(data, got, hex);
    send_body(d, hex, 2 * got);
}

static void xfer(dbg *d, const gdb_cmd *c)
{
    if (strcmp(c->annex, "target.xml") != 0) {
        send_str(d, "E00");
        return;
    }
    char *xml = target_xml();
    size_t n = strlen(xml), off = c->addr > n ? n : (size_t)c->addr, len = (size_t)c->len;
    if (len > GDB_PKT_MAX / 2)
        len = GDB_PKT_MAX / 2;
    char *buf = xcalloc(1, len + 2);
    size_t k = n - off < len ? n - off : len;
    buf[0] = off + k >= n ? 'l' : 'm';
    memcpy(buf + 1, xml + off, k);
    send_body(d, buf, k + 1);
    free(buf);
    free(xml);
}

static void threads(dbg *d)
{
    char buf[GDB_PKT_MAX / 2];
    size_t n = 0;
    drv_proc *p = rp_exec_proc(d->x);
    buf[n++] = 'm';
    for (size_t k = 0; k < drv_proc_threads(p) && n + 20 < sizeof buf; k++) {
        uint32_t tid;
        uint64_t insns;
        drv_proc_thread(p, k, &tid, &insns);
        if (thread_alive(d, tid))
            n += (size_t)snprintf(buf + n, sizeof buf - n, "%s%x", n > 1 ? "," : "", tid);
    }
    if (n == 1)
        buf[0] = 'l';
    send_body(d, buf, n);
}

static void thread_extra(dbg *d, int64_t tid)
{
    char text[128], hex[260];
    snprintf(text, sizeof text, "no chunk yet");
    for (size_t i = 0; i < d->npos; i++)
        if ((int64_t)d->pos[i].tid == tid)
            snprintf(text, sizeof text, "cpu %u chunk %" PRIu64 "%s", d->pos[i].cpu,
                     d->pos[i].lane_index,
                     d->in_chunk && d->cur.tid == d->pos[i].tid ? " (running)" : "");
    gdb_hex(text, strlen(text), hex);
    send_str(d, hex);
}

/* Private memory of process PID in KiB (its pages not shared with the
 * others: for a snapshot, the pages the replay wrote since), or 0. */
static uint64_t private_kib(pid_t pid)
{
    char path[64], line[256];
    snprintf(path, sizeof path, "/proc/%d/smaps_rollup", (int)pid);
    FILE *f = fopen(path, "r");
    uint64_t kib = 0, v;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "Private_Clean: %" SCNu64, &v) == 1 ||
            sscanf(line, "Private_Dirty: %" SCNu64, &v) == 1)
            kib += v;
    if (f)
        fclose(f);
    return kib;
}

static int by_at(const void *a, const void *b)
{
    const ckpt *x = *(const ckpt *const *)a, *y = *(const ckpt *const *)b;
    return x->at < y->at ? -1 : x->at > y->at ? 1 : x->id < y->id ? -1 : x->id > y->id;
}

static void list_checkpoints(dbg *d, char *text, size_t cap)
{
    const ckpt *list[MAX_CKPTS];
    unsigned n = 0;
    for (unsigned i = 0; i < MAX_CKPTS; i++)
        if (d->sh->ck[i].used)
            list[n++] = &d->sh->ck[i];
    qsort(list, n, sizeof list[0], by_at);
    size_t len = (size_t)snprintf(text, cap, "%u checkpoint%s (every %" PRIu64 " instructions, "
                                  "at most %u automatic ones kept):\n", n, n == 1 ? "" : "s",
                                  d->sh->interval, d->sh->keep);
    uint64_t total = 0;
    for (unsigned i = 0; i < n && len < cap; i++) {
        uint64_t kib = private_kib(list[i]->pid);
        total += kib;
        len += (size_t)snprintf(text + len, cap - len, "  %u  instruction %" PRIu64 "  %s  %" PRIu64
                                " KiB of its own\n", list[i]->id, list[i]->at,
                                list[i]->at == 0 && list[i]->manual ? "start" : list[i]->manual
                                ? "manual" : "automatic", kib);
    }
    if (len < cap)
        snprintf(text + len, cap - len, "memory of the checkpoints: %" PRIu64 " KiB\n", total);
}

/* chunks: the log's chunks around here, with their predecessors. */
static void list_chunks(dbg *d, char *text, size_t cap)
{
    size_t len = 0, here = d->nchunks ? d->nchunks - 1 : 0;
    if (!d->nchunks) {
        snprintf(text, cap, "no chunk begun yet\n");
        return;
    }
    size_t from = here > 8 ? here - 8 : 0;
    len += (size_t)snprintf(text, cap, "log chunk  cpu:index  thread  instructions  first "
                            "instruction  predecessors (cpu:index)\n");
    for (size_t i = from; i <= here && len < cap; i++) {
        const chunk_start *c = &d->chunks[i];
        len += (size_t)snprintf(text + len, cap - len, "%s%" PRIu64 "  %u:%" PRIu64 "  %u  %" PRIu64
                                "  %" PRIu64 " ", i == here && d->in_chunk ? "> " : "  ", c->c.seq,
                                c->c.cpu, c->c.lane_index, c->c.tid, c->c.cs, c->at);
        for (unsigned k = 0; k < c->npreds && len < cap; k++)
            len += (size_t)snprintf(text + len, cap - len, " %u:%" PRIu64, c->preds[k].cpu,
                                    c->preds[k].lane_index);
        if (len < cap)
            len += (size_t)snprintf(text + len, cap - len, "%s\n", c->npreds ? "" : " none");
    }
}

/* The first instruction of chunk INDEX of CPU's lane, running forward to
 * it when it has not begun yet: 1 (in *AT), 0 no such chunk. */
static int chunk_at(dbg *d, uint32_t cpu, uint64_t index, uint64_t *at)
{
    for (;;) {
        for (size_t i = d->nchunks; i-- > 0;)
            if (d->chunks[i].c.cpu == cpu && d->chunks[i].c.lane_index == index) {
                *at = d->chunks[i].at;
                return 1;
            }
        if (d->ended)
            return 0;
        run_to(d, d->insns + (d->in_chunk ? rp_exec_left(d->x, 0) : 1));
    }
}

/* An unsigned number: 1, with *END after it. */
static int number(const char *s, unsigned long long *v, char **end)
{
    errno = 0;
    *v = strtoull(s, end, 0);
    return !errno && *end != s && s[strspn(s, " ")] != '-';
}

static const char help_text[] =
    "rnr monitor commands:\n"
    "  when   the replay's position: instructions so far, chunk cpu:index, thread\n"
    "  goto INSN   go to instruction INSN (forward, or from the nearest checkpoint)\n"
    "  goto-chunk CPU:N   go to the start of chunk N of recorded CPU's lane\n"
    "  chunks   the log's chunks up to here, with their predecessors\n"
    "  who-wrote ADDR [LEN]   the last instruction that wrote those bytes\n"
    "  checkpoint   take a checkpoint here (kept until the end), print its number\n"
    "  checkpoints   list the checkpoints and the memory they hold\n"
    "  restart N   go back (or forward) to checkpoint N\n"
    "  diverge   refused: a replay only reproduces the recording\n"
    "  help   this text\n"
    "The replay reproduces a recording: registers and memory are read-only, and\n"
    "writing them is refused. At the end of the log the replay is verified.\n";

static void monitor(dbg *d, const char *cmd)
{
    char text[8192];
    char *end;
    unsigned long long v, v2;
    while (*cmd == ' ')
        cmd++;
    size_t word = strcspn(cmd, " ");
    const char *arg = cmd + word + strspn(cmd + word, " ");
#define IS(w) (word == sizeof(w) - 1 && strncmp(cmd, w, word) == 0)
    if (IS("when")) {
        if (d->ended)
            snprintf(text, sizeof text, "instruction %" PRIu64 ": the end of the log; %s\n", d->insns,
                     d->verdict);
        else
            snprintf(text, sizeof text, "instruction %" PRIu64 ", chunk %u:%" PRIu64 " (log chunk %"
                     PRIu64 ", %" PRIu64 " of its %" PRIu64 " instructions done), thread %u\n",
                     d->insns, d->cur.cpu, d->cur.lane_index, d->cur.seq,
                     d->cur.cs - (d->in_chunk ? rp_exec_left(d->x, 0) : 0), d->cur.cs, d->cur.tid);
    } else if (IS("goto")) {
        if (!number(arg, &v, &end) || end[strspn(end, " ")]) {
            snprintf(text, sizeof text, "usage: monitor goto INSN (an instruction count, as monitor "
                     "when prints it)\n");
        } else {
            go_to_then(d, v, REPLY_GOTO);
            return;
        }
    } else if (IS("goto-chunk")) {
        uint64_t at;
        if (!number(arg, &v, &end) || *end != ':' || !number(end + 1, &v2, &end) ||
            end[strspn(end, " ")] || v > UINT32_MAX) {
            snprintf(text, sizeof text, "usage: monitor goto-chunk CPU:N (chunk N of recorded CPU's "
                     "lane, as monitor when and chunks print them)\n");
        } else if (!chunk_at(d, (uint32_t)v, v2, &at)) {
            snprintf(text, sizeof text, "the log has no chunk %llu:%llu (the replay now stands at "
                     "its end)\n", v, v2);
        } else {
            go_to_then(d, at, REPLY_CHUNK);
            return;
        }
    } else if (IS("chunks")) {
        list_chunks(d, text, sizeof text);
    } else if (IS("who-wrote")) {
        int ok = number(arg, &v, &end);
        v2 = 1;
        if (ok && end[strspn(end, " ")]) {
            ok = number(end, &v2, &end) && v2 >= 1 && v2 <= 4096;
        }
        if (!ok || end[strspn(end, " ")]) {
            snprintf(text, sizeof text, "usage: monitor who-wrote ADDR [LEN] (LEN 1 to 4096, "
                     "default 1)\n");
        } else {
            scan_back(d, SCAN_WRITES, 0, v, v2, REPLY_WHO_WROTE);
            return;
        }
    } else if (IS("checkpoint") && !*arg) {
        uint64_t at = d->insns;
        errno = 0;
        int id = checkpoint(d, 1);
        if (id < 0)
            snprintf(text, sizeof text, "no checkpoint taken: %s\n", errno ? strerror(errno)
                     : "the table of checkpoints is full");
        else
            snprintf(text, sizeof text, "checkpoint %d at instruction %" PRIu64 "\n", id, at);
    } else if (IS("checkpoints") && !*arg) {
        list_checkpoints(d, text, sizeof text);
    } else if (IS("restart")) {
        const ckpt *k = NULL;
        if (number(arg, &v, &end) && !end[strspn(end, " ")])
            for (unsigned i = 0; i < MAX_CKPTS; i++)
                if (d->sh->ck[i].used && d->sh->ck[i].id == v)
                    k = &d->sh->ck[i];
        if (!k) {
            snprintf(text, sizeof text, "usage: monitor restart N (N a checkpoint that monitor "
                     "checkpoints lists)\n");
        } else {
            d->sh->pend.id = k->id;
            go_to_then(d, k->at, REPLY_RESTART);
            return;
        }
    } else if (IS("diverge")) {
        snprintf(text, sizeof text, "diverge: refused. rnr replays a recording and verifies it: "
                 "registers and memory cannot be changed, and there is no mode that lets the "
                 "program run on its own from here\n");
    } else if (IS("help") || !*cmd) {
        snprintf(text, sizeof text, "%s", help_text);
    } else {
        snprintf(text, sizeof text, "unknown monitor command '%.200s' (monitor help lists them)\n", cmd);
    }
#undef IS
    monitor_text(d, text);
}

static void insert_or_remove(dbg *d, const gdb_cmd *c)
{
    int insert = c->kind == GDB_Z_INSERT;
    if (c->type <= 1) {
        if (c->len != 2 && c->len != 4) {
            send_str(d, "E01");     /* RISC-V instructions are 2 or 4 bytes */
            return;
        }
        for (unsigned i = 0; i < d->sh->nbreaks; i++)
            if (d->sh->breaks[i].addr == c->addr) {
                if (!insert)
                    d->sh->breaks[i] = d->sh->breaks[--d->sh->nbreaks];
                send_str(d, "OK");
                return;
            }
        if (insert && d->sh->nbreaks == MAX_BREAKS) {
            send_str(d, "E01");
            return;
        }
        if (insert)
            d->sh->breaks[d->sh->nbreaks++] = (breakpoint){c->addr, (unsigned)c->len, {0}};
        send_str(d, "OK");
        return;
    }
    if (c->len == 0 || c->len > 4096) {
        send_str(d, "E01");
        return;
    }
    for (unsigned i = 0; i < d->sh->nwatches; i++)
        if (d->sh->watches[i].addr == c->addr && d->sh->watches[i].len == c->len &&
            d->sh->watches[i].type == c->type) {
            if (!insert)
                d->sh->watches[i] = d->sh->watches[--d->sh->nwatches];
            send_str(d, "OK");
            return;
        }
    if (insert && d->sh->nwatches == MAX_WATCHES) {
        send_str(d, "E01");
        return;
    }
    if (insert)
        d->sh->watches[d->sh->nwatches++] = (watchpoint){c->addr, c->len, c->type};
    send_str(d, "OK");
}

/* One packet. 1 when the session is over. */
static int command(dbg *d, const char *p, size_t n)
{
    gdb_cmd c;
    gdb_parse(p, n, &c);
    switch (c.kind) {
    case GDB_UNKNOWN:
        send_str(d, "");
        return 0;
    case GDB_BAD:
        fprintf(stderr, "%s: gdb sent a malformed packet '%s'\n", d->name, c.text);
        send_str(d, "E01");
        return 0;
    case GDB_SUPPORTED:
        d->sh->exec_events = c.step;
        sendf(d, "PacketSize=%x;qXfer:features:read+;QStartNoAckMode+;vContSupported+;"
              "ReverseStep+;ReverseContinue+%s", GDB_PKT_MAX, c.step ? ";exec-events+" : "");
        return 0;
    case GDB_NO_ACK:
        send_str(d, "OK");
        d->sh->noack = 1;
        return 0;
    case GDB_HALT_REASON:
        send_str(d, d->sh->stop_reply);
        return 0;
    case GDB_ATTACHED:
        send_str(d, "1");
        return 0;
    case GDB_XFER_FEATURES:
        xfer(d, &c);
        return 0;
    case GDB_READ_REGS:
        read_regs(d);
        return 0;
    case GDB_READ_REG: {
        const rru_ctx *ctx = rp_exec_thread(d->x, reg_thread(d));
        char buf[20];
        if (!ctx || ctx_reg(ctx, c.type, buf) < 0)
            send_str(d, "E01");
        else
            send_str(d, buf);
        return 0;
    }
    case GDB_WRITE:
        fprintf(stderr, "%s: gdb asked to write %s: a replay cannot change what was recorded "
                "(refused)\n", d->name, c.text[0] == 'G' || c.text[0] == 'P' ? "registers" : "memory");
        send_str(d, "E01");
        return 0;
    case GDB_READ_MEM:
        read_mem(d, c.addr, c.len);
        return 0;
    case GDB_VCONT_QUERY:
        send_str(d, "vCont;c;C;s;S");
        return 0;
    case GDB_RESUME: {
        if (d->ended) {
            report_end(d);
            return 0;
        }
        uint32_t step = 0, focus = 0;
        if (c.step) {
            int64_t t = c.tid > 0 ? c.tid : d->sh->cthread > 0 ? d->sh->cthread : d->stop_tid;
            step = thread_alive(d, t) ? (uint32_t)t : d->stop_tid;
            focus = c.others ? 0 : step;
        } else if (!c.others && thread_alive(d, c.tid)) {
            focus = (uint32_t)c.tid;
        }
        resume(d, step, focus);
        return 0;
    }
    case GDB_REVERSE: {
        int64_t t = d->sh->cthread > 0 ? d->sh->cthread : d->stop_tid;
        reverse(d, c.step, thread_alive(d, t) ? (uint32_t)t : d->stop_tid);
        return 0;
    }
    case GDB_Z_INSERT:
    case GDB_Z_REMOVE:
        insert_or_remove(d, &c);
        return 0;
    case GDB_SET_THREAD:
        if (c.tid > 0 && !thread_alive(d, c.tid)) {
            send_str(d, "E01");
            return 0;
        }
        if (c.op == 'g')
            d->sh->gthread = c.tid;
        else
            d->sh->cthread = c.tid;
        send_str(d, "OK");
        return 0;
    case GDB_THREAD_ALIVE:
        send_str(d, thread_alive(d, c.tid) ? "OK" : "E01");
        return 0;
    case GDB_THREADS_FIRST:
        threads(d);
        return 0;
    case GDB_THREADS_NEXT:
        send_str(d, "l");
        return 0;
    case GDB_CURRENT_THREAD:
        sendf(d, "QC%x", reg_thread(d));
        return 0;
    case GDB_THREAD_EXTRA:
        thread_extra(d, c.tid);
        return 0;
    case GDB_MONITOR:
        monitor(d, c.text);
        return 0;
    case GDB_DETACH:
        send_str(d, "OK");
        return 1;
    case GDB_KILL:
        if (p[0] == 'v')
            send_str(d, "OK");      /* vKill wants an answer, k none */
        return 1;
    }
    send_str(d, "");
    return 0;
}

/* Notes the regular files open for reading and their offsets (for
 * restore_files in a process born of the checkpoint about to be taken:
 * fork() shares an open file's offset, which the live process moves). */
static void save_files(dbg *d)
{
    d->nfiles = 0;
    DIR *dir = opendir("/proc/self/fd");
    if (!dir)
        return;
    size_t cap = 0;
    struct dirent *e;
    /* Above the limit: not the program's (valgrind keeps its own there). */
    struct rlimit rl;
    long limit = getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY
                 ? (long)rl.rlim_cur : 1L << 30;
    while ((e = readdir(dir))) {
        int fd = atoi(e->d_name);
        struct stat st;
        if (fd <= 2 || fd >= limit || fd == dirfd(dir) || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
            continue;
        int fl = fcntl(fd, F_GETFL), fdf = fcntl(fd, F_GETFD);
        off_t off = lseek(fd, 0, SEEK_CUR);
        if (fl < 0 || (fl & O_ACCMODE) != O_RDONLY || fdf < 0 || off < 0)
            continue;
        if (d->nfiles == cap) {
            cap = cap ? 2 * cap : 16;
            d->files = xrealloc(d->files, cap * sizeof *d->files);
        }
        d->files[d->nfiles++] = (saved_fd){fd, fdf & FD_CLOEXEC, off};
    }
    closedir(dir);
}

static int accept_one(int listen_fd, pid_t watch, char *err, size_t errlen)
{
    for (;;) {
        struct pollfd pf = {listen_fd, POLLIN, 0};
        int rc = poll(&pf, 1, 200);
        if (rc < 0 && errno != EINTR) {
            snprintf(err, errlen, "waiting for gdb: %s", strerror(errno));
            return -1;
        }
        if (rc > 0) {
            int fd = accept4(listen_fd, NULL, NULL, SOCK_CLOEXEC);
            if (fd >= 0)
                return fd;
            if (errno != EINTR && errno != ECONNABORTED) {
                snprintf(err, errlen, "accepting gdb's connection: %s", strerror(errno));
                return -1;
            }
        }
        siginfo_t si;
        si.si_pid = 0;
        /* waitid: waitpid does not take WNOWAIT (the caller reaps gdb). */
        if (watch > 0 && waitid(P_PID, (id_t)watch, &si, WEXITED | WNOHANG | WNOWAIT) == 0 &&
            si.si_pid == watch) {
            snprintf(err, errlen, "gdb ended without connecting");
            return -1;
        }
    }
}

/* Reads and answers gdb's packets until the session is over. */
static void serve_loop(dbg *d)
{
    dbg_shared *sh = d->sh;
    int over = 0;
    while (!over && d->fd >= 0) {
        if (sh->in_i >= sh->in_n) {
            struct pollfd pf = {d->fd, POLLIN, 0};
            int rc = poll(&pf, 1, 1000);
            if (rc == 0 && kill(sh->supervisor, 0) < 0 && errno == ESRCH)
                break;              /* nobody waits for the session any more */
            if (rc <= 0)
                continue;
            ssize_t n = recv(d->fd, sh->in, sizeof sh->in, 0);
            if (n < 0 && errno == EINTR)
                continue;
            if (n <= 0)
                break;
            sh->in_n = (size_t)n;
            sh->in_i = 0;
        }
        while (sh->in_i < sh->in_n && !over && d->fd >= 0) {
            int ev = gdb_rx_byte(&sh->rx, (uint8_t)sh->in[sh->in_i++]);
            if (ev == GDB_RX_BADSUM && !sh->noack) {
                write_all(d->fd, "-", 1);
            } else if (ev == GDB_RX_PACKET) {
                if (!sh->noack && write_all(d->fd, "+", 1) < 0)
                    break;
                if (sh->rx.overflow) {
                    fprintf(stderr, "%s: gdb sent a packet longer than %u bytes\n", d->name,
                            GDB_PKT_MAX);
                    send_str(d, "E01");
                } else {
                    over = command(d, sh->rx.buf, sh->rx.n);
                }
            }
        }
    }
}

/* The live replay process: the session from the start, or (coming back
 * from restore through snapshot_wait) the command in progress from a
 * checkpoint. Ends the session: its status in sh->result. */
static void live_main(dbg *d) __attribute__((noreturn));
static void live_main(dbg *d)
{
    dbg_shared *sh = d->sh;
    if (setjmp(d->top) == 0) {
        if (checkpoint(d, 1) < 0) {
            fprintf(stderr, "%s: no checkpoint at the start: %s\n", d->name, strerror(errno));
            _exit(3);
        }
        if (next_chunk(d)) {
            d->stop_tid = d->cur.tid;
            snprintf(sh->stop_reply, sizeof sh->stop_reply, "T05thread:%x;", d->cur.tid);
        } else {
            snprintf(sh->stop_reply, sizeof sh->stop_reply, "W00");
        }
    } else {
        /* A checkpoint is the state at its position: anything else would
         * restore it again and again. */
        if (d->insns != sh->restored_at) {
            fprintf(stderr, "%s: internal error: checkpoint of instruction %" PRIu64 " restored "
                    "at instruction %" PRIu64 "\n", d->name, sh->restored_at, d->insns);
            abort();
        }
        if (sh->quiet)
            rp_exec_print_to(d->x, NULL);
        continue_pending(d);
    }
    serve_loop(d);
    sh->result = d->ended && d->failed;
    if (!d->ended)
        fprintf(stderr, "%s: the debugging session ended at instruction %" PRIu64
                " of %" PRIu64 ": the replay was not finished\n", d->name, d->insns,
                rp_exec_instructions(d->x));
    sh->done = 1;
    for (unsigned i = 0; i < MAX_CKPTS; i++)
        if (sh->ck[i].used)
            release(d, &sh->ck[i]);
    fflush(NULL);
    _exit(0);
}

/* The session's first process: waits for the replay's processes (a
 * process group of their own, its children through PR_SET_CHILD_SUBREAPER)
 * to end, and returns the live process's verdict. A process of the group
 * that fails ends them all. */
static int supervise(dbg *d, pid_t group)
{
    int broken = 0;
    for (;;) {
        siginfo_t si;
        memset(&si, 0, sizeof si);
        if (waitid(P_PGID, (id_t)group, &si, WEXITED) < 0) {
            if (errno == EINTR)
                continue;
            break;                  /* ECHILD: all ended */
        }
        if ((si.si_code != CLD_EXITED || si.si_status != 0) && !broken) {
            broken = 1;
            fprintf(stderr, "%s: a replay process %s %d: the session ends\n", d->name,
                    si.si_code == CLD_EXITED ? "exited with status" : "was killed by signal",
                    si.si_status);
            kill(-group, SIGKILL);
        }
    }
    prctl(PR_SET_CHILD_SUBREAPER, 0);
    if (!d->sh->done || broken)
        return 1;
    return d->sh->result;
}

int dbg_serve(dbg *d, int listen_fd, pid_t watch, char *err, size_t errlen)
{
    int fd = accept_one(listen_fd, watch, err, errlen);
    close(listen_fd);
    if (fd < 0)
        return 2;
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    d->fd = fd;
    gdb_rx_init(&d->sh->rx);
    d->sh->supervisor = getpid();
    if (prctl(PR_SET_CHILD_SUBREAPER, 1) < 0) {
        snprintf(err, errlen, "PR_SET_CHILD_SUBREAPER: %s", strerror(errno));
        return 2;
    }
    fflush(NULL);
    pid_t live = fork();
    if (live < 0) {
        snprintf(err, errlen, "fork: %s", strerror(errno));
        return 2;
    }
    if (live == 0) {
        setpgid(0, 0);
        live_main(d);
    }
    setpgid(live, live);
    close(d->fd);
    d->fd = -1;
    return supervise(d, live);
}
