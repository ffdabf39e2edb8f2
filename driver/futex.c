/* driver/futex.c: futex wait queues: one list of waiting threads in
 * arrival order (wait_addr says which futex each waits on), scanned on
 * wake. Programs have few waiters at a time, so a scan is cheap, and one
 * list keeps every wake order deterministic (first come, first woken). */
#include "driver/internal.h"

void futex_enqueue(drv_proc *p, thread *t)
{
    t->wait_seq = p->wait_seq++;
    t->next = NULL;
    t->prev = p->futex_tail;
    if (p->futex_tail)
        p->futex_tail->next = t;
    else
        p->futex_head = t;
    p->futex_tail = t;
}

void futex_dequeue(drv_proc *p, thread *t)
{
    thread_unlink(&p->futex_head, &p->futex_tail, t);
}

/* Waiter T (its wait_addr the caller's address) waits on the caller's
 * futex: in the same memory (a vfork child shares its parent's), or in a
 * page both processes share since a fork, at the same address there. */
static int same_futex(const drv_proc *p, const thread *t)
{
    return t->proc->mem == p->cur->mem || rru_mem_shares(t->proc->mem, p->cur->mem, t->wait_addr);
}

int futex_wake(drv_proc *p, uint64_t addr, int n, uint32_t bitset, uint64_t when)
{
    int woken = 0;
    thread *t = p->futex_head;
    while (t && woken < n) {
        thread *next = t->next;
        /* A futex is an address in one memory (a vfork child shares its
         * parent's). */
        if (t->wait_addr == addr && same_futex(p, t) && (t->wait_bitset & bitset)) {
            sched_wake(p, t, 0, when);
            woken++;
        }
        t = next;
    }
    return woken;
}

int futex_requeue(drv_proc *p, uint64_t addr, uint64_t addr2, int n)
{
    /* The moved waiters keep their order and queue behind addr2's. */
    thread *moved[64];
    int count = 0;
    while (count < n) {
        int batch = 0;
        for (thread *t = p->futex_head; t && batch < 64 && count + batch < n; t = t->next)
            if (t->wait_addr == addr && same_futex(p, t))
                moved[batch++] = t;
        if (batch == 0)
            break;
        for (int i = 0; i < batch; i++) {
            futex_dequeue(p, moved[i]);
            moved[i]->wait_addr = addr2;
            futex_enqueue(p, moved[i]);
        }
        count += batch;
        if (addr == addr2)
            break;
    }
    return count;
}
