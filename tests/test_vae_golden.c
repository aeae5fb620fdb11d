/* Video VAE decoder against ltx-core: the tiny 2.0 / 2.3 checkpoints are loaded through the same
 * loader real weights use, the golden latent is decoded on the CPU, and every block output the
 * reference recorded (tests/golden/data/vae_<v>.safetensors, from gen_vae_goldens.py; NCDHW) is
 * compared with ours (NDHWC). Also: bad inputs give clear errors (wrong latent channels, frames
 * not 8k+1, a missing or mis-shaped tensor, a config without decoder blocks, a latent too small
 * for reflect padding). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/context.h"
#include "core/metrics.h"
#include "cpu/cpu_conv3d.h"
#include "io/json.h"
#include "io/safetensors.h"
#include "model/vae_config.h"
#include "model/video_vae.h"
#include "test_util.h"

/* fp32 vs fp32 through ~20 convs: ltx-core and we sum in different orders (im2col GEMM vs
 * oneDNN), which costs ~1e-7 relative per layer; 1e-5 leaves headroom but catches any layout,
 * padding or order bug (those give errors of order 1). */
#define VAE_REL_L2_TOL 1e-5

typedef struct dump_ctx {
    ltx2_context *ctx;
    const ltx2_st_file *golden;
    const char *version;
    const char *rename_from, *rename_to; /* maps our names onto a second golden case */
    int compared;
} dump_ctx;

static void on_dump(const char *name, const ltx2_tensor *t, void *user) {
    dump_ctx *d = user;
    char gname[256];
    if (d->rename_from && strncmp(name, d->rename_from, strlen(d->rename_from)) == 0)
        snprintf(gname, sizeof(gname), "%s%s", d->rename_to, name + strlen(d->rename_from));
    else
        snprintf(gname, sizeof(gname), "%s", name);
    const ltx2_st_tensor *g = ltx2_st_find(d->golden, gname);
    if (!g) return; /* the second case records only its input and output */
    int64_t gs[5];
    float *ref = ltx2_st_tensor_to_ndhwc(d->ctx, g, gs);
    CHECK(ref != NULL, "%s %s: golden not a 5-D f32 tensor", d->version, gname);
    if (!ref) return;
    bool same = t->ndim == 5;
    for (int i = 0; same && i < 5; i++) same = t->shape[i] == gs[i];
    char a[96], b[96];
    CHECK(same, "%s %s: shape %s, reference %s (NDHWC)", d->version, gname, ltx2_shape_str(t->shape, t->ndim, a, 96),
          ltx2_shape_str(gs, 5, b, 96));
    if (same) {
        ltx2_tensor rv = ltx2_tensor_make(ref, LTX2_F32, 5, gs);
        ltx2_diff_stats s;
        ltx2_diff(&rv, t, 0.0, 0.0, &s);
        CHECK(s.rel_l2 <= VAE_REL_L2_TOL && s.n_nonfinite_mismatch == 0,
              "%s %s: rel-L2 %.3g (max abs %.3g, ref max %.3g, cosine %.9f)", d->version, gname, s.rel_l2, s.max_abs,
              s.max_abs_ref, s.cosine);
        d->compared++;
        if (getenv("LTX2_TEST_VERBOSE"))
            printf("  %s %-40s rel-L2 %.3g max abs %.3g\n", d->version, gname, s.rel_l2, s.max_abs);
    }
    free(ref);
}

static void path_of(char *buf, size_t cap, const char *rel) {
    snprintf(buf, cap, "%s/%s", LTX2_SOURCE_DIR, rel);
}

/* Decodes golden input `in_name`, compares every dumped stage; returns the number compared. */
static int decode_case(ltx2_context *ctx, const ltx2_video_decoder *dec, const ltx2_st_file *golden,
                       const char *version, const char *in_name, const char *rename_to) {
    const ltx2_st_tensor *gin = ltx2_st_find(golden, in_name);
    CHECK(gin != NULL, "%s: golden %s missing", version, in_name);
    if (!gin) return 0;
    int64_t ls[5], vs[5];
    float *lat = ltx2_st_tensor_to_ndhwc(ctx, gin, ls);
    if (!lat) return 0;
    CHECK(ltx2_video_decoder_out_shape(ctx, dec, ls, vs) == LTX2_OK, "%s: out shape: %s", version, ltx2_last_error(ctx));
    float *vid = malloc((size_t)(vs[0] * vs[1] * vs[2] * vs[3] * vs[4]) * sizeof(float));
    ltx2_tensor lt = ltx2_tensor_make(lat, LTX2_F32, 5, ls), vt = ltx2_tensor_make(vid, LTX2_F32, 5, vs);
    dump_ctx d = {.ctx = ctx, .golden = golden, .version = version, .rename_from = rename_to ? "decoder." : NULL,
                  .rename_to = rename_to};
    ltx2_status st = ltx2_video_decoder_decode(ctx, dec, &lt, &vt, on_dump, &d);
    CHECK(st == LTX2_OK, "%s: decode %s failed: %s", version, in_name, ltx2_last_error(ctx));
    free(lat);
    free(vid);
    return d.compared;
}

static void check_error(ltx2_context *ctx, ltx2_status st, ltx2_status want, const char *needle,
                        const char *what) {
    CHECK(st == want, "%s: status %s, expected %s (%s)", what, ltx2_status_name(st), ltx2_status_name(want),
          ltx2_last_error(ctx));
    CHECK(strstr(ltx2_last_error(ctx), needle) != NULL, "%s: error \"%s\" does not mention \"%s\"", what,
          ltx2_last_error(ctx), needle);
    ltx2_clear_error(ctx);
}

/* Encodes golden "encoder.in", compares every dumped stage; returns the number compared. */
static int encode_case(ltx2_context *ctx, const ltx2_video_encoder *enc, const ltx2_st_file *golden,
                       const char *version) {
    const ltx2_st_tensor *gin = ltx2_st_find(golden, "encoder.in");
    CHECK(gin != NULL, "%s: golden encoder.in missing", version);
    if (!gin) return 0;
    int64_t vs[5], ls[5];
    float *vid = ltx2_st_tensor_to_ndhwc(ctx, gin, vs);
    if (!vid) return 0;
    CHECK(ltx2_video_encoder_out_shape(ctx, enc, vs, ls) == LTX2_OK, "%s: encoder out shape: %s", version,
          ltx2_last_error(ctx));
    float *lat = malloc((size_t)(ls[0] * ls[1] * ls[2] * ls[3] * ls[4]) * sizeof(float));
    ltx2_tensor vt = ltx2_tensor_make(vid, LTX2_F32, 5, vs), lt = ltx2_tensor_make(lat, LTX2_F32, 5, ls);
    dump_ctx d = {.ctx = ctx, .golden = golden, .version = version};
    ltx2_status st = ltx2_video_encoder_encode(ctx, enc, &vt, &lt, on_dump, &d);
    CHECK(st == LTX2_OK, "%s: encode failed: %s", version, ltx2_last_error(ctx));
    /* Pixel side of the encoder: frames must be 8k+1. */
    vs[1] -= 1;
    check_error(ctx, ltx2_video_encoder_out_shape(ctx, enc, vs, ls), LTX2_ERR_SHAPE, "8*k+1", "encode 8 frames");
    /* ... and H / W multiples of 32. */
    vs[1] += 1;
    vs[2] += 8;
    check_error(ctx, ltx2_video_encoder_out_shape(ctx, enc, vs, ls), LTX2_ERR_SHAPE, "multiple of 32", "encode H+8");
    vs[2] -= 8;
    vs[3] = 16;
    check_error(ctx, ltx2_video_encoder_out_shape(ctx, enc, vs, ls), LTX2_ERR_SHAPE, "multiple of 32", "encode W 16");
    free(vid);
    free(lat);
    return d.compared;
}

static size_t count_prefix(const ltx2_st_file *f, const char *prefix) {
    size_t n = 0;
    for (size_t i = 0; i < f->n_tensors; i++)
        if (strncmp(f->tensors[i].name, prefix, strlen(prefix)) == 0) n++;
    return n;
}


/* Writes the VAE decoder tensors of `src` (minus `drop`) with metadata config to path. */
static ltx2_status write_decoder_copy(ltx2_context *ctx, const ltx2_st_file *src, const char *drop,
                                      const char *config, const char *path) {
    ltx2_st_writer *w = NULL;
    LTX2_TRY(ltx2_st_writer_create(ctx, &w));
    ltx2_tensor *views = calloc(src->n_tensors, sizeof(*views));
    ltx2_status st = views ? LTX2_OK : LTX2_ERR_OOM;
    for (size_t i = 0; i < src->n_tensors && st == LTX2_OK; i++) {
        const char *n = src->tensors[i].name;
        if (strncmp(n, "vae.decoder.", 12) != 0 && strncmp(n, "vae.per_channel_statistics.", 27) != 0) continue;
        if (drop && strcmp(n, drop) == 0) continue;
        views[i] = ltx2_st_view(&src->tensors[i]);
        st = ltx2_st_writer_add(ctx, w, n, &views[i]);
    }
    if (st == LTX2_OK) st = ltx2_st_writer_set_meta(ctx, w, "config", config);
    if (st == LTX2_OK) st = ltx2_st_writer_write(ctx, w, path);
    ltx2_st_writer_free(w);
    free(views);
    return st;
}

static void bad_inputs(ltx2_context *ctx, const ltx2_video_decoder *dec20, const ltx2_st_set *w20,
                       const ltx2_vae_config *cfg23) {
    /* Wrong latent channel count. */
    float buf[2 * 2 * 3 * 8];
    float vid[1];
    int64_t ls[5] = {1, 1, 2, 3, 7}, vs[5] = {1, 1, 64, 96, 3};
    ltx2_tensor lt = ltx2_tensor_make(buf, LTX2_F32, 5, ls), vt = ltx2_tensor_make(vid, LTX2_F32, 5, vs);
    check_error(ctx, ltx2_video_decoder_decode(ctx, dec20, &lt, &vt, NULL, NULL), LTX2_ERR_SHAPE, "channels",
                "7-channel latent");
    /* A wrongly sized output buffer. */
    ls[4] = 8;
    vs[2] = 32;
    lt = ltx2_tensor_make(buf, LTX2_F32, 5, ls);
    vt = ltx2_tensor_make(vid, LTX2_F32, 5, vs);
    check_error(ctx, ltx2_video_decoder_decode(ctx, dec20, &lt, &vt, NULL, NULL), LTX2_ERR_SHAPE, "expected",
                "wrong video buffer");
    /* Reflect padding (2.0) cannot pad a 1-pixel-high latent (torch refuses it too). */
    float small[1 * 1 * 1 * 3 * 8] = {0};
    float vsmall[1 * 1 * 32 * 96 * 3];
    int64_t ls1[5] = {1, 1, 1, 3, 8}, vs1[5] = {1, 1, 32, 96, 3};
    lt = ltx2_tensor_make(small, LTX2_F32, 5, ls1);
    vt = ltx2_tensor_make(vsmall, LTX2_F32, 5, vs1);
    check_error(ctx, ltx2_video_decoder_decode(ctx, dec20, &lt, &vt, NULL, NULL), LTX2_ERR_SHAPE, "reflect",
                "1-row latent with reflect padding");
    /* Pixel side: frames must be 8k+1, sizes multiples of 32. */
    int64_t g[3];
    check_error(ctx, ltx2_video_decoder_latent_grid(ctx, dec20, 16, 64, 96, g), LTX2_ERR_SHAPE, "8*k+1",
                "16 frames");
    check_error(ctx, ltx2_video_decoder_latent_grid(ctx, dec20, 17, 64, 100, g), LTX2_ERR_SHAPE, "multiple of 32",
                "width 100");
    CHECK(ltx2_video_decoder_latent_grid(ctx, dec20, 121, 512, 768, g) == LTX2_OK && g[0] == 16 && g[1] == 16 &&
              g[2] == 24,
          "121x512x768 -> latent %lld %lld %lld", (long long)g[0], (long long)g[1], (long long)g[2]);
    /* 2.3 config over 2.0 weights: a shape mismatch naming the tensor. */
    ltx2_video_decoder *bad = NULL;
    check_error(ctx, ltx2_video_decoder_load(ctx, w20, "vae.", cfg23, &bad), LTX2_ERR_SHAPE,
                "vae.decoder.up_blocks.", "2.3 config on 2.0 weights");
    CHECK(bad == NULL, "no decoder on failure");
    /* A config without decoder_blocks is refused (ltx-core would build an empty decoder). */
    ltx2_json_doc *doc = NULL;
    const char *js = "{\"vae\": {\"latent_channels\": 8, \"encoder_blocks\": []}}";
    CHECK(ltx2_json_parse(ctx, js, strlen(js), "inline", &doc) == LTX2_OK, "json");
    ltx2_vae_config nc;
    CHECK(ltx2_vae_config_parse(ctx, ltx2_json_root(doc), "inline", &nc) == LTX2_OK && nc.n_decoder_blocks == -1 &&
              nc.timestep_conditioning == -1 && nc.decoder_padding == LTX2_VAE_PAD_REFLECT,
          "sparse config parses with absent markers: %s", ltx2_last_error(ctx));
    ltx2_json_free(doc);
    check_error(ctx, ltx2_video_decoder_load(ctx, w20, "vae.", &nc, &bad), LTX2_ERR_NOT_FOUND, "decoder_blocks",
                "config without decoder_blocks");
}

static void missing_key(ltx2_context *ctx, const ltx2_st_set *w20) {
    char dir[] = "/tmp/ltx2_vae_XXXXXX";
    if (!mkdtemp(dir)) {
        CHECK(0, "mkdtemp failed");
        return;
    }
    char path[256];
    snprintf(path, sizeof(path), "%s/decoder.safetensors", dir);
    const ltx2_st_file *src = w20->files[0];
    const char *config = ltx2_st_meta_get(src, "config");
    const char *drop = "vae.decoder.up_blocks.3.conv.conv.bias";
    ltx2_status st = write_decoder_copy(ctx, src, drop, config, path);
    CHECK(st == LTX2_OK, "write copy: %s", ltx2_last_error(ctx));
    ltx2_st_set *set = NULL;
    if (st == LTX2_OK && ltx2_st_set_open(ctx, path, &set) == LTX2_OK) {
        ltx2_vae_config cfg;
        CHECK(ltx2_vae_config_from_file(ctx, set->files[0], &cfg) == LTX2_OK, "config: %s", ltx2_last_error(ctx));
        ltx2_video_decoder *dec = NULL;
        check_error(ctx, ltx2_video_decoder_load(ctx, set, "vae.", &cfg, &dec), LTX2_ERR_NOT_FOUND, drop,
                    "missing tensor");
        ltx2_st_set_close(set);
    }
    /* A decoder-only copy with nothing missing loads (the encoder is not needed). */
    st = write_decoder_copy(ctx, src, NULL, config, path);
    if (st == LTX2_OK && ltx2_st_set_open(ctx, path, &set) == LTX2_OK) {
        ltx2_vae_config cfg;
        ltx2_video_decoder *dec = NULL;
        CHECK(ltx2_vae_config_from_file(ctx, set->files[0], &cfg) == LTX2_OK &&
                  ltx2_video_decoder_load(ctx, set, "vae.", &cfg, &dec) == LTX2_OK,
              "decoder-only file: %s", ltx2_last_error(ctx));
        ltx2_video_decoder_free(dec);
        ltx2_st_set_close(set);
    }
    unlink(path);
    rmdir(dir);
}

/* A direct-loop conv3d (NDHWC, double accumulation) checks the paths the goldens do not reach
 * (strides, 1x1x1, even temporal kernels, causal with reflect). */
static double naive_conv_check(ltx2_context *ctx, const ltx2_conv3d_desc *d, int64_t n, int64_t t, int64_t h,
                               int64_t w) {
    int64_t o[3];
    if (ltx2_conv3d_out_shape(ctx, d, t, h, w, o) != LTX2_OK) return 1e9;
    const int64_t taps = d->kt * d->kh * d->kw, nx = n * t * h * w * d->c_in, ny = n * o[0] * o[1] * o[2] * d->c_out;
    float *x = malloc((size_t)nx * sizeof(float)), *wt = malloc((size_t)(taps * d->c_in * d->c_out) * sizeof(float));
    float *wp = malloc((size_t)(taps * d->c_in * d->c_out) * sizeof(float)), *bias = malloc((size_t)d->c_out * sizeof(float));
    float *y = malloc((size_t)ny * sizeof(float)), *r = malloc((size_t)ny * sizeof(float));
    uint32_t seed = 12345;
#define NEXT_RAND() ((seed = seed * 1664525u + 1013904223u), (float)((seed >> 8) & 0xFFFF) / 32768.0f - 1.0f)
    for (int64_t i = 0; i < nx; i++) x[i] = NEXT_RAND();
    for (int64_t i = 0; i < taps * d->c_in * d->c_out; i++) wt[i] = NEXT_RAND();
    for (int64_t i = 0; i < d->c_out; i++) bias[i] = NEXT_RAND();
#undef NEXT_RAND
    const int64_t front = d->tpad == LTX2_CONV_TPAD_CAUSAL ? d->kt - 1 : (d->tpad == LTX2_CONV_TPAD_SYMMETRIC ? (d->kt - 1) / 2 : 0);
    for (int64_t b = 0; b < n; b++)
        for (int64_t tt = 0; tt < o[0]; tt++)
            for (int64_t yy = 0; yy < o[1]; yy++)
                for (int64_t xx = 0; xx < o[2]; xx++)
                    for (int64_t co = 0; co < d->c_out; co++) {
                        double acc = bias[co];
                        for (int64_t a = 0; a < d->kt; a++)
                            for (int64_t bb = 0; bb < d->kh; bb++)
                                for (int64_t c = 0; c < d->kw; c++) {
                                    int64_t ts = tt * d->st + a - front, hs = yy * d->sh + bb - d->kh / 2,
                                            ws = xx * d->sw + c - d->kw / 2;
                                    ts = ts < 0 ? 0 : (ts >= t ? t - 1 : ts);
                                    if (d->spad == LTX2_CONV_SPAD_REFLECT) {
                                        hs = hs < 0 ? -hs : (hs >= h ? 2 * (h - 1) - hs : hs);
                                        ws = ws < 0 ? -ws : (ws >= w ? 2 * (w - 1) - ws : ws);
                                    } else if (hs < 0 || hs >= h || ws < 0 || ws >= w) {
                                        continue;
                                    }
                                    for (int64_t ci = 0; ci < d->c_in; ci++)
                                        acc += (double)x[(((b * t + ts) * h + hs) * w + ws) * d->c_in + ci] *
                                               wt[((co * d->c_in + ci) * d->kt + a) * d->kh * d->kw + bb * d->kw + c];
                                }
                        r[(((b * o[0] + tt) * o[1] + yy) * o[2] + xx) * d->c_out + co] = (float)acc;
                    }
    double rel = 1e9;
    if (ltx2_conv3d_pack_weight(ctx, d, wt, wp) == LTX2_OK &&
        ltx2_cpu_conv3d(ctx, d, x, n, t, h, w, wp, bias, y) == LTX2_OK) {
        ltx2_tensor rt = ltx2_tensor_make(r, LTX2_F32, 1, &ny), yt = ltx2_tensor_make(y, LTX2_F32, 1, &ny);
        ltx2_diff_stats s;
        ltx2_diff(&rt, &yt, 0.0, 0.0, &s);
        rel = s.rel_l2;
    }
    free(x), free(wt), free(wp), free(bias), free(y), free(r);
    return rel;
}

static void conv3d_paths(ltx2_context *ctx) {
    const ltx2_conv3d_desc descs[] = {
        {.c_in = 5, .c_out = 7, .kt = 1, .kh = 1, .kw = 1, .st = 1, .sh = 1, .sw = 1, .tpad = LTX2_CONV_TPAD_CAUSAL},
        {.c_in = 3, .c_out = 4, .kt = 3, .kh = 3, .kw = 3, .st = 2, .sh = 2, .sw = 2, .tpad = LTX2_CONV_TPAD_CAUSAL},
        {.c_in = 4, .c_out = 6, .kt = 3, .kh = 3, .kw = 5, .st = 1, .sh = 2, .sw = 1, .tpad = LTX2_CONV_TPAD_SYMMETRIC,
         .spad = LTX2_CONV_SPAD_REFLECT},
        {.c_in = 2, .c_out = 3, .kt = 2, .kh = 3, .kw = 3, .st = 1, .sh = 1, .sw = 1, .tpad = LTX2_CONV_TPAD_NONE,
         .spad = LTX2_CONV_SPAD_REFLECT},
    };
    for (size_t i = 0; i < sizeof(descs) / sizeof(descs[0]); i++) {
        double rel = naive_conv_check(ctx, &descs[i], 2, 5, 6, 7);
        CHECK(rel <= VAE_REL_L2_TOL, "conv3d case %zu vs direct loop: rel-L2 %.3g (%s)", i, rel, ltx2_last_error(ctx));
    }
    ltx2_conv3d_desc even = descs[1];
    even.kh = 2;
    check_error(ctx, ltx2_conv3d_check(ctx, &even), LTX2_ERR_INVALID_ARG, "odd", "even spatial kernel");
}

typedef struct version_case {
    const char *version;
    int64_t n_blocks;
    bool reflect;
} version_case;

int main(void) {
    ltx2_context *ctx = ltx2_context_create(NULL);
    if (!ctx) return 1;
    const version_case cases[] = {{"2.0", 7, true}, {"2.3", 9, false}};
    ltx2_st_set *w[2] = {NULL, NULL};
    ltx2_vae_config cfg[2];
    ltx2_video_decoder *dec[2] = {NULL, NULL};
    for (int v = 0; v < 2; v++) {
        char wpath[512], gpath[512];
        char rel[128];
        snprintf(rel, sizeof(rel), "weights/tiny/ltx2-tiny-%s.safetensors", cases[v].version);
        path_of(wpath, sizeof(wpath), rel);
        snprintf(rel, sizeof(rel), "tests/golden/data/vae_%s.safetensors", cases[v].version);
        path_of(gpath, sizeof(gpath), rel);
        ltx2_st_file *golden = NULL;
        if (ltx2_st_set_open(ctx, wpath, &w[v]) != LTX2_OK || ltx2_st_open(ctx, gpath, &golden) != LTX2_OK) {
            CHECK(0, "%s: cannot open data: %s", cases[v].version, ltx2_last_error(ctx));
            continue;
        }
        ltx2_status st = ltx2_vae_config_from_file(ctx, w[v]->files[0], &cfg[v]);
        CHECK(st == LTX2_OK, "%s: config: %s", cases[v].version, ltx2_last_error(ctx));
        CHECK(cfg[v].n_decoder_blocks == cases[v].n_blocks && cfg[v].timestep_conditioning == 0 &&
                  (cfg[v].decoder_padding == LTX2_VAE_PAD_REFLECT) == cases[v].reflect,
              "%s: config blocks %d tc %d padding %d", cases[v].version, cfg[v].n_decoder_blocks,
              cfg[v].timestep_conditioning, (int)cfg[v].decoder_padding);
        if (st == LTX2_OK) st = ltx2_video_decoder_load(ctx, w[v], "vae.", &cfg[v], &dec[v]);
        CHECK(st == LTX2_OK, "%s: load: %s", cases[v].version, ltx2_last_error(ctx));
        if (st == LTX2_OK) {
            CHECK(dec[v]->time_factor == 8 && dec[v]->space_factor == 32, "%s: factors %lld %lld", cases[v].version,
                  (long long)dec[v]->time_factor, (long long)dec[v]->space_factor);
            const int n_main = decode_case(ctx, dec[v], golden, cases[v].version, "decoder.in", NULL);
            const size_t n_golden = count_prefix(golden, "decoder.");
            CHECK((size_t)n_main == n_golden, "%s: compared %d of %zu golden decoder tensors", cases[v].version, n_main,
                  n_golden);
            const int n_f1 = decode_case(ctx, dec[v], golden, cases[v].version, "decoder_f1.in", "decoder_f1.");
            CHECK(n_f1 == 2, "%s: single-frame case compared %d of 2 tensors", cases[v].version, n_f1);
            printf("%s: %d + %d decoder tensors within rel-L2 %.0e\n", cases[v].version, n_main, n_f1, VAE_REL_L2_TOL);
        }
        ltx2_video_encoder *enc = NULL;
        st = ltx2_video_encoder_load(ctx, w[v], "vae.", &cfg[v], &enc);
        CHECK(st == LTX2_OK, "%s: encoder load: %s", cases[v].version, ltx2_last_error(ctx));
        if (st == LTX2_OK) {
            const int n_enc = encode_case(ctx, enc, golden, cases[v].version);
            const size_t n_golden = count_prefix(golden, "encoder.");
            CHECK((size_t)n_enc == n_golden, "%s: compared %d of %zu golden encoder tensors", cases[v].version, n_enc,
                  n_golden);
            printf("%s: %d encoder tensors within rel-L2 %.0e\n", cases[v].version, n_enc, VAE_REL_L2_TOL);
        }
        ltx2_video_encoder_free(enc);
        ltx2_st_close(golden);
    }
    conv3d_paths(ctx);
    if (dec[0] && w[0]) {
        bad_inputs(ctx, dec[0], w[0], &cfg[1]);
        missing_key(ctx, w[0]);
    }
    for (int v = 0; v < 2; v++) {
        ltx2_video_decoder_free(dec[v]);
        ltx2_st_set_close(w[v]);
    }
    ltx2_context_free(ctx);
    return test_finish();
}
