/* MP4 writer (see mp4.h), following FFmpeg's doc/examples/mux.c call sequence: one H.264 (libx264)
 * stream fed RGB24 converted to BT.709 limited-range yuv420p by libswscale, an optional AAC (native
 * encoder) stream, timestamp-ordered interleaving, encoder flush, trailer. Output goes to
 * `path.tmp.<pid>.<tid>` and is renamed into place only when everything succeeded. */
#define _POSIX_C_SOURCE 200809L
#include "io/mp4.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/context.h"
#include "io/file.h"

/* Room for "<path>.tmp.<pid>.<tid>" (ltx2_tmp_path). */
#define MP4_PATH_CAP 4096
/* Defaults from ltx-pipelines' media_io/encode.py (PyAV libx264 stream). */
#define MP4_DEFAULT_CRF 19
#define MP4_DEFAULT_FPS 24.0
#define MP4_DEFAULT_AUDIO_RATE 48000
/* x264 speed/size trade-off; ltx-pipelines uses "veryfast". */
#define MP4_X264_PRESET "veryfast"
/* x264's CRF scale for 8-bit is 0 (lossless) .. 51. */
#define MP4_CRF_MAX 51
/* H.264 level 6.2 tops out near 8192x4320; 16384 keeps every size product far from int overflow. */
#define MP4_MAX_DIM 16384
/* Frame rates above this are surely a unit mistake (e.g. a rate in Hz passed as fps). */
#define MP4_MAX_FPS 1000.0
/* av_d2q precision for turning fps into a rational (24000/1001 and friends come out exact). */
#define MP4_FPS_RATIONAL_MAX 1001000
/* AAC bit rate per channel: 128 kb/s for stereo, transparent enough for vocoder output. */
#define MP4_AAC_BITRATE_PER_CHANNEL 64000
/* Written as the container's "encoder" tag. */
#define MP4_ENCODER_TAG "ltx2c"
/* Audio chunk for encoders that accept any frame size (AAC itself demands 1024). */
#define MP4_AUDIO_CHUNK 1024

void ltx2_mp4_params_init(ltx2_mp4_params *p) {
    memset(p, 0, sizeof(*p));
    p->fps = MP4_DEFAULT_FPS;
    p->crf = MP4_DEFAULT_CRF;
    p->audio_rate = MP4_DEFAULT_AUDIO_RATE;
    p->faststart = true;
}

#ifdef LTX2_HAVE_FFMPEG

#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/channel_layout.h>
#include <libavutil/error.h>
#include <libavutil/opt.h>
#include <libswresample/swresample.h>
#include <libswscale/swscale.h>

bool ltx2_mp4_available(void) { return true; }

void ltx2_mp4_set_quiet(bool quiet) { av_log_set_level(quiet ? AV_LOG_ERROR : AV_LOG_INFO); }

/* Everything one write owns; mp4_close frees whatever was created, in any state. */
typedef struct mp4_stream {
    AVStream *st;
    AVCodecContext *enc;
    AVFrame *frame;
    int64_t next_pts; /* in enc->time_base */
    bool done;        /* input exhausted and encoder flushed */
} mp4_stream;

typedef struct mp4_writer {
    ltx2_context *ctx;
    const char *path;
    char tmp[MP4_PATH_CAP];
    bool tmp_created;
    AVFormatContext *oc;
    AVPacket *pkt;
    mp4_stream video, audio;
    struct SwsContext *sws;
    SwrContext *swr;
    float *scratch; /* audio_channels x chunk clamped planar samples */
    int chunk;      /* samples per audio frame */
} mp4_writer;

static ltx2_status av_fail(mp4_writer *w, const char *call, int ret) {
    return LTX2_ERROR(w->ctx, LTX2_ERR_IO, "mp4 %s: %s failed: %s", w->path, call, av_err2str(ret));
}

static void stream_free(mp4_stream *s) {
    av_frame_free(&s->frame);
    avcodec_free_context(&s->enc);
}

/* Frees everything; on failure also removes the temp file so no half file is left. */
static void mp4_close(mp4_writer *w, bool ok) {
    if (w->oc && w->oc->pb) avio_closep(&w->oc->pb);
    if (w->tmp_created && !ok) remove(w->tmp);
    stream_free(&w->video);
    stream_free(&w->audio);
    sws_freeContext(w->sws);
    swr_free(&w->swr);
    av_packet_free(&w->pkt);
    avformat_free_context(w->oc);
    free(w->scratch);
}

static ltx2_status validate(ltx2_context *ctx, const char *path, const ltx2_mp4_params *p, const uint8_t *rgb,
                            const float *const *audio) {
    if (!path || !*path) return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "mp4: NULL or empty output path");
    if (!p) return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "mp4 %s: NULL params", path);
    if (!rgb) return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "mp4 %s: NULL RGB frames", path);
    if (p->width <= 0 || p->height <= 0 || p->width > MP4_MAX_DIM || p->height > MP4_MAX_DIM ||
        (p->width & 1) || (p->height & 1))
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG,
                          "mp4 %s: frame size %dx%d must be even (yuv420p) and in 2..%d", path, p->width,
                          p->height, MP4_MAX_DIM);
    if (p->frames <= 0)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "mp4 %s: frame count %d must be > 0", path, p->frames);
    if (!(p->fps > 0.0) || !isfinite(p->fps) || p->fps > MP4_MAX_FPS)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "mp4 %s: fps %g must be in (0, %g]", path, p->fps,
                          MP4_MAX_FPS);
    if (p->crf < 0 || p->crf > MP4_CRF_MAX)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "mp4 %s: crf %d must be in 0..%d", path, p->crf, MP4_CRF_MAX);
    if (p->audio_channels < 0 || p->audio_channels > 2)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "mp4 %s: audio channels %d must be 0 (none), 1 or 2", path,
                          p->audio_channels);
    if (p->audio_channels > 0) {
        if (p->audio_rate <= 0)
            return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "mp4 %s: audio rate %d Hz must be > 0", path,
                              p->audio_rate);
        if (p->audio_samples <= 0)
            return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "mp4 %s: audio samples %lld must be > 0 with %d channel(s)",
                              path, (long long)p->audio_samples, p->audio_channels);
        if (!audio) return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "mp4 %s: NULL audio with %d channel(s)", path,
                                      p->audio_channels);
        for (int c = 0; c < p->audio_channels; c++)
            if (!audio[c])
                return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "mp4 %s: audio channel %d is NULL", path, c);
    }
    if (p->n_meta > 0 && (!p->meta_keys || !p->meta_values))
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "mp4 %s: %zu metadata entries but NULL key/value arrays",
                          path, p->n_meta);
    for (size_t i = 0; i < p->n_meta; i++)
        if (!p->meta_keys[i] || !*p->meta_keys[i] || !p->meta_values[i])
            return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "mp4 %s: metadata entry %zu needs a non-empty key and a value",
                              path, i);
    return LTX2_OK;
}

/* Moves every packet the encoder has ready into the muxer. */
static ltx2_status drain(mp4_writer *w, mp4_stream *s) {
    for (;;) {
        int ret = avcodec_receive_packet(s->enc, w->pkt);
        if (ret == AVERROR(EAGAIN) || ret == AVERROR_EOF) return LTX2_OK;
        if (ret < 0) return av_fail(w, "avcodec_receive_packet", ret);
        av_packet_rescale_ts(w->pkt, s->enc->time_base, s->st->time_base);
        w->pkt->stream_index = s->st->index;
        ret = av_interleaved_write_frame(w->oc, w->pkt); /* takes the packet's data and resets it */
        if (ret < 0) return av_fail(w, "av_interleaved_write_frame", ret);
    }
}

/* frame == NULL flushes the encoder. */
static ltx2_status encode(mp4_writer *w, mp4_stream *s, AVFrame *frame) {
    const int ret = avcodec_send_frame(s->enc, frame);
    if (ret < 0) return av_fail(w, frame ? "avcodec_send_frame" : "avcodec_send_frame (flush)", ret);
    return drain(w, s);
}

/* Header fields shared by both streams: the mp4 muxer wants codec extradata in the header. */
static ltx2_status open_stream(mp4_writer *w, mp4_stream *s, const AVCodec *codec, AVDictionary **opts,
                               const char *what) {
    if (w->oc->oformat->flags & AVFMT_GLOBALHEADER) s->enc->flags |= AV_CODEC_FLAG_GLOBAL_HEADER;
    int ret = avcodec_open2(s->enc, codec, opts);
    if (ret < 0)
        return LTX2_ERROR(w->ctx, LTX2_ERR_IO, "mp4 %s: avcodec_open2 (%s) failed: %s", w->path, what,
                          av_err2str(ret));
    ret = avcodec_parameters_from_context(s->st->codecpar, s->enc);
    if (ret < 0) return av_fail(w, "avcodec_parameters_from_context", ret);
    return LTX2_OK;
}

static ltx2_status add_video(mp4_writer *w, const ltx2_mp4_params *p) {
    const AVCodec *codec = avcodec_find_encoder_by_name("libx264");
    if (!codec)
        return LTX2_ERROR(w->ctx, LTX2_ERR_UNSUPPORTED,
                          "mp4 %s: this FFmpeg has no libx264 encoder (Debian's libavcodec59 has it; "
                          "libavcodec built without --enable-libx264 does not)",
                          w->path);
    mp4_stream *s = &w->video;
    if (!(s->st = avformat_new_stream(w->oc, NULL)))
        return LTX2_ERROR(w->ctx, LTX2_ERR_OOM, "mp4 %s: avformat_new_stream (video) failed", w->path);
    if (!(s->enc = avcodec_alloc_context3(codec)))
        return LTX2_ERROR(w->ctx, LTX2_ERR_OOM, "mp4 %s: avcodec_alloc_context3 (libx264) failed", w->path);
    const AVRational rate = av_d2q(p->fps, MP4_FPS_RATIONAL_MAX);
    AVCodecContext *c = s->enc;
    c->width = p->width;
    c->height = p->height;
    c->pix_fmt = AV_PIX_FMT_YUV420P;
    c->time_base = av_inv_q(rate);
    c->framerate = rate;
    c->color_range = AVCOL_RANGE_MPEG;
    c->colorspace = AVCOL_SPC_BT709;
    c->color_primaries = AVCOL_PRI_BT709;
    c->color_trc = AVCOL_TRC_BT709;
    s->st->time_base = c->time_base;
    s->st->avg_frame_rate = rate;

    char crf[16];
    snprintf(crf, sizeof(crf), "%d", p->crf);
    AVDictionary *opts = NULL;
    av_dict_set(&opts, "crf", crf, 0);
    av_dict_set(&opts, "preset", MP4_X264_PRESET, 0);
    ltx2_status st = open_stream(w, s, codec, &opts, "libx264");
    av_dict_free(&opts);
    if (st != LTX2_OK) return st;

    if (!(s->frame = av_frame_alloc()))
        return LTX2_ERROR(w->ctx, LTX2_ERR_OOM, "mp4 %s: av_frame_alloc (video) failed", w->path);
    s->frame->format = c->pix_fmt;
    s->frame->width = c->width;
    s->frame->height = c->height;
    s->frame->color_range = c->color_range;
    s->frame->colorspace = c->colorspace;
    s->frame->color_primaries = c->color_primaries;
    s->frame->color_trc = c->color_trc;
    const int ret = av_frame_get_buffer(s->frame, 0);
    if (ret < 0) return av_fail(w, "av_frame_get_buffer (video)", ret);

    /* Same size, so the scaler only converts; BT.709 matrix, full-range RGB in, limited-range YUV out. */
    w->sws = sws_getContext(p->width, p->height, AV_PIX_FMT_RGB24, p->width, p->height, AV_PIX_FMT_YUV420P,
                            SWS_BICUBIC | SWS_ACCURATE_RND, NULL, NULL, NULL);
    if (!w->sws)
        return LTX2_ERROR(w->ctx, LTX2_ERR_INTERNAL, "mp4 %s: sws_getContext RGB24->YUV420P %dx%d failed", w->path,
                          p->width, p->height);
    const int *bt709 = sws_getCoefficients(SWS_CS_ITU709);
    if (sws_setColorspaceDetails(w->sws, bt709, 1, bt709, 0, 0, 1 << 16, 1 << 16) < 0)
        return LTX2_ERROR(w->ctx, LTX2_ERR_INTERNAL, "mp4 %s: sws_setColorspaceDetails (BT.709) failed", w->path);
    return LTX2_OK;
}

static bool rate_supported(const AVCodec *codec, int rate) {
    if (!codec->supported_samplerates) return true;
    for (const int *r = codec->supported_samplerates; *r; r++)
        if (*r == rate) return true;
    return false;
}

static ltx2_status add_audio(mp4_writer *w, const ltx2_mp4_params *p) {
    const AVCodec *codec = avcodec_find_encoder_by_name("aac");
    if (!codec)
        return LTX2_ERROR(w->ctx, LTX2_ERR_UNSUPPORTED, "mp4 %s: this FFmpeg has no native 'aac' encoder", w->path);
    if (!rate_supported(codec, p->audio_rate))
        return LTX2_ERROR(w->ctx, LTX2_ERR_INVALID_ARG, "mp4 %s: AAC cannot encode %d Hz (use e.g. 24000 or 48000)",
                          w->path, p->audio_rate);
    mp4_stream *s = &w->audio;
    if (!(s->st = avformat_new_stream(w->oc, NULL)))
        return LTX2_ERROR(w->ctx, LTX2_ERR_OOM, "mp4 %s: avformat_new_stream (audio) failed", w->path);
    if (!(s->enc = avcodec_alloc_context3(codec)))
        return LTX2_ERROR(w->ctx, LTX2_ERR_OOM, "mp4 %s: avcodec_alloc_context3 (aac) failed", w->path);
    AVCodecContext *c = s->enc;
    c->sample_fmt = codec->sample_fmts ? codec->sample_fmts[0] : AV_SAMPLE_FMT_FLTP;
    for (const enum AVSampleFormat *f = codec->sample_fmts; f && *f != AV_SAMPLE_FMT_NONE; f++)
        if (*f == AV_SAMPLE_FMT_FLTP) c->sample_fmt = AV_SAMPLE_FMT_FLTP;
    c->sample_rate = p->audio_rate;
    c->bit_rate = (int64_t)MP4_AAC_BITRATE_PER_CHANNEL * p->audio_channels;
    av_channel_layout_default(&c->ch_layout, p->audio_channels);
    c->time_base = (AVRational){1, p->audio_rate};
    s->st->time_base = c->time_base;
    LTX2_TRY(open_stream(w, s, codec, NULL, "aac"));

    w->chunk = (codec->capabilities & AV_CODEC_CAP_VARIABLE_FRAME_SIZE) || c->frame_size <= 0 ? MP4_AUDIO_CHUNK
                                                                                             : c->frame_size;
    if (!(s->frame = av_frame_alloc()))
        return LTX2_ERROR(w->ctx, LTX2_ERR_OOM, "mp4 %s: av_frame_alloc (audio) failed", w->path);
    s->frame->format = c->sample_fmt;
    s->frame->sample_rate = c->sample_rate;
    s->frame->nb_samples = w->chunk;
    int ret = av_channel_layout_copy(&s->frame->ch_layout, &c->ch_layout);
    if (ret < 0) return av_fail(w, "av_channel_layout_copy", ret);
    ret = av_frame_get_buffer(s->frame, 0);
    if (ret < 0) return av_fail(w, "av_frame_get_buffer (audio)", ret);
    w->scratch = calloc((size_t)w->chunk * (size_t)p->audio_channels, sizeof(float));
    if (!w->scratch) return LTX2_ERROR(w->ctx, LTX2_ERR_OOM, "mp4 %s: audio scratch buffer", w->path);

    if (c->sample_fmt != AV_SAMPLE_FMT_FLTP) {
        ret = swr_alloc_set_opts2(&w->swr, &c->ch_layout, c->sample_fmt, c->sample_rate, &c->ch_layout,
                                  AV_SAMPLE_FMT_FLTP, c->sample_rate, 0, NULL);
        if (ret < 0) return av_fail(w, "swr_alloc_set_opts2", ret);
        ret = swr_init(w->swr);
        if (ret < 0) return av_fail(w, "swr_init", ret);
    }
    return LTX2_OK;
}

static ltx2_status write_video_frame(mp4_writer *w, const ltx2_mp4_params *p, const uint8_t *rgb) {
    mp4_stream *s = &w->video;
    if (s->next_pts >= p->frames) {
        s->done = true;
        return encode(w, s, NULL);
    }
    int ret = av_frame_make_writable(s->frame);
    if (ret < 0) return av_fail(w, "av_frame_make_writable (video)", ret);
    const size_t frame_bytes = (size_t)p->width * (size_t)p->height * 3;
    const uint8_t *src[1] = {rgb + (size_t)s->next_pts * frame_bytes};
    const int src_stride[1] = {p->width * 3};
    ret = sws_scale(w->sws, src, src_stride, 0, p->height, s->frame->data, s->frame->linesize);
    if (ret < 0) return av_fail(w, "sws_scale", ret);
    s->frame->pts = s->next_pts++;
    return encode(w, s, s->frame);
}

static ltx2_status write_audio_frame(mp4_writer *w, const ltx2_mp4_params *p, const float *const *audio) {
    mp4_stream *s = &w->audio;
    const int64_t pos = s->next_pts;
    if (pos >= p->audio_samples) {
        s->done = true;
        return encode(w, s, NULL);
    }
    int64_t left = p->audio_samples - pos;
    int n = left < w->chunk ? (int)left : w->chunk;
    /* AAC takes a short last frame; an encoder that does not gets zero padding. */
    const int n_frame = (n < w->chunk && !(s->enc->codec->capabilities & AV_CODEC_CAP_SMALL_LAST_FRAME)) ? w->chunk
                                                                                                        : n;
    int ret = av_frame_make_writable(s->frame);
    if (ret < 0) return av_fail(w, "av_frame_make_writable (audio)", ret);
    const int nch = p->audio_channels;
    for (int c = 0; c < nch; c++) {
        float *dst = w->scratch + (size_t)c * (size_t)w->chunk;
        const float *src = audio[c] + pos;
        for (int i = 0; i < n; i++) {
            const float v = src[i];
            dst[i] = v > 1.0f ? 1.0f : (v < -1.0f ? -1.0f : (v == v ? v : 0.0f)); /* clamp, NaN -> 0 */
        }
        for (int i = n; i < n_frame; i++) dst[i] = 0.0f;
    }
    s->frame->nb_samples = n_frame;
    if (w->swr) {
        const uint8_t *planes[2] = {(const uint8_t *)w->scratch,
                                    (const uint8_t *)(w->scratch + (nch > 1 ? w->chunk : 0))};
        ret = swr_convert(w->swr, s->frame->data, n_frame, planes, n_frame);
        if (ret < 0) return av_fail(w, "swr_convert", ret);
        if (ret != n_frame)
            return LTX2_ERROR(w->ctx, LTX2_ERR_INTERNAL, "mp4 %s: swr_convert gave %d samples, expected %d", w->path,
                              ret, n_frame);
    } else {
        for (int c = 0; c < nch; c++)
            memcpy(s->frame->data[c], w->scratch + (size_t)c * (size_t)w->chunk, (size_t)n_frame * sizeof(float));
    }
    s->frame->pts = pos;
    s->next_pts += n;
    return encode(w, s, s->frame);
}

static ltx2_status write_all(mp4_writer *w, const ltx2_mp4_params *p, const uint8_t *rgb,
                             const float *const *audio) {
    const AVOutputFormat *fmt = av_guess_format(NULL, w->path, NULL);
    if (!fmt) fmt = av_guess_format("mp4", NULL, NULL);
    /* The format comes from the final name: the temp name's ".tmp.<pid>" suffix means nothing. */
    int ret = avformat_alloc_output_context2(&w->oc, fmt, NULL, w->tmp);
    if (ret < 0) return av_fail(w, "avformat_alloc_output_context2", ret);
    if (!(w->pkt = av_packet_alloc()))
        return LTX2_ERROR(w->ctx, LTX2_ERR_OOM, "mp4 %s: av_packet_alloc failed", w->path);
    LTX2_TRY(add_video(w, p));
    if (p->audio_channels > 0) LTX2_TRY(add_audio(w, p));
    else w->audio.done = true;

    for (size_t i = 0; i < p->n_meta; i++) {
        ret = av_dict_set(&w->oc->metadata, p->meta_keys[i], p->meta_values[i], 0);
        if (ret < 0) return av_fail(w, "av_dict_set (metadata)", ret);
    }

    if (!(w->oc->oformat->flags & AVFMT_NOFILE)) {
        ret = avio_open(&w->oc->pb, w->tmp, AVIO_FLAG_WRITE);
        if (ret < 0) return LTX2_ERROR(w->ctx, LTX2_ERR_IO, "mp4 %s: cannot create %s: %s", w->path, w->tmp,
                                       av_err2str(ret));
        w->tmp_created = true;
    }
    AVDictionary *mux_opts = NULL;
    /* Keys outside the mp4 ilst vocabulary (seed, prompt, ...) are only kept as mdta tags. */
    char movflags[64];
    snprintf(movflags, sizeof(movflags), "%s%s", p->faststart ? "+faststart" : "",
             p->n_meta > 0 ? "+use_metadata_tags" : "");
    if (movflags[0]) av_dict_set(&mux_opts, "movflags", movflags, 0);
    ret = avformat_init_output(w->oc, &mux_opts);
    av_dict_free(&mux_opts);
    if (ret < 0) return av_fail(w, "avformat_init_output", ret);
    /* init_output stamps "encoder: Lavf..."; ours replaces it before the header is written. The
     * plain ilst form (no custom keys) takes the ©too tag from "encoding_tool" instead. */
    ret = av_dict_set(&w->oc->metadata, p->n_meta > 0 ? "encoder" : "encoding_tool", MP4_ENCODER_TAG, 0);
    if (ret < 0) return av_fail(w, "av_dict_set (encoder)", ret);
    ret = avformat_write_header(w->oc, NULL);
    if (ret < 0) return av_fail(w, "avformat_write_header", ret);

    /* Feed whichever stream is behind in time, as mux.c does, so the interleaver buffers little. */
    while (!w->video.done || !w->audio.done) {
        const bool video_first =
            !w->video.done && (w->audio.done || av_compare_ts(w->video.next_pts, w->video.enc->time_base,
                                                              w->audio.next_pts, w->audio.enc->time_base) <= 0);
        if (video_first) LTX2_TRY(write_video_frame(w, p, rgb));
        else LTX2_TRY(write_audio_frame(w, p, audio));
    }
    ret = av_write_trailer(w->oc);
    if (ret < 0) return av_fail(w, "av_write_trailer", ret);
    if (w->oc->pb) {
        ret = avio_closep(&w->oc->pb);
        if (ret < 0) return av_fail(w, "avio_closep", ret);
    }
    if (rename(w->tmp, w->path) != 0)
        return LTX2_ERROR(w->ctx, LTX2_ERR_IO, "mp4 %s: cannot rename %s into place: %s", w->path, w->tmp,
                          strerror(errno));
    return LTX2_OK;
}

ltx2_status ltx2_mp4_write(ltx2_context *ctx, const char *path, const ltx2_mp4_params *p, const uint8_t *rgb,
                           const float *const *audio) {
    LTX2_TRY(validate(ctx, path, p, rgb, audio));
    mp4_writer w;
    memset(&w, 0, sizeof(w));
    w.ctx = ctx;
    w.path = path;
    if (strlen(path) + LTX2_TMP_SUFFIX_CAP > sizeof(w.tmp))
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "mp4: path too long: %s", path);
    ltx2_tmp_path(w.tmp, sizeof w.tmp, path);
    const ltx2_status st = write_all(&w, p, rgb, audio);
    mp4_close(&w, st == LTX2_OK);
    return st;
}

#else

bool ltx2_mp4_available(void) { return false; }

void ltx2_mp4_set_quiet(bool quiet) { (void)quiet; }

ltx2_status ltx2_mp4_write(ltx2_context *ctx, const char *path, const ltx2_mp4_params *p, const uint8_t *rgb,
                           const float *const *audio) {
    (void)p, (void)rgb, (void)audio;
    return LTX2_ERROR(ctx, LTX2_ERR_UNSUPPORTED,
                      "mp4 %s: this build has no FFmpeg (apt-get install pkg-config libavformat-dev "
                      "libavcodec-dev libavutil-dev libswscale-dev libswresample-dev, then re-run cmake)",
                      path ? path : "(null)");
}

#endif
