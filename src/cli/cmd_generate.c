/* `ltx2 generate`: text (precomputed Gemma hidden states) to video + audio with ltx2_generate,
 * written as MP4 (H.264 + AAC), PNG frames and/or WAV. Every flag is checked before any model is
 * loaded (exit 2 with the reason); a run that fails later removes what it had written. Without
 * --checkpoint it runs the embedded tiny model (weights/tiny/) found next to the executable or in
 * the source tree. */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/generate_cli.h"
#include "cli/generate_launch.h"
#include "core/progress.h"
#include "core/timer.h"
#include "io/file.h"
#include "io/mp4.h"
#include "io/png.h"
#include "io/wav.h"
#include "model/ckpt_source.h"
#include "pipeline/semantics.h"
#include "text/gemma_tokenizer.h"

#define CMD CLI_GENERATE_CMD
#define TINY_CKPT "weights/tiny/ltx2-tiny-2.0.safetensors"
#define TINY_POS "weights/tiny/prompt_embeds_positive.safetensors"
#define TINY_NEG "weights/tiny/prompt_embeds_negative.safetensors"
/* The embedded tiny Gemma-3 text encoder (its config.json marks the directory). */
#define TINY_GEMMA_CONFIG "weights/tiny/gemma/config.json"
/* The embedded model is a 2-block random-weight test model: these keep its demo run short on two
 * cores (latent 4 x 8 x 12, 26 audio latents) while exercising every stage. Real checkpoints
 * default to ltx-pipelines' 512x768x121 and 40 / 30 steps. */
#define TINY_HEIGHT 256
#define TINY_WIDTH 384
#define TINY_FRAMES 25
#define TINY_STEPS 4
/* ltx-pipelines' two-stage and distilled parsers default to the stage-2 size
 * (PipelineParams.stage_2_height, stage_2_width); the upsampler decides what it must be a multiple
 * of (two_stage_clip.h: 64 for x2, as helpers.py assert_resolution(is_two_stage=True)). */
#define TWO_STAGE_HEIGHT 1024
#define TWO_STAGE_WIDTH 1536
/* ltx-pipelines constants.py DEFAULT_LORA_STRENGTH; at most CLI_MAX_LORAS --lora per run. */
#define DEFAULT_LORA_STRENGTH 1.0
#define CLI_MAX_LORAS 16
/* split checkpoint files one --checkpoint-path may name (a full LTX-2 split has five components) */
#define CLI_MAX_CHECKPOINT_FILES 16
/* --text-cache-size's ceiling in GiB: 1 PiB, so the bytes fit an int64 whatever the input */
#define TEXT_CACHE_MAX_GIB (1 << 20)
/* ltx-pipelines constants.py DEFAULT_IMAGE_CRF (the H.264 round trip of an --image); at most
 * CLI_MAX_IMAGES --image per run; x264's 8-bit CRF range. */
#define DEFAULT_IMAGE_CRF 33
#define CLI_MAX_IMAGES 8
#define CLI_CRF_MAX 51
#define VIDEO_FACTOR_SPACE 32
#define VIDEO_FACTOR_TIME 8
#define PATH_CAP CLI_GENERATE_PATH_CAP
/* Output files one run may write: mp4, wav, and frames. */
#define MAX_WRITTEN 4

/* Upper bounds of the integer flags, so that a typo cannot wrap into a small run or start one that
 * could never finish. A side of 8192 px is twice 4K UHD's long side (3840) with margin; 8193 frames
 * (8k + 1, k = 1024) is over 5 minutes at 25 fps; 1000 steps is 25x the default schedule; a tile is
 * at most a side; a seed fits torch's int64 generator (ranks: CLI_MAX_NPROC, generate_launch.h). */
#define GEN_MAX_SIDE_PX 8192
#define GEN_MAX_FRAMES 8193
#define GEN_MAX_STEPS 1000
#define GEN_MAX_SEED LLONG_MAX
/* --enhance-max-tokens: Gemma-3's context is 128k tokens; the K/V cache of this many is what bounds it */
#define GEN_MAX_ENHANCE_TOKENS 8192
/* --seed -1 asks for a random seed (ltx-pipelines users' convention). */
#define GEN_RANDOM_SEED -1

static bool parse_int(const char *flag, const char *text, long long lo, long long hi, long long *out) {
    char *end = NULL;
    errno = 0;
    long long v = strtoll(text, &end, 10);
    if (errno || end == text || *end || v < lo || v > hi) {
        fprintf(stderr, "ltx2 %s: %s expects an integer in [%lld, %lld], got '%s'\n", CMD, flag, lo, hi, text);
        return false;
    }
    *out = v;
    return true;
}

/* The signal (SIGINT, SIGTERM) that asked this run to stop, 0 while none did. A handler can only
 * set a flag, so this is the one piece of process-wide state the CLI keeps; the library sees it
 * through the cancel callback, the writers by polling it. */
static volatile sig_atomic_t g_stop_signal;

static void on_stop_signal(int sig) { g_stop_signal = sig; }

static int stop_requested(void *user) {
    (void)user;
    return g_stop_signal != 0;
}

/* SIGINT / SIGTERM stop the run at its next step or stage boundary and remove what it wrote; a
 * second one (SA_RESETHAND) kills at once, as users expect of a second Ctrl-C. */
static void catch_stop_signals(void) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_stop_signal;
    sa.sa_flags = SA_RESETHAND | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
}

/* 128 + the signal, the shell's convention (130 SIGINT, 143 SIGTERM), after saying so. */
static int stopped_exit(void) {
    const int sig = (int)g_stop_signal;
    fprintf(stderr, "ltx2 %s: interrupted by %s: stopped, nothing of this run is left on disk\n", CMD,
            sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : "a signal");
    return 128 + sig;
}

typedef struct cli_progress {
    ltx2_progress bar;
    bool started;
} cli_progress;

static void on_step(int step, int steps, double seconds, void *user) {
    cli_progress *cp = user;
    if (!cp->started) {
        ltx2_progress_begin(&cp->bar, "denoise", steps, stderr);
        cp->bar.t_start -= seconds; /* count from the loop's start: the first step is done already */
        cp->bar.summary = true;
        cp->bar.log = true; /* batch jobs and nohup see progress, not hours of silence */
        cp->started = true;
    }
    ltx2_progress_update(&cp->bar, step);
}

/* What this run wrote, removed again if a later stage fails. */
typedef struct written {
    char *files[MAX_WRITTEN];
    int n_files;
    const char *png_dir;
    bool png_dir_created;
    int64_t n_png;
} written;

static void undo_written(written *w) {
    for (int i = 0; i < w->n_files; i++) {
        unlink(w->files[i]);
        free(w->files[i]);
    }
    w->n_files = 0;
    if (w->png_dir) {
        char path[PATH_CAP];
        for (int64_t f = 0; f < w->n_png; f++) {
            snprintf(path, sizeof path, "%s/frame_%05lld.png", w->png_dir, (long long)f);
            unlink(path);
        }
        if (w->png_dir_created) rmdir(w->png_dir);
    }
}

static void forget_written(written *w) {
    for (int i = 0; i < w->n_files; i++) free(w->files[i]);
    w->n_files = 0;
}

/* --seed -1: a seed from the system's entropy, in [0, GEN_MAX_SEED] (printed with the run). */
static bool random_seed(uint64_t *out) {
    FILE *f = fopen("/dev/urandom", "rb");
    uint64_t v = 0;
    const bool ok = f && fread(&v, sizeof v, 1, f) == 1;
    if (f) fclose(f);
    if (!ok) {
        fprintf(stderr, "ltx2 %s: --seed -1: cannot read /dev/urandom for a random seed\n", CMD);
        return false;
    }
    *out = v & (uint64_t)GEN_MAX_SEED;
    return true;
}

/* --image PATH FRAME_IDX STRENGTH [CRF] (ltx-pipelines' ImageAction). */
static bool parse_image(int argc, char **argv, int *i, ltx2_image_cond *out) {
    bool enough = *i + 3 < argc;
    for (int k = 1; enough && k <= 3; k++) /* a flag where a value belongs: the values ran out */
        enough = !(argv[*i + k][0] == '-' && isalpha((unsigned char)argv[*i + k][1])) &&
                 strncmp(argv[*i + k], "--", 2) != 0;
    if (!enough) {
        fprintf(stderr, "ltx2 %s: --image needs PATH FRAME_IDX STRENGTH [CRF]\n", CMD);
        return false;
    }
    long long frame = 0, crf = DEFAULT_IMAGE_CRF;
    double strength = 0;
    out->path = argv[*i + 1];
    if (!parse_int("--image FRAME_IDX", argv[*i + 2], 0, GEN_MAX_FRAMES - 1, &frame) ||
        !cli_parse_double(CMD, "--image STRENGTH", argv[*i + 3], &strength))
        return false;
    *i += 3;
    if (*i + 1 < argc && argv[*i + 1][0] != '-') {
        if (!parse_int("--image CRF", argv[*i + 1], 0, CLI_CRF_MAX, &crf)) return false;
        ++*i;
    }
    if (!(strength >= 0.0 && strength <= 1.0)) {
        fprintf(stderr, "ltx2 %s: --image %s: STRENGTH must be in [0, 1] (1 keeps the frame as given), got %g\n", CMD,
                out->path, strength);
        return false;
    }
    out->frame = (int)frame;
    out->strength = strength;
    out->crf = (int)crf;
    return cli_generate_input_file("--image", out->path);
}

/* --lora / --distilled-lora PATH [STRENGTH]: the strength is the next argument when it is a number
 * (ltx-pipelines' LoraAction), else ltx-pipelines' default 1. */
static bool parse_lora(int argc, char **argv, int *i, ltx2_lora_spec *out) {
    const char *flag = argv[*i];
    if (*i + 1 >= argc || argv[*i + 1][0] == '-' || !argv[*i + 1][0]) {
        fprintf(stderr, "ltx2 %s: %s needs a file: %s PATH [STRENGTH]\n", CMD, flag, flag);
        return false;
    }
    out->path = argv[++*i];
    out->strength = DEFAULT_LORA_STRENGTH;
    if (*i + 1 < argc) {
        char *end = NULL;
        const double v = strtod(argv[*i + 1], &end);
        if (end != argv[*i + 1] && !*end) {
            if (!isfinite(v)) {
                fprintf(stderr, "ltx2 %s: %s %s: strength %s is not a finite number\n", CMD, flag, out->path,
                        argv[*i + 1]);
                return false;
            }
            out->strength = v;
            ++*i;
        }
    }
    return cli_generate_input_file(flag, out->path);
}

/* The STG block: ltx-pipelines names one list per stream, the engine perturbs one block for both
 * (the defaults agree: 29 for 2.0, 28 for 2.3). A stream's block given alone, or the same for both,
 * is that block; two different blocks are refused rather than half honoured. */
static bool stg_blocks_merge(long long video, long long audio, long long *block) {
    if (video >= 0 && audio >= 0 && video != audio) {
        fprintf(stderr, "ltx2 %s: --video-stg-blocks %lld and --audio-stg-blocks %lld: the engine perturbs one "
                "block for both streams; give the same block (or one of the flags)\n", CMD, video, audio);
        return false;
    }
    const long long b = video >= 0 ? video : audio;
    if (b >= 0 && *block >= 0 && b != *block) {
        fprintf(stderr, "ltx2 %s: --stg-block %lld and the stream block %lld disagree\n", CMD, *block, b);
        return false;
    }
    if (b >= 0) *block = b;
    return true;
}

int cli_generate(ltx2_context *ctx, int argc, char **argv) {
    ltx2_generate_params p;
    ltx2_generate_params_init(&p);
    const char *md_weights = NULL; /* --maxdiffusion-weights: MaxDiffusion's converted DiT (ckpt_source.h) */
    const char *device = NULL, *ckpt = NULL, *pos = NULL, *neg = NULL, *output = NULL, *png_dir = NULL, *wav = NULL;
    bool no_text_cache = false, overwrite = false, distilled_ckpt = false;
    long long enhance_seed = -1, enhance_tokens = -1; /* -1: not given */
    const char *enhance_flag = NULL; /* the first --enhance-* option other than --enhance-prompt */
    const char *ckpts[CLI_MAX_CHECKPOINT_FILES]; /* --checkpoint-path FILE|DIR [FILE...] (repeatable) */
    int n_ckpts = 0;
    int pipeline = -1; /* -1: from the checkpoint (pick_pipeline) */
    ltx2_lora_spec loras[CLI_MAX_LORAS];
    int n_loras = 0;
    ltx2_image_cond images[CLI_MAX_IMAGES];
    int n_images = 0;
    long long threads = 0, steps = -1, height = -1, width = -1, frames = -1, seed = -2, stg_block = -1, tile = 0;
    double cfg = NAN, acfg = NAN, stg = NAN, rescale = NAN, modality = NAN, fps = NAN;
    /* per-stream guidance (ltx-pipelines' flags), applied after the both-stream ones */
    double vstg = NAN, astg = NAN, vres = NAN, ares = NAN, vmod = NAN, amod = NAN;
    long long vblock = -1, ablock = -1, dump_call = -1;
    ltx2_semantics sem = LTX2_SEM_LTX_CORE;
    cli_launch launch;
    memset(&launch, 0, sizeof launch);
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        const char *v = NULL;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            cli_generate_usage(stdout);
            return CLI_EXIT_OK;
        }
#define VALUE() \
    do { if (!(v = cli_flag_value(CMD, argc, argv, &i))) return CLI_EXIT_BAD_INPUT; } while (0)
#define NUM(dst) do { VALUE(); if (!cli_parse_double(CMD, a, v, &(dst))) return CLI_EXIT_BAD_INPUT; } while (0)
#define INT(dst, lo, hi) \
    do { VALUE(); if (!parse_int(a, v, (lo), (hi), &(dst))) return CLI_EXIT_BAD_INPUT; } while (0)
        if (!strcmp(a, "--checkpoint") || !strcmp(a, "--checkpoint-path") || !strcmp(a, "--distilled-checkpoint-path")) {
            VALUE();
            if (!strcmp(a, "--distilled-checkpoint-path")) distilled_ckpt = true;
            for (;;) { /* the value, then every following argument that is not a flag: split files */
                if (n_ckpts == CLI_MAX_CHECKPOINT_FILES) {
                    fprintf(stderr, "ltx2 %s: more than %d checkpoint files\n", CMD, CLI_MAX_CHECKPOINT_FILES);
                    return CLI_EXIT_BAD_INPUT;
                }
                ckpts[n_ckpts++] = v;
                if (i + 1 >= argc || argv[i + 1][0] == '-') break;
                v = argv[++i];
            }
            ckpt = ckpts[0];
        }
        else if (!strcmp(a, "--spatial-upsampler-path")) { VALUE(); p.spatial_upsampler = v; }
        else if (!strcmp(a, "--maxdiffusion-weights")) { VALUE(); md_weights = v; }
        else if (!strcmp(a, "--pipeline")) {
            VALUE();
            if (!strcmp(v, "one-stage")) pipeline = LTX2_PIPELINE_ONE_STAGE;
            else if (!strcmp(v, "distilled")) pipeline = LTX2_PIPELINE_DISTILLED;
            else if (!strcmp(v, "two-stage")) pipeline = LTX2_PIPELINE_TWO_STAGE;
            else {
                fprintf(stderr, "ltx2 %s: --pipeline expects one-stage, distilled or two-stage, got '%s'\n", CMD, v);
                return CLI_EXIT_BAD_INPUT;
            }
        } else if (!strcmp(a, "--lora")) {
            if (n_loras == CLI_MAX_LORAS) {
                fprintf(stderr, "ltx2 %s: at most %d --lora\n", CMD, CLI_MAX_LORAS);
                return CLI_EXIT_BAD_INPUT;
            }
            if (!parse_lora(argc, argv, &i, &loras[n_loras++])) return CLI_EXIT_BAD_INPUT;
        } else if (!strcmp(a, "--image")) {
            if (n_images == CLI_MAX_IMAGES) {
                fprintf(stderr, "ltx2 %s: at most %d --image\n", CMD, CLI_MAX_IMAGES);
                return CLI_EXIT_BAD_INPUT;
            }
            if (!parse_image(argc, argv, &i, &images[n_images++])) return CLI_EXIT_BAD_INPUT;
        } else if (!strcmp(a, "--audio-path") || !strcmp(a, "--audio")) {
            VALUE();
            p.audio = v;
            if (!cli_generate_input_file(a, v)) return CLI_EXIT_BAD_INPUT;
        } else if (!strcmp(a, "--audio-start-time") || !strcmp(a, "--audio-max-duration")) {
            const bool start = !strcmp(a, "--audio-start-time");
            double *dst = start ? &p.audio_start_time : &p.audio_max_duration;
            NUM(*dst);
            if (!isfinite(*dst) || *dst < 0 || (!start && *dst == 0)) {
                fprintf(stderr, "ltx2 %s: %s must be %s seconds, got %s\n", CMD, a, start ? "a finite >= 0" : "a finite > 0",
                        v);
                return CLI_EXIT_BAD_INPUT;
            }
        } else if (!strcmp(a, "--distilled-lora")) {
            if (!parse_lora(argc, argv, &i, &p.distilled_lora)) return CLI_EXIT_BAD_INPUT;
        }
        else if (!strcmp(a, "--device")) { VALUE(); device = v; }
        else if (!strcmp(a, "--weights-dtype")) {
            VALUE();
            if (strcmp(v, "bf16") && strcmp(v, "fp8") && strcmp(v, "fp8-cast")) {
                fprintf(stderr, "ltx2 %s: --weights-dtype must be bf16, fp8 or fp8-cast, got %s\n", CMD, v);
                return CLI_EXIT_BAD_INPUT;
            }
            p.weights_dtype = v;
        } else if (!strcmp(a, "--attention-dtype")) {
            VALUE();
            if (strcmp(v, "bf16") && strcmp(v, "fp8")) {
                fprintf(stderr, "ltx2 %s: --attention-dtype must be bf16 or fp8, got %s\n", CMD, v);
                return CLI_EXIT_BAD_INPUT;
            }
            p.attention_dtype = v;
        } else if (!strcmp(a, "--quantization")) { /* ltx-pipelines' name for the same choice */
            VALUE();
            if (strcmp(v, "fp8-scaled-mm") && strcmp(v, "fp8-cast")) {
                fprintf(stderr, "ltx2 %s: --quantization must be fp8-scaled-mm or fp8-cast, got %s\n", CMD, v);
                return CLI_EXIT_BAD_INPUT;
            }
            p.weights_dtype = strcmp(v, "fp8-cast") ? "fp8" : "fp8-cast";
        }
        else if (!strcmp(a, "--prompt-embeds")) { VALUE(); pos = v; }
        else if (!strcmp(a, "--negative-prompt-embeds")) { VALUE(); neg = v; }
        else if (!strcmp(a, "--prompt")) { VALUE(); p.prompt = v; }
        else if (!strcmp(a, "--negative-prompt")) { VALUE(); p.negative_prompt = v; }
        else if (!strcmp(a, "--text-encoder") || !strcmp(a, "--gemma-root")) { VALUE(); p.text_encoder = v; }
        else if (!strcmp(a, "--text-encoder-device")) { VALUE(); p.text_encoder_device = v; }
        else if (!strcmp(a, "--text-encoder-dtype")) {
            VALUE();
            if (strcmp(v, "bf16") && strcmp(v, "fp8")) {
                fprintf(stderr, "ltx2 %s: --text-encoder-dtype must be bf16 or fp8, got %s\n", CMD, v);
                return CLI_EXIT_BAD_INPUT;
            }
            p.text_encoder_dtype = v;
        }
        else if (!strcmp(a, "--text-cache")) { VALUE(); p.text_cache = v; }
        else if (!strcmp(a, "--no-text-cache")) no_text_cache = true;
        else if (!strcmp(a, "--text-cache-size")) {
            double gib = 0;
            NUM(gib);
            if (!(gib >= 0 && gib <= TEXT_CACHE_MAX_GIB)) {
                fprintf(stderr, "ltx2 %s: --text-cache-size %s: GiB in [0, %d] (0: no bound)\n", CMD, v,
                        TEXT_CACHE_MAX_GIB);
                return CLI_EXIT_BAD_INPUT;
            }
            p.text_cache_max_bytes = (int64_t)(gib * (double)(1 << 30));
        }
        else if (!strcmp(a, "--save-prompt-embeds")) { VALUE(); p.save_prompt_embeds = v; }
        else if (!strcmp(a, "--enhance-prompt")) p.enhance_prompt = 1;
        else if (!strcmp(a, "--enhance-system-prompt")) { VALUE(); p.enhance_system_prompt = v; enhance_flag = a; }
        else if (!strcmp(a, "--enhance-seed")) { INT(enhance_seed, 0, GEN_MAX_SEED); enhance_flag = a; }
        else if (!strcmp(a, "--enhance-max-tokens")) { INT(enhance_tokens, 1, GEN_MAX_ENHANCE_TOKENS); enhance_flag = a; }
        else if (!strcmp(a, "--enhance-greedy")) { p.enhance_greedy = 1; enhance_flag = a; }
        else if (!strcmp(a, "--seed")) INT(seed, GEN_RANDOM_SEED, GEN_MAX_SEED);
        else if (!strcmp(a, "--steps") || !strcmp(a, "--num-inference-steps")) INT(steps, 1, GEN_MAX_STEPS);
        else if (!strcmp(a, "--guidance-scale") || !strcmp(a, "--video-cfg-guidance-scale")) NUM(cfg);
        else if (!strcmp(a, "--audio-guidance-scale") || !strcmp(a, "--audio-cfg-guidance-scale")) NUM(acfg);
        else if (!strcmp(a, "--stg-scale")) NUM(stg);
        else if (!strcmp(a, "--video-stg-guidance-scale")) NUM(vstg);
        else if (!strcmp(a, "--audio-stg-guidance-scale")) NUM(astg);
        else if (!strcmp(a, "--rescale")) NUM(rescale);
        else if (!strcmp(a, "--video-rescale-scale")) NUM(vres);
        else if (!strcmp(a, "--audio-rescale-scale")) NUM(ares);
        else if (!strcmp(a, "--modality-scale")) NUM(modality);
        else if (!strcmp(a, "--a2v-guidance-scale")) NUM(vmod);
        else if (!strcmp(a, "--v2a-guidance-scale")) NUM(amod);
        else if (!strcmp(a, "--stg-block")) INT(stg_block, 0, INT_MAX);
        else if (!strcmp(a, "--video-stg-blocks") || !strcmp(a, "--audio-stg-blocks")) {
            INT(*(a[2] == 'v' ? &vblock : &ablock), 0, INT_MAX);
            if (i + 1 < argc && argv[i + 1][0] != '-') { /* ltx-pipelines takes a list */
                fprintf(stderr, "ltx2 %s: %s %s %s...: the engine perturbs one block for both streams; give one\n",
                        CMD, a, v, argv[i + 1]);
                return CLI_EXIT_BAD_INPUT;
            }
        } else if (!strcmp(a, "--video-skip-step") || !strcmp(a, "--audio-skip-step")) {
            long long skip = 0;
            INT(skip, 0, GEN_MAX_STEPS);
            if (skip) {
                fprintf(stderr, "ltx2 %s: %s %lld: skipping denoising steps is not implemented (only 0, "
                        "ltx-pipelines' default)\n", CMD, a, skip);
                return CLI_EXIT_BAD_INPUT;
            }
        }
        else if (!strcmp(a, "--height")) INT(height, 1, GEN_MAX_SIDE_PX);
        else if (!strcmp(a, "--width")) INT(width, 1, GEN_MAX_SIDE_PX);
        else if (!strcmp(a, "--frames") || !strcmp(a, "--num-frames")) INT(frames, 1, GEN_MAX_FRAMES);
        else if (!strcmp(a, "--fps") || !strcmp(a, "--frame-rate")) NUM(fps);
        else if (!strcmp(a, "--output") || !strcmp(a, "-o") || !strcmp(a, "--output-path")) { VALUE(); output = v; }
        else if (!strcmp(a, "--png-dir")) { VALUE(); png_dir = v; }
        else if (!strcmp(a, "--overwrite")) overwrite = true;
        else if (!strcmp(a, "--wav")) { VALUE(); wav = v; }
        else if (!strcmp(a, "--dump")) { VALUE(); p.dump_dir = v; }
        else if (!strcmp(a, "--dump-call")) INT(dump_call, 0, INT_MAX);
        else if (!strcmp(a, "--context")) { VALUE(); p.context = v; }
        else if (!strcmp(a, "--sigmas")) { VALUE(); p.sigmas = v; }
        else if (!strcmp(a, "--noise")) { VALUE(); p.noise = v; }
        else if (!strcmp(a, "--vae-tile")) INT(tile, 0, GEN_MAX_SIDE_PX);
        else if (!strcmp(a, "--threads")) INT(threads, 0, omp_get_num_procs());
        else if (!strcmp(a, "--nproc")) INT(launch.nproc, 1, CLI_MAX_NPROC);
        else if (!strcmp(a, "--mesh")) { VALUE(); launch.mesh_text = v; }
        else if (!strcmp(a, "--sharding")) { VALUE(); launch.sharding_text = v; }
        else if (!strcmp(a, "--launch")) { VALUE(); launch.launch_text = v; }
        else if (!strcmp(a, "--precision")) {
            VALUE();
            if (!strcmp(v, "fp32")) p.precision = LTX2_GENERATE_PRECISION_FP32;
            else if (!strcmp(v, "tpu")) p.precision = LTX2_GENERATE_PRECISION_TPU;
            else {
                fprintf(stderr, "ltx2 %s: --precision expects fp32 or tpu, got '%s'\n", CMD, v);
                return CLI_EXIT_BAD_INPUT;
            }
        } else if (!strcmp(a, "--semantics")) {
            VALUE();
            if (!ltx2_sem_parse(v, &sem)) {
                fprintf(stderr, "ltx2 %s: --semantics expects ltx-core, diffusers or maxdiffusion, got '%s'\n", CMD, v);
                return CLI_EXIT_BAD_INPUT;
            }
        } else {
            fprintf(stderr, "ltx2 %s: unknown option '%s' (see ltx2 generate --help)\n", CMD, a);
            return CLI_EXIT_BAD_INPUT;
        }
#undef VALUE
#undef NUM
#undef INT
    }

    /* ---- model and prompts ---- */
    char ckpt_buf[PATH_CAP], pos_buf[PATH_CAP], neg_buf[PATH_CAP], gemma_buf[PATH_CAP];
    if (!cli_generate_text_flags_valid(&p, pos, neg)) return CLI_EXIT_BAD_INPUT;
    const bool embedded = ckpt == NULL, negative_given = neg || p.negative_prompt;
    if (embedded) {
        if (!cli_generate_find_embedded(TINY_CKPT, ckpt_buf, sizeof ckpt_buf)) {
            fprintf(stderr, "ltx2 %s: no --checkpoint given and the embedded tiny model (%s) was not found next to "
                    "the executable or in the source tree\n", CMD, TINY_CKPT);
            return CLI_EXIT_BAD_INPUT;
        }
        ckpt = ckpt_buf;
        ckpts[n_ckpts++] = ckpt;
        if (p.prompt && !p.text_encoder) {
            if (!cli_generate_find_embedded(TINY_GEMMA_CONFIG, gemma_buf, sizeof gemma_buf)) {
                fprintf(stderr, "ltx2 %s: the embedded tiny text encoder (%s) was not found\n", CMD, TINY_GEMMA_CONFIG);
                return CLI_EXIT_BAD_INPUT;
            }
            *strrchr(gemma_buf, '/') = '\0';
            p.text_encoder = gemma_buf;
        }
        if (!pos && !p.prompt && !p.context) {
            if (!cli_generate_find_embedded(TINY_POS, pos_buf, sizeof pos_buf)) {
                fprintf(stderr, "ltx2 %s: embedded prompt embeddings %s not found\n", CMD, TINY_POS);
                return CLI_EXIT_BAD_INPUT;
            }
            pos = pos_buf;
            if (!neg && cli_generate_find_embedded(TINY_NEG, neg_buf, sizeof neg_buf)) neg = neg_buf;
        }
    }
    if (!pos && !p.prompt && !p.context) {
        fprintf(stderr, "ltx2 %s: --prompt (with --text-encoder), --prompt-embeds or --context is required with "
                "--checkpoint\n", CMD);
        return CLI_EXIT_BAD_INPUT;
    }
    if (p.context && !ltx2_path_is_dir(p.context) && !cli_generate_input_file("--context", p.context)) return CLI_EXIT_BAD_INPUT;
    if (p.sigmas && !ltx2_path_is_dir(p.sigmas) && !cli_generate_input_file("--sigmas", p.sigmas)) return CLI_EXIT_BAD_INPUT;
    if (dump_call >= 0 && !p.dump_dir) {
        fprintf(stderr, "ltx2 %s: --dump-call needs --dump DIR\n", CMD);
        return CLI_EXIT_BAD_INPUT;
    }
    if (dump_call >= 0) p.dump_call = (int)dump_call;
    for (int k = 0; k < n_ckpts; k++)
        if (!(n_ckpts == 1 && ltx2_path_is_dir(ckpts[k])) && !cli_generate_input_file("--checkpoint-path", ckpts[k]))
            return CLI_EXIT_BAD_INPUT;
    if (md_weights && !cli_generate_md_weights(ctx, md_weights, ckpts, &n_ckpts, CLI_MAX_CHECKPOINT_FILES))
        return CLI_EXIT_BAD_INPUT;
    if (pos && !cli_generate_input_file("--prompt-embeds", pos)) return CLI_EXIT_BAD_INPUT;
    { /* the checkpoint's components and configs, from the headers: refused here, before any work */
        ltx2_ckpt_source *src = NULL;
        if (ltx2_ckpt_source_open(ctx, ckpts, n_ckpts, &src) != LTX2_OK) {
            fprintf(stderr, "ltx2 %s: error: --checkpoint-path: %s\n", CMD, ltx2_last_error(ctx));
            return CLI_EXIT_BAD_INPUT;
        }
        ltx2_ckpt_source_close(src);
    }
    if (p.prompt && !p.text_encoder) {
        fprintf(stderr, "ltx2 %s: --prompt with --checkpoint needs --text-encoder DIR (a Gemma-3 checkpoint "
                "directory: config.json, model*.safetensors, tokenizer.model)\n", CMD);
        return CLI_EXIT_BAD_INPUT;
    }
    if (p.prompt && !cli_generate_text_encoder_usable(p.text_encoder)) return CLI_EXIT_BAD_INPUT;
    if (enhance_flag && !p.enhance_prompt) {
        fprintf(stderr, "ltx2 %s: %s changes --enhance-prompt, which is not given\n", CMD, enhance_flag);
        return CLI_EXIT_BAD_INPUT;
    }
    if (p.enhance_prompt && !p.prompt) {
        fprintf(stderr, "ltx2 %s: --enhance-prompt rewrites a text --prompt (not prompt embeddings): give one\n", CMD);
        return CLI_EXIT_BAD_INPUT;
    }
    if (p.enhance_system_prompt && !cli_generate_input_file("--enhance-system-prompt", p.enhance_system_prompt))
        return CLI_EXIT_BAD_INPUT;
    if (p.enhance_prompt && !p.enhance_system_prompt) {
        /* with an image, ltx-pipelines enhances image-to-video, with that system prompt */
        const char *sys_name = n_images ? LTX2_ENHANCE_I2V_SYSTEM_PROMPT_FILE : LTX2_ENHANCE_SYSTEM_PROMPT_FILE;
        char sys_path[PATH_CAP];
        snprintf(sys_path, sizeof sys_path, "%s/%s", p.text_encoder, sys_name);
        if (!ltx2_path_is_file(sys_path)) {
            fprintf(stderr, "ltx2 %s: --enhance-prompt needs Lightricks' Gemma-3 %s system prompt, which is not part "
                    "of ltx2c: pass --enhance-system-prompt FILE (ltx-core ships it as "
                    "ltx_core/text_encoders/gemma/encoders/prompts/%s) or put it at %s\n", CMD,
                    n_images ? "image-to-video" : "text-to-video", sys_name, sys_path);
            return CLI_EXIT_BAD_INPUT;
        }
    }
    if (enhance_seed >= 0) p.enhance_seed = (uint64_t)enhance_seed;
    if (enhance_tokens > 0) p.enhance_max_tokens = (int)enhance_tokens;
    char cache_buf[PATH_CAP];
    if (no_text_cache) p.text_cache = NULL;
    else if (p.prompt && !p.text_cache && cli_generate_default_text_cache(cache_buf, sizeof cache_buf)) p.text_cache = cache_buf;
    if (p.save_prompt_embeds && (!ltx2_str_ends_with(p.save_prompt_embeds, ".safetensors") ||
                                 !cli_generate_parent_writable("--save-prompt-embeds", p.save_prompt_embeds))) {
        if (!ltx2_str_ends_with(p.save_prompt_embeds, ".safetensors"))
            fprintf(stderr, "ltx2 %s: --save-prompt-embeds must end in .safetensors, got %s\n", CMD,
                    p.save_prompt_embeds);
        return CLI_EXIT_BAD_INPUT;
    }
    if (neg && !cli_generate_input_file("--negative-prompt-embeds", neg)) return CLI_EXIT_BAD_INPUT;
    if (p.noise && !ltx2_path_is_dir(p.noise) && !cli_generate_input_file("--noise", p.noise)) return CLI_EXIT_BAD_INPUT;

    /* ---- pipeline, then numbers ---- */
    const bool guidance_flags = steps >= 0 || !isnan(cfg) || !isnan(acfg) || !isnan(stg) || !isnan(rescale) ||
                                 !isnan(modality) || !isnan(vstg) || !isnan(astg) || !isnan(vres) || !isnan(ares) ||
                                 !isnan(vmod) || !isnan(amod) || stg_block >= 0 || vblock >= 0 || ablock >= 0 ||
                                 negative_given;
    if (p.spatial_upsampler && !cli_generate_input_file("--spatial-upsampler-path", p.spatial_upsampler)) return CLI_EXIT_BAD_INPUT;
    if (!p.audio && (p.audio_start_time != 0 || p.audio_max_duration != 0)) {
        fprintf(stderr, "ltx2 %s: --audio-start-time and --audio-max-duration need --audio-path FILE\n", CMD);
        return CLI_EXIT_BAD_INPUT;
    }
    /* the checkpoint paths first: the pipeline check looks for a diffusers directory's upsampler */
    p.checkpoint = n_ckpts == 1 ? ckpts[0] : NULL;
    p.checkpoint_files = n_ckpts > 1 ? ckpts : NULL;
    p.n_checkpoint_files = n_ckpts > 1 ? n_ckpts : 0;
    const char *pipeline_why = NULL;
    if (!cli_generate_pick_pipeline(pipeline, distilled_ckpt, cli_generate_named_checkpoint(ckpts, n_ckpts),
                                    guidance_flags, p.distilled_lora.path != NULL,
                                    &p, &pipeline_why))
        return CLI_EXIT_BAD_INPUT;
    p.loras = loras;
    p.n_loras = n_loras;
    p.images = images;
    p.n_images = n_images;
    const bool distilled = p.pipeline == LTX2_PIPELINE_DISTILLED, two_stages = p.pipeline != LTX2_PIPELINE_ONE_STAGE;
    if (two_stages) { /* ltx-pipelines' two-stage parsers: the stage-2 size */
        p.height = TWO_STAGE_HEIGHT;
        p.width = TWO_STAGE_WIDTH;
    }
    if (distilled) neg = NULL; /* no negative prompt */
    if (embedded) {
        p.height = TINY_HEIGHT;
        p.width = TINY_WIDTH;
        p.frames = TINY_FRAMES;
        p.steps = distilled || p.sigmas ? 0 : TINY_STEPS; /* --sigmas sets the steps */
    }
    if (height >= 0) p.height = (int)height;
    if (width >= 0) p.width = (int)width;
    if (frames >= 0) p.frames = (int)frames;
    if (steps >= 0) p.steps = (int)steps;
    if (seed == GEN_RANDOM_SEED) {
        if (!random_seed(&p.seed)) return CLI_EXIT_BAD_INPUT;
    } else if (seed >= 0) {
        p.seed = (uint64_t)seed;
    }
    if (p.height % VIDEO_FACTOR_SPACE || p.width % VIDEO_FACTOR_SPACE || p.height > INT_MAX / 2 ||
        p.width > INT_MAX / 2) {
        fprintf(stderr, "ltx2 %s: --height and --width must be multiples of %d, got %d x %d\n", CMD, VIDEO_FACTOR_SPACE,
                p.height, p.width);
        return CLI_EXIT_BAD_INPUT;
    }
    if ((p.frames - 1) % VIDEO_FACTOR_TIME) {
        fprintf(stderr, "ltx2 %s: --frames must be 8k+1 (1, 9, 17, ..., 121), got %d\n", CMD, p.frames);
        return CLI_EXIT_BAD_INPUT;
    }
    ltx2_two_stage_clip clip = {0}; /* stage 1, from the latent upsampler's file */
    if (two_stages && !cli_generate_two_stage_clip(ctx, &p, &clip)) return CLI_EXIT_BAD_INPUT;
    if (steps >= 0 && steps < 2) {
        fprintf(stderr, "ltx2 %s: --steps must be >= 2 (the stretched sigma schedule needs two), got %lld\n", CMD, steps);
        return CLI_EXIT_BAD_INPUT;
    }
    if (!isnan(fps)) {
        if (!(fps > 0.0)) {
            fprintf(stderr, "ltx2 %s: --fps must be > 0, got %g\n", CMD, fps);
            return CLI_EXIT_BAD_INPUT;
        }
        p.fps = fps;
    }
    if (!isnan(cfg)) p.video_cfg = cfg;
    if (!isnan(acfg)) p.audio_cfg = acfg;
    if (!isnan(stg)) p.video_stg = p.audio_stg = stg;
    if (!isnan(rescale)) p.video_rescale = p.audio_rescale = rescale;
    if (!isnan(modality)) p.video_modality = p.audio_modality = modality;
    if (!isnan(vstg)) p.video_stg = vstg;
    if (!isnan(astg)) p.audio_stg = astg;
    if (!isnan(vres)) p.video_rescale = vres;
    if (!isnan(ares)) p.audio_rescale = ares;
    if (!isnan(vmod)) p.video_modality = vmod;
    if (!isnan(amod)) p.audio_modality = amod;
    if (!stg_blocks_merge(vblock, ablock, &stg_block)) return CLI_EXIT_BAD_INPUT;
    if (!distilled && !neg && !p.prompt && !p.context && (p.video_cfg != 1.0 || p.audio_cfg != 1.0)) {
        fprintf(stderr, "ltx2 %s: CFG (--guidance-scale %g, --audio-guidance-scale %g) needs --negative-prompt-embeds; "
                "give it or set both scales to 1\n", CMD, p.video_cfg, p.audio_cfg);
        return CLI_EXIT_BAD_INPUT;
    }
    p.stg_block = (int)stg_block;
    p.vae_tile_px = (int)tile;
    if (tile && (tile % VIDEO_FACTOR_SPACE || tile < 2 * VIDEO_FACTOR_SPACE)) {
        fprintf(stderr, "ltx2 %s: --vae-tile must be a multiple of %d and >= %d, got %lld\n", CMD, VIDEO_FACTOR_SPACE,
                2 * VIDEO_FACTOR_SPACE, tile);
        return CLI_EXIT_BAD_INPUT;
    }
    p.semantics = (ltx2_generate_semantics)sem;
    p.prompt_embeds = pos;
    p.negative_prompt_embeds = neg;

    /* ---- outputs ---- */
    if (!output && !png_dir && !wav) {
        if (!ltx2_mp4_available()) {
            fprintf(stderr, "ltx2 %s: this build has no FFmpeg, so no default MP4: give --png-dir and/or --wav\n", CMD);
            return CLI_EXIT_BAD_INPUT;
        }
        output = "ltx2.mp4";
    }
    if (output) {
        if (!ltx2_str_ends_with(output, ".mp4")) {
            fprintf(stderr, "ltx2 %s: --output must end in .mp4, got %s\n", CMD, output);
            return CLI_EXIT_BAD_INPUT;
        }
        if (!ltx2_mp4_available()) {
            fprintf(stderr, "ltx2 %s: --output needs FFmpeg, which this build lacks (apt-get install libavformat-dev "
                    "libavcodec-dev libswscale-dev libswresample-dev, then re-run cmake); use --png-dir/--wav\n", CMD);
            return CLI_EXIT_BAD_INPUT;
        }
        if (!cli_generate_parent_writable("--output", output)) return CLI_EXIT_BAD_INPUT;
    }
    if (wav && (!ltx2_str_ends_with(wav, ".wav") || !cli_generate_parent_writable("--wav", wav))) {
        if (!ltx2_str_ends_with(wav, ".wav")) fprintf(stderr, "ltx2 %s: --wav must end in .wav, got %s\n", CMD, wav);
        return CLI_EXIT_BAD_INPUT;
    }
    if (png_dir) {
        if (!ltx2_png_available()) {
            fprintf(stderr, "ltx2 %s: --png-dir needs libpng, which this build lacks (apt-get install libpng-dev)\n", CMD);
            return CLI_EXIT_BAD_INPUT;
        }
        if (!cli_generate_dir_usable("--png-dir", png_dir)) return CLI_EXIT_BAD_INPUT;
        const long entries = cli_dir_entries(png_dir);
        if (entries > 0 && !overwrite) {
            fprintf(stderr, "ltx2 %s: --png-dir %s is not empty (%ld entries): this run's frames would mix with what "
                    "is there; give --overwrite to replace its frame_*.png, or another directory\n",
                    CMD, png_dir, entries);
            return CLI_EXIT_BAD_INPUT;
        }
    }
    if (!cli_generate_outputs_distinct(output, wav, png_dir, p.dump_dir, p.save_prompt_embeds)) return CLI_EXIT_BAD_INPUT;
    if (p.dump_dir && !cli_generate_dir_usable("--dump", p.dump_dir)) return CLI_EXIT_BAD_INPUT;
    if (threads > 0) omp_set_num_threads((int)threads);
    if (!cli_launch_prepare(ctx, CMD, &launch)) return CLI_EXIT_BAD_INPUT;

    /* ---- device: refused here, before any work, when it cannot be used ---- */
    p.device = device; /* ranks open theirs from it (one rank runs on launch.be) */
    char dev_desc[512];
    if (!cli_launch_device(ctx, CMD, &launch, device, dev_desc, sizeof dev_desc)) return CLI_EXIT_BAD_INPUT;

    /* ---- run ---- */
    printf("device: %s\n", dev_desc);
    printf("model: %s%s", ckpt, embedded ? " (embedded tiny test model: random weights)" : "");
    for (int k = 1; k < n_ckpts; k++) printf(" + %s", ckpts[k]);
    printf("\n");
    static const char *const pipeline_desc[LTX2_PIPELINE_COUNT] = {
        "one-stage (%s)\n",
        "distilled (%s): stage 1 on 8 fixed sigmas, the latent upsampler, stage 2 on 3; no guidance\n",
        "two-stage (%s): stage 1 guided; the latent upsampler; stage 2 with the distilled LoRA on 3 sigmas, no "
        "guidance\n"};
    printf("pipeline: ");
    printf(pipeline_desc[p.pipeline], pipeline_why);
    if (two_stages)
        printf("latent upsampler: %s: stage 1 at %lldx%lldx%lld @ %g fps (%s)\n", clip.kind, (long long)clip.width,
               (long long)clip.height, (long long)clip.frames, clip.fps, clip.what);
    for (int i = 0; i < p.n_loras; i++) printf("lora: %s (strength %g)\n", p.loras[i].path, p.loras[i].strength);
    for (int i = 0; i < p.n_images; i++)
        printf("image: %s at frame %d, strength %g, CRF %d\n", p.images[i].path, p.images[i].frame, p.images[i].strength,
               p.images[i].crf);
    if (p.distilled_lora.path)
        printf("distilled lora (stage 2): %s (strength %g)\n", p.distilled_lora.path, p.distilled_lora.strength);
    if (p.audio) {
        printf("audio: %s from %g s for ", p.audio, p.audio_start_time);
        if (p.audio_max_duration > 0) printf("at most %g s", p.audio_max_duration);
        else printf("the clip's %g s", (double)p.frames / p.fps);
        printf(": held in every stage (a2vid), no audio guidance; the output audio is the file's\n");
    }
    if (p.prompt)
        printf("prompt: \"%s\" (text encoder %s)%s%s%s\n", p.prompt, p.text_encoder,
               p.negative_prompt ? ", negative: \"" : "", p.negative_prompt ? p.negative_prompt : "",
               p.negative_prompt ? "\"" : "");
    else
        printf("prompt: %s%s%s\n", pos, neg ? ", negative: " : "", neg ? neg : "");
    if (p.enhance_prompt) {
        if (p.enhance_greedy) printf("enhance prompt: greedy, at most %d tokens\n", p.enhance_max_tokens);
        else printf("enhance prompt: sampled, seed %llu, at most %d tokens\n", (unsigned long long)p.enhance_seed,
                    p.enhance_max_tokens);
    }
    printf("seed: %llu%s, %dx%d, %d frames @ %g fps, semantics %s%s\n", (unsigned long long)p.seed,
           p.noise ? " (noise from file)" : "", p.width, p.height, p.frames, p.fps, ltx2_sem_name(sem),
           p.precision == LTX2_GENERATE_PRECISION_TPU ? ", precision tpu (MaxDiffusion's bf16 DiT)" : "");
    fflush(stdout);
    const bool dump_created = p.dump_dir && !ltx2_path_is_dir(p.dump_dir);
    if (dump_created && mkdir(p.dump_dir, 0777) != 0) {
        fprintf(stderr, "ltx2 %s: cannot create --dump %s: %s\n", CMD, p.dump_dir, strerror(errno));
        cli_launch_free(&launch);
        return CLI_EXIT_BAD_INPUT;
    }
    cli_progress cp;
    memset(&cp, 0, sizeof cp);
    p.progress = on_step;
    p.progress_user = &cp;
    p.cancel = stop_requested;
    catch_stop_signals();
    p.decode_video = output || png_dir;
    p.decode_audio = output || wav;
    ltx2_generate_result r;
    ltx2_status st = cli_launch_run(ctx, &launch, &p, argc, argv, &r);
    cli_launch_free(&launch);
    if (cp.started) ltx2_progress_end(&cp.bar);
    if (st != LTX2_OK) {
        /* a run refused before it dumped anything leaves no directory behind (rmdir takes only an
         * empty one: what a failing run dumped stays, to look at) */
        if (dump_created) rmdir(p.dump_dir);
        if (g_stop_signal) return stopped_exit();
        cli_report_error(CMD, ctx);
        return cli_exit_for(st);
    }
    if (r.enhanced_prompt) printf("enhanced prompt: \"%s\"\n", r.enhanced_prompt);
    if (!launch.writer) { /* another rank (rank 0) writes the outputs */
        ltx2_generate_result_free(&r);
        return CLI_EXIT_OK;
    }

    /* ---- write ---- */
    const double t_write = ltx2_timer_now();
    written w;
    memset(&w, 0, sizeof w);
    char seed_s[32], params_s[512];
    snprintf(seed_s, sizeof seed_s, "%llu", (unsigned long long)r.seed);
    snprintf(params_s, sizeof params_s,
             "ltx2c %s; model LTX-%s %.256s; pipeline %s; seed %llu; steps %d; %dx%dx%d @ %g fps; cfg %g/%g stg %g "
             "rescale %g modality %g; semantics %s%s", ltx2_version(), r.model_version, ckpt,
             distilled ? "distilled (no guidance)" : two_stages ? "two-stage (guidance in stage 1)" : "one-stage",
             (unsigned long long)r.seed, r.steps, p.width,
             p.height, p.frames, p.fps, distilled ? 1.0 : p.video_cfg, distilled ? 1.0 : p.audio_cfg,
             distilled ? 0.0 : p.video_stg, distilled ? 0.0 : p.video_rescale, distilled ? 1.0 : p.video_modality,
             ltx2_sem_name(sem), p.precision == LTX2_GENERATE_PRECISION_TPU ? "; precision tpu" : "");
    int rc = CLI_EXIT_OK;
    if (output) {
        ltx2_mp4_set_quiet(true);
        if (ltx2_result_write_mp4(ctx, &r, output, params_s) != LTX2_OK) {
            cli_report_error(CMD, ctx);
            rc = CLI_EXIT_RUNTIME;
            goto out;
        }
        w.files[w.n_files++] = strdup(output);
        if (g_stop_signal) goto out;
        printf("wrote %s (%lld frames %lldx%lld, %lld Hz, %lld channel(s))\n", output, (long long)r.frames,
               (long long)r.width, (long long)r.height, (long long)r.audio_rate, (long long)r.audio_channels);
    }
    if (wav) {
        if (ltx2_result_write_wav(ctx, &r, wav) != LTX2_OK) {
            cli_report_error(CMD, ctx);
            rc = CLI_EXIT_RUNTIME;
            goto out;
        }
        w.files[w.n_files++] = strdup(wav);
        if (g_stop_signal) goto out;
        printf("wrote %s (%lld samples x %lld channels, %lld Hz)\n", wav, (long long)r.audio_samples,
               (long long)r.audio_channels, (long long)r.audio_rate);
    }
    if (png_dir) {
        w.png_dir = png_dir;
        /* --overwrite: the older run's frames go, so none of a longer run stays behind */
        if (overwrite) cli_remove_frames(png_dir);
        if (!ltx2_path_is_dir(png_dir)) {
            if (mkdir(png_dir, 0777) != 0) {
                fprintf(stderr, "ltx2 %s: cannot create %s: %s\n", CMD, png_dir, strerror(errno));
                rc = CLI_EXIT_RUNTIME;
                goto out;
            }
            w.png_dir_created = true;
        }
        for (int64_t f = 0; f < r.frames; f++) {
            char path[PATH_CAP];
            snprintf(path, sizeof path, "%s/frame_%05lld.png", png_dir, (long long)f);
            w.n_png = f + 1;
            if (g_stop_signal) goto out;
            if (ltx2_result_write_png(ctx, &r, f, path, params_s) != LTX2_OK) {
                cli_report_error(CMD, ctx);
                rc = CLI_EXIT_RUNTIME;
                goto out;
            }
        }
        printf("wrote %lld PNG frames to %s\n", (long long)r.frames, png_dir);
    }
    {
        const double tw = ltx2_timer_now() - t_write;
        const ltx2_generate_timings *t = &r.timings;
        char ups_s[48] = "";
        if (two_stages) snprintf(ups_s, sizeof ups_s, " | upsample %.2fs", t->upsample);
        printf("timings: load %.2fs | text %.2fs | noise %.2fs | denoise %.2fs (%d steps, %.2f it/s)%s | "
               "video decode %.2fs | audio decode %.2fs | write %.2fs | total %.2fs\n",
               t->load, t->text, t->noise, t->denoise, r.steps, t->denoise > 0 ? r.steps / t->denoise : 0.0, ups_s,
               t->video_decode, t->audio_decode, tw, t->total + tw);
        printf("seed: %s\n", seed_s);
    }
out:
    if (g_stop_signal && rc == CLI_EXIT_OK) rc = stopped_exit();
    if (rc != CLI_EXIT_OK) undo_written(&w);
    else forget_written(&w);
    ltx2_generate_result_free(&r);
    return rc;
}
