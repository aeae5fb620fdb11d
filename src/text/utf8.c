/* UTF-8 checks the prompt path needs before SentencePiece sees the bytes: validity (a C string
 * from argv can hold anything; Python's str cannot) and Python's str.strip() whitespace. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "text/gemma_tokenizer.h"

/* Decodes one code point at text[i]; returns its byte length, 0 when the bytes are not UTF-8. */
static size_t utf8_decode(const unsigned char *s, size_t i, size_t n, uint32_t *cp) {
    const unsigned char c = s[i];
    size_t len;
    uint32_t v, min;
    if (c < 0x80) {
        *cp = c;
        return 1;
    } else if ((c & 0xE0) == 0xC0) {
        len = 2, v = c & 0x1F, min = 0x80;
    } else if ((c & 0xF0) == 0xE0) {
        len = 3, v = c & 0x0F, min = 0x800;
    } else if ((c & 0xF8) == 0xF0) {
        len = 4, v = c & 0x07, min = 0x10000;
    } else {
        return 0;
    }
    if (n - i < len) return 0;
    for (size_t k = 1; k < len; k++) {
        if ((s[i + k] & 0xC0) != 0x80) return 0;
        v = (v << 6) | (s[i + k] & 0x3F);
    }
    if (v < min || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF)) return 0;
    *cp = v;
    return len;
}

size_t ltx2_utf8_invalid_at(const char *text, size_t n) {
    const unsigned char *s = (const unsigned char *)text;
    for (size_t i = 0; i < n;) {
        uint32_t cp;
        const size_t len = utf8_decode(s, i, n, &cp);
        if (len == 0) return i;
        i += len;
    }
    return n;
}

/* Python's str.isspace(): bidirectional class WS, B or S, or general category Zs. */
static bool py_isspace(uint32_t cp) {
    return (cp >= 0x09 && cp <= 0x0D) || (cp >= 0x1C && cp <= 0x20) || cp == 0x85 || cp == 0xA0 || cp == 0x1680 ||
           (cp >= 0x2000 && cp <= 0x200A) || cp == 0x2028 || cp == 0x2029 || cp == 0x202F || cp == 0x205F ||
           cp == 0x3000;
}

void ltx2_text_strip(const char *text, size_t n, size_t *begin, size_t *end) {
    const unsigned char *s = (const unsigned char *)text;
    size_t b = 0, e = n;
    while (b < n) {
        uint32_t cp;
        const size_t len = utf8_decode(s, b, n, &cp);
        if (len == 0 || !py_isspace(cp)) break;
        b += len;
    }
    /* Walk forward remembering where the last non-space character ends. */
    size_t last_end = b;
    for (size_t i = b; i < n;) {
        uint32_t cp;
        size_t len = utf8_decode(s, i, n, &cp);
        if (len == 0) len = 1, cp = 0xFFFD;
        i += len;
        if (!py_isspace(cp)) last_end = i;
    }
    e = last_end;
    *begin = b;
    *end = e;
}
