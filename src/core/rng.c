/* Philox4x32-10 and the (seed, stream, offset) uniform / normal streams described in rng.h. */
#include "core/rng.h"

#include <math.h>

/* Below this many Philox blocks a call runs on one thread (fork/join would dominate). */
#define RNG_PARALLEL_MIN_BLOCKS 4096
#define RNG_TWO_PI 6.283185307179586476925286766559
#define RNG_2POW_M24 (1.0 / 16777216.0)
#define RNG_2POW_M23 (1.0 / 8388608.0)

void ltx2_philox4x32_10(const uint32_t ctr[4], const uint32_t key[2], uint32_t out[4]) {
    uint32_t c0 = ctr[0], c1 = ctr[1], c2 = ctr[2], c3 = ctr[3];
    uint32_t k0 = key[0], k1 = key[1];
    for (int r = 0; r < LTX2_PHILOX_ROUNDS; r++) {
        if (r > 0) {
            k0 += LTX2_PHILOX_W0;
            k1 += LTX2_PHILOX_W1;
        }
        uint64_t p0 = (uint64_t)LTX2_PHILOX_M0 * c0;
        uint64_t p1 = (uint64_t)LTX2_PHILOX_M1 * c2;
        uint32_t hi0 = (uint32_t)(p0 >> 32), lo0 = (uint32_t)p0;
        uint32_t hi1 = (uint32_t)(p1 >> 32), lo1 = (uint32_t)p1;
        c0 = hi1 ^ c1 ^ k0;
        c1 = lo1;
        c2 = hi0 ^ c3 ^ k1;
        c3 = lo0;
    }
    out[0] = c0;
    out[1] = c1;
    out[2] = c2;
    out[3] = c3;
}

void ltx2_rng_block(uint64_t seed, uint64_t stream, uint64_t block, uint32_t out[4]) {
    const uint32_t ctr[4] = {(uint32_t)block, (uint32_t)(block >> 32), (uint32_t)stream,
                             (uint32_t)(stream >> 32)};
    const uint32_t key[2] = {(uint32_t)seed, (uint32_t)(seed >> 32)};
    ltx2_philox4x32_10(ctr, key, out);
}

/* Shared driver: fills out[k] = element (offset + k) using `transform`, which maps one Philox block
 * to its four elements. Blocks are independent, so they are split across threads. */
typedef void (*block_transform)(const uint32_t w[4], float z[4]);

static void fill(uint64_t seed, uint64_t stream, uint64_t offset, size_t n, float *out,
                 block_transform transform) {
    if (n == 0 || !out) return;
    uint64_t first = offset >> 2;
    int64_t lead = (int64_t)(offset & 3); /* elements of the first block before offset */
    int64_t nn = (int64_t)n;
    int64_t n_blocks = (lead + nn + 3) / 4;
#pragma omp parallel for schedule(static) if (n_blocks >= RNG_PARALLEL_MIN_BLOCKS)
    for (int64_t k = 0; k < n_blocks; k++) {
        uint32_t w[4];
        float z[4];
        ltx2_rng_block(seed, stream, first + (uint64_t)k, w);
        transform(w, z);
        int64_t base = k * 4 - lead;
        if (base >= 0 && base + 4 <= nn) {
            for (int j = 0; j < 4; j++) out[base + j] = z[j];
        } else {
            for (int j = 0; j < 4; j++)
                if (base + j >= 0 && base + j < nn) out[base + j] = z[j];
        }
    }
}

static void uniform_block(const uint32_t w[4], float z[4]) {
    for (int j = 0; j < 4; j++) z[j] = (float)(((double)(w[j] >> 9) + 0.5) * RNG_2POW_M23);
}

static void normal_block(const uint32_t w[4], float z[4]) {
    for (int j = 0; j < 4; j += 2) {
        double u1 = ((double)(w[j] >> 8) + 0.5) * RNG_2POW_M24;
        double u2 = ((double)(w[j + 1] >> 8) + 0.5) * RNG_2POW_M24;
        double r = sqrt(-2.0 * log(u1));
        double th = RNG_TWO_PI * u2;
        z[j] = (float)(r * cos(th));
        z[j + 1] = (float)(r * sin(th));
    }
}

void ltx2_rng_uniform(uint64_t seed, uint64_t stream, uint64_t offset, size_t n, float *out) {
    fill(seed, stream, offset, n, out, uniform_block);
}

void ltx2_rng_normal(uint64_t seed, uint64_t stream, uint64_t offset, size_t n, float *out) {
    fill(seed, stream, offset, n, out, normal_block);
}
