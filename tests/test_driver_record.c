/* tests/test_driver_record.c: the recorder's drain order (driver/record.c,
 * rec_merge_runs): the chunks of every unit go to the initial log by time,
 * ties in unit order. Compared on random runs with a stable sort. */
#include <stdlib.h>
#include <string.h>

#include "driver/record.h"
#include "tests/testutil.h"

typedef struct keyed {
    uint64_t ts;
    uint32_t index;
} keyed;

static int by_ts_then_index(const void *a, const void *b)
{
    const keyed *x = a, *y = b;
    if (x->ts != y->ts)
        return x->ts < y->ts ? -1 : 1;
    return x->index < y->index ? -1 : x->index > y->index;
}

/* Random runs (empty ones, equal times within and across runs, up to the
 * 64 cores a machine has): the merge is the stable sort by time. */
START_TEST(drain_order_is_the_stable_sort_by_time)
{
    uint64_t seed = tu_seed(0xd7a1e000u + (uint64_t)_i), rng = seed;
    for (int round = 0; round < 200; round++) {
        unsigned nruns = 1 + (unsigned)tu_below(&rng, RRU_MAX_CORES);
        size_t run_end[RRU_MAX_CORES], n = 0;
        uint64_t spread = 1 + tu_below(&rng, 50);
        uint64_t *ts = malloc(64 * RRU_MAX_CORES * sizeof *ts);
        for (unsigned k = 0; k < nruns; k++) {
            size_t len = tu_below(&rng, 4) == 0 ? 0 : tu_below(&rng, 40);
            uint64_t t = tu_below(&rng, spread);
            for (size_t i = 0; i < len; i++) {
                t += tu_below(&rng, 3) == 0 ? 0 : tu_below(&rng, spread);
                ts[n++] = t;
            }
            run_end[k] = n;
        }
        uint32_t *order = malloc((n ? n : 1) * sizeof *order);
        keyed *want = malloc((n ? n : 1) * sizeof *want);
        for (size_t i = 0; i < n; i++)
            want[i] = (keyed){ ts[i], (uint32_t)i };
        qsort(want, n, sizeof *want, by_ts_then_index);
        ck_assert_int_eq(rec_merge_runs(ts, run_end, nruns, order), 0);
        for (size_t i = 0; i < n; i++)
            ck_assert_msg(order[i] == want[i].index, "seed %#llx round %d: position %zu is %u, not %u",
                          (unsigned long long)seed, round, i, order[i], want[i].index);
        /* A run whose times decrease is refused. */
        for (unsigned k = 0; k < nruns; k++) {
            size_t from = k ? run_end[k - 1] : 0;
            if (run_end[k] - from >= 2 && ts[run_end[k] - 1] > 0) {
                uint64_t keep = ts[from];
                ts[from] = ts[run_end[k] - 1] + 1;
                ck_assert_int_eq(rec_merge_runs(ts, run_end, nruns, order), -1);
                ts[from] = keep;
                break;
            }
        }
        free(ts);
        free(order);
        free(want);
    }
}
END_TEST

TU_SUITE(driver_record)
{
    Suite *s = suite_create("driver_record");
    TCase *tc = tu_tcase(s, "drain", 30);
    tcase_add_loop_test(tc, drain_order_is_the_stable_sort_by_time, 0, 4);
    return s;
}
