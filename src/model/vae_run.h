/* The plumbing a convolutional forward needs on any backend (the video VAE decoder and encoder
 * today): conv weights placed on the backend (views of the host arrays on the CPU backend in f32,
 * converted copies elsewhere), host <-> device transfers in the storage dtype, and one run's table
 * of device buffers, so that an error anywhere frees everything and a buffer a stage is done with
 * is freed only after the queued kernels that may read it have drained. Not a public interface. */
#ifndef LTX2_MODEL_VAE_RUN_H
#define LTX2_MODEL_VAE_RUN_H

#include <stdbool.h>

#include "backend/backend.h"
#include "model/video_vae.h"

/* Device buffers one run may hold at once: the activation, a res layer's temporaries (norm
 * output, two conv outputs, modulation table, noise term) and the ones retired but not yet
 * freed; 32 leaves ample room. */
#define VAE_RUN_MAX_BUFS 32

/* One conv's weights on a backend. */
typedef struct vae_dev_conv {
    ltx2_conv3d_desc desc;
    ltx2_tensor w, b; /* [kt*kh*kw*c_in, c_out], [c_out] in the storage dtype */
    bool owned;       /* a copy on the backend (else views of the host weights) */
} vae_dev_conv;

/* The dtype a conv net stores weights and activations in on be: bf16 where the backend's conv3d
 * takes it (CUDA, the emulator), else f32 (the CPU reference). Fails, naming the op, when be
 * lacks one of need[n] in that dtype. */
ltx2_status vae_run_pick_dtype(ltx2_context *ctx, const ltx2_backend *be, const char *model, const ltx2_op *need,
                               size_t n, ltx2_dtype *out);

/* Channel granularity of the device conv3d (CUDA and the emulator take c_in and c_out in multiples
 * of 8). A conv whose extra outputs the consumer ignores is widened to it (the video encoder's
 * conv_out has latent_channels + 1 = 129 outputs in real files, the audio decoder's 2), and one
 * whose input is uploaded from the host with zero channels appended (the tiny audio latent's 2). */
#define VAE_CONV_CHANNEL_ALIGN 8

/* A conv's packed weights ([kt, kh, kw, c_in][c_out], cpu_conv3d.h) and bias on be in dt (views
 * on the CPU backend in f32). On a copy, c_in is rounded up to a multiple of c_in_align with zero
 * weight rows (the input must then carry that many channels, the appended ones zero: a zero weight
 * times a NaN is still NaN) and c_out up to a multiple of c_out_align with zero weights and bias
 * (the consumer reads only the first d->c_out channels of each output row); o->desc has the
 * widened counts. */
ltx2_status vae_dev_conv_upload(ltx2_context *ctx, const ltx2_backend *be, ltx2_dtype dt, const ltx2_conv3d_desc *d,
                                const float *weight, const float *bias, int64_t c_in_align, int64_t c_out_align,
                                vae_dev_conv *o);
/* The same for a ltx2_vae_conv, at its exact channel counts. */
ltx2_status vae_dev_conv_upload_exact(ltx2_context *ctx, const ltx2_backend *be, ltx2_dtype dt, const ltx2_vae_conv *c,
                                      vae_dev_conv *o);
void vae_dev_conv_release(const ltx2_backend *be, vae_dev_conv *c);

/* Whether t is a contiguous f32 host tensor of ndim dims with data (what the models' host-facing
 * entry points take and give). */
bool vae_host_f32(const ltx2_tensor *t, int ndim);

/* A host f32 vector [n] on be in dt: a view of host on the CPU backend in f32, else a copy;
 * vae_dev_vec_release frees the copy (a view is told by its f32 CPU tensor). */
ltx2_status vae_dev_vec_upload(ltx2_context *ctx, const ltx2_backend *be, ltx2_dtype dt, const float *host, int64_t n,
                               ltx2_tensor *out);
void vae_dev_vec_release(const ltx2_backend *be, ltx2_tensor *t);

/* A tensor header for data on device dev. */
ltx2_tensor vae_dev_view(void *data, ltx2_dtype dt, ltx2_device dev, int ndim, const int64_t *shape);

/* Device tensor (f32 or bf16, contiguous) -> host f32 [numel]. */
ltx2_status vae_dev_to_host(ltx2_context *ctx, const ltx2_backend *be, const ltx2_tensor *t, float *host);

/* One forward's device buffers. */
typedef struct vae_run {
    ltx2_context *ctx;
    const ltx2_backend *be;
    ltx2_dtype dt; /* activations */
    void *bufs[VAE_RUN_MAX_BUFS];
    bool retired[VAE_RUN_MAX_BUFS];
    int nbufs;
} vae_run;

void vae_run_init(vae_run *r, ltx2_context *ctx, const ltx2_backend *be, ltx2_dtype dt);
/* A new tracked activation in r->dt. */
ltx2_status vae_run_new(vae_run *r, int ndim, const int64_t *shape, ltx2_tensor *out);
/* A new tracked tensor holding host f32 data, stored as dt. */
ltx2_status vae_run_upload(vae_run *r, const float *host, ltx2_dtype dt, int ndim, const int64_t *shape,
                           ltx2_tensor *out);
/* t will not be used by ops issued from now on; freed at the next flush. */
void vae_run_retire(vae_run *r, ltx2_tensor *t);
/* Waits for the queued ops (only when something is retired), then frees the retired buffers. */
ltx2_status vae_run_flush(vae_run *r);
/* Frees everything; after a failure (st != OK) lets the queued work finish first. */
void vae_run_end(vae_run *r, ltx2_status st);
/* dump(name) of a device activation, as host f32 (nothing without dump). */
ltx2_status vae_run_dump(vae_run *r, ltx2_vae_dump_fn dump, void *user, const char *name, const ltx2_tensor *x);
/* y = conv(x) as a new tracked activation. */
ltx2_status vae_run_conv3d(vae_run *r, const vae_dev_conv *c, const ltx2_tensor *x, ltx2_tensor *y);

#endif
