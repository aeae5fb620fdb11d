/* Memory-bound ops (norms, the tensor-parallel norm halves row_sumsq / rms_apply, softmax,
 * activations, broadcast add/mul, conversion; the video VAE's pixel_norm + SiLU and its
 * depth_to_space / space_to_depth rearrangements; the audio vocoders' pointwise ops, FIR
 * resamplers, SnakeBeta and STFT magnitude) in GB/s of ideal
 * traffic (each input read once, each output written once), against the measured copy bandwidth
 * of the same device (memcpy on the CPU, device-to-device copy on CUDA) as the roofline. The
 * baseline column is a copy moving the same bytes: x baseline = copy time / op time. The
 * vocoders' conv1d / conv_transpose1d rows count FLOPs instead, against a GEMM of the same
 * M x N x K on the same backend (x baseline = GEMM time / conv time: the fraction of the GEMM rate
 * the conv reaches, as if gathering its patches were free). */
#include <omp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "bench.h"
#include "device_util.h"
#include "core/dtype.h"
#include "model/vocoder.h"

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
    ltx2_tensor stats;           /* f32 [rows, 3]: row_stats' output */
    ltx2_tensor z;               /* add_rms_norm's out (y is its residual, x its branch) */
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
        case LTX2_OP_ROW_STATS: j->st = ltx2_backend_row_stats(j->be, j->ctx, &j->x, &j->stats); break;
        case LTX2_OP_ADD_RMS_NORM:
            j->st = ltx2_backend_add_rms_norm(j->be, j->ctx, &j->y, &j->x, &j->w, &j->w, 1e-6f, &j->z);
            break;
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

/* Gemma-3's per-head QK norm + RoPE on its queries [2, S, 16 x 256] (the 12B's), one table for every
 * row and head: the fused op, and the two ops it replaces as the baseline. */
#define GEMMA_Q_HEADS 16
#define GEMMA_HEAD_DIM 256
typedef struct norm_rope_job {
    const ltx2_backend *be;
    ltx2_context *ctx;
    bool fused;
    ltx2_tensor x, w, c, s, rows, wrows; /* rows: x viewed [2 * S * heads, d] */
    int inner;
    ltx2_status st;
} norm_rope_job;

static void run_norm_rope(void *u) {
    norm_rope_job *j = u;
    for (int i = 0; i < j->inner && j->st == LTX2_OK; i++) {
        if (j->fused) {
            j->st = ltx2_backend_rms_norm_rope(j->be, j->ctx, &j->x, &j->w, 1e-6f, GEMMA_Q_HEADS, &j->c, &j->s, &j->x);
        } else {
            j->st = ltx2_backend_rms_norm(j->be, j->ctx, &j->rows, &j->w, 1e-6f, &j->rows);
            if (j->st == LTX2_OK)
                j->st = ltx2_backend_rope(j->be, j->ctx, &j->x, LTX2_ROPE_SPLIT, GEMMA_Q_HEADS, &j->c, &j->s, &j->x);
        }
    }
    if (j->st == LTX2_OK) j->st = j->be->sync(j->be, j->ctx);
}

static void bench_norm_rope(const bench_opts *o, bench_report *r, const ltx2_backend *be, ltx2_context *ctx,
                            ltx2_dtype dt, int64_t S, double copy_bw) {
    const int64_t D = GEMMA_Q_HEADS * GEMMA_HEAD_DIM, n = 2 * S * D, half = GEMMA_HEAD_DIM / 2;
    const int64_t xs[3] = {2, S, D}, rs[2] = {2 * S * GEMMA_Q_HEADS, GEMMA_HEAD_DIM}, ts[4] = {1, 1, S, half};
    void *px = bench_dev_randn(be, ctx, dt, n, OPS_SEED, 8, 1.0f);
    void *pw = bench_dev_randn(be, ctx, dt, GEMMA_HEAD_DIM, OPS_SEED, 9, 1.0f);
    void *pc = bench_dev_randn(be, ctx, LTX2_F32, S * half, OPS_SEED, 10, 1.0f);
    void *ps = bench_dev_randn(be, ctx, LTX2_F32, S * half, OPS_SEED, 11, 1.0f);
    if (px && pw && pc && ps) {
        norm_rope_job j = {.be = be, .ctx = ctx, .inner = be->device == LTX2_DEVICE_CPU ? 1 : GPU_INNER};
        j.x = ltx2_tensor_make(px, dt, 3, xs);
        j.rows = ltx2_tensor_make(px, dt, 2, rs);
        j.w = ltx2_tensor_make(pw, dt, 1, &rs[1]);
        j.c = ltx2_tensor_make(pc, LTX2_F32, 4, ts);
        j.s = ltx2_tensor_make(ps, LTX2_F32, 4, ts);
        j.x.device = j.rows.device = j.w.device = j.c.device = j.s.device = be->device;
        for (int f = 0; f < 2; f++) {
            /* in place, as the Gemma forward runs it: x read and written once fused, twice as two ops */
            j.fused = f == 1;
            j.st = LTX2_OK;
            char name[96];
            snprintf(name, sizeof name, "%s %s [2,%lld,%dx%d]", j.fused ? "rms_norm_rope" : "rms_norm + rope",
                     ltx2_dtype_name(dt), (long long)S, GEMMA_Q_HEADS, GEMMA_HEAD_DIM);
            report_row(o, r, ctx, be, name, (j.fused ? 2.0 : 4.0) * (double)n * (double)ltx2_dtype_size(dt), copy_bw,
                       run_norm_rope, &j, j.inner, &j.st);
        }
    } else {
        bench_report_note(r, "%s: rms_norm_rope buffers: %s", be->name, ltx2_last_error(ctx));
        ltx2_clear_error(ctx);
    }
    be->free(be, px), be->free(be, pw), be->free(be, pc), be->free(be, ps);
}

static void bench_device(const bench_opts *o, bench_report *r, const ltx2_backend *be, ltx2_context *ctx,
                         ltx2_dtype dt, int64_t rows, int64_t dim, double copy_bw) {
    static const ltx2_op ops[] = {LTX2_OP_RMS_NORM,  LTX2_OP_ROW_SUMSQ, LTX2_OP_ROW_STATS, LTX2_OP_RMS_APPLY,
                                  LTX2_OP_LAYER_NORM, LTX2_OP_SOFTMAX,  LTX2_OP_GELU_TANH, LTX2_OP_SILU,
                                  LTX2_OP_ADD,       LTX2_OP_MUL,       LTX2_OP_ADD_RMS_NORM};
    int64_t n = rows * dim, shape[2] = {rows, dim};
    size_t es = ltx2_dtype_size(dt);
    void *px = bench_dev_randn(be, ctx, dt, n, OPS_SEED, 1, 1.0f), *pw = bench_dev_randn(be, ctx, dt, dim, OPS_SEED, 2, 1.0f);
    void *pb = bench_dev_randn(be, ctx, dt, dim, OPS_SEED, 3, 1.0f);
    void *py = bench_dev_randn(be, ctx, dt, n, OPS_SEED, 7, 1.0f), *pz = NULL;
    be->alloc(be, ctx, (size_t)n * es, &pz);
    /* row sums for rms_apply: normals (a negative one gives a NaN row, which takes the same time) */
    void *pss = bench_dev_randn(be, ctx, LTX2_F32, rows, OPS_SEED, 4, 1.0f);
    void *pst = NULL;
    be->alloc(be, ctx, (size_t)(3 * rows) * sizeof(float), &pst);
    if (!px || !pw || !pb || !py || !pz || !pss || !pst) {
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
        const int64_t st_shape[2] = {rows, 3};
        j.stats = ltx2_tensor_make(pst, LTX2_F32, 2, st_shape);
        j.z = ltx2_tensor_make(pz, dt, 2, shape);
        j.x.device = j.y.device = j.w.device = j.b.device = j.vec.device = j.ss.device = j.stats.device = be->device;
        j.z.device = be->device;
        /* ideal traffic: x read, y written (+ x read again as the second mul operand is the
         * same buffer: counted once, as a fused kernel would); per-channel vectors are negligible;
         * row_sumsq and row_stats only read x */
        const bool reads_only = ops[k] == LTX2_OP_ROW_SUMSQ || ops[k] == LTX2_OP_ROW_STATS;
        /* add_rms_norm: residual and branch read, residual and out written (the three ops it
         * replaces move 7 of these) */
        const double passes = ops[k] == LTX2_OP_ADD_RMS_NORM ? 4.0 : reads_only ? 1.0 : 2.0;
        double bytes = passes * (double)n * (double)es;
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
    be->free(be, pz);
    be->free(be, pss);
    be->free(be, pst);
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

/* ---- the audio vocoders' ops at LTX-2.3's sizes for 1 s of audio ----
 * tests/data/config_full_2.3.json: the main BigVGAN-v2 generator turns 100 mel frames (16 kHz over
 * prod(upsample_rates) = 160) into 16 kHz; upsample_initial_channel 1536, first stage x5 with
 * kernel 11 (padding (11 - 5) / 2 = 3) to 500 samples of 768 channels, the widest resblocks (kernel
 * 11 at dilation 5 the costliest conv), each SnakeBeta between x2 12-tap FIRs (1000 samples); the
 * bandwidth extension's STFT (n_fft 512, hop 80: 200 frames of 257 bins per stereo channel), its
 * 2 x 64-mel log floor, and the 48 kHz stereo clamp. LTX-2.0's HiFi-GAN (config_full_2.0.json):
 * LeakyReLU at its first stage (x6 of 100 frames: 600 samples of 512 channels), tanh on 24 kHz
 * stereo. Every stage of either generator holds about as many values (channels halve as the
 * length doubles), so these rows stand for all of them. */
#define VOC_FRAMES 100
#define VOC_C0 1536
#define VOC_UP0_RATE 5
#define VOC_UP0_K 11
#define VOC_RB_K 11
#define VOC_RB_DILATION 5
#define VOC_STAGE0_LEN (VOC_FRAMES * VOC_UP0_RATE)
#define VOC_STAGE0_C (VOC_C0 / 2)
#define VOC_BWE_FRAMES 200
#define VOC_BWE_BINS 257
#define VOC_BWE_MELS 64
#define VOC_OUT_48K 48000
#define VOC20_STAGE0_LEN 600
#define VOC20_STAGE0_C 512
#define VOC20_OUT_24K 24000
/* The resblock count whose outputs div_scalar averages (resblock_kernel_sizes 3 / 7 / 11). */
#define VOC_N_KERNELS 3.0f
/* HiFi-GAN's LeakyReLU slope and the log-mel floor (src/model/vocoder_forward.c). */
#define VOC_LRELU_SLOPE 0.1f
#define VOC_MEL_FLOOR 1e-5f
/* Buffer sizes (elements) that hold every row's operands: the largest activation is the x2
 * upsampled stage 0 (1000 x 768), the largest weight the first transposed conv (1536 x 11 x 768);
 * the GEMM baselines' patch matrix (500 x 11 * 768) and the transposed conv's per-tap columns
 * (100 x 11 * 768). */
#define VOC_ACT_MAX ((int64_t)VOC_STAGE0_LEN * LTX2_VOCODER_AA_RATIO * VOC_STAGE0_C)
#define VOC_W_MAX ((int64_t)VOC_C0 * VOC_UP0_K * VOC_STAGE0_C)
#define VOC_A_MAX ((int64_t)VOC_STAGE0_LEN * VOC_RB_K * VOC_STAGE0_C)
#define VOC_G_MAX ((int64_t)VOC_FRAMES * VOC_UP0_K * VOC_STAGE0_C)

typedef struct voc_job {
    const ltx2_backend *be;
    ltx2_context *ctx;
    ltx2_op op;
    bool gemm; /* run the conv's same-shape GEMM (a [M, K] x w [K, N] -> g) instead of the op */
    ltx2_tensor x, y, w, b, a, g;
    ltx2_tensor filt, alpha, inv_beta; /* f32 */
    ltx2_conv1d_desc cd;
    ltx2_convt1d_desc td;
    ltx2_fir_desc fd;
    float param; /* unary_a's parameter */
    int inner;
    ltx2_status st;
} voc_job;

static ltx2_status voc_call(voc_job *j) {
    if (j->gemm) return ltx2_backend_gemm(j->be, j->ctx, &j->a, &j->w, LTX2_B_KN, NULL, &j->g);
    switch (j->op) {
    case LTX2_OP_CONV1D: return ltx2_backend_conv1d(j->be, j->ctx, &j->cd, &j->x, &j->w, &j->b, &j->y);
    case LTX2_OP_CONV_TRANSPOSE1D:
        return ltx2_backend_conv_transpose1d(j->be, j->ctx, &j->td, &j->x, &j->w, &j->b, &j->y);
    case LTX2_OP_FIR_UPSAMPLE: return ltx2_backend_fir_upsample(j->be, j->ctx, &j->fd, &j->x, &j->filt, &j->y);
    case LTX2_OP_FIR_DOWNSAMPLE: return ltx2_backend_fir_downsample(j->be, j->ctx, &j->fd, &j->x, &j->filt, &j->y);
    case LTX2_OP_SNAKE: return ltx2_backend_snake(j->be, j->ctx, &j->x, &j->alpha, &j->inv_beta, &j->y);
    case LTX2_OP_COMPLEX_ABS: return ltx2_backend_complex_abs(j->be, j->ctx, &j->x, &j->y);
    default: return ltx2_backend_unary_a(j->be, j->ctx, j->op, j->param, &j->x, &j->y);
    }
}

static void run_voc_op(void *u) {
    voc_job *j = u;
    for (int i = 0; i < j->inner && j->st == LTX2_OK; i++) j->st = voc_call(j);
    if (j->st == LTX2_OK) j->st = j->be->sync(j->be, j->ctx);
}

/* The device buffers every vocoder row takes its operands from (shapes are set per row). */
typedef struct voc_bufs {
    void *x, *y, *w, *b, *a, *g, *filt, *alpha, *inv_beta;
} voc_bufs;

static bool voc_bufs_alloc(const ltx2_backend *be, ltx2_context *ctx, ltx2_dtype dt, voc_bufs *v) {
    /* weights ~N(0, 1/K) (0.02 ~ 1/sqrt(11 * 768)) keep the conv outputs O(1); the FIR filter and
     * the SnakeBeta parameters are f32 as the ops take them (their values do not change the time) */
    v->x = bench_dev_randn(be, ctx, dt, VOC_ACT_MAX, OPS_SEED, 20, 1.0f);
    v->y = bench_dev_randn(be, ctx, dt, VOC_ACT_MAX, OPS_SEED, 21, 1.0f);
    v->w = bench_dev_randn(be, ctx, dt, VOC_W_MAX, OPS_SEED, 22, 0.02f);
    v->b = bench_dev_randn(be, ctx, dt, VOC_C0, OPS_SEED, 23, 0.1f);
    v->a = bench_dev_randn(be, ctx, dt, VOC_A_MAX, OPS_SEED, 24, 1.0f);
    v->g = bench_dev_randn(be, ctx, dt, VOC_G_MAX, OPS_SEED, 25, 1.0f);
    v->filt = bench_dev_randn(be, ctx, LTX2_F32, LTX2_VOCODER_AA_TAPS, OPS_SEED, 26, 0.3f);
    v->alpha = bench_dev_randn(be, ctx, LTX2_F32, VOC_C0, OPS_SEED, 27, 1.0f);
    v->inv_beta = bench_dev_randn(be, ctx, LTX2_F32, VOC_C0, OPS_SEED, 28, 1.0f);
    return v->x && v->y && v->w && v->b && v->a && v->g && v->filt && v->alpha && v->inv_beta;
}

static void voc_bufs_free(const ltx2_backend *be, const voc_bufs *v) {
    void *all[] = {v->x, v->y, v->w, v->b, v->a, v->g, v->filt, v->alpha, v->inv_beta};
    for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++) be->free(be, all[i]);
}

/* t re-pointed at p with a new shape on device dev. */
static ltx2_tensor voc_view(void *p, ltx2_dtype dt, ltx2_device dev, int nd, const int64_t *shape) {
    ltx2_tensor t = ltx2_tensor_make(p, dt, nd, shape);
    t.device = dev;
    return t;
}

/* "[1,500,768]", as the other rows spell shapes. */
static void voc_shape_name(const int64_t *s, int nd, char *buf, size_t cap) {
    size_t at = (size_t)snprintf(buf, cap, "[");
    for (int i = 0; i < nd && at < cap; i++)
        at += (size_t)snprintf(buf + at, cap - at, "%s%lld", i ? "," : "", (long long)s[i]);
    if (at < cap) snprintf(buf + at, cap - at, "]");
}

/* A memory-bound vocoder row: x -> y, bytes = each once (filters and per-channel vectors are
 * negligible). */
static void voc_bytes_row(const bench_opts *o, bench_report *r, voc_job *j, int nd, const int64_t *xs,
                          const int64_t *ys, double copy_bw) {
    j->x = voc_view(j->x.data, j->x.dtype, j->be->device, nd, xs);
    j->y = voc_view(j->y.data, j->y.dtype, j->be->device, nd, ys);
    const double bytes =
        (double)(ltx2_tensor_numel(&j->x) + ltx2_tensor_numel(&j->y)) * (double)ltx2_dtype_size(j->x.dtype);
    char name[96], sx[48];
    voc_shape_name(xs, nd, sx, sizeof(sx));
    snprintf(name, sizeof(name), "%s %s %s", ltx2_op_name(j->op), ltx2_dtype_name(j->x.dtype), sx);
    report_row(o, r, j->ctx, j->be, name, bytes, copy_bw, run_voc_op, j, j->inner, &j->st);
}

/* A conv row: 2 M N K FLOPs against the same-shape GEMM on the same backend (the baseline). */
static void voc_flops_row(const bench_opts *o, bench_report *r, voc_job *j, const char *name, double flops,
                          double bytes) {
    voc_job g = *j;
    g.gemm = true;
    const bench_stats gs = bench_measure(o, run_voc_op, &g, g.inner);
    bench_row row = {.bench = "ops", .name = name, .device = j->be->name, .flops = flops, .bytes = bytes};
    if (g.st == LTX2_OK) {
        row.baseline = "gemm_same_mnk";
        row.baseline_s = gs.median_s;
    } else {
        bench_report_note(r, "%s: GEMM baseline: %s", name, ltx2_last_error(j->ctx));
        ltx2_clear_error(j->ctx);
    }
    row.st = bench_measure(o, run_voc_op, j, j->inner);
    if (j->st != LTX2_OK) {
        bench_report_note(r, "%s: %s", name, ltx2_last_error(j->ctx));
        ltx2_clear_error(j->ctx);
        return;
    }
    bench_report_row(r, &row);
}

/* conv1d: the stage-0 resblock conv (768 -> 768, kernel 11, dilation 5, 'same' padding) over 500
 * samples; its GEMM is the [500, 11 * 768] patch matrix times the packed weight. */
static void voc_conv1d_row(const bench_opts *o, bench_report *r, voc_job j) {
    const int64_t L = VOC_STAGE0_LEN, C = VOC_STAGE0_C, K = VOC_RB_K * C, pad = VOC_RB_DILATION * (VOC_RB_K - 1) / 2;
    const int64_t xs[3] = {1, L, C}, ws[2] = {K, C}, as[2] = {L, K}, gs[2] = {L, C};
    const ltx2_dtype dt = j.x.dtype;
    const ltx2_device dev = j.be->device;
    j.op = LTX2_OP_CONV1D;
    j.cd = (ltx2_conv1d_desc){.c_in = C, .c_out = C, .k = VOC_RB_K, .stride = 1, .dilation = VOC_RB_DILATION,
                              .pad_left = pad, .pad_right = pad};
    j.x = voc_view(j.x.data, dt, dev, 3, xs);
    j.y = voc_view(j.y.data, dt, dev, 3, xs);
    j.w = voc_view(j.w.data, dt, dev, 2, ws);
    j.b = voc_view(j.b.data, dt, dev, 1, &C);
    j.a = voc_view(j.a.data, dt, dev, 2, as);
    j.g = voc_view(j.g.data, dt, dev, 2, gs);
    char name[96];
    snprintf(name, sizeof(name), "conv1d %s [1,%lld,%lld] k%d d%d", ltx2_dtype_name(dt), (long long)L, (long long)C,
             VOC_RB_K, VOC_RB_DILATION);
    const double es = (double)ltx2_dtype_size(dt);
    voc_flops_row(o, r, &j, name, 2.0 * (double)(L * C * K), (double)(2 * L * C + K * C) * es);
}

/* conv_transpose1d: LTX-2.3's first upsampler (1536 -> 768, kernel 11, x5) from 100 frames; its
 * GEMM is x [100, 1536] times the packed [1536, 11 * 768] weight (the per-tap columns). */
static void voc_convt1d_row(const bench_opts *o, bench_report *r, voc_job j) {
    const int64_t L = VOC_FRAMES, Ci = VOC_C0, Co = VOC_STAGE0_C, N = VOC_UP0_K * Co;
    const int64_t xs[3] = {1, L, Ci}, ys[3] = {1, VOC_STAGE0_LEN, Co}, ws[2] = {Ci, N}, as[2] = {L, Ci},
                  gs[2] = {L, N};
    const ltx2_dtype dt = j.x.dtype;
    const ltx2_device dev = j.be->device;
    j.op = LTX2_OP_CONV_TRANSPOSE1D;
    j.td = (ltx2_convt1d_desc){.c_in = Ci, .c_out = Co, .k = VOC_UP0_K, .stride = VOC_UP0_RATE,
                               .padding = (VOC_UP0_K - VOC_UP0_RATE) / 2};
    j.x = voc_view(j.x.data, dt, dev, 3, xs);
    j.y = voc_view(j.y.data, dt, dev, 3, ys);
    j.w = voc_view(j.w.data, dt, dev, 2, ws);
    j.b = voc_view(j.b.data, dt, dev, 1, &Co);
    j.a = voc_view(j.x.data, dt, dev, 2, as);
    j.g = voc_view(j.g.data, dt, dev, 2, gs);
    char name[96];
    snprintf(name, sizeof(name), "conv_transpose1d %s [1,%lld,%lld] k%d s%d", ltx2_dtype_name(dt), (long long)L,
             (long long)Ci, VOC_UP0_K, VOC_UP0_RATE);
    const double es = (double)ltx2_dtype_size(dt);
    voc_flops_row(o, r, &j, name, 2.0 * (double)(L * Ci * N), (double)(L * Ci + Ci * N + VOC_STAGE0_LEN * Co) * es);
}

/* BigVGAN's Activation1d around SnakeBeta at stage 0: x2 FIR up (500 -> 1000 samples), SnakeBeta
 * on 1000 x 768, x2 FIR down (1000 -> 500), with the vocoder's pads and crops. */
static void voc_aa_rows(const bench_opts *o, bench_report *r, voc_job j, double copy_bw) {
    const int64_t k = LTX2_VOCODER_AA_TAPS, ra = LTX2_VOCODER_AA_RATIO, pad = k / ra - 1;
    const int64_t lo[3] = {1, VOC_STAGE0_LEN, VOC_STAGE0_C}, hi[3] = {1, VOC_STAGE0_LEN * ra, VOC_STAGE0_C};
    const int64_t taps = k, c = VOC_STAGE0_C;
    j.filt = voc_view(j.filt.data, LTX2_F32, j.be->device, 1, &taps);
    j.alpha = voc_view(j.alpha.data, LTX2_F32, j.be->device, 1, &c);
    j.inv_beta = voc_view(j.inv_beta.data, LTX2_F32, j.be->device, 1, &c);
    j.op = LTX2_OP_FIR_UPSAMPLE;
    j.fd = (ltx2_fir_desc){.taps = k, .ratio = ra, .pad_left = pad, .pad_right = pad,
                           .crop_left = pad * ra + (k - ra) / 2, .crop_right = pad * ra + (k - ra + 1) / 2};
    voc_bytes_row(o, r, &j, 3, lo, hi, copy_bw);
    j.op = LTX2_OP_SNAKE;
    voc_bytes_row(o, r, &j, 3, hi, hi, copy_bw);
    j.op = LTX2_OP_FIR_DOWNSAMPLE;
    j.fd = (ltx2_fir_desc){.taps = k, .ratio = ra, .pad_left = k / 2 - 1, .pad_right = k / 2};
    voc_bytes_row(o, r, &j, 3, hi, lo, copy_bw);
}

/* The pointwise ops at the sizes the vocoders run them (see the block comment above) and the BWE's
 * STFT magnitude. */
static void voc_pointwise_rows(const bench_opts *o, bench_report *r, voc_job j, double copy_bw) {
    static const struct {
        ltx2_op op;
        float param;
        int64_t shape[3];
    } rows[] = {
        {LTX2_OP_LEAKY_RELU, VOC_LRELU_SLOPE, {1, VOC20_STAGE0_LEN, VOC20_STAGE0_C}},
        {LTX2_OP_DIV_SCALAR, VOC_N_KERNELS, {1, VOC_STAGE0_LEN, VOC_STAGE0_C}},
        {LTX2_OP_TANH, 0.0f, {1, VOC20_OUT_24K, 2}},
        {LTX2_OP_HARDTANH, 0.0f, {1, VOC_OUT_48K, 2}},
        {LTX2_OP_LOG_FLOOR, VOC_MEL_FLOOR, {1, VOC_BWE_FRAMES, 2 * VOC_BWE_MELS}},
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        j.op = rows[i].op;
        j.param = rows[i].param;
        voc_bytes_row(o, r, &j, 3, rows[i].shape, rows[i].shape, copy_bw);
    }
    const int64_t xs[4] = {1, VOC_BWE_FRAMES, 2, 2 * VOC_BWE_BINS}, ys[4] = {1, VOC_BWE_FRAMES, 2, VOC_BWE_BINS};
    j.op = LTX2_OP_COMPLEX_ABS;
    voc_bytes_row(o, r, &j, 4, xs, ys, copy_bw);
}

static void bench_vocoder_ops(const bench_opts *o, bench_report *r, const ltx2_backend *be, ltx2_context *ctx,
                              ltx2_dtype dt, double copy_bw) {
    voc_bufs v = {0};
    if (!voc_bufs_alloc(be, ctx, dt, &v)) {
        bench_report_note(r, "%s: vocoder op allocation failed: %s", be->name, ltx2_last_error(ctx));
        ltx2_clear_error(ctx);
    } else {
        const int64_t one = 1;
        voc_job j = {.be = be, .ctx = ctx, .inner = be->device == LTX2_DEVICE_CPU ? 1 : GPU_INNER};
        j.x = voc_view(v.x, dt, be->device, 1, &one);
        j.y = voc_view(v.y, dt, be->device, 1, &one);
        j.w = voc_view(v.w, dt, be->device, 1, &one);
        j.b = voc_view(v.b, dt, be->device, 1, &one);
        j.a = voc_view(v.a, dt, be->device, 1, &one);
        j.g = voc_view(v.g, dt, be->device, 1, &one);
        j.filt = voc_view(v.filt, LTX2_F32, be->device, 1, &one);
        j.alpha = voc_view(v.alpha, LTX2_F32, be->device, 1, &one);
        j.inv_beta = voc_view(v.inv_beta, LTX2_F32, be->device, 1, &one);
        voc_conv1d_row(o, r, j);
        voc_convt1d_row(o, r, j);
        voc_aa_rows(o, r, j, copy_bw);
        voc_pointwise_rows(o, r, j, copy_bw);
    }
    voc_bufs_free(be, &v);
}

int main(int argc, char **argv) {
    bench_opts o;
    int rc = bench_parse_args(argc, argv, &o, "norms/softmax/activations/elementwise/VAE and vocoder ops GB/s vs copy bandwidth; vocoder convs GFLOP/s vs a same-shape GEMM\n");
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
    bench_norm_rope(&o, &r, cpu, ctx, LTX2_F32, o.quick ? 128 : 512, cbw);
    /* The vocoders' ops at their real sizes for 1 s of audio (already small). */
    bench_vocoder_ops(&o, &r, cpu, ctx, LTX2_F32, cbw);

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
        /* Gemma-3 12B's queries at the encoder's 2 x 1024 tokens */
        bench_norm_rope(&o, &r, cuda, ctx, LTX2_BF16, 1024, gbw);
        bench_vocoder_ops(&o, &r, cuda, ctx, LTX2_BF16, gbw);
        bench_vocoder_ops(&o, &r, cuda, ctx, LTX2_F32, gbw);
        ltx2_backend_free(cuda);
    } else {
        bench_report_note(&r, "cuda: skipped (%s)", ltx2_last_error(ctx));
        ltx2_clear_error(ctx);
    }
    ltx2_context_free(ctx);
    bench_report_close(&r);
    return 0;
}
