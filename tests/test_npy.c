/* .npy / .npz tests: write -> read round trips for every dtype and shape kind, files written by
 * numpy itself (tests/data/numpy, made by gen_numpy_files.py: v1/v2/v3 headers, np.savez,
 * np.savez_compressed), and bad input: magic, version, truncation at every cut point, Fortran
 * order, big-endian, unknown descr, overflowing shapes, CRC errors, foreign members. */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/context.h"
#include "io/file.h"
#include "io/npy.h"
#include "test_util.h"

static ltx2_context *g_ctx;
static char g_dir[256];

/* Builds an exact-size .npy buffer around a header dict (padded to 64 like numpy). */
static unsigned char *make_npy(const char *dict, int major, const void *data, size_t dlen,
                               size_t *size) {
    size_t pre = major == 1 ? 10 : 12, dl = strlen(dict);
    size_t total = (pre + dl + 1 + 63) / 64 * 64;
    size_t hlen = total - pre;
    *size = total + dlen;
    unsigned char *b = malloc(*size);
    memcpy(b, "\x93NUMPY", 6);
    b[6] = (unsigned char)major;
    b[7] = 0;
    for (size_t i = 0; i < pre - 8; i++) b[8 + i] = (unsigned char)(hlen >> (8 * i));
    memcpy(b + pre, dict, dl);
    memset(b + pre + dl, ' ', hlen - dl - 1);
    b[total - 1] = '\n';
    if (dlen) memcpy(b + total, data, dlen);
    return b;
}

static ltx2_status parse_buf(const unsigned char *b, size_t size, ltx2_array *a) {
    ltx2_clear_error(g_ctx);
    return ltx2_npy_parse(g_ctx, b, size, "x.npy", a);
}

static void expect_npy(const char *dict, int major, size_t dlen, ltx2_status want,
                       const char *needle) {
    unsigned char data[64] = {0};
    size_t size;
    unsigned char *b = make_npy(dict, major, data, dlen, &size);
    ltx2_array a;
    ltx2_status st = parse_buf(b, size, &a);
    const char *msg = ltx2_last_error(g_ctx);
    CHECK(st == want, "%s: got %s want %s (%s)", dict, ltx2_status_name(st), ltx2_status_name(want),
          msg);
    if (want != LTX2_OK) {
        CHECK(msg[0] && strstr(msg, "x.npy"), "%s: message names the file: %s", dict, msg);
        CHECK(!needle || strstr(msg, needle), "%s: message mentions '%s': %s", dict, needle, msg);
    }
    ltx2_array_free(&a);
    free(b);
}

static void test_parse(void) {
    float v[6] = {1, 2, 3, 4, 5, 6};
    size_t size;
    unsigned char *b = make_npy("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", 1, v,
                                sizeof(v), &size);
    ltx2_array a;
    CHECK(parse_buf(b, size, &a) == LTX2_OK, "valid: %s", ltx2_last_error(g_ctx));
    CHECK(a.t.dtype == LTX2_F32 && a.t.ndim == 2 && a.t.shape[0] == 2 && a.t.shape[1] == 3 &&
          memcmp(a.t.data, v, sizeof(v)) == 0 && ((uintptr_t)a.t.data % 64) == 0, "valid contents");
    ltx2_array_free(&a);
    CHECK(a.t.data == NULL, "free clears");
    int cut_fail = 0;
    for (size_t cut = 0; cut < size; cut++) {
        unsigned char *t = malloc(cut ? cut : 1);
        memcpy(t, b, cut);
        if (parse_buf(t, cut, &a) != LTX2_OK && ltx2_last_error(g_ctx)[0]) cut_fail++;
        ltx2_array_free(&a);
        free(t);
    }
    CHECK(cut_fail == (int)size, "every truncation fails (%d of %zu)", cut_fail, size);
    b[3] = 'Z';
    CHECK(parse_buf(b, size, &a) == LTX2_ERR_FORMAT && strstr(ltx2_last_error(g_ctx), "magic"),
          "bad magic: %s", ltx2_last_error(g_ctx));
    b[3] = 'M';
    b[6] = 4;
    CHECK(parse_buf(b, size, &a) == LTX2_ERR_FORMAT && strstr(ltx2_last_error(g_ctx), "4.0"),
          "bad version: %s", ltx2_last_error(g_ctx));
    b[6] = 1;
    b[7] = 1;
    CHECK(parse_buf(b, size, &a) == LTX2_ERR_FORMAT, "bad minor version");
    b[7] = 0;
    b[8] = 0xff;
    b[9] = 0xff;
    CHECK(parse_buf(b, size, &a) == LTX2_ERR_FORMAT && strstr(ltx2_last_error(g_ctx), "65535"),
          "header length past the end: %s", ltx2_last_error(g_ctx));
    free(b);

    /* Accepted variants. */
    expect_npy("{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }", 2, 12, LTX2_OK, NULL);
    expect_npy("{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }", 3, 12, LTX2_OK, NULL);
    expect_npy("{\"shape\": (3L, 2L), \"descr\": \"<i2\", \"fortran_order\": False}", 1, 12,
               LTX2_OK, NULL);
    expect_npy("{'descr': '=f8', 'fortran_order': False, 'shape': ()}", 1, 8, LTX2_OK, NULL);
    expect_npy("{'descr': 'bfloat16', 'fortran_order': False, 'shape': (2,)}", 1, 4, LTX2_OK, NULL);
    expect_npy("{'descr': '<V2', 'fortran_order': False, 'shape': (0, 5)}", 1, 0, LTX2_OK, NULL);
    expect_npy("{'descr': '<f4', 'fortran_order': True, 'shape': (4,), }", 1, 16, LTX2_OK, NULL);
    expect_npy("{'descr': '<f4', 'fortran_order': True, 'shape': (1, 4, 1), }", 1, 16, LTX2_OK, NULL);

    /* Refused, each with a clear message. */
    expect_npy("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }", 1, 24,
               LTX2_ERR_UNSUPPORTED, "np.ascontiguousarray(a)");
    expect_npy("{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }", 1, 8,
               LTX2_ERR_UNSUPPORTED, "astype('<f4')");
    expect_npy("{'descr': '>i8', 'fortran_order': False, 'shape': (1,), }", 1, 8,
               LTX2_ERR_UNSUPPORTED, "big-endian");
    expect_npy("{'descr': '<U3', 'fortran_order': False, 'shape': (1,), }", 1, 12, LTX2_ERR_DTYPE,
               "'<U3'");
    expect_npy("{'descr': '<c8', 'fortran_order': False, 'shape': (1,), }", 1, 8, LTX2_ERR_DTYPE, NULL);
    expect_npy("{'descr': '<u4', 'fortran_order': False, 'shape': (1,), }", 1, 4, LTX2_ERR_DTYPE, NULL);
    expect_npy("{'descr': '|O', 'fortran_order': False, 'shape': (1,), }", 1, 8, LTX2_ERR_DTYPE, NULL);
    expect_npy("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (1,), }", 1, 4,
               LTX2_ERR_DTYPE, "structured");
    expect_npy("{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296), }", 1,
               8, LTX2_ERR_SHAPE, "overflow");
    expect_npy("{'descr': '<f8', 'fortran_order': False, 'shape': (2305843009213693952,), }", 1, 8,
               LTX2_ERR_FORMAT, "truncated");
    expect_npy("{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,), }", 1, 8,
               LTX2_ERR_SHAPE, "overflow");
    expect_npy("{'descr': '|u1', 'fortran_order': False, 'shape': (1,1,1,1,1,1,1,1,1), }", 1, 1,
               LTX2_ERR_SHAPE, "dimensions");
    expect_npy("{'descr': '<f4', 'fortran_order': False, 'shape': (-1,), }", 1, 4, LTX2_ERR_SHAPE,
               "negative");
    expect_npy("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", 1, 4, LTX2_ERR_FORMAT,
               "truncated");
    expect_npy("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }", 1, 8, LTX2_ERR_FORMAT,
               "4 bytes but 8");
    expect_npy("{'descr': '<f4', 'shape': (1,), }", 1, 4, LTX2_ERR_FORMAT, "fortran_order");
    expect_npy("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), 'x': 1}", 1, 4,
               LTX2_ERR_FORMAT, "'x'");
    expect_npy("{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (1,)}", 1, 4,
               LTX2_ERR_FORMAT, "twice");
    expect_npy("{'descr': '<f4', 'fortran_order': Maybe, 'shape': (1,)}", 1, 4, LTX2_ERR_FORMAT,
               "True or False");
    expect_npy("{'descr': '<f4', 'fortran_order': False, 'shape': (1,)} junk", 1, 4,
               LTX2_ERR_FORMAT, "padding");
    expect_npy("{'descr': '<f4', 'fortran_order': False, 'shape': [1]}", 1, 4, LTX2_ERR_FORMAT,
               "shape tuple");
    expect_npy("['descr']", 1, 4, LTX2_ERR_FORMAT, "'{'");
}

static bool file_exists(const char *p) { return access(p, F_OK) == 0; }

static void test_roundtrip(void) {
    static const ltx2_dtype dts[] = {LTX2_F32, LTX2_F16, LTX2_BF16, LTX2_F64, LTX2_I64,
                                     LTX2_I32, LTX2_I16, LTX2_I8,   LTX2_U8,  LTX2_BOOL};
    static const int64_t shapes[][4] = {{0}, {5}, {2, 3}, {0, 3}, {2, 1, 3, 2}};
    static const int ndims[] = {0, 1, 2, 2, 4};
    unsigned char src[12 * 8];
    for (size_t i = 0; i < sizeof(src); i++) src[i] = (unsigned char)(i * 13 + 1);
    char *path = ltx2_path_join(g_dir, "rt.npy");
    for (size_t d = 0; d < sizeof(dts) / sizeof(dts[0]); d++) {
        for (size_t s = 0; s < sizeof(ndims) / sizeof(ndims[0]); s++) {
            unsigned char local[sizeof(src)];
            memcpy(local, src, sizeof(src));
            if (dts[d] == LTX2_BOOL)
                for (size_t i = 0; i < sizeof(local); i++) local[i] &= 1;
            ltx2_tensor t = ltx2_tensor_make(local, dts[d], ndims[s], shapes[s]);
            CHECK(ltx2_npy_write(g_ctx, path, &t) == LTX2_OK, "write %s: %s",
                  ltx2_dtype_name(dts[d]), ltx2_last_error(g_ctx));
            ltx2_array a;
            CHECK(ltx2_npy_read(g_ctx, path, &a) == LTX2_OK, "read %s: %s", ltx2_dtype_name(dts[d]),
                  ltx2_last_error(g_ctx));
            size_t nb = ltx2_tensor_nbytes(&t);
            CHECK(a.t.dtype == dts[d] && a.t.ndim == ndims[s] &&
                      ltx2_tensor_same_shape(&a.t, &t) && memcmp(a.t.data, local, nb) == 0,
                  "round trip %s ndim %d", ltx2_dtype_name(dts[d]), ndims[s]);
            ltx2_array_free(&a);
            char *text = NULL;
            size_t len = 0;
            if (ltx2_file_read_all(g_ctx, path, &text, &len) == LTX2_OK) {
                CHECK((len - nb) % 64 == 0 && text[len - nb - 1] == '\n', "header padded to 64");
                if (dts[d] == LTX2_BF16) CHECK(strstr(text + 10, "'<V2'") != NULL, "bf16 written as <V2");
                if (ndims[s] == 1) CHECK(strstr(text + 10, "(5,)") != NULL, "1-tuple keeps its comma");
                if (ndims[s] == 0) CHECK(strstr(text + 10, "'shape': ()") != NULL, "scalar shape ()");
            }
            free(text);
        }
    }
    unsigned char q[4] = {0};
    int64_t qs[1] = {4};
    ltx2_tensor fp8 = ltx2_tensor_make(q, LTX2_F8_E4M3, 1, qs);
    unlink(path);
    CHECK(ltx2_npy_write(g_ctx, path, &fp8) == LTX2_ERR_DTYPE && !file_exists(path),
          "fp8 refused, nothing written: %s", ltx2_last_error(g_ctx));
    ltx2_array a;
    CHECK(ltx2_npy_read(g_ctx, "/nonexistent.npy", &a) == LTX2_ERR_IO, "missing file");
    free(path);
}

static char *data_path(const char *name) {
    return ltx2_path_join(LTX2_SOURCE_DIR "/tests/data/numpy", name);
}

static bool read_ref(const char *name, ltx2_array *a) {
    char *p = data_path(name);
    ltx2_status st = ltx2_npy_read(g_ctx, p, a);
    CHECK(st == LTX2_OK, "numpy file %s: %s", name, ltx2_last_error(g_ctx));
    free(p);
    return st == LTX2_OK;
}

static void check_f32_2x3(const ltx2_tensor *t, const char *what) {
    bool ok = t->dtype == LTX2_F32 && t->ndim == 2 && t->shape[0] == 2 && t->shape[1] == 3;
    for (int i = 0; ok && i < 6; i++) ok = ((const float *)t->data)[i] == (float)(i * 0.5 - 1.0);
    CHECK(ok, "%s holds arange(6)*0.5-1 as f32 [2, 3]", what);
}

static void check_i64_3(const ltx2_tensor *t, const char *what) {
    const int64_t *v = t->data;
    CHECK(t->dtype == LTX2_I64 && t->ndim == 1 && t->shape[0] == 3 && v[0] == -(INT64_C(1) << 40) &&
              v[1] == 0 && v[2] == INT64_C(1) << 62, "%s i64 values", what);
}

static void check_bool_4(const ltx2_tensor *t, const char *what) {
    const unsigned char *v = t->data;
    CHECK(t->dtype == LTX2_BOOL && t->shape[0] == 4 && v[0] == 1 && v[1] == 0 && v[2] == 0 &&
              v[3] == 1, "%s bool values", what);
}

static void test_numpy_files(void) {
    ltx2_array a;
    static const char *const f32s[] = {"f32_2x3.npy", "f32_v2.npy", "f32_v3.npy"};
    for (int i = 0; i < 3; i++) {
        if (read_ref(f32s[i], &a)) check_f32_2x3(&a.t, f32s[i]);
        ltx2_array_free(&a);
    }
    if (read_ref("f16_4.npy", &a)) {
        const uint16_t *v = a.t.data;
        CHECK(a.t.dtype == LTX2_F16 && v[0] == 0x3C00 && v[1] == 0xC000 && v[2] == 0x3800 &&
              v[3] == 0x7BFF, "f16 values");
    }
    ltx2_array_free(&a);
    if (read_ref("f64_scalar.npy", &a))
        CHECK(a.t.dtype == LTX2_F64 && a.t.ndim == 0 && *(const double *)a.t.data == 3.25, "scalar");
    ltx2_array_free(&a);
    if (read_ref("i64_3.npy", &a)) check_i64_3(&a.t, "i64_3.npy");
    ltx2_array_free(&a);
    if (read_ref("i32_2x2.npy", &a)) {
        const int32_t *v = a.t.data;
        CHECK(a.t.dtype == LTX2_I32 && v[0] == 1 && v[1] == -2 && v[2] == 3 && v[3] == -4, "i32");
    }
    ltx2_array_free(&a);
    if (read_ref("i16_3.npy", &a)) {
        const int16_t *v = a.t.data;
        CHECK(a.t.dtype == LTX2_I16 && v[0] == -300 && v[1] == 0 && v[2] == 300, "i16");
    }
    ltx2_array_free(&a);
    if (read_ref("i8_3.npy", &a)) {
        const int8_t *v = a.t.data;
        CHECK(a.t.dtype == LTX2_I8 && v[0] == -128 && v[1] == 0 && v[2] == 127, "i8");
    }
    ltx2_array_free(&a);
    if (read_ref("u8_5.npy", &a)) {
        const uint8_t *v = a.t.data;
        CHECK(a.t.dtype == LTX2_U8 && a.t.shape[0] == 5 && v[1] == 50 && v[4] == 200, "u8");
    }
    ltx2_array_free(&a);
    if (read_ref("bool_4.npy", &a)) check_bool_4(&a.t, "bool_4.npy");
    ltx2_array_free(&a);
    if (read_ref("empty_0x3.npy", &a))
        CHECK(a.t.ndim == 2 && a.t.shape[0] == 0 && a.t.shape[1] == 3, "empty (0, 3)");
    ltx2_array_free(&a);
    if (read_ref("bf16_v2.npy", &a)) {
        const uint16_t *v = a.t.data;
        CHECK(a.t.dtype == LTX2_BF16 && v[0] == 0x3F80 && v[1] == 0xC000 && v[2] == 0, "|V2 as bf16");
    }
    ltx2_array_free(&a);

    char *p = data_path("fortran_2x3.npy");
    CHECK(ltx2_npy_read(g_ctx, p, &a) == LTX2_ERR_UNSUPPORTED &&
          strstr(ltx2_last_error(g_ctx), "ascontiguousarray"), "numpy Fortran file refused: %s",
          ltx2_last_error(g_ctx));
    free(p);
    p = data_path("bigendian_f4.npy");
    CHECK(ltx2_npy_read(g_ctx, p, &a) == LTX2_ERR_UNSUPPORTED &&
          strstr(ltx2_last_error(g_ctx), "astype('<f4')"), "numpy big-endian file refused: %s",
          ltx2_last_error(g_ctx));
    free(p);

    static const char *const npzs[] = {"savez.npz", "savez_compressed.npz"};
    for (int i = 0; i < 2; i++) {
        ltx2_npz z;
        p = data_path(npzs[i]);
        ltx2_status st = ltx2_npz_read(g_ctx, p, &z);
        free(p);
#ifndef LTX2_HAVE_ZLIB
        if (i == 1) {
            CHECK(st == LTX2_ERR_UNSUPPORTED && strstr(ltx2_last_error(g_ctx), "zlib"),
                  "compressed npz without zlib: %s", ltx2_last_error(g_ctx));
            continue;
        }
#endif
        CHECK(st == LTX2_OK, "%s: %s", npzs[i], ltx2_last_error(g_ctx));
        if (st != LTX2_OK) continue;
        CHECK(z.n == 3 && strcmp(z.names[0], "a") == 0 && strcmp(z.names[1], "b") == 0 &&
              strcmp(z.names[2], "c") == 0, "%s member names", npzs[i]);
        if (z.n == 3) {
            check_f32_2x3(&z.arrays[0].t, npzs[i]);
            check_i64_3(&z.arrays[1].t, npzs[i]);
            check_bool_4(&z.arrays[2].t, npzs[i]);
        }
        ltx2_npz_free(&z);
    }
}

/* Replaces every occurrence of `from` with `to` (same length) in buf. */
static void patch_all(unsigned char *buf, size_t n, const char *from, const char *to) {
    size_t k = strlen(from);
    for (size_t i = 0; i + k <= n; i++)
        if (memcmp(buf + i, from, k) == 0) memcpy(buf + i, to, k);
}

static ltx2_status parse_npz(const unsigned char *b, size_t n, ltx2_npz *z) {
    ltx2_clear_error(g_ctx);
    ltx2_status st = ltx2_npz_parse(g_ctx, b, n, "x.npz", z);
    if (st != LTX2_OK)
        CHECK(ltx2_last_error(g_ctx)[0] && strstr(ltx2_last_error(g_ctx), "x.npz"),
              "npz error names the file: %s", ltx2_last_error(g_ctx));
    return st;
}

static void put16(unsigned char *p, uint32_t v) {
    p[0] = (unsigned char)v;
    p[1] = (unsigned char)(v >> 8);
}
static void put32(unsigned char *p, uint32_t v) {
    put16(p, v & 0xFFFF);
    put16(p + 2, v >> 16);
}
static void put64(unsigned char *p, uint64_t v) {
    put32(p, (uint32_t)v);
    put32(p + 4, (uint32_t)(v >> 32));
}
static uint32_t test_crc32(const unsigned char *p, size_t n) {
    uint32_t c = 0xFFFFFFFFu;
    for (size_t i = 0; i < n; i++) {
        c ^= p[i];
        for (int k = 0; k < 8; k++) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
    }
    return ~c;
}

/* A one-member stored zip ("z.npy") in full zip64 form: the central entry's sizes and offset
 * live in a zip64 extra field, and the end record points on to a zip64 end record. */
static unsigned char *make_zip64(const unsigned char *m, size_t ml, size_t *size) {
    size_t local = 30 + 5 + ml, central = 46 + 5 + 28;
    *size = local + central + 56 + 20 + 22;
    unsigned char *b = calloc(1, *size), *p = b;
    uint32_t crc = test_crc32(m, ml);
    put32(p, 0x04034b50);
    put16(p + 4, 45);
    put32(p + 14, crc);
    put32(p + 18, (uint32_t)ml);
    put32(p + 22, (uint32_t)ml);
    put16(p + 26, 5);
    memcpy(p + 30, "z.npy", 5);
    memcpy(p + 35, m, ml);
    p = b + local;
    put32(p, 0x02014b50);
    put16(p + 4, 45);
    put16(p + 6, 45);
    put32(p + 16, crc);
    put32(p + 20, 0xFFFFFFFFu);
    put32(p + 24, 0xFFFFFFFFu);
    put16(p + 28, 5);
    put16(p + 30, 28);
    put32(p + 42, 0xFFFFFFFFu);
    memcpy(p + 46, "z.npy", 5);
    put16(p + 51, 0x0001);
    put16(p + 53, 24);
    put64(p + 55, ml); /* uncompressed, compressed, local header offset */
    put64(p + 63, ml);
    put64(p + 71, 0);
    p = b + local + central;
    put32(p, 0x06064b50);
    put64(p + 4, 44);
    put16(p + 12, 45);
    put16(p + 14, 45);
    put64(p + 24, 1);
    put64(p + 32, 1);
    put64(p + 40, central);
    put64(p + 48, local);
    p += 56;
    put32(p, 0x07064b50);
    put64(p + 8, local + central);
    put32(p + 16, 1);
    p += 20;
    put32(p, 0x06054b50);
    put16(p + 8, 0xFFFF);
    put16(p + 10, 0xFFFF);
    put32(p + 12, 0xFFFFFFFFu);
    put32(p + 16, 0xFFFFFFFFu);
    return b;
}

static void test_npz(void) {
    float f[6] = {1, 2, 3, 4, 5, 6};
    uint16_t h[3] = {0x3F80, 0x4000, 0xC040};
    int32_t sc = -7;
    int64_t s23[2] = {2, 3}, s3[1] = {3};
    ltx2_tensor ts[3] = {ltx2_tensor_make(f, LTX2_F32, 2, s23), ltx2_tensor_make(h, LTX2_BF16, 1, s3),
                         ltx2_tensor_make(&sc, LTX2_I32, 0, NULL)};
    const char *names[3] = {"latents", "blocks.0/out", "step"};
    char *path = ltx2_path_join(g_dir, "rt.npz");
    CHECK(ltx2_npz_write(g_ctx, path, 3, names, ts) == LTX2_OK, "npz write: %s", ltx2_last_error(g_ctx));
    ltx2_npz z;
    CHECK(ltx2_npz_read(g_ctx, path, &z) == LTX2_OK, "npz read: %s", ltx2_last_error(g_ctx));
    if (z.n == 3) {
        for (int i = 0; i < 3; i++) {
            CHECK(strcmp(z.names[i], names[i]) == 0, "name %d: %s", i, z.names[i]);
            CHECK(z.arrays[i].t.dtype == ts[i].dtype && ltx2_tensor_same_shape(&z.arrays[i].t, &ts[i]) &&
                  memcmp(z.arrays[i].t.data, ts[i].data, ltx2_tensor_nbytes(&ts[i])) == 0,
                  "member %d round trip", i);
        }
    }
    ltx2_npz_free(&z);

    char *buf = NULL;
    size_t n = 0;
    CHECK(ltx2_file_read_all(g_ctx, path, &buf, &n) == LTX2_OK, "read npz bytes");
    if (!buf) return;
    unsigned char *b = malloc(n + 32);

    /* Truncation at every cut point. */
    int cut_fail = 0;
    for (size_t cut = 0; cut < n; cut++) {
        unsigned char *t = malloc(cut ? cut : 1);
        memcpy(t, buf, cut);
        ltx2_clear_error(g_ctx);
        if (ltx2_npz_parse(g_ctx, t, cut, "cut.npz", &z) != LTX2_OK && ltx2_last_error(g_ctx)[0])
            cut_fail++;
        else
            ltx2_npz_free(&z);
        free(t);
    }
    CHECK(cut_fail == (int)n, "every npz truncation fails (%d of %zu)", cut_fail, n);

    /* Flipped data byte: CRC mismatch. The last float of "latents" sits just before member 2. */
    memcpy(b, buf, n);
    unsigned char six[4];
    memcpy(six, &f[5], 4);
    for (size_t i = 0; i + 4 <= n; i++)
        if (memcmp(b + i, six, 4) == 0) {
            b[i] ^= 0x01;
            break;
        }
    CHECK(parse_npz(b, n, &z) == LTX2_ERR_FORMAT && strstr(ltx2_last_error(g_ctx), "CRC"),
          "bad CRC: %s", ltx2_last_error(g_ctx));

    /* A zip comment after the end record is fine. */
    memcpy(b, buf, n);
    memcpy(b + n, "hello comment", 13);
    b[n - 2] = 13;
    CHECK(parse_npz(b, n + 13, &z) == LTX2_OK, "zip comment: %s", ltx2_last_error(g_ctx));
    ltx2_npz_free(&z);

    memcpy(b, buf, n);
    patch_all(b, n, "step.npy", "step.txt");
    CHECK(parse_npz(b, n, &z) == LTX2_ERR_FORMAT && strstr(ltx2_last_error(g_ctx), "step.txt"),
          "non-npy member: %s", ltx2_last_error(g_ctx));
    memcpy(b, buf, n);
    b[8] = 12; /* first local header: method 12 (bzip2) */
    size_t cd = 0;
    for (size_t i = n - 22; i > 0; i--)
        if (memcmp(b + i, "PK\x01\x02", 4) == 0) cd = i;
    b[cd + 10] = 12;
    CHECK(parse_npz(b, n, &z) == LTX2_ERR_UNSUPPORTED && strstr(ltx2_last_error(g_ctx), "method 12"),
          "unknown compression: %s", ltx2_last_error(g_ctx));
    memcpy(b, buf, n);
    b[cd + 8] = 1; /* encrypted flag */
    CHECK(parse_npz(b, n, &z) == LTX2_ERR_UNSUPPORTED, "encrypted member");
    memcpy(b, buf, n);
    b[cd + 42] = 0xEE; /* local header offset of the first member -> nowhere */
    CHECK(parse_npz(b, n, &z) == LTX2_ERR_FORMAT, "bad local header offset");
    memcpy(b, "not a zip file at all, just text", 32);
    CHECK(parse_npz(b, 32, &z) == LTX2_ERR_FORMAT, "not a zip");
#ifndef LTX2_HAVE_ZLIB
    memcpy(b, buf, n);
    b[8] = 8;
    b[cd + 10] = 8;
    CHECK(parse_npz(b, n, &z) == LTX2_ERR_UNSUPPORTED && strstr(ltx2_last_error(g_ctx), "zlib"),
          "deflate without zlib: %s", ltx2_last_error(g_ctx));
#endif
    free(b);
    free(buf);

    /* Two members renamed to the same name (same-length names, CRCs unaffected). */
    const char *two[2] = {"aa", "bb"};
    CHECK(ltx2_npz_write(g_ctx, path, 2, two, ts) == LTX2_OK, "write aa/bb");
    if (ltx2_file_read_all(g_ctx, path, &buf, &n) == LTX2_OK) {
        patch_all((unsigned char *)buf, n, "bb.npy", "aa.npy");
        CHECK(parse_npz((unsigned char *)buf, n, &z) == LTX2_ERR_FORMAT &&
              strstr(ltx2_last_error(g_ctx), "twice"), "duplicate members: %s", ltx2_last_error(g_ctx));
        free(buf);
    }

    /* zip64 records (end record, locator, central extra field). */
    float zf[2] = {0.25f, -8.0f};
    size_t zl, zn;
    unsigned char *zm = make_npy("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", 1,
                                 zf, sizeof(zf), &zl);
    unsigned char *zb = make_zip64(zm, zl, &zn);
    CHECK(parse_npz(zb, zn, &z) == LTX2_OK && z.n == 1 && strcmp(z.names[0], "z") == 0 &&
              memcmp(z.arrays[0].t.data, zf, sizeof(zf)) == 0, "zip64 archive: %s",
          ltx2_last_error(g_ctx));
    ltx2_npz_free(&z);
    put16(zb + zl + 35 + 53, 16); /* zip64 extra too short for three fields */
    CHECK(parse_npz(zb, zn, &z) == LTX2_ERR_FORMAT, "short zip64 extra: %s", ltx2_last_error(g_ctx));
    put16(zb + zl + 35 + 53, 24);
    put32(zb + zn - 22 - 20, 0); /* break the locator signature */
    CHECK(parse_npz(zb, zn, &z) == LTX2_ERR_FORMAT && strstr(ltx2_last_error(g_ctx), "zip64"),
          "missing zip64 locator: %s", ltx2_last_error(g_ctx));
    free(zb);
    free(zm);

    /* Writer refusals leave no file. */
    unlink(path);
    const char *dup[2] = {"a", "a"};
    CHECK(ltx2_npz_write(g_ctx, path, 2, dup, ts) == LTX2_ERR_INVALID_ARG && !file_exists(path),
          "duplicate member names refused");
    unsigned char q[2] = {0};
    int64_t s2[1] = {2};
    ltx2_tensor bad[2] = {ts[0], ltx2_tensor_make(q, LTX2_F8_E5M2, 1, s2)};
    const char *nm[2] = {"ok", "fp8"};
    CHECK(ltx2_npz_write(g_ctx, path, 2, nm, bad) == LTX2_ERR_DTYPE && !file_exists(path),
          "fp8 member refused, nothing written: %s", ltx2_last_error(g_ctx));
    CHECK(ltx2_npz_write(g_ctx, path, 0, NULL, NULL) == LTX2_OK, "empty npz");
    CHECK(ltx2_npz_read(g_ctx, path, &z) == LTX2_OK && z.n == 0, "empty npz reads");
    ltx2_npz_free(&z);
    unlink(path);
    free(path);
}

int main(void) {
    ltx2_context_params p;
    ltx2_context_params_init(&p);
    p.log_level = LTX2_LOG_ERROR;
    g_ctx = ltx2_context_create(&p);
    snprintf(g_dir, sizeof(g_dir), "/tmp/ltx2_test_npy_XXXXXX");
    if (!g_ctx || !mkdtemp(g_dir)) return 1;
    test_parse();
    test_roundtrip();
    test_numpy_files();
    test_npz();
    char *rt = ltx2_path_join(g_dir, "rt.npy");
    unlink(rt);
    free(rt);
    rmdir(g_dir);
    ltx2_context_free(g_ctx);
    return test_finish();
}
