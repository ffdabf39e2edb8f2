/* workloads/sort.c: qsort and bsearch on integers, doubles, strings and
 * structs from a seeded generator; checks the order and prints checksums.
 * Usage: sort [N] (default 5000 elements). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t rng = 0x2545f4914f6cdd1dull;
static uint64_t next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

typedef struct item { int key; int seq; char name[24]; } item;

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}
static int cmp_dbl(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}
static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }
static int cmp_item(const void *a, const void *b)
{
    const item *x = a, *y = b;
    if (x->key != y->key)
        return (x->key > y->key) - (x->key < y->key);
    return x->seq - y->seq;   /* makes the order total */
}

int main(int argc, char **argv)
{
    size_t n = argc > 1 ? strtoul(argv[1], NULL, 0) : 5000;
    int *iv = malloc(n * sizeof *iv);
    double *dv = malloc(n * sizeof *dv);
    char **sv = malloc(n * sizeof *sv);
    item *it = malloc(n * sizeof *it);
    if (!iv || !dv || !sv || !it)
        return 1;
    for (size_t i = 0; i < n; i++) {
        iv[i] = (int)(next() % 100000) - 50000;
        dv[i] = (double)(int64_t)next() / 1e15;
        sv[i] = malloc(12);
        snprintf(sv[i], 12, "s%08" PRIx64, next() & 0xffffffff);
        it[i].key = (int)(next() % 97);
        it[i].seq = (int)i;
        snprintf(it[i].name, sizeof it[i].name, "n%zu", i);
    }
    qsort(iv, n, sizeof *iv, cmp_int);
    qsort(dv, n, sizeof *dv, cmp_dbl);
    qsort(sv, n, sizeof *sv, cmp_str);
    qsort(it, n, sizeof *it, cmp_item);
    int ok = 1;
    uint64_t h = 0;
    for (size_t i = 0; i < n; i++) {
        if (i > 0) {
            ok &= iv[i - 1] <= iv[i];
            ok &= dv[i - 1] <= dv[i];
            ok &= strcmp(sv[i - 1], sv[i]) <= 0;
            ok &= cmp_item(&it[i - 1], &it[i]) < 0;
        }
        h = h * 31 + (uint64_t)iv[i] + (uint64_t)it[i].seq * 7 + (uint64_t)(unsigned char)sv[i][3];
    }
    printf("n %zu sorted %d hash %016" PRIx64 "\n", n, ok, h);
    printf("min %d max %d median %d\n", iv[0], iv[n - 1], iv[n / 2]);
    printf("dmin %.6g dmax %.6g\n", dv[0], dv[n - 1]);
    printf("first '%s' last '%s' item0 %d/%s\n", sv[0], sv[n - 1], it[0].key, it[0].name);
    int probe = iv[n / 3];
    int *found = bsearch(&probe, iv, n, sizeof *iv, cmp_int);
    printf("bsearch %d found %d\n", probe, found && *found == probe);
    for (size_t i = 0; i < n; i++)
        free(sv[i]);
    free(iv);
    free(dv);
    free(sv);
    free(it);
    return ok ? 0 : 1;
}
