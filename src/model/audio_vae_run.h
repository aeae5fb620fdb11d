/* What the audio VAE decoder's and encoder's one forwards share on the op table (not a public
 * interface): activations [B, time, 1, mel, C], so a CausalConv2d is the conv3d op with zero frames
 * in front; the ResnetBlock (PixelNorm + SiLU, conv, twice, plus the nin or identity shortcut); and
 * dumping an activation in the reference's [B, C, T, F] layout. */
#ifndef LTX2_MODEL_AUDIO_VAE_RUN_H
#define LTX2_MODEL_AUDIO_VAE_RUN_H

#include "model/audio_act.h"
#include "model/audio_vae.h"
#include "model/vae_run.h"

/* A ResnetBlock's convs on a backend. */
typedef struct audio_dev_res {
    vae_dev_conv conv1, conv2, nin; /* nin only when the width changes */
    bool has_nin;
} audio_dev_res;

void audio_dev_res_release(const ltx2_backend *be, audio_dev_res *r);

/* One level: its res blocks and its resampling conv (the decoder's Upsample phase conv, the
 * encoder's Downsample). */
typedef struct audio_dev_level {
    audio_dev_res *blocks;
    int n_blocks;
    vae_dev_conv resample;
    float *resample_w; /* host weights a CPU view of resample points into (NULL: the model's own) */
} audio_dev_level;

/* An audio VAE net (decoder or encoder) placed on a backend. */
typedef struct audio_dev_net {
    const ltx2_backend *be;
    ltx2_dtype dt;
    vae_dev_conv conv_in, conv_out;
    audio_dev_res mid1, mid2;
    audio_dev_level levels[LTX2_AUDIO_MAX_LEVELS];
} audio_dev_net;

void audio_dev_net_release(audio_dev_net *n);

/* x = shortcut(x) + conv2(SiLU(PN(conv1(SiLU(PN(x)))))), shortcut = nin or x; replaces *x. */
ltx2_status audio_res_block(vae_run *r, const audio_dev_res *rb, ltx2_tensor *x);

/* dump(name) of a backend activation [B, T, 1, F, C] as host [B, c, T, F] (its first c channels). */
ltx2_status audio_dump_act(vae_run *r, ltx2_audio_dump_fn dump, void *user, const char *name, const ltx2_tensor *x,
                           int64_t c);

#endif
