/* NumPy .npy reader and writer. A file is: "\x93NUMPY", major, minor, a little-endian header
 * length (u16 for version 1.0, u32 for 2.0 and 3.0), then a Python dict literal
 * {'descr': ..., 'fortran_order': ..., 'shape': (...), } padded with spaces and a newline, then
 * the raw C-order data. The dict is parsed here by a tiny literal parser (it is not JSON: single
 * quotes, True/False, tuples). bf16 has no numpy dtype; ml_dtypes' bfloat16 arrays are saved as
 * void '<V2' (that is what `arr.dtype.str` says), so we write '<V2' and read '<V2', '|V2' and
 * 'bfloat16' as bf16. Load such files in Python with `np.load(p).view(ml_dtypes.bfloat16)`. */
#include "io/npy.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/context.h"
#include "io/file.h"

#define NPY_MAGIC "\x93NUMPY"
#define NPY_MAGIC_LEN 6
/* numpy pads the preamble so the data starts at a multiple of this (format.ARRAY_ALIGN). */
#define NPY_ARRAY_ALIGN 64
/* Arrays we hand out are aligned to this, for SIMD loads. */
#define NPY_DATA_ALIGN 64

typedef struct descr_entry {
    const char *descr;
    ltx2_dtype dtype;
} descr_entry;

/* Every descr we read. '=' (native) is treated as '<' before lookup (this code runs on
 * little-endian hosts); for 1-byte types any byte-order character means the same thing. */
static const descr_entry descr_table[] = {
    {"<f4", LTX2_F32},  {"<f2", LTX2_F16},  {"<f8", LTX2_F64},  {"<i4", LTX2_I32},
    {"<i8", LTX2_I64},  {"<i2", LTX2_I16},  {"|i1", LTX2_I8},   {"<i1", LTX2_I8},
    {">i1", LTX2_I8},   {"|u1", LTX2_U8},   {"<u1", LTX2_U8},   {">u1", LTX2_U8},
    {"|b1", LTX2_BOOL}, {"<b1", LTX2_BOOL}, {">b1", LTX2_BOOL}, {"<V2", LTX2_BF16},
    {"|V2", LTX2_BF16}, {"bfloat16", LTX2_BF16},
};

static const char *descr_for(ltx2_dtype dt) {
    switch (dt) {
    case LTX2_F32: return "<f4";
    case LTX2_F16: return "<f2";
    case LTX2_F64: return "<f8";
    case LTX2_I32: return "<i4";
    case LTX2_I64: return "<i8";
    case LTX2_I16: return "<i2";
    case LTX2_I8: return "|i1";
    case LTX2_U8: return "|u1";
    case LTX2_BOOL: return "|b1";
    case LTX2_BF16: return "<V2";
    default: return NULL;
    }
}

typedef struct hparser {
    ltx2_context *ctx;
    const char *label;
    const char *s;
    size_t len, pos;
} hparser;

static void h_ws(hparser *p) {
    while (p->pos < p->len && (p->s[p->pos] == ' ' || p->s[p->pos] == '\t' ||
                               p->s[p->pos] == '\n' || p->s[p->pos] == '\r'))
        p->pos++;
}

static ltx2_status h_err(hparser *p, const char *what) {
    char got[24];
    if (p->pos >= p->len) snprintf(got, sizeof(got), "end of header");
    else if (p->s[p->pos] > 0x20 && p->s[p->pos] < 0x7f) snprintf(got, sizeof(got), "'%c'", p->s[p->pos]);
    else snprintf(got, sizeof(got), "byte 0x%02x", (unsigned char)p->s[p->pos]);
    return LTX2_ERROR(p->ctx, LTX2_ERR_FORMAT, "%s: bad .npy header at offset %zu: expected %s, got %s",
                      p->label, p->pos, what, got);
}

/* A quoted Python string without escapes (numpy never writes any). */
static ltx2_status h_str(hparser *p, const char **s, size_t *n) {
    if (p->pos >= p->len || (p->s[p->pos] != '\'' && p->s[p->pos] != '"'))
        return h_err(p, "a quoted string");
    char q = p->s[p->pos++];
    size_t start = p->pos;
    while (p->pos < p->len && p->s[p->pos] != q) {
        if (p->s[p->pos] == '\\') return h_err(p, "a string without backslash escapes");
        p->pos++;
    }
    if (p->pos >= p->len) return h_err(p, "a closing quote");
    *s = p->s + start;
    *n = p->pos - start;
    p->pos++;
    return LTX2_OK;
}

static bool h_word(hparser *p, const char *w) {
    size_t n = strlen(w);
    if (p->len - p->pos < n || memcmp(p->s + p->pos, w, n) != 0) return false;
    p->pos += n;
    return true;
}

static ltx2_status h_shape(hparser *p, int *ndim, int64_t *shape) {
    if (p->pos >= p->len || p->s[p->pos] != '(') return h_err(p, "a shape tuple '('");
    p->pos++;
    int n = 0;
    for (;;) {
        h_ws(p);
        if (p->pos < p->len && p->s[p->pos] == ')') {
            p->pos++;
            break;
        }
        if (p->pos >= p->len || p->s[p->pos] < '0' || p->s[p->pos] > '9') {
            if (p->pos < p->len && p->s[p->pos] == '-')
                return LTX2_ERROR(p->ctx, LTX2_ERR_SHAPE, "%s: .npy shape has a negative dimension",
                                  p->label);
            return h_err(p, "a non-negative integer or ')' in the shape tuple");
        }
        int64_t v = 0;
        while (p->pos < p->len && p->s[p->pos] >= '0' && p->s[p->pos] <= '9') {
            int d = p->s[p->pos] - '0';
            if (v > (INT64_MAX - d) / 10)
                return LTX2_ERROR(p->ctx, LTX2_ERR_SHAPE, "%s: .npy shape dimension overflows int64",
                                  p->label);
            v = v * 10 + d;
            p->pos++;
        }
        if (p->pos < p->len && p->s[p->pos] == 'L') p->pos++; /* Python 2 longs */
        if (n == LTX2_MAX_DIMS)
            return LTX2_ERROR(p->ctx, LTX2_ERR_SHAPE,
                              "%s: .npy array has more than %d dimensions", p->label, LTX2_MAX_DIMS);
        shape[n++] = v;
        h_ws(p);
        if (p->pos < p->len && p->s[p->pos] == ',') {
            p->pos++;
            continue;
        }
        if (p->pos < p->len && p->s[p->pos] == ')') {
            p->pos++;
            break;
        }
        return h_err(p, "',' or ')' in the shape tuple");
    }
    *ndim = n;
    return LTX2_OK;
}

static ltx2_status map_descr(hparser *p, const char *d, size_t n, ltx2_dtype *out) {
    char buf[16];
    if (n == 0 || n >= sizeof(buf))
        return LTX2_ERROR(p->ctx, LTX2_ERR_DTYPE, "%s: unsupported .npy descr '%.*s'", p->label,
                          (int)(n < 40 ? n : 40), d);
    memcpy(buf, d, n);
    buf[n] = '\0';
    if (buf[0] == '=') buf[0] = '<';
    for (size_t i = 0; i < sizeof(descr_table) / sizeof(descr_table[0]); i++)
        if (strcmp(buf, descr_table[i].descr) == 0) {
            *out = descr_table[i].dtype;
            return LTX2_OK;
        }
    if (buf[0] == '>') {
        buf[0] = '<';
        for (size_t i = 0; i < sizeof(descr_table) / sizeof(descr_table[0]); i++)
            if (strcmp(buf, descr_table[i].descr) == 0)
                return LTX2_ERROR(p->ctx, LTX2_ERR_UNSUPPORTED,
                                  "%s: big-endian .npy data ('>%s') is not supported; save it with "
                                  "arr.astype('%s')", p->label, buf + 1, buf);
        buf[0] = '>';
    }
    return LTX2_ERROR(p->ctx, LTX2_ERR_DTYPE,
                      "%s: unsupported .npy descr '%s' (supported: <f4 <f2 <f8 <i8 <i4 <i2 |i1 |u1 "
                      "|b1, and <V2/bfloat16 read as bf16)", p->label, buf);
}

typedef struct npy_info {
    ltx2_dtype dtype;
    int ndim;
    int64_t shape[LTX2_MAX_DIMS];
    size_t data_off;
    uint64_t nbytes;
} npy_info;

static ltx2_status parse_dict(hparser *p, npy_info *info) {
    bool have_descr = false, have_fortran = false, have_shape = false, fortran = false;
    h_ws(p);
    if (p->pos >= p->len || p->s[p->pos] != '{') return h_err(p, "'{' starting the header dict");
    p->pos++;
    for (;;) {
        h_ws(p);
        if (p->pos < p->len && p->s[p->pos] == '}') {
            p->pos++;
            break;
        }
        const char *k;
        size_t kn;
        LTX2_TRY(h_str(p, &k, &kn));
        h_ws(p);
        if (p->pos >= p->len || p->s[p->pos] != ':') return h_err(p, "':' after a dict key");
        p->pos++;
        h_ws(p);
        bool *seen = NULL;
        if (kn == 5 && memcmp(k, "descr", 5) == 0) seen = &have_descr;
        else if (kn == 13 && memcmp(k, "fortran_order", 13) == 0) seen = &have_fortran;
        else if (kn == 5 && memcmp(k, "shape", 5) == 0) seen = &have_shape;
        if (!seen)
            return LTX2_ERROR(p->ctx, LTX2_ERR_FORMAT,
                              "%s: unexpected .npy header key '%.*s' (expected exactly descr, "
                              "fortran_order, shape)", p->label, (int)(kn < 40 ? kn : 40), k);
        if (*seen)
            return LTX2_ERROR(p->ctx, LTX2_ERR_FORMAT, "%s: .npy header has key '%.*s' twice",
                              p->label, (int)kn, k);
        if (seen == &have_descr) {
            if (p->pos < p->len && p->s[p->pos] == '[')
                return LTX2_ERROR(p->ctx, LTX2_ERR_DTYPE,
                                  "%s: structured .npy dtypes (descr lists) are not supported; "
                                  "save plain numeric arrays", p->label);
            const char *d;
            size_t dn;
            LTX2_TRY(h_str(p, &d, &dn));
            LTX2_TRY(map_descr(p, d, dn, &info->dtype));
        } else if (seen == &have_fortran) {
            if (h_word(p, "True")) fortran = true;
            else if (h_word(p, "False")) fortran = false;
            else return h_err(p, "True or False for fortran_order");
        } else {
            LTX2_TRY(h_shape(p, &info->ndim, info->shape));
        }
        *seen = true;
        h_ws(p);
        if (p->pos < p->len && p->s[p->pos] == ',') {
            p->pos++;
            continue;
        }
        if (p->pos < p->len && p->s[p->pos] == '}') {
            p->pos++;
            break;
        }
        return h_err(p, "',' or '}' in the header dict");
    }
    if (!have_descr || !have_fortran || !have_shape)
        return LTX2_ERROR(p->ctx, LTX2_ERR_FORMAT, "%s: .npy header lacks '%s'", p->label,
                          !have_descr ? "descr" : !have_fortran ? "fortran_order" : "shape");
    h_ws(p);
    if (p->pos != p->len) return h_err(p, "only padding after the header dict");
    int big_dims = 0;
    for (int i = 0; i < info->ndim; i++) big_dims += info->shape[i] > 1;
    /* With at most one dimension above 1, Fortran and C order are the same bytes. */
    if (fortran && big_dims > 1)
        return LTX2_ERROR(p->ctx, LTX2_ERR_UNSUPPORTED,
                          "%s: Fortran-order .npy arrays are not supported; save "
                          "np.ascontiguousarray(a) instead", p->label);
    return LTX2_OK;
}

static ltx2_status parse_info(ltx2_context *ctx, const unsigned char *b, size_t size,
                              const char *label, npy_info *info) {
    memset(info, 0, sizeof(*info));
    if (size < NPY_MAGIC_LEN + 4 || memcmp(b, NPY_MAGIC, NPY_MAGIC_LEN) != 0)
        return LTX2_ERROR(ctx, LTX2_ERR_FORMAT, "%s: not a .npy file (%s)", label,
                          size < NPY_MAGIC_LEN + 4 ? "shorter than the 10-byte preamble"
                                                   : "magic \\x93NUMPY missing");
    unsigned major = b[6], minor = b[7];
    if ((major != 1 && major != 2 && major != 3) || minor != 0)
        return LTX2_ERROR(ctx, LTX2_ERR_FORMAT,
                          "%s: unsupported .npy format version %u.%u (known: 1.0, 2.0, 3.0)", label,
                          major, minor);
    size_t pre = major == 1 ? 10 : 12;
    if (size < pre)
        return LTX2_ERROR(ctx, LTX2_ERR_FORMAT, "%s: truncated .npy preamble", label);
    uint64_t hlen = major == 1 ? (uint64_t)b[8] | (uint64_t)b[9] << 8
                               : (uint64_t)b[8] | (uint64_t)b[9] << 8 | (uint64_t)b[10] << 16 |
                                     (uint64_t)b[11] << 24;
    if (hlen > size - pre)
        return LTX2_ERROR(ctx, LTX2_ERR_FORMAT,
                          "%s: .npy header length %llu but only %zu bytes follow (truncated?)",
                          label, (unsigned long long)hlen, size - pre);
    /* v1/v2 headers are latin-1, v3 UTF-8; the keys and values we accept are ASCII either way. */
    hparser p = {.ctx = ctx, .label = label, .s = (const char *)b + pre, .len = (size_t)hlen};
    LTX2_TRY(parse_dict(&p, info));
    info->data_off = pre + (size_t)hlen;
    uint64_t prod = 1;
    bool zero = false;
    for (int i = 0; i < info->ndim; i++) {
        uint64_t d = (uint64_t)info->shape[i];
        if (d == 0) {
            zero = true;
            continue;
        }
        if (prod > (uint64_t)INT64_MAX / d)
            return LTX2_ERROR(ctx, LTX2_ERR_SHAPE, "%s: .npy element count overflows int64", label);
        prod *= d;
    }
    uint64_t numel = zero ? 0 : prod, item = ltx2_dtype_size(info->dtype);
    uint64_t avail = size - info->data_off;
    if (numel > UINT64_MAX / item || numel * item != avail) {
        char sh[256];
        ltx2_shape_str(info->shape, info->ndim, sh, sizeof(sh));
        if (numel > UINT64_MAX / item || numel * item > avail)
            return LTX2_ERROR(ctx, LTX2_ERR_FORMAT,
                              "%s: .npy shape %s of %s needs %llu x %llu bytes but only %llu bytes "
                              "of data follow the header (truncated?)", label, sh,
                              ltx2_dtype_name(info->dtype), (unsigned long long)numel,
                              (unsigned long long)item, (unsigned long long)avail);
        return LTX2_ERROR(ctx, LTX2_ERR_FORMAT,
                          "%s: .npy shape %s of %s needs %llu bytes but %llu bytes of data follow "
                          "the header", label, sh, ltx2_dtype_name(info->dtype),
                          (unsigned long long)(numel * item), (unsigned long long)avail);
    }
    info->nbytes = numel * item;
    return LTX2_OK;
}

ltx2_status ltx2_npy_parse(ltx2_context *ctx, const void *buf, size_t size, const char *label,
                           ltx2_array *out) {
    memset(out, 0, sizeof(*out));
    if (!label) label = "<memory>";
    if (!buf && size) return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "%s: NULL buffer", label);
    npy_info info;
    LTX2_TRY(parse_info(ctx, buf, size, label, &info));
    size_t alloc = ((size_t)info.nbytes + NPY_DATA_ALIGN - 1) / NPY_DATA_ALIGN * NPY_DATA_ALIGN;
    if (alloc == 0) alloc = NPY_DATA_ALIGN;
    void *data = aligned_alloc(NPY_DATA_ALIGN, alloc);
    if (!data)
        return LTX2_ERROR(ctx, LTX2_ERR_OOM, "%s: cannot allocate %llu bytes for the array", label,
                          (unsigned long long)info.nbytes);
    if (info.nbytes) memcpy(data, (const unsigned char *)buf + info.data_off, (size_t)info.nbytes);
    out->t = ltx2_tensor_make(data, info.dtype, info.ndim, info.shape);
    return LTX2_OK;
}

ltx2_status ltx2_npy_read(ltx2_context *ctx, const char *path, ltx2_array *out) {
    memset(out, 0, sizeof(*out));
    ltx2_file_map m;
    LTX2_TRY(ltx2_file_map_open(ctx, path, &m));
    ltx2_status st = ltx2_npy_parse(ctx, m.data, m.size, path, out);
    ltx2_file_map_close(&m);
    return st;
}

void ltx2_array_free(ltx2_array *a) {
    if (!a) return;
    free(a->t.data);
    memset(a, 0, sizeof(*a));
}

ltx2_status ltx2_npy_header(ltx2_context *ctx, const ltx2_tensor *t, char *buf, size_t cap,
                            size_t *len) {
    *len = 0;
    const char *descr = descr_for(t->dtype);
    if (!descr)
        return LTX2_ERROR(ctx, LTX2_ERR_DTYPE,
                          ".npy cannot hold dtype %s (no numpy equivalent); convert to f32 or use "
                          "safetensors", ltx2_dtype_name(t->dtype));
    if (t->ndim < 0 || t->ndim > LTX2_MAX_DIMS)
        return LTX2_ERROR(ctx, LTX2_ERR_SHAPE, ".npy writer: ndim %d out of range", t->ndim);
    char dict[LTX2_NPY_HEADER_MAX];
    int n = snprintf(dict, sizeof(dict), "{'descr': '%s', 'fortran_order': False, 'shape': (", descr);
    for (int i = 0; i < t->ndim; i++) {
        if (t->shape[i] < 0)
            return LTX2_ERROR(ctx, LTX2_ERR_SHAPE, ".npy writer: negative shape[%d] = %lld", i,
                              (long long)t->shape[i]);
        n += snprintf(dict + n, sizeof(dict) - (size_t)n, "%s%lld", i ? ", " : "",
                      (long long)t->shape[i]);
    }
    n += snprintf(dict + n, sizeof(dict) - (size_t)n, "%s), }", t->ndim == 1 ? "," : "");
    /* Version 1.0 (u16 length) always suffices for our short dicts: 10 + pad + '\n' < 64 KiB. */
    size_t total = NPY_MAGIC_LEN + 4 + (size_t)n + 1;
    total = (total + NPY_ARRAY_ALIGN - 1) / NPY_ARRAY_ALIGN * NPY_ARRAY_ALIGN;
    if (total > cap)
        return LTX2_ERROR(ctx, LTX2_ERR_INTERNAL, ".npy header needs %zu bytes, buffer has %zu",
                          total, cap);
    size_t hlen = total - NPY_MAGIC_LEN - 4;
    memcpy(buf, NPY_MAGIC, NPY_MAGIC_LEN);
    buf[6] = 1;
    buf[7] = 0;
    buf[8] = (char)(hlen & 0xff);
    buf[9] = (char)(hlen >> 8);
    memcpy(buf + 10, dict, (size_t)n);
    memset(buf + 10 + n, ' ', total - 10 - (size_t)n - 1);
    buf[total - 1] = '\n';
    *len = total;
    return LTX2_OK;
}

ltx2_status ltx2_npy_write(ltx2_context *ctx, const char *path, const ltx2_tensor *t) {
    if (!path || !t) return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, ".npy writer: NULL argument");
    if (t->device != LTX2_DEVICE_CPU || !ltx2_tensor_is_contiguous(t))
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG,
                          "%s: .npy writer needs a contiguous CPU tensor", path);
    char head[LTX2_NPY_HEADER_MAX];
    size_t hn;
    ltx2_status st = ltx2_npy_header(ctx, t, head, sizeof(head), &hn);
    if (st != LTX2_OK) return ltx2_error_prefix(ctx, "%s", path);
    size_t nb = ltx2_tensor_nbytes(t);
    if (nb && !t->data) return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "%s: tensor has no data", path);
    ltx2_file_writer w;
    st = ltx2_file_writer_open(ctx, path, &w);
    if (st == LTX2_OK) st = ltx2_file_writer_write(ctx, &w, head, hn);
    if (st == LTX2_OK && nb) st = ltx2_file_writer_write(ctx, &w, t->data, nb);
    if (st == LTX2_OK) st = ltx2_file_writer_commit(ctx, &w);
    return st;
}
