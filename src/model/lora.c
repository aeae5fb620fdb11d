/* LoRA adapters (lora.h): pairing each adapter's A and B tensors under the DiT's module names, and
 * the fused product ltx-core adds to a weight at load. */
#include "model/lora.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "core/context.h"
#include "core/dtype.h"
#include "io/file.h"
#include "io/json.h"
#include "io/safetensors.h"
#include "model/names.h"

#define LORA_SUFFIX_A ".lora_A.weight"
#define LORA_SUFFIX_B ".lora_B.weight"
/* ltx-core / ComfyUI keys (LTXV_LORA_COMFY_RENAMING_MAP strips this), diffusers / PEFT keys. */
#define LORA_PREFIX_LTX "diffusion_model."
#define LORA_PREFIX_DIFFUSERS "transformer."
/* What names.c puts before a DiT tensor of the single file. */
#define LT_DIT_PREFIX "model.diffusion_model."
#define LORA_NAME_CAP 256
/* Offending keys named in one message before "and N more". */
#define LORA_REPORT_FIRST 3

typedef struct lora_pair {
    char module[LORA_NAME_CAP]; /* the DiT weight it adds to: "<ltx-core module>.weight" */
    const ltx2_st_tensor *a, *b; /* [rank, in], [out, rank] */
    int file;
    bool used;
} lora_pair;

struct ltx2_lora_set {
    ltx2_st_file **files;
    const ltx2_lora_spec *specs;
    int n;
    lora_pair *pairs;
    int64_t n_pairs;
};

/* The DiT weight name of an adapter key's module (key without its lora_A/B suffix). */
static bool module_of(const char *base, char *out, size_t cap) {
    if (!strncmp(base, LORA_PREFIX_LTX, strlen(LORA_PREFIX_LTX))) {
        const int n = snprintf(out, cap, "%s.weight", base + strlen(LORA_PREFIX_LTX));
        return n > 0 && (size_t)n < cap;
    }
    if (!strncmp(base, LORA_PREFIX_DIFFUSERS, strlen(LORA_PREFIX_DIFFUSERS))) {
        char df[LORA_NAME_CAP], lt[LORA_NAME_CAP + 64];
        const int n = snprintf(df, sizeof df, "%s.weight", base + strlen(LORA_PREFIX_DIFFUSERS));
        if (n <= 0 || (size_t)n >= sizeof df || !ltx2_names_df_to_lt(LTX2_DF_TRANSFORMER, df, lt, sizeof lt))
            return false;
        const char *m = !strncmp(lt, LT_DIT_PREFIX, strlen(LT_DIT_PREFIX)) ? lt + strlen(LT_DIT_PREFIX) : lt;
        const int k = snprintf(out, cap, "%s", m);
        return k > 0 && (size_t)k < cap;
    }
    return false;
}

static bool dtype_ok(ltx2_dtype d) { return d == LTX2_F32 || d == LTX2_BF16 || d == LTX2_F16; }

static void note(ltx2_sbuf *b, int64_t *count, const char *name) {
    if (*count < LORA_REPORT_FIRST) ltx2_sbuf_printf(b, "%s%s", *count ? ", " : "", name);
    (*count)++;
}

/* Pairs the tensors of file i into s->pairs (grown); every other tensor is an error. */
static ltx2_status pair_file(ltx2_context *ctx, ltx2_lora_set *s, int i) {
    const ltx2_st_file *f = s->files[i];
    const char *path = s->specs[i].path;
    ltx2_sbuf bad = {0};
    int64_t n_bad = 0, n_own = 0;
    lora_pair *grown = realloc(s->pairs, (size_t)(s->n_pairs + (int64_t)f->n_tensors + 1) * sizeof *grown);
    if (!grown) return LTX2_ERROR(ctx, LTX2_ERR_OOM, "LoRA %s: tensor list", path);
    s->pairs = grown;
    char base[LORA_NAME_CAP], other[LORA_NAME_CAP + 16];
    for (size_t k = 0; k < f->n_tensors; k++) {
        const ltx2_st_tensor *t = &f->tensors[k];
        const bool is_a = ltx2_str_ends_with(t->name, LORA_SUFFIX_A), is_b = ltx2_str_ends_with(t->name, LORA_SUFFIX_B);
        const size_t stem = strlen(t->name) - (is_a ? strlen(LORA_SUFFIX_A) : strlen(LORA_SUFFIX_B));
        if ((!is_a && !is_b) || stem >= sizeof base) {
            note(&bad, &n_bad, t->name);
            continue;
        }
        memcpy(base, t->name, stem);
        base[stem] = '\0';
        snprintf(other, sizeof other, "%s%s", base, is_a ? LORA_SUFFIX_B : LORA_SUFFIX_A);
        const ltx2_st_tensor *o = ltx2_st_find(f, other);
        if (!o) {
            note(&bad, &n_bad, t->name); /* a lone half */
            continue;
        }
        if (is_b) continue; /* the pair is made from its A */
        lora_pair *p = &s->pairs[s->n_pairs];
        memset(p, 0, sizeof *p);
        p->a = t;
        p->b = o;
        p->file = i;
        const bool shapes = t->ndim == 2 && o->ndim == 2 && t->shape[0] == o->shape[1] && t->shape[0] > 0;
        if (!module_of(base, p->module, sizeof p->module) || !shapes || !dtype_ok(t->dtype) || !dtype_ok(o->dtype)) {
            note(&bad, &n_bad, t->name);
            continue;
        }
        s->n_pairs++;
        n_own++;
    }
    ltx2_status st = LTX2_OK;
    if (bad.oom) {
        st = LTX2_ERROR(ctx, LTX2_ERR_OOM, "LoRA %s: error message", path);
    } else if (n_bad) {
        st = LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG,
                        "LoRA %s: %lld tensor%s not a LoRA pair this engine can place [%s%s]: it takes "
                        "'diffusion_model.<module>' (ltx-core, ComfyUI) or 'transformer.<module>' (diffusers) keys "
                        "ending in %s / %s, both halves present, A [rank, in] and B [out, rank] in f32, bf16 or f16",
                        path, (long long)n_bad, n_bad == 1 ? " is" : "s are", bad.buf ? bad.buf : "",
                        n_bad > LORA_REPORT_FIRST ? ", ..." : "", LORA_SUFFIX_A, LORA_SUFFIX_B);
    } else if (!n_own) {
        st = LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "LoRA %s: no lora_A / lora_B tensors (not a LoRA file)", path);
    }
    ltx2_sbuf_free(&bad);
    return st;
}

ltx2_status ltx2_lora_set_open(ltx2_context *ctx, const ltx2_lora_spec *specs, int n, ltx2_lora_set **out) {
    if (!out || n < 0 || (n && !specs)) return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "LoRA: NULL argument");
    *out = NULL;
    ltx2_lora_set *s = calloc(1, sizeof *s);
    if (!s) return LTX2_ERROR(ctx, LTX2_ERR_OOM, "LoRA set");
    s->specs = specs;
    s->files = calloc((size_t)(n ? n : 1), sizeof *s->files);
    ltx2_status st = s->files ? LTX2_OK : LTX2_ERROR(ctx, LTX2_ERR_OOM, "LoRA set");
    for (int i = 0; st == LTX2_OK && i < n; i++) {
        if (!specs[i].path) {
            st = LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "LoRA %d: no path", i + 1);
            break;
        }
        if (!(specs[i].strength == specs[i].strength) || specs[i].strength > 1e6 || specs[i].strength < -1e6) {
            st = LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "LoRA %s: strength %g is not a finite number in [-1e6, 1e6]",
                            specs[i].path, specs[i].strength);
            break;
        }
        st = ltx2_st_open(ctx, specs[i].path, &s->files[i]);
        s->n = i + 1;
        if (st == LTX2_OK) st = pair_file(ctx, s, i);
    }
    if (st != LTX2_OK) {
        ltx2_lora_set_free(s);
        return st;
    }
    *out = s;
    return LTX2_OK;
}

void ltx2_lora_set_free(ltx2_lora_set *s) {
    if (!s) return;
    for (int i = 0; i < s->n; i++) ltx2_st_close(s->files[i]);
    free(s->files);
    free(s->pairs);
    free(s);
}

int ltx2_lora_set_count(const ltx2_lora_set *s) { return s ? s->n : 0; }

void ltx2_lora_counts(const ltx2_lora_set *s, int64_t *pairs, int64_t *used) {
    *pairs = s ? s->n_pairs : 0;
    *used = 0;
    for (int64_t i = 0; s && i < s->n_pairs; i++) *used += s->pairs[i].used;
}

/* x rounded to dtype d and back (a no-op for f32): the value torch holds in a d tensor. */
static ltx2_status round_to(ltx2_context *ctx, float *x, size_t n, ltx2_dtype d, void *scratch) {
    if (d == LTX2_F32) return LTX2_OK;
    LTX2_TRY(ltx2_convert(ctx, scratch, d, x, LTX2_F32, n));
    return ltx2_convert(ctx, x, LTX2_F32, scratch, d, n);
}

/* The block [r0, r0 + nr) x [c0, c0 + nc) of a weight: the whole [out, in] weight, or one rank's shard. */
typedef struct wblock {
    int64_t r0, nr, c0, nc;
} wblock;

/* delta = the block of (B * strength) @ A in the adapter's dtype (fuse_loras.py _prepare_deltas).
 * Each element is one K-ordered FMA chain of the CPU GEMM, so a block is bitwise the whole
 * product's. */
static ltx2_status pair_delta(ltx2_context *ctx, const ltx2_lora_set *s, const lora_pair *p, const wblock *bl,
                              float *delta) {
    const int64_t r = p->a->shape[0], in = p->a->shape[1], nr = bl->nr, nc = bl->nc;
    const ltx2_dtype d = p->a->dtype; /* A and B agree (ltx2_lora_fuse checks) */
    const size_t es = ltx2_dtype_size(d);
    const float coef = (float)s->specs[p->file].strength; /* a Python float meets the tensor as its opmath float */
    float *a = malloc((size_t)(r * nc) * sizeof(float)), *bs = malloc((size_t)(nr * r) * sizeof(float));
    void *scratch = malloc((size_t)(nr * (nc > r ? nc : r)) * sizeof(uint16_t));
    ltx2_status st = a && bs && scratch ? LTX2_OK : LTX2_ERROR(ctx, LTX2_ERR_OOM, "LoRA: %s", p->module);
    for (int64_t k = 0; st == LTX2_OK && k < r; k++) /* A's columns c0 .. c0 + nc */
        st = ltx2_convert(ctx, a + k * nc, LTX2_F32, (const char *)p->a->data + (size_t)(k * in + bl->c0) * es, d,
                          (size_t)nc);
    if (st == LTX2_OK) /* B's rows r0 .. r0 + nr */
        st = ltx2_convert(ctx, bs, LTX2_F32, (const char *)p->b->data + (size_t)(bl->r0 * r) * es, d, (size_t)(nr * r));
    if (st == LTX2_OK) {
        for (int64_t i = 0; i < nr * r; i++) bs[i] *= coef;
        st = round_to(ctx, bs, (size_t)(nr * r), d, scratch);
    }
    if (st == LTX2_OK) {
        const int64_t xs[2] = {nr, r}, ws[2] = {r, nc}, ys[2] = {nr, nc};
        ltx2_tensor x = ltx2_tensor_make(bs, LTX2_F32, 2, xs), w = ltx2_tensor_make(a, LTX2_F32, 2, ws);
        ltx2_tensor y = ltx2_tensor_make(delta, LTX2_F32, 2, ys);
        st = ltx2_backend_gemm(ltx2_backend_cpu(), ctx, &x, &w, LTX2_B_KN, NULL, &y);
    }
    if (st == LTX2_OK) st = round_to(ctx, delta, (size_t)(nr * nc), d, scratch);
    free(a);
    free(bs);
    free(scratch);
    return st;
}

/* w (the block bl of the [out, in] weight `name`) += the sum of the adapters' products there;
 * *touched when any applied. bf16_sum: the sum rounded to bf16 before the add (ltx-core's deltas
 * dtype for fp8 weights). */
static ltx2_status fuse(ltx2_context *ctx, ltx2_lora_set *s, const char *name, float *w, int64_t out, int64_t in,
                        const wblock *bl, bool bf16_sum, bool *touched) {
    *touched = false;
    if (!s || !s->n_pairs) return LTX2_OK;
    const int64_t n = bl->nr * bl->nc;
    float *sum = NULL, *delta = NULL;
    ltx2_status st = LTX2_OK;
    for (int64_t i = 0; st == LTX2_OK && i < s->n_pairs; i++) {
        lora_pair *p = &s->pairs[i];
        if (strcmp(p->module, name)) continue;
        if (p->b->shape[0] != out || p->a->shape[1] != in) {
            st = LTX2_ERROR(ctx, LTX2_ERR_SHAPE, "LoRA %s: %s adds a [%lld, %lld] product to %s, which is [%lld, %lld]: "
                            "a LoRA for another model", s->specs[p->file].path, p->a->name,
                            (long long)p->b->shape[0], (long long)p->a->shape[1], name, (long long)out, (long long)in);
            break;
        }
        if (p->a->dtype != p->b->dtype) {
            st = LTX2_ERROR(ctx, LTX2_ERR_UNSUPPORTED, "LoRA %s: %s is %s but its B is %s", s->specs[p->file].path,
                            p->a->name, ltx2_dtype_name(p->a->dtype), ltx2_dtype_name(p->b->dtype));
            break;
        }
        if (!delta && !(delta = malloc((size_t)(n ? n : 1) * sizeof(float)))) {
            st = LTX2_ERROR(ctx, LTX2_ERR_OOM, "LoRA: %s", name);
            break;
        }
        if ((st = pair_delta(ctx, s, p, bl, delta)) != LTX2_OK) break;
        p->used = true;
        if (!sum) { /* the first delta is the sum so far; later ones add in order (torch.sum of the stack) */
            sum = delta;
            delta = NULL;
        } else {
            for (int64_t k = 0; k < n; k++) sum[k] += delta[k];
        }
    }
    if (st == LTX2_OK && sum && bf16_sum)
        for (int64_t k = 0; k < n; k++) sum[k] = ltx2_round_bf16(sum[k]);
    if (st == LTX2_OK && sum) /* deltas.add_(weight): delta + W */
        for (int64_t k = 0; k < n; k++) w[k] = sum[k] + w[k];
    *touched = st == LTX2_OK && sum != NULL;
    free(sum);
    free(delta);
    return st;
}

ltx2_status ltx2_lora_fuse(ltx2_context *ctx, ltx2_lora_set *s, const char *name, float *w, int64_t out, int64_t in) {
    bool touched;
    const wblock all = {0, out, 0, in};
    return fuse(ctx, s, name, w, out, in, &all, false, &touched);
}

/* The block must lie inside the [out, in] weight. */
static ltx2_status block_check(ltx2_context *ctx, const char *name, int64_t out, int64_t in, const wblock *b) {
    if (b->r0 < 0 || b->nr < 0 || b->c0 < 0 || b->nc < 0 || b->r0 + b->nr > out || b->c0 + b->nc > in)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "LoRA %s: block [%lld +%lld, %lld +%lld] outside [%lld, %lld]",
                          name, (long long)b->r0, (long long)b->nr, (long long)b->c0, (long long)b->nc, (long long)out,
                          (long long)in);
    return LTX2_OK;
}

ltx2_status ltx2_lora_fuse_block(ltx2_context *ctx, ltx2_lora_set *s, const char *name, float *w, int64_t out,
                                 int64_t in, int64_t r0, int64_t nr, int64_t c0, int64_t nc) {
    bool touched;
    const wblock bl = {r0, nr, c0, nc};
    LTX2_TRY(block_check(ctx, name, out, in, &bl));
    return fuse(ctx, s, name, w, out, in, &bl, false, &touched);
}

ltx2_status ltx2_lora_fuse_block_fp8(ltx2_context *ctx, ltx2_lora_set *s, const char *name, float *w, int64_t out,
                                     int64_t in, int64_t r0, int64_t nr, int64_t c0, int64_t nc, bool *touched) {
    const wblock bl = {r0, nr, c0, nc};
    LTX2_TRY(block_check(ctx, name, out, in, &bl));
    return fuse(ctx, s, name, w, out, in, &bl, true, touched);
}

ltx2_status ltx2_lora_fuse_fp8(ltx2_context *ctx, ltx2_lora_set *s, const char *name, float *w, int64_t out,
                               int64_t in, bool *touched) {
    const wblock all = {0, out, 0, in};
    return fuse(ctx, s, name, w, out, in, &all, true, touched);
}

ltx2_status ltx2_lora_check_used(ltx2_context *ctx, const ltx2_lora_set *s) {
    if (!s) return LTX2_OK;
    ltx2_sbuf b = {0};
    int64_t n = 0;
    const char *path = NULL;
    for (int64_t i = 0; i < s->n_pairs; i++) {
        if (s->pairs[i].used) continue;
        if (!path) path = s->specs[s->pairs[i].file].path;
        note(&b, &n, s->pairs[i].a->name);
    }
    ltx2_status st = LTX2_OK;
    if (b.oom) st = LTX2_ERROR(ctx, LTX2_ERR_OOM, "LoRA: error message");
    else if (n)
        st = LTX2_ERROR(ctx, LTX2_ERR_NOT_FOUND,
                        "LoRA %s: %lld adapter%s no Linear weight of this DiT matches [%s%s]: a LoRA for another "
                        "model (or for a part ltx-core does not fuse, such as the text connectors)",
                        path, (long long)n, n == 1 ? " has" : "s have", b.buf ? b.buf : "",
                        n > LORA_REPORT_FIRST ? ", ..." : "");
    ltx2_sbuf_free(&b);
    return st;
}
