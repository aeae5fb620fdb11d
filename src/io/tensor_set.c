/* Opens .safetensors / index / .npy / .npz files and dump directories as one sorted namespace. */
#include "io/tensor_set.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/context.h"
#include "io/file.h"
#include "io/npy.h"
#include "io/safetensors.h"

/* Dump trees are shallow (module path depth); deeper nesting is almost surely a symlink loop. */
#define TENSOR_SET_MAX_DEPTH 32

typedef struct set_impl {
    ltx2_st_set **st;
    size_t n_st, cap_st;
    ltx2_npz *npz;   /* a lone .npy is held as a one-member npz */
    size_t n_npz, cap_npz;
    char **strings;  /* names and source paths we own */
    size_t n_strings, cap_strings;
    size_t cap_items;
} set_impl;

static bool grow(void **p, size_t *cap, size_t need, size_t elem) {
    if (need <= *cap) return true;
    size_t nc = *cap ? *cap * 2 : 16;
    while (nc < need) nc *= 2;
    void *q = realloc(*p, nc * elem);
    if (!q) return false;
    *p = q;
    *cap = nc;
    return true;
}

static const char *own_string(set_impl *im, const char *s, size_t len) {
    if (!grow((void **)&im->strings, &im->cap_strings, im->n_strings + 1, sizeof(char *))) return NULL;
    char *c = malloc(len + 1);
    if (!c) return NULL;
    memcpy(c, s, len);
    c[len] = '\0';
    im->strings[im->n_strings++] = c;
    return c;
}

static ltx2_status add_item(ltx2_context *ctx, ltx2_tensor_set *s, const char *name, size_t name_len,
                            const ltx2_tensor *t, const char *source) {
    set_impl *im = s->impl_;
    if (!grow((void **)&s->items, &im->cap_items, s->n + 1, sizeof(*s->items)))
        return LTX2_ERROR(ctx, LTX2_ERR_OOM, "out of memory listing tensors of %s", source);
    const char *n = own_string(im, name, name_len);
    const char *src = own_string(im, source, strlen(source));
    if (!n || !src) return LTX2_ERROR(ctx, LTX2_ERR_OOM, "out of memory listing tensors of %s", source);
    s->items[s->n].name = n;
    s->items[s->n].t = *t;
    s->items[s->n].source = src;
    s->n++;
    return LTX2_OK;
}

static ltx2_status add_safetensors(ltx2_context *ctx, ltx2_tensor_set *s, const char *path) {
    set_impl *im = s->impl_;
    if (!grow((void **)&im->st, &im->cap_st, im->n_st + 1, sizeof(*im->st)))
        return LTX2_ERROR(ctx, LTX2_ERR_OOM, "out of memory opening %s", path);
    ltx2_st_set *st = NULL;
    LTX2_TRY(ltx2_st_set_open(ctx, path, &st));
    im->st[im->n_st++] = st;
    for (size_t i = 0; i < st->n_tensors; i++) {
        ltx2_tensor t = ltx2_st_view(st->tensors[i]);
        LTX2_TRY(add_item(ctx, s, st->tensors[i]->name, strlen(st->tensors[i]->name), &t,
                          st->owners[i]->path));
    }
    return LTX2_OK;
}

static ltx2_npz *new_npz(ltx2_context *ctx, set_impl *im, const char *path) {
    if (!grow((void **)&im->npz, &im->cap_npz, im->n_npz + 1, sizeof(*im->npz))) {
        LTX2_ERROR(ctx, LTX2_ERR_OOM, "out of memory opening %s", path);
        return NULL;
    }
    ltx2_npz *z = &im->npz[im->n_npz];
    memset(z, 0, sizeof(*z));
    return z;
}

static ltx2_status add_npz(ltx2_context *ctx, ltx2_tensor_set *s, const char *path) {
    set_impl *im = s->impl_;
    ltx2_npz *z = new_npz(ctx, im, path);
    if (!z) return LTX2_ERR_OOM;
    LTX2_TRY(ltx2_npz_read(ctx, path, z));
    im->n_npz++;
    for (size_t i = 0; i < z->n; i++)
        LTX2_TRY(add_item(ctx, s, z->names[i], strlen(z->names[i]), &z->arrays[i].t, path));
    return LTX2_OK;
}

/* `name` is the tensor name to give the array (already derived from the path). */
static ltx2_status add_npy(ltx2_context *ctx, ltx2_tensor_set *s, const char *path, const char *name,
                           size_t name_len) {
    set_impl *im = s->impl_;
    ltx2_npz *z = new_npz(ctx, im, path);
    if (!z) return LTX2_ERR_OOM;
    z->arrays = calloc(1, sizeof(*z->arrays));
    z->names = calloc(1, sizeof(*z->names));
    if (!z->arrays || !z->names) {
        free(z->arrays);
        free(z->names);
        return LTX2_ERROR(ctx, LTX2_ERR_OOM, "out of memory opening %s", path);
    }
    ltx2_status st = ltx2_npy_read(ctx, path, &z->arrays[0]);
    if (st != LTX2_OK) {
        free(z->arrays);
        free(z->names);
        return st;
    }
    z->n = 1;
    z->names[0] = malloc(name_len + 1);
    im->n_npz++;
    if (!z->names[0]) return LTX2_ERROR(ctx, LTX2_ERR_OOM, "out of memory opening %s", path);
    memcpy(z->names[0], name, name_len);
    z->names[0][name_len] = '\0';
    return add_item(ctx, s, name, name_len, &z->arrays[0].t, path);
}

/* rel is the path below the dump root, used for .npy names. */
static ltx2_status add_dir(ltx2_context *ctx, ltx2_tensor_set *s, const char *dir, const char *rel,
                           int depth) {
    if (depth > TENSOR_SET_MAX_DEPTH)
        return LTX2_ERROR(ctx, LTX2_ERR_FORMAT, "%s: directories nested deeper than %d (a link loop?)",
                          dir, TENSOR_SET_MAX_DEPTH);
    char **entries = NULL;
    size_t n = 0;
    LTX2_TRY(ltx2_dir_list(ctx, dir, &entries, &n));
    ltx2_status st = LTX2_OK;
    for (size_t i = 0; i < n && st == LTX2_OK; i++) {
        if (entries[i][0] == '.') continue; /* hidden files, our own temp files */
        size_t rlen = strlen(rel) + strlen(entries[i]) + 2;
        char *path = ltx2_path_join(dir, entries[i]), *sub = malloc(rlen);
        if (!path || !sub) {
            free(path);
            free(sub);
            st = LTX2_ERROR(ctx, LTX2_ERR_OOM, "out of memory listing %s", dir);
            break;
        }
        snprintf(sub, rlen, "%s%s%s", rel, rel[0] ? "." : "", entries[i]);
        struct stat sb;
        if (stat(path, &sb) != 0) {
            st = LTX2_ERROR(ctx, LTX2_ERR_IO, "cannot stat %s", path);
        } else if (S_ISDIR(sb.st_mode)) {
            st = add_dir(ctx, s, path, sub, depth + 1);
        } else if (ltx2_str_ends_with(entries[i], ".npy")) {
            st = add_npy(ctx, s, path, sub, strlen(sub) - 4);
        } else if (ltx2_str_ends_with(entries[i], ".npz")) {
            st = add_npz(ctx, s, path);
        } else if (ltx2_str_ends_with(entries[i], ".safetensors")) {
            st = add_safetensors(ctx, s, path);
        }
        free(path);
        free(sub);
    }
    ltx2_dir_list_free(entries, n);
    return st;
}

static int cmp_item(const void *a, const void *b) {
    return strcmp(((const ltx2_named_tensor *)a)->name, ((const ltx2_named_tensor *)b)->name);
}

ltx2_status ltx2_tensor_set_open(ltx2_context *ctx, const char *path, ltx2_tensor_set **out) {
    *out = NULL;
    struct stat sb;
    if (stat(path, &sb) != 0) return LTX2_ERROR(ctx, LTX2_ERR_NOT_FOUND, "%s: no such file or directory", path);
    ltx2_tensor_set *s = calloc(1, sizeof(*s));
    set_impl *im = calloc(1, sizeof(*im));
    if (!s || !im) {
        free(s);
        free(im);
        return LTX2_ERROR(ctx, LTX2_ERR_OOM, "out of memory opening %s", path);
    }
    s->impl_ = im;
    ltx2_status st;
    if (S_ISDIR(sb.st_mode)) {
        s->kind = "directory";
        st = add_dir(ctx, s, path, "", 0);
    } else if (ltx2_str_ends_with(path, ".npy")) {
        s->kind = "npy";
        const char *base = strrchr(path, '/');
        base = base ? base + 1 : path;
        st = add_npy(ctx, s, path, base, strlen(base) - 4);
    } else if (ltx2_str_ends_with(path, ".npz")) {
        s->kind = "npz";
        st = add_npz(ctx, s, path);
    } else if (ltx2_str_ends_with(path, ".safetensors") || ltx2_str_ends_with(path, ".json")) {
        s->kind = "safetensors";
        st = add_safetensors(ctx, s, path);
    } else {
        st = LTX2_ERROR(ctx, LTX2_ERR_FORMAT,
                        "%s: unknown file type (expected .safetensors, .safetensors.index.json, .npy, "
                        ".npz or a directory of these)", path);
    }
    if (st == LTX2_OK) {
        if (s->n > 1) qsort(s->items, s->n, sizeof(*s->items), cmp_item); /* items is NULL in an empty set */
        for (size_t i = 1; i < s->n; i++) {
            if (strcmp(s->items[i - 1].name, s->items[i].name) == 0) {
                st = LTX2_ERROR(ctx, LTX2_ERR_FORMAT, "tensor '%s' appears twice: in %s and in %s",
                                s->items[i].name, s->items[i - 1].source, s->items[i].source);
                break;
            }
        }
    }
    if (st != LTX2_OK) {
        ltx2_tensor_set_free(s);
        return st;
    }
    *out = s;
    return LTX2_OK;
}

void ltx2_tensor_set_free(ltx2_tensor_set *s) {
    if (!s) return;
    set_impl *im = s->impl_;
    if (im) {
        for (size_t i = 0; i < im->n_st; i++) ltx2_st_set_close(im->st[i]);
        for (size_t i = 0; i < im->n_npz; i++) ltx2_npz_free(&im->npz[i]);
        for (size_t i = 0; i < im->n_strings; i++) free(im->strings[i]);
        free(im->st);
        free(im->npz);
        free(im->strings);
        free(im);
    }
    free(s->items);
    free(s);
}

const ltx2_named_tensor *ltx2_tensor_set_find(const ltx2_tensor_set *s, const char *name) {
    size_t lo = 0, hi = s->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(s->items[mid].name, name);
        if (c == 0) return &s->items[mid];
        if (c < 0) lo = mid + 1;
        else hi = mid;
    }
    return NULL;
}
