// The vocoders' dense 1-D convolutions over channels-last [n, len, c] (f32 or bf16 storage, fp32
// accumulation), as implicit GEMMs with CUDA-core FMAs:
//   conv1d:           M = n * out_len output positions, N = c_out, K = k * c_in; A[m][j*c_in + ci]
//                     = x[b, o*stride - pad_left + j*dilation, ci] (0 outside [0, len)), B = the
//                     packed weight [k, c_in][c_out] (ltx2_conv1d_pack_weight).
//   conv_transpose1d: split by output phase ph = (o + padding) % stride (one grid.z slice each).
//                     Output o of phase ph takes taps j = ph + r*stride (r = 0, 1, ...; j < k) from
//                     inputs t = (o + padding) / stride - r, so each phase is a dense GEMM with
//                     K = ceil((k - ph) / stride) * c_in and no zero-stuffed work (the vocoder's
//                     k = 2*stride: 2 taps per output).
// One CTA computes a BM x BN tile of (positions x channels): each K slice of BK gathers A (im2col
// on the fly, x's channels contiguous so a row of the slice is one coalesced run) and B (c_out
// contiguous) into shared memory as fp32, register-staged double buffering (the next slice's
// global loads are in flight during this slice's FMAs), each thread a 4 x 4 micro-tile read as
// float4 from shared memory. A flat K (rather than one tap per slice) keeps c_in = 2 (the STFT as
// a conv, k = n_fft) from wasting slices. Tensor cores (bf16 mma.sync / wgmma) are a later step.
#include "common.cuh"

// 256 threads, each owning C1_TM positions x C1_TN channels of the CTA's tile.
#define C1_THREADS 256
#define C1_TM 4
#define C1_TN 4
// Outputs per CTA tile (BM * BN): 256 threads x 16.
#define C1_TILE_OUTPUTS (C1_THREADS * C1_TM * C1_TN)
// K slice per stage. Loads map 256 threads as 16 x C1_LANES: 16 threads read one position's K
// slice of A (16 consecutive channels: one coalesced run), and C1_LANES threads one K row of B per
// pass (consecutive output channels).
#define C1_BK 16
#define C1_LANES (C1_THREADS / C1_BK)
// Tile widths: 64 x 64 in general; 128 x 32 when c_out <= 32 (the vocoders' last stages, whose
// long sequences have 32 channels or fewer) so half the tile is not idle.
#define C1_BN_WIDE 64
#define C1_BN_NARROW 32
// A is stored K-major ([BK][BM + pad]) so a thread's 4 positions are one float4; the pad (a
// multiple of 4 keeps float4 alignment) spreads the transposing stores over 2-way bank conflicts
// instead of 16-way.
#define C1_A_PAD 4
// CUDA's grid y / z limit (c_out tiles; transposed-conv phases, one per stride step).
#define C1_MAX_GRID_YZ 65535
// x position of an invalid row (past M or out_len): far enough below 0 that every tap of it fails
// the [0, len) test, so rows need no separate flag.
#define C1_ROW_OFF (-((int64_t)1 << 62))

static_assert(C1_LANES == C1_BK, "A and B loads share the 16 x 16 thread map");
static_assert(C1_TILE_OUTPUTS / C1_BN_NARROW % C1_LANES == 0 && C1_TILE_OUTPUTS / C1_BN_WIDE % C1_LANES == 0,
              "every thread loads the same number of A elements");

template <typename T> struct c1_params {
    const T *x, *w, *bias;
    T *y;
    int64_t len, c_in, c_out, k, stride, dilation, pad, out_len;
    int64_t rows_per_batch; // conv: out_len; transposed: ceil(out_len / stride) (max over phases)
    int64_t M;              // n * rows_per_batch
    int K;                  // conv: k * c_in (transposed: per phase, in the kernel)
};

// Row m of the GEMM: its batch b and output position o (false when m is past M or o past out_len).
template <typename T, bool TR>
__device__ __forceinline__ bool c1_row(const c1_params<T> &p, int64_t m, int64_t o_first, int64_t *b, int64_t *o) {
    if (m >= p.M) return false;
    *b = m / p.rows_per_batch;
    const int64_t q = m - *b * p.rows_per_batch;
    *o = TR ? o_first + q * p.stride : q;
    return *o < p.out_len;
}

template <typename T, int BN, bool TR>
__global__ void __launch_bounds__(C1_THREADS) c1_kernel(const c1_params<T> p) {
    constexpr int BM = C1_TILE_OUTPUTS / BN;
    constexpr int A_LOADS = BM / C1_LANES; // A elements per thread per slice
    constexpr int B_LOADS = BN / C1_LANES;
    constexpr int TX = BN / C1_TN;         // threads along N
    __shared__ __align__(16) float As[2][C1_BK][BM + C1_A_PAD];
    __shared__ __align__(16) float Bs[2][C1_BK][BN];

    const int tid = threadIdx.x;
    const int64_t m0 = (int64_t)blockIdx.x * BM, n0 = (int64_t)blockIdx.y * BN;

    // The transposed conv's phase: which taps its outputs take, and its first output position.
    int64_t ph = 0, o_first = 0;
    int K = p.K;
    if (TR) {
        ph = blockIdx.z;
        o_first = ((ph - p.pad) % p.stride + p.stride) % p.stride;
        const int64_t taps = ph < p.k ? (p.k - 1 - ph) / p.stride + 1 : 0;
        K = (int)(taps * p.c_in);
    }

    // Loader roles: A element (position a_m + C1_LANES*i, K column a_k); B element (K row b_k,
    // channel b_n + C1_LANES*i). Per A row: its batch's x offset and the position of tap 0 (conv:
    // o*stride - pad; transposed: (o + pad) / stride, tap r reading position - r).
    const int a_k = tid % C1_BK, a_m = tid / C1_BK;
    const int b_k = tid / C1_LANES, b_n = tid % C1_LANES;
    int64_t a_xb[A_LOADS], a_pos[A_LOADS];
#pragma unroll
    for (int i = 0; i < A_LOADS; i++) {
        int64_t b = 0, o = 0;
        const bool ok = c1_row<T, TR>(p, m0 + a_m + C1_LANES * i, o_first, &b, &o);
        a_xb[i] = b * p.len * p.c_in;
        a_pos[i] = !ok ? C1_ROW_OFF : (TR ? (o + p.pad) / p.stride : o * p.stride - p.pad);
    }

    float ra[A_LOADS], rb[B_LOADS];
    // Global -> registers for the slice starting at k0 (zeros outside x, K or c_out).
    auto load = [&](int k0) {
        const int ka = k0 + a_k;
        const bool ka_ok = ka < K;
        const int tap = ka_ok ? ka / (int)p.c_in : 0, ci = ka - tap * (int)p.c_in;
#pragma unroll
        for (int i = 0; i < A_LOADS; i++) {
            const int64_t t = TR ? a_pos[i] - tap : a_pos[i] + (int64_t)tap * p.dilation;
            ra[i] = ka_ok && t >= 0 && t < p.len ? ltx2_to_f32(p.x[a_xb[i] + t * p.c_in + ci]) : 0.0f;
        }
        const int kb = k0 + b_k;
        const bool kb_ok = kb < K;
        int64_t wrow = kb;
        if (TR) {
            const int r = kb_ok ? kb / (int)p.c_in : 0, cib = kb - r * (int)p.c_in;
            wrow = (int64_t)cib * p.k + ph + (int64_t)r * p.stride;
        }
#pragma unroll
        for (int i = 0; i < B_LOADS; i++) {
            const int64_t co = n0 + b_n + C1_LANES * i;
            rb[i] = kb_ok && co < p.c_out ? ltx2_to_f32(p.w[wrow * p.c_out + co]) : 0.0f;
        }
    };
    // Registers -> shared stage s.
    auto stash = [&](int s) {
#pragma unroll
        for (int i = 0; i < A_LOADS; i++) As[s][a_k][a_m + C1_LANES * i] = ra[i];
#pragma unroll
        for (int i = 0; i < B_LOADS; i++) Bs[s][b_k][b_n + C1_LANES * i] = rb[i];
    };

    const int tx = tid % TX, ty = tid / TX;
    float acc[C1_TM][C1_TN];
#pragma unroll
    for (int i = 0; i < C1_TM; i++)
#pragma unroll
        for (int j = 0; j < C1_TN; j++) acc[i][j] = 0.0f;

    const int n_k = (K + C1_BK - 1) / C1_BK;
    if (n_k > 0) {
        load(0);
        stash(0);
    }
    __syncthreads();
    for (int kt = 0; kt < n_k; kt++) {
        const int s = kt & 1;
        const bool more = kt + 1 < n_k;
        if (more) load((kt + 1) * C1_BK);
#pragma unroll
        for (int kk = 0; kk < C1_BK; kk++) {
            const float4 a = *reinterpret_cast<const float4 *>(&As[s][kk][ty * C1_TM]);
            const float4 bv = *reinterpret_cast<const float4 *>(&Bs[s][kk][tx * C1_TN]);
            const float av[C1_TM] = {a.x, a.y, a.z, a.w}, bw[C1_TN] = {bv.x, bv.y, bv.z, bv.w};
#pragma unroll
            for (int i = 0; i < C1_TM; i++)
#pragma unroll
                for (int j = 0; j < C1_TN; j++) acc[i][j] = fmaf(av[i], bw[j], acc[i][j]);
        }
        // Stage s ^ 1 was last read in the previous iteration, before its closing barrier.
        if (more) stash(s ^ 1);
        __syncthreads();
    }

    // Epilogue: + bias, store. A thread's 4 channels are contiguous, a warp's rows 64 (or 32)
    // channels wide.
#pragma unroll
    for (int i = 0; i < C1_TM; i++) {
        int64_t b = 0, o = 0;
        if (!c1_row<T, TR>(p, m0 + ty * C1_TM + i, o_first, &b, &o)) continue;
        T *yr = p.y + (b * p.out_len + o) * p.c_out;
#pragma unroll
        for (int j = 0; j < C1_TN; j++) {
            const int64_t co = n0 + tx * C1_TN + j;
            if (co >= p.c_out) continue;
            const float v = acc[i][j] + (p.bias ? ltx2_to_f32(p.bias[co]) : 0.0f);
            yr[co] = ltx2_from_f32<T>(v);
        }
    }
}

template <typename T, bool TR>
static int c1_launch(void *stream, const void *x, const void *w, const void *bias, void *y, int64_t n, int64_t len,
                     int64_t c_in, int64_t c_out, int64_t k, int64_t stride, int64_t dilation, int64_t pad,
                     int64_t out_len) {
    c1_params<T> p;
    p.x = (const T *)x;
    p.w = (const T *)w;
    p.bias = (const T *)bias;
    p.y = (T *)y;
    p.len = len, p.c_in = c_in, p.c_out = c_out, p.k = k, p.stride = stride, p.dilation = dilation, p.pad = pad;
    p.out_len = out_len;
    p.rows_per_batch = TR ? (out_len + stride - 1) / stride : out_len;
    p.M = n * p.rows_per_batch;
    p.K = (int)(k * c_in);
    const bool narrow = c_out <= C1_BN_NARROW;
    const int bn = narrow ? C1_BN_NARROW : C1_BN_WIDE, bm = C1_TILE_OUTPUTS / bn;
    const int64_t gx = (p.M + bm - 1) / bm, gy = (c_out + bn - 1) / bn, gz = TR ? stride : 1;
    if (gx > INT32_MAX || gy > C1_MAX_GRID_YZ || gz > C1_MAX_GRID_YZ) LTX2_K_BAD_ARG();
    const dim3 grid((unsigned)gx, (unsigned)gy, (unsigned)gz);
    cudaStream_t s = (cudaStream_t)stream;
    if (narrow)
        ltx2_launch<c1_kernel<T, C1_BN_NARROW, TR>>(grid, C1_THREADS, 0, s, p);
    else
        ltx2_launch<c1_kernel<T, C1_BN_WIDE, TR>>(grid, C1_THREADS, 0, s, p);
    LTX2_K_RETURN_LAUNCH();
}

// Shared argument rules: sizes >= 0 (channels, taps, stride, dilation >= 1); K = k * c_in fits
// the kernel's int K index.
static bool c1_args_ok(int dtype, const void *x, const void *w, const void *y, int64_t n, int64_t len, int64_t c_in,
                       int64_t c_out, int64_t k, int64_t stride, int64_t dilation, int64_t pad, int64_t out_len) {
    if (dtype != LTX2_KDT_F32 && dtype != LTX2_KDT_BF16) return false;
    if (!x || !w || !y) return false;
    if (n < 0 || len < 0 || out_len < 0 || c_in < 1 || c_out < 1 || k < 1 || stride < 1 || dilation < 1 || pad < 0)
        return false;
    return k <= INT32_MAX / c_in;
}

extern "C" int ltx2_k_conv1d(void *stream, int dtype, const void *x, const void *w, const void *bias, void *y,
                             int64_t n, int64_t len, int64_t c_in, int64_t c_out, int64_t k, int64_t stride,
                             int64_t dilation, int64_t pad_left, int64_t out_len) {
    if (!c1_args_ok(dtype, x, w, y, n, len, c_in, c_out, k, stride, dilation, pad_left, out_len)) LTX2_K_BAD_ARG();
    if (n == 0 || out_len == 0) return 0;
    if (dtype == LTX2_KDT_F32)
        return c1_launch<float, false>(stream, x, w, bias, y, n, len, c_in, c_out, k, stride, dilation, pad_left,
                                       out_len);
    return c1_launch<__nv_bfloat16, false>(stream, x, w, bias, y, n, len, c_in, c_out, k, stride, dilation,
                                           pad_left, out_len);
}

extern "C" int ltx2_k_conv_transpose1d(void *stream, int dtype, const void *x, const void *w, const void *bias,
                                       void *y, int64_t n, int64_t len, int64_t c_in, int64_t c_out, int64_t k,
                                       int64_t stride, int64_t padding, int64_t out_len) {
    if (!c1_args_ok(dtype, x, w, y, n, len, c_in, c_out, k, stride, 1, padding, out_len)) LTX2_K_BAD_ARG();
    if (n == 0 || out_len == 0) return 0;
    if (dtype == LTX2_KDT_F32)
        return c1_launch<float, true>(stream, x, w, bias, y, n, len, c_in, c_out, k, stride, 1, padding, out_len);
    return c1_launch<__nv_bfloat16, true>(stream, x, w, bias, y, n, len, c_in, c_out, k, stride, 1, padding,
                                          out_len);
}
