/* Audio VAE / vocoder config parsing (see audio_config.h). Reference: ltx-core 1.0.0
 * model/audio_vae/model_configurator.py. */
#include "model/audio_config.h"

#include <string.h>

#include "core/context.h"
#include "model/config_bounds.h"

static ltx2_status req_int(ltx2_context *ctx, const ltx2_json *obj, const char *key, const char *where,
                           const char *label, int64_t min, int64_t *out) {
    if (!ltx2_json_get_int(obj, key, out))
        return LTX2_ERROR(ctx, LTX2_ERR_FORMAT, "%s: %s.%s missing or not an integer", label, where, key);
    if (*out < min || *out > LTX2_CONFIG_MAX_DIM)
        return LTX2_ERROR(ctx, LTX2_ERR_FORMAT, "%s: %s.%s = %lld, expected an integer in [%lld, %d]", label, where,
                          key, (long long)*out, (long long)min, LTX2_CONFIG_MAX_DIM);
    return LTX2_OK;
}

/* Integer list `key` of 1..cap entries, each >= min. */
static ltx2_status req_list(ltx2_context *ctx, const ltx2_json *obj, const char *key, const char *where,
                            const char *label, int cap, int64_t min, int64_t *vals, int *n) {
    const ltx2_json *a = ltx2_json_get(obj, key);
    if (!a || a->type != LTX2_JSON_ARRAY || a->count < 1 || a->count > (size_t)cap)
        return LTX2_ERROR(ctx, LTX2_ERR_FORMAT, "%s: %s.%s missing or not a list of 1..%d integers", label, where,
                          key, cap);
    for (size_t i = 0; i < a->count; i++) {
        const ltx2_json *v = ltx2_json_at(a, i);
        if (v->type != LTX2_JSON_NUMBER || !v->is_int || v->integer < min || v->integer > LTX2_CONFIG_MAX_DIM)
            return LTX2_ERROR(ctx, LTX2_ERR_FORMAT, "%s: %s.%s[%zu] must be an integer in [%lld, %d]", label, where,
                              key, i, (long long)min, LTX2_CONFIG_MAX_DIM);
        vals[i] = v->integer;
    }
    *n = (int)a->count;
    return LTX2_OK;
}

/* 1 / 0 for a boolean key, -1 when absent; anything else is an error. */
static ltx2_status opt_bool(ltx2_context *ctx, const ltx2_json *obj, const char *key, const char *where,
                            const char *label, int *out) {
    const ltx2_json *v = ltx2_json_get(obj, key);
    if (!v) {
        *out = -1;
        return LTX2_OK;
    }
    if (v->type != LTX2_JSON_BOOL) return LTX2_ERROR(ctx, LTX2_ERR_FORMAT, "%s: %s.%s is not a boolean", label, where, key);
    *out = v->boolean ? 1 : 0;
    return LTX2_OK;
}

static ltx2_status want_str(ltx2_context *ctx, const ltx2_json *obj, const char *key, const char *want,
                            const char *where, const char *label) {
    const char *s = ltx2_json_get_str(obj, key);
    if (!s || strcmp(s, want) != 0)
        return LTX2_ERROR(ctx, LTX2_ERR_UNSUPPORTED, "%s: %s.%s is \"%s\", only \"%s\" is supported", label, where, key,
                          s ? s : "(absent)", want);
    return LTX2_OK;
}

ltx2_status ltx2_audio_vae_config_parse(ltx2_context *ctx, const ltx2_json *root, const char *label,
                                        ltx2_audio_vae_config *out) {
    if (!root || !out || !label) return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "audio VAE config: NULL argument");
    memset(out, 0, sizeof(*out));
    const ltx2_json *av = ltx2_json_get(root, "audio_vae");
    const ltx2_json *model = av ? ltx2_json_get(av, "model") : NULL;
    const ltx2_json *params = model ? ltx2_json_get(model, "params") : NULL;
    const ltx2_json *dd = params ? ltx2_json_get(params, "ddconfig") : NULL;
    if (!dd || dd->type != LTX2_JSON_OBJECT)
        return LTX2_ERROR(ctx, LTX2_ERR_FORMAT, "%s: no audio_vae.model.params.ddconfig object", label);
    const char *w = "audio_vae.model.params.ddconfig";
    LTX2_TRY(req_int(ctx, dd, "ch", w, label, 1, &out->ch));
    LTX2_TRY(req_int(ctx, dd, "out_ch", w, label, 1, &out->out_ch));
    LTX2_TRY(req_int(ctx, dd, "num_res_blocks", w, label, 0, &out->num_res_blocks));
    LTX2_TRY(req_int(ctx, dd, "z_channels", w, label, 1, &out->z_channels));
    LTX2_TRY(req_list(ctx, dd, "ch_mult", w, label, LTX2_AUDIO_MAX_LEVELS, 1, out->ch_mult, &out->n_levels));
    /* ltx-core: ddconfig.mel_bins or preprocessing.mel.n_mel_channels or variables.mel_bins; with
     * none it keeps the latent's own width (never right for a real file), so we require one. */
    if (!ltx2_json_get_int(dd, "mel_bins", &out->mel_bins)) {
        const ltx2_json *pre = ltx2_json_get(av, "preprocessing");
        const ltx2_json *mel = pre ? ltx2_json_get(pre, "mel") : NULL;
        const ltx2_json *vars = ltx2_json_get(av, "variables");
        if (!(mel && ltx2_json_get_int(mel, "n_mel_channels", &out->mel_bins)) &&
            !(vars && ltx2_json_get_int(vars, "mel_bins", &out->mel_bins)))
            return LTX2_ERROR(ctx, LTX2_ERR_FORMAT, "%s: audio_vae has no mel_bins (ddconfig / preprocessing.mel)", label);
    }
    if (out->mel_bins < 1) return LTX2_ERROR(ctx, LTX2_ERR_FORMAT, "%s: audio_vae mel_bins must be >= 1", label);
    LTX2_TRY(want_str(ctx, dd, "norm_type", "pixel", w, label));
    LTX2_TRY(want_str(ctx, dd, "causality_axis", "height", w, label));
    LTX2_TRY(opt_bool(ctx, dd, "mid_block_add_attention", w, label, &out->mid_attention));
    if (out->mid_attention == 1)
        return LTX2_ERROR(ctx, LTX2_ERR_UNSUPPORTED, "%s: audio VAE mid-block attention is not supported", label);
    return LTX2_OK;
}

static ltx2_status parse_gen(ltx2_context *ctx, const ltx2_json *g, const char *where, const char *label,
                             ltx2_vocoder_gen_config *out) {
    memset(out, 0, sizeof(*out));
    if (!g || g->type != LTX2_JSON_OBJECT) return LTX2_ERROR(ctx, LTX2_ERR_FORMAT, "%s: no %s object", label, where);
    LTX2_TRY(req_int(ctx, g, "upsample_initial_channel", where, label, 1, &out->initial_channel));
    const char *rb = ltx2_json_get_str(g, "resblock");
    if (rb && strcmp(rb, "AMP1") == 0) {
        out->amp = true;
        /* ltx-core's configurator insists on snakebeta for AMP1 generators. */
        LTX2_TRY(want_str(ctx, g, "activation", "snakebeta", where, label));
    } else if (!rb || strcmp(rb, "1") != 0) {
        return LTX2_ERROR(ctx, LTX2_ERR_UNSUPPORTED, "%s: %s.resblock is \"%s\", expected \"1\" or \"AMP1\"", label, where,
                          rb ? rb : "(absent)");
    }
    int n_k;
    LTX2_TRY(req_list(ctx, g, "upsample_rates", where, label, LTX2_VOCODER_MAX_UPS, 1, out->up_rates, &out->n_ups));
    LTX2_TRY(req_list(ctx, g, "upsample_kernel_sizes", where, label, LTX2_VOCODER_MAX_UPS, 1, out->up_kernels, &n_k));
    if (n_k != out->n_ups)
        return LTX2_ERROR(ctx, LTX2_ERR_FORMAT, "%s: %s has %d upsample_rates but %d upsample_kernel_sizes", label, where,
                          out->n_ups, n_k);
    for (int i = 0; i < out->n_ups; i++) {
        if (out->up_kernels[i] < out->up_rates[i] || (out->up_kernels[i] - out->up_rates[i]) % 2 != 0)
            return LTX2_ERROR(ctx, LTX2_ERR_UNSUPPORTED,
                              "%s: %s stage %d kernel %lld / rate %lld: output would not be exactly x rate", label,
                              where, i, (long long)out->up_kernels[i], (long long)out->up_rates[i]);
        if (out->initial_channel >> (i + 1) < 1 || (out->initial_channel >> (i + 1)) << (i + 1) != out->initial_channel)
            return LTX2_ERROR(ctx, LTX2_ERR_FORMAT, "%s: %s upsample_initial_channel %lld not divisible by 2^%d", label,
                              where, (long long)out->initial_channel, i + 1);
    }
    LTX2_TRY(req_list(ctx, g, "resblock_kernel_sizes", where, label, LTX2_VOCODER_MAX_KERNELS, 1, out->rb_kernels,
                      &out->n_kernels));
    const ltx2_json *dl = ltx2_json_get(g, "resblock_dilation_sizes");
    if (!dl || dl->type != LTX2_JSON_ARRAY || dl->count != (size_t)out->n_kernels)
        return LTX2_ERROR(ctx, LTX2_ERR_FORMAT, "%s: %s.resblock_dilation_sizes must list %d triples", label, where,
                          out->n_kernels);
    for (int k = 0; k < out->n_kernels; k++) {
        const ltx2_json *t = ltx2_json_at(dl, (size_t)k);
        if (!t || t->type != LTX2_JSON_ARRAY || t->count != LTX2_VOCODER_DILATIONS)
            return LTX2_ERROR(ctx, LTX2_ERR_UNSUPPORTED, "%s: %s.resblock_dilation_sizes[%d] must have %d entries", label,
                              where, k, LTX2_VOCODER_DILATIONS);
        for (int m = 0; m < LTX2_VOCODER_DILATIONS; m++) {
            const ltx2_json *v = ltx2_json_at(t, (size_t)m);
            if (v->type != LTX2_JSON_NUMBER || !v->is_int || v->integer < 1 || v->integer > LTX2_CONFIG_MAX_DIM)
                return LTX2_ERROR(ctx, LTX2_ERR_FORMAT, "%s: %s.resblock_dilation_sizes[%d][%d] not a positive integer",
                                  label, where, k, m);
            out->rb_dilations[k][m] = v->integer;
        }
        if (out->rb_kernels[k] % 2 == 0)
            return LTX2_ERROR(ctx, LTX2_ERR_UNSUPPORTED, "%s: %s resblock kernel %lld must be odd", label, where,
                              (long long)out->rb_kernels[k]);
    }
    const ltx2_json *st = ltx2_json_get(g, "stereo");
    if (!st || st->type != LTX2_JSON_BOOL || !st->boolean)
        return LTX2_ERROR(ctx, LTX2_ERR_UNSUPPORTED, "%s: %s.stereo must be true (mono vocoders are not supported)",
                          label, where);
    int tanh_final;
    LTX2_TRY(opt_bool(ctx, g, "use_tanh_at_final", where, label, &tanh_final));
    out->tanh_at_final = tanh_final != 0; /* ltx-core default true: the 2.0 files rely on it */
    LTX2_TRY(opt_bool(ctx, g, "use_bias_at_final", where, label, &out->bias_at_final));
    out->final_activation = true;
    return LTX2_OK;
}

ltx2_status ltx2_vocoder_config_parse(ltx2_context *ctx, const ltx2_json *root, const char *label,
                                      ltx2_vocoder_config *out) {
    if (!root || !out || !label) return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "vocoder config: NULL argument");
    memset(out, 0, sizeof(*out));
    const ltx2_json *v = ltx2_json_get(root, "vocoder");
    if (!v || v->type != LTX2_JSON_OBJECT) return LTX2_ERROR(ctx, LTX2_ERR_FORMAT, "%s: no vocoder config object", label);
    const ltx2_json *bwe = ltx2_json_get(v, "bwe");
    if (!bwe) {
        LTX2_TRY(parse_gen(ctx, v, "vocoder", label, &out->main));
        if (out->main.amp)
            return LTX2_ERROR(ctx, LTX2_ERR_UNSUPPORTED, "%s: a flat vocoder config must use resblock \"1\"", label);
        /* ltx-core default 24000 when the key is absent (the 2.0 files carry it). */
        if (!ltx2_json_get_int(v, "output_sampling_rate", &out->main.sample_rate)) out->main.sample_rate = 24000;
        return LTX2_OK;
    }
    out->bwe = true;
    LTX2_TRY(parse_gen(ctx, ltx2_json_get(v, "vocoder"), "vocoder.vocoder", label, &out->main));
    LTX2_TRY(parse_gen(ctx, bwe, "vocoder.bwe", label, &out->bwe_gen));
    if (!out->main.amp || !out->bwe_gen.amp)
        return LTX2_ERROR(ctx, LTX2_ERR_UNSUPPORTED, "%s: BWE vocoders must use resblock \"AMP1\"", label);
    out->bwe_gen.final_activation = false; /* ltx-core builds the BWE generator without it */
    const char *w = "vocoder.bwe";
    LTX2_TRY(req_int(ctx, bwe, "input_sampling_rate", w, label, 1, &out->bwe_in_rate));
    LTX2_TRY(req_int(ctx, bwe, "output_sampling_rate", w, label, 1, &out->bwe_out_rate));
    LTX2_TRY(req_int(ctx, bwe, "hop_length", w, label, 1, &out->bwe_hop));
    LTX2_TRY(req_int(ctx, bwe, "n_fft", w, label, 2, &out->bwe_n_fft));
    LTX2_TRY(req_int(ctx, bwe, "num_mels", w, label, 1, &out->bwe_mels));
    if (out->bwe_out_rate % out->bwe_in_rate != 0)
        return LTX2_ERROR(ctx, LTX2_ERR_UNSUPPORTED, "%s: BWE rates %lld -> %lld are not an integer ratio", label,
                          (long long)out->bwe_in_rate, (long long)out->bwe_out_rate);
    if (out->bwe_n_fft < out->bwe_hop)
        return LTX2_ERROR(ctx, LTX2_ERR_FORMAT, "%s: BWE n_fft %lld < hop %lld", label, (long long)out->bwe_n_fft,
                          (long long)out->bwe_hop);
    out->main.sample_rate = out->bwe_in_rate;
    out->bwe_gen.sample_rate = out->bwe_out_rate;
    return LTX2_OK;
}

ltx2_status ltx2_audio_vae_config_from_file(ltx2_context *ctx, const ltx2_st_file *f, ltx2_audio_vae_config *out) {
    ltx2_json_doc *doc = NULL;
    LTX2_TRY(ltx2_st_meta_json(ctx, f, "config", "the audio architecture cannot be known", &doc));
    ltx2_status st = ltx2_audio_vae_config_parse(ctx, ltx2_json_root(doc), f->path, out);
    ltx2_json_free(doc);
    return st;
}

ltx2_status ltx2_vocoder_config_from_file(ltx2_context *ctx, const ltx2_st_file *f, ltx2_vocoder_config *out) {
    ltx2_json_doc *doc = NULL;
    LTX2_TRY(ltx2_st_meta_json(ctx, f, "config", "the audio architecture cannot be known", &doc));
    ltx2_status st = ltx2_vocoder_config_parse(ctx, ltx2_json_root(doc), f->path, out);
    ltx2_json_free(doc);
    return st;
}
