/* Prompt enhancement's text (prompt_text.h): the chat prompt and the answer's clean-up. */
#include "text/prompt_text.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/json.h"
#include "text/gemma_tokenizer.h"

/* ltx-core's user turns: text-to-video, and image-to-video's text after its image */
#define ENHANCE_T2V_USER_PREFIX "user prompt: "
#define ENHANCE_I2V_USER_PREFIX "User Raw Input Prompt: "
#define ENHANCE_I2V_USER_SUFFIX "."

/* Both texts valid UTF-8, else refused naming which. */
static ltx2_status check_utf8(ltx2_context *ctx, const char *system_prompt, const char *prompt) {
    const char *what[2] = {"the system prompt", "the prompt"}, *txt[2] = {system_prompt, prompt};
    for (int i = 0; i < 2; i++) {
        const size_t n = strlen(txt[i]), bad = ltx2_utf8_invalid_at(txt[i], n);
        if (bad != n)
            return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "%s is not valid UTF-8: byte %zu (0x%02x) of %zu", what[i], bad,
                              (unsigned)(unsigned char)txt[i][bad], n);
    }
    return LTX2_OK;
}

/* a + b + sep + strip(c + d + e) + f as a malloc'd string (the template trims a turn's text). */
static ltx2_status join(ltx2_context *ctx, const char *a, const char *b, const char *sep, const char *c, const char *d,
                        const char *e, const char *f, char **out) {
    const size_t nt = strlen(c) + strlen(d) + strlen(e), n = strlen(a) + strlen(b) + strlen(sep) + nt + strlen(f);
    char *turn = malloc(nt + 1), *s = malloc(n + 1);
    if (!turn || !s) {
        free(turn), free(s);
        return LTX2_ERROR(ctx, LTX2_ERR_OOM, "enhance: chat prompt");
    }
    snprintf(turn, nt + 1, "%s%s%s", c, d, e);
    size_t tb, te;
    ltx2_text_strip(turn, nt, &tb, &te);
    snprintf(s, n + 1, "%s%s%s%.*s%s", a, b, sep, (int)(te - tb), turn + tb, f);
    free(turn);
    *out = s;
    return LTX2_OK;
}

#define CHAT_HEAD "<bos><start_of_turn>user\n"
#define CHAT_TAIL "<end_of_turn>\n<start_of_turn>model\n"

ltx2_status ltx2_gemma3_enhance_chat(ltx2_context *ctx, const char *system_prompt, const char *prompt, char **out) {
    *out = NULL;
    LTX2_TRY(check_utf8(ctx, system_prompt, prompt));
    return join(ctx, CHAT_HEAD, system_prompt, "\n\n", ENHANCE_T2V_USER_PREFIX, prompt, "", CHAT_TAIL, out);
}

ltx2_status ltx2_gemma3_enhance_chat_image(ltx2_context *ctx, const char *system_prompt, const char *prompt,
                                           char **before, char **after) {
    *before = *after = NULL;
    LTX2_TRY(check_utf8(ctx, system_prompt, prompt));
    /* the system text's blank line, then the processor's "\n\n" in front of <start_of_image> */
    LTX2_TRY(join(ctx, CHAT_HEAD, system_prompt, "\n\n\n\n", "", "", "", "", before));
    const ltx2_status st =
        join(ctx, "\n\n", "", "", ENHANCE_I2V_USER_PREFIX, prompt, ENHANCE_I2V_USER_SUFFIX, CHAT_TAIL, after);
    if (st != LTX2_OK) free(*before), *before = NULL;
    return st;
}

/* clean_response's str.maketrans: code point -> ASCII replacement */
static const struct {
    uint32_t cp;
    char to;
} ascii_forms[] = {
    {0x2018, '\''}, {0x2019, '\''}, {0x201C, '"'}, {0x201D, '"'}, {0x2014, '-'},
    {0x2013, '-'},  {0x00A0, ' '},  {0x2032, '\''}, {0x2212, '-'},
};

void ltx2_enhance_clean(char *text) {
    const unsigned char *s = (const unsigned char *)text;
    const size_t n = strlen(text);
    size_t w = 0, start = (size_t)-1;
    for (size_t i = 0; i < n;) {
        uint32_t cp;
        const size_t len = ltx2_utf8_next(s, i, n, &cp);
        char rep = 0;
        for (size_t k = 0; k < sizeof ascii_forms / sizeof ascii_forms[0]; k++)
            if (ascii_forms[k].cp == cp) rep = ascii_forms[k].to;
        /* the first letter after translation (the replacements are none of them letters) */
        if (start == (size_t)-1 && !rep && ltx2_unicode_is_alpha(cp)) start = w;
        if (rep) text[w++] = rep;
        else memmove(text + w, text + i, len), w += len;
        i += len;
    }
    text[w] = '\0';
    if (start != (size_t)-1 && start > 0) memmove(text, text + start, w - start + 1);
}
