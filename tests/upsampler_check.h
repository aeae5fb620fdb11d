/* The latent upsampler's one forward (src/model/upsampler_forward.c) on a device backend against the
 * same forward on the CPU backend in fp32 (the reference; tests/test_upsampler.c holds it to the
 * ltx-core goldens), on the golden inputs "upsampler.<kind>.in" with the tiny upsamplers: spatial
 * x2 (conv + pixel shuffle), spatial x2 through the rational resampler at ratio 2/1 (no blur),
 * x1.5 (shuffle by 3, blur_downsample by 2) and temporal x2 (shuffle dropping the first frame).
 * Uses the backends and comparison rule of vae_device_check.h. */
#ifndef LTX2_TEST_UPSAMPLER_CHECK_H
#define LTX2_TEST_UPSAMPLER_CHECK_H

#include "model/upsampler.h"
#include "vae_device_check.h"

#define UPS_KINDS 4

typedef struct ups_case {
    const char *kind;
    ltx2_st_set *w;
    ltx2_upsampler *u;
    float *in, *ref;
    int64_t is[5], os[5];
} ups_case;

static void ups_case_free(ups_case *c) {
    ltx2_upsampler_free(c->u);
    ltx2_st_set_close(c->w);
    free(c->in);
    free(c->ref);
}

static bool ups_case_load(ups_case *c, const char *kind, const ltx2_st_file *gold) {
    memset(c, 0, sizeof(*c));
    c->kind = kind;
    char path[1024], name[128];
    snprintf(path, sizeof(path), "%s/weights/tiny/ltx2-tiny-upsampler-%s.safetensors", LTX2_SOURCE_DIR, kind);
    snprintf(name, sizeof(name), "upsampler.%s.in", kind);
    bool ok = ltx2_st_set_open(g_ctx, path, &c->w) == LTX2_OK && ltx2_upsampler_load(g_ctx, c->w, &c->u) == LTX2_OK;
    if (ok) c->in = ltx2_st_tensor_to_ndhwc(g_ctx, ltx2_st_find(gold, name), c->is);
    ok = ok && c->in && ltx2_upsampler_out_shape(g_ctx, c->u, c->is, c->os) == LTX2_OK;
    if (ok) {
        c->ref = malloc((size_t)(c->os[0] * c->os[1] * c->os[2] * c->os[3] * c->os[4]) * sizeof(float));
        ltx2_tensor it = ltx2_tensor_make(c->in, LTX2_F32, 5, c->is), ot = ltx2_tensor_make(c->ref, LTX2_F32, 5, c->os);
        ok = c->ref && ltx2_upsampler_forward(g_ctx, c->u, &it, &ot) == LTX2_OK;
    }
    CHECK(ok, "upsampler %s: loading / CPU reference: %s", kind, ltx2_last_error(g_ctx));
    return ok;
}

static void ups_check(const be_case *bc, const ups_case *c) {
    if (!c->u || !c->ref) return;
    const int64_t n = c->os[0] * c->os[1] * c->os[2] * c->os[3] * c->os[4];
    float *out = malloc((size_t)n * sizeof(float));
    const ltx2_status st = ltx2_upsampler_forward_on(g_ctx, c->u, bc->be, c->in, c->is, out);
    CHECK(st == LTX2_OK, "%s upsampler %s: %s", bc->be->name, c->kind, ltx2_last_error(g_ctx));
    char what[96];
    snprintf(what, sizeof(what), "upsampler %s", c->kind);
    if (st == LTX2_OK && compare(bc, what, c->ref, out, c->os)) printf("%s upsampler %s: matches\n", bc->be->name, c->kind);
    free(out);
}

/* The four tiny upsamplers and their CPU references; returns how many loaded. */
static int ups_cases_load(ups_case cases[UPS_KINDS]) {
    static const char *const kinds[UPS_KINDS] = {"spatial-x2", "spatial-x2-rational", "spatial-x1.5", "temporal-x2"};
    char path[1024];
    snprintf(path, sizeof(path), "%s/tests/golden/data/upsampler.safetensors", LTX2_SOURCE_DIR);
    ltx2_st_file *gold = NULL;
    if (ltx2_st_open(g_ctx, path, &gold) != LTX2_OK) {
        CHECK(false, "%s: %s", path, ltx2_last_error(g_ctx));
        return 0;
    }
    int n = 0;
    for (int k = 0; k < UPS_KINDS; k++) n += ups_case_load(&cases[k], kinds[k], gold);
    ltx2_st_close(gold);
    return n;
}

#endif
