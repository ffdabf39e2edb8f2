/* driver/sys_signal.c: signals as bookkeeping: actions, masks, alternate
 * stacks, and kill/tkill/tgkill to the process itself. rnr runs no signal
 * handlers: a signal that is not ignored ends the process with its default
 * action (abort() ends with SIGABRT, status 134, as in a shell). */
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

/* The signal takes effect on thread T (not blocking it). */
static int64_t act(drv_proc *p, thread *t, int sig, thread *from)
{
    uint64_t h = p->sigactions[sig].handler;
    if (sig != LX_SIGKILL && (h == LX_SIG_IGN || (h == LX_SIG_DFL && default_ignores(sig))))
        return 0;
    if (sig != LX_SIGKILL && h != LX_SIG_DFL)
        proc_warn_once(p, WARN_SIGHANDLER,
                       "the guest has a handler for %s, but rnr runs no signal handlers: "
                       "the default action applies", signal_name(sig));
    thread *who = from ? from : t;
    uint64_t pc = who->state == THR_RUNNING ? who->block_pc : who->ctx.pc;
    proc_exit(p, DRV_SIGNALED, sig, who, pc);
    return SC_GONE;
}

int64_t signal_send(drv_proc *p, thread *to, int sig, thread *from)
{
    if (!to) {
        /* Process-directed: the sender if it accepts it, else the first
         * live thread that does, else pending on the sender. */
        to = from;
        if (to->sigmask & SIGBIT(sig)) {
            for (size_t i = 0; i < p->nthreads; i++) {
                thread *c = p->threads[i];
                if (c->state != THR_DEAD && !(c->sigmask & SIGBIT(sig))) {
                    to = c;
                    break;
                }
            }
        }
    }
    uint64_t h = p->sigactions[sig].handler;
    if (sig != LX_SIGKILL && (h == LX_SIG_IGN || (h == LX_SIG_DFL && default_ignores(sig))))
        return 0;   /* discarded even while blocked, as Linux does */
    if ((to->sigmask & SIGBIT(sig)) && sig != LX_SIGKILL) {
        to->pending |= SIGBIT(sig);
        return 0;
    }
    return act(p, to, sig, from);
}

int64_t signal_check_pending(drv_proc *p, thread *t)
{
    uint64_t ready = t->pending & ~t->sigmask;
    if (!ready)
        return 0;
    int sig = __builtin_ctzll(ready) + 1;
    t->pending &= ~SIGBIT(sig);
    return act(p, t, sig, t);
}

static int64_t valid_sig(int64_t sig) { return sig >= 1 && sig <= LX_NSIG; }

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
        sigaction_state *o = &p->sigactions[sig];
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
        p->sigactions[sig] = n;
        /* Setting SIG_IGN (or a default that ignores) discards pending ones. */
        if (n.handler == LX_SIG_IGN || (n.handler == LX_SIG_DFL && default_ignores((int)sig)))
            for (size_t i = 0; i < p->nthreads; i++)
                p->threads[i]->pending &= ~SIGBIT(sig);
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

static thread *find_thread(drv_proc *p, int64_t tid)
{
    for (size_t i = 0; i < p->nthreads; i++)
        if (p->threads[i]->tid == tid && p->threads[i]->state != THR_DEAD)
            return p->threads[i];
    return NULL;
}

int64_t sc_kill(drv_proc *p, thread *t, const uint64_t a[6])
{
    int64_t pid = (int64_t)(int32_t)a[0], sig = (int64_t)(int32_t)a[1];
    if (sig < 0 || sig > LX_NSIG)
        return -LX_EINVAL;
    if (pid != p->pid && pid != 0 && pid != -1)
        return -LX_ESRCH;
    return sig == 0 ? 0 : signal_send(p, NULL, (int)sig, t);
}

int64_t sc_tkill(drv_proc *p, thread *t, const uint64_t a[6])
{
    int64_t tid = (int64_t)(int32_t)a[0], sig = (int64_t)(int32_t)a[1];
    if (tid <= 0 || sig < 0 || sig > LX_NSIG)
        return -LX_EINVAL;
    thread *to = find_thread(p, tid);
    if (!to)
        return -LX_ESRCH;
    return sig == 0 ? 0 : signal_send(p, to, (int)sig, t);
}

int64_t sc_tgkill(drv_proc *p, thread *t, const uint64_t a[6])
{
    int64_t tgid = (int64_t)(int32_t)a[0], tid = (int64_t)(int32_t)a[1];
    int64_t sig = (int64_t)(int32_t)a[2];
    if (tgid <= 0 || tid <= 0 || sig < 0 || sig > LX_NSIG)
        return -LX_EINVAL;
    thread *to = tgid == p->pid ? find_thread(p, tid) : NULL;
    if (!to)
        return -LX_ESRCH;
    return sig == 0 ? 0 : signal_send(p, to, (int)sig, t);
}
