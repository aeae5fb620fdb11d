/* Python's str.strip() (and the code point walk it needs) on UTF-8 the prompt path has already validated (ltx2_utf8_invalid_at in
 * io/json.c: a C string from argv can hold anything; Python's str cannot). */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "text/gemma_tokenizer.h"

size_t ltx2_utf8_next(const unsigned char *s, size_t i, size_t n, uint32_t *cp) {
    const unsigned char c = s[i];
    size_t len = c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
    if (len > n - i) len = n - i;
    uint32_t v = len == 1 ? c : len == 2 ? c & 0x1Fu : len == 3 ? c & 0x0Fu : c & 0x07u;
    for (size_t k = 1; k < len; k++) v = (v << 6) | (s[i + k] & 0x3Fu);
    *cp = v;
    return len;
}

/* Python's str.isspace(): bidirectional class WS, B or S, or general category Zs. */
static bool py_isspace(uint32_t cp) {
    return (cp >= 0x09 && cp <= 0x0D) || (cp >= 0x1C && cp <= 0x20) || cp == 0x85 || cp == 0xA0 || cp == 0x1680 ||
           (cp >= 0x2000 && cp <= 0x200A) || cp == 0x2028 || cp == 0x2029 || cp == 0x202F || cp == 0x205F ||
           cp == 0x3000;
}

void ltx2_text_strip(const char *text, size_t n, size_t *begin, size_t *end) {
    const unsigned char *s = (const unsigned char *)text;
    size_t b = 0, last_end = 0;
    bool leading = true;
    for (size_t i = 0; i < n;) {
        uint32_t cp;
        const size_t len = ltx2_utf8_next(s, i, n, &cp);
        const bool space = py_isspace(cp);
        if (leading && space) b = i + len;
        else leading = false;
        i += len;
        if (!space) last_end = i;
    }
    *begin = b;
    *end = last_end > b ? last_end : b;
}
