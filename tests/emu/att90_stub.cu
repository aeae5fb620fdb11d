// The emulator's stand-in for kernels/attention_sm90.cu, which needs TMA, wgmma and mbarriers
// that the emulator does not model: the wgmma path reports itself unavailable, so
// ltx2_k_attention takes the mma.sync kernel under AUTO and answers cudaErrorNotSupported to a
// forced LTX2_KATTN_WGMMA, as on a GPU without sm_90a.
#include "attention.cuh"

bool att90_available(void) { return false; }
bool att90_shape_ok(const att_params &, int64_t, int64_t) { return false; }
int att90_launch(cudaStream_t, const att_params &, int64_t, int64_t) { return (int)cudaErrorNotSupported; }
extern "C" int ltx2_k_attention_wgmma_available(void) { return 0; }
