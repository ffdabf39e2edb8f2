/* rru/decode.c: the decoder and disassembler, both expanded from
 * rru/insns.def: field extraction per format, compressed instructions
 * expanded into the base instruction they stand for. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rru/internal.h"

const rru_insn_row rru_insn_rows[] = {
#define INSN(name, match, mask, fmt, ext) { #name, match, mask, RRU_FMT_##fmt, RRU_OP_##name, #ext },
#define CINSN(name, match, mask, ext) { #name, match, mask, -1, RRU_COP_##name, #ext },
#include "rru/insns.def"
#undef INSN
#undef CINSN
};
const unsigned rru_insn_nrows = sizeof rru_insn_rows / sizeof rru_insn_rows[0];

static const rru_exec_fn exec_fns[RRU_OP_COUNT] = {
#define INSN(name, match, mask, fmt, ext) [RRU_OP_##name] = rru_x_##name,
#define CINSN(name, match, mask, ext)
#include "rru/insns.def"
#undef INSN
#undef CINSN
    [RRU_OP_illegal] = rru_x_illegal,
};

static const char *const op_names[RRU_OP_COUNT] = {
#define INSN(name, match, mask, fmt, ext) [RRU_OP_##name] = #name,
#define CINSN(name, match, mask, ext)
#include "rru/insns.def"
#undef INSN
#undef CINSN
    [RRU_OP_illegal] = "illegal",
};

static const rru_fmt op_fmt[RRU_OP_COUNT] = {
#define INSN(name, match, mask, fmt, ext) [RRU_OP_##name] = RRU_FMT_##fmt,
#define CINSN(name, match, mask, ext)
#include "rru/insns.def"
#undef INSN
#undef CINSN
    [RRU_OP_illegal] = RRU_FMT_N,
};

/* Forwarding variants by op: [0] rs1, [1] rs2, [2] both (rru_fwd_row). */
static rru_exec_fn fwd_fns[RRU_OP_COUNT][3];

/* Mnemonics with '.' for '_', built once. */
static char dotted[RRU_OP_COUNT][16];

/* Rows bucketed: 32-bit ones by major opcode, 16-bit ones by quadrant and
 * funct3. Each bucket lists row indices; rows never overlap, so the first
 * match is the only one. */
#define MAX_PER_BUCKET 64
static uint16_t bucket32[128][MAX_PER_BUCKET];
static uint8_t nbucket32[128];
static uint16_t bucket16[32][MAX_PER_BUCKET];
static uint8_t nbucket16[32];
static pthread_once_t tables_once = PTHREAD_ONCE_INIT;

static unsigned key16(uint32_t bits) { return (bits & 3) | ((bits >> 13) & 7) << 2; }

static void build_tables(void)
{
    for (unsigned op = 0; op < RRU_OP_COUNT; op++) {
        const char *n = op_names[op];
        size_t i = 0;
        for (; n[i] && i + 1 < sizeof dotted[op]; i++)
            dotted[op][i] = n[i] == '_' ? '.' : n[i];
        dotted[op][i] = '\0';
    }
    const struct { const rru_fwd_row *rows; unsigned n; } fwd[] = {
        {rru_fwd_rvi, rru_fwd_rvi_n},
        {rru_fwd_rvm, rru_fwd_rvm_n},
    };
    for (unsigned t = 0; t < sizeof fwd / sizeof fwd[0]; t++) {
        for (unsigned i = 0; i < fwd[t].n; i++) {
            const rru_fwd_row *f = &fwd[t].rows[i];
            fwd_fns[f->op][0] = f->rs1;
            fwd_fns[f->op][1] = f->rs2;
            fwd_fns[f->op][2] = f->both;
        }
    }
    for (unsigned r = 0; r < rru_insn_nrows; r++) {
        const rru_insn_row *row = &rru_insn_rows[r];
        if (row->fmt >= 0) {
            /* Every 32-bit row fixes the major opcode. */
            unsigned k = row->match & 0x7f;
            if (nbucket32[k] >= MAX_PER_BUCKET)
                abort();   /* raise MAX_PER_BUCKET */
            bucket32[k][nbucket32[k]++] = (uint16_t)r;
        } else {
            /* Every compressed row fixes the quadrant and funct3. */
            unsigned k = key16(row->match);
            if (nbucket16[k] >= MAX_PER_BUCKET)
                abort();
            bucket16[k][nbucket16[k]++] = (uint16_t)r;
        }
    }
}

const char *rru_op_name(unsigned op)
{
    pthread_once(&tables_once, build_tables);
    return op < RRU_OP_COUNT ? dotted[op] : "?";
}

static int64_t sext(uint64_t v, unsigned bits)
{
    uint64_t m = 1ull << (bits - 1);
    v &= (bits == 64) ? ~0ull : (1ull << bits) - 1;
    return (int64_t)((v ^ m) - m);
}

static void set_op(rru_insn *d, unsigned op)
{
    d->op = (uint16_t)op;
    d->fn = exec_fns[op];
}

static int illegal(rru_insn *d)
{
    set_op(d, RRU_OP_illegal);
    return d->len;
}

static uint8_t xrd(unsigned r) { return (uint8_t)(r == 0 ? 32 : r); }

static int decode32(uint32_t b, rru_insn *d)
{
    const unsigned k = b & 0x7f;
    int row = -1;
    for (unsigned i = 0; i < nbucket32[k]; i++) {
        const rru_insn_row *r = &rru_insn_rows[bucket32[k][i]];
        if ((b & r->mask) == r->match) {
            row = bucket32[k][i];
            break;
        }
    }
    if (row < 0)
        return illegal(d);
    const rru_insn_row *r = &rru_insn_rows[row];
    unsigned rd = (b >> 7) & 31;
    d->rs1 = (b >> 15) & 31;
    d->rs2 = (b >> 20) & 31;
    d->rs3 = (b >> 27) & 31;
    d->rm = (b >> 12) & 7;
    d->rd = (uint8_t)rd;
    switch ((rru_fmt)r->fmt) {
    case RRU_FMT_R: d->rd = xrd(rd); break;
    case RRU_FMT_FR: case RRU_FMT_R4: break;
    case RRU_FMT_I: d->rd = xrd(rd); d->imm = (int32_t)b >> 20; break;
    case RRU_FMT_FI: d->imm = (int32_t)b >> 20; break;
    case RRU_FMT_S:
        d->imm = (int32_t)(((uint32_t)((int32_t)(b & 0xfe000000) >> 20)) | ((b >> 7) & 0x1f));
        break;
    case RRU_FMT_B:
        d->imm = (int32_t)((uint32_t)((int32_t)(b & 0x80000000) >> 19) | ((b & 0x80) << 4) |
                           ((b >> 20) & 0x7e0) | ((b >> 7) & 0x1e));
        break;
    case RRU_FMT_U: d->rd = xrd(rd); d->imm = (int32_t)(b & 0xfffff000); break;
    case RRU_FMT_J:
        d->rd = xrd(rd);
        d->imm = (int32_t)((uint32_t)((int32_t)(b & 0x80000000) >> 11) | (b & 0xff000) |
                           ((b >> 9) & 0x800) | ((b >> 20) & 0x7fe));
        break;
    case RRU_FMT_SH6: d->rd = xrd(rd); d->imm = (b >> 20) & 0x3f; break;
    case RRU_FMT_SH5: d->rd = xrd(rd); d->imm = (b >> 20) & 0x1f; break;
    case RRU_FMT_CSR: case RRU_FMT_CSRI: d->rd = xrd(rd); d->imm = b >> 20; break;
    case RRU_FMT_N: break;
    }
    set_op(d, (unsigned)r->op);
    return 4;
}

/* ---- compressed instructions ---- */

static unsigned rd_p(uint32_t c) { return 8 + ((c >> 2) & 7); }    /* bits 4:2 */
static unsigned rs1_p(uint32_t c) { return 8 + ((c >> 7) & 7); }   /* bits 9:7 */
static unsigned full_rd(uint32_t c) { return (c >> 7) & 31; }
static unsigned full_rs2(uint32_t c) { return (c >> 2) & 31; }
static int64_t imm6(uint32_t c) { return sext(((c >> 7) & 0x20) | ((c >> 2) & 0x1f), 6); }
static unsigned shamt6(uint32_t c) { return ((c >> 7) & 0x20) | ((c >> 2) & 0x1f); }
static uint32_t uimm_d(uint32_t c) { return ((c >> 7) & 0x38) | ((c << 1) & 0xc0); }   /* c.ld/fld/sd/fsd */
static uint32_t uimm_w(uint32_t c) { return ((c >> 7) & 0x38) | ((c >> 4) & 4) | ((c << 1) & 0x40); }

/* Base instruction with integer rd/rs1/rs2 (rd 0 redirected) or FP fields. */
static int cx(rru_insn *d, unsigned op, unsigned rd, unsigned rs1, unsigned rs2, int64_t imm, int int_rd)
{
    d->rd = int_rd ? xrd(rd) : (uint8_t)rd;
    d->rs1 = (uint8_t)rs1;
    d->rs2 = (uint8_t)rs2;
    d->rs3 = 0;
    d->rm = 0;
    d->imm = imm;
    set_op(d, op);
    return 2;
}

static int decode16(uint32_t c, rru_insn *d)
{
    const unsigned k = key16(c);
    int row = -1;
    for (unsigned i = 0; i < nbucket16[k]; i++) {
        const rru_insn_row *r = &rru_insn_rows[bucket16[k][i]];
        if ((c & r->mask) == r->match) {
            row = bucket16[k][i];
            break;
        }
    }
    if (row < 0)
        return illegal(d);
    switch ((rru_cop)rru_insn_rows[row].op) {
    case RRU_COP_c_addi4spn: {
        uint32_t imm = ((c >> 7) & 0x30) | ((c >> 1) & 0x3c0) | ((c >> 4) & 0x4) | ((c >> 2) & 0x8);
        if (imm == 0)
            return illegal(d);   /* includes the all-zero halfword */
        return cx(d, RRU_OP_addi, rd_p(c), 2, 0, imm, 1);
    }
    case RRU_COP_c_fld: return cx(d, RRU_OP_fld, rd_p(c), rs1_p(c), 0, uimm_d(c), 0);
    case RRU_COP_c_lw: return cx(d, RRU_OP_lw, rd_p(c), rs1_p(c), 0, uimm_w(c), 1);
    case RRU_COP_c_ld: return cx(d, RRU_OP_ld, rd_p(c), rs1_p(c), 0, uimm_d(c), 1);
    case RRU_COP_c_fsd: return cx(d, RRU_OP_fsd, 0, rs1_p(c), rd_p(c), uimm_d(c), 0);
    case RRU_COP_c_sw: return cx(d, RRU_OP_sw, 0, rs1_p(c), rd_p(c), uimm_w(c), 0);
    case RRU_COP_c_sd: return cx(d, RRU_OP_sd, 0, rs1_p(c), rd_p(c), uimm_d(c), 0);
    case RRU_COP_c_addi: return cx(d, RRU_OP_addi, full_rd(c), full_rd(c), 0, imm6(c), 1);
    case RRU_COP_c_addiw:
        if (full_rd(c) == 0)
            return illegal(d);
        return cx(d, RRU_OP_addiw, full_rd(c), full_rd(c), 0, imm6(c), 1);
    case RRU_COP_c_li: return cx(d, RRU_OP_addi, full_rd(c), 0, 0, imm6(c), 1);
    case RRU_COP_c_lui:
        if (full_rd(c) == 2) {
            int64_t imm = sext(((c >> 3) & 0x200) | ((c >> 2) & 0x10) | ((c << 1) & 0x40) |
                               ((c << 4) & 0x180) | ((c << 3) & 0x20), 10);
            if (imm == 0)
                return illegal(d);
            return cx(d, RRU_OP_addi, 2, 2, 0, imm, 1);
        } else {
            int64_t imm = sext(((c << 5) & 0x20000) | ((c << 10) & 0x1f000), 18);
            if (imm == 0)
                return illegal(d);
            return cx(d, RRU_OP_lui, full_rd(c), 0, 0, imm, 1);
        }
    case RRU_COP_c_srli: return cx(d, RRU_OP_srli, rs1_p(c), rs1_p(c), 0, shamt6(c), 1);
    case RRU_COP_c_srai: return cx(d, RRU_OP_srai, rs1_p(c), rs1_p(c), 0, shamt6(c), 1);
    case RRU_COP_c_andi: return cx(d, RRU_OP_andi, rs1_p(c), rs1_p(c), 0, imm6(c), 1);
    case RRU_COP_c_sub: return cx(d, RRU_OP_sub, rs1_p(c), rs1_p(c), rd_p(c), 0, 1);
    case RRU_COP_c_xor: return cx(d, RRU_OP_xor, rs1_p(c), rs1_p(c), rd_p(c), 0, 1);
    case RRU_COP_c_or: return cx(d, RRU_OP_or, rs1_p(c), rs1_p(c), rd_p(c), 0, 1);
    case RRU_COP_c_and: return cx(d, RRU_OP_and, rs1_p(c), rs1_p(c), rd_p(c), 0, 1);
    case RRU_COP_c_subw: return cx(d, RRU_OP_subw, rs1_p(c), rs1_p(c), rd_p(c), 0, 1);
    case RRU_COP_c_addw: return cx(d, RRU_OP_addw, rs1_p(c), rs1_p(c), rd_p(c), 0, 1);
    case RRU_COP_c_j: {
        int64_t imm = sext(((c >> 1) & 0x800) | ((c >> 7) & 0x10) | ((c >> 1) & 0x300) |
                           ((c << 2) & 0x400) | ((c >> 1) & 0x40) | ((c << 1) & 0x80) |
                           ((c >> 2) & 0xe) | ((c << 3) & 0x20), 12);
        return cx(d, RRU_OP_jal, 0, 0, 0, imm, 1);
    }
    case RRU_COP_c_beqz:
    case RRU_COP_c_bnez: {
        int64_t imm = sext(((c >> 4) & 0x100) | ((c >> 7) & 0x18) | ((c << 1) & 0xc0) |
                           ((c >> 2) & 0x6) | ((c << 3) & 0x20), 9);
        unsigned op = rru_insn_rows[row].op == RRU_COP_c_beqz ? RRU_OP_beq : RRU_OP_bne;
        return cx(d, op, 0, rs1_p(c), 0, imm, 0);
    }
    case RRU_COP_c_slli: return cx(d, RRU_OP_slli, full_rd(c), full_rd(c), 0, shamt6(c), 1);
    case RRU_COP_c_fldsp:
        return cx(d, RRU_OP_fld, full_rd(c), 2, 0,
                  ((c >> 7) & 0x20) | ((c >> 2) & 0x18) | ((c << 4) & 0x1c0), 0);
    case RRU_COP_c_lwsp:
        if (full_rd(c) == 0)
            return illegal(d);
        return cx(d, RRU_OP_lw, full_rd(c), 2, 0,
                  ((c >> 7) & 0x20) | ((c >> 2) & 0x1c) | ((c << 4) & 0xc0), 1);
    case RRU_COP_c_ldsp:
        if (full_rd(c) == 0)
            return illegal(d);
        return cx(d, RRU_OP_ld, full_rd(c), 2, 0,
                  ((c >> 7) & 0x20) | ((c >> 2) & 0x18) | ((c << 4) & 0x1c0), 1);
    case RRU_COP_c_jr:
        if (full_rs2(c) != 0)   /* c.mv */
            return cx(d, RRU_OP_add, full_rd(c), 0, full_rs2(c), 0, 1);
        if (full_rd(c) == 0)
            return illegal(d);
        return cx(d, RRU_OP_jalr, 0, full_rd(c), 0, 0, 1);
    case RRU_COP_c_jalr:
        if (full_rs2(c) != 0)   /* c.add */
            return cx(d, RRU_OP_add, full_rd(c), full_rd(c), full_rs2(c), 0, 1);
        if (full_rd(c) == 0)    /* c.ebreak */
            return cx(d, RRU_OP_ebreak, 0, 0, 0, 0, 0);
        return cx(d, RRU_OP_jalr, 1, full_rd(c), 0, 0, 1);
    case RRU_COP_c_fsdsp:
        return cx(d, RRU_OP_fsd, 0, 2, full_rs2(c), ((c >> 7) & 0x38) | ((c >> 1) & 0x1c0), 0);
    case RRU_COP_c_swsp:
        return cx(d, RRU_OP_sw, 0, 2, full_rs2(c), ((c >> 7) & 0x3c) | ((c >> 1) & 0xc0), 0);
    case RRU_COP_c_sdsp:
        return cx(d, RRU_OP_sd, 0, 2, full_rs2(c), ((c >> 7) & 0x38) | ((c >> 1) & 0x1c0), 0);
    case RRU_COP_COUNT: break;
    }
    return illegal(d);
}

int rru_decode(uint32_t bits, uint64_t pc, rru_insn *d)
{
    pthread_once(&tables_once, build_tables);
    memset(d, 0, sizeof *d);
    d->pc = pc;
    if ((bits & 3) == 3) {
        d->len = 4;
        d->raw = bits;
        return decode32(bits, d);
    }
    d->len = 2;
    d->raw = bits & 0xffff;
    return decode16(bits & 0xffff, d);
}

void rru_forward(rru_insn *d, const rru_insn *prev)
{
    pthread_once(&tables_once, build_tables);
    /* Any variant whose operands are PREV's rd is right: fv holds x[rd]
     * (rru_exec_fn). x0 is not worth it (rd 0 is an S or B format's
     * immediate bits, or was redirected to 32, which no rs names). */
    const unsigned r = prev->rd;
    if (r == 0)
        return;
    const int r1 = d->rs1 == r, r2 = d->rs2 == r;
    rru_exec_fn const *f = fwd_fns[d->op];
    rru_exec_fn fn = NULL;
    if (r1 && r2)
        fn = f[2];
    if (!fn && r1)
        fn = f[0];
    if (!fn && r2)
        fn = f[1];
    if (fn)
        d->fn = fn;
}

/* ---- disassembler ---- */

static const char *const xname[33] = {
    "zero", "ra", "sp", "gp", "tp", "t0", "t1", "t2", "s0", "s1", "a0", "a1", "a2",
    "a3", "a4", "a5", "a6", "a7", "s2", "s3", "s4", "s5", "s6", "s7", "s8", "s9",
    "s10", "s11", "t3", "t4", "t5", "t6", "zero",
};
static const char *const fname[32] = {
    "ft0", "ft1", "ft2", "ft3", "ft4", "ft5", "ft6", "ft7", "fs0", "fs1", "fa0",
    "fa1", "fa2", "fa3", "fa4", "fa5", "fa6", "fa7", "fs2", "fs3", "fs4", "fs5",
    "fs6", "fs7", "fs8", "fs9", "fs10", "fs11", "ft8", "ft9", "ft10", "ft11",
};

/* Which operands of an op are floating-point registers: bit 0 rd, 1 rs1, 2 rs2. */
static unsigned fp_regs(unsigned op)
{
    if (op >= RRU_OP_COUNT)
        return 0;
    const char *n = op_names[op];
    if (op == RRU_OP_flw || op == RRU_OP_fld)
        return 1;
    if (op == RRU_OP_fsw || op == RRU_OP_fsd)
        return 4;
    if (n[0] != 'f' || op == RRU_OP_fence || op == RRU_OP_fence_i)
        return 0;
    if (strncmp(n, "fmv_x_", 6) == 0 || strncmp(n, "fclass", 6) == 0)
        return 2;
    if (strncmp(n, "fmv_w_x", 7) == 0 || strncmp(n, "fmv_d_x", 7) == 0)
        return 1;
    if (n[1] == 'e' || n[1] == 'l')   /* feq flt fle */
        return 6;
    if (strncmp(n, "fcvt_", 5) == 0) {
        /* fcvt.<to>.<from>: w/wu/l/lu are integers */
        const char *to = n + 5, *from = strchr(to, '_') + 1;
        unsigned r = 0;
        if (*to == 's' || *to == 'd')
            r |= 1;
        if (*from == 's' || *from == 'd')
            r |= 2;
        return r;
    }
    return 7;
}

int rru_disasm(uint32_t bits, uint64_t pc, char *buf, size_t len)
{
    rru_insn d;
    int n = rru_decode(bits, pc, &d);
    if (d.op == RRU_OP_illegal) {
        snprintf(buf, len, "illegal 0x%0*x", n == 2 ? 4 : 8, d.raw);
        return 0;
    }
    const char *mn = rru_op_name(d.op);
    unsigned fr = fp_regs(d.op);
    const char *rd = (fr & 1) ? fname[d.rd & 31] : xname[d.rd];
    const char *r1 = (fr & 2) ? fname[d.rs1] : xname[d.rs1];
    const char *r2 = (fr & 4) ? fname[d.rs2] : xname[d.rs2];
    switch (op_fmt[d.op]) {
    case RRU_FMT_R: case RRU_FMT_FR:
        if (d.op >= RRU_OP_lr_w && d.op <= RRU_OP_amomaxu_d) {
            if (d.op == RRU_OP_lr_w || d.op == RRU_OP_lr_d)
                snprintf(buf, len, "%s %s, (%s)", mn, rd, r1);
            else
                snprintf(buf, len, "%s %s, %s, (%s)", mn, rd, r2, r1);
        } else if (strncmp(mn, "fsqrt", 5) == 0 || strncmp(mn, "fcvt", 4) == 0 ||
                   strncmp(mn, "fmv", 3) == 0 || strncmp(mn, "fclass", 6) == 0) {
            snprintf(buf, len, "%s %s, %s", mn, rd, r1);
        } else {
            snprintf(buf, len, "%s %s, %s, %s", mn, rd, r1, r2);
        }
        break;
    case RRU_FMT_R4:
        snprintf(buf, len, "%s %s, %s, %s, %s", mn, fname[d.rd], fname[d.rs1], fname[d.rs2],
                 fname[d.rs3]);
        break;
    case RRU_FMT_I: case RRU_FMT_FI:
        if (d.op >= RRU_OP_lb && d.op <= RRU_OP_lwu)
            snprintf(buf, len, "%s %s, %lld(%s)", mn, rd, (long long)d.imm, r1);
        else if (d.op == RRU_OP_flw || d.op == RRU_OP_fld || d.op == RRU_OP_jalr)
            snprintf(buf, len, "%s %s, %lld(%s)", mn, rd, (long long)d.imm, r1);
        else
            snprintf(buf, len, "%s %s, %s, %lld", mn, rd, r1, (long long)d.imm);
        break;
    case RRU_FMT_S:
        snprintf(buf, len, "%s %s, %lld(%s)", mn, r2, (long long)d.imm, r1);
        break;
    case RRU_FMT_B:
        snprintf(buf, len, "%s %s, %s, 0x%llx", mn, r1, r2, (unsigned long long)(pc + (uint64_t)d.imm));
        break;
    case RRU_FMT_U:
        snprintf(buf, len, "%s %s, 0x%llx", mn, rd, (unsigned long long)(((uint64_t)d.imm >> 12) & 0xfffff));
        break;
    case RRU_FMT_J:
        snprintf(buf, len, "%s %s, 0x%llx", mn, rd, (unsigned long long)(pc + (uint64_t)d.imm));
        break;
    case RRU_FMT_SH6: case RRU_FMT_SH5:
        snprintf(buf, len, "%s %s, %s, %lld", mn, rd, r1, (long long)d.imm);
        break;
    case RRU_FMT_CSR:
        snprintf(buf, len, "%s %s, 0x%llx, %s", mn, rd, (unsigned long long)d.imm, r1);
        break;
    case RRU_FMT_CSRI:
        snprintf(buf, len, "%s %s, 0x%llx, %u", mn, rd, (unsigned long long)d.imm, d.rs1);
        break;
    case RRU_FMT_N:
        snprintf(buf, len, "%s", mn);
        break;
    }
    return n;
}

int rru_insn_access(uint32_t bits, const rru_ctx *c, uint64_t *addr, unsigned *size)
{
    rru_insn d;
    rru_decode(bits, c->pc, &d);
    uint64_t base = d.rs1 ? c->x[d.rs1] : 0;
    int kind = 0;
    unsigned n = 0;
    switch (d.op) {
    case RRU_OP_lb: case RRU_OP_lbu: n = 1; kind = RRU_ACCESS_READ; break;
    case RRU_OP_lh: case RRU_OP_lhu: n = 2; kind = RRU_ACCESS_READ; break;
    case RRU_OP_lw: case RRU_OP_lwu: case RRU_OP_flw: n = 4; kind = RRU_ACCESS_READ; break;
    case RRU_OP_ld: case RRU_OP_fld: n = 8; kind = RRU_ACCESS_READ; break;
    case RRU_OP_sb: n = 1; kind = RRU_ACCESS_WRITE; break;
    case RRU_OP_sh: n = 2; kind = RRU_ACCESS_WRITE; break;
    case RRU_OP_sw: case RRU_OP_fsw: n = 4; kind = RRU_ACCESS_WRITE; break;
    case RRU_OP_sd: case RRU_OP_fsd: n = 8; kind = RRU_ACCESS_WRITE; break;
    case RRU_OP_lr_w: *addr = base; *size = 4; return RRU_ACCESS_READ;
    case RRU_OP_lr_d: *addr = base; *size = 8; return RRU_ACCESS_READ;
    case RRU_OP_sc_w: *addr = base; *size = 4; return RRU_ACCESS_WRITE;
    case RRU_OP_sc_d: *addr = base; *size = 8; return RRU_ACCESS_WRITE;
    case RRU_OP_amoswap_w: case RRU_OP_amoadd_w: case RRU_OP_amoxor_w: case RRU_OP_amoand_w:
    case RRU_OP_amoor_w: case RRU_OP_amomin_w: case RRU_OP_amomax_w: case RRU_OP_amominu_w:
    case RRU_OP_amomaxu_w:
        *addr = base; *size = 4; return RRU_ACCESS_READ | RRU_ACCESS_WRITE;
    case RRU_OP_amoswap_d: case RRU_OP_amoadd_d: case RRU_OP_amoxor_d: case RRU_OP_amoand_d:
    case RRU_OP_amoor_d: case RRU_OP_amomin_d: case RRU_OP_amomax_d: case RRU_OP_amominu_d:
    case RRU_OP_amomaxu_d:
        *addr = base; *size = 8; return RRU_ACCESS_READ | RRU_ACCESS_WRITE;
    default: return 0;
    }
    *addr = base + (uint64_t)d.imm;
    *size = n;
    return kind;
}
