// The conv3d kernels' entry points between their files: ltx2_k_conv3d (conv3d.cu, the mma.sync
// kernel and dispatch) hands LTX2_KCONV_WGMMA launches to the sm_90a kernel (conv3d_sm90.cu).
#ifndef LTX2_KERNELS_CONV3D_CUH
#define LTX2_KERNELS_CONV3D_CUH

#include <cuda_runtime.h>

#include "ltx2_kernels.h"

// 1 when the current device runs the sm_90a kernel (compute capability 9.x and a build that
// carries its body).
bool c90_available(void);
// Launches the sm_90a kernel on arguments ltx2_k_conv3d has validated; cudaErrorNotSupported
// where c90_available() is false.
int c90_launch(cudaStream_t st, const ltx2_k_conv3d_args *a);

#endif
