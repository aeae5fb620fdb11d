/* Index arithmetic of the conv3d implicit GEMM (kernels/conv3d.cu), in plain C so that
 * tests/test_layout_conv3d.c can run the kernel's whole tiling on the CPU and compare it with a
 * naive convolution. It holds: the tile shape; argument validation and the GEMM geometry the
 * launcher derives; the im2col maps (output row m -> first input voxel, K index -> tap and
 * channel, padding as an index remap, the "is a padding zero" decision); which 16-byte chunk of
 * the shared-memory tiles each thread copies; and, from mma_layout.h's warp-level maps, the
 * ldmatrix row addresses and which tile element each accumulator holds.
 * GEMM view: M = output voxels (n, to, ho, wo) row-major, N = c_out, K = (a, b, e, ci) row-major
 * over the kt x kh x kw taps and c_in, i.e. the row index of the packed weight
 * [kt, kh, kw, c_in][c_out] (ltx2_conv3d_pack_weight). */
#ifndef LTX2_KERNELS_CONV3D_LAYOUT_H
#define LTX2_KERNELS_CONV3D_LAYOUT_H

#include <stddef.h> /* ltx2_kernels.h uses size_t without including it */
#include <stdint.h>

#include "hostdev.h"
#include "ltx2_kernels.h"
#include "mma_layout.h"

/* 128 x 64 output tile per CTA, 4 warps each owning 32 rows x all 64 columns (2 m16 x 8 n8 mma
 * tiles); K advances 32 at a time (two k16 steps) through two shared-memory stages. */
#define LTX2_C3_BM 128
#define LTX2_C3_BN 64
#define LTX2_C3_BK 32
#define LTX2_C3_WARPS 4
#define LTX2_C3_THREADS (LTX2_C3_WARPS * 32)
#define LTX2_C3_WARP_M (LTX2_C3_BM / LTX2_C3_WARPS)
/* One cp.async moves 16 bytes = 8 bf16; c_in % 8 == 0 keeps every chunk of a K row inside one
 * tap (one contiguous, 16-byte aligned run of x), c_out % 8 == 0 does the same for weight rows. */
#define LTX2_C3_CHUNK 8
/* Row padding (8 bf16 = 16 bytes) so the 8 rows one ldmatrix matrix reads fall in distinct bank
 * groups: A rows of 40 elements are 20 words apart, B rows of 72 are 36 (= 4 mod 32) apart. */
#define LTX2_C3_PAD 8
#define LTX2_C3_LDA (LTX2_C3_BK + LTX2_C3_PAD)
#define LTX2_C3_LDB (LTX2_C3_BN + LTX2_C3_PAD)
#define LTX2_C3_A_CHUNKS_PER_ROW (LTX2_C3_BK / LTX2_C3_CHUNK)
#define LTX2_C3_B_CHUNKS_PER_ROW (LTX2_C3_BN / LTX2_C3_CHUNK)
/* A rows each thread gathers / B chunks each thread copies, per stage. */
#define LTX2_C3_A_ROWS_PER_THREAD (LTX2_C3_BM * LTX2_C3_A_CHUNKS_PER_ROW / LTX2_C3_THREADS)
#define LTX2_C3_B_CHUNKS_PER_THREAD (LTX2_C3_BK * LTX2_C3_B_CHUNKS_PER_ROW / LTX2_C3_THREADS)
/* Grid limits (CUDA C programming guide, "Features and Technical Specifications"): x up to
 * 2^31 - 1, y up to 65535. */
#define LTX2_C3_MAX_GRID_X 0x7fffffffLL
#define LTX2_C3_MAX_GRID_Y 65535LL

/* The GEMM geometry the kernel receives. kt is implied by K. */
typedef struct ltx2_c3_geom {
    int64_t T, H, W, Ci, Co;    /* input extent per batch item, channels */
    int64_t kh, kw;             /* spatial kernel (odd) */
    int64_t st, sh, sw;         /* strides */
    int64_t t_front, ph, pw;    /* frames in front of frame 0, spatial pads */
    int t_zero;                 /* padded frames: 1 zeros, 0 copies of the edge frames */
    int64_t To, Ho, Wo;         /* output extent */
    int64_t M, K;               /* GEMM rows (output voxels), depth (taps * c_in) */
    int reflect;                /* spatial padding: 0 zeros, 1 reflect */
} ltx2_c3_geom;

/* The input voxel (before adding the tap) that output row m starts from. */
typedef struct ltx2_c3_origin {
    int64_t n, t, h, w;
} ltx2_c3_origin;

/* Column k of A: tap (a, b, e) = (frame, row, col) offsets, channel c. */
typedef struct ltx2_c3_tap {
    int64_t a, b, e, c;
} ltx2_c3_tap;

/* 1 when the launcher can run these arguments without reading or writing out of bounds and with
 * the documented semantics, else 0 (the launcher then returns cudaErrorInvalidValue). Reflect
 * padding needs pad < size (as torch): otherwise the mirror of -pad would land past the edge. */
LTX2_HD int ltx2_c3_args_valid(const ltx2_k_conv3d_args *a) {
    if (a->c_in < LTX2_C3_CHUNK || a->c_in % LTX2_C3_CHUNK || a->c_out < LTX2_C3_CHUNK ||
        a->c_out % LTX2_C3_CHUNK)
        return 0;
    if (a->n < 1 || a->t < 1 || a->h < 1 || a->w_ < 1 || a->kt < 1 || a->kh < 1 || a->kw < 1 || a->st < 1 ||
        a->sh < 1 || a->sw < 1 || a->to < 1 || a->ho < 1 || a->wo < 1)
        return 0;
    if (a->kh % 2 == 0 || a->kw % 2 == 0) return 0;
    if (a->reflect && (a->kh / 2 >= a->h || a->kw / 2 >= a->w_)) return 0;
    return 1;
}

LTX2_HD ltx2_c3_geom ltx2_c3_geom_from_args(const ltx2_k_conv3d_args *a) {
    ltx2_c3_geom g;
    g.T = a->t;
    g.H = a->h;
    g.W = a->w_;
    g.Ci = a->c_in;
    g.Co = a->c_out;
    g.kh = a->kh;
    g.kw = a->kw;
    g.st = a->st;
    g.sh = a->sh;
    g.sw = a->sw;
    g.t_front = a->t_front;
    g.t_zero = a->t_zero != 0;
    g.ph = a->kh / 2;
    g.pw = a->kw / 2;
    g.To = a->to;
    g.Ho = a->ho;
    g.Wo = a->wo;
    g.M = a->n * a->to * a->ho * a->wo;
    g.K = a->kt * a->kh * a->kw * a->c_in;
    g.reflect = a->reflect;
    return g;
}

/* CTA grid (x over M tiles, y over c_out tiles); 0 when it exceeds the launch limits. */
LTX2_HD int ltx2_c3_grid(const ltx2_c3_geom *g, int64_t *gx, int64_t *gy) {
    *gx = (g->M + LTX2_C3_BM - 1) / LTX2_C3_BM;
    *gy = (g->Co + LTX2_C3_BN - 1) / LTX2_C3_BN;
    return *gx <= LTX2_C3_MAX_GRID_X && *gy <= LTX2_C3_MAX_GRID_Y;
}

LTX2_HD ltx2_c3_origin ltx2_c3_row_origin(const ltx2_c3_geom *g, int64_t m) {
    ltx2_c3_origin o;
    const int64_t wo = m % g->Wo;
    m /= g->Wo;
    const int64_t ho = m % g->Ho;
    m /= g->Ho;
    const int64_t to = m % g->To;
    o.n = m / g->To;
    o.t = to * g->st - g->t_front;
    o.h = ho * g->sh - g->ph;
    o.w = wo * g->sw - g->pw;
    return o;
}

LTX2_HD ltx2_c3_tap ltx2_c3_k_tap(const ltx2_c3_geom *g, int64_t k) {
    ltx2_c3_tap t;
    const int64_t tap = k / g->Ci;
    t.c = k - tap * g->Ci;
    t.a = tap / (g->kh * g->kw);
    const int64_t rem = tap - t.a * g->kh * g->kw;
    t.b = rem / g->kw;
    t.e = rem - t.b * g->kw;
    return t;
}

/* Source frame of frame index t, or -1 for a zero frame. The video VAE pads time by replicating
 * edge frames (ltx-core CausalConv3d: frame 0 in front, the last frame behind), so the index
 * clamps into [0, T); the audio VAE's causal conv pads with zero frames (t_zero). */
LTX2_HD int64_t ltx2_c3_time_src(int64_t t, int64_t T, int t_zero) {
    if (t >= 0 && t < T) return t;
    if (t_zero) return -1;
    return t < 0 ? 0 : T - 1;
}

/* Spatial source index, or -1 for a zero. Reflect mirrors without repeating the edge (PyTorch
 * padding_mode="reflect"); a mirror that still falls outside (only for inconsistent output
 * extents) is a zero rather than an out-of-bounds read. */
LTX2_HD int64_t ltx2_c3_spatial_src(int64_t i, int64_t size, int reflect) {
    if (i >= 0 && i < size) return i;
    if (!reflect) return -1;
    const int64_t r = i < 0 ? -i : 2 * (size - 1) - i;
    return r >= 0 && r < size ? r : -1;
}

/* Element offset into x of A[m][k] for the row's origin and the column's tap, or -1 when it is
 * a padding zero. */
LTX2_HD int64_t ltx2_c3_x_offset(const ltx2_c3_geom *g, const ltx2_c3_origin *o, const ltx2_c3_tap *k) {
    const int64_t ts = ltx2_c3_time_src(o->t + k->a, g->T, g->t_zero);
    const int64_t hs = ltx2_c3_spatial_src(o->h + k->b, g->H, g->reflect);
    const int64_t ws = ltx2_c3_spatial_src(o->w + k->e, g->W, g->reflect);
    if (ts < 0 || hs < 0 || ws < 0) return -1;
    return (((o->n * g->T + ts) * g->H + hs) * g->W + ws) * g->Ci + k->c;
}

/* Element offset into the packed weight of B[k][n], or -1 past the K or N edge (zero fill). */
LTX2_HD int64_t ltx2_c3_w_offset(const ltx2_c3_geom *g, int64_t k, int64_t n) {
    return k < g->K && n < g->Co ? k * g->Co + n : -1;
}

/* Shared-memory chunks thread tid copies per stage. A: chunk column a_col of tile rows
 * a_row(tid, i), i < LTX2_C3_A_ROWS_PER_THREAD (4 consecutive threads fill one 32-wide row).
 * B: chunk i < LTX2_C3_B_CHUNKS_PER_THREAD at (b_row, b_col) (8 consecutive threads fill one
 * 64-wide row). Columns are in elements. */
LTX2_HD int ltx2_c3_a_row(int tid, int i) {
    return tid / LTX2_C3_A_CHUNKS_PER_ROW + i * (LTX2_C3_THREADS / LTX2_C3_A_CHUNKS_PER_ROW);
}
LTX2_HD int ltx2_c3_a_col(int tid) { return (tid % LTX2_C3_A_CHUNKS_PER_ROW) * LTX2_C3_CHUNK; }
LTX2_HD int ltx2_c3_b_row(int tid, int i) { return (tid + i * LTX2_C3_THREADS) / LTX2_C3_B_CHUNKS_PER_ROW; }
LTX2_HD int ltx2_c3_b_col(int tid, int i) {
    return ((tid + i * LTX2_C3_THREADS) % LTX2_C3_B_CHUNKS_PER_ROW) * LTX2_C3_CHUNK;
}

/* ldmatrix.x4 row addresses and accumulator positions: the warp-level maps of mma_layout.h
 * (A from the row-major [m][k] tile without .trans, B from the [k][n] tile, n contiguous, with
 * .trans) placed at the warp's 16x16 blocks: A block (warp rows + 16 mt, 16 ks), B block
 * (16 ks, 16 np) giving n8 tiles 2 np and 2 np + 1. */
LTX2_HD int ltx2_c3_lda_row(int warp, int mt, int lane) {
    return warp * LTX2_C3_WARP_M + mt * 16 + ltx2_mma_lm_a_row(lane);
}
LTX2_HD int ltx2_c3_lda_col(int ks, int lane) { return ks * 16 + ltx2_mma_lm_a_col(lane); }
LTX2_HD int ltx2_c3_ldb_row(int ks, int lane) { return ks * 16 + ltx2_mma_lm_b_kn_row(lane); }
LTX2_HD int ltx2_c3_ldb_col(int np, int lane) { return np * 16 + ltx2_mma_lm_b_kn_col(lane); }

/* Tile coordinates of accumulator acc[mt][j][2 * r + h] (its column is ltx2_c3_acc_col + h):
 * C fragment element 2 r of m16n8 tile (mt, j). */
LTX2_HD int ltx2_c3_acc_row(int warp, int mt, int lane, int r) {
    return warp * LTX2_C3_WARP_M + mt * 16 + ltx2_mma_c_row(lane, 2 * r);
}
LTX2_HD int ltx2_c3_acc_col(int j, int lane) { return j * 8 + ltx2_mma_c_col(lane, 0); }

#endif
