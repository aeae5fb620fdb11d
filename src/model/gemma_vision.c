/* Gemma-3's vision tower and projector (gemma_vision.h): config.json's vision settings and the
 * weights, found beside the language model in the multimodal checkpoint. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend_pool.h"
#include "core/dtype.h"
#include "io/file.h"
#include "model/gemma_vision.h"

/* Bounds checked before anything is allocated (Gemma-3's tower: 27 layers of 1152, 896 px). */
#define VISION_MAX_DIM 16384
#define VISION_MAX_LAYERS 256
#define VISION_MAX_IMAGE 4096

/* SiglipVisionConfig's per-key defaults; Gemma3Config's tower when "vision_config" is absent. */
static const struct {
    const char *key;
    int64_t siglip, gemma3;
} k_vision_defaults[] = {{"hidden_size", 768, 1152},     {"intermediate_size", 3072, 4304},
                         {"num_hidden_layers", 12, 27},  {"num_attention_heads", 12, 16},
                         {"image_size", 224, 896},       {"patch_size", 16, 14},
                         {"num_channels", 3, 3}};
/* Gemma3Config's defaults for the multimodal keys. */
#define GEMMA3_MM_TOKENS 256
#define GEMMA3_IMAGE_TOKEN 262144
#define GEMMA3_BOI_TOKEN 255999
#define GEMMA3_EOI_TOKEN 256000
#define SIGLIP_EPS 1e-6

static ltx2_status get_int(ltx2_context *ctx, const ltx2_json *o, const char *label, const char *key, int64_t dflt,
                           int64_t max, int64_t *out) {
    const ltx2_json *v = o ? ltx2_json_get(o, key) : NULL;
    if (!v || v->type == LTX2_JSON_NULL) {
        *out = dflt;
        return LTX2_OK;
    }
    if (v->type != LTX2_JSON_NUMBER || !v->is_int || v->integer < 0 || v->integer > max)
        return LTX2_ERROR(ctx, LTX2_ERR_FORMAT, "%s: \"%s\" must be an integer in [0, %lld]", label, key,
                          (long long)max);
    *out = v->integer;
    return LTX2_OK;
}

ltx2_status ltx2_gemma_vision_config_parse(ltx2_context *ctx, const ltx2_json *root, const char *label,
                                           int64_t text_hidden, ltx2_gemma_vision_config *out) {
    const char *type = ltx2_json_get_str(root, "model_type");
    if (!type || strcmp(type, "gemma3") != 0)
        return LTX2_ERROR(ctx, LTX2_ERR_UNSUPPORTED,
                          "%s: model_type \"%s\": the image needs the multimodal Gemma-3 (model_type gemma3, with "
                          "its vision tower)", label, type ? type : "(none)");
    const ltx2_json *v = ltx2_json_get(root, "vision_config");
    if (v && v->type == LTX2_JSON_NULL) v = NULL;
    if (v && v->type != LTX2_JSON_OBJECT)
        return LTX2_ERROR(ctx, LTX2_ERR_FORMAT, "%s: \"vision_config\" must be an object", label);
    ltx2_gemma_vision_config c = {.text_hidden = text_hidden, .eps = SIGLIP_EPS};
    int64_t *dst[] = {&c.hidden, &c.ffn, &c.layers, &c.heads, &c.image_size, &c.patch, &c.channels};
    const int64_t max[] = {VISION_MAX_DIM, 8 * VISION_MAX_DIM, VISION_MAX_LAYERS, 1024, VISION_MAX_IMAGE,
                           VISION_MAX_IMAGE, 4};
    for (size_t i = 0; i < sizeof dst / sizeof dst[0]; i++)
        LTX2_TRY(get_int(ctx, v, label, k_vision_defaults[i].key,
                         v ? k_vision_defaults[i].siglip : k_vision_defaults[i].gemma3, max[i], dst[i]));
    double eps;
    if (v && ltx2_json_get_num(v, "layer_norm_eps", &eps)) c.eps = eps;
    int64_t mm = 0, image = 0, boi = 0, eoi = 0;
    LTX2_TRY(get_int(ctx, root, label, "mm_tokens_per_image", GEMMA3_MM_TOKENS, 1 << 20, &mm));
    LTX2_TRY(get_int(ctx, root, label, "image_token_index", GEMMA3_IMAGE_TOKEN, INT32_MAX, &image));
    LTX2_TRY(get_int(ctx, root, label, "boi_token_index", GEMMA3_BOI_TOKEN, INT32_MAX, &boi));
    LTX2_TRY(get_int(ctx, root, label, "eoi_token_index", GEMMA3_EOI_TOKEN, INT32_MAX, &eoi));
    c.mm_tokens = mm, c.image_token = (int32_t)image, c.boi_token = (int32_t)boi, c.eoi_token = (int32_t)eoi;
    const int64_t side = c.patch ? c.image_size / c.patch : 0, tside = (int64_t)llround(sqrt((double)mm));
    if (!c.hidden || !c.ffn || !c.layers || !c.heads || !c.patch || c.hidden % c.heads || c.image_size % c.patch ||
        tside * tside != mm || !tside || side % tside)
        return LTX2_ERROR(ctx, LTX2_ERR_FORMAT,
                          "%s: vision tower %lld wide, %lld heads, %lld px in %lld px patches, %lld image tokens: "
                          "the heads must divide the width, the patches the image, and the square of tokens the "
                          "patch grid", label, (long long)c.hidden, (long long)c.heads, (long long)c.image_size,
                          (long long)c.patch, (long long)mm);
    *out = c;
    return LTX2_OK;
}

/* Where the tower sits: Google's files (vision_tower.vision_model.), transformers 5.23's saves
 * (vision_tower.), and either under the model. of transformers' module tree; the projector is
 * multi_modal_projector. beside it. */
static const char *const k_towers[] = {"vision_tower.vision_model.", "vision_tower.", "model.vision_tower.vision_model.",
                                       "model.vision_tower."};
#define PATCH_WEIGHT "embeddings.patch_embedding.weight"

static bool starts(const char *s, const char *p) { return strncmp(s, p, strlen(p)) == 0; }

/* The tower's and projector's tensors, but the 4-D patch weight, read apart. */
static bool owns(const char *name, const void *user) {
    const ltx2_gemma_vision_weights *w = user;
    if (starts(name, w->tower)) return strcmp(name + strlen(w->tower), PATCH_WEIGHT) != 0;
    return starts(name, w->proj);
}

static void build_table(ltx2_wtable *t, ltx2_gemma_vision_weights *w) {
    const ltx2_gemma_vision_config *c = &w->cfg;
    const int64_t D = c->hidden, grid = c->image_size / c->patch;
    char n[LTX2_WNAME_CAP];
#define NAME(s) (snprintf(n, sizeof n, "%s" s, w->tower), n)
    ltx2_wtable_add(t, NAME("embeddings.patch_embedding.bias"), 1, D, 0, &w->patch.b);
    ltx2_wtable_add(t, NAME("embeddings.position_embedding.weight"), 2, grid * grid, D, &w->pos);
    ltx2_wtable_add(t, NAME("post_layernorm.weight"), 1, D, 0, &w->post_w);
    ltx2_wtable_add(t, NAME("post_layernorm.bias"), 1, D, 0, &w->post_b);
#undef NAME
    for (int64_t i = 0; i < c->layers; i++) {
        ltx2_gemma_vision_layer_w *L = &w->layers[i];
#define NAME(s) (snprintf(n, sizeof n, "%sencoder.layers.%lld." s, w->tower, (long long)i), n)
        ltx2_wtable_add(t, NAME("layer_norm1.weight"), 1, D, 0, &L->ln1_w);
        ltx2_wtable_add(t, NAME("layer_norm1.bias"), 1, D, 0, &L->ln1_b);
        ltx2_wtable_add(t, NAME("layer_norm2.weight"), 1, D, 0, &L->ln2_w);
        ltx2_wtable_add(t, NAME("layer_norm2.bias"), 1, D, 0, &L->ln2_b);
        ltx2_wtable_add_linear(t, NAME("self_attn.q_proj"), D, D, true, &L->q);
        ltx2_wtable_add_linear(t, NAME("self_attn.k_proj"), D, D, true, &L->k);
        ltx2_wtable_add_linear(t, NAME("self_attn.v_proj"), D, D, true, &L->v);
        ltx2_wtable_add_linear(t, NAME("self_attn.out_proj"), D, D, true, &L->o);
        ltx2_wtable_add_linear(t, NAME("mlp.fc1"), c->ffn, D, true, &L->fc1);
        ltx2_wtable_add_linear(t, NAME("mlp.fc2"), D, c->ffn, true, &L->fc2);
#undef NAME
    }
    snprintf(n, sizeof n, "%smm_soft_emb_norm.weight", w->proj);
    ltx2_wtable_add(t, n, 1, D, 0, &w->mm_norm);
    snprintf(n, sizeof n, "%smm_input_projection_weight", w->proj);
    ltx2_wtable_add(t, n, 2, D, c->text_hidden, &w->mm_proj);
}

/* The Conv2d weight [hidden, channels, patch, patch] as the Linear [hidden, channels * patch^2] it
 * is on flattened patches, uploaded into the store's extra pool. */
static ltx2_status load_patch(ltx2_context *ctx, ltx2_gemma_vision_weights *w, const char *dir) {
    const ltx2_gemma_vision_config *c = &w->cfg;
    const int64_t K = c->channels * c->patch * c->patch;
    char name[LTX2_WNAME_CAP];
    snprintf(name, sizeof name, "%s" PATCH_WEIGHT, w->tower);
    const ltx2_st_tensor *t = ltx2_st_find(&w->view, name);
    if (!t || t->ndim != 4 || t->shape[0] != c->hidden || t->shape[1] != c->channels || t->shape[2] != c->patch ||
        t->shape[3] != c->patch)
        return LTX2_ERROR(ctx, t ? LTX2_ERR_SHAPE : LTX2_ERR_NOT_FOUND,
                          "%s: %s must be [%lld, %lld, %lld, %lld] for the config's vision tower", dir, name,
                          (long long)c->hidden, (long long)c->channels, (long long)c->patch, (long long)c->patch);
    float *host = malloc((size_t)(c->hidden * K) * sizeof *host);
    if (!host) return LTX2_ERROR(ctx, LTX2_ERR_OOM, "vision patch weight");
    ltx2_status st = ltx2_convert(ctx, host, LTX2_F32, t->data, t->dtype, (size_t)(c->hidden * K));
    if (st == LTX2_OK) st = ltx2_bpool_create(ctx, w->be, &w->extra);
    const int64_t s[2] = {c->hidden, K};
    if (st == LTX2_OK) st = ltx2_bpool_upload_f32(ctx, w->extra, host, w->dtype, 2, s, &w->patch.w);
    w->patch.out = c->hidden, w->patch.in = K;
    free(host);
    return st;
}

/* mm_soft_emb_norm's (1 + w), as the language model's norms. */
static ltx2_status one_plus(ltx2_context *ctx, ltx2_gemma_vision_weights *w) {
    float *tmp = malloc((size_t)w->cfg.hidden * sizeof *tmp);
    if (!tmp) return LTX2_ERROR(ctx, LTX2_ERR_OOM, "vision norm");
    const ltx2_status st = ltx2_gemma_norm_one_plus(ctx, w->be, &w->mm_norm, tmp);
    free(tmp);
    return st;
}

ltx2_status ltx2_gemma_vision_config_load(ltx2_context *ctx, const char *dir, ltx2_gemma_vision_config *out) {
    char *path = ltx2_path_join(dir, "config.json");
    ltx2_json_doc *doc = NULL;
    ltx2_gemma_config tc;
    ltx2_status st = path ? ltx2_json_parse_file(ctx, path, &doc) : LTX2_ERROR(ctx, LTX2_ERR_OOM, "path");
    if (st == LTX2_OK) st = ltx2_gemma_config_parse(ctx, ltx2_json_root(doc), path, &tc);
    if (st == LTX2_OK) st = ltx2_gemma_vision_config_parse(ctx, ltx2_json_root(doc), path, tc.hidden, out);
    ltx2_json_free(doc);
    free(path);
    return st;
}

ltx2_status ltx2_gemma_vision_load(ltx2_context *ctx, const ltx2_backend *be, ltx2_dtype dtype, const char *dir,
                                   ltx2_gemma_vision_weights **out) {
    *out = NULL;
    ltx2_gemma_vision_weights *w = calloc(1, sizeof *w);
    if (!w) return LTX2_ERROR(ctx, LTX2_ERR_OOM, "Gemma vision weights");
    w->be = be, w->dtype = dtype;
    ltx2_wtable t = {0};
    ltx2_status st = ltx2_gemma_vision_config_load(ctx, dir, &w->cfg);
    if (st == LTX2_OK && !(w->layers = calloc((size_t)w->cfg.layers, sizeof *w->layers)))
        st = LTX2_ERROR(ctx, LTX2_ERR_OOM, "Gemma vision weights: %lld layers", (long long)w->cfg.layers);
    if (st == LTX2_OK) st = ltx2_st_set_open(ctx, dir, &w->set);
    if (st == LTX2_OK) st = ltx2_st_set_view(ctx, w->set, dir, &w->view);
    for (size_t i = 0; st == LTX2_OK && !w->tower[0] && i < sizeof k_towers / sizeof k_towers[0]; i++) {
        char name[LTX2_WNAME_CAP];
        snprintf(name, sizeof name, "%s" PATCH_WEIGHT, k_towers[i]);
        if (ltx2_st_find(&w->view, name)) {
            snprintf(w->tower, sizeof w->tower, "%s", k_towers[i]);
            snprintf(w->proj, sizeof w->proj, "%smulti_modal_projector.", starts(k_towers[i], "model.") ? "model." : "");
        }
    }
    if (st == LTX2_OK && !w->tower[0])
        st = LTX2_ERROR(ctx, LTX2_ERR_NOT_FOUND, "%s: no Gemma-3 vision tower (vision_tower.*" PATCH_WEIGHT "): the "
                        "checkpoint holds the language model alone", dir);
    if (st == LTX2_OK) {
        build_table(&t, w);
        st = ltx2_wstore_layout(ctx, &w->store, &t, be, dtype, false);
    }
    if (st == LTX2_OK) {
        char cfgdesc[160];
        snprintf(cfgdesc, sizeof cfgdesc, "SigLIP %lld layers of %lld, %lld px / %lld, %lld image tokens",
                 (long long)w->cfg.layers, (long long)w->cfg.hidden, (long long)w->cfg.image_size,
                 (long long)w->cfg.patch, (long long)w->cfg.mm_tokens);
        const ltx2_wload how = {.f = &w->view, .prefix = "", .what = "Gemma-3 vision weights", .cfgdesc = cfgdesc,
                                .owns = owns, .owns_user = w};
        st = ltx2_wtable_load(ctx, &t, &w->store, &how);
    }
    if (st == LTX2_OK) st = load_patch(ctx, w, dir);
    if (st == LTX2_OK) st = one_plus(ctx, w);
    ltx2_wtable_free(&t);
    if (st != LTX2_OK) {
        ltx2_gemma_vision_free(w);
        return st;
    }
    *out = w;
    return LTX2_OK;
}

void ltx2_gemma_vision_free(ltx2_gemma_vision_weights *w) {
    if (!w) return;
    ltx2_bpool_free(w->extra);
    ltx2_wstore_free(&w->store);
    ltx2_st_set_view_close(&w->view);
    ltx2_st_set_close(w->set);
    free(w->layers);
    free(w);
}
