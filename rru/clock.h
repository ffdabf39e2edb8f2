/* rru/clock.h: the host's monotonic clock in seconds, for progress lines,
 * limits and measured wall times in rru/ and the layers above (never for
 * anything the simulation computes: that runs on simulated cycles). */
#ifndef RNR_RRU_CLOCK_H
#define RNR_RRU_CLOCK_H

#include <time.h>

static inline double host_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

#endif
