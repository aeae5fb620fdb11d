/* glibc libmvec's 16-wide float functions (glibc >= 2.35, x86-64): CMakeLists.txt checks that they
 * link and defines LTX2_HAVE_MVEC. Each is within 1 ulp, as glibc's scalar function and as the Sleef
 * functions torch's CPU kernels vectorise with; a scalar call per float cost the GELU a tenth of a
 * DiT block and the softmax more than its GEMMs. Without them LTX2_CPU_MVEC is 0 and the callers
 * keep their scalar loops. */
#ifndef LTX2_CPU_CPU_MVEC_H
#define LTX2_CPU_CPU_MVEC_H

#if defined(LTX2_HAVE_MVEC) && defined(__AVX512F__)
#include <immintrin.h>
#define LTX2_CPU_MVEC 1
__m512 _ZGVeN16v_tanhf(__m512 x);
__m512 _ZGVeN16v_expf(__m512 x);
#else
#define LTX2_CPU_MVEC 0
#endif

#endif
