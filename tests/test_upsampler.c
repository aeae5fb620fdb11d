/* Latent upsampler against ltx-core 1.0.0 upsample_video (un-normalise with the VAE statistics,
 * upsample, normalise) for the four tiny upsampler files: spatial x2 (conv + pixel shuffle),
 * spatial x2 and x1.5 rational (conv + shuffle + blur-downsample) and temporal x2. Goldens:
 * tests/golden/data/upsampler.safetensors (gen_vae_tiled_goldens.py, NCDHW). */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/context.h"
#include "core/dtype.h"
#include "io/safetensors.h"
#include "model/upsampler.h"
#include "test_util.h"

/* fp32 both sides through ~11 convs and GroupNorms (stats in double here, float in torch). */
#define UPS_REL_L2_TOL 1e-5

static float *stat(ltx2_context *ctx, const ltx2_st_set *set, const char *name) {
    const ltx2_st_tensor *t = ltx2_st_set_find(set, name, NULL);
    if (!t || t->ndim != 1) return NULL;
    float *d = malloc((size_t)t->shape[0] * sizeof(float));
    if (ltx2_convert(ctx, d, LTX2_F32, t->data, t->dtype, (size_t)t->shape[0]) != LTX2_OK) {
        free(d);
        return NULL;
    }
    return d;
}

int main(void) {
    ltx2_context *ctx = ltx2_context_create(NULL);
    if (!ctx) return 1;
    char path[1024];
    ltx2_st_set *vae = NULL;
    ltx2_st_file *gold = NULL;
    snprintf(path, sizeof(path), "%s/weights/tiny/ltx2-tiny-2.3.safetensors", LTX2_SOURCE_DIR);
    CHECK(ltx2_st_set_open(ctx, path, &vae) == LTX2_OK, "%s", ltx2_last_error(ctx));
    snprintf(path, sizeof(path), "%s/tests/golden/data/upsampler.safetensors", LTX2_SOURCE_DIR);
    CHECK(ltx2_st_open(ctx, path, &gold) == LTX2_OK, "%s", ltx2_last_error(ctx));
    float *mean = vae ? stat(ctx, vae, "vae.per_channel_statistics.mean-of-means") : NULL;
    float *std = vae ? stat(ctx, vae, "vae.per_channel_statistics.std-of-means") : NULL;
    CHECK(mean && std, "VAE statistics missing");
    const char *kinds[] = {"spatial-x2", "spatial-x2-rational", "spatial-x1.5", "temporal-x2"};
    for (int k = 0; k < 4 && gold && mean && std; k++) {
        ltx2_st_set *set = NULL;
        ltx2_upsampler *u = NULL;
        snprintf(path, sizeof(path), "%s/weights/tiny/ltx2-tiny-upsampler-%s.safetensors", LTX2_SOURCE_DIR, kinds[k]);
        CHECK(ltx2_st_set_open(ctx, path, &set) == LTX2_OK, "%s", ltx2_last_error(ctx));
        CHECK(set && ltx2_upsampler_load(ctx, set, &u) == LTX2_OK, "%s: load: %s", kinds[k], ltx2_last_error(ctx));
        char name[128];
        int64_t is[5], os[5], ws[5];
        snprintf(name, sizeof(name), "upsampler.%s.in", kinds[k]);
        float *in = ltx2_st_tensor_to_ndhwc(ctx, ltx2_st_find(gold, name), is);
        snprintf(name, sizeof(name), "upsampler.%s.out", kinds[k]);
        float *ref = ltx2_st_tensor_to_ndhwc(ctx, ltx2_st_find(gold, name), os);
        CHECK(in && ref, "%s: goldens missing", kinds[k]);
        if (u && in && ref) {
            CHECK(ltx2_upsampler_out_shape(ctx, u, is, ws) == LTX2_OK && memcmp(ws, os, sizeof(ws)) == 0,
                  "%s: output shape [%lld %lld %lld %lld %lld] vs reference [%lld %lld %lld %lld %lld]", kinds[k],
                  (long long)ws[0], (long long)ws[1], (long long)ws[2], (long long)ws[3], (long long)ws[4],
                  (long long)os[0], (long long)os[1], (long long)os[2], (long long)os[3], (long long)os[4]);
            const int64_t n = os[0] * os[1] * os[2] * os[3] * os[4];
            float *out = malloc((size_t)n * sizeof(float));
            ltx2_tensor it = ltx2_tensor_make(in, LTX2_F32, 5, is), ot = ltx2_tensor_make(out, LTX2_F32, 5, os);
            CHECK(ltx2_upsampler_upsample_latent(ctx, u, mean, std, &it, &ot) == LTX2_OK, "%s: %s", kinds[k],
                  ltx2_last_error(ctx));
            double num = 0, den = 0;
            for (int64_t i = 0; i < n; i++) {
                num += ((double)out[i] - ref[i]) * ((double)out[i] - ref[i]);
                den += (double)ref[i] * ref[i];
            }
            const double e = sqrt(num / den);
            CHECK(e <= UPS_REL_L2_TOL, "%s: rel-L2 %.3g vs ltx-core", kinds[k], e);
            if (getenv("LTX2_TEST_VERBOSE")) printf("  %-20s rel-L2 %.3g\n", kinds[k], e);
            /* wrong channel count is refused */
            int64_t bad[5] = {is[0], is[1], is[2], is[3], is[4] + 1};
            CHECK(ltx2_upsampler_out_shape(ctx, u, bad, ws) == LTX2_ERR_SHAPE, "%s: bad channels accepted", kinds[k]);
            ltx2_clear_error(ctx);
            free(out);
        }
        free(in);
        free(ref);
        ltx2_upsampler_free(u);
        ltx2_st_set_close(set);
    }
    /* a VAE checkpoint is not an upsampler: missing tensors / config are named */
    ltx2_upsampler *u = NULL;
    CHECK(vae && ltx2_upsampler_load(ctx, vae, &u) != LTX2_OK && u == NULL, "VAE file loaded as an upsampler");
    ltx2_clear_error(ctx);
    free(mean);
    free(std);
    ltx2_st_close(gold);
    ltx2_st_set_close(vae);
    ltx2_context_free(ctx);
    return test_finish();
}
