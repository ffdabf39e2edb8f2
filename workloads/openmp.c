/* workloads/openmp.c: an OpenMP program (GCC's libgomp, linked statically)
 * through the constructs research codes use: work-sharing loops with
 * static, dynamic and guided schedules, a reduction, single and master,
 * barrier, critical, atomic updates and captures, sections, an ordered
 * loop, explicit tasks with taskwait, OpenMP locks and a threadprivate
 * variable with copyin. Everything it prints is the same whatever the
 * interleaving: integer arithmetic only, and order only where OpenMP
 * gives one (ordered, after barriers).
 *
 * Usage: openmp [THREADS [N]]   THREADS for every parallel region
 * (default 4), N loop iterations (default 20000). */
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static int64_t tp_value;
#pragma omp threadprivate(tp_value)

/* The n-th Fibonacci number, by tasks down to a cut-off. */
static int64_t fib(int n)
{
    if (n < 2)
        return n;
    if (n < 12)
        return fib(n - 1) + fib(n - 2);
    int64_t a, b;
#pragma omp task shared(a)
    a = fib(n - 1);
#pragma omp task shared(b)
    b = fib(n - 2);
#pragma omp taskwait
    return a + b;
}

int main(int argc, char **argv)
{
    int threads = argc > 1 ? atoi(argv[1]) : 4;
    int n = argc > 2 ? atoi(argv[2]) : 20000;
    if (threads < 1 || threads > 64 || n < 64) {
        fprintf(stderr, "usage: openmp [THREADS 1..64 [N >= 64]]\n");
        return 2;
    }
    omp_set_dynamic(0);
    omp_set_num_threads(threads);
    int64_t *a = malloc(sizeof *a * (size_t)n);
    if (!a)
        return 1;

    int team = 0;
#pragma omp parallel
    {
#pragma omp master
        team = omp_get_num_threads();
    }
    printf("team of %d (asked %d)\n", team, threads);

#pragma omp parallel for schedule(static)
    for (int i = 0; i < n; i++)
        a[i] = (int64_t)i * i % 1009;

    int64_t sum = 0, guided = 0;
#pragma omp parallel for schedule(dynamic, 7) reduction(+ : sum)
    for (int i = 0; i < n; i++)
        sum += a[i] * (i % 13);
#pragma omp parallel for schedule(guided) reduction(+ : guided)
    for (int i = 0; i < n; i++)
        guided += a[n - 1 - i] ^ i;
    int64_t want = 0, want_g = 0;
    for (int i = 0; i < n; i++) {
        want += a[i] * (i % 13);
        want_g += a[n - 1 - i] ^ i;
    }
    printf("reduction dynamic %lld ok %d, guided %lld ok %d\n", (long long)sum, sum == want,
           (long long)guided, guided == want_g);

    int64_t hits = 0, crit = 0, singles = 0;
    int64_t tickets[64] = {0};
#pragma omp parallel
    {
        for (int r = 0; r < 100; r++) {
#pragma omp atomic
            hits++;
        }
        int64_t mine;
#pragma omp atomic capture
        mine = crit++;
        tickets[omp_get_thread_num()] = mine;
#pragma omp barrier
#pragma omp single
        singles++;
#pragma omp critical
        crit += 1000;
    }
    /* The captured tickets are 0..team-1 in some order. */
    int64_t seen = 0;
    for (int t = 0; t < team; t++)
        seen |= (int64_t)1 << tickets[t];
    printf("atomic %lld, capture tickets distinct %d, single %lld, critical %lld\n",
           (long long)hits, seen == ((int64_t)1 << team) - 1, (long long)singles, (long long)crit);

    int64_t s1 = 0, s2 = 0, s3 = 0;
#pragma omp parallel sections
    {
#pragma omp section
        for (int i = 0; i < n; i += 3)
            s1 += a[i];
#pragma omp section
        for (int i = 1; i < n; i += 3)
            s2 += a[i];
#pragma omp section
        for (int i = 2; i < n; i += 3)
            s3 += a[i];
    }
    printf("sections %lld %lld %lld\n", (long long)s1, (long long)s2, (long long)s3);

    printf("ordered:");
#pragma omp parallel for ordered schedule(dynamic, 1)
    for (int i = 0; i < 12; i++) {
        int64_t v = a[i * 97 % n] + i;
#pragma omp ordered
        printf(" %lld", (long long)v);
    }
    printf("\n");

    int64_t f = 0;
#pragma omp parallel
#pragma omp single
    f = fib(24);
    printf("fib(24) by tasks %lld\n", (long long)f);

    omp_lock_t lock;
    omp_init_lock(&lock);
    int64_t locked = 0;
#pragma omp parallel for schedule(static, 16)
    for (int i = 0; i < n; i++) {
        if (i % 5 == 0) {
            omp_set_lock(&lock);
            locked += a[i];
            omp_unset_lock(&lock);
        }
    }
    omp_destroy_lock(&lock);
    int64_t want_l = 0;
    for (int i = 0; i < n; i += 5)
        want_l += a[i];
    printf("lock %lld ok %d\n", (long long)locked, locked == want_l);

    tp_value = 41;
    int64_t tp_sum = 0;
#pragma omp parallel copyin(tp_value) reduction(+ : tp_sum)
    {
        tp_value += omp_get_thread_num();
        tp_sum += tp_value;
    }
    printf("threadprivate copyin %lld ok %d\n", (long long)tp_sum,
           tp_sum == 41LL * team + (int64_t)team * (team - 1) / 2);

    double t0 = omp_get_wtime(), t1 = omp_get_wtime();
    printf("wtime monotonic %d\n", t1 >= t0 && t0 > 0);
    free(a);
    return 0;
}
