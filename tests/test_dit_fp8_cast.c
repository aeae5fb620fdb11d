/* The DiT under ltx-core's fp8_cast policy (ltx-pipelines' --quantization fp8-cast) against ltx-core itself on
 * the tiny LTX-2.0 / LTX-2.3 models: tests/golden/data/dit_fp8_cast_<v>.safetensors (gen_dit_fp8_cast_goldens.py)
 * holds the inputs, the policy's forward and the plain forward of the tiny checkpoint. Loaded with
 * ltx2_dit_weights_load_fp8_cast on the CPU:
 * - the forward matches the policy's forward, and the plain load matches the plain forward, while the two
 *   references are far apart (so the test sees the cast);
 * - exactly the Linears the policy names have weights and biases on the e4m3 grid, as many as the golden
 *   cast, and the others (gates, AdaLN, projections) keep values off it;
 * - the name rule on its own (audio_ff's feed-forward included, gates and norms excluded). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/dtype.h"
#include "io/json.h"
#include "io/safetensors.h"
#include "model/dit.h"
#include "model/dit_config.h"
#include "model/dit_weights.h"
#include "model/fp8_cast.h"
#include "dit_inputs.h"
#include "golden_tensor.h"
#include "test_util.h"

/* fp32 against fp32 with the same (rounded) weights: the summation order only, as test_dit_golden */
#define CAST_REL_L2_TOL 1e-5
/* the cast moves the tiny model's output by 3.4e-2 (2.0) / 4.1e-2 (2.3): far beyond the tolerance */
#define CAST_MARGIN 100.0

static ltx2_context *g_ctx;

static double rel_to(const ltx2_st_file *g, const char *name, const float *ours, int64_t n) {
    const float *ref = golden_tensor(g, name, n);
    CHECK(ref != NULL, "%s: golden missing or not %lld f32 values", name, (long long)n);
    return ref ? test_rel_l2(ours, ref, n) : 1e30;
}

/* One forward of w on the golden's inputs; rel-L2 [video, audio] against "<pfx>.video|audio". */
static bool forward_vs(const ltx2_st_file *g, const ltx2_dit_weights *w, const char *pfx, double out[2]) {
    dit_inputs in;
    bool ok = dit_inputs_load(g_ctx, g, DIT_INPUTS_MASKED, &in);
    if (ok) {
        const ltx2_dit_forward_params p = in.p;
        const int64_t nv = p.batch * p.video.T * w->cfg.out_channels, na = p.batch * p.audio.T * w->cfg.audio_out_channels;
        float *vo = calloc((size_t)nv, sizeof(float)), *ao = calloc((size_t)na, sizeof(float));
        ok = ltx2_dit_forward(g_ctx, w, &p, vo, ao) == LTX2_OK;
        CHECK(ok, "forward: %s", ltx2_last_error(g_ctx));
        char n[64];
        snprintf(n, sizeof n, "%s.video", pfx);
        if (ok) out[0] = rel_to(g, n, vo, nv);
        snprintf(n, sizeof n, "%s.audio", pfx);
        if (ok) out[1] = rel_to(g, n, ao, na);
        free(vo), free(ao);
    }
    dit_inputs_free(&in);
    return ok;
}

static bool on_grid(const ltx2_tensor *t) {
    const float *v = t->data;
    for (int64_t i = 0; i < ltx2_tensor_numel(t); i++)
        if (ltx2_fp8e4m3_to_f32(ltx2_f32_to_fp8e4m3(v[i])) != v[i]) return false;
    return true;
}

typedef struct grid_count {
    int cast_on_grid, cast_off_grid, other_on_grid, other;
} grid_count;

static ltx2_status count_linear(void *user, const char *name, ltx2_dit_linear *lin) {
    grid_count *c = user;
    const bool grid = on_grid(&lin->w) && (!lin->b.data || on_grid(&lin->b));
    if (ltx2_fp8_cast_applies(name)) {
        c->cast_on_grid += grid;
        c->cast_off_grid += !grid;
    } else {
        c->other++;
        c->other_on_grid += grid;
    }
    return LTX2_OK;
}

static void run_version(const char *v) {
    char gpath[1024], cpath[1024];
    snprintf(gpath, sizeof gpath, "%s/tests/golden/data/dit_fp8_cast_%s.safetensors", LTX2_SOURCE_DIR, v);
    snprintf(cpath, sizeof cpath, "%s/weights/tiny/ltx2-tiny-%s.safetensors", LTX2_SOURCE_DIR, v);
    ltx2_st_file *g = NULL, *f = NULL;
    ltx2_dit_config cfg;
    ltx2_dit_weights *wc = NULL, *wp = NULL;
    bool ok = ltx2_st_open(g_ctx, gpath, &g) == LTX2_OK && ltx2_st_open(g_ctx, cpath, &f) == LTX2_OK &&
              ltx2_dit_config_from_st(g_ctx, f, &cfg) == LTX2_OK &&
              ltx2_dit_weights_load_fp8_cast(g_ctx, ltx2_backend_cpu(), LTX2_F32, f, NULL, &cfg, &wc) == LTX2_OK &&
              ltx2_dit_weights_load_on(g_ctx, ltx2_backend_cpu(), LTX2_F32, f, NULL, &cfg, &wp) == LTX2_OK;
    CHECK(ok, "%s: %s", v, ltx2_last_error(g_ctx));
    double ec[2], ep[2], ecp[2];
    if (ok && forward_vs(g, wc, "output", ec) && forward_vs(g, wp, "plain", ep) && forward_vs(g, wp, "output", ecp)) {
        for (int m = 0; m < 2; m++) {
            const char *mod = m ? "audio" : "video";
            CHECK(ec[m] <= CAST_REL_L2_TOL, "%s %s: fp8-cast forward vs ltx-core's rel-L2 %.3g", v, mod, ec[m]);
            CHECK(ep[m] <= CAST_REL_L2_TOL, "%s %s: plain forward vs ltx-core's rel-L2 %.3g", v, mod, ep[m]);
            CHECK(ecp[m] >= CAST_MARGIN * CAST_REL_L2_TOL, "%s %s: the plain load is only %.3g from the fp8-cast "
                  "reference: the golden does not tell them apart", v, mod, ecp[m]);
        }
        printf("%s: fp8-cast forward vs ltx-core rel-L2 video %.3g audio %.3g; plain %.3g / %.3g; plain vs fp8-cast "
               "reference %.3g / %.3g\n", v, ec[0], ec[1], ep[0], ep[1], ecp[0], ecp[1]);
    }
    if (ok) { /* the cast Linears: the golden's count of cast tensors is weights + biases */
        ltx2_json_doc *doc = NULL;
        const char *cast = ltx2_st_meta_get(g, "cast");
        const bool parsed = cast && ltx2_json_parse(g_ctx, cast, strlen(cast), "cast", &doc) == LTX2_OK;
        const ltx2_json *arr = parsed ? ltx2_json_root(doc) : NULL;
        const int want = arr && arr->type == LTX2_JSON_ARRAY ? (int)arr->count / 2 : -1;
        grid_count c = {0};
        CHECK(ltx2_dit_weights_each_linear(g_ctx, wc, count_linear, &c) == LTX2_OK, "%s: walk", v);
        CHECK(want > 0 && c.cast_on_grid == want && c.cast_off_grid == 0 && c.other > 0 && c.other_on_grid == 0,
              "%s: %d cast Linears on the e4m3 grid (%d off it), the golden cast %d; %d of %d other Linears on it", v,
              c.cast_on_grid, c.cast_off_grid, want, c.other_on_grid, c.other);
        ltx2_json_free(doc);
    }
    ltx2_dit_weights_free(wc);
    ltx2_dit_weights_free(wp);
    ltx2_st_close(f);
    ltx2_st_close(g);
}

static void name_rule(void) {
    static const struct {
        const char *name;
        bool cast;
    } k[] = {
        {"transformer_blocks.0.attn1.to_q.weight", true},       {"transformer_blocks.3.audio_attn2.to_v.bias", true},
        {"transformer_blocks.0.video_to_audio_attn.to_out.0.weight", true},
        {"transformer_blocks.1.ff.net.0.proj.bias", true},      {"transformer_blocks.1.audio_ff.net.2.weight", true},
        {"transformer_blocks.0.attn1.to_gate_logits.weight", false}, {"transformer_blocks.0.attn1.q_norm.weight", false},
        {"transformer_blocks.0.scale_shift_table", false},       {"patchify_proj.weight", false},
        {"adaln_single.linear.weight", false},                  {"caption_projection.linear_1.weight", false},
    };
    for (size_t i = 0; i < sizeof k / sizeof k[0]; i++)
        CHECK(ltx2_fp8_cast_applies(k[i].name) == k[i].cast, "%s: cast %d, want %d", k[i].name,
              ltx2_fp8_cast_applies(k[i].name), k[i].cast);
}

int main(void) {
    g_ctx = test_context_quiet();
    if (!g_ctx) return 1;
    name_rule();
    run_version("2.0");
    run_version("2.3");
    ltx2_context_free(g_ctx);
    return test_finish();
}
