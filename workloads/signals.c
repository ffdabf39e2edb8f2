/* workloads/signals.c: ends by a signal, chosen by the first argument:
 * "abort" (abort(), SIGABRT), "segv" (a store to an unmapped address,
 * SIGSEGV), "ill" (an illegal instruction, SIGILL), "raise" (raise(SIGTERM)),
 * "ignored" (SIGUSR1 ignored, then exit 5), "pending" (SIGTERM raised while
 * blocked, delivered when sigprocmask unblocks it), "cancel" (pthread_cancel
 * of a sleeping thread: glibc's SIGCANCEL, whose handler rnr does not run,
 * so under rnr it ends the process), "exit N" (exit status N). */
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void *sleeper(void *arg)
{
    (void)arg;
    for (;;)
        usleep(1000);
    return NULL;
}

int main(int argc, char **argv)
{
    const char *what = argc > 1 ? argv[1] : "abort";
    printf("signals: %s\n", what);
    fflush(stdout);
    if (strcmp(what, "abort") == 0)
        abort();
    if (strcmp(what, "segv") == 0) {
        volatile uintptr_t where = 0x10;
        *(volatile int *)where = 1;
    }
    if (strcmp(what, "ill") == 0)
        __asm__ volatile(".word 0");
    if (strcmp(what, "raise") == 0)
        raise(SIGTERM);
    if (strcmp(what, "ignored") == 0) {
        signal(SIGUSR1, SIG_IGN);
        raise(SIGUSR1);
        printf("signals: survived SIGUSR1\n");
        return 5;
    }
    if (strcmp(what, "pending") == 0) {
        sigset_t s;
        sigemptyset(&s);
        sigaddset(&s, SIGTERM);
        sigprocmask(SIG_BLOCK, &s, NULL);
        raise(SIGTERM);
        printf("signals: SIGTERM pending\n");
        fflush(stdout);
        sigprocmask(SIG_UNBLOCK, &s, NULL);
        printf("signals: survived the unblock (wrong)\n");
        return 1;
    }
    if (strcmp(what, "cancel") == 0) {
        pthread_t t;
        void *r;
        pthread_create(&t, NULL, sleeper, NULL);
        usleep(2000);
        pthread_cancel(t);
        pthread_join(t, &r);
        printf("signals: canceled %d\n", r == PTHREAD_CANCELED);
        return 0;
    }
    if (strcmp(what, "exit") == 0)
        exit(argc > 2 ? atoi(argv[2]) : 0);
    return 0;
}
