/* Broadcast planning for binary elementwise ops (see broadcast.h). */
#include "cpu/broadcast.h"

#include <stdio.h>
#include <string.h>

static void shape_text(const ltx2_tensor *t, char *buf, size_t cap) {
    size_t used = (size_t)snprintf(buf, cap, "[");
    for (int i = 0; i < t->ndim && used < cap; i++)
        used += (size_t)snprintf(buf + used, cap - used, i ? ", %lld" : "%lld", (long long)t->shape[i]);
    if (used < cap) snprintf(buf + used, cap - used, "]");
}

static ltx2_status shape_error(ltx2_context *ctx, const char *why, const ltx2_tensor *a,
                               const ltx2_tensor *b, const ltx2_tensor *out) {
    char sa[160], sb[160], so[160];
    shape_text(a, sa, sizeof(sa));
    shape_text(b, sb, sizeof(sb));
    shape_text(out, so, sizeof(so));
    return LTX2_ERROR(ctx, LTX2_ERR_SHAPE, "broadcast: %s (a %s, b %s, out %s)", why, sa, sb, so);
}

ltx2_status ltx2_broadcast_plan_make(ltx2_context *ctx, const ltx2_tensor *a, const ltx2_tensor *b,
                                     const ltx2_tensor *out, ltx2_broadcast_plan *plan) {
    if (!a || !b || !out || !plan)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "broadcast: NULL argument");
    if (a->ndim < 0 || a->ndim > LTX2_MAX_DIMS || b->ndim < 0 || b->ndim > LTX2_MAX_DIMS ||
        out->ndim < 0 || out->ndim > LTX2_MAX_DIMS)
        return LTX2_ERROR(ctx, LTX2_ERR_SHAPE, "broadcast: ndim out of range (a %d, b %d, out %d, max %d)",
                          a->ndim, b->ndim, out->ndim, LTX2_MAX_DIMS);
    int nd = a->ndim > b->ndim ? a->ndim : b->ndim;
    if (out->ndim != nd) return shape_error(ctx, "out rank differs from the broadcast rank", a, b, out);

    /* Full-rank aligned view (trailing dims line up). */
    int64_t shape[LTX2_MAX_DIMS], sa[LTX2_MAX_DIMS], sb[LTX2_MAX_DIMS], so[LTX2_MAX_DIMS];
    for (int i = 0; i < nd; i++) {
        int ia = i - (nd - a->ndim), ib = i - (nd - b->ndim);
        int64_t da = ia >= 0 ? a->shape[ia] : 1, db = ib >= 0 ? b->shape[ib] : 1;
        if (da < 0 || db < 0 || out->shape[i] < 0) return shape_error(ctx, "negative dim", a, b, out);
        if (da != db && da != 1 && db != 1) return shape_error(ctx, "shapes do not broadcast", a, b, out);
        int64_t d = da == 1 ? db : da;
        if (out->shape[i] != d) return shape_error(ctx, "out does not have the broadcast shape", a, b, out);
        shape[i] = d;
        sa[i] = (ia >= 0 && da != 1) ? a->strides[ia] : 0;
        sb[i] = (ib >= 0 && db != 1) ? b->strides[ib] : 0;
        so[i] = out->strides[i];
    }

    int64_t numel = 1;
    for (int i = 0; i < nd; i++) numel *= shape[i];

    /* Drop size-1 dims, then merge dim i into i+1 when every view steps through them as one. */
    memset(plan, 0, sizeof(*plan));
    int m = 0;
    for (int i = 0; i < nd; i++) {
        if (shape[i] == 1) continue;
        if (m > 0) {
            int k = m - 1;
            if (plan->a_strides[k] == sa[i] * shape[i] && plan->b_strides[k] == sb[i] * shape[i] &&
                plan->out_strides[k] == so[i] * shape[i]) {
                plan->shape[k] *= shape[i];
                plan->a_strides[k] = sa[i];
                plan->b_strides[k] = sb[i];
                plan->out_strides[k] = so[i];
                continue;
            }
        }
        plan->shape[m] = shape[i];
        plan->a_strides[m] = sa[i];
        plan->b_strides[m] = sb[i];
        plan->out_strides[m] = so[i];
        m++;
    }
    if (m == 0) { /* scalar result */
        plan->shape[0] = 1;
        m = 1;
    }
    plan->ndim = m;
    plan->numel = numel;
    return LTX2_OK;
}
