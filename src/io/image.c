/* Conditioning-image reader and ltx-pipelines' H.264 round trip (see image.h).
 *
 * Reading follows decode_image() = np.array(PIL.Image.open(path))[..., :3]. A PNG (recognised by
 * its 8-byte signature) goes through libpng, whose transforms give the same bytes as PIL for 8-bit
 * RGB and RGBA (alpha dropped, no compositing, gAMA/sRGB/tRNS ignored as PIL ignores them) and for
 * 16-bit RGB(A) (png_set_strip_16 keeps the high byte of each sample, which is what PIL's
 * "RGB;16B" unpacker does too: checked with Pillow 13). Gray, gray + alpha and palette PNGs are
 * expanded to RGB (gray replicated, palette looked up, tRNS ignored): PIL's own expression breaks
 * on them (np.array gives [h, w] or [h, w, 2] and [..., :3] then slices columns or keeps two
 * channels), so this matches Image.convert("RGB") instead; 16-bit gray keeps the high byte, where
 * PIL opens it as I;16 and convert("RGB") clips every value above 255 to 255.
 * Every other format is opened by FFmpeg (a single-image demuxer such as jpeg_pipe or webp_pipe,
 * the decoder, libswscale to RGB24). JPEG decoding is NOT bitwise PIL's: FFmpeg's IDCT and chroma
 * upsampling differ from libjpeg-turbo's, so pixels differ by a few codes.
 *
 * The round trip follows preprocess() -> encode_single_frame() + decode_single_frame() in PyAV:
 * VideoFrame.from_ndarray(rgb24).reformat("yuv420p") (libswscale, SWS_BILINEAR, no colour
 * arguments: BT.601 matrix, limited range), libx264 with crf and preset veryfast at 1 fps, then the
 * first decoded frame's to_ndarray("rgb24") (libswscale again, SWS_BILINEAR, the frame's matrix and
 * range, which x264 leaves unspecified: BT.601 limited). The MP4 container PyAV writes in between
 * does not touch the pixels, so the packets go straight from encoder to decoder in memory. */
#define _POSIX_C_SOURCE 200809L
#include "io/image.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/context.h"

#ifdef LTX2_HAVE_PNG
#include <png.h>
#endif

#ifdef LTX2_HAVE_FFMPEG
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/dict.h>
#include <libavutil/error.h>
#include <libavutil/frame.h>
#include <libavutil/log.h>
#include <libavutil/pixdesc.h>
#include <libswscale/swscale.h>
#endif

/* Largest accepted side in pixels: far above any size LTX-2 generates, and it keeps every
 * width * height * 3 product and swscale's int strides far from overflow. */
#define IMAGE_MAX_DIM 16384
/* A PNG starts with this 8-byte signature (PNG spec 5.2). */
#define IMAGE_PNG_SIG_BYTES 8
/* Ancillary chunks libpng reads whole into a buffer of the length they claim, and which carry
 * nothing the pixels need here (no colour management): skipped unread instead. A 50-byte file
 * claiming a 1.5 GB sPLT chunk made libpng 1.6.39 allocate 1.5 GB (its over-length check is only
 * a warning on read; CI's fuzzer, tests/fuzz/corpus/fuzz_image/splt_1p5gb.png). 5 bytes an entry. */
#define IMAGE_PNG_SKIPPED "sPLT\0iCCP\0tEXt\0zTXt\0iTXt\0eXIf\0pCAL\0sCAL"
#define IMAGE_PNG_SKIPPED_N 8
static const uint8_t png_signature[IMAGE_PNG_SIG_BYTES] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
/* x264's CRF scale for 8-bit video is 0 (lossless) .. 51; preprocess() skips the round trip at 0. */
#define IMAGE_CRF_MAX 51

#if defined(LTX2_HAVE_PNG) || defined(LTX2_HAVE_FFMPEG) /* without either no file is decoded */
static ltx2_status check_size(ltx2_context *ctx, const char *path, int64_t w, int64_t h) {
    if (w < 1 || h < 1 || w > IMAGE_MAX_DIM || h > IMAGE_MAX_DIM)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "image %s: size %lldx%lld, each side must be in 1..%d", path,
                          (long long)w, (long long)h, IMAGE_MAX_DIM);
    return LTX2_OK;
}
#endif

/* The first bytes of the file (*n of them, fewer for a short file): the format is told by content. */
static ltx2_status read_head(ltx2_context *ctx, const char *path, uint8_t *head, size_t cap, size_t *n) {
    FILE *f = fopen(path, "rb");
    if (!f) return LTX2_ERROR(ctx, LTX2_ERR_IO, "image %s: cannot open: %s", path, strerror(errno));
    *n = fread(head, 1, cap, f);
    const bool failed = ferror(f) != 0; /* e.g. EISDIR: fopen accepts a directory */
    const int e = errno;
    fclose(f);
    if (failed) return LTX2_ERROR(ctx, LTX2_ERR_IO, "image %s: cannot read: %s", path, strerror(e));
    return LTX2_OK;
}

/* ---- PNG through libpng ---- */
#ifdef LTX2_HAVE_PNG

typedef struct image_png_err {
    char msg[256];
} image_png_err;

static void png_on_error(png_structp p, png_const_charp m) {
    image_png_err *e = png_get_error_ptr(p);
    snprintf(e->msg, sizeof(e->msg), "%s", m);
    png_longjmp(p, 1);
}

/* Warnings (e.g. "iCCP: known incorrect sRGB profile") never change the pixels read here. */
static void png_on_warning(png_structp p, png_const_charp m) {
    (void)p;
    (void)m;
}

static void png_read_cleanup(png_structp p, png_infop info, FILE *f, uint8_t *pix, png_bytep *rows) {
    png_destroy_read_struct(&p, &info, NULL);
    fclose(f);
    free(pix);
    free(rows);
}

/* libpng reports errors by longjmp: what the error branch frees is volatile. */
static ltx2_status read_png(ltx2_context *ctx, const char *path, uint8_t **out, int64_t *ow, int64_t *oh) {
    FILE *f = fopen(path, "rb");
    if (!f) return LTX2_ERROR(ctx, LTX2_ERR_IO, "image %s: cannot open: %s", path, strerror(errno));
    image_png_err err = {{0}};
    png_structp p = png_create_read_struct(PNG_LIBPNG_VER_STRING, &err, png_on_error, png_on_warning);
    png_infop info = p ? png_create_info_struct(p) : NULL;
    if (!p || !info) {
        png_destroy_read_struct(p ? &p : NULL, NULL, NULL);
        fclose(f);
        return LTX2_ERROR(ctx, LTX2_ERR_OOM, "image %s: libpng structures", path);
    }
    uint8_t *volatile pix = NULL;
    png_bytep *volatile rows = NULL;
    if (setjmp(png_jmpbuf(p))) {
        png_read_cleanup(p, info, f, pix, rows);
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "image %s: not a decodable PNG (libpng: %s)", path, err.msg);
    }
    png_set_keep_unknown_chunks(p, PNG_HANDLE_CHUNK_NEVER, (png_const_bytep)IMAGE_PNG_SKIPPED, IMAGE_PNG_SKIPPED_N);
    png_init_io(p, f);
    png_read_info(p, info);
    const png_uint_32 w = png_get_image_width(p, info), h = png_get_image_height(p, info);
    const int depth = png_get_bit_depth(p, info), color = png_get_color_type(p, info);
    if (check_size(ctx, path, w, h) != LTX2_OK) {
        png_read_cleanup(p, info, f, pix, rows);
        return LTX2_ERR_INVALID_ARG;
    }
    if (color == PNG_COLOR_TYPE_PALETTE) png_set_palette_to_rgb(p);
    if (color == PNG_COLOR_TYPE_GRAY && depth < 8) png_set_expand_gray_1_2_4_to_8(p);
    if (depth == 16) png_set_strip_16(p); /* high byte, as PIL; png_set_scale_16 would round */
    /* Always: palette expansion also turns a tRNS chunk into an alpha channel. */
    png_set_strip_alpha(p);
    if (!(color & PNG_COLOR_MASK_COLOR)) png_set_gray_to_rgb(p);
    png_set_interlace_handling(p);
    png_read_update_info(p, info);
    if (png_get_channels(p, info) != 3 || png_get_bit_depth(p, info) != 8 ||
        png_get_rowbytes(p, info) != (size_t)w * 3) {
        png_read_cleanup(p, info, f, pix, rows);
        return LTX2_ERROR(ctx, LTX2_ERR_INTERNAL, "image %s: libpng did not give 8-bit RGB (colour type %d, depth %d)",
                          path, color, depth);
    }
    pix = malloc((size_t)w * h * 3);
    rows = malloc((size_t)h * sizeof(png_bytep));
    if (!pix || !rows) {
        png_read_cleanup(p, info, f, pix, rows);
        return LTX2_ERROR(ctx, LTX2_ERR_OOM, "image %s: %ux%u RGB pixels", path, (unsigned)w, (unsigned)h);
    }
    for (png_uint_32 y = 0; y < h; y++) rows[y] = pix + (size_t)y * w * 3;
    png_read_image(p, rows);
    /* No png_read_end: the chunks after the image data cannot change the pixels, and a file cut
     * after them (no IEND) is still a complete picture. */
    *out = pix;
    pix = NULL;
    *ow = w;
    *oh = h;
    png_read_cleanup(p, info, f, NULL, rows);
    return LTX2_OK;
}

#endif /* LTX2_HAVE_PNG */

/* ---- FFmpeg: other formats, and the H.264 round trip ---- */
#ifdef LTX2_HAVE_FFMPEG

/* Demuxer names that read one picture from the file itself: FFmpeg's *_pipe image demuxers
 * (jpeg_pipe, webp_pipe, bmp_pipe, tiff_pipe, ...) and gif. Anything else found by probing
 * (playlists such as hls or concat could open other files or URLs) is refused. */
#define IMAGE_DEMUXER_SUFFIX "_pipe"
#define IMAGE_DEMUXER_GIF "gif"
/* avio_open2 takes URLs: the explicit file protocol keeps a path with a ':' a path. */
#define IMAGE_FILE_PROTOCOL "file:"
/* Decoded picture to RGB24, chosen by measurement against PIL (libjpeg-turbo, whose "fancy"
 * upsampling interpolates chroma): ACCURATE_RND rounds instead of truncating, FULL_CHR_H_INT
 * interpolates chroma horizontally instead of repeating it, and BICUBIC (for the chroma filter:
 * nothing is resized) came out much closer than BILINEAR. On tests/data/images/gradient.jpg
 * (4:2:0, steep colour ramps) the max/mean difference to PIL is 5 / 1.0 codes with these flags and
 * 17 / 5.1 with SWS_BILINEAR alone; on a 4:4:4 JPEG 3 / 0.05 either way (the IDCTs differ). */
#define IMAGE_DECODE_SWS_FLAGS (SWS_BICUBIC | SWS_ACCURATE_RND | SWS_FULL_CHR_H_INT)
/* PyAV's reformat()/to_ndarray() default interpolation, used both ways in the round trip. */
#define IMAGE_ROUNDTRIP_SWS_FLAGS SWS_BILINEAR
/* encode_single_frame(): add_stream("libx264", rate=1, options={"crf": str(crf), "preset": "veryfast"}). */
#define IMAGE_X264_ENCODER "libx264"
#define IMAGE_X264_PRESET "veryfast"
#define IMAGE_FRAME_RATE 1
/* PyAV's add_stream() sets it (with bit_rate 0); copied so the encoder sees the same settings. */
#define IMAGE_BIT_RATE_TOLERANCE 128000
/* Room for "%d" of a crf. */
#define IMAGE_CRF_TEXT_CAP 16

bool ltx2_image_ffmpeg_available(void) { return true; }

/* FFmpeg's log level is process-wide; decoders warn about recoverable damage and libx264 prints
 * per-encode statistics at INFO, so it is lowered to errors for one call (as ltx2_mp4_set_quiet
 * does) and put back. Errors reach the caller as ltx2 statuses either way. */
static int quiet_begin(void) {
    const int level = av_log_get_level();
    if (level > AV_LOG_ERROR) av_log_set_level(AV_LOG_ERROR);
    return level;
}

static void quiet_end(int level) { av_log_set_level(level); }

static ltx2_status av_fail(ltx2_context *ctx, const char *what, const char *call, int ret) {
    const ltx2_status st = ret == AVERROR(ENOMEM) ? LTX2_ERR_OOM : LTX2_ERR_IO;
    return LTX2_ERROR(ctx, st, "%s: %s failed: %s", what, call, av_err2str(ret));
}

/* The YUV matrix and range are taken from the frame, as PyAV's reformat() (sws_scale_frame) does;
 * without tags swscale's defaults stay (BT.601, limited range). RGB and palette sources have none. */
static void set_source_colors(struct SwsContext *sws, const AVFrame *f) {
    const AVPixFmtDescriptor *desc = av_pix_fmt_desc_get((enum AVPixelFormat)f->format);
    if (!desc || (desc->flags & (AV_PIX_FMT_FLAG_RGB | AV_PIX_FMT_FLAG_PAL))) return;
    int *inv = NULL, *table = NULL, src_range = 0, dst_range = 0, brightness = 0, contrast = 0, saturation = 0;
    if (sws_getColorspaceDetails(sws, &inv, &src_range, &table, &dst_range, &brightness, &contrast, &saturation) < 0)
        return;
    if (f->color_range == AVCOL_RANGE_JPEG) src_range = 1;
    sws_setColorspaceDetails(sws, sws_getCoefficients(f->colorspace), src_range, table, dst_range, brightness,
                             contrast, saturation);
}

/* src (any pixel format) as a tight malloc'ed RGB24 buffer. swscale writes into an aligned frame
 * first: its SIMD paths may write past the end of a row. */
static ltx2_status frame_to_rgb24(ltx2_context *ctx, const char *what, const AVFrame *src, int flags, uint8_t **out) {
    *out = NULL;
    const int w = src->width, h = src->height;
    struct SwsContext *sws =
        sws_getContext(w, h, (enum AVPixelFormat)src->format, w, h, AV_PIX_FMT_RGB24, flags, NULL, NULL, NULL);
    AVFrame *rgb = av_frame_alloc();
    uint8_t *pix = malloc((size_t)w * h * 3);
    ltx2_status st = LTX2_OK;
    int ret = 0;
    if (!rgb || !pix) {
        st = LTX2_ERROR(ctx, LTX2_ERR_OOM, "%s: %dx%d RGB pixels", what, w, h);
    } else if (!sws) {
        const char *name = av_get_pix_fmt_name((enum AVPixelFormat)src->format);
        st = LTX2_ERROR(ctx, LTX2_ERR_UNSUPPORTED, "%s: libswscale cannot convert %s to RGB", what,
                        name ? name : "this pixel format");
    } else {
        rgb->format = AV_PIX_FMT_RGB24;
        rgb->width = w;
        rgb->height = h;
        if ((ret = av_frame_get_buffer(rgb, 0)) < 0) {
            st = av_fail(ctx, what, "av_frame_get_buffer", ret);
        } else {
            set_source_colors(sws, src);
            ret = sws_scale(sws, (const uint8_t *const *)src->data, src->linesize, 0, h, rgb->data, rgb->linesize);
            if (ret != h) {
                st = LTX2_ERROR(ctx, LTX2_ERR_INTERNAL, "%s: sws_scale gave %d of %d rows", what, ret, h);
            } else {
                for (int y = 0; y < h; y++)
                    memcpy(pix + (size_t)y * w * 3, rgb->data[0] + (size_t)y * rgb->linesize[0], (size_t)w * 3);
            }
        }
    }
    sws_freeContext(sws);
    av_frame_free(&rgb);
    if (st != LTX2_OK) free(pix);
    else *out = pix;
    return st;
}

typedef struct image_decoder {
    char *url;
    AVIOContext *pb;
    AVFormatContext *fc;
    AVCodecContext *dec;
    AVPacket *pkt;
    AVFrame *frame;
} image_decoder;

static void decoder_free(image_decoder *d) {
    av_frame_free(&d->frame);
    av_packet_free(&d->pkt);
    avcodec_free_context(&d->dec);
    avformat_close_input(&d->fc); /* leaves d->pb: it was the caller's (custom I/O) */
    avio_closep(&d->pb);
    free(d->url);
}

static bool is_image_demuxer(const char *name) {
    const size_t n = strlen(name), s = strlen(IMAGE_DEMUXER_SUFFIX);
    return (n > s && !strcmp(name + n - s, IMAGE_DEMUXER_SUFFIX)) || !strcmp(name, IMAGE_DEMUXER_GIF);
}

/* Opens the file, probes its content (no extension hint), and decodes the first picture into
 * d->frame. */
static ltx2_status decode_first_picture(ltx2_context *ctx, const char *path, image_decoder *d) {
    const size_t n = strlen(path);
    d->url = malloc(sizeof(IMAGE_FILE_PROTOCOL) + n);
    if (!d->url) return LTX2_ERROR(ctx, LTX2_ERR_OOM, "image %s: path copy", path);
    memcpy(d->url, IMAGE_FILE_PROTOCOL, sizeof(IMAGE_FILE_PROTOCOL) - 1);
    memcpy(d->url + sizeof(IMAGE_FILE_PROTOCOL) - 1, path, n + 1);
    int ret = avio_open2(&d->pb, d->url, AVIO_FLAG_READ, NULL, NULL);
    if (ret < 0) return LTX2_ERROR(ctx, LTX2_ERR_IO, "image %s: cannot open: %s", path, av_err2str(ret));
    const AVInputFormat *fmt = NULL;
    ret = av_probe_input_buffer2(d->pb, &fmt, NULL, NULL, 0, 0);
    if (ret < 0 || !fmt || !is_image_demuxer(fmt->name))
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "image %s: not an image file FFmpeg can read (%s)", path,
                          ret < 0 ? av_err2str(ret) : fmt ? fmt->name : "no format");
    d->fc = avformat_alloc_context();
    if (!d->fc) return LTX2_ERROR(ctx, LTX2_ERR_OOM, "image %s: avformat_alloc_context", path);
    d->fc->pb = d->pb;
    ret = avformat_open_input(&d->fc, d->url, fmt, NULL); /* frees d->fc on failure */
    if (ret < 0)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "image %s: FFmpeg's %s demuxer cannot read it: %s", path,
                          fmt->name, av_err2str(ret));
    const AVCodec *codec = NULL;
    const int idx = av_find_best_stream(d->fc, AVMEDIA_TYPE_VIDEO, -1, -1, &codec, 0);
    if (idx == AVERROR_DECODER_NOT_FOUND)
        return LTX2_ERROR(ctx, LTX2_ERR_UNSUPPORTED, "image %s: this FFmpeg build has no decoder for %s", path,
                          avcodec_get_name(d->fc->streams[0]->codecpar->codec_id));
    if (idx < 0) return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "image %s: no picture in the file", path);
    d->dec = avcodec_alloc_context3(codec);
    d->pkt = av_packet_alloc();
    d->frame = av_frame_alloc();
    if (!d->dec || !d->pkt || !d->frame) return LTX2_ERROR(ctx, LTX2_ERR_OOM, "image %s: decoder structures", path);
    if ((ret = avcodec_parameters_to_context(d->dec, d->fc->streams[idx]->codecpar)) < 0)
        return LTX2_ERROR(ctx, LTX2_ERR_OOM, "image %s: avcodec_parameters_to_context: %s", path, av_err2str(ret));
    if ((ret = avcodec_open2(d->dec, codec, NULL)) < 0)
        return LTX2_ERROR(ctx, LTX2_ERR_UNSUPPORTED, "image %s: cannot open the %s decoder: %s", path, codec->name,
                          av_err2str(ret));
    bool flushed = false;
    for (;;) {
        ret = avcodec_receive_frame(d->dec, d->frame);
        if (ret == 0) return LTX2_OK;
        if (ret != AVERROR(EAGAIN) || flushed)
            return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "image %s: not a decodable %s image: %s", path, codec->name,
                              ret == AVERROR(EAGAIN) ? "no picture" : av_err2str(ret));
        ret = av_read_frame(d->fc, d->pkt);
        if (ret == AVERROR_EOF) {
            flushed = true;
            ret = avcodec_send_packet(d->dec, NULL);
        } else if (ret < 0) {
            return LTX2_ERROR(ctx, LTX2_ERR_IO, "image %s: reading failed: %s", path, av_err2str(ret));
        } else {
            ret = d->pkt->stream_index == idx ? avcodec_send_packet(d->dec, d->pkt) : 0;
            av_packet_unref(d->pkt);
        }
        if (ret < 0 && ret != AVERROR_EOF)
            return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "image %s: not a decodable %s image: %s", path, codec->name,
                              av_err2str(ret));
    }
}

static ltx2_status read_ffmpeg(ltx2_context *ctx, const char *path, uint8_t **out, int64_t *ow, int64_t *oh) {
    const int level = quiet_begin();
    image_decoder d = {0};
    ltx2_status st = decode_first_picture(ctx, path, &d);
    if (st == LTX2_OK) st = check_size(ctx, path, d.frame->width, d.frame->height);
    if (st == LTX2_OK) {
        char what[LTX2_ERROR_CAP];
        snprintf(what, sizeof(what), "image %s", path);
        st = frame_to_rgb24(ctx, what, d.frame, IMAGE_DECODE_SWS_FLAGS, out);
    }
    if (st == LTX2_OK) {
        *ow = d.frame->width;
        *oh = d.frame->height;
    }
    decoder_free(&d);
    quiet_end(level);
    return st;
}

typedef struct h264_trip {
    AVFrame *rgb, *yuv, *decoded;
    struct SwsContext *to_yuv;
    AVCodecContext *enc, *dec;
    AVPacket *pkt;
} h264_trip;

static void trip_free(h264_trip *t) {
    av_frame_free(&t->rgb);
    av_frame_free(&t->yuv);
    av_frame_free(&t->decoded);
    sws_freeContext(t->to_yuv);
    avcodec_free_context(&t->enc);
    avcodec_free_context(&t->dec);
    av_packet_free(&t->pkt);
}

#define TRIP "image H.264 round trip"

/* VideoFrame.from_ndarray(image, format="rgb24").reformat(format="yuv420p"): the pixels are copied
 * into an aligned RGB24 frame (as from_ndarray does), then converted. */
static ltx2_status trip_to_yuv(ltx2_context *ctx, h264_trip *t, const uint8_t *rgb, int64_t stride, int w, int h) {
    t->rgb = av_frame_alloc();
    t->yuv = av_frame_alloc();
    if (!t->rgb || !t->yuv) return LTX2_ERROR(ctx, LTX2_ERR_OOM, TRIP ": frames");
    t->rgb->format = AV_PIX_FMT_RGB24;
    t->yuv->format = AV_PIX_FMT_YUV420P;
    t->rgb->width = t->yuv->width = w;
    t->rgb->height = t->yuv->height = h;
    int ret;
    if ((ret = av_frame_get_buffer(t->rgb, 0)) < 0 || (ret = av_frame_get_buffer(t->yuv, 0)) < 0)
        return av_fail(ctx, TRIP, "av_frame_get_buffer", ret);
    for (int y = 0; y < h; y++)
        memcpy(t->rgb->data[0] + (size_t)y * t->rgb->linesize[0], rgb + (size_t)y * stride, (size_t)w * 3);
    t->to_yuv = sws_getContext(w, h, AV_PIX_FMT_RGB24, w, h, AV_PIX_FMT_YUV420P, IMAGE_ROUNDTRIP_SWS_FLAGS, NULL, NULL,
                               NULL);
    if (!t->to_yuv) return LTX2_ERROR(ctx, LTX2_ERR_UNSUPPORTED, TRIP ": libswscale cannot convert RGB24 to yuv420p");
    ret = sws_scale(t->to_yuv, (const uint8_t *const *)t->rgb->data, t->rgb->linesize, 0, h, t->yuv->data,
                    t->yuv->linesize);
    if (ret != h) return LTX2_ERROR(ctx, LTX2_ERR_INTERNAL, TRIP ": sws_scale gave %d of %d rows", ret, h);
    return LTX2_OK;
}

/* PyAV's stream setup: add_stream() sets yuv420p, the size, bit_rate 0 (so x264 runs in CRF mode)
 * and the frame rate; open() derives time base 1/rate; every codec context is created with
 * thread_count 0 (auto) and thread_type SLICE. That last default makes libx264 use sliced threads,
 * one slice per thread and the thread count from the CPU count: the encoded picture, and so the
 * result of preprocess(), depends on how many CPUs the process may use (the same here and in PyAV
 * on one machine). */
static ltx2_status trip_open_codecs(ltx2_context *ctx, h264_trip *t, int w, int h, int crf) {
    const AVCodec *x264 = avcodec_find_encoder_by_name(IMAGE_X264_ENCODER);
    if (!x264)
        return LTX2_ERROR(ctx, LTX2_ERR_UNSUPPORTED,
                          TRIP ": this FFmpeg has no libx264 encoder (install an FFmpeg built with libx264, or pass "
                               "CRF 0 to skip the round trip)");
    const AVCodec *h264 = avcodec_find_decoder(AV_CODEC_ID_H264);
    if (!h264) return LTX2_ERROR(ctx, LTX2_ERR_UNSUPPORTED, TRIP ": this FFmpeg has no H.264 decoder");
    t->enc = avcodec_alloc_context3(x264);
    t->dec = avcodec_alloc_context3(h264);
    t->pkt = av_packet_alloc();
    t->decoded = av_frame_alloc();
    if (!t->enc || !t->dec || !t->pkt || !t->decoded) return LTX2_ERROR(ctx, LTX2_ERR_OOM, TRIP ": codec structures");
    t->enc->width = w;
    t->enc->height = h;
    t->enc->pix_fmt = AV_PIX_FMT_YUV420P;
    t->enc->bit_rate = 0;
    t->enc->bit_rate_tolerance = IMAGE_BIT_RATE_TOLERANCE;
    t->enc->framerate = (AVRational){IMAGE_FRAME_RATE, 1};
    t->enc->time_base = (AVRational){1, IMAGE_FRAME_RATE};
    t->enc->thread_count = t->dec->thread_count = 0;
    t->enc->thread_type = t->dec->thread_type = FF_THREAD_SLICE;
    char crf_text[IMAGE_CRF_TEXT_CAP];
    snprintf(crf_text, sizeof(crf_text), "%d", crf);
    AVDictionary *opts = NULL;
    int ret = av_dict_set(&opts, "crf", crf_text, 0);
    if (ret >= 0) ret = av_dict_set(&opts, "preset", IMAGE_X264_PRESET, 0);
    if (ret >= 0) ret = avcodec_open2(t->enc, x264, &opts);
    av_dict_free(&opts);
    if (ret < 0) return av_fail(ctx, TRIP, "opening libx264", ret);
    if ((ret = avcodec_open2(t->dec, h264, NULL)) < 0) return av_fail(ctx, TRIP, "opening the H.264 decoder", ret);
    return LTX2_OK;
}

/* Encodes t->yuv as the only frame, then feeds the packets to the decoder until its first picture
 * (decode_single_frame takes next(container.decode(stream))). */
static ltx2_status trip_code(ltx2_context *ctx, h264_trip *t) {
    t->yuv->pts = 0;
    int ret = avcodec_send_frame(t->enc, t->yuv);
    if (ret >= 0) ret = avcodec_send_frame(t->enc, NULL);
    if (ret < 0) return av_fail(ctx, TRIP, "avcodec_send_frame", ret);
    bool encoder_done = false;
    for (;;) {
        ret = avcodec_receive_frame(t->dec, t->decoded);
        if (ret == 0) return LTX2_OK;
        if (ret != AVERROR(EAGAIN) || encoder_done)
            return LTX2_ERROR(ctx, LTX2_ERR_INTERNAL, TRIP ": the decoder gave no picture: %s",
                              ret == AVERROR(EAGAIN) ? "needs more data" : av_err2str(ret));
        ret = avcodec_receive_packet(t->enc, t->pkt);
        if (ret == AVERROR_EOF) {
            encoder_done = true;
            ret = avcodec_send_packet(t->dec, NULL);
        } else if (ret < 0) {
            return av_fail(ctx, TRIP, "avcodec_receive_packet", ret);
        } else {
            ret = avcodec_send_packet(t->dec, t->pkt);
            av_packet_unref(t->pkt);
        }
        if (ret < 0) return av_fail(ctx, TRIP, "avcodec_send_packet", ret);
    }
}

static ltx2_status trip_run(ltx2_context *ctx, h264_trip *t, const uint8_t *rgb, int64_t width, int w, int h, int crf,
                            uint8_t **out) {
    LTX2_TRY(trip_to_yuv(ctx, t, rgb, width * 3, w, h));
    LTX2_TRY(trip_open_codecs(ctx, t, w, h, crf));
    LTX2_TRY(trip_code(ctx, t));
    if (t->decoded->width != w || t->decoded->height != h)
        return LTX2_ERROR(ctx, LTX2_ERR_INTERNAL, TRIP ": decoded %dx%d from %dx%d", t->decoded->width,
                          t->decoded->height, w, h);
    return frame_to_rgb24(ctx, TRIP, t->decoded, IMAGE_ROUNDTRIP_SWS_FLAGS, out);
}

#else /* no FFmpeg */

bool ltx2_image_ffmpeg_available(void) { return false; }

#define IMAGE_FFMPEG_PACKAGES "apt-get install pkg-config libavformat-dev libavcodec-dev libavutil-dev libswscale-dev"

#endif /* LTX2_HAVE_FFMPEG */

ltx2_status ltx2_image_read_rgb8(ltx2_context *ctx, const char *path, uint8_t **rgb, int64_t *width,
                                 int64_t *height) {
    if (!rgb || !width || !height) return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "image: NULL output pointer");
    *rgb = NULL;
    *width = *height = 0;
    if (!path || !*path) return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "image: NULL or empty path");
    uint8_t head[IMAGE_PNG_SIG_BYTES];
    size_t n = 0;
    LTX2_TRY(read_head(ctx, path, head, sizeof(head), &n));
    if (n == 0) return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "image %s: empty file", path);
    const bool png = n == IMAGE_PNG_SIG_BYTES && !memcmp(head, png_signature, IMAGE_PNG_SIG_BYTES);
#ifdef LTX2_HAVE_PNG
    if (png) return read_png(ctx, path, rgb, width, height);
#endif
#ifdef LTX2_HAVE_FFMPEG
    /* Without libpng, PNGs too go through FFmpeg's PNG decoder (lossless, so 8-bit RGB/RGBA still
     * match PIL; 16-bit is converted by libswscale, which may round where PIL truncates). */
    (void)png;
    return read_ffmpeg(ctx, path, rgb, width, height);
#else
    if (png)
        return LTX2_ERROR(ctx, LTX2_ERR_UNSUPPORTED,
                          "image %s: this build has neither libpng nor FFmpeg to read PNGs (apt-get install "
                          "libpng-dev, then re-run cmake)",
                          path);
    return LTX2_ERROR(ctx, LTX2_ERR_UNSUPPORTED,
                      "image %s: not a PNG, and this build has no FFmpeg to read other formats (%s, then re-run "
                      "cmake), or convert the image to PNG",
                      path, IMAGE_FFMPEG_PACKAGES);
#endif
}

ltx2_status ltx2_image_h264_roundtrip(ltx2_context *ctx, uint8_t **rgb, int64_t *width, int64_t *height, int crf) {
    if (!rgb || !*rgb || !width || !height)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "image H.264 round trip: NULL image");
    if (*width < 1 || *height < 1 || *width > IMAGE_MAX_DIM || *height > IMAGE_MAX_DIM)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG,
                          "image H.264 round trip: size %lldx%lld, each side must be in 1..%d", (long long)*width,
                          (long long)*height, IMAGE_MAX_DIM);
    if (crf < 0 || crf > IMAGE_CRF_MAX)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "image H.264 round trip: crf %d must be in 0..%d", crf,
                          IMAGE_CRF_MAX);
    if (crf == 0) return LTX2_OK; /* preprocess(): `if crf == 0: return image`, not even cropped */
    /* image[:h//2*2, :w//2*2]: yuv420p needs even sides. */
    const int w = (int)(*width & ~(int64_t)1), h = (int)(*height & ~(int64_t)1);
    if (w == 0 || h == 0)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG,
                          "image H.264 round trip: a %lldx%lld image has nothing left after cropping to even sides",
                          (long long)*width, (long long)*height);
#ifdef LTX2_HAVE_FFMPEG
    const int level = quiet_begin();
    h264_trip t = {0};
    uint8_t *out = NULL;
    const ltx2_status st = trip_run(ctx, &t, *rgb, *width, w, h, crf, &out);
    trip_free(&t);
    quiet_end(level);
    if (st != LTX2_OK) return st;
    free(*rgb);
    *rgb = out;
    *width = w;
    *height = h;
    return LTX2_OK;
#else
    return LTX2_ERROR(ctx, LTX2_ERR_UNSUPPORTED,
                      "image H.264 round trip (crf %d): this build has no FFmpeg (%s, then re-run cmake), or pass "
                      "CRF 0 to skip it",
                      crf, IMAGE_FFMPEG_PACKAGES);
#endif
}
