/* Gemma-3 ids back to text, as transformers' Gemma tokenizer decodes them (the fast tokenizer's
 * decoder in tokenizer.json: Replace '▁' -> ' ', ByteFallback, Fuse): what --enhance-prompt prints.
 * The special tokens it skips are the added tokens tokenizer.json flags "special" (the tiny
 * tokenizer's <bos> <eos> <pad> <unk> <mask>; its <start_of_turn> is not one), read once at load;
 * without a tokenizer.json, the model's control and unknown pieces. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/file.h"
#include "io/json.h"
#include "text/gemma_tokenizer.h"

/* U+2581 LOWER ONE EIGHTH BLOCK, SentencePiece's word boundary, and U+FFFD for undecodable bytes. */
static const char k_space_mark[] = "\xE2\x96\x81";
static const char k_replacement[] = "\xEF\xBF\xBD";

ltx2_status ltx2_gemma_tokenizer_specials(ltx2_context *ctx, ltx2_gemma_tokenizer *tok, const char *model_path) {
    tok->special = calloc((size_t)(tok->pieces.n ? tok->pieces.n : 1), 1);
    if (!tok->special) return LTX2_ERROR(ctx, LTX2_ERR_OOM, "tokenizer: %lld flags", (long long)tok->pieces.n);
    char *dir = ltx2_path_dirname(model_path), *json = dir ? ltx2_path_join(dir, "tokenizer.json") : NULL;
    free(dir);
    if (!json) return LTX2_ERROR(ctx, LTX2_ERR_OOM, "tokenizer: path");
    ltx2_status st = LTX2_OK;
    if (!ltx2_path_is_file(json)) {
        for (int64_t i = 0; i < tok->pieces.n; i++) {
            const uint8_t t = tok->pieces.pieces[i].type;
            tok->special[i] = t == LTX2_SPM_CONTROL || t == LTX2_SPM_UNKNOWN;
        }
        free(json);
        return LTX2_OK;
    }
    ltx2_json_doc *doc = NULL;
    st = ltx2_json_parse_file(ctx, json, &doc);
    const ltx2_json *added = st == LTX2_OK ? ltx2_json_get(ltx2_json_root(doc), "added_tokens") : NULL;
    if (st == LTX2_OK && added && added->type != LTX2_JSON_ARRAY)
        st = LTX2_ERROR(ctx, LTX2_ERR_FORMAT, "%s: added_tokens is not a list", json);
    for (size_t i = 0; st == LTX2_OK && added && i < added->count; i++) {
        const ltx2_json *a = ltx2_json_at(added, i), *sp = ltx2_json_get(a, "special");
        int64_t id = -1;
        if (!ltx2_json_get_int(a, "id", &id) || id < 0 || id >= tok->pieces.n)
            st = LTX2_ERROR(ctx, LTX2_ERR_FORMAT, "%s: added token %zu has no id within the model's %lld pieces", json,
                            i, (long long)tok->pieces.n);
        else tok->special[id] = sp && sp->type == LTX2_JSON_BOOL && sp->boolean;
    }
    ltx2_json_free(doc);
    free(json);
    return st;
}

/* Appends bytes b[0, n) of consecutive byte pieces: as they are when they form valid UTF-8, else one
 * U+FFFD per byte (the ByteFallback decoder's rule). */
static void flush_bytes(ltx2_sbuf *s, const char *b, size_t n) {
    if (ltx2_utf8_valid(b, n)) {
        ltx2_sbuf_append(s, b, n);
        return;
    }
    for (size_t i = 0; i < n; i++) ltx2_sbuf_append(s, k_replacement, sizeof k_replacement - 1);
}

/* "<0xXX>" -> XX; -1 when p is not such a piece. */
static int byte_of(const ltx2_spm_piece *p) {
    unsigned v;
    char tail;
    char buf[8];
    if (p->len != 6) return -1;
    memcpy(buf, p->text, 6);
    buf[6] = 0;
    return sscanf(buf, "<0x%2X%c", &v, &tail) == 2 && tail == '>' ? (int)v : -1;
}

ltx2_status ltx2_gemma_detokenize(ltx2_context *ctx, const ltx2_gemma_tokenizer *tok, const int32_t *ids, int64_t n,
                                  bool skip_special, char **text) {
    *text = NULL;
    ltx2_sbuf s = {0};
    char bytes[64] = {0};
    size_t nb = 0;
    for (int64_t i = 0; i < n; i++) {
        if (ids[i] < 0 || ids[i] >= tok->pieces.n) {
            ltx2_sbuf_free(&s);
            return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "detokenize: id %d (at %lld) outside the %lld pieces", ids[i],
                              (long long)i, (long long)tok->pieces.n);
        }
        if (skip_special && tok->special && tok->special[ids[i]]) continue;
        const ltx2_spm_piece *p = &tok->pieces.pieces[ids[i]];
        const int b = p->type == LTX2_SPM_BYTE ? byte_of(p) : -1;
        if (b >= 0) {
            if (nb == sizeof bytes) { /* a run this long is not one character: flush it */
                flush_bytes(&s, bytes, nb);
                nb = 0;
            }
            bytes[nb++] = (char)b;
            continue;
        }
        flush_bytes(&s, bytes, nb);
        nb = 0;
        for (uint32_t k = 0; k < p->len;) {
            if (k + 3 <= p->len && !memcmp(p->text + k, k_space_mark, 3)) {
                ltx2_sbuf_append(&s, " ", 1);
                k += 3;
            } else {
                ltx2_sbuf_append(&s, p->text + k, 1);
                k++;
            }
        }
    }
    flush_bytes(&s, bytes, nb);
    if (!s.buf) ltx2_sbuf_append(&s, "", 0);
    if (s.oom || !s.buf) {
        ltx2_sbuf_free(&s);
        return LTX2_ERROR(ctx, LTX2_ERR_OOM, "detokenize: %lld ids", (long long)n);
    }
    *text = s.buf;
    return LTX2_OK;
}
