/* One LTX-2 transformer block on a device backend (bf16 storage, fp32 accumulation): the same
 * computation as dit_block_forward (src/model/dit_block.c) on the same host inputs. */
#ifndef LTX2_MODEL_DIT_CUDA_H
#define LTX2_MODEL_DIT_CUDA_H

#include "backend/backend.h"
#include "model/dit_internal.h"

/* Runs block i of w over v and a (host f32 residual streams, updated in place) on backend be
 * (normally CUDA): uploads the block's weights as bf16, the AdaLN rows (table + AdaLN output,
 * summed in fp32 on the host as the reference does) and RoPE tables as f32, runs every linear,
 * norm, modulation, attention and gate on the device, and downloads the streams. perturb is the
 * forward's [B * num_layers] STG flags or NULL. Attention with a head_dim the device kernel lacks
 * (not 64 / 128, e.g. the tiny test models) runs its SDPA core on the host in fp32, with the
 * QK-norm and RoPE still on the device. */
ltx2_status ltx2_dit_block_device(ltx2_context *ctx, const ltx2_backend *be, const ltx2_dit_weights *w, int64_t i,
                                  const uint32_t *perturb, dit_stream *v, dit_stream *a);

#endif
