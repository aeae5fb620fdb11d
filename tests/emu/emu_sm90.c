/* The sm_90 mechanisms of the CPU emulator, as kernels/attention_sm90.cu uses them, with the
 * semantics of the PTX ISA and the CUDA driver API documentation (not of the kernel's own
 * layout header, which this is meant to check):
 *  - a 32-bit shared-memory window (static objects, then the dynamic region), so descriptors and
 *    swizzles see absolute shared addresses as on the GPU;
 *  - mbarrier (PTX ISA "Parallel Synchronization and Communication Instructions: mbarrier"): a
 *    phase completes when its pending arrival count and its transaction count are both zero;
 *    try_wait.parity P succeeds once the phase of parity P has completed (the current phase's
 *    parity differs from P), so a fresh barrier reports parity 1 complete. A waiter blocks and
 *    counts for the deadlock check;
 *  - TMA (cp.async.bulk.tensor, CUtensorMap from cuTensorMapEncodeTiled): the box lands at issue
 *    (out-of-range elements zero-filled), written densely, innermost dimension first, with the
 *    128-byte swizzle applied to the absolute shared address (16-byte chunk bits [4:6] ^= bits
 *    [7:9]); the whole box's bytes complete the mbarrier's transaction count;
 *  - wgmma (PTX ISA "Asynchronous Warpgroup Level Matrix Multiply-Accumulate"): a warpgroup is 4
 *    consecutive warps; mma_async only records the operation (operand descriptors, and pointers to
 *    each thread's accumulators and A registers), commit_group closes a group, and wait_group N
 *    runs every operation of the older groups, reading shared memory, A and D at that moment;
 *  - named barriers (bar.sync id, count), setmaxnreg (a warpgroup collective, no effect).
 * Two schedules are forced where the GPU may take either: an mbarrier phase that completes
 * releases its waiters and the completing thread then waits until each of them has blocked again
 * or exited (so a producer refills a slot as early as a GPU could), and a TMA write into shared
 * memory that a recorded wgmma has not read yet is a fault (a slot released before the
 * wgmma.wait_group that covers its reads). Everything runs under the block lock. */
#define _DEFAULT_SOURCE
#include "emu_internal.h"
#include "fp8_layout.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The shared window: static objects from LTX2_EMU_SMEM_STATIC_BASE up to the dynamic region. */
#define SM_STATIC_OBJECTS 8
/* Everything a descriptor's 14-bit start field (address >> 4) can reach: 256 KB. */
#define SM_WINDOW_BYTES (1u << 18)
#define SM_CHUNK 16
/* mbarrier limits (PTX ISA): arrival count and tx-count range are 20-bit. */
#define SM_MBARS 64
#define SM_MBAR_MAX_COUNT ((1 << 20) - 1)
#define SM_MBAR_MAX_TX ((1 << 20) - 1)
#define SM_NAMED_BARRIERS 16
#define SM_WG_THREADS 128
#define SM_WG_WARPS 4
/* setmaxnreg's operand range (PTX ISA): 24..256, a multiple of 8. */
#define SM_MAXNREG_MIN 24
#define SM_MAXNREG_MAX 256
/* cuTensorMapEncodeTiled limits (cuda.h documentation). */
#define TM_MAGIC 0x7e45a90cu
#define TM_MAX_RANK 5
#define TM_MAX_BOX 256
#define TM_MAX_ESTRIDE 8
#define TM_MAX_STRIDE (1ull << 40)
#define TM_MAX_DIM (1ull << 32)
#define TM_MAP_ALIGN 64
#define TM_MAP_BYTES 128
/* cp.async.bulk.tensor destination alignment in shared memory. */
#define TMA_DST_ALIGN 128
/* wgmma matrix-descriptor fields (PTX ISA "Matrix Descriptor Format"). */
#define DESC_SWIZZLE_128B 1
#define WG_M 64
/* K of one wgmma: 16 bf16 or 32 e4m3 elements (32 bytes of a row either way). */
#define WG_K_BYTES 32
#define WG_K_MAX 32

/* What the emulated CUtensorMap holds (in its 128 opaque bytes). */
typedef struct emu_tmap {
    uint32_t magic;
    uint8_t rank, esize, interleave, swizzle16; /* swizzle span / 16 (0: none) */
    uint8_t oob, estr[TM_MAX_RANK];
    uint16_t box[TM_MAX_RANK];
    const unsigned char *addr;
    uint64_t dims[TM_MAX_RANK], strides[TM_MAX_RANK - 1];
} emu_tmap;
_Static_assert(sizeof(emu_tmap) <= TM_MAP_BYTES, "emulated tensor map exceeds CUtensorMap");

typedef struct sm_object {
    const void *ptr;
    size_t bytes;
    uint32_t addr;
} sm_object;

typedef struct sm_mbar {
    uint32_t addr;
    int count, pending;
    int64_t tx;
    uint32_t phase;
} sm_mbar;

typedef struct sm_named {
    int arrived, count;
} sm_named;

typedef struct sm_op {
    uint64_t group;
    int n, rs, scale_d, neg_a, neg_b, tnsp_a, tnsp_b;
    int esize; /* operand element bytes: 2 bf16, 1 e4m3 */
    uint64_t da, db;
    float *d[SM_WG_THREADS];
    const uint32_t *a[SM_WG_THREADS];
    const char *file;
    int line;
} sm_op;

typedef struct sm_wg {
    int kind, arrived, exited;
    const char *file;
    int line;
    int fenced; /* a wgmma.fence since the last wait_group */
    uint64_t committed;
    sm_op *ops;
    size_t head, n, cap;
} sm_wg;

typedef struct emu_sm90 {
    sm_object obj[SM_STATIC_OBJECTS];
    int n_obj;
    uint32_t static_top;
    sm_mbar mbar[SM_MBARS];
    int n_mbar;
    sm_named named[SM_NAMED_BARRIERS];
    sm_wg *wg;
    int n_wg;
    uint32_t *reads; /* per 16-byte chunk of the window: element reads of recorded, unrun wgmma */
    float A[WG_M][WG_K_MAX], B[WG_K_MAX][256], D[WG_M][256]; /* one operation's operands (sm_run_op) */
} emu_sm90;

/* ---- block state ---------------------------------------------------------------------------- */

static emu_sm90 *sm_state(emu_launch *L) {
    if (!L->sm90) {
        emu_sm90 *s = calloc(1, sizeof *s);
        if (!s) return NULL;
        s->n_wg = L->nthreads / SM_WG_THREADS;
        s->wg = calloc((size_t)(s->n_wg ? s->n_wg : 1), sizeof *s->wg);
        s->reads = calloc(SM_WINDOW_BYTES / SM_CHUNK, sizeof *s->reads);
        if (!s->wg || !s->reads) {
            free(s->wg);
            free(s->reads);
            free(s);
            return NULL;
        }
        L->sm90 = s;
    }
    return L->sm90;
}

/* The state, or a fault (out of host memory) that unwinds t. Lock held. */
static emu_sm90 *sm_get(emu_thread *t) {
    emu_sm90 *s = sm_state(t->L);
    if (!s) {
        emu_fault_locked(t->L, t, "sm_90 emulation: out of host memory");
        emu_unwind_locked(t);
    }
    return s;
}

void emu_sm90_block_start(emu_launch *L) {
    emu_sm90 *s = L->sm90;
    for (int i = 0; i < L->nthreads; i++) {
        L->threads[i].handoff_owner = NULL;
        L->threads[i].handoff_pending = 0;
        L->threads[i].detail[0] = 0;
    }
    if (!s) return;
    s->n_obj = 0;
    s->static_top = LTX2_EMU_SMEM_STATIC_BASE;
    s->n_mbar = 0;
    memset(s->named, 0, sizeof s->named);
    for (int w = 0; w < s->n_wg; w++) {
        sm_wg *g = &s->wg[w];
        g->kind = K_NONE;
        g->arrived = g->exited = g->fenced = 0;
        g->committed = 0;
        g->head = g->n = 0;
    }
    memset(s->reads, 0, (SM_WINDOW_BYTES / SM_CHUNK) * sizeof *s->reads);
}

void emu_sm90_free(emu_launch *L) {
    emu_sm90 *s = L->sm90;
    if (!s) return;
    for (int w = 0; w < s->n_wg; w++) free(s->wg[w].ops);
    free(s->wg);
    free(s->reads);
    free(s);
    L->sm90 = NULL;
}

/* ---- the shared window ---------------------------------------------------------------------- */

void ltx2_emu_smem_object(void *p, size_t bytes, const char *file, int line) {
    emu_thread *t = emu_enter("shared object");
    emu_sm90 *s = sm_get(t);
    for (int i = 0; i < s->n_obj; i++)
        if (s->obj[i].ptr == p) {
            pthread_mutex_unlock(&t->L->mu);
            return;
        }
    const uint32_t addr = (s->n_obj ? s->static_top : LTX2_EMU_SMEM_STATIC_BASE + 0u);
    const uint32_t at = (addr + 15u) & ~15u;
    if (s->n_obj == SM_STATIC_OBJECTS || at + bytes > LTX2_EMU_SMEM_DYN_BASE) {
        emu_fault_locked(t->L, t, "static shared object (%s:%d) of %zu bytes: the emulated static window 0x%x..0x%x is full",
                         emu_base(file), line, bytes, LTX2_EMU_SMEM_STATIC_BASE, LTX2_EMU_SMEM_DYN_BASE);
        emu_unwind_locked(t);
    }
    s->obj[s->n_obj].ptr = p;
    s->obj[s->n_obj].bytes = bytes;
    s->obj[s->n_obj].addr = at;
    s->n_obj++;
    s->static_top = at + (uint32_t)bytes;
    pthread_mutex_unlock(&t->L->mu);
}

/* Host pointer of window bytes [addr, addr + n), or NULL outside every object. Lock held. */
static unsigned char *sm_ptr(emu_launch *L, uint32_t addr, size_t n) {
    if (addr >= LTX2_EMU_SMEM_DYN_BASE && L->dyn && (uint64_t)addr + n <= LTX2_EMU_SMEM_DYN_BASE + (uint64_t)L->dyn_bytes)
        return L->dyn + (addr - LTX2_EMU_SMEM_DYN_BASE);
    const emu_sm90 *s = L->sm90;
    for (int i = 0; s && i < s->n_obj; i++)
        if (addr >= s->obj[i].addr && (uint64_t)addr + n <= s->obj[i].addr + (uint64_t)s->obj[i].bytes)
            return (unsigned char *)s->obj[i].ptr + (addr - s->obj[i].addr);
    return NULL;
}

uint32_t ltx2_emu_cvta_shared(const void *p, const char *file, int line) {
    emu_thread *t = emu_enter("__cvta_generic_to_shared");
    emu_launch *L = t->L;
    const unsigned char *c = p;
    uint32_t r = 0;
    int found = 0;
    if (L->dyn && c >= L->dyn && c <= L->dyn + L->dyn_bytes) {
        r = LTX2_EMU_SMEM_DYN_BASE + (uint32_t)(c - L->dyn);
        found = 1;
    }
    const emu_sm90 *s = L->sm90;
    for (int i = 0; !found && s && i < s->n_obj; i++) {
        const unsigned char *o = s->obj[i].ptr;
        if (c >= o && c <= o + s->obj[i].bytes) {
            r = s->obj[i].addr + (uint32_t)(c - o);
            found = 1;
        }
    }
    if (!found) {
        emu_fault_locked(L, t, "__cvta_generic_to_shared (%s:%d): %p is not in dynamic shared memory or a registered static shared object",
                         emu_base(file), line, p);
        emu_unwind_locked(t);
    }
    pthread_mutex_unlock(&L->mu);
    return r;
}

/* ---- handoff: a completed phase's waiters run before the thread that completed it ------------- */

void emu_sm90_handoff_done(emu_launch *L, emu_thread *t) {
    emu_thread *o = t->handoff_owner;
    if (!o) return;
    t->handoff_owner = NULL;
    if (--o->handoff_pending == 0 && o->state == S_WAITING && o->kind == K_HANDOFF) emu_release_locked(L, o);
}

/* The completer t waits for the threads it released (lock held; returns with it released). */
static void sm_handoff_wait(emu_thread *t, const char *file, int line) {
    if (t->handoff_pending == 0) {
        pthread_mutex_unlock(&t->L->mu);
        return;
    }
    snprintf(t->detail, sizeof t->detail, "(waiting for %d released threads to block)", t->handoff_pending);
    emu_block(t, K_HANDOFF, file, line);
}

/* ---- mbarriers ------------------------------------------------------------------------------- */

static sm_mbar *sm_find_mbar(emu_sm90 *s, uint32_t addr) {
    for (int i = 0; i < s->n_mbar; i++)
        if (s->mbar[i].addr == addr) return &s->mbar[i];
    return NULL;
}

static sm_mbar *sm_need_mbar(emu_thread *t, uint32_t addr, const char *op, const char *file, int line) {
    emu_sm90 *s = sm_get(t);
    sm_mbar *b = sm_find_mbar(s, addr);
    if (!b) {
        emu_fault_locked(t->L, t, "%s (%s:%d) on shared address 0x%x, which no mbarrier.init initialised", op,
                         emu_base(file), line, addr);
        emu_unwind_locked(t);
    }
    return b;
}

/* The phase completes when nothing is pending: waiters of its parity are released and become
 * t's handoff. Lock held. */
static void sm_mbar_progress(emu_thread *t, sm_mbar *b) {
    if (b->pending != 0 || b->tx != 0) return;
    b->phase++;
    b->pending = b->count;
    emu_launch *L = t->L;
    for (int i = 0; i < L->nthreads; i++) {
        emu_thread *w = &L->threads[i];
        if (w->state != S_WAITING || w->kind != K_MBAR_WAIT || w->wait_bar != b->addr) continue;
        if ((b->phase & 1u) == w->wait_parity) continue; /* waits for the next phase */
        emu_release_locked(L, w);
        w->handoff_owner = t;
        t->handoff_pending++;
    }
}

static void sm_mbar_tx(emu_thread *t, sm_mbar *b, int64_t delta, const char *what, const char *file, int line) {
    b->tx += delta;
    if (b->tx > SM_MBAR_MAX_TX || b->tx < -SM_MBAR_MAX_TX) {
        emu_fault_locked(t->L, t, "%s (%s:%d): mbarrier 0x%x tx-count %lld leaves the range +-(2^20-1)", what,
                         emu_base(file), line, b->addr, (long long)b->tx);
        emu_unwind_locked(t);
    }
}

void ltx2_emu_mbar_init(uint32_t bar, uint32_t count, const char *file, int line) {
    emu_thread *t = emu_enter("mbarrier.init");
    emu_sm90 *s = sm_get(t);
    const char *bad = NULL;
    if (bar & 7u) bad = "address not 8-byte aligned";
    else if (!sm_ptr(t->L, bar, 8)) bad = "address outside shared memory";
    else if (count < 1 || count > SM_MBAR_MAX_COUNT) bad = "count outside 1..2^20-1";
    sm_mbar *b = bad ? NULL : sm_find_mbar(s, bar);
    if (!bad && !b && s->n_mbar == SM_MBARS) bad = "more mbarriers than the emulator tracks";
    for (int i = 0; !bad && b && i < t->L->nthreads; i++)
        if (t->L->threads[i].state == S_WAITING && t->L->threads[i].kind == K_MBAR_WAIT &&
            t->L->threads[i].wait_bar == bar)
            bad = "re-initialised while threads wait on it";
    if (bad) {
        emu_fault_locked(t->L, t, "mbarrier.init (%s:%d) at 0x%x count %u: %s", emu_base(file), line, bar, count, bad);
        emu_unwind_locked(t);
    }
    if (!b) b = &s->mbar[s->n_mbar++];
    b->addr = bar;
    b->count = b->pending = (int)count;
    b->tx = 0;
    b->phase = 0;
    pthread_mutex_unlock(&t->L->mu);
}

void ltx2_emu_mbar_arrive(uint32_t bar, int expect_tx, uint32_t tx_bytes, const char *file, int line) {
    const char *op = expect_tx ? "mbarrier.arrive.expect_tx" : "mbarrier.arrive";
    emu_thread *t = emu_enter(op);
    sm_mbar *b = sm_need_mbar(t, bar, op, file, line);
    if (expect_tx) {
        if (tx_bytes > SM_MBAR_MAX_TX) {
            emu_fault_locked(t->L, t, "%s (%s:%d): %u bytes exceed 2^20-1", op, emu_base(file), line, tx_bytes);
            emu_unwind_locked(t);
        }
        sm_mbar_tx(t, b, tx_bytes, op, file, line);
    }
    if (b->pending == 0) {
        emu_fault_locked(t->L, t, "%s (%s:%d): mbarrier 0x%x has no pending arrival left in phase %u (count %d; the phase waits for tx-count %lld)",
                         op, emu_base(file), line, bar, b->phase, b->count, (long long)b->tx);
        emu_unwind_locked(t);
    }
    b->pending--;
    sm_mbar_progress(t, b);
    sm_handoff_wait(t, file, line);
}

void ltx2_emu_mbar_wait_parity(uint32_t bar, uint32_t parity, const char *file, int line) {
    emu_thread *t = emu_enter("mbarrier.try_wait.parity");
    sm_mbar *b = sm_need_mbar(t, bar, "mbarrier.try_wait.parity", file, line);
    if ((b->phase & 1u) != (parity & 1u)) {
        pthread_mutex_unlock(&t->L->mu);
        return;
    }
    t->wait_bar = bar;
    t->wait_parity = parity & 1u;
    snprintf(t->detail, sizeof t->detail, "[0x%x] parity %u (phase %u pending: %d arrivals, tx %lld)", bar,
             parity & 1u, b->phase, b->pending, (long long)b->tx);
    emu_block(t, K_MBAR_WAIT, file, line);
}

/* ---- tensor maps and TMA ----------------------------------------------------------------------- */

static int tm_bad(const char *what) {
    fprintf(stderr, "[emu] cuTensorMapEncodeTiled: %s -> CUDA_ERROR_INVALID_VALUE\n", what);
    return 1; /* CUDA_ERROR_INVALID_VALUE */
}

int ltx2_emu_tmap_encode(void *map, int elem_bytes, int is_float, unsigned rank, const void *addr,
                         const uint64_t *dims, const uint64_t *strides, const uint32_t *box, const uint32_t *estr,
                         int interleave, int swizzle_bytes, int l2promo, int oob_fill) {
    if (!map || ((uintptr_t)map % TM_MAP_ALIGN)) return tm_bad("tensorMap not 64-byte aligned");
    if (elem_bytes <= 0) return tm_bad("data type unknown to the emulator");
    if (interleave < 0 || interleave > 2) return tm_bad("interleave not a CUtensorMapInterleave");
    if (rank < 1 || rank > TM_MAX_RANK || (interleave && rank < 3)) return tm_bad("rank outside 1..5 (3..5 interleaved)");
    if (!addr || ((uintptr_t)addr % (interleave == 2 ? 32 : 16))) return tm_bad("globalAddress not 16-byte (32 interleaved) aligned");
    if (!dims || !box || !estr || (rank > 1 && !strides)) return tm_bad("NULL array");
    for (unsigned i = 0; i < rank; i++) {
        if (dims[i] == 0 || dims[i] > TM_MAX_DIM) return tm_bad("globalDim outside 1..2^32");
        if (box[i] == 0 || box[i] > TM_MAX_BOX) return tm_bad("boxDim outside 1..256");
        if (estr[i] == 0 || estr[i] > TM_MAX_ESTRIDE) return tm_bad("elementStrides outside 1..8");
    }
    for (unsigned i = 0; i + 1 < rank; i++) {
        if (strides[i] % (interleave == 2 ? 32 : 16) || strides[i] >= TM_MAX_STRIDE)
            return tm_bad("globalStrides not a multiple of 16 (32 interleaved) below 2^40");
        /* each stride spans the previous dimension (the documented padding formula) */
        const uint64_t inner = i == 0 ? dims[0] * (uint64_t)elem_bytes : strides[i - 1] * dims[i];
        if (strides[i] < inner) return tm_bad("globalStrides smaller than the dimension they step over");
    }
    if (!interleave && (box[0] * (uint32_t)elem_bytes) % 16) return tm_bad("boxDim[0] * element size not a multiple of 16");
    if (swizzle_bytes < 0) return tm_bad("swizzle mode not emulated (128B atom variants)");
    if (swizzle_bytes && swizzle_bytes != 32 && swizzle_bytes != 64 && swizzle_bytes != 128) return tm_bad("swizzle not a CUtensorMapSwizzle");
    if (!interleave && swizzle_bytes && box[0] * (uint32_t)elem_bytes > (uint32_t)swizzle_bytes)
        return tm_bad("inner box dimension larger than the swizzle span");
    if (interleave == 2 && swizzle_bytes != 32) return tm_bad("INTERLEAVE_32B needs SWIZZLE_32B");
    if (l2promo < 0 || l2promo > 3) return tm_bad("l2Promotion not a CUtensorMapL2promotion");
    if (oob_fill < 0 || oob_fill > 1 || (oob_fill == 1 && !is_float)) return tm_bad("oobFill NaN on a non-float type");
    emu_tmap m;
    memset(&m, 0, sizeof m);
    m.magic = TM_MAGIC;
    m.rank = (uint8_t)rank;
    m.esize = (uint8_t)elem_bytes;
    m.interleave = (uint8_t)interleave;
    m.swizzle16 = (uint8_t)(swizzle_bytes / 16);
    m.oob = (uint8_t)oob_fill;
    m.addr = addr;
    for (unsigned i = 0; i < rank; i++) {
        m.dims[i] = dims[i];
        m.box[i] = (uint16_t)box[i];
        m.estr[i] = (uint8_t)estr[i];
        if (i + 1 < rank) m.strides[i] = strides[i];
    }
    memset(map, 0, TM_MAP_BYTES);
    memcpy(map, &m, sizeof m);
    return 0;
}

/* The 128-byte swizzle of an absolute shared address: 16-byte chunk index ^= row within the
 * 8-row (1024-byte) period. */
static uint32_t sm_swz128(uint32_t a) { return a ^ (((a >> 7) & 7u) << 4); }

/* Whether a recorded, unrun wgmma reads chunk c; names it in msg. */
static int sm_chunk_busy(const emu_sm90 *s, uint32_t c) { return s->reads[c] != 0; }

void ltx2_emu_tma_load(uint32_t dst, const void *map, uint32_t bar, int rank, const int32_t *coords,
                       const char *file, int line) {
    emu_thread *t = emu_enter("cp.async.bulk.tensor");
    emu_launch *L = t->L;
    emu_sm90 *s = sm_get(t);
    emu_tmap m;
    memcpy(&m, map, sizeof m);
    const char *bad = NULL;
    uint64_t elems = 1;
    if (m.magic != TM_MAGIC) bad = "the tensor map was not encoded by cuTensorMapEncodeTiled";
    else if (m.rank != rank) bad = "the instruction's .dim differs from the tensor map's rank";
    else if (dst % TMA_DST_ALIGN) bad = "destination not 128-byte aligned";
    else if (m.interleave) bad = "interleaved layouts are not emulated";
    else if (m.swizzle16 && m.swizzle16 != 8) bad = "32B / 64B swizzle is not emulated";
    else if (m.swizzle16 && (uint32_t)m.box[0] * m.esize != 128) bad = "128B swizzle with an inner box under 128 bytes is not emulated";
    for (int i = 0; !bad && i < rank; i++) {
        if (i > 0 && m.estr[i] != 1) bad = "elementStrides other than 1 are not emulated";
        elems *= m.box[i];
    }
    const uint64_t bytes = elems * m.esize;
    if (!bad && !sm_ptr(L, dst, bytes)) bad = "the box does not fit in shared memory at the destination";
    if (bad) {
        emu_fault_locked(L, t, "cp.async.bulk.tensor (%s:%d) to 0x%x: %s", emu_base(file), line, dst, bad);
        emu_unwind_locked(t);
    }
    sm_mbar *b = sm_need_mbar(t, bar, "cp.async.bulk.tensor complete_tx", file, line);
    for (uint32_t c = dst / SM_CHUNK; c < (uint32_t)((dst + bytes) / SM_CHUNK); c++) {
        const uint32_t pc = m.swizzle16 ? sm_swz128(c * SM_CHUNK) / SM_CHUNK : c;
        if (sm_chunk_busy(s, pc)) {
            emu_fault_locked(L, t, "cp.async.bulk.tensor (%s:%d) writes shared 0x%x..0x%x, which an issued wgmma.mma_async "
                             "has not read yet (the slot was released before the wgmma.wait_group covering that read)",
                             emu_base(file), line, pc * SM_CHUNK, pc * SM_CHUNK + SM_CHUNK - 1);
            emu_unwind_locked(t);
        }
    }
    /* box element (i0, i1, ...) -> logical byte offset ((.. * box1 + i1) * box0 + i0) * esize */
    int64_t idx[TM_MAX_RANK] = {0};
    for (uint64_t e = 0; e < elems; e++) {
        uint64_t r = e;
        int in = 1;
        const unsigned char *src = m.addr;
        for (int i = 0; i < rank; i++) {
            idx[i] = (int64_t)(r % m.box[i]);
            r /= m.box[i];
            const int64_t g = (int64_t)coords[i] + idx[i];
            if (g < 0 || (uint64_t)g >= m.dims[i]) in = 0;
            else src += (uint64_t)g * (i == 0 ? m.esize : m.strides[i - 1]);
        }
        const uint32_t logical = dst + (uint32_t)(e * m.esize);
        const uint32_t phys = m.swizzle16 ? sm_swz128(logical) : logical;
        unsigned char *p = sm_ptr(L, phys, m.esize);
        if (in) memcpy(p, src, m.esize);
        else memset(p, 0, m.esize); /* CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE: zeros */
    }
    /* the whole box counts, out-of-range elements included */
    sm_mbar_tx(t, b, -(int64_t)bytes, "cp.async.bulk.tensor complete_tx", file, line);
    sm_mbar_progress(t, b);
    sm_handoff_wait(t, file, line);
}

/* ---- named barriers ------------------------------------------------------------------------------ */

void ltx2_emu_bar_named(int id, int count, const char *file, int line) {
    emu_thread *t = emu_enter("bar.sync");
    emu_launch *L = t->L;
    emu_sm90 *s = sm_get(t);
    const char *bad = NULL;
    if (id < 1 || id >= SM_NAMED_BARRIERS) bad = "id outside 1..15 (0 is __syncthreads in the emulator)";
    else if (count <= 0 || count % 32 || count > L->nthreads) bad = "count not a positive multiple of 32 within the block";
    else if (s->named[id].arrived && s->named[id].count != count) bad = "count differs from the other waiting threads'";
    if (bad) {
        emu_fault_locked(L, t, "bar.sync %d, %d (%s:%d): %s", id, count, emu_base(file), line, bad);
        emu_unwind_locked(t);
    }
    sm_named *nb = &s->named[id];
    nb->count = count;
    if (++nb->arrived < count) {
        t->named_id = id;
        snprintf(t->detail, sizeof t->detail, "%d (%d of %d arrived)", id, nb->arrived, count);
        emu_block(t, K_BAR_NAMED, file, line);
        return;
    }
    for (int i = 0; i < L->nthreads; i++) {
        emu_thread *w = &L->threads[i];
        if (w != t && w->state == S_WAITING && w->kind == K_BAR_NAMED && w->named_id == id) emu_release_locked(L, w);
    }
    nb->arrived = 0;
    L->collectives++;
    pthread_mutex_unlock(&L->mu);
}

/* ---- warpgroup collectives -------------------------------------------------------------------- */

static sm_wg *sm_wg_of(emu_thread *t, const char *what, const char *file, int line) {
    emu_sm90 *s = sm_get(t);
    const int w = t->tid / SM_WG_THREADS;
    if (w >= s->n_wg) {
        emu_fault_locked(t->L, t, "%s (%s:%d): warpgroup %d has fewer than 128 threads", what, emu_base(file), line, w);
        emu_unwind_locked(t);
    }
    return &s->wg[w];
}

typedef int (*sm_wg_action)(emu_thread *last, sm_wg *g, emu_thread *first);

/* t arrives at a warpgroup collective (operands already in t); the 128th arrival runs `act`
 * (0: it faulted) and releases the others. Returns with the lock released. */
static void sm_wg_collective(emu_thread *t, int kind, sm_wg_action act, const char *file, int line) {
    emu_launch *L = t->L;
    sm_wg *g = sm_wg_of(t, emu_kind_name[kind], file, line);
    const int wgi = t->tid / SM_WG_THREADS;
    if (g->exited) {
        emu_fault_locked(L, t, "%s (%s:%d) after %d threads of warpgroup %d exited (.sync.aligned: all 128 must execute it)",
                         emu_kind_name[kind], emu_base(file), line, g->exited, wgi);
        emu_unwind_locked(t);
    }
    if (g->arrived && g->kind != kind) {
        emu_fault_locked(L, t, "divergence: %s (%s:%d) while %d threads of warpgroup %d wait at %s (%s:%d)",
                         emu_kind_name[kind], emu_base(file), line, g->arrived, wgi, emu_kind_name[g->kind],
                         emu_base(g->file), g->line);
        emu_unwind_locked(t);
    }
    if (!g->arrived) {
        g->kind = kind;
        g->file = file;
        g->line = line;
    }
    t->kind = kind;
    t->file = file;
    t->line = line;
    if (++g->arrived < SM_WG_THREADS) {
        snprintf(t->detail, sizeof t->detail, "(warpgroup %d, %d of 128 arrived)", wgi, g->arrived);
        emu_block(t, kind, file, line);
        return;
    }
    g->arrived = 0;
    g->kind = K_NONE;
    emu_thread *first = &L->threads[wgi * SM_WG_THREADS];
    if (act && !act(t, g, first)) emu_unwind_locked(t);
    for (int i = 0; i < SM_WG_THREADS; i++)
        if (&first[i] != t && first[i].state == S_WAITING && first[i].kind == kind) emu_release_locked(L, &first[i]);
    L->collectives++;
    pthread_mutex_unlock(&L->mu);
}

/* Every thread's wg_imm[0..n) equal (a .sync.aligned operand must be warpgroup-uniform). */
static int sm_uniform(emu_thread *last, emu_thread *first, int n, int with_desc, const char *what) {
    for (int i = 1; i < SM_WG_THREADS; i++) {
        const emu_thread *u = &first[i];
        int same = memcmp(u->wg_imm, first->wg_imm, (size_t)n * sizeof(int)) == 0;
        if (with_desc) same = same && u->wg_da == first->wg_da && u->wg_db == first->wg_db;
        if (!same) {
            emu_fault_locked(last->L, u, "%s (%s:%d): operands differ across the warpgroup (thread %d vs %d)", what,
                             emu_base(u->file), u->line, u->tid, first->tid);
            return 0;
        }
    }
    return 1;
}

static int sm_act_setmaxnreg(emu_thread *last, sm_wg *g, emu_thread *first) {
    (void)g;
    if (!sm_uniform(last, first, 2, 0, "setmaxnreg")) return 0;
    const int regs = first->wg_imm[1];
    if (regs < SM_MAXNREG_MIN || regs > SM_MAXNREG_MAX || regs % 8) {
        emu_fault_locked(last->L, first, "setmaxnreg (%s:%d): %d registers is not a multiple of 8 in 24..256",
                         emu_base(first->file), first->line, regs);
        return 0;
    }
    return 1;
}

void ltx2_emu_setmaxnreg(int inc, uint32_t regs, const char *file, int line) {
    emu_thread *t = emu_enter("setmaxnreg");
    t->wg_imm[0] = inc;
    t->wg_imm[1] = (int)regs;
    sm_wg_collective(t, K_SETMAXNREG, sm_act_setmaxnreg, file, line);
}

static int sm_act_fence(emu_thread *last, sm_wg *g, emu_thread *first) {
    (void)last, (void)first;
    g->fenced = 1;
    return 1;
}

void ltx2_emu_wgmma_fence(const char *file, int line) {
    sm_wg_collective(emu_enter("wgmma.fence"), K_WG_FENCE, sm_act_fence, file, line);
}

static int sm_act_commit(emu_thread *last, sm_wg *g, emu_thread *first) {
    (void)last, (void)first;
    g->committed++;
    return 1;
}

void ltx2_emu_wgmma_commit(const char *file, int line) {
    sm_wg_collective(emu_enter("wgmma.commit_group"), K_WG_COMMIT, sm_act_commit, file, line);
}

/* ---- wgmma operands -------------------------------------------------------------------------------
 * Descriptor (PTX ISA "Matrix Descriptor Format"): bits 0-13 start address >> 4, 16-29 leading
 * dimension byte offset >> 4, 32-45 stride dimension byte offset >> 4, 49-51 base offset, 62-63
 * swizzle mode (1 = 128-byte). Canonical 128-byte-swizzled layouts (PTX ISA "Shared Memory Matrix
 * Layout"; T elements per 16 bytes, 8 bf16 or 16 e4m3, in elements except LBO/SBO bytes; e the
 * element bytes):
 *   K-major  ((8,m),(T,2k)) : ((8T,SBO),(1,T))   -> element (mn, k) at
 *            start + 128 (mn % 8) + (mn / 8) SBO + e k     (k < 32 / e: one 32-byte step)
 *   MN-major ((T,8,m),(8,k)) : ((1,T,LBO),(8T,SBO)) -> element (k, mn) at
 *            start + 2 (mn % 64) + (mn / 64) LBO + 128 (k % 8) + (k / 8) SBO   (bf16 only: 8-bit
 *            operands must be K-major, PTX ISA "wgmma.mma_async" restrictions on .atype)
 * and the 128-byte swizzle applied to that absolute address (base offset 0). */

typedef struct sm_desc {
    uint32_t start, lbo, sbo;
    int base, mode;
} sm_desc;

static sm_desc sm_decode(uint64_t d) {
    sm_desc f;
    f.start = (uint32_t)(d & 0x3FFFu) << 4;
    f.lbo = (uint32_t)((d >> 16) & 0x3FFFu) << 4;
    f.sbo = (uint32_t)((d >> 32) & 0x3FFFu) << 4;
    f.base = (int)((d >> 49) & 7u);
    f.mode = (int)((d >> 62) & 3u);
    return f;
}

/* Shared address of element (mn, k) of an operand with descriptor f and esize-byte elements;
 * tnsp: MN-major. */
static uint32_t sm_elem_addr(const sm_desc *f, int tnsp, int esize, int mn, int k) {
    uint32_t a;
    if (!tnsp)
        a = f->start + 128u * (uint32_t)(mn % 8) + (uint32_t)(mn / 8) * f->sbo + (uint32_t)esize * (uint32_t)k;
    else
        a = f->start + 2u * (uint32_t)(mn % 64) + (uint32_t)(mn / 64) * f->lbo + 128u * (uint32_t)(k % 8) +
            (uint32_t)(k / 8) * f->sbo;
    return sm_swz128(a);
}

static int sm_desc_ok(emu_thread *t, const sm_desc *f, const char *which, const char *file, int line) {
    const char *bad = NULL;
    if (f->mode != DESC_SWIZZLE_128B) bad = "only the 128-byte swizzle mode is emulated";
    else if (f->base != 0) bad = "a nonzero base offset is not emulated";
    if (bad) emu_fault_locked(t->L, t, "wgmma.mma_async (%s:%d) %s descriptor: %s", emu_base(file), line, which, bad);
    return bad == NULL;
}

/* Adds delta to the pending-read count of every chunk op reads; 0 when an address lies outside
 * shared memory (a fault). */
static int sm_footprint(emu_thread *t, emu_sm90 *s, const sm_op *op, int delta) {
    const sm_desc fa = sm_decode(op->da), fb = sm_decode(op->db);
    for (int pass = 0; pass < 2; pass++) {
        if (pass == 0 && op->rs) continue;
        const sm_desc *f = pass ? &fb : &fa;
        const int tn = pass ? op->tnsp_b : op->tnsp_a, mn_n = pass ? op->n : WG_M;
        for (int mn = 0; mn < mn_n; mn++)
            for (int k = 0; k < WG_K_BYTES / op->esize; k++) {
                const uint32_t a = sm_elem_addr(f, tn, op->esize, mn, k);
                if (!sm_ptr(t->L, a, (size_t)op->esize) || a >= SM_WINDOW_BYTES) {
                    emu_fault_locked(t->L, t, "wgmma.mma_async (%s:%d): %s element (%d, %d) at shared 0x%x is outside shared memory",
                                     emu_base(op->file), op->line, pass ? "B" : "A", mn, k, a);
                    return 0;
                }
                s->reads[a / SM_CHUNK] += (uint32_t)delta;
            }
    }
    return 1;
}

static float sm_bf16(uint16_t h) {
    const uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* The element at shared address a: bf16 (esize 2) or e4m3 (1, fp8_layout.h's decoding). */
static float sm_smem_elem(emu_launch *L, uint32_t a, int esize) {
    if (esize == 1) return ltx2_e4m3_to_f32(*(const uint8_t *)sm_ptr(L, a, 1));
    uint16_t h;
    memcpy(&h, sm_ptr(L, a, 2), 2);
    return sm_bf16(h);
}

/* Runs one recorded operation. Register fragments (PTX ISA "Register Fragments" for wgmma
 * .m64nNk16 and .m64nNk32), warp w of the warpgroup, lane l, g = l / 4, q = l % 4:
 *   D (f32), register i: row 16w + g + 8 ((i / 2) % 2), column 8 (i / 4) + 2q + i % 2;
 *   A (bf16 pairs), register r: row 16w + g + 8 (r % 2), k 2q + 8 (r / 2) (+1 in the high half);
 *   A (e4m3 quads), register r: row 16w + g + 8 (r % 2), k 4q + 16 (r / 2) + the byte (0 lowest).
 * Products are summed in f32 in k order: the hardware's e4m3 accumulation keeps fewer bits
 * (DeepSeek-V3 measured about 14 mantissa bits), which the emulator does not model. */
static void sm_run_op(emu_launch *L, const sm_op *op) {
    float(*A)[WG_K_MAX] = L->sm90->A, (*B)[256] = L->sm90->B, (*D)[256] = L->sm90->D;
    const int K = WG_K_BYTES / op->esize;
    const sm_desc fa = sm_decode(op->da), fb = sm_decode(op->db);
    for (int th = 0; th < SM_WG_THREADS; th++) {
        const int w = th / 32, g = (th % 32) / 4, q = th % 4;
        for (int i = 0; i < op->n / 2; i++)
            D[16 * w + g + 8 * ((i / 2) % 2)][8 * (i / 4) + 2 * q + i % 2] = op->d[th][i];
        if (op->rs && op->esize == 1)
            for (int r = 0; r < 4; r++) {
                const int row = 16 * w + g + 8 * (r % 2), k = 4 * q + 16 * (r / 2);
                for (int j = 0; j < 4; j++) A[row][k + j] = ltx2_e4m3_to_f32((op->a[th][r] >> (8 * j)) & 0xFFu);
            }
        else if (op->rs)
            for (int r = 0; r < 4; r++) {
                const int row = 16 * w + g + 8 * (r % 2), k = 2 * q + 8 * (r / 2);
                const uint32_t v = op->a[th][r];
                A[row][k] = sm_bf16((uint16_t)(v & 0xFFFFu));
                A[row][k + 1] = sm_bf16((uint16_t)(v >> 16));
            }
    }
    if (!op->rs)
        for (int m = 0; m < WG_M; m++)
            for (int k = 0; k < K; k++) A[m][k] = sm_smem_elem(L, sm_elem_addr(&fa, op->tnsp_a, op->esize, m, k), op->esize);
    for (int nn = 0; nn < op->n; nn++)
        for (int k = 0; k < K; k++) B[k][nn] = sm_smem_elem(L, sm_elem_addr(&fb, op->tnsp_b, op->esize, nn, k), op->esize);
    const float sa = op->neg_a ? -1.0f : 1.0f, sb = op->neg_b ? -1.0f : 1.0f;
    for (int m = 0; m < WG_M; m++)
        for (int nn = 0; nn < op->n; nn++) {
            float acc = op->scale_d ? D[m][nn] : 0.0f;
            for (int k = 0; k < K; k++) acc += (sa * A[m][k]) * (sb * B[k][nn]);
            D[m][nn] = acc;
        }
    for (int th = 0; th < SM_WG_THREADS; th++) {
        const int w = th / 32, g = (th % 32) / 4, q = th % 4;
        for (int i = 0; i < op->n / 2; i++) op->d[th][i] = D[16 * w + g + 8 * ((i / 2) % 2)][8 * (i / 4) + 2 * q + i % 2];
    }
}

static int sm_act_mma(emu_thread *last, sm_wg *g, emu_thread *first) {
    emu_launch *L = last->L;
    emu_sm90 *s = L->sm90;
    if (!sm_uniform(last, first, 7, 1, "wgmma.mma_async")) return 0;
    if (!g->fenced) {
        emu_fault_locked(L, first, "wgmma.mma_async (%s:%d) without a wgmma.fence since the warpgroup's last wgmma.wait_group "
                         "(PTX ISA: registers the threads accessed must be fenced before wgmma.mma_async uses them)",
                         emu_base(first->file), first->line);
        return 0;
    }
    if (g->n == g->cap) {
        const size_t cap = g->cap ? 2 * g->cap : 32;
        sm_op *o = realloc(g->ops, cap * sizeof *o);
        if (!o) {
            emu_fault_locked(L, first, "wgmma.mma_async: out of host memory");
            return 0;
        }
        g->ops = o;
        g->cap = cap;
    }
    sm_op *op = &g->ops[g->n];
    op->group = g->committed;
    op->n = first->wg_imm[0];
    op->rs = first->wg_a != NULL;
    op->scale_d = first->wg_imm[1];
    op->neg_a = first->wg_imm[2];
    op->neg_b = first->wg_imm[3];
    op->tnsp_a = first->wg_imm[4];
    op->tnsp_b = first->wg_imm[5];
    op->esize = first->wg_imm[6];
    op->da = first->wg_da;
    op->db = first->wg_db;
    op->file = first->file;
    op->line = first->line;
    for (int i = 0; i < SM_WG_THREADS; i++) {
        op->d[i] = first[i].wg_d;
        op->a[i] = first[i].wg_a;
        if (!op->d[i] || (op->rs && !op->a[i])) {
            emu_fault_locked(L, &first[i], "wgmma.mma_async (%s:%d): register operands missing in some threads",
                             emu_base(op->file), op->line);
            return 0;
        }
    }
    const sm_desc fa = sm_decode(op->da), fb = sm_decode(op->db);
    if ((!op->rs && !sm_desc_ok(first, &fa, "A", op->file, op->line)) || !sm_desc_ok(first, &fb, "B", op->file, op->line))
        return 0;
    if (!sm_footprint(first, s, op, 1)) return 0;
    g->n++;
    return 1;
}

/* Records one wgmma of esize-byte operands (the two entry points below). */
static void sm_wgmma(int esize, int n, float *d, const uint32_t *a, uint64_t da, uint64_t db, int scale_d, int neg_a,
                     int neg_b, int tnsp_a, int tnsp_b, const char *file, int line) {
    emu_thread *t = emu_enter("wgmma.mma_async");
    if (n < 8 || n > 256 || n % 8) {
        emu_fault_locked(t->L, t, "wgmma.mma_async (%s:%d): n %d is not a multiple of 8 in 8..256", emu_base(file), line, n);
        emu_unwind_locked(t);
    }
    t->wg_imm[0] = n;
    t->wg_imm[1] = scale_d != 0;
    t->wg_imm[2] = neg_a != 0;
    t->wg_imm[3] = neg_b != 0;
    t->wg_imm[4] = a ? 0 : tnsp_a != 0; /* the RS form has no A transpose */
    t->wg_imm[5] = tnsp_b != 0;
    t->wg_imm[6] = esize;
    t->wg_da = a ? 0 : da;
    t->wg_db = db;
    t->wg_d = d;
    t->wg_a = a;
    sm_wg_collective(t, K_WG_MMA, sm_act_mma, file, line);
}

void ltx2_emu_wgmma_bf16(int n, float *d, const uint32_t *a, uint64_t da, uint64_t db, int scale_d, int neg_a,
                         int neg_b, int tnsp_a, int tnsp_b, const char *file, int line) {
    sm_wgmma(2, n, d, a, da, db, scale_d, neg_a, neg_b, tnsp_a, tnsp_b, file, line);
}

/* e4m3 operands are K-major by rule (PTX ISA: imm-trans-a/b exist for .f16/.bf16 only); the kernels
 * use no negation. */
void ltx2_emu_wgmma_e4m3(int n, float *d, const uint32_t *a, uint64_t da, uint64_t db, int scale_d, const char *file,
                         int line) {
    sm_wgmma(1, n, d, a, da, db, scale_d, 0, 0, 0, 0, file, line);
}

static int sm_act_wait(emu_thread *last, sm_wg *g, emu_thread *first) {
    emu_launch *L = last->L;
    if (!sm_uniform(last, first, 1, 0, "wgmma.wait_group")) return 0;
    const uint64_t keep = (uint64_t)first->wg_imm[0];
    const uint64_t limit = g->committed > keep ? g->committed - keep : 0;
    while (g->head < g->n && g->ops[g->head].group < limit) {
        const sm_op *op = &g->ops[g->head++];
        sm_footprint(first, L->sm90, op, -1);
        sm_run_op(L, op);
    }
    if (g->head == g->n) g->head = g->n = 0;
    g->fenced = 0;
    return 1;
}

void ltx2_emu_wgmma_wait(int n, const char *file, int line) {
    emu_thread *t = emu_enter("wgmma.wait_group");
    t->wg_imm[0] = n < 0 ? 0 : n;
    sm_wg_collective(t, K_WG_WAIT, sm_act_wait, file, line);
}

/* ---- thread exit ------------------------------------------------------------------------------- */

void emu_sm90_thread_exit(emu_launch *L, emu_thread *t) {
    emu_sm90 *s = L->sm90;
    if (!s || t->tid / SM_WG_THREADS >= s->n_wg) return;
    sm_wg *g = &s->wg[t->tid / SM_WG_THREADS];
    g->exited++;
    if (g->head < g->n) {
        emu_fault_locked(L, t, "thread returned with %zu wgmma.mma_async of its warpgroup not waited for (%s:%d): "
                         "their accumulators would be written after the kernel's last use",
                         g->n - g->head, emu_base(g->ops[g->head].file), g->ops[g->head].line);
        return;
    }
    if (g->arrived)
        emu_fault_locked(L, t, "thread returned while %d threads of warpgroup %d wait for it at %s (%s:%d)", g->arrived,
                         t->tid / SM_WG_THREADS, emu_kind_name[g->kind], emu_base(g->file), g->line);
}
