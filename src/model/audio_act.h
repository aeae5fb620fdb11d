/* Channels-last [B, T, F, C] activation buffers shared by the audio VAE decoder and encoder, and
 * their dump in the reference's [B, C, T, F] layout. */
#ifndef LTX2_MODEL_AUDIO_ACT_H
#define LTX2_MODEL_AUDIO_ACT_H

#include <stdint.h>

#include "model/audio_config.h"

typedef struct ltx2_audio_act {
    float *d;
    int64_t n, t, f, c;
} ltx2_audio_act;

int64_t ltx2_audio_act_numel(const ltx2_audio_act *a);
ltx2_status ltx2_audio_act_alloc(ltx2_context *ctx, ltx2_audio_act *a, int64_t n, int64_t t, int64_t f, int64_t c);
void ltx2_audio_act_free(ltx2_audio_act *a);
/* No-op when dump is NULL; dumping is diagnostics, so an allocation failure skips it silently. */
void ltx2_audio_act_dump(ltx2_audio_dump_fn dump, void *user, const char *name, const ltx2_audio_act *a);

#endif
