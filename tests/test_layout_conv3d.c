/* Runs the conv3d kernel's tiling on the CPU through kernels/conv3d_layout.h (CTA tiles of both
 * widths, k-steps of the 4-stage ring, each thread's walked tap, its 16-byte cp.async chunks with
 * zero fill, ldmatrix lane
 * addresses, mma.m16n8k16 fragments, the epilogue's accumulator -> (m, n) map) and compares the
 * result with a naive convolution written here from ltx-core CausalConv3d's semantics (frames
 * replicated by concatenation, torch zero / reflect spatial padding, then a valid conv) and with
 * the library's CPU conv3d. Data are small integers, exact in bf16 and in float sums, so all
 * three must agree exactly. ldmatrix and mma are emulated from the PTX ISA's fragment tables
 * ("Warp-level matrix load instruction: ldmatrix", "Matrix Fragments for mma.m16n8k16 with
 * floating point type"), independently of kernels/mma.cuh. The emulation also checks that every
 * copy is 16-byte aligned and inside x / the weight, that each shared chunk is written exactly
 * once per k-step, and that ldmatrix only reads elements written for the current k-step. */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conv3d_layout.h"
#include "cpu/cpu_conv3d.h"
#include "test_util.h"

/* Small-integer data ranges: |sum| <= K * 3 * 2 + 8 stays far below 2^24 (exact in float). */
#define X_RANGE 3
#define W_RANGE 2
#define BIAS_RANGE 8
/* bf16 elements in 16 bytes: one cp.async (cp-size 16, naturally aligned source and destination)
 * and one ldmatrix row (8 x b16 at a 16-byte aligned shared address). */
#define ROW16 8

typedef struct conv_case {
    const char *name;
    int64_t n, t, h, w, ci, co, kt, kh, kw, st, sh, sw;
    ltx2_conv_tpad tpad;
    ltx2_conv_spad spad;
    int bias;
} conv_case;

static uint32_t rng_state = 12345u;
static int small_int(int range) {
    rng_state = rng_state * 1664525u + 1013904223u;
    return (int)((rng_state >> 16) % (uint32_t)(2 * range + 1)) - range;
}

/* ---- independent reference: materialise the padded input as torch does, then a valid conv ---- */

static void naive_conv3d(const conv_case *c, const float *x, const float *w_oikkk, const float *bias, float *y,
                         int64_t out[3]) {
    int64_t front = 0, back = 0;
    if (c->tpad == LTX2_CONV_TPAD_CAUSAL || c->tpad == LTX2_CONV_TPAD_CAUSAL_ZEROS) front = c->kt - 1;
    if (c->tpad == LTX2_CONV_TPAD_SYMMETRIC || c->tpad == LTX2_CONV_TPAD_SYMMETRIC_ZEROS) front = back = (c->kt - 1) / 2;
    const bool zeros = c->tpad == LTX2_CONV_TPAD_CAUSAL_ZEROS || c->tpad == LTX2_CONV_TPAD_SYMMETRIC_ZEROS;
    const int64_t ph = c->kh / 2, pw = c->kw / 2;
    const int64_t tp = c->t + front + back, hp = c->h + 2 * ph, wp = c->w + 2 * pw;
    /* time: torch.cat([frame 0] * front, x, [last frame] * back), or F.pad with zero frames in
     * front (-1: a zero frame) */
    int64_t *frame_of = malloc((size_t)tp * sizeof(int64_t));
    int64_t u = 0;
    for (int64_t i = 0; i < front; i++) frame_of[u++] = zeros ? -1 : 0;
    for (int64_t i = 0; i < c->t; i++) frame_of[u++] = i;
    for (int64_t i = 0; i < back; i++) frame_of[u++] = zeros ? -1 : c->t - 1;
    /* space: F.pad(..., mode): padded[p + i] = x[i]; reflect: padded[p - j] = x[j], padded[p + s - 1 + j] = x[s - 1 - j] */
    int64_t *row_of = malloc((size_t)hp * sizeof(int64_t)), *col_of = malloc((size_t)wp * sizeof(int64_t));
    for (int64_t i = 0; i < hp; i++) row_of[i] = -1;
    for (int64_t i = 0; i < wp; i++) col_of[i] = -1;
    for (int64_t i = 0; i < c->h; i++) row_of[ph + i] = i;
    for (int64_t i = 0; i < c->w; i++) col_of[pw + i] = i;
    if (c->spad == LTX2_CONV_SPAD_REFLECT) {
        for (int64_t j = 1; j <= ph; j++) {
            row_of[ph - j] = j;
            row_of[ph + c->h - 1 + j] = c->h - 1 - j;
        }
        for (int64_t j = 1; j <= pw; j++) {
            col_of[pw - j] = j;
            col_of[pw + c->w - 1 + j] = c->w - 1 - j;
        }
    }
    const int64_t ci = c->ci, co = c->co;
    float *xp = calloc((size_t)(c->n * tp * hp * wp * ci), sizeof(float));
    for (int64_t b = 0; b < c->n; b++)
        for (int64_t tt = 0; tt < tp; tt++)
            for (int64_t hh = 0; hh < hp; hh++)
                for (int64_t ww = 0; ww < wp; ww++) {
                    if (frame_of[tt] < 0 || row_of[hh] < 0 || col_of[ww] < 0) continue;
                    const float *s = x + (((b * c->t + frame_of[tt]) * c->h + row_of[hh]) * c->w + col_of[ww]) * ci;
                    memcpy(xp + (((b * tp + tt) * hp + hh) * wp + ww) * ci, s, (size_t)ci * sizeof(float));
                }
    out[0] = (tp - c->kt) / c->st + 1;
    out[1] = (hp - c->kh) / c->sh + 1;
    out[2] = (wp - c->kw) / c->sw + 1;
    for (int64_t b = 0; b < c->n; b++)
        for (int64_t ot = 0; ot < out[0]; ot++)
            for (int64_t oh = 0; oh < out[1]; oh++)
                for (int64_t ow = 0; ow < out[2]; ow++)
                    for (int64_t o = 0; o < co; o++) {
                        float s = bias ? bias[o] : 0.0f;
                        for (int64_t i = 0; i < ci; i++)
                            for (int64_t a = 0; a < c->kt; a++)
                                for (int64_t bb = 0; bb < c->kh; bb++)
                                    for (int64_t e = 0; e < c->kw; e++)
                                        s += xp[(((b * tp + ot * c->st + a) * hp + oh * c->sh + bb) * wp + ow * c->sw + e) * ci + i] *
                                             w_oikkk[(((o * ci + i) * c->kt + a) * c->kh + bb) * c->kw + e];
                        y[(((b * out[0] + ot) * out[1] + oh) * out[2] + ow) * co + o] = s;
                    }
    free(xp);
    free(frame_of);
    free(row_of);
    free(col_of);
}

/* ---- ldmatrix / mma emulation from the PTX ISA fragment tables ---- */

typedef struct reg2 {
    float v[2]; /* the two b16 halves of a .b32 register: v[0] = low half = lower column */
} reg2;

/* ldmatrix.sync.aligned.m8n8.x4[.trans].shared.b16: threads 8i..8i+7 supply the addresses of the
 * 8 rows (8 consecutive b16 each) of matrix i; each thread receives in register i the elements at
 * row lane/4, columns 2*(lane%4) and +1 of matrix i, or with .trans those of the transposed
 * matrix, i.e. rows 2*(lane%4), +1 at column lane/4. addr[] are element offsets into smem. */
static void emu_ldmatrix_x4(const float *smem, const int *stamp, int want_stamp, const int addr[32], int trans,
                            reg2 out[32][4], int *bad) {
    for (int l = 0; l < 32; l++) {
        if (addr[l] % ROW16) (*bad)++;
        for (int c = 0; c < ROW16; c++)
            if (stamp[addr[l] + c] != want_stamp) (*bad)++;
    }
    for (int i = 0; i < 4; i++)
        for (int l = 0; l < 32; l++)
            for (int h = 0; h < 2; h++) {
                const int row = trans ? 2 * (l % 4) + h : l / 4, col = trans ? l / 4 : 2 * (l % 4) + h;
                out[l][i].v[h] = smem[addr[8 * i + row] + col];
            }
}

/* mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32, groupID = lane>>2, threadID_in_group = lane%4:
 * A elements a0..a7 (a_i in register i/2, half i%2): row = groupID for i < 2 or 4 <= i < 6, else
 * groupID + 8; col = tig*2 + (i&1), + 8 for i >= 4. B elements b0..b3: row = tig*2 + (i&1), + 8
 * for i >= 2; col = groupID. C/D c0..c3: row = groupID, + 8 for i >= 2; col = tig*2 + (i&1). */
static void emu_mma(float d[32][4], reg2 a[32][4], const reg2 b_lo[32], const reg2 b_hi[32]) {
    float A[16][16], B[16][8];
    for (int l = 0; l < 32; l++) {
        const int gid = l >> 2, tig = l % 4;
        for (int i = 0; i < 8; i++) {
            const int row = (i < 2 || (i >= 4 && i < 6)) ? gid : gid + 8;
            const int col = tig * 2 + (i & 1) + (i >= 4 ? 8 : 0);
            A[row][col] = a[l][i / 2].v[i % 2];
        }
        for (int i = 0; i < 4; i++) {
            const int row = tig * 2 + (i & 1) + (i >= 2 ? 8 : 0);
            B[row][gid] = (i < 2 ? b_lo[l] : b_hi[l]).v[i % 2];
        }
    }
    for (int l = 0; l < 32; l++) {
        const int gid = l >> 2, tig = l % 4;
        for (int i = 0; i < 4; i++) {
            const int row = gid + (i >= 2 ? 8 : 0), col = tig * 2 + (i & 1);
            float s = 0.0f;
            for (int k = 0; k < 16; k++) s += A[row][k] * B[k][col];
            d[l][i] += s;
        }
    }
}

/* ---- the kernel's schedule on the CPU ---- */

typedef struct emu_stats {
    int64_t bad_copy;   /* misaligned or out-of-bounds cp.async source / destination */
    int64_t bad_cover;  /* a shared chunk written != 1 times in one stage load */
    int64_t bad_read;   /* ldmatrix read of a misaligned row or of an element not loaded this k-step */
    int64_t bad_store;  /* output element written != 1 times, or an odd / out-of-range pair */
    int64_t bad_tap;    /* a walked tap that differs from the division's */
} emu_stats;

/* The shared tiles of the ring and each thread's registers, sized for the widest tile (wn 2). */
#define EMU_THREADS_MAX LTX2_C3_THREADS(LTX2_C3_WN_MAX)
#define EMU_A_ROWS_MAX LTX2_C3_A_ROWS_PER_THREAD(1)
#define EMU_LDB_MAX LTX2_C3_LDB(LTX2_C3_WN_MAX)
typedef struct emu_smem {
    float a[LTX2_C3_STAGES][LTX2_C3_BM * LTX2_C3_LDA], b[LTX2_C3_STAGES][LTX2_C3_BK * EMU_LDB_MAX];
    int a_stamp[LTX2_C3_STAGES][LTX2_C3_BM * LTX2_C3_LDA], b_stamp[LTX2_C3_STAGES][LTX2_C3_BK * EMU_LDB_MAX];
    ltx2_c3_origin org[EMU_THREADS_MAX][EMU_A_ROWS_MAX];
    ltx2_c3_tap tap[EMU_THREADS_MAX]; /* each thread's walked tap for its next load */
    float acc[LTX2_C3_WARPS_M * LTX2_C3_WN_MAX][32][2][LTX2_C3_WARP_N / 8][4];
} emu_smem;

/* One 16-byte cp.async with zero fill: 8 elements from src + off, or zeros when off < 0. */
static void emu_cp_async16(float *dst, int *dst_stamp, int64_t dst_col, int64_t dst_width, const float *src,
                           int64_t off, int64_t src_numel, int stamp, emu_stats *st) {
    if (dst_col % ROW16 || dst_col + ROW16 > dst_width) st->bad_copy++;
    if (off >= 0 && (off % ROW16 || off + ROW16 > src_numel)) {
        st->bad_copy++;
        off = -1;
    }
    for (int c = 0; c < ROW16; c++) {
        dst[c] = off >= 0 ? src[off + c] : 0.0f;
        if (dst_stamp[c] == stamp) st->bad_cover++; /* written twice in this load */
        dst_stamp[c] = stamp;
    }
}

/* Loads k-tile kt into ring slot kt % STAGES as every thread of the kernel does; the tap each
 * thread walked there (ltx2_c3_tap_advance) must be the one the division gives. */
static void emu_load_stage(emu_smem *s, const ltx2_c3_geom *g, int wn, const float *x, int64_t x_numel,
                           const float *w, int64_t w_numel, int64_t kt, int64_t m0, int64_t n0, int stamp,
                           emu_stats *st) {
    const int slot = (int)(kt % LTX2_C3_STAGES), ldb = LTX2_C3_LDB(wn), bn = LTX2_C3_BN(wn);
    const int64_t k0 = kt * LTX2_C3_BK;
    for (int tid = 0; tid < LTX2_C3_THREADS(wn); tid++) {
        const int a_col = ltx2_c3_a_col(tid);
        const int64_t k = k0 + a_col;
        const bool k_ok = k < g->K;
        const ltx2_c3_tap want = ltx2_c3_k_tap(g, k_ok ? k : 0), tap = s->tap[tid];
        if (k_ok && (tap.a != want.a || tap.b != want.b || tap.e != want.e || tap.c != want.c)) st->bad_tap++;
        for (int i = 0; i < LTX2_C3_A_ROWS_PER_THREAD(wn); i++) {
            const int r = ltx2_c3_a_row(tid, i, wn);
            if (r < 0 || r >= LTX2_C3_BM) {
                st->bad_copy++;
                continue;
            }
            const bool row_ok = m0 + r < g->M;
            int64_t off = ltx2_c3_x_offset(g, &s->org[tid][i], &tap);
            if (!k_ok || !row_ok) off = -1;
            emu_cp_async16(&s->a[slot][r * LTX2_C3_LDA + a_col], &s->a_stamp[slot][r * LTX2_C3_LDA + a_col], a_col,
                           LTX2_C3_BK, x, off, x_numel, stamp, st);
        }
        ltx2_c3_tap_advance(g, &s->tap[tid], LTX2_C3_BK);
        for (int i = 0; i < LTX2_C3_B_CHUNKS_PER_THREAD; i++) {
            const int r = ltx2_c3_b_row(tid, i, wn), cc = ltx2_c3_b_col(tid, i, wn);
            if (r < 0 || r >= LTX2_C3_BK) {
                st->bad_copy++;
                continue;
            }
            const int64_t off = ltx2_c3_w_offset(g, k0 + r, n0 + cc);
            emu_cp_async16(&s->b[slot][r * ldb + cc], &s->b_stamp[slot][r * ldb + cc], cc, bn, w, off, w_numel, stamp,
                           st);
        }
    }
    for (int r = 0; r < LTX2_C3_BM; r++)
        for (int c = 0; c < LTX2_C3_BK; c++)
            if (s->a_stamp[slot][r * LTX2_C3_LDA + c] != stamp) st->bad_cover++;
    for (int r = 0; r < LTX2_C3_BK; r++)
        for (int c = 0; c < bn; c++)
            if (s->b_stamp[slot][r * ldb + c] != stamp) st->bad_cover++;
}

/* One warp's k-tile from ring slot `slot`: ldmatrix of its A and B blocks, 2 x 8 mma tiles. */
static void emu_warp_ktile(emu_smem *s, int wn, int warp, int slot, int want_stamp, emu_stats *st) {
    const int ldb = LTX2_C3_LDB(wn);
    for (int ks = 0; ks < LTX2_C3_BK / 16; ks++) {
        reg2 af[2][32][4], bfr[32][4];
        int addr[32];
        int bad = 0;
        for (int mt = 0; mt < 2; mt++) {
            for (int l = 0; l < 32; l++) addr[l] = ltx2_c3_lda_row(warp, mt, l) * LTX2_C3_LDA + ltx2_c3_lda_col(ks, l);
            emu_ldmatrix_x4(s->a[slot], s->a_stamp[slot], want_stamp, addr, 0, af[mt], &bad);
        }
        for (int np = 0; np < LTX2_C3_WARP_N / 16; np++) {
            for (int l = 0; l < 32; l++) addr[l] = ltx2_c3_ldb_row(ks, l) * ldb + ltx2_c3_ldb_col(warp, np, l);
            emu_ldmatrix_x4(s->b[slot], s->b_stamp[slot], want_stamp, addr, 1, bfr, &bad);
            reg2 b0[32], b1[32], b2[32], b3[32];
            for (int l = 0; l < 32; l++) {
                b0[l] = bfr[l][0];
                b1[l] = bfr[l][1];
                b2[l] = bfr[l][2];
                b3[l] = bfr[l][3];
            }
            for (int mt = 0; mt < 2; mt++) {
                float d0[32][4], d1[32][4];
                for (int l = 0; l < 32; l++)
                    for (int i = 0; i < 4; i++) {
                        d0[l][i] = s->acc[warp][l][mt][2 * np][i];
                        d1[l][i] = s->acc[warp][l][mt][2 * np + 1][i];
                    }
                emu_mma(d0, af[mt], b0, b1);
                emu_mma(d1, af[mt], b2, b3);
                for (int l = 0; l < 32; l++)
                    for (int i = 0; i < 4; i++) {
                        s->acc[warp][l][mt][2 * np][i] = d0[l][i];
                        s->acc[warp][l][mt][2 * np + 1][i] = d1[l][i];
                    }
            }
        }
        st->bad_read += bad;
    }
}

/* The kernel's whole schedule for wn warps along N: per CTA, the ring's first STAGES - 1 loads,
 * then per k-tile the load STAGES - 1 ahead into the slot freed by the previous k-tile and the
 * compute of this one (stamps name the load a slot holds: a read of any other is stale). */
static void emu_kernel(const ltx2_k_conv3d_args *args, int wn, const float *x, int64_t x_numel, const float *w,
                       int64_t w_numel, const float *bias, float *y, int *y_writes, emu_stats *st) {
    const ltx2_c3_geom g = ltx2_c3_geom_from_args(args);
    int64_t gx, gy;
    if (!ltx2_c3_grid(&g, wn, &gx, &gy)) {
        st->bad_store++;
        return;
    }
    emu_smem *s = malloc(sizeof(emu_smem));
    const int64_t n_k = (g.K + LTX2_C3_BK - 1) / LTX2_C3_BK;
    const int warps = LTX2_C3_WARPS_M * wn;
    int stamp = 0;
    for (int64_t by = 0; by < gy; by++)
        for (int64_t bx = 0; bx < gx; bx++) {
            const int64_t m0 = bx * LTX2_C3_BM, n0 = by * LTX2_C3_BN(wn);
            for (size_t i = 0; i < sizeof(s->a_stamp) / sizeof(int); i++) (&s->a_stamp[0][0])[i] = -1;
            for (size_t i = 0; i < sizeof(s->b_stamp) / sizeof(int); i++) (&s->b_stamp[0][0])[i] = -1;
            memset(s->acc, 0, sizeof(s->acc));
            for (int tid = 0; tid < LTX2_C3_THREADS(wn); tid++) {
                for (int i = 0; i < LTX2_C3_A_ROWS_PER_THREAD(wn); i++) {
                    const int64_t m = m0 + ltx2_c3_a_row(tid, i, wn);
                    s->org[tid][i] = ltx2_c3_row_origin(&g, m < g.M ? m : 0);
                }
                s->tap[tid] = ltx2_c3_k_tap(&g, ltx2_c3_a_col(tid));
            }
            int slot_stamp[LTX2_C3_STAGES];
            for (int i = 0; i < LTX2_C3_STAGES; i++) slot_stamp[i] = -1;
            for (int64_t kt = 0; kt < LTX2_C3_STAGES - 1 && kt < n_k; kt++) {
                emu_load_stage(s, &g, wn, x, x_numel, w, w_numel, kt, m0, n0, ++stamp, st);
                slot_stamp[kt % LTX2_C3_STAGES] = stamp;
            }
            for (int64_t kt = 0; kt < n_k; kt++) {
                const int64_t kl = kt + LTX2_C3_STAGES - 1;
                if (kl < n_k) {
                    if (kl % LTX2_C3_STAGES == kt % LTX2_C3_STAGES) st->bad_read++; /* refilled while read */
                    emu_load_stage(s, &g, wn, x, x_numel, w, w_numel, kl, m0, n0, ++stamp, st);
                    slot_stamp[kl % LTX2_C3_STAGES] = stamp;
                }
                const int slot = (int)(kt % LTX2_C3_STAGES);
                for (int warp = 0; warp < warps; warp++) emu_warp_ktile(s, wn, warp, slot, slot_stamp[slot], st);
            }
            /* epilogue: pair (n, n + 1) per accumulator pair, bias added */
            for (int warp = 0; warp < warps; warp++)
                for (int l = 0; l < 32; l++)
                    for (int mt = 0; mt < 2; mt++)
                        for (int r = 0; r < 2; r++) {
                            const int64_t m = m0 + ltx2_c3_acc_row(warp, mt, l, r);
                            if (m >= g.M) continue;
                            for (int j = 0; j < LTX2_C3_WARP_N / 8; j++) {
                                const int64_t n = n0 + ltx2_c3_acc_col(warp, j, l);
                                if (n >= g.Co) continue;
                                if (n % 2 || n + 1 >= g.Co) st->bad_store++;
                                for (int h = 0; h < 2 && n + h < g.Co; h++) {
                                    float v = s->acc[warp][l][mt][j][2 * r + h];
                                    if (bias) v += bias[n + h];
                                    y[m * g.Co + n + h] = v;
                                    y_writes[m * g.Co + n + h]++;
                                }
                            }
                        }
        }
    free(s);
}

/* ---- cases ---- */

static void run_case(const conv_case *c) {
    const int64_t taps = c->kt * c->kh * c->kw;
    const int64_t x_numel = c->n * c->t * c->h * c->w * c->ci, w_numel = taps * c->ci * c->co;
    float *x = malloc((size_t)x_numel * sizeof(float)), *wt = malloc((size_t)w_numel * sizeof(float));
    float *wp = malloc((size_t)w_numel * sizeof(float)), *bias = malloc((size_t)c->co * sizeof(float));
    for (int64_t i = 0; i < x_numel; i++) x[i] = (float)small_int(X_RANGE);
    for (int64_t i = 0; i < w_numel; i++) wt[i] = (float)small_int(W_RANGE);
    for (int64_t i = 0; i < c->co; i++) bias[i] = (float)small_int(BIAS_RANGE);
    const float *b = c->bias ? bias : NULL;

    int64_t out[3];
    int64_t y_cap = c->n * (c->t + c->kt) * (c->h + c->kh) * (c->w + c->kw) * c->co; /* >= any output */
    float *y_ref = malloc((size_t)y_cap * sizeof(float));
    naive_conv3d(c, x, wt, b, y_ref, out);
    const int64_t y_numel = c->n * out[0] * out[1] * out[2] * c->co;

    ltx2_context *ctx = ltx2_context_create(NULL);
    const ltx2_conv3d_desc d = {.c_in = c->ci, .c_out = c->co, .kt = c->kt, .kh = c->kh, .kw = c->kw, .st = c->st,
                                .sh = c->sh, .sw = c->sw, .tpad = c->tpad, .spad = c->spad};
    int64_t lib_out[3] = {0, 0, 0};
    CHECK(ltx2_conv3d_out_shape(ctx, &d, c->t, c->h, c->w, lib_out) == LTX2_OK, "%s: out_shape", c->name);
    CHECK(lib_out[0] == out[0] && lib_out[1] == out[1] && lib_out[2] == out[2],
          "%s: library output %lldx%lldx%lld, naive %lldx%lldx%lld", c->name, (long long)lib_out[0],
          (long long)lib_out[1], (long long)lib_out[2], (long long)out[0], (long long)out[1], (long long)out[2]);
    CHECK(ltx2_conv3d_pack_weight(ctx, &d, wt, wp) == LTX2_OK, "%s: pack", c->name);
    float *y_lib = malloc((size_t)y_numel * sizeof(float));
    CHECK(ltx2_cpu_conv3d(ctx, &d, x, c->n, c->t, c->h, c->w, wp, b, y_lib) == LTX2_OK, "%s: cpu conv3d", c->name);

    /* the arguments exactly as the kernel backends fill them (src/backend/backend_kernels.c) */
    int64_t t_front, t_back;
    ltx2_conv3d_tpad_amounts(&d, &t_front, &t_back);
    const ltx2_k_conv3d_args args = {.x = x, .w = wp, .bias = b, .y = y_lib, .n = c->n, .t = c->t, .h = c->h,
                                     .w_ = c->w, .c_in = c->ci, .c_out = c->co, .kt = c->kt, .kh = c->kh,
                                     .kw = c->kw, .st = c->st, .sh = c->sh, .sw = c->sw, .t_front = t_front,
                                     .t_zero = ltx2_conv3d_tpad_zeros(&d), .reflect = c->spad == LTX2_CONV_SPAD_REFLECT, .to = out[0], .ho = out[1],
                                     .wo = out[2], .silu = 0};
    CHECK(ltx2_c3_args_valid(&args), "%s: launcher would refuse valid arguments", c->name);
    int64_t lib_bad = 0;
    for (int64_t i = 0; i < y_numel; i++)
        if (y_lib[i] != y_ref[i]) lib_bad++;
    CHECK(lib_bad == 0, "%s: library CPU conv3d differs from the naive one at %lld of %lld", c->name,
          (long long)lib_bad, (long long)y_numel);
    /* both tile widths on every case, whichever the launcher would pick for this c_out */
    float *y_emu = malloc((size_t)y_numel * sizeof(float));
    int *writes = malloc((size_t)y_numel * sizeof(int));
    for (int wn = 1; wn <= LTX2_C3_WN_MAX; wn++) {
        memset(writes, 0, (size_t)y_numel * sizeof(int));
        emu_stats st = {0, 0, 0, 0, 0};
        emu_kernel(&args, wn, x, x_numel, wp, w_numel, b, y_emu, writes, &st);
        CHECK(st.bad_copy == 0, "%s wn %d: %lld misaligned / out-of-bounds cp.async", c->name, wn,
              (long long)st.bad_copy);
        CHECK(st.bad_cover == 0, "%s wn %d: %lld shared elements not written exactly once per stage", c->name, wn,
              (long long)st.bad_cover);
        CHECK(st.bad_read == 0, "%s wn %d: %lld ldmatrix reads of misaligned rows or stale / unloaded elements",
              c->name, wn, (long long)st.bad_read);
        CHECK(st.bad_tap == 0, "%s wn %d: %lld walked taps differ from the division's", c->name, wn,
              (long long)st.bad_tap);
        int64_t emu_bad = 0, write_bad = 0, first_bad = -1;
        for (int64_t i = 0; i < y_numel; i++) {
            if (writes[i] != 1) write_bad++;
            if (writes[i] != 1 || y_emu[i] != y_ref[i]) {
                if (first_bad < 0) first_bad = i;
                emu_bad++;
            }
        }
        CHECK(write_bad == 0 && st.bad_store == 0, "%s wn %d: %lld outputs not written exactly once, %lld bad pairs",
              c->name, wn, (long long)write_bad, (long long)st.bad_store);
        CHECK(emu_bad == 0, "%s wn %d: emulated kernel differs at %lld of %lld (first flat index %lld: %g vs %g)",
              c->name, wn, (long long)emu_bad, (long long)y_numel, (long long)first_bad,
              first_bad >= 0 ? (double)y_emu[first_bad] : 0.0, first_bad >= 0 ? (double)y_ref[first_bad] : 0.0);
        printf("%-28s wn %d M %6lld N %3lld K %5lld: %s\n", c->name, wn, (long long)(y_numel / c->co),
               (long long)c->co, (long long)(taps * c->ci), emu_bad || lib_bad ? "MISMATCH" : "exact");
    }

    ltx2_context_free(ctx);
    free(x);
    free(wt);
    free(wp);
    free(bias);
    free(y_ref);
    free(y_lib);
    free(y_emu);
    free(writes);
}

/* The launcher's refusals (it must never run what would read out of bounds) and the int64 path
 * for a video whose NDHWC tensor has more than 2^31 elements. */
static void check_args_and_big_offsets(void) {
    const ltx2_k_conv3d_args ok = {.n = 1, .t = 121, .h = 768, .w_ = 512, .c_in = 128, .c_out = 128, .kt = 3,
                                   .kh = 3, .kw = 3, .st = 1, .sh = 1, .sw = 1, .t_front = 2, .reflect = 0,
                                   .to = 121, .ho = 768, .wo = 512};
    CHECK(ltx2_c3_args_valid(&ok), "large video refused");
    ltx2_k_conv3d_args a = ok;
    a.c_in = 12;
    CHECK(!ltx2_c3_args_valid(&a), "c_in 12 accepted");
    a = ok;
    a.c_out = 4;
    CHECK(!ltx2_c3_args_valid(&a), "c_out 4 accepted");
    a = ok;
    a.kh = 2;
    CHECK(!ltx2_c3_args_valid(&a), "even kh accepted");
    a = ok;
    a.wo = 0;
    CHECK(!ltx2_c3_args_valid(&a), "empty output accepted");
    a = ok;
    a.reflect = 1;
    a.h = 1;
    CHECK(!ltx2_c3_args_valid(&a), "reflect pad 1 on H 1 accepted");
    a.h = 2;
    CHECK(ltx2_c3_args_valid(&a), "reflect pad 1 on H 2 refused");

    const ltx2_c3_geom g = ltx2_c3_geom_from_args(&ok);
    int64_t gx = 0, gy = 0;
    CHECK(ltx2_c3_grid(&g, ltx2_c3_pick_wn(ok.c_out), &gx, &gy), "large video grid refused");
    CHECK(gx == (121LL * 768 * 512 + LTX2_C3_BM - 1) / LTX2_C3_BM && gy == 1, "grid %lld x %lld", (long long)gx,
          (long long)gy);
    CHECK(ltx2_c3_pick_wn(48) == 1 && ltx2_c3_pick_wn(64) == 1 && ltx2_c3_pick_wn(72) == 2, "tile width choice");
    const int64_t numel = 121LL * 768 * 512 * 128;
    /* last output voxel, last tap (frame +2, row +1 and col +1 are its own frame/row/col), last channel */
    const ltx2_c3_origin o = ltx2_c3_row_origin(&g, g.M - 1);
    ltx2_c3_tap tp = ltx2_c3_k_tap(&g, g.K - 1);
    CHECK(tp.a == 2 && tp.b == 2 && tp.e == 2 && tp.c == 127, "K-1 -> tap %lld %lld %lld ch %lld", (long long)tp.a,
          (long long)tp.b, (long long)tp.e, (long long)tp.c);
    CHECK(ltx2_c3_x_offset(&g, &o, &tp) == -1, "last voxel, tap (2,2,2) should be bottom/right zero padding");
    tp.b = 1;
    tp.e = 1;
    CHECK(ltx2_c3_x_offset(&g, &o, &tp) == numel - 1, "last element offset %lld, want %lld",
          (long long)ltx2_c3_x_offset(&g, &o, &tp), (long long)(numel - 1));
    /* one frame before the causal front pad: clamped to frame 0 of the last batch item's row */
    const ltx2_c3_origin o0 = ltx2_c3_row_origin(&g, 0);
    tp.a = 0;
    tp.c = 0;
    CHECK(o0.t == -2 && ltx2_c3_x_offset(&g, &o0, &tp) == 0, "first voxel, front pad: frame %lld offset %lld",
          (long long)o0.t, (long long)ltx2_c3_x_offset(&g, &o0, &tp));
    const ltx2_k_conv3d_args wide = {.n = 1, .t = 1, .h = 1, .w_ = 1, .c_in = 8, .c_out = 8 * 64 * 65536, .kt = 1,
                                     .kh = 1, .kw = 1, .st = 1, .sh = 1, .sw = 1, .to = 1, .ho = 1, .wo = 1};
    const ltx2_c3_geom gw = ltx2_c3_geom_from_args(&wide);
    CHECK(!ltx2_c3_grid(&gw, 1, &gx, &gy), "grid.y %lld > 65535 accepted", (long long)gy);
    /* the 32-bit origin and tap fields: extents past LTX2_C3_MAX_EXTENT are refused */
    a = ok;
    a.wo = LTX2_C3_MAX_EXTENT / 2 + 1;
    a.sw = 2;
    CHECK(!ltx2_c3_args_valid(&a), "wo * sw past the 32-bit origin accepted");
    a = ok;
    a.c_in = LTX2_C3_MAX_EXTENT + 8;
    CHECK(!ltx2_c3_args_valid(&a), "c_in past the 32-bit tap accepted");
}

/* The sm_90a kernel's per-k-tile copies (conv3d_sm90.cu): the 256 threads' A chunks cover the
 * swizzled [128][64] tile and their B chunks the [64][128 nb] panels, every 16-byte chunk exactly
 * once and inside its tile; a chunk's destination is where att90's swizzle puts its first element
 * (the map the descriptors assume); and the descriptors' k16 start addresses step as the layout
 * says (A: 32 bytes in the row, B: 16 rows). The emulator runs the kernel itself (test_emu_conv3d). */
static void check_c90_maps(void) {
    static unsigned char hits[LTX2_C90_STAGES * (LTX2_C90_A_TILE_BYTES + 4 * LTX2_C90_B_PANEL_BYTES) / 16];
    for (int nb = 1; nb <= LTX2_C90_NB_MAX; nb++) {
        const int a_chunks = LTX2_C90_A_TILE_BYTES / 16, b_bytes = LTX2_C90_B_TILE_BYTES(nb);
        memset(hits, 0, sizeof hits);
        int bad = 0;
        for (int tid = 0; tid < LTX2_C90_THREADS; tid++) {
            for (int i = 0; i < LTX2_C90_A_ROWS_PER_THREAD; i++) {
                const int r = ltx2_c90_a_row(tid, i), c = ltx2_c90_a_col(tid);
                const uint32_t dst = ltx2_c90_a_dst(r, c);
                if (r >= LTX2_C90_BM || dst % 16 || dst >= (uint32_t)LTX2_C90_A_TILE_BYTES) bad++;
                else hits[dst / 16]++;
            }
            for (int i = 0; i < nb * LTX2_C90_B_CHUNKS_PER_THREAD; i++) {
                const int r = ltx2_c90_b_row(tid, i, nb), c = ltx2_c90_b_col(tid, i, nb);
                const uint32_t dst = ltx2_c90_b_dst(r, c);
                if (r >= LTX2_C90_BK || c >= LTX2_C90_BN(nb) || dst % 16 || dst >= (uint32_t)b_bytes ||
                    dst != att90_tile_off(r, c, LTX2_C90_B_PANEL_BYTES))
                    bad++;
                else hits[a_chunks + dst / 16]++;
            }
        }
        int wrong_count = 0;
        for (int i = 0; i < a_chunks + b_bytes / 16; i++) wrong_count += hits[i] != 1;
        CHECK(bad == 0 && wrong_count == 0, "c90 nb %d: %d chunks out of place, %d tile chunks not written once", nb,
              bad, wrong_count);
        CHECK(LTX2_C90_STAGE_BYTES(nb) % A90_ATOM_BYTES == 0, "c90 nb %d: a stage is not whole swizzle periods", nb);
        CHECK(LTX2_C90_SMEM_BYTES(nb) <= 227 * 1024, "c90 nb %d: %d bytes of shared memory", nb,
              LTX2_C90_SMEM_BYTES(nb));
    }
    /* descriptor start fields (bits 0-13, address >> 4) across the k16 steps */
    const uint32_t tile = 4096;
    for (int kk = 0; kk < LTX2_C90_BK / 16; kk++) {
        const uint32_t a0 = (uint32_t)(ltx2_c90_a_desc(tile, 1, kk) & 0x3FFF) << 4;
        const uint32_t b1 = (uint32_t)(ltx2_c90_b_desc(tile, 1, kk) & 0x3FFF) << 4;
        CHECK(a0 == tile + A90_WG_ROWS * A90_ROW_BYTES + (uint32_t)kk * A90_K16_BYTES, "c90 A desc kk %d: %u", kk, a0);
        CHECK(b1 == tile + 2 * LTX2_C90_B_PANEL_BYTES + (uint32_t)kk * 16 * A90_ROW_BYTES, "c90 B desc kk %d: %u", kk,
              b1);
    }
    CHECK(ltx2_c90_pick_nb(128) == 1 && ltx2_c90_pick_nb(136) == 2, "c90 tile width choice");
    CHECK(ltx2_c90_auto_picks(256, 27) && ltx2_c90_auto_picks(1024, 3) && !ltx2_c90_auto_picks(128, 27) &&
              !ltx2_c90_auto_picks(48, 27) && !ltx2_c90_auto_picks(512, 1), "AUTO picks wgmma where it was timed faster");
}

int main(void) {
    /* Tails: M not a multiple of 128, c_out not of 64, K not of 32 (every case), several CTAs in both
     * grid dims; time: causal (2 copies of frame 0), symmetric (1 in front, 1 behind), none, zero
     * frames in front, and a single frame whose every earlier temporal tap is padding; kh != kw so
     * that row and column terms cannot be swapped unnoticed. */
    static const conv_case cases[] = {
        {"3x3x3 causal zeros", 2, 5, 7, 9, 24, 72, 3, 3, 3, 1, 1, 1, LTX2_CONV_TPAD_CAUSAL, LTX2_CONV_SPAD_ZEROS, 1},
        {"3x3x3 symmetric reflect", 1, 4, 5, 6, 16, 8, 3, 3, 3, 1, 1, 1, LTX2_CONV_TPAD_SYMMETRIC,
         LTX2_CONV_SPAD_REFLECT, 1},
        {"3x3x3 reflect 2x2 frames", 2, 2, 2, 3, 8, 16, 3, 3, 3, 1, 1, 1, LTX2_CONV_TPAD_SYMMETRIC,
         LTX2_CONV_SPAD_REFLECT, 0},
        {"3x3x3 causal one frame", 1, 1, 3, 5, 8, 136, 3, 3, 3, 1, 1, 1, LTX2_CONV_TPAD_CAUSAL,
         LTX2_CONV_SPAD_ZEROS, 1},
        {"3x1x5 reflect (kh != kw)", 2, 3, 4, 6, 16, 24, 3, 1, 5, 1, 1, 1, LTX2_CONV_TPAD_SYMMETRIC,
         LTX2_CONV_SPAD_REFLECT, 1},
        {"1x5x3 causal zeros", 1, 4, 5, 4, 8, 16, 1, 5, 3, 1, 1, 1, LTX2_CONV_TPAD_CAUSAL, LTX2_CONV_SPAD_ZEROS,
         1},
        {"1x1x1", 1, 3, 5, 7, 40, 24, 1, 1, 1, 1, 1, 1, LTX2_CONV_TPAD_CAUSAL, LTX2_CONV_SPAD_ZEROS, 1},
        {"1x1x1 many rows", 3, 3, 9, 11, 8, 8, 1, 1, 1, 1, 1, 1, LTX2_CONV_TPAD_CAUSAL, LTX2_CONV_SPAD_ZEROS, 0},
        {"3x3x3 stride 2 no tpad", 1, 7, 9, 11, 8, 8, 3, 3, 3, 2, 2, 2, LTX2_CONV_TPAD_NONE, LTX2_CONV_SPAD_ZEROS,
         1},
        /* the audio VAE's causal conv: zero frames in front, (3, 1, 3) over (time, 1, mel), and its
         * upsampler's (2, 1, 3); one frame where every earlier tap is a zero */
        {"3x1x3 causal zero frames", 2, 5, 1, 7, 16, 24, 3, 1, 3, 1, 1, 1, LTX2_CONV_TPAD_CAUSAL_ZEROS,
         LTX2_CONV_SPAD_ZEROS, 1},
        {"2x1x3 causal zero frames", 1, 4, 1, 6, 8, 32, 2, 1, 3, 1, 1, 1, LTX2_CONV_TPAD_CAUSAL_ZEROS,
         LTX2_CONV_SPAD_ZEROS, 0},
        {"3x3x3 causal zero frames one frame", 1, 1, 3, 5, 8, 8, 3, 3, 3, 1, 1, 1, LTX2_CONV_TPAD_CAUSAL_ZEROS,
         LTX2_CONV_SPAD_ZEROS, 1},
        {"3x3x3 symmetric zero frames", 2, 3, 4, 5, 8, 16, 3, 3, 3, 1, 1, 1, LTX2_CONV_TPAD_SYMMETRIC_ZEROS,
         LTX2_CONV_SPAD_ZEROS, 1},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) run_case(&cases[i]);
    check_args_and_big_offsets();
    check_c90_maps();
    return test_finish();
}
