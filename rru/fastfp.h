/* rru/fastfp.h: the F/D arithmetic of rru/softfp.h on the host FPU where the
 * host result is provably the RISC-V one, and through softfp everywhere else.
 * Each ffp_X takes the arguments of sf_X and returns the same bits and ORs
 * the same flags into *flags, for every input, every rounding mode and every
 * value of *flags (the accrued flags may be passed: an inexact flag already
 * set saves the exactness test). The proofs are in rru/fastfp.c and
 * docs/machine.md ("Floating point").
 *
 * Precondition: the host floating-point environment is the default one
 * (round to nearest even, no flush-to-zero, no denormals-are-zero, traps
 * masked); ffp_host_ready() checks it. Callers that cannot promise it call
 * softfp directly. */
#ifndef RNR_RRU_FASTFP_H
#define RNR_RRU_FASTFP_H

#include <stdint.h>

/* 1 if the host floating-point environment is the default one (see above). */
int ffp_host_ready(void);

uint64_t ffp_add(int fmt, uint64_t a, uint64_t b, int rm, unsigned *flags);
uint64_t ffp_sub(int fmt, uint64_t a, uint64_t b, int rm, unsigned *flags);
uint64_t ffp_mul(int fmt, uint64_t a, uint64_t b, int rm, unsigned *flags);
uint64_t ffp_div(int fmt, uint64_t a, uint64_t b, int rm, unsigned *flags);
uint64_t ffp_sqrt(int fmt, uint64_t a, int rm, unsigned *flags);
uint64_t ffp_fma(int fmt, uint64_t a, uint64_t b, uint64_t c, int neg_prod, int neg_c, int rm,
                 unsigned *flags);

#endif
