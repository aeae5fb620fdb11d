/* Broadcasting add / mul on strided f32 views: the innermost merged dim is the vectorisable
 * inner loop, the outer dims are flattened and split across OpenMP threads. */
#include "cpu/broadcast.h"
#include "cpu/cpu_ops.h"

ltx2_status ltx2_cpu_binary(ltx2_context *ctx, ltx2_binary_op op, const ltx2_tensor *a,
                            const ltx2_tensor *b, ltx2_tensor *out) {
    if (op != LTX2_BINARY_ADD && op != LTX2_BINARY_MUL)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "cpu binary: unknown op %d", (int)op);
    if (!a || !b || !out) return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "cpu binary: NULL tensor");
    if (a->dtype != LTX2_F32 || b->dtype != LTX2_F32 || out->dtype != LTX2_F32)
        return LTX2_ERROR(ctx, LTX2_ERR_DTYPE, "cpu binary: only f32 is supported (a %s, b %s, out %s)",
                          ltx2_dtype_name(a->dtype), ltx2_dtype_name(b->dtype), ltx2_dtype_name(out->dtype));
    if (a->device != LTX2_DEVICE_CPU || b->device != LTX2_DEVICE_CPU || out->device != LTX2_DEVICE_CPU)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "cpu binary: tensors must be on the CPU");
    ltx2_broadcast_plan p;
    LTX2_TRY(ltx2_broadcast_plan_make(ctx, a, b, out, &p));
    if (p.numel == 0) return LTX2_OK;
    if (!a->data || !b->data || !out->data)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "cpu binary: NULL data pointer");

    const float *pa = a->data, *pb = b->data;
    float *po = out->data;
    int last = p.ndim - 1;
    int64_t inner = p.shape[last];
    int64_t ia = p.a_strides[last], ib = p.b_strides[last], io = p.out_strides[last];
    int64_t outer = p.numel / inner;
#pragma omp parallel for schedule(static)
    for (int64_t r = 0; r < outer; r++) {
        int64_t oa = 0, ob = 0, oo = 0, rem = r;
        for (int d = last - 1; d >= 0; d--) {
            int64_t c = rem % p.shape[d];
            rem /= p.shape[d];
            oa += c * p.a_strides[d];
            ob += c * p.b_strides[d];
            oo += c * p.out_strides[d];
        }
        const float *ra = pa + oa, *rb = pb + ob;
        float *ro = po + oo;
        if (ia == 1 && ib == 1 && io == 1) {
            if (op == LTX2_BINARY_ADD)
                for (int64_t i = 0; i < inner; i++) ro[i] = ra[i] + rb[i];
            else
                for (int64_t i = 0; i < inner; i++) ro[i] = ra[i] * rb[i];
        } else {
            if (op == LTX2_BINARY_ADD)
                for (int64_t i = 0; i < inner; i++) ro[i * io] = ra[i * ia] + rb[i * ib];
            else
                for (int64_t i = 0; i < inner; i++) ro[i * io] = ra[i * ia] * rb[i * ib];
        }
    }
    return LTX2_OK;
}
