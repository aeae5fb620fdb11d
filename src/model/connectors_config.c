/* Parsing of the text connectors' configuration from the "transformer" config section, mirroring
 * ltx-core 1.0.0's Embeddings1DConnectorConfigurator, AudioEmbeddings1DConnectorConfigurator and
 * _create_feature_extractor (encoder_configurator.py). Every message names the source and key. */
#include <stdio.h>
#include <string.h>

#include "core/context.h"
#include "model/config_bounds.h"
#include "model/connectors.h"
#include "model/dit_config.h"

/* ltx-core's connector defaults (used when a key is absent, as it does). */
#define CONN_DEFAULT_HEADS 30
#define CONN_DEFAULT_HEAD_DIM 128
#define CONN_DEFAULT_LAYERS 2
/* Embeddings1DConnector's positional_embedding_theta default; the configurator never passes one. */
#define CONN_ROPE_THETA 10000.0

static ltx2_status opt_int(ltx2_context *ctx, const ltx2_json *o, const char *label, const char *key, int64_t dflt,
                           int64_t *out) {
    const ltx2_json *v = ltx2_json_get(o, key);
    if (!v) {
        *out = dflt;
        return LTX2_OK;
    }
    const int64_t max = strstr(key, "num_layers") ? LTX2_CONFIG_MAX_LAYERS : LTX2_CONFIG_MAX_DIM;
    if (v->type != LTX2_JSON_NUMBER || !v->is_int || v->integer <= 0 || v->integer > max)
        return LTX2_ERROR(ctx, LTX2_ERR_FORMAT, "%s: transformer config: \"%s\" must be an integer in [1, %lld]",
                          label, key, (long long)max);
    *out = v->integer;
    return LTX2_OK;
}

static ltx2_status opt_bool(ltx2_context *ctx, const ltx2_json *o, const char *label, const char *key, bool *out) {
    const ltx2_json *v = ltx2_json_get(o, key);
    *out = false;
    if (!v) return LTX2_OK;
    if (v->type != LTX2_JSON_BOOL)
        return LTX2_ERROR(ctx, LTX2_ERR_FORMAT, "%s: transformer config: \"%s\" must be true or false", label, key);
    *out = v->boolean;
    return LTX2_OK;
}

/* _create_feature_extractor: V1 when none of these keys exist, V2 when all have these values. */
static const struct {
    const char *key;
    bool value;
} k_v2_keys[] = {{"caption_proj_before_connector", true},
                 {"caption_projection_first_linear", false},
                 {"caption_proj_input_norm", false},
                 {"caption_projection_second_linear", false}};

static ltx2_status fe_version(ltx2_context *ctx, const ltx2_json *o, const char *label, ltx2_text_fe_version *out) {
    const size_t n = sizeof k_v2_keys / sizeof k_v2_keys[0];
    size_t present = 0;
    for (size_t i = 0; i < n; i++) present += ltx2_json_get(o, k_v2_keys[i].key) != NULL;
    if (present == 0) {
        *out = LTX2_TEXT_FE_V1;
        return LTX2_OK;
    }
    for (size_t i = 0; i < n; i++) {
        const ltx2_json *v = ltx2_json_get(o, k_v2_keys[i].key);
        if (!v)
            return LTX2_ERROR(ctx, LTX2_ERR_UNSUPPORTED,
                              "%s: transformer config: partial V2 text projection config, \"%s\" is missing", label,
                              k_v2_keys[i].key);
        if (v->type != LTX2_JSON_BOOL || v->boolean != k_v2_keys[i].value)
            return LTX2_ERROR(ctx, LTX2_ERR_UNSUPPORTED,
                              "%s: transformer config: \"%s\" must be %s for the V2 text projection", label,
                              k_v2_keys[i].key, k_v2_keys[i].value ? "true" : "false");
    }
    *out = LTX2_TEXT_FE_V2;
    return LTX2_OK;
}

ltx2_status ltx2_connectors_config_parse(ltx2_context *ctx, const ltx2_json *o, const char *label,
                                         ltx2_connectors_config *out) {
    if (!label) label = "checkpoint";
    if (!o || !out || o->type != LTX2_JSON_OBJECT)
        return LTX2_ERROR(ctx, LTX2_ERR_FORMAT, "%s: the \"transformer\" config section must be a JSON object",
                          label);
    ltx2_connectors_config c;
    memset(&c, 0, sizeof c);
    LTX2_TRY(fe_version(ctx, o, label, &c.fe));
    LTX2_TRY(opt_int(ctx, o, label, "connector_num_attention_heads", CONN_DEFAULT_HEADS, &c.video.heads));
    LTX2_TRY(opt_int(ctx, o, label, "connector_attention_head_dim", CONN_DEFAULT_HEAD_DIM, &c.video.head_dim));
    LTX2_TRY(opt_int(ctx, o, label, "connector_num_layers", CONN_DEFAULT_LAYERS, &c.video.num_layers));
    /* the audio connector falls back to the video values */
    LTX2_TRY(opt_int(ctx, o, label, "audio_connector_num_attention_heads", c.video.heads, &c.audio.heads));
    LTX2_TRY(opt_int(ctx, o, label, "audio_connector_attention_head_dim", c.video.head_dim, &c.audio.head_dim));
    LTX2_TRY(opt_int(ctx, o, label, "audio_connector_num_layers", c.video.num_layers, &c.audio.num_layers));
    LTX2_TRY(opt_bool(ctx, o, label, "connector_apply_gated_attention", &c.video.gated));
    c.audio.gated = c.video.gated;
    c.video.inner_dim = c.video.heads * c.video.head_dim;
    c.audio.inner_dim = c.audio.heads * c.audio.head_dim;
    if (c.video.head_dim % 2 || c.audio.head_dim % 2)
        return LTX2_ERROR(ctx, LTX2_ERR_UNSUPPORTED, "%s: transformer config: connector head dims must be even "
                          "(%lld, %lld)", label, (long long)c.video.head_dim, (long long)c.audio.head_dim);

    const ltx2_json *mp = ltx2_json_get(o, "connector_positional_embedding_max_pos");
    if (!mp)
        return LTX2_ERROR(ctx, LTX2_ERR_NOT_FOUND,
                          "%s: transformer config: missing \"connector_positional_embedding_max_pos\" (ltx-core "
                          "would silently use [1]; LTX-2 checkpoints say [4096])",
                          label);
    const ltx2_json *mp0 = mp->type == LTX2_JSON_ARRAY && mp->count == 1 ? ltx2_json_at(mp, 0) : NULL;
    if (!mp0 || mp0->type != LTX2_JSON_NUMBER || !(mp0->number > 0))
        return LTX2_ERROR(ctx, LTX2_ERR_FORMAT,
                          "%s: transformer config: \"connector_positional_embedding_max_pos\" must be a list of one "
                          "positive number",
                          label);
    c.max_pos = (float)mp0->number;
    c.rope_theta = CONN_ROPE_THETA;

    LTX2_TRY(ltx2_config_rope(ctx, o, label, " for the connectors", &c.rope_type, &c.rope_double_precision));
    if (c.fe == LTX2_TEXT_FE_V2) {
        int64_t h, d, ah, ad;
        LTX2_TRY(opt_int(ctx, o, label, "num_attention_heads", 0, &h));
        LTX2_TRY(opt_int(ctx, o, label, "attention_head_dim", 0, &d));
        LTX2_TRY(opt_int(ctx, o, label, "audio_num_attention_heads", 0, &ah));
        LTX2_TRY(opt_int(ctx, o, label, "audio_attention_head_dim", 0, &ad));
        if (!h || !d || !ah || !ad)
            return LTX2_ERROR(ctx, LTX2_ERR_NOT_FOUND,
                              "%s: transformer config: the V2 text projection needs num_attention_heads, "
                              "attention_head_dim, audio_num_attention_heads and audio_attention_head_dim",
                              label);
        c.dit_video_dim = h * d;
        c.dit_audio_dim = ah * ad;
        if (c.dit_video_dim != c.video.inner_dim || c.dit_audio_dim != c.audio.inner_dim)
            return LTX2_ERROR(ctx, LTX2_ERR_UNSUPPORTED,
                              "%s: transformer config: connector widths (video %lld, audio %lld) differ from the "
                              "DiT widths the V2 projection produces (%lld, %lld)",
                              label, (long long)c.video.inner_dim, (long long)c.audio.inner_dim,
                              (long long)c.dit_video_dim, (long long)c.dit_audio_dim);
    } else if (c.video.inner_dim != c.audio.inner_dim) {
        return LTX2_ERROR(ctx, LTX2_ERR_UNSUPPORTED,
                          "%s: transformer config: with the V1 text projection both connectors read the same "
                          "features, but their widths differ (video %lld, audio %lld)",
                          label, (long long)c.video.inner_dim, (long long)c.audio.inner_dim);
    }
    *out = c;
    return LTX2_OK;
}

ltx2_status ltx2_connectors_config_from_st(ltx2_context *ctx, const ltx2_st_file *f, ltx2_connectors_config *out) {
    ltx2_json_doc *doc = NULL;
    LTX2_TRY(ltx2_st_meta_json(ctx, f, "config", "an LTX-2 single-file checkpoint stores its model config there", &doc));
    const char *label = f->path ? f->path : "checkpoint";
    const ltx2_json *tr = ltx2_json_get(ltx2_json_root(doc), "transformer");
    ltx2_status st;
    if (!tr)
        st = LTX2_ERROR(ctx, LTX2_ERR_NOT_FOUND, "%s: metadata config has no \"transformer\" section", label);
    else
        st = ltx2_connectors_config_parse(ctx, tr, label, out);
    ltx2_json_free(doc);
    return st;
}
