/* Gemma-3 config.json parsing with transformers' Gemma3TextConfig defaults (5.23: the old keys
 * rope_theta / rope_local_base_freq / rope_scaling / sliding_window_pattern as Google ships them,
 * and the newer rope_parameters / layer_types). What the forward does not implement (logit
 * soft-capping, bidirectional attention, other RoPE types, biases) is refused by key. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/file.h"
#include "model/gemma.h"

/* Gemma3TextConfig's defaults for keys a config.json may omit. */
static const struct {
    const char *key;
    int64_t value;
} k_int_defaults[] = {{"vocab_size", 262208},       {"hidden_size", 2304},        {"intermediate_size", 9216},
                      {"num_hidden_layers", 26},    {"num_attention_heads", 8},   {"num_key_value_heads", 4},
                      {"head_dim", 256},            {"sliding_window", 4096},     {"sliding_window_pattern", 6}};
#define GEMMA_DEFAULT_EPS 1e-6
#define GEMMA_DEFAULT_QPAS 256.0
#define GEMMA_DEFAULT_THETA 1000000.0
#define GEMMA_DEFAULT_LOCAL_THETA 10000.0

static int64_t int_default(const char *key) {
    for (size_t i = 0; i < sizeof k_int_defaults / sizeof k_int_defaults[0]; i++)
        if (strcmp(k_int_defaults[i].key, key) == 0) return k_int_defaults[i].value;
    return 0;
}

static ltx2_status get_int(ltx2_context *ctx, const ltx2_json *o, const char *label, const char *key, int64_t max,
                           int64_t *out) {
    const ltx2_json *v = ltx2_json_get(o, key);
    if (!v || v->type == LTX2_JSON_NULL) {
        *out = int_default(key);
        return LTX2_OK;
    }
    if (v->type != LTX2_JSON_NUMBER || !v->is_int || v->integer <= 0 || v->integer > max)
        return LTX2_ERROR(ctx, LTX2_ERR_FORMAT, "%s: \"%s\" must be an integer in [1, %lld]", label, key,
                          (long long)max);
    *out = v->integer;
    return LTX2_OK;
}

static ltx2_status get_num(ltx2_context *ctx, const ltx2_json *o, const char *label, const char *key, double dflt,
                           double *out) {
    const ltx2_json *v = ltx2_json_get(o, key);
    if (!v || v->type == LTX2_JSON_NULL) {
        *out = dflt;
        return LTX2_OK;
    }
    double d;
    if (!ltx2_json_get_num(o, key, &d) || !(d > 0))
        return LTX2_ERROR(ctx, LTX2_ERR_FORMAT, "%s: \"%s\" must be a positive number", label, key);
    *out = d;
    return LTX2_OK;
}

/* A key that must be absent, null or false (a feature the forward does not have). */
static ltx2_status refuse_set(ltx2_context *ctx, const ltx2_json *o, const char *label, const char *key,
                              const char *what) {
    const ltx2_json *v = ltx2_json_get(o, key);
    if (!v || v->type == LTX2_JSON_NULL || (v->type == LTX2_JSON_BOOL && !v->boolean)) return LTX2_OK;
    return LTX2_ERROR(ctx, LTX2_ERR_UNSUPPORTED, "%s: \"%s\" is set: %s is not implemented", label, key, what);
}

/* One RoPE parameter object: {"rope_type": "default"|"linear", "factor", "rope_theta"}. */
static ltx2_status rope_params(ltx2_context *ctx, const ltx2_json *p, const char *label, const char *where,
                               double *theta, double *factor) {
    if (!p || p->type == LTX2_JSON_NULL) return LTX2_OK;
    if (p->type != LTX2_JSON_OBJECT)
        return LTX2_ERROR(ctx, LTX2_ERR_FORMAT, "%s: \"%s\" must be an object", label, where);
    const char *type = ltx2_json_get_str(p, "rope_type");
    if (!type) type = ltx2_json_get_str(p, "type");
    if (type && strcmp(type, "default") != 0 && strcmp(type, "linear") != 0)
        return LTX2_ERROR(ctx, LTX2_ERR_UNSUPPORTED, "%s: %s rope_type \"%s\" (supported: default, linear)", label,
                          where, type);
    if (type && strcmp(type, "linear") == 0) {
        if (!factor)
            return LTX2_ERROR(ctx, LTX2_ERR_UNSUPPORTED, "%s: %s: linear RoPE scaling on local layers", label, where);
        LTX2_TRY(get_num(ctx, p, label, "factor", 1.0, factor));
    }
    return get_num(ctx, p, label, "rope_theta", *theta, theta);
}

ltx2_status ltx2_gemma_config_parse(ltx2_context *ctx, const ltx2_json *root, const char *label,
                                    ltx2_gemma_config *out) {
    memset(out, 0, sizeof *out);
    if (!root || root->type != LTX2_JSON_OBJECT)
        return LTX2_ERROR(ctx, LTX2_ERR_FORMAT, "%s: a Gemma config must be a JSON object", label);
    const char *mt = ltx2_json_get_str(root, "model_type");
    const ltx2_json *o = root;
    if (mt && strcmp(mt, "gemma3") == 0) {
        o = ltx2_json_get(root, "text_config");
        if (!o || o->type != LTX2_JSON_OBJECT)
            return LTX2_ERROR(ctx, LTX2_ERR_FORMAT, "%s: a gemma3 config without a \"text_config\" object", label);
        mt = ltx2_json_get_str(o, "model_type");
        if (mt && strcmp(mt, "gemma3_text") != 0)
            return LTX2_ERROR(ctx, LTX2_ERR_UNSUPPORTED, "%s: text_config model_type \"%s\" (expected gemma3_text)",
                              label, mt);
    } else if (!mt || strcmp(mt, "gemma3_text") != 0) {
        return LTX2_ERROR(ctx, LTX2_ERR_UNSUPPORTED,
                          "%s: model_type \"%s\": not a Gemma-3 checkpoint (expected gemma3 or gemma3_text)", label,
                          mt ? mt : "(none)");
    }
    ltx2_gemma_config c = {0};
    int64_t pattern = 0;
    LTX2_TRY(get_int(ctx, o, label, "vocab_size", LTX2_GEMMA_MAX_VOCAB, &c.vocab));
    LTX2_TRY(get_int(ctx, o, label, "hidden_size", LTX2_GEMMA_MAX_DIM, &c.hidden));
    LTX2_TRY(get_int(ctx, o, label, "intermediate_size", 8 * LTX2_GEMMA_MAX_DIM, &c.ffn));
    LTX2_TRY(get_int(ctx, o, label, "num_hidden_layers", LTX2_GEMMA_MAX_LAYERS, &c.layers));
    LTX2_TRY(get_int(ctx, o, label, "num_attention_heads", 1024, &c.heads));
    LTX2_TRY(get_int(ctx, o, label, "num_key_value_heads", 1024, &c.kv_heads));
    LTX2_TRY(get_int(ctx, o, label, "head_dim", 4096, &c.head_dim));
    LTX2_TRY(get_int(ctx, o, label, "sliding_window", INT32_MAX, &c.sliding_window));
    LTX2_TRY(get_int(ctx, o, label, "sliding_window_pattern", LTX2_GEMMA_MAX_LAYERS + 1, &pattern));
    LTX2_TRY(get_num(ctx, o, label, "rms_norm_eps", GEMMA_DEFAULT_EPS, &c.eps));
    LTX2_TRY(get_num(ctx, o, label, "query_pre_attn_scalar", GEMMA_DEFAULT_QPAS, &c.query_pre_attn_scalar));
    if (c.heads % c.kv_heads != 0 || c.head_dim % 2 != 0)
        return LTX2_ERROR(ctx, LTX2_ERR_FORMAT,
                          "%s: %lld attention heads must be a multiple of %lld key/value heads, head_dim %lld even",
                          label, (long long)c.heads, (long long)c.kv_heads, (long long)c.head_dim);
    const char *act = ltx2_json_get_str(o, "hidden_activation");
    if (act && strcmp(act, "gelu_pytorch_tanh") != 0)
        return LTX2_ERROR(ctx, LTX2_ERR_UNSUPPORTED, "%s: hidden_activation \"%s\" (supported: gelu_pytorch_tanh)",
                          label, act);
    LTX2_TRY(refuse_set(ctx, o, label, "attn_logit_softcapping", "attention logit soft-capping"));
    LTX2_TRY(refuse_set(ctx, o, label, "use_bidirectional_attention", "bidirectional attention"));
    LTX2_TRY(refuse_set(ctx, o, label, "attention_bias", "attention projection bias"));

    /* RoPE: the old keys, overridden by rope_parameters where present (as convert_rope_params_to_dict) */
    c.rope_theta = GEMMA_DEFAULT_THETA;
    c.rope_local_theta = GEMMA_DEFAULT_LOCAL_THETA;
    c.rope_linear_factor = 1.0;
    LTX2_TRY(get_num(ctx, o, label, "rope_theta", GEMMA_DEFAULT_THETA, &c.rope_theta));
    LTX2_TRY(get_num(ctx, o, label, "rope_local_base_freq", GEMMA_DEFAULT_LOCAL_THETA, &c.rope_local_theta));
    LTX2_TRY(rope_params(ctx, ltx2_json_get(o, "rope_scaling"), label, "rope_scaling", &c.rope_theta,
                         &c.rope_linear_factor));
    const ltx2_json *rp = ltx2_json_get(o, "rope_parameters");
    if (rp && rp->type == LTX2_JSON_OBJECT) {
        LTX2_TRY(rope_params(ctx, ltx2_json_get(rp, "full_attention"), label, "rope_parameters.full_attention",
                             &c.rope_theta, &c.rope_linear_factor));
        LTX2_TRY(rope_params(ctx, ltx2_json_get(rp, "sliding_attention"), label,
                             "rope_parameters.sliding_attention", &c.rope_local_theta, NULL));
    }

    /* layer types: the explicit list, else every pattern-th layer global */
    const ltx2_json *lt = ltx2_json_get(o, "layer_types");
    if (lt && lt->type != LTX2_JSON_NULL) {
        if (lt->type != LTX2_JSON_ARRAY || (int64_t)lt->count != c.layers)
            return LTX2_ERROR(ctx, LTX2_ERR_FORMAT, "%s: \"layer_types\" must be a list of %lld entries", label,
                              (long long)c.layers);
        for (int64_t i = 0; i < c.layers; i++) {
            const ltx2_json *e = ltx2_json_at(lt, (size_t)i);
            const char *s = e && e->type == LTX2_JSON_STRING ? e->str : NULL;
            if (!s || (strcmp(s, "sliding_attention") != 0 && strcmp(s, "full_attention") != 0))
                return LTX2_ERROR(ctx, LTX2_ERR_FORMAT,
                                  "%s: layer_types[%lld] must be \"sliding_attention\" or \"full_attention\"", label,
                                  (long long)i);
            c.sliding[i] = strcmp(s, "sliding_attention") == 0;
        }
    } else {
        for (int64_t i = 0; i < c.layers; i++) c.sliding[i] = (i + 1) % pattern != 0;
    }
    *out = c;
    return LTX2_OK;
}

ltx2_status ltx2_gemma_config_load(ltx2_context *ctx, const char *dir, ltx2_gemma_config *out) {
    char *path = ltx2_path_join(dir, "config.json");
    if (!path) return LTX2_ERROR(ctx, LTX2_ERR_OOM, "Gemma config path");
    ltx2_json_doc *doc = NULL;
    ltx2_status st = ltx2_json_parse_file(ctx, path, &doc);
    if (st == LTX2_OK) st = ltx2_gemma_config_parse(ctx, ltx2_json_root(doc), path, out);
    ltx2_json_free(doc);
    free(path);
    return st;
}
