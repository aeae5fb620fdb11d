/* Checks the sm_90a attention kernel's layout arithmetic (kernels/att90_layout.h) on the CPU
 * against an emulation written from the documentation, not from the kernel:
 *  - TMA with CU_TENSOR_MAP_SWIZZLE_128B writes a box of 128-byte rows densely from the
 *    destination and permutes 16-byte chunks: address bits [4:6] ^= bits [7:9] (the 8x8 atom of
 *    16-byte units of PTX ISA "Swizzling modes" / Table "swizzle atom layout", anchored on
 *    1024-byte boundaries when the descriptor base offset is 0);
 *  - wgmma decodes a shared-memory operand from its descriptor (PTX ISA "Matrix Descriptor
 *    Format": start, LBO, SBO as (x & 0x3FFFF) >> 4 in bits 0-13, 16-29, 32-45, base offset
 *    49-51, swizzle 62-63 with 1 = 128B) through the canonical layouts of "Canonical Layouts":
 *      K-major 128B:  ((8,m),(T,2k)):((8T,SBO),(1,T))       o Swizzle<3,4,3> on the address
 *      MN-major 128B: ((T,8,m),(8,k)):((1,T,LBO),(8T,SBO))  o Swizzle<3,4,3> on the address
 *    with T = 8 bf16 per 16 bytes;
 *  - the m64nNk16 register fragments of D and of A (PTX ISA "Register Fragments", figures for
 *    wgmma .m64nNk16; the same thread/value -> (row, col) map as CUTLASS's CLayout_64xN and
 *    ALayout_64x16), written as "which thread/register owns element (row, col)";
 *  - mbarrier phases (PTX ISA "mbarrier"): a phase completes when its pending arrivals and its
 *    transaction count are both zero; try_wait.parity(P) succeeds when the phase of parity P
 *    has completed, i.e. when the current phase's parity differs from P.
 * On that emulation it checks that every k16 step of the kernel's S = QK^T and O += PV reads
 * exactly the Q/K/V elements the algorithm needs, that an emulated two-product chain through
 * the kernel's accumulator and P-fragment maps equals a plain matrix product (integer-valued,
 * exact), and that the producer/consumer ring neither deadlocks nor lets a slot be overwritten
 * while read or read before it fully landed, under random interleavings. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "att90_layout.h"
#include "test_util.h"

/* Query rows per CTA (two consumer warpgroups), the Q tile's TMA box height. */
#define QROWS (2 * A90_WG_ROWS)
/* Threads of one warpgroup. */
#define WG_THREADS 128
/* Emulated shared memory: 18 address bits, what a descriptor's start field can reach. */
#define SMEM_BYTES (1u << 18)
/* Where the emulated dynamic tiles start (a 1024-byte boundary past some static smem). */
#define SMEM_BASE 3072u
/* Accumulator registers a thread holds at most: the d = 256 O tile, 64 x 256 over 128 threads. */
#define ACC_MAX 128
/* Random interleavings tried per ring configuration. */
#define RING_SCHEDULES 300

/* ---------------- documented behaviour (independent of att90_layout.h) ---------------- */

static uint32_t doc_sw128(uint32_t a) { return a ^ (((a >> 7) & 7u) << 4); }

/* Byte address TMA writes for byte b of row r of a box with 128-byte rows at dst. */
static uint32_t doc_tma_addr(uint32_t dst, int r, int b) { return doc_sw128(dst + 128u * (uint32_t)r + (uint32_t)b); }

typedef struct {
    uint32_t start, lbo, sbo;
    int base_off, mode;
} doc_desc;

static doc_desc doc_decode(uint64_t d) {
    doc_desc f;
    f.start = (uint32_t)(d & 0x3FFFu) << 4;
    f.lbo = (uint32_t)((d >> 16) & 0x3FFFu) << 4;
    f.sbo = (uint32_t)((d >> 32) & 0x3FFFu) << 4;
    f.base_off = (int)((d >> 49) & 7u);
    f.mode = (int)((d >> 62) & 3u);
    return f;
}

/* Byte address wgmma reads for element (mn, k) of a K-major operand of esz-byte elements (128B
 * swizzle; T = 16 / esz elements per 16 bytes). */
static uint32_t doc_kmajor_e(uint64_t desc, int mn, int k, uint32_t esz) {
    const doc_desc f = doc_decode(desc);
    const uint32_t T = 16 / esz;
    /* ((8,m),(T,2k)) : ((8T,SBO),(1,T)), element strides except SBO (bytes) */
    const uint32_t el = (uint32_t)(mn % 8) * 8 * T + (uint32_t)(k % (int)T) + (uint32_t)(k / (int)T) * T;
    return doc_sw128(f.start + el * esz + (uint32_t)(mn / 8) * f.sbo);
}
static uint32_t doc_kmajor(uint64_t desc, int mn, int k) { return doc_kmajor_e(desc, mn, k, 2); }

/* Byte address wgmma reads for element (k, mn) of an MN-major bf16 operand (128B swizzle). */
static uint32_t doc_mnmajor(uint64_t desc, int k, int mn) {
    const doc_desc f = doc_decode(desc);
    const uint32_t T = 8, esz = 2;
    /* ((T,8,m),(8,k)) : ((1,T,LBO),(8T,SBO)) */
    const uint32_t el = (uint32_t)(mn % (int)T) + (uint32_t)((mn / (int)T) % 8) * T + (uint32_t)(k % 8) * 8 * T;
    return doc_sw128(f.start + el * esz + (uint32_t)(mn / (8 * (int)T)) * f.lbo + (uint32_t)(k / 8) * f.sbo);
}

/* Owner of accumulator element (row, col) of m64nN: thread of the warpgroup and register. */
static void doc_d_owner(int row, int col, int *thread, int *reg) {
    *thread = 32 * (row / 16) + 4 * (row % 8) + (col % 8) / 2;
    *reg = (col % 2) + 2 * ((row % 16) / 8) + 4 * (col / 8);
}

/* Owner of A element (row, k) of m64k16 in registers: thread, .b32 register, half (0 = low). */
static void doc_a_owner(int row, int k, int *thread, int *reg, int *half) {
    *thread = 32 * (row / 16) + 4 * (row % 8) + (k % 8) / 2;
    *reg = (row % 16) / 8 + 2 * (k / 8);
    *half = k % 2;
}

/* Owner of A element (row, k) of m64k32 e4m3 in registers (ALayout_64x32: PTX ISA's wgmma .m64nNk32
 * A fragment): thread, .b32 register, byte (0 = lowest). */
static void doc_a8_owner(int row, int k, int *thread, int *reg, int *byte) {
    *thread = 32 * (row / 16) + 4 * (row % 8) + (k % 16) / 4;
    *reg = (row % 16) / 8 + 2 * (k / 16);
    *byte = k % 4;
}

/* ---------------- emulated shared memory ---------------- */

typedef struct {
    uint32_t *tag; /* per 2-byte slot: which tensor element TMA put there (0 = never written) */
    float *val;    /* its value */
    int collisions;
} smem_emu;

enum { TQ = 1, TK = 2, TV = 3 };

static uint32_t tag_of(int tensor, int tile, int row, int col) {
    return ((uint32_t)tensor << 24) | ((uint32_t)tile << 20) | ((uint32_t)row << 8) | (uint32_t)col;
}

/* Integer-valued test data: Q, K in {-1, 0, 1} (|S| <= d <= 256, exact in bf16), V in -2..2. */
static float data_of(int tensor, int tile, int row, int col) {
    const uint32_t h = (uint32_t)(tensor * 7919 + tile * 104729 + row * 131 + col * 31337) * 2654435761u;
    return tensor == TV ? (float)((int)((h >> 13) % 5u) - 2) : (float)((int)((h >> 13) % 3u) - 1);
}

/* TMA loads of `rows` token rows x d columns of one tensor tile, as d/64 boxes of 64 columns,
 * box p to dst + p * panel_bytes. Returns the bytes the boxes deliver (full boxes). */
static long emu_tma_tile(smem_emu *m, uint32_t dst, uint32_t panel_bytes, int d, int rows, int tensor, int tile) {
    long bytes = 0;
    for (int p = 0; p < d / 64; p++)
        for (int r = 0; r < rows; r++)
            for (int c = 0; c < 64; c++) {
                const uint32_t a = doc_tma_addr(dst + (uint32_t)p * panel_bytes, r, 2 * c);
                if (m->tag[a / 2]) m->collisions++;
                m->tag[a / 2] = tag_of(tensor, tile, r, 64 * p + c);
                m->val[a / 2] = data_of(tensor, tile, r, 64 * p + c);
                bytes += 2;
            }
    return bytes;
}

/* wgmma m64nNk16, A and B K-major in smem: acc[t][i] (+)= per the D fragment layout. */
static void emu_wgmma_ss(const smem_emu *m, float acc[WG_THREADS][ACC_MAX], int n, uint64_t da, uint64_t db,
                         int scale_d) {
    for (int row = 0; row < 64; row++)
        for (int col = 0; col < n; col++) {
            float sum = 0.0f;
            for (int k = 0; k < 16; k++) sum += m->val[doc_kmajor(da, row, k) / 2] * m->val[doc_kmajor(db, col, k) / 2];
            int t, r;
            doc_d_owner(row, col, &t, &r);
            acc[t][r] = (scale_d ? acc[t][r] : 0.0f) + sum;
        }
}

/* wgmma m64nNk16, A from registers (a[t][reg][half]), B MN-major in smem, into the accumulator
 * registers from reg0 on (the kernel's second n128 product at d = 256 writes O's registers 64..). */
static void emu_wgmma_rs(const smem_emu *m, float acc[WG_THREADS][ACC_MAX], int reg0, int n, float a[WG_THREADS][4][2],
                         uint64_t db) {
    for (int row = 0; row < 64; row++)
        for (int col = 0; col < n; col++) {
            float sum = 0.0f;
            for (int k = 0; k < 16; k++) {
                int t, r, h;
                doc_a_owner(row, k, &t, &r, &h);
                sum += a[t][r][h] * m->val[doc_mnmajor(db, k, col) / 2];
            }
            int t, r;
            doc_d_owner(row, col, &t, &r);
            acc[t][reg0 + r] += sum;
        }
}

/* ---------------- checks ---------------- */

static void check_desc_encoding(void) {
    const uint32_t addrs[] = {0u, 1024u, 0x3FFF0u, SMEM_BASE + 32u};
    const uint32_t strides[] = {16u, 1024u, 16384u, 0x3FFF0u};
    int bad = 0;
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++) {
            const doc_desc f = doc_decode(att90_desc(addrs[i], strides[j], strides[3 - j]));
            bad += f.start != addrs[i] || f.lbo != strides[j] || f.sbo != strides[3 - j] || f.base_off != 0 || f.mode != 1;
        }
    CHECK(bad == 0, "%d descriptors decode to other fields than encoded (or not base 0 / 128B swizzle)", bad);
    /* No stray bits outside the documented fields. */
    const uint64_t d = att90_desc(0x3FFF0u, 0x3FFF0u, 0x3FFF0u);
    const uint64_t fields = 0x3FFFull | (0x3FFFull << 16) | (0x3FFFull << 32) | (7ull << 49) | (3ull << 62);
    CHECK((d & ~fields) == 0, "descriptor sets bits outside the documented fields: 0x%016llx", (unsigned long long)d);
}

static void check_generic_swizzle(const smem_emu *m, uint32_t sQ, uint32_t q_panel, int d) {
    int bad = 0, bad_chunk = 0;
    for (int r = 0; r < QROWS; r++)
        for (int c = 0; c < d; c++) {
            const uint32_t a = sQ + att90_tile_off(r, c, q_panel);
            if (m->tag[a / 2] != tag_of(TQ, 0, r, c)) bad++;
        }
    /* Epilogue: a 16-byte read at (row, c), c % 8 == 0, must be columns c..c+7 in order. */
    for (int r = 0; r < QROWS; r++)
        for (int c = 0; c < d; c += 8) {
            const uint32_t a = att90_tile_off(r, c, q_panel);
            if (a % 16) bad_chunk++;
            for (int e = 1; e < 8; e++) bad_chunk += att90_tile_off(r, c + e, q_panel) != a + 2u * (uint32_t)e;
        }
    CHECK(bad == 0, "d=%d: %d Q elements: att90_tile_off disagrees with where TMA SWIZZLE_128B put them", d, bad);
    CHECK(bad_chunk == 0, "d=%d: %d epilogue 16-byte chunks not contiguous columns", d, bad_chunk);
}

/* Every k16 step of S = QK^T (each consumer warpgroup, each stage) and of O += PV (each stage)
 * reads the elements the product needs. */
static void check_operand_reads(const smem_emu *m, uint32_t sQ, uint32_t sK, uint32_t sV, uint32_t q_panel,
                                uint32_t tile_bytes, int d) {
    const int bn = A90_BN_OF(d);
    int bad_a = 0, bad_b = 0, bad_v = 0, bad_align = 0;
    for (int cw = 0; cw < 2; cw++) {
        const uint32_t qa = sQ + (uint32_t)(cw * A90_WG_ROWS * A90_ROW_BYTES);
        bad_align += qa % A90_ATOM_BYTES != 0;
        for (int kk = 0; kk < d / 16; kk++) {
            const uint64_t da = att90_desc(att90_qk_addr(qa, q_panel, kk), A90_QK_LBO, A90_QK_SBO);
            for (int row = 0; row < 64; row++)
                for (int k = 0; k < 16; k++)
                    bad_a += m->tag[doc_kmajor(da, row, k) / 2] != tag_of(TQ, 0, 64 * cw + row, 16 * kk + k);
        }
    }
    for (int st = 0; st < A90_STAGES; st++) {
        const uint32_t kb = sK + (uint32_t)st * tile_bytes, vb = sV + (uint32_t)st * tile_bytes;
        bad_align += kb % A90_ATOM_BYTES != 0 || vb % A90_ATOM_BYTES != 0;
        for (int kk = 0; kk < d / 16; kk++) {
            const uint64_t db = att90_desc(att90_qk_addr(kb, A90_KV_PANEL_BYTES(bn), kk), A90_QK_LBO, A90_QK_SBO);
            for (int n = 0; n < bn; n++)
                for (int k = 0; k < 16; k++) bad_b += m->tag[doc_kmajor(db, n, k) / 2] != tag_of(TK, st, n, 16 * kk + k);
        }
        /* O += PV in products of at most 128 columns of d, each from its first panel (the kernel's
         * two n128 halves at d = 256) */
        const int pv_n = d > 128 ? 128 : d;
        for (int half = 0; half < d / pv_n; half++)
            for (int kk = 0; kk < bn / 16; kk++) {
                const uint32_t vh = vb + (uint32_t)(half * pv_n / A90_PANEL) * A90_KV_PANEL_BYTES(bn);
                const uint64_t db = att90_desc(att90_pv_addr(vh, kk), A90_PV_LBO(bn), A90_PV_SBO);
                for (int k = 0; k < 16; k++)
                    for (int n = 0; n < pv_n; n++)
                        bad_v += m->tag[doc_mnmajor(db, k, n) / 2] != tag_of(TV, st, 16 * kk + k, half * pv_n + n);
            }
    }
    CHECK(bad_align == 0, "d=%d: %d operand bases not on a 1024-byte swizzle period (descriptor base offset 0)", d,
          bad_align);
    CHECK(bad_a == 0, "d=%d: %d Q (A operand) elements read wrong by S = QK^T", d, bad_a);
    CHECK(bad_b == 0, "d=%d: %d K (B operand) elements read wrong by S = QK^T", d, bad_b);
    CHECK(bad_v == 0, "d=%d: %d V (B operand) elements read wrong by O += PV", d, bad_v);
}

/* The accumulator map is the documented D layout read backwards (a bijection onto 64 x n). */
static void check_acc_map(int n) {
    int bad = 0;
    for (int t = 0; t < WG_THREADS; t++)
        for (int i = 0; i < n / 2; i++) {
            const int row = att90_acc_row(t / 32, t % 32, i), col = att90_acc_col(t % 32, i);
            int tt = -1, rr = -1;
            if (row >= 0 && row < 64 && col >= 0 && col < n) doc_d_owner(row, col, &tt, &rr);
            bad += tt != t || rr != i || att90_acc_half(i) != (row % 16) / 8;
        }
    CHECK(bad == 0, "n=%d: %d accumulator registers mapped to another element than the D fragment layout", n, bad);
}

/* The key-mask bit each accumulator register reads (att90_mask_shift / att90_mask_bit) is its own
 * column's, for mask patterns of one key each and a pseudo-random one; the padded word count covers
 * whole tiles. */
static void check_mask_bits(int bn) {
    int bad = 0;
    for (int pat = -1; pat < bn; pat++) {
        uint32_t words[A90_MASK_TILE_WORDS(A90_BN_MAX)] = {0};
        uint8_t key[A90_BN_MAX];
        for (int c = 0; c < bn; c++) {
            key[c] = pat < 0 ? (uint8_t)(((unsigned)c * 2654435761u >> 13) & 1u) : (uint8_t)(c == pat);
            if (key[c]) words[c / 32] |= 1u << (c % 32);
        }
        for (int lane = 0; lane < 32; lane++) {
            uint32_t sh[A90_MASK_TILE_WORDS(A90_BN_MAX)];
            for (int j = 0; j < A90_MASK_TILE_WORDS(bn); j++) sh[j] = words[j] >> att90_mask_shift(lane);
            for (int i = 0; i < bn / 2; i++) bad += att90_mask_bit(sh, i) != key[att90_acc_col(lane, i)];
        }
    }
    CHECK(bad == 0, "bn=%d: %d accumulator registers read another key's mask bit", bn, bad);
    /* padded to whole A90_BN_MAX tiles: every tile of bn keys that starts below Skv has its words */
    const int64_t skv[] = {1, bn - 1, bn, bn + 1, 1000, 1024};
    for (size_t i = 0; i < sizeof skv / sizeof skv[0]; i++) {
        const int64_t w = att90_mask_words(skv[i]), tiles = (skv[i] + bn - 1) / bn;
        const int64_t max_words = A90_MASK_TILE_WORDS(A90_BN_MAX);
        CHECK(w * 32 >= tiles * bn && w % max_words == 0 && (w - max_words) * 32 < skv[i],
              "bn=%d Skv %lld: %lld mask words do not cover whole tiles exactly", bn, (long long)skv[i], (long long)w);
    }
}

/* S = Q K^T by the emulated SS wgmma, P = S packed through att90_pfrag_src, O = P V by the
 * emulated RS wgmma, both read back through att90_acc_row/col; compared with plain products. */
static void check_product_chain(const smem_emu *m, uint32_t sQ, uint32_t sK, uint32_t sV, uint32_t q_panel,
                                uint32_t tile_bytes, int d) {
    static float s[WG_THREADS][ACC_MAX], o[WG_THREADS][ACC_MAX], pf[WG_THREADS][4][2];
    const int bn = A90_BN_OF(d), pv_n = d > 128 ? 128 : d;
    int bad_s = 0, bad_o = 0;
    for (int cw = 0; cw < 2; cw++)
        for (int st = 0; st < A90_STAGES; st++) {
            const uint32_t qa = sQ + (uint32_t)(cw * A90_WG_ROWS * A90_ROW_BYTES);
            const uint32_t kb = sK + (uint32_t)st * tile_bytes, vb = sV + (uint32_t)st * tile_bytes;
            for (int kk = 0; kk < d / 16; kk++)
                emu_wgmma_ss(m, s, bn, att90_desc(att90_qk_addr(qa, q_panel, kk), A90_QK_LBO, A90_QK_SBO),
                             att90_desc(att90_qk_addr(kb, A90_KV_PANEL_BYTES(bn), kk), A90_QK_LBO, A90_QK_SBO), kk > 0);
            static float S[64][A90_BN_MAX];
            for (int row = 0; row < 64; row++)
                for (int j = 0; j < bn; j++) {
                    float ref = 0.0f;
                    for (int c = 0; c < d; c++) ref += data_of(TQ, 0, 64 * cw + row, c) * data_of(TK, st, j, c);
                    S[row][j] = ref;
                }
            for (int t = 0; t < WG_THREADS; t++)
                for (int i = 0; i < bn / 2; i++)
                    bad_s += s[t][i] != S[att90_acc_row(t / 32, t % 32, i)][att90_acc_col(t % 32, i)];
            memset(o, 0, sizeof(o));
            for (int kk = 0; kk < bn / 16; kk++) {
                for (int t = 0; t < WG_THREADS; t++)
                    for (int r = 0; r < 4; r++)
                        for (int h = 0; h < 2; h++) pf[t][r][h] = s[t][att90_pfrag_src(kk, r, h)];
                for (int half = 0; half < d / pv_n; half++) {
                    const uint32_t vh = vb + (uint32_t)(half * pv_n / A90_PANEL) * A90_KV_PANEL_BYTES(bn);
                    emu_wgmma_rs(m, o, half * pv_n / 2, pv_n, pf,
                                 att90_desc(att90_pv_addr(vh, kk), A90_PV_LBO(bn), A90_PV_SBO));
                }
            }
            for (int t = 0; t < WG_THREADS; t++)
                for (int i = 0; i < d / 2; i++) {
                    const int row = att90_acc_row(t / 32, t % 32, i), col = att90_acc_col(t % 32, i);
                    float ref = 0.0f;
                    for (int j = 0; j < bn; j++) ref += S[row][j] * data_of(TV, st, j, col);
                    bad_o += o[t][i] != ref;
                }
        }
    CHECK(bad_s == 0, "d=%d: %d S registers differ from Q K^T", d, bad_s);
    CHECK(bad_o == 0, "d=%d: %d O registers differ from (Q K^T) V", d, bad_o);
}

static void check_layouts(int d) {
    smem_emu m;
    m.tag = calloc(SMEM_BYTES / 2, sizeof(uint32_t));
    m.val = calloc(SMEM_BYTES / 2, sizeof(float));
    m.collisions = 0;
    if (!m.tag || !m.val) {
        CHECK(0, "out of memory");
        free(m.tag);
        free(m.val);
        return;
    }
    /* The kernel's carve-up: Q (QROWS rows), then A90_STAGES K tiles, then A90_STAGES V tiles. */
    const int bn = A90_BN_OF(d);
    const uint32_t q_panel = QROWS * A90_ROW_BYTES, tile_bytes = A90_TILE_BYTES(d, bn);
    const uint32_t sQ = SMEM_BASE, sK = sQ + A90_TILE_BYTES(d, QROWS), sV = sK + A90_STAGES * tile_bytes;
    const long q_bytes = emu_tma_tile(&m, sQ, q_panel, d, QROWS, TQ, 0);
    CHECK(q_bytes == A90_TILE_BYTES(d, QROWS), "d=%d: Q transaction bytes %ld, expect_tx %d", d, q_bytes,
          A90_TILE_BYTES(d, QROWS));
    for (int st = 0; st < A90_STAGES; st++) {
        const long kb = emu_tma_tile(&m, sK + (uint32_t)st * tile_bytes, A90_KV_PANEL_BYTES(bn), d, bn, TK, st);
        const long vb = emu_tma_tile(&m, sV + (uint32_t)st * tile_bytes, A90_KV_PANEL_BYTES(bn), d, bn, TV, st);
        CHECK(kb == tile_bytes && vb == tile_bytes, "d=%d: K/V transaction bytes %ld/%ld, expect_tx %u", d, kb, vb,
              tile_bytes);
    }
    CHECK(m.collisions == 0, "d=%d: %d TMA writes landed on another element's bytes (tiles overlap)", d, m.collisions);
    CHECK(sV + A90_STAGES * tile_bytes <= SMEM_BYTES, "d=%d: tiles exceed the descriptor-addressable 256 KB", d);

    check_generic_swizzle(&m, sQ, q_panel, d);
    check_operand_reads(&m, sQ, sK, sV, q_panel, tile_bytes, d);
    check_product_chain(&m, sQ, sK, sV, q_panel, tile_bytes, d);
    free(m.tag);
    free(m.val);
}

/* ---------------- mbarrier ring ---------------- */

typedef struct {
    int phase, pending, expected;
    long tx;
} mbar;

static void mb_init(mbar *b, int count) {
    b->phase = 0;
    b->pending = b->expected = count;
    b->tx = 0;
}
static void mb_progress(mbar *b) {
    if (b->pending == 0 && b->tx == 0) {
        b->phase++;
        b->pending = b->expected;
    }
}
static void mb_arrive(mbar *b) {
    b->pending--;
    mb_progress(b);
}
/* arrive.expect_tx: the transaction count is raised before the arrival. */
static void mb_arrive_expect_tx(mbar *b, long bytes) {
    b->tx += bytes;
    mb_arrive(b);
}
static void mb_complete_tx(mbar *b, long bytes) {
    b->tx -= bytes;
    mb_progress(b);
}
static int mb_try_wait_parity(const mbar *b, uint32_t parity) { return (uint32_t)(b->phase & 1) != parity; }

#define RING_WARPS 8 /* two consumer warpgroups, each warp arrives once per release */
#define RING_MAX_TILES 9
#define RING_MAX_INFLIGHT 64

typedef struct {
    int tile, landed, readers;
} ring_slot;

typedef struct {
    mbar *bar;
    ring_slot *slot;
    long bytes;
} tma_event;

typedef struct {
    mbar q_full, full[2][A90_STAGES], empty[2][A90_STAGES]; /* [0] = K, [1] = V */
    ring_slot q, slot[2][A90_STAGES];
    tma_event inflight[RING_MAX_INFLIGHT];
    int n_inflight, n_tiles, boxes, violations;
    int prod_t, prod_pc, cons_pc[RING_WARPS], cons_t[RING_WARPS];
    unsigned rng;
} ring;

static unsigned ring_rand(ring *r) {
    r->rng = r->rng * 1103515245u + 12345u;
    return (r->rng >> 16) & 0x7FFFu;
}

/* Producer issues a tile load into a slot: nobody may be reading it. */
static void ring_issue(ring *r, mbar *full, ring_slot *s, int tile, long tile_bytes) {
    if (s->readers) r->violations++;
    s->tile = tile;
    s->landed = 0;
    mb_arrive_expect_tx(full, tile_bytes);
    for (int b = 0; b < r->boxes; b++) {
        tma_event *e = &r->inflight[r->n_inflight++];
        e->bar = full;
        e->slot = s;
        e->bytes = tile_bytes / r->boxes; /* one full box each, tails zero-filled but counted */
    }
}

/* A consumer starts reading a slot: it must hold `tile`, completely landed. */
static void ring_read(ring *r, ring_slot *s, int tile) {
    if (s->tile != tile || s->landed != r->boxes) r->violations++;
    s->readers++;
}

/* One step of the producer; returns 1 if it made progress. */
static int ring_producer_step(ring *r, long tile_bytes) {
    const int t = r->prod_t;
    if (t >= r->n_tiles) return 0;
    const int st = att90_stage(t);
    switch (r->prod_pc) {
    case 0: /* wait K empty */
        if (!mb_try_wait_parity(&r->empty[0][st], att90_empty_parity(t))) return 0;
        ring_issue(r, &r->full[0][st], &r->slot[0][st], t, tile_bytes);
        r->prod_pc = 1;
        return 1;
    default: /* wait V empty */
        if (!mb_try_wait_parity(&r->empty[1][st], att90_empty_parity(t))) return 0;
        ring_issue(r, &r->full[1][st], &r->slot[1][st], t, tile_bytes);
        r->prod_pc = 0;
        r->prod_t++;
        return 1;
    }
}

/* One step of consumer warp w, following the kernel: tile 0's S alone; then per t >= 1 wait K_t
 * and V_{t-1}, release K_t after S_t, V_{t-1} after the PV; finally the last PV. */
static int ring_consumer_step(ring *r, int w) {
    int *pc = &r->cons_pc[w], *t = &r->cons_t[w];
    const int n = r->n_tiles;
    switch (*pc) {
    case 0: /* Q */
        if (!mb_try_wait_parity(&r->q_full, 0)) return 0;
        ring_read(r, &r->q, 0);
        *pc = 1;
        return 1;
    case 1: /* K_0 */
        if (!mb_try_wait_parity(&r->full[0][att90_stage(0)], att90_full_parity(0))) return 0;
        ring_read(r, &r->slot[0][att90_stage(0)], 0);
        *pc = 2;
        return 1;
    case 2: /* S_0 done: release K_0 */
        r->slot[0][att90_stage(0)].readers--;
        mb_arrive(&r->empty[0][att90_stage(0)]);
        *t = 1;
        *pc = 3;
        return 1;
    case 3: /* loop head: both waits */
        if (*t >= n) {
            *pc = 6;
            return 1;
        }
        if (!mb_try_wait_parity(&r->full[0][att90_stage(*t)], att90_full_parity(*t)) ||
            !mb_try_wait_parity(&r->full[1][att90_stage(*t - 1)], att90_full_parity(*t - 1)))
            return 0;
        ring_read(r, &r->slot[0][att90_stage(*t)], *t);
        ring_read(r, &r->slot[1][att90_stage(*t - 1)], *t - 1);
        *pc = 4;
        return 1;
    case 4: /* S_t done: release K_t */
        r->slot[0][att90_stage(*t)].readers--;
        mb_arrive(&r->empty[0][att90_stage(*t)]);
        *pc = 5;
        return 1;
    case 5: /* PV_{t-1} done: release V_{t-1} */
        r->slot[1][att90_stage(*t - 1)].readers--;
        mb_arrive(&r->empty[1][att90_stage(*t - 1)]);
        (*t)++;
        *pc = 3;
        return 1;
    case 6: /* last PV */
        if (!mb_try_wait_parity(&r->full[1][att90_stage(n - 1)], att90_full_parity(n - 1))) return 0;
        ring_read(r, &r->slot[1][att90_stage(n - 1)], n - 1);
        *pc = 7;
        return 1;
    case 7:
        r->slot[1][att90_stage(n - 1)].readers--;
        mb_arrive(&r->empty[1][att90_stage(n - 1)]);
        r->q.readers--;
        *pc = 8;
        return 1;
    default:
        return 0;
    }
}

/* Runs one random interleaving; returns 0 on success, 1 on deadlock; counts violations. */
static int ring_run(int n_tiles, int d, unsigned seed, int *violations) {
    ring r;
    memset(&r, 0, sizeof(r));
    r.n_tiles = n_tiles;
    r.boxes = d / 64;
    r.rng = seed;
    const long tile_bytes = A90_TILE_BYTES(d, A90_BN_OF(d));
    mb_init(&r.q_full, 1);
    for (int kv = 0; kv < 2; kv++)
        for (int s = 0; s < A90_STAGES; s++) {
            mb_init(&r.full[kv][s], 1);
            mb_init(&r.empty[kv][s], RING_WARPS);
            r.slot[kv][s].tile = -1;
        }
    r.q.tile = -1;
    ring_issue(&r, &r.q_full, &r.q, 0, A90_TILE_BYTES(d, QROWS));
    for (;;) {
        int done = r.prod_t >= n_tiles;
        for (int w = 0; w < RING_WARPS; w++) done &= r.cons_pc[w] == 8;
        if (done) break;
        /* agents: 0 = TMA engine, 1 = producer, 2.. = consumer warps; try from a random one */
        const int n_agents = 2 + RING_WARPS, first = (int)(ring_rand(&r) % (unsigned)n_agents);
        int moved = 0;
        for (int k = 0; k < n_agents && !moved; k++) {
            const int a = (first + k) % n_agents;
            if (a == 0) {
                if (!r.n_inflight) continue;
                const int i = (int)(ring_rand(&r) % (unsigned)r.n_inflight);
                tma_event e = r.inflight[i];
                r.inflight[i] = r.inflight[--r.n_inflight];
                if (e.slot->readers) r.violations++; /* landing into a slot being read */
                e.slot->landed++;
                mb_complete_tx(e.bar, e.bytes);
                moved = 1;
            } else if (a == 1) {
                moved = ring_producer_step(&r, tile_bytes);
            } else {
                moved = ring_consumer_step(&r, a - 2);
            }
        }
        if (!moved) return 1;
    }
    *violations += r.violations;
    return 0;
}

static void check_ring(void) {
    for (int d = 64; d <= 256; d *= 2)
        for (int n = 1; n <= RING_MAX_TILES; n++) {
            int deadlocks = 0, violations = 0;
            for (int s = 0; s < RING_SCHEDULES; s++) deadlocks += ring_run(n, d, (unsigned)(s * 7919 + n * 31 + d), &violations);
            CHECK(deadlocks == 0 && violations == 0, "d=%d n_tiles=%d: %d deadlocked schedules, %d slot violations", d, n,
                  deadlocks, violations);
        }
}

/* The fp8 variant: every k32 step of S = QK^T and of O += P V^T reads byte (row, 32 kk + k) of
 * the 128-byte-row tile TMA wrote (both operands K-major e4m3), and the P fragment built from a
 * thread's own S registers (att90_f8_pfrag_src) holds, at A's (row, k), the score of key
 * 32 kk + att90_f8_vperm(k) of that row: the key whose value the pre-pass stored at V^T byte
 * 32 kk + k. */
static void check_f8(void) {
    int bad_perm = 0, bad_read = 0, bad_frag = 0;
    int seen[32] = {0};
    for (int k = 0; k < 32; k++) {
        const int v = att90_f8_vperm(k);
        if (v < 0 || v >= 32 || seen[v]++) bad_perm++;
    }
    const uint32_t base = SMEM_BASE;
    for (int kk = 0; kk < A90_F8_D / A90_F8_K_STEP; kk++) {
        const uint64_t desc = att90_desc(att90_qk_addr(base, A90_F8_BN * A90_ROW_BYTES, kk), A90_QK_LBO, A90_QK_SBO);
        for (int mn = 0; mn < A90_F8_BN; mn++)
            for (int k = 0; k < A90_F8_K_STEP; k++)
                bad_read += doc_kmajor_e(desc, mn, k, 1) != doc_tma_addr(base, mn, A90_F8_K_STEP * kk + k);
        for (int row = 0; row < A90_WG_ROWS; row++)
            for (int k = 0; k < A90_F8_K_STEP; k++) {
                int th, reg, byte, dth, dreg;
                doc_a8_owner(row, k, &th, &reg, &byte);
                doc_d_owner(row, A90_F8_K_STEP * kk + att90_f8_vperm(k), &dth, &dreg);
                bad_frag += dth != th || dreg != att90_f8_pfrag_src(kk, reg, byte);
            }
    }
    CHECK(bad_perm == 0, "att90_f8_vperm is not a permutation of 0..31 (%d repeats or out of range)", bad_perm);
    CHECK(bad_read == 0, "%d e4m3 operand bytes read from elsewhere than TMA put them", bad_read);
    CHECK(bad_frag == 0, "%d e4m3 P-fragment bytes hold another score than key 32kk + att90_f8_vperm(k)", bad_frag);
}

int main(void) {
    check_desc_encoding();
    check_acc_map(128);
    check_acc_map(64);
    check_mask_bits(A90_BN_OF(128));
    check_mask_bits(A90_BN_OF(256));
    check_layouts(64);
    check_layouts(128);
    check_layouts(256);
    check_ring();
    check_f8();
    return test_finish();
}
