/* Our dtype conversions against PyTorch's, bit for bit: every bf16/f16/fp8 pattern decoded, and
 * ~100k chosen f32 values (midpoints, overflow sweeps, subnormals, random) encoded. Data:
 * tests/golden/data/dtype.safetensors from tests/golden/gen_dtype.py. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "core/dtype.h"
#include "io/safetensors.h"
#include "test_util.h"

/* Report at most this many mismatches per table, so a systematic bug does not flood the log. */
#define MAX_REPORTS 5

static const ltx2_st_tensor *need(const ltx2_st_file *f, const char *name, int64_t *n) {
    const ltx2_st_tensor *t = ltx2_st_find(f, name);
    CHECK(t != NULL, "golden tensor %s missing", name);
    if (t) {
        ltx2_tensor v = ltx2_st_view(t);
        *n = ltx2_tensor_numel(&v);
    }
    return t;
}

static uint32_t f32_bits(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

static uint32_t load_bits(const void *base, size_t itemsize, int64_t i) {
    uint32_t v = 0;
    memcpy(&v, (const char *)base + (size_t)i * itemsize, itemsize);
    return v;
}

/* Decoding: every pattern gives exactly torch's f32 (any NaN for NaN). */
static void check_decode(const ltx2_st_file *f, const char *fmt, size_t itemsize, float (*decode)(uint32_t)) {
    char nb[64], nd[64];
    snprintf(nb, sizeof(nb), "%s.bits", fmt);
    snprintf(nd, sizeof(nd), "%s.decoded", fmt);
    int64_t n = 0, m = 0;
    const ltx2_st_tensor *bits = need(f, nb, &n), *dec = need(f, nd, &m);
    if (!bits || !dec || n != m) return;
    int64_t bad = 0;
    for (int64_t i = 0; i < n; i++) {
        uint32_t b = load_bits(bits->data, itemsize, i);
        float want;
        memcpy(&want, (const char *)dec->data + 4 * i, 4);
        float got = decode(b);
        bool ok = isnan(want) ? isnan(got) : f32_bits(got) == f32_bits(want);
        if (!ok && bad++ < MAX_REPORTS)
            fprintf(stderr, "  %s decode 0x%x: torch %.9g, ours %.9g\n", fmt, b, want, got);
    }
    CHECK(bad == 0, "%s: %lld of %lld patterns decode differently from torch", fmt, (long long)bad, (long long)n);
}

static float dec_bf16(uint32_t b) { return ltx2_bf16_to_f32((uint16_t)b); }
static float dec_f16(uint32_t b) { return ltx2_f16_to_f32((uint16_t)b); }
static float dec_e4m3(uint32_t b) { return ltx2_fp8e4m3_to_f32((uint8_t)b); }
static float dec_e5m2(uint32_t b) { return ltx2_fp8e5m2_to_f32((uint8_t)b); }
static uint32_t enc_bf16(float f) { return ltx2_f32_to_bf16(f); }
static uint32_t enc_f16(float f) { return ltx2_f32_to_f16(f); }
static uint32_t enc_e4m3(float f) { return ltx2_f32_to_fp8e4m3(f); }
static uint32_t enc_e5m2(float f) { return ltx2_f32_to_fp8e5m2(f); }

/* Encoding: the same bits as torch, except that any NaN encoding is accepted for NaN input
 * (torch canonicalises NaN payloads; the value is NaN either way). */
static void check_encode(const ltx2_st_file *f, const char *fmt, size_t itemsize, uint32_t (*encode)(float),
                         float (*decode)(uint32_t)) {
    char name[64];
    snprintf(name, sizeof(name), "encode.%s", fmt);
    int64_t n = 0, m = 0, c = 0;
    const ltx2_st_tensor *in = need(f, "encode.input", &n), *want = need(f, name, &m),
                         *cat = need(f, "encode.category", &c);
    if (!in || !want || !cat || n != m || n != c) return;
    int64_t bad = 0;
    for (int64_t i = 0; i < n; i++) {
        float x;
        memcpy(&x, (const char *)in->data + 4 * i, 4);
        uint32_t w = load_bits(want->data, itemsize, i), g = encode(x);
        bool ok = isnan(x) ? isnan(decode(g)) && isnan(decode(w)) : g == w;
        if (!ok && bad++ < MAX_REPORTS)
            fprintf(stderr, "  %s encode %.9g (0x%08x, category %u): torch 0x%x, ours 0x%x\n", fmt, x, f32_bits(x),
                    (unsigned)((const uint8_t *)cat->data)[i], w, g);
    }
    CHECK(bad == 0, "%s: %lld of %lld values encode differently from torch", fmt, (long long)bad, (long long)n);
}

int main(void) {
    ltx2_context *ctx = ltx2_context_create(NULL);
    ltx2_st_file *f = NULL;
    const char *path = LTX2_SOURCE_DIR "/tests/golden/data/dtype.safetensors";
    if (ltx2_st_open(ctx, path, &f) != LTX2_OK) {
        CHECK(false, "cannot open %s: %s", path, ltx2_last_error(ctx));
        ltx2_context_free(ctx);
        return test_finish();
    }
    check_decode(f, "bf16", 2, dec_bf16);
    check_decode(f, "f16", 2, dec_f16);
    check_decode(f, "f8_e4m3", 1, dec_e4m3);
    check_decode(f, "f8_e5m2", 1, dec_e5m2);
    check_encode(f, "bf16", 2, enc_bf16, dec_bf16);
    check_encode(f, "f16", 2, enc_f16, dec_f16);
    check_encode(f, "f8_e4m3", 1, enc_e4m3, dec_e4m3);
    check_encode(f, "f8_e5m2", 1, enc_e5m2, dec_e5m2);
    ltx2_st_close(f);
    ltx2_context_free(ctx);
    return test_finish();
}
