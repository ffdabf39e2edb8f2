/* driver/initstack.h: the Linux initial process stack of a RISC-V program:
 * argc, argv, envp, the auxiliary vector and the strings and bytes they
 * point to, built as an image of the top of the stack. */
#ifndef RNR_DRIVER_INITSTACK_H
#define RNR_DRIVER_INITSTACK_H

#include <stddef.h>
#include <stdint.h>

/* What goes into the image. */
typedef struct initstack_params {
    uint64_t top;                      /* stack end (exclusive), 16-byte aligned */
    const char *const *argv;           /* argc strings */
    size_t argc;
    const char *const *envp;           /* envc strings */
    size_t envc;
    const char *execfn;                /* AT_EXECFN string (the program path) */
    uint8_t random[16];                /* AT_RANDOM bytes */
    uint64_t phdr, phent, phnum;       /* AT_PHDR, AT_PHENT, AT_PHNUM */
    uint64_t entry;                    /* AT_ENTRY */
    uint64_t base;                     /* AT_BASE: 0 without an interpreter */
    uint64_t hwcap;                    /* AT_HWCAP */
    uint64_t uid, gid;                 /* AT_UID/AT_EUID, AT_GID/AT_EGID */
} initstack_params;

/* The image: `len` bytes to be placed at guest address `sp` (so that it
 * ends at params.top). sp is 16-byte aligned and points at argc. */
typedef struct initstack {
    uint8_t *bytes;                    /* owned; free with initstack_free */
    size_t len;
    uint64_t sp;
    uint64_t argv_addr, envp_addr, auxv_addr, random_addr, execfn_addr;
    size_t nauxv;                      /* (key, value) pairs, AT_NULL included */
} initstack;

/* Upper bound on the image: what does not fit gives -1 (E2BIG in Linux). */
#define INITSTACK_MAX (2u << 20)

/* Builds the image; 0, or -1 if it would exceed INITSTACK_MAX. */
int initstack_build(const initstack_params *p, initstack *out);
void initstack_free(initstack *s);

#endif
