/* The DiT's text K/V cache (ltx2_dit_text_cache): outputs with the cache are bitwise equal to
 * outputs without it, and the counters show each (context[, sigma]) key's projections ran once per
 * block and stream. LTX-2.0: the key is the context only, so a new sigma reuses the K/V; LTX-2.3
 * modulates the context with the sigma's prompt AdaLN first, so a new sigma is a new key. Also:
 * explicit invalidation, an entry shared by two samples of one batch, and a cache too small for the
 * batch (the rest computed uncached). Inputs: the golden inputs of tests/golden/gen_dit_goldens.py. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/context.h"
#include "core/dtype.h"
#include "io/safetensors.h"
#include "model/dit.h"
#include "model/dit_weights.h"
#include "dit_inputs.h"
#include "test_util.h"

static ltx2_context *g_ctx;

static void fwd(const ltx2_dit_weights *w, ltx2_dit_forward_params *p, ltx2_dit_text_cache *c, dit_outs *o) {
    p->text_cache = c;
    ltx2_status st = ltx2_dit_forward(g_ctx, w, p, o->v, o->a);
    CHECK(st == LTX2_OK, "forward: %s", ltx2_last_error(g_ctx));
}

static ltx2_dit_text_cache_stats stats(const ltx2_dit_text_cache *c) {
    ltx2_dit_text_cache_stats s;
    ltx2_dit_text_cache_get_stats(c, &s);
    return s;
}

static void check_version(const char *version) {
    ltx2_dit_weights *w;
    ltx2_st_file *g;
    dit_inputs in;
    if (!dit_golden_open(g_ctx, version, DIT_INPUTS_MASKED, &w, &g, &in)) return;
    const bool v23 = w->cfg.cross_attention_adaln;
    const int64_t B = in.B, S = in.S, Wv = in.video.W, Wa = in.audio.W;
    const int64_t L = w->cfg.num_layers;
    ltx2_dit_forward_params p = in.p;
    dit_outs ref = {0}, got = {0}, ref2 = {0};
    if (!dit_outs_alloc(&in, &w->cfg, &ref) || !dit_outs_alloc(&in, &w->cfg, &got) ||
        !dit_outs_alloc(&in, &w->cfg, &ref2)) {
        dit_outs_free(&ref), dit_outs_free(&got), dit_outs_free(&ref2);
        dit_golden_close(w, g, &in);
        return;
    }

    ltx2_dit_text_cache *c = NULL;
    CHECK(ltx2_dit_text_cache_create(g_ctx, 8, &c) == LTX2_OK, "create: %s", ltx2_last_error(g_ctx));
    fwd(w, &p, NULL, &ref);
    /* three steps' worth of forwards: filled once (2 samples x 2 streams x L blocks), then reused */
    for (int it = 0; it < 3; it++) {
        fwd(w, &p, c, &got);
        CHECK(dit_outs_equal(&ref, &got, B), "%s: cached forward %d differs from uncached", version, it);
    }
    ltx2_dit_text_cache_stats s = stats(c);
    CHECK(s.projections == 4 * L && s.hits == 8 * L && s.entries == 4,
          "%s: projections %lld (want %lld) hits %lld (want %lld) entries %lld", version, (long long)s.projections,
          (long long)(4 * L), (long long)s.hits, (long long)(8 * L), (long long)s.entries);
    /* the first forward made both contexts; the two after it found every block cached and made none */
    CHECK(s.contexts_skipped == 4, "%s: %lld contexts skipped, want 4", version, (long long)s.contexts_skipped);

    /* a new sigma: 2.0 reuses the K/V, 2.3 must project again (prompt AdaLN depends on sigma) */
    float sv[2] = {0.31f, 0.31f}, sa[2] = {0.62f, 0.62f};
    p.video.sigma = sv;
    p.audio.sigma = sa;
    fwd(w, &p, NULL, &ref2);
    fwd(w, &p, c, &got);
    CHECK(dit_outs_equal(&ref2, &got, B), "%s: cached forward at a new sigma differs", version);
    s = stats(c);
    CHECK(s.projections == (v23 ? 8 : 4) * L, "%s: after a sigma change projections %lld, want %lld", version,
          (long long)s.projections, (long long)((v23 ? 8 : 4) * L));

    /* both samples with sample 0's context (and equal sigma): one entry per stream serves both */
    float *vc2 = malloc((size_t)(B * S * Wv) * sizeof(float));
    float *ac2 = malloc((size_t)(B * S * Wa) * sizeof(float));
    uint8_t *mask2 = malloc((size_t)(B * S));
    for (int64_t b = 0; b < B; b++) {
        memcpy(vc2 + b * S * Wv, in.video.context, (size_t)(S * Wv) * sizeof(float));
        memcpy(ac2 + b * S * Wa, in.audio.context, (size_t)(S * Wa) * sizeof(float));
        memcpy(mask2 + b * S, in.mask, (size_t)S);
    }
    p.video.context = vc2;
    p.audio.context = ac2;
    p.video.context_mask = p.audio.context_mask = mask2;
    ltx2_dit_text_cache_invalidate(c);
    CHECK(stats(c).entries == 0, "%s: invalidate left entries", version);
    const int64_t before = stats(c).projections;
    fwd(w, &p, NULL, &ref2);
    fwd(w, &p, c, &got);
    CHECK(dit_outs_equal(&ref2, &got, B), "%s: shared-entry forward differs", version);
    s = stats(c);
    CHECK(s.projections - before == 2 * L && s.entries == 2, "%s: shared entry: %lld projections (want %lld), %lld entries",
          version, (long long)(s.projections - before), (long long)(2 * L), (long long)s.entries);
    ltx2_dit_text_cache_free(c);

    /* one slot for a batch needing four: the first key is cached, the rest computed directly */
    p.video = in.p.video; /* the golden contexts, mask and sigmas again */
    p.audio = in.p.audio;
    CHECK(ltx2_dit_text_cache_create(g_ctx, 1, &c) == LTX2_OK, "create 1");
    for (int it = 0; it < 2; it++) {
        fwd(w, &p, c, &got);
        CHECK(dit_outs_equal(&ref, &got, B), "%s: undersized cache forward %d differs", version, it);
    }
    s = stats(c);
    CHECK(s.projections == L && s.hits == L && s.entries == 1, "%s: undersized: %lld projections %lld hits", version,
          (long long)s.projections, (long long)s.hits);
    ltx2_dit_text_cache_free(c);
    CHECK(ltx2_dit_text_cache_create(g_ctx, 0, &c) == LTX2_ERR_INVALID_ARG, "zero entries must be refused");

    free(vc2), free(ac2), free(mask2);
    dit_outs_free(&ref), dit_outs_free(&got), dit_outs_free(&ref2);
    dit_golden_close(w, g, &in);
}

int main(void) { return dit_test_both_versions(&g_ctx, check_version); }
