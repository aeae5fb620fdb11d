/* The conditioned pipelines on a device backend against the same run on the CPU backend: what the
 * device path adds for them (#14 on a device, owed to #17). Shared by test_generate_cuda (a GPU) and
 * test_emu_generate_cond (the CUDA kernels in the CPU emulator). At 128 x 128, 9 frames:
 * - distilled with a held audio: the audio VAE encoder on the device, the x2 upsampler between the
 *   stages, the audio held (timestep 0). Not an image: the tiny video encoder's downsample convs
 *   have 4 output channels, which the device conv3d kernel refuses (it takes multiples of 8, as
 *   every real encoder's are), so images on a device stay a real-size check;
 * - two-stage with a style LoRA and the distilled LoRA: LoRAs fused into bf16 device weights, stage
 *   2's DiT loaded again on the device (the first freed: never two resident).
 * The final latents are compared (the decoders are generate_device_check.h's). */
#ifndef LTX2_TEST_GENERATE_COND_DEVICE_CHECK_H
#define LTX2_TEST_GENERATE_COND_DEVICE_CHECK_H

#include "generate_device_check.h"

/* Two stages (8 + 3 or 2 + 3 steps) of bf16 weights and activations against fp32, as the one-stage
 * check's bound (GEN_EMU_LATENT_MAX_REL_L2); the held audio latent is the audio encoder's alone. */
#define GEN_COND_AUDIO_LATENT_MAX_REL_L2 3e-2

static inline void cond_params(ltx2_generate_params *p, const char *ckpt, bool two_stage, ltx2_lora_spec *loras, char *style,
                        char *distilled, size_t cap, const char *v) {
    ltx2_generate_params_init(p);
    p->checkpoint = ckpt;
    p->prompt_embeds = LTX2_SOURCE_DIR "/weights/tiny/prompt_embeds_positive.safetensors";
    p->spatial_upsampler = LTX2_SOURCE_DIR "/weights/tiny/ltx2-tiny-upsampler-spatial-x2.safetensors";
    p->height = p->width = 128;
    p->frames = 9;
    p->stg_block = 1;
    p->decode_video = p->decode_audio = 0;
    if (!two_stage) {
        p->pipeline = LTX2_PIPELINE_DISTILLED;
        p->audio = LTX2_SOURCE_DIR "/tests/golden/data/a2vid_input.wav";
        p->audio_start_time = 0.1;
        return;
    }
    snprintf(style, cap, "%s/weights/tiny/ltx2-tiny-lora-style-%s.safetensors", LTX2_SOURCE_DIR, v);
    snprintf(distilled, cap, "%s/weights/tiny/ltx2-tiny-lora-distilled-%s.safetensors", LTX2_SOURCE_DIR, v);
    p->pipeline = LTX2_PIPELINE_TWO_STAGE;
    p->negative_prompt_embeds = LTX2_SOURCE_DIR "/weights/tiny/prompt_embeds_negative.safetensors";
    p->steps = 2;
    loras[0] = (ltx2_lora_spec){style, 0.8};
    p->loras = loras;
    p->n_loras = 1;
    p->distilled_lora = (ltx2_lora_spec){distilled, 1.0};
}

static inline void generate_cond_device_check(ltx2_context *ctx, const ltx2_backend *dev, const char *v) {
    char ckpt[1024], style[1024], distilled[1024], what[64];
    snprintf(ckpt, sizeof ckpt, "%s/weights/tiny/ltx2-tiny-%s.safetensors", LTX2_SOURCE_DIR, v);
    for (int two = 0; two < 2; two++) {
        ltx2_generate_params p;
        ltx2_lora_spec loras[1];
        cond_params(&p, ckpt, two, loras, style, distilled, sizeof style, v);
        snprintf(what, sizeof what, "%s %s", v, two ? "two-stage + LoRAs" : "distilled + audio");
        ltx2_generate_result ref, got;
        if (!gen_cpu_and_device(ctx, &p, dev, what, &ref, &got)) continue;
        gen_check_latents(what, &got, &ref, GEN_EMU_LATENT_MAX_REL_L2,
                          two ? GEN_EMU_LATENT_MAX_REL_L2 : GEN_COND_AUDIO_LATENT_MAX_REL_L2);
        printf("%s: cpu %.2f s, %s %.2f s\n", what, ref.timings.total, dev->name, got.timings.total);
        ltx2_generate_result_free(&got);
        ltx2_generate_result_free(&ref);
    }
}

#endif
