/* driver/loader.c: the ELF loader: libelf reads the headers of a static
 * riscv64 executable from a copy of the file; every size and offset is
 * checked against the file before a segment is described. */
#include "driver/loader.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <gelf.h>
#include <libelf.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "driver/linux_abi.h"

/* Highest user address + 1 of a Sv39 process: nothing may be loaded above. */
#define USER_TOP 0x4000000000ull
#define FILE_MAX (1ull << 31)

static int fail(char *err, size_t errlen, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int fail(char *err, size_t errlen, const char *path, const char *fmt, ...)
{
    int n = snprintf(err, errlen, "%s: ", path);
    if (n < 0 || (size_t)n >= errlen)
        return -1;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err + n, errlen - (size_t)n, fmt, ap);
    va_end(ap);
    return -1;
}

static int read_whole(const char *path, uint8_t **out, size_t *size, char *err, size_t errlen)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return fail(err, errlen, path, "%s", strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0) {
        int e = errno;
        close(fd);
        return fail(err, errlen, path, "%s", strerror(e));
    }
    if (S_ISDIR(st.st_mode)) {
        close(fd);
        return fail(err, errlen, path, "is a directory, not an executable");
    }
    if (!S_ISREG(st.st_mode) || (uint64_t)st.st_size > FILE_MAX) {
        close(fd);
        return fail(err, errlen, path, "not a regular file of at most 2 GiB");
    }
    size_t n = (size_t)st.st_size;
    uint8_t *buf = malloc(n ? n : 1);
    if (!buf) {
        close(fd);
        return fail(err, errlen, path, "out of memory reading %zu bytes", n);
    }
    size_t got = 0;
    while (got < n) {
        ssize_t r = read(fd, buf + got, n - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) {
            int e = r < 0 ? errno : EIO;
            free(buf);
            close(fd);
            return fail(err, errlen, path, "read error: %s", strerror(e));
        }
        got += (size_t)r;
    }
    close(fd);
    *out = buf;
    *size = n;
    return 0;
}

static int prot_of(uint32_t flags)
{
    return (flags & PF_R ? LX_PROT_READ : 0) | (flags & PF_W ? LX_PROT_WRITE : 0) |
           (flags & PF_X ? LX_PROT_EXEC : 0);
}

static int cmp_seg(const void *a, const void *b)
{
    const loader_segment *x = a, *y = b;
    return (x->vaddr > y->vaddr) - (x->vaddr < y->vaddr);
}

/* What an ELF header describes, for the message refusing it: "x86-64",
 * "32-bit RISC-V", ... */
static const char *elf_kind_name(const GElf_Ehdr *eh, char *buf, size_t len)
{
    const char *m = NULL;
    switch (eh->e_machine) {
    case EM_X86_64: m = "x86-64"; break;
    case EM_386: m = "x86 (i386)"; break;
    case EM_AARCH64: m = "AArch64"; break;
    case EM_ARM: m = "32-bit ARM"; break;
    case EM_PPC64: m = "64-bit PowerPC"; break;
    case EM_S390: m = "s390"; break;
    case EM_RISCV: m = eh->e_ident[EI_CLASS] == ELFCLASS32 ? "32-bit RISC-V" : "big-endian RISC-V"; break;
    }
    if (m)
        snprintf(buf, len, "%s", m);
    else
        snprintf(buf, len, "ELF machine %u", eh->e_machine);
    return buf;
}

/* The checks on the headers, with the ELF handle open. */
static int describe(Elf *e, loader_image *img, char *err, size_t errlen)
{
    const char *path = img->path;
    char kind[64];
    GElf_Ehdr eh;
    if (!gelf_getehdr(e, &eh))
        return fail(err, errlen, path, "truncated or damaged ELF header (%s)", elf_errmsg(-1));
    if (eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_ident[EI_DATA] != ELFDATA2LSB ||
        eh.e_machine != EM_RISCV)
        return fail(err, errlen, path,
                    "not a 64-bit RISC-V executable but %s (ELF class %u, data %u, machine %u); "
                    "rnr runs riscv64 programs (riscv64-linux-gnu-gcc -static)",
                    elf_kind_name(&eh, kind, sizeof kind), eh.e_ident[EI_CLASS], eh.e_ident[EI_DATA],
                    eh.e_machine);
    if (eh.e_type != ET_EXEC && eh.e_type != ET_DYN)
        return fail(err, errlen, path, "not an executable (ELF type %u)", eh.e_type);
    if (eh.e_flags & EF_RISCV_RVE)
        return fail(err, errlen, path, "built for RV64E, rnr simulates RV64GC");
    if (eh.e_phoff > img->file_size ||
        (uint64_t)eh.e_phnum * sizeof(Elf64_Phdr) > img->file_size - eh.e_phoff)
        return fail(err, errlen, path,
                    "truncated: the program headers at 0x%llx lie past the end of the file (0x%zx)",
                    (unsigned long long)eh.e_phoff, img->file_size);
    size_t phnum;
    if (elf_getphdrnum(e, &phnum) != 0)
        return fail(err, errlen, path, "truncated or damaged program headers (%s)", elf_errmsg(-1));
    if (phnum == 0)
        return fail(err, errlen, path, "no program headers: not an executable");
    if (eh.e_phentsize != sizeof(Elf64_Phdr))
        return fail(err, errlen, path, "program header size %u, expected %zu", eh.e_phentsize,
                    sizeof(Elf64_Phdr));

    img->pie = eh.e_type == ET_DYN;
    img->e_flags = eh.e_flags;
    img->phent = eh.e_phentsize;
    img->phnum = phnum;
    size_t nload = 0;
    int64_t phdr_vaddr = -1;
    for (size_t i = 0; i < phnum; i++) {
        GElf_Phdr ph;
        if (!gelf_getphdr(e, (int)i, &ph))
            return fail(err, errlen, path, "program header %zu unreadable (%s)", i, elf_errmsg(-1));
        if (ph.p_type == PT_INTERP) {
            char interp[128] = "?";
            if (ph.p_offset < img->file_size && ph.p_filesz > 0) {
                size_t n = ph.p_filesz < sizeof interp ? (size_t)ph.p_filesz : sizeof interp - 1;
                if (ph.p_offset + n > img->file_size)
                    n = img->file_size - (size_t)ph.p_offset;
                memcpy(interp, img->file + ph.p_offset, n);
                interp[n] = 0;
                interp[strcspn(interp, "\n")] = 0;
            }
            return fail(err, errlen, path,
                        "dynamically linked (interpreter %s); rnr runs static executables "
                        "(link with -static)", interp);
        }
        if (ph.p_type == PT_PHDR)
            phdr_vaddr = (int64_t)ph.p_vaddr;
        if (ph.p_type == PT_LOAD && ph.p_memsz > 0)
            nload++;
    }
    if (nload == 0)
        return fail(err, errlen, path, "no loadable segment");
    img->seg = calloc(nload, sizeof *img->seg);
    if (!img->seg)
        return fail(err, errlen, path, "out of memory");
    uint64_t lo = UINT64_MAX, hi = 0;
    for (size_t i = 0; i < phnum; i++) {
        GElf_Phdr ph;
        gelf_getphdr(e, (int)i, &ph);
        if (ph.p_type != PT_LOAD || ph.p_memsz == 0)
            continue;
        if (ph.p_filesz > ph.p_memsz)
            return fail(err, errlen, path, "segment %zu: file size 0x%llx exceeds memory size 0x%llx",
                        i, (unsigned long long)ph.p_filesz, (unsigned long long)ph.p_memsz);
        if (ph.p_offset > img->file_size || ph.p_filesz > img->file_size - ph.p_offset)
            return fail(err, errlen, path,
                        "truncated: segment %zu needs bytes 0x%llx..0x%llx, the file has 0x%zx",
                        i, (unsigned long long)ph.p_offset,
                        (unsigned long long)(ph.p_offset + ph.p_filesz), img->file_size);
        if (ph.p_vaddr >= USER_TOP || ph.p_memsz > USER_TOP - ph.p_vaddr)
            return fail(err, errlen, path, "segment %zu at 0x%llx+0x%llx lies outside user memory",
                        i, (unsigned long long)ph.p_vaddr, (unsigned long long)ph.p_memsz);
        loader_segment *s = &img->seg[img->nseg++];
        s->vaddr = ph.p_vaddr;
        s->memsz = ph.p_memsz;
        s->filesz = ph.p_filesz;
        s->data = img->file + ph.p_offset;
        s->prot = prot_of(ph.p_flags);
        if (ph.p_vaddr < lo)
            lo = ph.p_vaddr;
        if (ph.p_vaddr + ph.p_memsz > hi)
            hi = ph.p_vaddr + ph.p_memsz;
        /* Linux takes AT_PHDR from the segment whose file range holds them. */
        if (phdr_vaddr < 0 && eh.e_phoff >= ph.p_offset &&
            eh.e_phoff + phnum * sizeof(Elf64_Phdr) <= ph.p_offset + ph.p_filesz)
            phdr_vaddr = (int64_t)(ph.p_vaddr + (eh.e_phoff - ph.p_offset));
    }
    qsort(img->seg, img->nseg, sizeof *img->seg, cmp_seg);
    for (size_t i = 1; i < img->nseg; i++)
        if (img->seg[i].vaddr < img->seg[i - 1].vaddr + img->seg[i - 1].memsz)
            return fail(err, errlen, path, "loadable segments overlap at 0x%llx",
                        (unsigned long long)img->seg[i].vaddr);

    /* A static-pie is linked at 0; its bias places it at LOADER_PIE_BASE. */
    img->bias = 0;
    if (img->pie) {
        if (hi - (lo & ~LX_PAGE_MASK) > USER_TOP - LOADER_PIE_BASE)
            return fail(err, errlen, path, "static-pie image of 0x%llx bytes is too large",
                        (unsigned long long)(hi - lo));
        img->bias = LOADER_PIE_BASE - (lo & ~LX_PAGE_MASK);
    } else if (lo < LX_PAGE_SIZE) {
        return fail(err, errlen, path, "a segment at 0x%llx would map page zero",
                    (unsigned long long)lo);
    }
    for (size_t i = 0; i < img->nseg; i++)
        img->seg[i].vaddr += img->bias;
    img->lo = lo + img->bias;
    img->hi = hi + img->bias;
    img->entry = eh.e_entry + img->bias;
    img->phdr = phdr_vaddr >= 0 ? (uint64_t)phdr_vaddr + img->bias : 0;
    if (img->entry < img->lo || img->entry >= img->hi)
        return fail(err, errlen, path, "entry point 0x%llx lies outside the loaded segments",
                    (unsigned long long)img->entry);
    return 0;
}

int loader_open(const char *path, loader_image *img, char *err, size_t errlen)
{
    memset(img, 0, sizeof *img);
    img->path = strdup(path);
    if (!img->path)
        return fail(err, errlen, path, "out of memory");
    if (read_whole(path, &img->file, &img->file_size, err, errlen) < 0) {
        loader_free(img);
        return -1;
    }
    if (img->file_size < 4 || memcmp(img->file, ELFMAG, SELFMAG) != 0) {
        loader_free(img);
        return fail(err, errlen, path, "not an ELF file");
    }
    if (elf_version(EV_CURRENT) == EV_NONE) {
        loader_free(img);
        return fail(err, errlen, path, "libelf is out of date (%s)", elf_errmsg(-1));
    }
    Elf *e = elf_memory((char *)img->file, img->file_size);
    if (!e || elf_kind(e) != ELF_K_ELF) {
        if (e)
            elf_end(e);
        loader_free(img);
        return fail(err, errlen, path, "not an ELF file (%s)", elf_errmsg(-1));
    }
    int rc = describe(e, img, err, errlen);
    elf_end(e);
    if (rc < 0)
        loader_free(img);
    return rc;
}

void loader_free(loader_image *img)
{
    free(img->path);
    free(img->file);
    free(img->seg);
    memset(img, 0, sizeof *img);
}

int loader_symbolize(const loader_image *img, uint64_t pc, char *out, size_t len)
{
    if (len)
        out[0] = '\0';
    if (!img->file || elf_version(EV_CURRENT) == EV_NONE)
        return -1;
    Elf *e = elf_memory((char *)img->file, img->file_size);
    if (!e)
        return -1;
    /* The function whose [value, value + size) holds PC; failing that
     * (hand-written code has size 0), the closest one below PC. */
    const char *best = NULL, *near = NULL;
    uint64_t best_at = 0, near_at = 0;
    Elf_Scn *scn = NULL;
    while ((scn = elf_nextscn(e, scn)) != NULL) {
        GElf_Shdr sh;
        if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB || sh.sh_entsize == 0)
            continue;
        Elf_Data *d = elf_getdata(scn, NULL);
        size_t n = d ? sh.sh_size / sh.sh_entsize : 0;
        for (size_t i = 0; i < n; i++) {
            GElf_Sym sym;
            if (!gelf_getsym(d, (int)i, &sym) || GELF_ST_TYPE(sym.st_info) != STT_FUNC ||
                sym.st_shndx == SHN_UNDEF)
                continue;
            uint64_t at = sym.st_value + img->bias;
            if (at > pc)
                continue;
            const char *name = elf_strptr(e, sh.sh_link, sym.st_name);
            if (!name || !*name)
                continue;
            if (pc - at < sym.st_size && (!best || at > best_at)) {
                best = name;
                best_at = at;
            }
            if (!near || at > near_at) {
                near = name;
                near_at = at;
            }
        }
    }
    if (!best && near && pc - near_at < 0x10000) {
        best = near;
        best_at = near_at;
    }
    int rc = -1;
    if (best && len) {
        snprintf(out, len, "%s+0x%" PRIx64, best, pc - best_at);
        rc = 0;
    }
    elf_end(e);
    return rc;
}
