/* Several safetensors files seen as one namespace: a single file, a diffusers sharded index
 * (`*.safetensors.index.json`: {"metadata": {...}, "weight_map": {name: shard file}}), or a
 * directory holding one index or else plain *.safetensors files. Every weight_map name must be in
 * the shard it points to; a name found in two files is an error naming both. */
#include "io/safetensors.h"

#include <stdlib.h>
#include <string.h>

#include "core/context.h"
#include "io/file.h"
#include "io/json.h"

#define INDEX_SUFFIX ".safetensors.index.json"

typedef struct set_item {
    const ltx2_st_tensor *t;
    const ltx2_st_file *owner;
} set_item;

typedef struct wm_item {
    const char *name;
    const char *shard;
} wm_item;

static int cmp_item(const void *a, const void *b) {
    return strcmp(((const set_item *)a)->t->name, ((const set_item *)b)->t->name);
}

static int cmp_wm(const void *a, const void *b) {
    return strcmp(((const wm_item *)a)->name, ((const wm_item *)b)->name);
}

static int cmp_str(const void *a, const void *b) {
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static char *dup_str(const char *s) {
    size_t n = strlen(s) + 1;
    char *p = malloc(n);
    if (p) memcpy(p, s, n);
    return p;
}

void ltx2_st_set_close(ltx2_st_set *s) {
    if (!s) return;
    for (size_t i = 0; i < s->n_files; i++) ltx2_st_close(s->files[i]);
    free(s->files);
    free(s->tensors);
    free(s->owners);
    free(s->index_path);
    free(s);
}

ltx2_status ltx2_st_set_view(ltx2_context *ctx, const ltx2_st_set *s, const char *label, ltx2_st_file *view) {
    memset(view, 0, sizeof *view);
    view->tensors = calloc(s->n_tensors ? s->n_tensors : 1, sizeof *view->tensors);
    view->path = malloc(strlen(label) + 1);
    if (!view->tensors || !view->path) {
        ltx2_st_set_view_close(view);
        return LTX2_ERROR(ctx, LTX2_ERR_OOM, "%s: a view of %zu tensors", label, s->n_tensors);
    }
    memcpy(view->path, label, strlen(label) + 1);
    for (size_t i = 0; i < s->n_tensors; i++) view->tensors[i] = *s->tensors[i];
    view->n_tensors = s->n_tensors;
    for (size_t i = 0; i < s->n_files; i++) view->file_size += s->files[i]->file_size;
    return LTX2_OK;
}

void ltx2_st_set_view_close(ltx2_st_file *view) {
    free(view->tensors);
    free(view->path);
    memset(view, 0, sizeof *view);
}

/* Opens the files (paths[i]) into s->files; s->files must have room for n. */
static ltx2_status open_files(ltx2_context *ctx, ltx2_st_set *s, char *const *paths, size_t n) {
    s->files = calloc(n ? n : 1, sizeof(*s->files));
    if (!s->files) return LTX2_ERROR(ctx, LTX2_ERR_OOM, "out of memory opening %zu files", n);
    for (size_t i = 0; i < n; i++) {
        LTX2_TRY(ltx2_st_open(ctx, paths[i], &s->files[i]));
        s->n_files++;
    }
    return LTX2_OK;
}

static ltx2_status merge(ltx2_context *ctx, ltx2_st_set *s) {
    size_t total = 0;
    for (size_t i = 0; i < s->n_files; i++) total += s->files[i]->n_tensors;
    set_item *items = malloc((total ? total : 1) * sizeof(*items));
    s->tensors = malloc((total ? total : 1) * sizeof(*s->tensors));
    s->owners = malloc((total ? total : 1) * sizeof(*s->owners));
    if (!items || !s->tensors || !s->owners) {
        free(items);
        return LTX2_ERROR(ctx, LTX2_ERR_OOM, "out of memory merging %zu tensors", total);
    }
    size_t k = 0;
    for (size_t i = 0; i < s->n_files; i++)
        for (size_t j = 0; j < s->files[i]->n_tensors; j++) {
            items[k].t = &s->files[i]->tensors[j];
            items[k].owner = s->files[i];
            k++;
        }
    if (total > 1) qsort(items, total, sizeof(*items), cmp_item);
    for (size_t i = 1; i < total; i++) {
        if (strcmp(items[i - 1].t->name, items[i].t->name) == 0) {
            ltx2_status st = LTX2_ERROR(ctx, LTX2_ERR_FORMAT,
                                        "tensor '%.200s' is in both %s and %s", items[i].t->name,
                                        items[i - 1].owner->path, items[i].owner->path);
            free(items);
            return st;
        }
    }
    for (size_t i = 0; i < total; i++) {
        s->tensors[i] = items[i].t;
        s->owners[i] = items[i].owner;
    }
    s->n_tensors = total;
    free(items);
    return LTX2_OK;
}

/* A shard name must stay inside the index's directory. */
static bool shard_name_ok(const char *name) {
    if (name[0] == '\0' || name[0] == '/') return false;
    const char *p = name;
    while (*p) {
        const char *slash = strchr(p, '/');
        size_t n = slash ? (size_t)(slash - p) : strlen(p);
        if (n == 2 && p[0] == '.' && p[1] == '.') return false;
        if (!slash) break;
        p = slash + 1;
    }
    return true;
}

static ltx2_status open_index(ltx2_context *ctx, ltx2_st_set *s, const char *index_path) {
    s->index_path = dup_str(index_path);
    if (!s->index_path) return LTX2_ERROR(ctx, LTX2_ERR_OOM, "%s: out of memory", index_path);
    char *text = NULL;
    size_t len = 0;
    LTX2_TRY(ltx2_file_read_all(ctx, index_path, &text, &len));
    ltx2_json_doc *doc = NULL;
    ltx2_status st = ltx2_json_parse(ctx, text, len, index_path, &doc);
    free(text);
    if (st != LTX2_OK) return st;

    wm_item *wm = NULL;
    const char **shards = NULL;
    char **paths = NULL;
    size_t n_shards = 0;
    char *dir = NULL;
    const ltx2_json *root = ltx2_json_root(doc);
    const ltx2_json *map = ltx2_json_get(root, "weight_map");
    const ltx2_json *meta = ltx2_json_get(root, "metadata");
    if (root->type != LTX2_JSON_OBJECT) {
        st = LTX2_ERROR(ctx, LTX2_ERR_FORMAT, "%s: index must be a JSON object", index_path);
        goto done;
    }
    if (!map || map->type != LTX2_JSON_OBJECT) {
        st = LTX2_ERROR(ctx, LTX2_ERR_FORMAT,
                        "%s: index needs a \"weight_map\" object of tensor name -> shard file",
                        index_path);
        goto done;
    }
    if (meta && meta->type != LTX2_JSON_OBJECT) {
        st = LTX2_ERROR(ctx, LTX2_ERR_FORMAT, "%s: index \"metadata\" must be an object",
                        index_path);
        goto done;
    }
    size_t n = map->count;
    wm = malloc((n ? n : 1) * sizeof(*wm));
    shards = malloc((n ? n : 1) * sizeof(*shards));
    dir = ltx2_path_dirname(index_path);
    if (!wm || !shards || !dir) {
        st = LTX2_ERROR(ctx, LTX2_ERR_OOM, "%s: out of memory", index_path);
        goto done;
    }
    for (size_t i = 0; i < n; i++) {
        const ltx2_json *v = &map->items[i];
        if (v->type != LTX2_JSON_STRING || strlen(v->str) != v->str_len ||
            !shard_name_ok(v->str) || strlen(map->keys[i]) != map->key_lens[i]) {
            st = LTX2_ERROR(ctx, LTX2_ERR_FORMAT,
                            "%s: weight_map entry '%.200s' must name a shard file inside the "
                            "index's directory", index_path, map->keys[i]);
            goto done;
        }
        wm[i].name = map->keys[i];
        wm[i].shard = v->str;
        shards[i] = v->str;
    }
    if (n > 1) {
        qsort(wm, n, sizeof(*wm), cmp_wm);
        qsort(shards, n, sizeof(*shards), cmp_str);
    }
    for (size_t i = 0; i < n; i++)
        if (n_shards == 0 || strcmp(shards[n_shards - 1], shards[i]) != 0) shards[n_shards++] = shards[i];
    for (size_t i = 1; i < n; i++)
        if (strcmp(wm[i - 1].name, wm[i].name) == 0) {
            st = LTX2_ERROR(ctx, LTX2_ERR_FORMAT, "%s: weight_map lists '%.200s' twice", index_path,
                            wm[i].name);
            goto done;
        }
    paths = calloc(n_shards ? n_shards : 1, sizeof(*paths));
    if (!paths) {
        st = LTX2_ERROR(ctx, LTX2_ERR_OOM, "%s: out of memory", index_path);
        goto done;
    }
    for (size_t i = 0; i < n_shards; i++) {
        paths[i] = ltx2_path_join(dir, shards[i]);
        if (!paths[i]) {
            st = LTX2_ERROR(ctx, LTX2_ERR_OOM, "%s: out of memory", index_path);
            goto done;
        }
    }
    st = open_files(ctx, s, paths, n_shards);
    if (st != LTX2_OK) {
        ltx2_error_prefix(ctx, "%s", index_path);
        goto done;
    }
    /* Every mapped name must be in its shard (shards[] and s->files[] share an order). */
    for (size_t i = 0; i < n; i++) {
        const char **hit = bsearch(&wm[i].shard, shards, n_shards, sizeof(*shards), cmp_str);
        const ltx2_st_file *f = s->files[hit - shards];
        if (!ltx2_st_find(f, wm[i].name)) {
            st = LTX2_ERROR(ctx, LTX2_ERR_NOT_FOUND,
                            "%s: weight_map puts '%.200s' in %s, but that file has no such tensor",
                            index_path, wm[i].name, f->path);
            goto done;
        }
    }
    for (size_t i = 0; i < s->n_files; i++)
        for (size_t j = 0; j < s->files[i]->n_tensors; j++) {
            wm_item key = {.name = s->files[i]->tensors[j].name};
            if (!bsearch(&key, wm, n, sizeof(*wm), cmp_wm))
                LTX2_LOGW(ctx, "%s: tensor '%.200s' in %s is not listed in the weight_map",
                          index_path, key.name, s->files[i]->path);
        }
done:
    if (paths)
        for (size_t i = 0; i < n_shards; i++) free(paths[i]);
    free(paths);
    free(dir);
    free(wm);
    free(shards);
    ltx2_json_free(doc);
    return st;
}

static ltx2_status open_dir(ltx2_context *ctx, ltx2_st_set *s, const char *dir) {
    char **names = NULL;
    size_t n = 0;
    LTX2_TRY(ltx2_dir_list(ctx, dir, &names, &n));
    ltx2_status st = LTX2_OK;
    size_t n_index = 0, first_index = 0, second_index = 0, n_st = 0;
    for (size_t i = 0; i < n; i++) {
        if (ltx2_str_ends_with(names[i], INDEX_SUFFIX)) {
            if (n_index == 0) first_index = i;
            if (n_index == 1) second_index = i;
            n_index++;
        }
    }
    if (n_index > 1) {
        st = LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG,
                        "%s: directory holds %zu index files (%s, %s, ...); pass the one to use",
                        dir, n_index, names[first_index], names[second_index]);
    } else if (n_index == 1) {
        char *p = ltx2_path_join(dir, names[first_index]);
        st = p ? open_index(ctx, s, p) : LTX2_ERROR(ctx, LTX2_ERR_OOM, "out of memory");
        free(p);
    } else {
        /* Keep only *.safetensors, joined with the directory, in sorted order. */
        for (size_t i = 0; i < n; i++) {
            if (ltx2_str_ends_with(names[i], ".safetensors")) {
                char *p = ltx2_path_join(dir, names[i]);
                if (!p) {
                    st = LTX2_ERROR(ctx, LTX2_ERR_OOM, "out of memory");
                    break;
                }
                free(names[n_st]);
                names[n_st++] = p;
            }
        }
        if (st == LTX2_OK && n_st == 0)
            st = LTX2_ERROR(ctx, LTX2_ERR_NOT_FOUND,
                            "%s: directory holds no *.safetensors files and no *" INDEX_SUFFIX, dir);
        if (st == LTX2_OK) st = open_files(ctx, s, names, n_st);
    }
    ltx2_dir_list_free(names, n);
    return st;
}

ltx2_status ltx2_st_set_open(ltx2_context *ctx, const char *path, ltx2_st_set **out) {
    *out = NULL;
    if (!path) return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "safetensors set: NULL path");
    ltx2_st_set *s = calloc(1, sizeof(*s));
    if (!s) return LTX2_ERROR(ctx, LTX2_ERR_OOM, "%s: out of memory", path);
    ltx2_status st;
    if (ltx2_path_is_dir(path)) {
        st = open_dir(ctx, s, path);
    } else if (ltx2_str_ends_with(path, ".json")) {
        st = open_index(ctx, s, path);
    } else {
        char *p = (char *)path;
        st = open_files(ctx, s, &p, 1);
    }
    if (st == LTX2_OK) st = merge(ctx, s);
    if (st != LTX2_OK) {
        ltx2_st_set_close(s);
        return st;
    }
    *out = s;
    return LTX2_OK;
}

const ltx2_st_tensor *ltx2_st_set_find(const ltx2_st_set *s, const char *name,
                                       const ltx2_st_file **owner) {
    if (owner) *owner = NULL;
    if (!s || !name) return NULL;
    size_t lo = 0, hi = s->n_tensors;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(s->tensors[mid]->name, name);
        if (c == 0) {
            if (owner) *owner = s->owners[mid];
            return s->tensors[mid];
        }
        if (c < 0) lo = mid + 1;
        else hi = mid;
    }
    return NULL;
}
