/* Video VAE decoder on the CPU (see video_vae.h). Reference: ltx-core 1.0.0
 * model/video_vae/video_vae.py VideoDecoder.forward, resnet.py ResnetBlock3D / UNetMidBlock3D,
 * sampling.py DepthToSpaceUpsample, ops.py unpatchify / PerChannelStatistics,
 * convolution.py CausalConv3d. Activations are NDHWC fp32 buffers owned by the forward. */
#include "model/video_vae.h"
#include "model/video_vae_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/context.h"
#include "core/dtype.h"
#include "core/finite.h"
#include "core/rng.h"
#include "cpu/cpu_ops.h"

/* ---------------------------------------------------------------------------------------------
 * Loading
 * ------------------------------------------------------------------------------------------- */


ltx2_status vae_find_tensor(vae_loader *L, const char *key, int ndim, const int64_t *shape,
                               const ltx2_st_tensor **out) {
    const ltx2_st_tensor *t = ltx2_st_set_find(L->set, key, NULL);
    if (!t) return LTX2_ERROR(L->ctx, LTX2_ERR_NOT_FOUND, "video VAE: missing tensor %s", key);
    char got[96], want[96];
    bool ok = t->ndim == ndim;
    for (int i = 0; ok && i < ndim; i++) ok = t->shape[i] == shape[i];
    if (!ok)
        return LTX2_ERROR(L->ctx, LTX2_ERR_SHAPE, "video VAE: tensor %s has shape %s, expected %s", key,
                          ltx2_shape_str(t->shape, t->ndim, got, sizeof(got)),
                          ltx2_shape_str(shape, ndim, want, sizeof(want)));
    if (!ltx2_dtype_is_float(t->dtype))
        return LTX2_ERROR(L->ctx, LTX2_ERR_DTYPE, "video VAE: tensor %s has dtype %s, expected a float type",
                          key, ltx2_dtype_name(t->dtype));
    if (L->n_used == L->cap_used) {
        size_t cap = L->cap_used ? 2 * L->cap_used : 64;
        const ltx2_st_tensor **p = realloc(L->used, cap * sizeof(*p));
        if (!p) return LTX2_ERROR(L->ctx, LTX2_ERR_OOM, "video VAE: key list");
        L->used = p;
        L->cap_used = cap;
    }
    L->used[L->n_used++] = t;
    *out = t;
    return LTX2_OK;
}

/* Loads tensor `key` of the given shape, converted to a fresh f32 buffer. */
ltx2_status vae_load_f32(vae_loader *L, const char *key, int ndim, const int64_t *shape, float **out) {
    const ltx2_st_tensor *t;
    LTX2_TRY(vae_find_tensor(L, key, ndim, shape, &t));
    int64_t n = 1;
    for (int i = 0; i < ndim; i++) n *= shape[i];
    float *buf = malloc((size_t)n * sizeof(float));
    if (!buf) return LTX2_ERROR(L->ctx, LTX2_ERR_OOM, "video VAE: %s (%lld floats)", key, (long long)n);
    ltx2_status st = ltx2_convert(L->ctx, buf, LTX2_F32, t->data, t->dtype, (size_t)n);
    if (st == LTX2_OK) st = ltx2_check_finite(L->ctx, LTX2_ERR_FORMAT, buf, ndim, shape, "tensor");
    if (st != LTX2_OK) {
        free(buf);
        ltx2_error_prefix(L->ctx, "video VAE: %s", key);
        return st;
    }
    *out = buf;
    return LTX2_OK;
}

void vae_conv_free(ltx2_vae_conv *c) {
    free(c->weight);
    free(c->bias);
    c->weight = c->bias = NULL;
}

/* `<prefix><part>.<path>.conv.{weight,bias}`: a CausalConv3d (the nn.Conv3d sits at `.conv`). */
ltx2_status vae_load_conv(vae_loader *L, const char *path, int64_t c_in, int64_t c_out, ltx2_conv_tpad tpad,
                             ltx2_conv_spad spad, ltx2_vae_conv *c) {
    char key[VAE_KEY_CAP];
    memset(c, 0, sizeof(*c));
    c->desc = (ltx2_conv3d_desc){.c_in = c_in, .c_out = c_out, .kt = VAE_KERNEL, .kh = VAE_KERNEL,
                                 .kw = VAE_KERNEL, .st = 1, .sh = 1, .sw = 1, .tpad = tpad, .spad = spad};
    const int64_t wshape[5] = {c_out, c_in, VAE_KERNEL, VAE_KERNEL, VAE_KERNEL};
    float *w = NULL;
    snprintf(key, sizeof(key), "%s%s.%s.conv.weight", L->prefix, L->part, path);
    LTX2_TRY(vae_load_f32(L, key, 5, wshape, &w));
    c->weight = malloc((size_t)ltx2_conv3d_packed_numel(&c->desc) * sizeof(float));
    if (!c->weight) {
        free(w);
        return LTX2_ERROR(L->ctx, LTX2_ERR_OOM, "video VAE: packed %s", key);
    }
    ltx2_status st = ltx2_conv3d_pack_weight(L->ctx, &c->desc, w, c->weight);
    free(w);
    if (st != LTX2_OK) return st;
    snprintf(key, sizeof(key), "%s%s.%s.conv.bias", L->prefix, L->part, path);
    return vae_load_f32(L, key, 1, &c_out, &c->bias);
}

/* `<prefix><part>.<path>` as f32. */
static ltx2_status load_part(vae_loader *L, const char *path, int ndim, const int64_t *shape, float **out) {
    char key[2 * VAE_KEY_CAP];
    if (snprintf(key, sizeof(key), "%s%s.%s", L->prefix, L->part, path) >= (int)sizeof(key))
        return LTX2_ERROR(L->ctx, LTX2_ERR_INVALID_ARG, "video VAE: tensor name too long (%s)", path);
    return vae_load_f32(L, key, ndim, shape, out);
}

/* `<path>.timestep_embedder.linear_{1,2}.{weight,bias}` of a PixArtAlphaCombinedTimestepSizeEmbeddings. */
static ltx2_status load_time_embed(vae_loader *L, const char *path, int64_t dim, ltx2_vae_time_embed *e) {
    char key[VAE_KEY_CAP];
    const int64_t w1[2] = {dim, LTX2_VAE_TIME_PROJ_DIM}, w2[2] = {dim, dim};
    e->dim = dim;
    snprintf(key, sizeof(key), "%s.timestep_embedder.linear_1.weight", path);
    LTX2_TRY(load_part(L, key, 2, w1, &e->w1));
    snprintf(key, sizeof(key), "%s.timestep_embedder.linear_1.bias", path);
    LTX2_TRY(load_part(L, key, 1, &dim, &e->b1));
    snprintf(key, sizeof(key), "%s.timestep_embedder.linear_2.weight", path);
    LTX2_TRY(load_part(L, key, 2, w2, &e->w2));
    snprintf(key, sizeof(key), "%s.timestep_embedder.linear_2.bias", path);
    return load_part(L, key, 1, &dim, &e->b2);
}

static void time_embed_free(ltx2_vae_time_embed *e) {
    free(e->w1);
    free(e->b1);
    free(e->w2);
    free(e->b2);
    memset(e, 0, sizeof(*e));
}

/* Per-layer conditioning tensors of res_x block i (scale_shift_table, per_channel_scale{1,2}). */
static ltx2_status load_res_conditioning(vae_loader *L, int i, bool tc, ltx2_vae_dec_block *b) {
    char path[VAE_KEY_CAP];
    const int64_t C = b->c_in, sst[2] = {4, C}, pcs[3] = {C, 1, 1};
    if (tc) {
        snprintf(path, sizeof(path), "up_blocks.%d.time_embedder", i);
        LTX2_TRY(load_time_embed(L, path, 4 * C, &b->temb));
        b->scale_shift = calloc((size_t)b->n_layers, sizeof(float *));
        if (!b->scale_shift) return LTX2_ERROR(L->ctx, LTX2_ERR_OOM, "video VAE: scale_shift tables");
        for (int j = 0; j < b->n_layers; j++) {
            snprintf(path, sizeof(path), "up_blocks.%d.res_blocks.%d.scale_shift_table", i, j);
            LTX2_TRY(load_part(L, path, 2, sst, &b->scale_shift[j]));
        }
    }
    if (b->inject_noise) {
        b->noise_scale = calloc((size_t)(2 * b->n_layers), sizeof(float *));
        if (!b->noise_scale) return LTX2_ERROR(L->ctx, LTX2_ERR_OOM, "video VAE: noise scales");
        for (int j = 0; j < 2 * b->n_layers; j++) {
            snprintf(path, sizeof(path), "up_blocks.%d.res_blocks.%d.per_channel_scale%d", i, j / 2, j % 2 + 1);
            LTX2_TRY(load_part(L, path, 3, pcs, &b->noise_scale[j]));
        }
    }
    return LTX2_OK;
}

void ltx2_video_decoder_free(ltx2_video_decoder *dec) {
    if (!dec) return;
    ltx2_vae_device_free(dec->placed);
    free(dec->mean_of_means);
    free(dec->std_of_means);
    vae_conv_free(&dec->conv_in);
    vae_conv_free(&dec->conv_out);
    for (int i = 0; i < dec->n_blocks; i++) {
        ltx2_vae_dec_block *b = &dec->blocks[i];
        if (b->res)
            for (int j = 0; j < 2 * b->n_layers; j++) vae_conv_free(&b->res[j]);
        free(b->res);
        vae_conv_free(&b->up);
        if (b->noise_scale)
            for (int j = 0; j < 2 * b->n_layers; j++) free(b->noise_scale[j]);
        free(b->noise_scale);
        if (b->scale_shift)
            for (int j = 0; j < b->n_layers; j++) free(b->scale_shift[j]);
        free(b->scale_shift);
        time_embed_free(&b->temb);
    }
    free(dec->blocks);
    time_embed_free(&dec->last_temb);
    free(dec->last_scale_shift);
    free(dec);
}

bool vae_has_prefix(const char *s, const char *p) { return strncmp(s, p, strlen(p)) == 0; }

/* Every `<prefix><part>.*` tensor must have been used: an extra one means the config and the
 * file disagree (e.g. conditioning tensors with timestep_conditioning false, or more layers). */
ltx2_status vae_check_all_used(vae_loader *L) {
    char key[VAE_KEY_CAP];
    snprintf(key, sizeof(key), "%s%s.", L->prefix, L->part);
    for (size_t i = 0; i < L->set->n_tensors; i++) {
        const ltx2_st_tensor *t = L->set->tensors[i];
        if (!vae_has_prefix(t->name, key)) continue;
        size_t j = 0;
        while (j < L->n_used && L->used[j] != t) j++;
        if (j == L->n_used)
            return LTX2_ERROR(L->ctx, LTX2_ERR_FORMAT,
                              "video VAE: unexpected tensor %s (not part of a %s with this config: check "
                              "vae.%s_blocks / timestep_conditioning)",
                              t->name, L->part, L->part);
    }
    return LTX2_OK;
}

/* Checks the block list and fills the shapes of every up block (no tensors touched). */
static ltx2_status plan_blocks(ltx2_context *ctx, ltx2_video_decoder *dec) {
    const ltx2_vae_config *cfg = &dec->cfg;
    int64_t c = cfg->decoder_base_channels * 8; /* ltx-core: `feature_channels = base_channels * 8` */
    dec->time_factor = 1;
    dec->space_factor = cfg->patch_size;
    for (int i = 0; i < dec->n_blocks; i++) {
        const ltx2_vae_block *src = &cfg->decoder_blocks[cfg->n_decoder_blocks - 1 - i];
        ltx2_vae_dec_block *b = &dec->blocks[i];
        b->kind = src->kind;
        b->c_in = c;
        b->stride[0] = b->stride[1] = b->stride[2] = 1;
        switch (src->kind) {
        case LTX2_VAE_RES_X:
            b->inject_noise = src->inject_noise;
            if (b->inject_noise) dec->needs_noise = true;
            b->n_layers = (int)src->num_layers;
            b->c_out = c;
            break;
        case LTX2_VAE_COMPRESS_TIME:
        case LTX2_VAE_COMPRESS_SPACE:
        case LTX2_VAE_COMPRESS_ALL: {
            if (src->kind != LTX2_VAE_COMPRESS_SPACE) b->stride[0] = 2;
            if (src->kind != LTX2_VAE_COMPRESS_TIME) b->stride[1] = b->stride[2] = 2;
            const int64_t prod = b->stride[0] * b->stride[1] * b->stride[2], m = src->multiplier;
            /* ltx-core reads `residual` only for compress_all. */
            b->residual = src->kind == LTX2_VAE_COMPRESS_ALL && src->residual;
            if (c % m != 0 || (prod * c) % m != 0)
                return LTX2_ERROR(ctx, LTX2_ERR_FORMAT,
                                  "video VAE: decoder.up_blocks.%d (%s): %lld channels not divisible by multiplier %lld",
                                  i, ltx2_vae_block_name(src->kind), (long long)c, (long long)m);
            if (b->residual && (c % prod != 0 || prod % m != 0))
                return LTX2_ERROR(ctx, LTX2_ERR_FORMAT,
                                  "video VAE: decoder.up_blocks.%d residual needs %lld channels and stride product "
                                  "%lld to divide by %lld and multiplier %lld",
                                  i, (long long)c, (long long)prod, (long long)prod, (long long)m);
            b->c_out = c / m;
            dec->time_factor *= b->stride[0];
            dec->space_factor *= b->stride[1];
            break;
        }
        default:
            return LTX2_ERROR(ctx, LTX2_ERR_UNSUPPORTED,
                              "video VAE: decoder block \"%s\" (up_blocks.%d) is not supported (not used by LTX-2)",
                              ltx2_vae_block_name(src->kind), i);
        }
        c = b->c_out;
    }
    return LTX2_OK;
}

ltx2_status ltx2_video_decoder_shape_only(ltx2_context *ctx, const ltx2_vae_config *cfg, ltx2_video_decoder **out) {
    if (!cfg || !out) return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "video VAE: NULL argument");
    *out = NULL;
    if (cfg->n_decoder_blocks < 0)
        return LTX2_ERROR(ctx, LTX2_ERR_NOT_FOUND, "video VAE: the config has no vae.decoder_blocks");
    ltx2_video_decoder *dec = calloc(1, sizeof(*dec));
    if (!dec) return LTX2_ERROR(ctx, LTX2_ERR_OOM, "video VAE: decoder struct");
    dec->cfg = *cfg;
    dec->timestep_conditioning = cfg->timestep_conditioning > 0;
    dec->n_blocks = cfg->n_decoder_blocks;
    dec->blocks = calloc((size_t)(dec->n_blocks ? dec->n_blocks : 1), sizeof(*dec->blocks));
    if (!dec->blocks) dec->n_blocks = 0;
    ltx2_status st = dec->blocks ? plan_blocks(ctx, dec) : LTX2_ERROR(ctx, LTX2_ERR_OOM, "video VAE: blocks");
    if (st != LTX2_OK) {
        ltx2_video_decoder_free(dec);
        return st;
    }
    *out = dec;
    return LTX2_OK;
}

ltx2_status ltx2_video_decoder_load(ltx2_context *ctx, const ltx2_st_set *weights, const char *prefix,
                                    const ltx2_vae_config *cfg, ltx2_video_decoder **out) {
    if (!weights || !cfg || !out) return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "video VAE: NULL argument");
    *out = NULL;
    if (!prefix) prefix = "";
    if (cfg->n_decoder_blocks < 0)
        return LTX2_ERROR(ctx, LTX2_ERR_NOT_FOUND,
                          "video VAE: the config has no vae.decoder_blocks (ltx-core would build an empty decoder)");
    if (cfg->in_channels != 3 || cfg->out_channels < 1 || cfg->patch_size < 1)
        return LTX2_ERROR(ctx, LTX2_ERR_UNSUPPORTED, "video VAE: in_channels %lld / patch_size %lld unsupported",
                          (long long)cfg->in_channels, (long long)cfg->patch_size);

    /* Timestep conditioning: the config wins when it says; when absent (ltx-core would default to
     * true) the presence of the conditioning tensors decides. */
    char key[VAE_KEY_CAP];
    snprintf(key, sizeof(key), "%sdecoder.last_scale_shift_table", prefix);
    const bool has_tc_keys = ltx2_st_set_find(weights, key, NULL) != NULL;
    const int tc = cfg->timestep_conditioning < 0 ? (has_tc_keys ? 1 : 0) : cfg->timestep_conditioning;

    ltx2_video_decoder *dec = calloc(1, sizeof(*dec));
    if (!dec) return LTX2_ERROR(ctx, LTX2_ERR_OOM, "video VAE: decoder struct");
    dec->cfg = *cfg;
    dec->cfg.timestep_conditioning = tc;
    dec->timestep_conditioning = tc != 0;
    dec->needs_noise = tc != 0;
    dec->n_blocks = cfg->n_decoder_blocks;
    dec->blocks = calloc((size_t)(dec->n_blocks ? dec->n_blocks : 1), sizeof(*dec->blocks));
    vae_loader L = {.ctx = ctx, .set = weights, .prefix = prefix, .part = "decoder"};
    ltx2_status st = dec->blocks ? LTX2_OK : LTX2_ERROR(ctx, LTX2_ERR_OOM, "video VAE: blocks");
    if (st == LTX2_OK) st = plan_blocks(ctx, dec);

    const ltx2_conv_tpad tpad = cfg->causal_decoder ? LTX2_CONV_TPAD_CAUSAL : LTX2_CONV_TPAD_SYMMETRIC;
    const ltx2_conv_spad spad = cfg->decoder_padding == LTX2_VAE_PAD_REFLECT ? LTX2_CONV_SPAD_REFLECT
                                                                             : LTX2_CONV_SPAD_ZEROS;
    const int64_t lc = cfg->latent_channels;
    if (st == LTX2_OK) {
        snprintf(key, sizeof(key), "%sper_channel_statistics.mean-of-means", prefix);
        st = vae_load_f32(&L, key, 1, &lc, &dec->mean_of_means);
    }
    if (st == LTX2_OK) {
        snprintf(key, sizeof(key), "%sper_channel_statistics.std-of-means", prefix);
        st = vae_load_f32(&L, key, 1, &lc, &dec->std_of_means);
    }
    if (st == LTX2_OK) st = vae_load_conv(&L, "conv_in", lc, cfg->decoder_base_channels * 8, tpad, spad, &dec->conv_in);
    for (int i = 0; i < dec->n_blocks && st == LTX2_OK; i++) {
        ltx2_vae_dec_block *b = &dec->blocks[i];
        char path[VAE_KEY_CAP];
        if (b->kind == LTX2_VAE_RES_X) {
            b->res = calloc((size_t)(2 * b->n_layers), sizeof(*b->res));
            if (!b->res) {
                st = LTX2_ERROR(ctx, LTX2_ERR_OOM, "video VAE: res blocks");
                break;
            }
            for (int j = 0; j < 2 * b->n_layers && st == LTX2_OK; j++) {
                snprintf(path, sizeof(path), "up_blocks.%d.res_blocks.%d.conv%d", i, j / 2, j % 2 + 1);
                st = vae_load_conv(&L, path, b->c_in, b->c_in, tpad, spad, &b->res[j]);
            }
            if (st == LTX2_OK) st = load_res_conditioning(&L, i, tc != 0, b);
        } else {
            const int64_t prod = b->stride[0] * b->stride[1] * b->stride[2];
            snprintf(path, sizeof(path), "up_blocks.%d.conv", i);
            st = vae_load_conv(&L, path, b->c_in, prod * b->c_out, tpad, spad, &b->up);
        }
    }
    const int64_t c_last = dec->n_blocks ? dec->blocks[dec->n_blocks - 1].c_out : cfg->decoder_base_channels * 8;
    if (st == LTX2_OK)
        st = vae_load_conv(&L, "conv_out", c_last, cfg->out_channels * cfg->patch_size * cfg->patch_size, tpad, spad,
                       &dec->conv_out);
    if (st == LTX2_OK && tc) {
        float *mult = NULL;
        st = load_part(&L, "timestep_scale_multiplier", 0, NULL, &mult);
        if (st == LTX2_OK) dec->timestep_scale_multiplier = mult[0];
        free(mult);
        const int64_t sst[2] = {2, c_last};
        if (st == LTX2_OK) st = load_time_embed(&L, "last_time_embedder", 2 * c_last, &dec->last_temb);
        if (st == LTX2_OK) st = load_part(&L, "last_scale_shift_table", 2, sst, &dec->last_scale_shift);
    }

    if (st == LTX2_OK) st = vae_check_all_used(&L);
    free(L.used);
    if (st != LTX2_OK) {
        ltx2_video_decoder_free(dec);
        return st;
    }
    *out = dec;
    return LTX2_OK;
}

/* ---------------------------------------------------------------------------------------------
 * Shapes
 * ------------------------------------------------------------------------------------------- */

ltx2_status ltx2_video_decoder_out_shape(ltx2_context *ctx, const ltx2_video_decoder *dec,
                                         const int64_t latent_ndhwc[5], int64_t video_ndhwc[5]) {
    if (!dec || !latent_ndhwc || !video_ndhwc)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "video VAE: NULL argument");
    for (int i = 0; i < 4; i++)
        if (latent_ndhwc[i] < 1)
            return LTX2_ERROR(ctx, LTX2_ERR_SHAPE, "video VAE: latent dim %d is %lld, must be >= 1", i,
                              (long long)latent_ndhwc[i]);
    if (latent_ndhwc[4] != dec->cfg.latent_channels)
        return LTX2_ERROR(ctx, LTX2_ERR_SHAPE,
                          "video VAE: latent has %lld channels (last dim of NDHWC), the decoder expects %lld",
                          (long long)latent_ndhwc[4], (long long)dec->cfg.latent_channels);
    video_ndhwc[0] = latent_ndhwc[0];
    video_ndhwc[1] = dec->time_factor * (latent_ndhwc[1] - 1) + 1;
    video_ndhwc[2] = dec->space_factor * latent_ndhwc[2];
    video_ndhwc[3] = dec->space_factor * latent_ndhwc[3];
    video_ndhwc[4] = dec->cfg.out_channels;
    return LTX2_OK;
}

ltx2_status ltx2_video_decoder_latent_grid(ltx2_context *ctx, const ltx2_video_decoder *dec,
                                           int64_t frames, int64_t height, int64_t width,
                                           int64_t latent_fhw[3]) {
    if (!dec || !latent_fhw) return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "video VAE: NULL argument");
    const int64_t tf = dec->time_factor, sf = dec->space_factor;
    if (frames < 1 || (frames - 1) % tf != 0)
        return LTX2_ERROR(ctx, LTX2_ERR_SHAPE,
                          "video VAE: %lld frames is not %lld*k+1 (e.g. %lld or %lld)", (long long)frames,
                          (long long)tf, (long long)(frames < 1 ? 1 : ((frames - 1) / tf) * tf + 1),
                          (long long)(frames < 1 ? tf + 1 : ((frames - 1) / tf + 1) * tf + 1));
    if (height < sf || width < sf || height % sf != 0 || width % sf != 0)
        return LTX2_ERROR(ctx, LTX2_ERR_SHAPE, "video VAE: %lldx%lld (HxW) is not a multiple of %lld",
                          (long long)height, (long long)width, (long long)sf);
    latent_fhw[0] = (frames - 1) / tf + 1;
    latent_fhw[1] = height / sf;
    latent_fhw[2] = width / sf;
    return LTX2_OK;
}

/* ---------------------------------------------------------------------------------------------
 * Forward
 * ------------------------------------------------------------------------------------------- */

/* Where the decoder's noise comes from (see ltx2_vae_noise_fn); counts draws for Philox streams. */
typedef vae_noise_src noise_src;

static ltx2_status draw_noise(ltx2_context *ctx, noise_src *ns, const char *name, int ndim, const int64_t *shape,
                              float *out) {
    int64_t n = 1;
    for (int i = 0; i < ndim; i++) n *= shape[i];
    ltx2_status st = LTX2_OK;
    if (ns->o->noise) {
        st = ns->o->noise(ctx, name, ndim, shape, out, ns->o->noise_user);
        if (st != LTX2_OK) ltx2_error_prefix(ctx, "video VAE decode: noise %s", name);
    } else {
        ltx2_rng_normal(ns->o->seed, ns->o->stream_base + ns->k, 0, (size_t)n, out);
    }
    ns->k++;
    return st;
}

/* PixArtAlphaCombinedTimestepSizeEmbeddings(t): sinusoid (flip_sin_to_cos, shift 0, max period
 * 10000) -> linear_1 -> SiLU -> linear_2, in ltx-core's fp32 operation order for the sinusoid. */
static ltx2_status time_embed(ltx2_context *ctx, const ltx2_vae_time_embed *e, float t, float *out) {
    enum { HALF = LTX2_VAE_TIME_PROJ_DIM / 2 };
    float proj[LTX2_VAE_TIME_PROJ_DIM];
    const float neg_log_period = (float)-log(VAE_TIME_MAX_PERIOD);
    for (int i = 0; i < HALF; i++) {
        const float freq = expf(neg_log_period * (float)i / (float)HALF);
        const float arg = t * freq;
        proj[i] = (float)cos((double)arg); /* flip_sin_to_cos: cos half first */
        proj[HALF + i] = (float)sin((double)arg);
    }
    float *h = malloc((size_t)e->dim * sizeof(float));
    if (!h) return LTX2_ERROR(ctx, LTX2_ERR_OOM, "video VAE: time embedding (%lld)", (long long)e->dim);
    for (int64_t o = 0; o < e->dim; o++) {
        double acc = 0.0;
        for (int i = 0; i < LTX2_VAE_TIME_PROJ_DIM; i++) acc += (double)e->w1[o * LTX2_VAE_TIME_PROJ_DIM + i] * proj[i];
        const float v = (float)acc + e->b1[o];
        h[o] = v / (1.0f + expf(-v));
    }
    for (int64_t o = 0; o < e->dim; o++) {
        double acc = 0.0;
        for (int64_t i = 0; i < e->dim; i++) acc += (double)e->w2[o * e->dim + i] * h[i];
        out[o] = (float)acc + e->b2[o];
    }
    free(h);
    return LTX2_OK;
}

ltx2_status vae_draw_noise(ltx2_context *ctx, vae_noise_src *ns, const char *name, int ndim, const int64_t *shape,
                           float *out) {
    return draw_noise(ctx, ns, name, ndim, shape, out);
}

ltx2_status vae_time_embed(ltx2_context *ctx, const ltx2_vae_time_embed *e, float t, float *out) {
    return time_embed(ctx, e, t, out);
}

ltx2_vae_decode_opts ltx2_vae_decode_opts_default(void) {
    return (ltx2_vae_decode_opts){.timestep = LTX2_VAE_DECODE_TIMESTEP_DEFAULT,
                                  .noise_scale = LTX2_VAE_DECODE_NOISE_SCALE_DEFAULT};
}

ltx2_status ltx2_video_decoder_decode(ltx2_context *ctx, const ltx2_video_decoder *dec,
                                      const ltx2_tensor *latent, ltx2_tensor *video,
                                      ltx2_vae_dump_fn dump, void *user) {
    return ltx2_video_decoder_decode_ex(ctx, dec, latent, video, NULL, dump, user);
}

ltx2_status ltx2_video_decoder_place(ltx2_context *ctx, ltx2_video_decoder *dec, const ltx2_backend *be) {
    if (!dec) return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "video VAE place: NULL decoder");
    ltx2_vae_device *dv = NULL;
    if (be && be != ltx2_backend_cpu()) LTX2_TRY(ltx2_vae_device_create(ctx, be, dec, &dv));
    ltx2_vae_device_free(dec->placed);
    dec->placed = dv;
    return LTX2_OK;
}

ltx2_status ltx2_video_decoder_decode_ex(ltx2_context *ctx, const ltx2_video_decoder *dec,
                                         const ltx2_tensor *latent, ltx2_tensor *video,
                                         const ltx2_vae_decode_opts *opts, ltx2_vae_dump_fn dump, void *user) {
    if (dec && dec->placed) return ltx2_vae_device_decode(ctx, dec->placed, latent, video, opts, dump, user);
    /* the decoder's one forward on the CPU backend, over the host weights in place */
    ltx2_vae_device *dv = NULL;
    LTX2_TRY(ltx2_vae_device_create(ctx, ltx2_backend_cpu(), dec, &dv));
    const ltx2_status st = ltx2_vae_device_decode(ctx, dv, latent, video, opts, dump, user);
    ltx2_vae_device_free(dv);
    return st;
}
