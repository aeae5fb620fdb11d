/* Key-prefix and config rules that tell LTX-2 checkpoints apart (see spec/ltx2_dit_spec.md 2.1 and
 * spec/ltx2_vae_audio_spec.md 2.1). The rules are deliberately conservative: a file is called
 * LTX-2 only when its keys carry the Lightricks prefixes. */
#include "model/detect.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

const char *ltx2_component_name(ltx2_component c) {
    static const char *const names[LTX2_COMP_COUNT] = {
        "transformer", "connectors", "text_projection", "video_vae",
        "audio_vae",   "vocoder",    "upsampler",       "other"};
    return (unsigned)c < LTX2_COMP_COUNT ? names[c] : "?";
}

const char *ltx2_model_version_name(ltx2_model_version v) {
    switch (v) {
    case LTX2_MODEL_2_0: return "LTX-2.0";
    case LTX2_MODEL_2_3: return "LTX-2.3";
    default: return "unknown";
    }
}

static bool starts_with(const char *s, const char *prefix) {
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

#define DIT_PREFIX "model.diffusion_model."

ltx2_component ltx2_component_of_key(const char *name) {
    if (starts_with(name, DIT_PREFIX)) {
        const char *rest = name + strlen(DIT_PREFIX);
        if (starts_with(rest, "video_embeddings_connector.") ||
            starts_with(rest, "audio_embeddings_connector."))
            return LTX2_COMP_CONNECTORS;
        if (starts_with(rest, "text_embedding_projection.")) return LTX2_COMP_TEXT_PROJECTION;
        return LTX2_COMP_TRANSFORMER;
    }
    if (starts_with(name, "text_embedding_projection.")) return LTX2_COMP_TEXT_PROJECTION;
    if (starts_with(name, "audio_vae.")) return LTX2_COMP_AUDIO_VAE;
    if (starts_with(name, "vae.")) return LTX2_COMP_VIDEO_VAE;
    if (starts_with(name, "vocoder.")) return LTX2_COMP_VOCODER;
    /* Split VAE files and upsamplers have unprefixed keys. */
    if (starts_with(name, "encoder.") || starts_with(name, "decoder.") ||
        starts_with(name, "per_channel_statistics."))
        return LTX2_COMP_VIDEO_VAE;
    if (starts_with(name, "initial_conv.") || starts_with(name, "initial_norm.") ||
        starts_with(name, "res_blocks.") || starts_with(name, "final_conv.") ||
        starts_with(name, "upsampler.") || starts_with(name, "post_upsample_res_blocks."))
        return LTX2_COMP_UPSAMPLER;
    return LTX2_COMP_OTHER;
}

static bool json_true(const ltx2_json *obj, const char *key) {
    const ltx2_json *v = ltx2_json_get(obj, key);
    return v && v->type == LTX2_JSON_BOOL && v->boolean;
}

static bool json_false(const ltx2_json *obj, const char *key) {
    const ltx2_json *v = ltx2_json_get(obj, key);
    return v && v->type == LTX2_JSON_BOOL && !v->boolean;
}

/* 2.3 is the version with gated attention and text cross-attention AdaLN (spec 1.1); the config
 * says so directly in both layouts, and the keys say so when the config is missing. */
static void detect_version(const char *const *names, size_t n, const ltx2_json *config,
                           ltx2_ckpt_info *out) {
    const ltx2_json *tcfg = config ? ltx2_json_get(config, "transformer") : NULL;
    if (!tcfg) tcfg = config; /* a diffusers config.json is the transformer config itself */
    if (tcfg) {
        static const char *const flags23[] = {"apply_gated_attention", "cross_attention_adaln",
                                              "gated_attn", "cross_attn_mod"};
        for (size_t i = 0; i < sizeof(flags23) / sizeof(flags23[0]); i++) {
            if (json_true(tcfg, flags23[i])) {
                out->version = LTX2_MODEL_2_3;
                snprintf(out->version_evidence, sizeof(out->version_evidence),
                         "config: %s = true", flags23[i]);
                return;
            }
        }
        for (size_t i = 0; i < sizeof(flags23) / sizeof(flags23[0]); i++) {
            if (json_false(tcfg, flags23[i])) {
                out->version = LTX2_MODEL_2_0;
                snprintf(out->version_evidence, sizeof(out->version_evidence),
                         "config: %s = false", flags23[i]);
                return;
            }
        }
    }
    for (size_t i = 0; i < n; i++) {
        if (strstr(names[i], "to_gate_logits") || strstr(names[i], "prompt_adaln_single") ||
            strstr(names[i], "video_aggregate_embed")) {
            out->version = LTX2_MODEL_2_3;
            snprintf(out->version_evidence, sizeof(out->version_evidence),
                     "key %.120s exists only in 2.3", names[i]);
            return;
        }
    }
    for (size_t i = 0; i < n; i++) {
        if (strstr(names[i], "caption_projection") || strstr(names[i], ".aggregate_embed.")) {
            out->version = LTX2_MODEL_2_0;
            snprintf(out->version_evidence, sizeof(out->version_evidence),
                     "key %.120s exists only in 2.0", names[i]);
            return;
        }
    }
}

void ltx2_ckpt_classify(const char *const *names, const int64_t *numels, size_t n,
                        const ltx2_json *config, ltx2_ckpt_info *out) {
    memset(out, 0, sizeof(*out));
    bool lightricks_prefix = false, has_upsampler = false;
    for (size_t i = 0; i < n; i++) {
        ltx2_component c = ltx2_component_of_key(names[i]);
        out->n_tensors[c]++;
        out->n_params[c] += numels ? (uint64_t)numels[i] : 0;
        if (starts_with(names[i], DIT_PREFIX) || starts_with(names[i], "vae.") ||
            starts_with(names[i], "audio_vae.") || starts_with(names[i], "vocoder."))
            lightricks_prefix = true;
        if (starts_with(names[i], "upsampler.")) has_upsampler = true;
    }
    if (lightricks_prefix) {
        out->layout = LTX2_LAYOUT_SINGLE_FILE;
    } else if ((has_upsampler && out->n_tensors[LTX2_COMP_UPSAMPLER] == n) ||
               (config && ltx2_json_get_str(config, "_class_name") &&
                !strcmp(ltx2_json_get_str(config, "_class_name"), "LatentUpsampler"))) {
        out->layout = LTX2_LAYOUT_UPSAMPLER;
    } else {
        const char *cls = config ? ltx2_json_get_str(config, "_class_name") : NULL;
        if (cls && (strstr(cls, "LTX2") || strstr(cls, "LTX")))
            out->layout = LTX2_LAYOUT_DIFFUSERS;
    }
    if (out->layout != LTX2_LAYOUT_UNKNOWN) detect_version(names, n, config, out);
}
