/* `ltx2 compare A B`: match tensors by name across .safetensors/.npy/.npz/dump directories (ours
 * or MaxDiffusion's module names, its scan-stacked blocks split per layer) and report, per tensor,
 * how far B is from the reference A. Exit 0 iff every compared tensor is within tolerance, 1 if any
 * is not, 2 on bad input (unreadable file, nothing in common, bad flags). */
#include <math.h>
#include <regex.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "core/metrics.h"
#include "core/dtype.h"
#include "io/json.h"
#include "io/tensor_set.h"
#include "model/names.h"

/* Defaults suit fp32 parity runs (our CPU reference vs PyTorch fp32): rounding-order noise in fp32
 * is ~1e-7 relative, deep pipelines accumulate to ~1e-5. bf16 runs want --atol 1e-2 --rtol 2e-2. */
#define COMPARE_DEFAULT_ATOL 1e-5
#define COMPARE_DEFAULT_RTOL 1e-4
/* Longest name column before names are left to overflow the table. */
#define COMPARE_MAX_NAME_COL 64
/* Longest tensor name that is renamed (MaxDiffusion spelling) or shown with a layer index. */
#define COMPARE_NAME_CAP 512
/* The module MaxDiffusion's scan_layers stacks: `transformer_blocks.<rest>` with a leading layer
 * axis [L, ...] holds our `transformer_blocks.<i>.<rest>` for i < L. */
#define COMPARE_STACK_PART "transformer_blocks"

typedef struct compare_opts {
    const char *a, *b;
    ltx2_diff_rule rule; /* --atol / --rtol, or --bf16-ulps */
    const char *only;
    bool json, require_all;
    bool map_names; /* --names maxdiffusion (default): unmatched names are tried in our spelling */
} compare_opts;

typedef struct row {
    ltx2_named_tensor a, b; /* views; one may be a layer of a scan-stacked tensor */
    char stacked;           /* 'A' or 'B': that side is layer `layer` of its [L, ...] tensor; else 0 */
    int64_t layer;
    bool shape_ok, squeezed, pass;
    /* one side per sample, the other per token and constant over its tokens: compared per sample
     * (which side was collapsed: 'A' or 'B', else 0) */
    char collapsed;
    ltx2_diff_stats st;
} row;

static void compare_usage(FILE *out) {
    fprintf(out,
            "usage: ltx2 compare [options] A B\n"
            "\n"
            "A is the reference, B the tensors under test. Each may be a .safetensors file, a\n"
            "*.safetensors.index.json, a .npy, a .npz, or a directory of these (a dump: a .npy at\n"
            "DIR/blocks/0/out.npy is named 'blocks.0.out'; .safetensors/.npz inside contribute their keys).\n"
            "Tensors are matched by name; dtypes may differ (all math is in float64); shapes must match,\n"
            "or differ only by size-1 dims (JAX [1,S,D] vs [S,D]). Two inputs of one tensor each are\n"
            "compared whatever their names. A tensor constant over trailing dims the other lacks (a\n"
            "per-token timestep [B, T] whose tokens share one sigma, against a per-sample [B]) is\n"
            "compared on the shared leading dims.\n"
            "\n"
            "Names: a name with no match on the other side is tried in our (ltx-core) spelling of\n"
            "MaxDiffusion's / diffusers' DiT modules, whole dot-separated parts renamed: proj_in ->\n"
            "patchify_proj, time_embed -> adaln_single, av_cross_attn_* -> av_ca_*, norm_q -> q_norm,\n"
            "rope / audio_rope -> video_args.pe / audio_args.pe, ... (the table of src/model/names.c).\n"
            "A scan-stacked 'transformer_blocks.REST' [L, ...] (MaxDiffusion's scan_layers) is compared\n"
            "layer by layer with 'transformer_blocks.I.REST' when the other side has exactly those L\n"
            "layers; such rows read 'transformer_blocks.[I].REST'. Rows show both names when they differ.\n"
            "\n"
            "An element is within tolerance when |a - b| <= atol + rtol*|a|; NaN matches NaN.\n"
            "  --atol X        absolute tolerance (default %g)\n"
            "  --rtol X        relative tolerance (default %g)\n"
            "  --bf16-ulps N   instead: within when |a - b| <= N bf16 ulps of the larger of |a|, |b|\n"
            "                  (bf16 runs, e.g. --precision tpu against MaxDiffusion: one ulp is a\n"
            "                  rounding tie tipped the other way, a different rule moves most values\n"
            "                  by more); adds the columns 'ulps' (the largest) and '>1 ulp' (how many)\n"
            "  --only REGEX    compare only names matching this extended regex\n"
            "  --require-all   tensors present on one side only count as failures\n"
            "  --names MODE    maxdiffusion (default): the renames and layer stacking above; none: exact\n"
            "                  names only\n"
            "  --json          print one JSON object instead of the table (an error too: {\"error\": ...})\n"
            "  -h, --help      this text\n"
            "\n"
            "Reported per tensor: max |a-b|, mean |a-b|, rel-L2 = ||a-b||/||a||, cosine, the fraction of\n"
            "elements within tolerance, and the worst element (index, a, b).\n"
            "Exit status: 0 all within tolerance, 1 some are not, 2 bad input.\n",
            COMPARE_DEFAULT_ATOL, COMPARE_DEFAULT_RTOL);
}

/* Shapes equal after dropping size-1 dims. */
static bool squeeze_equal(const ltx2_tensor *a, const ltx2_tensor *b) {
    int i = 0, j = 0;
    for (;;) {
        while (i < a->ndim && a->shape[i] == 1) i++;
        while (j < b->ndim && b->shape[j] == 1) j++;
        if (i == a->ndim || j == b->ndim) return i == a->ndim && j == b->ndim;
        if (a->shape[i] != b->shape[j]) return false;
        i++;
        j++;
    }
}

/* When small's shape is big's leading dims and big is constant over its trailing ones (each run of
 * trailing elements equal to its first, as a per-token timestep is when every token shares one
 * sigma: [B] against [B, T]), a malloc'd f64 copy of big's first elements in small's shape; else
 * NULL. */
static double *collapse_trailing(const ltx2_tensor *small, const ltx2_tensor *big) {
    if (small->ndim >= big->ndim) return NULL;
    for (int d = 0; d < small->ndim; d++)
        if (small->shape[d] != big->shape[d]) return NULL;
    int64_t rows = 1, inner = 1;
    for (int d = 0; d < small->ndim; d++) rows *= small->shape[d];
    for (int d = small->ndim; d < big->ndim; d++) inner *= big->shape[d];
    if (inner < 2 || rows < 1) return NULL;
    double *out = malloc((size_t)rows * sizeof(double));
    for (int64_t r = 0; out && r < rows; r++) {
        const double first = ltx2_load_as_f64(big->data, big->dtype, (size_t)(r * inner));
        for (int64_t i = 1; i < inner; i++) {
            const double v = ltx2_load_as_f64(big->data, big->dtype, (size_t)(r * inner + i));
            if (v != first && !(v != v && first != first)) {
                free(out);
                return NULL;
            }
        }
        out[r] = first;
    }
    return out;
}

/* The shape the elements were compared in (the smaller one when a side was collapsed). */
static const ltx2_tensor *compared_shape(const row *r) { return r->collapsed == 'A' ? &r->b.t : &r->a.t; }

/* Where REST starts in `...transformer_blocks.REST` (the whole dot-separated part), else -1. */
static int stack_rest(const char *name) {
    const size_t n = strlen(COMPARE_STACK_PART);
    for (const char *p = name; p; p = strchr(p, '.'), p = p ? p + 1 : NULL)
        if (strncmp(p, COMPARE_STACK_PART, n) == 0 && p[n] == '.') return (int)(p - name + (ptrdiff_t)n + 1);
    return -1;
}

/* The row's name on one side ('A' or 'B'): a stacked side reads `transformer_blocks.[I].REST`. */
static const char *row_name(const row *r, char side, char *buf, size_t cap) {
    const char *name = side == 'A' ? r->a.name : r->b.name;
    const int head = stack_rest(name);
    if (r->stacked != side || head < 0) return name;
    snprintf(buf, cap, "%.*s[%lld].%s", head, name, (long long)r->layer, name + head);
    return buf;
}

static void json_num(ltx2_sbuf *s, const char *key, double v) {
    if (isfinite(v)) ltx2_sbuf_printf(s, "\"%s\": %.9g", key, v);
    else ltx2_sbuf_printf(s, "\"%s\": null", key);
}

static void json_shape(ltx2_sbuf *s, const char *key, const ltx2_tensor *t) {
    ltx2_sbuf_printf(s, "\"%s\": [", key);
    for (int d = 0; d < t->ndim; d++) ltx2_sbuf_printf(s, "%s%lld", d ? ", " : "", (long long)t->shape[d]);
    ltx2_sbuf_printf(s, "]");
}

static void print_json(const compare_opts *o, const row *rows, size_t n, const ltx2_tensor_set *A,
                       const ltx2_tensor_set *B, const bool *matched_a, const bool *matched_b, const regex_t *re,
                       bool pass) {
    ltx2_sbuf s = {0};
    ltx2_sbuf_printf(&s, "{\"a\": ");
    ltx2_sbuf_json_string(&s, o->a, strlen(o->a));
    ltx2_sbuf_printf(&s, ", \"b\": ");
    ltx2_sbuf_json_string(&s, o->b, strlen(o->b));
    ltx2_sbuf_printf(&s, ", ");
    json_num(&s, "atol", o->rule.atol);
    ltx2_sbuf_printf(&s, ", ");
    json_num(&s, "rtol", o->rule.rtol);
    if (o->rule.bf16_ulps > 0) {
        ltx2_sbuf_printf(&s, ", ");
        json_num(&s, "bf16_ulps", o->rule.bf16_ulps);
    }
    ltx2_sbuf_printf(&s, ", \"tensors\": [");
    for (size_t i = 0; i < n; i++) {
        const row *r = &rows[i];
        char na[COMPARE_NAME_CAP], nb[COMPARE_NAME_CAP];
        const char *name_a = row_name(r, 'A', na, sizeof na), *name_b = row_name(r, 'B', nb, sizeof nb);
        ltx2_sbuf_printf(&s, "%s\n  {\"name\": ", i ? "," : "");
        ltx2_sbuf_json_string(&s, name_a, strlen(name_a));
        if (strcmp(name_a, name_b) != 0) {
            ltx2_sbuf_printf(&s, ", \"name_b\": ");
            ltx2_sbuf_json_string(&s, name_b, strlen(name_b));
        }
        if (r->stacked) ltx2_sbuf_printf(&s, ", \"layer\": %lld", (long long)r->layer);
        ltx2_sbuf_printf(&s, ", \"pass\": %s, ", r->pass ? "true" : "false");
        json_shape(&s, "shape_a", &r->a.t);
        ltx2_sbuf_printf(&s, ", ");
        json_shape(&s, "shape_b", &r->b.t);
        ltx2_sbuf_printf(&s, ", \"dtype_a\": \"%s\", \"dtype_b\": \"%s\"", ltx2_dtype_name(r->a.t.dtype),
                         ltx2_dtype_name(r->b.t.dtype));
        if (!r->shape_ok) {
            ltx2_sbuf_printf(&s, ", \"error\": \"shape mismatch\"}");
            continue;
        }
        ltx2_sbuf_printf(&s, ", \"n\": %lld, ", (long long)r->st.n);
        json_num(&s, "max_abs", r->st.max_abs);
        ltx2_sbuf_printf(&s, ", ");
        json_num(&s, "mean_abs", r->st.mean_abs);
        ltx2_sbuf_printf(&s, ", ");
        json_num(&s, "rel_l2", r->st.rel_l2);
        ltx2_sbuf_printf(&s, ", ");
        json_num(&s, "cosine", r->st.cosine);
        ltx2_sbuf_printf(&s, ", ");
        json_num(&s, "within_fraction", r->st.n ? (double)r->st.n_within / (double)r->st.n : 1.0);
        ltx2_sbuf_printf(&s, ", ");
        json_num(&s, "max_bf16_ulps", r->st.max_bf16_ulps);
        ltx2_sbuf_printf(&s, ", \"n_over_bf16_ulp\": %lld", (long long)r->st.n_over_bf16_ulp);
        ltx2_sbuf_printf(&s, ", \"n_within\": %lld, \"n_nonfinite_mismatch\": %lld",
                         (long long)r->st.n_within, (long long)r->st.n_nonfinite_mismatch);
        if (r->st.worst_index >= 0) {
            char idx[256];
            const ltx2_tensor *ct = compared_shape(r);
            ltx2_index_str(r->st.worst_index, ct->shape, ct->ndim, idx, sizeof(idx));
            ltx2_sbuf_printf(&s, ", \"worst_index\": %s, \"worst_flat_index\": %lld, ", idx,
                             (long long)r->st.worst_index);
            json_num(&s, "worst_a", r->st.worst_ref);
            ltx2_sbuf_printf(&s, ", ");
            json_num(&s, "worst_b", r->st.worst_out);
        }
        ltx2_sbuf_printf(&s, "}");
    }
    ltx2_sbuf_printf(&s, "],\n \"only_in_a\": [");
    size_t k = 0;
    for (size_t i = 0; i < A->n; i++) {
        if (re && regexec(re, A->items[i].name, 0, NULL, 0) != 0) continue;
        if (matched_a[i]) continue;
        ltx2_sbuf_printf(&s, "%s", k++ ? ", " : "");
        ltx2_sbuf_json_string(&s, A->items[i].name, strlen(A->items[i].name));
    }
    ltx2_sbuf_printf(&s, "], \"only_in_b\": [");
    k = 0;
    for (size_t i = 0; i < B->n; i++) {
        if (matched_b[i] || (re && regexec(re, B->items[i].name, 0, NULL, 0) != 0)) continue;
        ltx2_sbuf_printf(&s, "%s", k++ ? ", " : "");
        ltx2_sbuf_json_string(&s, B->items[i].name, strlen(B->items[i].name));
    }
    ltx2_sbuf_printf(&s, "], \"pass\": %s}\n", pass ? "true" : "false");
    if (s.oom) fprintf(stderr, "ltx2 compare: out of memory writing JSON\n");
    else fputs(s.buf, stdout);
    ltx2_sbuf_free(&s);
}

/* With --json an error is a JSON object too ({"error": ..., "pass": false}), so a script reading
 * stdout always gets JSON; the message also goes to stderr as without --json. */
static void json_error(const compare_opts *o, const char *msg) {
    if (!o->json) return;
    ltx2_sbuf s = {0};
    ltx2_sbuf_printf(&s, "{\"a\": ");
    ltx2_sbuf_json_string(&s, o->a ? o->a : "", o->a ? strlen(o->a) : 0);
    ltx2_sbuf_printf(&s, ", \"b\": ");
    ltx2_sbuf_json_string(&s, o->b ? o->b : "", o->b ? strlen(o->b) : 0);
    ltx2_sbuf_printf(&s, ", \"error\": ");
    ltx2_sbuf_json_string(&s, msg, strlen(msg));
    ltx2_sbuf_printf(&s, ", \"pass\": false}");
    if (!s.oom) printf("%s\n", s.buf);
    ltx2_sbuf_free(&s);
}

static void print_row(const row *r, int name_w, const compare_opts *o) {
    char shape[96], dt[32], na[COMPARE_NAME_CAP], nb[COMPARE_NAME_CAP];
    const char *name_a = row_name(r, 'A', na, sizeof na), *name_b = row_name(r, 'B', nb, sizeof nb);
    ltx2_shape_str(r->a.t.shape, r->a.t.ndim, shape, sizeof(shape));
    snprintf(dt, sizeof(dt), "%s/%s", ltx2_dtype_name(r->a.t.dtype), ltx2_dtype_name(r->b.t.dtype));
    if (!r->shape_ok) {
        char sb[96];
        printf("  %-6s %-*s %-18s %-10s shape mismatch: A %s vs B %s", "FAIL", name_w, name_a, shape, dt, shape,
               ltx2_shape_str(r->b.t.shape, r->b.t.ndim, sb, sizeof(sb)));
        if (strcmp(name_a, name_b) != 0) printf("  (B: %s)", name_b);
        printf("\n");
        return;
    }
    double frac = r->st.n ? 100.0 * (double)r->st.n_within / (double)r->st.n : 100.0;
    char within[32];
    snprintf(within, sizeof within, "%.4f%%", frac);
    printf("  %-6s %-*s %-18s %-10s %-10.3e %-10.3e %-10.3e %-12.8f %s", r->pass ? "ok" : "FAIL", name_w, name_a,
           shape, dt, r->st.max_abs, r->st.mean_abs, r->st.rel_l2, r->st.cosine, within);
    if (o->rule.bf16_ulps > 0)
        printf("%*s %-8.3g %lld", 9 - (int)strlen(within), "", r->st.max_bf16_ulps, (long long)r->st.n_over_bf16_ulp);
    if (strcmp(name_a, name_b) != 0) printf("  (B: %s)", name_b);
    if (r->squeezed) printf("  (B shape differs by size-1 dims)");
    if (r->collapsed)
        printf("  (%c is constant over its trailing dims: compared per %s)", r->collapsed,
               r->collapsed == 'A' ? "B's element" : "A's element");
    printf("\n");
    if (!r->pass && r->st.worst_index >= 0) {
        char idx[256];
        const ltx2_tensor *ct = compared_shape(r);
        ltx2_index_str(r->st.worst_index, ct->shape, ct->ndim, idx, sizeof(idx));
        double tol = ltx2_diff_tolerance(&o->rule, r->st.worst_ref, r->st.worst_out);
        printf("  %-6s %-*s worst at %s: a=%.9g b=%.9g |a-b|=%.3e > tol %.3e; %lld of %lld elements outside",
               "", name_w, "", idx, r->st.worst_ref, r->st.worst_out, fabs(r->st.worst_ref - r->st.worst_out), tol,
               (long long)(r->st.n - r->st.n_within), (long long)r->st.n);
        if (r->st.n_nonfinite_mismatch)
            printf(" (%lld NaN/Inf mismatches)", (long long)r->st.n_nonfinite_mismatch);
        printf("\n");
    }
}

/* Compares r->a with r->b: equal shapes, shapes equal but for size-1 dims, or one side constant
 * over trailing dims the other lacks (then compared per element of the smaller). */
static void compare_row(row *r, const compare_opts *o) {
    const ltx2_tensor *ta = &r->a.t, *tb = &r->b.t;
    r->shape_ok = ltx2_tensor_same_shape(ta, tb);
    if (!r->shape_ok && squeeze_equal(ta, tb)) r->shape_ok = r->squeezed = true;
    if (r->shape_ok) {
        ltx2_diff_by(ta, tb, &o->rule, &r->st);
        r->pass = r->st.n_within == r->st.n;
        return;
    }
    double *ca = collapse_trailing(tb, ta), *cb = ca ? NULL : collapse_trailing(ta, tb);
    if (ca || cb) {
        const ltx2_tensor *small = ca ? tb : ta;
        const ltx2_tensor c = ltx2_tensor_make(ca ? ca : cb, LTX2_F64, small->ndim, small->shape);
        ltx2_diff_by(ca ? &c : ta, ca ? tb : &c, &o->rule, &r->st);
        r->pass = r->st.n_within == r->st.n;
        r->shape_ok = true;
        r->collapsed = ca ? 'A' : 'B';
    }
    free(ca);
    free(cb);
}

/* One input: its tensors, their names in our spelling and which are compared already. */
typedef struct side {
    const ltx2_tensor_set *set;
    char *canon; /* set->n names of COMPARE_NAME_CAP; "" when a name does not fit */
    bool *matched;
} side;

static const char *canon_of(const side *s, size_t i) { return s->canon + i * COMPARE_NAME_CAP; }

/* The tensor of s not compared yet whose name in our spelling is name, else -1. */
static ptrdiff_t find_canon(const side *s, const char *name) {
    for (size_t i = 0; name[0] && i < s->set->n; i++)
        if (!s->matched[i] && strcmp(canon_of(s, i), name) == 0) return (ptrdiff_t)i;
    return -1;
}

/* `...transformer_blocks.REST` -> `...transformer_blocks.<layer>.REST` (or back, layer < 0, when
 * REST starts with a layer number). False when name is neither form or buf is short. */
static bool restack(const char *name, int64_t layer, char *buf, size_t cap) {
    const int head = stack_rest(name);
    if (head < 0) return false;
    const char *rest = name + head, *end = rest;
    while (*end >= '0' && *end <= '9') end++;
    const bool per_layer = end > rest && *end == '.';
    if (per_layer == (layer >= 0)) return false;
    const int n = per_layer ? snprintf(buf, cap, "%.*s%s", head, name, end + 1)
                            : snprintf(buf, cap, "%.*s%lld.%s", head, name, (long long)layer, rest);
    return n > 0 && (size_t)n < cap;
}

/* Layer k of a stacked [L, ...] tensor (contiguous, as every tensor of a set is). */
static ltx2_named_tensor layer_of(const ltx2_named_tensor *t, int64_t k) {
    ltx2_named_tensor l = *t;
    const size_t inner = (size_t)(ltx2_tensor_numel(&t->t) / t->t.shape[0]);
    l.t = ltx2_tensor_make((char *)t->t.data + (size_t)k * inner * ltx2_dtype_size(t->t.dtype), t->t.dtype,
                           t->t.ndim - 1, t->t.shape + 1);
    return l;
}

/* When tensor si of st is scan-stacked [L, ...] and ot has its L layers (exactly: 0..L-1, no L),
 * appends one row per layer and marks them all compared. which: 'A' or 'B', the side st is. */
static bool expand_stack(side *st, size_t si, side *ot, char which, row *rows, size_t *n_rows) {
    const ltx2_named_tensor *t = &st->set->items[si];
    const int64_t L = t->t.ndim >= 1 ? t->t.shape[0] : 0;
    char name[COMPARE_NAME_CAP];
    if (L < 1) return false;
    for (int64_t k = 0; k <= L; k++) {
        const bool have = restack(canon_of(st, si), k, name, sizeof name) && find_canon(ot, name) >= 0;
        if (have != (k < L)) return false;
    }
    for (int64_t k = 0; k < L; k++) {
        restack(canon_of(st, si), k, name, sizeof name);
        const size_t j = (size_t)find_canon(ot, name);
        ot->matched[j] = true;
        row *r = &rows[(*n_rows)++];
        r->a = which == 'A' ? layer_of(t, k) : ot->set->items[j];
        r->b = which == 'A' ? ot->set->items[j] : layer_of(t, k);
        r->stacked = which;
        r->layer = k;
    }
    st->matched[si] = true;
    return true;
}

int cli_compare(ltx2_context *ctx, int argc, char **argv) {
    compare_opts o = {.rule = {.atol = COMPARE_DEFAULT_ATOL, .rtol = COMPARE_DEFAULT_RTOL}, .map_names = true};
    for (int i = 0; i < argc; i++) {
        const char *arg = argv[i], *v;
        if (!strcmp(arg, "-h") || !strcmp(arg, "--help")) {
            compare_usage(stdout);
            return CLI_EXIT_OK;
        } else if (!strcmp(arg, "--atol") || !strcmp(arg, "--rtol")) {
            double *dst = arg[2] == 'a' ? &o.rule.atol : &o.rule.rtol;
            if (!(v = cli_flag_value("compare", argc, argv, &i)) || !cli_parse_double("compare", arg, v, dst))
                return CLI_EXIT_BAD_INPUT;
            if (*dst < 0) {
                fprintf(stderr, "ltx2 compare: %s must be >= 0, got %s\n", arg, v);
                return CLI_EXIT_BAD_INPUT;
            }
        } else if (!strcmp(arg, "--bf16-ulps")) {
            if (!(v = cli_flag_value("compare", argc, argv, &i)) ||
                !cli_parse_double("compare", arg, v, &o.rule.bf16_ulps))
                return CLI_EXIT_BAD_INPUT;
            if (!(o.rule.bf16_ulps > 0)) {
                fprintf(stderr, "ltx2 compare: --bf16-ulps must be > 0, got %s\n", v);
                return CLI_EXIT_BAD_INPUT;
            }
        } else if (!strcmp(arg, "--only")) {
            if (!(o.only = cli_flag_value("compare", argc, argv, &i))) return CLI_EXIT_BAD_INPUT;
        } else if (!strcmp(arg, "--names")) {
            if (!(v = cli_flag_value("compare", argc, argv, &i))) return CLI_EXIT_BAD_INPUT;
            if (strcmp(v, "maxdiffusion") != 0 && strcmp(v, "none") != 0) {
                fprintf(stderr, "ltx2 compare: --names must be maxdiffusion or none, got '%s'\n", v);
                return CLI_EXIT_BAD_INPUT;
            }
            o.map_names = strcmp(v, "none") != 0;
        } else if (!strcmp(arg, "--json")) {
            o.json = true;
        } else if (!strcmp(arg, "--require-all")) {
            o.require_all = true;
        } else if (arg[0] == '-' && arg[1] != '\0') {
            fprintf(stderr, "ltx2 compare: unknown option '%s' (see ltx2 compare --help)\n", arg);
            return CLI_EXIT_BAD_INPUT;
        } else if (!o.a) {
            o.a = arg;
        } else if (!o.b) {
            o.b = arg;
        } else {
            fprintf(stderr, "ltx2 compare: expected two inputs A B, got a third: '%s'\n", arg);
            return CLI_EXIT_BAD_INPUT;
        }
    }
    if (!o.a || !o.b) {
        compare_usage(stderr);
        return CLI_EXIT_BAD_INPUT;
    }
    regex_t re;
    if (o.only) {
        int rc = regcomp(&re, o.only, REG_EXTENDED | REG_NOSUB);
        if (rc != 0) {
            char msg[256];
            regerror(rc, &re, msg, sizeof(msg));
            fprintf(stderr, "ltx2 compare: --only '%s' is not a valid extended regex: %s\n", o.only, msg);
            return CLI_EXIT_BAD_INPUT;
        }
    }
    ltx2_tensor_set *A = NULL, *B = NULL;
    row *rows = NULL;
    side sa = {0}, sb = {0};
    int rc = CLI_EXIT_BAD_INPUT;
    if (ltx2_tensor_set_open(ctx, o.a, &A) != LTX2_OK || ltx2_tensor_set_open(ctx, o.b, &B) != LTX2_OK) {
        cli_report_error("compare", ctx);
        json_error(&o, ltx2_last_error(ctx));
        goto done;
    }
    /* every row compares a tensor of A or of B no other row does */
    rows = calloc(A->n + B->n + 1, sizeof(*rows));
    sa = (side){A, calloc(A->n + 1, COMPARE_NAME_CAP), calloc(A->n + 1, sizeof(bool))};
    sb = (side){B, calloc(B->n + 1, COMPARE_NAME_CAP), calloc(B->n + 1, sizeof(bool))};
    if (!rows || !sa.canon || !sa.matched || !sb.canon || !sb.matched) {
        fprintf(stderr, "ltx2 compare: out of memory\n");
        goto done;
    }
    for (size_t i = 0; o.map_names && i < A->n; i++)
        if (!ltx2_names_module_to_lt(A->items[i].name, sa.canon + i * COMPARE_NAME_CAP, COMPARE_NAME_CAP))
            sa.canon[i * COMPARE_NAME_CAP] = '\0';
    for (size_t i = 0; o.map_names && i < B->n; i++)
        if (!ltx2_names_module_to_lt(B->items[i].name, sb.canon + i * COMPARE_NAME_CAP, COMPARE_NAME_CAP))
            sb.canon[i * COMPARE_NAME_CAP] = '\0';
    bool *matched_a = sa.matched, *matched_b = sb.matched;
    size_t n_rows = 0, n_only_a = 0, n_only_b = 0, n_fail = 0;
    bool paired_by_position = false;
    int name_w = 4;
    for (size_t i = 0; i < A->n; i++) {
        const ltx2_named_tensor *ta = &A->items[i];
        if (matched_a[i] || (o.only && regexec(&re, ta->name, 0, NULL, 0) != 0)) continue;
        const ltx2_named_tensor *tb = ltx2_tensor_set_find(B, ta->name);
        if (tb && matched_b[tb - B->items]) tb = NULL;
        ptrdiff_t j = tb ? -1 : find_canon(&sb, canon_of(&sa, i));
        if (j >= 0) tb = &B->items[j];
        char stacked[COMPARE_NAME_CAP];
        /* MaxDiffusion's scan-stacked blocks: on A's side, or on B's against A's per-layer tensors */
        if (!tb && o.map_names && expand_stack(&sa, i, &sb, 'A', rows, &n_rows)) continue;
        if (!tb && o.map_names && restack(canon_of(&sa, i), -1, stacked, sizeof stacked) &&
            (j = find_canon(&sb, stacked)) >= 0 && expand_stack(&sb, (size_t)j, &sa, 'B', rows, &n_rows))
            continue;
        /* two lone tensors (e.g. two .npy files of different stems, a TPU dump and ours) are the
         * pair to compare whatever their names */
        if (!tb && A->n == 1 && B->n == 1 && !o.only) {
            tb = &B->items[0];
            paired_by_position = true;
        }
        if (!tb) continue;
        matched_a[i] = matched_b[tb - B->items] = true;
        rows[n_rows++] = (row){.a = *ta, .b = *tb};
    }
    for (size_t i = 0; i < n_rows; i++) {
        row *r = &rows[i];
        compare_row(r, &o);
        if (!r->pass) n_fail++;
        char buf[COMPARE_NAME_CAP];
        int len = (int)strlen(row_name(r, 'A', buf, sizeof buf));
        if (len > name_w) name_w = len < COMPARE_MAX_NAME_COL ? len : COMPARE_MAX_NAME_COL;
    }
    for (size_t i = 0; i < A->n; i++)
        if (!matched_a[i] && !(o.only && regexec(&re, A->items[i].name, 0, NULL, 0) != 0)) n_only_a++;
    for (size_t i = 0; i < B->n; i++)
        if (!matched_b[i] && !(o.only && regexec(&re, B->items[i].name, 0, NULL, 0) != 0)) n_only_b++;
    if (n_rows == 0) {
        char msg[512];
        snprintf(msg, sizeof msg, "no tensor names in common between %s (%zu tensors) and %s (%zu tensors)%s%s%s",
                 o.a, A->n, o.b, B->n, o.only ? " matching --only '" : "", o.only ? o.only : "", o.only ? "'" : "");
        fprintf(stderr, "ltx2 compare: error: %s\n", msg);
        json_error(&o, msg);
        if (A->n && B->n)
            fprintf(stderr, "  e.g. A has '%s', B has '%s'\n", A->items[0].name, B->items[0].name);
        goto done;
    }
    bool pass = n_fail == 0 && !(o.require_all && (n_only_a || n_only_b));
    rc = pass ? CLI_EXIT_OK : CLI_EXIT_FAIL;
    if (o.json) {
        print_json(&o, rows, n_rows, A, B, matched_a, matched_b, o.only ? &re : NULL, pass);
        goto done;
    }
    printf("A (reference): %s (%s, %zu tensors)\n", o.a, A->kind, A->n);
    printf("B:             %s (%s, %zu tensors)\n", o.b, B->kind, B->n);
    if (paired_by_position)
        printf("one tensor on each side: '%s' (A) compared with '%s' (B)\n", rows[0].a.name, rows[0].b.name);
    if (o.rule.bf16_ulps > 0)
        printf("within tolerance: |a - b| <= %g bf16 ulps of max(|a|, |b|)\n\n", o.rule.bf16_ulps);
    else
        printf("within tolerance: |a - b| <= atol + rtol*|a|, atol=%g rtol=%g\n\n", o.rule.atol, o.rule.rtol);
    printf("  %-6s %-*s %-18s %-10s %-10s %-10s %-10s %-12s %s", "result", name_w, "name", "shape", "dtype A/B",
           "max|a-b|", "mean|a-b|", "rel-L2", "cosine", o.rule.bf16_ulps > 0 ? "within    ulps     >1 ulp" : "within");
    printf("\n");
    for (size_t i = 0; i < n_rows; i++) print_row(&rows[i], name_w, &o);
    if (n_only_a || n_only_b) printf("\n");
    for (size_t i = 0, k = 0; i < A->n && n_only_a; i++) {
        if (matched_a[i] || (o.only && regexec(&re, A->items[i].name, 0, NULL, 0) != 0)) continue;
        if (k++ == 0) printf("only in A (%zu):", n_only_a);
        printf(" %s", A->items[i].name);
    }
    if (n_only_a) printf("\n");
    for (size_t i = 0, k = 0; i < B->n && n_only_b; i++) {
        if (matched_b[i] || (o.only && regexec(&re, B->items[i].name, 0, NULL, 0) != 0)) continue;
        if (k++ == 0) printf("only in B (%zu):", n_only_b);
        printf(" %s", B->items[i].name);
    }
    if (n_only_b) printf("\n");
    printf("\nsummary: %zu compared, %zu within tolerance, %zu FAIL", n_rows, n_rows - n_fail, n_fail);
    if (n_only_a || n_only_b)
        printf("; %zu only in A, %zu only in B%s", n_only_a, n_only_b,
               o.require_all ? " (counted as failures: --require-all)" : "");
    printf("\n");
done:
    if (o.only) regfree(&re);
    free(rows);
    free(sa.canon);
    free(sa.matched);
    free(sb.canon);
    free(sb.matched);
    ltx2_tensor_set_free(A);
    ltx2_tensor_set_free(B);
    return rc;
}
