/* tests/bench/bench_formats.c: throughput of the log writer and reader on a
 * large random MaxPar log, stored and compressed. Usage: bench_formats PATH
 * [MILLIONS]. Prints one row per configuration. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>

#include "formats/log.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static uint64_t rng_next(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: bench_formats PATH [MILLIONS]\n");
        return 2;
    }
    const char *path = argv[1];
    uint64_t n = (uint64_t)((argc > 2 ? atof(argv[2]) : 4.0) * 1e6);
    printf("%-10s %10s %12s %12s %14s %14s\n", "config", "records", "file_bytes", "bytes/rec",
           "write_Mrec/s", "read_Mrec/s");
    static const int levels[] = { 0, 1, 6 };
    for (size_t li = 0; li < sizeof levels / sizeof levels[0]; li++) {
        int level = levels[li];
        rnr_log_header h = { .kind = RNR_LOG_MAXPAR, .cpus = 8, .msp = 100000 };
        rnr_writer_opts o = { 0, level };
        char err[RNR_ERR_MAX];
        rnr_writer *w = rnr_writer_open(path, &h, &o, err, sizeof err);
        if (!w) {
            fprintf(stderr, "%s\n", err);
            return 2;
        }
        uint64_t rng = 1;
        uint32_t stv[2];
        rnr_ptv_entry ptv[2];
        double t0 = now();
        for (uint64_t i = 0; i < n; i++) {
            uint64_t r = rng_next(&rng);
            rnr_final_chunk c = { .cpu = (uint32_t)(r & 7), .tid = (uint32_t)((r >> 3) & 15) + 100,
                                  .cs = 1 + ((r >> 8) & 4095), .stv = stv, .ptv = ptv };
            if ((r >> 20) & 1) {
                stv[0] = (c.cpu + 1) & 7;
                c.nstv = 1;
            }
            if ((r >> 21) & 1) {
                ptv[0].cpu = (c.cpu + 7) & 7;
                ptv[0].count = 1;
                c.nptv = 1;
            }
            if (rnr_writer_put_final(w, &c) < 0) {
                fprintf(stderr, "%s\n", rnr_writer_error(w));
                return 1;
            }
        }
        const rnr_log_counts cnt = *rnr_writer_counts(w);
        if (rnr_writer_close(w, err, sizeof err) < 0) {
            fprintf(stderr, "%s\n", err);
            return 1;
        }
        double t1 = now();
        rnr_reader *r = rnr_reader_open(path, err, sizeof err);
        if (!r) {
            fprintf(stderr, "%s\n", err);
            return 1;
        }
        rnr_final_chunk c;
        uint64_t got = 0, insns = 0;
        int rc;
        while ((rc = rnr_reader_next_final(r, &c)) == 1) {
            got++;
            insns += c.cs;
        }
        double t2 = now();
        if (rc < 0 || got != n) {
            fprintf(stderr, "read back failed: %s\n", rnr_reader_error(r));
            return 1;
        }
        uint64_t file_bytes = rnr_reader_counts(r)->stored_bytes;
        rnr_reader_close(r);
        printf("%-10s %10llu %12llu %12.2f %14.2f %14.2f\n", level ? (level == 1 ? "zlib-1" : "zlib-6") : "stored",
               (unsigned long long)n, (unsigned long long)file_bytes,
               (double)file_bytes / (double)n, (double)n / (t1 - t0) / 1e6,
               (double)n / (t2 - t1) / 1e6);
        (void)cnt;
        (void)insns;
    }
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    printf("peak_rss_kib %ld\n", ru.ru_maxrss);
    return 0;
}
