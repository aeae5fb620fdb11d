/* The text connectors (feature extractor + video/audio Embeddings1DConnector) against ltx-core
 * 1.0.0, step by step: the tiny LTX-2.0 / LTX-2.3 checkpoints are loaded through the loader, the
 * forward runs on the recorded Gemma hidden states (one left-padded and one right-padded prompt)
 * and every intermediate is compared with tests/golden/data/connectors_<v>.safetensors
 * (tests/golden/gen_connector_goldens.py). Also: config/shape/input errors name what is wrong. */
#define _DEFAULT_SOURCE /* mkdtemp */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/context.h"
#include "core/dtype.h"
#include "core/metrics.h"
#include "io/safetensors.h"
#include "model/connectors.h"
#include "model/text_states.h"
#include "test_util.h"
#include "ckpt_edit.h"

/* fp32 vs fp32 with the same weights: only summation order and libm rounding differ. */
#define CONN_REL_L2_TOL 1e-5

static ltx2_context *g_ctx;

typedef struct golden {
    ltx2_st_file *f;
    char seen[64];
    int n_compared;
    double worst;
    char worst_name[128];
} golden;

static float *load_f32(const ltx2_st_file *f, const char *name, int64_t *numel) { return ltx2_st_read_f32(g_ctx, f, name, numel); }

static void compare(golden *g, const char *name, const float *data, int64_t n) {
    const ltx2_st_tensor *t = ltx2_st_find(g->f, name);
    if (!t) return;
    int64_t gn = 0;
    float *ref = load_f32(g->f, name, &gn);
    CHECK(ref != NULL && gn == n, "%s: golden unreadable or %lld elements vs ours %lld", name, (long long)gn,
          (long long)n);
    if (ref && gn == n) {
        ltx2_tensor a = ltx2_tensor_make(ref, LTX2_F32, 1, &gn), b = ltx2_tensor_make((void *)data, LTX2_F32, 1, &n);
        ltx2_diff_stats st;
        ltx2_diff(&a, &b, 0.0, 0.0, &st);
        CHECK(st.rel_l2 <= CONN_REL_L2_TOL, "%s: rel-L2 %.3g > %.1g (max abs %.3g)", name, st.rel_l2,
              CONN_REL_L2_TOL, st.max_abs);
        if (st.rel_l2 > g->worst) {
            g->worst = st.rel_l2;
            snprintf(g->worst_name, sizeof g->worst_name, "%s", name);
        }
        size_t idx = (size_t)(t - g->f->tensors);
        if (idx < sizeof g->seen) g->seen[idx] = 1;
        g->n_compared++;
    }
    free(ref);
}

static void dump_cb(const char *name, const ltx2_tensor *t, void *user) {
    compare((golden *)user, name, (const float *)t->data, ltx2_tensor_numel(t));
}

/* The same states held layer-major (the encoder's layout, model/text_states.h) give the same
 * outputs bit for bit: the feature extractor reads each value through the layout, in the same
 * order. These runs have no dump, so they project only the rows from each sample's first real token
 * to its last (the registers take the padding's place); the dumped run projected every row. */
static void check_layer_major(const char *version, const ltx2_connectors_weights *w, const ltx2_text_hidden *in,
                              const float *vo, const float *ao) {
    const int64_t B = in->B, S = in->S, D = in->D, L = in->L, per = S * D * L;
    const int64_t nv = B * S * w->cfg.video.inner_dim, na = B * S * w->cfg.audio.inner_dim;
    float *major = malloc((size_t)(B * per) * sizeof(float)), *v2 = malloc((size_t)nv * sizeof(float));
    float *a2 = malloc((size_t)na * sizeof(float)), *back = malloc((size_t)per * sizeof(float));
    uint8_t *mo = malloc((size_t)(B * S));
    for (int64_t b = 0; b < B; b++) ltx2_text_states_to_layer_major(in->hidden + b * per, S * D, L, major + b * per);
    /* and back: the two transposes are inverse */
    ltx2_text_states_to_layer_last(major, S * D, L, back);
    CHECK(memcmp(back, in->hidden, (size_t)per * sizeof(float)) == 0, "%s: layer-major and back differs", version);
    CHECK(major[1 * S * D + 2 * D + 3] == in->hidden[(2 * D + 3) * L + 1], "%s: layer-major index", version);
    ltx2_text_hidden lm = *in;
    lm.hidden = major, lm.layer_major = true;
    const ltx2_status st = ltx2_connectors_forward(g_ctx, w, &lm, NULL, NULL, v2, a2, mo);
    CHECK(st == LTX2_OK, "%s: layer-major forward: %s", version, ltx2_last_error(g_ctx));
    if (st == LTX2_OK)
        CHECK(memcmp(v2, vo, (size_t)nv * sizeof(float)) == 0 && memcmp(a2, ao, (size_t)na * sizeof(float)) == 0,
              "%s: layer-major states give other encodings", version);
    /* the same states as the encoder keeps them on its backend (ltx2_gemma_forward_keep): the CPU
     * backend's f32 tensor, gathered by copy_2d instead of uploaded, LTX-2.0's statistics from the
     * same row_stats: bit for bit, both versions */
    const int64_t ds[4] = {B, L, S, D};
    const ltx2_tensor dev = ltx2_tensor_make(major, LTX2_F32, 4, ds);
    ltx2_text_hidden on = lm;
    on.hidden = NULL, on.dev = &dev;
    memset(v2, 0, (size_t)nv * sizeof(float)), memset(a2, 0, (size_t)na * sizeof(float));
    const ltx2_status sd = ltx2_connectors_forward(g_ctx, w, &on, NULL, NULL, v2, a2, mo);
    CHECK(sd == LTX2_OK, "%s: device-states forward: %s", version, ltx2_last_error(g_ctx));
    if (sd == LTX2_OK)
        CHECK(memcmp(v2, vo, (size_t)nv * sizeof(float)) == 0 && memcmp(a2, ao, (size_t)na * sizeof(float)) == 0,
              "%s: device states give other encodings", version);
    ltx2_tensor wrong = dev;
    wrong.shape[1] = L - 1;
    on.dev = &wrong;
    CHECK(ltx2_connectors_forward(g_ctx, w, &on, NULL, NULL, v2, a2, mo) == LTX2_ERR_INVALID_ARG,
          "%s: mis-shaped device states accepted", version);
    free(major), free(v2), free(a2), free(back), free(mo);
}

static void run_version(const char *version) {
    char path[1024], gpath[1024];
    snprintf(path, sizeof path, "%s/weights/tiny/ltx2-tiny-%s.safetensors", LTX2_SOURCE_DIR, version);
    snprintf(gpath, sizeof gpath, "%s/tests/golden/data/connectors_%s.safetensors", LTX2_SOURCE_DIR, version);
    ltx2_connectors_weights *w = NULL;
    ltx2_status st = ltx2_connectors_weights_load_file(g_ctx, path, &w);
    CHECK(st == LTX2_OK, "%s: load: %s", version, ltx2_last_error(g_ctx));
    if (st != LTX2_OK) return;
    const bool v23 = strcmp(version, "2.3") == 0;
    CHECK(w->cfg.fe == (v23 ? LTX2_TEXT_FE_V2 : LTX2_TEXT_FE_V1), "%s: feature extractor version", version);
    CHECK(w->cfg.video.gated == v23, "%s: connector gating flag", version);
    CHECK(w->text_dim == 96, "%s: text dim %lld (tiny Gemma 32 x 3)", version, (long long)w->text_dim);

    golden g;
    memset(&g, 0, sizeof g);
    st = ltx2_st_open(g_ctx, gpath, &g.f);
    CHECK(st == LTX2_OK, "%s: %s", gpath, ltx2_last_error(g_ctx));
    if (st == LTX2_OK) {
        const ltx2_st_tensor *ht = ltx2_st_find(g.f, "input.hidden");
        int64_t nm = 0;
        float *hidden = load_f32(g.f, "input.hidden", NULL), *mask_f = load_f32(g.f, "input.mask", &nm);
        CHECK(ht && ht->ndim == 4 && hidden && mask_f, "%s: golden inputs", version);
        if (ht && ht->ndim == 4 && hidden && mask_f) {
            uint8_t *mask = malloc((size_t)nm), *mask_out = malloc((size_t)nm);
            for (int64_t i = 0; i < nm; i++) mask[i] = mask_f[i] != 0.0f;
            ltx2_text_hidden in = {hidden, mask, ht->shape[0], ht->shape[1], ht->shape[2], ht->shape[3], false, NULL};
            const int64_t B = in.B, S = in.S;
            float *vo = malloc((size_t)(B * S * w->cfg.video.inner_dim) * sizeof(float));
            float *ao = malloc((size_t)(B * S * w->cfg.audio.inner_dim) * sizeof(float));
            st = ltx2_connectors_forward(g_ctx, w, &in, dump_cb, &g, vo, ao, mask_out);
            CHECK(st == LTX2_OK, "%s: forward: %s", version, ltx2_last_error(g_ctx));
            if (st == LTX2_OK) {
                /* the returned outputs themselves, compared once more outside the dump */
                golden g2 = g;
                g2.n_compared = 0;
                compare(&g2, "video.encoding", vo, B * S * w->cfg.video.inner_dim);
                compare(&g2, "audio.encoding", ao, B * S * w->cfg.audio.inner_dim);
                CHECK(g2.n_compared == 2, "%s: final encodings not compared", version);
                int ones = 0;
                for (int64_t i = 0; i < nm; i++) ones += mask_out[i] == 1;
                CHECK(ones == nm, "%s: output mask not all ones", version);
                check_layer_major(version, w, &in, vo, ao);
            }
            int missing = 0;
            for (size_t i = 0; i < g.f->n_tensors && i < sizeof g.seen; i++) {
                const char *nmn = g.f->tensors[i].name;
                if (strncmp(nmn, "input.", 6) == 0 || g.seen[i]) continue;
                if (missing++ < 5) fprintf(stderr, "  %s: golden %s was never produced\n", version, nmn);
            }
            CHECK(missing == 0, "%s: %d golden intermediates not produced", version, missing);
            printf("%s: %d intermediates compared, worst rel-L2 %.3g (%s)\n", version, g.n_compared, g.worst,
                   g.worst_name);

            /* bad inputs: wrong Gemma width, sequence not a multiple of the registers */
            ltx2_text_hidden bad = in;
            bad.D = in.D + 1;
            st = ltx2_connectors_forward(g_ctx, w, &bad, NULL, NULL, vo, ao, mask_out);
            CHECK(st == LTX2_ERR_SHAPE && strstr(ltx2_last_error(g_ctx), "text projection expects 96"),
                  "bad Gemma width: %s", ltx2_last_error(g_ctx));
            bad = in;
            bad.S = in.S - 1;
            st = ltx2_connectors_forward(g_ctx, w, &bad, NULL, NULL, vo, ao, mask_out);
            CHECK(st == LTX2_ERR_SHAPE && strstr(ltx2_last_error(g_ctx), "multiple of the 128"),
                  "bad sequence length: %s", ltx2_last_error(g_ctx));
            free(vo);
            free(ao);
            free(mask);
            free(mask_out);
        }
        free(hidden);
        free(mask_f);
        ltx2_st_close(g.f);
    }
    ltx2_connectors_weights_free(w);
}

/* Rewrites the tiny checkpoint of `version` with one tensor dropped or transposed, or the config
 * edited, and returns the loader's status. */
static ltx2_status load_broken(const char *dir, const char *version, const char *drop, const char *reshape,
                               const char *cfg_from, const char *cfg_to) {
    char src[1024], dst[1024];
    snprintf(src, sizeof src, "%s/weights/tiny/ltx2-tiny-%s.safetensors", LTX2_SOURCE_DIR, version);
    snprintf(dst, sizeof dst, "%s/broken.safetensors", dir);
    if (!ckpt_write_broken(src, dst, drop, reshape, cfg_from, cfg_to)) return LTX2_ERR_INTERNAL;
    ltx2_connectors_weights *w = NULL;
    ltx2_clear_error(g_ctx);
    ltx2_status st = ltx2_connectors_weights_load_file(g_ctx, dst, &w);
    CHECK(w == NULL || st == LTX2_OK, "weights returned on failure");
    ltx2_connectors_weights_free(w);
    unlink(dst);
    return st;
}

static void bad_checkpoints(void) {
    char dir[] = "/tmp/ltx2_conn_XXXXXX";
    if (!mkdtemp(dir)) {
        CHECK(0, "mkdtemp failed");
        return;
    }
    const char *key = "model.diffusion_model.audio_embeddings_connector.transformer_1d_blocks.1.ff.net.2.weight";
    ltx2_status st = load_broken(dir, "2.0", key, NULL, NULL, NULL);
    CHECK(st == LTX2_ERR_NOT_FOUND && strstr(ltx2_last_error(g_ctx), key), "missing key: %s %s",
          ltx2_status_name(st), ltx2_last_error(g_ctx));

    key = "model.diffusion_model.video_embeddings_connector.transformer_1d_blocks.0.ff.net.0.proj.weight";
    st = load_broken(dir, "2.3", NULL, key, NULL, NULL);
    CHECK(st == LTX2_ERR_SHAPE && strstr(ltx2_last_error(g_ctx), key) &&
              strstr(ltx2_last_error(g_ctx), "expected [256, 64]"),
          "wrong shape: %s %s", ltx2_status_name(st), ltx2_last_error(g_ctx));

    key = "text_embedding_projection.audio_aggregate_embed.weight";
    st = load_broken(dir, "2.3", key, NULL, NULL, NULL);
    CHECK(st == LTX2_ERR_NOT_FOUND && strstr(ltx2_last_error(g_ctx), key), "missing projection: %s",
          ltx2_last_error(g_ctx));

    st = load_broken(dir, "2.0", NULL, NULL, "\"connector_positional_embedding_max_pos\"", "\"connector_max_pos_typo\"");
    CHECK(st == LTX2_ERR_NOT_FOUND && strstr(ltx2_last_error(g_ctx), "connector_positional_embedding_max_pos"),
          "missing max_pos: %s", ltx2_last_error(g_ctx));

    /* one layer fewer in the config: block 1's tensors are unexpected */
    st = load_broken(dir, "2.0", NULL, NULL, "\"connector_num_layers\": 2", "\"connector_num_layers\": 1");
    CHECK(st == LTX2_ERR_FORMAT && strstr(ltx2_last_error(g_ctx), "transformer_1d_blocks.1."), "unexpected: %s",
          ltx2_last_error(g_ctx));

    /* a partial V2 config is refused, as ltx-core does */
    st = load_broken(dir, "2.3", NULL, NULL, "\"caption_proj_input_norm\": false", "\"caption_proj_input_nrm\": false");
    CHECK(st == LTX2_ERR_UNSUPPORTED && strstr(ltx2_last_error(g_ctx), "caption_proj_input_norm"), "partial V2: %s",
          ltx2_last_error(g_ctx));
    rmdir(dir);
}

int main(void) {
    g_ctx = ltx2_context_create(NULL);
    if (!g_ctx) return 1;
    run_version("2.0");
    run_version("2.3");
    bad_checkpoints();
    ltx2_context_free(g_ctx);
    return test_finish();
}
