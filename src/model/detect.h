/* Recognises what a set of tensor names is: an LTX-2 single-file checkpoint (which components it
 * holds, 2.0 or 2.3), a standalone latent upsampler, a diffusers component, or none of these.
 * Used by `ltx2 inspect` now and by the model loaders later, so both agree on what a file is. */
#ifndef LTX2_MODEL_DETECT_H
#define LTX2_MODEL_DETECT_H

#include <stddef.h>
#include <stdint.h>

#include "io/json.h"
#include "ltx2/ltx2.h"
#include "ltx2/tensor.h"

typedef enum ltx2_component {
    LTX2_COMP_TRANSFORMER = 0,
    LTX2_COMP_CONNECTORS,
    LTX2_COMP_TEXT_PROJECTION,
    LTX2_COMP_VIDEO_VAE,
    LTX2_COMP_AUDIO_VAE,
    LTX2_COMP_VOCODER,
    LTX2_COMP_UPSAMPLER,
    LTX2_COMP_OTHER,
    LTX2_COMP_COUNT
} ltx2_component;

const char *ltx2_component_name(ltx2_component c);

typedef enum ltx2_layout {
    LTX2_LAYOUT_UNKNOWN = 0,    /* safetensors, but not recognisably LTX-2 */
    LTX2_LAYOUT_SINGLE_FILE,    /* Lightricks: model.diffusion_model.*, vae.*, audio_vae.*, vocoder.* */
    LTX2_LAYOUT_UPSAMPLER,      /* standalone latent upsampler file (unprefixed keys) */
    LTX2_LAYOUT_DIFFUSERS       /* one diffusers component (transformer/, vae/, ...) or a whole pipeline dir */
} ltx2_layout;

typedef enum ltx2_model_version {
    LTX2_MODEL_UNKNOWN = 0,
    LTX2_MODEL_2_0,
    LTX2_MODEL_2_3
} ltx2_model_version;

const char *ltx2_model_version_name(ltx2_model_version v);

typedef struct ltx2_ckpt_info {
    ltx2_layout layout;
    ltx2_model_version version;
    char version_evidence[160];  /* why we think so: a config flag or a key that only one version has */
    size_t n_tensors[LTX2_COMP_COUNT];
    uint64_t n_params[LTX2_COMP_COUNT];
} ltx2_ckpt_info;

/* Component of one single-file key (also works for unprefixed split VAE files). */
ltx2_component ltx2_component_of_key(const char *name);

/* Classifies names[0..n) (with shapes for parameter counts). `config` is the parsed metadata
 * `config` JSON of a single-file checkpoint, or a diffusers config.json; either may be NULL.
 * Never fails on unknown content: it reports LTX2_LAYOUT_UNKNOWN. */
void ltx2_ckpt_classify(const char *const *names, const int64_t *numels, size_t n,
                        const ltx2_json *config, ltx2_ckpt_info *out);

#endif
