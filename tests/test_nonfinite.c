/* No silent NaN (#16 item 2): a non-finite value in a weight (DiT, video VAE), in prompt
 * embeddings, in a noise file or in a latent given to `decode` is refused before any work, naming
 * the tensor and the index; one produced while sampling (guidance scales that overflow) stops the
 * run at its step, and one produced by a decoder names the stage. Without the checks each of these exits 0 with black frames or silence. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/dtype.h"
#include "io/npy.h"
#include "io/png.h"
#include "io/safetensors.h"
#include "ltx2/ltx2.h"
#include "model/dit.h"
#include "model/dit_weights.h"
#include "model/video_vae.h"
#include "test_util.h"

#define TINY LTX2_SOURCE_DIR "/weights/tiny/ltx2-tiny-2.0.safetensors"
#define POS LTX2_SOURCE_DIR "/weights/tiny/prompt_embeds_positive.safetensors"
#define NEG LTX2_SOURCE_DIR "/weights/tiny/prompt_embeds_negative.safetensors"

/* A copy of src with element `at` of tensor `name` (f32 / bf16 / any float) set to `value`. */
static bool write_poisoned(ltx2_context *ctx, const char *src, const char *dst, const char *name, int64_t at,
                           float value) {
    ltx2_st_file *f = NULL;
    ltx2_st_writer *w = NULL;
    void *copy = NULL;
    bool ok = ltx2_st_open(ctx, src, &f) == LTX2_OK && ltx2_st_writer_create(ctx, &w) == LTX2_OK;
    for (size_t i = 0; ok && i < f->n_tensors; i++) {
        const ltx2_st_tensor *t = &f->tensors[i];
        ltx2_tensor v = ltx2_st_view(t);
        if (!strcmp(t->name, name)) {
            const size_t bytes = (size_t)(t->end - t->begin);
            copy = malloc(bytes);
            memcpy(copy, t->data, bytes);
            ok = ltx2_convert(ctx, (char *)copy + (size_t)at * ltx2_dtype_size(t->dtype), t->dtype, &value, LTX2_F32,
                              1) == LTX2_OK;
            v.data = copy;
        }
        ok = ok && ltx2_st_writer_add(ctx, w, t->name, &v) == LTX2_OK;
    }
    const char *cfg = f ? ltx2_st_meta_get(f, "config") : NULL;
    if (ok && cfg) ok = ltx2_st_writer_set_meta(ctx, w, "config", cfg) == LTX2_OK;
    ok = ok && ltx2_st_writer_write(ctx, w, dst) == LTX2_OK;
    CHECK(ok, "writing %s: %s", dst, ltx2_last_error(ctx));
    ltx2_st_writer_free(w);
    ltx2_st_close(f);
    free(copy);
    return ok;
}

/* A small text file's contents (malloc'd, NUL-terminated), or NULL. */
static char *slurp(const char *path) {
    FILE *f = fopen(path, "r");
    if (!f) return NULL;
    char *text = calloc(1, 8192);
    if (text && fread(text, 1, 8191, f) == 0) text[0] = 0;
    fclose(f);
    return text;
}

static void expect(ltx2_context *ctx, ltx2_status got, ltx2_status want, const char *what, const char *needle1,
                   const char *needle2) {
    const char *e = ltx2_last_error(ctx);
    CHECK(got == want && strstr(e, needle1) && strstr(e, needle2), "%s: status %d (want %d): %s", what, got, want, e);
}

/* A generation from p that must be refused with want, the message holding both needles. */
static void generate_refused(ltx2_context *ctx, const ltx2_generate_params *p, ltx2_status want, const char *what,
                             const char *needle1, const char *needle2) {
    ltx2_generate_result r;
    const ltx2_status st = ltx2_generate(ctx, p, &r);
    if (st == LTX2_OK) ltx2_generate_result_free(&r);
    expect(ctx, st, want, what, needle1, needle2);
}

static void base(ltx2_generate_params *p, const char *ckpt) {
    ltx2_generate_params_init(p);
    p->device = "cpu";
    p->checkpoint = ckpt;
    p->prompt_embeds = POS;
    p->negative_prompt_embeds = NEG;
    p->steps = 2, p->height = 64, p->width = 96, p->frames = 9;
    p->decode_video = p->decode_audio = 0;
}

int main(void) {
    ltx2_context *ctx = ltx2_context_create(NULL);
    char dir[] = "/tmp/ltx2_nonfinite.XXXXXX";
    CHECK(mkdtemp(dir) != NULL, "mkdtemp");
    char path[512];

    /* a DiT weight */
    snprintf(path, sizeof path, "%s/dit_nan.safetensors", dir);
    if (write_poisoned(ctx, TINY, path, "model.diffusion_model.transformer_blocks.1.attn1.to_q.weight", 37, NAN)) {
        ltx2_dit_weights *w = NULL;
        expect(ctx, ltx2_dit_weights_load_file(ctx, path, &w), LTX2_ERR_FORMAT, "NaN DiT weight",
               "transformer_blocks.1.attn1.to_q.weight", "non-finite value (nan) at [37]");
        ltx2_dit_weights_free(w);
        /* inspect --verify finds it too, without generating */
        char cmd[1400], log[600];
        snprintf(log, sizeof log, "%s/verify.log", dir);
        snprintf(cmd, sizeof cmd, "%s/ltx2 inspect --verify %s > %s 2>&1", LTX2_BINARY_DIR, path, log);
        const int rc = system(cmd);
        char *text = slurp(log);
        CHECK(WIFEXITED(rc) && WEXITSTATUS(rc) == 2 && text && strstr(text, "will not load") &&
                  strstr(text, "to_q.weight") && strstr(text, "non-finite"),
              "inspect --verify of a NaN checkpoint: exit %d, %s", WIFEXITED(rc) ? WEXITSTATUS(rc) : -1,
              text ? text : "(no output)");
        free(text);
        snprintf(cmd, sizeof cmd, "%s/ltx2 inspect --verify %s > %s 2>&1", LTX2_BINARY_DIR, TINY, log);
        const int rc_ok = system(cmd);
        text = slurp(log);
        CHECK(WIFEXITED(rc_ok) && WEXITSTATUS(rc_ok) == 0 && text && strstr(text, "will load ("),
              "inspect --verify of the tiny checkpoint: %s", text ? text : "(no output)");
        free(text);
        unlink(log);
        unlink(path);
    }
    /* a video VAE weight (its own loader) */
    snprintf(path, sizeof path, "%s/vae_inf.safetensors", dir);
    if (write_poisoned(ctx, TINY, path, "vae.decoder.conv_in.conv.weight", 5, INFINITY)) {
        ltx2_generate_params p;
        base(&p, path);
        generate_refused(ctx, &p, LTX2_ERR_FORMAT, "Inf VAE weight", "conv_in.conv.weight",
               "non-finite value (inf)");
        unlink(path);
    }
    /* prompt embeddings */
    snprintf(path, sizeof path, "%s/pos_nan.safetensors", dir);
    if (write_poisoned(ctx, POS, path, "hidden_states", 128 * 32 * 3 - 1, NAN)) {
        ltx2_generate_params p;
        base(&p, TINY);
        p.prompt_embeds = path;
        generate_refused(ctx, &p, LTX2_ERR_INVALID_ARG, "NaN prompt embeds", "hidden_states",
               "at [0, 127, 31, 2]");
    }
    /* a noise file: the golden's own, poisoned */
    snprintf(path, sizeof path, "%s/noise_inf.safetensors", dir);
    if (write_poisoned(ctx, LTX2_SOURCE_DIR "/tests/golden/data/e2e_2.0.safetensors", path, "audio_noise", 3,
                       -INFINITY)) {
        ltx2_generate_params p;
        base(&p, TINY);
        p.noise = path;
        generate_refused(ctx, &p, LTX2_ERR_INVALID_ARG, "-Inf noise", "audio_noise",
               "at [0, 0, 0, 3]");
        unlink(path);
    }
    /* guidance that overflows fp32 while sampling: stopped at the first step, named */
    {
        ltx2_generate_params p;
        base(&p, TINY);
        /* guided predictions near FLT_MAX: the next step's DiT overflows on them */
        p.video_cfg = FLT_MAX, p.video_stg = FLT_MAX, p.video_rescale = 0;
        p.steps = 3;
        generate_refused(ctx, &p, LTX2_ERR_NUMERIC, "overflowing guidance", "denoising step ",
               "latent");
    }
    /* finite but huge latents: the audio decoder overflows, and the stage says so */
    {
        ltx2_generate_params p;
        base(&p, TINY);
        p.video_stg = p.audio_stg = 3e38, p.audio_rescale = p.video_rescale = 0;
        p.decode_audio = 1;
        ltx2_generate_result r;
        const ltx2_status st = ltx2_generate(ctx, &p, &r);
        CHECK(st != LTX2_OK, "huge latents decoded to a waveform without complaint");
        if (st == LTX2_OK) ltx2_generate_result_free(&r);
        else CHECK(strstr(ltx2_last_error(ctx), "non-finite") != NULL, "huge latents: %s", ltx2_last_error(ctx));
    }
    /* a latent given to `ltx2 decode` */
    {
        char npy[512], cmd[2048], out[512];
        snprintf(npy, sizeof npy, "%s/latent.npy", dir);
        snprintf(out, sizeof out, "%s/frames", dir);
        float lat[8 * 2 * 2 * 3];
        for (int i = 0; i < 96; i++) lat[i] = 0.1f * (float)(i % 7);
        lat[50] = NAN;
        const int64_t s[4] = {8, 2, 2, 3};
        ltx2_tensor t = ltx2_tensor_make(lat, LTX2_F32, 4, s);
        CHECK(ltx2_npy_write(ctx, npy, &t) == LTX2_OK, "npy: %s", ltx2_last_error(ctx));
        snprintf(cmd, sizeof cmd, "%s/ltx2 decode %s --checkpoint %s --png-dir %s > %s/decode.log 2>&1",
                 LTX2_BINARY_DIR, npy, TINY, out, dir);
        const int rc = system(cmd);
        char log[600];
        snprintf(log, sizeof log, "%s/decode.log", dir);
        char *text = slurp(log);
        /* decode writes PNG only: a build without libpng refuses before reading the latent */
        const char *want = ltx2_png_available() ? "non-finite value (nan) at [4, 0, 0, 2]" : "this build has no libpng";
        if (!ltx2_png_available()) printf("decode of a NaN latent: no libpng in this build, checked the refusal only\n");
        CHECK(WIFEXITED(rc) && WEXITSTATUS(rc) == 2 && text && strstr(text, want) && access(out, F_OK) != 0,
              "decode of a NaN latent: exit %d, %s", WIFEXITED(rc) ? WEXITSTATUS(rc) : -1, text ? text : "(no log)");
        free(text);
        unlink(npy), unlink(log), rmdir(out);
    }
    snprintf(path, sizeof path, "%s/pos_nan.safetensors", dir);
    unlink(path);
    rmdir(dir);
    ltx2_context_free(ctx);
    return test_finish();
}
