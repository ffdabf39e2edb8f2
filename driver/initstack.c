/* driver/initstack.c: builds the initial stack the way Linux's ELF loader
 * lays it out for RISC-V (System V psABI, "Process Initialization"):
 *
 *   top:  8 zero bytes
 *         AT_EXECFN string, environment strings, argument strings
 *         (arguments lowest), then AT_RANDOM's 16 bytes below them
 *   sp+.. auxv (key, value) pairs ending with AT_NULL
 *         envp[0..envc-1], NULL
 *         argv[0..argc-1], NULL
 *   sp:   argc                          (sp 16-byte aligned)
 */
#include "driver/initstack.h"

#include <stdlib.h>
#include <string.h>

#include "driver/linux_abi.h"

void initstack_free(initstack *s)
{
    free(s->bytes);
    memset(s, 0, sizeof *s);
}

static void put64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

int initstack_build(const initstack_params *p, initstack *out)
{
    memset(out, 0, sizeof *out);
    /* The strings area, from the top down. */
    uint64_t strings = 8 + strlen(p->execfn) + 1;
    for (size_t i = 0; i < p->envc; i++)
        strings += strlen(p->envp[i]) + 1;
    for (size_t i = 0; i < p->argc; i++)
        strings += strlen(p->argv[i]) + 1;
    if (strings > INITSTACK_MAX)
        return -1;
    uint64_t random_addr = (p->top - strings - 16) & ~(uint64_t)15;

    const uint64_t aux[][2] = {
        {LX_AT_HWCAP, p->hwcap},  {LX_AT_PAGESZ, LX_PAGE_SIZE}, {LX_AT_CLKTCK, 100},
        {LX_AT_PHDR, p->phdr},    {LX_AT_PHENT, p->phent},      {LX_AT_PHNUM, p->phnum},
        {LX_AT_BASE, p->base},    {LX_AT_FLAGS, 0},             {LX_AT_ENTRY, p->entry},
        {LX_AT_UID, p->uid},      {LX_AT_EUID, p->uid},         {LX_AT_GID, p->gid},
        {LX_AT_EGID, p->gid},     {LX_AT_SECURE, 0},            {LX_AT_RANDOM, random_addr},
        {LX_AT_EXECFN, 0 /* filled below */},                  {LX_AT_NULL, 0},
    };
    size_t nauxv = sizeof aux / sizeof aux[0];
    uint64_t words = 1 + (p->argc + 1) + (p->envc + 1) + 2 * nauxv;
    if (words * 8 + (p->top - random_addr) > INITSTACK_MAX)
        return -1;
    uint64_t sp = (random_addr - words * 8) & ~(uint64_t)15;
    size_t len = (size_t)(p->top - sp);
    uint8_t *img = calloc(1, len);
    if (!img)
        return -1;
#define AT(addr) (img + ((addr) - sp))

    /* Strings: execfn highest (below the 8 zero bytes), then environment,
     * then arguments, each block in order of increasing address. */
    uint64_t cursor = p->top - 8;
    size_t n = strlen(p->execfn) + 1;
    cursor -= n;
    uint64_t execfn_addr = cursor;
    memcpy(AT(cursor), p->execfn, n);
    uint64_t env_total = 0, arg_total = 0;
    for (size_t i = 0; i < p->envc; i++)
        env_total += strlen(p->envp[i]) + 1;
    for (size_t i = 0; i < p->argc; i++)
        arg_total += strlen(p->argv[i]) + 1;
    uint64_t env_at = cursor - env_total, arg_at = env_at - arg_total;

    uint64_t w = sp;
    put64(AT(w), p->argc);
    w += 8;
    out->argv_addr = w;
    for (size_t i = 0; i < p->argc; i++, w += 8) {
        n = strlen(p->argv[i]) + 1;
        memcpy(AT(arg_at), p->argv[i], n);
        put64(AT(w), arg_at);
        arg_at += n;
    }
    put64(AT(w), 0);
    w += 8;
    out->envp_addr = w;
    for (size_t i = 0; i < p->envc; i++, w += 8) {
        n = strlen(p->envp[i]) + 1;
        memcpy(AT(env_at), p->envp[i], n);
        put64(AT(w), env_at);
        env_at += n;
    }
    put64(AT(w), 0);
    w += 8;
    out->auxv_addr = w;
    for (size_t i = 0; i < nauxv; i++, w += 16) {
        put64(AT(w), aux[i][0]);
        put64(AT(w + 8), aux[i][0] == LX_AT_EXECFN ? execfn_addr : aux[i][1]);
    }
    memcpy(AT(random_addr), p->random, 16);
#undef AT
    out->bytes = img;
    out->len = len;
    out->sp = sp;
    out->random_addr = random_addr;
    out->execfn_addr = execfn_addr;
    out->nauxv = nauxv;
    return 0;
}
