/* Checks the mma.sync index arithmetic of kernels/mma_layout.h (used by kernels/attention.cu)
 * against an emulation of the two warp instructions written from the PTX ISA text, not from the
 * header:
 * - ldmatrix.sync.aligned.m8n8.x4{.trans}.b16 ("Warp-level matrix load instruction: ldmatrix"):
 *   threads 8i..8i+7 supply the row addresses addr0..addr7 of matrix i; "each thread in a warp
 *   loads fragments of a row, with thread 0 receiving the first fragment in its register r, and
 *   so on. A group of four threads loads an entire row"; matrix i goes to destination register i;
 *   ".trans indicates that the matrix is loaded in column-major format".
 * - mma.m16n8k16 .bf16 ("Matrix Fragments for mma.m16n8k16 with floating point type"): the
 *   groupID / threadID_in_group formulas for a0..a7, b0..b3 and c0..c3, elements low to high
 *   in each .b32 register.
 * Then it runs the attention kernel's S = Q K^T and O = P V sequence for one warp through the
 * emulated instructions and compares with plain matrix products (small integers held as floats,
 * so every sum is exact), checks the quad xor-shuffle row reductions, and checks that the padded
 * shared rows are 16-byte aligned and free of bank conflicts. No GPU needed. */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "mma_layout.h"
#include "test_util.h"

#define WARP 32
/* The attention kernel's key tile (ATT_BN in kernels/attention.cu) and its head dims. */
#define KEYS 64
#define MAX_D 128
/* Shared memory: 32 banks of 4 bytes. */
#define BANKS 32
#define BANK_BYTES 4

/* One .b32 register holding two 16-bit elements, the lower-numbered element in the low half. */
typedef struct reg2 {
    float lo, hi;
} reg2;

/* ---- the documented semantics ---------------------------------------------------------------- */

/* ldmatrix.m8n8.x4: smem holds 16-bit elements (as floats here), addr[t] is thread t's element
 * offset of a row start. */
static void emu_ldmatrix_x4(const float *smem, const int addr[WARP], bool trans, reg2 out[WARP][4]) {
    for (int m = 0; m < 4; m++) {
        const int *rows = addr + 8 * m; /* addr0..addr7 of matrix m come from threads 8m..8m+7 */
        for (int t = 0; t < WARP; t++) {
            const int frag_row = t / 4;       /* a group of four threads per row */
            const int first = (t % 4) * 2;    /* the 4 fragments of a row: 2 elements each */
            if (!trans) {
                out[t][m].lo = smem[rows[frag_row] + first];
                out[t][m].hi = smem[rows[frag_row] + first + 1];
            } else { /* column-major: the delivered row is a stored column */
                out[t][m].lo = smem[rows[first] + frag_row];
                out[t][m].hi = smem[rows[first + 1] + frag_row];
            }
        }
    }
}

/* Position of element a_i (i < 8) held by lane in the 16x16 A matrix. */
static void doc_a_pos(int lane, int i, int *row, int *col) {
    const int groupID = lane >> 2, threadID_in_group = lane % 4;
    *row = ((0 <= i && i < 2) || (4 <= i && i < 6)) ? groupID : groupID + 8;
    *col = i < 4 ? (threadID_in_group * 2) + (i & 0x1) : (threadID_in_group * 2) + (i & 0x1) + 8;
}
/* Position of b_i (i < 4) in the 16x8 (k x n) B matrix. */
static void doc_b_pos(int lane, int i, int *row, int *col) {
    const int groupID = lane >> 2, threadID_in_group = lane % 4;
    *row = i < 2 ? (threadID_in_group * 2) + (i & 0x1) : (threadID_in_group * 2) + (i & 0x1) + 8;
    *col = groupID;
}
/* Position of c_i (i < 4) in the 16x8 C/D matrix. */
static void doc_c_pos(int lane, int i, int *row, int *col) {
    const int groupID = lane >> 2, threadID_in_group = lane % 4;
    *row = i < 2 ? groupID : groupID + 8;
    *col = (threadID_in_group * 2) + (i & 0x1);
}

static float reg_half(reg2 r, int h) { return h ? r.hi : r.lo; }

/* d += A B for one warp: a[lane][0..3] hold a0..a7, b0[lane], b1[lane] hold b0..b3. (a is not
 * const: C11 cannot pass a 2-D array to a pointer to const rows without a cast.) */
static void emu_mma(float d[WARP][4], reg2 a[WARP][4], const reg2 b0[WARP], const reg2 b1[WARP]) {
    float A[16][16], B[16][8], D[16][8];
    for (int t = 0; t < WARP; t++) {
        for (int i = 0; i < 8; i++) {
            int r, c;
            doc_a_pos(t, i, &r, &c);
            A[r][c] = reg_half(a[t][i / 2], i % 2);
        }
        for (int i = 0; i < 4; i++) {
            int r, c;
            doc_b_pos(t, i, &r, &c);
            B[r][c] = reg_half(i < 2 ? b0[t] : b1[t], i % 2);
            doc_c_pos(t, i, &r, &c);
            D[r][c] = d[t][i];
        }
    }
    for (int r = 0; r < 16; r++)
        for (int c = 0; c < 8; c++)
            for (int k = 0; k < 16; k++) D[r][c] += A[r][k] * B[k][c];
    for (int t = 0; t < WARP; t++)
        for (int i = 0; i < 4; i++) {
            int r, c;
            doc_c_pos(t, i, &r, &c);
            d[t][i] = D[r][c];
        }
}

/* ---- checks ----------------------------------------------------------------------------------- */

/* The documented maps cover each matrix element exactly once (guards the emulator itself). */
static void check_doc_maps_bijective(void) {
    int seen_a[16][16] = {{0}}, seen_b[16][8] = {{0}}, seen_c[16][8] = {{0}};
    for (int t = 0; t < WARP; t++) {
        for (int i = 0; i < 8; i++) {
            int r, c;
            doc_a_pos(t, i, &r, &c);
            seen_a[r][c]++;
        }
        for (int i = 0; i < 4; i++) {
            int r, c;
            doc_b_pos(t, i, &r, &c);
            seen_b[r][c]++;
            doc_c_pos(t, i, &r, &c);
            seen_c[r][c]++;
        }
    }
    int bad = 0;
    for (int r = 0; r < 16; r++)
        for (int c = 0; c < 16; c++) bad += seen_a[r][c] != 1 || (c < 8 && (seen_b[r][c] != 1 || seen_c[r][c] != 1));
    CHECK(bad == 0, "documented fragment maps: %d elements not owned exactly once", bad);
}

/* The header's accumulator map is the documented one. */
static void check_c_map(void) {
    int bad = 0;
    for (int t = 0; t < WARP; t++)
        for (int i = 0; i < 4; i++) {
            int r, c;
            doc_c_pos(t, i, &r, &c);
            bad += ltx2_mma_c_row(t, i) != r || ltx2_mma_c_col(t, i) != c;
        }
    CHECK(bad == 0, "ltx2_mma_c_row/col: %d of 128 (lane, reg) differ from the PTX C layout", bad);
}

/* smem[e] = e: every element is its own offset, so a loaded value says where it came from. */
static void fill_iota(float *smem, int n) {
    for (int e = 0; e < n; e++) smem[e] = (float)e;
}

/* A operand: the tile at (row0, col0) of a padded tile with ld elements per row. */
static void check_a_load(int ld, int row0, int col0) {
    static float smem[16 * 4 * (MAX_D + LTX2_MMA_SMEM_PAD)];
    fill_iota(smem, 64 * ld);
    int addr[WARP];
    for (int t = 0; t < WARP; t++)
        addr[t] = ltx2_mma_smem_off(row0 + ltx2_mma_lm_a_row(t), col0 + ltx2_mma_lm_a_col(t), ld);
    reg2 got[WARP][4];
    emu_ldmatrix_x4(smem, addr, false, got);
    int bad = 0;
    for (int t = 0; t < WARP; t++)
        for (int i = 0; i < 8; i++) {
            int r, c;
            doc_a_pos(t, i, &r, &c);
            bad += reg_half(got[t][i / 2], i % 2) != (float)((row0 + r) * ld + col0 + c);
        }
    CHECK(bad == 0, "A via ldmatrix.x4 (ld %d, tile %d,%d): %d of 256 elements misplaced", ld, row0, col0, bad);
}

/* B operands of n-tiles 0 and 1 from a [n][k] tile (no .trans) or a [k][n] tile (.trans). */
static void check_b_load(int ld, int row0, int col0, bool kn) {
    static float smem[64 * (MAX_D + LTX2_MMA_SMEM_PAD)];
    fill_iota(smem, 64 * ld);
    int addr[WARP];
    for (int t = 0; t < WARP; t++)
        addr[t] = kn ? ltx2_mma_smem_off(row0 + ltx2_mma_lm_b_kn_row(t), col0 + ltx2_mma_lm_b_kn_col(t), ld)
                     : ltx2_mma_smem_off(row0 + ltx2_mma_lm_b_nk_row(t), col0 + ltx2_mma_lm_b_nk_col(t), ld);
    reg2 got[WARP][4];
    emu_ldmatrix_x4(smem, addr, kn, got);
    int bad = 0;
    for (int t = 0; t < WARP; t++)
        for (int nt = 0; nt < 2; nt++)
            for (int i = 0; i < 4; i++) {
                int k, n;
                doc_b_pos(t, i, &k, &n);
                n += 8 * nt;
                const int want = kn ? (row0 + k) * ld + col0 + n : (row0 + n) * ld + col0 + k;
                bad += reg_half(got[t][ltx2_mma_lm_b_reg(nt, i / 2)], i % 2) != (float)want;
            }
    CHECK(bad == 0, "B via ldmatrix.x4%s from a %s tile (ld %d, tile %d,%d): %d of 256 elements misplaced",
          kn ? ".trans" : "", kn ? "[k][n]" : "[n][k]", ld, row0, col0, bad);
}

/* Two C tiles (n 0-7, n 8-15) re-read as the A operand of a 16-wide k block. */
static void check_c_to_a(void) {
    int bad = 0;
    for (int t = 0; t < WARP; t++)
        for (int i = 0; i < 8; i++) {
            int ar, ac, cr, cc;
            doc_a_pos(t, i, &ar, &ac);
            const int reg = i / 2;
            doc_c_pos(t, ltx2_mma_a_from_c_elem(reg) + i % 2, &cr, &cc);
            cc += 8 * ltx2_mma_a_from_c_tile(reg);
            bad += ar != cr || ac != cc;
        }
    CHECK(bad == 0, "C -> A reuse: %d of 256 A elements are not the accumulator of the same (row, col)", bad);
}

/* Deterministic small integers in [-2, 2]. */
static float small_int(uint32_t *s) {
    *s = *s * 1664525u + 1013904223u;
    return (float)((int)((*s >> 24) % 5u) - 2);
}

/* The kernel's per-warp sequence for head dim d: S = Q K^T over a 64-key tile through the
 * emulated ldmatrix/mma with the header's maps, the quad reductions of S rows, then O = P V with
 * P taken straight from the S accumulators. Compared with plain products. */
static void check_attention_chain(int d) {
    const int ld = d + LTX2_MMA_SMEM_PAD, kt = d / 16, nt_s = KEYS / 8;
    static float q[16][MAX_D], k[KEYS][MAX_D], v[KEYS][MAX_D], s_ref[16][KEYS];
    static float qs[16 * (MAX_D + LTX2_MMA_SMEM_PAD)], ks[KEYS * (MAX_D + LTX2_MMA_SMEM_PAD)],
        vs[KEYS * (MAX_D + LTX2_MMA_SMEM_PAD)];
    uint32_t seed = 12345u + (uint32_t)d;
    memset(qs, 0, sizeof qs);
    memset(ks, 0, sizeof ks);
    memset(vs, 0, sizeof vs);
    for (int r = 0; r < 16; r++)
        for (int c = 0; c < d; c++) qs[r * ld + c] = q[r][c] = small_int(&seed);
    for (int r = 0; r < KEYS; r++)
        for (int c = 0; c < d; c++) {
            ks[r * ld + c] = k[r][c] = small_int(&seed);
            vs[r * ld + c] = v[r][c] = small_int(&seed);
        }
    for (int r = 0; r < 16; r++)
        for (int j = 0; j < KEYS; j++) {
            float acc = 0.0f;
            for (int c = 0; c < d; c++) acc += q[r][c] * k[j][c];
            s_ref[r][j] = acc;
        }

    /* S = Q K^T */
    static reg2 qf[MAX_D / 16][WARP][4];
    static float s[KEYS / 8][WARP][4];
    memset(s, 0, sizeof s);
    int addr[WARP];
    for (int kk = 0; kk < kt; kk++) {
        for (int t = 0; t < WARP; t++)
            addr[t] = ltx2_mma_smem_off(ltx2_mma_lm_a_row(t), kk * 16 + ltx2_mma_lm_a_col(t), ld);
        emu_ldmatrix_x4(qs, addr, false, qf[kk]);
    }
    for (int kk = 0; kk < kt; kk++)
        for (int np = 0; np < nt_s / 2; np++) {
            reg2 bfr[WARP][4], b0[WARP], b1[WARP];
            for (int t = 0; t < WARP; t++)
                addr[t] = ltx2_mma_smem_off(np * 16 + ltx2_mma_lm_b_nk_row(t), kk * 16 + ltx2_mma_lm_b_nk_col(t), ld);
            emu_ldmatrix_x4(ks, addr, false, bfr);
            for (int nt = 0; nt < 2; nt++) {
                for (int t = 0; t < WARP; t++) {
                    b0[t] = bfr[t][ltx2_mma_lm_b_reg(nt, 0)];
                    b1[t] = bfr[t][ltx2_mma_lm_b_reg(nt, 1)];
                }
                emu_mma(s[2 * np + nt], qf[kk], b0, b1);
            }
        }
    int bad = 0;
    for (int j = 0; j < nt_s; j++)
        for (int t = 0; t < WARP; t++)
            for (int e = 0; e < 4; e++)
                bad += s[j][t][e] != s_ref[ltx2_mma_c_row(t, e)][j * 8 + ltx2_mma_c_col(t, e)];
    CHECK(bad == 0, "d%d: S = Q K^T through ldmatrix/mma: %d of %d scores differ from the plain product", d, bad,
          16 * KEYS);

    /* Row sums and maxima with the kernel's two xor-shuffles: every lane ends with its rows'. */
    for (int half = 0; half < 2; half++) {
        float sum[WARP], mx[WARP];
        for (int t = 0; t < WARP; t++) {
            sum[t] = 0.0f;
            mx[t] = -1e30f;
            for (int j = 0; j < nt_s; j++)
                for (int e = 2 * half; e < 2 * half + 2; e++) {
                    sum[t] += s[j][t][e];
                    mx[t] = s[j][t][e] > mx[t] ? s[j][t][e] : mx[t];
                }
        }
        const int masks[2] = {LTX2_MMA_ROW_XOR_1, LTX2_MMA_ROW_XOR_2};
        for (int step = 0; step < 2; step++) {
            float ns[WARP], nm[WARP];
            for (int t = 0; t < WARP; t++) { /* __shfl_xor_sync: lane t reads lane t ^ mask */
                const int src = t ^ masks[step];
                ns[t] = sum[t] + sum[src];
                nm[t] = mx[src] > mx[t] ? mx[src] : mx[t];
            }
            memcpy(sum, ns, sizeof sum);
            memcpy(mx, nm, sizeof mx);
        }
        int bad_r = 0;
        for (int t = 0; t < WARP; t++) {
            const int row = ltx2_mma_c_row(t, 2 * half);
            float rs = 0.0f, rm = -1e30f;
            for (int j = 0; j < KEYS; j++) {
                rs += s_ref[row][j];
                rm = s_ref[row][j] > rm ? s_ref[row][j] : rm;
            }
            bad_r += sum[t] != rs || mx[t] != rm;
        }
        CHECK(bad_r == 0, "d%d: quad xor-shuffle row reduction (row half %d): %d lanes lack their row's sum/max", d,
              half, bad_r);
    }

    /* O = P V with P = S (kept exact: the layout, not bf16 rounding, is under test). */
    static float o[MAX_D / 8][WARP][4];
    memset(o, 0, sizeof o);
    for (int kk = 0; kk < KEYS / 16; kk++) {
        reg2 pa[WARP][4];
        for (int t = 0; t < WARP; t++)
            for (int r = 0; r < 4; r++) {
                const float *c = s[2 * kk + ltx2_mma_a_from_c_tile(r)][t] + ltx2_mma_a_from_c_elem(r);
                pa[t][r].lo = c[0];
                pa[t][r].hi = c[1];
            }
        for (int dp = 0; dp < d / 16; dp++) {
            reg2 bfr[WARP][4], b0[WARP], b1[WARP];
            for (int t = 0; t < WARP; t++)
                addr[t] = ltx2_mma_smem_off(kk * 16 + ltx2_mma_lm_b_kn_row(t), dp * 16 + ltx2_mma_lm_b_kn_col(t), ld);
            emu_ldmatrix_x4(vs, addr, true, bfr);
            for (int nt = 0; nt < 2; nt++) {
                for (int t = 0; t < WARP; t++) {
                    b0[t] = bfr[t][ltx2_mma_lm_b_reg(nt, 0)];
                    b1[t] = bfr[t][ltx2_mma_lm_b_reg(nt, 1)];
                }
                emu_mma(o[2 * dp + nt], pa, b0, b1);
            }
        }
    }
    bad = 0;
    for (int j = 0; j < d / 8; j++)
        for (int t = 0; t < WARP; t++)
            for (int e = 0; e < 4; e++) {
                const int row = ltx2_mma_c_row(t, e), col = j * 8 + ltx2_mma_c_col(t, e);
                float want = 0.0f;
                for (int key = 0; key < KEYS; key++) want += s_ref[row][key] * v[key][col];
                bad += o[j][t][e] != want;
            }
    CHECK(bad == 0, "d%d: O = P V through C->A reuse and ldmatrix.trans: %d of %d outputs differ", d, bad, 16 * d);
}

/* The lanes that own one accumulator row are exactly a lane and its partners under the two
 * xor distances, so two shuffle steps reduce a row and never mix rows. */
static void check_row_quads(void) {
    const int m1 = LTX2_MMA_ROW_XOR_1, m2 = LTX2_MMA_ROW_XOR_2;
    CHECK(m1 > 0 && m2 > 0 && m1 < WARP && m2 < WARP && m1 != m2 && (m1 ^ m2) != 0,
          "row xor masks %d, %d do not span 4 lanes", m1, m2);
    int bad = 0;
    for (int row = 0; row < 16; row++) {
        bool owns[WARP] = {false};
        int n = 0, any = -1;
        for (int t = 0; t < WARP; t++)
            for (int i = 0; i < 4; i++) {
                int r, c;
                doc_c_pos(t, i, &r, &c);
                if (r == row && !owns[t]) {
                    owns[t] = true;
                    n++;
                    any = t;
                }
            }
        bool closed = n == 4;
        for (int t = 0; closed && t < WARP; t++)
            closed = owns[t] == (t == any || t == (any ^ m1) || t == (any ^ m2) || t == (any ^ m1 ^ m2));
        bad += !closed;
    }
    CHECK(bad == 0, "%d accumulator rows are not owned by exactly {L, L^%d, L^%d, L^%d}", bad, m1, m2, m1 ^ m2);
}

/* Every ldmatrix row address the kernel forms is 16-byte aligned, and the 8 rows of each 8x8
 * matrix (one shared-memory wavefront) touch 32 different banks. */
static void check_banks(int d) {
    const int ld = d + LTX2_MMA_SMEM_PAD;
    int misaligned = 0, conflicted = 0;
    for (int form = 0; form < 3; form++)
        for (int tr = 0; tr < 64; tr += 16)
            for (int tc = 0; tc < d; tc += 16) {
                int addr[WARP];
                for (int t = 0; t < WARP; t++)
                    addr[t] = form == 0   ? ltx2_mma_smem_off(tr + ltx2_mma_lm_a_row(t), tc + ltx2_mma_lm_a_col(t), ld)
                              : form == 1 ? ltx2_mma_smem_off(tr + ltx2_mma_lm_b_nk_row(t),
                                                              tc + ltx2_mma_lm_b_nk_col(t), ld)
                                          : ltx2_mma_smem_off(tr + ltx2_mma_lm_b_kn_row(t),
                                                              tc + ltx2_mma_lm_b_kn_col(t), ld);
                for (int m = 0; m < 4; m++) {
                    int hits[BANKS] = {0};
                    for (int j = 0; j < 8; j++) {
                        const int byte = addr[8 * m + j] * 2;
                        misaligned += byte % 16 != 0;
                        for (int w = 0; w < 16 / BANK_BYTES; w++) hits[(byte / BANK_BYTES + w) % BANKS]++;
                    }
                    for (int b = 0; b < BANKS; b++) conflicted += hits[b] > 1;
                }
            }
    CHECK(misaligned == 0, "d%d (ld %d): %d ldmatrix row addresses not 16-byte aligned", d, ld, misaligned);
    CHECK(conflicted == 0, "d%d (ld %d): %d bank conflicts in ldmatrix wavefronts", d, ld, conflicted);
}

int main(void) {
    check_doc_maps_bijective();
    check_c_map();
    check_c_to_a();
    check_row_quads();
    for (int d = 64; d <= MAX_D; d *= 2) {
        const int ld = d + LTX2_MMA_SMEM_PAD;
        for (int r0 = 0; r0 < 64; r0 += 16)
            for (int c0 = 0; c0 < d; c0 += 16) {
                check_a_load(ld, r0, c0);
                check_b_load(ld, r0, c0, false);
                check_b_load(ld, r0, c0, true);
            }
        check_attention_chain(d);
        check_banks(d);
    }
    return test_finish();
}
