/* The DiT's activation pool (ltx2_dit_act_pool): forwards through it are bitwise the forwards
 * without it; after the first call of a shape the calls make no device allocation; a call of
 * another shape (batch 1 after 2) empties it first; the buffers a call did not use are freed after
 * it (the text cache's first call makes the context, the later ones do not); a perturbed call of
 * the same shape still matches. Inputs: the golden inputs of tests/golden/gen_dit_goldens.py, both
 * versions, on the CPU backend. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/context.h"
#include "dit_inputs.h"
#include "test_util.h"

static ltx2_context *g_ctx;

static ltx2_dit_act_pool_stats stats(const ltx2_dit_act_pool *a) {
    ltx2_dit_act_pool_stats s;
    ltx2_dit_act_pool_get_stats(a, &s);
    return s;
}

/* p without the pool into ref, then through a into got: equal, and the device allocations the pooled
 * call made (the pool's count before and after). */
static int64_t expect(const char *what, const ltx2_dit_weights *w, ltx2_dit_forward_params *p, ltx2_dit_act_pool *a,
                      dit_outs *ref, dit_outs *got) {
    p->act_pool = NULL;
    ltx2_status st = ltx2_dit_forward(g_ctx, w, p, ref->v, ref->a);
    CHECK(st == LTX2_OK, "%s: forward without the pool: %s", what, ltx2_last_error(g_ctx));
    const int64_t before = stats(a).allocs;
    p->act_pool = a;
    st = ltx2_dit_forward(g_ctx, w, p, got->v, got->a);
    p->act_pool = NULL;
    CHECK(st == LTX2_OK, "%s: forward through the pool: %s", what, ltx2_last_error(g_ctx));
    CHECK(dit_outs_equal(ref, got, p->batch), "%s: the pooled forward differs from the unpooled one", what);
    return stats(a).allocs - before;
}

static void check_version(const char *version) {
    ltx2_dit_weights *w;
    ltx2_st_file *g;
    dit_inputs in;
    if (!dit_golden_open(g_ctx, version, DIT_INPUTS_MASKED, &w, &g, &in)) return;
    dit_outs ref = {0}, got = {0};
    const bool outs_ok = dit_outs_alloc(&in, &w->cfg, &ref) && dit_outs_alloc(&in, &w->cfg, &got);
    ltx2_dit_act_pool *a = NULL;
    ltx2_dit_text_cache *tc = NULL;
    const int64_t L = w->cfg.num_layers;
    uint32_t *pert = calloc((size_t)(in.B * L), sizeof *pert);
    CHECK(ltx2_dit_act_pool_create(g_ctx, &a) == LTX2_OK && ltx2_dit_text_cache_create(g_ctx, 4, &tc) == LTX2_OK,
          "%s: create: %s", version, ltx2_last_error(g_ctx));
    if (a && tc && pert && outs_ok) {
        ltx2_dit_forward_params p = in.p;
        char what[128];
        snprintf(what, sizeof what, "%s first call", version);
        const int64_t first = expect(what, w, &p, a, &ref, &got);
        const int64_t held = stats(a).bytes;
        CHECK(first > 0 && held > 0, "%s: %lld allocations, %lld bytes held", what, (long long)first, (long long)held);
        snprintf(what, sizeof what, "%s second call", version);
        CHECK(expect(what, w, &p, a, &ref, &got) == 0 && stats(a).bytes == held,
              "%s: allocated again, or holds %lld bytes after %lld", what, (long long)stats(a).bytes, (long long)held);
        /* the same shape, perturbed (STG in the last block, one sample isolated): still the same bits */
        const int64_t last = L - 1;
        ltx2_dit_perturb_set(g_ctx, pert, L, 0, LTX2_DIT_SKIP_VIDEO_SELF_ATTN | LTX2_DIT_SKIP_AUDIO_SELF_ATTN, &last, 1);
        ltx2_dit_perturb_set(g_ctx, pert, L, 1, LTX2_DIT_SKIP_A2V_CROSS_ATTN | LTX2_DIT_SKIP_V2A_CROSS_ATTN, NULL, 0);
        p.perturb = pert;
        snprintf(what, sizeof what, "%s perturbed call", version);
        expect(what, w, &p, a, &ref, &got);
        p.perturb = NULL;
        /* the text cache: its first call makes the context, the later ones do not, and the pool lets
         * the context's buffers go after the first call that did without them */
        p.text_cache = tc;
        snprintf(what, sizeof what, "%s text cache fill", version);
        expect(what, w, &p, a, &ref, &got);
        snprintf(what, sizeof what, "%s text cache hit", version);
        expect(what, w, &p, a, &ref, &got);
        const int64_t cached = stats(a).bytes;
        snprintf(what, sizeof what, "%s text cache hit again", version);
        CHECK(expect(what, w, &p, a, &ref, &got) == 0 && stats(a).bytes == cached && cached < held,
              "%s: allocated again, or holds %lld bytes (after the context-free call %lld, before the cache %lld)",
              what, (long long)stats(a).bytes, (long long)cached, (long long)held);
        p.text_cache = NULL;
        /* another shape: one sample, with the two-sample buffers given back first (else both sets
         * are held at once during the call, past any one call's peak) */
        const int64_t clears = stats(a).clears, peak = stats(a).peak;
        p.batch = 1;
        snprintf(what, sizeof what, "%s batch 1", version);
        CHECK(expect(what, w, &p, a, &ref, &got) > 0 && stats(a).clears == clears + 1 && stats(a).peak == peak,
              "%s: made no allocation, or was not emptied first (%lld clears, peak %lld bytes after %lld)", what,
              (long long)stats(a).clears, (long long)stats(a).peak, (long long)peak);
        snprintf(what, sizeof what, "%s batch 1 again", version);
        CHECK(expect(what, w, &p, a, &ref, &got) == 0, "%s: allocated again", what);
        printf("%s: pooled forwards bitwise the unpooled ones; %lld calls, %lld allocations in all, %lld held\n",
               version, (long long)stats(a).calls, (long long)stats(a).allocs, (long long)stats(a).bytes);
    }
    ltx2_dit_act_pool_free(a);
    ltx2_dit_text_cache_free(tc);
    free(pert);
    dit_outs_free(&ref);
    dit_outs_free(&got);
    dit_golden_close(w, g, &in);
}

int main(void) { return dit_test_both_versions(&g_ctx, check_version); }
