/* workloads/atomics.c: C11 atomics: fetch_add, a compare-and-swap loop, a
 * spinlock built on atomic_flag, exchange (what is taken out plus what is left equals
 * what was put in), and an atomic maximum; each
 * result is checked against its closed form.
 * Usage: atomics [THREADS [ITERS]] (default 4 threads, 2000 iterations). */
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

static atomic_uint_fast64_t added, cas_sum, maximum;
static atomic_uint_fast64_t slot, exchanged;   /* exchange: returned + final = put */
static atomic_flag spin = ATOMIC_FLAG_INIT;
static uint64_t guarded;      /* protected by the spinlock */
static long iters;

static void *worker(void *arg)
{
    uint64_t id = (uint64_t)(uintptr_t)arg;
    for (long i = 0; i < iters; i++) {
        atomic_fetch_add_explicit(&added, 1, memory_order_relaxed);
        uint64_t old = atomic_load(&cas_sum);
        while (!atomic_compare_exchange_weak(&cas_sum, &old, old + id))
            ;
        while (atomic_flag_test_and_set_explicit(&spin, memory_order_acquire))
            ;
        guarded += 2;
        atomic_flag_clear_explicit(&spin, memory_order_release);
        uint64_t v = id * 1000000u + (uint64_t)i, m = atomic_load(&maximum);
        while (v > m && !atomic_compare_exchange_weak(&maximum, &m, v))
            ;
        atomic_fetch_add(&exchanged, atomic_exchange(&slot, id));
    }
    return NULL;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 4;
    iters = argc > 2 ? atol(argv[2]) : 2000;
    if (n < 1 || n > 1024 || iters < 1)
        return 2;
    pthread_t *t = malloc(sizeof *t * (size_t)n);
    for (int i = 0; i < n; i++)
        pthread_create(&t[i], NULL, worker, (void *)(uintptr_t)(i + 1));
    for (int i = 0; i < n; i++)
        pthread_join(t[i], NULL);
    uint64_t e_added = (uint64_t)n * (uint64_t)iters;
    uint64_t e_cas = (uint64_t)iters * (uint64_t)n * (uint64_t)(n + 1) / 2;
    uint64_t e_max = (uint64_t)n * 1000000u + (uint64_t)iters - 1;
    int ok = added == e_added && cas_sum == e_cas && guarded == 2 * e_added && maximum == e_max &&
             exchanged + slot == e_cas;
    printf("atomics: threads %d added %" PRIu64 " cas %" PRIu64 " spin %" PRIu64 " max %" PRIu64
           " %s\n", n, (uint64_t)added, (uint64_t)cas_sum, guarded, (uint64_t)maximum,
           ok ? "ok" : "WRONG");
    free(t);
    return ok ? 0 : 1;
}
