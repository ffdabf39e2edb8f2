/* workloads/sighandler.c: signal handlers of signals a thread sends to
 * itself (raise, kill of its own process, pthread_kill of itself, a
 * pending signal unblocked): what the handler is given (signal number,
 * siginfo code and pid, its mask), that the interrupted code finds its
 * integer, FP and rounding state again, SA_NODEFER, sa_mask (a signal
 * raised in a handler waits for its sigreturn), SA_RESETHAND, an
 * alternate stack with SA_ONSTACK, siglongjmp out of a handler, handlers
 * on two threads at once; and with "abort", abort() whose SIGABRT handler
 * returns (the process still ends with SIGABRT).
 *
 * Usage: sighandler [all|nomask|abort]
 * nomask leaves out the sa_mask case: qemu-riscv64 (7.2) runs a signal
 * that a handler raises while its sa_mask blocks it at once, where Linux
 * (and rnr) keep it pending until the handler returns. */
#define _GNU_SOURCE
#include <fenv.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char trail[256];
static volatile int depth, max_depth;
static volatile int got_code, got_pid_ok, got_masked, got_ctx;
static volatile uintptr_t handler_sp;
static sigjmp_buf jump;

static void note(const char *s)
{
    size_t n = strlen(trail);
    snprintf(trail + n, sizeof trail - n, "%s ", s);
}

static int blocked(int sig)
{
    sigset_t now;
    sigprocmask(SIG_BLOCK, NULL, &now);
    return sigismember(&now, sig);
}

static void on_usr1_info(int sig, siginfo_t *si, void *ctx)
{
    got_code = si->si_code;
    got_pid_ok = si->si_signo == sig && si->si_pid == getpid();
    got_masked = blocked(SIGUSR1);
    got_ctx = ctx != NULL;
    /* Clobber what the interrupted code must find again. */
    fesetround(FE_DOWNWARD);
    volatile double x = 1.0 / 3.0;
    (void)x;
    note("usr1");
}

static void on_usr1_nested(int sig)
{
    (void)sig;
    depth++;
    if (depth > max_depth)
        max_depth = depth;
    if (depth < 3)
        raise(SIGUSR1);
    depth--;
}

static void on_usr1_raises_usr2(int sig)
{
    (void)sig;
    note("usr1-begin");
    raise(SIGUSR2);   /* blocked by sa_mask: runs after this handler returns */
    note("usr1-end");
}

static void on_usr2(int sig)
{
    (void)sig;
    note("usr2");
}

static void on_usr1_stack(int sig)
{
    (void)sig;
    int local;
    handler_sp = (uintptr_t)&local;
}

static void on_usr1_jump(int sig)
{
    (void)sig;
    siglongjmp(jump, 7);
}

static void on_abort(int sig)
{
    (void)sig;
    static const char msg[] = "abort handler ran\n";
    if (write(1, msg, sizeof msg - 1) < 0)
        _exit(3);
}

static void set(int sig, void (*fn)(int), int flags, int mask_sig)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = fn;
    sa.sa_flags = flags;
    sigemptyset(&sa.sa_mask);
    if (mask_sig)
        sigaddset(&sa.sa_mask, mask_sig);
    sigaction(sig, &sa, NULL);
}

static __thread volatile int thread_hits;

static void on_usr2_count(int sig)
{
    (void)sig;
    thread_hits++;
}

static void *worker(void *arg)
{
    long n = (long)arg;
    for (long i = 0; i < n; i++)
        pthread_kill(pthread_self(), SIGUSR2);
    return (void *)(long)thread_hits;
}

int main(int argc, char **argv)
{
    const char *what = argc > 1 ? argv[1] : "all";
    if (strcmp(what, "abort") == 0) {
        set(SIGABRT, on_abort, 0, 0);
        abort();
    }

    /* siginfo, the handler's mask, and the state it must not disturb. */
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_usr1_info;
    sa.sa_flags = SA_SIGINFO;
    sigaction(SIGUSR1, &sa, NULL);
    fesetround(FE_UPWARD);
    volatile double one = 1.0, three = 3.0, nearest = 2.0 / 3.0;
    int r = raise(SIGUSR1);
    double third = one / three * 2.0;
    printf("raise %d code %d (SI_TKILL %d) pid ok %d masked inside %d ctx %d\n", r, got_code,
           SI_TKILL, got_pid_ok, got_masked, got_ctx);
    printf("after: round upward %d, usr1 blocked %d, 2/3 rounded up %d\n", fegetround() == FE_UPWARD,
           blocked(SIGUSR1), third > nearest);
    fesetround(FE_TONEAREST);
    r = kill(getpid(), SIGUSR1);
    printf("kill %d code %d (SI_USER %d)\n", r, got_code, SI_USER);

    /* SA_NODEFER: the handler raises its own signal twice more. */
    set(SIGUSR1, on_usr1_nested, SA_NODEFER, 0);
    raise(SIGUSR1);
    printf("nodefer depth %d\n", max_depth);

    /* sa_mask: SIGUSR2 raised inside waits for the sigreturn. */
    set(SIGUSR2, on_usr2, 0, 0);
    if (strcmp(what, "nomask") != 0) {
        set(SIGUSR1, on_usr1_raises_usr2, 0, SIGUSR2);
        trail[0] = 0;
        raise(SIGUSR1);
        printf("order: %s\n", trail);
    }

    /* Blocked, then unblocked: runs when sigprocmask returns. */
    trail[0] = 0;
    sigset_t s;
    sigemptyset(&s);
    sigaddset(&s, SIGUSR2);
    sigprocmask(SIG_BLOCK, &s, NULL);
    raise(SIGUSR2);
    note("raised");
    sigprocmask(SIG_UNBLOCK, &s, NULL);
    note("unblocked");
    printf("pending: %s\n", trail);

    /* SA_RESETHAND: one run, then the default again. */
    set(SIGUSR2, on_usr2, SA_RESETHAND, 0);
    trail[0] = 0;
    raise(SIGUSR2);
    struct sigaction now;
    sigaction(SIGUSR2, NULL, &now);
    printf("resethand: %s default now %d\n", trail, now.sa_handler == SIG_DFL);

    /* An alternate stack. */
    static char alt[65536];
    stack_t ss = {.ss_sp = alt, .ss_size = sizeof alt, .ss_flags = 0};
    sigaltstack(&ss, NULL);
    set(SIGUSR1, on_usr1_stack, SA_ONSTACK, 0);
    raise(SIGUSR1);
    int on_alt = handler_sp > (uintptr_t)alt && handler_sp < (uintptr_t)alt + sizeof alt;
    set(SIGUSR1, on_usr1_stack, 0, 0);
    raise(SIGUSR1);
    int off_alt = !(handler_sp > (uintptr_t)alt && handler_sp < (uintptr_t)alt + sizeof alt);
    printf("altstack: on with SA_ONSTACK %d, off without %d\n", on_alt, off_alt);

    /* siglongjmp out of a handler restores the mask of sigsetjmp. */
    set(SIGUSR1, on_usr1_jump, 0, 0);
    int j = sigsetjmp(jump, 1);
    if (j == 0) {
        raise(SIGUSR1);
        printf("not reached\n");
    }
    printf("siglongjmp %d, usr1 blocked after %d\n", j, blocked(SIGUSR1));

    /* Two threads, each sending to itself. */
    set(SIGUSR2, on_usr2_count, 0, 0);
    pthread_t t[2];
    for (long i = 0; i < 2; i++)
        pthread_create(&t[i], NULL, worker, (void *)(50 + 25 * i));
    for (int i = 0; i < 2; i++) {
        void *hits;
        pthread_join(t[i], &hits);
        printf("thread %d: %ld handler runs\n", i, (long)hits);
    }
    printf("main: %d handler runs\n", thread_hits);
    return 0;
}
