/* Memory-bound ops (norms, the tensor-parallel norm halves row_sumsq / rms_apply, softmax,
 * activations, broadcast add/mul, conversion; the video VAE's pixel_norm + SiLU and its
 * depth_to_space / space_to_depth rearrangements) in GB/s of ideal
 * traffic (each input read once, each output written once), against the measured copy bandwidth
 * of the same device (memcpy on the CPU, device-to-device copy on CUDA) as the roofline. The
 * baseline column is a copy moving the same bytes: x baseline = copy time / op time. */
#include <omp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "bench.h"
#include "device_util.h"
#include "core/dtype.h"

/* GPU: launches per timed sample (amortises launch gaps and the closing sync). */
#define GPU_INNER 20
/* Philox seed of the device inputs. */
#define OPS_SEED 11
/* Bytes per copy-bandwidth sample: well beyond any last-level cache (CPU L3 ~100 MB, H100/H200
 * L2 50 MB), so it measures DRAM/HBM. */
#define COPY_BYTES_CPU ((size_t)512 << 20)
#define COPY_BYTES_GPU ((size_t)1 << 30)

typedef struct op_job {
    const ltx2_backend *be;
    ltx2_context *ctx;
    ltx2_op op;
    ltx2_tensor x, y, w, b, vec; /* vec: [D] broadcast operand */
    ltx2_tensor ss;              /* f32 [rows]: row_sumsq's output, rms_apply's input */
    int inner;
    ltx2_status st;
} op_job;

static void run_op(void *u) {
    op_job *j = u;
    for (int i = 0; i < j->inner && j->st == LTX2_OK; i++) {
        switch (j->op) {
        case LTX2_OP_RMS_NORM: j->st = ltx2_backend_rms_norm(j->be, j->ctx, &j->x, &j->w, 1e-6f, &j->y); break;
        case LTX2_OP_LAYER_NORM: j->st = ltx2_backend_layer_norm(j->be, j->ctx, &j->x, &j->w, &j->b, 1e-6f, &j->y); break;
        case LTX2_OP_ROW_SUMSQ: j->st = ltx2_backend_row_sumsq(j->be, j->ctx, &j->x, &j->ss); break;
        case LTX2_OP_RMS_APPLY:
            /* the whole row twice as wide as this part, as at tensor = 2 */
            j->st = ltx2_backend_rms_apply(j->be, j->ctx, &j->x, &j->ss, 2 * j->x.shape[1], &j->w, 1e-6f, &j->y);
            break;
        case LTX2_OP_SOFTMAX: j->st = ltx2_backend_softmax(j->be, j->ctx, &j->x, &j->y); break;
        case LTX2_OP_GELU_TANH:
        case LTX2_OP_SILU: j->st = ltx2_backend_unary(j->be, j->ctx, j->op, &j->x, &j->y); break;
        case LTX2_OP_ADD: j->st = ltx2_backend_binary(j->be, j->ctx, j->op, &j->x, &j->vec, &j->y); break;
        case LTX2_OP_MUL: j->st = ltx2_backend_binary(j->be, j->ctx, j->op, &j->x, &j->x, &j->y); break;
        default: j->st = LTX2_ERR_INTERNAL; break;
        }
    }
    if (j->st == LTX2_OK) j->st = j->be->sync(j->be, j->ctx);
}

/* The video VAE's rearrangements at the (2,2,2) factors with their skip inputs, as the decoder's
 * and encoder's compress_all blocks run them: x, residual and y are preallocated for the larger
 * of the two. */
/* GroupNorm's group count in the latent upsampler (torch GroupNorm(32, C)). */
#define BENCH_GN_GROUPS 32

typedef struct vae_job {
    const ltx2_backend *be;
    ltx2_context *ctx;
    ltx2_op op;
    ltx2_tensor x, r, y;
    int inner;
    ltx2_status st;
} vae_job;

static void run_vae_op(void *u) {
    vae_job *j = u;
    const ltx2_d2s_args d2s = {.stride = {2, 2, 2}, .drop_first = true};
    const ltx2_s2d_args s2d = {.stride = {2, 2, 2}};
    for (int i = 0; i < j->inner && j->st == LTX2_OK; i++) {
        switch (j->op) {
        case LTX2_OP_PIXEL_NORM: j->st = ltx2_backend_pixel_norm(j->be, j->ctx, &j->x, 1e-8f, true, &j->y); break;
        case LTX2_OP_GROUP_NORM:
            j->st = ltx2_backend_group_norm(j->be, j->ctx, &j->x, BENCH_GN_GROUPS, 1e-5f, NULL, NULL, true, &j->y);
            break;
        case LTX2_OP_BLUR_DOWNSAMPLE: j->st = ltx2_backend_blur_downsample(j->be, j->ctx, &j->x, 2, &j->y); break;
        case LTX2_OP_DEPTH_TO_SPACE:
            j->st = ltx2_backend_depth_to_space(j->be, j->ctx, &j->x, &d2s, &j->r, &j->y);
            break;
        case LTX2_OP_SPACE_TO_DEPTH:
            j->st = ltx2_backend_space_to_depth(j->be, j->ctx, &j->x, &s2d, &j->r, &j->y);
            break;
        default: j->st = LTX2_ERR_INTERNAL; break;
        }
    }
    if (j->st == LTX2_OK) j->st = j->be->sync(j->be, j->ctx);
}

typedef struct copy_job {
    const ltx2_backend *be;
    ltx2_context *ctx;
    void *dst;
    const void *src;
    size_t bytes;
    int inner;
} copy_job;

static void run_copy(void *u) {
    copy_job *j = u;
    if (j->be->device == LTX2_DEVICE_CPU) {
        /* memcpy split across threads: one thread cannot saturate a multi-channel memory system */
#pragma omp parallel
        {
            int t = omp_get_thread_num(), n = omp_get_num_threads();
            size_t chunk = (j->bytes / (size_t)n + 63) & ~(size_t)63;
            size_t lo = (size_t)t * chunk, hi = lo + chunk < j->bytes ? lo + chunk : j->bytes;
            if (lo < hi) memcpy((char *)j->dst + lo, (const char *)j->src + lo, hi - lo);
        }
        return;
    }
    for (int i = 0; i < j->inner; i++) j->be->copy(j->be, j->ctx, j->dst, j->src, j->bytes);
    j->be->sync(j->be, j->ctx);
}

/* Measured copy bandwidth in B/s (read + write bytes per second). */
static double copy_bandwidth(const bench_opts *o, const ltx2_backend *be, ltx2_context *ctx, size_t bytes) {
    copy_job j = {be, ctx, NULL, NULL, bytes, be->device == LTX2_DEVICE_CPU ? 1 : GPU_INNER};
    void *a = NULL, *b = NULL;
    double bw = 0.0;
    if (be->alloc(be, ctx, bytes, &a) == LTX2_OK && be->alloc(be, ctx, bytes, &b) == LTX2_OK) {
        if (be->device == LTX2_DEVICE_CPU) memset(a, 1, bytes);
        j.dst = b;
        j.src = a;
        bench_stats st = bench_measure(o, run_copy, &j, j.inner);
        bw = 2.0 * (double)bytes / st.median_s;
    }
    be->free(be, a);
    be->free(be, b);
    return bw;
}

/* One "ops" row: fn(job) timed as moving `bytes`, against a copy of the same bytes at copy_bw;
 * *job_st is the job's status once measured (a failed op is a note, not a row). */
static void report_row(const bench_opts *o, bench_report *r, ltx2_context *ctx, const ltx2_backend *be,
                       const char *name, double bytes, double copy_bw, void (*fn)(void *), void *job, int inner,
                       const ltx2_status *job_st) {
    bench_row row = {.bench = "ops", .name = name, .device = be->name, .bytes = bytes,
                     .baseline = be->device == LTX2_DEVICE_CPU ? "memcpy" : "d2d_copy",
                     .baseline_s = bytes / copy_bw, .roof_rate = copy_bw, .roof = "copy_bw"};
    row.st = bench_measure(o, fn, job, inner);
    if (*job_st != LTX2_OK) {
        bench_report_note(r, "%s: %s", name, ltx2_last_error(ctx));
        ltx2_clear_error(ctx);
        return;
    }
    bench_report_row(r, &row);
}

static void bench_device(const bench_opts *o, bench_report *r, const ltx2_backend *be, ltx2_context *ctx,
                         ltx2_dtype dt, int64_t rows, int64_t dim, double copy_bw) {
    static const ltx2_op ops[] = {LTX2_OP_RMS_NORM,  LTX2_OP_ROW_SUMSQ, LTX2_OP_RMS_APPLY, LTX2_OP_LAYER_NORM,
                                  LTX2_OP_SOFTMAX,   LTX2_OP_GELU_TANH, LTX2_OP_SILU,      LTX2_OP_ADD,
                                  LTX2_OP_MUL};
    int64_t n = rows * dim, shape[2] = {rows, dim};
    size_t es = ltx2_dtype_size(dt);
    void *px = bench_dev_randn(be, ctx, dt, n, OPS_SEED, 1, 1.0f), *pw = bench_dev_randn(be, ctx, dt, dim, OPS_SEED, 2, 1.0f);
    void *pb = bench_dev_randn(be, ctx, dt, dim, OPS_SEED, 3, 1.0f);
    void *py = NULL;
    be->alloc(be, ctx, (size_t)n * es, &py);
    /* row sums for rms_apply: normals (a negative one gives a NaN row, which takes the same time) */
    void *pss = bench_dev_randn(be, ctx, LTX2_F32, rows, OPS_SEED, 4, 1.0f);
    if (!px || !pw || !pb || !py || !pss) {
        bench_report_note(r, "%s: allocation failed: %s", be->name, ltx2_last_error(ctx));
        ltx2_clear_error(ctx);
        goto done;
    }
    for (size_t k = 0; k < sizeof(ops) / sizeof(ops[0]); k++) {
        op_job j = {.be = be, .ctx = ctx, .op = ops[k], .inner = be->device == LTX2_DEVICE_CPU ? 1 : GPU_INNER};
        j.x = ltx2_tensor_make(px, dt, 2, shape);
        j.y = ltx2_tensor_make(py, dt, 2, shape);
        j.w = ltx2_tensor_make(pw, dt, 1, &dim);
        j.b = ltx2_tensor_make(pb, dt, 1, &dim);
        j.vec = j.w;
        j.ss = ltx2_tensor_make(pss, LTX2_F32, 1, &rows);
        j.x.device = j.y.device = j.w.device = j.b.device = j.vec.device = j.ss.device = be->device;
        /* ideal traffic: x read, y written (+ x read again as the second mul operand is the
         * same buffer: counted once, as a fused kernel would); per-channel vectors are negligible;
         * row_sumsq only reads x */
        double bytes = (ops[k] == LTX2_OP_ROW_SUMSQ ? 1.0 : 2.0) * (double)n * (double)es;
        char name[96];
        snprintf(name, sizeof(name), "%s %s [%lld,%lld]", ltx2_op_name(ops[k]), ltx2_dtype_name(dt),
                 (long long)rows, (long long)dim);
        report_row(o, r, ctx, be, name, bytes, copy_bw, run_op, &j, j.inner, &j.st);
    }
done:
    be->free(be, px);
    be->free(be, pw);
    be->free(be, pb);
    be->free(be, py);
    be->free(be, pss);
}

/* The VAE ops on a [1, T, H, W, C] activation: pixel_norm over C; the latent upsampler's
 * group_norm (32 groups, + SiLU; bytes counted once each way, its three passes read x three times);
 * blur_downsample at stride 2 (the x1.5 upsampler's anti-alias); depth_to_space from
 * [1, T/2, H/2, W/2, 8C] to [1, T - 1, H, W, C] plus the block input [1, T/2, H/2, W/2, 2C]
 * rearranged and repeated 4 times (the decoder's multiplier-2 compress_all); space_to_depth from
 * [1, T, H, W, C/4] to [1, T/2, H/2, W/2, 2C] with the mean of groups of 4 of the s2d'd
 * [1, T, H, W, C] input (the encoder's multiplier-2 compress_all). */
static void bench_vae_ops(const bench_opts *o, bench_report *r, const ltx2_backend *be, ltx2_context *ctx,
                          ltx2_dtype dt, int64_t T, int64_t H, int64_t W, int64_t C, double copy_bw) {
    const int64_t n = T * H * W * C;
    const size_t es = ltx2_dtype_size(dt);
    void *px = bench_dev_randn(be, ctx, dt, n, OPS_SEED, 5, 1.0f), *pr = bench_dev_randn(be, ctx, dt, n, OPS_SEED, 6, 1.0f);
    void *py = NULL;
    be->alloc(be, ctx, (size_t)n * es, &py);
    if (!px || !pr || !py) {
        bench_report_note(r, "%s: VAE op allocation failed: %s", be->name, ltx2_last_error(ctx));
        ltx2_clear_error(ctx);
        goto done;
    }
    static const ltx2_op ops[] = {LTX2_OP_PIXEL_NORM, LTX2_OP_GROUP_NORM, LTX2_OP_BLUR_DOWNSAMPLE,
                                  LTX2_OP_DEPTH_TO_SPACE, LTX2_OP_SPACE_TO_DEPTH};
    for (size_t k = 0; k < sizeof(ops) / sizeof(ops[0]); k++) {
        vae_job j = {.be = be, .ctx = ctx, .op = ops[k], .inner = be->device == LTX2_DEVICE_CPU ? 1 : GPU_INNER};
        const int64_t full[5] = {1, T, H, W, C}, half[5] = {1, T / 2, H / 2, W / 2, 8 * C};
        const int64_t d2s_y[5] = {1, T - 1, H, W, C}, d2s_r[5] = {1, T / 2, H / 2, W / 2, 2 * C};
        const int64_t s2d_x[5] = {1, T, H, W, C / 4}, s2d_y[5] = {1, T / 2, H / 2, W / 2, 2 * C};
        double bytes = 0.0;
        if (ops[k] == LTX2_OP_PIXEL_NORM || ops[k] == LTX2_OP_GROUP_NORM) {
            j.x = ltx2_tensor_make(px, dt, 5, full);
            j.y = ltx2_tensor_make(py, dt, 5, full);
            bytes = 2.0 * (double)n * (double)es;
        } else if (ops[k] == LTX2_OP_BLUR_DOWNSAMPLE) { /* stride 2: the x1.5 resampler */
            const int64_t bs[5] = {1, T, (H - 1) / 2 + 1, (W - 1) / 2 + 1, C};
            j.x = ltx2_tensor_make(px, dt, 5, full);
            j.y = ltx2_tensor_make(py, dt, 5, bs);
            bytes = (double)(n + ltx2_tensor_numel(&j.y)) * (double)es;
        } else if (ops[k] == LTX2_OP_DEPTH_TO_SPACE) {
            j.x = ltx2_tensor_make(px, dt, 5, half);
            j.r = ltx2_tensor_make(pr, dt, 5, d2s_r);
            j.y = ltx2_tensor_make(py, dt, 5, d2s_y);
            bytes = (double)(ltx2_tensor_numel(&j.x) + ltx2_tensor_numel(&j.r) + ltx2_tensor_numel(&j.y)) * (double)es;
        } else {
            j.x = ltx2_tensor_make(px, dt, 5, s2d_x);
            j.r = ltx2_tensor_make(pr, dt, 5, full);
            j.y = ltx2_tensor_make(py, dt, 5, s2d_y);
            bytes = (double)(ltx2_tensor_numel(&j.x) + ltx2_tensor_numel(&j.r) + ltx2_tensor_numel(&j.y)) * (double)es;
        }
        j.x.device = j.r.device = j.y.device = be->device;
        char name[96];
        snprintf(name, sizeof(name), "%s %s [1,%lld,%lld,%lld,%lld]", ltx2_op_name(ops[k]), ltx2_dtype_name(dt),
                 (long long)T, (long long)H, (long long)W, (long long)C);
        report_row(o, r, ctx, be, name, bytes, copy_bw, run_vae_op, &j, j.inner, &j.st);
    }
done:
    be->free(be, px);
    be->free(be, pr);
    be->free(be, py);
}

int main(int argc, char **argv) {
    bench_opts o;
    int rc = bench_parse_args(argc, argv, &o, "norms/softmax/activations/elementwise GB/s vs copy bandwidth\n");
    if (rc >= 0) return rc;
    bench_report r;
    if (!bench_report_open(&r, &o)) return 1;
    ltx2_context *ctx = ltx2_context_create(NULL);

    const ltx2_backend *cpu = ltx2_backend_cpu();
    double cbw = copy_bandwidth(&o, cpu, ctx, o.quick ? COPY_BYTES_CPU / 4 : COPY_BYTES_CPU);
    bench_report_note(&r, "cpu: memcpy bandwidth %.1f GB/s (read+write) on %d threads", cbw * 1e-9,
                      omp_get_max_threads());
    /* LTX-2 tokens x hidden scaled down (4096/4): 16K x 1024 f32 = 64 MB per tensor. */
    bench_device(&o, &r, cpu, ctx, LTX2_F32, o.quick ? 4096 : 16384, 1024, cbw);
    /* The decoder's last stage scaled down: 8 frames of 64x96 at 128 channels (25 MB f32). */
    bench_vae_ops(&o, &r, cpu, ctx, LTX2_F32, 8, o.quick ? 32 : 64, o.quick ? 48 : 96, 128, cbw);

    ltx2_backend *cuda = NULL;
    if (ltx2_backend_cuda_create(ctx, 0, &cuda) == LTX2_OK) {
        double gbw = copy_bandwidth(&o, cuda, ctx, COPY_BYTES_GPU);
        bench_report_note(&r, "cuda: device-to-device copy bandwidth %.1f GB/s (read+write)", gbw * 1e-9);
        /* Full-size LTX-2 video tokens x hidden: 2 x 6144 tokens x 4096. */
        bench_device(&o, &r, cuda, ctx, LTX2_BF16, 12288, 4096, gbw);
        bench_device(&o, &r, cuda, ctx, LTX2_F32, 12288, 4096, gbw);
        /* The 768x512x121 decode's last stage (128 channels at 192x128 after the patch-4
         * unpatchify), 16 of its 121 frames: 50M values. */
        bench_vae_ops(&o, &r, cuda, ctx, LTX2_BF16, 16, 128, 192, 128, gbw);
        ltx2_backend_free(cuda);
    } else {
        bench_report_note(&r, "cuda: skipped (%s)", ltx2_last_error(ctx));
        ltx2_clear_error(ctx);
    }
    ltx2_context_free(ctx);
    bench_report_close(&r);
    return 0;
}
