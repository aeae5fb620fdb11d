/* Loads every model the generation pipeline needs from one Lightricks single-file checkpoint:
 * DiT, text projection + connectors, video VAE decoder (those on the run's backend), audio VAE
 * decoder and vocoder. */
#include <string.h>

#include "core/context.h"
#include "model/audio_encoder.h"
#include "model/ckpt_source.h"
#include "model/lora.h"
#include "pipeline/pipeline.h"

/* The dtype models are stored in on be: the CPU reference is fp32, devices store bf16. */
static ltx2_dtype model_dtype(const ltx2_backend *be) { return be->device == LTX2_DEVICE_CPU ? LTX2_F32 : LTX2_BF16; }

static ltx2_status load(ltx2_context *ctx, const char *const *paths, int n, const ltx2_backend *be,
                        bool dit_layers, bool fp8, bool fp8_cast, ltx2_lora_set *loras, ltx2_pipe_models *out) {
    memset(out, 0, sizeof *out);
    out->be = be;
    out->fp8 = fp8;
    out->fp8_cast = fp8_cast;
    ltx2_status st = ltx2_ckpt_source_open(ctx, paths, n, &out->src);
    if (st != LTX2_OK) return st;
    out->set = ltx2_ckpt_source_set(out->src);
    const ltx2_st_file *f = out->set->files[0];
    ltx2_dit_config dcfg;
    ltx2_connectors_config ccfg;
    if ((st = ltx2_dit_config_from_st(ctx, f, &dcfg)) != LTX2_OK) goto fail;
    st = !dit_layers ? ltx2_dit_weights_load_replicated_on(ctx, be, model_dtype(be), f, NULL, &dcfg, loras, &out->dit)
         : fp8       ? ltx2_dit_weights_load_fp8(ctx, be, model_dtype(be), f, NULL, &dcfg, loras, &out->dit)
         : fp8_cast  ? ltx2_dit_weights_load_fp8_cast(ctx, be, model_dtype(be), f, NULL, &dcfg, &out->dit)
                     : ltx2_dit_weights_load_lora(ctx, be, model_dtype(be), f, NULL, &dcfg, loras, &out->dit);
    if (st != LTX2_OK) goto fail;
    if ((st = ltx2_connectors_config_from_st(ctx, f, &ccfg)) != LTX2_OK) goto fail;
    if ((st = ltx2_connectors_weights_load_on(ctx, be, model_dtype(be), f, &ccfg, &out->conn)) != LTX2_OK) goto fail;
    out->is_2_3 = ccfg.fe == LTX2_TEXT_FE_V2;
    {
        ltx2_vae_config vcfg;
        if ((st = ltx2_vae_config_from_file(ctx, f, &vcfg)) != LTX2_OK) goto fail;
        if ((st = ltx2_video_decoder_load(ctx, out->set, "vae.", &vcfg, &out->vdec)) != LTX2_OK) goto fail;
        if ((st = ltx2_video_decoder_place(ctx, out->vdec, be)) != LTX2_OK) goto fail;
    }
    {
        ltx2_audio_vae_config acfg;
        ltx2_vocoder_config vocfg;
        if ((st = ltx2_audio_vae_config_from_file(ctx, f, &acfg)) != LTX2_OK) goto fail;
        if ((st = ltx2_audio_decoder_load(ctx, out->set, "audio_vae.", &acfg, &out->adec)) != LTX2_OK) goto fail;
        if ((st = ltx2_audio_decoder_place(ctx, out->adec, be)) != LTX2_OK) goto fail;
        if ((st = ltx2_vocoder_config_from_file(ctx, f, &vocfg)) != LTX2_OK) goto fail;
        if ((st = ltx2_vocoder_load(ctx, out->set, "vocoder.", &vocfg, &out->voc)) != LTX2_OK) goto fail;
        if ((st = ltx2_vocoder_place(ctx, out->voc, be)) != LTX2_OK) goto fail;
    }
    return LTX2_OK;
fail:
    ltx2_error_prefix(ctx, "loading %s%s", paths[0], n > 1 ? " (and the other given files)" : "");
    ltx2_pipe_models_free(out);
    return st;
}

ltx2_status ltx2_pipe_models_load(ltx2_context *ctx, const char *path, const ltx2_backend *be, ltx2_pipe_models *out) {
    return load(ctx, &path, 1, be, true, false, false, NULL, out);
}

ltx2_status ltx2_pipe_models_load_lora(ltx2_context *ctx, const char *const *paths, int n, const ltx2_backend *be,
                                       ltx2_lora_set *loras, ltx2_pipe_models *out) {
    return load(ctx, paths, n, be, true, false, false, loras, out);
}

ltx2_status ltx2_pipe_models_load_fp8(ltx2_context *ctx, const char *const *paths, int n, const ltx2_backend *be,
                                      ltx2_lora_set *loras, ltx2_pipe_models *out) {
    return load(ctx, paths, n, be, true, true, false, loras, out);
}

ltx2_status ltx2_pipe_models_load_fp8_cast(ltx2_context *ctx, const char *const *paths, int n, const ltx2_backend *be,
                                           ltx2_pipe_models *out) {
    return load(ctx, paths, n, be, true, false, true, NULL, out);
}

ltx2_status ltx2_pipe_models_load_dit_replicated(ltx2_context *ctx, const char *const *paths, int n,
                                                 const ltx2_backend *be, ltx2_lora_set *loras, ltx2_pipe_models *out) {
    return load(ctx, paths, n, be, false, false, false, loras, out);
}

ltx2_status ltx2_pipe_models_reload_dit(ltx2_context *ctx, ltx2_pipe_models *m, ltx2_lora_set *loras) {
    const ltx2_st_file *f = m->set->files[0];
    const ltx2_dit_config cfg = m->dit->cfg;
    const bool replicated = m->dit->layers_skipped; /* a rank's: its shards are read again by the caller */
    /* the old weights go first: a device never holds two DiTs (ltx-pipelines frees stage 1's too) */
    ltx2_dit_weights_free(m->dit);
    m->dit = NULL;
    if (m->fp8_cast && loras)
        return LTX2_ERROR(ctx, LTX2_ERR_UNSUPPORTED, "fp8-cast weights take no LoRA (see ltx2_dit_weights_load_fp8_cast)");
    if (replicated)
        return ltx2_dit_weights_load_replicated_on(ctx, m->be, model_dtype(m->be), f, NULL, &cfg, loras, &m->dit);
    return m->fp8      ? ltx2_dit_weights_load_fp8(ctx, m->be, model_dtype(m->be), f, NULL, &cfg, loras, &m->dit)
           : m->fp8_cast ? ltx2_dit_weights_load_fp8_cast(ctx, m->be, model_dtype(m->be), f, NULL, &cfg, &m->dit)
                         : ltx2_dit_weights_load_lora(ctx, m->be, model_dtype(m->be), f, NULL, &cfg, loras, &m->dit);
}

ltx2_status ltx2_pipe_models_load_encoder(ltx2_context *ctx, ltx2_pipe_models *m) {
    if (m->venc) return LTX2_OK;
    ltx2_vae_config vcfg;
    LTX2_TRY(ltx2_vae_config_from_file(ctx, m->set->files[0], &vcfg));
    ltx2_status st = ltx2_video_encoder_load(ctx, m->set, "vae.", &vcfg, &m->venc);
    if (st == LTX2_OK) st = ltx2_video_encoder_place(ctx, m->venc, m->be);
    if (st != LTX2_OK) {
        ltx2_error_prefix(ctx, "the video VAE encoder (image conditioning)");
        if (m->venc) ltx2_video_encoder_free(m->venc);
        m->venc = NULL;
    }
    return st;
}

ltx2_status ltx2_pipe_models_load_audio_encoder(ltx2_context *ctx, ltx2_pipe_models *m) {
    if (m->aenc_dev) return LTX2_OK;
    ltx2_audio_encoder_config acfg;
    LTX2_TRY(ltx2_audio_encoder_config_from_file(ctx, m->set->files[0], &acfg));
    ltx2_status st = ltx2_audio_encoder_load(ctx, m->set, "audio_vae.", &acfg, &m->aenc);
    if (st == LTX2_OK) st = ltx2_audio_enc_device_create(ctx, m->be, m->aenc, &m->aenc_dev);
    if (st != LTX2_OK) {
        ltx2_error_prefix(ctx, "the audio VAE encoder (audio conditioning)");
        if (m->aenc) ltx2_audio_encoder_free(m->aenc);
        m->aenc = NULL;
    }
    return st;
}

void ltx2_pipe_models_free(ltx2_pipe_models *m) {
    if (m->aenc_dev) ltx2_audio_enc_device_free(m->aenc_dev);
    if (m->aenc) ltx2_audio_encoder_free(m->aenc);
    if (m->venc) ltx2_video_encoder_free(m->venc);
    if (m->voc) ltx2_vocoder_free(m->voc);
    if (m->adec) ltx2_audio_decoder_free(m->adec);
    if (m->vdec) ltx2_video_decoder_free(m->vdec);
    if (m->conn) ltx2_connectors_weights_free(m->conn);
    if (m->dit) ltx2_dit_weights_free(m->dit);
    if (m->src) ltx2_ckpt_source_close(m->src);
    memset(m, 0, sizeof *m);
}
