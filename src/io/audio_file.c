/* Audio files for audio conditioning (see audio_file.h): WAV through wav_read.c, the rest through
 * FFmpeg, then the reference's window. */
#define _POSIX_C_SOURCE 200809L
#include "io/audio_file.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/context.h"
#include "io/file.h"

#ifdef LTX2_HAVE_FFMPEG
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/dict.h>
#include <libavutil/error.h>
#endif

/* RIFF....WAVE: the 12 bytes that make a file ours to parse. */
#define WAV_MAGIC_BYTES 12

static bool is_wav(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) return false;
    unsigned char h[WAV_MAGIC_BYTES];
    const bool ok = fread(h, 1, sizeof h, f) == sizeof h && !memcmp(h, "RIFF", 4) && !memcmp(h + 8, "WAVE", 4);
    fclose(f);
    return ok;
}

/* The window of a decoded stream whose first frame starts at first_s: in place, as
 * decode_audio_from_file trims (Python's round is half to even, as rint in the default mode). */
static ltx2_status cut_window(ltx2_context *ctx, const char *path, double start_s, double max_s, double first_s,
                              ltx2_wav_audio *a) {
    const double rate = (double)a->sample_rate;
    const double skip_f = rint((start_s - first_s) * rate), keep_f = rint(max_s * rate);
    const int64_t skip = skip_f > 0 ? (int64_t)skip_f : 0;
    int64_t keep = a->frames - skip;
    if (keep > (int64_t)keep_f) keep = (int64_t)keep_f;
    if (keep <= 0)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG,
                          "audio %s: nothing to read from %g s (the file has %.3f s of audio at %lld Hz)", path,
                          start_s, (double)a->frames / rate + first_s, (long long)a->sample_rate);
    for (int64_t c = 0; c < a->channels; c++)
        memmove(a->samples + c * keep, a->samples + c * a->frames + skip, (size_t)keep * sizeof(float));
    a->frames = keep;
    return LTX2_OK;
}

#ifdef LTX2_HAVE_FFMPEG

/* avformat_open_input takes URLs: the explicit file protocol keeps a path with a ':' a path, and the
 * whitelist stops a playlist demuxer (hls, concat) from opening other files or URLs. */
#define AUDIO_FILE_PROTOCOL "file:"
#define AUDIO_PROTOCOL_WHITELIST "file"

bool ltx2_audio_file_ffmpeg_available(void) { return true; }

typedef struct audio_decoder {
    AVFormatContext *fc;
    AVCodecContext *dec;
    AVPacket *pkt;
    AVFrame *frame;
    char *url;
    int stream;
} audio_decoder;

static void decoder_free(audio_decoder *d) {
    av_frame_free(&d->frame);
    av_packet_free(&d->pkt);
    avcodec_free_context(&d->dec);
    avformat_close_input(&d->fc);
    free(d->url);
}

/* One sample of a frame as fp32, scaled as _audio_frame_to_float (see audio_file.h for the two
 * deliberate differences). */
static float frame_sample(const AVFrame *f, enum AVSampleFormat fmt, int ch, int64_t i, int channels) {
    const bool planar = av_sample_fmt_is_planar(fmt);
    const uint8_t *base = f->extended_data[planar ? ch : 0];
    const int64_t k = planar ? i : i * channels + ch;
    switch (av_get_packed_sample_fmt(fmt)) {
    case AV_SAMPLE_FMT_U8: return ((float)base[k] - 128.0f) / 128.0f;
    case AV_SAMPLE_FMT_S16: return (float)((const int16_t *)base)[k] / 32768.0f;
    case AV_SAMPLE_FMT_S32: return (float)((const int32_t *)base)[k] / 2147483648.0f;
    case AV_SAMPLE_FMT_S64: return (float)((double)((const int64_t *)base)[k] / 9223372036854775808.0);
    case AV_SAMPLE_FMT_FLT: return ((const float *)base)[k];
    case AV_SAMPLE_FMT_DBL: return (float)((const double *)base)[k];
    default: return NAN; /* refused before any sample is read */
    }
}

static ltx2_status open_decoder(ltx2_context *ctx, const char *path, audio_decoder *d) {
    const size_t n = strlen(path);
    d->url = malloc(sizeof(AUDIO_FILE_PROTOCOL) + n);
    if (!d->url) return LTX2_ERROR(ctx, LTX2_ERR_OOM, "audio %s: path copy", path);
    memcpy(d->url, AUDIO_FILE_PROTOCOL, sizeof(AUDIO_FILE_PROTOCOL) - 1);
    memcpy(d->url + sizeof(AUDIO_FILE_PROTOCOL) - 1, path, n + 1);
    AVDictionary *opts = NULL;
    av_dict_set(&opts, "protocol_whitelist", AUDIO_PROTOCOL_WHITELIST, 0);
    int ret = avformat_open_input(&d->fc, d->url, NULL, &opts);
    av_dict_free(&opts);
    if (ret < 0)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "audio %s: not a file FFmpeg can read: %s", path, av_err2str(ret));
    if ((ret = avformat_find_stream_info(d->fc, NULL)) < 0)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "audio %s: unreadable streams: %s", path, av_err2str(ret));
    const AVCodec *codec = NULL;
    d->stream = av_find_best_stream(d->fc, AVMEDIA_TYPE_AUDIO, -1, -1, &codec, 0);
    if (d->stream == AVERROR_DECODER_NOT_FOUND)
        return LTX2_ERROR(ctx, LTX2_ERR_UNSUPPORTED, "audio %s: this FFmpeg build has no decoder for its audio", path);
    if (d->stream < 0) return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "audio %s: the file has no audio stream", path);
    d->dec = avcodec_alloc_context3(codec);
    d->pkt = av_packet_alloc();
    d->frame = av_frame_alloc();
    if (!d->dec || !d->pkt || !d->frame) return LTX2_ERROR(ctx, LTX2_ERR_OOM, "audio %s: decoder structures", path);
    if ((ret = avcodec_parameters_to_context(d->dec, d->fc->streams[d->stream]->codecpar)) < 0)
        return LTX2_ERROR(ctx, LTX2_ERR_OOM, "audio %s: avcodec_parameters_to_context: %s", path, av_err2str(ret));
    if ((ret = avcodec_open2(d->dec, codec, NULL)) < 0)
        return LTX2_ERROR(ctx, LTX2_ERR_UNSUPPORTED, "audio %s: cannot open the %s decoder: %s", path, codec->name,
                          av_err2str(ret));
    return LTX2_OK;
}

/* Appends a decoded frame to the planar buffer (grown by doubling), the first frame fixing the rate
 * and channel count and its timestamp the window's origin. */
static ltx2_status take_frame(ltx2_context *ctx, const char *path, const audio_decoder *d, ltx2_wav_audio *a,
                              int64_t *cap, int *format, double *first_s) {
    const AVFrame *f = d->frame;
    const int channels = f->ch_layout.nb_channels;
    const enum AVSampleFormat fmt = (enum AVSampleFormat)f->format;
    if (a->channels == 0) {
        const enum AVSampleFormat packed = av_get_packed_sample_fmt(fmt);
        if (packed != AV_SAMPLE_FMT_U8 && packed != AV_SAMPLE_FMT_S16 && packed != AV_SAMPLE_FMT_S32 &&
            packed != AV_SAMPLE_FMT_S64 && packed != AV_SAMPLE_FMT_FLT && packed != AV_SAMPLE_FMT_DBL)
            return LTX2_ERROR(ctx, LTX2_ERR_UNSUPPORTED, "audio %s: sample format %s", path,
                              av_get_sample_fmt_name(fmt));
        if (channels < 1 || f->sample_rate < 1)
            return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "audio %s: %d channel(s) at %d Hz", path, channels,
                              f->sample_rate);
        a->channels = channels;
        a->sample_rate = f->sample_rate;
        *format = f->format;
        const AVRational tb = d->fc->streams[d->stream]->time_base;
        *first_s = f->pts == AV_NOPTS_VALUE ? 0.0 : (double)f->pts * tb.num / tb.den;
    } else if (channels != a->channels || f->sample_rate != a->sample_rate || f->format != *format) {
        return LTX2_ERROR(ctx, LTX2_ERR_UNSUPPORTED, "audio %s: the stream changes from %lld channel(s) at %lld Hz to "
                          "%d at %d Hz", path, (long long)a->channels, (long long)a->sample_rate, channels,
                          f->sample_rate);
    }
    const int64_t n = f->nb_samples;
    if (a->frames + n > *cap) {
        int64_t nc = *cap ? *cap : 4096;
        while (nc < a->frames + n) nc *= 2;
        float *s = malloc((size_t)(nc * a->channels) * sizeof(float));
        if (!s) return LTX2_ERROR(ctx, LTX2_ERR_OOM, "audio %s: %lld samples", path, (long long)nc);
        for (int64_t c = 0; c < a->channels; c++)
            if (a->frames) memcpy(s + c * nc, a->samples + c * *cap, (size_t)a->frames * sizeof(float));
        free(a->samples);
        a->samples = s;
        *cap = nc;
    }
    for (int c = 0; c < channels; c++)
        for (int64_t i = 0; i < n; i++) a->samples[c * *cap + a->frames + i] = frame_sample(f, fmt, c, i, channels);
    a->frames += n;
    return LTX2_OK;
}

/* Decodes until `need` samples (counted from the first frame) are held, or the end. */
static ltx2_status decode_ffmpeg(ltx2_context *ctx, const char *path, double start_s, double max_s,
                                 ltx2_wav_audio *a, double *first_s) {
    audio_decoder d = {0};
    int64_t cap = 0;
    int format = -1;
    ltx2_status st = open_decoder(ctx, path, &d);
    bool flushed = false;
    while (st == LTX2_OK) {
        int ret = avcodec_receive_frame(d.dec, d.frame);
        if (ret == 0) {
            st = take_frame(ctx, path, &d, a, &cap, &format, first_s);
            av_frame_unref(d.frame);
            const double held_s = *first_s + (double)a->frames / (double)a->sample_rate;
            if (st == LTX2_OK && held_s > start_s + max_s) break; /* the window is complete */
            if (st == LTX2_OK && a->frames > LTX2_AUDIO_FILE_MAX_SAMPLES + (int64_t)(start_s * a->sample_rate))
                st = LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "audio %s: more than %lld samples to decode", path,
                                (long long)LTX2_AUDIO_FILE_MAX_SAMPLES);
            continue;
        }
        if (ret == AVERROR_EOF) break;
        if (ret != AVERROR(EAGAIN) || flushed) {
            st = LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "audio %s: decoding failed: %s", path, av_err2str(ret));
            break;
        }
        ret = av_read_frame(d.fc, d.pkt);
        if (ret == AVERROR_EOF) {
            flushed = true;
            ret = avcodec_send_packet(d.dec, NULL);
        } else if (ret < 0) {
            st = LTX2_ERROR(ctx, LTX2_ERR_IO, "audio %s: reading failed: %s", path, av_err2str(ret));
            break;
        } else {
            ret = d.pkt->stream_index == d.stream ? avcodec_send_packet(d.dec, d.pkt) : 0;
            av_packet_unref(d.pkt);
        }
        if (ret < 0 && ret != AVERROR_EOF)
            st = LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "audio %s: not decodable: %s", path, av_err2str(ret));
    }
    decoder_free(&d);
    if (st == LTX2_OK && a->frames && cap != a->frames) { /* planes at a stride of frames, as the WAV reader */
        for (int64_t c = 1; c < a->channels; c++)
            memmove(a->samples + c * a->frames, a->samples + c * cap, (size_t)a->frames * sizeof(float));
    }
    if (st == LTX2_OK && !a->frames) st = LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "audio %s: no audio samples", path);
    return st;
}

#else

bool ltx2_audio_file_ffmpeg_available(void) { return false; }

#endif /* LTX2_HAVE_FFMPEG */

ltx2_status ltx2_audio_file_read(ltx2_context *ctx, const char *path, double start_s, double max_s,
                                 ltx2_wav_audio *out) {
    if (!path || !out) return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "audio: NULL path or output");
    memset(out, 0, sizeof *out);
    if (!isfinite(start_s) || start_s < 0 || !isfinite(max_s) || max_s <= 0)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "audio %s: start %g s and duration %g s (start >= 0, duration > 0)",
                          path, start_s, max_s);
    if (!ltx2_path_is_file(path))
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "audio %s: no such file", path);
    double first_s = 0.0;
    ltx2_status st;
    if (is_wav(path)) {
        st = ltx2_wav_read(ctx, path, out);
    } else {
#ifdef LTX2_HAVE_FFMPEG
        st = decode_ffmpeg(ctx, path, start_s, max_s, out, &first_s);
#else
        st = LTX2_ERROR(ctx, LTX2_ERR_UNSUPPORTED, "audio %s: not a WAV file, and this build has no FFmpeg to decode "
                        "other formats", path);
#endif
    }
    if (st == LTX2_OK && max_s * (double)out->sample_rate > (double)LTX2_AUDIO_FILE_MAX_SAMPLES)
        st = LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "audio %s: a window of %g s is more than %lld samples", path, max_s,
                        (long long)LTX2_AUDIO_FILE_MAX_SAMPLES);
    if (st == LTX2_OK) st = cut_window(ctx, path, start_s, max_s, first_s, out);
    if (st != LTX2_OK) ltx2_wav_audio_free(out);
    return st;
}
