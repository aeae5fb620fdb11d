/* Stage 1 of a two-stage pipeline from its latent upsampler (two_stage_clip.h). */
#include "pipeline/two_stage_clip.h"

#include <string.h>

#include "core/context.h"

ltx2_status ltx2_two_stage_clip_make(ltx2_context *ctx, const ltx2_upsampler_config *c, int64_t frames, int64_t height,
                                     int64_t width, double fps, const ltx2_image_cond *images, int n_images,
                                     ltx2_two_stage_clip *out) {
    memset(out, 0, sizeof *out);
    int64_t num = 1, den = 1;
    if (!ltx2_upsampler_ratio(c, &num, &den))
        return LTX2_ERROR(ctx, LTX2_ERR_UNSUPPORTED, "latent upsampler: rational scale %g", c->spatial_scale);
    out->frames = frames;
    out->height = height;
    out->width = width;
    out->fps = fps;
    out->frame_div = 1;
    if (c->temporal_upsample) {
        /* latent frames f1 -> 2 f1 - 1: the final clip's frames - 1 must be a multiple of two cells */
        const int64_t step = 2 * LTX2_TWO_STAGE_CELL_FRAMES;
        out->kind = "temporal x2";
        out->what = "every second frame at half the frame rate";
        if (frames < 1 || (frames - 1) % step) {
            const int64_t lo = frames < 1 ? 1 : (frames - 1) / step * step + 1;
            return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "with the temporal x2 latent upsampler the frame count must be "
                              "%lldk + 1 (stage 1 runs every second frame, itself %dk + 1): got %lld; %lld or %lld fit",
                              (long long)step, LTX2_TWO_STAGE_CELL_FRAMES, (long long)frames, (long long)lo,
                              (long long)(lo + step));
        }
        out->frames = (frames - 1) / 2 + 1;
        out->fps = fps / 2;
        out->frame_div = 2;
        for (int i = 0; images && i < n_images; i++)
            if (images[i].frame % out->frame_div)
                return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "image %s at frame %d: stage 1 runs every second frame (the "
                                  "temporal x2 latent upsampler), so an image must sit on an even frame",
                                  images[i].path, images[i].frame);
        return LTX2_OK;
    }
    if (!((num == 2 && den == 1) || (num == 3 && den == 2)))
        return LTX2_ERROR(ctx, LTX2_ERR_UNSUPPORTED, "the latent upsampler is spatial x%g: the two-stage pipelines take "
                          "spatial x2 (ltx-2-spatial-upscaler-x2), spatial x1.5 or temporal x2", (double)num / (double)den);
    /* stage 1's latent side s1 -> s1 * num / den exactly: s1 a multiple of den, so the final side a
     * multiple of num cells */
    out->kind = num == 2 ? "spatial x2" : "spatial x1.5";
    out->what = num == 2 ? "half the width and height" : "two thirds of the width and height";
    const int64_t m = LTX2_TWO_STAGE_CELL_PX * num; /* the final width and height are multiples of it */
    if (height % m || width % m || height < m || width < m) {
        const int64_t h = height < m ? m : height / m * m, w = width < m ? m : width / m * m;
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "the size %lldx%lld (width x height) must be multiples of %lld: "
                          "stage 1 runs at %s (the %s latent upsampler); %lldx%lld fits",
                          (long long)width, (long long)height, (long long)m, out->what, out->kind, (long long)w,
                          (long long)h);
    }
    out->height = height * den / num;
    out->width = width * den / num;
    return LTX2_OK;
}
