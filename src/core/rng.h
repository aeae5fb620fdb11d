/* Counter-based random numbers: Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy as
 * 1, 2, 3", SC'11; the Random123 library), so every element is a pure function of (seed, stream,
 * index) and noise is identical on CPU and GPU whatever the split of work across threads or ranks.
 *
 * Stream layout. Element i (a 64-bit index) of stream (seed, stream) is 32-bit word (i % 4) of
 *   ltx2_philox4x32_10(ctr = {b lo32, b hi32, stream lo32, stream hi32}, key = {seed lo32, seed hi32})
 * with block b = i / 4. Indices wrap modulo 2^64.
 *
 * Transforms (a CUDA port must do exactly this):
 *   uniform (ltx2_rng_uniform):  u = ((w >> 9) + 0.5) * 2^-23, a float in [2^-24, 1 - 2^-24].
 *     Why 23 bits and not 24: ((w >> 8) + 0.5) * 2^-24 needs 25 significant bits, so in float it
 *     would round (and the top value would round to exactly 1.0); 23 bits keep every value exact,
 *     symmetric about 1/2 and strictly inside (0, 1).
 *   normal (ltx2_rng_normal): element pairs (2p, 2p+1) take words w0 = word 2p, w1 = word 2p+1 of
 *     the same stream (always inside one Philox block), then in double precision:
 *       u1 = ((w0 >> 8) + 0.5) * 2^-24, u2 = ((w1 >> 8) + 0.5) * 2^-24   (exact in double, in (0,1))
 *       r = sqrt(-2 ln u1);  z[2p] = r cos(2 pi u2);  z[2p+1] = r sin(2 pi u2)
 *     and each z is rounded to float. Double keeps CPU and GPU libm differences far below float
 *     rounding, so both agree bit for bit except in vanishingly rare near-tie cases.
 * Any sub-range [off, off+n) of a call equals the same slice of a larger call.
 * These functions cannot fail (they only compute), so they return nothing. */
#ifndef LTX2_CORE_RNG_H
#define LTX2_CORE_RNG_H

#include <stddef.h>
#include <stdint.h>

/* Philox4x32 round constants (Random123): multipliers and the Weyl key increments. */
#define LTX2_PHILOX_M0 0xD2511F53u
#define LTX2_PHILOX_M1 0xCD9E8D57u
#define LTX2_PHILOX_W0 0x9E3779B9u /* golden ratio */
#define LTX2_PHILOX_W1 0xBB67AE85u /* sqrt(3) - 1 */
#define LTX2_PHILOX_ROUNDS 10

void ltx2_philox4x32_10(const uint32_t ctr[4], const uint32_t key[2], uint32_t out[4]);

/* The four words of block `block` of stream (seed, stream), per the layout above. */
void ltx2_rng_block(uint64_t seed, uint64_t stream, uint64_t block, uint32_t out[4]);

/* out[k] = uniform element (offset + k), k < n. */
void ltx2_rng_uniform(uint64_t seed, uint64_t stream, uint64_t offset, size_t n, float *out);

/* out[k] = standard normal element (offset + k), k < n. */
void ltx2_rng_normal(uint64_t seed, uint64_t stream, uint64_t offset, size_t n, float *out);

#endif
