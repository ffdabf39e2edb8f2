/* tests/testutil.h: helpers every test suite shares: temporary folders,
 * running the rnr binary, files, seeds. */
#ifndef RNR_TESTS_TESTUTIL_H
#define RNR_TESTS_TESTUTIL_H

#include <check.h>
#include <stddef.h>
#include <stdint.h>

#include "backend/synth.h"

/* Result of tu_run: exit status (128+N for signal N), captured output. */
typedef struct tu_output {
    int status;
    char *out, *err;        /* NUL-terminated, owned; free with tu_output_free */
    size_t out_len, err_len;
} tu_output;

/* Runs ARGV (NULL-terminated; argv[0] a path) with stdin from STDIN_PATH
 * (NULL = /dev/null); fails the test if it cannot start. */
void tu_run(const char *const *argv, const char *stdin_path, tu_output *o);
/* Runs the rnr front end under test with ARGS (NULL-terminated). */
void tu_rnr(tu_output *o, const char *const *args);
void tu_output_free(tu_output *o);
/* Runs `rnr record --quiet OPTS -o DIR -- $RNR_GUEST_DIR/PROG ARGS` (OPTS
 * and ARGS NULL-terminated or NULL; at most 16 each); returns the status. */
int tu_record(tu_output *o, const char *dir, const char *prog, const char *const *opts,
              const char *const *args);
/* A guest program of $RNR_GUEST_DIR with its arguments (NULL-terminated). */
typedef struct tu_workload {
    const char *name;
    const char *args[4];
} tu_workload;
/* The bundled multithreaded workloads with small arguments, as the replay
 * and online suites record them (tests/testutil.c). */
extern const tu_workload tu_threaded[];
extern const size_t tu_threaded_count;

/* Number of lines in S. */
size_t tu_count_lines(const char *s);

/* Path of the rnr binary under test ($RNR_BIN). */
const char *tu_rnr_bin(void);
/* A value of the test environment (set by the Makefile); fails if unset. */
const char *tu_env(const char *name);
/* 1 when this binary runs under valgrind (`make valgrind` sets
 * RNR_VALGRIND). The rnr processes a case starts then run natively:
 * tests/valgrind-cli checks the front end under valgrind. */
int tu_under_valgrind(void);

/* A new empty temporary folder (free the string; tu_rmtree removes it). */
char *tu_tmpdir(void);
void tu_rmtree(const char *path);
/* "DIR/NAME" in a static rotating buffer (valid for the next 7 calls). */
const char *tu_path(const char *dir, const char *name);

void tu_write_file(const char *path, const void *data, size_t n);
/* A text file of the lines 1, 2, ..., COUNT; returns its size in bytes. */
size_t tu_write_counting(const char *path, int count);
/* Whole file, NUL-terminated after *n bytes; fails the test if unreadable. */
uint8_t *tu_read_file(const char *path, size_t *n);

/* Bundle DIR's manifest value of KEY (owned copy), or NULL; fails the test
 * if the manifest does not load. */
char *tu_manifest_value(const char *dir, const char *key);
/* Waits (about 60 s at most) until the file NAME that recorder PID writes
 * into bundle DIR under its temporary name (DIR/.NAME.PID.part) holds more
 * than N bytes; its path into PATH (LEN bytes). */
void tu_wait_part(const char *dir, const char *name, long pid, long n, char *path, size_t len);

/* A forger's tool, to reach the checks behind the bundle's digests: sets
 * manifest KEY of bundle DIR to VALUE (NULL: leaves the keys), then makes
 * the file.NAME.* keys name exactly the bundle files now in DIR, with
 * their sizes and digests, and saves the manifest with a valid checksum. */
void tu_bundle_resign(const char *dir, const char *key, const char *value);

/* Seed for a randomized test: $RNR_TEST_SEED if set, else BASE. Failing
 * assertions should print it so that the case can be rerun. */
uint64_t tu_seed(uint64_t base);

/* A splitmix64 step: small, seedable, good enough for test inputs. */
static inline uint64_t tu_rand(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}
static inline uint64_t tu_below(uint64_t *state, uint64_t n) { return n ? tu_rand(state) % n : 0; }

/* Defines the suite constructor of tests/test_NAME.c: TU_SUITE(NAME) { ... } */
#define TU_SUITE(name) Suite *name##_suite(void); Suite *name##_suite(void)

/* Adds a test case NAME with TIMEOUT seconds to suite S. */
TCase *tu_tcase(Suite *s, const char *name, double timeout);

/* A small random synthetic recording's configuration (2 to 8 CPUs, idle
 * CPUs, more threads than CPUs, preemption, blocking, system calls) with
 * 1000 to 1000 + INSNS_SPREAD instructions per thread, drawn from *RNG. */
void tu_synth_random(synth_config *c, uint64_t *rng, uint64_t insns_spread);
/* The initial log of such a random configuration, in memory (TRUTH and RES
 * may be NULL). */
void tu_synth_log(uint64_t *rng, uint64_t insns_spread, rnr_membuf *in, truth_set *truth,
                  synth_result *res);

#endif
