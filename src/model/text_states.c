/* Tiled transposes between the layer-last and layer-major Gemma hidden states (text_states.h). */
#include "model/text_states.h"

/* Records a tile holds: TILE x L floats (49 KB for the 12B's 49 layers) are read or written as one
 * contiguous block, each layer's TILE floats as one contiguous run on the other side. */
#define TEXT_STATES_TILE 256

void ltx2_text_states_to_layer_major(const float *last, int64_t records, int64_t L, float *major) {
    const int64_t tiles = (records + TEXT_STATES_TILE - 1) / TEXT_STATES_TILE;
#pragma omp parallel for schedule(static)
    for (int64_t t = 0; t < tiles; t++) {
        const int64_t r0 = t * TEXT_STATES_TILE, n = records - r0 < TEXT_STATES_TILE ? records - r0 : TEXT_STATES_TILE;
        for (int64_t l = 0; l < L; l++) {
            const float *src = last + r0 * L + l;
            float *dst = major + l * records + r0;
            for (int64_t i = 0; i < n; i++) dst[i] = src[i * L];
        }
    }
}

void ltx2_text_states_to_layer_last(const float *major, int64_t records, int64_t L, float *last) {
    const int64_t tiles = (records + TEXT_STATES_TILE - 1) / TEXT_STATES_TILE;
#pragma omp parallel for schedule(static)
    for (int64_t t = 0; t < tiles; t++) {
        const int64_t r0 = t * TEXT_STATES_TILE, n = records - r0 < TEXT_STATES_TILE ? records - r0 : TEXT_STATES_TILE;
        for (int64_t l = 0; l < L; l++) {
            const float *src = major + l * records + r0;
            float *dst = last + r0 * L + l;
            for (int64_t i = 0; i < n; i++) dst[i * L] = src[i];
        }
    }
}
