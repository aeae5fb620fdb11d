/* diffusers -> Lightricks for the video VAE, audio VAE and vocoder: config sections and tensor
 * names (see names_vae.h for the sources). */
#include "model/names_vae.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/context.h"

#define TEXT_CAP 64

/* ---- small JSON helpers ---- */

static void put(ltx2_sbuf *o, const char *text) { ltx2_sbuf_append(o, text, strlen(text)); }

static void key(ltx2_sbuf *o, bool *first, const char *k) {
    ltx2_sbuf_append(o, *first ? "" : ", ", *first ? 0 : 2);
    *first = false;
    ltx2_sbuf_json_string(o, k, strlen(k));
    put(o, ": ");
}
static void raw(ltx2_sbuf *o, bool *first, const char *k, const char *json) {
    key(o, first, k);
    ltx2_sbuf_append(o, json, strlen(json));
}
static void val(ltx2_sbuf *o, bool *first, const char *k, const ltx2_json *v) {
    key(o, first, k);
    ltx2_sbuf_json_value(o, v);
}

static const ltx2_json *need(ltx2_context *ctx, const ltx2_json *o, const char *label, const char *k,
                             ltx2_json_type type, ltx2_status *st) {
    const ltx2_json *v = ltx2_json_get(o, k);
    if (!v || v->type != type) {
        *st = LTX2_ERROR(ctx, v ? LTX2_ERR_FORMAT : LTX2_ERR_NOT_FOUND, "%s: \"%s\" %s", label, k,
                         v ? "has the wrong type" : "is missing (no default is assumed)");
        return NULL;
    }
    return v;
}

/* An array key of n entries (n < 0: any length); *n gets the length. */
static const ltx2_json *need_arr(ltx2_context *ctx, const ltx2_json *o, const char *label, const char *k, int *n,
                                 ltx2_status *st) {
    const ltx2_json *v = need(ctx, o, label, k, LTX2_JSON_ARRAY, st);
    if (!v) return NULL;
    if (*n >= 0 && (int)v->count != *n) {
        *st = LTX2_ERROR(ctx, LTX2_ERR_FORMAT, "%s: \"%s\" has %zu entries, expected %d", label, k, v->count, *n);
        return NULL;
    }
    if (v->count > LTX2_VAE_MAX_BLOCKS) {
        *st = LTX2_ERROR(ctx, LTX2_ERR_UNSUPPORTED, "%s: \"%s\" has %zu entries (at most %d)", label, k, v->count,
                         LTX2_VAE_MAX_BLOCKS);
        return NULL;
    }
    *n = (int)v->count;
    return v;
}

static int64_t int_at(const ltx2_json *a, size_t i) {
    const ltx2_json *v = ltx2_json_at(a, i);
    return v && v->type == LTX2_JSON_NUMBER ? (int64_t)v->number : -1;
}
static bool bool_at(const ltx2_json *a, size_t i) {
    const ltx2_json *v = ltx2_json_at(a, i);
    return v && v->type == LTX2_JSON_BOOL && v->boolean;
}

/* ---- video VAE ---- */

static const char *compress_kind(const char *type, bool encoder) {
    if (!type) return NULL;
    if (!strcmp(type, "spatial")) return encoder ? "compress_space_res" : "compress_space";
    if (!strcmp(type, "temporal")) return encoder ? "compress_time_res" : "compress_time";
    if (!strcmp(type, "spatiotemporal")) return encoder ? "compress_all_res" : "compress_all";
    return NULL;
}

static ltx2_status vae_section(ltx2_context *ctx, const ltx2_json *c, const char *label, int64_t conv_in_width,
                               ltx2_sbuf *o, ltx2_df_vae_map *map) {
    ltx2_status st = LTX2_OK;
    int64_t v = 0;
    if (ltx2_json_get_int(c, "patch_size_t", &v) && v != 1)
        return LTX2_ERROR(ctx, LTX2_ERR_UNSUPPORTED, "%s: \"patch_size_t\" is %lld; only 1 exists in LTX-2", label,
                          (long long)v);
    const ltx2_json *ec = ltx2_json_get(c, "encoder_causal");
    if (ec && ec->type == LTX2_JSON_BOOL && !ec->boolean)
        return LTX2_ERROR(ctx, LTX2_ERR_UNSUPPORTED, "%s: \"encoder_causal\" false; the LTX-2 encoder is causal", label);
    const ltx2_json *tc = need(ctx, c, label, "timestep_conditioning", LTX2_JSON_BOOL, &st);
    if (!tc) return st;
    if (tc->boolean)
        return LTX2_ERROR(ctx, LTX2_ERR_UNSUPPORTED, "%s: a timestep-conditioned diffusers VAE is not read yet "
                          "(LTX-2.0 and 2.3 have none)", label);
    int nd = -1, nu = -1, n;
    const ltx2_json *bo = need_arr(ctx, c, label, "block_out_channels", &nd, &st);
    if (!bo) return st;
    n = nd + 1;
    const ltx2_json *lpb = need_arr(ctx, c, label, "layers_per_block", &n, &st);
    n = nd;
    const ltx2_json *sts = lpb ? need_arr(ctx, c, label, "spatio_temporal_scaling", &n, &st) : NULL;
    n = nd;
    const ltx2_json *dt = sts ? need_arr(ctx, c, label, "downsample_type", &n, &st) : NULL;
    const ltx2_json *dbo = dt ? need_arr(ctx, c, label, "decoder_block_out_channels", &nu, &st) : NULL;
    if (!dbo) return st;
    n = nu + 1;
    const ltx2_json *dl = need_arr(ctx, c, label, "decoder_layers_per_block", &n, &st);
    n = nu;
    const ltx2_json *ds = dl ? need_arr(ctx, c, label, "decoder_spatio_temporal_scaling", &n, &st) : NULL;
    n = nu;
    const ltx2_json *ut = ds ? need_arr(ctx, c, label, "upsample_type", &n, &st) : NULL;
    n = nu;
    const ltx2_json *uf = ut ? need_arr(ctx, c, label, "upsample_factor", &n, &st) : NULL;
    n = nu;
    const ltx2_json *ur = uf ? need_arr(ctx, c, label, "upsample_residual", &n, &st) : NULL;
    n = nu + 1;
    const ltx2_json *dn = ur ? need_arr(ctx, c, label, "decoder_inject_noise", &n, &st) : NULL;
    if (!dn) return st;
    if (2 * nd + 1 > LTX2_VAE_MAX_BLOCKS || 2 * nu + 1 > LTX2_VAE_MAX_BLOCKS)
        return LTX2_ERROR(ctx, LTX2_ERR_UNSUPPORTED, "%s: too many blocks", label);

    bool first = true;
    put(o, ",\n\"vae\": {");
    raw(o, &first, "_class_name", "\"CausalVideoAutoencoder\"");
    raw(o, &first, "dims", "3");
    const char *copy[] = {"in_channels", "out_channels", "latent_channels", "patch_size", "scaling_factor",
                          "encoder_spatial_padding_mode", "decoder_spatial_padding_mode"};
    for (size_t i = 0; i < sizeof copy / sizeof copy[0]; i++) {
        const ltx2_json *x = ltx2_json_get(c, copy[i]);
        if (!x) return LTX2_ERROR(ctx, LTX2_ERR_NOT_FOUND, "%s: \"%s\" is missing", label, copy[i]);
        val(o, &first, copy[i], x);
    }
    const ltx2_json *dc = need(ctx, c, label, "decoder_causal", LTX2_JSON_BOOL, &st);
    if (!dc) return st;
    raw(o, &first, "causal_decoder", dc->boolean ? "true" : "false");
    raw(o, &first, "timestep_conditioning", "false");
    raw(o, &first, "norm_layer", "\"pixel_norm\"");
    raw(o, &first, "latent_log_var", "\"uniform\"");
    char buf[160];
    /* the Lightricks decoder's conv_in is 8 x decoder_base_channels wide (ltx-core hard-codes the 8);
     * diffusers' is its last decoder_block_out_channels entry */
    snprintf(buf, sizeof buf, "%lld", (long long)(int_at(dbo, (size_t)nu - 1) / 8));
    raw(o, &first, "decoder_base_channels", buf);

    /* encoder, run order = config order: res_x, then the stage's compression */
    key(o, &first, "encoder_blocks");
    put(o, "[");
    int idx = 0;
    int64_t w = conv_in_width;
    for (int i = 0; i <= nd; i++) {
        ltx2_sbuf_printf(o, "%s[\"res_x\", {\"num_layers\": %lld}]", idx ? ", " : "", (long long)int_at(lpb, (size_t)i));
        if (map) map->enc_res[i] = idx;
        idx++;
        if (i == nd) break;
        if (map) map->enc_down[i] = -1;
        if (!bool_at(sts, (size_t)i)) continue;
        const char *kind = compress_kind(ltx2_json_at(dt, (size_t)i)->str, true);
        const int64_t out = int_at(bo, (size_t)i);
        if (!kind || w <= 0 || out % w)
            return LTX2_ERROR(ctx, LTX2_ERR_UNSUPPORTED, "%s: encoder block %d (downsample_type %s, %lld -> %lld "
                              "channels) has no LTX-2 equivalent", label, i,
                              ltx2_json_at(dt, (size_t)i)->str ? ltx2_json_at(dt, (size_t)i)->str : "?",
                              (long long)w, (long long)out);
        ltx2_sbuf_printf(o, ", [\"%s\", {\"multiplier\": %lld}]", kind, (long long)(out / w));
        if (map) map->enc_down[i] = idx;
        idx++;
        w = out;
    }
    put(o, "]");
    if (map) {
        map->n_down = nd;
        map->enc_mid = map->enc_res[nd];
    }

    /* decoder: diffusers reverses every per-stage tuple but upsample_type; the Lightricks list is the
     * reverse of the run order */
    int run_n = 0;
    ltx2_vae_block run[LTX2_VAE_MAX_BLOCKS];
    int run_df[LTX2_VAE_MAX_BLOCKS]; /* diffusers up block (res: i, compress: -(i + 2)), mid: -1 */
    for (int s = 0; s <= nu; s++) {
        if (s > 0) {
            const int i = s - 1;            /* diffusers up_blocks index (run order) */
            const size_t r = (size_t)(nu - 1 - i); /* the reversed tuples' config index */
            if (bool_at(ds, r)) {
                const ltx2_json *t = ltx2_json_at(ut, (size_t)i);
                const char *kind = compress_kind(t ? t->str : NULL, false);
                if (!kind)
                    return LTX2_ERROR(ctx, LTX2_ERR_UNSUPPORTED, "%s: upsample_type[%d] has no LTX-2 equivalent",
                                      label, i);
                const ltx2_vae_block_kind k = !strcmp(kind, "compress_all")     ? LTX2_VAE_COMPRESS_ALL
                                              : !strcmp(kind, "compress_space") ? LTX2_VAE_COMPRESS_SPACE
                                                                                : LTX2_VAE_COMPRESS_TIME;
                run[run_n] = (ltx2_vae_block){.kind = k, .multiplier = int_at(uf, r), .residual = bool_at(ur, r)};
                run_df[run_n] = -(i + 2);
                run_n++;
            }
        }
        const size_t r = (size_t)(nu - s); /* decoder_layers_per_block / inject_noise, reversed */
        run[run_n] = (ltx2_vae_block){.kind = LTX2_VAE_RES_X, .num_layers = int_at(dl, r),
                                      .inject_noise = bool_at(dn, r)};
        run_df[run_n] = s == 0 ? -1 : s - 1;
        run_n++;
    }
    key(o, &first, "decoder_blocks");
    put(o, "[");
    for (int j = run_n - 1, lt = 0; j >= 0; j--, lt++) {
        const ltx2_vae_block *b = &run[j];
        if (b->kind == LTX2_VAE_RES_X)
            ltx2_sbuf_printf(o, "%s[\"res_x\", {\"num_layers\": %lld, \"inject_noise\": %s}]", lt ? ", " : "",
                             (long long)b->num_layers, b->inject_noise ? "true" : "false");
        else
            ltx2_sbuf_printf(o, "%s[\"%s\", {\"multiplier\": %lld, \"residual\": %s}]", lt ? ", " : "",
                             ltx2_vae_block_name(b->kind), (long long)b->multiplier, b->residual ? "true" : "false");
    }
    put(o, "]}");
    if (map) { /* ltx-core runs decoder_blocks reversed: run position j is up_blocks.j */
        map->n_up = nu;
        for (int j = 0; j < run_n; j++) {
            if (run_df[j] == -1) map->dec_mid = j;
            else if (run_df[j] >= 0) map->dec_res[run_df[j]] = j;
            else map->dec_up[-run_df[j] - 2] = j;
        }
        for (int i = 0; i < nu; i++)
            if (!bool_at(ds, (size_t)(nu - 1 - i))) map->dec_up[i] = -1;
    }
    return LTX2_OK;
}

/* ---- audio VAE ---- */

static ltx2_status audio_section(ltx2_context *ctx, const ltx2_json *c, const char *label, ltx2_sbuf *o) {
    static const char *const pairs[][2] = {{"base_channels", "ch"},     {"output_channels", "out_ch"},
                                           {"ch_mult", "ch_mult"},      {"num_res_blocks", "num_res_blocks"},
                                           {"latent_channels", "z_channels"}, {"mel_bins", "mel_bins"},
                                           {"in_channels", "in_channels"}, {"resolution", "resolution"},
                                           {"norm_type", "norm_type"},  {"causality_axis", "causality_axis"},
                                           {"double_z", "double_z"},    {"mid_block_add_attention", "mid_block_add_attention"}};
    put(o, ",\n\"audio_vae\": {\"model\": {\"params\": {\"ddconfig\": {");
    bool first = true;
    for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++) {
        const ltx2_json *v = ltx2_json_get(c, pairs[i][0]);
        if (!v) return LTX2_ERROR(ctx, LTX2_ERR_NOT_FOUND, "%s: \"%s\" is missing", label, pairs[i][0]);
        val(o, &first, pairs[i][1], v);
    }
    const ltx2_json *attn = ltx2_json_get(c, "attn_resolutions");
    if (attn && attn->type == LTX2_JSON_ARRAY && attn->count)
        return LTX2_ERROR(ctx, LTX2_ERR_UNSUPPORTED, "%s: attn_resolutions is not empty; LTX-2 has no attention "
                          "there", label);
    raw(o, &first, "attn_resolutions", "[]");
    put(o, "}");
    first = false;
    ltx2_status st = LTX2_OK;
    const ltx2_json *sr = need(ctx, c, label, "sample_rate", LTX2_JSON_NUMBER, &st);
    const ltx2_json *hop = sr ? need(ctx, c, label, "mel_hop_length", LTX2_JSON_NUMBER, &st) : NULL;
    if (!hop) return st;
    val(o, &first, "sampling_rate", sr);
    put(o, "}}, \"preprocessing\": {\"stft\": {");
    first = true;
    val(o, &first, "hop_length", hop);
    put(o, "}, \"mel\": {");
    first = true;
    val(o, &first, "n_mel_channels", ltx2_json_get(c, "mel_bins"));
    put(o, "}}}");
    return LTX2_OK;
}

/* ---- vocoder ---- */

/* One generator's Lightricks keys from the diffusers keys starting with pre ("" or "bwe_"). */
static ltx2_status vocoder_gen(ltx2_context *ctx, const ltx2_json *c, const char *label, const char *pre,
                               ltx2_sbuf *o) {
    static const char *const pairs[][2] = {{"hidden_channels", "upsample_initial_channel"},
                                           {"upsample_factors", "upsample_rates"},
                                           {"upsample_kernel_sizes", "upsample_kernel_sizes"},
                                           {"resnet_kernel_sizes", "resblock_kernel_sizes"},
                                           {"resnet_dilations", "resblock_dilation_sizes"}};
    bool first = true;
    char k[TEXT_CAP];
    ltx2_status st = LTX2_OK;
    put(o, "{");
    for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++) {
        snprintf(k, sizeof k, "%s%s", pre, pairs[i][0]);
        const ltx2_json *v = ltx2_json_get(c, k);
        if (!v) return LTX2_ERROR(ctx, LTX2_ERR_NOT_FOUND, "%s: \"%s\" is missing", label, k);
        val(o, &first, pairs[i][1], v);
    }
    snprintf(k, sizeof k, "%sact_fn", pre);
    const ltx2_json *act = need(ctx, c, label, k, LTX2_JSON_STRING, &st);
    snprintf(k, sizeof k, "%santialias", pre);
    const ltx2_json *aa = act ? need(ctx, c, label, k, LTX2_JSON_BOOL, &st) : NULL;
    snprintf(k, sizeof k, "%sout_channels", pre);
    const ltx2_json *oc = aa ? need(ctx, c, label, k, LTX2_JSON_NUMBER, &st) : NULL;
    snprintf(k, sizeof k, "%sfinal_bias", pre);
    const ltx2_json *fb = oc ? need(ctx, c, label, k, LTX2_JSON_BOOL, &st) : NULL;
    if (!fb) return st;
    const bool amp = !strcmp(act->str, "snakebeta") && aa->boolean;
    if (!amp && !(!strcmp(act->str, "leaky_relu") && !aa->boolean))
        return LTX2_ERROR(ctx, LTX2_ERR_UNSUPPORTED, "%s: %sact_fn \"%s\" with %santialias %s has no LTX-2 "
                          "vocoder (leaky_relu plain, or snakebeta anti-aliased)", label, pre, act->str, pre,
                          aa->boolean ? "true" : "false");
    raw(o, &first, "resblock", amp ? "\"AMP1\"" : "\"1\"");
    if (amp) raw(o, &first, "activation", "\"snakebeta\"");
    raw(o, &first, "stereo", oc->number == 2 ? "true" : "false");
    raw(o, &first, "use_bias_at_final", fb->boolean ? "true" : "false");
    snprintf(k, sizeof k, "%sfinal_act_fn", pre);
    const ltx2_json *fa = ltx2_json_get(c, k);
    if (!fa) return LTX2_ERROR(ctx, LTX2_ERR_NOT_FOUND, "%s: \"%s\" is missing", label, k);
    if (fa->type == LTX2_JSON_NULL) {
        raw(o, &first, "apply_final_activation", "false");
        raw(o, &first, "use_tanh_at_final", "false");
    } else if (fa->type == LTX2_JSON_STRING && (!strcmp(fa->str, "tanh") || !strcmp(fa->str, "clamp"))) {
        raw(o, &first, "use_tanh_at_final", !strcmp(fa->str, "tanh") ? "true" : "false");
    } else {
        return LTX2_ERROR(ctx, LTX2_ERR_UNSUPPORTED, "%s: \"%s\" must be \"tanh\", \"clamp\" or null", label, k);
    }
    return LTX2_OK;
}

static ltx2_status vocoder_section(ltx2_context *ctx, const ltx2_json *c, const char *label, ltx2_sbuf *o) {
    const char *cls = ltx2_json_get_str(c, "_class_name");
    const bool bwe = cls && !strcmp(cls, "LTX2VocoderWithBWE");
    put(o, ",\n\"vocoder\": ");
    if (!bwe) {
        LTX2_TRY(vocoder_gen(ctx, c, label, "", o));
        const ltx2_json *sr = ltx2_json_get(c, "output_sampling_rate");
        if (sr) {
            put(o, ", \"output_sampling_rate\": ");
            ltx2_sbuf_json_value(o, sr);
        }
        put(o, "}");
        return LTX2_OK;
    }
    put(o, "{\"vocoder\": ");
    LTX2_TRY(vocoder_gen(ctx, c, label, "", o));
    put(o, "}, \"bwe\": ");
    LTX2_TRY(vocoder_gen(ctx, c, label, "bwe_", o));
    static const char *const pairs[][2] = {{"input_sampling_rate", "input_sampling_rate"},
                                           {"output_sampling_rate", "output_sampling_rate"},
                                           {"hop_length", "hop_length"}, {"filter_length", "n_fft"},
                                           {"window_length", "win_size"}, {"num_mel_channels", "num_mels"}};
    for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++) {
        const ltx2_json *v = ltx2_json_get(c, pairs[i][0]);
        if (!v) return LTX2_ERROR(ctx, LTX2_ERR_NOT_FOUND, "%s: \"%s\" is missing", label, pairs[i][0]);
        ltx2_sbuf_printf(o, ", \"%s\": ", pairs[i][1]);
        ltx2_sbuf_json_value(o, v);
    }
    put(o, "}}");
    return LTX2_OK;
}

ltx2_status ltx2_names_df_section(ltx2_context *ctx, ltx2_df_component comp, const ltx2_json *cfg, const char *label,
                                  int64_t conv_in_width, ltx2_sbuf *out, ltx2_df_vae_map *map) {
    if (!cfg || cfg->type != LTX2_JSON_OBJECT)
        return LTX2_ERROR(ctx, LTX2_ERR_FORMAT, "%s: must be a JSON object", label);
    switch (comp) {
    case LTX2_DF_VAE: return vae_section(ctx, cfg, label, conv_in_width, out, map);
    case LTX2_DF_AUDIO_VAE: return audio_section(ctx, cfg, label, out);
    case LTX2_DF_VOCODER: return vocoder_section(ctx, cfg, label, out);
    default: return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "%s: not a VAE / vocoder component", label);
    }
}

/* ---- tensor names ---- */

static bool starts_with(const char *s, const char *p) { return strncmp(s, p, strlen(p)) == 0; }

/* "<head>.<n>.<rest>" with head one of {down_blocks, up_blocks}: *n and a pointer to rest. */
static const char *block_index(const char *s, const char *head, int *n) {
    if (!starts_with(s, head)) return NULL;
    char *end = NULL;
    long v = strtol(s + strlen(head), &end, 10);
    if (end == s + strlen(head) || *end != '.' || v < 0 || v >= LTX2_VAE_MAX_BLOCKS) return NULL;
    *n = (int)v;
    return end + 1;
}

/* Appends src to out[len..], renaming whole components (from -> to, NULL-terminated pairs). */
static bool put_parts(const char *src, const char *const (*pairs)[2], char *out, size_t cap, size_t len) {
    const char *p = src;
    while (*p) {
        const char *dot = strchr(p, '.');
        size_t n = dot ? (size_t)(dot - p) : strlen(p);
        const char *rep = NULL;
        for (size_t i = 0; pairs && pairs[i][0] && !rep; i++)
            if (strlen(pairs[i][0]) == n && !strncmp(p, pairs[i][0], n)) rep = pairs[i][1];
        size_t m = rep ? strlen(rep) : n;
        if (len + m + 2 > cap) return false;
        memcpy(out + len, rep ? rep : p, m);
        len += m;
        if (dot) out[len++] = '.';
        out[len] = '\0';
        p = dot ? dot + 1 : p + n;
    }
    return true;
}

static const char *const k_vae_parts[][2] = {{"resnets", "res_blocks"}, {NULL, NULL}};
static const char *const k_voc_parts[][2] = {{"conv_in", "conv_pre"},   {"conv_out", "conv_post"},
                                             {"upsamplers", "ups"},     {"resnets", "resblocks"},
                                             {"act_out", "act_post"},   {NULL, NULL}};

static bool vae_name(const ltx2_df_vae_map *map, const char *df, char *out, size_t cap) {
    int n = snprintf(out, cap, "vae.");
    const char *rest = df;
    if (!strcmp(df, "latents_mean")) return snprintf(out, cap, "vae.per_channel_statistics.mean-of-means") < (int)cap;
    if (!strcmp(df, "latents_std")) return snprintf(out, cap, "vae.per_channel_statistics.std-of-means") < (int)cap;
    const bool enc = starts_with(df, "encoder."), dec = starts_with(df, "decoder.");
    if (map && (enc || dec)) {
        const char *r = df + 8;
        int i = -1, lt = -1;
        const char *tail = NULL;
        if (starts_with(r, "mid_block.")) {
            lt = enc ? map->enc_mid : map->dec_mid;
            tail = r + strlen("mid_block.");
        } else if ((tail = block_index(r, enc ? "down_blocks." : "up_blocks.", &i)) != NULL) {
            const char *up = enc ? "downsamplers.0." : "upsamplers.0.";
            const int nb = enc ? map->n_down : map->n_up;
            if (i < nb && starts_with(tail, up)) {
                lt = enc ? map->enc_down[i] : map->dec_up[i];
                tail += strlen(up);
            } else if (i < nb) {
                lt = enc ? map->enc_res[i] : map->dec_res[i];
            }
        }
        if (lt >= 0 && tail) {
            n = snprintf(out, cap, "vae.%s.%s.%d.", enc ? "encoder" : "decoder", enc ? "down_blocks" : "up_blocks", lt);
            if (n < 0 || (size_t)n >= cap) return false;
            return put_parts(tail, k_vae_parts, out, cap, (size_t)n);
        }
    }
    if (n < 0 || (size_t)n >= cap) return false;
    return put_parts(rest, k_vae_parts, out, cap, (size_t)n);
}

bool ltx2_names_df_vae_to_lt(ltx2_df_component comp, const ltx2_df_vae_map *map, const char *df, char *out,
                             size_t cap) {
    if (!df || !out || cap == 0) return false;
    switch (comp) {
    case LTX2_DF_VAE: return vae_name(map, df, out, cap);
    case LTX2_DF_AUDIO_VAE:
        if (!strcmp(df, "latents_mean"))
            return snprintf(out, cap, "audio_vae.per_channel_statistics.mean-of-means") < (int)cap;
        if (!strcmp(df, "latents_std"))
            return snprintf(out, cap, "audio_vae.per_channel_statistics.std-of-means") < (int)cap;
        {
            int n = snprintf(out, cap, "audio_vae.%s", df);
            return n >= 0 && (size_t)n < cap;
        }
    case LTX2_DF_VOCODER: {
        /* BigVGAN's anti-aliased activation: diffusers' DownSample1d holds the filter itself */
        char tmp[512];
        int n = snprintf(tmp, sizeof tmp, "%s", df);
        if (n < 0 || (size_t)n >= sizeof tmp) return false;
        const char *pat = ".downsample.filter";
        const size_t lp = strlen(pat), lt = strlen(tmp);
        n = snprintf(out, cap, "vocoder.");
        if (lt >= lp && !strcmp(tmp + lt - lp, pat)) {
            tmp[lt - lp] = '\0';
            if (!put_parts(tmp, k_voc_parts, out, cap, (size_t)n)) return false;
            size_t len = strlen(out);
            return snprintf(out + len, cap - len, ".downsample.lowpass.filter") < (int)(cap - len);
        }
        return put_parts(tmp, k_voc_parts, out, cap, (size_t)n);
    }
    default: return false;
    }
}
