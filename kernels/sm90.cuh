// The Hopper (sm_90a) building blocks attention_sm90.cu is made of, one thin wrapper per PTX
// instruction: mbarriers, 3-D TMA loads, setmaxnreg, named barriers, proxy fences, wgmma
// (fence / commit / wait, m64n128k16 SS with B K-major or transposed and RS, m64n64k16 SS and RS,
// bf16 -> f32; m64n128k32 SS and RS e4m3 -> f32), e4m3 packing, ex2.approx, and the
// driver's cuTensorMapEncodeTiled fetched through the runtime. Under the CPU emulator
// (LTX2_EMU, tests/emu/emu_sm90.c) each wrapper is routed to its emulation instead, so the
// emulator's self-test (tests/emu/selftest_kernels.cu) checks the very wrappers the kernel uses.
// Only the sm_90a compilation (__CUDA_ARCH_FEAT_SM90_ALL) or the emulator defines them
// (A90_DEVICE_CODE); other architectures get none.
#ifndef LTX2_KERNELS_SM90_CUH
#define LTX2_KERNELS_SM90_CUH

#include <cuda.h>         // CUtensorMap and its enums: types only, libcuda is not linked
#include <cudaTypedefs.h> // PFN_cuTensorMapEncodeTiled, fetched through the runtime
#include <stdint.h>

#include "common.cuh"
#include "fp8_layout.h"
#include "mma.cuh"

// Prototype version of the driver's cuTensorMapEncodeTiled we ask for (PFN_..._v12000).
#define A90_TMAP_ABI_VERSION 12000

#if defined(__CUDA_ARCH_FEAT_SM90_ALL) || defined(LTX2_EMU)
#define A90_DEVICE_CODE 1
#endif

#if defined(LTX2_EMU)
// ---- the wrappers below, run by the CPU emulator: same operands, plus the caller's file and
// line for fault messages ----
__device__ __forceinline__ uint32_t ltx2_smem_addr(const void *p, LTX2_EMU_SITE) {
    return ltx2_emu_cvta_shared(p, LTX2_EMU_AT);
}
__device__ __forceinline__ void a90_bar_init(uint32_t bar, uint32_t count, LTX2_EMU_SITE) {
    ltx2_emu_mbar_init(bar, count, LTX2_EMU_AT);
}
__device__ __forceinline__ void a90_fence_mbarrier_init() {} // the emulated barriers are visible at once
__device__ __forceinline__ void a90_bar_expect_tx(uint32_t bar, uint32_t bytes, LTX2_EMU_SITE) {
    ltx2_emu_mbar_arrive(bar, 1, bytes, LTX2_EMU_AT);
}
__device__ __forceinline__ void a90_bar_arrive(uint32_t bar, LTX2_EMU_SITE) { ltx2_emu_mbar_arrive(bar, 0, 0, LTX2_EMU_AT); }
__device__ __forceinline__ void a90_bar_wait(uint32_t bar, uint32_t parity, LTX2_EMU_SITE) {
    ltx2_emu_mbar_wait_parity(bar, parity, LTX2_EMU_AT);
}
__device__ __forceinline__ void a90_tma_load(uint32_t dst, const CUtensorMap *map, uint32_t bar, int c0, int c1, int c2,
                                             LTX2_EMU_SITE) {
    const int32_t c[3] = {c0, c1, c2};
    ltx2_emu_tma_load(dst, map, bar, 3, c, LTX2_EMU_AT);
}
template <int N> __device__ __forceinline__ void a90_setmaxnreg_inc(LTX2_EMU_SITE) { ltx2_emu_setmaxnreg(1, N, LTX2_EMU_AT); }
template <int N> __device__ __forceinline__ void a90_setmaxnreg_dec(LTX2_EMU_SITE) { ltx2_emu_setmaxnreg(0, N, LTX2_EMU_AT); }
__device__ __forceinline__ void a90_named_sync(int id, int threads, LTX2_EMU_SITE) {
    ltx2_emu_bar_named(id, threads, LTX2_EMU_AT);
}
__device__ __forceinline__ void a90_fence_proxy_async() {} // one memory for both proxies here
__device__ __forceinline__ void a90_wgmma_fence(LTX2_EMU_SITE) { ltx2_emu_wgmma_fence(LTX2_EMU_AT); }
__device__ __forceinline__ void a90_wgmma_commit(LTX2_EMU_SITE) { ltx2_emu_wgmma_commit(LTX2_EMU_AT); }
template <int N> __device__ __forceinline__ void a90_wgmma_wait(LTX2_EMU_SITE) { ltx2_emu_wgmma_wait(N, LTX2_EMU_AT); }
__device__ __forceinline__ void a90_pin(float &) {} // the emulator runs the code in program order
__device__ __forceinline__ void a90_pin(uint32_t &) {}
__device__ __forceinline__ float a90_ex2(float x) { return ltx2_emu_ex2_ftz(x); }
// wgmma m64nNk16 bf16 -> f32, immediates as in the asm twins: scale-a = scale-b = 1 (no
// negation); SS: A K-major, B K-major or (TRANS_B) MN-major; RS: B transposed (MN-major).
template <int SCALE_D, int TRANS_B = 0>
__device__ __forceinline__ void a90_wgmma_ss_n128(float d[64], uint64_t da, uint64_t db, LTX2_EMU_SITE) {
    ltx2_emu_wgmma_bf16(128, d, nullptr, da, db, SCALE_D, 0, 0, 0, TRANS_B, LTX2_EMU_AT);
}
template <int SCALE_D>
__device__ __forceinline__ void a90_wgmma_ss_n64(float d[32], uint64_t da, uint64_t db, LTX2_EMU_SITE) {
    ltx2_emu_wgmma_bf16(64, d, nullptr, da, db, SCALE_D, 0, 0, 0, 0, LTX2_EMU_AT);
}
__device__ __forceinline__ void a90_wgmma_rs_n128(float d[64], const uint32_t a[4], uint64_t db, LTX2_EMU_SITE) {
    ltx2_emu_wgmma_bf16(128, d, a, 0, db, 1, 0, 0, 0, 1, LTX2_EMU_AT);
}
__device__ __forceinline__ void a90_wgmma_rs_n64(float d[32], const uint32_t a[4], uint64_t db, LTX2_EMU_SITE) {
    ltx2_emu_wgmma_bf16(64, d, a, 0, db, 1, 0, 0, 0, 1, LTX2_EMU_AT);
}
// wgmma m64n128k32 e4m3 -> f32 (both operands K-major, as 8-bit operands must be).
template <int SCALE_D>
__device__ __forceinline__ void a90_wgmma_ss_n128_e4m3(float d[64], uint64_t da, uint64_t db, LTX2_EMU_SITE) {
    ltx2_emu_wgmma_e4m3(128, d, nullptr, da, db, SCALE_D, LTX2_EMU_AT);
}
__device__ __forceinline__ void a90_wgmma_rs_n128_e4m3(float d[64], const uint32_t a[4], uint64_t db, LTX2_EMU_SITE) {
    ltx2_emu_wgmma_e4m3(128, d, a, 0, db, 1, LTX2_EMU_AT);
}
// Four floats as e4m3 codes (round to nearest even, saturating to +-448: the hardware cvt's
// .rn.satfinite), x0 in the lowest byte.
__device__ __forceinline__ uint32_t a90_e4m3x4(float x0, float x1, float x2, float x3) {
    return ltx2_f32_to_e4m3(x0) | ltx2_f32_to_e4m3(x1) << 8 | ltx2_f32_to_e4m3(x2) << 16 | ltx2_f32_to_e4m3(x3) << 24;
}

#elif defined(__CUDA_ARCH_FEAT_SM90_ALL)

// ---- mbarriers and TMA ----
__device__ __forceinline__ void a90_bar_init(uint32_t bar, uint32_t count) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(count) : "memory");
}
// Makes the initialisations visible to the TMA unit (the async proxy).
__device__ __forceinline__ void a90_fence_mbarrier_init() {
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
}
// Arrives once and announces `bytes` of TMA transactions that complete the current phase.
__device__ __forceinline__ void a90_bar_expect_tx(uint32_t bar, uint32_t bytes) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes) : "memory");
}
__device__ __forceinline__ void a90_bar_arrive(uint32_t bar) {
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(bar) : "memory");
}
// Spins until the phase with this parity has completed (a fresh barrier counts phase "1" as
// done, so producers start by waiting on parity 1 of the empty barriers).
__device__ __forceinline__ void a90_bar_wait(uint32_t bar, uint32_t parity) {
    uint32_t done;
    do {
        asm volatile("{\n.reg .pred p;\nmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
                     "selp.u32 %0, 1, 0, p;\n}\n"
                     : "=r"(done)
                     : "r"(bar), "r"(parity)
                     : "memory");
    } while (!done);
}
// 3-D tiled TMA load (coordinates innermost first: column, row, batch); out-of-range rows are
// zero-filled and still count towards the transaction bytes.
__device__ __forceinline__ void a90_tma_load(uint32_t dst, const CUtensorMap *map, uint32_t bar, int c0, int c1,
                                             int c2) {
    asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4, %5}], "
                 "[%2];\n" ::"r"(dst),
                 "l"(reinterpret_cast<uint64_t>(map)), "r"(bar), "r"(c0), "r"(c1), "r"(c2)
                 : "memory");
}

// ---- warpgroup control ----
template <int N> __device__ __forceinline__ void a90_setmaxnreg_inc() {
    asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(N));
}
template <int N> __device__ __forceinline__ void a90_setmaxnreg_dec() {
    asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(N));
}
__device__ __forceinline__ void a90_named_sync(int id, int threads) {
    asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}
// Ordinary shared-memory stores that wgmma (the async proxy) reads next need this before the barrier.
__device__ __forceinline__ void a90_fence_proxy_async() { asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory"); }
__device__ __forceinline__ void a90_wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void a90_wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
template <int N> __device__ __forceinline__ void a90_wgmma_wait() {
    asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}
// Pins registers an in-flight wgmma reads or writes: code that uses them after the wait cannot
// be moved above it (the empty asm depends on the wait through ordering of volatile asm).
__device__ __forceinline__ void a90_pin(float &x) { asm volatile("" : "+f"(x)::"memory"); }
__device__ __forceinline__ void a90_pin(uint32_t &x) { asm volatile("" : "+r"(x)::"memory"); }

__device__ __forceinline__ float a90_ex2(float x) {
    float y;
    asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
    return y;
}

// The 64 accumulator operands of an m64n128 wgmma: their place-holders %0..%63 and constraints.
#define A90_D64_SLOTS                                                                                            \
    "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "                                 \
    "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "                          \
    "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "                          \
    "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}"
#define A90_D64_OPS(d)                                                                                           \
    "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),             \
        "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),   \
        "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), \
        "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), \
        "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), \
        "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), \
        "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), \
        "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])

// ---- wgmma (bf16 x bf16 -> fp32). Accumulator layout of m64nN: att90_acc_row/col (warp w of
// the warpgroup owns rows 16w..16w+15, the mma.sync m16n8 C layout repeated over N/8 column
// blocks). The register A operand of m64k16 is the mma.sync m16n8k16 A fragment of the warp's
// 16 rows (att90_pfrag_src). ----

// d (+)= A(smem) * B(smem), m64n128k16; A K-major; B K-major, or MN-major (transposed) with
// TRANS_B 1 (the conv3d kernel's weight tile, n contiguous). SCALE_D 0 overwrites d.
template <int SCALE_D, int TRANS_B = 0>
__device__ __forceinline__ void a90_wgmma_ss_n128(float d[64], uint64_t da, uint64_t db) {
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 " A90_D64_SLOTS ", %64, %65, p, 1, 1, 0, %67;\n}\n"
                 : A90_D64_OPS(d)
                 : "l"(da), "l"(db), "n"(SCALE_D), "n"(TRANS_B));
}

// d (+)= A(smem) * B(smem), m64n64k16; A and B K-major (S = QK^T over 64-key tiles, d = 256).
template <int SCALE_D> __device__ __forceinline__ void a90_wgmma_ss_n64(float d[32], uint64_t da, uint64_t db) {
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {"
                 "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
                 "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31"
                 "}, %32, %33, p, 1, 1, 0, 0;\n}\n"
                 :
                   "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
                   "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
                   "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
                   "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
                 : "l"(da), "l"(db), "n"(SCALE_D));
}

// d += A(registers, 4 x b32 bf16 pairs) * B(smem), m64n128k16; B MN-major (transposed).
__device__ __forceinline__ void a90_wgmma_rs_n128(float d[64], const uint32_t a[4], uint64_t db) {
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %69, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 " A90_D64_SLOTS
                 ", {%64, %65, %66, %67}, %68, p, 1, 1, 1;\n}\n"
                 : A90_D64_OPS(d)
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db), "n"(1));
}

// ---- wgmma (e4m3 x e4m3 -> fp32), m64n128k32: 8-bit operands are K-major in shared memory and
// take no transpose immediates; the register A operand is 4 b32 of 4 e4m3 each (ALayout_64x32:
// register r holds row g + 8 (r % 2), k 4q + 16 (r / 2) + byte). ----
template <int SCALE_D> __device__ __forceinline__ void a90_wgmma_ss_n128_e4m3(float d[64], uint64_t da, uint64_t db) {
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e4m3 " A90_D64_SLOTS ", %64, %65, p, 1, 1;\n}\n"
                 : A90_D64_OPS(d)
                 : "l"(da), "l"(db), "n"(SCALE_D));
}
__device__ __forceinline__ void a90_wgmma_rs_n128_e4m3(float d[64], const uint32_t a[4], uint64_t db) {
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %69, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e4m3 " A90_D64_SLOTS
                 ", {%64, %65, %66, %67}, %68, p, 1, 1;\n}\n"
                 : A90_D64_OPS(d)
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db), "n"(1));
}
// Four floats as e4m3 codes, x0 in the lowest byte (cvt packs its first source into the high byte).
__device__ __forceinline__ uint32_t a90_e4m3x4(float x0, float x1, float x2, float x3) {
    uint16_t lo, hi;
    asm("cvt.rn.satfinite.e4m3x2.f32 %0, %1, %2;\n" : "=h"(lo) : "f"(x1), "f"(x0));
    asm("cvt.rn.satfinite.e4m3x2.f32 %0, %1, %2;\n" : "=h"(hi) : "f"(x3), "f"(x2));
    return (uint32_t)lo | (uint32_t)hi << 16;
}

// d += A(registers, 4 x b32 bf16 pairs) * B(smem), m64n64k16; B MN-major (transposed).
__device__ __forceinline__ void a90_wgmma_rs_n64(float d[32], const uint32_t a[4], uint64_t db) {
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %37, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {"
                 "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
                 "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31"
                 "}, {%32, %33, %34, %35}, %36, p, 1, 1, 1;\n}\n"
                 :
                   "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
                   "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
                   "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
                   "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db), "n"(1));
}
#endif


// Whether the current device has compute capability 9.x, the sm_90a kernels' target (their
// availability checks add whether the build carries the kernel's body).
static inline bool a90_device_is_sm90(void) {
    int dev = 0, major = 0;
    if (cudaGetDevice(&dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev) != cudaSuccess) {
        (void)cudaGetLastError();
        return false;
    }
    return major == 9;
}

// cuTensorMapEncodeTiled from the driver the runtime already loaded (no libcuda link).
static inline PFN_cuTensorMapEncodeTiled_v12000 a90_encoder(void) {
    void *fn = nullptr;
    cudaDriverEntryPointQueryResult q = cudaDriverEntryPointSymbolNotFound;
    if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, A90_TMAP_ABI_VERSION, cudaEnableDefault, &q) != cudaSuccess ||
        q != cudaDriverEntryPointSuccess) {
        (void)cudaGetLastError();
        return nullptr;
    }
    return (PFN_cuTensorMapEncodeTiled_v12000)fn;
}

#endif
