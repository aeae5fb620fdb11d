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

#include "att90_layout.h"
#include "hostdev.h"
#include "ltx2_kernels.h"
#include "mma_layout.h"

/* Output tile per CTA: 128 rows x 64 * wn columns, wn (1 or 2) warps along N beside 4 along M, so
 * each warp owns 32 rows x 64 columns (2 m16 x 8 n8 mma tiles). wn = 2 (128 x 128, 8 warps) for
 * c_out > 64: every A element a CTA gathers feeds twice the columns, which halves the L2 traffic
 * per FLOP (the 128 x 64 tile measured ~116 TFLOP/s on an H100, run7); wn = 1 keeps a narrow c_out
 * (48, the decoder's conv_out) from computing mostly padding. K advances 32 at a time through a
 * ring of 4 shared-memory stages: three k-tiles are in flight while one is computed, one barrier
 * per k-tile. */
#define LTX2_C3_BM 128
#define LTX2_C3_BK 32
#define LTX2_C3_WARPS_M 4
#define LTX2_C3_WARP_M (LTX2_C3_BM / LTX2_C3_WARPS_M)
#define LTX2_C3_WARP_N 64
#define LTX2_C3_WN_MAX 2
#define LTX2_C3_STAGES 4
/* One cp.async moves 16 bytes = 8 bf16; c_in % 8 == 0 keeps every chunk of a K row inside one
 * tap (one contiguous, 16-byte aligned run of x), c_out % 8 == 0 does the same for weight rows. */
#define LTX2_C3_CHUNK 8
/* Row padding (8 bf16 = 16 bytes) so the 8 rows one ldmatrix matrix reads fall in distinct bank
 * groups: A rows of 40 elements are 20 words apart, B rows of 72 or 136 are 36 or 68 (= 4 mod 32)
 * apart. */
#define LTX2_C3_PAD 8
#define LTX2_C3_LDA (LTX2_C3_BK + LTX2_C3_PAD)
#define LTX2_C3_A_CHUNKS_PER_ROW (LTX2_C3_BK / LTX2_C3_CHUNK)
/* B chunks each thread copies per stage: BK rows x (64 wn / 8) chunks over 128 wn threads. */
#define LTX2_C3_B_CHUNKS_PER_THREAD (LTX2_C3_BK * (LTX2_C3_WARP_N / LTX2_C3_CHUNK) / (LTX2_C3_WARPS_M * 32))
/* The largest extent, stride, kernel size, channel count or padding the launcher takes: the
 * 32-bit origin and tap fields below then hold every value and every origin + tap sum. */
#define LTX2_C3_MAX_EXTENT (1LL << 28)
/* Grid limits (CUDA C programming guide, "Features and Technical Specifications"): x up to
 * 2^31 - 1, y up to 65535. */
#define LTX2_C3_MAX_GRID_X 0x7fffffffLL
#define LTX2_C3_MAX_GRID_Y 65535LL

/* The tile shape for wn warps along N (macros: the kernel sizes its arrays and launch bounds with
 * them as constant expressions). */
#define LTX2_C3_BN(wn) (LTX2_C3_WARP_N * (wn))
#define LTX2_C3_THREADS(wn) (LTX2_C3_WARPS_M * 32 * (wn))
#define LTX2_C3_LDB(wn) (LTX2_C3_BN(wn) + LTX2_C3_PAD)
/* A rows each thread gathers per stage (4 consecutive threads fill one 32-wide row). */
#define LTX2_C3_A_ROWS_PER_THREAD(wn) (LTX2_C3_BM * LTX2_C3_A_CHUNKS_PER_ROW / LTX2_C3_THREADS(wn))
/* One stage in the dynamic shared memory: the A tile [BM][LDA], then the B tile [BK][ldb]. */
#define LTX2_C3_STAGE_ELEMS(wn) (LTX2_C3_BM * LTX2_C3_LDA + LTX2_C3_BK * LTX2_C3_LDB(wn))
#define LTX2_C3_SMEM_BYTES(wn) (LTX2_C3_STAGES * LTX2_C3_STAGE_ELEMS(wn) * 2)
/* The launcher's choice: 128 columns when c_out fills more than one 64-wide tile. */
LTX2_HD int ltx2_c3_pick_wn(int64_t c_out) { return c_out > LTX2_C3_WARP_N ? 2 : 1; }

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

/* The input voxel (before adding the tap) that output row m starts from. 32-bit: every extent
 * and channel count fits (the launcher checks), and the kernel keeps several of these per thread
 * in registers; offsets into x are formed in 64 bits. */
typedef struct ltx2_c3_origin {
    int32_t n, t, h, w;
} ltx2_c3_origin;

/* Column k of A: tap (a, b, e) = (frame, row, col) offsets, channel c. */
typedef struct ltx2_c3_tap {
    int32_t a, b, e, c;
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
    if (a->n > LTX2_C3_MAX_EXTENT || a->t > LTX2_C3_MAX_EXTENT || a->h > LTX2_C3_MAX_EXTENT ||
        a->w_ > LTX2_C3_MAX_EXTENT || a->c_in > LTX2_C3_MAX_EXTENT || a->kt > LTX2_C3_MAX_EXTENT ||
        a->kh > LTX2_C3_MAX_EXTENT || a->kw > LTX2_C3_MAX_EXTENT || a->t_front > LTX2_C3_MAX_EXTENT ||
        a->st > LTX2_C3_MAX_EXTENT || a->sh > LTX2_C3_MAX_EXTENT || a->sw > LTX2_C3_MAX_EXTENT ||
        a->to > LTX2_C3_MAX_EXTENT || a->ho > LTX2_C3_MAX_EXTENT || a->wo > LTX2_C3_MAX_EXTENT ||
        a->to * a->st > LTX2_C3_MAX_EXTENT || a->ho * a->sh > LTX2_C3_MAX_EXTENT ||
        a->wo * a->sw > LTX2_C3_MAX_EXTENT)
        return 0;
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

/* CTA grid (x over M tiles, y over c_out tiles of 64 wn); 0 when it exceeds the launch limits. */
LTX2_HD int ltx2_c3_grid(const ltx2_c3_geom *g, int wn, int64_t *gx, int64_t *gy) {
    *gx = (g->M + LTX2_C3_BM - 1) / LTX2_C3_BM;
    *gy = (g->Co + LTX2_C3_BN(wn) - 1) / LTX2_C3_BN(wn);
    return *gx <= LTX2_C3_MAX_GRID_X && *gy <= LTX2_C3_MAX_GRID_Y;
}

LTX2_HD ltx2_c3_origin ltx2_c3_row_origin(const ltx2_c3_geom *g, int64_t m) {
    ltx2_c3_origin o;
    const int64_t wo = m % g->Wo;
    m /= g->Wo;
    const int64_t ho = m % g->Ho;
    m /= g->Ho;
    const int64_t to = m % g->To;
    o.n = (int32_t)(m / g->To);
    o.t = (int32_t)(to * g->st - g->t_front);
    o.h = (int32_t)(ho * g->sh - g->ph);
    o.w = (int32_t)(wo * g->sw - g->pw);
    return o;
}

LTX2_HD ltx2_c3_tap ltx2_c3_k_tap(const ltx2_c3_geom *g, int64_t k) {
    ltx2_c3_tap t;
    const int64_t tap = k / g->Ci, a = tap / (g->kh * g->kw), rem = tap - a * g->kh * g->kw;
    t.c = (int32_t)(k - tap * g->Ci);
    t.a = (int32_t)a;
    t.b = (int32_t)(rem / g->kw);
    t.e = (int32_t)(rem - t.b * g->kw);
    return t;
}

/* The tap of column k + step from the tap of column k, without divisions (each thread walks its
 * chunk column through K one k-tile at a time; step >= 0, any c_in). Past K the tap runs on
 * beyond the kernel; the kernel reads nothing there (k < K is checked beside it). */
LTX2_HD void ltx2_c3_tap_advance(const ltx2_c3_geom *g, ltx2_c3_tap *t, int32_t step) {
    t->c += step;
    while (t->c >= g->Ci) {
        t->c -= g->Ci;
        if (++t->e == g->kw) {
            t->e = 0;
            if (++t->b == g->kh) {
                t->b = 0;
                t->a++;
            }
        }
    }
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
 * a_row(tid, i, wn), i < LTX2_C3_A_ROWS_PER_THREAD(wn) (4 consecutive threads fill one 32-wide
 * row). B: chunk i < LTX2_C3_B_CHUNKS_PER_THREAD at (b_row, b_col) (8 wn consecutive threads fill
 * one row). Columns are in elements. */
LTX2_HD int ltx2_c3_a_row(int tid, int i, int wn) {
    return tid / LTX2_C3_A_CHUNKS_PER_ROW + i * (LTX2_C3_THREADS(wn) / LTX2_C3_A_CHUNKS_PER_ROW);
}
LTX2_HD int ltx2_c3_a_col(int tid) { return (tid % LTX2_C3_A_CHUNKS_PER_ROW) * LTX2_C3_CHUNK; }
LTX2_HD int ltx2_c3_b_row(int tid, int i, int wn) {
    return (tid + i * LTX2_C3_THREADS(wn)) / (LTX2_C3_BN(wn) / LTX2_C3_CHUNK);
}
LTX2_HD int ltx2_c3_b_col(int tid, int i, int wn) {
    return ((tid + i * LTX2_C3_THREADS(wn)) % (LTX2_C3_BN(wn) / LTX2_C3_CHUNK)) * LTX2_C3_CHUNK;
}

/* Warp w owns tile rows 32 (w % 4) and columns 64 (w / 4). ldmatrix.x4 row addresses and
 * accumulator positions: the warp-level maps of mma_layout.h (A from the row-major [m][k] tile
 * without .trans, B from the [k][n] tile, n contiguous, with .trans) placed at the warp's 16x16
 * blocks: A block (warp rows + 16 mt, 16 ks), B block (16 ks, warp columns + 16 np) giving n8
 * tiles 2 np and 2 np + 1. */
LTX2_HD int ltx2_c3_warp_row0(int warp) { return (warp % LTX2_C3_WARPS_M) * LTX2_C3_WARP_M; }
LTX2_HD int ltx2_c3_warp_col0(int warp) { return (warp / LTX2_C3_WARPS_M) * LTX2_C3_WARP_N; }
LTX2_HD int ltx2_c3_lda_row(int warp, int mt, int lane) {
    return ltx2_c3_warp_row0(warp) + mt * 16 + ltx2_mma_lm_a_row(lane);
}
LTX2_HD int ltx2_c3_lda_col(int ks, int lane) { return ks * 16 + ltx2_mma_lm_a_col(lane); }
LTX2_HD int ltx2_c3_ldb_row(int ks, int lane) { return ks * 16 + ltx2_mma_lm_b_kn_row(lane); }
LTX2_HD int ltx2_c3_ldb_col(int warp, int np, int lane) {
    return ltx2_c3_warp_col0(warp) + np * 16 + ltx2_mma_lm_b_kn_col(lane);
}

/* Tile coordinates of accumulator acc[mt][j][2 * r + h] (its column is ltx2_c3_acc_col + h):
 * C fragment element 2 r of m16n8 tile (mt, j). */
LTX2_HD int ltx2_c3_acc_row(int warp, int mt, int lane, int r) {
    return ltx2_c3_warp_row0(warp) + mt * 16 + ltx2_mma_c_row(lane, 2 * r);
}
LTX2_HD int ltx2_c3_acc_col(int warp, int j, int lane) {
    return ltx2_c3_warp_col0(warp) + j * 8 + ltx2_mma_c_col(lane, 0);
}

/* ---- the sm_90a kernel (conv3d_sm90.cu): wgmma from 128-byte-swizzled shared memory ----
 * Same GEMM view, gather and tap walk as above. A CTA of 2 warpgroups computes 128 rows (64 per
 * warpgroup, the wgmma M) x 128 nb columns (nb m64n128k16 products per k16 step); K advances 64
 * at a time, one 128-byte row of A per output voxel, through a ring of LTX2_C90_STAGES. A tile:
 * [128 rows][64 k] K-major in one swizzled panel. B tile: the packed weight's [64 k][128 nb n]
 * rows, n contiguous (MN-major, wgmma's transposed B) in panels of 64 n. Swizzle, descriptors and
 * accumulator maps are the attention kernel's (att90_layout.h). */
#define LTX2_C90_BM 128
#define LTX2_C90_BK 64
#define LTX2_C90_WGS 2
#define LTX2_C90_THREADS (LTX2_C90_WGS * 128)
#define LTX2_C90_N_PER_WGMMA 128
#define LTX2_C90_NB_MAX 2
#define LTX2_C90_STAGES 4
/* A rows each thread gathers per stage: 128 rows x 8 chunks over 256 threads. */
#define LTX2_C90_A_ROWS_PER_THREAD (LTX2_C90_BM * (LTX2_C90_BK / LTX2_C3_CHUNK) / LTX2_C90_THREADS)
#define LTX2_C90_A_TILE_BYTES (LTX2_C90_BM * A90_ROW_BYTES)
/* One 64-wide panel of B: 64 k rows of 128 bytes. */
#define LTX2_C90_B_PANEL_BYTES (LTX2_C90_BK * A90_ROW_BYTES)
/* B chunks each thread copies per stage and n128 half: 64 rows x 16 chunks over 256 threads. */
#define LTX2_C90_B_CHUNKS_PER_THREAD (LTX2_C90_BK * (LTX2_C90_N_PER_WGMMA / LTX2_C3_CHUNK) / LTX2_C90_THREADS)

#define LTX2_C90_BN(nb) (LTX2_C90_N_PER_WGMMA * (nb))
#define LTX2_C90_B_TILE_BYTES(nb) (LTX2_C90_BN(nb) / A90_PANEL * LTX2_C90_B_PANEL_BYTES)
#define LTX2_C90_STAGE_BYTES(nb) (LTX2_C90_A_TILE_BYTES + LTX2_C90_B_TILE_BYTES(nb))
/* + one swizzle period of slack: the ring starts on a 1024-byte boundary of the shared window. */
#define LTX2_C90_SMEM_BYTES(nb) (LTX2_C90_STAGES * LTX2_C90_STAGE_BYTES(nb) + A90_ATOM_BYTES)
/* 256 columns once c_out fills more than one 128-wide tile. */
LTX2_HD int ltx2_c90_pick_nb(int64_t c_out) { return c_out > LTX2_C90_N_PER_WGMMA ? 2 : 1; }
/* Whether AUTO takes this kernel on 9.x devices. Timed against the mma.sync kernel on an H200
 * (bench/results/NVIDIA_H200-20261127/run2, bench_conv3d, same run): it wins on the decoder's
 * 3x3x3 convs with 256, 512 and 1024 output channels (1.24x, 1.41x, 1.19x) and ties on conv_in
 * (128 -> 1024), but loses at 128 output channels (0.92x), on the 48-channel conv_out (0.71x) and on
 * a 1x1x1 512 -> 256 (0.73x), where its 128 x 256 tile leaves SMs idle or K is one tap short. */
#define LTX2_C90_AUTO_MIN_COUT 256
LTX2_HD int ltx2_c90_auto_picks(int64_t c_out, int64_t taps) {
    return c_out >= LTX2_C90_AUTO_MIN_COUT && taps > 1;
}
LTX2_HD int ltx2_c90_grid(const ltx2_c3_geom *g, int nb, int64_t *gx, int64_t *gy) {
    *gx = (g->M + LTX2_C90_BM - 1) / LTX2_C90_BM;
    *gy = (g->Co + LTX2_C90_BN(nb) - 1) / LTX2_C90_BN(nb);
    return *gx <= LTX2_C3_MAX_GRID_X && *gy <= LTX2_C3_MAX_GRID_Y;
}
/* Thread tid gathers chunk column a_col (elements) of tile rows a_row(tid, i); its 16 bytes land
 * at byte a_dst inside the stage's A tile. */
LTX2_HD int ltx2_c90_a_row(int tid, int i) { return tid / 8 + i * (LTX2_C90_THREADS / 8); }
LTX2_HD int ltx2_c90_a_col(int tid) { return (tid % 8) * LTX2_C3_CHUNK; }
LTX2_HD uint32_t ltx2_c90_a_dst(int row, int col) { return att90_swz(row, col); }
/* B chunk i (< nb * LTX2_C90_B_CHUNKS_PER_THREAD) of thread tid: row (k) and column (n, elements)
 * in the tile, and its byte inside the stage's B tile. */
LTX2_HD int ltx2_c90_b_row(int tid, int i, int nb) {
    return (tid + i * LTX2_C90_THREADS) / (LTX2_C90_BN(nb) / LTX2_C3_CHUNK);
}
LTX2_HD int ltx2_c90_b_col(int tid, int i, int nb) {
    return ((tid + i * LTX2_C90_THREADS) % (LTX2_C90_BN(nb) / LTX2_C3_CHUNK)) * LTX2_C3_CHUNK;
}
LTX2_HD uint32_t ltx2_c90_b_dst(int row, int col) { return att90_tile_off(row, col, LTX2_C90_B_PANEL_BYTES); }
/* Descriptors of k16 step kk: A rows of warpgroup wg (K-major: 32 bytes per step inside the
 * 128-byte row), and n128 product h of B (MN-major: 16 k rows per step; LBO steps to the next
 * 64-column panel, SBO 8 k rows), from the stage's tile addresses in the shared window. */
LTX2_HD uint64_t ltx2_c90_a_desc(uint32_t a_tile, int wg, int kk) {
    return att90_desc(att90_qk_addr(a_tile + (uint32_t)wg * A90_WG_ROWS * A90_ROW_BYTES, LTX2_C90_A_TILE_BYTES, kk),
                      A90_QK_LBO, A90_QK_SBO);
}
LTX2_HD uint64_t ltx2_c90_b_desc(uint32_t b_tile, int h, int kk) {
    const uint32_t start = b_tile + (uint32_t)h * (LTX2_C90_N_PER_WGMMA / A90_PANEL) * LTX2_C90_B_PANEL_BYTES +
                           (uint32_t)kk * 16 * A90_ROW_BYTES;
    return att90_desc(start, LTX2_C90_B_PANEL_BYTES, A90_ATOM_BYTES);
}
/* The ring: k-tile kt lives in slot kt % STAGES. Loads run STAGES - 2 tiles ahead of the one the
 * tensor cores read, because one wgmma group stays in flight past the barrier (the slot a load
 * refills last held k-tile kt - 2, whose wgmma every warpgroup has waited for). */
#define LTX2_C90_AHEAD (LTX2_C90_STAGES - 2)

#endif
