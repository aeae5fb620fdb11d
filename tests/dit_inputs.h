/* The golden DiT inputs ("input.video.*", "input.audio.*", "input.context_mask") that
 * tests/golden/gen_dit_goldens.py and gen_dit_diffusers_golden.py store next to their outputs,
 * read once for every DiT test: converted to f32, shapes checked against each other, the mask
 * made 0/1, and a ready ltx2_dit_forward_params over them. The caller opens the golden file
 * (it reads other tensors from it) and keeps it open only for the load. */
#ifndef LTX2_TEST_DIT_INPUTS_H
#define LTX2_TEST_DIT_INPUTS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/safetensors.h"
#include "model/dit.h"
#include "model/dit_weights.h"
#include "test_util.h"

/* Axes of a stream's positions [B, axes, T, 2]: video (frame, row, column), audio (time). */
#define DIT_INPUTS_VIDEO_AXES 3
#define DIT_INPUTS_AUDIO_AXES 1

typedef enum dit_inputs_mask {
    DIT_INPUTS_UNMASKED, /* every context token attends (the mask tensor is not read) */
    DIT_INPUTS_MASKED    /* "input.context_mask" for both streams */
} dit_inputs_mask;

typedef struct dit_inputs_stream {
    float *latent;    /* [B, T, C] */
    float *positions; /* [B, axes, T, 2] */
    float *timesteps; /* [B, T] */
    float *sigma;     /* [B] */
    float *context;   /* [B, S, W] */
    int64_t T, C, W;
} dit_inputs_stream;

typedef struct dit_inputs {
    dit_inputs_stream video, audio;
    uint8_t *mask; /* [B, S], 1 = attend; NULL when loaded unmasked */
    int64_t B, S;
    ltx2_dit_forward_params p; /* batch, video and audio set; everything else at its default */
} dit_inputs;

static inline void dit_inputs_free(dit_inputs *in) {
    dit_inputs_stream *s[2] = {&in->video, &in->audio};
    for (int k = 0; k < 2; k++)
        free(s[k]->latent), free(s[k]->positions), free(s[k]->timesteps), free(s[k]->sigma), free(s[k]->context);
    free(in->mask);
    memset(in, 0, sizeof *in);
}

/* The tensor "<prefix><what>" if it is ndim-D, else NULL after a failed CHECK naming the file and
 * the tensor. The dims that fix every other shape are read from these. */
static inline const ltx2_st_tensor *dit_inputs_find(const ltx2_st_file *f, const char *prefix, const char *what,
                                                    int ndim) {
    char name[64];
    snprintf(name, sizeof name, "%s%s", prefix, what);
    const ltx2_st_tensor *t = ltx2_st_find(f, name);
    if (t && t->ndim == ndim) return t;
    if (!t) CHECK(false, "%s: golden input %s is missing", f->path, name);
    else CHECK(false, "%s: golden input %s is %d-D, expected %d-D", f->path, name, t->ndim, ndim);
    return NULL;
}

/* "<prefix><what>" as f32 if its shape is exactly want[0..ndim), else NULL after a failed CHECK
 * naming the file and the tensor (expected vs got). */
static inline float *dit_inputs_read(ltx2_context *ctx, const ltx2_st_file *f, const char *prefix, const char *what,
                                     int ndim, const int64_t *want) {
    char name[64];
    snprintf(name, sizeof name, "%s%s", prefix, what);
    const ltx2_st_tensor *t = dit_inputs_find(f, prefix, what, ndim);
    if (!t) return NULL;
    for (int i = 0; i < ndim; i++) {
        if (t->shape[i] != want[i]) {
            CHECK(false, "%s: golden input %s: dim %d is %lld, expected %lld to match the other inputs", f->path,
                  name, i, (long long)t->shape[i], (long long)want[i]);
            return NULL;
        }
    }
    float *x = ltx2_st_read_f32(ctx, f, name, NULL);
    if (!x) CHECK(false, "%s: golden input %s: %s", f->path, name, ltx2_last_error(ctx));
    return x;
}

/* The five tensors of one stream, whose T, C and W are set; B and S are the video's. */
static inline bool dit_inputs_read_stream(ltx2_context *ctx, const ltx2_st_file *f, const char *prefix, int64_t B,
                                          int64_t S, int64_t axes, dit_inputs_stream *s) {
    const int64_t lat_shape[3] = {B, s->T, s->C}, pos_shape[4] = {B, axes, s->T, 2}, ts_shape[2] = {B, s->T};
    const int64_t ctx_shape[3] = {B, S, s->W};
    s->latent = dit_inputs_read(ctx, f, prefix, "latent", 3, lat_shape);
    s->positions = dit_inputs_read(ctx, f, prefix, "positions", 4, pos_shape);
    s->timesteps = dit_inputs_read(ctx, f, prefix, "timesteps", 2, ts_shape);
    s->sigma = dit_inputs_read(ctx, f, prefix, "sigma", 1, &B);
    s->context = dit_inputs_read(ctx, f, prefix, "context", 3, ctx_shape);
    return s->latent && s->positions && s->timesteps && s->sigma && s->context;
}

/* Loads every input of golden file f into *in (zeroed first). False after a failed CHECK naming
 * the file and the tensor; *in then holds nothing (dit_inputs_free is still safe). Records no
 * passing CHECK, so a test's pass count is its own. */
static inline bool dit_inputs_load(ltx2_context *ctx, const ltx2_st_file *f, dit_inputs_mask masked, dit_inputs *in) {
    memset(in, 0, sizeof *in);
    /* B, T, C from the latents [B, T, C], S and W from the contexts [B, S, W]: the video's B and S
     * must then hold for every other input */
    const ltx2_st_tensor *vl = dit_inputs_find(f, "input.video.", "latent", 3);
    const ltx2_st_tensor *vc = dit_inputs_find(f, "input.video.", "context", 3);
    const ltx2_st_tensor *al = dit_inputs_find(f, "input.audio.", "latent", 3);
    const ltx2_st_tensor *ac = dit_inputs_find(f, "input.audio.", "context", 3);
    if (!vl || !vc || !al || !ac) return false;
    in->B = vl->shape[0], in->S = vc->shape[1];
    in->video.T = vl->shape[1], in->video.C = vl->shape[2], in->video.W = vc->shape[2];
    in->audio.T = al->shape[1], in->audio.C = al->shape[2], in->audio.W = ac->shape[2];
    bool ok = dit_inputs_read_stream(ctx, f, "input.video.", in->B, in->S, DIT_INPUTS_VIDEO_AXES, &in->video);
    ok = dit_inputs_read_stream(ctx, f, "input.audio.", in->B, in->S, DIT_INPUTS_AUDIO_AXES, &in->audio) && ok;
    if (ok && masked == DIT_INPUTS_MASKED) {
        const int64_t mask_shape[2] = {in->B, in->S};
        float *mf = dit_inputs_read(ctx, f, "input.", "context_mask", 2, mask_shape);
        in->mask = mf ? malloc((size_t)(in->B * in->S)) : NULL;
        for (int64_t i = 0; in->mask && i < in->B * in->S; i++) in->mask[i] = mf[i] != 0.0f;
        if (mf && !in->mask) CHECK(false, "%s: no memory for the context mask", f->path);
        ok = in->mask != NULL;
        free(mf);
    }
    if (!ok) {
        dit_inputs_free(in);
        return false;
    }
    ltx2_dit_forward_params_init(&in->p);
    in->p.batch = in->B;
    const dit_inputs_stream *v = &in->video, *a = &in->audio;
    const uint8_t *m = in->mask;
    in->p.video = (ltx2_dit_modality){v->latent, v->positions, v->timesteps, v->sigma, v->context, m, v->T, in->S};
    in->p.audio = (ltx2_dit_modality){a->latent, a->positions, a->timesteps, a->sigma, a->context, m, a->T, in->S};
    return true;
}

/* A forward's outputs for in's B samples, video [B, Tv, out] and audio [B, Ta, audio_out] (nv, na:
 * floats per sample). */
typedef struct dit_outs {
    float *v, *a;
    size_t nv, na;
} dit_outs;

/* False after a failed CHECK (out of memory); o is then safe to free. */
static inline bool dit_outs_alloc(const dit_inputs *in, const ltx2_dit_config *cfg, dit_outs *o) {
    o->nv = (size_t)(in->video.T * cfg->out_channels);
    o->na = (size_t)(in->audio.T * cfg->audio_out_channels);
    o->v = malloc(o->nv * (size_t)in->B * sizeof(float));
    o->a = malloc(o->na * (size_t)in->B * sizeof(float));
    CHECK(o->v && o->a, "no memory for a forward's outputs");
    return o->v && o->a;
}

static inline void dit_outs_free(dit_outs *o) {
    free(o->v);
    free(o->a);
    memset(o, 0, sizeof *o);
}

/* Whether the first B samples of x and y hold the same bits. */
static inline bool dit_outs_equal(const dit_outs *x, const dit_outs *y, int64_t B) {
    return memcmp(x->v, y->v, x->nv * (size_t)B * sizeof(float)) == 0 &&
           memcmp(x->a, y->a, x->na * (size_t)B * sizeof(float)) == 0;
}

/* The tiny checkpoint of `version` ("2.0", "2.3": weights/tiny) and the golden inputs stored with its
 * block goldens (tests/golden/data/dit_blocks_<version>.safetensors): true with *w, *g and *in
 * loaded (close with dit_golden_close); false after a failed CHECK, nothing left open. */
static inline bool dit_golden_open(ltx2_context *ctx, const char *version, dit_inputs_mask masked,
                                   ltx2_dit_weights **w, ltx2_st_file **g, dit_inputs *in) {
    char ck[1024], gp[1024];
    snprintf(ck, sizeof ck, "%s/weights/tiny/ltx2-tiny-%s.safetensors", LTX2_SOURCE_DIR, version);
    snprintf(gp, sizeof gp, "%s/tests/golden/data/dit_blocks_%s.safetensors", LTX2_SOURCE_DIR, version);
    *w = NULL;
    *g = NULL;
    memset(in, 0, sizeof *in);
    if (ltx2_dit_weights_load_file(ctx, ck, w) != LTX2_OK || ltx2_st_open(ctx, gp, g) != LTX2_OK) {
        CHECK(false, "%s: %s", version, ltx2_last_error(ctx));
    } else if (dit_inputs_load(ctx, *g, masked, in)) {
        return true;
    }
    ltx2_st_close(*g);
    ltx2_dit_weights_free(*w);
    *w = NULL;
    *g = NULL;
    return false;
}

static inline void dit_golden_close(ltx2_dit_weights *w, ltx2_st_file *g, dit_inputs *in) {
    dit_inputs_free(in);
    ltx2_st_close(g);
    ltx2_dit_weights_free(w);
}

/* main() of a test that runs check(version) for both LTX versions with its context in *ctx: the
 * context made first and freed after, the pass/fail line printed, its exit code returned. */
static inline int dit_test_both_versions(ltx2_context **ctx, void (*check)(const char *version)) {
    *ctx = ltx2_context_create(NULL);
    check("2.0");
    check("2.3");
    ltx2_context_free(*ctx);
    return test_finish();
}

#endif
