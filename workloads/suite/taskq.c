/* workloads/suite/taskq.c: research suite, a work-stealing task queue
 * running a recursive search: counting the ways to place N queens on an
 * N x N board. A task is a partial board; one above the split depth pushes
 * a task per free square of the next row, one at the split depth counts
 * its completions serially. Each thread owns a deque under a mutex: it
 * pushes and pops at the bottom, idle threads steal from the top of others'
 * deques (victims from a per-thread random sequence) and yield when all
 * are empty; a global atomic count of unfinished tasks says when to stop.
 *
 * Usage: taskq [-t THREADS] [-s small|large|N]   an N x N board, 1 <= N <= 18
 * (small 11, large 13; 8 threads by default).
 *
 * Check: the count equals the known number of solutions, exactly. Which
 * thread runs which task depends on the interleaving, but the set of tasks
 * does not, so the printed count and number of tasks are always the same.
 * -x makes the first task report one solution too many. */
#include <sched.h>

#include "suite.h"

#define SPLIT_DEPTH 4
#define DEQUE_SIZE 1024

/* A partial board: ROW queens placed; the masks say which squares of the
 * next row they attack (by column and by both diagonals). */
typedef struct task {
    int row;
    uint32_t cols, left, right;
} task;

typedef struct __attribute__((aligned(64))) deque {
    pthread_mutex_t lock;
    long top, bottom;           /* tasks are slot[top % SIZE .. bottom % SIZE) */
    task slot[DEQUE_SIZE];
} deque;

typedef struct __attribute__((aligned(64))) tally {
    uint64_t solutions, tasks;
} tally;

/* Solutions for N = 0 .. 18 (OEIS A000170). */
static const uint64_t known[19] = {1, 1, 0, 0, 2, 10, 4, 40, 92, 352, 724, 2680, 14200, 73712, 365596,
                                   2279184, 14772512, 95815104, 666090624};

static suite_opts opt;
static int board;
static uint32_t full;           /* N low bits set */
static deque deques[SUITE_MAX_THREADS];
static tally tallies[SUITE_MAX_THREADS];
static long unfinished;         /* atomic: tasks pushed and not yet run to the end */

static int push(deque *d, task t)
{
    pthread_mutex_lock(&d->lock);
    int ok = d->bottom - d->top < DEQUE_SIZE;
    if (ok)
        d->slot[d->bottom++ % DEQUE_SIZE] = t;
    pthread_mutex_unlock(&d->lock);
    return ok;
}

/* Takes the newest task (OWN) or the oldest (a thief); 0 if empty. */
static int take(deque *d, int own, task *t)
{
    pthread_mutex_lock(&d->lock);
    int ok = d->bottom > d->top;
    if (ok)
        *t = own ? d->slot[--d->bottom % DEQUE_SIZE] : d->slot[d->top++ % DEQUE_SIZE];
    pthread_mutex_unlock(&d->lock);
    return ok;
}

static uint64_t count_completions(int row, uint32_t cols, uint32_t left, uint32_t right)
{
    if (row == board)
        return 1;
    uint64_t n = 0;
    for (uint32_t avail = full & ~(cols | left | right); avail; avail &= avail - 1) {
        uint32_t bit = avail & -avail;
        n += count_completions(row + 1, cols | bit, (left | bit) << 1 & full, (right | bit) >> 1);
    }
    return n;
}

static void run(int id, task t)
{
    tallies[id].tasks++;
    if (opt.inject && t.row == 0)
        tallies[id].solutions++;
    if (t.row >= SPLIT_DEPTH || t.row == board) {
        tallies[id].solutions += count_completions(t.row, t.cols, t.left, t.right);
    } else {
        for (uint32_t avail = full & ~(t.cols | t.left | t.right); avail; avail &= avail - 1) {
            uint32_t bit = avail & -avail;
            task child = {t.row + 1, t.cols | bit, (t.left | bit) << 1 & full, (t.right | bit) >> 1};
            __atomic_add_fetch(&unfinished, 1, __ATOMIC_RELAXED);
            if (!push(&deques[id], child))
                run(id, child);     /* deque full: run it here */
        }
    }
    __atomic_sub_fetch(&unfinished, 1, __ATOMIC_RELEASE);
}

static void *worker(void *arg)
{
    int id = (int)(intptr_t)arg;
    uint64_t victim_seq = 0;
    for (;;) {
        task t;
        int got = take(&deques[id], 1, &t);
        for (int tries = 0; !got && tries < opt.threads - 1; tries++) {
            int v = (int)(suite_random((uint64_t)id, victim_seq++) % (uint64_t)opt.threads);
            if (v != id)
                got = take(&deques[v], 0, &t);
        }
        if (got) {
            run(id, t);
        } else if (__atomic_load_n(&unfinished, __ATOMIC_ACQUIRE) == 0) {
            return NULL;
        } else {
            sched_yield();
        }
    }
}

int main(int argc, char **argv)
{
    opt = suite_parse(argc, argv, "taskq", "board size, 1 to 18", 11, 13);
    if (opt.size > 18)
        suite_usage(opt.name, "board size, 1 to 18");
    board = (int)opt.size;
    full = (uint32_t)((1ull << board) - 1);
    for (int t = 0; t < opt.threads; t++)
        pthread_mutex_init(&deques[t].lock, NULL);
    unfinished = 1;
    push(&deques[0], (task){0, 0, 0, 0});
    suite_run_threads(opt.threads, worker);

    uint64_t solutions = 0, tasks = 0;
    for (int t = 0; t < opt.threads; t++) {
        solutions += tallies[t].solutions;
        tasks += tallies[t].tasks;
    }
    int ok = solutions == known[board];
    printf("taskq queens=%d threads=%d %s solutions=%" PRIu64 " tasks=%" PRIu64 "\n", board, opt.threads,
           ok ? "ok" : "FAILED", solutions, tasks);
    if (!ok)
        suite_complain(opt.name, "%" PRIu64 " solutions counted, %" PRIu64 " known", solutions, known[board]);
    return ok ? 0 : 1;
}
