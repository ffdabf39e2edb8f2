/* rru/softfp.h: IEEE-754 binary32/binary64 arithmetic in software, as RISC-V
 * F and D define it: five rounding modes (RMM included), the five exception
 * flags with tininess detected after rounding, canonical NaN results,
 * saturating conversions, fmin/fmax of the 2.2 specification. Exact and
 * identical on every host (no host floating point is used).
 *
 * Values are raw bit patterns (binary32 in the low 32 bits). Every function
 * ORs the exceptions it raises into *flags and never clears any. */
#ifndef RNR_RRU_SOFTFP_H
#define RNR_RRU_SOFTFP_H

#include <stdint.h>

/* Rounding modes, as encoded in the rm field and frm. */
enum { SF_RNE = 0, SF_RTZ = 1, SF_RDN = 2, SF_RUP = 3, SF_RMM = 4 };
/* Exception flags, as laid out in fflags. */
enum { SF_NX = 1, SF_UF = 2, SF_OF = 4, SF_DZ = 8, SF_NV = 16 };

#define SF32_CANONICAL_NAN 0x7fc00000u
#define SF64_CANONICAL_NAN 0x7ff8000000000000ull

/* Formats: 0 = binary32, 1 = binary64. */
enum { SF_F32 = 0, SF_F64 = 1 };

uint64_t sf_add(int fmt, uint64_t a, uint64_t b, int rm, unsigned *flags);
uint64_t sf_sub(int fmt, uint64_t a, uint64_t b, int rm, unsigned *flags);
uint64_t sf_mul(int fmt, uint64_t a, uint64_t b, int rm, unsigned *flags);
uint64_t sf_div(int fmt, uint64_t a, uint64_t b, int rm, unsigned *flags);
uint64_t sf_sqrt(int fmt, uint64_t a, int rm, unsigned *flags);
/* (a * b) + c with one rounding; neg_prod negates a*b, neg_c negates c
 * (fmadd 0 0, fmsub 0 1, fnmsub 1 0, fnmadd 1 1). 0 x inf raises invalid
 * even when c is a quiet NaN. */
uint64_t sf_fma(int fmt, uint64_t a, uint64_t b, uint64_t c, int neg_prod, int neg_c, int rm,
                unsigned *flags);

uint64_t sf_min(int fmt, uint64_t a, uint64_t b, unsigned *flags);
uint64_t sf_max(int fmt, uint64_t a, uint64_t b, unsigned *flags);
int sf_eq(int fmt, uint64_t a, uint64_t b, unsigned *flags);   /* quiet */
int sf_lt(int fmt, uint64_t a, uint64_t b, unsigned *flags);   /* signaling */
int sf_le(int fmt, uint64_t a, uint64_t b, unsigned *flags);   /* signaling */
unsigned sf_class(int fmt, uint64_t a);                        /* fclass bit mask */

/* Float to integer of WIDTH bits (32 or 64), signed or not: the result as
 * a 64-bit value (32-bit results sign-extended, as fcvt.w[u] writes them).
 * NaN and overflow saturate with invalid (and no inexact). */
uint64_t sf_to_int(int fmt, uint64_t a, int is_signed, int width, int rm, unsigned *flags);
/* Integer (WIDTH bits, signed or not, taken from the low bits of V) to float. */
uint64_t sf_from_int(int fmt, uint64_t v, int is_signed, int width, int rm, unsigned *flags);
/* Between formats (to = SF_F32 or SF_F64). */
uint64_t sf_convert(int to, int from, uint64_t a, int rm, unsigned *flags);

#endif
