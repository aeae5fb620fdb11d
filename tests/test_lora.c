/* LoRA fusion against tests/golden/gen_lora_golden.py (ltx-core 1.0.0 SingleGPUModelBuilder with
 * loras -> apply_loras, fp32): every weight the tiny style LoRA touches, and every block Linear with
 * the style and distilled LoRAs together, for LoRA files in ltx-core / ComfyUI and diffusers key
 * names; weights no adapter covers stay bitwise the plain load's. Refusals: a file that is not a
 * LoRA, a lone half, an unknown key format, a module this DiT lacks, a product of another shape. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "io/safetensors.h"
#include "ltx2/ltx2.h"
#include "core/dtype.h"
#include "model/dit_config.h"
#include "model/dit_weights.h"
#include "model/lora.h"
#include "test_util.h"

/* fp32 fusion against fp32 fusion: the bf16 rounding of B x strength and of the product is the
 * same; what differs is the product's summation order over the rank (<= 8 terms), ~1e-7 relative.
 * A wrong strength, transpose or missed rounding moves a weight by > 1e-3. */
#define LORA_REL_L2_TOL 1e-5
#define TINY_DIR LTX2_SOURCE_DIR "/weights/tiny"
#define STYLE_STRENGTH 0.8     /* gen_lora_golden.STYLE_STRENGTH */
#define DISTILLED_STRENGTH 0.5 /* gen_lora_golden.DISTILLED_STRENGTH */

/* The DiT of the tiny v checkpoint on the CPU in f32 with specs fused (n 0: none). */
static ltx2_dit_weights *load(ltx2_context *ctx, const char *v, const ltx2_lora_spec *specs, int n, ltx2_st_file **f) {
    char ckpt[1024];
    snprintf(ckpt, sizeof ckpt, "%s/ltx2-tiny-%s.safetensors", TINY_DIR, v);
    ltx2_dit_config cfg;
    ltx2_lora_set *set = NULL;
    ltx2_dit_weights *w = NULL;
    ltx2_status st = ltx2_st_open(ctx, ckpt, f);
    if (st == LTX2_OK) st = ltx2_dit_config_from_st(ctx, *f, &cfg);
    if (st == LTX2_OK && n) st = ltx2_lora_set_open(ctx, specs, n, &set);
    if (st == LTX2_OK) st = ltx2_dit_weights_load_lora(ctx, ltx2_backend_cpu(), LTX2_F32, *f, NULL, &cfg, set, &w);
    ltx2_lora_set_free(set);
    if (st != LTX2_OK) {
        CHECK(0, "%s: load with %d LoRA(s): %s", v, n, ltx2_last_error(ctx));
        return NULL;
    }
    return w;
}

/* Every golden "<case>.<name>" against w's <name>; returns how many were compared. */
static int compare_case(const ltx2_st_file *gold, ltx2_dit_weights *w, const char *v, const char *cas) {
    const size_t plen = strlen(cas);
    int n = 0;
    double worst = 0;
    for (size_t i = 0; i < gold->n_tensors; i++) {
        const ltx2_st_tensor *g = &gold->tensors[i];
        if (strncmp(g->name, cas, plen) || g->name[plen] != '.') continue;
        const char *name = g->name + plen + 1;
        const ltx2_tensor *t = ltx2_dit_weights_find(w, name);
        CHECK(t && t->dtype == LTX2_F32, "%s %s: no f32 weight %s", v, cas, name);
        if (!t) continue;
        const int64_t numel = g->shape[0] * g->shape[1];
        CHECK(t->shape[0] == g->shape[0] && t->shape[1] == g->shape[1], "%s %s: %s shape", v, cas, name);
        const double e = test_rel_l2(t->data, g->data, numel);
        CHECK(e <= LORA_REL_L2_TOL, "%s %s: %s rel-L2 %.3g", v, cas, name, e);
        if (e > worst) worst = e;
        n++;
    }
    printf("%s %s: %d fused weights, worst rel-L2 %.3g\n", v, cas, n, worst);
    return n;
}

static void check_version(ltx2_context *ctx, const char *v) {
    char gold_path[1024], style[1024], style_df[1024], distilled[1024];
    snprintf(gold_path, sizeof gold_path, "%s/tests/golden/data/lora_%s.safetensors", LTX2_SOURCE_DIR, v);
    snprintf(style, sizeof style, "%s/ltx2-tiny-lora-style-%s.safetensors", TINY_DIR, v);
    snprintf(style_df, sizeof style_df, "%s/ltx2-tiny-lora-style-diffusers-%s.safetensors", TINY_DIR, v);
    snprintf(distilled, sizeof distilled, "%s/ltx2-tiny-lora-distilled-%s.safetensors", TINY_DIR, v);
    ltx2_st_file *gold = NULL, *f1 = NULL, *f2 = NULL, *f3 = NULL, *f0 = NULL;
    if (ltx2_st_open(ctx, gold_path, &gold) != LTX2_OK) {
        CHECK(0, "open %s: %s", gold_path, ltx2_last_error(ctx));
        return;
    }
    const ltx2_lora_spec one[1] = {{style, STYLE_STRENGTH}};
    const ltx2_lora_spec two[2] = {{style, STYLE_STRENGTH}, {distilled, DISTILLED_STRENGTH}};
    const ltx2_lora_spec df[1] = {{style_df, STYLE_STRENGTH}};
    ltx2_dit_weights *w1 = load(ctx, v, one, 1, &f1), *w2 = load(ctx, v, two, 2, &f2);
    ltx2_dit_weights *w3 = load(ctx, v, df, 1, &f3), *w0 = load(ctx, v, NULL, 0, &f0);
    if (w1) CHECK(compare_case(gold, w1, v, "style") >= 8, "%s: style golden weights", v);
    if (w2) CHECK(compare_case(gold, w2, v, "both") >= 40, "%s: style + distilled golden weights", v);
    /* the diffusers names place the same tensors on the same weights: bitwise the ltx-core file's result */
    if (w1 && w3 && w0) {
        int same = 0, untouched = 0, changed = 0;
        for (int64_t b = 0; b < w1->cfg.num_layers; b++) {
            static const char *const mods[] = {"attn1.to_q", "attn1.to_k", "attn1.to_v", "ff.net.2", "audio_attn1.to_out.0",
                                               "audio_to_video_attn.to_k", "attn2.to_q"};
            for (size_t k = 0; k < sizeof mods / sizeof mods[0]; k++) {
                char name[128];
                snprintf(name, sizeof name, "transformer_blocks.%lld.%s.weight", (long long)b, mods[k]);
                const ltx2_tensor *a = ltx2_dit_weights_find(w1, name), *c = ltx2_dit_weights_find(w3, name);
                const ltx2_tensor *z = ltx2_dit_weights_find(w0, name);
                if (!a || !c || !z) continue;
                const size_t n = (size_t)(a->shape[0] * a->shape[1]), bytes = n * sizeof(float);
                same += !memcmp(a->data, c->data, bytes);
                /* the plain load keeps the file's bf16 matrices: compare their f32 values */
                float *plain = malloc(bytes);
                if (plain && ltx2_convert(ctx, plain, LTX2_F32, z->data, z->dtype, n) == LTX2_OK) {
                    if (!memcmp(a->data, plain, bytes)) untouched++;
                    else changed++;
                }
                free(plain);
            }
        }
        CHECK(same == untouched + changed && same > 0, "%s: diffusers-named LoRA differs from the ltx-core one", v);
        CHECK(changed >= 8 && untouched >= 2, "%s: %d weights changed, %d untouched (expected both kinds)", v, changed,
              untouched);
        printf("%s: diffusers names: %d weights equal to the ltx-core file's (%d fused, %d untouched)\n", v, same,
               changed, untouched);
    }
    ltx2_dit_weights_free(w0);
    ltx2_dit_weights_free(w1);
    ltx2_dit_weights_free(w2);
    ltx2_dit_weights_free(w3);
    ltx2_st_close(f0);
    ltx2_st_close(f1);
    ltx2_st_close(f2);
    ltx2_st_close(f3);
    ltx2_st_close(gold);
}

/* A LoRA file of the given pairs (A [r, in], B [out, r], f32 ones) at path. */
typedef struct fake_pair {
    const char *name; /* the key without its .lora_A/B.weight suffix; NULL B: write only A */
    int64_t r, in, out;
    bool lone;
} fake_pair;

static bool write_fake(ltx2_context *ctx, const char *path, const fake_pair *p, int n) {
    ltx2_st_writer *w = NULL;
    if (ltx2_st_writer_create(ctx, &w) != LTX2_OK) return false;
    static float ones[1 << 14];
    for (size_t i = 0; i < sizeof ones / sizeof ones[0]; i++) ones[i] = 1e-3f;
    bool ok = true;
    char key[256];
    for (int i = 0; i < n && ok; i++) {
        const int64_t sa[2] = {p[i].r, p[i].in}, sb[2] = {p[i].out, p[i].r};
        ltx2_tensor a = ltx2_tensor_make(ones, LTX2_F32, 2, sa), b = ltx2_tensor_make(ones, LTX2_F32, 2, sb);
        snprintf(key, sizeof key, "%s.lora_A.weight", p[i].name);
        ok = ltx2_st_writer_add(ctx, w, key, &a) == LTX2_OK;
        snprintf(key, sizeof key, "%s.lora_B.weight", p[i].name);
        if (ok && !p[i].lone) ok = ltx2_st_writer_add(ctx, w, key, &b) == LTX2_OK;
    }
    if (ok) ok = ltx2_st_writer_write(ctx, w, path) == LTX2_OK;
    ltx2_st_writer_free(w);
    return ok;
}

static void expect_refused(ltx2_context *ctx, const char *what, const char *path, const char *needle) {
    const ltx2_lora_spec spec = {path, 1.0};
    ltx2_st_file *f = NULL;
    ltx2_dit_config cfg;
    ltx2_lora_set *set = NULL;
    ltx2_dit_weights *w = NULL;
    ltx2_status st = ltx2_st_open(ctx, TINY_DIR "/ltx2-tiny-2.0.safetensors", &f);
    if (st == LTX2_OK) st = ltx2_dit_config_from_st(ctx, f, &cfg);
    if (st == LTX2_OK) st = ltx2_lora_set_open(ctx, &spec, 1, &set);
    if (st == LTX2_OK) st = ltx2_dit_weights_load_lora(ctx, ltx2_backend_cpu(), LTX2_F32, f, NULL, &cfg, set, &w);
    const char *msg = ltx2_last_error(ctx);
    CHECK(st != LTX2_OK && strstr(msg, needle), "%s: status %d, message: %s", what, (int)st, msg);
    ltx2_dit_weights_free(w);
    ltx2_lora_set_free(set);
    ltx2_st_close(f);
}

static void check_refusals(ltx2_context *ctx) {
    char dir[] = "/tmp/ltx2_lora_XXXXXX", path[256];
    if (!mkdtemp(dir)) {
        CHECK(0, "mkdtemp");
        return;
    }
    /* the tiny 2.0 DiT: video width 64 (to_q [64, 64]), 2 blocks */
    const fake_pair missing[] = {{"diffusion_model.transformer_blocks.9.attn1.to_q", 2, 64, 64, false}};
    const fake_pair shape[] = {{"diffusion_model.transformer_blocks.0.attn1.to_q", 2, 64, 32, false}};
    const fake_pair lone[] = {{"diffusion_model.transformer_blocks.0.attn1.to_q", 2, 64, 64, true}};
    const fake_pair format[] = {{"lora_unet_transformer_blocks_0_attn1_to_q", 2, 64, 64, false}};
    const fake_pair conn[] = {{"diffusion_model.video_embeddings_connector.transformer_1d_blocks.0.attn1.to_q", 2, 32, 32,
                               false}};
    struct {
        const char *what, *file, *needle;
        const fake_pair *p;
    } cases[] = {
        {"a module the DiT lacks", "missing", "no Linear weight of this DiT matches", missing},
        {"a product of another shape", "shape", "a LoRA for another model", shape},
        {"a lone half", "lone", "not a LoRA pair", lone},
        {"an unknown key format", "format", "not a LoRA pair", format},
        {"a text-connector adapter", "conn", "text connectors", conn},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        snprintf(path, sizeof path, "%s/%s.safetensors", dir, cases[i].file);
        CHECK(write_fake(ctx, path, cases[i].p, 1), "write %s", path);
        expect_refused(ctx, cases[i].what, path, cases[i].needle);
        unlink(path);
    }
    expect_refused(ctx, "not a LoRA file", TINY_DIR "/ltx2-tiny-upsampler-spatial-x2.safetensors", "not a LoRA pair");
    expect_refused(ctx, "no file", "/nonexistent/lora.safetensors", "/nonexistent/lora.safetensors");
    rmdir(dir);
}

int main(void) {
    ltx2_context *ctx = test_context_quiet();
    if (!ctx) return 1;
    check_version(ctx, "2.0");
    check_version(ctx, "2.3");
    check_refusals(ctx);
    ltx2_context_free(ctx);
    return test_finish();
}
