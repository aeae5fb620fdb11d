/* The text-to-audio+video pipeline behind ltx2_generate: the models of one single-file checkpoint,
 * the latent geometry ltx-pipelines derives from (height, width, frames, fps), prompt hidden
 * states from files, the initial noise, and the sampling loop. Every rule here follows
 * ltx-pipelines 1.0.0 (ti2vid_one_stage.py -> utils/helpers.py denoise_audio_video ->
 * ltx_core tools.py / components/patchifiers.py / types.py); PARITY.md cites each one. */
#ifndef LTX2_PIPELINE_PIPELINE_H
#define LTX2_PIPELINE_PIPELINE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "io/safetensors.h"
#include "ltx2/ltx2.h"
#include "model/audio_vae.h"
#include "model/connectors.h"
#include "model/dit.h"
#include "model/gemma.h"
#include "model/video_vae.h"
#include "model/vocoder.h"

/* Text K/V cache slots of a generation: (positive, negative prompt) x (video, audio stream).
 * LTX-2.3 keys also carry the step's sigma; least-recently-used eviction drops the previous
 * step's. */
#define LTX2_PIPE_TEXT_CACHE_ENTRIES 4
/* Prompt length after the connectors (ltx-pipelines pads the Gemma tokens to 1024). */
#define LTX2_PIPE_TEXT_TOKENS 1024
/* ltx_core types.py AudioLatentShape.from_duration defaults (the pipelines never override them):
 * 16 kHz mel frames every 160 samples, 4 mel frames per latent -> 25 latents per second. */
#define LTX2_PIPE_AUDIO_SAMPLE_RATE 16000
#define LTX2_PIPE_AUDIO_HOP 160
#define LTX2_PIPE_AUDIO_DOWNSAMPLE 4
/* Philox streams of the noise (core/rng.h), one per modality and stage: stage s draws from
 * streams LTX2_PIPE_NOISE_STREAMS_PER_STAGE * s + {video, audio}. */
#define LTX2_PIPE_NOISE_STREAM_VIDEO 0
#define LTX2_PIPE_NOISE_STREAM_AUDIO 1
#define LTX2_PIPE_NOISE_STREAMS_PER_STAGE 2
/* ltx-pipelines' STG blocks (constants.py LTX_2_PARAMS / LTX_2_3_PARAMS stg_blocks). */
#define LTX2_PIPE_STG_BLOCK_2_0 29
#define LTX2_PIPE_STG_BLOCK_2_3 28

struct ltx2_ckpt_source;
typedef struct ltx2_pipe_models {
    struct ltx2_ckpt_source *src; /* the checkpoint (model/ckpt_source.h) */
    const ltx2_st_set *set;       /* its tensors under Lightricks names, owned by src */
    const ltx2_backend *be; /* where the DiT, the connectors and the video decoder run */
    bool is_2_3;
    bool fp8; /* the DiT's scaled fp8 weights were kept fp8 (ltx2_pipe_models_load_fp8; reloads too) */
    bool fp8_cast; /* the DiT under ltx-core's fp8_cast policy (ltx2_pipe_models_load_fp8_cast; reloads too) */
    ltx2_dit_weights *dit;
    ltx2_connectors_weights *conn;
    ltx2_video_decoder *vdec;
    ltx2_audio_decoder *adec;
    ltx2_vocoder *voc;
    ltx2_video_encoder *venc; /* only for image conditioning (ltx2_pipe_models_load_encoder) */
    /* only for audio conditioning (ltx2_pipe_models_load_audio_encoder): the weights and their
     * placement on be */
    struct ltx2_audio_encoder *aenc;
    struct ltx2_audio_enc_device *aenc_dev;
} ltx2_pipe_models;

/* Loads every component from path (a single file or a diffusers directory) (the decoders also define the latent geometry, so they always load): the
 * DiT and the connectors straight onto be (f32 on the CPU, bf16 on a device, read tensor by tensor
 * from the mapping), the video and audio decoders placed on be; the vocoder on the CPU (its forward
 * is not on the op table yet). */
ltx2_status ltx2_pipe_models_load(ltx2_context *ctx, const char *path, const ltx2_backend *be, ltx2_pipe_models *out);
/* The same from paths[0..n) (one single file, one diffusers directory, or split component files)
 * with the adapters of loras (model/lora.h; NULL: none) fused into the DiT. */
struct ltx2_lora_set;
ltx2_status ltx2_pipe_models_load_lora(ltx2_context *ctx, const char *const *paths, int n, const ltx2_backend *be,
                                       struct ltx2_lora_set *loras, ltx2_pipe_models *out);
/* The same under ltx-core's fp8_cast policy (ltx2_dit_weights_load_fp8_cast; no LoRAs). */
ltx2_status ltx2_pipe_models_load_fp8_cast(ltx2_context *ctx, const char *const *paths, int n, const ltx2_backend *be,
                                           ltx2_pipe_models *out);
/* The same, with the DiT's scaled fp8 weights kept fp8 (ltx2_dit_weights_load_fp8). */
ltx2_status ltx2_pipe_models_load_fp8(ltx2_context *ctx, const char *const *paths, int n, const ltx2_backend *be,
                                      struct ltx2_lora_set *loras, ltx2_pipe_models *out);
/* The video VAE encoder of m's checkpoint, placed on m->be (a no-op when loaded). */
ltx2_status ltx2_pipe_models_load_encoder(ltx2_context *ctx, ltx2_pipe_models *m);
/* The audio VAE encoder of m's checkpoint, placed on m->be (a no-op when loaded). */
ltx2_status ltx2_pipe_models_load_audio_encoder(ltx2_context *ctx, ltx2_pipe_models *m);
/* The DiT of m again from its checkpoint with loras fused instead (the two-stage pipeline's stage
 * 2 weights): the current DiT is freed first; on failure m->dit is NULL. */
ltx2_status ltx2_pipe_models_reload_dit(ltx2_context *ctx, ltx2_pipe_models *m, struct ltx2_lora_set *loras);
/* The same on be, but the DiT's block layer tensors are only checked, not loaded (out->dit from
 * ltx2_dit_weights_load_replicated_on, the adapters of loras that cover it fused): for ranks that
 * read their tensor shards of those from out->set->files[0] (ltx2_dit_parallel_create_sharded_lora),
 * so no rank holds the whole DiT. ltx2_pipe_models_reload_dit reloads such a DiT the same way. */
ltx2_status ltx2_pipe_models_load_dit_replicated(ltx2_context *ctx, const char *const *paths, int n,
                                                 const ltx2_backend *be, struct ltx2_lora_set *loras,
                                                 ltx2_pipe_models *out);
void ltx2_pipe_models_free(ltx2_pipe_models *m);

/* Latent geometry of one generation. */
typedef struct ltx2_pipe_geometry {
    int64_t lf, lh, lw, lc;  /* video latent F', H', W', channels */
    int64_t video_tokens;    /* F' * H' * W' */
    int64_t at, az, afreq;   /* audio latent T', channels z, frequency bins F' */
    int64_t audio_feat;      /* z * F' (DiT audio token width) */
} ltx2_pipe_geometry;

/* VideoLatentShape.from_pixel_shape + AudioLatentShape.from_video_pixel_shape. time/space are
 * the VAE's factors (8, 32); audio_z/audio_feat come from the checkpoint. */
ltx2_status ltx2_pipe_geometry_make(ltx2_context *ctx, int64_t frames, int64_t height, int64_t width, double fps,
                                    int64_t time_factor, int64_t space_factor, int64_t latent_channels,
                                    int64_t audio_z, int64_t audio_feat, ltx2_pipe_geometry *g);
/* round(frames / fps * 25) with Python's round-half-even. */
int64_t ltx2_pipe_audio_latent_frames(int64_t frames, double fps);

/* Video positions [1, 3, stride, 2] of the grid's tokens (the first g->video_tokens of each axis's
 * stride; stride > video_tokens leaves room for conditioning tokens after them)
 * (VideoLatentTools.create_initial_state: latent bounds x scale factors, causal fix on time,
 * time / fps); bf16 rounds them as the pipelines' bf16 dtype does; xla multiplies by fl(1 / fps) as
 * XLA compiles MaxDiffusion's division (semantics.h dit_rope_xla). */
void ltx2_pipe_video_positions(const ltx2_pipe_geometry *g, int64_t time_factor, int64_t space_factor,
                               double fps, bool bf16, bool xla, int64_t stride, float *out);
/* Audio positions [1, 1, T', 2] in seconds (AudioPatchifier._compute_audio_timings, causal); xla:
 * MaxDiffusion's under XLA. ltx2_pipe_audio_time: one bound, latent frame `latent`'s start. */
void ltx2_pipe_audio_positions(const ltx2_pipe_geometry *g, bool xla, float *out);
float ltx2_pipe_audio_time(int64_t latent, bool xla);

/* ltx-pipelines' DEFAULT_NEGATIVE_PROMPT (utils/constants.py, 1.0.0): the negative prompt when CFG
 * is on and the user gives none. */
#define LTX2_PIPE_DEFAULT_NEGATIVE_PROMPT \
    "blurry, out of focus, overexposed, underexposed, low contrast, washed out colors, excessive noise, " \
    "grainy texture, poor lighting, flickering, motion blur, distorted proportions, unnatural skin tones, " \
    "deformed facial features, asymmetrical face, missing facial features, extra limbs, disfigured hands, " \
    "wrong hand count, artifacts around text, inconsistent perspective, camera shake, incorrect depth of " \
    "field, background too sharp, background clutter, distracting reflections, harsh shadows, inconsistent " \
    "lighting direction, color banding, cartoonish rendering, 3D CGI look, unrealistic materials, uncanny " \
    "valley effect, incorrect ethnicity, wrong gender, exaggerated expressions, wrong gaze direction, " \
    "mismatched lip sync, silent or muted audio, distorted voice, robotic voice, echo, background noise, " \
    "off-sync audio, incorrect dialogue, added dialogue, repetitive speech, jittery movement, awkward " \
    "pauses, incorrect timing, unnatural transitions, inconsistent framing, tilted camera, flat lighting, " \
    "inconsistent tone, cinematic oversaturation, stylized filters, or AI artifacts."

/* A prompt's Gemma hidden states + mask, from the encoder or a file (see
 * ltx2_generate_params.prompt_embeds). Held layer-major (model/text_states.h): the encoder writes
 * each layer where it belongs; interchange files, layer-last, are transposed on reading and
 * writing, the text cache's are not. */
typedef struct ltx2_pipe_text {
    float *hidden;   /* [L, S, D] */
    uint8_t *mask;   /* [1, S] */
    int64_t S, D, L;
    /* or (hidden NULL) the states where a device encoder made them, [1, L, S, D] in its dtype on
     * dev_be (ltx2_pipe_text_encode's keep): the connectors take them there */
    ltx2_tensor dev;
    const ltx2_backend *dev_be;
} ltx2_pipe_text;

/* Brings device-kept states to the host (hidden), freeing them there; a no-op for host states. */
ltx2_status ltx2_pipe_text_to_host(ltx2_context *ctx, ltx2_pipe_text *t);
/* Device-kept states downloaded into a new host f32 buffer (*out, layer-major; free() it). */
ltx2_status ltx2_pipe_text_download(ltx2_context *ctx, const ltx2_pipe_text *t, float **out);

/* A prompt-embeds file (src/pipeline/pipe_text.c): "hidden_states" [1, S, D, L] (the interchange
 * form, layer-last) or the cache's "hidden_states_layer_major" [1, L, S', D] (S' <= S: the last S'
 * of the mask's S positions, the ones before padding and zero), any float dtype (the leading 1 may
 * be absent), with an optional "attention_mask" [1, S]; every value checked finite.
 * ltx2_pipe_text_load_on with be a device: bf16 layer-major states go straight to it, as its
 * encoder keeps them (dev); anything else lands on the host in f32. */
ltx2_status ltx2_pipe_text_load(ltx2_context *ctx, const char *path, int64_t text_dim, ltx2_pipe_text *out);
ltx2_status ltx2_pipe_text_load_on(ltx2_context *ctx, const char *path, int64_t text_dim, const ltx2_backend *be,
                                   ltx2_pipe_text *out);
/* Left-pads t to S >= t->S tokens with masked zero tokens, as the Gemma tokenizer pads a batch:
 * a positive and a negative prompt of different lengths run as that padded pair. */
ltx2_status ltx2_pipe_text_pad_left(ltx2_context *ctx, ltx2_pipe_text *t, int64_t S);
void ltx2_pipe_text_free(ltx2_pipe_text *t);
/* The prompts one text-encoder call takes (a CFG pair today). */
#define LTX2_PIPE_MAX_PROMPTS 8

/* Prompt hidden states on disk (src/pipeline/text_cache.c): a directory of prompt-embeds files
 * named by SHA-256(encoder fingerprint, token length, prompt). */
#define LTX2_TEXT_CACHE_PATH_CAP 4096
typedef struct ltx2_text_cache {
    char dir[LTX2_TEXT_CACHE_PATH_CAP];
    char fingerprint[65]; /* of the encoder directory (and how it runs) */
} ltx2_text_cache;
/* variant: how the encoder runs when that changes its output ("fp8": fp8-stored weights), NULL for
 * the checkpoint as it is (the fingerprint of earlier caches). */
ltx2_status ltx2_text_cache_open(ltx2_context *ctx, const char *cache_dir, const char *encoder_dir, const char *variant,
                                 ltx2_text_cache *out);
void ltx2_text_cache_path(const ltx2_text_cache *c, const char *prompt, int64_t tokens, char *path, size_t cap);
ltx2_status ltx2_text_cache_mkdir(ltx2_context *ctx, const char *dir);
/* The default bound of a text cache directory (ltx2_generate_params.text_cache_max_bytes): a 12B
 * prompt takes 385 KB a token encoded on a GPU (~100 MB for 250 tokens), twice that on the CPU. */
#define LTX2_TEXT_CACHE_MAX_BYTES ((int64_t)16 << 30)
/* Marks a cache file used now (its times: what the bound removes by); a failure is ignored (a
 * read-only cache still serves). */
void ltx2_text_cache_touch(const char *path);
/* Removes the least recently used cache files of dir (names ltx2_text_cache_path makes; nothing
 * else there is touched) until they take at most max_bytes, never one of keep[0..n_keep); how many
 * went and their bytes into *removed / *freed (may be NULL). */
ltx2_status ltx2_text_cache_trim(ltx2_context *ctx, const char *dir, uint64_t max_bytes, const char *const *keep,
                                 int n_keep, int *removed, uint64_t *freed);
/* Where a text stage's prompts are cached (dir NULL: nowhere) and the cache's bound (0: none). */
typedef struct ltx2_text_cache_opts {
    const char *dir;
    uint64_t max_bytes;
} ltx2_text_cache_opts;

/* Prompts (UTF-8) to out[0..n) with the Gemma-3 checkpoint directory dir (config.json, weights,
 * tokenizer.model) on be: ltx-core's tokenisation to LTX2_GEMMA_MAX_TOKENS (a longer prompt is
 * truncated with a warning), one batched forward, every hidden state; the encoder is freed
 * before returning unless shared (weights the caller loaded with ltx2_pipe_gemma_load, e.g. for the
 * prompt's enhancement) runs instead; fp8: its Linear weights stored fp8 (ltx2_gemma_weights_load_fp8_on). cache
 * (may be NULL, keyed by the encoder and fp8): prompts found in cache->dir skip Gemma, the others
 * are stored there (ltx2_pipe_text_save_cache), then the cache is trimmed to cache->max_bytes (a
 * failed store or trim is a warning). cancel (may be NULL) is polled after every layer: a
 * nonzero return stops the forward with LTX2_ERR_CANCELLED; progress is logged at most every
 * LTX2_PIPE_TEXT_PROGRESS_S seconds. keep: on a device backend (not the CPU) the encoded states
 * stay on it (ltx2_pipe_text.dev; ltx2_gemma_forward_keep) instead of coming to the host (the
 * cache gets a downloaded copy; prompts found there go onto the device too); they must then be
 * freed before that backend is. */
#define LTX2_PIPE_TEXT_PROGRESS_S 10.0
ltx2_status ltx2_pipe_text_encode(ltx2_context *ctx, const char *dir, const ltx2_backend *be, bool fp8,
                                  const ltx2_gemma_weights *shared, const char *const *prompts, int n,
                                  const ltx2_text_cache_opts *cache, bool keep, int (*cancel)(void *),
                                  void *cancel_user, ltx2_pipe_text *out);
/* The Gemma-3 checkpoint in dir on be as the text stage runs it (f32 on the CPU, bf16 on a device;
 * fp8: fp8-stored Linears). */
ltx2_status ltx2_pipe_gemma_load(ltx2_context *ctx, const char *dir, const ltx2_backend *be, bool fp8,
                                 ltx2_gemma_weights **out);
/* --enhance-prompt (prompt_enhance.c): the prompt rewritten by the Gemma-3 checkpoint in dir on be,
 * as ltx-pipelines rewrites it with the encoder's own model: system_prompt (NULL: dir's
 * gemma3_t2v_system_prompt.txt; refused with where to find it when absent), sampled with seed
 * (greedy: argmax, reproducible against transformers), at most max_new_tokens. *w is the model:
 * loaded here (after a memory check) when NULL and left to the caller, who frees it after running
 * the encoder on it too (ltx-pipelines' shared enhancer). The text, cleaned as ltx-pipelines cleans
 * it, is a malloc'd string in *out. */
typedef struct ltx2_enhance_params {
    const char *system_prompt;
    /* An image file (NULL: none): ltx-core's enhance_i2v, the image through Gemma's vision tower and
     * the image-to-video system prompt (dir's LTX2_ENHANCE_I2V_SYSTEM_PROMPT_FILE by default). */
    const char *image;
    uint64_t seed;
    int64_t max_new_tokens;
    bool greedy;
    int (*cancel)(void *);
    void *cancel_user;
} ltx2_enhance_params;
/* The image of an image-to-video enhancement (enhance_image.c): the file at path as
 * Gemma3ImageProcessor hands it to a tower of size x size pixels, after ltx-pipelines' resize to a
 * long side of 896 -> pixels [3, size, size] (caller's). */
ltx2_status ltx2_enhance_image_pixels(ltx2_context *ctx, const char *path, int64_t size, float *pixels);
/* ltx-core's max_new_tokens and ltx-pipelines' enhance_prompt_seed defaults */
#define LTX2_ENHANCE_MAX_NEW_TOKENS 512
#define LTX2_ENHANCE_SEED 42
ltx2_status ltx2_pipe_enhance_prompt(ltx2_context *ctx, const char *dir, const ltx2_backend *be, bool fp8,
                                     const char *prompt, const ltx2_enhance_params *ep, ltx2_gemma_weights **w,
                                     char **out);

/* t as a prompt-embeds file (what ltx2_pipe_text_load reads back): hidden_states f32 [1, S, D, L],
 * attention_mask i64 [1, S]; written through a temp file, never half (src/pipeline/pipe_text.c). */
ltx2_status ltx2_pipe_text_save(ltx2_context *ctx, const ltx2_pipe_text *t, const char *path);
/* t as the text cache stores it (ltx2_pipe_text_load reads it back too): hidden_states_layer_major
 * [1, L, S', D] in the dtype the states were made in (a device encoder's bf16: half the bytes of the
 * f32 form, the same values) and held in, so neither writing nor reading transposes, over the last
 * S' positions only: the prompt's own left padding is left out (LTX never reads it; read back, it
 * is zero); the whole mask as above. A 250-token prompt of the 12B from a GPU: ~100 MB. */
ltx2_status ltx2_pipe_text_save_cache(ltx2_context *ctx, const ltx2_pipe_text *t, const char *path);

/* The noise of stage `stage` (0: the first; 1: a two-stage pipeline's second) in token order:
 * video [Tv, C] (== NDHWC), audio [T', z * F'] (patchified "b c t f -> b t (c f)"). From Philox
 * (seed, the stage's streams) or from a file (torch layouts [1, C, F', H', W'] / [1, z, T', F'],
 * patchified here) holding "video_noise" / "audio_noise" for stage 0 and "stage_2_video_noise" /
 * "stage_2_audio_noise" for stage 1. When g->video_tokens counts tokens past the grid (keyframes),
 * the video noise is "[stage_2_]video_noise_tokens" [1, T, C] in token order; without keyframes
 * either name works, and "[stage_2_]audio_noise_tokens" [1, T', z * F'] (token order: what a
 * MaxDiffusion run packs) stands for the audio one. */
void ltx2_pipe_noise_philox(const ltx2_pipe_geometry *g, uint64_t seed, int stage, float *video, float *audio);
/* The draw of a stage (token order, as the two above give it) into dump directory dir under the
 * names and layouts ltx2_pipe_noise_load reads, so a --dump directory replays as --noise; dir NULL:
 * nothing. */
ltx2_status ltx2_pipe_noise_dump(ltx2_context *ctx, const char *dir, int stage, const ltx2_pipe_geometry *g,
                                 const float *video, const float *audio);
ltx2_status ltx2_pipe_noise_load(ltx2_context *ctx, const char *path, int stage, const ltx2_pipe_geometry *g,
                                 float *video, float *audio);
/* ltx-core GaussianNoiser on a latent x [n / channels tokens, channels] with denoise mask `mask`
 * (per token; NULL: 1) and noise_scale s: x <- noise * (m s) + x * (1 - m s), the products and
 * the sum each rounded to fp32 as torch computes them (the caller rounds the result to the latent
 * dtype). */
void ltx2_pipe_renoise(float *x, const float *noise, const float *mask, int64_t channels, float s, int64_t n);

/* Audio tokens [T', z*F'] <-> latent [z, T', F']. */
void ltx2_pipe_audio_unpatchify(const ltx2_pipe_geometry *g, const float *tokens, float *latent);
/* The first g->at frames of a latent [z, frames, F'] (frames >= g->at) as tokens [T', z*F']. */
void ltx2_pipe_audio_patchify(const ltx2_pipe_geometry *g, const float *latent, int64_t frames, float *tokens);

/* ltx2_generate on be with the models of m (p->device is ignored): m empty (zeroed), they are loaded
 * from p->checkpoint into it (the caller frees them); m loaded (ltx2_model), they are used as they
 * are, with no memory plan (their weights are resident: the device's free memory no longer counts
 * them). */
ltx2_status ltx2_generate_with_models(ltx2_context *ctx, const ltx2_generate_params *p, const ltx2_backend *be,
                                      ltx2_pipe_models *m, ltx2_generate_result *result);
/* ltx2_generate on a given backend (p->device is ignored): for tests that run the pipeline on a
 * backend the library does not open itself (the kernel emulator). */
ltx2_status ltx2_generate_on(ltx2_context *ctx, const ltx2_generate_params *p, const ltx2_backend *be,
                             ltx2_generate_result *result);

/* n floats (at least one, so a zero-sized latent still gets a pointer to free). */
static inline float *ltx2_pipe_alloc_f(int64_t n) { return malloc((size_t)(n > 0 ? n : 1) * sizeof(float)); }

/* Writes t as DIR/<name>.npy (no-op when dir is NULL). */
ltx2_status ltx2_pipe_dump(ltx2_context *ctx, const char *dir, const char *name, const float *data, int ndim,
                           const int64_t *shape);

#endif
