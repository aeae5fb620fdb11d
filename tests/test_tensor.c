/* Tensor views: dtype names/sizes and safetensors names, numel/nbytes/contiguity/shape strings, and
 * the reshape / slice / permute view transforms with their errors. */
#include <stdio.h>
#include <string.h>

#include "core/context.h"
#include "core/tensor_ops.h"
#include "ltx2/tensor.h"
#include "test_util.h"

static void test_dtypes(void) {
    static const struct {
        ltx2_dtype dt;
        const char *name, *st;
        size_t size;
        bool is_float;
    } want[] = {
        {LTX2_F32, "f32", "F32", 4, true},         {LTX2_F16, "f16", "F16", 2, true},
        {LTX2_BF16, "bf16", "BF16", 2, true},      {LTX2_F8_E4M3, "f8_e4m3", "F8_E4M3", 1, true},
        {LTX2_F8_E5M2, "f8_e5m2", "F8_E5M2", 1, true}, {LTX2_F64, "f64", "F64", 8, true},
        {LTX2_I64, "i64", "I64", 8, false},        {LTX2_I32, "i32", "I32", 4, false},
        {LTX2_I16, "i16", "I16", 2, false},        {LTX2_I8, "i8", "I8", 1, false},
        {LTX2_U8, "u8", "U8", 1, false},           {LTX2_BOOL, "bool", "BOOL", 1, false},
    };
    CHECK(sizeof(want) / sizeof(want[0]) == LTX2_DTYPE_COUNT, "table covers every dtype");
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
        ltx2_dtype dt = want[i].dt;
        CHECK(ltx2_dtype_size(dt) == want[i].size, "%s size", want[i].name);
        CHECK(strcmp(ltx2_dtype_name(dt), want[i].name) == 0, "name %s", ltx2_dtype_name(dt));
        CHECK(strcmp(ltx2_dtype_st_name(dt), want[i].st) == 0, "st name %s", ltx2_dtype_st_name(dt));
        CHECK(ltx2_dtype_is_float(dt) == want[i].is_float, "%s is_float", want[i].name);
        /* from_st_name takes (ptr, len): embed the name in a longer buffer without a NUL */
        char buf[32];
        snprintf(buf, sizeof(buf), "%s\"xyz", want[i].st);
        ltx2_dtype got = LTX2_DTYPE_COUNT;
        CHECK(ltx2_dtype_from_st_name(buf, strlen(want[i].st), &got) && got == dt, "parse %s", want[i].st);
    }
    ltx2_dtype got;
    CHECK(!ltx2_dtype_from_st_name("F3", 2, &got), "prefix of F32 is not a dtype");
    CHECK(!ltx2_dtype_from_st_name("F32", 2, &got), "length counts: \"F3\"");
    CHECK(!ltx2_dtype_from_st_name("F32 ", 4, &got), "trailing space");
    CHECK(!ltx2_dtype_from_st_name("bf16", 4, &got), "names are case-sensitive");
    CHECK(!ltx2_dtype_from_st_name("U16", 3, &got) && !ltx2_dtype_from_st_name("F8_E8M0", 7, &got),
          "unsupported safetensors dtypes are unknown");
    CHECK(!ltx2_dtype_from_st_name("", 0, &got) && !ltx2_dtype_from_st_name(NULL, 3, &got), "empty / NULL");
    CHECK(ltx2_dtype_size((ltx2_dtype)99) == 0 && strcmp(ltx2_dtype_name((ltx2_dtype)99), "?") == 0,
          "bad dtype has size 0 and name ?");
    CHECK(!ltx2_dtype_is_float((ltx2_dtype)-1), "bad dtype is not float");
}

static void test_basics(void) {
    float data[24];
    int64_t shape[3] = {2, 3, 4};
    ltx2_tensor t = ltx2_tensor_make(data, LTX2_F32, 3, shape);
    CHECK(t.data == data && t.ndim == 3 && t.device == LTX2_DEVICE_CPU, "make");
    CHECK(t.strides[0] == 12 && t.strides[1] == 4 && t.strides[2] == 1, "row-major strides");
    CHECK(ltx2_tensor_numel(&t) == 24 && ltx2_tensor_nbytes(&t) == 96, "numel / nbytes");
    CHECK(ltx2_tensor_is_contiguous(&t), "contiguous");
    ltx2_tensor s = ltx2_tensor_make(NULL, LTX2_BF16, 0, NULL);
    CHECK(s.ndim == 0 && ltx2_tensor_numel(&s) == 1 && ltx2_tensor_nbytes(&s) == 2, "scalar");
    ltx2_tensor bad = ltx2_tensor_make(data, LTX2_F32, LTX2_MAX_DIMS + 1, shape);
    CHECK(bad.data == NULL && bad.ndim == 0, "out-of-range ndim gives an empty view");
    int64_t zshape[2] = {0, 5};
    ltx2_tensor z = ltx2_tensor_make(data, LTX2_F32, 2, zshape);
    CHECK(ltx2_tensor_numel(&z) == 0 && ltx2_tensor_nbytes(&z) == 0 && ltx2_tensor_is_contiguous(&z), "empty");

    ltx2_tensor u = t;
    u.strides[2] = 2;
    CHECK(!ltx2_tensor_is_contiguous(&u), "strided is not contiguous");
    int64_t one[3] = {2, 1, 4};
    ltx2_tensor o = ltx2_tensor_make(data, LTX2_F32, 3, one);
    o.strides[1] = 999; /* size-1 dims' strides do not matter */
    CHECK(ltx2_tensor_is_contiguous(&o), "size-1 dim stride ignored");

    CHECK(ltx2_tensor_same_shape(&t, &t) && !ltx2_tensor_same_shape(&t, &o) && !ltx2_tensor_same_shape(&t, &s),
          "same_shape");

    char buf[64];
    CHECK(strcmp(ltx2_shape_str(shape, 3, buf, sizeof(buf)), "[2, 3, 4]") == 0, "shape_str %s", buf);
    CHECK(strcmp(ltx2_shape_str(shape, 0, buf, sizeof(buf)), "[]") == 0, "shape_str scalar %s", buf);
    char tiny[5];
    ltx2_shape_str(shape, 3, tiny, sizeof(tiny));
    CHECK(strlen(tiny) == 4 && strncmp(tiny, "[2, ", 4) == 0, "shape_str truncates safely: %s", tiny);
    int64_t big[2] = {123456789012LL, -1};
    CHECK(strcmp(ltx2_shape_str(big, 2, buf, sizeof(buf)), "[123456789012, -1]") == 0, "%s", buf);
}

static void test_views(ltx2_context *ctx) {
    float data[24];
    for (int i = 0; i < 24; i++) data[i] = (float)i;
    int64_t shape[3] = {2, 3, 4};
    ltx2_tensor t = ltx2_tensor_make(data, LTX2_F32, 3, shape), r;

    /* reshape */
    int64_t s1[2] = {6, -1};
    CHECK(ltx2_tensor_reshape(ctx, &t, 2, s1, &r) == LTX2_OK && r.shape[0] == 6 && r.shape[1] == 4 &&
              r.strides[0] == 4 && r.data == data,
          "reshape with -1");
    int64_t s2[1] = {24};
    CHECK(ltx2_tensor_reshape(ctx, &t, 1, s2, &r) == LTX2_OK && r.ndim == 1, "flatten");
    int64_t s3[2] = {5, 5};
    CHECK(ltx2_tensor_reshape(ctx, &t, 2, s3, &r) == LTX2_ERR_SHAPE, "wrong numel");
    CHECK(strstr(ltx2_last_error(ctx), "[2, 3, 4]") && strstr(ltx2_last_error(ctx), "[5, 5]"),
          "message names both shapes: %s", ltx2_last_error(ctx));
    int64_t s4[2] = {-1, -1};
    CHECK(ltx2_tensor_reshape(ctx, &t, 2, s4, &r) == LTX2_ERR_SHAPE, "two -1");
    int64_t s5[2] = {5, -1};
    CHECK(ltx2_tensor_reshape(ctx, &t, 2, s5, &r) == LTX2_ERR_SHAPE, "-1 not divisible");
    int64_t s6[2] = {-2, -12};
    CHECK(ltx2_tensor_reshape(ctx, &t, 2, s6, &r) == LTX2_ERR_SHAPE, "negative size");
    CHECK(ltx2_tensor_reshape(ctx, &t, LTX2_MAX_DIMS + 1, s1, &r) == LTX2_ERR_SHAPE, "too many dims");

    /* slice: t[:, 1:3, :] */
    ltx2_tensor sl;
    CHECK(ltx2_tensor_slice(ctx, &t, 1, 1, 3, &sl) == LTX2_OK, "slice");
    CHECK(sl.shape[1] == 2 && sl.data == data + 4 && !ltx2_tensor_is_contiguous(&sl), "slice view");
    /* element [1, 1, 2] of the slice is data[1*12 + (1+1)*4 + 2] */
    const float *base = sl.data;
    CHECK(base[1 * sl.strides[0] + 1 * sl.strides[1] + 2 * sl.strides[2]] == 22.0f, "slice indexing");
    CHECK(ltx2_tensor_reshape(ctx, &sl, 1, s2, &r) == LTX2_ERR_SHAPE, "reshape of non-contiguous refused");
    CHECK(strstr(ltx2_last_error(ctx), "contiguous") != NULL, "message: %s", ltx2_last_error(ctx));
    CHECK(ltx2_tensor_slice(ctx, &t, -1, 3, 4, &sl) == LTX2_OK && sl.shape[2] == 1 && sl.data == data + 3,
          "negative dim");
    CHECK(ltx2_tensor_slice(ctx, &t, 0, 1, 1, &sl) == LTX2_OK && ltx2_tensor_numel(&sl) == 0, "empty slice");
    CHECK(ltx2_tensor_slice(ctx, &t, 0, 0, 2, &sl) == LTX2_OK && ltx2_tensor_is_contiguous(&sl), "full slice");
    CHECK(ltx2_tensor_slice(ctx, &t, 3, 0, 1, &sl) == LTX2_ERR_SHAPE, "dim out of range");
    CHECK(ltx2_tensor_slice(ctx, &t, -4, 0, 1, &sl) == LTX2_ERR_SHAPE, "negative dim out of range");
    CHECK(ltx2_tensor_slice(ctx, &t, 1, 2, 1, &sl) == LTX2_ERR_SHAPE, "end < start");
    CHECK(ltx2_tensor_slice(ctx, &t, 1, 0, 4, &sl) == LTX2_ERR_SHAPE, "end past size");
    CHECK(ltx2_tensor_slice(ctx, &t, 1, -1, 2, &sl) == LTX2_ERR_SHAPE, "negative start");
    CHECK(strstr(ltx2_last_error(ctx), "size 3") != NULL, "message names the size: %s", ltx2_last_error(ctx));

    /* permute: [2,3,4] -> [4,2,3] */
    const int perm[3] = {2, 0, 1};
    ltx2_tensor p;
    CHECK(ltx2_tensor_permute(ctx, &t, perm, &p) == LTX2_OK, "permute");
    CHECK(p.shape[0] == 4 && p.shape[1] == 2 && p.shape[2] == 3 && p.strides[0] == 1 && p.strides[1] == 12 &&
              p.strides[2] == 4,
          "permuted shape/strides");
    const float *pb = p.data;
    CHECK(pb[3 * p.strides[0] + 1 * p.strides[1] + 2 * p.strides[2]] == 23.0f, "p[3,1,2] == t[1,2,3]");
    const int inv[3] = {1, 2, 0};
    ltx2_tensor q;
    CHECK(ltx2_tensor_permute(ctx, &p, inv, &q) == LTX2_OK && ltx2_tensor_is_contiguous(&q) &&
              ltx2_tensor_same_shape(&q, &t),
          "inverse permutation restores");
    const int dup[3] = {0, 0, 1};
    CHECK(ltx2_tensor_permute(ctx, &t, dup, &q) == LTX2_ERR_SHAPE, "repeated dim");
    const int oob[3] = {0, 1, 3};
    CHECK(ltx2_tensor_permute(ctx, &t, oob, &q) == LTX2_ERR_SHAPE, "dim out of range");
    const int neg[3] = {-1, 0, 1};
    CHECK(ltx2_tensor_permute(ctx, &t, neg, &q) == LTX2_OK && q.shape[0] == 4, "negative dims allowed");
    CHECK(ltx2_tensor_permute(ctx, &t, NULL, &q) == LTX2_ERR_INVALID_ARG, "NULL perm");

    /* malformed views are rejected, not read past */
    ltx2_tensor m = t;
    m.ndim = 9;
    CHECK(ltx2_tensor_slice(ctx, &m, 0, 0, 1, &sl) == LTX2_ERR_SHAPE, "ndim 9 rejected");
    m = t;
    m.dtype = (ltx2_dtype)42;
    CHECK(ltx2_tensor_permute(ctx, &m, perm, &q) == LTX2_ERR_DTYPE, "bad dtype rejected");
    m = t;
    m.shape[1] = -3;
    CHECK(ltx2_tensor_reshape(ctx, &m, 1, s2, &r) == LTX2_ERR_SHAPE, "negative shape rejected");
    CHECK(ltx2_tensor_slice(ctx, NULL, 0, 0, 1, &sl) == LTX2_ERR_INVALID_ARG, "NULL tensor");
}

int main(void) {
    ltx2_context *ctx = ltx2_context_create(NULL);
    test_dtypes();
    test_basics();
    test_views(ctx);
    ltx2_context_free(ctx);
    return test_finish();
}
