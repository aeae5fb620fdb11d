/* Prompt enhancement's text (prompt_text.h): the chat prompt and the answer's clean-up. */
#include "text/prompt_text.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/json.h"
#include "text/gemma_tokenizer.h"

/* ltx-core's user turn for a text-to-video enhancement */
#define ENHANCE_T2V_USER_PREFIX "user prompt: "

ltx2_status ltx2_gemma3_enhance_chat(ltx2_context *ctx, const char *system_prompt, const char *prompt, char **out) {
    *out = NULL;
    const char *what[2] = {"the system prompt", "the prompt"}, *txt[2] = {system_prompt, prompt};
    for (int i = 0; i < 2; i++) {
        const size_t n = strlen(txt[i]), bad = ltx2_utf8_invalid_at(txt[i], n);
        if (bad != n)
            return LTX2_ERROR(ctx, LTX2_ERR_INVALID_ARG, "%s is not valid UTF-8: byte %zu (0x%02x) of %zu", what[i], bad,
                              (unsigned)(unsigned char)txt[i][bad], n);
    }
    const size_t nu = strlen(ENHANCE_T2V_USER_PREFIX) + strlen(prompt);
    char *user = malloc(nu + 1);
    if (!user) return LTX2_ERROR(ctx, LTX2_ERR_OOM, "enhance: chat prompt");
    snprintf(user, nu + 1, "%s%s", ENHANCE_T2V_USER_PREFIX, prompt);
    size_t b, e;
    ltx2_text_strip(user, nu, &b, &e);
    static const char head[] = "<bos><start_of_turn>user\n", sep[] = "\n\n",
                      tail[] = "<end_of_turn>\n<start_of_turn>model\n";
    const size_t n = strlen(head) + strlen(system_prompt) + strlen(sep) + (e - b) + strlen(tail);
    char *s = malloc(n + 1);
    if (!s) {
        free(user);
        return LTX2_ERROR(ctx, LTX2_ERR_OOM, "enhance: chat prompt");
    }
    snprintf(s, n + 1, "%s%s%s%.*s%s", head, system_prompt, sep, (int)(e - b), user + b, tail);
    free(user);
    *out = s;
    return LTX2_OK;
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
