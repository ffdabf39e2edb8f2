/* workloads/suite/hashtable.c: research suite, a concurrent chained hash
 * table with a mutex per bucket (buckets packed side by side, so that
 * neighbouring locks share cache lines) and nodes from malloc. Every thread
 * owns the keys k with k % THREADS == its number and, through them, inserts,
 * deletes, updates and re-inserts, doing a lookup of a random key (anyone's)
 * after each of its own operations; all threads also add into a few hot
 * counters, the heavily contended part.
 *
 * Usage: hashtable [-t THREADS] [-s small|large|N]   N keys
 * (small 16384, large 262144; 8 threads by default).
 *
 * Per key: insert v(k); delete it if k % 3 == 0; add 1 to it if
 * k % 3 == 1; insert w(k) again if k % 6 == 0. Each of the 16 hot counters
 * receives the additions 1, 2, ..., 4096 spread over the threads. Check:
 * the final table holds exactly the expected keys, each once, in its own
 * bucket, with the expected value, and every lookup during the run found
 * either nothing or a value its key can have at some moment. The final
 * contents, and so the printed checksum, do not depend on the interleaving
 * or the thread count. -x skips the re-insert of key 6. */
#include "suite.h"

#define HOT_KEYS 16
#define HOT_ADDS 4096           /* per hot key: 1 + 2 + ... + HOT_ADDS */
#define SEED 0x4a54ull

typedef struct node {
    uint64_t key, value;
    struct node *next;
} node;

typedef struct bucket {
    pthread_mutex_t lock;
    node *head;
} bucket;

static suite_opts opt;
static uint64_t nkeys, nbuckets;    /* nbuckets a power of 2 */
static bucket *table;
static long bad_lookups[SUITE_MAX_THREADS];

static bucket *bucket_of(uint64_t key) { return &table[suite_mix(key) & (nbuckets - 1)]; }
static uint64_t first_value(uint64_t key) { return suite_mix(key ^ SEED) >> 2; }
static uint64_t second_value(uint64_t key) { return ~first_value(key); }
static uint64_t hot_total(void) { return (uint64_t)HOT_ADDS * (HOT_ADDS + 1) / 2; }

/* Finds KEY in B's chain (B locked); returns the link pointing at it, or
 * the final NULL link. */
static node **find(bucket *b, uint64_t key)
{
    node **link = &b->head;
    while (*link && (*link)->key != key)
        link = &(*link)->next;
    return link;
}

static node *new_node(uint64_t key, uint64_t value, node *next)
{
    node *n = malloc(sizeof *n);
    if (!n) {
        fprintf(stderr, "out of memory\n");
        exit(3);
    }
    *n = (node){key, value, next};
    return n;
}

/* Sets KEY to VALUE, inserting it at the head of its chain if absent. */
static void ht_put(uint64_t key, uint64_t value)
{
    bucket *b = bucket_of(key);
    pthread_mutex_lock(&b->lock);
    node **link = find(b, key);
    if (*link)
        (*link)->value = value;
    else
        b->head = new_node(key, value, b->head);
    pthread_mutex_unlock(&b->lock);
}

/* Adds DELTA to KEY's value, inserting it with DELTA if absent. */
static void ht_add(uint64_t key, uint64_t delta)
{
    bucket *b = bucket_of(key);
    pthread_mutex_lock(&b->lock);
    node **link = find(b, key);
    if (*link)
        (*link)->value += delta;
    else
        *link = new_node(key, delta, NULL);
    pthread_mutex_unlock(&b->lock);
}

static int ht_get(uint64_t key, uint64_t *value)
{
    bucket *b = bucket_of(key);
    pthread_mutex_lock(&b->lock);
    node *n = *find(b, key);
    if (n)
        *value = n->value;
    pthread_mutex_unlock(&b->lock);
    return n != NULL;
}

static void ht_delete(uint64_t key)
{
    bucket *b = bucket_of(key);
    pthread_mutex_lock(&b->lock);
    node **link = find(b, key), *n = *link;
    if (n)
        *link = n->next;
    pthread_mutex_unlock(&b->lock);
    free(n);
}

/* May KEY hold VALUE at some moment of the run? */
static int possible(uint64_t key, uint64_t value)
{
    if (key >= nkeys)
        return value <= hot_total();
    return value == first_value(key) || (key % 3 == 1 && value == first_value(key) + 1) ||
           (key % 6 == 0 && value == second_value(key));
}

/* The expected final value of KEY; 0 if it must be absent. */
static int expected(uint64_t key, uint64_t *value)
{
    if (key >= nkeys)
        *value = hot_total();
    else if (key % 6 == 0)
        *value = second_value(key);
    else if (key % 3 == 0)
        return 0;
    else
        *value = first_value(key) + (key % 3 == 1);
    return 1;
}

/* Looks up a random key (the LOOKUP-th of thread ID); counts an
 * impossible value into *BAD. */
static void lookup_random(int id, uint64_t lookup, long *bad)
{
    uint64_t key = suite_random(SEED + (uint64_t)id, lookup) % (nkeys + HOT_KEYS), value;
    if (ht_get(key, &value) && !possible(key, value))
        ++*bad;
}

static void *worker(void *arg)
{
    int id = (int)(intptr_t)arg;
    uint64_t lookups = 0, T = (uint64_t)opt.threads;
    long bad = 0;
    for (uint64_t k = (uint64_t)id; k < nkeys; k += T) {
        ht_put(k, first_value(k));
        lookup_random(id, lookups++, &bad);
    }
    for (uint64_t i = (uint64_t)id; i < HOT_KEYS * HOT_ADDS; i += T)
        ht_add(nkeys + i % HOT_KEYS, i / HOT_KEYS + 1);
    for (uint64_t k = (uint64_t)id; k < nkeys; k += T) {
        if (k % 3 == 0)
            ht_delete(k);
        else if (k % 3 == 1)
            ht_add(k, 1);
        lookup_random(id, lookups++, &bad);
    }
    for (uint64_t k = (uint64_t)id; k < nkeys; k += T) {
        if (k % 6 == 0 && !(opt.inject && k == 6))
            ht_put(k, second_value(k));
        lookup_random(id, lookups++, &bad);
    }
    bad_lookups[id] = bad;
    return NULL;
}

int main(int argc, char **argv)
{
    opt = suite_parse(argc, argv, "hashtable", "keys", 16384, 262144);
    nkeys = (uint64_t)opt.size;
    for (nbuckets = 16; nbuckets < nkeys / 2; nbuckets *= 2)
        ;
    table = suite_alloc(nbuckets, sizeof *table);
    for (uint64_t i = 0; i < nbuckets; i++)
        pthread_mutex_init(&table[i].lock, NULL);
    suite_run_threads(opt.threads, worker);

    uint64_t total = nkeys + HOT_KEYS, entries = 0, want_entries = 0, checksum = 0, wrong_key = 0;
    unsigned char *seen = suite_alloc(total, 1);
    long bad = 0, misplaced = 0, duplicates = 0, wrong = 0;
    for (int t = 0; t < opt.threads; t++)
        bad += bad_lookups[t];
    for (uint64_t i = 0; i < nbuckets; i++)
        for (node *n = table[i].head; n; n = n->next) {
            uint64_t want;
            entries++;
            if (n->key >= total) {
                misplaced++;
                continue;
            }
            if (bucket_of(n->key) != &table[i])
                misplaced++;
            if (seen[n->key]++)
                duplicates++;
            if (!expected(n->key, &want) || want != n->value) {
                if (!wrong++)
                    wrong_key = n->key;
            }
            checksum += suite_mix(n->key ^ suite_mix(n->value));
        }
    for (uint64_t k = 0; k < total; k++) {
        uint64_t want;
        if (expected(k, &want)) {
            want_entries++;
            if (!seen[k] && !wrong++)
                wrong_key = k;
        }
    }
    int ok = !bad && !misplaced && !duplicates && !wrong && entries == want_entries;
    printf("hashtable keys=%" PRIu64 " threads=%d %s entries=%" PRIu64 " checksum=%016" PRIx64 "\n", nkeys,
           opt.threads, ok ? "ok" : "FAILED", entries, checksum);
    if (!ok)
        suite_complain(opt.name, "%ld impossible lookups, %ld misplaced, %ld duplicate, %ld wrong or missing "
                       "entries (first key %" PRIu64 "), %" PRIu64 " entries of %" PRIu64, bad, misplaced,
                       duplicates, wrong, wrong_key, entries, want_entries);
    return ok ? 0 : 1;
}
