/* The CPU backend's fused DiT elementwise ops, GEMM epilogues and fp8 casts (fp32 references),
 * wired into the CPU op table by backend_cpu.c. Private to src/backend/. */
#ifndef LTX2_BACKEND_CPU_FUSED_H
#define LTX2_BACKEND_CPU_FUSED_H

#include "backend/backend.h"

ltx2_status ltx2_cpu_be_norm_modulate(const ltx2_backend *be, ltx2_context *ctx, const ltx2_tensor *x,
                                      ltx2_norm_kind norm, float eps, const ltx2_tensor *scale,
                                      const ltx2_tensor *shift, const ltx2_mod_rows *m, ltx2_tensor *y,
                                      const ltx2_fp8_outs *q);
ltx2_status ltx2_cpu_be_gated_add(const ltx2_backend *be, ltx2_context *ctx, ltx2_tensor *x, const ltx2_tensor *y,
                                  const ltx2_tensor *gate, const ltx2_mod_rows *m);
ltx2_status ltx2_cpu_be_head_gate(const ltx2_backend *be, ltx2_context *ctx, ltx2_tensor *o,
                                  const ltx2_tensor *logits, int64_t heads, const ltx2_fp8_outs *q);
ltx2_status ltx2_cpu_be_gemm_ex(const ltx2_backend *be, ltx2_context *ctx, const ltx2_tensor *x,
                                const ltx2_tensor *w, const ltx2_gemm_ex_args *a, ltx2_tensor *y);
ltx2_status ltx2_cpu_be_add_rms_norm(const ltx2_backend *be, ltx2_context *ctx, ltx2_tensor *x, const ltx2_tensor *y,
                                     const ltx2_tensor *wy, const ltx2_tensor *w, float eps, ltx2_tensor *out);
ltx2_status ltx2_cpu_be_rms_norm_rope(const ltx2_backend *be, ltx2_context *ctx, const ltx2_tensor *x,
                                      const ltx2_tensor *w, float eps, int64_t heads, const ltx2_tensor *cos_t,
                                      const ltx2_tensor *sin_t, ltx2_tensor *y);
ltx2_status ltx2_cpu_be_fp8(const ltx2_backend *be, ltx2_context *ctx, const ltx2_tensor *x, float scale,
                            ltx2_tensor *y);

#endif
