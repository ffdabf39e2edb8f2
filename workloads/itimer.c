/* workloads/itimer.c: the interval timer (setitimer, getitimer, alarm) and
 * its SIGALRM, printed in a form that does not depend on timing.
 * Usage: itimer MODE, where MODE is
 *   query    the values setitimer, getitimer and alarm give back, and the
 *            errors they return (exit 0)
 *   kill     two threads spin until a 20 ms timer's SIGALRM ends the
 *            process (status 142)
 *   pause    pause() until a 5 ms timer's SIGALRM ends it (status 142)
 *   ignored  a 1 ms periodic timer whose SIGALRM is ignored, while a thread
 *            and main sleep 20 ms (exit 0)
 *   blocked  SIGALRM blocked by every thread when the timer expires, then
 *            unblocked (Linux leaves it pending and the process ends with
 *            status 142 at the unblocking; rnr drops it: exit 0)
 *   forever  pause() with a periodic timer whose SIGALRM is ignored: Linux
 *            waits forever; rnr reports the deadlock (status 124) */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

static void *spin(void *arg)
{
    volatile unsigned long *n = arg;
    for (;;)
        (*n)++;
    return NULL;
}

static void *nap(void *arg)
{
    (void)arg;
    usleep(20000);
    return NULL;
}

static int set(long value_us, long every_us)
{
    struct itimerval v = {{every_us / 1000000, every_us % 1000000},
                          {value_us / 1000000, value_us % 1000000}};
    return setitimer(ITIMER_REAL, &v, NULL);
}

static int query(void)
{
    struct itimerval v = {{0, 250000}, {5, 0}}, o;
    printf("set %d\n", setitimer(ITIMER_REAL, &v, NULL));
    usleep(1000);
    printf("get %d\n", getitimer(ITIMER_REAL, &o));
    printf("left below 5 s %d above 4.9 s %d interval kept %d\n", o.it_value.tv_sec < 5,
           o.it_value.tv_sec == 4 && o.it_value.tv_usec > 900000,
           o.it_interval.tv_sec == 0 && o.it_interval.tv_usec == 250000);
    struct itimerval z = {{0, 0}, {0, 0}};
    printf("cancel %d old left %d\n", setitimer(ITIMER_REAL, &z, &o), o.it_value.tv_sec == 4);
    printf("get after cancel %d zero %d\n", getitimer(ITIMER_REAL, &o),
           o.it_value.tv_sec == 0 && o.it_value.tv_usec == 0 && o.it_interval.tv_usec == 0);
    struct itimerval bad = {{0, 0}, {0, 1000000}};
    printf("usec too large %d %s\n", setitimer(ITIMER_REAL, &bad, NULL), strerrorname_np(errno));
    errno = 0;
    printf("bad which %d %s\n", setitimer(7, &v, NULL), strerrorname_np(errno));
    printf("alarm first %u\n", alarm(3));
    printf("alarm second %u\n", alarm(0));
    printf("alarm cancelled %u\n", alarm(0));
    return 0;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "query";
    setvbuf(stdout, NULL, _IONBF, 0);
    if (strcmp(mode, "query") == 0)
        return query();
    if (strcmp(mode, "kill") == 0) {
        static unsigned long n1, n2;
        pthread_t t;
        pthread_create(&t, NULL, spin, &n1);
        /* Printed before the timer is armed: a host slower than the timer
         * (qemu on a loaded machine) would otherwise die before printing. */
        printf("arming\n");
        if (set(20000, 0) != 0)
            printf("setitimer failed\n");
        spin(&n2);
    }
    if (strcmp(mode, "pause") == 0) {
        printf("arming\n");
        if (set(5000, 0) != 0)
            printf("setitimer failed\n");
        pause();
        printf("pause returned\n");
        return 1;
    }
    if (strcmp(mode, "ignored") == 0) {
        signal(SIGALRM, SIG_IGN);
        printf("armed %d\n", set(1000, 1000));
        pthread_t t;
        pthread_create(&t, NULL, nap, NULL);
        usleep(20000);
        pthread_join(t, NULL);
        printf("still here\n");
        return 0;
    }
    if (strcmp(mode, "blocked") == 0) {
        sigset_t s;
        sigemptyset(&s);
        sigaddset(&s, SIGALRM);
        pthread_sigmask(SIG_BLOCK, &s, NULL);
        pthread_t t;
        pthread_create(&t, NULL, nap, NULL);   /* inherits the mask */
        printf("armed %d\n", set(1000, 0));
        usleep(5000);
        pthread_join(t, NULL);
        pthread_sigmask(SIG_UNBLOCK, &s, NULL);
        printf("survived\n");
        return 0;
    }
    if (strcmp(mode, "forever") == 0) {
        signal(SIGALRM, SIG_IGN);
        printf("armed %d\n", set(1000, 1000));
        pause();
        return 1;
    }
    fprintf(stderr, "usage: itimer query|kill|pause|ignored|blocked|forever\n");
    return 2;
}
