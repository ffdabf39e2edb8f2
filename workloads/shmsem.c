/* workloads/shmsem.c: POSIX shared memory and a named semaphore between
 * threads (glibc keeps both in /dev/shm: rnr gives the guest a private one
 * with --private-tmp). THREADS threads add ROUNDS times each to a counter
 * in a shm_open'd mapping, under a semaphore from sem_open (a second
 * sem_open of the name gives the same semaphore); the counter is read
 * back through a new mapping of the object, then both are unlinked.
 * Usage: shmsem [THREADS [ROUNDS]] */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static volatile uint64_t *counter;
static sem_t *sem;
static int rounds;

static void die(const char *what)
{
    printf("%s: %s\n", what, strerror(errno));
    exit(1);
}

static void *worker(void *arg)
{
    (void)arg;
    for (int i = 0; i < rounds; i++) {
        if (sem_wait(sem) != 0)
            die("sem_wait");
        uint64_t v = *counter;   /* a lost update if the semaphore did not exclude */
        sched_yield();
        *counter = v + 1;
        sem_post(sem);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    int nthreads = argc > 1 ? atoi(argv[1]) : 4;
    rounds = argc > 2 ? atoi(argv[2]) : 50;
    if (nthreads < 1 || nthreads > 16 || rounds < 0)
        return 2;
    char shm_name[64], sem_name[64];
    snprintf(shm_name, sizeof shm_name, "/rnr-shmsem-%d", (int)getpid());
    snprintf(sem_name, sizeof sem_name, "/rnr-shmsem-sem-%d", (int)getpid());
    int fd = shm_open(shm_name, O_CREAT | O_EXCL | O_RDWR, 0600);
    if (fd < 0)
        die("shm_open");
    if (ftruncate(fd, 4096) != 0)
        die("ftruncate");
    counter = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (counter == MAP_FAILED)
        die("mmap");
    sem = sem_open(sem_name, O_CREAT | O_EXCL, 0600, 1);
    if (sem == SEM_FAILED)
        die("sem_open");
    sem_t *again = sem_open(sem_name, 0);
    int value = -1;
    sem_getvalue(again, &value);
    printf("second sem_open: %s, value %d\n", again == sem ? "the same semaphore" : "another", value);
    pthread_t th[16];
    for (int i = 0; i < nthreads; i++)
        pthread_create(&th[i], NULL, worker, NULL);
    for (int i = 0; i < nthreads; i++)
        pthread_join(th[i], NULL);
    printf("counter %llu of %d\n", (unsigned long long)*counter, nthreads * rounds);
    munmap((void *)counter, 4096);
    close(fd);
    int fd2 = shm_open(shm_name, O_RDONLY, 0);
    if (fd2 < 0)
        die("shm_open again");
    const uint64_t *ro = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd2, 0);
    if (ro == MAP_FAILED)
        die("mmap again");
    printf("read back through a new mapping: %llu\n", (unsigned long long)*ro);
    printf("sem_close %d %d, sem_unlink %d, shm_unlink %d\n", sem_close(again), sem_close(sem),
           sem_unlink(sem_name), shm_unlink(shm_name));
    errno = 0;
    printf("shm_open after unlink: %s\n", shm_open(shm_name, O_RDWR, 0) < 0 ? strerror(errno) : "opened");
    return 0;
}
