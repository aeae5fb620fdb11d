/* `ltx2 generate`: which of ltx-pipelines' pipelines a run is, from --pipeline, the checkpoint's
 * name and the flags given, refused before any work when the combination cannot be right. */
#include <stdio.h>
#include <string.h>

#include "cli/generate_cli.h"
#include "pipeline/generate_stages.h"

/* What a Lightricks file name says of its model: "distilled" (ltx-2-19b-distilled.safetensors,
 * ltx-2.3-22b-distilled-1.1...), "dev" (ltx-2-19b-dev...), or NULL. The files carry no other mark
 * (their metadata config is the same for both), so the name is the evidence, and it is printed. */
static const char *name_variant(const char *path) {
    char buf[512]; /* a diffusers directory's name: without the trailing slashes */
    snprintf(buf, sizeof buf, "%s", path);
    for (size_t n = strlen(buf); n > 1 && buf[n - 1] == '/'; n--) buf[n - 1] = '\0';
    const char *base = strrchr(buf, '/');
    base = base ? base + 1 : buf;
    if (strstr(base, "distilled")) return "distilled";
    if (strstr(base, "-dev") || strstr(base, "_dev")) return "dev";
    return NULL;
}

/* The checkpoint path whose name says its variant (split files: the first one that does), else the
 * first path. */
const char *cli_generate_named_checkpoint(const char *const *paths, int n) {
    for (int i = 0; i < n; i++)
        if (name_variant(paths[i])) return paths[i];
    return n > 0 ? paths[0] : NULL;
}

/* Distilled needs a distilled model; two-stage adds the distilled LoRA to a dev model. */
bool cli_generate_pick_pipeline(int asked, bool distilled_ckpt, const char *ckpt, bool guidance_flags, bool have_dlora,
                                ltx2_generate_params *p, const char **why_out) {
    const char *variant = distilled_ckpt ? "distilled" : name_variant(ckpt);
    const bool named_distilled = variant && !strcmp(variant, "distilled"), named_dev = variant && !strcmp(variant, "dev");
    const char *why = "--pipeline";
    if (asked >= 0) {
        p->pipeline = (ltx2_generate_pipeline)asked;
    } else if (named_distilled) {
        p->pipeline = LTX2_PIPELINE_DISTILLED;
        why = distilled_ckpt ? "--distilled-checkpoint-path" : "the checkpoint's name says distilled";
    } else if (have_dlora) {
        p->pipeline = LTX2_PIPELINE_TWO_STAGE;
        why = "--distilled-lora";
    } else {
        p->pipeline = LTX2_PIPELINE_ONE_STAGE;
        why = "default";
    }
    const ltx2_generate_pipeline pl = p->pipeline;
    const char *name = pl == LTX2_PIPELINE_DISTILLED ? "distilled" : pl == LTX2_PIPELINE_TWO_STAGE ? "two-stage"
                                                                                                  : "one-stage";
    if (pl == LTX2_PIPELINE_DISTILLED && named_dev) {
        fprintf(stderr, "ltx2 %s: the distilled pipeline on %s, whose name says dev: a dev model needs the distilled "
                "LoRA for the distilled sigmas (--pipeline two-stage --distilled-lora FILE); or use the distilled "
                "checkpoint\n", CLI_GENERATE_CMD, ckpt);
        return false;
    }
    if (pl == LTX2_PIPELINE_TWO_STAGE && named_distilled) {
        fprintf(stderr, "ltx2 %s: the two-stage pipeline adds the distilled LoRA to a dev model, but %s is distilled: "
                "use --pipeline distilled\n", CLI_GENERATE_CMD, ckpt);
        return false;
    }
    if (pl == LTX2_PIPELINE_DISTILLED && guidance_flags) {
        fprintf(stderr, "ltx2 %s: the distilled pipeline runs fixed sigmas without guidance: --num-inference-steps, the "
                "guidance scales, --stg-block and a negative prompt do not apply (use --pipeline one-stage or "
                "two-stage for them)\n", CLI_GENERATE_CMD);
        return false;
    }
    if (pl != LTX2_PIPELINE_ONE_STAGE && !ltx2_gen_upsampler_path(p)) { /* given, or a diffusers directory's */
        fprintf(stderr, "ltx2 %s: the %s pipeline (%s) needs --spatial-upsampler-path FILE (the x2 spatial latent "
                "upsampler; a diffusers checkpoint directory's latent_upsampler/ is found by itself); or run "
                "--pipeline one-stage\n", CLI_GENERATE_CMD, name, why);
        return false;
    }
    if (pl == LTX2_PIPELINE_ONE_STAGE && p->spatial_upsampler) {
        fprintf(stderr, "ltx2 %s: --spatial-upsampler-path is for the distilled and two-stage pipelines; the one-stage "
                "pipeline does not upsample\n", CLI_GENERATE_CMD);
        return false;
    }
    if (pl == LTX2_PIPELINE_TWO_STAGE && !have_dlora) {
        fprintf(stderr, "ltx2 %s: the two-stage pipeline's stage 2 needs --distilled-lora FILE [STRENGTH]\n", CLI_GENERATE_CMD);
        return false;
    }
    if (pl != LTX2_PIPELINE_TWO_STAGE && have_dlora) {
        fprintf(stderr, "ltx2 %s: --distilled-lora is for the two-stage pipeline's stage 2 (this run is %s); give other "
                "LoRAs with --lora\n", CLI_GENERATE_CMD, name);
        return false;
    }
    *why_out = why;
    return true;
}

bool cli_generate_two_stage_clip(ltx2_context *ctx, const ltx2_generate_params *p, ltx2_two_stage_clip *clip) {
    const char *path = ltx2_gen_upsampler_path(p);
    ltx2_upsampler_config cfg;
    ltx2_status st = ltx2_upsampler_read_config(ctx, path, &cfg);
    if (st == LTX2_OK)
        st = ltx2_two_stage_clip_make(ctx, &cfg, p->frames, p->height, p->width, p->fps, p->images, p->n_images, clip);
    if (st != LTX2_OK) {
        fprintf(stderr, "ltx2 %s: latent upsampler %s: %s\n", CLI_GENERATE_CMD, path, ltx2_last_error(ctx));
        return false;
    }
    return true;
}
