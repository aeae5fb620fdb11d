/* fp8 checkpoints as Lightricks ships them: Linear weights stored F8_E4M3 with an fp32 scalar
 * `<layer>.weight_scale` (and `input_scale`) beside them. The test quantises the tiny 2.3 DiT's
 * block Linear weights the way ltx-core's quantize_weight_to_fp8_per_tensor does
 * (ltx_core/quantization/fp8_scaled_mm.py: scale = 448 / amax|w|, q = fp8(clamp(w * scale)),
 * weight_scale = 1 / scale; stored untransposed), writes the file with our safetensors writer, and
 * checks that the loader dequantises exactly `fp8(q) * weight_scale` (fuse_loras.py's formula),
 * leaves the other tensors bitwise unchanged, and that the forward still runs close to bf16. */
#define _DEFAULT_SOURCE /* mkdtemp */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/context.h"
#include "core/dtype.h"
#include "core/metrics.h"
#include "io/safetensors.h"
#include "model/dit.h"
#include "model/dit_weights.h"
#include "test_util.h"

/* torch.finfo(torch.float8_e4m3fn).max */
#define FP8_E4M3_MAX 448.0f
/* fp8 e4m3 keeps 3 mantissa bits (relative step 2^-3): a 2-block forward stays well correlated. */
#define FP8_MIN_COSINE 0.99

static ltx2_context *g_ctx;

typedef struct quant {
    char name[256];
    uint8_t *q;
    float scale[1], input_scale[1];
    int64_t n;
} quant;

static bool quantised(const char *name, const ltx2_st_tensor *t) {
    const char *p = "model.diffusion_model.transformer_blocks.";
    size_t n = strlen(name);
    return strncmp(name, p, strlen(p)) == 0 && t->ndim == 2 && n > 7 && strcmp(name + n - 7, ".weight") == 0 &&
           strstr(name, "scale_shift_table") == NULL;
}

int main(void) {
    g_ctx = ltx2_context_create(NULL);
    char src[1024], tmpl[] = "/tmp/ltx2_dit_fp8_XXXXXX", path[1100];
    snprintf(src, sizeof src, "%s/weights/tiny/ltx2-tiny-2.3.safetensors", LTX2_SOURCE_DIR);
    char *tmp = mkdtemp(tmpl);
    CHECK(tmp != NULL, "mkdtemp");
    ltx2_st_file *f = NULL;
    ltx2_st_writer *w = NULL;
    quant *qs = NULL;
    size_t nq = 0;
    float **f32s = NULL;
    ltx2_dit_weights *ref = NULL, *got = NULL;
    if (!tmp || ltx2_st_open(g_ctx, src, &f) != LTX2_OK || ltx2_st_writer_create(g_ctx, &w) != LTX2_OK) {
        CHECK(false, "setup: %s", ltx2_last_error(g_ctx));
        goto out;
    }
    snprintf(path, sizeof path, "%s/fp8.safetensors", tmp);
    qs = calloc(f->n_tensors, sizeof *qs);
    f32s = calloc(f->n_tensors, sizeof *f32s);
    for (size_t i = 0; i < f->n_meta; i++) ltx2_st_writer_set_meta(g_ctx, w, f->meta[i].key, f->meta[i].value);
    /* tensors the writer keeps pointers to: views into the mapping, or our fp8 buffers */
    ltx2_tensor *views = calloc(f->n_tensors * 3, sizeof *views);
    for (size_t i = 0; i < f->n_tensors; i++) {
        const ltx2_st_tensor *t = &f->tensors[i];
        if (!quantised(t->name, t)) {
            views[i] = ltx2_st_view(t);
            CHECK(ltx2_st_writer_add(g_ctx, w, t->name, &views[i]) == LTX2_OK, "add %s", t->name);
            continue;
        }
        quant *q = &qs[nq++];
        q->n = t->shape[0] * t->shape[1];
        snprintf(q->name, sizeof q->name, "%.*s", (int)(strlen(t->name) - 7), t->name);
        float *x = malloc((size_t)q->n * sizeof(float));
        q->q = malloc((size_t)q->n);
        f32s[i] = x;
        ltx2_convert(g_ctx, x, LTX2_F32, t->data, t->dtype, (size_t)q->n);
        float amax = 0.0f;
        for (int64_t j = 0; j < q->n; j++) amax = fmaxf(amax, fabsf(x[j]));
        const float scale = FP8_E4M3_MAX / amax;
        for (int64_t j = 0; j < q->n; j++) {
            float v = x[j] * scale;
            v = v < -FP8_E4M3_MAX ? -FP8_E4M3_MAX : v > FP8_E4M3_MAX ? FP8_E4M3_MAX : v;
            q->q[j] = ltx2_f32_to_fp8e4m3(v);
        }
        q->scale[0] = 1.0f / scale;
        q->input_scale[0] = 0.5f; /* unused by a dequantising loader; must just be accepted */
        char nm[300];
        views[i] = ltx2_tensor_make(q->q, LTX2_F8_E4M3, 2, t->shape);
        CHECK(ltx2_st_writer_add(g_ctx, w, t->name, &views[i]) == LTX2_OK, "add %s", t->name);
        views[f->n_tensors + i] = ltx2_tensor_make(q->scale, LTX2_F32, 0, NULL);
        snprintf(nm, sizeof nm, "%s.weight_scale", q->name);
        CHECK(ltx2_st_writer_add(g_ctx, w, nm, &views[f->n_tensors + i]) == LTX2_OK, "add %s: %s", nm,
              ltx2_last_error(g_ctx));
        views[2 * f->n_tensors + i] = ltx2_tensor_make(q->input_scale, LTX2_F32, 0, NULL);
        snprintf(nm, sizeof nm, "%s.input_scale", q->name);
        CHECK(ltx2_st_writer_add(g_ctx, w, nm, &views[2 * f->n_tensors + i]) == LTX2_OK, "add %s", nm);
    }
    CHECK(nq > 20, "quantised %zu tensors", nq);
    ltx2_status st = ltx2_st_writer_write(g_ctx, w, path);
    CHECK(st == LTX2_OK, "write: %s", ltx2_last_error(g_ctx));
    free(views);
    st = ltx2_dit_weights_load_file(g_ctx, src, &ref);
    CHECK(st == LTX2_OK, "load bf16: %s", ltx2_last_error(g_ctx));
    st = ltx2_dit_weights_load_file(g_ctx, path, &got);
    CHECK(st == LTX2_OK, "load fp8: %s", ltx2_last_error(g_ctx));
    if (!ref || !got) goto out;

    /* exact dequantisation of block 1's attn1.to_q and ff.net.0.proj (every block Linear goes
     * through the same code; these two pin the [out, in] layout for square and non-square) */
    const struct {
        const char *name;
        const float *w;
    } probes[2] = {{"model.diffusion_model.transformer_blocks.1.attn1.to_q", got->blocks[1].attn1.q.w.data},
                   {"model.diffusion_model.transformer_blocks.1.ff.net.0.proj", got->blocks[1].ff.proj_in.w.data}};
    for (int p = 0; p < 2; p++) {
        const quant *q = NULL;
        for (size_t i = 0; i < nq; i++)
            if (strcmp(qs[i].name, probes[p].name) == 0) q = &qs[i];
        CHECK(q != NULL, "%s not quantised", probes[p].name);
        if (!q) continue;
        int64_t bad = 0;
        for (int64_t j = 0; j < q->n; j++) {
            float want = ltx2_fp8e4m3_to_f32(q->q[j]) * q->scale[0];
            if (memcmp(&want, &probes[p].w[j], sizeof want) != 0) bad++;
        }
        CHECK(bad == 0, "%s: %lld of %lld values differ from fp8(q) * weight_scale", probes[p].name, (long long)bad,
              (long long)q->n);
    }
    /* untouched tensors: bitwise equal to the bf16 load */
    CHECK(memcmp(ref->blocks[1].attn1.q.b.data, got->blocks[1].attn1.q.b.data,
                 sizeof(float) * (size_t)ref->blocks[1].attn1.q.out) == 0 &&
              memcmp(ref->sst.data, got->sst.data, sizeof(float) * 2 * (size_t)ref->cfg.inner_dim) == 0,
          "non-fp8 tensors changed");

    /* forward on a small deterministic input: runs, finite, close to the bf16 model */
    {
        const int64_t B = 1, Tv = 6, Ta = 5, S = 4;
        const ltx2_dit_config *c = &ref->cfg;
        float *vl = calloc((size_t)(Tv * c->in_channels), sizeof(float));
        float *al = calloc((size_t)(Ta * c->audio_in_channels), sizeof(float));
        float *vp = calloc((size_t)(3 * Tv * 2), sizeof(float)), *ap = calloc((size_t)(Ta * 2), sizeof(float));
        float *vts = malloc((size_t)Tv * sizeof(float)), *ats = malloc((size_t)Ta * sizeof(float));
        float sig[1] = {0.7f};
        float *vc = malloc((size_t)(S * c->inner_dim) * sizeof(float)), *ac = malloc((size_t)(S * c->audio_inner_dim) * sizeof(float));
        for (int64_t i = 0; i < Tv * c->in_channels; i++) vl[i] = sinf((float)i * 0.37f);
        for (int64_t i = 0; i < Ta * c->audio_in_channels; i++) al[i] = cosf((float)i * 0.23f);
        for (int64_t t = 0; t < Tv; t++)
            for (int a = 0; a < 3; a++) {
                vp[(a * Tv + t) * 2] = (float)(t * (a + 1));
                vp[(a * Tv + t) * 2 + 1] = (float)(t * (a + 1) + 1);
            }
        for (int64_t t = 0; t < Ta; t++) ap[t * 2] = 0.04f * (float)t, ap[t * 2 + 1] = 0.04f * (float)(t + 1);
        for (int64_t t = 0; t < Tv; t++) vts[t] = 0.7f;
        for (int64_t t = 0; t < Ta; t++) ats[t] = 0.7f;
        for (int64_t i = 0; i < S * c->inner_dim; i++) vc[i] = sinf((float)i * 0.11f);
        for (int64_t i = 0; i < S * c->audio_inner_dim; i++) ac[i] = cosf((float)i * 0.13f);
        ltx2_dit_forward_params p;
        ltx2_dit_forward_params_init(&p);
        p.batch = B;
        p.video = (ltx2_dit_modality){vl, vp, vts, sig, vc, NULL, Tv, S};
        p.audio = (ltx2_dit_modality){al, ap, ats, sig, ac, NULL, Ta, S};
        const int64_t nv = Tv * c->out_channels;
        float *o1 = malloc((size_t)nv * sizeof(float)), *o2 = malloc((size_t)nv * sizeof(float));
        float *a1 = malloc((size_t)(Ta * c->audio_out_channels) * sizeof(float));
        float *a2 = malloc((size_t)(Ta * c->audio_out_channels) * sizeof(float));
        st = ltx2_dit_forward(g_ctx, ref, &p, o1, a1);
        CHECK(st == LTX2_OK, "forward bf16: %s", ltx2_last_error(g_ctx));
        st = ltx2_dit_forward(g_ctx, got, &p, o2, a2);
        CHECK(st == LTX2_OK, "forward fp8: %s", ltx2_last_error(g_ctx));
        int64_t shape[1] = {nv};
        ltx2_tensor ta = ltx2_tensor_make(o1, LTX2_F32, 1, shape), tb = ltx2_tensor_make(o2, LTX2_F32, 1, shape);
        ltx2_diff_stats ds;
        ltx2_diff(&ta, &tb, 0.0, 0.0, &ds);
        CHECK(isfinite(ds.rel_l2) && ds.cosine >= FP8_MIN_COSINE, "fp8 forward: cosine %.6f rel-L2 %.3g", ds.cosine,
              ds.rel_l2);
        printf("fp8 vs bf16 video output: cosine %.6f, rel-L2 %.3g\n", ds.cosine, ds.rel_l2);
        free(vl), free(al), free(vp), free(ap), free(vts), free(ats), free(vc), free(ac);
        free(o1), free(o2), free(a1), free(a2);
    }
    /* a scale that is not one value is refused, naming it */
    {
        ltx2_st_writer *w2 = NULL;
        ltx2_st_writer_create(g_ctx, &w2);
        ltx2_tensor *vv = calloc(f->n_tensors * 2, sizeof *vv);
        float two[2] = {1.0f, 1.0f};
        int64_t s2[1] = {2};
        for (size_t i = 0; i < f->n_meta; i++) ltx2_st_writer_set_meta(g_ctx, w2, f->meta[i].key, f->meta[i].value);
        for (size_t i = 0; i < f->n_tensors; i++) {
            const ltx2_st_tensor *t = &f->tensors[i];
            vv[i] = ltx2_st_view(t);
            if (strcmp(t->name, "model.diffusion_model.transformer_blocks.0.attn1.to_k.weight") == 0) {
                int64_t n = t->shape[0] * t->shape[1];
                uint8_t *q = calloc((size_t)n, 1);
                vv[i] = ltx2_tensor_make(q, LTX2_F8_E4M3, 2, t->shape);
                vv[f->n_tensors + i] = ltx2_tensor_make(two, LTX2_F32, 1, s2);
                ltx2_st_writer_add(g_ctx, w2, "model.diffusion_model.transformer_blocks.0.attn1.to_k.weight_scale",
                                   &vv[f->n_tensors + i]);
            }
            ltx2_st_writer_add(g_ctx, w2, t->name, &vv[i]);
        }
        snprintf(path, sizeof path, "%s/bad.safetensors", tmp);
        st = ltx2_st_writer_write(g_ctx, w2, path);
        CHECK(st == LTX2_OK, "write bad: %s", ltx2_last_error(g_ctx));
        for (size_t i = 0; i < f->n_tensors; i++)
            if (vv[i].dtype == LTX2_F8_E4M3) free(vv[i].data);
        ltx2_st_writer_free(w2);
        free(vv);
        ltx2_dit_weights *bad = NULL;
        st = ltx2_dit_weights_load_file(g_ctx, path, &bad);
        CHECK(st == LTX2_ERR_FORMAT && strstr(ltx2_last_error(g_ctx), "to_k.weight_scale"), "bad scale: %s",
              ltx2_last_error(g_ctx));
        ltx2_dit_weights_free(bad);
    }
out:
    ltx2_dit_weights_free(ref);
    ltx2_dit_weights_free(got);
    ltx2_st_writer_free(w);
    for (size_t i = 0; i < nq; i++) free(qs[i].q);
    if (f32s)
        for (size_t i = 0; f && i < f->n_tensors; i++) free(f32s[i]);
    free(f32s);
    free(qs);
    ltx2_st_close(f);
    if (tmp) {
        char cmd[1200];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
        CHECK(system(cmd) == 0, "cleanup");
    }
    ltx2_context_free(g_ctx);
    return test_finish();
}
