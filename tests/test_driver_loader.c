/* tests/test_driver_loader.c: the ELF loader (driver/loader.c) on the
 * guest programs and on damaged copies of them, and the initial stack
 * (driver/initstack.c): argc/argv/envp/auxv contents and alignment. */
#include <elf.h>
#include <stdlib.h>
#include <string.h>

#include "driver/initstack.h"
#include "driver/linux_abi.h"
#include "driver/loader.h"
#include "tests/testutil.h"

static const char *guest(const char *name) { return tu_path(tu_env("RNR_GUEST_DIR"), name); }

START_TEST(loader_reads_a_static_executable)
{
    loader_image img;
    char err[256];
    ck_assert_msg(loader_open(guest("intmath"), &img, err, sizeof err) == 0, "%s", err);
    ck_assert_int_eq(img.pie, 0);
    ck_assert_uint_eq(img.bias, 0);
    ck_assert_uint_ge(img.nseg, 2);
    ck_assert_uint_eq(img.phent, sizeof(Elf64_Phdr));
    ck_assert_uint_gt(img.phnum, 2);
    /* Linux's AT_PHDR: the headers lie in the first segment (offset 0). */
    ck_assert_uint_eq(img.phdr, img.seg[0].vaddr + ((const Elf64_Ehdr *)img.file)->e_phoff);
    ck_assert_uint_ge(img.entry, img.lo);
    ck_assert_uint_lt(img.entry, img.hi);
    int have_rx = 0, have_rw = 0;
    for (size_t i = 0; i < img.nseg; i++) {
        ck_assert_uint_le(img.seg[i].filesz, img.seg[i].memsz);
        have_rx |= img.seg[i].prot == (LX_PROT_READ | LX_PROT_EXEC);
        have_rw |= img.seg[i].prot == (LX_PROT_READ | LX_PROT_WRITE);
        if (i)
            ck_assert_uint_ge(img.seg[i].vaddr, img.seg[i - 1].vaddr + img.seg[i - 1].memsz);
    }
    ck_assert(have_rx && have_rw);
    /* bss: the data segment is larger in memory than in the file. */
    ck_assert_uint_gt(img.seg[img.nseg - 1].memsz, img.seg[img.nseg - 1].filesz);
    ck_assert_uint_eq(img.hi, img.seg[img.nseg - 1].vaddr + img.seg[img.nseg - 1].memsz);
    loader_free(&img);
}
END_TEST

START_TEST(loader_places_a_static_pie_at_its_base)
{
    loader_image img;
    char err[256];
    ck_assert_msg(loader_open(guest("pie_hello"), &img, err, sizeof err) == 0, "%s", err);
    ck_assert_int_eq(img.pie, 1);
    ck_assert_uint_eq(img.bias, LOADER_PIE_BASE);
    ck_assert_uint_eq(img.lo, LOADER_PIE_BASE);
    ck_assert_uint_eq(img.entry, LOADER_PIE_BASE + ((const Elf64_Ehdr *)img.file)->e_entry);
    ck_assert_uint_eq(img.phdr, LOADER_PIE_BASE + ((const Elf64_Ehdr *)img.file)->e_phoff);
    loader_free(&img);
}
END_TEST

/* A copy of intmath, changed by FN, in a temporary file. */
static char *damaged(char *dir, void (*fn)(uint8_t *b, size_t *n))
{
    size_t n;
    uint8_t *b = tu_read_file(guest("intmath"), &n);
    fn(b, &n);
    char *path = strdup(tu_path(dir, "damaged"));
    tu_write_file(path, b, n);
    free(b);
    return path;
}

static void cut_to_100(uint8_t *b, size_t *n) { (void)b; *n = 100; }
static void cut_half(uint8_t *b, size_t *n) { (void)b; *n /= 2; }
static void to_x86(uint8_t *b, size_t *n) { (void)n; ((Elf64_Ehdr *)b)->e_machine = EM_X86_64; }
static void to_rel(uint8_t *b, size_t *n) { (void)n; ((Elf64_Ehdr *)b)->e_type = ET_REL; }
static void to_32bit(uint8_t *b, size_t *n) { (void)n; b[EI_CLASS] = ELFCLASS32; }
static void add_interp(uint8_t *b, size_t *n)
{
    (void)n;
    Elf64_Ehdr *eh = (Elf64_Ehdr *)b;
    Elf64_Phdr *ph = (Elf64_Phdr *)(b + eh->e_phoff);
    for (int i = 0; i < eh->e_phnum; i++)
        if (ph[i].p_type == PT_NOTE) {
            ph[i].p_type = PT_INTERP;
            return;
        }
    ck_abort_msg("no PT_NOTE to turn into PT_INTERP");
}

START_TEST(loader_rejects_bad_files_with_one_line_naming_them)
{
    static const struct {
        void (*fn)(uint8_t *b, size_t *n);
        const char *expect;
    } cases[] = {
        {cut_to_100, "truncated"},
        {cut_half, "truncated"},
        {to_x86, "not a 64-bit RISC-V executable but x86-64"},
        {to_32bit, "not a 64-bit RISC-V executable but 32-bit RISC-V"},
        {to_rel, "not an executable"},
        {add_interp, "dynamically linked"},
    };
    char *dir = tu_tmpdir();
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *path = damaged(dir, cases[i].fn);
        loader_image img;
        char err[256];
        ck_assert_int_eq(loader_open(path, &img, err, sizeof err), -1);
        ck_assert_msg(strncmp(err, path, strlen(path)) == 0, "case %zu: '%s'", i, err);
        ck_assert_msg(strstr(err, cases[i].expect) != NULL, "case %zu: '%s'", i, err);
        ck_assert_ptr_null(strchr(err, '\n'));
        free(path);
    }
    const char *text = tu_path(dir, "script");
    tu_write_file(text, "#!/bin/sh\necho hi\n", 18);
    loader_image img;
    char err[256];
    ck_assert_int_eq(loader_open(text, &img, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "not an ELF file") != NULL, "%s", err);
    ck_assert_int_eq(loader_open(tu_path(dir, "missing"), &img, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "No such file") != NULL, "%s", err);
    ck_assert_int_eq(loader_open(dir, &img, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "directory") != NULL, "%s", err);
    tu_rmtree(dir);
    free(dir);
}
END_TEST

/* Every prefix of a small static executable (the fuzz corpus's), run and
 * recorded: exit 2 with one line naming the file, or (once the program
 * headers and segments are there: section headers are not needed, as for
 * Linux) the program runs; never a crash. */
START_TEST(loader_truncated_executables_fail_cleanly_in_run_and_record)
{
    size_t n;
    uint8_t *bytes = tu_read_file(tu_path(tu_env("RNR_FUZZ_CORPUS"), "loader/static_exec"), &n);
    char *dir = tu_tmpdir();
    char *path = strdup(tu_path(dir, "cut"));
    for (size_t len = 0; len < n; len += 61) {
        tu_write_file(path, bytes, len);
        tu_output o;
        tu_rnr(&o, (const char *[]){"run", "--", path, NULL});
        int ran = strstr(o.out, "hello from pie") != NULL;
        ck_assert_msg(ran || (o.status == 2 && tu_count_lines(o.err) == 1 && strstr(o.err, path)),
                      "run, %zu bytes: status %d, '%s'", len, o.status, o.err);
        tu_output_free(&o);
        const char *b = tu_path(dir, "bundle");
        tu_rnr(&o, (const char *[]){"record", "--quiet", "-o", b, "--", path, NULL});
        ck_assert_msg(ran ? strstr(o.out, "hello from pie") != NULL
                          : o.status == 2 && tu_count_lines(o.err) == 1 && strstr(o.err, path),
                      "record, %zu bytes: status %d, '%s'", len, o.status, o.err);
        tu_output_free(&o);
        tu_rmtree(tu_path(dir, "bundle"));
    }
    free(bytes);
    free(path);
    tu_rmtree(dir);
    free(dir);
}
END_TEST

/* ---- the initial stack ---- */

static uint64_t rd64(const initstack *s, uint64_t addr)
{
    ck_assert_uint_ge(addr, s->sp);
    ck_assert_uint_le(addr + 8, s->sp + s->len);
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | s->bytes[addr - s->sp + (uint64_t)i];
    return v;
}

static const char *str_at(const initstack *s, uint64_t addr)
{
    ck_assert_uint_ge(addr, s->sp);
    ck_assert_uint_lt(addr, s->sp + s->len);
    const char *p = (const char *)s->bytes + (addr - s->sp);
    ck_assert_ptr_nonnull(memchr(p, 0, s->sp + s->len - addr));
    return p;
}

START_TEST(initstack_lays_out_argv_envp_and_auxv)
{
    const char *argv[] = {"/bin/prog", "one", "", "three words"};
    const char *envp[] = {"A=1", "PATH=/usr/bin"};
    initstack_params p;
    memset(&p, 0, sizeof p);
    p.top = 0x4000000000ull;
    p.argv = argv;
    p.argc = 4;
    p.envp = envp;
    p.envc = 2;
    p.execfn = "/bin/prog";
    for (int i = 0; i < 16; i++)
        p.random[i] = (uint8_t)(0xa0 + i);
    p.phdr = 0x10040;
    p.phent = 56;
    p.phnum = 7;
    p.entry = 0x107c4;
    p.hwcap = LX_HWCAP_RV64IMAFDC;
    p.uid = 1000;
    p.gid = 1001;
    initstack s;
    ck_assert_int_eq(initstack_build(&p, &s), 0);
    ck_assert_uint_eq(s.sp % 16, 0);
    ck_assert_uint_eq(s.sp + s.len, p.top);
    ck_assert_uint_eq(rd64(&s, s.sp), 4);
    ck_assert_uint_eq(s.argv_addr, s.sp + 8);
    for (int i = 0; i < 4; i++)
        ck_assert_str_eq(str_at(&s, rd64(&s, s.argv_addr + 8 * (uint64_t)i)), argv[i]);
    ck_assert_uint_eq(rd64(&s, s.argv_addr + 32), 0);
    ck_assert_uint_eq(s.envp_addr, s.argv_addr + 40);
    for (int i = 0; i < 2; i++)
        ck_assert_str_eq(str_at(&s, rd64(&s, s.envp_addr + 8 * (uint64_t)i)), envp[i]);
    ck_assert_uint_eq(rd64(&s, s.envp_addr + 16), 0);
    ck_assert_uint_eq(s.auxv_addr, s.envp_addr + 24);
    /* Every auxv key once, with its value; AT_NULL last. */
    struct { uint64_t key, value; int seen; } want[] = {
        {LX_AT_PHDR, 0x10040, 0}, {LX_AT_PHENT, 56, 0}, {LX_AT_PHNUM, 7, 0},
        {LX_AT_PAGESZ, 4096, 0}, {LX_AT_ENTRY, 0x107c4, 0}, {LX_AT_BASE, 0, 0},
        {LX_AT_HWCAP, 0x112d, 0}, {LX_AT_CLKTCK, 100, 0}, {LX_AT_UID, 1000, 0},
        {LX_AT_EUID, 1000, 0}, {LX_AT_GID, 1001, 0}, {LX_AT_EGID, 1001, 0},
        {LX_AT_SECURE, 0, 0}, {LX_AT_FLAGS, 0, 0},
    };
    size_t nwant = sizeof want / sizeof want[0];
    uint64_t random_addr = 0, execfn_addr = 0;
    size_t k = 0;
    for (;; k++) {
        uint64_t key = rd64(&s, s.auxv_addr + 16 * k), val = rd64(&s, s.auxv_addr + 16 * k + 8);
        if (key == LX_AT_NULL)
            break;
        if (key == LX_AT_RANDOM) {
            random_addr = val;
            continue;
        }
        if (key == LX_AT_EXECFN) {
            execfn_addr = val;
            continue;
        }
        size_t j = 0;
        while (j < nwant && want[j].key != key)
            j++;
        ck_assert_msg(j < nwant, "unexpected auxv key %llu", (unsigned long long)key);
        ck_assert_msg(!want[j].seen, "auxv key %llu twice", (unsigned long long)key);
        ck_assert_msg(want[j].value == val, "auxv key %llu = 0x%llx", (unsigned long long)key,
                      (unsigned long long)val);
        want[j].seen = 1;
    }
    ck_assert_uint_eq(k + 1, s.nauxv);
    for (size_t j = 0; j < nwant; j++)
        ck_assert_msg(want[j].seen, "auxv key %llu missing", (unsigned long long)want[j].key);
    ck_assert_uint_eq(random_addr, s.random_addr);
    ck_assert_mem_eq(s.bytes + (random_addr - s.sp), p.random, 16);
    ck_assert_str_eq(str_at(&s, execfn_addr), "/bin/prog");
    /* The vectors end below the AT_RANDOM bytes, the strings above them. */
    ck_assert_uint_le(s.auxv_addr + 16 * s.nauxv, random_addr);
    ck_assert_uint_gt(rd64(&s, s.argv_addr), random_addr);
    ck_assert_uint_eq(rd64(&s, p.top - 8), 0);
    initstack_free(&s);
}
END_TEST

START_TEST(initstack_keeps_sp_aligned_for_every_argument_count)
{
    const char *words[] = {"a", "bb", "ccc", "dddd", "eeeee", "ffffff", "g", "hh", "iii"};
    for (size_t argc = 1; argc <= 9; argc++) {
        for (size_t envc = 0; envc <= 3; envc++) {
            initstack_params p;
            memset(&p, 0, sizeof p);
            p.top = 0x3ffffff000ull;
            p.argv = words;
            p.argc = argc;
            p.envp = words + 5;
            p.envc = envc;
            p.execfn = words[argc - 1];
            initstack s;
            ck_assert_int_eq(initstack_build(&p, &s), 0);
            ck_assert_uint_eq(s.sp % 16, 0);
            ck_assert_uint_eq(rd64(&s, s.sp), argc);
            ck_assert_uint_eq(s.random_addr % 16, 0);
            initstack_free(&s);
        }
    }
}
END_TEST

START_TEST(initstack_refuses_oversized_arguments)
{
    size_t big = INITSTACK_MAX;
    char *huge = malloc(big + 1);
    memset(huge, 'x', big);
    huge[big] = 0;
    const char *argv[] = {"p", huge};
    initstack_params p;
    memset(&p, 0, sizeof p);
    p.top = 0x4000000000ull;
    p.argv = argv;
    p.argc = 2;
    p.execfn = "p";
    initstack s;
    ck_assert_int_eq(initstack_build(&p, &s), -1);
    free(huge);
}
END_TEST

TU_SUITE(driver_loader)
{
    Suite *s = suite_create("driver_loader");
    TCase *tc = tu_tcase(s, "loader", 30);
    tcase_add_test(tc, loader_reads_a_static_executable);
    tcase_add_test(tc, loader_places_a_static_pie_at_its_base);
    tcase_add_test(tc, loader_rejects_bad_files_with_one_line_naming_them);
    tcase_add_test(tc, loader_truncated_executables_fail_cleanly_in_run_and_record);
    tc = tu_tcase(s, "initstack", 30);
    tcase_add_test(tc, initstack_lays_out_argv_envp_and_auxv);
    tcase_add_test(tc, initstack_keeps_sp_aligned_for_every_argument_count);
    tcase_add_test(tc, initstack_refuses_oversized_arguments);
    return s;
}
