/* Safetensors tests: writer -> reader round trip for every dtype (data, shapes, metadata,
 * alignment, no temp files left), every header validation with its message, truncation at every
 * cut point, and tensor sets (sharded index, directory, duplicates, missing names). */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/context.h"
#include "io/file.h"
#include "io/safetensors.h"
#include "test_util.h"

static ltx2_context *g_ctx;
static char g_dir[256];

static char *tmp_path(const char *name) { return ltx2_path_join(g_dir, name); }

/* An exact-size heap buffer: u64 header length, header, data (ASan sees any overread). */
static unsigned char *make_st(const char *header, const void *data, size_t dlen, size_t *size) {
    size_t h = strlen(header);
    *size = 8 + h + dlen;
    unsigned char *b = malloc(*size);
    for (int i = 0; i < 8; i++) b[i] = (unsigned char)((uint64_t)h >> (8 * i));
    memcpy(b + 8, header, h);
    if (dlen) memcpy(b + 8 + h, data, dlen);
    return b;
}

static void expect_bad(const char *header, size_t dlen, ltx2_status want, const char *needle) {
    unsigned char data[256] = {0};
    size_t size;
    unsigned char *b = make_st(header, data, dlen, &size);
    ltx2_st_file *f = NULL;
    ltx2_clear_error(g_ctx);
    ltx2_status st = ltx2_st_open_memory(g_ctx, b, size, "model.safetensors", &f);
    const char *msg = ltx2_last_error(g_ctx);
    CHECK(st == want, "header %s: status %s, want %s (%s)", header, ltx2_status_name(st),
          ltx2_status_name(want), msg);
    CHECK(f == NULL, "no file on error");
    CHECK(msg[0] && strstr(msg, "model.safetensors"), "message names the file: %s", msg);
    CHECK(!needle || strstr(msg, needle), "message for %s mentions '%s': %s", header, needle, msg);
    ltx2_st_close(f);
    free(b);
}

static void test_validation(void) {
    /* A valid baseline, with trailing-space padding (the format allows it). */
    unsigned char data[64];
    for (int i = 0; i < 64; i++) data[i] = (unsigned char)i;
    size_t size;
    unsigned char *b = make_st("{\"__metadata__\":{\"format\":\"pt\",\"config\":\"{\\\"a\\\":1}\"},"
                               "\"w\":{\"dtype\":\"F32\",\"shape\":[2,3],\"data_offsets\":[8,32]},"
                               "\"s\":{\"dtype\":\"I64\",\"shape\":[],\"data_offsets\":[0,8]},"
                               "\"e\":{\"dtype\":\"BF16\",\"shape\":[0,4],\"data_offsets\":[8,8]}}   ",
                               data, 32, &size);
    ltx2_st_file *f = NULL;
    ltx2_status st = ltx2_st_open_memory(g_ctx, b, size, "ok.safetensors", &f);
    CHECK(st == LTX2_OK, "valid file opens: %s", ltx2_last_error(g_ctx));
    if (f) {
        CHECK(f->n_tensors == 3 && f->n_meta == 2, "3 tensors, 2 meta");
        CHECK(strcmp(f->tensors[0].name, "e") == 0 && strcmp(f->tensors[2].name, "w") == 0,
              "sorted by name");
        const ltx2_st_tensor *w = ltx2_st_find(f, "w");
        CHECK(w && w->dtype == LTX2_F32 && w->ndim == 2 && w->shape[1] == 3, "w header");
        CHECK(w && (const unsigned char *)w->data == b + 8 + f->header_len + 8, "w data pointer");
        const ltx2_st_tensor *s = ltx2_st_find(f, "s");
        CHECK(s && s->ndim == 0 && s->end - s->begin == 8, "scalar");
        CHECK(ltx2_st_find(f, "nope") == NULL, "find missing");
        CHECK(strcmp(ltx2_st_meta_get(f, "config"), "{\"a\":1}") == 0, "meta value unescaped");
        CHECK(strcmp(f->meta[0].key, "format") == 0, "meta in file order");
        CHECK(ltx2_st_meta_get(f, "x") == NULL, "missing meta");
        ltx2_tensor v = ltx2_st_view(w);
        CHECK(v.ndim == 2 && v.strides[0] == 3 && v.data == w->data, "view");
    }
    ltx2_st_close(f);

    /* Truncation at every cut point must fail cleanly. */
    int cut_fail = 0;
    for (size_t cut = 0; cut < size; cut++) {
        unsigned char *t = malloc(cut ? cut : 1);
        memcpy(t, b, cut);
        f = NULL;
        ltx2_clear_error(g_ctx);
        if (ltx2_st_open_memory(g_ctx, t, cut, "cut.safetensors", &f) != LTX2_OK &&
            ltx2_last_error(g_ctx)[0])
            cut_fail++;
        ltx2_st_close(f);
        free(t);
    }
    CHECK(cut_fail == (int)size, "every truncation fails with a message (%d of %zu)", cut_fail, size);
    free(b);

    /* Header length problems. */
    unsigned char huge[16] = {0, 0, 0, 0, 0, 1, 0, 0, '{', '}'};
    ltx2_clear_error(g_ctx);
    st = ltx2_st_open_memory(g_ctx, huge, 10, "huge.safetensors", &f);
    CHECK(st == LTX2_ERR_FORMAT && strstr(ltx2_last_error(g_ctx), "1099511627776") &&
          strstr(ltx2_last_error(g_ctx), "104857600"), "huge header length names both numbers: %s",
          ltx2_last_error(g_ctx));
    unsigned char longer[12] = {100, 0, 0, 0, 0, 0, 0, 0, '{', '}', ' ', ' '};
    st = ltx2_st_open_memory(g_ctx, longer, 12, "short.safetensors", &f);
    CHECK(st == LTX2_ERR_FORMAT && strstr(ltx2_last_error(g_ctx), "100") &&
          strstr(ltx2_last_error(g_ctx), "only 4 bytes"), "header past end: %s",
          ltx2_last_error(g_ctx));
    st = ltx2_st_open_memory(g_ctx, longer, 7, "tiny.safetensors", &f);
    CHECK(st == LTX2_ERR_FORMAT, "7-byte file");
    st = ltx2_st_open_memory(g_ctx, NULL, 0, "empty.safetensors", &f);
    CHECK(st == LTX2_ERR_FORMAT, "empty buffer");

    expect_bad("{\"a\":", 0, LTX2_ERR_FORMAT, "invalid JSON");
    expect_bad("[]", 0, LTX2_ERR_FORMAT, "JSON object");
    expect_bad("{} x", 0, LTX2_ERR_FORMAT, "end of input");
    expect_bad("", 0, LTX2_ERR_FORMAT, NULL);
    expect_bad("{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,16]}}", 8,
               LTX2_ERR_FORMAT, "data section of 8 bytes");
    expect_bad("{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[8,0]}}", 8,
               LTX2_ERR_FORMAT, "begin > end");
    expect_bad("{\"blocks.0.w\":{\"dtype\":\"F32\",\"shape\":[3,4],\"data_offsets\":[0,40]}}", 48,
               LTX2_ERR_SHAPE, "tensor 'blocks.0.w' has shape [3, 4] (12 x 4 bytes = 48) but "
               "data_offsets span 40 bytes");
    expect_bad("{\"a\":{\"dtype\":\"U16\",\"shape\":[2],\"data_offsets\":[0,4]}}", 4, LTX2_ERR_DTYPE,
               "'U16'");
    expect_bad("{\"a\":{\"dtype\":\"f32\",\"shape\":[2],\"data_offsets\":[0,8]}}", 8, LTX2_ERR_DTYPE,
               "'f32'");
    expect_bad("{\"a\":{\"dtype\":7,\"shape\":[2],\"data_offsets\":[0,8]}}", 8, LTX2_ERR_FORMAT,
               "dtype must be a string");
    expect_bad("{\"a\":{\"dtype\":\"F32\",\"shape\":[-2],\"data_offsets\":[0,8]}}", 8, LTX2_ERR_SHAPE,
               "non-negative");
    expect_bad("{\"a\":{\"dtype\":\"F32\",\"shape\":[2.0],\"data_offsets\":[0,8]}}", 8,
               LTX2_ERR_SHAPE, "shape[0]");
    expect_bad("{\"a\":{\"dtype\":\"F32\",\"shape\":2,\"data_offsets\":[0,8]}}", 8, LTX2_ERR_FORMAT,
               "shape must be an array");
    expect_bad("{\"a\":{\"dtype\":\"U8\",\"shape\":[1,1,1,1,1,1,1,1,1],\"data_offsets\":[0,1]}}", 1,
               LTX2_ERR_SHAPE, "9 dimensions");
    expect_bad("{\"a\":{\"dtype\":\"F32\",\"shape\":[4294967296,4294967296],\"data_offsets\":[0,8]}}",
               8, LTX2_ERR_SHAPE, "overflow");
    expect_bad("{\"a\":{\"dtype\":\"F32\",\"shape\":[0,4294967296,4294967296],"
               "\"data_offsets\":[0,0]}}", 0, LTX2_ERR_SHAPE, "overflow");
    expect_bad("{\"a\":{\"dtype\":\"F64\",\"shape\":[2305843009213693952],\"data_offsets\":[0,8]}}",
               8, LTX2_ERR_SHAPE, NULL);
    expect_bad("{\"a\":{\"dtype\":\"U8\",\"shape\":[4],\"data_offsets\":[0,4]},"
               "\"b\":{\"dtype\":\"U8\",\"shape\":[4],\"data_offsets\":[2,6]}}", 6, LTX2_ERR_FORMAT,
               "overlap");
    expect_bad("{\"a\":{\"dtype\":\"U8\",\"shape\":[4],\"data_offsets\":[0,4]},"
               "\"a\":{\"dtype\":\"U8\",\"shape\":[4],\"data_offsets\":[4,8]}}", 8, LTX2_ERR_FORMAT,
               "more than once");
    expect_bad("{\"__metadata__\":[\"x\"]}", 0, LTX2_ERR_FORMAT, "__metadata__ must be an object");
    expect_bad("{\"__metadata__\":{\"k\":1}}", 0, LTX2_ERR_FORMAT, "must be a string");
    expect_bad("{\"__metadata__\":{\"k\":\"a\",\"k\":\"b\"}}", 0, LTX2_ERR_FORMAT, "more than once");
    expect_bad("{\"__metadata__\":{},\"__metadata__\":{}}", 0, LTX2_ERR_FORMAT, "more than once");
    expect_bad("{\"a\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1],\"extra\":1}}", 1,
               LTX2_ERR_FORMAT, "unknown key 'extra'");
    expect_bad("{\"a\":{\"dtype\":\"U8\",\"shape\":[1]}}", 1, LTX2_ERR_FORMAT, "data_offsets");
    expect_bad("{\"a\":{\"dtype\":\"U8\",\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1]}}", 1,
               LTX2_ERR_FORMAT, "twice");
    expect_bad("{\"a\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1,2]}}", 1,
               LTX2_ERR_FORMAT, "[begin, end]");
    expect_bad("{\"a\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[-1,0]}}", 1,
               LTX2_ERR_FORMAT, "non-negative");
    expect_bad("{\"a\":[1]}", 0, LTX2_ERR_FORMAT, "must be an object");
    expect_bad("{\"a\\u0000b\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1]}}", 1,
               LTX2_ERR_FORMAT, "NUL");
}

static bool file_exists(const char *p) { return access(p, F_OK) == 0; }

static void test_roundtrip(void) {
    /* One tensor per dtype, odd sizes so the layout's alignment rule matters. */
    enum { N = LTX2_DTYPE_COUNT };
    unsigned char bufs[N][96];
    ltx2_tensor ts[N];
    char names[N][32];
    ltx2_st_writer *w = NULL;
    CHECK(ltx2_st_writer_create(g_ctx, &w) == LTX2_OK, "writer");
    if (!w) return;
    for (int d = 0; d < N; d++) {
        for (int i = 0; i < 96; i++) bufs[d][i] = (unsigned char)(d * 31 + i * 7);
        int64_t shape[3] = {1, 3, d % 2 ? 3 : 1};
        ts[d] = ltx2_tensor_make(bufs[d], (ltx2_dtype)d, 3, shape);
        snprintf(names[d], sizeof(names[d]), "t%02d.%s", N - d, ltx2_dtype_name((ltx2_dtype)d));
        CHECK(ltx2_st_writer_add(g_ctx, w, names[d], &ts[d]) == LTX2_OK, "add %s: %s", names[d],
              ltx2_last_error(g_ctx));
    }
    int64_t sc = 0;
    int64_t zero_shape[2] = {0, 7};
    ltx2_tensor scalar = ltx2_tensor_make(&sc, LTX2_I64, 0, NULL);
    ltx2_tensor empty = ltx2_tensor_make(NULL, LTX2_F32, 2, zero_shape);
    CHECK(ltx2_st_writer_add(g_ctx, w, "scalar", &scalar) == LTX2_OK, "add scalar");
    CHECK(ltx2_st_writer_add(g_ctx, w, "empty", &empty) == LTX2_OK, "add empty");
    CHECK(ltx2_st_writer_add(g_ctx, w, "scalar", &scalar) == LTX2_ERR_INVALID_ARG, "dup add refused");
    CHECK(ltx2_st_writer_add(g_ctx, w, "__metadata__", &scalar) == LTX2_ERR_INVALID_ARG,
          "reserved name refused");
    ltx2_tensor strided = ts[1]; /* shape [1, 3, 3] */
    strided.strides[2] = 2;
    CHECK(ltx2_st_writer_add(g_ctx, w, "strided", &strided) == LTX2_ERR_INVALID_ARG,
          "non-contiguous refused");
    CHECK(ltx2_st_writer_add(g_ctx, w, "bad\xff", &scalar) == LTX2_ERR_INVALID_ARG,
          "invalid UTF-8 name refused");
    CHECK(ltx2_st_writer_set_meta(g_ctx, w, "config", "{\"x\": \"y\\n\"}") == LTX2_OK, "meta");
    CHECK(ltx2_st_writer_set_meta(g_ctx, w, "format", "old") == LTX2_OK, "meta");
    CHECK(ltx2_st_writer_set_meta(g_ctx, w, "format", "pt") == LTX2_OK, "meta replace");

    char *path = tmp_path("rt.safetensors");
    CHECK(path && ltx2_st_writer_write(g_ctx, w, path) == LTX2_OK, "write: %s", ltx2_last_error(g_ctx));
    ltx2_st_file *f = NULL;
    CHECK(ltx2_st_open(g_ctx, path, &f) == LTX2_OK, "reopen: %s", ltx2_last_error(g_ctx));
    if (f) {
        CHECK(f->n_tensors == N + 2, "tensor count %zu", f->n_tensors);
        CHECK((8 + f->header_len) % 8 == 0, "data section 8-aligned");
        CHECK(strcmp(ltx2_st_meta_get(f, "format"), "pt") == 0, "meta replaced");
        CHECK(strcmp(ltx2_st_meta_get(f, "config"), "{\"x\": \"y\\n\"}") == 0, "meta escaped");
        for (int d = 0; d < N; d++) {
            const ltx2_st_tensor *t = ltx2_st_find(f, names[d]);
            CHECK(t != NULL, "find %s", names[d]);
            if (!t) continue;
            size_t nb = ltx2_tensor_nbytes(&ts[d]);
            CHECK(t->dtype == (ltx2_dtype)d && t->ndim == 3 && t->shape[2] == ts[d].shape[2],
                  "%s header", names[d]);
            CHECK(t->end - t->begin == nb && memcmp(t->data, bufs[d], nb) == 0, "%s data", names[d]);
            CHECK(t->begin % ltx2_dtype_size(t->dtype) == 0, "%s naturally aligned", names[d]);
        }
        const ltx2_st_tensor *s = ltx2_st_find(f, "scalar");
        CHECK(s && s->ndim == 0 && s->end - s->begin == 8, "scalar round trip");
        const ltx2_st_tensor *e = ltx2_st_find(f, "empty");
        CHECK(e && e->ndim == 2 && e->shape[1] == 7 && e->begin == e->end, "empty round trip");
        /* Header names in sorted order, metadata first. */
        char *text = NULL;
        size_t len = 0;
        if (ltx2_file_read_all(g_ctx, path, &text, &len) == LTX2_OK) {
            const char *m = strstr(text + 8, "__metadata__");
            const char *a = strstr(text + 8, "\"empty\"");
            const char *z = strstr(text + 8, "\"t01.");
            const char *y = strstr(text + 8, "\"t12.");
            CHECK(m && a && z && y && m < a && a < z && z < y, "header sorted by name");
        }
        free(text);
    }
    ltx2_st_close(f);

    /* A failed write leaves nothing behind and does not touch an existing file. */
    char *bad = tmp_path("no/such/dir/x.safetensors");
    CHECK(ltx2_st_writer_write(g_ctx, w, bad) == LTX2_ERR_IO, "write into a missing dir fails");
    CHECK(!file_exists(bad), "no output file");
    free(bad);
    ltx2_st_writer_free(w);
    char **names_left = NULL;
    size_t n_left = 0;
    if (ltx2_dir_list(g_ctx, g_dir, &names_left, &n_left) == LTX2_OK) {
        int tmp = 0;
        for (size_t i = 0; i < n_left; i++) tmp += strstr(names_left[i], ".tmp.") != NULL;
        CHECK(tmp == 0, "no temp files left");
    }
    ltx2_dir_list_free(names_left, n_left);
    free(path);

    ltx2_clear_error(g_ctx);
    CHECK(ltx2_st_open(g_ctx, "/nonexistent/x.safetensors", &f) == LTX2_ERR_IO &&
          strstr(ltx2_last_error(g_ctx), "/nonexistent/x.safetensors"), "missing file: %s",
          ltx2_last_error(g_ctx));
}

/* Writes a small file with the given tensor names (u8 [2] each, value = index). */
static void write_shard(const char *dir, const char *file, const char *const *names, int n) {
    ltx2_st_writer *w = NULL;
    ltx2_st_writer_create(g_ctx, &w);
    unsigned char vals[16][2];
    int64_t shape[1] = {2};
    for (int i = 0; i < n; i++) {
        vals[i][0] = vals[i][1] = (unsigned char)i;
        ltx2_tensor t = ltx2_tensor_make(vals[i], LTX2_U8, 1, shape);
        ltx2_st_writer_add(g_ctx, w, names[i], &t);
    }
    char *p = ltx2_path_join(dir, file);
    CHECK(ltx2_st_writer_write(g_ctx, w, p) == LTX2_OK, "write %s: %s", p, ltx2_last_error(g_ctx));
    free(p);
    ltx2_st_writer_free(w);
}

static void write_text(const char *dir, const char *file, const char *text) {
    char *p = ltx2_path_join(dir, file);
    FILE *fp = fopen(p, "wb");
    if (fp) {
        fputs(text, fp);
        fclose(fp);
    }
    free(p);
}

static void remove_file(const char *dir, const char *file) {
    char *p = ltx2_path_join(dir, file);
    unlink(p);
    free(p);
}

static void test_sets(void) {
    char *d = tmp_path("sharded");
    if (!d) return;
    CHECK(mkdir(d, 0755) == 0, "mkdir %s", d);
    static const char *const a[] = {"blocks.0.w", "blocks.0.b"};
    static const char *const b[] = {"blocks.1.w", "head"};
    write_shard(d, "m-00001-of-00002.safetensors", a, 2);
    write_shard(d, "m-00002-of-00002.safetensors", b, 2);
    write_text(d, "m.safetensors.index.json",
               "{\"metadata\": {\"total_size\": 8}, \"weight_map\": {"
               "\"blocks.0.w\": \"m-00001-of-00002.safetensors\","
               "\"blocks.0.b\": \"m-00001-of-00002.safetensors\","
               "\"blocks.1.w\": \"m-00002-of-00002.safetensors\","
               "\"head\": \"m-00002-of-00002.safetensors\"}}");
    char *idx = ltx2_path_join(d, "m.safetensors.index.json");
    for (int via_dir = 0; via_dir < 2; via_dir++) {
        ltx2_st_set *s = NULL;
        ltx2_status st = ltx2_st_set_open(g_ctx, via_dir ? d : idx, &s);
        CHECK(st == LTX2_OK, "set via %s: %s", via_dir ? "dir" : "index", ltx2_last_error(g_ctx));
        if (!s) continue;
        CHECK(s->n_files == 2 && s->n_tensors == 4, "2 files, 4 tensors");
        CHECK(s->index_path && strstr(s->index_path, "m.safetensors.index.json"), "index used");
        const ltx2_st_file *owner = NULL;
        const ltx2_st_tensor *t = ltx2_st_set_find(s, "head", &owner);
        CHECK(t && owner && strstr(owner->path, "00002-of") && ((const unsigned char *)t->data)[0] == 1,
              "head found in shard 2");
        CHECK(ltx2_st_set_find(s, "nope", &owner) == NULL && owner == NULL, "missing name");
        CHECK(strcmp(s->tensors[0]->name, "blocks.0.b") == 0 && strcmp(s->tensors[3]->name, "head") == 0,
              "sorted across files");
        ltx2_st_set_close(s);
    }
    /* A single file is a set of one. */
    char *one = ltx2_path_join(d, "m-00001-of-00002.safetensors");
    ltx2_st_set *s = NULL;
    CHECK(ltx2_st_set_open(g_ctx, one, &s) == LTX2_OK && s && s->n_tensors == 2 && !s->index_path,
          "single-file set");
    ltx2_st_set_close(s);
    free(one);

    /* The index names a tensor its shard does not hold. */
    write_text(d, "m.safetensors.index.json",
               "{\"weight_map\": {\"blocks.0.w\": \"m-00001-of-00002.safetensors\","
               "\"ghost\": \"m-00002-of-00002.safetensors\"}}");
    ltx2_clear_error(g_ctx);
    CHECK(ltx2_st_set_open(g_ctx, idx, &s) == LTX2_ERR_NOT_FOUND &&
          strstr(ltx2_last_error(g_ctx), "'ghost'"), "missing tensor in shard: %s",
          ltx2_last_error(g_ctx));
    write_text(d, "m.safetensors.index.json",
               "{\"weight_map\": {\"head\": \"m-00003-of-00002.safetensors\"}}");
    CHECK(ltx2_st_set_open(g_ctx, idx, &s) == LTX2_ERR_IO && strstr(ltx2_last_error(g_ctx), "00003"),
          "missing shard file: %s", ltx2_last_error(g_ctx));
    write_text(d, "m.safetensors.index.json", "{\"weight_map\": {\"head\": \"../x.safetensors\"}}");
    CHECK(ltx2_st_set_open(g_ctx, idx, &s) == LTX2_ERR_FORMAT, "shard outside the dir refused");
    write_text(d, "m.safetensors.index.json", "{\"weight_map\": [1]}");
    CHECK(ltx2_st_set_open(g_ctx, idx, &s) == LTX2_ERR_FORMAT, "weight_map not an object");
    write_text(d, "m.safetensors.index.json", "{\"weight_map\": ");
    CHECK(ltx2_st_set_open(g_ctx, idx, &s) == LTX2_ERR_FORMAT, "broken index json");

    /* Without an index, a directory means all its *.safetensors; duplicates are errors. */
    remove_file(d, "m.safetensors.index.json");
    CHECK(ltx2_st_set_open(g_ctx, d, &s) == LTX2_OK && s && s->n_tensors == 4 && !s->index_path,
          "plain directory: %s", ltx2_last_error(g_ctx));
    ltx2_st_set_close(s);
    static const char *const dup[] = {"head"};
    write_shard(d, "z-extra.safetensors", dup, 1);
    ltx2_clear_error(g_ctx);
    CHECK(ltx2_st_set_open(g_ctx, d, &s) == LTX2_ERR_FORMAT &&
          strstr(ltx2_last_error(g_ctx), "'head'") && strstr(ltx2_last_error(g_ctx), "z-extra"),
          "duplicate across files names both: %s", ltx2_last_error(g_ctx));
    remove_file(d, "z-extra.safetensors");

    write_text(d, "a.safetensors.index.json", "{\"weight_map\": {}}");
    write_text(d, "b.safetensors.index.json", "{\"weight_map\": {}}");
    CHECK(ltx2_st_set_open(g_ctx, d, &s) == LTX2_ERR_INVALID_ARG, "two index files refused: %s",
          ltx2_last_error(g_ctx));
    remove_file(d, "a.safetensors.index.json");
    remove_file(d, "b.safetensors.index.json");
    remove_file(d, "m-00001-of-00002.safetensors");
    remove_file(d, "m-00002-of-00002.safetensors");
    CHECK(ltx2_st_set_open(g_ctx, d, &s) == LTX2_ERR_NOT_FOUND, "empty dir: %s",
          ltx2_last_error(g_ctx));
    rmdir(d);
    free(idx);
    free(d);
}

/* A file written by the reference `safetensors` package (tests/data/safetensors). */
static void test_reference_file(void) {
    ltx2_st_file *f = NULL;
    ltx2_status st = ltx2_st_open(g_ctx, LTX2_SOURCE_DIR "/tests/data/safetensors/reference.safetensors", &f);
    CHECK(st == LTX2_OK, "reference file: %s", ltx2_last_error(g_ctx));
    if (!f) return;
    CHECK(f->n_tensors == 6, "6 tensors");
    CHECK(strcmp(ltx2_st_meta_get(f, "config"), "{\"num_layers\": 1, \"eps\": 1e-06}") == 0 &&
          strcmp(ltx2_st_meta_get(f, "format"), "pt") == 0, "reference metadata");
    const ltx2_st_tensor *w = ltx2_st_find(f, "blocks.0.attn.to_q.weight");
    bool ok = w && w->dtype == LTX2_F32 && w->ndim == 2 && w->shape[0] == 3 && w->shape[1] == 4;
    for (int i = 0; ok && i < 12; i++) {
        float v;
        memcpy(&v, (const char *)w->data + 4 * i, 4);
        ok = v == (float)(i * 0.25 - 1.0);
    }
    CHECK(ok, "reference f32 weight values");
    const ltx2_st_tensor *b = ltx2_st_find(f, "blocks.0.attn.to_q.bias");
    uint16_t h[3] = {0};
    if (b) memcpy(h, b->data, 6);
    CHECK(b && b->dtype == LTX2_F16 && h[0] == 0x3C00 && h[1] == 0xC000 && h[2] == 0x3800, "f16 bias");
    const ltx2_st_tensor *t = ltx2_st_find(f, "scale_shift_table");
    int64_t iv[2] = {0};
    if (t) memcpy(iv, t->data, 16);
    CHECK(t && t->dtype == LTX2_I64 && iv[0] == -(INT64_C(1) << 40) && iv[1] == 7, "i64 table");
    const ltx2_st_tensor *m = ltx2_st_find(f, "mask");
    CHECK(m && m->dtype == LTX2_BOOL && ((const unsigned char *)m->data)[1] == 0 &&
          ((const unsigned char *)m->data)[2] == 1, "bool mask");
    const ltx2_st_tensor *ids = ltx2_st_find(f, "ids");
    CHECK(ids && ids->dtype == LTX2_U8 && ((const unsigned char *)ids->data)[4] == 4, "u8 ids");
    const ltx2_st_tensor *e = ltx2_st_find(f, "empty");
    CHECK(e && e->shape[0] == 0 && e->shape[1] == 2 && e->begin == e->end, "empty tensor");
    ltx2_st_close(f);
}

/* A tensor without data is written as zeros (a hole), between tensors with data, which keep
 * theirs: the synthetic full-size checkpoints' path (tests/full_ckpt.h). */
static void test_zero_holes(void) {
    enum { HOLE = 1 << 20 }; /* elements of the hole tensor: 4 MiB of f32 */
    float a[5] = {1, 2, 3, 4, 5}, c[3] = {-1, -2, -3};
    const int64_t sa = 5, sb = HOLE, sc = 3;
    const ltx2_tensor ta = ltx2_tensor_make(a, LTX2_F32, 1, &sa), tb = ltx2_tensor_make(NULL, LTX2_F32, 1, &sb),
                      tc = ltx2_tensor_make(c, LTX2_F32, 1, &sc);
    ltx2_st_writer *w = NULL;
    char *path = tmp_path("holes.safetensors");
    bool ok = path && ltx2_st_writer_create(g_ctx, &w) == LTX2_OK && ltx2_st_writer_add(g_ctx, w, "a", &ta) == LTX2_OK &&
              ltx2_st_writer_add(g_ctx, w, "b", &tb) == LTX2_OK && ltx2_st_writer_add(g_ctx, w, "c", &tc) == LTX2_OK &&
              ltx2_st_writer_write(g_ctx, w, path) == LTX2_OK;
    CHECK(ok, "write with a hole: %s", ltx2_last_error(g_ctx));
    ltx2_st_writer_free(w);
    ltx2_st_file *f = NULL;
    if (ok && ltx2_st_open(g_ctx, path, &f) == LTX2_OK) {
        const ltx2_st_tensor *ra = ltx2_st_find(f, "a"), *rb = ltx2_st_find(f, "b"), *rc = ltx2_st_find(f, "c");
        bool zeros = rb && rb->end - rb->begin == (uint64_t)HOLE * 4;
        for (size_t i = 0; zeros && i < (size_t)HOLE; i++) zeros = ((const float *)rb->data)[i] == 0.0f;
        CHECK(zeros, "the hole reads as %d zeros", HOLE);
        CHECK(ra && rc && memcmp(ra->data, a, sizeof a) == 0 && memcmp(rc->data, c, sizeof c) == 0,
              "the tensors around the hole keep their data");
        CHECK(f->file_size == 8 + f->header_len + sizeof a + (uint64_t)HOLE * 4 + sizeof c, "file size %llu",
              (unsigned long long)f->file_size);
    } else {
        CHECK(false, "reopen: %s", ltx2_last_error(g_ctx));
    }
    ltx2_st_close(f);
    if (path) unlink(path);
    free(path);
}

int main(void) {
    ltx2_context_params p;
    ltx2_context_params_init(&p);
    p.log_level = LTX2_LOG_ERROR;
    g_ctx = ltx2_context_create(&p);
    snprintf(g_dir, sizeof(g_dir), "/tmp/ltx2_test_st_XXXXXX");
    if (!g_ctx || !mkdtemp(g_dir)) return 1;
    test_validation();
    test_roundtrip();
    test_zero_holes();
    test_sets();
    test_reference_file();
    char *rt = tmp_path("rt.safetensors");
    unlink(rt);
    free(rt);
    rmdir(g_dir);
    ltx2_context_free(g_ctx);
    return test_finish();
}
