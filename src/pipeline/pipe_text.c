/* A prompt's Gemma hidden states (ltx2_pipe_text) as files and where they live: the prompt-embeds
 * files --prompt-embeds reads and --save-prompt-embeds writes (layer-last f32, the layout ltx-core's
 * torch.stack(hidden_states, dim=-1) gives), the text cache's own form (layer-major in the states'
 * dtype), the move of device-kept states to the host, and left padding. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend_pool.h"
#include "core/dtype.h"
#include "core/finite.h"
#include "io/safetensors.h"
#include "io/tensor_set.h"
#include "model/text_states.h"
#include "pipeline/pipeline.h"

/* The two names a file's states go by: the interchange form, layer-last (ltx-core's stack along
 * the last axis), and the text cache's, layer-major as the engine holds them. */
#define STATES_LAYER_LAST "hidden_states"
#define STATES_LAYER_MAJOR "hidden_states_layer_major"

/* A bf16 value is finite unless its 8 exponent bits are all ones. */
#define BF16_EXP_MASK 0x7f80u

/* The flat index of the first non-finite value of the bf16 values at x[0, n), -1 if none (read
 * bytewise: a file's tensor need not be aligned). */
static int64_t first_nonfinite_bf16(const void *x, int64_t n) {
    const unsigned char *b = x;
    int64_t first = n;
#pragma omp parallel for schedule(static) reduction(min : first)
    for (int64_t i = 0; i < n; i++) {
        uint16_t v;
        memcpy(&v, b + 2 * i, sizeof v);
        if ((v & BF16_EXP_MASK) == BF16_EXP_MASK && i < first) first = i;
    }
    return first < n ? first : -1;
}

/* A layer-major file may hold only the last `stored` positions of each layer (the cache leaves out
 * a prompt's padding): the `lead` positions before them are zero.
 * The states of a layer-major file straight onto be in their stored bf16 (what a device encoder
 * keeps: no widening on the host, no transpose), each stored value checked finite first, the lead
 * rows zero. */
static ltx2_status states_to_device(ltx2_context *ctx, const char *path, const ltx2_tensor *ht, int64_t lead,
                                    const ltx2_backend *be, ltx2_pipe_text *out) {
    const int64_t L = out->L, S = out->S, D = out->D, stored = S - lead;
    const int64_t bad = first_nonfinite_bf16(ht->data, L * stored * D);
    if (bad >= 0) {
        const int64_t rec = bad % (stored * D);
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "prompt embeds %s: %s: a non-finite value at layer %lld, token "
                          "%lld, channel %lld", path, STATES_LAYER_MAJOR, (long long)(bad / (stored * D)),
                          (long long)(lead + rec / D), (long long)(rec % D));
    }
    const size_t es = ltx2_dtype_size(LTX2_BF16), layer = (size_t)(S * D) * es, head = (size_t)(lead * D) * es;
    void *buf = NULL, *zeros = calloc(1, head ? head : 1);
    if (!zeros) return LTX2_ERROR(ctx, LTX2_ERR_OOM, "prompt embeds %s: %zu bytes of zeros", path, head);
    ltx2_status st = be->alloc(be, ctx, (size_t)L * layer, &buf);
    for (int64_t l = 0; st == LTX2_OK && l < L; l++) { /* each layer's zeros, then its stored rows */
        char *dst = (char *)buf + (size_t)l * layer;
        st = be->upload(be, ctx, dst, zeros, head);
        if (st == LTX2_OK) st = be->upload(be, ctx, dst + head, (const char *)ht->data + (size_t)l * (layer - head),
                                           layer - head);
    }
    free(zeros);
    if (st != LTX2_OK) {
        if (buf) be->free(be, buf);
        return st;
    }
    const int64_t ds[4] = {1, L, S, D};
    out->dev = ltx2_tensor_make(buf, LTX2_BF16, 4, ds);
    out->dev.device = be->device;
    out->dev_be = be;
    return LTX2_OK;
}

/* The states as host f32, layer-major: each stored layer converted into place after its lead zero
 * rows for a layer-major file; through the file's coordinates (checked there) and a transpose for a
 * layer-last one. */
static ltx2_status states_to_host(ltx2_context *ctx, const char *path, const ltx2_tensor *ht, bool major,
                                  int64_t lead, ltx2_pipe_text *out) {
    const int64_t n = out->S * out->D * out->L;
    if (!(out->hidden = calloc((size_t)n, sizeof(float))))
        return LTX2_ERROR(ctx, LTX2_ERR_OOM, "prompt embeds %s: out of memory", path);
    if (major) {
        const int64_t hs[3] = {out->L, out->S, out->D}, per = (out->S - lead) * out->D;
        const size_t es = ltx2_dtype_size(ht->dtype);
        for (int64_t l = 0; l < out->L; l++)
            LTX2_TRY(ltx2_convert(ctx, out->hidden + (l * out->S + lead) * out->D, LTX2_F32,
                                  (const char *)ht->data + (size_t)(l * per) * es, ht->dtype, (size_t)per));
        return ltx2_check_finite(ctx, LTX2_ERR_INVALID_ARG, out->hidden, 3, hs, "prompt embeds %s: %s", path,
                                 STATES_LAYER_MAJOR);
    }
    float *last = malloc((size_t)n * sizeof(float));
    const int64_t hs[4] = {1, out->S, out->D, out->L};
    ltx2_status st = last ? LTX2_OK : LTX2_ERROR(ctx, LTX2_ERR_OOM, "prompt embeds %s: out of memory", path);
    if (st == LTX2_OK) st = ltx2_convert(ctx, last, LTX2_F32, ht->data, ht->dtype, (size_t)n);
    if (st == LTX2_OK)
        st = ltx2_check_finite(ctx, LTX2_ERR_INVALID_ARG, last, 4, hs, "prompt embeds %s: hidden_states", path);
    if (st == LTX2_OK) ltx2_text_states_to_layer_major(last, out->S * out->D, out->L, out->hidden);
    free(last);
    return st;
}

ltx2_status ltx2_pipe_text_load(ltx2_context *ctx, const char *path, int64_t text_dim, ltx2_pipe_text *out) {
    return ltx2_pipe_text_load_on(ctx, path, text_dim, NULL, out);
}

ltx2_status ltx2_pipe_text_load_on(ltx2_context *ctx, const char *path, int64_t text_dim, const ltx2_backend *be,
                                   ltx2_pipe_text *out) {
    memset(out, 0, sizeof *out);
    ltx2_tensor_set *set = NULL;
    LTX2_TRY(ltx2_tensor_set_open(ctx, path, &set));
    ltx2_status st = LTX2_OK;
    const ltx2_named_tensor *h = ltx2_tensor_set_find(set, STATES_LAYER_LAST);
    const ltx2_named_tensor *hm = ltx2_tensor_set_find(set, STATES_LAYER_MAJOR);
    const ltx2_named_tensor *m = ltx2_tensor_set_find(set, "attention_mask");
    if (!h && !hm && set->n == 1 && !strcmp(set->kind, "npy")) h = &set->items[0];
    char b1[96];
    if (!h == !hm) {
        st = LTX2_ERROR(ctx, h ? LTX2_ERR_INVALID_ARG : LTX2_ERR_NOT_FOUND,
                        "prompt embeds %s: %s (expected one of \"%s\" [1, S, D, L] and \"%s\" [1, L, S, D])", path,
                        h ? "both forms of the hidden states" : "no hidden states", STATES_LAYER_LAST,
                        STATES_LAYER_MAJOR);
        goto done;
    }
    const bool major = hm != NULL;
    const ltx2_tensor *ht = major ? &hm->t : &h->t;
    const int off = ht->ndim == 4 ? 1 : 0;
    if ((ht->ndim != 4 && ht->ndim != 3) || (ht->ndim == 4 && ht->shape[0] != 1) || !ltx2_dtype_is_float(ht->dtype)) {
        st = LTX2_ERROR(ctx, LTX2_ERR_SHAPE, "prompt embeds %s: %s must be float %s, got %s %s", path,
                        major ? STATES_LAYER_MAJOR : STATES_LAYER_LAST, major ? "[1, L, S, D]" : "[1, S, D, L]",
                        ltx2_dtype_name(ht->dtype), ltx2_shape_str(ht->shape, ht->ndim, b1, sizeof b1));
        goto done;
    }
    out->L = ht->shape[major ? off : off + 2];
    out->S = ht->shape[major ? off + 1 : off];
    out->D = ht->shape[major ? off + 2 : off + 1];
    /* a layer-major file's states may cover only the mask's last positions (the rest padding) */
    int64_t lead = 0;
    if (major && m && ltx2_tensor_numel(&m->t) > out->S) {
        lead = ltx2_tensor_numel(&m->t) - out->S;
        out->S += lead;
    }
    if (out->S < 1 || out->S % LTX2_CONNECTOR_REGISTERS) {
        st = LTX2_ERROR(ctx, LTX2_ERR_SHAPE, "prompt embeds %s: sequence length %lld is not a multiple of %d "
                        "(pad the prompt to it, as the Gemma tokenizer does)", path, (long long)out->S,
                        LTX2_CONNECTOR_REGISTERS);
        goto done;
    }
    if (out->D * out->L != text_dim) {
        st = LTX2_ERROR(ctx, LTX2_ERR_SHAPE, "prompt embeds %s: D x L = %lld x %lld = %lld, but the checkpoint's text "
                        "projection takes %lld", path, (long long)out->D, (long long)out->L,
                        (long long)(out->D * out->L), (long long)text_dim);
        goto done;
    }
    if (!(out->mask = malloc((size_t)out->S))) {
        st = LTX2_ERROR(ctx, LTX2_ERR_OOM, "prompt embeds %s: out of memory", path);
        goto done;
    }
    for (int64_t s = 0; s < lead; s++)
        if (ltx2_load_as_f64(m->t.data, m->t.dtype, (size_t)s) != 0.0) {
            st = LTX2_ERROR(ctx, LTX2_ERR_SHAPE, "prompt embeds %s: %s covers the last %lld of the mask's %lld "
                            "positions, but position %lld is a token", path, STATES_LAYER_MAJOR,
                            (long long)(out->S - lead), (long long)out->S, (long long)s);
            goto done;
        }
    /* a device takes the cache's bf16 states as its encoder would have kept them */
    if (be && be->device != LTX2_DEVICE_CPU && major && ht->dtype == LTX2_BF16)
        st = states_to_device(ctx, path, ht, lead, be, out);
    else
        st = states_to_host(ctx, path, ht, major, lead, out);
    if (st != LTX2_OK) goto done;
    if (!m) {
        memset(out->mask, 1, (size_t)out->S);
    } else {
        if (ltx2_tensor_numel(&m->t) != out->S) {
            st = LTX2_ERROR(ctx, LTX2_ERR_SHAPE, "prompt embeds %s: attention_mask has %lld elements, expected %lld",
                            path, (long long)ltx2_tensor_numel(&m->t), (long long)out->S);
            goto done;
        }
        int64_t real = 0;
        for (int64_t s = 0; s < out->S; s++) {
            out->mask[s] = ltx2_load_as_f64(m->t.data, m->t.dtype, (size_t)s) != 0.0;
            real += out->mask[s];
        }
        if (!real) {
            st = LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "prompt embeds %s: attention_mask has no real token", path);
            goto done;
        }
    }
done:
    ltx2_tensor_set_free(set);
    if (st != LTX2_OK) ltx2_pipe_text_free(out);
    return st;
}

ltx2_status ltx2_pipe_text_download(ltx2_context *ctx, const ltx2_pipe_text *t, float **out) {
    const int64_t n = t->S * t->D * t->L;
    float *h = malloc((size_t)n * sizeof *h);
    if (!h) return LTX2_ERROR(ctx, LTX2_ERR_OOM, "prompt: %lld hidden-state values to the host", (long long)n);
    const ltx2_status st = ltx2_backend_to_host_f32(ctx, t->dev_be, &t->dev, h);
    if (st != LTX2_OK) free(h);
    else *out = h;
    return st;
}

ltx2_status ltx2_pipe_text_to_host(ltx2_context *ctx, ltx2_pipe_text *t) {
    if (t->hidden || !t->dev.data) return LTX2_OK;
    float *h = NULL;
    LTX2_TRY(ltx2_pipe_text_download(ctx, t, &h));
    t->dev_be->free(t->dev_be, t->dev.data);
    memset(&t->dev, 0, sizeof t->dev);
    t->dev_be = NULL;
    t->hidden = h;
    return LTX2_OK;
}

ltx2_status ltx2_pipe_text_pad_left(ltx2_context *ctx, ltx2_pipe_text *t, int64_t S) {
    if (S < t->S) return LTX2_ERROR(ctx, LTX2_ERR_INTERNAL, "prompt: padding %lld tokens to %lld", (long long)t->S,
                                    (long long)S);
    if (S == t->S) return LTX2_OK;
    LTX2_TRY(ltx2_pipe_text_to_host(ctx, t));
    const int64_t pad = S - t->S, tok = t->D * t->L, D = t->D;
    float *h = calloc((size_t)(S * tok), sizeof(float));
    uint8_t *m = calloc((size_t)S, 1);
    if (!h || !m) {
        free(h);
        free(m);
        return LTX2_ERROR(ctx, LTX2_ERR_OOM, "prompt: padding to %lld tokens", (long long)S);
    }
    for (int64_t l = 0; l < t->L; l++) /* each layer's rows after its pad rows */
        memcpy(h + (l * S + pad) * D, t->hidden + l * t->S * D, (size_t)(t->S * D) * sizeof(float));
    memcpy(m + pad, t->mask, (size_t)t->S);
    free(t->hidden);
    free(t->mask);
    t->hidden = h;
    t->mask = m;
    t->S = S;
    return LTX2_OK;
}

void ltx2_pipe_text_free(ltx2_pipe_text *t) {
    if (t->dev.data) t->dev_be->free(t->dev_be, t->dev.data);
    free(t->hidden);
    free(t->mask);
    memset(t, 0, sizeof *t);
}

/* The states (tensor `name`, any layout) and the mask as a safetensors file through a temp file. */
static ltx2_status write_states(ltx2_context *ctx, const ltx2_pipe_text *t, const char *name, const ltx2_tensor *h,
                                const char *layout, const char *path) {
    int64_t *mask = malloc((size_t)t->S * sizeof *mask);
    if (!mask) return LTX2_ERROR(ctx, LTX2_ERR_OOM, "prompt embeds %s: out of memory", path);
    for (int64_t s = 0; s < t->S; s++) mask[s] = t->mask[s];
    const int64_t ms[2] = {1, t->S};
    const ltx2_tensor m = ltx2_tensor_make(mask, LTX2_I64, 2, ms);
    ltx2_st_writer *wr = NULL;
    ltx2_status st = ltx2_st_writer_create(ctx, &wr);
    if (st == LTX2_OK) st = ltx2_st_writer_add(ctx, wr, name, h);
    if (st == LTX2_OK) st = ltx2_st_writer_add(ctx, wr, "attention_mask", &m);
    if (st == LTX2_OK) st = ltx2_st_writer_set_meta(ctx, wr, "layout", layout);
    if (st == LTX2_OK) st = ltx2_st_writer_write(ctx, wr, path);
    ltx2_st_writer_free(wr);
    free(mask);
    return st;
}

ltx2_status ltx2_pipe_text_save(ltx2_context *ctx, const ltx2_pipe_text *t, const char *path) {
    float *last = malloc((size_t)(t->S * t->D * t->L) * sizeof *last); /* the file's layer-last layout */
    if (!last) return LTX2_ERROR(ctx, LTX2_ERR_OOM, "prompt embeds %s: out of memory", path);
    ltx2_status st = LTX2_OK;
    if (t->hidden) {
        ltx2_text_states_to_layer_last(t->hidden, t->S * t->D, t->L, last);
    } else { /* kept on a device (they stay there for the connectors): a downloaded copy */
        float *major = NULL;
        st = ltx2_pipe_text_download(ctx, t, &major);
        if (st == LTX2_OK) ltx2_text_states_to_layer_last(major, t->S * t->D, t->L, last);
        free(major);
    }
    const int64_t hs[4] = {1, t->S, t->D, t->L};
    const ltx2_tensor h = ltx2_tensor_make(last, LTX2_F32, 4, hs);
    if (st == LTX2_OK)
        st = write_states(ctx, t, STATES_LAYER_LAST, &h,
                          "hidden_states [B, S, D, L] (layer axis last), attention_mask [B, S] left-padded", path);
    free(last);
    return st;
}

ltx2_status ltx2_pipe_text_save_cache(ltx2_context *ctx, const ltx2_pipe_text *t, const char *path) {
    /* the prompt's own left padding is left out: LTX never reads it, and the reader puts zeros there */
    int64_t lead = 0;
    while (lead < t->S - 1 && !t->mask[lead]) lead++;
    const int64_t stored = t->S - lead, D = t->D, hs[4] = {1, t->L, stored, D};
    const char *layout = "hidden_states_layer_major [B, L, S', D] (hidden state l of every token together) of the "
                         "last S' positions of attention_mask [B, S] (left-padded; the positions before are padding, "
                         "their states zero)";
    const ltx2_dtype dt = t->hidden ? LTX2_F32 : t->dev.dtype; /* a device encoder's bf16: half an f32 copy */
    const size_t es = ltx2_dtype_size(dt), per = (size_t)(stored * D) * es, layer = (size_t)(t->S * D) * es;
    if (t->hidden && !lead) {
        const ltx2_tensor h = ltx2_tensor_make(t->hidden, LTX2_F32, 4, hs);
        return write_states(ctx, t, STATES_LAYER_MAJOR, &h, layout, path);
    }
    char *packed = malloc((size_t)t->L * per);
    if (!packed) return LTX2_ERROR(ctx, LTX2_ERR_OOM, "prompt embeds %s: %zu bytes of hidden states", path,
                                   (size_t)t->L * per);
    ltx2_status st = LTX2_OK;
    for (int64_t l = 0; st == LTX2_OK && l < t->L; l++) {
        const size_t from = (size_t)l * layer + (size_t)(lead * D) * es;
        if (t->hidden) memcpy(packed + (size_t)l * per, (const char *)t->hidden + from, per);
        else st = t->dev_be->download(t->dev_be, ctx, packed + (size_t)l * per, (const char *)t->dev.data + from, per);
    }
    const ltx2_tensor h = ltx2_tensor_make(packed, dt, 4, hs);
    if (st == LTX2_OK) st = write_states(ctx, t, STATES_LAYER_MAJOR, &h, layout, path);
    free(packed);
    return st;
}
