// Force-included (-include) into every kernels/*.cu that the CPU emulator compiles with the host
// C++ compiler (-DLTX2_EMU): the CUDA built-ins and device intrinsics the kernels use, as calls
// into the emulator runtime (emu.h). The CUDA toolkit headers are included here, before anything
// else, because they support host compilers: they give dim3, uint4, float4, __nv_bfloat16 and its
// host conversions (round to nearest even, as on the device). Everything a kernel source includes
// is included here first, outside any namespace, so that the wrapper TU can #include the .cu
// inside namespace ltx2_emu_ns (no symbol clashes with the real CUDA library) while these
// headers' include guards make the .cu's own #includes no-ops.
#ifndef LTX2_CUDA_EMU_H
#define LTX2_CUDA_EMU_H

#ifndef __cplusplus
#error "cuda_emu.h is for the C++ compilation of kernels/*.cu"
#endif

#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda.h>         // CUtensorMap and its enums (attention_sm90.cu)
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <cudaTypedefs.h> // PFN_cuTensorMapEncodeTiled_v12000

#include "emu.h"
#include "emu_rename.h"
#include "ltx2_kernels.h"

// ---- qualifiers: host definitions --------------------------------------------------------------
// __shared__ arrays are one object per block shared by all its threads: a function-local static
// is one object per kernel instantiation, and blocks run one at a time.
#undef __shared__
#define __shared__ static
#undef __global__
#define __global__
#undef __launch_bounds__
#define __launch_bounds__(...)
// Kernel parameters are per-thread copies here; g++ would warn about the unknown attribute.
#undef __grid_constant__
#define __grid_constant__
// No always_inline: the kernels' fragment loops are large, and inlining changes nothing here.
#undef __forceinline__
#define __forceinline__ inline

// ---- built-in variables -------------------------------------------------------------------------
#define threadIdx (ltx2_emu_builtins_here()->thread_idx)
#define blockIdx (ltx2_emu_builtins_here()->block_idx)
#define blockDim (ltx2_emu_builtins_here()->block_dim)
#define gridDim (ltx2_emu_builtins_here()->grid_dim)
#define warpSize 32

// Call sites for fault messages: the caller's file and line (g++ and clang builtins).
#define LTX2_EMU_SITE const char *ltx2_emu_file_ = __builtin_FILE(), int ltx2_emu_line_ = __builtin_LINE()
#define LTX2_EMU_AT ltx2_emu_file_, ltx2_emu_line_

// ---- synchronisation and warp intrinsics ----------------------------------------------------------
static inline void __syncthreads(LTX2_EMU_SITE) { ltx2_emu_syncthreads(LTX2_EMU_AT); }
static inline int __syncthreads_or(int pred, LTX2_EMU_SITE) { return ltx2_emu_syncthreads_or(pred, LTX2_EMU_AT); }
static inline void __syncwarp(unsigned mask = 0xffffffffu, LTX2_EMU_SITE) { ltx2_emu_syncwarp(mask, LTX2_EMU_AT); }

template <typename T>
static inline T __shfl_xor_sync(unsigned mask, T var, int lane_mask, int width = warpSize, LTX2_EMU_SITE) {
    static_assert(sizeof(T) == 4 || sizeof(T) == 8, "shuffles move 4 or 8 bytes");
    uint64_t bits = 0;
    memcpy(&bits, &var, sizeof var);
    bits = ltx2_emu_shfl_xor(mask, bits, lane_mask, width, LTX2_EMU_AT);
    memcpy(&var, &bits, sizeof var);
    return var;
}

// ---- arithmetic intrinsics ------------------------------------------------------------------------
// The library is compiled with -ffp-contract=off, so these round each operation on its own, as the
// _rn intrinsics promise (never fused into an fma).
static inline float __fmul_rn(float a, float b) { return a * b; }
static inline float __fadd_rn(float a, float b) { return a + b; }
// The device's rsqrtf is approximate (2 ulp); two correctly rounded steps are within that.
static inline float rsqrtf(float x) { return 1.0f / sqrtf(x); }
static inline unsigned __float_as_uint(float f) {
    unsigned u;
    memcpy(&u, &f, sizeof u);
    return u;
}
static inline float __uint_as_float(unsigned u) {
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

// ---- runtime API the launchers call ----------------------------------------------------------------
static inline cudaError_t ltx2_emu_cuda_get_last_error(void) { return (cudaError_t)ltx2_emu_get_last_error(); }
#define cudaGetLastError ltx2_emu_cuda_get_last_error
// Dynamic shared memory beyond 48 KB needs this attribute on a GPU; the emulator accepts up to the
// sm_90 opt-in maximum (checked again at launch).
template <typename F> static inline cudaError_t ltx2_emu_func_set_attribute(F *, cudaFuncAttribute attr, int value) {
    if (attr == cudaFuncAttributeMaxDynamicSharedMemorySize && (value < 0 || value > 232448))
        return cudaErrorInvalidValue;
    return cudaSuccess;
}
#define cudaFuncSetAttribute ltx2_emu_func_set_attribute

// ---- the emulated device: one sm_90 GPU (attention_sm90.cu asks) --------------------------------------
#define LTX2_EMU_CC_MAJOR 9
#define LTX2_EMU_CC_MINOR 0
static inline cudaError_t ltx2_emu_get_device(int *dev) {
    if (!dev) return cudaErrorInvalidValue;
    *dev = 0;
    return cudaSuccess;
}
#define cudaGetDevice ltx2_emu_get_device
static inline cudaError_t ltx2_emu_device_get_attribute(int *v, cudaDeviceAttr attr, int dev) {
    if (!v || dev != 0) return cudaErrorInvalidValue;
    if (attr == cudaDevAttrComputeCapabilityMajor) *v = LTX2_EMU_CC_MAJOR;
    else if (attr == cudaDevAttrComputeCapabilityMinor) *v = LTX2_EMU_CC_MINOR;
    else return cudaErrorInvalidValue; // nothing else is emulated
    return cudaSuccess;
}
#define cudaDeviceGetAttribute ltx2_emu_device_get_attribute

// cuTensorMapEncodeTiled: the driver's checks and an encoding the emulated TMA reads (emu_sm90.c).
static inline CUresult CUDAAPI ltx2_emu_tensor_map_encode_tiled(
    CUtensorMap *map, CUtensorMapDataType dt, cuuint32_t rank, void *addr, const cuuint64_t *dims,
    const cuuint64_t *strides, const cuuint32_t *box, const cuuint32_t *estr, CUtensorMapInterleave il,
    CUtensorMapSwizzle sw, CUtensorMapL2promotion l2, CUtensorMapFloatOOBfill oob) {
    int esize = 0, is_float = 0;
    switch (dt) {
    case CU_TENSOR_MAP_DATA_TYPE_UINT8: esize = 1; break;
    case CU_TENSOR_MAP_DATA_TYPE_UINT16: esize = 2; break;
    case CU_TENSOR_MAP_DATA_TYPE_UINT32:
    case CU_TENSOR_MAP_DATA_TYPE_INT32: esize = 4; break;
    case CU_TENSOR_MAP_DATA_TYPE_UINT64:
    case CU_TENSOR_MAP_DATA_TYPE_INT64: esize = 8; break;
    case CU_TENSOR_MAP_DATA_TYPE_FLOAT16:
    case CU_TENSOR_MAP_DATA_TYPE_BFLOAT16: esize = 2, is_float = 1; break;
    case CU_TENSOR_MAP_DATA_TYPE_FLOAT32:
    case CU_TENSOR_MAP_DATA_TYPE_FLOAT32_FTZ:
    case CU_TENSOR_MAP_DATA_TYPE_TFLOAT32:
    case CU_TENSOR_MAP_DATA_TYPE_TFLOAT32_FTZ: esize = 4, is_float = 1; break;
    case CU_TENSOR_MAP_DATA_TYPE_FLOAT64: esize = 8, is_float = 1; break;
    default: break; // packed sub-byte types: not emulated
    }
    const int swz = sw == CU_TENSOR_MAP_SWIZZLE_NONE ? 0 : sw == CU_TENSOR_MAP_SWIZZLE_32B ? 32
                  : sw == CU_TENSOR_MAP_SWIZZLE_64B ? 64 : sw == CU_TENSOR_MAP_SWIZZLE_128B ? 128 : -1;
    return (CUresult)ltx2_emu_tmap_encode(map, esize, is_float, rank, addr, dims, strides, box, estr, (int)il, swz,
                                          (int)l2, (int)oob);
}
// cudaGetDriverEntryPointByVersion: the emulated driver has cuTensorMapEncodeTiled (ABI 12000).
static inline cudaError_t ltx2_emu_get_driver_entry_point_by_version(const char *symbol, void **fn, unsigned version,
                                                                     unsigned long long flags,
                                                                     cudaDriverEntryPointQueryResult *status) {
    (void)flags;
    if (!symbol || !fn) return cudaErrorInvalidValue;
    const bool ok = strcmp(symbol, "cuTensorMapEncodeTiled") == 0 && version >= 12000;
    *fn = ok ? reinterpret_cast<void *>(&ltx2_emu_tensor_map_encode_tiled) : nullptr;
    if (status) *status = ok ? cudaDriverEntryPointSuccess : cudaDriverEntryPointSymbolNotFound;
    return cudaSuccess;
}
#define cudaGetDriverEntryPointByVersion ltx2_emu_get_driver_entry_point_by_version

// ---- sm_90 PTX the emulator runs (emu_sm90.c) --------------------------------------------------------
// ex2.approx.ftz.f32: 2^x with subnormal results flushed to zero (glibc's exp2f otherwise).
static inline float ltx2_emu_ex2_ftz(float x) {
    const float y = exp2f(x);
    return fpclassify(y) == FP_SUBNORMAL ? 0.0f : y;
}

// The launch helper (common.cuh) hands the runtime a type-erased closure.
template <typename L> static void ltx2_emu_run_closure(void *c) { (*static_cast<L *>(c))(); }
static inline ltx2_emu_dim3 ltx2_emu_dim(dim3 d) {
    ltx2_emu_dim3 r = {d.x, d.y, d.z};
    return r;
}

#endif
