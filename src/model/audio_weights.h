/* Weight loading shared by the audio decoder and the vocoders: tensors fetched by name with their
 * shape checked (the error names the tensor, expected vs got), converted to fresh f32 buffers, and
 * a record of what was used so that unexpected tensors under a prefix are refused. */
#ifndef LTX2_MODEL_AUDIO_WEIGHTS_H
#define LTX2_MODEL_AUDIO_WEIGHTS_H

#include <stdbool.h>
#include <stdint.h>

#include "io/safetensors.h"

typedef struct ltx2_audio_loader {
    ltx2_context *ctx;
    const ltx2_st_set *set;
    const char *what; /* "audio VAE" / "vocoder", for messages */
    const ltx2_st_tensor **used;
    size_t n_used, cap_used;
} ltx2_audio_loader;

/* Tensor `key` converted to f32 (malloc'd into *out). ndim/shape are the expected shape. */
ltx2_status ltx2_audio_load_f32(ltx2_audio_loader *L, const char *key, int ndim, const int64_t *shape, float **out);
/* True when `key` exists (does not mark it used). */
bool ltx2_audio_has(const ltx2_audio_loader *L, const char *key);
/* Every tensor whose name starts with `prefix` must have been loaded. */
ltx2_status ltx2_audio_check_all_used(ltx2_audio_loader *L, const char *prefix);
void ltx2_audio_loader_free(ltx2_audio_loader *L);

#endif
