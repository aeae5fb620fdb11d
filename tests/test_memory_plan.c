/* The device memory plan (src/pipeline/memory_plan.h), without a GPU:
 * - its decoder formulas against the planning backend running the real decoders (the tiny video
 *   decoders, timestep-conditioned and noise-injecting one included, and the tiny audio decoders):
 *   weights and decode peak byte for byte;
 * - the full-size configs (tests/data/config_full_<v>.json): the DiT and text weights it lays out
 *   against the reference's instantiated parameter counts (spec: 19B DiT 18 876 174 592, 22B
 *   18 988 838 144; text: 2 x 354 470 400 + 722 534 400, resp. 1 612 546 304 + 403 620 096 +
 *   1 156 061 184), at bf16 and at most one alignment pad per tensor;
 * - the cases: LTX-2 19B bf16 at 768x512x121 (CFG-batched) fits an 80 GB H100 (79 GiB
 *   free); LTX-2.3 22B at the same size is refused on a 24 GB card with what it needs, what is
 *   free and the options. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend_plan.h"
#include "core/context.h"
#include "core/rng.h"
#include "io/json.h"
#include "model/audio_vae.h"
#include "model/vocoder.h"
#include "model/upsampler.h"
#include "model/video_vae.h"
#include "model/audio_encoder.h"
#include "model/dit_weights.h"
#include "pipeline/memory_plan.h"
#include "pipeline/pipeline.h"
#include "att90_layout.h"
#include "ltx2_kernels.h"
#include "test_util.h"

#define GIB ((uint64_t)1 << 30)
/* Free memory of the two devices: an 80 GB H100 shows ~79 GiB free to a fresh process,
 * a 24 GB card ~23 GiB; these are the round figures below both. */
#define H100_FREE (79 * GIB)
#define CARD24_FREE (23 * GIB)
/* Every stored tensor is padded to LTX2_W_TENSOR_ALIGN (256) bytes at most once. */
#define W_ALIGN 256

static ltx2_context *g_ctx;

typedef struct full_cfg {
    ltx2_json_doc *doc;
    ltx2_dit_config dit;
    ltx2_connectors_config conn;
    ltx2_vae_config vae;
    ltx2_audio_vae_config audio;
    ltx2_vocoder_config vocoder;
} full_cfg;

static bool full_cfg_load(const char *v, full_cfg *c) {
    memset(c, 0, sizeof *c);
    char path[1024];
    snprintf(path, sizeof path, "%s/tests/data/config_full_%s.json", LTX2_SOURCE_DIR, v);
    FILE *f = fopen(path, "rb");
    CHECK(f != NULL, "open %s", path);
    if (!f) return false;
    char *text = malloc(1 << 16);
    const size_t n = text ? fread(text, 1, (1 << 16) - 1, f) : 0;
    fclose(f);
    bool ok = text && n > 0 && ltx2_json_parse(g_ctx, text, n, path, &c->doc) == LTX2_OK;
    free(text);
    const ltx2_json *root = ok ? ltx2_json_root(c->doc) : NULL, *tr = root ? ltx2_json_get(root, "transformer") : NULL;
    ok = ok && tr && ltx2_dit_config_parse(g_ctx, tr, path, &c->dit) == LTX2_OK &&
         ltx2_connectors_config_parse(g_ctx, tr, path, &c->conn) == LTX2_OK &&
         ltx2_vae_config_parse(g_ctx, root, path, &c->vae) == LTX2_OK &&
         ltx2_audio_vae_config_parse(g_ctx, root, path, &c->audio) == LTX2_OK &&
         ltx2_vocoder_config_parse(g_ctx, root, path, &c->vocoder) == LTX2_OK;
    CHECK(ok, "%s: %s", path, ltx2_last_error(g_ctx));
    return ok;
}

static ltx2_mem_request request(const full_cfg *c, uint64_t free_bytes) {
    return (ltx2_mem_request){.dit = &c->dit, .conn = &c->conn, .vae = &c->vae, .audio = &c->audio,
                              .vocoder = &c->vocoder, .frames = 121,
                              .height = 512, .width = 768, .fps = 24.0, .batch = 2,
                              .text_tokens = LTX2_PIPE_TEXT_TOKENS, .text_cache_entries = LTX2_PIPE_TEXT_CACHE_ENTRIES,
                              .free_bytes = free_bytes};
}

/* bytes against a parameter count at bf16, padding allowed up to one W_ALIGN per tensor */
static void check_weights(const char *what, uint64_t bytes, uint64_t params, uint64_t max_tensors) {
    const uint64_t want = 2 * params;
    CHECK(bytes >= want && bytes - want <= max_tensors * W_ALIGN,
          "%s: %llu bytes laid out, the reference has %llu parameters (%llu bytes at bf16)", what,
          (unsigned long long)bytes, (unsigned long long)params, (unsigned long long)want);
    printf("%s: %.3f GiB for %llu parameters\n", what, (double)bytes / GIB, (unsigned long long)params);
}

static void full_size(void) {
    full_cfg c19, c22;
    if (!full_cfg_load("2.0", &c19) || !full_cfg_load("2.3", &c22)) return;

    ltx2_mem_request r = request(&c19, H100_FREE);
    ltx2_mem_plan p;
    ltx2_status st = ltx2_mem_plan_make(g_ctx, &r, &p);
    CHECK(st == LTX2_OK, "19B plan: %s", ltx2_last_error(g_ctx));
    if (st == LTX2_OK) {
        ltx2_mem_plan_print(&p, stdout, "19B: ");
        check_weights("19B DiT", p.dit_weights, 18876174592ull, 2000);
        check_weights("19B text connectors", p.text_weights, 2 * 354470400ull + 722534400ull, 200);
        CHECK(p.video_tokens == 6144 && p.audio_tokens == 126, "19B tokens %lld + %lld, want 6144 + 126",
              (long long)p.video_tokens, (long long)p.audio_tokens);
        CHECK(p.stage[LTX2_MEM_DENOISE] > 0, "19B: the DiT stage measured nothing");
        CHECK(p.fits, "19B bf16 at 768x512x121 must fit 79 GiB: needs %.1f GiB", (double)p.need / GIB);
        CHECK(ltx2_mem_plan_check(g_ctx, &r, &p) == LTX2_OK, "19B: check refused: %s", ltx2_last_error(g_ctx));
    }

    r = request(&c22, CARD24_FREE);
    st = ltx2_mem_plan_make(g_ctx, &r, &p);
    CHECK(st == LTX2_OK, "22B plan: %s", ltx2_last_error(g_ctx));
    if (st == LTX2_OK) {
        ltx2_mem_plan_print(&p, stdout, "22B: ");
        check_weights("22B DiT", p.dit_weights, 18988838144ull, 2000);
        check_weights("22B text connectors", p.text_weights, 1612546304ull + 403620096ull + 1156061184ull, 400);
        CHECK(!p.fits, "22B must not fit 23 GiB");
        st = ltx2_mem_plan_check(g_ctx, &r, &p);
        const char *msg = ltx2_last_error(g_ctx);
        printf("22B on a 24 GB card: %s\n", msg);
        CHECK(st == LTX2_ERR_OOM && strstr(msg, "needs") && strstr(msg, "23.0 GiB free") && strstr(msg, "denoise") &&
                  strstr(msg, "fp8") && strstr(msg, "--nproc"),
              "22B refusal must give the need, the free memory, the stage and the options: %s", msg);
        ltx2_clear_error(g_ctx);
        /* the same at 80 GB fits */
        r.free_bytes = H100_FREE;
        CHECK(ltx2_mem_plan_make(g_ctx, &r, &p) == LTX2_OK && p.fits, "22B must fit 79 GiB: needs %.1f GiB",
              (double)p.need / GIB);
    }
    /* 19B at 1536x1024x121: the untiled decode is the peak; on a device with less free than that
     * but more than the need with a 512-pixel tile, the advice names a tile size */
    r = request(&c19, H100_FREE);
    r.height = 1024, r.width = 1536;
    ltx2_mem_plan tiled;
    ltx2_mem_request rt = r;
    rt.vae_tile_px = 512;
    st = ltx2_mem_plan_make(g_ctx, &r, &p);
    if (st == LTX2_OK) st = ltx2_mem_plan_make(g_ctx, &rt, &tiled);
    CHECK(st == LTX2_OK, "19B 1536x1024 plans: %s", ltx2_last_error(g_ctx));
    if (st == LTX2_OK) {
        ltx2_mem_plan_print(&p, stdout, "19B 1536x1024x121: ");
        ltx2_mem_plan_print(&tiled, stdout, "19B 1536x1024x121 --vae-tile 512: ");
        CHECK(p.peak_stage == LTX2_MEM_VIDEO_DECODE && tiled.need < p.need,
              "19B 1536x1024: want the untiled decode as the peak and a smaller tiled need (%s, %.2f vs %.2f GiB)",
              ltx2_mem_stage_name(p.peak_stage), (double)tiled.need / GIB, (double)p.need / GIB);
        r.free_bytes = tiled.need + (p.need - tiled.need) / 2;
        st = ltx2_mem_plan_make(g_ctx, &r, &p);
        if (st == LTX2_OK) st = ltx2_mem_plan_check(g_ctx, &r, &p);
        printf("  %s\n", ltx2_last_error(g_ctx));
        CHECK(st == LTX2_ERR_OOM && strstr(ltx2_last_error(g_ctx), "--vae-tile"), "no tile advice: %s",
              ltx2_last_error(g_ctx));
        ltx2_clear_error(g_ctx);
    }
    /* the distilled pipeline at its default 1536x1024x121: the x2 upsampler (Lightricks'
     * ltx-2-spatial-upscaler-x2: rational resampler at scale 2, 1024 wide, 4 blocks a stage) is placed
     * for its call between the stages; its stage is its weights and the forward on the half-size latent */
    const ltx2_upsampler_config ucfg = {128, 1024, 4, 3, true, false, true, 2.0};
    r = request(&c19, H100_FREE);
    r.height = 1024, r.width = 1536, r.vae_tile_px = 512, r.upsampler = &ucfg;
    st = ltx2_mem_plan_make(g_ctx, &r, &p);
    CHECK(st == LTX2_OK, "19B distilled plan: %s", ltx2_last_error(g_ctx));
    if (st == LTX2_OK) {
        ltx2_mem_plan_print(&p, stdout, "19B distilled 1536x1024x121: ");
        const uint64_t res = 2 * (27ull * 1024 * 1024 + 1024) + 4 * 1024;
        const uint64_t params = 27ull * 128 * 1024 + 1024 + 2 * 1024 + 8 * res + 9ull * 1024 * 4096 + 4096 +
                                27ull * 1024 * 128 + 128;
        check_weights("x2 upsampler", ltx2_mem_plan_upsampler_weights(&ucfg), params, 40);
        const uint64_t act = p.stage[LTX2_MEM_UPSAMPLE] - ltx2_mem_plan_upsampler_weights(&ucfg);
        /* the stage-1 latent is 16 x 16 x 24: the peak is a post-upsample res block's three tensors of
         * 1024 channels at the output grid, 16 x 32 x 48 */
        CHECK(act == 3ull * 16 * 32 * 48 * 1024 * 2, "upsample activations %llu bytes, want 3 x 16x32x48x1024 bf16",
              (unsigned long long)act);
    }
    /* image conditioning: the video encoder resident (its reference parameters, conv_out widened from
     * 129 to 136 outputs for the device conv) and one frame's encode at the full size */
    static const struct {
        const char *label;
        uint64_t params, widen;
    } encs[2] = {{"19B video encoder", 694098881ull, 7ull * 2048 * 27 * 2 + 7 * 2},
                 {"22B video encoder", 318936897ull, 7ull * 1024 * 27 * 2 + 7 * 2}};
    for (int k = 0; k < 2; k++) {
        r = request(k ? &c22 : &c19, H100_FREE);
        r.image_cond = true;
        ltx2_mem_plan base;
        ltx2_mem_request rb = r;
        rb.image_cond = false;
        st = ltx2_mem_plan_make(g_ctx, &r, &p);
        if (st == LTX2_OK) st = ltx2_mem_plan_make(g_ctx, &rb, &base);
        CHECK(st == LTX2_OK, "%s plan: %s", encs[k].label, ltx2_last_error(g_ctx));
        if (st != LTX2_OK) continue;
        ltx2_mem_plan_print(&p, stdout, k ? "22B --image: " : "19B --image: ");
        check_weights(encs[k].label, p.video_encoder_weights - encs[k].widen, encs[k].params, 100);
        CHECK(p.resident == base.resident + p.video_encoder_weights && p.stage[LTX2_MEM_ENCODE] > 0 &&
                  base.stage[LTX2_MEM_ENCODE] == 0,
              "%s: the encoder must add its weights to the resident set and its encode as a stage", encs[k].label);
    }
    /* audio conditioning: the audio encoder resident (conv_in's input widened from 2 to 8 channels,
     * the two Downsample kernels from 3 x 3 to 3 x 5 taps) and its encode on the clip's 5.04 s */
    ltx2_audio_encoder_config aec;
    st = ltx2_audio_encoder_config_parse(g_ctx, ltx2_json_root(c19.doc), "19B config", &aec);
    r = request(&c19, H100_FREE);
    r.audio_encoder = &aec;
    r.audio_cond_seconds = 121.0 / 24.0;
    if (st == LTX2_OK) st = ltx2_mem_plan_make(g_ctx, &r, &p);
    CHECK(st == LTX2_OK, "19B --audio plan: %s", ltx2_last_error(g_ctx));
    if (st == LTX2_OK) {
        ltx2_mem_plan_print(&p, stdout, "19B --audio: ");
        check_weights("19B audio encoder", p.audio_encoder_weights - 6ull * 9 * 128 * 2 - 6ull * 2 * (128 * 128 + 256 * 256),
                      21333008ull, 44);
        CHECK(p.stage[LTX2_MEM_ENCODE] > 0, "19B --audio: no encode stage");
    }
    /* a prompt pair's Gemma states kept on the device for the connectors (LTX-2.3): the text stage
     * grows by two [1024, 3840 x 49] bf16 buffers, 2 x 770,703,360 bytes (each a 256-byte multiple) */
    r = request(&c22, H100_FREE);
    ltx2_mem_plan kept;
    ltx2_mem_request rk = r;
    rk.text_kept_prompts = 2;
    st = ltx2_mem_plan_make(g_ctx, &r, &p);
    if (st == LTX2_OK) st = ltx2_mem_plan_make(g_ctx, &rk, &kept);
    CHECK(st == LTX2_OK && kept.stage[LTX2_MEM_TEXT] - p.stage[LTX2_MEM_TEXT] == 2ull * 1024 * 3840 * 49 * 2,
          "22B: kept states add %.0f bytes to the text stage, want %.0f",
          st == LTX2_OK ? (double)(kept.stage[LTX2_MEM_TEXT] - p.stage[LTX2_MEM_TEXT]) : -1.0,
          2.0 * 1024 * 3840 * 49 * 2);
    /* --attention-dtype fp8: the denoise stage takes the e4m3 pre-pass's workspace on top of the
     * attention's own when it holds the peak, never more than the video self-attention's (the
     * largest: 2 x 6144 queries and keys, 32 heads of 128) */
    r = request(&c19, H100_FREE);
    ltx2_mem_plan f8;
    ltx2_mem_request rf = r;
    rf.attention_fp8 = true;
    st = ltx2_mem_plan_make(g_ctx, &r, &p);
    if (st == LTX2_OK) st = ltx2_mem_plan_make(g_ctx, &rf, &f8);
    size_t f8_part[A90_F8_WS_PARTS];
    const uint64_t f8_ws = att90_f8_ws_parts(r.batch, 6144, 6144, 32, 32, LTX2_KATTN_WS_ALIGN, f8_part);
    CHECK(st == LTX2_OK && f8.stage[LTX2_MEM_DENOISE] >= p.stage[LTX2_MEM_DENOISE] &&
              f8.stage[LTX2_MEM_DENOISE] - p.stage[LTX2_MEM_DENOISE] <= f8_ws,
          "19B fp8 attention: the denoise stage %.0f bytes against %.0f (the pre-pass's workspace: %.0f)",
          st == LTX2_OK ? (double)f8.stage[LTX2_MEM_DENOISE] : -1.0,
          st == LTX2_OK ? (double)p.stage[LTX2_MEM_DENOISE] : -1.0, (double)f8_ws);
    if (st == LTX2_OK)
        printf("19B fp8 attention: denoise stage +%.1f MiB (pre-pass workspace %.1f MiB)\n",
               (double)(f8.stage[LTX2_MEM_DENOISE] - p.stage[LTX2_MEM_DENOISE]) / (1 << 20), (double)f8_ws / (1 << 20));
    ltx2_json_free(c19.doc);
    ltx2_json_free(c22.doc);
}

/* ---- the decoder formulas against the planning backend ---- */

static void video_decoder_case(const char *label, const char *wrel, int64_t T, int64_t H, int64_t W) {
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", LTX2_SOURCE_DIR, wrel);
    ltx2_st_set *w = NULL;
    ltx2_vae_config cfg;
    ltx2_video_decoder *dec = NULL;
    bool ok = ltx2_st_set_open(g_ctx, path, &w) == LTX2_OK && ltx2_vae_config_from_file(g_ctx, w->files[0], &cfg) == LTX2_OK &&
              ltx2_video_decoder_load(g_ctx, w, "vae.", &cfg, &dec) == LTX2_OK;
    CHECK(ok, "%s: %s", label, ltx2_last_error(g_ctx));
    ltx2_backend *pb = NULL;
    ltx2_vae_device *dv = NULL;
    ok = ok && ltx2_backend_plan_create(g_ctx, &pb) == LTX2_OK && ltx2_vae_device_create(g_ctx, pb, dec, &dv) == LTX2_OK;
    CHECK(ok, "%s on the planning backend: %s", label, ltx2_last_error(g_ctx));
    if (ok) {
        size_t cur = 0, peak = 0;
        ltx2_backend_plan_counts(pb, &cur, NULL);
        CHECK(cur == ltx2_mem_plan_video_vae_weights(dec), "%s weights: measured %zu, planned %llu", label, cur,
              (unsigned long long)ltx2_mem_plan_video_vae_weights(dec));
        ltx2_backend_plan_reset_peak(pb);
        const int64_t ls[5] = {1, T, H, W, cfg.latent_channels};
        int64_t vs[5];
        ok = ltx2_video_decoder_out_shape(g_ctx, dec, ls, vs) == LTX2_OK;
        const size_t nl = (size_t)(T * H * W * cfg.latent_channels), nv = (size_t)(vs[1] * vs[2] * vs[3] * vs[4]);
        float *lat = malloc(nl * sizeof(float)), *video = malloc(nv * sizeof(float));
        ltx2_rng_normal(3, 0, 0, nl, lat);
        ltx2_tensor lt = ltx2_tensor_make(lat, LTX2_F32, 5, ls), vt = ltx2_tensor_make(video, LTX2_F32, 5, vs);
        ok = ok && ltx2_vae_device_decode(g_ctx, dv, &lt, &vt, NULL, NULL, NULL) == LTX2_OK;
        CHECK(ok, "%s decode on the planning backend: %s", label, ltx2_last_error(g_ctx));
        ltx2_backend_plan_counts(pb, &cur, &peak);
        const int64_t lat3[3] = {T, H, W};
        const uint64_t want = ltx2_mem_plan_video_decode_peak(dec, lat3);
        CHECK(ok && peak - cur == want, "%s decode peak: measured %zu, planned %llu", label, peak - cur,
              (unsigned long long)want);
        free(lat);
        free(video);
    }
    ltx2_vae_device_free(dv);
    ltx2_backend_free(pb);
    ltx2_video_decoder_free(dec);
    ltx2_st_set_close(w);
}

/* The video encoder on the planning backend: what it places is the weights formula (for the loaded
 * encoder and the shape-only one the plan builds), its encode's peak the encode formula. */
static void video_encoder_case(const char *v, int64_t T, int64_t H, int64_t W) {
    char path[1024];
    snprintf(path, sizeof path, "%s/weights/tiny/ltx2-tiny-%s.safetensors", LTX2_SOURCE_DIR, v);
    ltx2_st_set *w = NULL;
    ltx2_vae_config cfg;
    ltx2_video_encoder *enc = NULL, *shape = NULL;
    ltx2_backend *pb = NULL;
    ltx2_vae_enc_device *dv = NULL;
    bool ok = ltx2_st_set_open(g_ctx, path, &w) == LTX2_OK && ltx2_vae_config_from_file(g_ctx, w->files[0], &cfg) == LTX2_OK &&
              ltx2_video_encoder_load(g_ctx, w, "vae.", &cfg, &enc) == LTX2_OK &&
              ltx2_video_encoder_shape_only(g_ctx, &cfg, &shape) == LTX2_OK && ltx2_backend_plan_create(g_ctx, &pb) == LTX2_OK &&
              ltx2_vae_enc_device_create(g_ctx, pb, enc, &dv) == LTX2_OK;
    CHECK(ok, "%s video encoder on the planning backend: %s", v, ltx2_last_error(g_ctx));
    if (ok) {
        size_t cur = 0, peak = 0;
        ltx2_backend_plan_counts(pb, &cur, NULL);
        CHECK(cur == ltx2_mem_plan_video_encoder_weights(enc) && cur == ltx2_mem_plan_video_encoder_weights(shape),
              "%s encoder weights: measured %zu, planned %llu (shape-only %llu)", v, cur,
              (unsigned long long)ltx2_mem_plan_video_encoder_weights(enc),
              (unsigned long long)ltx2_mem_plan_video_encoder_weights(shape));
        ltx2_backend_plan_reset_peak(pb);
        const int64_t vs[5] = {1, T, H, W, 3};
        int64_t ls[5];
        ok = ltx2_video_encoder_out_shape(g_ctx, enc, vs, ls) == LTX2_OK;
        float *video = calloc((size_t)(T * H * W * 3), sizeof(float));
        float *lat = calloc((size_t)(ls[1] * ls[2] * ls[3] * ls[4]), sizeof(float));
        ltx2_tensor vt = ltx2_tensor_make(video, LTX2_F32, 5, vs), lt = ltx2_tensor_make(lat, LTX2_F32, 5, ls);
        ok = ok && video && lat && ltx2_vae_enc_device_encode(g_ctx, dv, &vt, &lt, NULL, NULL) == LTX2_OK;
        CHECK(ok, "%s encode on the planning backend: %s", v, ltx2_last_error(g_ctx));
        ltx2_backend_plan_counts(pb, &cur, &peak);
        const uint64_t want = ltx2_mem_plan_video_encode_peak(shape, T, H, W);
        CHECK(ok && peak - cur == want, "%s encode peak (%lldx%lldx%lld): measured %zu, planned %llu", v, (long long)T,
              (long long)H, (long long)W, peak - cur, (unsigned long long)want);
        printf("%s video encoder on %lldx%lldx%lld pixels: peak %zu bytes as planned\n", v, (long long)T, (long long)H,
               (long long)W, peak - cur);
        free(video);
        free(lat);
    }
    ltx2_vae_enc_device_free(dv);
    ltx2_backend_free(pb);
    ltx2_video_encoder_free(shape);
    ltx2_video_encoder_free(enc);
    ltx2_st_set_close(w);
}

/* The audio encoder the same way, on a mel of T frames. */
static void audio_encoder_case(const char *v, int64_t T) {
    char path[1024];
    snprintf(path, sizeof path, "%s/weights/tiny/ltx2-tiny-%s.safetensors", LTX2_SOURCE_DIR, v);
    ltx2_st_set *w = NULL;
    ltx2_audio_encoder_config cfg;
    ltx2_audio_encoder *enc = NULL;
    ltx2_backend *pb = NULL;
    ltx2_audio_enc_device *dv = NULL;
    bool ok = ltx2_st_set_open(g_ctx, path, &w) == LTX2_OK &&
              ltx2_audio_encoder_config_from_file(g_ctx, w->files[0], &cfg) == LTX2_OK &&
              ltx2_audio_encoder_load(g_ctx, w, "audio_vae.", &cfg, &enc) == LTX2_OK &&
              ltx2_backend_plan_create(g_ctx, &pb) == LTX2_OK && ltx2_audio_enc_device_create(g_ctx, pb, enc, &dv) == LTX2_OK;
    CHECK(ok, "%s audio encoder on the planning backend: %s", v, ltx2_last_error(g_ctx));
    if (ok) {
        size_t cur = 0, peak = 0;
        ltx2_backend_plan_counts(pb, &cur, NULL);
        CHECK(cur == ltx2_mem_plan_audio_encoder_weights(&cfg), "%s audio encoder weights: measured %zu, planned %llu",
              v, cur, (unsigned long long)ltx2_mem_plan_audio_encoder_weights(&cfg));
        ltx2_backend_plan_reset_peak(pb);
        const int64_t ms[4] = {1, cfg.in_channels, T, cfg.mel.n_mels};
        int64_t ls[4];
        ok = ltx2_audio_encoder_out_shape(g_ctx, enc, ms, ls) == LTX2_OK;
        float *mel = calloc((size_t)(ms[1] * T * ms[3]), sizeof(float));
        float *lat = calloc((size_t)(ls[1] * ls[2] * ls[3]), sizeof(float));
        ltx2_tensor mt = ltx2_tensor_make(mel, LTX2_F32, 4, ms), lt = ltx2_tensor_make(lat, LTX2_F32, 4, ls);
        ok = ok && mel && lat && ltx2_audio_enc_device_encode(g_ctx, dv, &mt, &lt, NULL, NULL) == LTX2_OK;
        CHECK(ok, "%s audio encode on the planning backend: %s", v, ltx2_last_error(g_ctx));
        ltx2_backend_plan_counts(pb, &cur, &peak);
        const uint64_t want = ltx2_mem_plan_audio_encode_peak(&cfg, T);
        CHECK(ok && peak - cur == want, "%s audio encode peak (%lld mel frames): measured %zu, planned %llu", v,
              (long long)T, peak - cur, (unsigned long long)want);
        printf("%s audio encoder on %lld mel frames: peak %zu bytes as planned\n", v, (long long)T, peak - cur);
        free(mel);
        free(lat);
    }
    ltx2_audio_enc_device_free(dv);
    ltx2_backend_free(pb);
    ltx2_audio_encoder_free(enc);
    ltx2_st_set_close(w);
}

/* The upsampler's forward on the planning backend: what it places is the weights formula, its peak
 * on top of them the forward's (both byte for byte). */
static void upsampler_case(const char *name, int64_t T, int64_t H, int64_t W) {
    char path[1024];
    snprintf(path, sizeof path, "%s/weights/tiny/ltx2-tiny-upsampler-%s.safetensors", LTX2_SOURCE_DIR, name);
    ltx2_upsampler *u = NULL;
    ltx2_backend *pb = NULL;
    bool ok = ltx2_upsampler_open(g_ctx, path, &u) == LTX2_OK && ltx2_backend_plan_create(g_ctx, &pb) == LTX2_OK;
    CHECK(ok, "upsampler %s: %s", name, ltx2_last_error(g_ctx));
    if (ok) {
        const ltx2_upsampler_config *c = ltx2_upsampler_get_config(u);
        const int64_t in[5] = {1, T, H, W, c->in_channels};
        int64_t out[5];
        ok = ltx2_upsampler_out_shape(g_ctx, u, in, out) == LTX2_OK;
        float *x = calloc((size_t)(T * H * W * c->in_channels), sizeof(float));
        float *y = calloc((size_t)(out[1] * out[2] * out[3] * out[4]), sizeof(float));
        ok = ok && x && y && ltx2_upsampler_forward_on(g_ctx, u, pb, x, in, y) == LTX2_OK;
        CHECK(ok, "upsampler %s forward on the planning backend: %s", name, ltx2_last_error(g_ctx));
        size_t cur = 0, peak = 0;
        ltx2_backend_plan_counts(pb, &cur, &peak);
        const int64_t lat[3] = {T, H, W};
        const uint64_t want = ltx2_mem_plan_upsampler_weights(c) + ltx2_mem_plan_upsample_peak(c, lat);
        CHECK(ok && cur == 0 && peak == want, "upsampler %s: measured peak %zu (%zu left), planned %llu (weights "
              "%llu)", name, peak, cur, (unsigned long long)want,
              (unsigned long long)ltx2_mem_plan_upsampler_weights(c));
        printf("upsampler %s on a %lldx%lldx%lld latent: peak %zu bytes as planned\n", name, (long long)T, (long long)H,
               (long long)W, peak);
        free(x), free(y);
    }
    ltx2_backend_free(pb);
    ltx2_upsampler_free(u);
}

static void audio_decoder_case(const char *v, int64_t T) {
    char path[1024];
    snprintf(path, sizeof path, "%s/weights/tiny/ltx2-tiny-%s.safetensors", LTX2_SOURCE_DIR, v);
    ltx2_st_set *w = NULL;
    ltx2_audio_vae_config cfg;
    ltx2_audio_decoder *dec = NULL;
    bool ok = ltx2_st_set_open(g_ctx, path, &w) == LTX2_OK &&
              ltx2_audio_vae_config_from_file(g_ctx, w->files[0], &cfg) == LTX2_OK &&
              ltx2_audio_decoder_load(g_ctx, w, "audio_vae.", &cfg, &dec) == LTX2_OK;
    CHECK(ok, "audio %s: %s", v, ltx2_last_error(g_ctx));
    ltx2_backend *pb = NULL;
    ltx2_audio_dec_device *dv = NULL;
    ok = ok && ltx2_backend_plan_create(g_ctx, &pb) == LTX2_OK &&
         ltx2_audio_dec_device_create(g_ctx, pb, dec, &dv) == LTX2_OK;
    CHECK(ok, "audio %s on the planning backend: %s", v, ltx2_last_error(g_ctx));
    if (ok) {
        size_t cur = 0, peak = 0;
        ltx2_backend_plan_counts(pb, &cur, NULL);
        CHECK(cur == ltx2_mem_plan_audio_vae_weights(&cfg), "audio %s weights: measured %zu, planned %llu", v, cur,
              (unsigned long long)ltx2_mem_plan_audio_vae_weights(&cfg));
        ltx2_backend_plan_reset_peak(pb);
        const int64_t F = cfg.mel_bins / 4, ls[4] = {1, cfg.z_channels, T, F};
        int64_t ms[4];
        ok = ltx2_audio_decoder_out_shape(g_ctx, dec, ls, ms) == LTX2_OK;
        const size_t nl = (size_t)(cfg.z_channels * T * F), nm = (size_t)(ms[0] * ms[1] * ms[2] * ms[3]);
        float *lat = malloc(nl * sizeof(float)), *mel = malloc(nm * sizeof(float));
        ltx2_rng_normal(4, 0, 0, nl, lat);
        ltx2_tensor lt = ltx2_tensor_make(lat, LTX2_F32, 4, ls), mt = ltx2_tensor_make(mel, LTX2_F32, 4, ms);
        ok = ok && ltx2_audio_dec_device_decode(g_ctx, dv, &lt, &mt, NULL, NULL) == LTX2_OK;
        CHECK(ok, "audio %s decode on the planning backend: %s", v, ltx2_last_error(g_ctx));
        ltx2_backend_plan_counts(pb, &cur, &peak);
        const uint64_t want = ltx2_mem_plan_audio_decode_peak(&cfg, T, F);
        CHECK(ok && peak - cur == want, "audio %s decode peak: measured %zu, planned %llu", v, peak - cur,
              (unsigned long long)want);
        free(lat);
        free(mel);
    }
    ltx2_audio_dec_device_free(dv);
    ltx2_backend_free(pb);
    ltx2_audio_decoder_free(dec);
    ltx2_st_set_close(w);
}

/* The vocoder on the planning backend: its weights and its run's peak on a t-frame mel, exactly. */
static void vocoder_case(const char *v, int64_t T) {
    char path[1024];
    snprintf(path, sizeof path, "%s/weights/tiny/ltx2-tiny-%s.safetensors", LTX2_SOURCE_DIR, v);
    ltx2_st_set *w = NULL;
    ltx2_vocoder_config cfg;
    ltx2_vocoder *voc = NULL;
    bool ok = ltx2_st_set_open(g_ctx, path, &w) == LTX2_OK &&
              ltx2_vocoder_config_from_file(g_ctx, w->files[0], &cfg) == LTX2_OK &&
              ltx2_vocoder_load(g_ctx, w, "vocoder.", &cfg, &voc) == LTX2_OK;
    CHECK(ok, "vocoder %s: %s", v, ltx2_last_error(g_ctx));
    ltx2_backend *pb = NULL;
    ltx2_vocoder_device *dv = NULL;
    ok = ok && ltx2_backend_plan_create(g_ctx, &pb) == LTX2_OK && ltx2_vocoder_device_create(g_ctx, pb, voc, &dv) == LTX2_OK;
    CHECK(ok, "vocoder %s on the planning backend: %s", v, ltx2_last_error(g_ctx));
    if (ok) {
        size_t cur = 0, peak = 0;
        ltx2_backend_plan_counts(pb, &cur, NULL);
        CHECK(cur == ltx2_mem_plan_vocoder_weights(&cfg), "vocoder %s weights: measured %zu, planned %llu", v, cur,
              (unsigned long long)ltx2_mem_plan_vocoder_weights(&cfg));
        ltx2_backend_plan_reset_peak(pb);
        const int64_t ms[4] = {1, 2, T, LTX2_VOCODER_IN_CHANNELS / 2};
        int64_t ws[3];
        ok = ltx2_vocoder_out_shape(g_ctx, voc, ms, ws) == LTX2_OK;
        const size_t nm = (size_t)(2 * T * ms[3]), nw = (size_t)(ws[0] * ws[1] * ws[2]);
        float *mel = malloc(nm * sizeof(float)), *wav = malloc(nw * sizeof(float));
        ltx2_rng_normal(5, 0, 0, nm, mel);
        ltx2_tensor mt = ltx2_tensor_make(mel, LTX2_F32, 4, ms), wt = ltx2_tensor_make(wav, LTX2_F32, 3, ws);
        ok = ok && ltx2_vocoder_device_run(g_ctx, dv, &mt, &wt, NULL, NULL) == LTX2_OK;
        CHECK(ok, "vocoder %s on the planning backend: %s", v, ltx2_last_error(g_ctx));
        ltx2_backend_plan_counts(pb, &cur, &peak);
        const uint64_t want = ltx2_mem_plan_vocoder_peak(&cfg, T);
        CHECK(ok && peak - cur == want, "vocoder %s peak: measured %zu, planned %llu", v, peak - cur,
              (unsigned long long)want);
        free(mel);
        free(wav);
    }
    ltx2_vocoder_device_free(dv);
    ltx2_backend_free(pb);
    ltx2_vocoder_free(voc);
    ltx2_st_set_close(w);
}

/* The DiT bytes every rank holds whole (embeddings, AdaLN, output head, the blocks' scale-shift
 * tables), laid out on the planning backend. */
static uint64_t replicated_dit_bytes(const ltx2_dit_config *cfg) {
    ltx2_backend *pb = NULL;
    ltx2_dit_weights *w = NULL;
    size_t cur = 0;
    if (ltx2_backend_plan_create(g_ctx, &pb) == LTX2_OK &&
        ltx2_dit_weights_layout_replicated_on(g_ctx, pb, LTX2_BF16, cfg, &w) == LTX2_OK)
        ltx2_backend_plan_counts(pb, &cur, NULL);
    CHECK(cur > 0, "replicated DiT layout: %s", ltx2_last_error(g_ctx));
    ltx2_dit_weights_free(w);
    ltx2_backend_free(pb);
    return cur;
}

/* A multi-rank run is planned per rank (the parallel DiT on one planning backend per rank): the
 * 22B at 768x512x121 over tensor 4 holds the replicated part plus a quarter of the layers (the
 * row-parallel biases, kept whole by every tensor rank, and per-tensor padding aside: < 0.05 %),
 * and a call's activations shrink with the heads and the FFN width (to under half); over context 2
 * the layers stay whole (gpu profile) and a call's tokens halve (its exchanges' scratch added, the
 * text K/V cache gone: ranks keep none). A refusal says the plan is per rank. */
static void full_size_ranks(void) {
    full_cfg c22;
    if (!full_cfg_load("2.3", &c22)) {
        ltx2_json_free(c22.doc);
        return;
    }
    ltx2_mem_request r = request(&c22, H100_FREE);
    ltx2_mem_plan one, t4, c2;
    ltx2_status st = ltx2_mem_plan_make(g_ctx, &r, &one);
    ltx2_mesh tensor4, context2;
    if (st == LTX2_OK) st = ltx2_mesh_init(g_ctx, &tensor4, 1, 1, 1, 4);
    if (st == LTX2_OK) st = ltx2_mesh_init(g_ctx, &context2, 1, 1, 2, 1);
    r.mesh = &tensor4;
    if (st == LTX2_OK) st = ltx2_mem_plan_make(g_ctx, &r, &t4);
    r.mesh = &context2;
    if (st == LTX2_OK) st = ltx2_mem_plan_make(g_ctx, &r, &c2);
    CHECK(st == LTX2_OK, "22B per-rank plans: %s", ltx2_last_error(g_ctx));
    if (st != LTX2_OK) {
        ltx2_json_free(c22.doc);
        return;
    }
    ltx2_mem_plan_print(&t4, stdout, "22B tensor 4: ");
    ltx2_mem_plan_print(&c2, stdout, "22B context 2: ");
    const uint64_t rep = replicated_dit_bytes(&c22.dit), want = rep + (one.dit_weights - rep) / 4;
    const double off = (double)t4.dit_weights - (double)want;
    printf("22B tensor 4: DiT %.3f GiB per rank, replicated %.3f + a quarter of the layers = %.3f GiB\n",
           (double)t4.dit_weights / GIB, (double)rep / GIB, (double)want / GIB);
    CHECK(off >= 0 && off < 5e-4 * (double)one.dit_weights,
          "22B tensor 4: a rank holds %llu DiT bytes, want %llu (replicated %llu + a quarter of the rest)",
          (unsigned long long)t4.dit_weights, (unsigned long long)want, (unsigned long long)rep);
    CHECK(t4.stage[LTX2_MEM_DENOISE] < one.stage[LTX2_MEM_DENOISE] / 2,
          "22B tensor 4: a call's %.2f GiB per rank, one device's %.2f", (double)t4.stage[LTX2_MEM_DENOISE] / GIB,
          (double)one.stage[LTX2_MEM_DENOISE] / GIB);
    CHECK(c2.dit_weights == one.dit_weights, "22B context 2: the gpu profile keeps the layers whole (%llu vs %llu)",
          (unsigned long long)c2.dit_weights, (unsigned long long)one.dit_weights);
    CHECK(c2.stage[LTX2_MEM_DENOISE] > 0 && c2.stage[LTX2_MEM_DENOISE] < one.stage[LTX2_MEM_DENOISE],
          "22B context 2: a call's %.2f GiB per rank against one device's %.2f", (double)c2.stage[LTX2_MEM_DENOISE] / GIB,
          (double)one.stage[LTX2_MEM_DENOISE] / GIB);
    r.mesh = &tensor4;
    r.free_bytes = t4.need - 1;
    t4.free_bytes = r.free_bytes;
    t4.fits = false;
    st = ltx2_mem_plan_check(g_ctx, &r, &t4);
    const char *msg = ltx2_last_error(g_ctx);
    printf("22B tensor 4, one byte short: %s\n", msg);
    CHECK(st == LTX2_ERR_OOM && strstr(msg, "per rank of mesh 1,1,1,4") && !strstr(msg, "--nproc") &&
              strstr(msg, "--weights-dtype fp8") && strstr(msg, "--vae-tile"),
          "a rank's refusal must say it is per rank and advise what ranks run (fp8 shards, no other ranks): %s",
          msg);
    ltx2_clear_error(g_ctx);
    ltx2_json_free(c22.doc);
}

int main(void) {
    g_ctx = ltx2_context_create(NULL);
    if (!g_ctx) return 1;
    video_decoder_case("2.0 video decoder", "weights/tiny/ltx2-tiny-2.0.safetensors", 2, 2, 3);
    video_decoder_case("2.3 video decoder", "weights/tiny/ltx2-tiny-2.3.safetensors", 3, 2, 2);
    video_decoder_case("tcond video decoder", "tests/golden/data/vae_tcond_tiny.safetensors", 2, 3, 2);
    video_encoder_case("2.0", 1, 64, 96); /* an image, as --image encodes it */
    video_encoder_case("2.3", 1, 96, 64);
    video_encoder_case("2.0", 9, 64, 96); /* a clip: every time stride runs */
    audio_encoder_case("2.0", 37);
    audio_encoder_case("2.3", 40);
    upsampler_case("spatial-x2", 2, 3, 4);
    upsampler_case("spatial-x2-rational", 2, 3, 4);
    upsampler_case("spatial-x1.5", 2, 4, 6);
    upsampler_case("temporal-x2", 3, 2, 3);
    audio_decoder_case("2.0", 5);
    audio_decoder_case("2.3", 4);
    vocoder_case("2.0", 21);
    vocoder_case("2.3", 21);
    vocoder_case("2.3", 13); /* 13 x 4 = 52 samples: the bandwidth extension pads to its hop */
    full_size();
    full_size_ranks();
    ltx2_context_free(g_ctx);
    return test_finish();
}
