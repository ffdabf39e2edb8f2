/* workloads/suite/barnes.c: research suite, Barnes-Hut gravitational
 * n-body simulation on an octree. Each time step: the threads find the
 * bounding cube together, then all insert their bodies into one shared
 * tree (an empty or body slot of a cell is changed under the cell's lock;
 * descending through cells takes no lock), barrier, the centre-of-mass
 * pass (each thread summarizes some of the root's grandchildren, then one
 * thread the top two levels), barrier, then each thread computes the
 * accelerations of its bodies by walking the tree, opening a cell when its
 * size over its distance exceeds 0.7 (the distance less the offset of the
 * centre of mass from the cube's centre), barrier, and moves its bodies.
 *
 * Usage: barnes [-t THREADS] [-s small|large|N]   N bodies, 2 time steps
 * (small 512, large 4096; 8 threads by default).
 *
 * The tree's shape depends only on the positions, never on the order of
 * insertion, and every sum runs over children in octant order, so the
 * accelerations (and the printed checksum) do not depend on the interleaving
 * or the thread count. Check, on the last step's tree: every body is in it
 * exactly once and the root holds the total mass; the accelerations of 16
 * bodies agree with a direct O(N) sum within 3% (the root of the summed
 * squared differences over the summed squared accelerations). -x leaves one
 * body out of the last tree. */
#include <math.h>

#include "suite.h"

#define STEPS 2
#define DT 0.01
#define THETA 0.7
#define SOFTENING2 1e-4
#define SAMPLES 16
#define TOLERANCE 0.03
#define LOCKS 512               /* cell c uses lock c % LOCKS */
#define MAX_DEPTH 60
#define SEED 0xba7e5ull

/* A child slot: 0 empty, c > 0 cell c, -(b + 1) body b. */
typedef struct cell {
    double centre[3], half;     /* the cube */
    double mass, com[3];        /* from the centre-of-mass pass */
    double open2;               /* open the cell when nearer than this (squared) */
    int child[8];
} cell;

static suite_opts opt;
static long nbodies;
static double (*pos)[3], (*vel)[3], (*acc)[3], *mass;
static cell *cells;             /* cells[1] is the root */
static int cell_count, max_cells;
static pthread_mutex_t cell_lock[LOCKS];
static pthread_barrier_t barrier;
static double thread_lo[SUITE_MAX_THREADS][3], thread_hi[SUITE_MAX_THREADS][3];

static int octant(const cell *c, const double *p)
{
    return (p[0] >= c->centre[0]) | (p[1] >= c->centre[1]) << 1 | (p[2] >= c->centre[2]) << 2;
}

/* A new cell for octant OCT of cell PARENT (or the root if PARENT is 0). */
static int new_cell(int parent, int oct, const double *centre, double half)
{
    int c = __atomic_add_fetch(&cell_count, 1, __ATOMIC_RELAXED);
    if (c >= max_cells) {
        fprintf(stderr, "barnes: more than %d cells\n", max_cells);
        exit(3);
    }
    cell *n = &cells[c];
    memset(n, 0, sizeof *n);
    if (parent) {
        const cell *p = &cells[parent];
        n->half = p->half / 2;
        for (int k = 0; k < 3; k++)
            n->centre[k] = p->centre[k] + (oct >> k & 1 ? n->half : -n->half);
    } else {
        n->half = half;
        memcpy(n->centre, centre, sizeof n->centre);
    }
    return c;
}

/* Inserts body B below the root. */
static void insert(int b)
{
    int c = 1;
    for (int depth = 0;; depth++) {
        if (depth > MAX_DEPTH) {
            fprintf(stderr, "barnes: bodies too close together (body %d)\n", b);
            exit(3);
        }
        int oct = octant(&cells[c], pos[b]);
        int *slot = &cells[c].child[oct];
        int v = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
        if (v > 0) {
            c = v;
            continue;
        }
        pthread_mutex_t *lock = &cell_lock[c % LOCKS];
        pthread_mutex_lock(lock);
        v = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
        if (v == 0) {
            __atomic_store_n(slot, -(b + 1), __ATOMIC_RELEASE);
            pthread_mutex_unlock(lock);
            return;
        }
        if (v < 0) {            /* a body: push it one level down */
            int n = new_cell(c, oct, NULL, 0);
            cells[n].child[octant(&cells[n], pos[-v - 1])] = v;
            __atomic_store_n(slot, n, __ATOMIC_RELEASE);
            v = n;
        }
        pthread_mutex_unlock(lock);
        c = v;
    }
}

/* Mass and centre of mass of cell C from its children's, in octant order. */
static void summarize(int c)
{
    cell *p = &cells[c];
    double m = 0, s[3] = {0, 0, 0};
    for (int k = 0; k < 8; k++) {
        int v = p->child[k];
        double cm;
        const double *at;
        if (v > 0) {
            cm = cells[v].mass;
            at = cells[v].com;
        } else if (v < 0) {
            cm = mass[-v - 1];
            at = pos[-v - 1];
        } else {
            continue;
        }
        m += cm;
        for (int d = 0; d < 3; d++)
            s[d] += cm * at[d];
    }
    p->mass = m;
    double offset2 = 0;
    for (int d = 0; d < 3; d++) {
        p->com[d] = m > 0 ? s[d] / m : p->centre[d];
        offset2 += (p->com[d] - p->centre[d]) * (p->com[d] - p->centre[d]);
    }
    /* Size over distance below THETA, the distance measured from the
     * centre of mass but counting its offset from the cube's centre, so
     * that a body close to a lopsided cell still opens it. */
    double open = 2 * p->half / THETA + sqrt(offset2);
    p->open2 = open * open;
}

static void summarize_subtree(int c)
{
    for (int k = 0; k < 8; k++)
        if (cells[c].child[k] > 0)
            summarize_subtree(cells[c].child[k]);
    summarize(c);
}

/* Adds the pull of a point mass M at AT on a body at P into A. */
static void pull(double *a, const double *p, const double *at, double m)
{
    double d[3] = {at[0] - p[0], at[1] - p[1], at[2] - p[2]};
    double r2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2] + SOFTENING2;
    double f = m / (r2 * sqrt(r2));
    for (int k = 0; k < 3; k++)
        a[k] += f * d[k];
}

static void walk(int c, int b, double *a)
{
    for (int k = 0; k < 8; k++) {
        int v = cells[c].child[k];
        if (v < 0 && -v - 1 != b) {
            pull(a, pos[b], pos[-v - 1], mass[-v - 1]);
        } else if (v > 0) {
            const cell *q = &cells[v];
            double d[3] = {q->com[0] - pos[b][0], q->com[1] - pos[b][1], q->com[2] - pos[b][2]};
            double dist2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2];
            if (dist2 > q->open2)
                pull(a, pos[b], q->com, q->mass);
            else
                walk(v, b, a);
        }
    }
}

static void build_tree(int id, long lo, long hi, int last)
{
    double l[3] = {INFINITY, INFINITY, INFINITY}, h[3] = {-INFINITY, -INFINITY, -INFINITY};
    for (long b = lo; b < hi; b++)
        for (int k = 0; k < 3; k++) {
            l[k] = fmin(l[k], pos[b][k]);
            h[k] = fmax(h[k], pos[b][k]);
        }
    memcpy(thread_lo[id], l, sizeof l);
    memcpy(thread_hi[id], h, sizeof h);
    pthread_barrier_wait(&barrier);
    if (id == 0) {
        for (int t = 1; t < opt.threads; t++)
            for (int k = 0; k < 3; k++) {
                l[k] = fmin(l[k], thread_lo[t][k]);
                h[k] = fmax(h[k], thread_hi[t][k]);
            }
        double centre[3], half = 0;
        for (int k = 0; k < 3; k++) {
            centre[k] = (l[k] + h[k]) / 2;
            half = fmax(half, (h[k] - l[k]) / 2);
        }
        cell_count = 0;
        new_cell(0, 0, centre, half * 1.001 + 1e-9);
    }
    pthread_barrier_wait(&barrier);
    for (long b = lo; b < hi; b++)
        if (!(opt.inject && last && b == nbodies / 2))
            insert((int)b);
    pthread_barrier_wait(&barrier);

    /* Centre of mass: grandchildren of the root in parallel, then the top. */
    for (int k = 0; k < 64; k++) {
        int v = cells[1].child[k / 8];
        if (k % opt.threads == id && v > 0 && cells[v].child[k % 8] > 0)
            summarize_subtree(cells[v].child[k % 8]);
    }
    pthread_barrier_wait(&barrier);
    if (id == 0) {
        for (int k = 0; k < 8; k++)
            if (cells[1].child[k] > 0)
                summarize(cells[1].child[k]);
        summarize(1);
    }
    pthread_barrier_wait(&barrier);
}

static void *worker(void *arg)
{
    int id = (int)(intptr_t)arg;
    long lo, hi;
    suite_slice(nbodies, opt.threads, id, &lo, &hi);
    for (int step = 1; step <= STEPS; step++) {
        build_tree(id, lo, hi, step == STEPS);
        for (long b = lo; b < hi; b++) {
            acc[b][0] = acc[b][1] = acc[b][2] = 0;
            walk(1, (int)b, acc[b]);
        }
        if (step == STEPS)
            break;
        pthread_barrier_wait(&barrier);
        for (long b = lo; b < hi; b++)
            for (int k = 0; k < 3; k++) {
                vel[b][k] += DT * acc[b][k];
                pos[b][k] += DT * vel[b][k];
            }
    }
    return NULL;
}

/* Counts the bodies below cell C into SEEN; returns how many. */
static long count_bodies(int c, unsigned char *seen)
{
    long count = 0;
    for (int k = 0; k < 8; k++) {
        int v = cells[c].child[k];
        if (v > 0) {
            count += count_bodies(v, seen);
        } else if (v < 0) {
            seen[-v - 1]++;
            count++;
        }
    }
    return count;
}

int main(int argc, char **argv)
{
    opt = suite_parse(argc, argv, "barnes", "bodies", 512, 4096);
    nbodies = opt.size;
    if (nbodies > 1 << 28)
        suite_usage(opt.name, "bodies, at most 2^28");
    pos = suite_alloc((size_t)nbodies, sizeof *pos);
    vel = suite_alloc((size_t)nbodies, sizeof *vel);
    acc = suite_alloc((size_t)nbodies, sizeof *acc);
    mass = suite_alloc((size_t)nbodies, sizeof *mass);
    max_cells = (int)(8 * nbodies + 1024);
    cells = suite_alloc((size_t)max_cells, sizeof *cells);
    for (int i = 0; i < LOCKS; i++)
        pthread_mutex_init(&cell_lock[i], NULL);

    /* A Plummer sphere (radius cut at 10), at rest, equal masses. */
    double total = 0;
    for (long b = 0; b < nbodies; b++) {
        double r = 10;
        for (uint64_t try = 0; try < 64; try++) {
            double u = suite_unit(SEED, 64 * (uint64_t)b + try) * 0.999 + 0.0005;
            r = 1 / sqrt(pow(u, -2.0 / 3) - 1);
            if (r <= 10)
                break;
        }
        r = fmin(r, 10);
        double z = 2 * suite_unit(SEED + 1, (uint64_t)b) - 1, phi = 2 * M_PI * suite_unit(SEED + 2, (uint64_t)b);
        double s = sqrt(1 - z * z);
        pos[b][0] = r * s * cos(phi);
        pos[b][1] = r * s * sin(phi);
        pos[b][2] = r * z;
        mass[b] = 1.0 / (double)nbodies;
        total += mass[b];
    }
    pthread_barrier_init(&barrier, NULL, (unsigned)opt.threads);
    suite_run_threads(opt.threads, worker);

    unsigned char *seen = suite_alloc((size_t)nbodies, 1);
    long in_tree = count_bodies(1, seen), once = 0;
    for (long b = 0; b < nbodies; b++)
        once += seen[b] == 1;
    /* The sampled accelerations' error, relative to their size: the root
     * of the summed squared differences over the summed squared sizes. */
    double diff2 = 0, size2 = 0;
    for (int s = 0; s < SAMPLES && s < nbodies; s++) {
        long b = (long)(suite_random(SEED + 3, (uint64_t)s) % (uint64_t)nbodies);
        double a[3] = {0, 0, 0};
        for (long o = 0; o < nbodies; o++)
            if (o != b)
                pull(a, pos[b], pos[o], mass[o]);
        for (int k = 0; k < 3; k++) {
            diff2 += (a[k] - acc[b][k]) * (a[k] - acc[b][k]);
            size2 += a[k] * a[k];
        }
    }
    double error = size2 > 0 ? sqrt(diff2 / size2) : sqrt(diff2);
    uint64_t h = suite_fnv(SUITE_FNV_START, acc, sizeof *acc * (size_t)nbodies);
    int tree_ok = in_tree == nbodies && once == nbodies && fabs(cells[1].mass - total) <= 1e-12 * total;
    int ok = tree_ok && error <= TOLERANCE;
    printf("barnes n=%ld steps=%d threads=%d %s checksum=%016" PRIx64 "\n", nbodies, STEPS, opt.threads,
           ok ? "ok" : "FAILED", h);
    if (!tree_ok)
        suite_complain(opt.name, "the tree holds %ld bodies (%ld of %ld exactly once), mass %.17g of %.17g",
                       in_tree, once, nbodies, cells[1].mass, total);
    if (!(error <= TOLERANCE))
        suite_complain(opt.name, "accelerations off by %.3g of the direct sum (tolerance %.3g)", error, TOLERANCE);
    return ok ? 0 : 1;
}
