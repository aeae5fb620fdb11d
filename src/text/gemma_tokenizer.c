/* Gemma-3 prompt tokenisation with ltx-core's padding rules (gemma_tokenizer.h). */
#include "text/gemma_tokenizer.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* Control, unknown and user-defined pieces: what transformers' conversion of tokenizer.model
 * registers as added tokens (normalized=False), matched in the raw text. */
static bool is_added(const ltx2_spm_piece *p) {
    return p->len > 0 &&
           (p->type == LTX2_SPM_CONTROL || p->type == LTX2_SPM_UNKNOWN || p->type == LTX2_SPM_USER_DEFINED);
}

static ltx2_status added_tokens_build(ltx2_context *ctx, ltx2_gemma_tokenizer *tok) {
    const ltx2_spm_pieces *P = &tok->pieces;
    int64_t n = 0;
    for (int64_t i = 0; i < P->n; i++) n += is_added(&P->pieces[i]);
    tok->added = malloc((size_t)(n ? n : 1) * sizeof *tok->added);
    if (!tok->added) return LTX2_ERROR(ctx, LTX2_ERR_OOM, "tokenizer: out of memory for %lld added tokens", (long long)n);
    /* Counting sort by first byte, then longest first within a byte (insertion into place). */
    int64_t count[257] = {0};
    for (int64_t i = 0; i < P->n; i++)
        if (is_added(&P->pieces[i])) count[(unsigned char)P->pieces[i].text[0] + 1]++;
    for (int b = 0; b < 256; b++) count[b + 1] += count[b];
    memcpy(tok->added_at, count, sizeof count);
    int64_t fill[256];
    memcpy(fill, count, sizeof fill);
    for (int64_t i = 0; i < P->n; i++) {
        const ltx2_spm_piece *p = &P->pieces[i];
        if (!is_added(p)) continue;
        const unsigned b = (unsigned char)p->text[0];
        int64_t k = fill[b]++;
        while (k > tok->added_at[b] && P->pieces[tok->added[k - 1]].len < p->len) {
            tok->added[k] = tok->added[k - 1];
            k--;
        }
        tok->added[k] = (int32_t)i;
    }
    tok->n_added = n;
    return LTX2_OK;
}

/* The longest added token at text[i..n), or -1. */
static int32_t added_match(const ltx2_gemma_tokenizer *tok, const char *text, size_t i, size_t n) {
    const unsigned b = (unsigned char)text[i];
    for (int64_t k = tok->added_at[b]; k < tok->added_at[b + 1]; k++) {
        const ltx2_spm_piece *p = &tok->pieces.pieces[tok->added[k]];
        if (p->len <= n - i && memcmp(text + i, p->text, p->len) == 0) return tok->added[k];
    }
    return -1;
}

typedef struct id_list {
    int32_t *v;
    size_t n, cap;
} id_list;

static int id_list_push(id_list *l, const int32_t *ids, size_t n) {
    if (l->n + n > l->cap) {
        size_t cap = l->cap ? l->cap : 64;
        while (cap < l->n + n) cap *= 2;
        int32_t *v = realloc(l->v, cap * sizeof *v);
        if (!v) return -1;
        l->v = v, l->cap = cap;
    }
    memcpy(l->v + l->n, ids, n * sizeof *ids);
    l->n += n;
    return 0;
}

/* SentencePiece ids of text[b, e) (no BOS/EOS), appended to out. */
static ltx2_status encode_segment(ltx2_context *ctx, const ltx2_gemma_tokenizer *tok, const char *text, size_t b,
                                  size_t e, id_list *out) {
    if (e == b) return LTX2_OK;
    int32_t *ids = NULL;
    size_t n = 0;
    char err[LTX2_ERROR_CAP];
    if (ltx2_spm_encode(tok->sp, text + b, e - b, &ids, &n, err, sizeof err) != 0)
        return LTX2_ERROR(ctx, LTX2_ERR_FORMAT, "tokenizer %s: %s", tok->path, err);
    const int rc = id_list_push(out, ids, n);
    free(ids);
    return rc ? LTX2_ERROR(ctx, LTX2_ERR_OOM, "tokenizer: out of memory for %zu ids", out->n + n) : LTX2_OK;
}

/* The ids of text[0, n): added tokens where they are written out, SentencePiece between. */
static ltx2_status encode_text(ltx2_context *ctx, const ltx2_gemma_tokenizer *tok, const char *text, size_t n,
                               id_list *out) {
    size_t seg = 0;
    for (size_t i = 0; i < n;) {
        const int32_t id = added_match(tok, text, i, n);
        if (id < 0) {
            i++;
            continue;
        }
        LTX2_TRY(encode_segment(ctx, tok, text, seg, i, out));
        if (id_list_push(out, &id, 1)) return LTX2_ERROR(ctx, LTX2_ERR_OOM, "tokenizer: out of memory");
        i += tok->pieces.pieces[id].len;
        seg = i;
    }
    return encode_segment(ctx, tok, text, seg, n, out);
}

ltx2_status ltx2_gemma_tokenizer_load(ltx2_context *ctx, const char *path, ltx2_gemma_tokenizer **out) {
    *out = NULL;
    struct stat sb;
    if (stat(path, &sb) != 0)
        return LTX2_ERROR(ctx, errno == ENOENT ? LTX2_ERR_NOT_FOUND : LTX2_ERR_IO, "tokenizer %s: %s", path,
                          strerror(errno));
    char err[LTX2_ERROR_CAP];
    ltx2_spm *sp = NULL;
    if (ltx2_spm_open(path, &sp, err, sizeof err) != 0)
        return LTX2_ERROR(ctx, ltx2_spm_available() ? LTX2_ERR_FORMAT : LTX2_ERR_UNSUPPORTED, "tokenizer: %s", err);
    const ltx2_spm_ids ids = ltx2_spm_special_ids(sp);
    const int64_t vocab = ltx2_spm_piece_count(sp);
    if (ids.bos < 0 || (ids.pad < 0 && ids.eos < 0)) {
        ltx2_spm_close(sp);
        return LTX2_ERROR(ctx, LTX2_ERR_FORMAT,
                          "tokenizer %s declares no BOS or neither PAD nor EOS (bos %d, pad %d, eos %d): "
                          "not a Gemma tokenizer",
                          path, ids.bos, ids.pad, ids.eos);
    }
    ltx2_gemma_tokenizer *tok = calloc(1, sizeof *tok);
    if (!tok) {
        ltx2_spm_close(sp);
        return LTX2_ERROR(ctx, LTX2_ERR_OOM, "tokenizer: out of memory");
    }
    tok->sp = sp;
    ltx2_status st = ltx2_spm_pieces_read(ctx, path, &tok->pieces);
    if (st == LTX2_OK && tok->pieces.n != vocab)
        st = LTX2_ERROR(ctx, LTX2_ERR_FORMAT, "%s: %lld pieces in the protobuf but SentencePiece reads %lld", path,
                        (long long)tok->pieces.n, (long long)vocab);
    if (st == LTX2_OK) st = added_tokens_build(ctx, tok);
    if (st == LTX2_OK) st = ltx2_gemma_tokenizer_specials(ctx, tok, path);
    if (st != LTX2_OK) {
        ltx2_gemma_tokenizer_free(tok);
        return st;
    }
    tok->vocab = vocab;
    tok->bos = ids.bos;
    tok->pad = ids.pad >= 0 ? ids.pad : ids.eos;
    snprintf(tok->path, sizeof tok->path, "%s", path);
    *out = tok;
    return LTX2_OK;
}

void ltx2_gemma_tokenizer_free(ltx2_gemma_tokenizer *tok) {
    if (!tok) return;
    free(tok->added);
    free(tok->special);
    ltx2_spm_pieces_free(&tok->pieces);
    ltx2_spm_close(tok->sp);
    free(tok);
}

/* text (NUL-terminated; `what` names it in messages) checked to be UTF-8, stripped as Python's
 * str.strip when strip, and its ids appended to list, each checked against the vocabulary. */
static ltx2_status encode_valid(ltx2_context *ctx, const ltx2_gemma_tokenizer *tok, const char *what, const char *text,
                                bool strip, id_list *list) {
    const size_t n = strlen(text), bad = ltx2_utf8_invalid_at(text, n);
    if (bad != n)
        return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "%s is not valid UTF-8: byte %zu (0x%02x) of %zu", what, bad,
                          (unsigned)(unsigned char)text[bad], n);
    size_t b = 0, e = n;
    if (strip) ltx2_text_strip(text, n, &b, &e);
    const size_t first = list->n;
    LTX2_TRY(encode_text(ctx, tok, text + b, e - b, list));
    for (size_t i = first; i < list->n; i++)
        if (list->v[i] < 0 || list->v[i] >= tok->vocab)
            return LTX2_ERROR(ctx, LTX2_ERR_INTERNAL, "tokenizer %s returned id %d outside its %lld pieces", tok->path,
                              list->v[i], (long long)tok->vocab);
    return LTX2_OK;
}

ltx2_status ltx2_gemma_tokenize(ltx2_context *ctx, const ltx2_gemma_tokenizer *tok, const char *prompt, int64_t len,
                                int32_t *ids, uint8_t *mask, ltx2_gemma_tokens *info) {
    if (len < 1) return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "tokenize: length %lld < 1", (long long)len);
    id_list list = {0};
    const ltx2_status st = encode_valid(ctx, tok, "prompt", prompt, true, &list);
    if (st != LTX2_OK) {
        free(list.v);
        return st;
    }
    int32_t *pieces = list.v;
    const size_t np = list.n;
    /* BOS takes one of the len places: the fast tokenizer truncates with room for it. */
    const size_t keep = np < (size_t)(len - 1) ? np : (size_t)(len - 1);
    const int64_t real = (int64_t)keep + 1, pad = len - real;
    for (int64_t i = 0; i < pad; i++) ids[i] = tok->pad, mask[i] = 0;
    ids[pad] = tok->bos;
    mask[pad] = 1;
    for (size_t i = 0; i < keep; i++) {
        ids[pad + 1 + (int64_t)i] = pieces[i];
        mask[pad + 1 + (int64_t)i] = 1;
    }
    free(pieces);
    info->len = len;
    info->n_real = real;
    info->n_dropped = (int64_t)(np - keep);
    return LTX2_OK;
}

ltx2_status ltx2_gemma_encode(ltx2_context *ctx, const ltx2_gemma_tokenizer *tok, const char *text, int32_t **ids,
                              int64_t *n) {
    *ids = NULL, *n = 0;
    id_list list = {0};
    ltx2_status st = LTX2_OK;
    if (id_list_push(&list, &tok->bos, 1)) st = LTX2_ERROR(ctx, LTX2_ERR_OOM, "tokenizer: out of memory");
    if (st == LTX2_OK) st = encode_valid(ctx, tok, "text", text, false, &list);
    if (st != LTX2_OK) {
        free(list.v);
        return st;
    }
    *ids = list.v;
    *n = (int64_t)list.n;
    return LTX2_OK;
}
