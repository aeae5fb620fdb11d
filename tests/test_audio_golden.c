/* Audio VAE decoder + vocoders against ltx-core: the tiny 2.0 / 2.3 checkpoints are loaded
 * through the loaders real weights use, the golden latent is decoded to a mel and vocoded on the
 * CPU, and every stage the reference recorded (tests/golden/data/audio_<v>.safetensors, from
 * gen_audio_goldens.py; PyTorch layouts, which our dumps also use) is compared. Also: bad inputs
 * give clear errors (wrong latent channels, a missing tensor, a mis-shaped tensor, a bad mel). */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/context.h"
#include "core/metrics.h"
#include "io/safetensors.h"
#include "model/audio_config.h"
#include "model/audio_vae.h"
#include "model/vocoder.h"
#include "golden_stages.h"
#include "test_util.h"

/* fp32 vs fp32: ltx-core (oneDNN) and we sum convolutions in different orders, ~1e-7 relative per
 * layer; 1e-5 leaves headroom for the ~40 layers in a row and still catches any layout, padding
 * or tap-order bug (those give errors of order 1). Every stage, including the log-mel STFT and
 * the clamped outputs, meets it (no stage needs a looser bound, see PARITY.md). */
#define AUDIO_REL_L2_TOL 1e-5

static void bad_inputs(ltx2_context *ctx, const ltx2_st_set *w, const ltx2_audio_vae_config *acfg,
                       const ltx2_vocoder_config *vcfg, const ltx2_audio_decoder *dec, const ltx2_vocoder *voc,
                       const char *v) {
    /* wrong latent channels */
    float buf[3 * 6 * 16] = {0}, mel[2 * 64 * 21] = {0};
    int64_t ls[4] = {1, 3, 6, 16}, ms[4] = {1, 2, 21, 64};
    ltx2_tensor lat = ltx2_tensor_make(buf, LTX2_F32, 4, ls), out = ltx2_tensor_make(mel, LTX2_F32, 4, ms);
    ltx2_status st = ltx2_audio_decoder_decode(ctx, dec, &lat, &out, NULL, NULL);
    CHECK(st == LTX2_ERR_SHAPE && strstr(ltx2_last_error(ctx), "latent"), "%s wrong channels: %d %s", v, st,
          ltx2_last_error(ctx));
    /* latent mel bins that do not match the statistics */
    ls[1] = 2, ls[3] = 8;
    lat = ltx2_tensor_make(buf, LTX2_F32, 4, ls);
    st = ltx2_audio_decoder_decode(ctx, dec, &lat, &out, NULL, NULL);
    CHECK(st == LTX2_ERR_SHAPE && strstr(ltx2_last_error(ctx), "statistics"), "%s wrong mel bins: %s", v,
          ltx2_last_error(ctx));
    /* missing key: a prefix under which nothing exists */
    ltx2_audio_decoder *d2 = NULL;
    st = ltx2_audio_decoder_load(ctx, w, "nope.", acfg, &d2);
    CHECK(st == LTX2_ERR_NOT_FOUND && strstr(ltx2_last_error(ctx), "nope.per_channel_statistics.mean-of-means"),
          "%s missing key: %s", v, ltx2_last_error(ctx));
    /* mis-shaped tensor: a config with more latent channels than the file's conv_in */
    ltx2_audio_vae_config bad = *acfg;
    bad.z_channels = acfg->z_channels + 1;
    st = ltx2_audio_decoder_load(ctx, w, "audio_vae.", &bad, &d2);
    CHECK(st == LTX2_ERR_SHAPE && strstr(ltx2_last_error(ctx), "audio_vae.decoder.conv_in.conv.weight"),
          "%s bad shape: %s", v, ltx2_last_error(ctx));
    /* vocoder: a missing tensor names the key; a mel with the wrong bins is refused */
    ltx2_vocoder *v2 = NULL;
    st = ltx2_vocoder_load(ctx, w, "vocoder.nope.", vcfg, &v2);
    CHECK(st == LTX2_ERR_NOT_FOUND && strstr(ltx2_last_error(ctx), "vocoder.nope."), "%s vocoder missing: %s", v,
          ltx2_last_error(ctx));
    ms[3] = 32;
    float wavb[2 * 4096];
    int64_t wsh[3] = {1, 2, 16};
    ltx2_tensor m2 = ltx2_tensor_make(mel, LTX2_F32, 4, ms), wv = ltx2_tensor_make(wavb, LTX2_F32, 3, wsh);
    st = ltx2_vocoder_run(ctx, voc, &m2, &wv, NULL, NULL);
    CHECK(st == LTX2_ERR_SHAPE && strstr(ltx2_last_error(ctx), "mel"), "%s vocoder bad mel: %s", v, ltx2_last_error(ctx));
}

static void run_version(ltx2_context *ctx, const char *v) {
    char path[1024];
    snprintf(path, sizeof(path), "%s/weights/tiny/ltx2-tiny-%s.safetensors", LTX2_SOURCE_DIR, v);
    ltx2_st_set *w = NULL;
    ltx2_st_file *golden = NULL;
    ltx2_audio_decoder *dec = NULL;
    ltx2_vocoder *voc = NULL;
    float *lat = NULL, *mel = NULL, *wav = NULL;
    ltx2_audio_vae_config acfg;
    ltx2_vocoder_config vcfg;
    ltx2_status st = ltx2_st_set_open(ctx, path, &w);
    CHECK(st == LTX2_OK, "%s: %s", path, ltx2_last_error(ctx));
    if (st != LTX2_OK) return;
    st = ltx2_audio_vae_config_from_file(ctx, w->files[0], &acfg);
    CHECK(st == LTX2_OK, "%s audio config: %s", v, ltx2_last_error(ctx));
    if (st == LTX2_OK) st = ltx2_vocoder_config_from_file(ctx, w->files[0], &vcfg);
    CHECK(st == LTX2_OK, "%s vocoder config: %s", v, ltx2_last_error(ctx));
    if (st == LTX2_OK) CHECK(vcfg.bwe == (strcmp(v, "2.3") == 0), "%s: bwe flag %d", v, vcfg.bwe);
    if (st == LTX2_OK) st = ltx2_audio_decoder_load(ctx, w, "audio_vae.", &acfg, &dec);
    CHECK(st == LTX2_OK, "%s decoder load: %s", v, ltx2_last_error(ctx));
    if (st == LTX2_OK) st = ltx2_vocoder_load(ctx, w, "vocoder.", &vcfg, &voc);
    CHECK(st == LTX2_OK, "%s vocoder load: %s", v, ltx2_last_error(ctx));
    snprintf(path, sizeof(path), "%s/tests/golden/data/audio_%s.safetensors", LTX2_SOURCE_DIR, v);
    if (st == LTX2_OK) st = ltx2_st_open(ctx, path, &golden);
    CHECK(st == LTX2_OK, "%s: %s", path, ltx2_last_error(ctx));
    if (st != LTX2_OK) goto done;
    int64_t ls[4], ms[4], ws[3];
    int nd = 0;
    lat = golden_stage_copy(golden, "decoder.in", ls, &nd);
    CHECK(lat && nd == 4, "%s: golden decoder.in", v);
    if (!lat || nd != 4) goto done;
    st = ltx2_audio_decoder_out_shape(ctx, dec, ls, ms);
    CHECK(st == LTX2_OK, "%s out shape: %s", v, ltx2_last_error(ctx));
    if (st != LTX2_OK) goto done;
    mel = malloc((size_t)(ms[0] * ms[1] * ms[2] * ms[3]) * sizeof(float));
    golden_stages dc = {.golden = golden, .version = v, .tol = AUDIO_REL_L2_TOL};
    ltx2_tensor lt = ltx2_tensor_make(lat, LTX2_F32, 4, ls), mt = ltx2_tensor_make(mel, LTX2_F32, 4, ms);
    st = ltx2_audio_decoder_decode(ctx, dec, &lt, &mt, golden_stage_check, &dc);
    CHECK(st == LTX2_OK, "%s decode: %s", v, ltx2_last_error(ctx));
    if (st != LTX2_OK) goto done;
    st = ltx2_vocoder_out_shape(ctx, voc, ms, ws);
    CHECK(st == LTX2_OK, "%s vocoder shape: %s", v, ltx2_last_error(ctx));
    if (st != LTX2_OK) goto done;
    wav = malloc((size_t)(ws[0] * ws[1] * ws[2]) * sizeof(float));
    ltx2_tensor wt = ltx2_tensor_make(wav, LTX2_F32, 3, ws);
    st = ltx2_vocoder_run(ctx, voc, &mt, &wt, golden_stage_check, &dc);
    CHECK(st == LTX2_OK, "%s vocoder: %s", v, ltx2_last_error(ctx));
    /* every golden except the two inputs must have been compared */
    CHECK(dc.compared == (int)golden->n_tensors - 2, "%s: compared %d of %zu goldens", v, dc.compared,
          golden->n_tensors - 2);
    CHECK(ltx2_vocoder_sample_rate(voc) == (strcmp(v, "2.3") == 0 ? 48000 : 24000), "%s: sample rate %lld", v,
          (long long)ltx2_vocoder_sample_rate(voc));
    bad_inputs(ctx, w, &acfg, &vcfg, dec, voc, v);
done:
    free(lat);
    free(mel);
    free(wav);
    ltx2_vocoder_free(voc);
    ltx2_audio_decoder_free(dec);
    ltx2_st_close(golden);
    ltx2_st_set_close(w);
}

int main(void) {
    ltx2_context *ctx = ltx2_context_create(NULL);
    if (!ctx) return 1;
    run_version(ctx, "2.0");
    run_version(ctx, "2.3");
    ltx2_context_free(ctx);
    return test_finish();
}
