/* A backend that computes nothing and owns no memory: it counts the device bytes a piece of code
 * would hold on a GPU (current and peak). The memory planner (src/pipeline/memory_plan.h) runs the
 * real model forwards on it, so the plan measures the code that will run, not a model of it. Its
 * tensors are tagged as CUDA memory; its addresses are fake and must never be dereferenced (no
 * host code does: device tensors are only handed to ops). Downloads fill the host buffer with
 * zeros. */
#ifndef LTX2_BACKEND_BACKEND_PLAN_H
#define LTX2_BACKEND_BACKEND_PLAN_H

#include <stddef.h>

#include "backend/backend.h"

ltx2_status ltx2_backend_plan_create(ltx2_context *ctx, ltx2_backend **out);
/* Bytes held now and the most held at once since creation or the last reset (each allocation
 * rounded up to 256 bytes, as the CUDA allocator does at least). */
void ltx2_backend_plan_counts(const ltx2_backend *be, size_t *current, size_t *peak);
/* Restarts the peak from what is held now. */
void ltx2_backend_plan_reset_peak(ltx2_backend *be);

#endif
