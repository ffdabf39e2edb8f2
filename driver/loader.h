/* driver/loader.h: reads a static riscv64 Linux executable (ET_EXEC, or
 * ET_DYN without an interpreter: static-pie) with libelf and describes its
 * loadable segments; placing them in guest memory is the process's job. */
#ifndef RNR_DRIVER_LOADER_H
#define RNR_DRIVER_LOADER_H

#include <stddef.h>
#include <stdint.h>

/* Where a static-pie executable is placed: two thirds of a Sv39 user
 * address space (256 GiB), as Linux's ELF_ET_DYN_BASE, page aligned. */
#define LOADER_PIE_BASE 0x2aaaaaa000ull

/* One PT_LOAD segment, already relocated by the load bias. */
typedef struct loader_segment {
    uint64_t vaddr;        /* first byte in guest memory */
    uint64_t memsz;        /* bytes in memory (>= filesz; the rest is zero) */
    uint64_t filesz;       /* bytes taken from the file */
    const uint8_t *data;   /* filesz bytes inside the image's file copy */
    int prot;              /* LX_PROT_* from p_flags */
} loader_segment;

typedef struct loader_image {
    char *path;            /* as given, owned */
    uint8_t *file;         /* the whole file, owned */
    size_t file_size;
    int pie;               /* ET_DYN (static-pie) */
    uint64_t bias;         /* load bias added to every vaddr (0 for ET_EXEC) */
    uint64_t entry;        /* relocated entry point */
    uint64_t phdr;         /* guest address of the program headers (AT_PHDR), 0 if not loaded */
    uint64_t phent, phnum; /* AT_PHENT, AT_PHNUM */
    uint64_t lo, hi;       /* lowest address and end of the highest segment (memsz) */
    loader_segment *seg;   /* PT_LOAD segments in address order, owned */
    size_t nseg;
    uint32_t e_flags;      /* EF_RISCV_* */
} loader_image;

/* Reads PATH. 0 on success (free with loader_free); -1 with one line
 * "PATH: problem" in err for a missing/unreadable file, a file that is not
 * ELF, not 64-bit little-endian RISC-V, not an executable, dynamically
 * linked (PT_INTERP), truncated, or with impossible segments. */
int loader_open(const char *path, loader_image *img, char *err, size_t errlen);
void loader_free(loader_image *img);

/* "NAME+0xOFF": the function of IMG's symbol table (SHT_SYMTAB, load bias
 * applied) holding guest address PC, into OUT. 0, or -1 (OUT "") when the
 * image has no symbol table or no function holds PC. */
int loader_symbolize(const loader_image *img, uint64_t pc, char *out, size_t len);

#endif
