/* Each rank reads only its tensor shard of the DiT's block layers straight from the checkpoint
 * (ltx2_dit_parallel_create_from_file): the slice reader equals whole-tensor conversion sliced
 * (bf16 tiny weights; f32 / f16 / scaled fp8 in a written file; out-of-range slices refused); on
 * the tiny LTX-2.0 and 2.3 single files and the 2.0 diffusers directory, over tensor 2 and 4,
 * data x tensor and context x tensor meshes on loopback ranks, the forward of a file-sharded DiT
 * is bitwise that of the full-load-and-slice one (also with the replicated part borrowed:
 * create_sharded, the pipeline's way), every rank holds the exact shard sum computed here from the
 * config (< the whole layers) plus the replicated part; layer-less weights are refused by the
 * from-full constructor; a checkpoint missing a block
 * tensor or holding one mis-shaped fails every rank with a message naming the tensor and the file. */
#define _DEFAULT_SOURCE /* mkdtemp */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/context.h"
#include "core/dtype.h"
#include "dist/comm.h"
#include "model/dit_parallel.h"
#include "io/safetensors.h"
#include "model/dit.h"
#include "model/dit_weights.h"
#include "model/names.h"
#include "model/weight_fetch.h"
#include "dit_inputs.h"
#include "loopback_ranks.h"
#include "test_util.h"
#include "ckpt_edit.h"

#define MAX_RANKS 4
#define PATH_CAP 1024
/* A rank's shard is 1/T of the layers plus the row-parallel biases it keeps whole: on the tiny
 * models T x shard / whole layers is 1.004 at T 2 and 1.012 at T 4; 10% slack still fails any rank
 * that kept a whole weight matrix. */
#define WHOLE_BIAS_SLACK 0.10

static ltx2_context *g_ctx;

/* ---- the slice reader ---- */

/* Every listed block of t equals the whole conversion's block, bit for bit. */
static void check_slices(const ltx2_st_file *f, const char *name) {
    const ltx2_st_tensor *t = ltx2_st_find(f, name);
    CHECK(t != NULL, "%s: no tensor %s", f->path, name);
    if (!t) return;
    const int64_t rows = t->shape[0], cols = t->ndim == 2 ? t->shape[1] : 1, n = rows * cols;
    float *whole = malloc((size_t)n * sizeof(float)), *part = malloc((size_t)n * sizeof(float));
    ltx2_status st = ltx2_weight_to_f32(g_ctx, f, t, whole, (size_t)n);
    CHECK(st == LTX2_OK, "%s whole: %s", name, ltx2_last_error(g_ctx));
    /* whole tensor, half the rows, an interior block, one column, the last element */
    const int64_t boxes[5][4] = {{0, rows, 0, cols},
                                 {rows / 2, rows - rows / 2, 0, cols},
                                 {rows / 4, rows / 2, cols / 4, cols / 2 > 0 ? cols / 2 : 1},
                                 {0, rows, cols - 1, 1},
                                 {rows - 1, 1, cols - 1, 1}};
    for (int b = 0; st == LTX2_OK && b < 5; b++) {
        const int64_t r0 = boxes[b][0], nr = boxes[b][1], c0 = boxes[b][2], nc = boxes[b][3];
        st = ltx2_weight_slice_to_f32(g_ctx, f, t, r0, nr, c0, nc, part);
        CHECK(st == LTX2_OK, "%s slice %d: %s", name, b, ltx2_last_error(g_ctx));
        bool same = true;
        for (int64_t i = 0; st == LTX2_OK && i < nr; i++)
            same = same && memcmp(part + i * nc, whole + (r0 + i) * cols + c0, (size_t)nc * sizeof(float)) == 0;
        CHECK(same, "%s (%s) rows [%lld,+%lld) cols [%lld,+%lld): not the whole conversion's block", name,
              ltx2_dtype_name(t->dtype), (long long)r0, (long long)nr, (long long)c0, (long long)nc);
    }
    st = ltx2_weight_slice_to_f32(g_ctx, f, t, 1, rows, 0, cols, part);
    CHECK(st == LTX2_ERR_SHAPE && strstr(ltx2_last_error(g_ctx), name), "out-of-range slice of %s: %d '%s'", name,
          (int)st, ltx2_last_error(g_ctx));
    free(whole);
    free(part);
}

/* f32, f16 and fp8-with-scale tensors in a written file (the tiny checkpoints are bf16 only). */
static void check_slice_dtypes(const char *dir) {
    enum { R = 6, C = 10 };
    float src[R * C];
    uint16_t h[R * C];
    uint8_t q[R * C];
    const float scale = 0.37f;
    for (int i = 0; i < R * C; i++) {
        src[i] = (float)(i * 7 % 23) * 0.125f - 1.3f;
        h[i] = ltx2_f32_to_f16(src[i]);
        q[i] = ltx2_f32_to_fp8e4m3(src[i]);
    }
    const int64_t s2[2] = {R, C}, s1[1] = {R * C}, s0[1] = {1};
    ltx2_tensor t32 = ltx2_tensor_make(src, LTX2_F32, 2, s2), t16 = ltx2_tensor_make(h, LTX2_F16, 2, s2);
    ltx2_tensor t8 = ltx2_tensor_make(q, LTX2_F8_E4M3, 2, s2), tsc = ltx2_tensor_make((void *)&scale, LTX2_F32, 1, s0);
    ltx2_tensor t1 = ltx2_tensor_make(h, LTX2_F16, 1, s1);
    char path[PATH_CAP];
    snprintf(path, sizeof path, "%s/dtypes.safetensors", dir);
    ltx2_st_writer *wr = NULL;
    ltx2_status st = ltx2_st_writer_create(g_ctx, &wr);
    if (st == LTX2_OK) st = ltx2_st_writer_add(g_ctx, wr, "a.f32.weight", &t32);
    if (st == LTX2_OK) st = ltx2_st_writer_add(g_ctx, wr, "a.f16.weight", &t16);
    if (st == LTX2_OK) st = ltx2_st_writer_add(g_ctx, wr, "a.fp8.weight", &t8);
    if (st == LTX2_OK) st = ltx2_st_writer_add(g_ctx, wr, "a.fp8.weight_scale", &tsc);
    if (st == LTX2_OK) st = ltx2_st_writer_add(g_ctx, wr, "a.f16.bias", &t1);
    if (st == LTX2_OK) st = ltx2_st_writer_write(g_ctx, wr, path);
    ltx2_st_writer_free(wr);
    CHECK(st == LTX2_OK, "write %s: %s", path, ltx2_last_error(g_ctx));
    ltx2_st_file *f = NULL;
    if (st == LTX2_OK && ltx2_st_open(g_ctx, path, &f) == LTX2_OK) {
        check_slices(f, "a.f32.weight");
        check_slices(f, "a.f16.weight");
        check_slices(f, "a.fp8.weight");
        check_slices(f, "a.f16.bias");
        /* the scale is applied: one fp8 element by hand */
        float one = 0.0f;
        CHECK(ltx2_weight_slice_to_f32(g_ctx, f, ltx2_st_find(f, "a.fp8.weight"), 2, 1, 3, 1, &one) == LTX2_OK &&
                  one == ltx2_fp8e4m3_to_f32(q[2 * C + 3]) * scale,
              "fp8 slice element %g, expected %g", one, ltx2_fp8e4m3_to_f32(q[2 * C + 3]) * scale);
    }
    ltx2_st_close(f);
    unlink(path);
}

/* ---- expected per-rank floats, from the config alone ---- */

/* Floats of one attention's layer tensors on a rank of T: Q/K/V/gate and their biases and the QK
 * norms split by T; to_out's weight split, its bias whole. */
static int64_t attn_floats(int64_t qdim, int64_t cdim, int64_t heads, int64_t hd, bool gated, int64_t T) {
    const int64_t inner = heads * hd;
    int64_t n = (inner * qdim + inner + 2 * (inner * cdim + inner) + 2 * inner) / T; /* q, k, v, norms */
    n += qdim * inner / T + qdim;                                                    /* to_out */
    if (gated) n += (heads * qdim + heads) / T;
    return n;
}

static int64_t ff_floats(int64_t D, int64_t T) { return (4 * D * D + 4 * D + D * 4 * D) / T + D; }

static int64_t expected_shard_floats(const ltx2_dit_config *c, int64_t T) {
    const int64_t Dv = c->inner_dim, Da = c->audio_inner_dim, H = c->heads, d = c->head_dim;
    const int64_t Ha = c->audio_heads, da = c->audio_head_dim;
    const bool g = c->apply_gated_attention;
    int64_t per = attn_floats(Dv, Dv, H, d, g, T) + attn_floats(Dv, c->cross_attention_dim, H, d, g, T) +
                  attn_floats(Da, Da, Ha, da, g, T) + attn_floats(Da, c->audio_cross_attention_dim, Ha, da, g, T) +
                  attn_floats(Dv, Da, Ha, da, g, T) + attn_floats(Da, Dv, Ha, da, g, T) + ff_floats(Dv, T) +
                  ff_floats(Da, T);
    return per * c->num_layers;
}

/* ---- the ranks ---- */

typedef struct problem {
    dit_inputs in;
    int64_t nv, na;
} problem;

typedef struct rank_job {
    loopback_rank lr;
    const ltx2_dit_weights *full; /* NULL: only the file-sharded build */
    const ltx2_st_file *f;
    const ltx2_dit_config *cfg;
    const ltx2_dit_weights *rep; /* set: the file build borrows it (create_sharded), else loads its own */
    const problem *q;
    float *v_full, *a_full, *v_file, *a_file;
    ltx2_dit_parallel_weight_mem mem_full, mem_file;
    ltx2_status st_full, st_file;
} rank_job;

static ltx2_status rank_builds(ltx2_context *ctx, ltx2_comm *c, void *arg) {
    rank_job *j = arg;
    ltx2_dit_parallel *dp = NULL;
    ltx2_dit_parallel_opts opts;
    ltx2_dit_parallel_opts_init(&opts);
    ltx2_status st = LTX2_OK;
    j->st_full = j->st_file = LTX2_OK;
    if (j->full) {
        st = ltx2_dit_parallel_create(ctx, c, j->full, &opts, &dp);
        if (st == LTX2_OK) {
            ltx2_dit_parallel_get_weight_mem(dp, &j->mem_full);
            st = ltx2_dit_parallel_forward(ctx, dp, &j->q->in.p, j->v_full, j->a_full);
        }
        ltx2_dit_parallel_free(dp);
        dp = NULL;
        j->st_full = st;
    }
    if (st == LTX2_OK) {
        st = j->rep ? ltx2_dit_parallel_create_sharded(ctx, c, j->rep, j->f, NULL, &opts, &dp)
                    : ltx2_dit_parallel_create_from_file(ctx, c, j->f, NULL, j->cfg, &opts, &dp);
        if (st == LTX2_OK) {
            ltx2_dit_parallel_get_weight_mem(dp, &j->mem_file);
            if (j->q) st = ltx2_dit_parallel_forward(ctx, dp, &j->q->in.p, j->v_file, j->a_file);
        }
        j->st_file = st;
    }
    ltx2_dit_parallel_free(dp);
    return st;
}

/* Runs every rank of mesh m; jobs[r] keep their results (both builds' statuses stay
 * LTX2_ERR_DEVICE on a rank whose communicator could not be made). */
static int run_mesh(const int m[4], const ltx2_dit_weights *full, const ltx2_st_file *f, const ltx2_dit_config *cfg,
                    const ltx2_dit_weights *rep, const problem *q, rank_job *jobs) {
    const int P = m[0] * m[1] * m[2] * m[3];
    for (int r = 0; r < P; r++) {
        jobs[r] = (rank_job){.full = full, .f = f, .cfg = cfg, .rep = rep, .q = q, .st_full = LTX2_ERR_DEVICE,
                             .st_file = LTX2_ERR_DEVICE};
        if (q) {
            jobs[r].v_full = calloc((size_t)q->nv, sizeof(float));
            jobs[r].a_full = calloc((size_t)q->na, sizeof(float));
            jobs[r].v_file = calloc((size_t)q->nv, sizeof(float));
            jobs[r].a_file = calloc((size_t)q->na, sizeof(float));
        }
    }
    return loopback_ranks_run(g_ctx, m, rank_builds, jobs, sizeof *jobs) < 0 ? 0 : P;
}

static void free_jobs(rank_job *jobs, int P) {
    for (int r = 0; r < P; r++) free(jobs[r].v_full), free(jobs[r].a_full), free(jobs[r].v_file), free(jobs[r].a_file);
}

/* The golden DiT inputs of dit_blocks_<v>.safetensors (batch 2, every video token). */
static bool load_problem(const char *version, const ltx2_dit_config *cfg, problem *q) {
    memset(q, 0, sizeof *q);
    char path[PATH_CAP];
    snprintf(path, sizeof path, "%s/tests/golden/data/dit_blocks_%s.safetensors", LTX2_SOURCE_DIR, version);
    ltx2_st_file *f = NULL;
    if (ltx2_st_open(g_ctx, path, &f) != LTX2_OK) {
        CHECK(0, "open %s: %s", path, ltx2_last_error(g_ctx));
        return false;
    }
    const bool ok = dit_inputs_load(g_ctx, f, DIT_INPUTS_MASKED, &q->in);
    CHECK(ok, "%s: golden inputs missing", path);
    if (ok) {
        const int64_t B = q->in.B, Tv = q->in.video.T, Ta = q->in.audio.T;
        q->nv = B * Tv * cfg->out_channels;
        q->na = B * Ta * cfg->audio_out_channels;
    }
    ltx2_st_close(f);
    return ok;
}

static void problem_free(problem *q) {
    dit_inputs_free(&q->in);
}

static void check_mesh(const char *what, const ltx2_dit_weights *full, const ltx2_st_file *f,
                       const ltx2_dit_weights *rep, const problem *q, const int m[4]) {
    const int T = m[3];
    rank_job jobs[MAX_RANKS];
    const int P = run_mesh(m, full, f, &full->cfg, rep, q, jobs);
    const int64_t want_shard = expected_shard_floats(&full->cfg, T), want_layers = expected_shard_floats(&full->cfg, 1);
    for (int r = 0; r < P; r++) {
        const rank_job *j = &jobs[r];
        CHECK(j->st_full == LTX2_OK && j->st_file == LTX2_OK, "%s mesh %d,%d,%d,%d rank %d: %s", what, m[0], m[1],
              m[2], m[3], r, j->lr.msg);
        if (j->st_full != LTX2_OK || j->st_file != LTX2_OK) continue;
        CHECK(memcmp(j->v_full, j->v_file, (size_t)q->nv * sizeof(float)) == 0 &&
                  memcmp(j->a_full, j->a_file, (size_t)q->na * sizeof(float)) == 0,
              "%s mesh %d,%d,%d,%d rank %d: file-sharded forward differs from the sliced full one", what, m[0], m[1],
              m[2], m[3], r);
        const ltx2_dit_parallel_weight_mem *a = &j->mem_full, *b = &j->mem_file;
        CHECK(b->shard_floats == want_shard && a->shard_floats == want_shard,
              "%s T=%d rank %d: shard floats file %lld / full %lld, expected %lld", what, T, r,
              (long long)b->shard_floats, (long long)a->shard_floats, (long long)want_shard);
        CHECK(b->layer_full_floats == want_layers && a->layer_full_floats == want_layers,
              "%s: whole layer floats %lld / %lld, expected %lld", what, (long long)b->layer_full_floats,
              (long long)a->layer_full_floats, (long long)want_layers);
        /* the shard is about 1/T: only the row-parallel biases are kept whole */
        CHECK(T == 1 || (b->shard_floats < b->layer_full_floats &&
                         (double)b->shard_floats * T < (double)b->layer_full_floats * (1.0 + WHOLE_BIAS_SLACK)),
              "%s T=%d: %lld of %lld layer floats is not about 1/T", what, T, (long long)b->shard_floats,
              (long long)b->layer_full_floats);
        CHECK(b->replicated_owned == (rep == NULL) && !a->replicated_owned, "%s: ownership file %d full %d", what,
              (int)b->replicated_owned, (int)a->replicated_owned);
        CHECK(b->replicated_floats == a->replicated_floats &&
                  b->replicated_floats + b->layer_full_floats == (int64_t)full->store.n_elems,
              "%s: replicated %lld / %lld + layers %lld != all %zu", what, (long long)b->replicated_floats,
              (long long)a->replicated_floats, (long long)b->layer_full_floats, full->store.n_elems);
        CHECK(b->shard_floats + b->replicated_floats < (int64_t)full->store.n_elems || T == 1,
              "%s T=%d: rank %d holds %lld floats, not fewer than the whole model's %zu", what, T, r,
              (long long)(b->shard_floats + b->replicated_floats), full->store.n_elems);
    }
    printf("  %s%s mesh %d,%d,%d,%d: %d ranks, %lld shard + %lld replicated floats per rank (whole model %zu)\n", what,
           rep ? " (sharded, replicated part borrowed)" : "", m[0], m[1], m[2], m[3], P,
           (long long)jobs[0].mem_file.shard_floats,
           (long long)jobs[0].mem_file.replicated_floats, full->store.n_elems);
    free_jobs(jobs, P);
}

static void check_model(const char *what, const char *version, const ltx2_st_file *f) {
    ltx2_dit_config cfg;
    ltx2_dit_weights *full = NULL;
    ltx2_status st = ltx2_dit_config_from_st(g_ctx, f, &cfg);
    if (st == LTX2_OK) st = ltx2_dit_weights_load(g_ctx, f, NULL, &cfg, &full);
    CHECK(st == LTX2_OK, "%s: %s", what, ltx2_last_error(g_ctx));
    if (st != LTX2_OK) return;
    CHECK(cfg.heads % 4 == 0 && cfg.audio_heads % 4 == 0, "%s: tiny heads %lld / %lld must divide by 4", what,
          (long long)cfg.heads, (long long)cfg.audio_heads);
    problem q;
    if (load_problem(version, &full->cfg, &q)) {
        static const int meshes[5][4] = {{1, 1, 1, 1}, {1, 1, 1, 2}, {1, 1, 1, 4}, {2, 1, 1, 2}, {1, 1, 2, 2}};
        for (int k = 0; k < 5; k++) check_mesh(what, full, f, NULL, &q, meshes[k]);
    }
    /* the generation pipeline's way: the replicated part loaded once by the caller, borrowed */
    ltx2_dit_weights *rep = NULL;
    st = ltx2_dit_weights_load_replicated(g_ctx, f, NULL, &cfg, &rep);
    CHECK(st == LTX2_OK && rep->layers_skipped && rep->blocks[0].attn1.q.w.data == NULL && rep->blocks[0].sst.data != NULL &&
              rep->store.n_elems < full->store.n_elems,
          "%s: replicated load: %s", what, ltx2_last_error(g_ctx));
    if (st == LTX2_OK && q.nv > 0) {
        static const int m2[4] = {2, 1, 1, 2};
        check_mesh(what, full, f, rep, &q, m2);
    }
    problem_free(&q);

    /* weights without layers cannot feed the from-full constructor: a clear refusal, not a crash */
    if (st == LTX2_OK) {
        ltx2_mesh mesh;
        ltx2_loopback_world *world = NULL;
        ltx2_comm *c = NULL;
        ltx2_dit_parallel *dp = NULL;
        ltx2_mesh_init(g_ctx, &mesh, 1, 1, 1, 1);
        if (ltx2_loopback_world_create(g_ctx, &mesh, LOOPBACK_RANKS_TIMEOUT_MS, &world) == LTX2_OK &&
            ltx2_loopback_comm(g_ctx, world, 0, &c) == LTX2_OK) {
            st = ltx2_dit_parallel_create(g_ctx, c, rep, NULL, &dp);
            CHECK(st == LTX2_ERR_INVALID_ARG && strstr(ltx2_last_error(g_ctx), "ltx2_dit_parallel_create_sharded"),
                  "%s: from-full with a replicated-only load: %d '%s'", what, (int)st, ltx2_last_error(g_ctx));
            ltx2_dit_parallel_free(dp);
        }
        ltx2_comm_free(c);
        ltx2_loopback_world_free(world);
    }
    ltx2_dit_weights_free(rep);
    ltx2_dit_weights_free(full);
}

/* A checkpoint with `drop` removed or `reshape` transposed: every rank fails with the tensor's name
 * and the file in its own message (the load precedes any collective, so no rank waits). */
static void check_broken(const char *src, const char *dir, const char *drop, const char *reshape, ltx2_status want) {
    char path[PATH_CAP];
    snprintf(path, sizeof path, "%s/broken.safetensors", dir);
    if (!ckpt_write_broken(src, path, drop, reshape, NULL, NULL)) return;
    ltx2_st_file *f = NULL;
    ltx2_dit_config cfg;
    if (ltx2_st_open(g_ctx, path, &f) != LTX2_OK || ltx2_dit_config_from_st(g_ctx, f, &cfg) != LTX2_OK) {
        CHECK(0, "open %s: %s", path, ltx2_last_error(g_ctx));
        ltx2_st_close(f);
        unlink(path);
        return;
    }
    const char *name = drop ? drop : reshape;
    static const int m[4] = {2, 1, 1, 2};
    rank_job jobs[MAX_RANKS];
    const int P = run_mesh(m, NULL, f, &cfg, NULL, NULL, jobs);
    for (int r = 0; r < P; r++)
        CHECK(jobs[r].st_file == want && strstr(jobs[r].lr.msg, name) && strstr(jobs[r].lr.msg, path),
              "broken (%s %s) rank %d: status %d, message '%s'", drop ? "missing" : "mis-shaped", name, r,
              (int)jobs[r].st_file, jobs[r].lr.msg);
    if (P > 0) printf("  broken checkpoint, rank 0 says: %s\n", jobs[0].lr.msg);
    free_jobs(jobs, P);
    ltx2_st_close(f);
    unlink(path);
}

int main(void) {
    g_ctx = ltx2_context_create(NULL);
    char dir[] = "/tmp/ltx2_shard_load_XXXXXX";
    if (!mkdtemp(dir)) {
        CHECK(0, "mkdtemp");
        return test_finish();
    }
    check_slice_dtypes(dir);
    static const char *const versions[2] = {"2.0", "2.3"};
    for (int k = 0; k < 2; k++) {
        char path[PATH_CAP], what[64];
        snprintf(path, sizeof path, "%s/weights/tiny/ltx2-tiny-%s.safetensors", LTX2_SOURCE_DIR, versions[k]);
        ltx2_st_file *f = NULL;
        if (ltx2_st_open(g_ctx, path, &f) != LTX2_OK) {
            CHECK(0, "open %s: %s", path, ltx2_last_error(g_ctx));
            continue;
        }
        check_slices(f, "model.diffusion_model.transformer_blocks.0.attn1.to_q.weight");
        check_slices(f, "model.diffusion_model.transformer_blocks.1.ff.net.2.weight");
        check_slices(f, "model.diffusion_model.transformer_blocks.0.audio_attn2.to_k.bias");
        snprintf(what, sizeof what, "LTX-%s single file", versions[k]);
        check_model(what, versions[k], f);
        ltx2_st_close(f);
        check_broken(path, dir, "model.diffusion_model.transformer_blocks.1.attn1.to_k.weight", NULL,
                     LTX2_ERR_NOT_FOUND);
        check_broken(path, dir, NULL, "model.diffusion_model.transformer_blocks.0.ff.net.0.proj.weight",
                     LTX2_ERR_SHAPE);
    }
    /* the diffusers directory through its Lightricks-named view: the same loader, the same shards */
    char dfdir[PATH_CAP];
    snprintf(dfdir, sizeof dfdir, "%s/weights/tiny/ltx2-tiny-diffusers-2.0", LTX2_SOURCE_DIR);
    ltx2_df_view *v = NULL;
    if (ltx2_df_view_open(g_ctx, dfdir, &v) == LTX2_OK) {
        check_model("LTX-2.0 diffusers", "2.0", ltx2_df_view_file(v));
        ltx2_df_view_close(v);
    } else {
        CHECK(0, "open %s: %s", dfdir, ltx2_last_error(g_ctx));
    }
    rmdir(dir);
    ltx2_context_free(g_ctx);
    return test_finish();
}
