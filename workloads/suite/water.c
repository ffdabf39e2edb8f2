/* workloads/suite/water.c: research suite, molecular dynamics of N
 * Lennard-Jones molecules in a periodic box (reduced units, density 0.8,
 * cutoff radius 2.5, velocity Verlet), the O(N^2)-with-cutoff force loop of
 * water simulations. Each thread takes the pairs of its molecules with the
 * next N/2 molecules around the ring (an even share each), sums their
 * forces in a private array, then adds that array into the shared forces
 * one molecule at a time under the molecule's own lock, and its potential
 * energy into a global sum under another lock. Barriers separate the force
 * phase from the position and velocity updates of each time step.
 *
 * Usage: water [-t THREADS] [-s small|large|N]   N molecules on a face-centred
 * cubic lattice, so 4 k^3 for some k; 4 time steps (small 256, large 1372;
 * 8 threads by default).
 *
 * Forces and energies are added as 32.32 fixed-point integers, so sums do
 * not depend on the order the locks are taken in: the trajectory, and the
 * printed energy and checksum, are the same for every interleaving and
 * thread count. Check: after every force phase the forces sum to exactly
 * zero (each pair adds +f and -f: a lost or doubled update shows); at the
 * end the forces equal a serial recomputation, total momentum stays zero
 * within 1e-9 and the total energy drifts by less than 1e-4 of the kinetic
 * energy. -x adds one unit to one force during the first force phase. */
#include <math.h>

#include "suite.h"

#define STEPS 4
#define DT 0.002
#define DENSITY 0.8
#define CUTOFF 2.5
#define FIX_ONE 0x1p32          /* fixed point: 32 fraction bits */
#define SEED 0x3a7e5ull

typedef struct molecule {
    double pos[3], vel[3];
    int64_t force[3];           /* fixed point, sum over all partners */
} molecule;

static suite_opts opt;
static long nmol;
static double box, cutoff2, energy_shift;
static molecule *mol;
static pthread_mutex_t *mol_lock, energy_lock = PTHREAD_MUTEX_INITIALIZER;
static int64_t potential;       /* fixed point, of the last force phase */
static pthread_barrier_t barrier;
static int unbalanced_phase = -1;   /* first force phase whose sum is not 0 */

static double to_double(int64_t q) { return (double)q / FIX_ONE; }

/* Adds the forces of the pairs (i, i + 1 .. i + N/2 around the ring) for
 * i in [lo, hi) into ACC (3 per molecule); returns their potential energy.
 * With N even, the pair at distance N/2 is counted from its lower end only.
 * Shared by the threads and the serial recomputation. */
static __attribute__((noinline)) int64_t pair_forces(long lo, long hi, int64_t *acc)
{
    int64_t energy = 0;
    double half = box / 2;
    for (long i = lo; i < hi; i++)
        for (long k = 1; k <= nmol / 2; k++) {
            long j = (i + k) % nmol;
            if (2 * k == nmol && j < i)
                continue;
            double d[3], r2 = 0;
            for (int c = 0; c < 3; c++) {
                d[c] = mol[i].pos[c] - mol[j].pos[c];
                if (d[c] > half)
                    d[c] -= box;
                else if (d[c] < -half)
                    d[c] += box;
                r2 += d[c] * d[c];
            }
            if (r2 >= cutoff2)
                continue;
            double inv2 = 1 / r2, inv6 = inv2 * inv2 * inv2;
            double f = 24 * inv2 * inv6 * (2 * inv6 - 1);   /* |F| / r */
            for (int c = 0; c < 3; c++) {
                int64_t q = (int64_t)(f * d[c] * FIX_ONE);
                acc[3 * i + c] += q;
                acc[3 * j + c] -= q;
            }
            energy += (int64_t)((4 * inv6 * (inv6 - 1) - energy_shift) * FIX_ONE);
        }
    return energy;
}

/* One force phase: private sums, then each molecule under its lock,
 * starting at our own molecules so that threads start on different locks. */
static void force_phase(int id, long lo, long hi, int64_t *acc, int phase)
{
    memset(acc, 0, sizeof(int64_t) * 3 * (size_t)nmol);
    int64_t energy = pair_forces(lo, hi, acc);
    if (opt.inject && phase == 0 && id == 0)
        acc[0]++;
    for (long s = 0; s < nmol; s++) {
        long m = (lo + s) % nmol;
        int64_t *a = acc + 3 * m;
        if (!a[0] && !a[1] && !a[2])
            continue;
        pthread_mutex_lock(&mol_lock[m]);
        for (int c = 0; c < 3; c++)
            mol[m].force[c] += a[c];
        pthread_mutex_unlock(&mol_lock[m]);
    }
    pthread_mutex_lock(&energy_lock);
    potential += energy;
    pthread_mutex_unlock(&energy_lock);
    pthread_barrier_wait(&barrier);
    if (id == 0) {
        int64_t sum[3] = {0, 0, 0};
        for (long m = 0; m < nmol; m++)
            for (int c = 0; c < 3; c++)
                sum[c] += mol[m].force[c];
        if ((sum[0] || sum[1] || sum[2]) && unbalanced_phase < 0)
            unbalanced_phase = phase;
    }
    pthread_barrier_wait(&barrier);
}

static void half_kick(long lo, long hi)
{
    for (long m = lo; m < hi; m++)
        for (int c = 0; c < 3; c++)
            mol[m].vel[c] += 0.5 * DT * to_double(mol[m].force[c]);
}

static double kinetic_energy(void)
{
    double e = 0;
    for (long m = 0; m < nmol; m++)
        for (int c = 0; c < 3; c++)
            e += 0.5 * mol[m].vel[c] * mol[m].vel[c];
    return e;
}

static double initial_energy;

static void *worker(void *arg)
{
    int id = (int)(intptr_t)arg;
    long lo, hi;
    suite_slice(nmol, opt.threads, id, &lo, &hi);
    int64_t *acc = suite_alloc(3 * (size_t)nmol, sizeof(int64_t));
    force_phase(id, lo, hi, acc, 0);
    if (id == 0)
        initial_energy = to_double(potential) + kinetic_energy();
    pthread_barrier_wait(&barrier);
    for (int step = 1; step <= STEPS; step++) {
        half_kick(lo, hi);
        for (long m = lo; m < hi; m++)
            for (int c = 0; c < 3; c++) {
                double x = mol[m].pos[c] + DT * mol[m].vel[c];
                mol[m].pos[c] = x < 0 ? x + box : x >= box ? x - box : x;
                mol[m].force[c] = 0;
            }
        if (id == 0)
            potential = 0;
        pthread_barrier_wait(&barrier);
        force_phase(id, lo, hi, acc, step);
        half_kick(lo, hi);
    }
    free(acc);
    return NULL;
}

int main(int argc, char **argv)
{
    opt = suite_parse(argc, argv, "water", "molecules, 4 k^3 for some k: 32, 108, 256, 500, ...", 256, 1372);
    nmol = opt.size;
    long per_side = 1;
    while (4 * per_side * per_side * per_side < nmol)
        per_side++;
    if (4 * per_side * per_side * per_side != nmol)
        suite_usage(opt.name, "molecules, 4 k^3 for some k: 32, 108, 256, 500, ...");
    box = cbrt((double)nmol / DENSITY);
    double cutoff = fmin(CUTOFF, box / 2);
    cutoff2 = cutoff * cutoff;
    double inv6 = 1 / (cutoff2 * cutoff2 * cutoff2);
    energy_shift = 4 * inv6 * (inv6 - 1);
    mol = suite_alloc((size_t)nmol, sizeof *mol);
    mol_lock = suite_alloc((size_t)nmol, sizeof *mol_lock);

    /* A face-centred cubic lattice (4 sites per cell), jittered; random
     * velocities without drift. */
    static const double basis[4][3] = {{0, 0, 0}, {0.5, 0.5, 0}, {0.5, 0, 0.5}, {0, 0.5, 0.5}};
    double spacing = box / (double)per_side, mean[3] = {0, 0, 0};
    for (long m = 0; m < nmol; m++) {
        long cell = m / 4;
        long corner[3] = {cell % per_side, cell / per_side % per_side, cell / per_side / per_side};
        for (int c = 0; c < 3; c++) {
            double jitter = 0.05 * (suite_unit(SEED, 6 * (uint64_t)m + (uint64_t)c) - 0.5);
            mol[m].pos[c] = spacing * ((double)corner[c] + 0.25 + basis[m % 4][c] + jitter);
            mol[m].vel[c] = 2 * suite_unit(SEED, 6 * (uint64_t)m + 3 + (uint64_t)c) - 1;
            mean[c] += mol[m].vel[c] / (double)nmol;
        }
        pthread_mutex_init(&mol_lock[m], NULL);
    }
    for (long m = 0; m < nmol; m++)
        for (int c = 0; c < 3; c++)
            mol[m].vel[c] -= mean[c];
    pthread_barrier_init(&barrier, NULL, (unsigned)opt.threads);
    suite_run_threads(opt.threads, worker);

    /* The final forces again, serially. */
    int64_t *acc = suite_alloc(3 * (size_t)nmol, sizeof(int64_t));
    int64_t serial_potential = pair_forces(0, nmol, acc);
    long differ = -1;
    for (long m = 0; m < nmol && differ < 0; m++)
        if (memcmp(acc + 3 * m, mol[m].force, sizeof mol[m].force) != 0)
            differ = m;
    double momentum = 0, kinetic = kinetic_energy();
    for (int c = 0; c < 3; c++) {
        double p = 0;
        for (long m = 0; m < nmol; m++)
            p += mol[m].vel[c];
        momentum = suite_worse(momentum, fabs(p));
    }
    double energy = to_double(potential) + kinetic, drift = fabs(energy - initial_energy) / kinetic;
    uint64_t h = SUITE_FNV_START;
    for (long m = 0; m < nmol; m++)
        h = suite_fnv(h, mol[m].pos, sizeof mol[m].pos);
    int ok = unbalanced_phase < 0 && differ < 0 && serial_potential == potential && momentum <= 1e-9 &&
             drift <= 1e-4;
    printf("water n=%ld steps=%d threads=%d %s energy=%.6f checksum=%016" PRIx64 "\n", nmol, STEPS,
           opt.threads, ok ? "ok" : "FAILED", energy, h);
    if (unbalanced_phase >= 0)
        suite_complain(opt.name, "the forces of phase %d do not sum to zero", unbalanced_phase);
    if (differ >= 0 || serial_potential != potential)
        suite_complain(opt.name, "forces or energy differ from a serial recomputation (first molecule %ld)", differ);
    if (!(momentum <= 1e-9))
        suite_complain(opt.name, "total momentum %.3g is not zero", momentum);
    if (!(drift <= 1e-4))
        suite_complain(opt.name, "energy drifted by %.3g of the kinetic energy", drift);
    return ok ? 0 : 1;
}
