/* The sharding registry against MaxDiffusion (HEAD 7cfb8801d41d):
 * src/maxdiffusion/tests/ltx2/test_logical_sharding_ltx2.py (its assertions, re-stated here),
 * src/maxdiffusion/models/ltx2/logical_sharding_ltx2.py (LS) and configs/ltx2_video.yml (YML);
 * then per-rank shapes for every tensor of the tiny LTX-2 2.0 / 2.3 checkpoints on several meshes,
 * and the errors for unknown profiles, unknown names and dims a mesh does not divide. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/context.h"
#include "dist/sharding.h"
#include "io/safetensors.h"
#include "test_util.h"

#define NONE LTX2_LOGICAL_NONE
#define EMBED LTX2_LOGICAL_EMBED
#define HEADS LTX2_LOGICAL_HEADS
#define MLP LTX2_LOGICAL_MLP
#define NORM LTX2_LOGICAL_NORM

static ltx2_context *g_ctx;

static void expect_spec(ltx2_shard_profile p, ltx2_shard_component c, ltx2_weight_kind k, int nd, ltx2_logical_axis a0,
                        ltx2_logical_axis a1) {
    ltx2_logical_axis s[LTX2_SHARD_SPEC_MAX];
    int got_nd = -1;
    ltx2_status st = ltx2_shard_spec(g_ctx, p, c, k, s, &got_nd);
    CHECK(st == LTX2_OK, "%s/%s/%s: %s", ltx2_shard_profile_name(p), ltx2_shard_component_name(c),
          ltx2_weight_kind_name(k), ltx2_last_error(g_ctx));
    if (st != LTX2_OK) return;
    CHECK(got_nd == nd && s[0] == a0 && (nd < 2 || s[1] == a1), "%s/%s/%s: got (%s, %s) nd %d, want (%s, %s) nd %d",
          ltx2_shard_profile_name(p), ltx2_shard_component_name(c), ltx2_weight_kind_name(k),
          ltx2_logical_axis_name(s[0]), ltx2_logical_axis_name(s[1]), got_nd, ltx2_logical_axis_name(a0),
          ltx2_logical_axis_name(a1), nd);
}

static void test_registry(void) {
    const ltx2_shard_profile IW = LTX2_PROFILE_IRONWOOD, TR = LTX2_PROFILE_TRILLIUM, GPU = LTX2_PROFILE_GPU;
    const ltx2_shard_component DIT = LTX2_SHARD_DIT, TC = LTX2_SHARD_TEXT_CONNECTOR, VAE = LTX2_SHARD_VAE;
    /* test_get_sharding_specs_ironwood (test file lines 29-39) */
    expect_spec(IW, DIT, LTX2_W_QKV_KERNEL, 2, NONE, HEADS);
    expect_spec(IW, DIT, LTX2_W_OUT_KERNEL, 2, HEADS, NONE);
    expect_spec(IW, DIT, LTX2_W_EMBED_KERNEL, 2, NONE, NONE);
    expect_spec(IW, DIT, LTX2_W_NORM_SCALE, 1, NONE, NONE);
    expect_spec(IW, DIT, LTX2_W_QKV_BIAS, 1, HEADS, NONE);
    expect_spec(IW, DIT, LTX2_W_NET_0_BIAS, 1, MLP, NONE);
    /* test_get_sharding_specs_trillium (lines 41-48) */
    expect_spec(TR, DIT, LTX2_W_QKV_KERNEL, 2, EMBED, HEADS);
    expect_spec(TR, DIT, LTX2_W_OUT_KERNEL, 2, HEADS, EMBED);
    expect_spec(TR, DIT, LTX2_W_EMBED_KERNEL, 2, NONE, EMBED);
    expect_spec(TR, DIT, LTX2_W_NORM_SCALE, 1, NORM, NONE);
    /* text connector (lines 79-95) */
    expect_spec(IW, TC, LTX2_W_PROJ_KERNEL, 2, NONE, NONE);
    expect_spec(IW, TC, LTX2_W_PROJ_BIAS, 1, NONE, NONE);
    expect_spec(IW, TC, LTX2_W_QKV_KERNEL, 2, NONE, HEADS);
    expect_spec(TR, TC, LTX2_W_PROJ_KERNEL, 2, NONE, NONE);
    expect_spec(TR, TC, LTX2_W_QKV_KERNEL, 2, EMBED, HEADS);
    /* vae (lines 97-113) */
    expect_spec(IW, VAE, LTX2_W_SCALE_SHIFT_TABLE, 2, NONE, NONE);
    expect_spec(IW, VAE, LTX2_W_PER_CHANNEL_SCALE, 1, NONE, NONE);
    expect_spec(IW, VAE, LTX2_W_EMB_LINEAR_1_KERNEL, 2, NONE, MLP);
    expect_spec(TR, VAE, LTX2_W_SCALE_SHIFT_TABLE, 2, NONE, NONE);
    expect_spec(TR, VAE, LTX2_W_EMB_LINEAR_1_KERNEL, 2, EMBED, MLP);
    /* The rest of the Ironwood overrides (LS:104-123) and Trillium defaults (LS:29-58). */
    expect_spec(IW, DIT, LTX2_W_OUT_BIAS, 1, NONE, NONE);
    expect_spec(IW, DIT, LTX2_W_GATE_LOGITS_KERNEL, 2, NONE, HEADS);
    expect_spec(IW, DIT, LTX2_W_NET_0_KERNEL, 2, NONE, MLP);
    expect_spec(IW, DIT, LTX2_W_NET_2_KERNEL, 2, MLP, NONE);
    expect_spec(IW, DIT, LTX2_W_NET_2_BIAS, 1, NONE, NONE);
    expect_spec(IW, DIT, LTX2_W_ADALN_KERNEL, 2, NONE, NONE);
    expect_spec(IW, DIT, LTX2_W_SCALE_SHIFT_TABLE, 2, NONE, NONE);
    expect_spec(IW, DIT, LTX2_W_OUT_EMBED_KERNEL, 2, NONE, NONE);
    expect_spec(IW, DIT, LTX2_W_EMB_LINEAR_1_KERNEL, 2, NONE, MLP);
    expect_spec(IW, DIT, LTX2_W_EMB_LINEAR_1_BIAS, 1, MLP, NONE);
    expect_spec(IW, DIT, LTX2_W_EMB_LINEAR_2_KERNEL, 2, MLP, NONE);
    expect_spec(TR, DIT, LTX2_W_NET_0_KERNEL, 2, EMBED, MLP);
    expect_spec(TR, DIT, LTX2_W_NET_2_KERNEL, 2, MLP, EMBED);
    expect_spec(TR, DIT, LTX2_W_ADALN_KERNEL, 2, NONE, EMBED);
    expect_spec(TR, DIT, LTX2_W_SCALE_SHIFT_TABLE, 2, NONE, EMBED);
    expect_spec(TR, DIT, LTX2_W_OUT_EMBED_KERNEL, 2, EMBED, NONE);
    expect_spec(TR, DIT, LTX2_W_EMB_LINEAR_2_BIAS, 1, EMBED, NONE);
    /* gpu: Ironwood's DiT/connector specs, VAE fully replicated. */
    for (int k = 0; k < LTX2_W_KIND_COUNT; k++) {
        ltx2_logical_axis a[2], b[2];
        int na = -1, nb = -2;
        ltx2_status s1 = ltx2_shard_spec(g_ctx, GPU, DIT, (ltx2_weight_kind)k, a, &na);
        ltx2_status s2 = ltx2_shard_spec(g_ctx, IW, DIT, (ltx2_weight_kind)k, b, &nb);
        CHECK(s1 == s2 && (s1 != LTX2_OK || (na == nb && !memcmp(a, b, sizeof(a[0]) * (size_t)na))),
              "gpu dit %s differs from ironwood", ltx2_weight_kind_name((ltx2_weight_kind)k));
        if (ltx2_shard_spec(g_ctx, GPU, VAE, (ltx2_weight_kind)k, a, &na) == LTX2_OK)
            for (int i = 0; i < na; i++) CHECK(a[i] == NONE, "gpu vae %s must be replicated", ltx2_weight_kind_name((ltx2_weight_kind)k));
    }
    /* A kind the component does not have (cf. test_get_sharding_specs_invalid_component). */
    ltx2_logical_axis s[2];
    int nd;
    CHECK(ltx2_shard_spec(g_ctx, TR, TC, LTX2_W_ADALN_KERNEL, s, &nd) == LTX2_ERR_NOT_FOUND, "connector has no adaln");

    /* YML:84-87 */
    ltx2_mesh_axis ax[LTX2_AXIS_COUNT];
    CHECK(ltx2_shard_logical_to_mesh(EMBED, ax) == 2 && ax[0] == LTX2_AXIS_CONTEXT && ax[1] == LTX2_AXIS_FSDP,
          "embed -> (context, fsdp)");
    CHECK(ltx2_shard_logical_to_mesh(HEADS, ax) == 1 && ax[0] == LTX2_AXIS_TENSOR, "heads -> tensor");
    CHECK(ltx2_shard_logical_to_mesh(MLP, ax) == 1 && ax[0] == LTX2_AXIS_TENSOR, "mlp -> tensor");
    CHECK(ltx2_shard_logical_to_mesh(NORM, ax) == 1 && ax[0] == LTX2_AXIS_TENSOR, "norm -> tensor");
    CHECK(ltx2_shard_logical_to_mesh(NONE, ax) == 0, "None -> replicated");
}

static void test_profiles(void) {
    ltx2_shard_profile p;
    /* test_get_sharding_specs_default_cpu / _default_ironwood (lines 50-67) */
    CHECK(ltx2_shard_profile_parse(g_ctx, "default", LTX2_HW_TPU_OTHER, &p) == LTX2_OK && p == LTX2_PROFILE_TRILLIUM,
          "default on unknown TPU -> trillium");
    CHECK(ltx2_shard_profile_parse(g_ctx, "default", LTX2_HW_TPU_V7X, &p) == LTX2_OK && p == LTX2_PROFILE_IRONWOOD,
          "default on TPU7x -> ironwood");
    CHECK(ltx2_shard_profile_parse(g_ctx, "default", LTX2_HW_GPU, &p) == LTX2_OK && p == LTX2_PROFILE_GPU,
          "default on GPU -> gpu");
    CHECK(ltx2_shard_profile_parse(g_ctx, "default", LTX2_HW_CPU, &p) == LTX2_OK && p == LTX2_PROFILE_GPU,
          "default on CPU -> gpu");
    static const char *const names[] = {"ironwood", "trillium", "gpu"};
    for (int i = 0; i < 3; i++)
        CHECK(ltx2_shard_profile_parse(g_ctx, names[i], LTX2_HW_GPU, &p) == LTX2_OK && (int)p == i, "%s", names[i]);
    /* test_get_sharding_specs_invalid_strategy (lines 69-73) expects a silent trillium fallback;
     * we refuse instead, naming the bad profile. */
    static const char *const bad[] = {"some_made_up_strategy", "Ironwood", "", "trillium ", NULL};
    for (int i = 0; bad[i]; i++) {
        CHECK(ltx2_shard_profile_parse(g_ctx, bad[i], LTX2_HW_GPU, &p) == LTX2_ERR_INVALID_ARG, "'%s' refused", bad[i]);
        CHECK(strstr(ltx2_last_error(g_ctx), "unknown sharding profile"), "message: %s", ltx2_last_error(g_ctx));
    }
}

static void expect_layout(ltx2_shard_profile p, const char *mesh_text, const char *name, int ndim, int64_t d0,
                          int64_t d1, int64_t l0, int64_t l1) {
    ltx2_mesh m;
    ltx2_shard_layout l;
    int64_t shape[2] = {d0, d1};
    CHECK(ltx2_mesh_parse(g_ctx, mesh_text, &m) == LTX2_OK, "mesh");
    ltx2_status st = ltx2_shard_layout_of(g_ctx, p, &m, name, ndim, shape, &l);
    CHECK(st == LTX2_OK, "%s: %s", name, ltx2_last_error(g_ctx));
    if (st != LTX2_OK) return;
    CHECK(l.local_shape[0] == l0 && (ndim < 2 || l.local_shape[1] == l1), "%s on %s/%s: local [%lld, %lld], want [%lld, %lld]",
          name, ltx2_shard_profile_name(p), mesh_text, (long long)l.local_shape[0],
          (long long)(ndim > 1 ? l.local_shape[1] : 0), (long long)l0, (long long)l1);
}

static void test_layouts(void) {
    const char *blk = "model.diffusion_model.transformer_blocks.0.";
    char n[256];
    /* Ironwood, tensor=2: heads/mlp split, PyTorch [out, in] order. */
    snprintf(n, sizeof(n), "%sattn1.to_q.weight", blk);
    expect_layout(LTX2_PROFILE_IRONWOOD, "1,1,1,2", n, 2, 64, 64, 32, 64);
    snprintf(n, sizeof(n), "%sattn1.to_out.0.weight", blk);
    expect_layout(LTX2_PROFILE_IRONWOOD, "1,1,1,2", n, 2, 64, 64, 64, 32);
    snprintf(n, sizeof(n), "%sff.net.0.proj.weight", blk);
    expect_layout(LTX2_PROFILE_IRONWOOD, "1,1,1,2", n, 2, 256, 64, 128, 64);
    snprintf(n, sizeof(n), "%sff.net.2.weight", blk);
    expect_layout(LTX2_PROFILE_IRONWOOD, "1,1,1,2", n, 2, 64, 256, 64, 128);
    snprintf(n, sizeof(n), "%sattn1.q_norm.weight", blk);
    expect_layout(LTX2_PROFILE_IRONWOOD, "1,1,1,2", n, 1, 64, 0, 64, 0);
    snprintf(n, sizeof(n), "%sattn1.to_q.bias", blk);
    expect_layout(LTX2_PROFILE_IRONWOOD, "1,1,1,2", n, 1, 64, 0, 32, 0);
    /* Trillium, context=2 fsdp=2: embed over 4, on the in-features (dim 1) of to_q. */
    snprintf(n, sizeof(n), "%sattn1.to_q.weight", blk);
    expect_layout(LTX2_PROFILE_TRILLIUM, "1,2,2,1", n, 2, 64, 64, 64, 16);
    snprintf(n, sizeof(n), "%sscale_shift_table", blk);
    expect_layout(LTX2_PROFILE_TRILLIUM, "1,2,2,1", n, 2, 9, 64, 9, 16);
    snprintf(n, sizeof(n), "%sattn1.q_norm.weight", blk);
    expect_layout(LTX2_PROFILE_TRILLIUM, "1,1,1,4", n, 1, 64, 0, 16, 0);
    expect_layout(LTX2_PROFILE_TRILLIUM, "1,2,2,1", "model.diffusion_model.patchify_proj.weight", 2, 64, 8, 16, 8);
    expect_layout(LTX2_PROFILE_TRILLIUM, "1,2,2,1", "model.diffusion_model.proj_out.weight", 2, 8, 64, 8, 16);
    expect_layout(LTX2_PROFILE_TRILLIUM, "1,2,2,1", "model.diffusion_model.adaln_single.linear.weight", 2, 576, 64, 144, 64);
    /* Diffusers names map to the same kinds. */
    expect_layout(LTX2_PROFILE_TRILLIUM, "1,2,2,1", "proj_in.weight", 2, 64, 8, 16, 8);
    expect_layout(LTX2_PROFILE_TRILLIUM, "1,2,2,1", "time_embed.linear.weight", 2, 576, 64, 144, 64);
    /* VAE convs are replicated on every profile; gpu replicates everything at tensor=1. */
    int64_t conv[5] = {64, 8, 3, 3, 3};
    ltx2_mesh m;
    ltx2_shard_layout l;
    ltx2_mesh_parse(g_ctx, "1,2,2,2", &m);
    CHECK(ltx2_shard_layout_of(g_ctx, LTX2_PROFILE_TRILLIUM, &m, "vae.decoder.conv_in.conv.weight", 5, conv, &l) ==
              LTX2_OK && l.local_numel == 64 * 8 * 27 && l.replicas == 8,
          "vae conv replicated");

    /* Errors: a dim the mesh does not divide, an unknown name, a rank mismatch. */
    int64_t q[2] = {64, 64};
    ltx2_mesh_parse(g_ctx, "1,1,1,3", &m);
    snprintf(n, sizeof(n), "%sattn1.to_q.weight", blk);
    CHECK(ltx2_shard_layout_of(g_ctx, LTX2_PROFILE_IRONWOOD, &m, n, 2, q, &l) == LTX2_ERR_SHAPE, "64 over tensor=3");
    CHECK(strstr(ltx2_last_error(g_ctx), n) && strstr(ltx2_last_error(g_ctx), "tensor=3") &&
              strstr(ltx2_last_error(g_ctx), "size 64"),
          "message names tensor, axis and size: %s", ltx2_last_error(g_ctx));
    ltx2_mesh_parse(g_ctx, "1,3,1,1", &m);
    CHECK(ltx2_shard_layout_of(g_ctx, LTX2_PROFILE_TRILLIUM, &m, n, 2, q, &l) == LTX2_ERR_SHAPE &&
              strstr(ltx2_last_error(g_ctx), "context=1*fsdp=3"),
          "embed over context*fsdp: %s", ltx2_last_error(g_ctx));
    CHECK(ltx2_shard_layout_of(g_ctx, LTX2_PROFILE_GPU, &m, "model.diffusion_model.mystery.weight", 2, q, &l) ==
              LTX2_ERR_NOT_FOUND,
          "unknown name");
    CHECK(strstr(ltx2_last_error(g_ctx), "mystery"), "message: %s", ltx2_last_error(g_ctx));
    CHECK(ltx2_shard_layout_of(g_ctx, LTX2_PROFILE_GPU, &m, n, 1, q, &l) == LTX2_ERR_SHAPE, "1-D to_q weight");
}

/* Every tensor of a tiny checkpoint classifies, and its blocks over all ranks tile it exactly. */
static void test_checkpoint(const char *file) {
    char path[1024];
    snprintf(path, sizeof(path), "%s/weights/tiny/%s", LTX2_SOURCE_DIR, file);
    ltx2_st_file *f = NULL;
    if (ltx2_st_open(g_ctx, path, &f) != LTX2_OK) {
        CHECK(0, "open %s: %s", path, ltx2_last_error(g_ctx));
        return;
    }
    static const char *const meshes[] = {"1,1,1,1", "1,1,8,1", "2,1,2,2", "1,2,2,1", "1,1,1,4"};
    for (int p = 0; p < LTX2_PROFILE_COUNT; p++) {
        for (size_t mi = 0; mi < sizeof(meshes) / sizeof(meshes[0]); mi++) {
            ltx2_mesh m;
            ltx2_mesh_parse(g_ctx, meshes[mi], &m);
            int world = ltx2_mesh_world_size(&m);
            int64_t total = 0, per_rank0 = 0;
            int bad = 0;
            for (size_t i = 0; i < f->n_tensors; i++) {
                const ltx2_st_tensor *t = &f->tensors[i];
                ltx2_shard_layout l;
                if (ltx2_shard_layout_of(g_ctx, (ltx2_shard_profile)p, &m, t->name, t->ndim, t->shape, &l) != LTX2_OK) {
                    if (!bad++) CHECK(0, "%s %s %s: %s", file, ltx2_shard_profile_name((ltx2_shard_profile)p), meshes[mi],
                                      ltx2_last_error(g_ctx));
                    continue;
                }
                int64_t numel = 1, shards = 1;
                for (int d = 0; d < t->ndim; d++) numel *= t->shape[d], shards *= l.parts[d];
                if (l.local_numel * shards != numel || (int64_t)l.replicas * shards != world) bad++;
                /* Offsets: every block is hit by exactly `replicas` ranks. */
                if (shards > 1 && t->ndim > 0) {
                    int64_t hits_first = 0;
                    for (int r = 0; r < world; r++) {
                        int64_t off[LTX2_MAX_DIMS];
                        ltx2_shard_local_offset(&l, &m, r, off);
                        int zero = 1;
                        for (int d = 0; d < t->ndim; d++) {
                            if (off[d] % (l.local_shape[d] ? l.local_shape[d] : 1) || off[d] >= t->shape[d] + (t->shape[d] == 0))
                                bad++;
                            zero &= off[d] == 0;
                        }
                        hits_first += zero;
                    }
                    if (hits_first != l.replicas) bad++;
                }
                total += numel;
                per_rank0 += l.local_numel;
            }
            CHECK(bad == 0, "%s profile %s mesh %s: %d inconsistencies", file,
                  ltx2_shard_profile_name((ltx2_shard_profile)p), meshes[mi], bad);
            /* Fully replicated cases hold the whole model on every rank. */
            if (p == LTX2_PROFILE_GPU && (mi == 1 || mi == 0))
                CHECK(per_rank0 == total, "%s gpu %s: rank holds %lld of %lld elements", file, meshes[mi],
                      (long long)per_rank0, (long long)total);
            if (p == LTX2_PROFILE_TRILLIUM && mi == 3)
                CHECK(per_rank0 < total, "%s trillium %s must shard something", file, meshes[mi]);
        }
    }
    ltx2_st_close(f);
}

int main(void) {
    g_ctx = ltx2_context_create(NULL);
    test_registry();
    test_profiles();
    test_layouts();
    test_checkpoint("ltx2-tiny-2.0.safetensors");
    test_checkpoint("ltx2-tiny-2.3.safetensors");
    ltx2_context_free(g_ctx);
    return test_finish();
}
