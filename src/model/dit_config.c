/* Parsing and validation of the DiT's "transformer" config section; every message names the
 * source and the key. */
#include "model/dit_config.h"
#include "model/config_bounds.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/context.h"

/* A positive integer up to the bound of its kind: num_layers LTX2_CONFIG_MAX_LAYERS, every other
 * count or width LTX2_CONFIG_MAX_DIM, refused before anything is sized from it. */
static ltx2_status req_int(ltx2_context *ctx, const ltx2_json *o, const char *label, const char *key,
                           int64_t *out) {
    const ltx2_json *v = ltx2_json_get(o, key);
    if (!v) return LTX2_ERROR(ctx, LTX2_ERR_NOT_FOUND, "%s: transformer config: missing \"%s\"", label, key);
    const int64_t max = strcmp(key, "num_layers") == 0 ? LTX2_CONFIG_MAX_LAYERS : LTX2_CONFIG_MAX_DIM;
    if (v->type != LTX2_JSON_NUMBER || !v->is_int || v->integer <= 0 || v->integer > max)
        return LTX2_ERROR(ctx, LTX2_ERR_FORMAT, "%s: transformer config: \"%s\" must be an integer in [1, %lld]",
                          label, key, (long long)max);
    *out = v->integer;
    return LTX2_OK;
}

static ltx2_status req_num(ltx2_context *ctx, const ltx2_json *o, const char *label, const char *key,
                           double *out) {
    const ltx2_json *v = ltx2_json_get(o, key);
    if (!v) return LTX2_ERROR(ctx, LTX2_ERR_NOT_FOUND, "%s: transformer config: missing \"%s\"", label, key);
    if (v->type != LTX2_JSON_NUMBER || !(v->number > 0) || !isfinite(v->number))
        return LTX2_ERROR(ctx, LTX2_ERR_FORMAT, "%s: transformer config: \"%s\" must be a positive number", label,
                          key);
    *out = v->number;
    return LTX2_OK;
}

/* Flags whose absence means false in the real LTX-2.0 metadata (the 2.3 features). */
static ltx2_status opt_bool(ltx2_context *ctx, const ltx2_json *o, const char *label, const char *key,
                            bool *out) {
    const ltx2_json *v = ltx2_json_get(o, key);
    *out = false;
    if (!v) return LTX2_OK;
    if (v->type != LTX2_JSON_BOOL)
        return LTX2_ERROR(ctx, LTX2_ERR_FORMAT, "%s: transformer config: \"%s\" must be true or false", label, key);
    *out = v->boolean;
    return LTX2_OK;
}

static ltx2_status req_pos_list(ltx2_context *ctx, const ltx2_json *o, const char *label, const char *key,
                                size_t n, float *out) {
    const ltx2_json *v = ltx2_json_get(o, key);
    if (!v) return LTX2_ERROR(ctx, LTX2_ERR_NOT_FOUND, "%s: transformer config: missing \"%s\"", label, key);
    if (v->type != LTX2_JSON_ARRAY || v->count != n)
        return LTX2_ERROR(ctx, LTX2_ERR_FORMAT, "%s: transformer config: \"%s\" must be a list of %zu numbers",
                          label, key, n);
    for (size_t i = 0; i < n; i++) {
        const ltx2_json *e = ltx2_json_at(v, i);
        if (e->type != LTX2_JSON_NUMBER || !(e->number > 0))
            return LTX2_ERROR(ctx, LTX2_ERR_FORMAT, "%s: transformer config: \"%s\"[%zu] must be a positive number",
                              label, key, i);
        out[i] = (float)e->number;
    }
    return LTX2_OK;
}

/* The values ltx-core's check_config_value insists on (it refuses a missing key too). */
typedef enum expect_kind { EXPECT_NUM, EXPECT_BOOL, EXPECT_STR, EXPECT_NULL } expect_kind;
typedef struct expect_value {
    const char *key;
    expect_kind kind;
    double num;
    bool boolean;
    const char *str;
} expect_value;

static const expect_value k_fixed[] = {
    {"dropout", EXPECT_NUM, 0.0, false, NULL},
    {"attention_bias", EXPECT_BOOL, 0, true, NULL},
    {"num_vector_embeds", EXPECT_NULL, 0, false, NULL},
    {"activation_fn", EXPECT_STR, 0, false, "gelu-approximate"},
    {"num_embeds_ada_norm", EXPECT_NUM, 1000.0, false, NULL},
    {"use_linear_projection", EXPECT_BOOL, 0, false, NULL},
    {"only_cross_attention", EXPECT_BOOL, 0, false, NULL},
    {"cross_attention_norm", EXPECT_BOOL, 0, true, NULL},
    {"double_self_attention", EXPECT_BOOL, 0, false, NULL},
    {"upcast_attention", EXPECT_BOOL, 0, false, NULL},
    {"standardization_norm", EXPECT_STR, 0, false, "rms_norm"},
    {"norm_elementwise_affine", EXPECT_BOOL, 0, false, NULL},
    {"qk_norm", EXPECT_STR, 0, false, "rms_norm"},
    {"positional_embedding_type", EXPECT_STR, 0, false, "rope"},
    {"use_audio_video_cross_attention", EXPECT_BOOL, 0, true, NULL},
    {"share_ff", EXPECT_BOOL, 0, false, NULL},
    {"av_cross_ada_norm", EXPECT_BOOL, 0, true, NULL},
    {"use_middle_indices_grid", EXPECT_BOOL, 0, true, NULL},
};

static ltx2_status check_fixed(ltx2_context *ctx, const ltx2_json *o, const char *label) {
    for (size_t i = 0; i < sizeof(k_fixed) / sizeof(k_fixed[0]); i++) {
        const expect_value *e = &k_fixed[i];
        const ltx2_json *v = ltx2_json_get(o, e->key);
        bool ok = false;
        if (v) {
            switch (e->kind) {
            case EXPECT_NUM: ok = v->type == LTX2_JSON_NUMBER && v->number == e->num; break;
            case EXPECT_BOOL: ok = v->type == LTX2_JSON_BOOL && v->boolean == e->boolean; break;
            case EXPECT_STR: ok = v->type == LTX2_JSON_STRING && strcmp(v->str, e->str) == 0; break;
            case EXPECT_NULL: ok = v->type == LTX2_JSON_NULL; break;
            }
        }
        if (!ok) {
            char want[64];
            switch (e->kind) {
            case EXPECT_NUM: snprintf(want, sizeof want, "%g", e->num); break;
            case EXPECT_BOOL: snprintf(want, sizeof want, "%s", e->boolean ? "true" : "false"); break;
            case EXPECT_STR: snprintf(want, sizeof want, "\"%s\"", e->str); break;
            case EXPECT_NULL: snprintf(want, sizeof want, "null"); break;
            }
            return LTX2_ERROR(ctx, v ? LTX2_ERR_UNSUPPORTED : LTX2_ERR_NOT_FOUND,
                              "%s: transformer config: \"%s\" must be %s (%s); this architecture is the only one "
                              "LTX-2 defines",
                              label, e->key, want, v ? "it has another value" : "it is missing");
        }
    }
    return LTX2_OK;
}

/* rope_type and frequencies_precision are required: ltx-core's defaults ("interleaved", float32)
 * are wrong for every LTX-2 checkpoint, for the DiT and the connectors alike. */
ltx2_status ltx2_config_rope(ltx2_context *ctx, const ltx2_json *o, const char *label, const char *what,
                             ltx2_rope_type *type, bool *double_precision) {
    const char *rope = ltx2_json_get_str(o, "rope_type");
    if (!rope)
        return LTX2_ERROR(ctx, LTX2_ERR_NOT_FOUND,
                          "%s: transformer config: missing string \"rope_type\" (ltx-core would silently use "
                          "\"interleaved\"%s; LTX-2 checkpoints are \"split\")",
                          label, what);
    if (strcmp(rope, "split") == 0) *type = LTX2_ROPE_SPLIT;
    else if (strcmp(rope, "interleaved") == 0) *type = LTX2_ROPE_INTERLEAVED;
    else
        return LTX2_ERROR(ctx, LTX2_ERR_FORMAT,
                          "%s: transformer config: \"rope_type\" is \"%s\", expected \"split\" or \"interleaved\"",
                          label, rope);
    const char *prec = ltx2_json_get_str(o, "frequencies_precision");
    if (!prec)
        return LTX2_ERROR(ctx, LTX2_ERR_NOT_FOUND,
                          "%s: transformer config: missing string \"frequencies_precision\" (ltx-core would "
                          "silently use float32%s; LTX-2 checkpoints say \"float64\")",
                          label, what);
    if (strcmp(prec, "float64") == 0) *double_precision = true;
    else if (strcmp(prec, "float32") == 0) *double_precision = false;
    else
        return LTX2_ERROR(ctx, LTX2_ERR_FORMAT,
                          "%s: transformer config: \"frequencies_precision\" is \"%s\", expected \"float64\" or "
                          "\"float32\"",
                          label, prec);
    return LTX2_OK;
}

ltx2_status ltx2_dit_config_parse(ltx2_context *ctx, const ltx2_json *o, const char *label,
                                  ltx2_dit_config *out) {
    if (!label) label = "checkpoint";
    if (!o || !out || o->type != LTX2_JSON_OBJECT)
        return LTX2_ERROR(ctx, LTX2_ERR_FORMAT, "%s: the \"transformer\" config section must be a JSON object",
                          label);
    ltx2_dit_config c;
    memset(&c, 0, sizeof c);
    LTX2_TRY(check_fixed(ctx, o, label));
    LTX2_TRY(req_int(ctx, o, label, "num_layers", &c.num_layers));
    LTX2_TRY(req_int(ctx, o, label, "num_attention_heads", &c.heads));
    LTX2_TRY(req_int(ctx, o, label, "attention_head_dim", &c.head_dim));
    LTX2_TRY(req_int(ctx, o, label, "audio_num_attention_heads", &c.audio_heads));
    LTX2_TRY(req_int(ctx, o, label, "audio_attention_head_dim", &c.audio_head_dim));
    LTX2_TRY(req_int(ctx, o, label, "in_channels", &c.in_channels));
    LTX2_TRY(req_int(ctx, o, label, "out_channels", &c.out_channels));
    LTX2_TRY(req_int(ctx, o, label, "audio_out_channels", &c.audio_out_channels));
    LTX2_TRY(req_int(ctx, o, label, "cross_attention_dim", &c.cross_attention_dim));
    LTX2_TRY(req_int(ctx, o, label, "audio_cross_attention_dim", &c.audio_cross_attention_dim));
    if (ltx2_json_get(o, "audio_in_channels"))
        LTX2_TRY(req_int(ctx, o, label, "audio_in_channels", &c.audio_in_channels));
    double d;
    LTX2_TRY(req_num(ctx, o, label, "norm_eps", &d));
    c.norm_eps = (float)d;
    LTX2_TRY(req_num(ctx, o, label, "positional_embedding_theta", &c.rope_theta));
    LTX2_TRY(req_num(ctx, o, label, "timestep_scale_multiplier", &d));
    c.timestep_scale_multiplier = (float)d;
    LTX2_TRY(req_num(ctx, o, label, "av_ca_timestep_scale_multiplier", &d));
    c.av_ca_timestep_scale_multiplier = (float)d;
    LTX2_TRY(req_pos_list(ctx, o, label, "positional_embedding_max_pos", 3, c.max_pos));
    LTX2_TRY(req_pos_list(ctx, o, label, "audio_positional_embedding_max_pos", 1, &c.audio_max_pos));

    LTX2_TRY(ltx2_config_rope(ctx, o, label, "", &c.rope_type, &c.rope_double_precision));

    LTX2_TRY(opt_bool(ctx, o, label, "apply_gated_attention", &c.apply_gated_attention));
    LTX2_TRY(opt_bool(ctx, o, label, "cross_attention_adaln", &c.cross_attention_adaln));
    bool before = false;
    LTX2_TRY(opt_bool(ctx, o, label, "caption_proj_before_connector", &before));
    c.caption_projection = !before;
    if (c.caption_projection) LTX2_TRY(req_int(ctx, o, label, "caption_channels", &c.caption_channels));
    c.adaln_rows = c.cross_attention_adaln ? LTX2_DIT_ADALN_CROSS : LTX2_DIT_ADALN_BASE;
    c.inner_dim = c.heads * c.head_dim;
    c.audio_inner_dim = c.audio_heads * c.audio_head_dim;

    /* Consistency the block structure needs (spec 1.2). */
    if (c.heads != c.audio_heads)
        return LTX2_ERROR(ctx, LTX2_ERR_UNSUPPORTED,
                          "%s: transformer config: num_attention_heads (%lld) != audio_num_attention_heads (%lld); "
                          "the A/V cross-attention RoPE needs them equal",
                          label, (long long)c.heads, (long long)c.audio_heads);
    if (c.head_dim % 2 || c.audio_head_dim % 2)
        return LTX2_ERROR(ctx, LTX2_ERR_UNSUPPORTED, "%s: transformer config: head dims must be even (%lld, %lld)",
                          label, (long long)c.head_dim, (long long)c.audio_head_dim);
    if (c.cross_attention_dim != c.inner_dim)
        return LTX2_ERROR(ctx, LTX2_ERR_UNSUPPORTED,
                          "%s: transformer config: cross_attention_dim %lld != video inner dim %lld (heads x "
                          "head_dim)",
                          label, (long long)c.cross_attention_dim, (long long)c.inner_dim);
    if (c.audio_cross_attention_dim != c.audio_inner_dim)
        return LTX2_ERROR(ctx, LTX2_ERR_UNSUPPORTED,
                          "%s: transformer config: audio_cross_attention_dim %lld != audio inner dim %lld",
                          label, (long long)c.audio_cross_attention_dim, (long long)c.audio_inner_dim);
    if (c.rope_type == LTX2_ROPE_SPLIT && c.inner_dim / 6 < 2)
        return LTX2_ERROR(ctx, LTX2_ERR_UNSUPPORTED, "%s: transformer config: video inner dim %lld too small for "
                          "3-axis RoPE", label, (long long)c.inner_dim);
    *out = c;
    return LTX2_OK;
}

ltx2_status ltx2_dit_config_from_st(ltx2_context *ctx, const ltx2_st_file *f, ltx2_dit_config *out) {
    ltx2_json_doc *doc = NULL;
    LTX2_TRY(ltx2_st_meta_json(ctx, f, "config", "an LTX-2 single-file checkpoint stores its model config there", &doc));
    const char *label = f->path ? f->path : "checkpoint";
    const ltx2_json *tr = ltx2_json_get(ltx2_json_root(doc), "transformer");
    ltx2_status st;
    if (!tr)
        st = LTX2_ERROR(ctx, LTX2_ERR_NOT_FOUND, "%s: metadata config has no \"transformer\" section", label);
    else
        st = ltx2_dit_config_parse(ctx, tr, label, out);
    ltx2_json_free(doc);
    return st;
}
