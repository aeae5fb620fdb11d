/* The DiT's RoPE table cache (ltx2_dit_rope_cache): forwards with it are bitwise the forwards
 * without it, and the counters show each stream's tables computed once per distinct positions:
 * repeated calls hit; one sample, and two samples with sample 0's positions (the cached sample
 * copied to each), hit the same entry; new positions rebuild it; samples with positions of their own
 * and a forward with a dump compute their tables as before and leave the cache alone. Inputs: the
 * golden inputs of tests/golden/gen_dit_goldens.py, both versions, on the CPU backend. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/context.h"
#include "dit_inputs.h"
#include "test_util.h"

/* Each position axis holds [start, end). */
#define POS_BOUNDS 2

static ltx2_context *g_ctx;

static void fwd(const ltx2_dit_weights *w, ltx2_dit_forward_params *p, ltx2_dit_rope_cache *c, dit_outs *o) {
    p->rope_cache = c;
    const ltx2_status st = ltx2_dit_forward(g_ctx, w, p, o->v, o->a);
    CHECK(st == LTX2_OK, "forward: %s", ltx2_last_error(g_ctx));
}

static ltx2_dit_rope_cache_stats stats(const ltx2_dit_rope_cache *c) {
    ltx2_dit_rope_cache_stats s;
    ltx2_dit_rope_cache_get_stats(c, &s);
    return s;
}

/* The forward uncached into ref, then cached into got: equal, and the counters moved by (builds, hits). */
static void expect(const char *what, const ltx2_dit_weights *w, ltx2_dit_forward_params *p, ltx2_dit_rope_cache *c,
                   dit_outs *ref, dit_outs *got, int64_t builds, int64_t hits) {
    const ltx2_dit_rope_cache_stats s0 = stats(c);
    fwd(w, p, NULL, ref);
    fwd(w, p, c, got);
    const ltx2_dit_rope_cache_stats s1 = stats(c);
    CHECK(dit_outs_equal(ref, got, p->batch), "%s: the cached forward differs from the uncached one", what);
    CHECK(s1.builds - s0.builds == builds && s1.hits - s0.hits == hits, "%s: %lld builds, %lld hits (want %lld, %lld)",
          what, (long long)(s1.builds - s0.builds), (long long)(s1.hits - s0.hits), (long long)builds, (long long)hits);
}

static void dump_nothing(const char *name, const ltx2_tensor *t, void *user) { (void)name, (void)t, (void)user; }

/* n samples' positions of one stream, each sample 0's, the time axis moved by shift. */
static float *positions_of_sample0(const float *pos, int64_t n, int axes, int64_t T, float shift) {
    const int64_t per = axes * T * POS_BOUNDS;
    float *out = malloc((size_t)(n * per) * sizeof(float));
    if (!out) return NULL;
    for (int64_t b = 0; b < n; b++) {
        memcpy(out + b * per, pos, (size_t)per * sizeof(float));
        for (int64_t i = 0; i < T * POS_BOUNDS; i++) out[b * per + i] += shift;
    }
    return out;
}

static void check_version(const char *version) {
    ltx2_dit_weights *w;
    ltx2_st_file *g;
    dit_inputs in;
    if (!dit_golden_open(g_ctx, version, DIT_INPUTS_MASKED, &w, &g, &in)) return;
    const int64_t B = in.B, Tv = in.video.T, Ta = in.audio.T;
    CHECK(B == 2, "%s: the golden inputs hold %lld samples, this test wants 2", version, (long long)B);
    dit_outs ref = {0}, got = {0};
    const bool outs_ok = dit_outs_alloc(&in, &w->cfg, &ref) && dit_outs_alloc(&in, &w->cfg, &got);
    float *vpos = positions_of_sample0(in.p.video.positions, B, DIT_INPUTS_VIDEO_AXES, Tv, 0.0f);
    float *apos = positions_of_sample0(in.p.audio.positions, B, DIT_INPUTS_AUDIO_AXES, Ta, 0.0f);
    float *vpos2 = positions_of_sample0(in.p.video.positions, B, DIT_INPUTS_VIDEO_AXES, Tv, 1.0f);
    float *apos2 = positions_of_sample0(in.p.audio.positions, B, DIT_INPUTS_AUDIO_AXES, Ta, 1.0f);
    float *vmix = positions_of_sample0(in.p.video.positions, B, DIT_INPUTS_VIDEO_AXES, Tv, 0.0f);
    float *amix = positions_of_sample0(in.p.audio.positions, B, DIT_INPUTS_AUDIO_AXES, Ta, 0.0f);
    ltx2_dit_rope_cache *c = NULL;
    CHECK(ltx2_dit_rope_cache_create(g_ctx, &c) == LTX2_OK, "create: %s", ltx2_last_error(g_ctx));
    if (c && outs_ok && vpos && apos && vpos2 && apos2 && vmix && amix) {
        ltx2_dit_forward_params p = in.p;
        char what[96];
        p.video.positions = vpos;
        p.audio.positions = apos;
        snprintf(what, sizeof what, "%s first call", version);
        expect(what, w, &p, c, &ref, &got, 2, 0); /* each stream's tables built once */
        snprintf(what, sizeof what, "%s later calls", version);
        for (int it = 0; it < 2; it++) expect(what, w, &p, c, &ref, &got, 0, 2);
        p.batch = 1; /* sample 0 alone: the entry itself */
        snprintf(what, sizeof what, "%s one sample", version);
        expect(what, w, &p, c, &ref, &got, 0, 2);
        p.batch = B;
        p.video.positions = vpos2; /* moved positions: a new key per stream */
        p.audio.positions = apos2;
        snprintf(what, sizeof what, "%s new positions", version);
        expect(what, w, &p, c, &ref, &got, 2, 0);
        /* each sample its own positions (sample 0's, then the moved ones): computed each, cache untouched */
        const int64_t vper = DIT_INPUTS_VIDEO_AXES * Tv * POS_BOUNDS, aper = DIT_INPUTS_AUDIO_AXES * Ta * POS_BOUNDS;
        memcpy(vmix, vpos, (size_t)vper * sizeof(float));
        memcpy(vmix + vper, vpos2, (size_t)vper * sizeof(float));
        memcpy(amix, apos, (size_t)aper * sizeof(float));
        memcpy(amix + aper, apos2, (size_t)aper * sizeof(float));
        p.video.positions = vmix;
        p.audio.positions = amix;
        snprintf(what, sizeof what, "%s samples with their own positions", version);
        expect(what, w, &p, c, &ref, &got, 0, 0);
        p.video.positions = vpos2; /* the cached positions again, with a dump: computed, untouched */
        p.audio.positions = apos2;
        p.dump = dump_nothing;
        snprintf(what, sizeof what, "%s with a dump", version);
        expect(what, w, &p, c, &ref, &got, 0, 0);
        p.dump = NULL;
        snprintf(what, sizeof what, "%s the moved positions again", version);
        expect(what, w, &p, c, &ref, &got, 0, 2);
    }
    ltx2_dit_rope_cache_free(c);
    free(vpos), free(apos), free(vpos2), free(apos2), free(vmix), free(amix);
    dit_outs_free(&ref), dit_outs_free(&got);
    dit_golden_close(w, g, &in);
}

int main(void) { return dit_test_both_versions(&g_ctx, check_version); }
