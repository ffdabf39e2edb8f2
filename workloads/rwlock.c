/* workloads/rwlock.c: readers check under a read lock that a table is
 * consistent (every entry equal) while writers bump every entry under the
 * write lock. Usage: rwlock [READERS [WRITERS [ROUNDS]]]
 * (default 3 readers, 2 writers, 200 rounds). */
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define ENTRIES 32
static pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;
static pthread_mutex_t stat_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t table[ENTRIES];
static long rounds;
static uint64_t torn, reads;

static void *reader(void *arg)
{
    (void)arg;
    uint64_t my_torn = 0;
    for (long r = 0; r < rounds; r++) {
        pthread_rwlock_rdlock(&rw);
        for (int i = 1; i < ENTRIES; i++)
            my_torn += table[i] != table[0];
        pthread_rwlock_unlock(&rw);
    }
    pthread_mutex_lock(&stat_lock);
    torn += my_torn;
    reads += (uint64_t)rounds;
    pthread_mutex_unlock(&stat_lock);
    return NULL;
}

static void *writer(void *arg)
{
    (void)arg;
    for (long r = 0; r < rounds; r++) {
        pthread_rwlock_wrlock(&rw);
        for (int i = 0; i < ENTRIES; i++)
            table[i]++;
        pthread_rwlock_unlock(&rw);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    int nr = argc > 1 ? atoi(argv[1]) : 3, nw = argc > 2 ? atoi(argv[2]) : 2;
    rounds = argc > 3 ? atol(argv[3]) : 200;
    if (nr < 0 || nw < 0 || nr + nw < 1 || nr + nw > 512 || rounds < 0)
        return 2;
    pthread_t *t = malloc(sizeof *t * (size_t)(nr + nw));
    /* Readers and writers alternate while both kinds remain. */
    for (int i = 0, r = 0, w = 0; i < nr + nw; i++) {
        int as_writer = w < nw && (r >= nr || i % 2 == 1);
        w += as_writer;
        r += !as_writer;
        pthread_create(&t[i], NULL, as_writer ? writer : reader, NULL);
    }
    for (int i = 0; i < nr + nw; i++)
        pthread_join(t[i], NULL);
    uint64_t expect = (uint64_t)nw * (uint64_t)rounds;
    int ok = torn == 0 && table[0] == expect && reads == (uint64_t)nr * (uint64_t)rounds;
    printf("rwlock: readers %d writers %d value %" PRIu64 " expected %" PRIu64 " torn %" PRIu64 " %s\n",
           nr, nw, table[0], expect, torn, ok ? "ok" : "WRONG");
    free(t);
    return ok ? 0 : 1;
}
