/* debugger/server.c: the gdb remote-protocol server on a serial replay
 * (debugger/server.h). */
#include "debugger/server.h"

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
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

struct dbg {
    const char *name;
    dbg_options o;              /* to open the replay again (reverse execution) */
    char *dir, *program;
    rp_exec *x;
    rnr_reader *r;
    rp_serial *s;
    int fd;
    gdb_rx rx;
    int noack;
    int in_chunk;               /* cur begun, instructions left */
    rp_chunk cur;               /* the chunk in progress, or the last one */
    uint64_t insns;             /* instructions replayed so far, all threads */
    int ended;                  /* the log is done (or the replay failed) */
    int failed;                 /* 1: diverged or final checks failed */
    char verdict[1400];         /* the end's one line */
    breakpoint breaks[MAX_BREAKS];
    unsigned nbreaks;
    int armed;                  /* the breakpoints are written into guest memory */
    int hit;                    /* run() stopped at an EBREAK */
    watchpoint watches[MAX_WATCHES];
    unsigned nwatches;
    int64_t gthread;            /* Hg: registers of this thread (0: the stopped one) */
    int64_t cthread;            /* Hc: plain s steps this thread (0: the stopped one) */
    uint32_t stop_tid;
    char stop_reply[128];
    thread_pos *pos;
    size_t npos;
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
    rp_exec_options eo = {1, o->program, o->out};
    d->x = rp_exec_open(o->dir, &eo, err, errlen);
    if (!d->x)
        goto fail;
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
    free(d->dir);
    free(d->program);
    free(d);
}

const char *dbg_program(const dbg *d) { return rp_exec_program(d->x); }

int dbg_listen(const char *host, unsigned port, unsigned *bound, char *err, size_t errlen)
{
    struct addrinfo hints, *ai = NULL;
    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
    char ps[16];
    snprintf(ps, sizeof ps, "%u", port);
    if (!host || !*host)
        host = "127.0.0.1";
    int rc = getaddrinfo(host, ps, &hints, &ai);
    if (rc != 0) {
        snprintf(err, errlen, "%s: %s", host, gai_strerror(rc));
        return -1;
    }
    int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
    int one = 1;
    if (fd >= 0)
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (fd < 0 || bind(fd, ai->ai_addr, ai->ai_addrlen) < 0 || listen(fd, 1) < 0) {
        snprintf(err, errlen, "%s:%u: %s", host, port, strerror(errno));
        if (fd >= 0)
            close(fd);
        freeaddrinfo(ai);
        return -1;
    }
    freeaddrinfo(ai);
    struct sockaddr_storage sa;
    socklen_t len = sizeof sa;
    getsockname(fd, (struct sockaddr *)&sa, &len);
    *bound = ntohs(sa.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&sa)->sin6_port
                                            : ((struct sockaddr_in *)&sa)->sin_port);
    return fd;
}

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
        if (d->noack)
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

/* Begins the log's next chunk. 1 begun, 0 the replay ended. */
static int next_chunk(dbg *d)
{
    char msg[RP_MSG_MAX];
    if (d->ended)
        return 0;
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
    return 1;
}

/* Runs at most N instructions of the current chunk. */
static void run(dbg *d, uint64_t n)
{
    char msg[RP_MSG_MAX];
    uint64_t left = rp_exec_left(d->x, 0);
    int rc = rp_exec_run(d->x, 0, n, msg, sizeof msg);
    d->insns += left - (rc == 1 || rc == 2 ? rp_exec_left(d->x, 0) : 0);
    d->hit = rc == 2;
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
    return d->gthread > 0 && thread_alive(d, d->gthread) ? (uint32_t)d->gthread : d->stop_tid;
}

/* A breakpoint at PC? */
static int break_at(const dbg *d, uint64_t pc)
{
    for (unsigned i = 0; i < d->nbreaks; i++)
        if (d->breaks[i].addr == pc)
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
    if (d->armed || !d->nbreaks)
        return 0;
    unsigned i;
    for (i = 0; i < d->nbreaks; i++) {
        breakpoint *b = &d->breaks[i];
        unsigned n = b->kind == 2 ? 2 : 4;
        if (rru_mem_read(m, b->addr, b->orig, n) < 0)
            break;
        /* Two breakpoints on one instruction: the first one's bytes. */
        for (unsigned j = 0; j < i; j++)
            if (d->breaks[j].addr == b->addr)
                memcpy(b->orig, d->breaks[j].orig, n);
        if (rru_mem_write(m, b->addr, n == 2 ? cebreak : ebreak, n) < 0)
            break;
    }
    if (i < d->nbreaks) {
        while (i-- > 0)
            rru_mem_write(m, d->breaks[i].addr, d->breaks[i].orig, d->breaks[i].kind == 2 ? 2 : 4);
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
    for (unsigned i = d->nbreaks; i-- > 0;)
        rru_mem_write(m, d->breaks[i].addr, d->breaks[i].orig, d->breaks[i].kind == 2 ? 2 : 4);
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
    for (unsigned i = 0; i < d->nwatches; i++) {
        const watchpoint *w = &d->watches[i];
        int want = w->type == 2 ? RRU_ACCESS_WRITE : w->type == 3 ? RRU_ACCESS_READ
                                                                   : RRU_ACCESS_READ | RRU_ACCESS_WRITE;
        if (!(kind & want) || a >= w->addr + w->len || w->addr >= a + size)
            continue;
        *report = a > w->addr ? a : w->addr;
        return (int)i;
    }
    return -1;
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
            if (gdb_rx_byte(&d->rx, (uint8_t)buf[i]) == GDB_RX_INTERRUPT)
                return 1;
    }
}

/* Sends the stop reply (also kept for '?'). */
static void stop(dbg *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void stop(dbg *d, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(d->stop_reply, sizeof d->stop_reply, fmt, ap);
    va_end(ap);
    d->gthread = 0;
    send_str(d, d->stop_reply);
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
        snprintf(d->stop_reply, sizeof d->stop_reply, "W01");
    else if (drv_replay_ended(rp_exec_proc(d->x), &end, &status) && end == DRV_SIGNALED)
        snprintf(d->stop_reply, sizeof d->stop_reply, "X%02x", status & 0xff);
    else
        snprintf(d->stop_reply, sizeof d->stop_reply, "W%02x", status & 0xff);
    send_str(d, d->stop_reply);
}

/* Resumes the replay: a step of thread STEP_TID (0: continue) until the
 * next stop, which is reported. When gdb lets only thread FOCUS move (it
 * steps it over a breakpoint, with a step or a temporary breakpoint, and
 * expects no other thread to stop), the other threads' chunks still run
 * as the log needs them, their breakpoints and watchpoints ignored. */
static void resume(dbg *d, uint32_t step_tid, uint32_t focus)
{
    int first = 1;
    uint64_t polls = 0;
    for (;;) {
        if (!d->in_chunk && !next_chunk(d)) {
            report_end(d);
            return;
        }
        uint32_t tid = d->cur.tid;
        d->stop_tid = tid;
        /* Nothing to look for but breakpoints: whole slices, as a plain
         * replay runs, with the breakpoints armed (not over the first
         * instruction when it stands on one: that one is stepped). */
        if (!step_tid && !d->nwatches &&
            !(first && break_at(d, rp_exec_live(d->x, 0, NULL)->pc)) && arm(d) == 0) {
            first = 0;
            run(d, SLICE);
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
        int w = d->nwatches && look ? watch_hit(d, &waddr) : -1;
        if (w >= 0) {
            unsigned t = d->watches[w].type;
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

/* ---- going back: re-execution from the start ----
 *
 * The replay is deterministic, so the state at global instruction P (P
 * instructions of the log's order executed) is found again by opening the
 * replay afresh and running P instructions. A reverse command first scans
 * forward from the start up to where the replay stands, one instruction at
 * a time, noting the last position that satisfies it (a breakpoint, a
 * watched access, the stepped thread's instruction), then runs to that
 * position. The start is the only checkpoint for now. The guest's output
 * is compared again on the way (the final checks stay whole) but printed
 * only the first time. */

/* Opens the replay again at instruction 0. 0, or -1 (the replay ends failed). */
static int reopen(dbg *d)
{
    char err[1024];
    rp_serial_free(d->s);
    d->s = NULL;
    if (d->r)
        rnr_reader_close(d->r);
    d->r = NULL;
    rp_exec_free(d->x);
    rp_exec_options eo = {1, d->program, NULL};
    d->x = rp_exec_open(d->dir, &eo, err, sizeof err);
    if (d->x)
        d->r = rp_exec_open_log(d->x, d->o.kind, err, sizeof err);
    if (d->r)
        d->s = rp_serial_new(d->r, err, sizeof err);
    d->insns = 0;
    d->in_chunk = 0;
    d->armed = 0;                   /* the new replay's memory holds none */
    d->ended = 0;
    d->failed = 0;
    d->npos = 0;
    if (!d->s) {
        end_with(d, 1, err);
        return -1;
    }
    return 0;
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

typedef struct scan_hit {
    uint64_t at;                /* position; UINT64_MAX: none */
    uint32_t tid;
    uint64_t pc, addr;
    int watch;                  /* the watchpoint's index, or -1 */
} scan_hit;

enum { SCAN_STOPS, SCAN_THREAD, SCAN_WRITES };

/* Re-executes from the start up to instruction END, one instruction at a
 * time, and returns the last position before END at which WHAT holds:
 * SCAN_STOPS a breakpoint or a watched access, SCAN_THREAD thread TID's
 * next instruction, SCAN_WRITES a write to [ADDR, ADDR + LEN). The replay
 * stands at END after it. */
static scan_hit scan(dbg *d, uint64_t end, int what, uint32_t tid, uint64_t addr, uint64_t len)
{
    scan_hit h = {UINT64_MAX, 0, 0, 0, -1};
    if (reopen(d) < 0)
        return h;
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
        if (what == SCAN_STOPS && !d->nwatches) {
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
        if (what == SCAN_STOPS) {
            w = d->nwatches ? watch_hit(d, &a) : -1;
            hit = w >= 0 || break_at(d, c->pc);
        } else if (what == SCAN_THREAD) {
            hit = d->cur.tid == tid;
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

/* Goes to instruction AT: forward from here, or again from the start. */
static void go_to(dbg *d, uint64_t at)
{
    if (at < d->insns || d->ended)
        reopen(d);
    run_to(d, at);
}

/* bc, bs: back to the last stop before here (STEP: thread TID's previous
 * instruction), reported as a stop; the start of the log when there is
 * none ("replaylog:begin"). */
static void reverse(dbg *d, int step, uint32_t tid)
{
    uint64_t now = d->insns;
    scan_hit h = scan(d, now, step ? SCAN_THREAD : SCAN_STOPS, tid, 0, 0);
    /* A watched access is reported right after it, in the writer: gdb
     * steps that thread back over it (as it steps forward over one). */
    go_to(d, h.at == UINT64_MAX ? 0 : h.watch >= 0 ? h.at + 1 : h.at);
    if (d->ended) {
        report_end(d);
        return;
    }
    if (h.at == UINT64_MAX)
        stop(d, "T05replaylog:begin;thread:%x;", d->cur.tid);
    else if (h.watch >= 0) {
        unsigned t = d->watches[h.watch].type;
        d->stop_tid = h.tid;
        stop(d, "T05%s:%" PRIx64 ";thread:%x;", t == 2 ? "watch" : t == 3 ? "rwatch" : "awatch",
             h.addr > d->watches[h.watch].addr ? h.addr : d->watches[h.watch].addr, h.tid);
    } else
        stop(d, "T05thread:%x;", d->cur.tid);
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

static void monitor(dbg *d, const char *cmd)
{
    char text[2048];
    while (*cmd == ' ')
        cmd++;
    if (strcmp(cmd, "when") == 0) {
        if (d->ended)
            snprintf(text, sizeof text, "instruction %" PRIu64 ": the end of the log; %s\n", d->insns,
                     d->verdict);
        else
            snprintf(text, sizeof text, "instruction %" PRIu64 ", chunk %u:%" PRIu64 " (log chunk %"
                     PRIu64 ", %" PRIu64 " of its %" PRIu64 " instructions done), thread %u\n",
                     d->insns, d->cur.cpu, d->cur.lane_index, d->cur.seq,
                     d->cur.cs - (d->in_chunk ? rp_exec_left(d->x, 0) : 0), d->cur.cs, d->cur.tid);
    } else if (strncmp(cmd, "goto", 4) == 0 && (cmd[4] == ' ' || !cmd[4])) {
        char *end;
        errno = 0;
        unsigned long long at = strtoull(cmd + 4, &end, 0);
        while (*end == ' ')
            end++;
        if (errno || *end || end == cmd + 4) {
            snprintf(text, sizeof text, "usage: monitor goto INSN (an instruction count, as monitor "
                     "when prints it)\n");
        } else {
            go_to(d, at);
            snprintf(text, sizeof text, "at instruction %" PRIu64 ", thread %u%s (gdb caches "
                     "registers: 'maint flush register-cache' or a step shows the new state)\n",
                     d->insns, d->cur.tid, d->ended ? ": the end of the log" : "");
        }
    } else if (strncmp(cmd, "who-wrote", 9) == 0 && (cmd[9] == ' ' || !cmd[9])) {
        char *end;
        unsigned long long addr = strtoull(cmd + 9, &end, 0), len = 1;
        int ok = end != cmd + 9;
        if (ok && *end == ' ' && end[strspn(end, " ")]) {
            char *e2;
            len = strtoull(end, &e2, 0);
            ok = e2 != end && len >= 1 && len <= 4096;
            end = e2;
        }
        while (ok && *end == ' ')
            end++;
        if (!ok || *end) {
            snprintf(text, sizeof text, "usage: monitor who-wrote ADDR [LEN] (LEN 1 to 4096, "
                     "default 1)\n");
        } else {
            uint64_t now = d->insns;
            uint32_t tid = d->stop_tid;
            scan_hit h = scan(d, now, SCAN_WRITES, 0, addr, len);
            d->stop_tid = tid;
            if (h.at == UINT64_MAX)
                snprintf(text, sizeof text, "no instruction wrote 0x%llx (%llu byte%s) before "
                         "instruction %" PRIu64 " (system calls' writes are not seen)\n", addr,
                         len, len == 1 ? "" : "s", now);
            else
                snprintf(text, sizeof text, "0x%llx (%llu byte%s) was last written before "
                         "instruction %" PRIu64 " by thread %u at pc 0x%" PRIx64 ", instruction %"
                         PRIu64 " ('monitor goto %" PRIu64 "' stands right after it)\n", addr, len,
                         len == 1 ? "" : "s", now, h.tid, h.pc, h.at, h.at + 1);
        }
    } else if (strcmp(cmd, "help") == 0 || !*cmd) {
        snprintf(text, sizeof text,
                 "rnr monitor commands:\n"
                 "  when   the replay's position: instructions so far, chunk cpu:index, thread\n"
                 "  goto INSN   go to instruction INSN (forward, or again from the start)\n"
                 "  who-wrote ADDR [LEN]   the last instruction that wrote those bytes\n"
                 "  help   this text\n"
                 "The replay reproduces a recording: registers and memory are read-only, and\n"
                 "writing them is refused. At the end of the log the replay is verified.\n");
    } else {
        snprintf(text, sizeof text, "unknown monitor command '%.200s' (monitor help lists them)\n", cmd);
    }
    console(d, text);
    send_str(d, "OK");
}

static void insert_or_remove(dbg *d, const gdb_cmd *c)
{
    int insert = c->kind == GDB_Z_INSERT;
    if (c->type <= 1) {
        if (c->len != 2 && c->len != 4) {
            send_str(d, "E01");     /* RISC-V instructions are 2 or 4 bytes */
            return;
        }
        for (unsigned i = 0; i < d->nbreaks; i++)
            if (d->breaks[i].addr == c->addr) {
                if (!insert)
                    d->breaks[i] = d->breaks[--d->nbreaks];
                send_str(d, "OK");
                return;
            }
        if (insert && d->nbreaks == MAX_BREAKS) {
            send_str(d, "E01");
            return;
        }
        if (insert)
            d->breaks[d->nbreaks++] = (breakpoint){c->addr, (unsigned)c->len, {0}};
        send_str(d, "OK");
        return;
    }
    if (c->len == 0 || c->len > 4096) {
        send_str(d, "E01");
        return;
    }
    for (unsigned i = 0; i < d->nwatches; i++)
        if (d->watches[i].addr == c->addr && d->watches[i].len == c->len &&
            d->watches[i].type == c->type) {
            if (!insert)
                d->watches[i] = d->watches[--d->nwatches];
            send_str(d, "OK");
            return;
        }
    if (insert && d->nwatches == MAX_WATCHES) {
        send_str(d, "E01");
        return;
    }
    if (insert)
        d->watches[d->nwatches++] = (watchpoint){c->addr, c->len, c->type};
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
        sendf(d, "PacketSize=%x;qXfer:features:read+;QStartNoAckMode+;vContSupported+;"
              "ReverseStep+;ReverseContinue+", GDB_PKT_MAX);
        return 0;
    case GDB_NO_ACK:
        send_str(d, "OK");
        d->noack = 1;
        return 0;
    case GDB_HALT_REASON:
        send_str(d, d->stop_reply);
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
            int64_t t = c.tid > 0 ? c.tid : d->cthread > 0 ? d->cthread : d->stop_tid;
            step = thread_alive(d, t) ? (uint32_t)t : d->stop_tid;
            focus = c.others ? 0 : step;
        } else if (!c.others && thread_alive(d, c.tid)) {
            focus = (uint32_t)c.tid;
        }
        resume(d, step, focus);
        return 0;
    }
    case GDB_REVERSE: {
        int64_t t = d->cthread > 0 ? d->cthread : d->stop_tid;
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
            d->gthread = c.tid;
        else
            d->cthread = c.tid;
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
        if (watch > 0 && waitpid(watch, NULL, WNOHANG | WNOWAIT | __WALL) == watch) {
            snprintf(err, errlen, "gdb ended without connecting");
            return -1;
        }
    }
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
    gdb_rx_init(&d->rx);
    if (next_chunk(d)) {
        d->stop_tid = d->cur.tid;
        snprintf(d->stop_reply, sizeof d->stop_reply, "T05thread:%x;", d->cur.tid);
    } else {
        snprintf(d->stop_reply, sizeof d->stop_reply, "W00");
    }
    char buf[4096];
    int over = 0;
    while (!over && d->fd >= 0) {
        ssize_t n = recv(d->fd, buf, sizeof buf, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        for (ssize_t i = 0; i < n && !over && d->fd >= 0; i++) {
            int ev = gdb_rx_byte(&d->rx, (uint8_t)buf[i]);
            if (ev == GDB_RX_BADSUM && !d->noack) {
                write_all(d->fd, "-", 1);
            } else if (ev == GDB_RX_PACKET) {
                if (!d->noack && write_all(d->fd, "+", 1) < 0)
                    break;
                if (d->rx.overflow) {
                    fprintf(stderr, "%s: gdb sent a packet longer than %u bytes\n", d->name,
                            GDB_PKT_MAX);
                    send_str(d, "E01");
                } else {
                    over = command(d, d->rx.buf, d->rx.n);
                }
            }
        }
    }
    if (d->ended && d->failed)
        return 1;
    if (!d->ended)
        fprintf(stderr, "%s: the debugging session ended at instruction %" PRIu64
                " of %" PRIu64 ": the replay was not finished\n", d->name, d->insns,
                rp_exec_instructions(d->x));
    return 0;
}
