/* Latent upsampler: config and weights (see upsampler.h; the forward is upsampler_forward.c).
 * Reference: ltx-core 1.0.0 model/upsampler/{model,res_block,pixel_shuffle,
 * spatial_rational_resampler,blur_downsample,model_configurator}.py. */
#include "model/upsampler.h"
#include "model/upsampler_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/context.h"
#include "core/dtype.h"
#include "core/finite.h"
#include "io/file.h"
#include "io/json.h"

#define UPS_KEY_CAP 160

static ltx2_status load_f32(ltx2_context *ctx, const ltx2_st_set *set, const char *key, int ndim,
                            const int64_t *shape, float **out) {
    const ltx2_st_tensor *t = ltx2_st_set_find(set, key, NULL);
    if (!t) return LTX2_ERROR(ctx, LTX2_ERR_NOT_FOUND, "upsampler: missing tensor %s", key);
    bool ok = t->ndim == ndim;
    for (int i = 0; ok && i < ndim; i++) ok = t->shape[i] == shape[i];
    if (!ok) {
        char a[96], b[96];
        return LTX2_ERROR(ctx, LTX2_ERR_SHAPE, "upsampler: tensor %s has shape %s, expected %s (check the config)",
                          key, ltx2_shape_str(t->shape, t->ndim, a, 96), ltx2_shape_str(shape, ndim, b, 96));
    }
    int64_t n = 1;
    for (int i = 0; i < ndim; i++) n *= shape[i];
    float *buf = malloc((size_t)n * sizeof(float));
    if (!buf) return LTX2_ERROR(ctx, LTX2_ERR_OOM, "upsampler: %s", key);
    ltx2_status st = ltx2_convert(ctx, buf, LTX2_F32, t->data, t->dtype, (size_t)n);
    if (st == LTX2_OK) st = ltx2_check_finite(ctx, LTX2_ERR_FORMAT, buf, ndim, shape, "tensor");
    if (st != LTX2_OK) {
        free(buf);
        ltx2_error_prefix(ctx, "upsampler: %s", key);
        return st;
    }
    *out = buf;
    return LTX2_OK;
}

/* `<name>.weight` [out, in, (3,) 3, 3] and `<name>.bias`; Conv2d when kt == 1. */
static ltx2_status load_conv(ltx2_context *ctx, const ltx2_st_set *set, const char *name, int64_t ci, int64_t co,
                             int64_t kt, ups_conv *c) {
    char key[UPS_KEY_CAP];
    c->desc = (ltx2_conv3d_desc){.c_in = ci, .c_out = co, .kt = kt, .kh = 3, .kw = 3, .st = 1, .sh = 1, .sw = 1,
                                 .tpad = kt == 3 ? LTX2_CONV_TPAD_SYMMETRIC_ZEROS : LTX2_CONV_TPAD_NONE,
                                 .spad = LTX2_CONV_SPAD_ZEROS};
    const int64_t s3[5] = {co, ci, 3, 3, 3}, s2[4] = {co, ci, 3, 3};
    float *w = NULL;
    snprintf(key, sizeof(key), "%.140s.weight", name);
    LTX2_TRY(load_f32(ctx, set, key, kt == 3 ? 5 : 4, kt == 3 ? s3 : s2, &w));
    c->w = malloc((size_t)ltx2_conv3d_packed_numel(&c->desc) * sizeof(float));
    ltx2_status st = c->w ? ltx2_conv3d_pack_weight(ctx, &c->desc, w, c->w)
                          : LTX2_ERROR(ctx, LTX2_ERR_OOM, "upsampler: packed %s", key);
    free(w);
    if (st != LTX2_OK) return st;
    snprintf(key, sizeof(key), "%.140s.bias", name);
    return load_f32(ctx, set, key, 1, &co, &c->b);
}

static ltx2_status load_res(ltx2_context *ctx, const ltx2_st_set *set, const char *name, int64_t m, ups_res *r) {
    char key[UPS_KEY_CAP];
    snprintf(key, sizeof(key), "%s.conv1", name);
    LTX2_TRY(load_conv(ctx, set, key, m, m, 3, &r->c1));
    snprintf(key, sizeof(key), "%s.conv2", name);
    LTX2_TRY(load_conv(ctx, set, key, m, m, 3, &r->c2));
    float **dst[4] = {&r->n1w, &r->n1b, &r->n2w, &r->n2b};
    const char *suffix[4] = {"norm1.weight", "norm1.bias", "norm2.weight", "norm2.bias"};
    for (int i = 0; i < 4; i++) {
        snprintf(key, sizeof(key), "%s.%s", name, suffix[i]);
        LTX2_TRY(load_f32(ctx, set, key, 1, &m, dst[i]));
    }
    return LTX2_OK;
}

static void conv_free(ups_conv *c) {
    free(c->w);
    free(c->b);
}

static void res_free(ups_res *r) {
    conv_free(&r->c1);
    conv_free(&r->c2);
    free(r->n1w), free(r->n1b), free(r->n2w), free(r->n2b);
}

void ltx2_upsampler_free(ltx2_upsampler *u) {
    if (!u) return;
    conv_free(&u->initial);
    conv_free(&u->up);
    conv_free(&u->final);
    free(u->init_nw);
    free(u->init_nb);
    for (int64_t i = 0; i < u->cfg.num_blocks_per_stage; i++) {
        if (u->pre) res_free(&u->pre[i]);
        if (u->post) res_free(&u->post[i]);
    }
    free(u->pre);
    free(u->post);
    free(u);
}

const ltx2_upsampler_config *ltx2_upsampler_get_config(const ltx2_upsampler *u) { return u ? &u->cfg : NULL; }

static bool get_bool(const ltx2_json *o, const char *key, bool dflt) {
    const ltx2_json *v = ltx2_json_get(o, key);
    return v && v->type == LTX2_JSON_BOOL ? v->boolean : dflt;
}

/* The config from a Lightricks file's metadata "config" (ltx-core LatentUpsamplerConfigurator's keys
 * and defaults), or from a diffusers config.json (LTX2LatentUpsamplerModel's: rational_spatial_scale
 * and use_rational_resampler name spatial_scale and rational_resampler, and the latter defaults to
 * true there). */
static void config_from_json(const ltx2_json *o, bool diffusers, ltx2_upsampler_config *c) {
    *c = (ltx2_upsampler_config){128, 512, 4, 3, true, false, diffusers, 2.0};
    ltx2_json_get_int(o, "in_channels", &c->in_channels);
    ltx2_json_get_int(o, "mid_channels", &c->mid_channels);
    ltx2_json_get_int(o, "num_blocks_per_stage", &c->num_blocks_per_stage);
    ltx2_json_get_int(o, "dims", &c->dims);
    ltx2_json_get_num(o, diffusers ? "rational_spatial_scale" : "spatial_scale", &c->spatial_scale);
    c->spatial_upsample = get_bool(o, "spatial_upsample", true);
    c->temporal_upsample = get_bool(o, "temporal_upsample", false);
    c->rational_resampler = get_bool(o, diffusers ? "use_rational_resampler" : "rational_resampler", diffusers);
}

bool ltx2_upsampler_ratio(const ltx2_upsampler_config *cfg, int64_t *num, int64_t *den) {
    *num = *den = 1;
    if (!cfg->spatial_upsample) return true;
    const double s = cfg->spatial_scale;
    if (!cfg->rational_resampler) {
        *num = 2; /* ltx-core ignores spatial_scale without the rational resampler */
        return true;
    }
    if (s != 0.75 && s != 1.5 && s != 2.0 && s != 4.0) return false;
    *num = s == 2.0 ? 2 : (s == 4.0 ? 4 : 3);
    *den = s == 0.75 ? 4 : (s == 1.5 ? 2 : 1);
    return true;
}

static ltx2_status check_config(ltx2_context *ctx, const ltx2_upsampler_config *c) {
    if (c->dims != 3)
        return LTX2_ERROR(ctx, LTX2_ERR_UNSUPPORTED, "upsampler: dims %lld unsupported (only 3)", (long long)c->dims);
    if (c->spatial_upsample == c->temporal_upsample)
        return LTX2_ERROR(ctx, LTX2_ERR_UNSUPPORTED,
                          "upsampler: spatial_upsample %d / temporal_upsample %d: exactly one must be true", c->spatial_upsample,
                          c->temporal_upsample);
    if (c->mid_channels < UPS_GN_GROUPS || c->mid_channels % UPS_GN_GROUPS != 0 || c->in_channels < 1 ||
        c->num_blocks_per_stage < 0)
        return LTX2_ERROR(ctx, LTX2_ERR_FORMAT, "upsampler: mid_channels %lld must be a multiple of %d",
                          (long long)c->mid_channels, UPS_GN_GROUPS);
    int64_t num, den;
    if (!ltx2_upsampler_ratio(c, &num, &den))
        return LTX2_ERROR(ctx, LTX2_ERR_UNSUPPORTED, "upsampler: rational spatial_scale %g (supported 0.75, 1.5, 2, 4)",
                          c->spatial_scale);
    return LTX2_OK;
}

/* The weights of set for config cfg (checked first). */
static ltx2_status load_with(ltx2_context *ctx, const ltx2_st_set *set, const ltx2_upsampler_config *cfg,
                             ltx2_upsampler **out) {
    *out = NULL;
    ltx2_upsampler *u = calloc(1, sizeof(*u));
    if (!u) return LTX2_ERROR(ctx, LTX2_ERR_OOM, "upsampler struct");
    u->cfg = *cfg;
    ltx2_status st = check_config(ctx, &u->cfg);
    const int64_t M = u->cfg.mid_channels, C = u->cfg.in_channels, nb = u->cfg.num_blocks_per_stage;
    ltx2_upsampler_ratio(&u->cfg, &u->num, &u->den); /* a scale without one: refused by check_config */
    if (st == LTX2_OK) st = load_conv(ctx, set, "initial_conv", C, M, 3, &u->initial);
    if (st == LTX2_OK) st = load_f32(ctx, set, "initial_norm.weight", 1, &M, &u->init_nw);
    if (st == LTX2_OK) st = load_f32(ctx, set, "initial_norm.bias", 1, &M, &u->init_nb);
    if (st == LTX2_OK) {
        u->pre = calloc((size_t)(nb ? nb : 1), sizeof(ups_res));
        u->post = calloc((size_t)(nb ? nb : 1), sizeof(ups_res));
        if (!u->pre || !u->post) st = LTX2_ERROR(ctx, LTX2_ERR_OOM, "upsampler: res blocks");
    }
    char key[UPS_KEY_CAP];
    for (int64_t i = 0; i < nb && st == LTX2_OK; i++) {
        snprintf(key, sizeof(key), "res_blocks.%lld", (long long)i);
        st = load_res(ctx, set, key, M, &u->pre[i]);
        snprintf(key, sizeof(key), "post_upsample_res_blocks.%lld", (long long)i);
        if (st == LTX2_OK) st = load_res(ctx, set, key, M, &u->post[i]);
    }
    if (st == LTX2_OK) {
        if (u->cfg.temporal_upsample) {
            st = load_conv(ctx, set, "upsampler.0", M, 2 * M, 3, &u->up);
        } else if (!u->cfg.rational_resampler) {
            st = load_conv(ctx, set, "upsampler.0", M, 4 * M, 1, &u->up);
        } else {
            st = load_conv(ctx, set, "upsampler.conv", M, u->num * u->num * M, 1, &u->up);
            /* The blur kernel is a fixed buffer; we recompute it, but the file must carry it. */
            const int64_t ks[4] = {1, 1, LTX2_BLUR_TAPS, LTX2_BLUR_TAPS};
            float *k = NULL;
            if (st == LTX2_OK) st = load_f32(ctx, set, "upsampler.blur_down.kernel", 4, ks, &k);
            free(k);
        }
    }
    if (st == LTX2_OK) st = load_conv(ctx, set, "final_conv", M, C, 3, &u->final);
    if (st != LTX2_OK) {
        ltx2_upsampler_free(u);
        return st;
    }
    *out = u;
    return LTX2_OK;
}

/* The Lightricks file's config: its metadata "config". */
static ltx2_status file_config(ltx2_context *ctx, const ltx2_st_set *set, ltx2_upsampler_config *cfg) {
    if (!set->n_files) return LTX2_ERROR(ctx, LTX2_ERR_NOT_FOUND, "upsampler: no safetensors file");
    ltx2_json_doc *doc = NULL;
    LTX2_TRY(ltx2_st_meta_json(ctx, set->files[0], "config", "the upsampler architecture cannot be known", &doc));
    config_from_json(ltx2_json_root(doc), false, cfg);
    ltx2_json_free(doc);
    return LTX2_OK;
}

ltx2_status ltx2_upsampler_load(ltx2_context *ctx, const ltx2_st_set *set, ltx2_upsampler **out) {
    if (!set || !out) return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "upsampler: NULL argument");
    *out = NULL;
    ltx2_upsampler_config cfg;
    LTX2_TRY(file_config(ctx, set, &cfg));
    return load_with(ctx, set, &cfg, out);
}

/* A diffusers LTX2LatentUpsamplerModel folder's config.json, translated. */
static ltx2_status diffusers_config(ltx2_context *ctx, const char *dir, ltx2_upsampler_config *cfg) {
    char *cfg_path = ltx2_path_join(dir, "config.json");
    if (!cfg_path) return LTX2_ERROR(ctx, LTX2_ERR_OOM, "upsampler: path");
    ltx2_json_doc *doc = NULL;
    const ltx2_status st = ltx2_json_parse_file(ctx, cfg_path, &doc);
    if (st == LTX2_OK) config_from_json(ltx2_json_root(doc), true, cfg);
    ltx2_json_free(doc);
    free(cfg_path);
    return st;
}

/* What path names (see ltx2_upsampler_open): its weights (mapped, not read) and its config. */
static ltx2_status open_source(ltx2_context *ctx, const char *path, ltx2_st_set **set, ltx2_upsampler_config *cfg) {
    *set = NULL;
    if (!ltx2_path_is_dir(path)) {
        LTX2_TRY(ltx2_st_set_open(ctx, path, set));
        const ltx2_status st = file_config(ctx, *set, cfg);
        if (st != LTX2_OK) {
            ltx2_st_set_close(*set);
            *set = NULL;
        }
        return st;
    }
    char *sub = ltx2_path_join(path, LTX2_UPSAMPLER_DF_FOLDER);
    char *sub_cfg = sub ? ltx2_path_join(sub, "config.json") : NULL;
    char *own_cfg = ltx2_path_join(path, "config.json");
    ltx2_status st = LTX2_OK;
    const char *dir = NULL;
    if (!sub || !sub_cfg || !own_cfg) st = LTX2_ERROR(ctx, LTX2_ERR_OOM, "upsampler: path");
    else if (ltx2_path_is_file(sub_cfg)) dir = sub;
    else if (ltx2_path_is_file(own_cfg)) dir = path;
    else st = LTX2_ERROR(ctx, LTX2_ERR_NOT_FOUND, "%s: a directory without config.json or %s/config.json (a diffusers "
                         "latent upsampler folder, or the model directory holding one)", path, LTX2_UPSAMPLER_DF_FOLDER);
    if (dir) st = diffusers_config(ctx, dir, cfg);
    if (dir && st == LTX2_OK) st = ltx2_st_set_open(ctx, dir, set);
    free(sub), free(sub_cfg), free(own_cfg);
    return st;
}

ltx2_status ltx2_upsampler_open(ltx2_context *ctx, const char *path, ltx2_upsampler **out) {
    if (!path || !out) return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "upsampler: NULL argument");
    *out = NULL;
    ltx2_st_set *set = NULL;
    ltx2_upsampler_config cfg;
    LTX2_TRY(open_source(ctx, path, &set, &cfg));
    const ltx2_status st = load_with(ctx, set, &cfg, out);
    ltx2_st_set_close(set);
    return st;
}

ltx2_status ltx2_upsampler_read_config(ltx2_context *ctx, const char *path, ltx2_upsampler_config *cfg) {
    if (!path || !cfg) return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "upsampler: NULL argument");
    ltx2_st_set *set = NULL;
    LTX2_TRY(open_source(ctx, path, &set, cfg));
    ltx2_st_set_close(set);
    return check_config(ctx, cfg);
}

ltx2_status ltx2_upsampler_out_shape(ltx2_context *ctx, const ltx2_upsampler *u, const int64_t in[5], int64_t out[5]) {
    if (!u || !in || !out) return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "upsampler: NULL argument");
    if (in[4] != u->cfg.in_channels || in[0] < 1 || in[1] < 1 || in[2] < 1 || in[3] < 1)
        return LTX2_ERROR(ctx, LTX2_ERR_SHAPE, "upsampler: latent [%lld, %lld, %lld, %lld, %lld] (NDHWC), expected %lld channels",
                          (long long)in[0], (long long)in[1], (long long)in[2], (long long)in[3], (long long)in[4],
                          (long long)u->cfg.in_channels);
    memcpy(out, in, 5 * sizeof(int64_t));
    if (u->cfg.temporal_upsample) {
        out[1] = 2 * in[1] - 1;
    } else {
        const int64_t pad = LTX2_BLUR_TAPS / 2;
        for (int a = 2; a < 4; a++)
            out[a] = u->den == 1 ? in[a] * u->num : (in[a] * u->num + 2 * pad - LTX2_BLUR_TAPS) / u->den + 1;
    }
    return LTX2_OK;
}
