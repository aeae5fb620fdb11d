/* The CPU reference ops against PyTorch: every case in tests/golden/data/ops.safetensors (made by
 * tests/golden/gen_ops.py; its "cases" metadata says op, params and tensor names) is recomputed by
 * src/cpu and compared. The *_f64 cases hold float64 truths of the same fp32 inputs. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/dtype.h"
#include "core/metrics.h"
#include "cpu/cpu_ops.h"
#include "io/json.h"
#include "io/safetensors.h"
#include "test_util.h"

/* Inputs are randn-scaled, reductions are at most a few hundred terms: fp32 rounding of a
 * different summation order stays below ~1e-6 relative to the output scale. */
#define GOLDEN_OPS_ATOL 1e-5
#define GOLDEN_OPS_RTOL 1e-5
#define GOLDEN_OPS_MAX_REL_L2 2e-6

typedef struct golden {
    ltx2_context *ctx;
    const ltx2_st_file *f;
    const ltx2_json *tensors; /* the case's "tensors" object */
    const char *label;
} golden;

/* Copies a golden tensor into a fresh aligned f32 buffer (the mapping may be unaligned). */
static float *load(golden *g, const char *role, ltx2_tensor *view) {
    const ltx2_json *desc = ltx2_json_get(g->tensors, role);
    const char *name = desc ? ltx2_json_get_str(desc, "name") : NULL;
    if (!name) return NULL;
    const ltx2_st_tensor *t = ltx2_st_find(g->f, name);
    CHECK(t != NULL, "%s: tensor %s missing", g->label, name);
    if (!t) return NULL;
    ltx2_tensor src = ltx2_st_view(t);
    size_t n = (size_t)ltx2_tensor_numel(&src);
    float *buf = malloc((n ? n : 1) * sizeof(float));
    if (!buf || ltx2_convert(g->ctx, buf, LTX2_F32, src.data, src.dtype, n) != LTX2_OK) {
        CHECK(false, "%s: cannot convert %s: %s", g->label, name, ltx2_last_error(g->ctx));
        free(buf);
        return NULL;
    }
    if (view) *view = ltx2_tensor_make(buf, LTX2_F32, src.ndim, src.shape);
    return buf;
}

static void compare(golden *g, const float *got) {
    const ltx2_json *desc = ltx2_json_get(g->tensors, "out");
    const ltx2_st_tensor *t = ltx2_st_find(g->f, ltx2_json_get_str(desc, "name"));
    ltx2_tensor ref = ltx2_st_view(t);
    ltx2_tensor out = ltx2_tensor_make((void *)got, LTX2_F32, ref.ndim, ref.shape);
    ltx2_diff_stats st;
    ltx2_diff(&ref, &out, GOLDEN_OPS_ATOL, GOLDEN_OPS_RTOL, &st);
    CHECK(st.n_within == st.n && st.rel_l2 <= GOLDEN_OPS_MAX_REL_L2,
          "%s: %lld/%lld within, max_abs %.3e, rel-L2 %.3e, worst flat %lld: torch %.9g ours %.9g", g->label,
          (long long)st.n_within, (long long)st.n, st.max_abs, st.rel_l2, (long long)st.worst_index, st.worst_ref,
          st.worst_out);
}

static int64_t rows_of(const ltx2_tensor *t) {
    int64_t r = 1;
    for (int d = 0; d < t->ndim - 1; d++) r *= t->shape[d];
    return r;
}

static void run_case(golden *g, const char *op, const ltx2_json *params) {
    double eps = 0;
    ltx2_json_get_num(params, "eps", &eps);
    ltx2_tensor x, a, b, o;
    float *xb = NULL, *ab = NULL, *bb = NULL, *wb = NULL, *biasb = NULL, *out = NULL;
    ltx2_status st = LTX2_OK;
    if (!strcmp(op, "gemm") || !strcmp(op, "gemm_f64")) {
        ab = load(g, "a", &a);
        bb = load(g, "b", &b);
        biasb = load(g, "bias", NULL);
        if (!ab || !bb) goto done;
        int64_t K = a.shape[a.ndim - 1], M = ltx2_tensor_numel(&a) / K, N = b.shape[0];
        out = malloc((size_t)(M * N) * sizeof(float));
        st = ltx2_cpu_gemm(g->ctx, M, N, K, 1.0f, ab, K, bb, K, LTX2_B_NK, 0.0f, out, N, biasb);
    } else if (!strcmp(op, "rms_norm") || !strcmp(op, "rms_norm_f64") || !strcmp(op, "layer_norm")) {
        xb = load(g, "x", &x);
        wb = load(g, "weight", NULL);
        biasb = load(g, "bias", NULL);
        if (!xb) goto done;
        int64_t D = x.shape[x.ndim - 1], R = rows_of(&x);
        out = malloc((size_t)(R * D) * sizeof(float));
        st = op[0] == 'r' ? ltx2_cpu_rms_norm(g->ctx, xb, out, R, D, wb, (float)eps)
                          : ltx2_cpu_layer_norm(g->ctx, xb, out, R, D, wb, biasb, (float)eps);
    } else if (!strcmp(op, "softmax") || !strcmp(op, "gelu_tanh") || !strcmp(op, "silu")) {
        xb = load(g, "x", &x);
        if (!xb) goto done;
        int64_t n = ltx2_tensor_numel(&x);
        out = malloc((size_t)(n ? n : 1) * sizeof(float));
        if (op[0] == 's' && op[1] == 'o') st = ltx2_cpu_softmax(g->ctx, xb, out, rows_of(&x), x.shape[x.ndim - 1]);
        else if (op[0] == 'g') st = ltx2_cpu_gelu_tanh(g->ctx, xb, out, n);
        else st = ltx2_cpu_silu(g->ctx, xb, out, n);
    } else if (!strcmp(op, "add") || !strcmp(op, "mul")) {
        ab = load(g, "a", &a);
        bb = load(g, "b", &b);
        const ltx2_st_tensor *ref = ltx2_st_find(g->f, ltx2_json_get_str(ltx2_json_get(g->tensors, "out"), "name"));
        if (!ab || !bb || !ref) goto done;
        ltx2_tensor rv = ltx2_st_view(ref);
        out = malloc((size_t)ltx2_tensor_numel(&rv) * sizeof(float) + sizeof(float));
        o = ltx2_tensor_make(out, LTX2_F32, rv.ndim, rv.shape);
        st = ltx2_cpu_binary(g->ctx, op[0] == 'a' ? LTX2_BINARY_ADD : LTX2_BINARY_MUL, &a, &b, &o);
    } else {
        CHECK(false, "%s: unknown op '%s' in the golden file (update this test)", g->label, op);
        goto done;
    }
    CHECK(st == LTX2_OK, "%s: %s", g->label, ltx2_last_error(g->ctx));
    if (st == LTX2_OK && out) compare(g, out);
done:
    free(xb);
    free(ab);
    free(bb);
    free(wb);
    free(biasb);
    free(out);
}

int main(void) {
    ltx2_context *ctx = ltx2_context_create(NULL);
    ltx2_st_file *f = NULL;
    ltx2_json_doc *doc = NULL;
    const char *path = LTX2_SOURCE_DIR "/tests/golden/data/ops.safetensors";
    if (ltx2_st_open(ctx, path, &f) != LTX2_OK) {
        CHECK(false, "cannot open %s: %s", path, ltx2_last_error(ctx));
        goto out;
    }
    const char *cases = ltx2_st_meta_get(f, "cases");
    CHECK(cases != NULL, "%s has no 'cases' metadata", path);
    if (!cases || ltx2_json_parse(ctx, cases, strlen(cases), "ops cases", &doc) != LTX2_OK) goto out;
    const ltx2_json *root = ltx2_json_root(doc);
    CHECK(root->type == LTX2_JSON_ARRAY && root->count >= 40, "expected >= 40 cases, got %zu", root->count);
    for (size_t i = 0; i < root->count; i++) {
        const ltx2_json *c = &root->items[i];
        const char *op = ltx2_json_get_str(c, "op");
        int64_t index = -1;
        ltx2_json_get_int(c, "index", &index);
        char label[64];
        snprintf(label, sizeof(label), "%s.%lld", op ? op : "?", (long long)index);
        golden g = {ctx, f, ltx2_json_get(c, "tensors"), label};
        if (!op || !g.tensors) {
            CHECK(false, "case %zu is malformed", i);
            continue;
        }
        run_case(&g, op, ltx2_json_get(c, "params"));
    }
out:
    ltx2_json_free(doc);
    ltx2_st_close(f);
    ltx2_context_free(ctx);
    return test_finish();
}
