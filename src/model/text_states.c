/* Tiled transposes between the layer-last and layer-major Gemma hidden states (text_states.h). */
#include "model/text_states.h"

/* The side of a square block moved together: 64 x 64 floats (16 KB) read and written whole lines at
 * a time, within the L1 cache, whichever side of the transpose is the long one. */
#define TEXT_STATES_BLOCK 64

/* dst [cols, rows] = src [rows, cols] transposed. */
static void transpose(const float *src, int64_t rows, int64_t cols, float *dst) {
    const int64_t br = (rows + TEXT_STATES_BLOCK - 1) / TEXT_STATES_BLOCK;
    const int64_t bc = (cols + TEXT_STATES_BLOCK - 1) / TEXT_STATES_BLOCK;
#pragma omp parallel for schedule(static)
    for (int64_t k = 0; k < br * bc; k++) {
        const int64_t r0 = k / bc * TEXT_STATES_BLOCK, c0 = k % bc * TEXT_STATES_BLOCK;
        const int64_t r1 = r0 + TEXT_STATES_BLOCK < rows ? r0 + TEXT_STATES_BLOCK : rows;
        const int64_t c1 = c0 + TEXT_STATES_BLOCK < cols ? c0 + TEXT_STATES_BLOCK : cols;
        for (int64_t c = c0; c < c1; c++)
            for (int64_t r = r0; r < r1; r++) dst[c * rows + r] = src[r * cols + c];
    }
}

void ltx2_text_states_to_layer_major(const float *last, int64_t records, int64_t L, float *major) {
    transpose(last, records, L, major);
}

void ltx2_text_states_to_layer_last(const float *major, int64_t records, int64_t L, float *last) {
    transpose(major, L, records, last);
}
