/* MaxDiffusion's converted-weights cache in place of a checkpoint's DiT (issue #15 item 6). The caches are
 * MaxDiffusion 7cfb880's own files (tests/golden/gen_maxdiffusion_weights.py): 2.0 and 2.3 in bf16 with the
 * blocks stacked (the TPU default), 2.0 in f32 with per-block keys. The tiny diffusers weights are bf16, so
 * the cache holds their values exactly:
 * - every DiT tensor read through the cache equals, bit for bit after the f32 conversion the loaders do,
 *   the one read from the diffusers directory (and the single file), with the same shape; the DiT has the
 *   same tensors either way; the other components and the config are the checkpoint's, untouched;
 * - a DiT forward from the cache's weights equals the directory's bit for bit (test_md_golden holds it
 *   to MaxDiffusion's own forward);
 * - refused, naming what is wrong: the cache alone, two caches, a cache of another block count, a cache
 *   missing a tensor, stacked tensors with different layer counts, both layouts in one file, a file that is
 *   not a cache. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend/backend.h"
#include "io/safetensors.h"
#include "ltx2/ltx2.h"
#include "model/ckpt_source.h"
#include "model/detect.h"
#include "model/dit.h"
#include "model/md_weights.h"
#include "model/weight_fetch.h"
#include "pipeline/pipeline.h"
#include "test_util.h"

#define TINY_DIR LTX2_SOURCE_DIR "/weights/tiny"
#define GOLDEN_DIR LTX2_SOURCE_DIR "/tests/golden/data"
/* the forward's inputs: a few tokens of each stream, any values */
#define FWD_VIDEO_TOKENS 6
#define FWD_AUDIO_TOKENS 5
#define FWD_TEXT_TOKENS 4
#define FWD_SEED 7u

static ltx2_context *g_ctx;

typedef struct md_case {
    const char *v, *file;
} md_case;
static const md_case k_cases[] = {
    {"2.0", "md_weights_2.0_bfloat16_scan1"},
    {"2.3", "md_weights_2.3_bfloat16_scan1"},
    {"2.0", "md_weights_2.0_float32_scan0"},
};

static void cache_path(const char *file, char *out, size_t cap) { snprintf(out, cap, "%s/%s.safetensors", GOLDEN_DIR, file); }
static void dir_path(const char *v, char *out, size_t cap) { snprintf(out, cap, "%s/ltx2-tiny-diffusers-%s", TINY_DIR, v); }

static bool is_dit(const char *name) { return ltx2_component_of_key(name) == LTX2_COMP_TRANSFORMER; }

static float *to_f32(const ltx2_st_file *f, const ltx2_st_tensor *t, int64_t n) {
    float *x = malloc((size_t)n * sizeof *x);
    if (x && ltx2_weight_to_f32(g_ctx, f, t, x, (size_t)n) != LTX2_OK) {
        free(x);
        return NULL;
    }
    return x;
}

/* base alone against base + cache: the DiT tensor by tensor, the rest untouched. */
static void check_same_dit(const char *label, const char *base, const char *cache) {
    const char *one[1] = {base}, *two[2] = {base, cache};
    ltx2_ckpt_source *a = NULL, *b = NULL;
    CHECK(ltx2_ckpt_source_open(g_ctx, one, 1, &a) == LTX2_OK, "%s: open %s: %s", label, base, ltx2_last_error(g_ctx));
    CHECK(ltx2_ckpt_source_open(g_ctx, two, 2, &b) == LTX2_OK, "%s: open with the cache: %s", label,
          ltx2_last_error(g_ctx));
    if (!a || !b) goto done;
    const ltx2_st_file *fa = ltx2_ckpt_source_set(a)->files[0], *fb = ltx2_ckpt_source_set(b)->files[0];
    const char *cfa = ltx2_st_meta_get(fa, "config"), *cfb = ltx2_st_meta_get(fb, "config");
    CHECK(cfa && cfb && !strcmp(cfa, cfb), "%s: the config is the checkpoint's", label);
    size_t dit_a = 0, dit_b = 0, same = 0, bad = 0;
    for (size_t i = 0; i < fb->n_tensors; i++) dit_b += is_dit(fb->tensors[i].name);
    for (size_t i = 0; i < fa->n_tensors; i++) {
        const ltx2_st_tensor *ta = &fa->tensors[i], *tb = ltx2_st_find(fb, ta->name);
        if (!tb) {
            if (!bad++) fprintf(stderr, "%s: %s missing with the cache\n", label, ta->name);
            continue;
        }
        if (!is_dit(ta->name)) {
            const bool same_bytes = ta->dtype == tb->dtype && ta->end - ta->begin == tb->end - tb->begin &&
                                    !memcmp(ta->data, tb->data, (size_t)(ta->end - ta->begin));
            if (!same_bytes && !bad++) fprintf(stderr, "%s: %s is not the checkpoint's\n", label, ta->name);
            continue;
        }
        dit_a++;
        bool shape_ok = ta->ndim == tb->ndim;
        int64_t n = 1;
        for (int k = 0; shape_ok && k < ta->ndim; k++) {
            shape_ok = ta->shape[k] == tb->shape[k];
            n *= ta->shape[k];
        }
        float *xa = shape_ok ? to_f32(fa, ta, n) : NULL, *xb = shape_ok ? to_f32(fb, tb, n) : NULL;
        if (xa && xb && !memcmp(xa, xb, (size_t)n * sizeof *xa))
            same++;
        else if (!bad++)
            fprintf(stderr, "%s: %s differs (%s)\n", label, ta->name, shape_ok ? "values" : "shape");
        free(xa);
        free(xb);
    }
    CHECK(bad == 0 && same == dit_a && dit_a == dit_b && dit_a > 0,
          "%s: %zu of %zu DiT tensors bitwise equal, %zu with the cache, %zu problems", label, same, dit_a, dit_b, bad);
    printf("%s: %zu DiT tensors bitwise equal to %s's\n", label, same, base);
done:
    ltx2_ckpt_source_close(a);
    ltx2_ckpt_source_close(b);
}

/* One DiT forward from each model set on the same inputs: bitwise equal. */
static void check_forward(const char *label, const char *base, const char *cache) {
    const char *one[1] = {base}, *two[2] = {base, cache};
    ltx2_pipe_models ma, mb;
    const bool oka = ltx2_pipe_models_load_lora(g_ctx, one, 1, ltx2_backend_cpu(), NULL, &ma) == LTX2_OK;
    CHECK(oka, "%s: load %s: %s", label, base, ltx2_last_error(g_ctx));
    const bool okb = oka && ltx2_pipe_models_load_lora(g_ctx, two, 2, ltx2_backend_cpu(), NULL, &mb) == LTX2_OK;
    CHECK(!oka || okb, "%s: load with the cache: %s", label, ltx2_last_error(g_ctx));
    if (!okb) {
        if (oka) ltx2_pipe_models_free(&ma);
        return;
    }
    const ltx2_dit_config *c = &ma.dit->cfg;
    const int64_t tv = FWD_VIDEO_TOKENS, ta = FWD_AUDIO_TOKENS, s = FWD_TEXT_TOKENS;
    const int64_t nv = tv * c->in_channels, na = ta * c->audio_in_channels;
    /* the contexts are the connectors' outputs (2.0: caption_channels wide, before the DiT's projection) */
    const int64_t cv = s * ma.conn->cfg.video.inner_dim, ca = s * ma.conn->cfg.audio.inner_dim;
    float *buf = calloc((size_t)(2 * (nv + na) + cv + ca + 6 * tv + 2 * ta + tv + ta), sizeof(float));
    if (!buf) {
        CHECK(0, "%s: memory", label);
        goto done;
    }
    float *xv = buf, *xa = xv + nv, *ctxv = xa + na, *ctxa = ctxv + cv, *vpos = ctxa + ca, *apos = vpos + 6 * tv;
    float *vt = apos + 2 * ta, *at = vt + tv, *ya = at + ta, *yv = ya + na;
    uint32_t r = FWD_SEED;
    for (float *p = xv; p < vpos; p++) { /* tokens and contexts in [-1, 1) */
        r = r * 1664525u + 1013904223u;
        *p = (float)(r >> 8) / (float)(1u << 23) - 1.0f;
    }
    for (int64_t t = 0; t < tv; t++)
        for (int a = 0; a < 3; a++) vpos[(a * tv + t) * 2] = (float)t, vpos[(a * tv + t) * 2 + 1] = (float)t + 1.0f;
    for (int64_t t = 0; t < ta; t++) apos[t * 2] = 0.04f * (float)t, apos[t * 2 + 1] = 0.04f * (float)(t + 1);
    const float sigma = 0.6f;
    for (int64_t t = 0; t < tv; t++) vt[t] = sigma;
    for (int64_t t = 0; t < ta; t++) at[t] = sigma;
    float *out[2][2] = {{yv, ya}, {NULL, NULL}};
    out[1][0] = malloc((size_t)nv * sizeof(float));
    out[1][1] = malloc((size_t)na * sizeof(float));
    const ltx2_pipe_models *ms[2] = {&ma, &mb};
    bool ok = out[1][0] && out[1][1];
    for (int k = 0; k < 2 && ok; k++) {
        ltx2_dit_forward_params fp;
        ltx2_dit_forward_params_init(&fp);
        fp.batch = 1;
        fp.video = (ltx2_dit_modality){xv, vpos, vt, &sigma, ctxv, NULL, tv, s};
        fp.audio = (ltx2_dit_modality){xa, apos, at, &sigma, ctxa, NULL, ta, s};
        ok = ltx2_dit_forward(g_ctx, ms[k]->dit, &fp, out[k][0], out[k][1]) == LTX2_OK;
        CHECK(ok, "%s: forward %d: %s", label, k, ltx2_last_error(g_ctx));
    }
    if (ok) {
        CHECK(!memcmp(out[0][0], out[1][0], (size_t)nv * sizeof(float)) &&
                  !memcmp(out[0][1], out[1][1], (size_t)na * sizeof(float)),
              "%s: the forward from the cache differs from the checkpoint's (rel-L2 video %.3g, audio %.3g)", label,
              test_rel_l2(out[1][0], out[0][0], nv), test_rel_l2(out[1][1], out[0][1], na));
        printf("%s: DiT forward from the cache bitwise equal\n", label);
    }
    free(out[1][0]);
    free(out[1][1]);
    free(buf);
done:
    ltx2_pipe_models_free(&ma);
    ltx2_pipe_models_free(&mb);
}

/* The open of paths must fail with a message holding want. */
static void check_refused(const char *label, const char *const *paths, int n, const char *want) {
    ltx2_ckpt_source *s = NULL;
    const ltx2_status st = ltx2_ckpt_source_open(g_ctx, paths, n, &s);
    CHECK(st != LTX2_OK && strstr(ltx2_last_error(g_ctx), want), "%s: status %d, message \"%s\" (want \"%s\")", label,
          (int)st, ltx2_last_error(g_ctx), want);
    ltx2_ckpt_source_close(s);
}

typedef enum edit_kind { EDIT_DROP, EDIT_ONE_LAYER, EDIT_SHORT_AXIS, EDIT_ADD_INDEXED, EDIT_RENAME_PROJ } edit_kind;

/* A copy of the 2.3 cache at out, edited: one tensor dropped, every stacked tensor cut to 1 layer, one
 * stacked tensor cut to 1 layer, a per-block key added, or proj_in.kernel renamed away. */
static bool write_edited(const char *cache, edit_kind kind, const char *out) {
    ltx2_st_file *f = NULL;
    ltx2_st_writer *w = NULL;
    bool ok = ltx2_st_open(g_ctx, cache, &f) == LTX2_OK && ltx2_st_writer_create(g_ctx, &w) == LTX2_OK;
    bool cut_one = false;
    for (size_t i = 0; ok && i < f->n_tensors; i++) {
        const ltx2_st_tensor *t = &f->tensors[i];
        ltx2_tensor v = ltx2_st_view(t);
        const bool stacked = !strncmp(t->name, "transformer_blocks.", 19);
        const char *name = t->name;
        if (kind == EDIT_DROP && !strcmp(name, "transformer_blocks.attn1.to_q.bias")) continue;
        if (kind == EDIT_RENAME_PROJ && !strcmp(name, "proj_in.kernel")) name = "proj_in.weight";
        if (stacked && (kind == EDIT_ONE_LAYER || (kind == EDIT_SHORT_AXIS && !cut_one))) {
            v.shape[0] = 1;
            v = ltx2_tensor_make(v.data, v.dtype, v.ndim, v.shape);
            cut_one = true;
        }
        ok = ltx2_st_writer_add(g_ctx, w, name, &v) == LTX2_OK;
        if (ok && kind == EDIT_ADD_INDEXED && !strcmp(name, "transformer_blocks.attn1.to_q.bias")) {
            ltx2_tensor one = ltx2_tensor_make(v.data, v.dtype, 1, &v.shape[1]);
            ok = ltx2_st_writer_add(g_ctx, w, "transformer_blocks.0.attn1.to_q.bias", &one) == LTX2_OK;
        }
    }
    ok = ok && ltx2_st_writer_write(g_ctx, w, out) == LTX2_OK;
    ltx2_st_writer_free(w);
    ltx2_st_close(f);
    return ok;
}

static void check_bad_input(const char *tmp) {
    char d20[512], d23[512], c20[512], c23[512], bad[600];
    dir_path("2.0", d20, sizeof d20);
    dir_path("2.3", d23, sizeof d23);
    cache_path("md_weights_2.0_bfloat16_scan1", c20, sizeof c20);
    cache_path("md_weights_2.3_bfloat16_scan1", c23, sizeof c23);
    const char *alone[1] = {c23}, *twice[3] = {d23, c23, c20};
    check_refused("the cache alone", alone, 1, "holds the DiT only");
    check_refused("two caches", twice, 3, "two MaxDiffusion converted-weights caches");
    static const struct {
        edit_kind kind;
        const char *label, *want;
    } edits[] = {
        {EDIT_ONE_LAYER, "a 1-block cache for a 2-block DiT", "holds a DiT of 1 blocks"},
        {EDIT_SHORT_AXIS, "stacked tensors of 1 and 2 layers", "disagree on the layer count"},
        {EDIT_ADD_INDEXED, "stacked and per-block keys", "both stacked"},
    };
    for (size_t i = 0; i < sizeof edits / sizeof edits[0]; i++) {
        snprintf(bad, sizeof bad, "%s/edit%zu.safetensors", tmp, i);
        CHECK(write_edited(c23, edits[i].kind, bad), "write %s: %s", bad, ltx2_last_error(g_ctx));
        const char *paths[2] = {d23, bad};
        check_refused(edits[i].label, paths, 2, edits[i].want);
        unlink(bad);
    }
    /* not a cache: without proj_in.kernel the file is taken for a split DiT file, whose keys are no LTX-2 keys */
    snprintf(bad, sizeof bad, "%s/notcache.safetensors", tmp);
    CHECK(write_edited(c23, EDIT_RENAME_PROJ, bad), "write %s", bad);
    ltx2_md_weights *m = NULL;
    CHECK(ltx2_md_weights_open(g_ctx, bad, &m) != LTX2_OK &&
              strstr(ltx2_last_error(g_ctx), "not a MaxDiffusion converted-weights cache"),
          "not a cache: \"%s\"", ltx2_last_error(g_ctx));
    ltx2_md_weights_close(m);
    unlink(bad);
    /* a tensor missing, and another version's DiT: the DiT loader names what does not fit */
    snprintf(bad, sizeof bad, "%s/drop.safetensors", tmp);
    CHECK(write_edited(c23, EDIT_DROP, bad), "write %s", bad);
    const char *mixed[2][2] = {{d23, bad}, {d23, c20}};
    const char *want[2] = {"transformer_blocks.0.attn1.to_q.bias", "model.diffusion_model."};
    for (int k = 0; k < 2; k++) {
        ltx2_pipe_models m2;
        const ltx2_status st = ltx2_pipe_models_load_lora(g_ctx, mixed[k], 2, ltx2_backend_cpu(), NULL, &m2);
        CHECK(st != LTX2_OK && strstr(ltx2_last_error(g_ctx), want[k]), "load %s + %s: \"%s\"", mixed[k][0],
              mixed[k][1], ltx2_last_error(g_ctx));
        if (st == LTX2_OK) ltx2_pipe_models_free(&m2);
        else printf("refused as it should be: %s\n", ltx2_last_error(g_ctx));
    }
    unlink(bad);
}

static void check_names(void) {
    static const char *const k[][2] = {
        {"attn1.to_out.kernel", "attn1.to_out.0.weight"},  {"ff.net_0.kernel", "ff.net.0.proj.weight"},
        {"audio_ff.net_2.bias", "audio_ff.net.2.bias"},    {"attn2.norm_q.scale", "attn2.norm_q.weight"},
        {"scale_shift_table", "scale_shift_table"},        {"time_embed.linear.kernel", "time_embed.linear.weight"},
        {"caption_projection.linear_1.bias", "caption_projection.linear_1.bias"},
    };
    for (size_t i = 0; i < sizeof k / sizeof k[0]; i++) {
        char out[128];
        bool kernel = false;
        CHECK(ltx2_md_key_to_df(k[i][0], out, sizeof out, &kernel) && !strcmp(out, k[i][1]) &&
                  kernel == (strstr(k[i][0], "kernel") != NULL),
              "%s -> %s (want %s)", k[i][0], out, k[i][1]);
    }
}

int main(void) {
    g_ctx = test_context_quiet();
    if (!g_ctx) return 1;
    check_names();
    for (size_t i = 0; i < sizeof k_cases / sizeof k_cases[0]; i++) {
        char dir[512], cache[512], single[512];
        dir_path(k_cases[i].v, dir, sizeof dir);
        cache_path(k_cases[i].file, cache, sizeof cache);
        snprintf(single, sizeof single, "%s/ltx2-tiny-%s.safetensors", TINY_DIR, k_cases[i].v);
        check_same_dit(k_cases[i].file, dir, cache);
        check_same_dit(k_cases[i].file, single, cache);
        check_forward(k_cases[i].file, dir, cache);
    }
    char tmp[] = "/tmp/ltx2_md_weights_XXXXXX";
    CHECK(mkdtemp(tmp) != NULL, "mkdtemp");
    check_bad_input(tmp);
    rmdir(tmp);
    ltx2_context_free(g_ctx);
    return test_finish();
}
