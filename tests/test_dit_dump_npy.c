/* `--dump DIR` naming: the DiT's dump hook names every intermediate by the reference module path
 * (ltx-core's named_modules + ".in/.out/.context", as a PyTorch forward-hook dump records it). The
 * test writes each dumped tensor to DIR/<name>.npy, then reads the directory back by the golden's
 * names (tests/golden/data/dit_blocks_2.3.safetensors, recorded with forward hooks) and compares
 * with ltx2_diff, so `ltx2 compare golden DIR` lines the two up name for name. */
#define _DEFAULT_SOURCE /* mkdtemp */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/context.h"
#include "core/dtype.h"
#include "core/metrics.h"
#include "io/npy.h"
#include "io/safetensors.h"
#include "model/dit.h"
#include "model/dit_weights.h"
#include "dit_inputs.h"
#include "test_util.h"

/* same bound as test_dit_golden.c (fp32 vs fp32, summation order only) */
#define DUMP_REL_L2_TOL 1e-5

static ltx2_context *g_ctx;

typedef struct dump_dir {
    const char *dir;
    int written, failed;
} dump_dir;

static void dump_npy(const char *name, const ltx2_tensor *t, void *user) {
    dump_dir *d = user;
    char path[1024];
    snprintf(path, sizeof path, "%s/%s.npy", d->dir, name);
    if (ltx2_npy_write(g_ctx, path, t) == LTX2_OK) d->written++;
    else d->failed++;
}

int main(void) {
    g_ctx = ltx2_context_create(NULL);
    char ck[1024], gp[1024], tmpl[] = "/tmp/ltx2_dit_dump_XXXXXX";
    snprintf(ck, sizeof ck, "%s/weights/tiny/ltx2-tiny-2.3.safetensors", LTX2_SOURCE_DIR);
    snprintf(gp, sizeof gp, "%s/tests/golden/data/dit_blocks_2.3.safetensors", LTX2_SOURCE_DIR);
    char *dir = mkdtemp(tmpl);
    ltx2_dit_weights *w = NULL;
    ltx2_st_file *g = NULL;
    if (!dir || ltx2_dit_weights_load_file(g_ctx, ck, &w) != LTX2_OK || ltx2_st_open(g_ctx, gp, &g) != LTX2_OK) {
        CHECK(false, "setup: %s", ltx2_last_error(g_ctx));
        goto out;
    }
    dit_inputs in;
    if (!dit_inputs_load(g_ctx, g, DIT_INPUTS_MASKED, &in)) goto out;
    const int64_t B = in.B, Tv = in.video.T, Ta = in.audio.T;
    dump_dir d = {dir, 0, 0};
    ltx2_dit_forward_params p = in.p;
    p.dump = dump_npy;
    p.dump_user = &d;
    float *vo = malloc((size_t)(B * Tv * w->cfg.out_channels) * sizeof(float));
    float *ao = malloc((size_t)(B * Ta * w->cfg.audio_out_channels) * sizeof(float));
    ltx2_status st = ltx2_dit_forward(g_ctx, w, &p, vo, ao);
    CHECK(st == LTX2_OK, "forward: %s", ltx2_last_error(g_ctx));
    CHECK(d.failed == 0 && d.written >= 90, "%d dumped, %d failed", d.written, d.failed);
    /* every hook-recorded golden tensor (not inputs / final outputs) must be in the dump dir */
    int compared = 0, missing = 0;
    for (size_t i = 0; i < g->n_tensors; i++) {
        const char *name = g->tensors[i].name;
        if (strncmp(name, "input.", 6) == 0 || strncmp(name, "output.", 7) == 0) continue;
        char path[1024];
        snprintf(path, sizeof path, "%s/%s.npy", dir, name);
        ltx2_array arr;
        if (ltx2_npy_read(g_ctx, path, &arr) != LTX2_OK) {
            if (missing++ < 5) CHECK(false, "golden %s has no dump file", name);
            continue;
        }
        ltx2_tensor ref = ltx2_st_view(&g->tensors[i]);
        float *rbuf = ltx2_st_read_f32(g_ctx, g, name, NULL);
        ltx2_tensor r = ltx2_tensor_make(rbuf, LTX2_F32, ref.ndim, ref.shape);
        CHECK(ltx2_tensor_numel(&r) == ltx2_tensor_numel(&arr.t), "%s: size differs", name);
        if (ltx2_tensor_numel(&r) == ltx2_tensor_numel(&arr.t)) {
            ltx2_diff_stats ds;
            ltx2_diff(&r, &arr.t, 0.0, 0.0, &ds);
            CHECK(ds.rel_l2 <= DUMP_REL_L2_TOL, "%s: rel-L2 %.3g", name, ds.rel_l2);
            compared++;
        }
        free(rbuf);
        ltx2_array_free(&arr);
    }
    CHECK(missing == 0 && compared >= 90, "%d compared, %d golden names missing from the dump", compared, missing);
    printf("%d dumped, %d golden names matched by file name\n", d.written, compared);
    dit_inputs_free(&in);
    free(vo), free(ao);
out:
    ltx2_st_close(g);
    ltx2_dit_weights_free(w);
    if (dir) {
        char cmd[1200];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
        CHECK(system(cmd) == 0, "cleanup");
    }
    ltx2_context_free(g_ctx);
    return test_finish();
}
