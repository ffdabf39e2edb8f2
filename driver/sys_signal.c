/* driver/sys_signal.c: actions, masks, alternate stacks, kill/tkill/tgkill
 * to the process itself, and signal handlers. An ignored signal changes
 * nothing; one without a handler ends the process with its default action
 * (abort() ends with SIGABRT, status 134, as in a shell); a blocked one
 * waits as pending. A handler starts at one of two kinds of points:
 *
 * - A signal a thread sends to itself (raise, abort, pthread_kill of
 *   itself, kill of its own process, a pending one its own sigprocmask or
 *   sigreturn unblocks) is taken when that call returns.
 * - One from elsewhere (another thread, the interval timer, SIGPIPE, whose
 *   write replay does not execute) is taken at the target's next system
 *   call entry instead of the call, which runs after the handler; a wait
 *   the target is blocked in ends at once (logged as ERESTARTSYS, so its
 *   ECALL runs again and takes the signal there) and then returns EINTR,
 *   or runs again under SA_RESTART where Linux restarts it.
 *
 * Why replay starts every handler at the same instruction with the same
 * frame: the first kind happens inside an emulated call that replay
 * executes again at the same point of the thread. The second kind is
 * written in the thread's own stream of the input log, as the SYSCALL
 * record of the call it replaced (signal_mark), and replay enters the
 * handler where it reads that record; the senders and the timer do nothing
 * in replay. The frame holds the thread's registers (equal at every call,
 * which the CHECK records verify), its mask and alternate stack (changed
 * only by the thread's own calls and handlers, replayed in its order), and
 * the action of the signal and the return page, changed only by
 * rt_sigaction: an ORD_GLOBAL call, so every chunk, the call's own chunk
 * included, is on the same side of it in record and replay. A sender
 * reads the target's mask to choose between pending and delivered; kill,
 * tkill and tgkill are ORD_GLOBAL too, so it reads what the recording
 * read. */
#include <stdio.h>

#include "driver/internal.h"

#define SIGBIT(sig) (1ull << ((sig) - 1))
#define UNBLOCKABLE (SIGBIT(LX_SIGKILL) | SIGBIT(LX_SIGSTOP))

const char *signal_name(int sig)
{
    static const char *const names[] = {
        NULL, "SIGHUP", "SIGINT", "SIGQUIT", "SIGILL", "SIGTRAP", "SIGABRT", "SIGBUS",
        "SIGFPE", "SIGKILL", "SIGUSR1", "SIGSEGV", "SIGUSR2", "SIGPIPE", "SIGALRM", "SIGTERM",
        "SIGSTKFLT", "SIGCHLD", "SIGCONT", "SIGSTOP", "SIGTSTP", "SIGTTIN", "SIGTTOU", "SIGURG",
        "SIGXCPU", "SIGXFSZ", "SIGVTALRM", "SIGPROF", "SIGWINCH", "SIGIO", "SIGPWR", "SIGSYS",
        "SIGCANCEL", "SIGSETXID",   /* glibc's own: pthread_cancel, setuid in threads */
    };
    static char buf[32];
    if (sig > 0 && sig < (int)(sizeof names / sizeof names[0]))
        return names[sig];
    snprintf(buf, sizeof buf, "signal %d", sig);
    return buf;
}

/* Signals whose default action does nothing (stop signals included: the
 * simulated process cannot be stopped). */
static int default_ignores(int sig)
{
    return sig == LX_SIGCHLD || sig == LX_SIGCONT || sig == LX_SIGURG || sig == LX_SIGWINCH ||
           sig == LX_SIGTSTP || sig == LX_SIGTTIN || sig == LX_SIGTTOU || sig == LX_SIGSTOP;
}

/* The signal takes effect without a handler: ignored, or the process
 * ends, named by thread WHO at PC. */
static int64_t act_at(drv_proc *p, int sig, const thread *who, uint64_t pc)
{
    uint64_t h = p->cur->sigactions[sig].handler;
    if (sig != LX_SIGKILL && (h == LX_SIG_IGN || (h == LX_SIG_DFL && default_ignores(sig))))
        return 0;
    proc_exit(p, DRV_SIGNALED, sig, who, pc);
    return SC_GONE;
}

static int has_handler(const drv_proc *p, int sig)
{
    uint64_t h = p->cur->sigactions[sig].handler;
    return sig != LX_SIGKILL && h != LX_SIG_DFL && h != LX_SIG_IGN;
}

/* A signal with a handler for thread T from elsewhere: T takes it at its
 * next system call entry (signal_take_async), and a wait T is blocked in
 * ends now, its call to be run again (where the signal is taken). Replay
 * does nothing here: the input log says where T took it. */
static int64_t signal_async(drv_proc *p, thread *t, int sig, int code, uint64_t now)
{
    if (!p->m)
        return 0;
    t->async |= SIGBIT(sig);
    t->async_code[sig] = code;
    if (p->chld_pid) {
        t->async_chld_pid = p->chld_pid;
        t->async_chld_status = p->chld_status;
    }
    if (t->state == THR_BLOCKED) {
        if (t->wait == WAIT_FUTEX)
            futex_dequeue(p, t);
        t->interrupted = 1;
        sched_restart(p, t, now);
    }
    return 0;
}

/* The signal takes effect on thread T (not blocking it), inside a system
 * call of FROM (or of T). A handler runs when that call returns if it is
 * T's own call (a second one for the same call waits as pending: the first
 * handler's sigreturn looks again), else at T's next call entry. */
static int64_t act(drv_proc *p, thread *t, int sig, thread *from, int code)
{
    if (has_handler(p, sig)) {
        if (code != -1 && t == from && p->sys_thread == t) {
            if (t->deliver) {
                t->pending |= SIGBIT(sig);
                return 0;
            }
            t->deliver = sig;
            t->deliver_code = code;
            t->deliver_chld_pid = t->async_chld_pid;
            t->deliver_chld_status = t->async_chld_status;
            return 0;
        }
        return signal_async(p, t, sig, code == -1 ? LX_SI_USER : code, from ? sched_now(p, from) : 0);
    }
    thread *who = from && from->proc == t->proc ? from : t;
    return act_at(p, sig, who, who->state == THR_RUNNING ? who->block_pc : who->ctx.pc);
}

int64_t signal_send(drv_proc *p, thread *to, int sig, thread *from, int code)
{
    if (!to) {
        /* Process-directed: the sender if it accepts it, else the first
         * live thread that does, else pending on the sender. */
        to = from;
        if (to->sigmask & SIGBIT(sig)) {
            for (size_t i = 0; i < p->nalive; i++) {
                thread *c = p->alive[i];
                if (c->state != THR_DEAD && c->proc == p->cur && !(c->sigmask & SIGBIT(sig))) {
                    to = c;
                    break;
                }
            }
        }
    }
    uint64_t h = p->cur->sigactions[sig].handler;
    if (sig != LX_SIGKILL && (h == LX_SIG_IGN || (h == LX_SIG_DFL && default_ignores(sig))))
        return 0;   /* discarded even while blocked, as Linux does */
    if ((to->sigmask & SIGBIT(sig)) && sig != LX_SIGKILL) {
        /* A child's end keeps its siginfo while pending (the first one's:
         * later ones merge into it, as in Linux). */
        if (p->chld_pid && !(to->pending & SIGBIT(sig))) {
            to->pending_chld_sig = sig;
            to->pending_chld_code = code;
            to->pending_chld_pid = p->chld_pid;
            to->pending_chld_status = p->chld_status;
        }
        to->pending |= SIGBIT(sig);
        return 0;
    }
    return act(p, to, sig, from, code);
}

int64_t signal_check_pending(drv_proc *p, thread *t)
{
    uint64_t ready = t->pending & ~t->sigmask;
    if (!ready)
        return 0;
    int sig = __builtin_ctzll(ready) + 1;
    t->pending &= ~SIGBIT(sig);
    if (sig == t->pending_chld_sig) {
        /* A child's end: its siginfo as it was sent. */
        t->pending_chld_sig = 0;
        t->async_chld_pid = t->pending_chld_pid;
        t->async_chld_status = t->pending_chld_status;
        return act(p, t, sig, t, t->pending_chld_code);
    }
    /* Otherwise its sender's code is not kept: a pending signal came from
     * kill, tkill or tgkill, and the handler is told SI_TKILL. */
    return act(p, t, sig, t, LX_SI_TKILL);
}

/* The thread a process-directed SIGALRM goes to, as from kill(2) sent
 * from outside: the first live one that does not block it; NULL if all do. */
static thread *alarm_taker(const drv_proc *p, const process *pr)
{
    for (size_t i = 0; i < p->nalive; i++)
        if (p->alive[i]->state != THR_DEAD && p->alive[i]->proc == pr &&
            !(p->alive[i]->sigmask & SIGBIT(LX_SIGALRM)))
            return p->alive[i];
    return NULL;
}

int signal_timer_void(const drv_proc *p)
{
    for (size_t i = 0; i < p->nprocs; i++) {
        const process *pr = p->procs[i];
        if (!pr->ended && pr->itimer_at != UINT64_MAX &&
            pr->sigactions[LX_SIGALRM].handler != LX_SIG_IGN && alarm_taker(p, pr))
            return 0;
    }
    return 1;
}

/* rnr runs no handlers, so the timer's SIGALRM ends the process unless
 * ignored. Blocked by every thread, it is dropped instead of left pending
 * (with a warning): replay does not simulate time, so nothing there could
 * make it pending, and a later unblocking would diverge. */
void signal_timer(drv_proc *p)
{
    const int sig = LX_SIGALRM;
    if (p->cur->sigactions[sig].handler == LX_SIG_IGN)
        return;
    thread *to = alarm_taker(p, p->cur);
    if (!to) {
        proc_warn_once(p, WARN_TIMER_BLOCKED,
                       "SIGALRM of the interval timer is blocked by every thread: rnr drops it "
                       "(Linux would leave it pending)");
        return;
    }
    if (has_handler(p, sig)) {
        (void)signal_async(p, to, sig, LX_SI_KERNEL, rru_machine_time(p->m));
        return;
    }
    (void)act_at(p, sig, to, sched_ctx(p, to)->pc);
}

static int64_t valid_sig(int64_t sig) { return sig >= 1 && sig <= LX_NSIG; }

static int map_sigtramp(drv_proc *p);

int64_t sc_rt_sigaction(drv_proc *p, thread *t, const uint64_t a[6])
{
    (void)t;
    int64_t sig = (int64_t)(int32_t)a[0];
    if (a[3] != 8 || !valid_sig(sig))
        return -LX_EINVAL;
    if (a[1] && (sig == LX_SIGKILL || sig == LX_SIGSTOP))
        return -LX_EINVAL;
    /* struct sigaction (no sa_restorer on RISC-V): handler, flags, mask. */
    uint8_t nb[24];
    if (a[1]) {
        int64_t rc = guest_read(p, a[1], nb, sizeof nb);
        if (rc < 0)
            return rc;
    }
    if (a[2]) {
        sigaction_state *o = &p->cur->sigactions[sig];
        uint8_t ob[24];
        for (int i = 0; i < 8; i++) {
            ob[i] = (uint8_t)(o->handler >> (8 * i));
            ob[8 + i] = (uint8_t)(o->flags >> (8 * i));
            ob[16 + i] = (uint8_t)(o->mask >> (8 * i));
        }
        int64_t rc = guest_write(p, a[2], ob, sizeof ob);
        if (rc < 0)
            return rc;
    }
    if (a[1]) {
        sigaction_state n = {0, 0, 0};
        for (int i = 7; i >= 0; i--) {
            n.handler = n.handler << 8 | nb[i];
            n.flags = n.flags << 8 | nb[8 + i];
            n.mask = n.mask << 8 | nb[16 + i];
        }
        n.mask &= ~UNBLOCKABLE;
        p->cur->sigactions[sig] = n;
        if (n.handler != LX_SIG_DFL && n.handler != LX_SIG_IGN && map_sigtramp(p) < 0)
            return -LX_ENOMEM;
        /* Setting SIG_IGN (or a default that ignores) discards pending ones. */
        if (n.handler == LX_SIG_IGN || (n.handler == LX_SIG_DFL && default_ignores((int)sig)))
            for (size_t i = 0; i < p->nalive; i++)
                if (p->alive[i]->proc == p->cur) {
                    p->alive[i]->pending &= ~SIGBIT(sig);
                    if (p->alive[i]->pending_chld_sig == (int)sig)
                        p->alive[i]->pending_chld_sig = 0;
                }
    }
    return 0;
}

int64_t sc_rt_sigprocmask(drv_proc *p, thread *t, const uint64_t a[6])
{
    int64_t how = (int64_t)(int32_t)a[0];
    if (a[3] != 8)
        return -LX_EINVAL;
    uint64_t set = 0;
    if (a[1]) {
        uint8_t b[8];
        int64_t rc = guest_read(p, a[1], b, 8);
        if (rc < 0)
            return rc;
        for (int i = 7; i >= 0; i--)
            set = set << 8 | b[i];
        if (how != LX_SIG_BLOCK && how != LX_SIG_UNBLOCK && how != LX_SIG_SETMASK)
            return -LX_EINVAL;
    }
    if (a[2]) {
        int64_t rc = guest_write_u64(p, a[2], t->sigmask);
        if (rc < 0)
            return rc;
    }
    if (a[1]) {
        if (how == LX_SIG_BLOCK)
            t->sigmask |= set;
        else if (how == LX_SIG_UNBLOCK)
            t->sigmask &= ~set;
        else
            t->sigmask = set;
        t->sigmask &= ~UNBLOCKABLE;
        int64_t rc = signal_check_pending(p, t);
        if (rc == SC_GONE)
            return rc;
    }
    return 0;
}

/* rt_sigsuspend: the mask at A0 is in force until a signal's handler
 * runs; the call then ends with EINTR and the handler's return restores
 * the mask before the call (its frame saves that one). A signal already
 * pending and unblocked by the mask is taken at once; otherwise the
 * thread waits (WAIT_SIGNAL) and the signal that ends the wait is taken
 * at the call's next entry (signal_take_async), its mask still in force.
 * A replay sees the first kind executed again here, and the second kind
 * as the call's ERESTARTSYS and mark (signal_replay_mark applies the mask
 * there). */
int64_t sc_rt_sigsuspend(drv_proc *p, thread *t, const uint64_t a[6])
{
    if (a[1] != 8)
        return -LX_EINVAL;
    uint64_t set;
    int64_t rc = guest_read_u64(p, a[0], &set);
    if (rc < 0)
        return rc;
    if (!t->suspending) {
        t->suspend_saved = t->sigmask;
        t->suspending = 1;
    }
    t->sigmask = set & ~UNBLOCKABLE;
    if ((rc = signal_check_pending(p, t)) == SC_GONE)
        return rc;
    if (t->deliver)
        return -LX_EINTR;
    if (!p->m)
        return SC_BLOCKED;   /* a replay: the call never returned in the recording */
    sched_block(p, t, WAIT_SIGNAL, UINT64_MAX);
    return SC_BLOCKED;
}

int64_t sc_sigaltstack(drv_proc *p, thread *t, const uint64_t a[6])
{
    /* stack_t: ss_sp (8), ss_flags (4 + 4 padding), ss_size (8). */
    uint8_t nb[24];
    if (a[0]) {
        int64_t rc = guest_read(p, a[0], nb, sizeof nb);
        if (rc < 0)
            return rc;
    }
    if (a[1]) {
        uint8_t ob[24] = {0};
        for (int i = 0; i < 8; i++) {
            ob[i] = (uint8_t)(t->altstack_sp >> (8 * i));
            ob[16 + i] = (uint8_t)(t->altstack_size >> (8 * i));
        }
        uint32_t fl = (uint32_t)t->altstack_flags;
        for (int i = 0; i < 4; i++)
            ob[8 + i] = (uint8_t)(fl >> (8 * i));
        int64_t rc = guest_write(p, a[1], ob, sizeof ob);
        if (rc < 0)
            return rc;
    }
    if (a[0]) {
        uint64_t sp = 0, size = 0;
        uint32_t flags = 0;
        for (int i = 7; i >= 0; i--) {
            sp = sp << 8 | nb[i];
            size = size << 8 | nb[16 + i];
        }
        for (int i = 3; i >= 0; i--)
            flags = flags << 8 | nb[8 + i];
        const uint32_t autodisarm = 1u << 31;
        if (flags & ~(uint32_t)(LX_SS_DISABLE | autodisarm))
            return -LX_EINVAL;
        if (!(flags & LX_SS_DISABLE) && size < LX_MINSIGSTKSZ)
            return -LX_ENOMEM;
        t->altstack_sp = flags & LX_SS_DISABLE ? 0 : sp;
        t->altstack_size = flags & LX_SS_DISABLE ? 0 : size;
        t->altstack_flags = (int)(flags & LX_SS_DISABLE);
    }
    return 0;
}

/* SIG from T to another process PR (not yet reaped): a zombie takes
 * nothing, and says nothing. 0, or SC_GONE if the run ended. */
static int64_t kill_other(drv_proc *p, thread *t, process *pr, int64_t sig)
{
    if (sig == 0 || pr->ended)
        return 0;
    process *self = p->cur;
    p->cur = pr;
    thread *to = NULL;
    for (size_t i = 0; i < p->nalive; i++) {
        thread *c = p->alive[i];
        if (c->state == THR_DEAD || c->proc != pr)
            continue;
        if (!to || ((to->sigmask & SIGBIT(sig)) && !(c->sigmask & SIGBIT(sig))))
            to = c;
    }
    int64_t rc = to ? signal_send(p, to, (int)sig, t, LX_SI_USER) : 0;
    p->cur = self;
    return rc == SC_GONE && !p->done && t->state != THR_DEAD ? 0 : rc;
}

/* kill: PID > 0 a process; 0 the caller's group, below -1 group -PID;
 * -1 every process but the first (the init of the simulated system) and
 * the caller, as Linux spares its init and the caller. The caller's own
 * process, when it is among them, takes the signal last. */
int64_t sc_kill(drv_proc *p, thread *t, const uint64_t a[6])
{
    int64_t pid = (int64_t)(int32_t)a[0], sig = (int64_t)(int32_t)a[1];
    if (sig < 0 || sig > LX_NSIG)
        return -LX_EINVAL;
    if (pid == INT32_MIN)
        return -LX_ESRCH;
    if (pid > 0 && pid != p->cur->pid) {
        process *pr = process_by_pid(p, pid);
        return pr && !pr->reaped ? kill_other(p, t, pr, sig) : -LX_ESRCH;
    }
    if (pid == p->cur->pid)
        return sig == 0 ? 0 : signal_send(p, NULL, (int)sig, t, LX_SI_USER);
    uint32_t group = pid == 0 ? p->cur->pgid : (uint32_t)-pid;
    int found = 0, self = 0;
    for (size_t i = 0; i < p->nprocs && !p->done; i++) {
        process *pr = p->procs[i];
        if (pr->reaped || (pid == -1 ? i == 0 || pr == p->cur : pr->pgid != group))
            continue;
        found = 1;
        if (pr == p->cur) {
            self = 1;
            continue;
        }
        if (kill_other(p, t, pr, sig) == SC_GONE)
            return SC_GONE;
    }
    if (!found)
        return -LX_ESRCH;
    return self && sig != 0 ? signal_send(p, NULL, (int)sig, t, LX_SI_USER) : 0;
}

int64_t sc_tkill(drv_proc *p, thread *t, const uint64_t a[6])
{
    int64_t tid = (int64_t)(int32_t)a[0], sig = (int64_t)(int32_t)a[1];
    if (tid <= 0 || sig < 0 || sig > LX_NSIG)
        return -LX_EINVAL;
    thread *to = proc_guest_thread(p, tid);
    if (!to)
        return -LX_ESRCH;
    return sig == 0 ? 0 : signal_send(p, to, (int)sig, t, LX_SI_TKILL);
}

int64_t sc_tgkill(drv_proc *p, thread *t, const uint64_t a[6])
{
    int64_t tgid = (int64_t)(int32_t)a[0], tid = (int64_t)(int32_t)a[1];
    int64_t sig = (int64_t)(int32_t)a[2];
    if (tgid <= 0 || tid <= 0 || sig < 0 || sig > LX_NSIG)
        return -LX_EINVAL;
    thread *to = tgid == p->cur->pid ? proc_guest_thread(p, tid) : NULL;
    if (!to)
        return -LX_ESRCH;
    return sig == 0 ? 0 : signal_send(p, to, (int)sig, t, LX_SI_TKILL);
}

/* ---- handlers: the signal frame and its return ---- */

/* The riscv64 rt_sigframe: siginfo (128 bytes), then the ucontext: flags,
 * link, the alternate stack (sp, flags, size), the 64-bit signal mask and
 * its padding to 128 bytes, and at 176 the mcontext: pc, x1..x31, then the
 * FP state, f0..f31 and fcsr in a 528-byte union (the Q-extension layout,
 * zero past fcsr: no extension headers). */
enum {
    FR_INFO = 0,
    FR_UC = 128,
    FR_STACK = FR_UC + 16,
    FR_MASK = FR_UC + 40,
    FR_REGS = FR_UC + 176,
    FR_FP = FR_REGS + 256,
    FR_FCSR = FR_FP + 256,
    FR_SIZE = FR_FP + 528,
};
_Static_assert(FR_SIZE == 1088, "riscv64 rt_sigframe size");

/* The return path of every handler: li a7, 139 (rt_sigreturn); ecall. */
static const uint8_t sigtramp_code[8] = {0x93, 0x08, 0xb0, 0x08, 0x73, 0x00, 0x00, 0x00};


static int on_altstack(const thread *t, uint64_t sp)
{
    return t->altstack_size && sp > t->altstack_sp && sp - t->altstack_sp <= t->altstack_size;
}

/* Ends the process with SIGSEGV, as Linux does when a frame cannot be
 * written or read back. */
static void frame_fault(drv_proc *p, thread *t, uint64_t pc)
{
    proc_exit(p, DRV_SIGNALED, LX_SIGSEGV, t, pc);
}

/* The handlers' return page, mapped by the first rt_sigaction that installs
 * a handler: a call ordered against every core (ORD_GLOBAL), so replay maps
 * it at the same address. It stands for Linux's vDSO, which is there from
 * the start: RLIMIT_AS does not refuse it (the page counts afterwards).
 * 0, or -1 if the address space is full. */
static int map_sigtramp(drv_proc *p)
{
    if (p->cur->sigtramp)
        return 0;
    uint64_t limit = vm_limit(p->cur->vm);
    vm_set_limit(p->cur->vm, VM_NO_LIMIT);
    int64_t at = vm_mmap(p->cur->vm, 0, LX_PAGE_SIZE, LX_PROT_READ | LX_PROT_EXEC, LX_MAP_PRIVATE, 1,
                         sigtramp_code, sizeof sigtramp_code, 0);
    vm_set_limit(p->cur->vm, limit);
    if (at < 0)
        return -1;
    p->cur->sigtramp = (uint64_t)at;
    return 0;
}

void signal_deliver(drv_proc *p, thread *t, rru_ctx *c)
{
    int sig = t->deliver;
    t->deliver = 0;
    if (!sig || p->done)
        return;
    sigaction_state *sa = &p->cur->sigactions[sig];
    if (map_sigtramp(p) < 0) {
        frame_fault(p, t, c->pc);
        return;
    }
    uint64_t sp = c->x[2];
    int was_on = on_altstack(t, sp);
    if (was_on && !on_altstack(t, sp - FR_SIZE)) {
        frame_fault(p, t, c->pc);
        return;
    }
    if ((sa->flags & LX_SA_ONSTACK) && t->altstack_size && !was_on)
        sp = t->altstack_sp + t->altstack_size;
    uint64_t frame = (sp - FR_SIZE) & ~(uint64_t)15;
    uint8_t b[FR_SIZE] = {0};
    b[FR_INFO] = (uint8_t)sig;
    uint32_t code = (uint32_t)t->deliver_code;
    int chld = code == LX_CLD_EXITED || code == LX_CLD_KILLED;   /* a child's exit signal */
    uint32_t pid = chld ? t->deliver_chld_pid : p->cur->pid;
    for (int i = 0; i < 4; i++) {
        b[FR_INFO + 8 + i] = (uint8_t)(code >> (8 * i));
        b[FR_INFO + 16 + i] = (uint8_t)(pid >> (8 * i));
        b[FR_INFO + 20 + i] = (uint8_t)(1000u >> (8 * i));   /* si_uid: getuid's */
        if (chld)   /* si_status; si_utime and si_stime stay 0 */
            b[FR_INFO + 24 + i] = (uint8_t)((uint32_t)t->deliver_chld_status >> (8 * i));
    }
    le64_put(b + FR_STACK, t->altstack_sp);
    b[FR_STACK + 8] = (uint8_t)(!t->altstack_size ? LX_SS_DISABLE : was_on ? LX_SS_ONSTACK : 0);
    le64_put(b + FR_STACK + 16, t->altstack_size);
    /* The mask sigreturn restores: rt_sigsuspend's caller's own. */
    le64_put(b + FR_MASK, t->suspending ? t->suspend_saved : t->sigmask);
    t->suspending = 0;
    le64_put(b + FR_REGS, c->pc);
    for (int i = 1; i < 32; i++)
        le64_put(b + FR_REGS + 8 * i, c->x[i]);
    for (int i = 0; i < 32; i++)
        le64_put(b + FR_FP + 8 * i, c->f[i]);
    uint32_t fcsr = (c->frm & 7u) << 5 | (c->fflags & 31u);
    for (int i = 0; i < 4; i++)
        b[FR_FCSR + i] = (uint8_t)(fcsr >> (8 * i));
    if (guest_write(p, frame, b, sizeof b) < 0) {
        frame_fault(p, t, c->pc);
        return;
    }
    t->sigmask |= sa->mask | ((sa->flags & LX_SA_NODEFER) ? 0 : SIGBIT(sig));
    t->sigmask &= ~UNBLOCKABLE;
    c->x[1] = p->cur->sigtramp;
    c->x[2] = frame;
    c->x[10] = (uint64_t)sig;
    c->x[11] = frame + FR_INFO;
    c->x[12] = frame + FR_UC;
    c->pc = sa->handler;
    if (sa->flags & LX_SA_RESETHAND) {
        sa->handler = LX_SIG_DFL;
        sa->flags &= ~(uint64_t)LX_SA_SIGINFO;
    }
}

int64_t sc_rt_sigreturn(drv_proc *p, thread *t, const uint64_t a[6])
{
    (void)a;
    rru_ctx *c = sched_ctx(p, t);
    uint8_t b[FR_SIZE];
    uint64_t frame = c->x[2];
    if (guest_read(p, frame, b, sizeof b) < 0) {
        frame_fault(p, t, c->pc - 4);
        return SC_GONE;
    }
    c->pc = le64_get(b + FR_REGS);
    for (int i = 1; i < 32; i++)
        c->x[i] = le64_get(b + FR_REGS + 8 * i);
    for (int i = 0; i < 32; i++)
        c->f[i] = le64_get(b + FR_FP + 8 * i);
    uint32_t fcsr = (uint32_t)le64_get(b + FR_FCSR);
    c->fflags = fcsr & 31u;
    c->frm = (fcsr >> 5) & 7u;
    t->sigmask = le64_get(b + FR_MASK) & ~UNBLOCKABLE;
    /* The alternate stack as saved, unless the thread is on it (Linux
     * refuses to change it then). */
    uint64_t ss_sp = le64_get(b + FR_STACK), ss_size = le64_get(b + FR_STACK + 16);
    uint32_t ss_flags = b[FR_STACK + 8];
    if (!on_altstack(t, c->x[2])) {
        int off = (ss_flags & LX_SS_DISABLE) != 0;
        if (off || ss_size >= LX_MINSIGSTKSZ) {
            t->altstack_sp = off ? 0 : ss_sp;
            t->altstack_size = off ? 0 : ss_size;
            t->altstack_flags = off ? LX_SS_DISABLE : 0;
        }
    }
    if (signal_check_pending(p, t) == SC_GONE)
        return SC_GONE;
    return (int64_t)c->x[10];
}

/* ---- signals from elsewhere ---- */

/* The result of the SYSCALL record of a call that a signal from elsewhere
 * replaced: -(2^30 + S + 128 EINTR + 256 C), C indexing the siginfo code
 * (SI_USER, SI_TKILL, SI_KERNEL); a child's end (its exit signal, SIGCHLD
 * but for clone's choice, with CLD_EXITED or CLD_KILLED: K 0 or 1)
 * carries the child's PID and STATUS (8 bits) for the handler:
 * -(2^40 + S + 128 EINTR + 256 K + 512 STATUS + 2^17 PID).
 * No call returns such values. */
#define MARK_BASE (INT64_C(1) << 30)
#define MARK_CODES 3
#define MARK_CHLD_BASE (INT64_C(1) << 40)
static const int mark_codes[MARK_CODES] = {LX_SI_USER, LX_SI_TKILL, LX_SI_KERNEL};

static int64_t signal_mark(const thread *t, int sig, int code, int eintr)
{
    if (code == LX_CLD_EXITED || code == LX_CLD_KILLED)
        return -(MARK_CHLD_BASE + sig + 128 * eintr + 256 * (code == LX_CLD_KILLED) +
                 512 * (int64_t)(t->async_chld_status & 0xff) +
                 ((int64_t)(t->async_chld_pid & 0x3fffff) << 17));
    int c = code == LX_SI_TKILL ? 1 : code == LX_SI_KERNEL ? 2 : 0;
    return -(MARK_BASE + sig + 128 * eintr + 256 * c);
}

/* Which calls Linux runs again after a handler with SA_RESTART (they end
 * with ERESTARTSYS): a futex wait with no timeout, reads and writes of
 * pipes, and waits for file locks (fcntl, flock); the others (sleeps,
 * polls, timed waits) end with EINTR. */
static int restartable(uint32_t nr, const rru_ctx *c)
{
    if (nr == 98) {
        int cmd = (int)c->x[11] & LX_FUTEX_CMD_MASK;
        return (cmd == LX_FUTEX_WAIT || cmd == LX_FUTEX_WAIT_BITSET) && c->x[13] == 0;
    }
    return nr == 63 || nr == 64 || nr == 65 || nr == 66 || nr == 25 || nr == 32;
}

/* Enters the handler of SIG on C: after the call ended with EINTR, or
 * before the ECALL runs again. */
static void enter_async(drv_proc *p, thread *t, rru_ctx *c, int sig, int code, int eintr,
                        uint64_t ecall_pc)
{
    if (eintr) {
        c->x[10] = (uint64_t)-LX_EINTR;
        t->polling = 0;
    } else {
        c->pc = ecall_pc;
    }
    t->deliver = sig;
    t->deliver_code = code;
    t->deliver_chld_pid = t->async_chld_pid;
    t->deliver_chld_status = t->async_chld_status;
    signal_deliver(p, t, c);
}

int signal_take_async(drv_proc *p, thread *t, rru_ctx *c, uint32_t nr, uint64_t ecall_pc)
{
    uint64_t ready = t->async & ~t->sigmask;
    if (!ready) {
        t->interrupted = 0;   /* its signal was blocked since: the call runs again */
        return 0;
    }
    int sig = __builtin_ctzll(ready) + 1;
    t->async &= ~SIGBIT(sig);
    int eintr = t->interrupted &&
                !((p->cur->sigactions[sig].flags & LX_SA_RESTART) && restartable(nr, c));
    t->interrupted = 0;
    int code = t->async_code[sig];
    syscall_log_result(p, t, nr, signal_mark(t, sig, code, eintr));
    enter_async(p, t, c, sig, code, eintr, ecall_pc);
    return 1;
}

/* Replay of rt_sigsuspend that blocked (its ERESTARTSYS record) or was
 * replaced by a signal (a mark): the recording set the call's mask when
 * it blocked, which a replay does not execute; it is put in force here,
 * where the recording set it (signals sent meanwhile find it). */
void signal_replay_suspend(drv_proc *p, thread *t, const rru_ctx *c)
{
    uint64_t set;
    if (c->x[17] != 133 || t->suspending || rru_mem_read(p->cur->mem, c->x[10], &set, 8) != 0)
        return;
    t->suspend_saved = t->sigmask;
    t->suspending = 1;
    t->sigmask = set & ~UNBLOCKABLE;
}

int signal_replay_mark(drv_proc *p, thread *t, rru_ctx *c, int64_t result)
{
    if (result <= -MARK_CHLD_BASE && result > -2 * MARK_CHLD_BASE) {
        int64_t v = -result - MARK_CHLD_BASE;
        int sig = (int)(v & 127), eintr = (int)((v >> 7) & 1);
        if (sig < 1 || sig > LX_NSIG)
            return 0;
        t->async_chld_status = (int)((v >> 9) & 0xff);
        t->async_chld_pid = (uint32_t)(v >> 17);
        signal_replay_suspend(p, t, c);
        enter_async(p, t, c, sig, (v >> 8) & 1 ? LX_CLD_KILLED : LX_CLD_EXITED, eintr, c->pc - 4);
        return 1;
    }
    if (result > -MARK_BASE || result <= -(MARK_BASE + 256 * MARK_CODES))
        return 0;
    int64_t v = -result - MARK_BASE;
    int sig = (int)(v & 127), eintr = (int)((v >> 7) & 1), ci = (int)(v >> 8);
    if (sig < 1 || sig > LX_NSIG || ci >= MARK_CODES)
        return 0;
    signal_replay_suspend(p, t, c);
    enter_async(p, t, c, sig, mark_codes[ci], eintr, c->pc - 4);
    return 1;
}
