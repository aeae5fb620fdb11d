/* MP4 writer: writes short synthetic clips and checks them with ffprobe (codecs, pixel format,
 * BT.709 tags, size, frame count, audio rate/channels/duration, metadata), decodes a solid colour
 * with ffmpeg to confirm the BT.709 matrix, and checks that bad parameters, an unwritable
 * directory and a failed rename all fail cleanly without leaving a file or a temp file behind. */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io/file.h"
#include "io/json.h"
#include "io/mp4.h"
#include "test_util.h"

#define PATH_CAP 4096
#define TWO_PI 6.283185307179586

#ifdef LTX2_HAVE_FFMPEG

#define CLIP_W 64
#define CLIP_H 32
#define CLIP_FRAMES 9
#define CLIP_FPS 24.0
#define CLIP_RATE 48000
#define CLIP_SAMPLES 18000 /* 0.375 s at 48 kHz */
/* AAC codes 1024-sample frames with 1024 samples of encoder delay; the container's edit list hides
 * the delay, but players may report up to one frame more or less: 1024 / 48000 s. */
#define AUDIO_DURATION_TOL (1024.0 / CLIP_RATE)
/* Solid-green decode check: BT.709 limited range gives Y = 16 + 219 * 0.7152 = 172.6, BT.601
 * would give 144.6; x264 at CRF 19 keeps a flat block within a few codes. */
#define GREEN_Y_BT709 172.6
#define GREEN_Y_TOL 4.0
#define GREEN_SIZE 16
#define MONO_RATE 24000
#define MONO_SAMPLES 5000

static bool have_tool(const char *name) {
    char cmd[256];
    snprintf(cmd, sizeof(cmd), "command -v %s >/dev/null 2>&1", name);
    return system(cmd) == 0;
}

/* Runs cmd and returns all of its stdout (malloc'd, NUL-terminated), or NULL. */
static char *run_capture(const char *cmd, size_t *len) {
    FILE *f = popen(cmd, "r");
    if (!f) return NULL;
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap + 1);
    size_t got;
    while (buf && (got = fread(buf + n, 1, cap - n, f)) > 0) {
        n += got;
        if (n == cap) {
            char *nb = realloc(buf, 2 * cap + 1);
            if (!nb) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = nb;
            cap *= 2;
        }
    }
    const int rc = pclose(f);
    if (!buf || rc != 0) {
        free(buf);
        return NULL;
    }
    buf[n] = 0;
    if (len) *len = n;
    return buf;
}

static ltx2_json_doc *ffprobe(ltx2_context *ctx, const char *path) {
    char cmd[PATH_CAP + 128];
    snprintf(cmd, sizeof(cmd), "ffprobe -v error -count_frames -show_streams -show_format -of json '%s'", path);
    size_t n = 0;
    char *out = run_capture(cmd, &n);
    if (!out) return NULL;
    printf("ffprobe %s:\n%s\n", path, out);
    ltx2_json_doc *doc = NULL;
    if (ltx2_json_parse(ctx, out, n, "ffprobe output", &doc) != LTX2_OK) doc = NULL;
    free(out);
    return doc;
}

static const ltx2_json *find_stream(const ltx2_json *root, const char *type) {
    const ltx2_json *streams = ltx2_json_get(root, "streams");
    for (size_t i = 0; streams && i < streams->count; i++) {
        const char *t = ltx2_json_get_str(ltx2_json_at(streams, i), "codec_type");
        if (t && !strcmp(t, type)) return ltx2_json_at(streams, i);
    }
    return NULL;
}

static bool str_is(const ltx2_json *obj, const char *key, const char *want) {
    const char *s = ltx2_json_get_str(obj, key);
    return s && !strcmp(s, want);
}

/* ffprobe prints most counts and durations as strings. */
static double num_of(const ltx2_json *obj, const char *key) {
    const ltx2_json *v = ltx2_json_get(obj, key);
    if (!v) return NAN;
    if (v->type == LTX2_JSON_NUMBER) return v->number;
    if (v->type == LTX2_JSON_STRING) return strtod(v->str, NULL);
    return NAN;
}

/* A colour tag is checked only when ffprobe reports it (older ffprobe omits unknown ones). */
static void check_tag(const ltx2_json *st, const char *key, const char *want) {
    const char *s = ltx2_json_get_str(st, key);
    if (s) CHECK(!strcmp(s, want), "%s = %s, want %s", key, s, want);
}

static size_t dir_entries(ltx2_context *ctx, const char *dir) {
    char **names = NULL;
    size_t n = 0;
    if (ltx2_dir_list(ctx, dir, &names, &n) != LTX2_OK) return (size_t)-1;
    for (size_t i = 0; i < n; i++) printf("  entry in %s: %s\n", dir, names[i]);
    ltx2_dir_list_free(names, n);
    return n;
}

static void make_clip(uint8_t *rgb, float *left, float *right) {
    for (int f = 0; f < CLIP_FRAMES; f++)
        for (int y = 0; y < CLIP_H; y++)
            for (int x = 0; x < CLIP_W; x++) {
                uint8_t *px = rgb + (((size_t)f * CLIP_H + y) * CLIP_W + x) * 3;
                px[0] = (uint8_t)((x * 4 + f * 16) & 255); /* gradient moving right */
                px[1] = (uint8_t)(y * 8);
                px[2] = (uint8_t)(255 - f * 20);
            }
    for (int i = 0; i < CLIP_SAMPLES; i++) {
        const double t = (double)i / CLIP_RATE;
        left[i] = (float)(0.5 * sin(TWO_PI * 440.0 * t));
        right[i] = (float)(0.5 * sin(TWO_PI * 660.0 * t));
    }
}

static void check_full_clip(ltx2_context *ctx, const char *path) {
    ltx2_json_doc *doc = ffprobe(ctx, path);
    CHECK(doc != NULL, "ffprobe failed on %s", path);
    if (!doc) return;
    const ltx2_json *root = ltx2_json_root(doc);
    const ltx2_json *v = find_stream(root, "video");
    const ltx2_json *a = find_stream(root, "audio");
    CHECK(v != NULL, "no video stream");
    CHECK(a != NULL, "no audio stream");
    if (v) {
        CHECK(str_is(v, "codec_name", "h264"), "video codec %s", ltx2_json_get_str(v, "codec_name"));
        CHECK(str_is(v, "pix_fmt", "yuv420p"), "pix_fmt %s", ltx2_json_get_str(v, "pix_fmt"));
        CHECK(num_of(v, "width") == CLIP_W && num_of(v, "height") == CLIP_H, "size %gx%g", num_of(v, "width"),
              num_of(v, "height"));
        CHECK(num_of(v, "nb_frames") == CLIP_FRAMES, "nb_frames %g", num_of(v, "nb_frames"));
        CHECK(num_of(v, "nb_read_frames") == CLIP_FRAMES, "nb_read_frames %g", num_of(v, "nb_read_frames"));
        CHECK(str_is(v, "r_frame_rate", "24/1"), "r_frame_rate %s", ltx2_json_get_str(v, "r_frame_rate"));
        check_tag(v, "color_range", "tv");
        check_tag(v, "color_space", "bt709");
        check_tag(v, "color_primaries", "bt709");
        check_tag(v, "color_transfer", "bt709");
        CHECK(ltx2_json_get_str(v, "color_space") != NULL, "ffprobe reports no color_space tag");
    }
    if (a) {
        CHECK(str_is(a, "codec_name", "aac"), "audio codec %s", ltx2_json_get_str(a, "codec_name"));
        CHECK(num_of(a, "sample_rate") == CLIP_RATE, "sample_rate %g", num_of(a, "sample_rate"));
        CHECK(num_of(a, "channels") == 2, "channels %g", num_of(a, "channels"));
        const double d = num_of(a, "duration");
        const double want = (double)CLIP_SAMPLES / CLIP_RATE;
        CHECK(fabs(d - want) <= AUDIO_DURATION_TOL, "audio duration %g s, want %g +- %g", d, want,
              AUDIO_DURATION_TOL);
    }
    const ltx2_json *fmt = ltx2_json_get(root, "format");
    const ltx2_json *tags = fmt ? ltx2_json_get(fmt, "tags") : NULL;
    CHECK(fmt && strstr(ltx2_json_get_str(fmt, "format_name") ? ltx2_json_get_str(fmt, "format_name") : "", "mp4"),
          "format_name not mp4");
    CHECK(tags && str_is(tags, "encoder", "ltx2c"), "encoder tag %s", tags ? ltx2_json_get_str(tags, "encoder") : "-");
    CHECK(tags && str_is(tags, "seed", "42"), "seed tag %s", tags ? ltx2_json_get_str(tags, "seed") : "-");
    CHECK(tags && str_is(tags, "prompt", "a red fox, \"quoted\""), "prompt tag %s",
          tags ? ltx2_json_get_str(tags, "prompt") : "-");
    ltx2_json_free(doc);
}

static void check_video_only(ltx2_context *ctx, const char *path) {
    ltx2_json_doc *doc = ffprobe(ctx, path);
    CHECK(doc != NULL, "ffprobe failed on %s", path);
    if (!doc) return;
    const ltx2_json *root = ltx2_json_root(doc);
    const ltx2_json *streams = ltx2_json_get(root, "streams");
    CHECK(streams && streams->count == 1, "want exactly one stream");
    CHECK(find_stream(root, "audio") == NULL, "unexpected audio stream");
    const ltx2_json *v = find_stream(root, "video");
    CHECK(v && str_is(v, "codec_name", "h264"), "video codec");
    CHECK(v && num_of(v, "nb_read_frames") == CLIP_FRAMES, "nb_read_frames %g", v ? num_of(v, "nb_read_frames") : -1);
    const ltx2_json *tags = ltx2_json_get(ltx2_json_get(root, "format"), "tags");
    CHECK(tags && str_is(tags, "encoder", "ltx2c"), "encoder tag without other metadata");
    ltx2_json_free(doc);
}

/* LTX-2.0's vocoder rate, one channel, a sample count that is no multiple of the AAC frame. */
static void check_mono_24k(ltx2_context *ctx, const char *dir, const uint8_t *rgb, const float *left) {
    char path[PATH_CAP];
    snprintf(path, sizeof(path), "%s/mono.mp4", dir);
    ltx2_mp4_params p;
    ltx2_mp4_params_init(&p);
    p.width = CLIP_W;
    p.height = CLIP_H;
    p.frames = CLIP_FRAMES;
    p.fps = 25.0;
    p.audio_channels = 1;
    p.audio_rate = MONO_RATE;
    p.audio_samples = MONO_SAMPLES;
    const float *const audio[1] = {left};
    CHECK(ltx2_mp4_write(ctx, path, &p, rgb, audio) == LTX2_OK, "mono: %s", ltx2_last_error(ctx));
    ltx2_json_doc *doc = ffprobe(ctx, path);
    CHECK(doc != NULL, "ffprobe failed on %s", path);
    if (doc) {
        const ltx2_json *root = ltx2_json_root(doc);
        const ltx2_json *v = find_stream(root, "video");
        const ltx2_json *a = find_stream(root, "audio");
        CHECK(v && str_is(v, "r_frame_rate", "25/1"), "mono clip frame rate");
        CHECK(a && num_of(a, "sample_rate") == MONO_RATE, "mono sample_rate");
        CHECK(a && num_of(a, "channels") == 1, "mono channels");
        const double want = (double)MONO_SAMPLES / MONO_RATE;
        CHECK(a && fabs(num_of(a, "duration") - want) <= 1024.0 / MONO_RATE, "mono duration %g, want %g",
              a ? num_of(a, "duration") : -1.0, want);
        ltx2_json_free(doc);
    }
    remove(path);
}

/* Encodes solid green and decodes it back: the luma says which matrix swscale used. */
static void check_bt709_matrix(ltx2_context *ctx, const char *dir) {
    char path[PATH_CAP];
    snprintf(path, sizeof(path), "%s/green.mp4", dir);
    uint8_t rgb[2 * GREEN_SIZE * GREEN_SIZE * 3];
    for (size_t i = 0; i < sizeof(rgb); i += 3) rgb[i] = 0, rgb[i + 1] = 255, rgb[i + 2] = 0;
    ltx2_mp4_params p;
    ltx2_mp4_params_init(&p);
    p.width = p.height = GREEN_SIZE;
    p.frames = 2;
    CHECK(ltx2_mp4_write(ctx, path, &p, rgb, NULL) == LTX2_OK, "green: %s", ltx2_last_error(ctx));
    char cmd[PATH_CAP + 128];
    snprintf(cmd, sizeof(cmd), "ffmpeg -v error -i '%s' -frames:v 1 -f rawvideo -pix_fmt yuv420p -", path);
    size_t n = 0;
    char *raw = run_capture(cmd, &n);
    CHECK(raw && n == GREEN_SIZE * GREEN_SIZE * 3 / 2, "ffmpeg decode gave %zu bytes", n);
    if (raw && n >= GREEN_SIZE * GREEN_SIZE) {
        double sum = 0;
        for (int i = 0; i < GREEN_SIZE * GREEN_SIZE; i++) sum += (uint8_t)raw[i];
        const double y = sum / (GREEN_SIZE * GREEN_SIZE);
        printf("solid green decodes to mean Y = %.2f (BT.709 %.1f, BT.601 144.6)\n", y, GREEN_Y_BT709);
        CHECK(fabs(y - GREEN_Y_BT709) <= GREEN_Y_TOL, "green Y %.2f, want %.1f +- %.1f", y, GREEN_Y_BT709,
              GREEN_Y_TOL);
    }
    free(raw);
    remove(path);
}

typedef struct bad_case {
    const char *what;
    ltx2_mp4_params p;
    bool null_rgb, null_audio;
} bad_case;

static void check_bad_params(ltx2_context *ctx, const char *dir, const uint8_t *rgb, const float *const *audio) {
    char path[PATH_CAP];
    snprintf(path, sizeof(path), "%s/bad.mp4", dir);
    ltx2_mp4_params good;
    ltx2_mp4_params_init(&good);
    good.width = CLIP_W;
    good.height = CLIP_H;
    good.frames = CLIP_FRAMES;
    good.audio_channels = 2;
    good.audio_rate = CLIP_RATE;
    good.audio_samples = CLIP_SAMPLES;
    static const char *const null_key[1] = {NULL};
    static const char *const val[1] = {"v"};
    bad_case cases[16];
    int n = 0;
#define BAD(name, field, value) \
    cases[n] = (bad_case){name, good, false, false}; \
    cases[n++].p.field = value
    BAD("odd width", width, 63);
    BAD("odd height", height, 31);
    BAD("zero width", width, 0);
    BAD("zero frames", frames, 0);
    BAD("zero fps", fps, 0.0);
    BAD("NaN fps", fps, NAN);
    BAD("crf 60", crf, 60);
    BAD("3 channels", audio_channels, 3);
    BAD("-1 channels", audio_channels, -1);
    BAD("zero rate", audio_rate, 0);
    BAD("zero samples", audio_samples, 0);
    BAD("rate AAC cannot do", audio_rate, 12345);
    BAD("NULL metadata key", n_meta, 1);
    cases[n - 1].p.meta_keys = null_key;
    cases[n - 1].p.meta_values = val;
    cases[n++] = (bad_case){"NULL rgb", good, true, false};
    cases[n++] = (bad_case){"NULL audio", good, false, true};
#undef BAD
    for (int i = 0; i < n; i++) {
        ltx2_clear_error(ctx);
        const ltx2_status st = ltx2_mp4_write(ctx, path, &cases[i].p, cases[i].null_rgb ? NULL : rgb,
                                              cases[i].null_audio ? NULL : audio);
        CHECK(st == LTX2_ERR_INVALID_ARG, "%s: status %s", cases[i].what, ltx2_status_name(st));
        CHECK(strstr(ltx2_last_error(ctx), "bad.mp4") != NULL, "%s: message lacks the path: %s", cases[i].what,
              ltx2_last_error(ctx));
        printf("bad params (%s): %s\n", cases[i].what, ltx2_last_error(ctx));
        CHECK(!ltx2_path_is_file(path), "%s left %s", cases[i].what, path);
    }
    CHECK(dir_entries(ctx, dir) == 0, "bad params left files in %s", dir);
}

static void check_failures_leave_nothing(ltx2_context *ctx, const char *dir, const uint8_t *rgb) {
    ltx2_mp4_params p;
    ltx2_mp4_params_init(&p);
    p.width = CLIP_W;
    p.height = CLIP_H;
    p.frames = CLIP_FRAMES;
    char path[2 * PATH_CAP];

    /* Directory does not exist. */
    snprintf(path, sizeof(path), "%s/missing/out.mp4", dir);
    ltx2_status st = ltx2_mp4_write(ctx, path, &p, rgb, NULL);
    printf("missing dir: %s\n", ltx2_last_error(ctx));
    CHECK(st == LTX2_ERR_IO, "missing dir: status %s", ltx2_status_name(st));
    CHECK(strstr(ltx2_last_error(ctx), "missing/out.mp4") != NULL, "message lacks the path");

    /* Read-only directory (root ignores permissions, so only meaningful for other users). */
    char ro[PATH_CAP];
    snprintf(ro, sizeof(ro), "%s/readonly", dir);
    CHECK(mkdir(ro, 0500) == 0, "mkdir %s", ro);
    if (geteuid() != 0) {
        snprintf(path, sizeof(path), "%s/out.mp4", ro);
        st = ltx2_mp4_write(ctx, path, &p, rgb, NULL);
        printf("read-only dir: %s\n", ltx2_last_error(ctx));
        CHECK(st == LTX2_ERR_IO, "read-only dir: status %s", ltx2_status_name(st));
        CHECK(dir_entries(ctx, ro) == 0, "read-only dir has files");
    } else {
        printf("running as root: read-only directory case not meaningful, skipped\n");
    }
    rmdir(ro);

    /* The encode succeeds but the final rename cannot replace a non-empty directory: the temp file
     * written next to it must be removed. */
    char blocker[PATH_CAP], inner[2 * PATH_CAP];
    snprintf(blocker, sizeof(blocker), "%s/taken.mp4", dir);
    snprintf(inner, sizeof(inner), "%s/keep", blocker);
    CHECK(mkdir(blocker, 0700) == 0, "mkdir %s", blocker);
    FILE *f = fopen(inner, "w");
    if (f) fclose(f);
    st = ltx2_mp4_write(ctx, blocker, &p, rgb, NULL);
    printf("rename onto a directory: %s\n", ltx2_last_error(ctx));
    CHECK(st == LTX2_ERR_IO, "rename failure: status %s", ltx2_status_name(st));
    CHECK(strstr(ltx2_last_error(ctx), "rename") != NULL, "message should say rename: %s", ltx2_last_error(ctx));
    CHECK(dir_entries(ctx, dir) == 1, "temp file left next to %s", blocker);
    remove(inner);
    rmdir(blocker);
}

int main(void) {
    ltx2_context *ctx = ltx2_context_create(NULL);
    CHECK(ctx != NULL, "context");
    if (!ctx) return test_finish();
    CHECK(ltx2_mp4_available(), "built with FFmpeg but ltx2_mp4_available() is false");
    char dir[] = "/tmp/ltx2_test_mp4_XXXXXX";
    CHECK(mkdtemp(dir) != NULL, "mkdtemp");

    uint8_t *rgb = malloc((size_t)CLIP_FRAMES * CLIP_H * CLIP_W * 3);
    float *left = malloc(sizeof(float) * CLIP_SAMPLES), *right = malloc(sizeof(float) * CLIP_SAMPLES);
    CHECK(rgb && left && right, "alloc");
    if (!rgb || !left || !right) return test_finish();
    make_clip(rgb, left, right);
    const float *const audio[2] = {left, right};

    /* Parameter and failure checks first, while the directory is still empty. */
    check_bad_params(ctx, dir, rgb, audio);
    check_failures_leave_nothing(ctx, dir, rgb);

    const bool probe = have_tool("ffprobe");
    char full[PATH_CAP], silent[PATH_CAP];
    snprintf(full, sizeof(full), "%s/clip.mp4", dir);
    snprintf(silent, sizeof(silent), "%s/silent.mp4", dir);

    ltx2_mp4_params p;
    ltx2_mp4_params_init(&p);
    p.width = CLIP_W;
    p.height = CLIP_H;
    p.frames = CLIP_FRAMES;
    p.fps = CLIP_FPS;
    p.audio_channels = 2;
    p.audio_rate = CLIP_RATE;
    p.audio_samples = CLIP_SAMPLES;
    static const char *const keys[2] = {"seed", "prompt"};
    static const char *const values[2] = {"42", "a red fox, \"quoted\""};
    p.n_meta = 2;
    p.meta_keys = keys;
    p.meta_values = values;
    ltx2_status st = ltx2_mp4_write(ctx, full, &p, rgb, audio);
    CHECK(st == LTX2_OK, "write %s: %s", full, ltx2_last_error(ctx));
    CHECK(ltx2_path_is_file(full), "%s missing", full);

    ltx2_mp4_params_init(&p);
    p.width = CLIP_W;
    p.height = CLIP_H;
    p.frames = CLIP_FRAMES;
    p.faststart = false;
    st = ltx2_mp4_write(ctx, silent, &p, rgb, NULL);
    CHECK(st == LTX2_OK, "write %s: %s", silent, ltx2_last_error(ctx));
    CHECK(dir_entries(ctx, dir) == 2, "want exactly clip.mp4 and silent.mp4 (no temp files)");

    if (probe) {
        check_full_clip(ctx, full);
        check_video_only(ctx, silent);
        check_mono_24k(ctx, dir, rgb, left);
        if (have_tool("ffmpeg")) check_bt709_matrix(ctx, dir);
    } else {
        printf("ffprobe not installed (apt-get install ffmpeg): stream checks skipped\n");
    }

    remove(full);
    remove(silent);
    rmdir(dir);
    free(rgb);
    free(left);
    free(right);
    ltx2_context_free(ctx);
    return test_finish();
}

#else

int main(void) {
    ltx2_context *ctx = ltx2_context_create(NULL);
    CHECK(ctx != NULL, "context");
    if (!ctx) return test_finish();
    CHECK(!ltx2_mp4_available(), "built without FFmpeg but ltx2_mp4_available() is true");
    ltx2_mp4_params p;
    ltx2_mp4_params_init(&p);
    p.width = 16;
    p.height = 16;
    p.frames = 1;
    const uint8_t rgb[16 * 16 * 3] = {0};
    const char *path = "/tmp/ltx2_test_mp4_unsupported.mp4";
    const ltx2_status st = ltx2_mp4_write(ctx, path, &p, rgb, NULL);
    CHECK(st == LTX2_ERR_UNSUPPORTED, "status %s", ltx2_status_name(st));
    CHECK(strstr(ltx2_last_error(ctx), "apt-get install") != NULL, "message lacks the install hint: %s",
          ltx2_last_error(ctx));
    CHECK(!ltx2_path_is_file(path), "%s was created", path);
    printf("no FFmpeg: %s\n", ltx2_last_error(ctx));
    ltx2_context_free(ctx);
    return test_finish();
}

#endif
