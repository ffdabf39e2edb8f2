/* tests/rru_enc.h: RISC-V instruction encoders for the rru tests (hand
 * assembly of test programs and random instruction streams), and a small
 * harness: a memory with code and data regions and a standalone hart. */
#ifndef RNR_TESTS_RRU_ENC_H
#define RNR_TESTS_RRU_ENC_H

#include <stdint.h>
#include <string.h>

#include "rru/hart.h"
#include "rru/mem.h"

/* Encoders as macros, so that programs can be static tables. */
#define U32(x) ((uint32_t)(x))
#define enc_r(op, f3, f7, rd, rs1, rs2) \
    (U32(op) | U32(rd) << 7 | U32(f3) << 12 | U32(rs1) << 15 | U32(rs2) << 20 | U32(f7) << 25)
#define enc_r4(op, rm, fmt, rd, rs1, rs2, rs3)                                                \
    (U32(op) | U32(rd) << 7 | U32(rm) << 12 | U32(rs1) << 15 | U32(rs2) << 20 | U32(fmt) << 25 | \
     U32(rs3) << 27)
#define enc_i(op, f3, rd, rs1, imm) \
    (U32(op) | U32(rd) << 7 | U32(f3) << 12 | U32(rs1) << 15 | (U32(imm) & 0xfff) << 20)
#define enc_s(op, f3, rs1, rs2, imm)                                                        \
    (U32(op) | (U32(imm) & 0x1f) << 7 | U32(f3) << 12 | U32(rs1) << 15 | U32(rs2) << 20 | \
     ((U32(imm) >> 5) & 0x7f) << 25)
#define enc_b(f3, rs1, rs2, imm)                                                             \
    (0x63u | ((U32(imm) >> 11) & 1) << 7 | ((U32(imm) >> 1) & 0xf) << 8 | U32(f3) << 12 |   \
     U32(rs1) << 15 | U32(rs2) << 20 | ((U32(imm) >> 5) & 0x3f) << 25 | ((U32(imm) >> 12) & 1) << 31)
#define enc_u(op, rd, imm20) (U32(op) | U32(rd) << 7 | (U32(imm20) & 0xfffff) << 12)
#define enc_j(rd, imm)                                                                         \
    (0x6fu | U32(rd) << 7 | ((U32(imm) >> 12) & 0xff) << 12 | ((U32(imm) >> 11) & 1) << 20 | \
     ((U32(imm) >> 1) & 0x3ff) << 21 | ((U32(imm) >> 20) & 1) << 31)

/* Common instructions. */
#define I_ADDI(rd, rs1, imm) enc_i(0x13, 0, rd, rs1, imm)
#define I_LUI(rd, imm20) enc_u(0x37, rd, imm20)
#define I_ADD(rd, rs1, rs2) enc_r(0x33, 0, 0, rd, rs1, rs2)
#define I_LD(rd, rs1, imm) enc_i(0x03, 3, rd, rs1, imm)
#define I_LW(rd, rs1, imm) enc_i(0x03, 2, rd, rs1, imm)
#define I_SD(rs2, rs1, imm) enc_s(0x23, 3, rs1, rs2, imm)
#define I_SW(rs2, rs1, imm) enc_s(0x23, 2, rs1, rs2, imm)
#define I_ECALL 0x00000073u
#define I_EBREAK 0x00100073u
#define I_FENCE_I 0x0000100fu
#define I_JAL(rd, imm) enc_j(rd, imm)
#define I_BNE(rs1, rs2, imm) enc_b(1, rs1, rs2, imm)
#define I_BEQ(rs1, rs2, imm) enc_b(0, rs1, rs2, imm)
#define I_LR_W(rd, rs1) enc_r(0x2f, 2, 0x08, rd, rs1, 0)
#define I_SC_W(rd, rs1, rs2) enc_r(0x2f, 2, 0x0c, rd, rs1, rs2)
#define I_LR_D(rd, rs1) enc_r(0x2f, 3, 0x08, rd, rs1, 0)
#define I_SC_D(rd, rs1, rs2) enc_r(0x2f, 3, 0x0c, rd, rs1, rs2)
#define I_AMOADD_W(rd, rs1, rs2) enc_r(0x2f, 2, 0x00, rd, rs1, rs2)
#define I_AMOADD_D(rd, rs1, rs2) enc_r(0x2f, 3, 0x00, rd, rs1, rs2)
#define I_AMOSWAP_W(rd, rs1, rs2) enc_r(0x2f, 2, 0x04, rd, rs1, rs2)
#define I_CSRRS(rd, csr, rs1) enc_i(0x73, 2, rd, rs1, (int32_t)(csr))
#define I_CSRRW(rd, csr, rs1) enc_i(0x73, 1, rd, rs1, (int32_t)(csr))

/* Register numbers. */
enum { ZERO = 0, RA = 1, SP = 2, GP = 3, TP = 4, T0 = 5, T1 = 6, T2 = 7, S0 = 8, S1 = 9,
       A0 = 10, A1 = 11, A2 = 12, A3 = 13, A4 = 14, A5 = 15, A6 = 16, A7 = 17 };

#define TEST_CODE 0x10000ull
#define TEST_DATA 0x40000ull
#define TEST_CODE_LEN 0x10000ull
#define TEST_DATA_LEN 0x10000ull

/* Writes 32-bit words at ADDR (host side). */
static inline void put_words(rru_mem *m, uint64_t addr, const uint32_t *w, size_t n)
{
    rru_mem_write(m, addr, w, n * 4);
}

/* A memory with code (R-X) at TEST_CODE and data (RW-) at TEST_DATA. */
static inline rru_mem *test_mem(const uint32_t *code, size_t n)
{
    rru_mem *m = rru_mem_new();
    rru_mem_map(m, TEST_CODE, TEST_CODE_LEN, RRU_PROT_R | RRU_PROT_X);
    rru_mem_map(m, TEST_DATA, TEST_DATA_LEN, RRU_PROT_R | RRU_PROT_W);
    if (code)
        put_words(m, TEST_CODE, code, n);
    return m;
}

#endif
