/* `ltx2 decode LATENT.npy --checkpoint CKPT --png-dir DIR`: decode a video latent with the
 * checkpoint's video VAE on the CPU (optionally tiled and tile-batched) and write one 8-bit RGB
 * PNG per frame, carrying the decode parameters as tEXt chunks. Every flag, the checkpoint, the
 * latent and the tiling are validated before any decoding. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/cli.h"
#include "core/context.h"
#include "core/dtype.h"
#include "core/finite.h"
#include "io/file.h"
#include "io/npy.h"
#include "io/png.h"
#include "io/safetensors.h"
#include "model/vae_config.h"
#include "model/video_vae.h"
#include "pipeline/tiling.h"

/* Frame file names: DIR/frame_00000.png ... */
#define DECODE_NAME_CAP 4096
#define DECODE_PARAMS_CAP 512

typedef struct decode_opts {
    const char *latent, *checkpoint, *png_dir;
    bool overwrite;
    ltx2_vae_tiling tiling;
    ltx2_vae_decode_opts vae; /* timestep / noise of conditioned or noise-injecting decoders */
} decode_opts;

static void decode_usage(FILE *out) {
    fprintf(out,
            "usage: ltx2 decode LATENT.npy --checkpoint CKPT --png-dir DIR [options]\n"
            "\n"
            "Decodes a normalized video latent (.npy, float32/float16/bfloat16, [C, F', H', W'] or\n"
            "[1, C, F', H', W'] as ltx-core lays it out) with the video VAE of CKPT (a .safetensors\n"
            "file, index or directory holding vae.* or unprefixed VAE tensors) on the CPU, and writes\n"
            "DIR/frame_00000.png ... (8-bit RGB, trunc(clamp((x+1)/2)*255) as ltx-core). DIR is created\n"
            "if missing. Each file is written to a temporary name and renamed into place.\n"
            "\n"
            "  --checkpoint CKPT        weights and config (required)\n"
            "  --png-dir DIR            output directory (required; empty or new)\n"
            "  --overwrite              allow a non-empty --png-dir: its frame_*.png are replaced\n"
            "  --tile-size PX           spatial tile size in pixels (multiple of 32; 0 = no spatial tiling)\n"
            "  --tile-overlap PX        spatial overlap in pixels (multiple of 32, < tile size; default 0)\n"
            "  --tile-frames N          temporal tile in frames (multiple of 8; 0 = no temporal tiling)\n"
            "  --tile-frames-overlap N  temporal overlap in frames (multiple of 8, < tile frames; default 0)\n"
            "  --tile-batch N           same-shape tiles per VAE call (>= 1, default 1; output identical)\n"
            "  --decode-timestep T      decode timestep of a timestep-conditioned VAE (default %.3g)\n"
            "  --decode-noise-scale S   latent noise blend in [0, 1] for such a VAE (default %.3g)\n"
            "  --seed N                 Philox seed of the decode noise (default 0)\n"
            "  -h, --help               this text\n"
            "\n"
            "Tiling follows ltx-core 1.0.0 tiled_decode (e.g. --tile-size 512 --tile-overlap 64\n"
            "--tile-frames 64 --tile-frames-overlap 24 is its TilingConfig.default()).\n"
            "The decode timestep, noise scale and seed only matter for VAEs with timestep conditioning\n"
            "or noise injection (the LTX-2.0 VAE has neither: they are accepted and unused there).\n"
            "Exit status: 0 success, 2 bad input (checked before any work: files, flags, a malformed or\n"
            "mismatched latent or checkpoint), 3 a runtime failure (disk, memory).\n",
            LTX2_VAE_DECODE_TIMESTEP_DEFAULT, LTX2_VAE_DECODE_NOISE_SCALE_DEFAULT);
}

/* Largest tile, overlap, batch or seed value accepted (far past any real clip: a typo, not a size). */
#define DECODE_MAX_INT 1000000000LL

static bool parse_int(const char *flag, const char *text, int64_t lo, int64_t *out) {
    double v;
    if (!cli_parse_double("decode", flag, text, &v)) return false;
    if (v != (double)(int64_t)v || v < (double)lo || v > (double)DECODE_MAX_INT) {
        fprintf(stderr, "ltx2 decode: %s expects an integer in [%lld, %lld], got '%s'\n", flag, (long long)lo,
                DECODE_MAX_INT, text);
        return false;
    }
    *out = (int64_t)v;
    return true;
}

static int parse_args(int argc, char **argv, decode_opts *o) {
    memset(o, 0, sizeof(*o));
    o->tiling.tile_batch = 1;
    o->vae = ltx2_vae_decode_opts_default();
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i], *v = NULL;
        int64_t n = 0;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            decode_usage(stdout);
            return -1;
        } else if (!strcmp(a, "--checkpoint")) {
            if (!(o->checkpoint = cli_flag_value("decode", argc, argv, &i))) return CLI_EXIT_BAD_INPUT;
        } else if (!strcmp(a, "--png-dir")) {
            if (!(o->png_dir = cli_flag_value("decode", argc, argv, &i))) return CLI_EXIT_BAD_INPUT;
        } else if (!strcmp(a, "--overwrite")) {
            o->overwrite = true;
        } else if (!strcmp(a, "--tile-size") || !strcmp(a, "--tile-overlap") || !strcmp(a, "--tile-frames") ||
                   !strcmp(a, "--tile-frames-overlap") || !strcmp(a, "--tile-batch")) {
            const bool batch = !strcmp(a, "--tile-batch");
            if (!(v = cli_flag_value("decode", argc, argv, &i)) || !parse_int(a, v, batch ? 1 : 0, &n))
                return CLI_EXIT_BAD_INPUT;
            if (batch) o->tiling.tile_batch = (int)n;
            else if (!strcmp(a, "--tile-size")) o->tiling.tile_px = n;
            else if (!strcmp(a, "--tile-overlap")) o->tiling.overlap_px = n;
            else if (!strcmp(a, "--tile-frames")) o->tiling.tile_frames = n;
            else o->tiling.overlap_frames = n;
        } else if (!strcmp(a, "--decode-timestep") || !strcmp(a, "--decode-noise-scale")) {
            double d;
            if (!(v = cli_flag_value("decode", argc, argv, &i)) || !cli_parse_double("decode", a, v, &d))
                return CLI_EXIT_BAD_INPUT;
            const bool scale = !strcmp(a, "--decode-noise-scale");
            if (d < 0.0 || (scale && d > 1.0)) {
                fprintf(stderr, "ltx2 decode: %s must be %s, got '%s'\n", a, scale ? "in [0, 1]" : ">= 0", v);
                return CLI_EXIT_BAD_INPUT;
            }
            if (scale) o->vae.noise_scale = d;
            else o->vae.timestep = d;
        } else if (!strcmp(a, "--seed")) {
            if (!(v = cli_flag_value("decode", argc, argv, &i)) || !parse_int(a, v, 0, &n)) return CLI_EXIT_BAD_INPUT;
            o->vae.seed = (uint64_t)n;
        } else if (a[0] == '-' && a[1] != '\0') {
            fprintf(stderr, "ltx2 decode: unknown option '%s' (see ltx2 decode --help)\n", a);
            return CLI_EXIT_BAD_INPUT;
        } else if (!o->latent) {
            o->latent = a;
        } else {
            fprintf(stderr, "ltx2 decode: unexpected argument '%s'\n", a);
            return CLI_EXIT_BAD_INPUT;
        }
    }
    if (!o->latent || !o->checkpoint || !o->png_dir) {
        fprintf(stderr, "ltx2 decode: LATENT.npy, --checkpoint and --png-dir are required (see ltx2 decode --help)\n");
        return CLI_EXIT_BAD_INPUT;
    }
    /* the inputs exist and the output can be a directory, before any work (exit 2, not 3) */
    const char *inputs[2] = {o->latent, o->checkpoint}, *flags[2] = {"LATENT", "--checkpoint"};
    for (int k = 0; k < 2; k++)
        if (!ltx2_path_is_file(inputs[k]) && !ltx2_path_is_dir(inputs[k])) {
            fprintf(stderr, "ltx2 decode: %s %s: no such file\n", flags[k], inputs[k]);
            return CLI_EXIT_BAD_INPUT;
        }
    if (ltx2_path_is_file(o->png_dir)) {
        fprintf(stderr, "ltx2 decode: --png-dir %s exists and is not a directory\n", o->png_dir);
        return CLI_EXIT_BAD_INPUT;
    }
    const long entries = cli_dir_entries(o->png_dir);
    if (entries > 0 && !o->overwrite) {
        fprintf(stderr, "ltx2 decode: --png-dir %s is not empty (%ld entries): these frames would mix with what is "
                "there; give --overwrite to replace its frame_*.png, or another directory\n", o->png_dir, entries);
        return CLI_EXIT_BAD_INPUT;
    }
    return CLI_EXIT_OK;
}

/* NCDHW (or CDHW) npy of any float dtype -> f32 NDHWC. */
static ltx2_status load_latent(ltx2_context *ctx, const char *path, float **out, int64_t shape[5]) {
    ltx2_array arr;
    LTX2_TRY(ltx2_npy_read(ctx, path, &arr));
    const ltx2_tensor *t = &arr.t;
    ltx2_status st = LTX2_OK;
    const int off = t->ndim == 5 ? 1 : 0;
    if ((t->ndim != 4 && t->ndim != 5) || !ltx2_dtype_is_float(t->dtype) || (off && t->shape[0] != 1))
        st = LTX2_ERROR(ctx, LTX2_ERR_SHAPE, "%s: expected a float [C, F', H', W'] or [1, C, F', H', W'] latent", path);
    const int64_t C = t->shape[off], T = t->shape[off + 1], H = t->shape[off + 2], W = t->shape[off + 3];
    const int64_t n = C * T * H * W;
    float *src = st == LTX2_OK ? malloc((size_t)n * sizeof(float)) : NULL;
    float *dst = st == LTX2_OK ? malloc((size_t)n * sizeof(float)) : NULL;
    if (st == LTX2_OK && (!src || !dst)) st = LTX2_ERROR(ctx, LTX2_ERR_OOM, "%s: latent", path);
    if (st == LTX2_OK) st = ltx2_convert(ctx, src, LTX2_F32, t->data, t->dtype, (size_t)n);
    const int64_t lshape[4] = {C, T, H, W};
    if (st == LTX2_OK)
        st = ltx2_check_finite(ctx, LTX2_ERR_INVALID_ARG, src, 4, lshape, "%s: the latent [channel, frame, row, column]",
                               path);
    if (st == LTX2_OK) {
        for (int64_t c = 0; c < C; c++)
            for (int64_t i = 0; i < T * H * W; i++) dst[i * C + c] = src[c * T * H * W + i];
        shape[0] = 1, shape[1] = T, shape[2] = H, shape[3] = W, shape[4] = C;
        *out = dst;
        dst = NULL;
    }
    free(src);
    free(dst);
    ltx2_array_free(&arr);
    return st;
}

typedef struct png_sink {
    const decode_opts *o;
    char params[DECODE_PARAMS_CAP];
    int64_t written;
    int64_t height, width;
    uint8_t *rgb; /* 8-bit frames being assembled from blocks */
    int64_t rgb_frames;
} png_sink;

/* Blocks (ltx2_vae_block_fn, B = 1) are converted to 8-bit as they come, so only the 8-bit
 * frames of the current frame range are held; they are written once the range is complete. */
static ltx2_status write_block(ltx2_context *ctx, const ltx2_tensor *blk, const ltx2_vae_block_pos *pos, void *user) {
    png_sink *s = user;
    const int64_t n = blk->shape[1], rows = blk->shape[2], cols = blk->shape[3], H = s->height, W = s->width;
    const int64_t fs = H * W * 3, first = pos->first_frame;
    if (n > s->rgb_frames) {
        uint8_t *p = realloc(s->rgb, (size_t)(n * fs));
        if (!p) return LTX2_ERROR(ctx, LTX2_ERR_OOM, "decode: %lld 8-bit frames", (long long)n);
        s->rgb = p;
        s->rgb_frames = n;
    }
    for (int64_t f = 0; f < n; f++)
        for (int64_t y = 0; y < rows; y++)
            ltx2_png_frame_to_rgb8((const float *)blk->data + (f * rows + y) * cols * 3, cols * 3,
                                   s->rgb + f * fs + ((pos->first_row + y) * W + pos->first_col) * 3);
    if (!pos->range_done) return LTX2_OK;
    for (int64_t f = 0; f < n; f++) {
        char path[DECODE_NAME_CAP], idx[32];
        snprintf(path, sizeof(path), "%s/frame_%05lld.png", s->o->png_dir, (long long)(first + f));
        snprintf(idx, sizeof(idx), "%lld", (long long)(first + f));
        const ltx2_png_text text[] = {{"Software", "ltx2c"}, {"Parameters", s->params}, {"Frame", idx}};
        LTX2_TRY(ltx2_png_write_rgb8(ctx, path, s->rgb + f * fs, W, H, text, 3));
        s->written++;
    }
    return LTX2_OK;
}

int cli_decode(ltx2_context *ctx, int argc, char **argv) {
    decode_opts o;
    const int prc = parse_args(argc, argv, &o);
    if (prc < 0) return CLI_EXIT_OK;
    if (prc != CLI_EXIT_OK) return prc;
    o.tiling.decode_opts = &o.vae;
    if (!ltx2_png_available()) {
        fprintf(stderr, "ltx2 decode: this build has no libpng (apt-get install libpng-dev, then re-run cmake)\n");
        return CLI_EXIT_BAD_INPUT;
    }
    ltx2_st_set *set = NULL;
    ltx2_video_decoder *dec = NULL;
    float *lat = NULL;
    int64_t ls[5], vs[5];
    png_sink sink = {.o = &o};
    int rc = CLI_EXIT_OK;
    ltx2_vae_config cfg;
    ltx2_status st = ltx2_st_set_open(ctx, o.checkpoint, &set);
    if (st == LTX2_OK) st = ltx2_vae_config_from_file(ctx, set->files[0], &cfg);
    if (st == LTX2_OK) {
        const char *prefix = ltx2_st_set_find(set, "vae.per_channel_statistics.mean-of-means", NULL) ? "vae." : "";
        st = ltx2_video_decoder_load(ctx, set, prefix, &cfg, &dec);
    }
    if (st == LTX2_OK) st = load_latent(ctx, o.latent, &lat, ls);
    if (st == LTX2_OK) st = ltx2_video_decoder_out_shape(ctx, dec, ls, vs);
    ltx2_vae_tiling_stats stats = {0};
    if (st == LTX2_OK) st = ltx2_vae_tiled_decode_plan(ctx, dec, ls, &o.tiling, &stats);
    if (st == LTX2_OK) {
        struct stat sb;
        if (stat(o.png_dir, &sb) != 0) {
            if (mkdir(o.png_dir, 0777) != 0)
                st = LTX2_ERROR(ctx, LTX2_ERR_IO, "cannot create --png-dir %s: %s", o.png_dir, strerror(errno));
        } else if (!S_ISDIR(sb.st_mode)) {
            st = LTX2_ERROR(ctx, LTX2_ERR_IO, "--png-dir %s exists and is not a directory", o.png_dir);
        }
    }
    if (st == LTX2_OK) {
        snprintf(sink.params, sizeof(sink.params),
                 "latent=%s checkpoint=%s tile_px=%lld overlap_px=%lld tile_frames=%lld overlap_frames=%lld "
                 "tile_batch=%d",
                 o.latent, o.checkpoint, (long long)o.tiling.tile_px, (long long)o.tiling.overlap_px,
                 (long long)o.tiling.tile_frames, (long long)o.tiling.overlap_frames, o.tiling.tile_batch);
        if (dec->needs_noise) {
            const size_t used = strlen(sink.params);
            snprintf(sink.params + used, sizeof(sink.params) - used,
                     " decode_timestep=%g decode_noise_scale=%g seed=%llu", o.vae.timestep, o.vae.noise_scale,
                     (unsigned long long)o.vae.seed);
        }
        sink.height = vs[2];
        sink.width = vs[3];
    }
    if (st == LTX2_OK && o.overwrite) cli_remove_frames(o.png_dir);
    if (st == LTX2_OK) {
        ltx2_tensor lt = ltx2_tensor_make(lat, LTX2_F32, 5, ls);
        st = ltx2_vae_tiled_decode_blocks(ctx, dec, &lt, &o.tiling, write_block, &sink, &stats);
    }
    if (st == LTX2_OK) {
        printf("decoded %lld frames %lldx%lld (%lld tiles, %lld VAE calls; tiler buffers peaked at %.1f MiB, "
               "8-bit frames held %.1f MiB) to %s\n",
               (long long)sink.written, (long long)vs[3], (long long)vs[2], (long long)stats.n_tiles,
               (long long)stats.n_vae_calls, (double)stats.peak_bytes / (1 << 20),
               (double)(sink.rgb_frames * vs[2] * vs[3] * 3) / (1 << 20), o.png_dir);
        rc = CLI_EXIT_OK;
    } else {
        cli_report_error("decode", ctx);
        rc = cli_exit_for(st);
    }
    free(sink.rgb);
    free(lat);
    ltx2_video_decoder_free(dec);
    ltx2_st_set_close(set);
    return rc;
}
