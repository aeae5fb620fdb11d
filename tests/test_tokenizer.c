/* The Gemma-3 tokenizer against the reference, id for id: 210 prompts (prose, Unicode, emoji,
 * CJK, control characters, whitespace runs, special-token names written out, prompts past 1024
 * tokens, short lengths that truncate) tokenised by ltx-core 1.0.0's LTXVGemmaTokenizer over
 * transformers' conversion of the tiny tokenizer.model (tests/golden/gen_tokenizer_goldens.py).
 * Then the refusals: missing file, a file that is not a tokenizer, invalid UTF-8. */
#include <stdlib.h>
#include <string.h>

#include "io/safetensors.h"
#include "test_util.h"
#include "text/gemma_tokenizer.h"

#define TOKENIZER LTX2_SOURCE_DIR "/weights/tiny/gemma/tokenizer.model"
#define GOLDEN LTX2_SOURCE_DIR "/tests/golden/data/tokenizer.safetensors"
/* Report at most this many differing prompts. */
#define MAX_REPORTS 5

/* An aligned copy of a golden tensor (safetensors data need not be aligned). free() it. */
static void *data_of(const ltx2_st_file *f, const char *name, int64_t *n) {
    const ltx2_st_tensor *t = ltx2_st_find(f, name);
    CHECK(t != NULL, "golden tensor %s missing", name);
    if (!t) return NULL;
    ltx2_tensor v = ltx2_st_view(t);
    *n = ltx2_tensor_numel(&v);
    const size_t bytes = (size_t)(t->end - t->begin);
    void *copy = malloc(bytes ? bytes : 1);
    if (copy) memcpy(copy, t->data, bytes);
    return copy;
}

static void print_prompt(const char *p, size_t n) {
    fputs("    prompt: \"", stderr);
    for (size_t i = 0; i < n && i < 80; i++) {
        const unsigned char c = (unsigned char)p[i];
        if (c < 0x20 || c == 0x7f) fprintf(stderr, "\\x%02x", c);
        else fputc(c, stderr);
    }
    fputs(n > 80 ? "\"...\n" : "\"\n", stderr);
}

static void check_golden(ltx2_context *ctx, const ltx2_gemma_tokenizer *tok) {
    ltx2_st_file *f = NULL;
    if (ltx2_st_open(ctx, GOLDEN, &f) != LTX2_OK) {
        CHECK(false, "cannot open %s: %s", GOLDEN, ltx2_last_error(ctx));
        return;
    }
    int64_t nbytes = 0, noff = 0, nlen = 0, nids = 0, nmask = 0;
    char *bytes = data_of(f, "prompt.bytes", &nbytes);
    int64_t *off = data_of(f, "prompt.offset", &noff), *lens = data_of(f, "len", &nlen);
    int32_t *ids = data_of(f, "ids", &nids);
    uint8_t *mask = data_of(f, "mask", &nmask);
    if (!bytes || !off || !lens || !ids || !mask || noff != nlen + 1 || nids != nmask) {
        free(bytes), free(off), free(lens), free(ids), free(mask);
        ltx2_st_close(f);
        return;
    }
    int64_t pos = 0, bad = 0, truncated = 0, longest = 0;
    for (int64_t i = 0; i < nlen; i++) {
        const int64_t len = lens[i];
        const size_t pn = (size_t)(off[i + 1] - off[i]);
        char *prompt = malloc(pn + 1);
        int32_t *got = malloc((size_t)len * sizeof *got);
        uint8_t *gmask = malloc((size_t)len);
        memcpy(prompt, bytes + off[i], pn);
        prompt[pn] = 0;
        ltx2_gemma_tokens info;
        const ltx2_status st = ltx2_gemma_tokenize(ctx, tok, prompt, len, got, gmask, &info);
        CHECK(st == LTX2_OK, "prompt %lld: %s", (long long)i, ltx2_last_error(ctx));
        if (st == LTX2_OK) {
            int64_t first = -1;
            for (int64_t k = 0; k < len && first < 0; k++)
                if (got[k] != ids[pos + k] || gmask[k] != mask[pos + k]) first = k;
            if (first >= 0 && bad++ < MAX_REPORTS) {
                fprintf(stderr, "  prompt %lld (len %lld): first difference at %lld: reference id %d mask %u, ours %d %u\n",
                        (long long)i, (long long)len, (long long)first, ids[pos + first], mask[pos + first], got[first],
                        gmask[first]);
                print_prompt(prompt, pn);
            }
            int64_t want_real = 0;
            for (int64_t k = 0; k < len; k++) want_real += mask[pos + k];
            CHECK(info.n_real == want_real, "prompt %lld: %lld real tokens reported, the mask has %lld", (long long)i,
                  (long long)info.n_real, (long long)want_real);
            truncated += info.n_dropped > 0;
            if (info.n_real + info.n_dropped > longest) longest = info.n_real + info.n_dropped;
        }
        pos += len;
        free(prompt), free(got), free(gmask);
    }
    CHECK(pos == nids, "golden ids hold %lld entries, the lengths sum to %lld", (long long)nids, (long long)pos);
    CHECK(bad == 0, "%lld of %lld prompts tokenise differently from the reference", (long long)bad, (long long)nlen);
    CHECK(nlen >= 200, "the corpus has %lld prompts (at least 200 wanted)", (long long)nlen);
    /* The corpus must reach the cases it was built for. */
    CHECK(truncated >= 20, "only %lld prompts were truncated", (long long)truncated);
    CHECK(longest > LTX2_GEMMA_MAX_TOKENS, "no prompt is longer than %d tokens (longest %lld)", LTX2_GEMMA_MAX_TOKENS,
          (long long)longest);
    printf("tokenizer: %lld prompts, %lld truncated, longest %lld tokens, %lld differ\n", (long long)nlen,
           (long long)truncated, (long long)longest, (long long)bad);
    free(bytes), free(off), free(lens), free(ids), free(mask);
    ltx2_st_close(f);
}

static void check_refusals(ltx2_context *ctx, const ltx2_gemma_tokenizer *tok) {
    ltx2_gemma_tokenizer *t = NULL;
    ltx2_status st = ltx2_gemma_tokenizer_load(ctx, LTX2_SOURCE_DIR "/weights/tiny/gemma/no-such.model", &t);
    CHECK(st == LTX2_ERR_NOT_FOUND && t == NULL, "missing tokenizer: status %d", st);
    CHECK(strstr(ltx2_last_error(ctx), "no-such.model") != NULL, "the message names the file: %s",
          ltx2_last_error(ctx));
    st = ltx2_gemma_tokenizer_load(ctx, GOLDEN, &t);
    CHECK(st == LTX2_ERR_FORMAT && t == NULL, "a safetensors file as tokenizer: status %d (%s)", st,
          ltx2_last_error(ctx));
    int32_t ids[8];
    uint8_t mask[8];
    ltx2_gemma_tokens info;
    st = ltx2_gemma_tokenize(ctx, tok, "caf\xc3(", 8, ids, mask, &info);
    CHECK(st == LTX2_ERR_INVALID_ARG && strstr(ltx2_last_error(ctx), "byte 3") != NULL,
          "invalid UTF-8: status %d, %s", st, ltx2_last_error(ctx));
    st = ltx2_gemma_tokenize(ctx, tok, "\xed\xa0\x80 surrogate", 8, ids, mask, &info);
    CHECK(st == LTX2_ERR_INVALID_ARG, "an encoded surrogate is refused: status %d", st);
    st = ltx2_gemma_tokenize(ctx, tok, "\xc0\xaf overlong", 8, ids, mask, &info);
    CHECK(st == LTX2_ERR_INVALID_ARG, "an overlong form is refused: status %d", st);
    st = ltx2_gemma_tokenize(ctx, tok, "ok", 0, ids, mask, &info);
    CHECK(st == LTX2_ERR_INVALID_ARG, "length 0 is refused: status %d", st);
}

int main(void) {
    if (!ltx2_spm_available()) return test_skip("built without SentencePiece (deps.sh installs libsentencepiece-dev)");
    ltx2_context *ctx = ltx2_context_create(NULL);
    ltx2_gemma_tokenizer *tok = NULL;
    const ltx2_status st = ltx2_gemma_tokenizer_load(ctx, TOKENIZER, &tok);
    CHECK(st == LTX2_OK, "load %s: %s", TOKENIZER, ltx2_last_error(ctx));
    if (st == LTX2_OK) {
        CHECK(tok->bos == 2 && tok->pad == 0 && tok->vocab == 1024, "bos %d pad %d vocab %lld", tok->bos, tok->pad,
              (long long)tok->vocab);
        check_golden(ctx, tok);
        check_refusals(ctx, tok);
    }
    ltx2_gemma_tokenizer_free(tok);
    ltx2_context_free(ctx);
    return test_finish();
}
