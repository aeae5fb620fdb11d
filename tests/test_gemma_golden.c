/* The Gemma-3 text encoder against transformers' Gemma-3 classes as ltx-core 1.0.0 calls them
 * (tests/golden/gen_gemma_goldens.py): the tiny checkpoint in Google's sharded multimodal layout,
 * two left-padded prompts of the tiny tokenizer, every hidden state (embeddings, six mixed
 * local/global grouped-query layers, the final norm) at fp32 rel-L2 <= 1e-5, padded rows included
 * (a query with no key must give what torch's SDPA gives). Then the refusals: a directory without
 * a Gemma config, a non-Gemma config, token ids outside the table. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "backend/backend_plan.h"
#include "core/metrics.h"
#include "io/safetensors.h"
#include "model/gemma.h"
#include "test_util.h"

#define GEMMA_DIR LTX2_SOURCE_DIR "/weights/tiny/gemma-6l"
#define GOLDEN LTX2_SOURCE_DIR "/tests/golden/data/gemma_tiny.safetensors"
/* issue #13: every hidden state at fp32 rel-L2 <= 1e-5 */
#define HIDDEN_REL_L2 1e-5

/* The pipeline's forward, the padding both prompts share not computed: every real row of every
 * state bit for bit the full forward's (hidden: its layer-last states), the skipped rows zero; a
 * skip past the shared padding refused. */
static void check_skip(ltx2_context *ctx, const ltx2_gemma_weights *w, const int32_t *ids, const uint8_t *mask,
                       int64_t B, int64_t S, const float *hidden) {
    const int64_t D = w->cfg.hidden, L1 = w->cfg.layers + 1, skip = ltx2_gemma_common_padding(mask, B, S);
    CHECK(skip > 0 && skip < S, "the golden prompts share %lld padded positions of %lld: nothing to skip",
          (long long)skip, (long long)S);
    float *major = malloc((size_t)(B * L1 * S * D) * sizeof(float));
    float *out[2] = {major, major + L1 * S * D};
    if (B != 2 || !major) {
        CHECK(false, "two samples and their states");
        free(major);
        return;
    }
    memset(major, 0x7f, (size_t)(B * L1 * S * D) * sizeof(float)); /* not zero: the skipped rows must be written */
    const ltx2_status st = ltx2_gemma_forward_split(ctx, w, ids, mask, B, S, skip, out, NULL, NULL);
    CHECK(st == LTX2_OK, "forward skipping %lld: %s", (long long)skip, ltx2_last_error(ctx));
    int64_t differ = 0, nonzero = 0;
    for (int64_t b = 0; st == LTX2_OK && b < B; b++)
        for (int64_t l = 0; l < L1; l++)
            for (int64_t t = 0; t < S; t++)
                for (int64_t d = 0; d < D; d++) {
                    const float got = out[b][(l * S + t) * D + d];
                    if (t < skip) nonzero += got != 0.0f;
                    else differ += memcmp(&got, &hidden[((b * S + t) * D + d) * L1 + l], sizeof got) != 0;
                }
    CHECK(differ == 0 && nonzero == 0, "skipping %lld shared padded positions: %lld real values differ from the full "
          "forward's, %lld skipped ones are not zero", (long long)skip, (long long)differ, (long long)nonzero);
    printf("gemma: %lld shared padded positions of %lld skipped: real rows bit for bit, skipped rows zero\n",
           (long long)skip, (long long)S);
    CHECK(ltx2_gemma_forward_split(ctx, w, ids, mask, B, S, skip + 1, out, NULL, NULL) == LTX2_ERR_INVALID_ARG &&
              strstr(ltx2_last_error(ctx), "padding in every sample"),
          "a skip past the shared padding: %s", ltx2_last_error(ctx));
    free(major);
}

static void check_golden(ltx2_context *ctx, const ltx2_gemma_weights *w) {
    ltx2_st_file *f = NULL;
    if (ltx2_st_open(ctx, GOLDEN, &f) != LTX2_OK) {
        CHECK(false, "cannot open %s: %s", GOLDEN, ltx2_last_error(ctx));
        return;
    }
    const ltx2_st_tensor *ti = ltx2_st_find(f, "input.ids"), *tm = ltx2_st_find(f, "input.mask");
    CHECK(ti && tm && ti->ndim == 2, "golden inputs missing");
    if (!ti || !tm || ti->ndim != 2) {
        ltx2_st_close(f);
        return;
    }
    const int64_t B = ti->shape[0], S = ti->shape[1], D = w->cfg.hidden, L1 = w->cfg.layers + 1;
    int32_t *ids = malloc((size_t)(B * S) * sizeof *ids);
    uint8_t *mask = malloc((size_t)(B * S));
    float *hidden = malloc((size_t)(B * S * D * L1) * sizeof(float));
    float *layer = malloc((size_t)(B * S * D) * sizeof(float));
    for (int64_t i = 0; i < B * S; i++) {
        int64_t a, m;
        memcpy(&a, (const char *)ti->data + 8 * i, 8);
        memcpy(&m, (const char *)tm->data + 8 * i, 8);
        ids[i] = (int32_t)a;
        mask[i] = (uint8_t)m;
    }
    const ltx2_status st = ltx2_gemma_forward(ctx, w, ids, mask, B, S, hidden);
    CHECK(st == LTX2_OK, "forward: %s", ltx2_last_error(ctx));
    double worst = 0;
    for (int64_t l = 0; st == LTX2_OK && l < L1; l++) {
        char name[32];
        snprintf(name, sizeof name, "hidden.%lld", (long long)l);
        const ltx2_st_tensor *t = ltx2_st_find(f, name);
        CHECK(t != NULL, "golden %s missing", name);
        if (!t) continue;
        for (int64_t r = 0; r < B * S * D; r++) layer[r] = hidden[r * L1 + l];
        int64_t s3[3] = {B, S, D};
        ltx2_tensor ref = ltx2_st_view(t), out = ltx2_tensor_make(layer, LTX2_F32, 3, s3);
        ltx2_diff_stats ds;
        ltx2_diff(&ref, &out, 0, 0, &ds);
        CHECK(ds.n == B * S * D && ds.rel_l2 <= HIDDEN_REL_L2, "%s: rel-L2 %.3g (max |diff| %.3g of %.3g)", name,
              ds.rel_l2, ds.max_abs, ds.max_abs_ref);
        if (ds.rel_l2 > worst) worst = ds.rel_l2;
    }
    printf("gemma: %lld hidden states of [%lld, %lld, %lld], worst rel-L2 %.3g\n", (long long)L1, (long long)B,
           (long long)S, (long long)D, worst);
    if (st == LTX2_OK) check_skip(ctx, w, ids, mask, B, S, hidden);
    /* an id outside the table is refused before any work */
    ids[3] = (int32_t)w->cfg.vocab;
    CHECK(ltx2_gemma_forward(ctx, w, ids, mask, B, S, hidden) == LTX2_ERR_INVALID_ARG &&
              strstr(ltx2_last_error(ctx), "outside") != NULL,
          "an id past the table: %s", ltx2_last_error(ctx));
    free(ids), free(mask), free(hidden), free(layer);
    ltx2_st_close(f);
}

static void check_config_refusals(ltx2_context *ctx) {
    ltx2_gemma_weights *w = NULL;
    ltx2_status st = ltx2_gemma_weights_load_on(ctx, ltx2_backend_cpu(), LTX2_F32, LTX2_SOURCE_DIR "/tests", &w);
    CHECK(st == LTX2_ERR_IO && w == NULL, "a directory without config.json: status %d (%s)", st,
          ltx2_last_error(ctx));
    const char *bad[][2] = {
        {"{\"model_type\": \"llama\"}", "not a Gemma-3"},
        {"{\"model_type\": \"gemma3\"}", "text_config"},
        {"{\"model_type\": \"gemma3_text\", \"num_hidden_layers\": 1000000}", "num_hidden_layers"},
        {"{\"model_type\": \"gemma3_text\", \"attn_logit_softcapping\": 50.0}", "soft-capping"},
        {"{\"model_type\": \"gemma3_text\", \"num_attention_heads\": 6, \"num_key_value_heads\": 4}", "multiple"},
        {"{\"model_type\": \"gemma3_text\", \"rope_scaling\": {\"rope_type\": \"yarn\", \"factor\": 4}}", "yarn"},
        {"{\"model_type\": \"gemma3_text\", \"layer_types\": [\"full_attention\"]}", "layer_types"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        ltx2_json_doc *doc = NULL;
        ltx2_gemma_config c;
        CHECK(ltx2_json_parse(ctx, bad[i][0], strlen(bad[i][0]), "test", &doc) == LTX2_OK, "parse %s", bad[i][0]);
        st = ltx2_gemma_config_parse(ctx, ltx2_json_root(doc), "test", &c);
        CHECK(st != LTX2_OK && strstr(ltx2_last_error(ctx), bad[i][1]) != NULL, "config %s: status %d, %s",
              bad[i][0], st, ltx2_last_error(ctx));
        ltx2_json_free(doc);
    }
    /* Google's 12B config.json gives only a few keys: the rest are Gemma3TextConfig's defaults */
    const char *g12 = "{\"model_type\": \"gemma3\", \"text_config\": {\"hidden_size\": 3840, \"intermediate_size\": "
                      "15360, \"model_type\": \"gemma3_text\", \"num_attention_heads\": 16, \"num_hidden_layers\": 48, "
                      "\"num_key_value_heads\": 8, \"rope_scaling\": {\"factor\": 8.0, \"rope_type\": \"linear\"}, "
                      "\"sliding_window\": 1024}}";
    ltx2_json_doc *doc = NULL;
    ltx2_gemma_config c;
    CHECK(ltx2_json_parse(ctx, g12, strlen(g12), "12b", &doc) == LTX2_OK, "parse the 12B config");
    st = ltx2_gemma_config_parse(ctx, ltx2_json_root(doc), "12b", &c);
    CHECK(st == LTX2_OK, "12B config: %s", ltx2_last_error(ctx));
    CHECK(c.vocab == 262208 && c.head_dim == 256 && c.query_pre_attn_scalar == 256 && c.rope_theta == 1e6 &&
              c.rope_local_theta == 1e4 && c.rope_linear_factor == 8 && c.sliding[0] && !c.sliding[5] &&
              c.sliding[6] && !c.sliding[47],
          "12B defaults: vocab %lld head_dim %lld qpas %g theta %g/%g factor %g", (long long)c.vocab,
          (long long)c.head_dim, c.query_pre_attn_scalar, c.rope_theta, c.rope_local_theta, c.rope_linear_factor);
    ltx2_json_free(doc);
}

/* ltx2_gemma_device_bytes against the bytes the code holds: the 6-layer model loaded onto the
 * planning backend in bf16 and its forward run there (each allocation rounded to 256 bytes). */
static void check_device_bytes(ltx2_context *ctx) {
    ltx2_backend *plan = NULL;
    ltx2_gemma_weights *w = NULL;
    ltx2_status st = ltx2_backend_plan_create(ctx, &plan);
    if (st == LTX2_OK) st = ltx2_gemma_weights_load_on(ctx, plan, LTX2_BF16, GEMMA_DIR, &w);
    CHECK(st == LTX2_OK, "plan backend: %s", ltx2_last_error(ctx));
    if (st == LTX2_OK) {
        const int64_t B = 2, S = 40, n = B * S;
        int32_t *ids = calloc((size_t)n, sizeof *ids);
        uint8_t *mask = malloc((size_t)n);
        float *hidden = malloc((size_t)(n * w->cfg.hidden * (w->cfg.layers + 1)) * sizeof(float));
        memset(mask, 1, (size_t)n);
        st = ltx2_gemma_forward(ctx, w, ids, mask, B, S, hidden);
        CHECK(st == LTX2_OK, "forward on the plan backend: %s", ltx2_last_error(ctx));
        size_t cur = 0, peak = 0;
        ltx2_backend_plan_counts(plan, &cur, &peak);
        const uint64_t est = ltx2_gemma_device_bytes(&w->cfg, B, S, false);
        /* at most one 256-byte rounding per tensor: the store's ~80 and the forward's ~20 */
        CHECK(est <= peak && peak - est <= 128 * 256, "device bytes: estimated %llu, held %zu", (unsigned long long)est,
              peak);
        printf("gemma device bytes: estimated %llu, measured peak %zu\n", (unsigned long long)est, peak);
        free(ids), free(mask), free(hidden);
    }
    ltx2_gemma_weights_free(w);
    ltx2_backend_free(plan);
}

int main(void) {
    ltx2_context *ctx = ltx2_context_create(NULL);
    ltx2_gemma_weights *w = NULL;
    const ltx2_status st = ltx2_gemma_weights_load_on(ctx, ltx2_backend_cpu(), LTX2_F32, GEMMA_DIR, &w);
    CHECK(st == LTX2_OK, "load %s: %s", GEMMA_DIR, ltx2_last_error(ctx));
    if (st == LTX2_OK) {
        CHECK(w->cfg.layers == 6 && w->cfg.kv_heads == 2 && w->cfg.head_dim == 16 && w->cfg.sliding[0] &&
                  !w->cfg.sliding[2],
              "tiny config read as %lld layers, %lld kv heads, head_dim %lld", (long long)w->cfg.layers,
              (long long)w->cfg.kv_heads, (long long)w->cfg.head_dim);
        CHECK(strcmp(w->prefix, "language_model.model.") == 0, "prefix %s", w->prefix);
        check_golden(ctx, w);
    }
    ltx2_gemma_weights_free(w);
    check_config_refusals(ctx);
    check_device_bytes(ctx);
    ltx2_context_free(ctx);
    return test_finish();
}
