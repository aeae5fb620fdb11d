/* MaxDiffusion's converted-weights cache: the LTX-2 DiT exactly as a TPU run of MaxDiffusion held it
 * (AI-Hypercomputer/maxdiffusion 7cfb880, models/ltx2/ltx2_utils.py save_converted_weights, written when
 * the config sets `converted_weights_dir`; the file is `<dir>/<model>--transformer--<dtype>--scan<bool>
 * .safetensors`, ltx2_pipeline.py converted_weights_cache_dir). Its keys are flax paths joined by '.',
 * Linear kernels [in, out], and with scan_layers the blocks stacked on a leading layer axis under
 * `transformer_blocks.` (without: `transformer_blocks.<i>.`); its dtypes are MaxDiffusion's after the
 * cast (weights_dtype, float32 for the cast-excluded parameters).
 *
 * Opened as the diffusers transformer it was converted from, under the Lightricks names every loader
 * reads (names.h): each key renamed back by inverting load_transformer_weights' renames, stacked tensors
 * cut per layer (views of the mapping), 2-D kernels transposed to torch's [out, in]. The transposes are
 * the one host copy: the DiT's Linear weights in their stored dtype (about 38 GB for the 19B in bf16);
 * everything else stays in the mapping. ckpt_source.h puts the result in place of a checkpoint's DiT. */
#ifndef LTX2_MODEL_MD_WEIGHTS_H
#define LTX2_MODEL_MD_WEIGHTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "io/safetensors.h"
#include "ltx2/ltx2.h"

typedef struct ltx2_md_weights ltx2_md_weights;

/* What marks such a cache: the flax kernel of the video patch projection, a name neither diffusers
 * (`proj_in.weight`) nor Lightricks (`...patchify_proj.weight`) uses. */
#define LTX2_MD_CACHE_MARK "proj_in.kernel"
/* Whether f holds LTX2_MD_CACHE_MARK. */
bool ltx2_md_weights_is_cache(const ltx2_st_file *f);
/* A key under the blocks: *layer >= 0 for `transformer_blocks.<i>.rest`, -1 when stacked
 * (`transformer_blocks.rest`); *rest is the part after the block prefix. False: not a block key. */
bool ltx2_md_block_key(const char *name, int64_t *layer, const char **rest);

/* The diffusers name of one MaxDiffusion DiT key with its block prefix removed (`attn1.to_out.kernel` ->
 * `attn1.to_out.0.weight`); *kernel says whether it was a flax kernel (stored [in, out]). False when cap
 * is short. */
bool ltx2_md_key_to_df(const char *flax, char *out, size_t cap, bool *kernel);

/* Opens the cache at path (headers and renames; the kernels transposed). A file that is not a cache, a
 * stacked tensor without a layer axis or with another layer count than the others, a block index that
 * is not a number, stacked and per-block keys in one file, or two keys with one name are refused naming
 * the key. */
ltx2_status ltx2_md_weights_open(ltx2_context *ctx, const char *path, ltx2_md_weights **out);
/* Every tensor under its Lightricks name, sorted (no metadata; valid until close). */
const ltx2_st_file *ltx2_md_weights_file(const ltx2_md_weights *m);
/* The layer count of the blocks (stacked axis or block indices). */
int64_t ltx2_md_weights_layers(const ltx2_md_weights *m);
void ltx2_md_weights_close(ltx2_md_weights *m);

#endif
