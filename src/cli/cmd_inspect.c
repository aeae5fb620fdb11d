/* `ltx2 inspect FILE|DIR`: what a checkpoint or tensor file holds. For LTX-2 checkpoints it names
 * the layout, the version (and why), the components, and summarises the `config` metadata. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "core/context.h"
#include "io/file.h"
#include "io/json.h"
#include "io/safetensors.h"
#include "model/names.h"
#include "io/tensor_set.h"
#include "model/detect.h"
#include "model/md_weights.h"

/* Wrap config summaries at this width so they stay readable in an 80-100 column terminal. */
#define INSPECT_WRAP_COLS 96

typedef struct inspect_opts {
    const char *path;
    bool list_tensors, verify;
    const char *sharding, *mesh;
} inspect_opts;

static void inspect_usage(FILE *out) {
    fprintf(out,
            "usage: ltx2 inspect [--tensors] [--verify] [--sharding PROFILE --mesh D,F,C,T] FILE|DIR\n"
            "\n"
            "FILE|DIR: a .safetensors file (an LTX-2 single-file checkpoint, an upsampler, or any other),\n"
            "a *.safetensors.index.json, a diffusers directory (model_index.json with component folders,\n"
            "or one component folder with config.json), a .npy or .npz file, or a dump directory.\n"
            "\n"
            "  --tensors    list every tensor: name, dtype, shape, bytes\n"
            "  --verify     load what `ltx2 generate` would (an LTX-2 checkpoint, or a Gemma-3 directory as\n"
            "               the text encoder) reading and checking every tensor (names, shapes, dtypes, NaN\n"
            "               and infinity), the DiT and Gemma without holding them in memory; says \"will\n"
            "               load\" or why not (exit 2/3)\n"
            "  --sharding PROFILE  with --mesh: each weight's mesh axes, per-rank shape and bytes under\n"
            "               MaxDiffusion's sharding profile PROFILE (ironwood, trillium, gpu, default)\n"
            "  --mesh D,F,C,T      mesh sizes over the data, fsdp, context and tensor axes, e.g. 1,1,2,4\n"
            "  -h, --help   this text\n");
}

typedef struct dtype_tally {
    size_t count[LTX2_DTYPE_COUNT];
    uint64_t params[LTX2_DTYPE_COUNT];
    uint64_t bytes;
    uint64_t total_params;
} dtype_tally;

static void tally_add(dtype_tally *t, const ltx2_tensor *v) {
    uint64_t n = (uint64_t)ltx2_tensor_numel(v);
    t->count[v->dtype]++;
    t->params[v->dtype] += n;
    t->total_params += n;
    t->bytes += n * ltx2_dtype_size(v->dtype);
}

static void print_tally(const char *indent, const dtype_tally *t, size_t n_tensors) {
    char a[32], b[32];
    printf("%stensors:    %zu, %s parameters, %s\n", indent, n_tensors,
           cli_human_count((double)t->total_params, a, sizeof(a)), cli_human_bytes((double)t->bytes, b, sizeof(b)));
    printf("%sdtypes:    ", indent);
    for (int d = 0; d < LTX2_DTYPE_COUNT; d++) {
        if (!t->count[d]) continue;
        printf(" %s x%zu (%s params)", ltx2_dtype_name((ltx2_dtype)d), t->count[d],
               cli_human_count((double)t->params[d], a, sizeof(a)));
    }
    printf("\n");
}

static void print_json_scalar(ltx2_sbuf *s, const ltx2_json *v) {
    switch (v->type) {
    case LTX2_JSON_NULL: ltx2_sbuf_printf(s, "null"); break;
    case LTX2_JSON_BOOL: ltx2_sbuf_printf(s, "%s", v->boolean ? "true" : "false"); break;
    case LTX2_JSON_NUMBER:
        if (v->is_int) ltx2_sbuf_printf(s, "%lld", (long long)v->integer);
        else ltx2_sbuf_printf(s, "%g", v->number);
        break;
    case LTX2_JSON_STRING: ltx2_sbuf_json_string(s, v->str, v->str_len); break;
    case LTX2_JSON_ARRAY: {
        ltx2_sbuf_printf(s, "[");
        for (size_t i = 0; i < v->count; i++) {
            if (i == 6) {
                ltx2_sbuf_printf(s, ", ... %zu items", v->count);
                break;
            }
            if (i) ltx2_sbuf_printf(s, ", ");
            if (v->items[i].type == LTX2_JSON_ARRAY || v->items[i].type == LTX2_JSON_OBJECT)
                ltx2_sbuf_printf(s, "%s", v->items[i].type == LTX2_JSON_ARRAY ? "[...]" : "{...}");
            else
                print_json_scalar(s, &v->items[i]);
        }
        ltx2_sbuf_printf(s, "]");
        break;
    }
    case LTX2_JSON_OBJECT: ltx2_sbuf_printf(s, "{%zu keys}", v->count); break;
    }
}

/* key=value pairs of one config object, wrapped, values abbreviated. */
static void print_config_object(const char *indent, const char *title, const ltx2_json *obj) {
    printf("%s%s:\n", indent, title);
    ltx2_sbuf line = {0};
    ltx2_sbuf item = {0};
    for (size_t i = 0; i < obj->count; i++) {
        item.len = 0;
        if (item.buf) item.buf[0] = '\0';
        ltx2_sbuf_printf(&item, "%s=", obj->keys[i]);
        print_json_scalar(&item, &obj->items[i]);
        if (line.len && line.len + item.len + 2 > INSPECT_WRAP_COLS) {
            printf("%s  %s\n", indent, line.buf);
            line.len = 0;
            line.buf[0] = '\0';
        }
        if (line.len) ltx2_sbuf_append(&line, "  ", 2);
        ltx2_sbuf_append(&line, item.buf ? item.buf : "", item.len);
    }
    if (line.len) printf("%s  %s\n", indent, line.buf);
    ltx2_sbuf_free(&line);
    ltx2_sbuf_free(&item);
}

/* The LTX-2 `config` is an object of sections (transformer, vae, ...); a diffusers config.json is
 * one flat object. Nested sections get their own paragraph. */
static void print_config(const char *indent, const ltx2_json *cfg) {
    bool sectioned = false;
    for (size_t i = 0; i < cfg->count; i++)
        if (cfg->items[i].type == LTX2_JSON_OBJECT) sectioned = true;
    if (!sectioned) {
        print_config_object(indent, "config", cfg);
        return;
    }
    for (size_t i = 0; i < cfg->count; i++) {
        char title[256];
        snprintf(title, sizeof(title), "config.%s", cfg->keys[i]);
        if (cfg->items[i].type == LTX2_JSON_OBJECT) print_config_object(indent, title, &cfg->items[i]);
    }
}

static void print_components(const ltx2_ckpt_info *info) {
    char a[32];
    printf("components:\n");
    for (int c = 0; c < LTX2_COMP_COUNT; c++) {
        if (!info->n_tensors[c]) continue;
        printf("  %-16s %6zu tensors  %12s params\n", ltx2_component_name((ltx2_component)c),
               info->n_tensors[c], cli_human_count((double)info->n_params[c], a, sizeof(a)));
    }
}

static void print_tensor_list(const ltx2_named_tensor *items, size_t n) {
    printf("tensors:\n");
    for (size_t i = 0; i < n; i++) {
        char shape[160], bytes[32];
        printf("  %-72s %-8s %-24s %s\n", items[i].name, ltx2_dtype_name(items[i].t.dtype),
               ltx2_shape_str(items[i].t.shape, items[i].t.ndim, shape, sizeof(shape)),
               cli_human_bytes((double)ltx2_tensor_nbytes(&items[i].t), bytes, sizeof(bytes)));
    }
}

static const char *layout_name(ltx2_layout l) {
    switch (l) {
    case LTX2_LAYOUT_SINGLE_FILE: return "Lightricks single-file checkpoint";
    case LTX2_LAYOUT_UPSAMPLER: return "latent upsampler";
    case LTX2_LAYOUT_DIFFUSERS: return "diffusers component";
    default: return "not recognised as LTX-2";
    }
}

/* A MaxDiffusion converted-weights cache (model/md_weights.h, what --maxdiffusion-weights reads): its
 * flax kernel of the patch projection names it; the blocks are stacked [L, ...] or per block. */
static bool print_md_cache(const char *indent, const ltx2_tensor_set *set) {
    bool is_md = false, stacked = false;
    int64_t layers = 0;
    for (size_t i = 0; i < set->n; i++) {
        const char *n = set->items[i].name;
        int64_t layer;
        const char *rest;
        if (!strcmp(n, LTX2_MD_CACHE_MARK)) is_md = true;
        if (!ltx2_md_block_key(n, &layer, &rest)) continue;
        if (layer >= 0) {
            if (layer + 1 > layers) layers = layer + 1;
        } else if (set->items[i].t.ndim > 0) {
            stacked = true;
            layers = set->items[i].t.shape[0];
        }
    }
    if (is_md)
        printf("%smodel:      MaxDiffusion converted-weights cache of an LTX-2 DiT (%lld blocks, %s; flax keys, "
               "kernels [in, out]): give it to generate with --maxdiffusion-weights beside its diffusers directory\n",
               indent, (long long)layers, stacked ? "stacked on a layer axis" : "one key set per block");
    return is_md;
}

/* Reports one tensor collection: a safetensors file/set, npy/npz, or a diffusers component. */
static int report_set(ltx2_context *ctx, const inspect_opts *o, const char *path, const char *label,
                      const char *config_text, size_t config_len, const char *config_label) {
    ltx2_tensor_set *set = NULL;
    if (ltx2_tensor_set_open(ctx, path, &set) != LTX2_OK) {
        cli_report_error("inspect", ctx);
        return CLI_EXIT_BAD_INPUT;
    }
    ltx2_json_doc *cfg_doc = NULL;
    const ltx2_json *cfg = NULL;
    if (config_text) {
        if (ltx2_json_parse(ctx, config_text, config_len, config_label, &cfg_doc) == LTX2_OK) {
            cfg = ltx2_json_root(cfg_doc);
            if (cfg->type != LTX2_JSON_OBJECT) cfg = NULL;
        } else {
            printf("%swarning:   %s\n", label ? "  " : "", ltx2_last_error(ctx));
        }
    }
    const char **names = malloc((set->n + 1) * sizeof(*names));
    int64_t *numels = malloc((set->n + 1) * sizeof(*numels));
    if (!names || !numels) {
        free(names);
        free(numels);
        ltx2_json_free(cfg_doc);
        ltx2_tensor_set_free(set);
        fprintf(stderr, "ltx2 inspect: out of memory\n");
        return CLI_EXIT_BAD_INPUT;
    }
    dtype_tally tally;
    memset(&tally, 0, sizeof(tally));
    for (size_t i = 0; i < set->n; i++) {
        names[i] = set->items[i].name;
        numels[i] = ltx2_tensor_numel(&set->items[i].t);
        tally_add(&tally, &set->items[i].t);
    }
    ltx2_ckpt_info info;
    ltx2_ckpt_classify(names, numels, set->n, cfg, &info);
    const char *indent = label ? "  " : "";
    if (label) printf("\n[%s]\n", label);
    if (set->n == 0) printf("%s(no tensors: a tokenizer or scheduler, or weights not downloaded)\n", indent);
    const bool md = info.layout == LTX2_LAYOUT_UNKNOWN && strcmp(set->kind, "safetensors") == 0 &&
                    print_md_cache(indent, set);
    if (!md && (strcmp(set->kind, "safetensors") == 0 || strcmp(set->kind, "directory") == 0)) {
        printf("%smodel:      %s", indent, layout_name(info.layout));
        if (info.layout != LTX2_LAYOUT_UNKNOWN)
            printf(", %s%s%s%s", ltx2_model_version_name(info.version), info.version_evidence[0] ? " (" : "",
                   info.version_evidence, info.version_evidence[0] ? ")" : "");
        printf("\n");
    }
    print_tally(indent, &tally, set->n);
    if (info.layout == LTX2_LAYOUT_SINGLE_FILE) print_components(&info);
    if (cfg) print_config(indent, cfg);
    if (o->list_tensors) print_tensor_list(set->items, set->n);
    free(names);
    free(numels);
    ltx2_json_free(cfg_doc);
    ltx2_tensor_set_free(set);
    return CLI_EXIT_OK;
}

/* One diffusers component folder: config.json + safetensors (maybe sharded). */
static int report_component(ltx2_context *ctx, const inspect_opts *o, const char *dir, const char *label) {
    char *cfg_path = ltx2_path_join(dir, "config.json");
    if (!cfg_path) return CLI_EXIT_BAD_INPUT;
    size_t len = 0;
    char *text = NULL;
    if (ltx2_path_is_file(cfg_path) && ltx2_file_read_all(ctx, cfg_path, &text, &len) != LTX2_OK)
        printf("warning:    %s\n", ltx2_last_error(ctx));
    int rc = report_set(ctx, o, dir, label, text, len, cfg_path);
    free(text);
    free(cfg_path);
    return rc;
}

static int inspect_dir(ltx2_context *ctx, const inspect_opts *o) {
    printf("file:       %s (directory)\n", o->path);
    char *index_path = ltx2_path_join(o->path, "model_index.json");
    char *cfg_path = ltx2_path_join(o->path, "config.json");
    int rc = CLI_EXIT_BAD_INPUT;
    size_t len = 0;
    char *text = NULL;
    ltx2_json_doc *doc = NULL;
    if (!index_path || !cfg_path) {
        fprintf(stderr, "ltx2 inspect: out of memory\n");
    } else if (!ltx2_path_is_file(index_path) && ltx2_names_is_diffusers_dir(o->path)) {
        /* an LTX-2 diffusers directory without model_index.json: its known component folders */
        static const char *const folders[] = {"transformer", "connectors", "vae", "audio_vae", "vocoder",
                                              "latent_upsampler"};
        printf("format:     diffusers LTX-2 directory (no model_index.json)\n");
        rc = CLI_EXIT_OK;
        for (size_t i = 0; i < sizeof folders / sizeof folders[0]; i++) {
            char *sub = ltx2_path_join(o->path, folders[i]);
            if (sub && ltx2_path_is_dir(sub)) {
                const int r = report_component(ctx, o, sub, folders[i]);
                if (r != CLI_EXIT_OK) rc = r;
            }
            free(sub);
        }
    } else if (!ltx2_path_is_file(index_path)) {
        bool component = ltx2_path_is_file(cfg_path);
        printf("format:     %s\n", component ? "diffusers component (config.json + safetensors)"
                                             : "tensor directory (dump)");
        rc = component ? report_component(ctx, o, o->path, NULL) : report_set(ctx, o, o->path, NULL, NULL, 0, NULL);
    } else if (ltx2_file_read_all(ctx, index_path, &text, &len) != LTX2_OK ||
               ltx2_json_parse(ctx, text, len, index_path, &doc) != LTX2_OK ||
               ltx2_json_root(doc)->type != LTX2_JSON_OBJECT) {
        if (doc) LTX2_ERROR(ctx, LTX2_ERR_FORMAT, "%s: expected a JSON object", index_path);
        cli_report_error("inspect", ctx);
    } else {
        const ltx2_json *root = ltx2_json_root(doc);
        const char *cls = ltx2_json_get_str(root, "_class_name");
        printf("format:     diffusers pipeline%s%s\n", cls ? " " : "", cls ? cls : "");
        rc = CLI_EXIT_OK;
        /* Components are the model_index entries ["library", "ClassName"] that have a folder. */
        for (size_t i = 0; i < root->count; i++) {
            const ltx2_json *v = &root->items[i];
            if (v->type != LTX2_JSON_ARRAY || v->count != 2) continue;
            const ltx2_json *klass = ltx2_json_at(v, 1);
            char *sub = ltx2_path_join(o->path, root->keys[i]);
            if (sub && ltx2_path_is_dir(sub)) {
                char label[512];
                snprintf(label, sizeof(label), "%s: %s", root->keys[i],
                         klass && klass->type == LTX2_JSON_STRING ? klass->str : "?");
                int r = report_component(ctx, o, sub, label);
                if (r != CLI_EXIT_OK) rc = r;
            }
            free(sub);
        }
    }
    free(text);
    ltx2_json_free(doc);
    free(index_path);
    free(cfg_path);
    return rc;
}

static int inspect_safetensors(ltx2_context *ctx, const inspect_opts *o) {
    ltx2_st_set *st = NULL;
    if (ltx2_st_set_open(ctx, o->path, &st) != LTX2_OK) {
        cli_report_error("inspect", ctx);
        return CLI_EXIT_BAD_INPUT;
    }
    char sz[32];
    uint64_t total = 0;
    for (size_t i = 0; i < st->n_files; i++) total += st->files[i]->file_size;
    printf("file:       %s (%s)\n", o->path, cli_human_bytes((double)total, sz, sizeof(sz)));
    if (st->index_path)
        printf("format:     sharded safetensors (%zu shards, index %s)\n", st->n_files, st->index_path);
    else
        printf("format:     safetensors (header %llu bytes)\n", (unsigned long long)st->files[0]->header_len);
    const ltx2_st_file *f0 = st->files[0];
    char *config = NULL; /* copied: the metadata lives in the mapping closed below */
    if (f0->n_meta) {
        printf("metadata:  ");
        for (size_t i = 0; i < f0->n_meta; i++) {
            size_t vl = strlen(f0->meta[i].value);
            if (!strcmp(f0->meta[i].key, "config")) {
                free(config);
                config = strdup(f0->meta[i].value);
                printf(" config=<JSON, %zu bytes>", vl);
            } else if (vl > 48) {
                printf(" %s=<%zu bytes>", f0->meta[i].key, vl);
            } else {
                printf(" %s=\"%s\"", f0->meta[i].key, f0->meta[i].value);
            }
        }
        printf("\n");
    }
    ltx2_st_set_close(st);
    int rc = report_set(ctx, o, o->path, NULL, config, config ? strlen(config) : 0, "metadata 'config'");
    free(config);
    return rc;
}

int cli_inspect(ltx2_context *ctx, int argc, char **argv) {
    inspect_opts o = {0};
    for (int i = 0; i < argc; i++) {
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            inspect_usage(stdout);
            return CLI_EXIT_OK;
        } else if (!strcmp(argv[i], "--tensors")) {
            o.list_tensors = true;
        } else if (!strcmp(argv[i], "--verify")) {
            o.verify = true;
        } else if (!strcmp(argv[i], "--sharding") || !strcmp(argv[i], "--mesh")) {
            const char **dst = argv[i][2] == 's' ? &o.sharding : &o.mesh;
            if (!(*dst = cli_flag_value("inspect", argc, argv, &i))) return CLI_EXIT_BAD_INPUT;
        } else if (argv[i][0] == '-') {
            fprintf(stderr, "ltx2 inspect: unknown option '%s'\n", argv[i]);
            inspect_usage(stderr);
            return CLI_EXIT_BAD_INPUT;
        } else if (o.path) {
            fprintf(stderr, "ltx2 inspect: one FILE|DIR at a time (got '%s' and '%s')\n", o.path, argv[i]);
            return CLI_EXIT_BAD_INPUT;
        } else {
            o.path = argv[i];
        }
    }
    if (!o.path) {
        inspect_usage(stderr);
        return CLI_EXIT_BAD_INPUT;
    }
    if (!o.sharding != !o.mesh) {
        fprintf(stderr, "ltx2 inspect: --sharding and --mesh go together (e.g. --sharding trillium --mesh 1,1,2,2)\n");
        return CLI_EXIT_BAD_INPUT;
    }
    if (o.sharding) return cli_inspect_sharding(ctx, o.sharding, o.mesh, o.path);
    if (o.verify) {
        if (!ltx2_path_is_file(o.path) && !ltx2_path_is_dir(o.path)) {
            fprintf(stderr, "ltx2 inspect: error: %s: no such file or directory\n", o.path);
            return CLI_EXIT_BAD_INPUT;
        }
        printf("file:       %s\n", o.path);
        return cli_inspect_verify(ctx, o.path);
    }
    if (ltx2_path_is_dir(o.path)) return inspect_dir(ctx, &o);
    if (!ltx2_path_is_file(o.path)) {
        fprintf(stderr, "ltx2 inspect: error: %s: no such file or directory\n", o.path);
        return CLI_EXIT_BAD_INPUT;
    }
    size_t n = strlen(o.path);
    if ((n > 12 && !strcmp(o.path + n - 12, ".safetensors")) || (n > 5 && !strcmp(o.path + n - 5, ".json")))
        return inspect_safetensors(ctx, &o);
    printf("file:       %s\n", o.path);
    return report_set(ctx, &o, o.path, NULL, NULL, 0, NULL);
}
