// Causal conv3d as an implicit GEMM over NDHWC bf16 (fp32 accumulation, mma.sync bf16):
// M = output voxels, N = c_out, K = kt*kh*kw*c_in, with A[m][k] gathered on the fly from x
// (the padding rules are an index remap: time clamped = edge frames replicated, space zero or
// reflect) and B = the packed weight [kt, kh, kw, c_in][c_out] of ltx2_cpu_conv3d_pack_weight.
// Because c_in % 8 == 0, each 16-byte chunk of a K row lies inside one tap, so the gather is one
// cp.async (or one zero fill) per chunk. Epilogue: + bias, optional SiLU, bf16 store.
// Later step: a wgmma/TMA sm_90a variant with larger tiles and a persistent grid.
#include "common.cuh"
#include "mma.cuh"

// 128 x 64 output tile per CTA, 4 warps each owning 32 rows x all 64 columns (2 m16 x 8 n8
// tiles, 64 fp32 accumulators per thread); K advances 32 at a time (two k16 steps) through two
// shared-memory stages. 32 KB of smem per CTA leaves room for several CTAs per SM.
#define C3_BM 128
#define C3_BN 64
#define C3_BK 32
#define C3_WARPS 4
#define C3_THREADS (C3_WARPS * 32)
// Row padding (8 bf16 = 16 bytes) so ldmatrix rows fall in distinct bank groups: A rows of 40
// elements are 20 words apart, B rows of 72 are 36 (= 4 mod 32) words apart.
#define C3_PAD 8
#define C3_LDA (C3_BK + C3_PAD)
#define C3_LDB (C3_BN + C3_PAD)
// A-tile rows each thread gathers (C3_BM rows x 4 chunks / 128 threads).
#define C3_A_ROWS_PER_THREAD (C3_BM * (C3_BK / 8) / C3_THREADS)

typedef __nv_bfloat16 bf16;

struct c3_params {
    const bf16 *x, *w, *bias;
    bf16 *y;
    int64_t T, H, W, Ci, Co, kh, kw, st, sh, sw, t_front, ph, pw;
    int64_t To, Ho, Wo, M, K;
    int reflect, silu;
};

__device__ __forceinline__ int64_t c3_spatial(int64_t i, int64_t size, int reflect) {
    if (i >= 0 && i < size) return i;
    if (!reflect) return -1;
    return i < 0 ? -i : 2 * (size - 1) - i; // mirror without repeating the edge (pad < size)
}

__global__ void __launch_bounds__(C3_THREADS) c3_kernel(c3_params p) {
    __shared__ __align__(16) bf16 As[2][C3_BM * C3_LDA];
    __shared__ __align__(16) bf16 Bs[2][C3_BK * C3_LDB];
    const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31, g = lane >> 2, qd = lane & 3;
    const int64_t m0 = (int64_t)blockIdx.x * C3_BM, n0 = (int64_t)blockIdx.y * C3_BN;

    // The rows this thread gathers for A, decomposed once: batch, first input frame/row/col.
    const int a_chunk = tid & 3;
    int64_t a_n[C3_A_ROWS_PER_THREAD], a_t[C3_A_ROWS_PER_THREAD], a_h[C3_A_ROWS_PER_THREAD],
        a_w[C3_A_ROWS_PER_THREAD];
    bool a_ok[C3_A_ROWS_PER_THREAD];
#pragma unroll
    for (int i = 0; i < C3_A_ROWS_PER_THREAD; i++) {
        int64_t m = m0 + (tid >> 2) + i * (C3_THREADS / 4);
        a_ok[i] = m < p.M;
        if (!a_ok[i]) m = 0;
        const int64_t wo = m % p.Wo;
        m /= p.Wo;
        const int64_t ho = m % p.Ho;
        m /= p.Ho;
        const int64_t to = m % p.To;
        a_n[i] = m / p.To;
        a_t[i] = to * p.st - p.t_front;
        a_h[i] = ho * p.sh - p.ph;
        a_w[i] = wo * p.sw - p.pw;
    }

    auto load_stage = [&](int stage, int64_t k0) {
        // A: chunk a_chunk of each gathered row
        const int64_t k = k0 + a_chunk * 8;
        const bool k_ok = k < p.K;
        int64_t tap = 0, c = 0, ta = 0, tb = 0, te = 0;
        if (k_ok) {
            tap = k / p.Ci;
            c = k - tap * p.Ci;
            ta = tap / (p.kh * p.kw);
            const int64_t rem = tap - ta * p.kh * p.kw;
            tb = rem / p.kw;
            te = rem - tb * p.kw;
        }
#pragma unroll
        for (int i = 0; i < C3_A_ROWS_PER_THREAD; i++) {
            const int r = (tid >> 2) + i * (C3_THREADS / 4);
            bool ok = k_ok && a_ok[i];
            int64_t ts = a_t[i] + ta;
            ts = ts < 0 ? 0 : (ts >= p.T ? p.T - 1 : ts); // causal / edge frames: replicate
            const int64_t hs = c3_spatial(a_h[i] + tb, p.H, p.reflect);
            const int64_t ws = c3_spatial(a_w[i] + te, p.W, p.reflect);
            ok = ok && hs >= 0 && ws >= 0;
            const bf16 *src = ok ? p.x + (((a_n[i] * p.T + ts) * p.H + hs) * p.W + ws) * p.Ci + c : p.x;
            ltx2_cp_async16(&As[stage][r * C3_LDA + a_chunk * 8], src, ok);
        }
        // B: C3_BK rows x C3_BN columns of the packed weight
#pragma unroll
        for (int i = tid; i < C3_BK * (C3_BN / 8); i += C3_THREADS) {
            const int r = i / (C3_BN / 8), cc = (i % (C3_BN / 8)) * 8;
            const int64_t kk = k0 + r, n = n0 + cc;
            const bool ok = kk < p.K && n < p.Co;
            ltx2_cp_async16(&Bs[stage][r * C3_LDB + cc], ok ? p.w + kk * p.Co + n : p.w, ok);
        }
    };

    float acc[2][C3_BN / 8][4];
#pragma unroll
    for (int mt = 0; mt < 2; mt++)
#pragma unroll
        for (int j = 0; j < C3_BN / 8; j++) acc[mt][j][0] = acc[mt][j][1] = acc[mt][j][2] = acc[mt][j][3] = 0.0f;

    const int64_t n_k = (p.K + C3_BK - 1) / C3_BK;
    load_stage(0, 0);
    ltx2_cp_async_commit();
    for (int64_t kt = 0; kt < n_k; kt++) {
        const int stage = (int)(kt & 1);
        if (kt + 1 < n_k) load_stage(stage ^ 1, (kt + 1) * C3_BK); // that stage was freed by the last barrier
        ltx2_cp_async_commit();
        ltx2_cp_async_wait<1>();
        __syncthreads();
#pragma unroll
        for (int ks = 0; ks < C3_BK / 16; ks++) {
            uint32_t af[2][4];
#pragma unroll
            for (int mt = 0; mt < 2; mt++)
                ltx2_ldmatrix_x4(af[mt], &As[stage][(warp * 32 + mt * 16 + (lane & 15)) * C3_LDA + ks * 16 +
                                                    (lane >> 4) * 8]);
#pragma unroll
            for (int np = 0; np < C3_BN / 16; np++) {
                uint32_t bfr[4]; // B tile is [k][n] (n contiguous): .trans gives the col fragment
                ltx2_ldmatrix_x4_trans(bfr, &Bs[stage][(ks * 16 + (lane & 7) + ((lane >> 3) & 1) * 8) * C3_LDB +
                                                       np * 16 + (lane >> 4) * 8]);
#pragma unroll
                for (int mt = 0; mt < 2; mt++) {
                    ltx2_mma_bf16(acc[mt][2 * np], af[mt], bfr[0], bfr[1]);
                    ltx2_mma_bf16(acc[mt][2 * np + 1], af[mt], bfr[2], bfr[3]);
                }
            }
        }
        __syncthreads();
    }

    // Epilogue: C fragment (row g / g+8, cols 2q, 2q+1) -> + bias -> SiLU -> bf16x2 store.
#pragma unroll
    for (int mt = 0; mt < 2; mt++)
#pragma unroll
        for (int r = 0; r < 2; r++) {
            const int64_t m = m0 + warp * 32 + mt * 16 + g + r * 8;
            if (m >= p.M) continue;
#pragma unroll
            for (int j = 0; j < C3_BN / 8; j++) {
                const int64_t n = n0 + j * 8 + qd * 2;
                if (n >= p.Co) continue; // c_out % 8 == 0, so n + 1 < c_out too
                float v0 = acc[mt][j][2 * r], v1 = acc[mt][j][2 * r + 1];
                if (p.bias) {
                    v0 += __bfloat162float(p.bias[n]);
                    v1 += __bfloat162float(p.bias[n + 1]);
                }
                if (p.silu) {
                    v0 = v0 / (1.0f + expf(-v0));
                    v1 = v1 / (1.0f + expf(-v1));
                }
                *reinterpret_cast<__nv_bfloat162 *>(p.y + m * p.Co + n) = __floats2bfloat162_rn(v0, v1);
            }
        }
}

extern "C" int ltx2_k_conv3d(void *stream, const ltx2_k_conv3d_args *a) {
    if (!a || !a->x || !a->w || !a->y) LTX2_K_BAD_ARG();
    if (a->c_in < 8 || a->c_in % 8 || a->c_out < 8 || a->c_out % 8) LTX2_K_BAD_ARG();
    if (a->n < 1 || a->t < 1 || a->h < 1 || a->w_ < 1 || a->kt < 1 || a->kh < 1 || a->kw < 1 || a->st < 1 ||
        a->sh < 1 || a->sw < 1 || a->to < 1 || a->ho < 1 || a->wo < 1)
        LTX2_K_BAD_ARG();
    if (!ltx2_k_aligned16(a->x) || !ltx2_k_aligned16(a->w) || !ltx2_k_aligned16(a->y)) LTX2_K_BAD_ARG();
    c3_params p;
    p.x = (const bf16 *)a->x;
    p.w = (const bf16 *)a->w;
    p.bias = (const bf16 *)a->bias;
    p.y = (bf16 *)a->y;
    p.T = a->t;
    p.H = a->h;
    p.W = a->w_;
    p.Ci = a->c_in;
    p.Co = a->c_out;
    p.kh = a->kh;
    p.kw = a->kw;
    p.st = a->st;
    p.sh = a->sh;
    p.sw = a->sw;
    p.t_front = a->t_front;
    p.ph = a->kh / 2;
    p.pw = a->kw / 2;
    p.To = a->to;
    p.Ho = a->ho;
    p.Wo = a->wo;
    p.M = a->n * a->to * a->ho * a->wo;
    p.K = a->kt * a->kh * a->kw * a->c_in;
    p.reflect = a->reflect;
    p.silu = a->silu;
    const int64_t gm = (p.M + C3_BM - 1) / C3_BM, gn = (p.Co + C3_BN - 1) / C3_BN;
    if (gm > 0x7fffffff || gn > 65535) LTX2_K_BAD_ARG();
    c3_kernel<<<dim3((unsigned)gm, (unsigned)gn), C3_THREADS, 0, (cudaStream_t)stream>>>(p);
    LTX2_K_RETURN_LAUNCH();
}
