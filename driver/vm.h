/* driver/vm.h: the guest process's address space as Linux keeps it: a
 * sorted list of mapped regions with permissions, brk, and the mmap,
 * munmap, mprotect, madvise rules with their errno values. The pages
 * themselves live in the simulated machine; the address space tells it
 * what to map, unmap, protect, zero or fill through vm_backend. Addresses
 * are chosen deterministically (top-down first fit below the stack gap). */
#ifndef RNR_DRIVER_VM_H
#define RNR_DRIVER_VM_H

#include <stddef.h>
#include <stdint.h>

/* Layout of a Sv39 process (256 GiB of user addresses). */
#define VM_USER_TOP 0x4000000000ull     /* first address above user space */
#define VM_MIN_ADDR 0x10000ull          /* mmap_min_addr: nothing is mapped below */
#define VM_STACK_TOP VM_USER_TOP        /* the main thread's stack ends here */
#define VM_STACK_SIZE (8ull << 20)      /* RLIMIT_STACK */
#define VM_MMAP_BASE (VM_USER_TOP - (128ull << 20)) /* mmap grows down from here */

/* What the address space asks of the memory that holds the pages. Each
 * returns 0, or -1 when the memory cannot do it (out of host memory). */
typedef struct vm_backend {
    void *ctx;
    int (*map)(void *ctx, uint64_t addr, uint64_t len, int prot);   /* new zero pages */
    void (*unmap)(void *ctx, uint64_t addr, uint64_t len);
    void (*protect)(void *ctx, uint64_t addr, uint64_t len, int prot);
    /* Writes bytes (file contents) or zeros (data == NULL) into mapped
     * pages regardless of their protection: the kernel's own store. */
    int (*fill)(void *ctx, uint64_t addr, const uint8_t *data, uint64_t len);
} vm_backend;

/* The kind of a region, for messages and for what MADV_DONTNEED restores. */
typedef enum vm_kind {
    VM_ANON = 0, VM_FILE = 1, VM_IMAGE = 2, VM_STACK = 3, VM_BRK = 4,
} vm_kind;

typedef struct vm_blob vm_blob;          /* file contents shared by regions */

typedef struct vm_region {
    uint64_t start, end;                 /* page aligned, start < end */
    int prot;                            /* LX_PROT_* */
    vm_kind kind;
    vm_blob *blob;                       /* VM_FILE: contents; NULL otherwise */
    uint64_t blob_off;                   /* file offset of `start` */
    int committed;                       /* counts against the limit (vm_set_limit) */
    int shared;                          /* MAP_SHARED: a fork shares its pages */
} vm_region;

typedef struct vm vm;

/* A new empty address space over BACKEND (copied). NULL if out of memory. */
vm *vm_new(const vm_backend *backend);
void vm_free(vm *v);
/* A copy of V (fork's): the same regions, brk and limit over the same
 * backend; file contents shared. NULL if out of memory. */
vm *vm_clone(const vm *v);
/* V holds no region any more, without a word to its backend (the memory
 * behind it is new and empty: a vfork child's at its execve). */
void vm_forget_regions(vm *v);

/* Maps [addr, addr+len) (page aligned) of KIND for the loader and the
 * initial stack; the range must be free. 0, or -errno. */
int vm_map_fixed(vm *v, uint64_t addr, uint64_t len, int prot, vm_kind kind);
/* The same with DATA_LEN bytes of DATA placed at DATA_ADDR inside the
 * range (what MADV_DONTNEED restores later): the loader's segments. */
int vm_map_image(vm *v, uint64_t addr, uint64_t len, int prot, uint64_t data_addr,
                 const uint8_t *data, uint64_t data_len);
/* Sets the start of the brk area (the page-aligned end of the image). */
void vm_set_brk_start(vm *v, uint64_t start);

/* The system calls: results as the kernel returns them (address or
 * -errno). For a file mapping, DATA holds the file's bytes from OFF on
 * (DATA_LEN of them; the rest of the mapping reads as zero). */
int64_t vm_mmap(vm *v, uint64_t addr, uint64_t len, int prot, int flags, int is_file,
                const uint8_t *data, uint64_t data_len, uint64_t off);
int64_t vm_munmap(vm *v, uint64_t addr, uint64_t len);
int64_t vm_mprotect(vm *v, uint64_t addr, uint64_t len, int prot);
int64_t vm_madvise(vm *v, uint64_t addr, uint64_t len, int advice);
/* mremap without moving: shrinks in place, or grows in place when the
 * pages after the region are free; otherwise -ENOMEM (glibc then copies). */
int64_t vm_mremap(vm *v, uint64_t old_addr, uint64_t old_len, uint64_t new_len, int flags);
/* brk(addr): the new break, or the old one when the request is refused. */
uint64_t vm_brk(vm *v, uint64_t addr);

/* 1 if every byte of [addr, addr+len) is mapped with all of PROT. */
int vm_accessible(const vm *v, uint64_t addr, uint64_t len, int prot);
/* The region holding ADDR, or NULL. */
const vm_region *vm_find(const vm *v, uint64_t addr);
/* The text of /proc/self/maps for this address space, NUL-terminated, its
 * length in *LEN (malloc'd; NULL if out of memory). IMAGE_PATH names the
 * program's segments. */
char *vm_maps_text(const vm *v, const char *image_path, size_t *len);
size_t vm_count(const vm *v);
const vm_region *vm_region_at(const vm *v, size_t i);
uint64_t vm_brk_current(const vm *v);
/* Bytes mapped in all regions. */
uint64_t vm_mapped_bytes(const vm *v);

/* Bytes of the regions that count against the limit (committed). */
uint64_t vm_committed_bytes(const vm *v);

/* The memory limit: Linux's RLIMIT_AS check (may_expand_vm) on the
 * committed bytes, which are all mapped bytes except anonymous
 * reservations: a region mapped PROT_NONE (glibc's 64 MiB per malloc
 * arena, thread stacks' guards) counts only once mprotect makes it
 * accessible, and then for good (as Linux's VM_ACCOUNT: its pages may
 * exist). File and image mappings always count. A change that would take
 * the committed bytes above LIMIT (rounded down to a page) fails with
 * -ENOMEM and changes nothing: mmap (MAP_FIXED counts only the pages not
 * committed already), mprotect of a reservation, mremap growing, brk
 * growing (the break stays), vm_map_fixed, vm_map_image. A limit below
 * what is committed only stops growth. VM_NO_LIMIT (the default) is
 * RLIM_INFINITY. Pages the machine holds lie in committed regions, so
 * they never exceed the limit either. */
#define VM_NO_LIMIT UINT64_MAX
void vm_set_limit(vm *v, uint64_t limit);
uint64_t vm_limit(const vm *v);

#endif
