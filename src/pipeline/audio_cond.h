/* Audio conditioning (audio-to-video), as ltx-pipelines 1.0.0 a2vid_two_stage.py prepares it: the
 * file's window decoded (io/audio_file.h), the waveform through the audio VAE encoder (resampled to
 * the model rate, log-mel, AudioEncoder, normalised: ltx-core encode_audio), the latent cut to the
 * clip's audio frames (AudioLatentShape.from_duration) and held fixed in every stage
 * (denoise_video_only: noise scale 0, denoise mask 0). The result's audio is the input waveform. */
#ifndef LTX2_PIPELINE_AUDIO_COND_H
#define LTX2_PIPELINE_AUDIO_COND_H

#include "io/wav.h"
#include "ltx2/ltx2.h"
#include "pipeline/pipeline.h"

/* Reads p->audio's window (before any model loads) and refuses a file that cannot cover the clip
 * (frames / fps seconds) by more than LTX2_AUDIO_COND_SLACK_FRAMES latent frames; the exact check
 * is ltx2_audio_cond_encode's. */
ltx2_status ltx2_audio_cond_read(ltx2_context *ctx, const ltx2_generate_params *p, ltx2_wav_audio *out);

/* The audio encoder's latent of clip, as the audio tokens [g->at, g->audio_feat] of geometry g
 * (the encoder is loaded onto m->be on first use). A mono file is duplicated to the encoder's two
 * channels (ltx-core has no mono path: its conv would refuse one channel); more channels are
 * refused. dump (may be NULL): encoded_audio_latent [1, z, T', F'] before the cut. */
ltx2_status ltx2_audio_cond_encode(ltx2_context *ctx, ltx2_pipe_models *m, const ltx2_wav_audio *clip,
                                   const ltx2_pipe_geometry *g, const char *dump, float *tokens);

/* A short window still encodes to the clip's frames when it lacks less than this many latent frames
 * (the mel's extra frame and the causal downsampling round up); the encode checks exactly. */
#define LTX2_AUDIO_COND_SLACK_FRAMES 2

#endif
