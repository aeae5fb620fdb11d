/* Parser for the `vae` section of the LTX-2 metadata config (see vae_config.h). Key names and
 * per-role defaults follow ltx-core 1.0.0 model_configurator.py / video_vae.py
 * (_make_encoder_block, _make_decoder_block); deviations are deliberate and noted inline. */
#include "model/vae_config.h"

#include <string.h>

#include "core/context.h"
#include "model/config_bounds.h"

const char *ltx2_vae_block_name(ltx2_vae_block_kind k) {
    switch (k) {
    case LTX2_VAE_RES_X: return "res_x";
    case LTX2_VAE_RES_X_Y: return "res_x_y";
    case LTX2_VAE_ATTN_RES_X: return "attn_res_x";
    case LTX2_VAE_COMPRESS_TIME: return "compress_time";
    case LTX2_VAE_COMPRESS_SPACE: return "compress_space";
    case LTX2_VAE_COMPRESS_ALL: return "compress_all";
    case LTX2_VAE_COMPRESS_ALL_X_Y: return "compress_all_x_y";
    case LTX2_VAE_COMPRESS_TIME_RES: return "compress_time_res";
    case LTX2_VAE_COMPRESS_SPACE_RES: return "compress_space_res";
    case LTX2_VAE_COMPRESS_ALL_RES: return "compress_all_res";
    }
    return "?";
}

static bool str_eq(const ltx2_json *v, const char *s) {
    return v && v->type == LTX2_JSON_STRING && strlen(s) == v->str_len && memcmp(v->str, s, v->str_len) == 0;
}

static ltx2_status get_int(ltx2_context *ctx, const ltx2_json *obj, const char *key, int64_t dflt,
                           int64_t min, const char *label, int64_t *out) {
    const ltx2_json *v = ltx2_json_get(obj, key);
    if (!v) {
        *out = dflt;
        return LTX2_OK;
    }
    if (v->type != LTX2_JSON_NUMBER || !v->is_int || v->integer < min || v->integer > LTX2_CONFIG_MAX_DIM)
        return LTX2_ERROR(ctx, LTX2_ERR_FORMAT, "%s: vae.%s must be an integer in [%lld, %d]", label, key,
                          (long long)min, LTX2_CONFIG_MAX_DIM);
    *out = v->integer;
    return LTX2_OK;
}

static ltx2_status get_bool(ltx2_context *ctx, const ltx2_json *obj, const char *key, int dflt,
                            const char *label, int *out) {
    const ltx2_json *v = ltx2_json_get(obj, key);
    if (!v) {
        *out = dflt;
        return LTX2_OK;
    }
    if (v->type != LTX2_JSON_BOOL)
        return LTX2_ERROR(ctx, LTX2_ERR_FORMAT, "%s: %s must be true or false", label, key);
    *out = v->boolean ? 1 : 0;
    return LTX2_OK;
}

static ltx2_status parse_pad(ltx2_context *ctx, const ltx2_json *v, const char *key, const char *label,
                             ltx2_vae_pad *out) {
    if (str_eq(v, "zeros")) *out = LTX2_VAE_PAD_ZEROS;
    else if (str_eq(v, "reflect")) *out = LTX2_VAE_PAD_REFLECT;
    else
        return LTX2_ERROR(ctx, LTX2_ERR_UNSUPPORTED,
                          "%s: vae.%s must be \"zeros\" or \"reflect\" (replicate/circular are not used by LTX-2)",
                          label, key);
    return LTX2_OK;
}

typedef struct kind_name {
    const char *name;
    ltx2_vae_block_kind kind;
} kind_name;

static const kind_name k_kinds[] = {
    {"res_x", LTX2_VAE_RES_X},
    {"res_x_y", LTX2_VAE_RES_X_Y},
    {"attn_res_x", LTX2_VAE_ATTN_RES_X},
    {"compress_time", LTX2_VAE_COMPRESS_TIME},
    {"compress_space", LTX2_VAE_COMPRESS_SPACE},
    {"compress_all", LTX2_VAE_COMPRESS_ALL},
    {"compress_all_x_y", LTX2_VAE_COMPRESS_ALL_X_Y},
    {"compress_time_res", LTX2_VAE_COMPRESS_TIME_RES},
    {"compress_space_res", LTX2_VAE_COMPRESS_SPACE_RES},
    {"compress_all_res", LTX2_VAE_COMPRESS_ALL_RES},
};

/* ltx-core's multiplier default depends on the role: the decoder's compress_* divide channels
 * by `multiplier` defaulting to 1, the encoder's *_res / *_x_y multiply by it defaulting to 2. */
static int64_t default_multiplier(ltx2_vae_block_kind k) {
    switch (k) {
    case LTX2_VAE_COMPRESS_TIME: /* decoder: reduction factor 1; encoder: no multiplier at all */
    case LTX2_VAE_COMPRESS_SPACE:
    case LTX2_VAE_COMPRESS_ALL:
    case LTX2_VAE_RES_X:
    case LTX2_VAE_ATTN_RES_X: return 1;
    default: return 2; /* res_x_y, compress_all_x_y, compress_*_res */
    }
}

/* An absent list gives *n_out = -1: the loader of that half refuses it (ltx-core would build an
 * empty network from its [] default), while the other half stays usable. */
static ltx2_status parse_blocks(ltx2_context *ctx, const ltx2_json *vae, const char *key,
                                const char *label, ltx2_vae_block *blocks, int *n_out) {
    const ltx2_json *arr = ltx2_json_get(vae, key);
    *n_out = -1;
    if (!arr) return LTX2_OK;
    if (arr->type != LTX2_JSON_ARRAY)
        return LTX2_ERROR(ctx, LTX2_ERR_FORMAT, "%s: vae.%s must be a list", label, key);
    if (arr->count > LTX2_VAE_MAX_BLOCKS)
        return LTX2_ERROR(ctx, LTX2_ERR_FORMAT, "%s: vae.%s has %zu blocks, at most %d supported", label,
                          key, arr->count, LTX2_VAE_MAX_BLOCKS);
    for (size_t i = 0; i < arr->count; i++) {
        const ltx2_json *item = &arr->items[i];
        if (item->type != LTX2_JSON_ARRAY || item->count != 2 || item->items[0].type != LTX2_JSON_STRING)
            return LTX2_ERROR(ctx, LTX2_ERR_FORMAT, "%s: vae.%s[%zu] must be [\"name\", params]", label,
                              key, i);
        const ltx2_json *name = &item->items[0], *params = &item->items[1];
        ltx2_vae_block *b = &blocks[i];
        memset(b, 0, sizeof(*b));
        size_t k = 0;
        for (; k < sizeof(k_kinds) / sizeof(k_kinds[0]); k++)
            if (str_eq(name, k_kinds[k].name)) break;
        if (k == sizeof(k_kinds) / sizeof(k_kinds[0]))
            return LTX2_ERROR(ctx, LTX2_ERR_UNSUPPORTED, "%s: vae.%s[%zu]: unknown block \"%s\"", label, key,
                              i, name->str);
        b->kind = k_kinds[k].kind;
        b->multiplier = default_multiplier(b->kind);
        b->num_layers = 0;
        if (params->type == LTX2_JSON_NUMBER) { /* ltx-core: an int means {"num_layers": n} */
            if (!params->is_int || params->integer < 1 || params->integer > LTX2_CONFIG_MAX_LAYERS)
                return LTX2_ERROR(ctx, LTX2_ERR_FORMAT, "%s: vae.%s[%zu]: num_layers must be in [1, %d]", label,
                                  key, i, LTX2_CONFIG_MAX_LAYERS);
            b->num_layers = params->integer;
        } else if (params->type == LTX2_JSON_OBJECT) {
            int residual = 0, noise = 0;
            LTX2_TRY(get_int(ctx, params, "num_layers", 0, 1, label, &b->num_layers));
            LTX2_TRY(get_int(ctx, params, "multiplier", b->multiplier, 1, label, &b->multiplier));
            LTX2_TRY(get_bool(ctx, params, "residual", 0, label, &residual));
            LTX2_TRY(get_bool(ctx, params, "inject_noise", 0, label, &noise));
            b->residual = residual != 0;
            b->inject_noise = noise != 0;
        } else {
            return LTX2_ERROR(ctx, LTX2_ERR_FORMAT, "%s: vae.%s[%zu]: params must be an int or an object",
                              label, key, i);
        }
        if ((b->kind == LTX2_VAE_RES_X || b->kind == LTX2_VAE_ATTN_RES_X) && b->num_layers < 1)
            return LTX2_ERROR(ctx, LTX2_ERR_FORMAT, "%s: vae.%s[%zu] (%s) needs num_layers >= 1", label,
                              key, i, ltx2_vae_block_name(b->kind));
    }
    *n_out = (int)arr->count;
    return LTX2_OK;
}

ltx2_status ltx2_vae_config_parse(ltx2_context *ctx, const ltx2_json *root, const char *label,
                                  ltx2_vae_config *out) {
    if (!root || !out) return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "vae config: NULL argument");
    if (!label) label = "config";
    memset(out, 0, sizeof(*out));
    const ltx2_json *vae = ltx2_json_get(root, "vae");
    if (!vae || vae->type != LTX2_JSON_OBJECT)
        return LTX2_ERROR(ctx, LTX2_ERR_NOT_FOUND, "%s: no \"vae\" object in the config", label);
    const ltx2_json *cls = ltx2_json_get(vae, "_class_name");
    if (cls && !str_eq(cls, "CausalVideoAutoencoder"))
        return LTX2_ERROR(ctx, LTX2_ERR_UNSUPPORTED,
                          "%s: vae._class_name \"%s\" is not CausalVideoAutoencoder (the LTX-2.5 diffusion "
                          "decoder is not supported)",
                          label, cls->type == LTX2_JSON_STRING ? cls->str : "?");
    LTX2_TRY(get_int(ctx, vae, "dims", 3, 1, label, &out->dims));
    if (out->dims != 3)
        return LTX2_ERROR(ctx, LTX2_ERR_UNSUPPORTED, "%s: vae.dims %lld: only 3-D VAEs are supported", label,
                          (long long)out->dims);
    LTX2_TRY(get_int(ctx, vae, "in_channels", 3, 1, label, &out->in_channels));
    LTX2_TRY(get_int(ctx, vae, "out_channels", 3, 1, label, &out->out_channels));
    LTX2_TRY(get_int(ctx, vae, "latent_channels", 128, 1, label, &out->latent_channels));
    LTX2_TRY(get_int(ctx, vae, "patch_size", 4, 1, label, &out->patch_size));
    LTX2_TRY(get_int(ctx, vae, "decoder_base_channels", 128, 1, label, &out->decoder_base_channels));

    const ltx2_json *norm = ltx2_json_get(vae, "norm_layer");
    if (norm && !str_eq(norm, "pixel_norm"))
        return LTX2_ERROR(ctx, LTX2_ERR_UNSUPPORTED, "%s: vae.norm_layer must be \"pixel_norm\" (LTX-2)", label);
    const ltx2_json *lv = ltx2_json_get(vae, "latent_log_var");
    if (!lv || str_eq(lv, "uniform")) out->latent_log_var = LTX2_VAE_LOGVAR_UNIFORM;
    else if (str_eq(lv, "per_channel")) out->latent_log_var = LTX2_VAE_LOGVAR_PER_CHANNEL;
    else if (str_eq(lv, "constant")) out->latent_log_var = LTX2_VAE_LOGVAR_CONSTANT;
    else if (str_eq(lv, "none")) out->latent_log_var = LTX2_VAE_LOGVAR_NONE;
    else return LTX2_ERROR(ctx, LTX2_ERR_FORMAT, "%s: vae.latent_log_var: unknown value", label);

    int causal = 0;
    LTX2_TRY(get_bool(ctx, vae, "causal_decoder", 0, label, &causal));
    out->causal_decoder = causal != 0;
    /* ltx-core defaults this to true; -1 lets the loader decide from the tensors present. */
    LTX2_TRY(get_bool(ctx, vae, "timestep_conditioning", -1, label, &out->timestep_conditioning));

    /* Padding: ltx-core 1.0.0 reads only `spatial_padding_mode` (encoder default zeros, decoder
     * default reflect). The first release read `encoder_/decoder_spatial_padding_mode`; a file
     * that only has those meant them, so they are honoured as the fallback. */
    const ltx2_json *sp = ltx2_json_get(vae, "spatial_padding_mode");
    const ltx2_json *ep = ltx2_json_get(vae, "encoder_spatial_padding_mode");
    const ltx2_json *dp = ltx2_json_get(vae, "decoder_spatial_padding_mode");
    out->encoder_padding = LTX2_VAE_PAD_ZEROS;
    out->decoder_padding = LTX2_VAE_PAD_REFLECT;
    if (sp) {
        LTX2_TRY(parse_pad(ctx, sp, "spatial_padding_mode", label, &out->encoder_padding));
        out->decoder_padding = out->encoder_padding;
    } else {
        if (ep) LTX2_TRY(parse_pad(ctx, ep, "encoder_spatial_padding_mode", label, &out->encoder_padding));
        if (dp) LTX2_TRY(parse_pad(ctx, dp, "decoder_spatial_padding_mode", label, &out->decoder_padding));
    }

    LTX2_TRY(parse_blocks(ctx, vae, "encoder_blocks", label, out->encoder_blocks, &out->n_encoder_blocks));
    LTX2_TRY(parse_blocks(ctx, vae, "decoder_blocks", label, out->decoder_blocks, &out->n_decoder_blocks));
    return LTX2_OK;
}

ltx2_status ltx2_vae_config_from_file(ltx2_context *ctx, const ltx2_st_file *f, ltx2_vae_config *out) {
    if (!f || !out) return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "vae config: NULL argument");
    ltx2_json_doc *doc = NULL;
    LTX2_TRY(ltx2_st_meta_json(ctx, f, "config", "the VAE architecture cannot be known", &doc));
    ltx2_status st = ltx2_vae_config_parse(ctx, ltx2_json_root(doc), f->path, out);
    ltx2_json_free(doc);
    return st;
}
