// LTX2_HD marks pure index and encoding arithmetic (fragment maps, swizzles, descriptor bits)
// that a kernel uses on the device and a CPU test checks against the documented layouts, so the
// layout claims are tested on machines without a GPU. Headers using it must stay plain C11 when
// included from C (no templates, no CUDA types).
#ifndef LTX2_KERNELS_HOSTDEV_H
#define LTX2_KERNELS_HOSTDEV_H

#ifdef __CUDACC__
#define LTX2_HD static __host__ __device__ __forceinline__
#else
#define LTX2_HD static inline
#endif

#endif
