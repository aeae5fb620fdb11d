/* Checks of a pipeline run against a golden file of the reference's tensors (torch layouts,
 * channels first): the run's channels-last tensors (latents [.., C], frames [.., 3]), its --dump
 * files, and its audio latent. Shared by the tests of the pipelines with stages and conditionings. */
#ifndef LTX2_TESTS_PIPELINE_GOLDEN_H
#define LTX2_TESTS_PIPELINE_GOLDEN_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "golden_tensor.h"
#include "io/npy.h"
#include "ltx2/ltx2.h"
#include "test_util.h"

/* got: channels-last [positions, C], maybe followed by more (keyframe tokens the golden dropped);
 * the golden `name` holds C x positions values channels first. */
static inline void pg_check_cl(const ltx2_st_file *f, const char *what, const char *name, const float *got, int64_t C,
                               double tol) {
    const ltx2_st_tensor *gt = ltx2_st_find(f, name);
    int64_t n = gt ? 1 : 0;
    for (int i = 0; gt && i < gt->ndim; i++) n *= gt->shape[i];
    const int64_t positions = n / C;
    const float *ref = golden_tensor(f, name, n);
    CHECK(ref != NULL && got != NULL && n > 0, "%s: golden %s", what, name);
    if (!ref || !got || n <= 0) return;
    float *t = malloc((size_t)n * sizeof(float));
    for (int64_t c = 0; c < C; c++)
        for (int64_t i = 0; i < positions; i++) t[c * positions + i] = got[i * C + c];
    const double e = test_rel_l2(t, ref, n);
    CHECK(e <= tol, "%s: %s rel-L2 %.3g", what, name, e);
    printf("%s: %s rel-L2 %.3g\n", what, name, e);
    free(t);
}

/* The run's dump dir/file.npy (channels-last) against the golden `name`. */
static inline void pg_check_dump(ltx2_context *ctx, const ltx2_st_file *f, const char *what, const char *dir,
                                 const char *file, const char *name, int64_t C, double tol) {
    char path[1200];
    snprintf(path, sizeof path, "%s/%s.npy", dir, file);
    ltx2_array a;
    if (ltx2_npy_read(ctx, path, &a) != LTX2_OK) {
        CHECK(0, "%s: read %s: %s", what, path, ltx2_last_error(ctx));
        return;
    }
    pg_check_cl(f, what, name, a.t.data, C, tol);
    ltx2_array_free(&a);
}

/* The result's audio latent [1, z, T', F'] (the golden's layout already). */
static inline void pg_check_audio_latent(const ltx2_st_file *f, const char *what, const ltx2_generate_result *r,
                                         double tol) {
    const int64_t n = r->audio_latent_shape[1] * r->audio_latent_shape[2] * r->audio_latent_shape[3];
    const float *ref = golden_tensor(f, "audio_latent", n);
    CHECK(ref != NULL, "%s: golden audio_latent of %lld values", what, (long long)n);
    if (!ref) return;
    const double e = test_rel_l2(r->audio_latent, ref, n);
    CHECK(e <= tol, "%s: audio latent rel-L2 %.3g", what, e);
    printf("%s: audio_latent rel-L2 %.3g\n", what, e);
}

/* A generation that must be refused: status want and a message containing needle. */
typedef struct pg_refusal {
    const char *what, *needle;
    ltx2_status want;
} pg_refusal;

static inline void pg_expect_refusal(ltx2_context *ctx, const ltx2_generate_params *p, const pg_refusal *rf) {
    ltx2_generate_result r;
    const ltx2_status st = ltx2_generate(ctx, p, &r);
    const char *msg = ltx2_last_error(ctx);
    CHECK(st == rf->want && strstr(msg, rf->needle), "%s: status %d, message: %s", rf->what, (int)st, msg);
    ltx2_generate_result_free(&r);
}

#endif
