/* The DiT forward against ltx-core 1.0.0, step by step: the tiny LTX-2.0 / LTX-2.3 checkpoints are
 * loaded through the user-facing loader, the forward runs on the recorded inputs, and every
 * intermediate the dump hook emits is compared with tests/golden/data/dit_blocks_<v>.safetensors
 * (tests/golden/gen_dit_goldens.py); the whole-forward golden dit_tiny_<v> (gen_tiny_ltx2.py) too.
 * STG / modality-isolation perturbations against dit_stg_<v>.safetensors (gen_stg_goldens.py).
 * Also: broken checkpoints (missing key, wrong shape, missing rope_type) give errors naming the key. */
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
#include "model/dit.h"
#include "model/dit_config.h"
#include "model/dit_weights.h"
#include "core/timer.h"
#include "test_util.h"
#include "ckpt_edit.h"

/* fp32 vs fp32 with the same weights: only summation order and libm rounding differ. Measured
 * worst ~3e-6 (the timestep sinusoid at t = 1000 inherits torch's 1-ulp exp differences). */
#define DIT_REL_L2_TOL 1e-5

static ltx2_context *g_ctx;

typedef struct golden {
    ltx2_st_file *f;
    char seen[512];   /* seen[i]: golden tensor i was compared */
    int n_compared;
    double worst;
    char worst_name[160];
} golden;

/* A golden tensor copied to an aligned f32 buffer (mapped data may be unaligned). */
static float *load_f32(const ltx2_st_file *f, const char *name, int64_t *numel) { return ltx2_st_read_f32(g_ctx, f, name, numel); }

static void compare(golden *g, const char *name, const float *data, int64_t n) {
    const ltx2_st_tensor *t = ltx2_st_find(g->f, name);
    if (!t) return; /* not recorded by the generator */
    int64_t gn = 0;
    float *ref = load_f32(g->f, name, &gn);
    CHECK(ref != NULL, "%s: cannot read golden", name);
    if (!ref) return;
    CHECK(gn == n, "%s: golden has %lld elements, ours %lld", name, (long long)gn, (long long)n);
    if (gn == n) {
        ltx2_tensor a = ltx2_tensor_make(ref, LTX2_F32, 1, &gn), b = ltx2_tensor_make((void *)data, LTX2_F32, 1, &n);
        ltx2_diff_stats st;
        ltx2_diff(&a, &b, 0.0, 0.0, &st);
        CHECK(st.rel_l2 <= DIT_REL_L2_TOL, "%s: rel-L2 %.3g > %.1g (max abs %.3g, cosine %.9f)", name, st.rel_l2,
              DIT_REL_L2_TOL, st.max_abs, st.cosine);
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

typedef struct inputs {
    float *v_lat, *v_pos, *v_ts, *v_sig, *v_ctx, *a_lat, *a_pos, *a_ts, *a_sig, *a_ctx, *mask_f;
    uint8_t *mask;
} inputs;

static void inputs_free(inputs *in) {
    free(in->v_lat), free(in->v_pos), free(in->v_ts), free(in->v_sig), free(in->v_ctx);
    free(in->a_lat), free(in->a_pos), free(in->a_ts), free(in->a_sig), free(in->a_ctx);
    free(in->mask_f), free(in->mask);
}

/* Fills params from a golden file using the given tensor names (prefix "input." or ""). */
static bool load_inputs(const ltx2_st_file *f, const char *pfx, const char *mask_name, inputs *in,
                        ltx2_dit_forward_params *p) {
    char n[96];
#define LOAD(dst, what)                                   \
    do {                                                  \
        snprintf(n, sizeof n, "%s%s", pfx, what);         \
        dst = load_f32(f, n, NULL);                       \
        CHECK(dst != NULL, "input %s missing", n);        \
        if (!dst) return false;                           \
    } while (0)
    LOAD(in->v_lat, "video.latent");
    LOAD(in->v_pos, "video.positions");
    LOAD(in->v_ts, "video.timesteps");
    LOAD(in->v_sig, "video.sigma");
    LOAD(in->v_ctx, "video.context");
    LOAD(in->a_lat, "audio.latent");
    LOAD(in->a_pos, "audio.positions");
    LOAD(in->a_ts, "audio.timesteps");
    LOAD(in->a_sig, "audio.sigma");
    LOAD(in->a_ctx, "audio.context");
#undef LOAD
    int64_t nm = 0;
    in->mask_f = load_f32(f, mask_name, &nm);
    CHECK(in->mask_f != NULL, "input %s missing", mask_name);
    if (!in->mask_f) return false;
    in->mask = malloc((size_t)nm);
    for (int64_t i = 0; i < nm; i++) in->mask[i] = in->mask_f[i] != 0.0f;
    snprintf(n, sizeof n, "%svideo.latent", pfx);
    const ltx2_st_tensor *vl = ltx2_st_find(f, n);
    snprintf(n, sizeof n, "%saudio.latent", pfx);
    const ltx2_st_tensor *al = ltx2_st_find(f, n);
    snprintf(n, sizeof n, "%svideo.context", pfx);
    const ltx2_st_tensor *vc = ltx2_st_find(f, n);
    ltx2_dit_forward_params_init(p);
    p->batch = vl->shape[0];
    p->video = (ltx2_dit_modality){in->v_lat, in->v_pos, in->v_ts, in->v_sig, in->v_ctx, in->mask, vl->shape[1],
                                   vc->shape[1]};
    p->audio = (ltx2_dit_modality){in->a_lat, in->a_pos, in->a_ts, in->a_sig, in->a_ctx, in->mask, al->shape[1],
                                   vc->shape[1]};
    return true;
}

/* Dump names prefixed with the perturbation run's name ("mixed." / "all."). */
typedef struct prefixed {
    golden *g;
    const char *run;
} prefixed;

static void dump_prefixed(const char *name, const ltx2_tensor *t, void *user) {
    prefixed *p = user;
    char nm[192];
    snprintf(nm, sizeof nm, "%s.%s", p->run, name);
    compare(p->g, nm, (const float *)t->data, ltx2_tensor_numel(t));
}

/* The perturbation runs of gen_stg_goldens.py: per-sample (sample, block) flags. */
static void set_run(const char *run, int64_t L, uint32_t *m) {
    const int64_t b0[1] = {0}, b1[1] = {1};
    memset(m, 0, (size_t)(2 * L) * sizeof *m);
    if (strcmp(run, "mixed") == 0) {
        ltx2_dit_perturb_set(g_ctx, m, L, 0, LTX2_DIT_SKIP_VIDEO_SELF_ATTN | LTX2_DIT_SKIP_AUDIO_SELF_ATTN, b1, 1);
        ltx2_dit_perturb_set(g_ctx, m, L, 1, LTX2_DIT_SKIP_A2V_CROSS_ATTN | LTX2_DIT_SKIP_V2A_CROSS_ATTN, NULL, 0);
    } else {
        for (int64_t b = 0; b < 2; b++) {
            ltx2_dit_perturb_set(g_ctx, m, L, b, LTX2_DIT_SKIP_VIDEO_SELF_ATTN | LTX2_DIT_SKIP_AUDIO_SELF_ATTN, b0, 1);
            ltx2_dit_perturb_set(g_ctx, m, L, b, LTX2_DIT_SKIP_A2V_CROSS_ATTN, b1, 1);
        }
    }
}

static void run_stg(const char *version, const ltx2_dit_weights *w) {
    char spath[1024];
    snprintf(spath, sizeof spath, "%s/tests/golden/data/dit_stg_%s.safetensors", LTX2_SOURCE_DIR, version);
    golden g;
    memset(&g, 0, sizeof g);
    ltx2_status st = ltx2_st_open(g_ctx, spath, &g.f);
    CHECK(st == LTX2_OK, "%s: %s", spath, ltx2_last_error(g_ctx));
    if (st != LTX2_OK) return;
    inputs in;
    memset(&in, 0, sizeof in);
    ltx2_dit_forward_params p;
    if (load_inputs(g.f, "input.", "input.context_mask", &in, &p) && p.batch == 2) {
        const int64_t L = w->cfg.num_layers, nv = p.batch * p.video.T * w->cfg.out_channels,
                      na = p.batch * p.audio.T * w->cfg.audio_out_channels;
        uint32_t *mask = calloc((size_t)(2 * L), sizeof *mask);
        float *vo = calloc((size_t)nv, sizeof(float)), *ao = calloc((size_t)na, sizeof(float));
        float *v0 = calloc((size_t)nv, sizeof(float)), *a0 = calloc((size_t)na, sizeof(float));
        st = ltx2_dit_forward(g_ctx, w, &p, v0, a0); /* unperturbed, to see that each run changes something */
        CHECK(st == LTX2_OK, "%s: forward: %s", version, ltx2_last_error(g_ctx));
        const char *runs[2] = {"mixed", "all"};
        for (int k = 0; k < 2; k++) {
            set_run(runs[k], L, mask);
            p.perturb = mask;
            prefixed pf = {&g, runs[k]};
            p.dump = dump_prefixed;
            p.dump_user = &pf;
            int before = g.n_compared;
            st = ltx2_dit_forward(g_ctx, w, &p, vo, ao);
            CHECK(st == LTX2_OK, "%s %s: forward: %s", version, runs[k], ltx2_last_error(g_ctx));
            char nm[64];
            snprintf(nm, sizeof nm, "%s.output.video", runs[k]);
            compare(&g, nm, vo, nv);
            snprintf(nm, sizeof nm, "%s.output.audio", runs[k]);
            compare(&g, nm, ao, na);
            CHECK(g.n_compared - before == (int)(2 * L + 2), "%s %s: %d tensors compared, expected %lld", version,
                  runs[k], g.n_compared - before, (long long)(2 * L + 2));
            /* per sample: every sample of both runs is perturbed, so its output must move */
            for (int64_t b = 0; b < 2; b++) {
                double dv = 0, ref = 0;
                for (int64_t i = b * nv / 2; i < (b + 1) * nv / 2; i++)
                    dv += (double)(vo[i] - v0[i]) * (vo[i] - v0[i]), ref += (double)v0[i] * v0[i];
                CHECK(dv > 1e-6 * ref, "%s %s: sample %lld video output unchanged by the perturbation", version,
                      runs[k], (long long)b);
            }
        }
        printf("%s: STG/isolation %d tensors compared, worst rel-L2 %.3g (%s)\n", version, g.n_compared, g.worst,
               g.worst_name);
        int64_t bad_block[1] = {L};
        CHECK(ltx2_dit_perturb_set(g_ctx, mask, L, 0, LTX2_DIT_SKIP_VIDEO_SELF_ATTN, bad_block, 1) ==
                      LTX2_ERR_INVALID_ARG &&
                  strstr(ltx2_last_error(g_ctx), "out of range"),
              "out-of-range perturbation block: %s", ltx2_last_error(g_ctx));
        free(mask), free(vo), free(ao), free(v0), free(a0);
    }
    inputs_free(&in);
    ltx2_st_close(g.f);
}

static void run_version(const char *version) {
    char path[1024], gpath[1024], tpath[1024];
    snprintf(path, sizeof path, "%s/weights/tiny/ltx2-tiny-%s.safetensors", LTX2_SOURCE_DIR, version);
    snprintf(gpath, sizeof gpath, "%s/tests/golden/data/dit_blocks_%s.safetensors", LTX2_SOURCE_DIR, version);
    snprintf(tpath, sizeof tpath, "%s/tests/golden/data/dit_tiny_%s.safetensors", LTX2_SOURCE_DIR, version);
    ltx2_dit_weights *w = NULL;
    ltx2_status st = ltx2_dit_weights_load_file(g_ctx, path, &w);
    CHECK(st == LTX2_OK, "%s: load: %s", version, ltx2_last_error(g_ctx));
    if (st != LTX2_OK) return;
    CHECK(w->cfg.cross_attention_adaln == (strcmp(version, "2.3") == 0), "%s: cross_attention_adaln flag", version);
    CHECK(w->cfg.apply_gated_attention == (strcmp(version, "2.3") == 0), "%s: gated attention flag", version);
    CHECK(w->cfg.rope_type == LTX2_ROPE_SPLIT && w->cfg.rope_double_precision, "%s: rope config", version);

    /* step by step */
    golden g;
    memset(&g, 0, sizeof g);
    st = ltx2_st_open(g_ctx, gpath, &g.f);
    CHECK(st == LTX2_OK, "%s: %s", gpath, ltx2_last_error(g_ctx));
    if (st == LTX2_OK) {
        inputs in;
        memset(&in, 0, sizeof in);
        ltx2_dit_forward_params p;
        if (load_inputs(g.f, "input.", "input.context_mask", &in, &p)) {
            p.dump = dump_cb;
            p.dump_user = &g;
            float *vo = calloc((size_t)(p.batch * p.video.T * w->cfg.out_channels), sizeof(float));
            float *ao = calloc((size_t)(p.batch * p.audio.T * w->cfg.audio_out_channels), sizeof(float));
            st = ltx2_dit_forward(g_ctx, w, &p, vo, ao);
            CHECK(st == LTX2_OK, "%s: forward: %s", version, ltx2_last_error(g_ctx));
            if (st == LTX2_OK) {
                compare(&g, "output.video", vo, p.batch * p.video.T * w->cfg.out_channels);
                compare(&g, "output.audio", ao, p.batch * p.audio.T * w->cfg.audio_out_channels);
            }
            int missing = 0;
            for (size_t i = 0; i < g.f->n_tensors && i < sizeof g.seen; i++) {
                const char *nm = g.f->tensors[i].name;
                if (strncmp(nm, "input.", 6) == 0 || g.seen[i]) continue;
                if (missing++ < 5) fprintf(stderr, "  %s: golden %s was never produced\n", version, nm);
            }
            CHECK(missing == 0, "%s: %d golden intermediates not produced by the forward", version, missing);
            printf("%s: %d intermediates compared, worst rel-L2 %.3g (%s)\n", version, g.n_compared, g.worst,
                   g.worst_name);
            free(vo);
            free(ao);
        }
        inputs_free(&in);
        ltx2_st_close(g.f);
    }

    /* the whole-forward golden from the checkpoint generator (other inputs, one left-padded prompt) */
    golden t;
    memset(&t, 0, sizeof t);
    st = ltx2_st_open(g_ctx, tpath, &t.f);
    CHECK(st == LTX2_OK, "%s: %s", tpath, ltx2_last_error(g_ctx));
    if (st == LTX2_OK) {
        inputs in;
        memset(&in, 0, sizeof in);
        ltx2_dit_forward_params p;
        if (load_inputs(t.f, "", "context_mask", &in, &p)) {
            float *vo = calloc((size_t)(p.batch * p.video.T * w->cfg.out_channels), sizeof(float));
            float *ao = calloc((size_t)(p.batch * p.audio.T * w->cfg.audio_out_channels), sizeof(float));
            st = ltx2_dit_forward(g_ctx, w, &p, vo, ao);
            CHECK(st == LTX2_OK, "%s: forward: %s", version, ltx2_last_error(g_ctx));
            if (st == LTX2_OK) {
                compare(&t, "video.velocity", vo, p.batch * p.video.T * w->cfg.out_channels);
                compare(&t, "audio.velocity", ao, p.batch * p.audio.T * w->cfg.audio_out_channels);
                CHECK(t.n_compared == 2, "%s: whole-forward golden not compared", version);
            }
            free(vo);
            free(ao);
        }
        inputs_free(&in);
        ltx2_st_close(t.f);
    }
    run_stg(version, w);
    ltx2_dit_weights_free(w);
}

/* Rewrites the tiny 2.0 checkpoint into dir/name with one tensor dropped or reshaped, or the
 * config edited, and returns the loader's status and message. */
static ltx2_status load_broken(const char *dir, const char *name, const char *drop, const char *reshape,
                               const char *cfg_from, const char *cfg_to) {
    char src[1024], dst[1024];
    snprintf(src, sizeof src, "%s/weights/tiny/ltx2-tiny-2.0.safetensors", LTX2_SOURCE_DIR);
    snprintf(dst, sizeof dst, "%s/%s", dir, name);
    if (!ckpt_write_broken(src, dst, drop, reshape, cfg_from, cfg_to)) return LTX2_ERR_INTERNAL;
    ltx2_dit_weights *w = NULL;
    ltx2_clear_error(g_ctx);
    ltx2_status st = ltx2_dit_weights_load_file(g_ctx, dst, &w);
    CHECK(w == NULL || st == LTX2_OK, "weights returned on failure");
    ltx2_dit_weights_free(w);
    unlink(dst);
    return st;
}

static void bad_inputs(void) {
    char dir[] = "/tmp/ltx2_dit_XXXXXX";
    if (!mkdtemp(dir)) {
        CHECK(0, "mkdtemp failed");
        return;
    }
    const char *key = "model.diffusion_model.transformer_blocks.1.attn2.to_k.weight";
    ltx2_status st = load_broken(dir, "missing.safetensors", key, NULL, NULL, NULL);
    CHECK(st == LTX2_ERR_NOT_FOUND, "missing key: status %s", ltx2_status_name(st));
    CHECK(strstr(ltx2_last_error(g_ctx), key) != NULL, "missing key not named: %s", ltx2_last_error(g_ctx));

    key = "model.diffusion_model.transformer_blocks.0.ff.net.0.proj.weight";
    st = load_broken(dir, "shape.safetensors", NULL, key, NULL, NULL);
    CHECK(st == LTX2_ERR_SHAPE, "wrong shape: status %s", ltx2_status_name(st));
    CHECK(strstr(ltx2_last_error(g_ctx), key) != NULL && strstr(ltx2_last_error(g_ctx), "expected [256, 64]"),
          "wrong shape not named: %s", ltx2_last_error(g_ctx));

    st = load_broken(dir, "rope.safetensors", NULL, NULL, "\"rope_type\"", "\"rope_typo\"");
    CHECK(st == LTX2_ERR_NOT_FOUND, "missing rope_type: status %s", ltx2_status_name(st));
    CHECK(strstr(ltx2_last_error(g_ctx), "rope_type") != NULL, "rope_type not named: %s", ltx2_last_error(g_ctx));

    /* a 2.3-only key in a 2.0 file is reported as unexpected */
    st = load_broken(dir, "flag.safetensors", NULL, NULL, "\"rope_type\"",
                     "\"apply_gated_attention\": true, \"rope_type\"");
    CHECK(st == LTX2_ERR_NOT_FOUND && strstr(ltx2_last_error(g_ctx), "to_gate_logits"),
          "gated flag without gate weights: %s", ltx2_last_error(g_ctx));

    /* sizes past the bounds are refused from the config alone, before anything is allocated (#16) */
    const double t0 = ltx2_timer_now();
    st = load_broken(dir, "layers.safetensors", NULL, NULL, "\"num_layers\": 2", "\"num_layers\": 1000000");
    CHECK(st == LTX2_ERR_FORMAT && strstr(ltx2_last_error(g_ctx), "\"num_layers\" must be an integer in [1, 1024]") &&
              ltx2_timer_now() - t0 < 5.0,
          "num_layers 1000000: status %s: %s", ltx2_status_name(st), ltx2_last_error(g_ctx));
    rmdir(dir);
}

int main(void) {
    g_ctx = ltx2_context_create(NULL);
    if (!g_ctx) return 1;
    run_version("2.0");
    run_version("2.3");
    bad_inputs();
    ltx2_context_free(g_ctx);
    return test_finish();
}
