/* The audio VAE's shared op-table stages (audio_vae_run.h). */
#include "model/audio_vae_run.h"

#include <stdlib.h>
#include <string.h>

#include "model/audio_vae.h"

void audio_dev_res_release(const ltx2_backend *be, audio_dev_res *r) {
    vae_dev_conv_release(be, &r->conv1);
    vae_dev_conv_release(be, &r->conv2);
    vae_dev_conv_release(be, &r->nin);
}

void audio_dev_net_release(audio_dev_net *n) {
    const ltx2_backend *be = n->be;
    if (!be) return;
    vae_dev_conv_release(be, &n->conv_in);
    vae_dev_conv_release(be, &n->conv_out);
    audio_dev_res_release(be, &n->mid1);
    audio_dev_res_release(be, &n->mid2);
    for (int l = 0; l < LTX2_AUDIO_MAX_LEVELS; l++) {
        audio_dev_level *lv = &n->levels[l];
        for (int b = 0; lv->blocks && b < lv->n_blocks; b++) audio_dev_res_release(be, &lv->blocks[b]);
        free(lv->blocks);
        vae_dev_conv_release(be, &lv->resample);
        free(lv->resample_w);
    }
}

/* dump(name) of a device activation [B, T, 1, F, C] in the reference's [B, C, T, F] layout, the
 * first c channels. */
ltx2_status audio_dump_act(vae_run *r, ltx2_audio_dump_fn dump, void *user, const char *name, const ltx2_tensor *x,
                            int64_t c) {
    if (!dump) return LTX2_OK;
    const int64_t rows = ltx2_tensor_numel(x) / x->shape[4];
    float *h = malloc((size_t)ltx2_tensor_numel(x) * sizeof(float));
    if (!h) return LTX2_ERROR(r->ctx, LTX2_ERR_OOM, "audio VAE dump %s", name);
    ltx2_status st = vae_dev_to_host(r->ctx, r->be, x, h);
    if (st == LTX2_OK) st = r->be->sync(r->be, r->ctx);
    if (st == LTX2_OK) {
        for (int64_t k = 0; c != x->shape[4] && k < rows; k++)
            memmove(h + k * c, h + k * x->shape[4], (size_t)c * sizeof(float));
        const ltx2_audio_act a = {.d = h, .n = x->shape[0], .t = x->shape[1], .f = x->shape[3], .c = c};
        ltx2_audio_act_dump(dump, user, name, &a);
    }
    free(h);
    return st;
}

/* ResnetBlock: x = shortcut(x) + conv2(SiLU(PN(conv1(SiLU(PN(x)))))), shortcut = nin or x. */
ltx2_status audio_res_block(vae_run *r, const audio_dev_res *rb, ltx2_tensor *x) {
    ltx2_tensor h, h1, h2;
    LTX2_TRY(vae_run_new(r, 5, x->shape, &h));
    LTX2_TRY(ltx2_backend_pixel_norm(r->be, r->ctx, x, LTX2_AUDIO_PIXEL_NORM_EPS, true, &h));
    ltx2_status st = vae_run_conv3d(r, &rb->conv1, &h, &h1);
    if (st != LTX2_OK) return ltx2_error_prefix(r->ctx, "conv1");
    vae_run_retire(r, &h);
    LTX2_TRY(ltx2_backend_pixel_norm(r->be, r->ctx, &h1, LTX2_AUDIO_PIXEL_NORM_EPS, true, &h1));
    st = vae_run_conv3d(r, &rb->conv2, &h1, &h2);
    if (st != LTX2_OK) return ltx2_error_prefix(r->ctx, "conv2");
    vae_run_retire(r, &h1);
    if (rb->has_nin) {
        ltx2_tensor sc;
        st = vae_run_conv3d(r, &rb->nin, x, &sc);
        if (st != LTX2_OK) return ltx2_error_prefix(r->ctx, "nin_shortcut");
        vae_run_retire(r, x);
        *x = sc;
    }
    const ltx2_mod_rows plain = {.rows_per_group = 1}; /* unused without a gate */
    LTX2_TRY(ltx2_backend_gated_add(r->be, r->ctx, x, &h2, NULL, &plain));
    vae_run_retire(r, &h2);
    return vae_run_flush(r);
}

