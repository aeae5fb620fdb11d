/* ltx2c public C API: context, status codes, last error, logging; generation (ltx2_generate, or
 * ltx2_model_load + ltx2_generate_model to reuse loaded models); writing a result (MP4, WAV, PNG).
 * Every library function returns an ltx2_status; on failure the context's last error says what and
 * where (file, tensor name, expected vs got). The library never calls exit() or abort(). */
#ifndef LTX2_LTX2_H
#define LTX2_LTX2_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum ltx2_status {
    LTX2_OK = 0,
    LTX2_ERR_INVALID_ARG,  /* a caller passed something out of range */
    LTX2_ERR_IO,           /* open/read/write/mmap failed */
    LTX2_ERR_FORMAT,       /* a file is malformed (bad header, bad JSON, offsets out of range) */
    LTX2_ERR_DTYPE,        /* unknown or unsupported dtype */
    LTX2_ERR_SHAPE,        /* shape mismatch or invalid shape */
    LTX2_ERR_NOT_FOUND,    /* a tensor, key or file that should exist does not */
    LTX2_ERR_OOM,          /* allocation failed */
    LTX2_ERR_UNSUPPORTED,  /* valid input this build cannot handle (e.g. no zlib, no CUDA) */
    LTX2_ERR_DEVICE,       /* CUDA / cuBLAS / cuDNN / NCCL failure */
    LTX2_ERR_INTERNAL,     /* a bug in ltx2c */
    LTX2_ERR_NUMERIC,      /* a computation produced a NaN or an infinity (the message names where) */
    LTX2_ERR_CANCELLED     /* the caller's cancel callback asked to stop */
} ltx2_status;

/* Short stable name of a status ("ok", "io", "format", ...). */
const char *ltx2_status_name(ltx2_status st);

typedef enum ltx2_log_level {
    LTX2_LOG_ERROR = 0,
    LTX2_LOG_WARN = 1,
    LTX2_LOG_INFO = 2,
    LTX2_LOG_DEBUG = 3
} ltx2_log_level;

typedef void (*ltx2_log_fn)(ltx2_log_level level, const char *msg, void *user);

typedef struct ltx2_context ltx2_context;

typedef struct ltx2_context_params {
    ltx2_log_level log_level; /* messages above this level are dropped (default INFO) */
    ltx2_log_fn log_fn;       /* NULL: write to stderr */
    void *log_user;
    int n_threads;            /* OpenMP threads; 0 = OpenMP's default */
} ltx2_context_params;

/* Defaults: log level INFO to stderr, OpenMP's thread count. */
void ltx2_context_params_init(ltx2_context_params *p);
/* p NULL: the defaults. Returns NULL only when memory is exhausted. Free with ltx2_context_free. */
ltx2_context *ltx2_context_create(const ltx2_context_params *p);
void ltx2_context_free(ltx2_context *ctx);

/* The last error recorded on this context ("" when none), and its status. */
const char *ltx2_last_error(const ltx2_context *ctx);
ltx2_status ltx2_last_status(const ltx2_context *ctx);
/* Forgets the last error (the message becomes "", the status LTX2_OK). */
void ltx2_clear_error(ltx2_context *ctx);

/* The library's version ("0.x.y"), a static string. */
const char *ltx2_version(void);

/* ---- end-to-end generation (src/pipeline/generate.c) ----------------------------------------- */

/* Called after each denoising step: step in 1..steps, seconds since the loop started. */
typedef void (*ltx2_progress_fn)(int step, int steps, double seconds, void *user);

typedef enum ltx2_generate_semantics {
    LTX2_GENERATE_SEM_LTX_CORE = 0, /* Lightricks' ltx-core / ltx-pipelines (default) */
    LTX2_GENERATE_SEM_DIFFUSERS = 1,
    LTX2_GENERATE_SEM_MAXDIFFUSION = 2
} ltx2_generate_semantics;

/* The arithmetic of the DiT (issue #15 item 3). */
typedef enum ltx2_generate_precision {
    LTX2_GENERATE_PRECISION_FP32 = 0, /* fp32 activations (default) */
    /* MaxDiffusion's TPU configs (bf16 weights and activations): every value its source types bf16
     * rounded where its source rounds it (src/model/dit_tpu.c). MaxDiffusion semantics, the CPU,
     * one rank, bf16 weights. The connectors run f32 there too (load_connectors). */
    LTX2_GENERATE_PRECISION_TPU = 1
} ltx2_generate_precision;

/* A LoRA adapter fused into the DiT's weights at load (ltx-pipelines' `--lora PATH STRENGTH`). */
typedef struct ltx2_lora_spec {
    const char *path;  /* .safetensors with ltx-core / ComfyUI or diffusers lora_A / lora_B keys */
    double strength;   /* ltx-pipelines' default: 1 */
} ltx2_lora_spec;

/* An image the video is conditioned on (ltx-pipelines' `--image PATH FRAME_IDX STRENGTH [CRF]`). */
typedef struct ltx2_image_cond {
    const char *path;  /* PNG (read exactly), or JPEG and the other formats FFmpeg decodes */
    int frame;         /* the pixel frame it gives, 0 .. frames-1: 0 is written over the first latent
                          frame (image-to-video); a later one is a keyframe, appended as extra
                          tokens with its own positions (ltx-pipelines' VideoConditionByKeyframeIndex) */
    double strength;   /* 1: the frame is kept as given, 0: left free (denoise mask 1 - strength) */
    int crf;           /* the H.264 round trip ltx-pipelines puts it through (its default 33); 0: none */
} ltx2_image_cond;

/* The pipelines of ltx-pipelines 1.0.0 the engine runs. */
typedef enum ltx2_generate_pipeline {
    /* ti2vid_one_stage.py: one guided stage at height x width, `steps` sigmas of the LTX-2 scheduler */
    LTX2_PIPELINE_ONE_STAGE = 0,
    /* distilled.py (a distilled checkpoint): stage 1 at height/2 x width/2 on the 8 distilled sigmas
     * without guidance, the x2 spatial latent upsampler (spatial_upsampler), stage 2 at height x width
     * re-noised to sigma 0.909375 (video and audio) on the 3 stage-2 sigmas without guidance. The
     * guidance scales, steps and stg_block do not apply (steps must be 0); height and width are the
     * final size, multiples of 64. */
    LTX2_PIPELINE_DISTILLED,
    /* ti2vid_two_stages.py (a dev checkpoint): stage 1 at height/2 x width/2 with guidance on `steps`
     * sigmas of the LTX-2 scheduler, the x2 spatial latent upsampler, stage 2 at height x width with
     * the distilled LoRA (distilled_lora) fused after the loras, re-noised to 0.909375 on the 3
     * stage-2 sigmas without guidance. height and width are the final size, multiples of 64. */
    LTX2_PIPELINE_TWO_STAGE,
    LTX2_PIPELINE_COUNT
} ltx2_generate_pipeline;

typedef struct ltx2_generate_params {
    /* The model: a Lightricks single-file .safetensors or a diffusers directory (transformer/,
     * connectors/, vae/, audio_vae/, vocoder/), or NULL when checkpoint_files names split files. */
    const char *checkpoint;
    /* Split checkpoint: the components as separate .safetensors files (DiT, connectors, video VAE,
     * audio VAE, vocoder; each file's components told by its keys, bare or with the single file's
     * prefixes), instead of checkpoint. A component missing, given twice, or without its config
     * section (__metadata__["config"] of its file, else of the one other file that has it) is
     * refused before anything runs. NULL / 0: none. */
    const char *const *checkpoint_files;
    int n_checkpoint_files;
    ltx2_generate_pipeline pipeline;    /* LTX2_PIPELINE_ONE_STAGE by default */
    const char *spatial_upsampler;      /* the latent upsampler file the two-stage pipelines need */
    /* LoRAs fused into the DiT at load, in order (every tensor of each must fit this DiT, or the
     * load is refused naming it); NULL / 0: none. Across ranks each rank fuses them into its shards. */
    const ltx2_lora_spec *loras;
    int n_loras;
    /* LTX2_PIPELINE_TWO_STAGE: the distilled LoRA stage 2 adds (path NULL: none) */
    ltx2_lora_spec distilled_lora;
    /* Images the video is conditioned on, in every stage, one per frame (NULL / 0: text only);
     * --semantics ltx-core */
    const ltx2_image_cond *images;
    int n_images;
    /* Audio-to-video (ltx-pipelines a2vid_two_stage): the video is generated to the audio of this file
     * (WAV read exactly; other formats through FFmpeg), read from audio_start_time seconds for
     * audio_max_duration seconds (0: the clip's length, frames / fps, as a2vid's command line). Its
     * latent is held in every stage and the result's audio is the file's own samples (at its rate).
     * NULL: text to audio and video. --semantics ltx-core */
    const char *audio;
    double audio_start_time, audio_max_duration;
    /* Where the DiT, the text connectors, the video and audio VAEs and the vocoder run: "cpu",
     * "cuda", "cuda:N", or NULL / "auto" (CUDA device 0 when usable, else the CPU). */
    const char *device;
    /* The DiT's Linear weights: "bf16" (NULL: the default; the checkpoint's weights, fp8 ones
     * dequantised) or "fp8": a pre-quantised checkpoint's scaled fp8 weights (e4m3 with
     * weight_scale and input_scale, Lightricks' *-fp8 files) stay fp8 and run as fp8 GEMMs, as
     * ltx-core's fp8_scaled_mm policy runs them (ltx-pipelines' --quantization fp8-scaled-mm): half
     * the memory, faster GEMMs. LoRAs are fused into them by ltx-core's fp8 rule (dequantise, add,
     * re-quantise). Needs a backend with fp8 GEMMs (the CPU, CUDA compute capability 8.9+; else
     * refused before any work); across ranks each keeps its shards fp8; models loaded once take it at
     * their load (ltx2_model_load_dtype). "fp8-cast": ltx-core's fp8_cast policy
     * (--quantization fp8-cast): the blocks' q/k/v/out and feed-forward weights and biases rounded to
     * e4m3 with no scale, as it casts them, and run as bf16 (its numbers; the memory stays bf16's). Not
     * with LoRAs (ltx-core fuses those with GPU-only stochastic rounding), nor the two-stage pipeline. */
    const char *weights_dtype;
    /* The DiT's attention arithmetic: "bf16" (NULL: the default; the device's dtype) or "fp8": the
     * video self- and text cross-attention (head dim 128) on e4m3 Q, K, V and probabilities, each
     * scaled per token, key tile or channel (FlashAttention-3's fp8 path, which runs about 1.5x its
     * bf16 one on Hopper): a speed option that moves the output (no reference runs it; each call's
     * attention is about 5% rel-L2 from exact on random inputs). The CPU runs the same rounding
     * (its reference); CUDA needs an sm_90 GPU (H100 / H200). Not with precision tpu. */
    const char *attention_dtype;
    /* Precomputed Gemma-3 hidden states: a .safetensors/.npz holding "hidden_states" [1, S, D, L]
     * (S a multiple of 128, layer axis last) and "attention_mask" [1, S] (1 = token), or a lone
     * .npy of hidden states (mask all ones); a text_cache file ("hidden_states_layer_major"
     * [1, L, S, D]) is read too. negative_prompt_embeds NULL: CFG needs it, so the CFG scales must
     * then be 1. */
    const char *prompt_embeds;
    const char *negative_prompt_embeds;
    /* Text instead of embeddings (exclusive with prompt_embeds): prompt and negative_prompt (UTF-8)
     * through text_encoder, a Gemma-3 checkpoint directory (config.json, weights, tokenizer.model).
     * negative_prompt NULL while CFG is on: Lightricks' default negative prompt. */
    const char *prompt;
    const char *negative_prompt;
    const char *text_encoder;
    /* Where Gemma runs: "cpu", "cuda", "cuda:N" or "auto", as device. NULL: the generation's own
     * GPU when Gemma fits its free memory there (it is freed before the DiT loads), else the CPU;
     * the CPU too when enhance_prompt's K/V cache and LM head table do not fit beside Gemma. */
    const char *text_encoder_device;
    /* Gemma's Linear weights: "bf16" (NULL: the default, the checkpoint's) or "fp8": stored in e4m3
     * with a per-tensor scale and widened before each GEMM, half the resident bytes; the hidden
     * states move by the weights' rounding (no reference runs an fp8 Gemma), so cached prompts are
     * kept apart. */
    const char *text_encoder_dtype;
    /* Optional: the positive prompt's hidden states, as a file prompt_embeds reads; padding shared by
     * every prompt of the run is not computed and is saved as zeros (nothing LTX reads depends on
     * it). */
    const char *save_prompt_embeds;
    /* Optional directory: prompts encoded before (same encoder, same text) are read from it instead
     * of running Gemma; each prompt's states are stored as the encoder made them (bf16 from a GPU,
     * layer-major), its padding left out (a 250-token prompt of the 12B from a GPU: ~100 MB), and
     * read back onto the GPU when the encoder runs there. */
    const char *text_cache;
    /* The text cache's bound: after a prompt is stored, its least recently used files (by their
     * times, which a read refreshes) are removed until the cache's files take at most this many
     * bytes; the prompts of the run stay. Init: 16 GiB (about 160 prompts of 250 tokens for the 12B
     * encoded on a GPU); 0: no bound. */
    int64_t text_cache_max_bytes;
    /* Rewrite prompt with text_encoder's Gemma-3 before encoding it, as ltx-pipelines'
     * --enhance-prompt does (with images, the first one through Gemma's vision tower, as its
     * enhance_i2v): enhance_system_prompt the system prompt file (NULL: gemma3_t2v_system_prompt.txt,
     * with images gemma3_i2v_system_prompt.txt, in text_encoder; Lightricks' texts are not shipped
     * with this engine); sampled at temperature 0.7
     * with the checkpoint's top-k / top-p and enhance_seed (init: 42, ltx-pipelines' default; our
     * Philox draws, so the text differs from ltx-pipelines'), or greedy with enhance_greedy (argmax,
     * transformers' exact tokens); at most enhance_max_tokens (init: 512) new tokens. The result
     * holds the enhanced prompt. */
    int enhance_prompt;
#define LTX2_ENHANCE_SYSTEM_PROMPT_FILE "gemma3_t2v_system_prompt.txt" /* ltx-core's name for it */
#define LTX2_ENHANCE_I2V_SYSTEM_PROMPT_FILE "gemma3_i2v_system_prompt.txt" /* with an image */
    const char *enhance_system_prompt;
    uint64_t enhance_seed;
    int enhance_max_tokens;
    int enhance_greedy;
    uint64_t seed;                      /* Philox key of the noise (streams: 0 video, 1 audio; stage 2: 2, 3) */
    /* optional file with "video_noise" [1, C, F', H', W'] and "audio_noise" [1, z, T', F'] replacing
     * the Philox noise (streams 0 and 1); a two-stage pipeline's stage 2 reads "stage_2_video_noise"
     * and "stage_2_audio_noise" (full-size latent shapes) instead of its streams 2 and 3 */
    const char *noise;
    /* Injection (replaying another engine's run; files or a --dump directory): the DiT contexts
     * after the connectors instead of prompt, embeddings and connectors ("video_context" [1, S, Dv],
     * "audio_context" [1, S, Da], with CFG also "negative_video_context" / "negative_audio_context");
     * and the sigmas instead of the schedule ("sigmas" or "stage_1_sigmas" [steps + 1], and for stage
     * 2 optionally "stage_2_sigmas"): the step count follows them. NULL: computed. */
    const char *context;
    const char *sigmas;
    int steps;                          /* >= 2 (the stretched schedule needs two) */
    int height, width, frames;          /* multiples of 32; frames = 8k + 1 */
    double fps;
    /* Guidance, per modality (ltx-pipelines LTX_2_PARAMS defaults): cfg 1 / stg 0 / rescale 0 /
     * modality 1 turn a term off. */
    double video_cfg, video_stg, video_rescale, video_modality;
    double audio_cfg, audio_stg, audio_rescale, audio_modality;
    int stg_block;                      /* -1: ltx-pipelines' block (29 for 2.0, 28 for 2.3), or the
                                           last block of smaller models */
    ltx2_generate_semantics semantics;
    ltx2_generate_precision precision;
    int latent_bf16;                    /* -1: as the semantics say; 0/1 force fp32/bf16 latents */
    int decode_video, decode_audio;     /* 1 (default): run the VAE decoders */
    int vae_tile_px, vae_tile_frames;   /* 0: decode the whole latent at once */
    const char *dump_dir;               /* optional: every intermediate as .npy files here */
    int dump_call;                      /* with dump_dir: the model call (0-based over the run) whose DiT
                                           internals go to dump_dir/dit (0: the first) */
    ltx2_progress_fn progress;          /* may be NULL */
    void *progress_user;
    /* Polled before the text stage, before every denoising step and before each decode: a nonzero
     * return stops the run with LTX2_ERR_CANCELLED and no result (may be NULL). */
    int (*cancel)(void *user);
    void *cancel_user;
} ltx2_generate_params;

/* ltx-pipelines' defaults (seed 10, 768x512x121 at 24 fps, the version's steps, its guidance),
 * no inputs: set the checkpoint and a prompt or prompt embeddings. */
void ltx2_generate_params_init(ltx2_generate_params *p);

/* Seconds spent per stage. */
typedef struct ltx2_generate_timings {
    double load, text, noise, denoise, upsample, video_decode, audio_decode, total;
} ltx2_generate_timings;

typedef struct ltx2_generate_result {
    uint64_t seed;
    int steps;                 /* denoising steps run (both stages of a two-stage pipeline) */
    float *video;              /* [frames, height, width, 3] RGB in about [-1, 1]; NULL if not decoded */
    int64_t frames, height, width;
    double fps;
    float *audio;              /* planar [audio_channels][audio_samples] in [-1, 1]; NULL if not decoded */
    int64_t audio_channels, audio_samples, audio_rate;
    float *video_latent;       /* final normalised latent, channels-last [1, F', H', W', C] */
    int64_t video_latent_shape[5];
    float *audio_latent;       /* final normalised latent [1, z, T', F'] */
    int64_t audio_latent_shape[4];
    const char *model_version; /* "2.0" / "2.3" (static string) */
    char *enhanced_prompt;     /* with enhance_prompt: the prompt that was encoded (else NULL) */
    ltx2_generate_timings timings;
} ltx2_generate_result;

/* Runs the whole pipeline. On failure the result holds nothing and the context says why. */
ltx2_status ltx2_generate(ltx2_context *ctx, const ltx2_generate_params *p, ltx2_generate_result *result);
/* Frees the buffers of a result (the library allocated them); safe on a zeroed result. */
void ltx2_generate_result_free(ltx2_generate_result *r);

/* ---- one generation over several ranks (src/pipeline/generate_parallel_api.c) ------------------ */

/* How a generation splits over ranks, MaxDiffusion's way: a mesh of data (the guidance passes and
 * batch), fsdp, context (the sequence, Ulysses attention) and tensor (heads) ranks, and a sharding
 * profile for the DiT's weights. */
typedef struct ltx2_parallel_params {
    int ranks;            /* ranks in all; 0: the mesh's size */
    const char *mesh;     /* "data,fsdp,context,tensor" rank counts, e.g. "1,2,2,1" (their product is
                             ranks); NULL: every rank on context (MaxDiffusion's video mesh) */
    const char *sharding; /* "ironwood", "trillium" (FSDP: weights split, gathered per block), "gpu",
                             or NULL / "default" (this build's hardware's) */
    int threads_per_rank; /* CPU ranks: OpenMP threads each; 0: the machine's threads / ranks */
} ltx2_parallel_params;

/* One rank, every rank on context, the default profile. */
void ltx2_parallel_params_init(ltx2_parallel_params *pp);

/* ltx2_generate over ranks that are threads of this process (`ltx2 generate --nproc N`): rank r
 * computes on its own device (p->device "cuda" or auto with GPUs: GPU r mod their count; "cuda:N":
 * every rank on N; "cpu": the CPU), the collectives through host memory. The result is rank 0's,
 * and equals ltx2_generate's: bit for bit without tensor ranks on the CPU (tensor ranks change the
 * order of fp32 sums). A bad mesh, profile or rank count is refused before any work; if one rank
 * fails, every rank stops and ctx holds that rank's reason. One rank: ltx2_generate itself. */
ltx2_status ltx2_generate_parallel(ltx2_context *ctx, const ltx2_generate_params *p, const ltx2_parallel_params *pp,
                                   ltx2_generate_result *result);

/* This process as one rank of a multi-process job its environment describes (LTX2_RANK,
 * LTX2_WORLD_SIZE, LTX2_LOCAL_RANK, and NCCL_COMM_ID or LTX2_RENDEZVOUS=host:port, as srun or a
 * torchrun-style launcher exports them): NCCL between the processes, each computing on the GPU of
 * its local rank (round-robin over the visible GPUs). pp may be NULL (every rank on context);
 * pp->ranks must be the world size or 0. Every rank returns the whole result; rank 0 writes the
 * outputs. A process outside a job, a build without NCCL (LTX2_ERR_UNSUPPORTED) and p->device
 * "cuda:N" are refused before any work. */
ltx2_status ltx2_generate_rank(ltx2_context *ctx, const ltx2_generate_params *p, const ltx2_parallel_params *pp,
                               ltx2_generate_result *result);

/* ---- writing a result (src/pipeline/result_write.c) -------------------------------------------- */

/* Each writer goes through a temporary file renamed into place: a failed or interrupted write
 * leaves no half file. comment (may be NULL) is stored as the file's metadata where the format has
 * a place for it (MP4 "comment", PNG "parameters"); the seed is stored with it. */

/* The result's video (H.264, yuv420p, CRF 19) with its audio (AAC) as an MP4. LTX2_ERR_UNSUPPORTED
 * in a build without FFmpeg (`ltx2 --version` lists "mp4" among its features when it has it);
 * LTX2_ERR_INVALID_ARG for a result without decoded video. */
ltx2_status ltx2_result_write_mp4(ltx2_context *ctx, const ltx2_generate_result *r, const char *path,
                                  const char *comment);
/* The result's audio as a 16-bit PCM WAV at its rate; LTX2_ERR_INVALID_ARG without decoded audio. */
ltx2_status ltx2_result_write_wav(ltx2_context *ctx, const ltx2_generate_result *r, const char *path);
/* Frame `frame` (0-based) of the result's video as an RGB PNG (LTX2_ERR_UNSUPPORTED without
 * libpng). An application writing a frame set loops over the frames (the CLI names them
 * frame_%05d.png) and can stop between two. */
ltx2_status ltx2_result_write_png(ltx2_context *ctx, const ltx2_generate_result *r, int64_t frame, const char *path,
                                  const char *comment);

/* ---- models loaded once, generations many (src/pipeline/generate_model.c) --------------------- */

/* A checkpoint's models (DiT, text connectors, video and audio VAE decoders, vocoder) loaded once
 * onto a device and reused by every ltx2_generate_model call, which then skips the load (seconds
 * to minutes at real sizes). The text encoder is not part of it: a text prompt loads Gemma for
 * that call and frees it after, so it runs while these models are resident. */
typedef struct ltx2_model ltx2_model;

/* Loads checkpoint (a Lightricks single-file .safetensors or a diffusers directory) onto device (as
 * ltx2_generate_params.device; NULL: auto). The first log line names the device. */
ltx2_status ltx2_model_load(ltx2_context *ctx, const char *checkpoint, const char *device, ltx2_model **out);
/* The same from paths[0..n): one single file or diffusers directory, or Lightricks' split component
 * files (as ltx2_generate_params.checkpoint_files). */
ltx2_status ltx2_model_load_files(ltx2_context *ctx, const char *const *paths, int n, const char *device,
                                  ltx2_model **out);
/* As ltx2_model_load_files with the DiT's Linear weights kept as weights_dtype says (NULL or "bf16",
 * "fp8", "fp8-cast": ltx2_generate_params.weights_dtype, same checks). A generation on the model
 * leaves its weights_dtype NULL (the model's) or names the model's own. */
ltx2_status ltx2_model_load_dtype(ltx2_context *ctx, const char *const *paths, int n, const char *device,
                                  const char *weights_dtype, ltx2_model **out);
/* The models over ranks that are threads of this process (ltx2_generate_parallel's), loaded once:
 * each rank keeps its models and its DiT shards on its own device (device as for
 * ltx2_generate_parallel: rank r on GPU r mod their count) until ltx2_model_free, and every
 * ltx2_generate_model call on the handle runs on all of them, bit for bit ltx2_generate_parallel's
 * result. A call that fails on a rank once its ranks are involved (bad parameters are refused
 * before) aborts their communicator: the next call loads the ranks again (logged). pp NULL or one
 * rank: ltx2_model_load_dtype. */
ltx2_status ltx2_model_load_parallel(ltx2_context *ctx, const char *const *paths, int n, const char *device,
                                     const char *weights_dtype, const ltx2_parallel_params *pp, ltx2_model **out);
/* Frees the models and their device (NULL is ignored); a handle over ranks ends their threads. */
void ltx2_model_free(ltx2_model *model);
/* ltx2_generate on model's models: p->checkpoint (and checkpoint_files) must be unset or name the
 * model's own, p->device is ignored (the model's device runs). No memory plan is made per call: the weights are resident, and an
 * activation that does not fit fails with LTX2_ERR_OOM from the device. The result equals
 * ltx2_generate's with the same parameters. LoRAs are refused (they are fused as the DiT loads); the
 * video encoder joins the handle's models on the first call with images, an upsampler is read per
 * call. Calls on one model must not overlap. */
ltx2_status ltx2_generate_model(ltx2_context *ctx, ltx2_model *model, const ltx2_generate_params *p,
                                ltx2_generate_result *result);

#ifdef __cplusplus
}
#endif
#endif
