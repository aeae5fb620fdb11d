/* JSON parser and sbuf tests: valid documents decode exactly (escapes, surrogate pairs, int64
 * edges), every malformed input fails with a located message, and print/parse round-trips. */
#include <string.h>

#include "core/context.h"
#include "io/json.h"
#include "test_util.h"

static ltx2_context *g_ctx;

static ltx2_json_doc *parse_ok(const char *text) {
    ltx2_json_doc *doc = NULL;
    ltx2_status st = ltx2_json_parse(g_ctx, text, strlen(text), "test", &doc);
    CHECK(st == LTX2_OK, "parse of %s failed: %s", text, ltx2_last_error(g_ctx));
    return doc;
}

static void expect_fail_n(const char *text, size_t len, const char *why) {
    ltx2_json_doc *doc = NULL;
    ltx2_clear_error(g_ctx);
    ltx2_status st = ltx2_json_parse(g_ctx, text, len, "bad.json", &doc);
    CHECK(st != LTX2_OK, "%s: '%.*s' should fail", why, (int)len, text);
    CHECK(doc == NULL, "%s: no doc on failure", why);
    CHECK(ltx2_last_error(g_ctx)[0] != '\0', "%s: message", why);
    CHECK(st != LTX2_OK && strstr(ltx2_last_error(g_ctx), "bad.json") != NULL,
          "%s: message names the label: %s", why, ltx2_last_error(g_ctx));
    ltx2_json_free(doc);
}

static void expect_fail(const char *text, const char *why) { expect_fail_n(text, strlen(text), why); }

static void test_values(void) {
    ltx2_json_doc *doc = parse_ok(
        " {\"a\": [1, -2.5, 3e2, true, false, null], \"s\": \"x\\n\\t\\\"\\\\\\/\\b\\f\\r\","
        " \"u\": \"\\u00e9\\u20AC\\ud83d\\ude00\", \"z\": \"a\\u0000b\", \"e\": {}, \"ea\": [] }\r\n");
    if (!doc) return;
    const ltx2_json *r = ltx2_json_root(doc);
    CHECK(r->type == LTX2_JSON_OBJECT && r->count == 6, "root object with 6 members");
    const ltx2_json *a = ltx2_json_get(r, "a");
    CHECK(a && a->type == LTX2_JSON_ARRAY && a->count == 6, "array a");
    CHECK(ltx2_json_at(a, 0)->is_int && ltx2_json_at(a, 0)->integer == 1, "a[0] = 1");
    CHECK(!ltx2_json_at(a, 1)->is_int && ltx2_json_at(a, 1)->number == -2.5, "a[1] = -2.5");
    CHECK(!ltx2_json_at(a, 2)->is_int && ltx2_json_at(a, 2)->number == 300.0, "3e2 is not int");
    CHECK(ltx2_json_at(a, 3)->type == LTX2_JSON_BOOL && ltx2_json_at(a, 3)->boolean, "true");
    CHECK(ltx2_json_at(a, 4)->type == LTX2_JSON_BOOL && !ltx2_json_at(a, 4)->boolean, "false");
    CHECK(ltx2_json_at(a, 5)->type == LTX2_JSON_NULL, "null");
    CHECK(ltx2_json_at(a, 6) == NULL, "out of range at()");
    CHECK(strcmp(ltx2_json_get_str(r, "s"), "x\n\t\"\\/\b\f\r") == 0, "simple escapes");
    CHECK(strcmp(ltx2_json_get_str(r, "u"), "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80") == 0,
          "\\u escapes and a surrogate pair decode to UTF-8");
    const ltx2_json *z = ltx2_json_get(r, "z");
    CHECK(z && z->str_len == 3 && memcmp(z->str, "a\0b", 3) == 0, "embedded NUL kept via str_len");
    CHECK(ltx2_json_get(r, "e")->count == 0 && ltx2_json_get(r, "ea")->count == 0, "empty containers");
    CHECK(ltx2_json_get(r, "missing") == NULL, "missing key");
    CHECK(ltx2_json_get_str(r, "a") == NULL, "get_str of an array is NULL");
    int64_t iv;
    CHECK(!ltx2_json_get_int(r, "s", &iv), "get_int of a string fails");
    ltx2_json_free(doc);

    doc = parse_ok("[0, -0, 9223372036854775807, -9223372036854775808, 9223372036854775808,"
                   " 123456789012, 1.5e-3, 1E+2, -0.0]");
    if (!doc) return;
    r = ltx2_json_root(doc);
    CHECK(r->items[0].is_int && r->items[0].integer == 0, "0");
    CHECK(r->items[1].is_int && r->items[1].integer == 0, "-0 is int 0");
    CHECK(r->items[2].is_int && r->items[2].integer == INT64_MAX, "INT64_MAX exact");
    CHECK(r->items[3].is_int && r->items[3].integer == INT64_MIN, "INT64_MIN exact");
    CHECK(!r->items[4].is_int && r->items[4].number == 9223372036854775808.0, "2^63 not int");
    CHECK(r->items[5].is_int && r->items[5].integer == 123456789012LL, "large int");
    CHECK(!r->items[6].is_int && r->items[6].number == 1.5e-3, "1.5e-3");
    CHECK(!r->items[7].is_int && r->items[7].number == 100.0, "1E+2");
    CHECK(!r->items[8].is_int, "-0.0 not int");
    ltx2_json_free(doc);

    doc = parse_ok("{\"k\": 1, \"k\": 2, \"n\": 2.5}");
    if (!doc) return;
    r = ltx2_json_root(doc);
    CHECK(r->count == 3, "duplicate keys are both kept");
    CHECK(ltx2_json_get_int(r, "k", &iv) && iv == 1, "get returns the first duplicate");
    size_t i1 = 9, i2 = 9;
    CHECK(ltx2_json_find_duplicate_key(r, &i1, &i2) && i1 == 0 && i2 == 1, "duplicate found");
    double dv;
    CHECK(ltx2_json_get_num(r, "n", &dv) && dv == 2.5, "get_num");
    CHECK(!ltx2_json_get_int(r, "n", &iv), "get_int of 2.5 fails");
    ltx2_json_free(doc);

    /* Scalars at top level, a BOM, not NUL-terminated input. */
    doc = parse_ok("\xEF\xBB\xBF\"bom\"");
    if (doc) CHECK(strcmp(ltx2_json_root(doc)->str, "bom") == 0, "BOM skipped");
    ltx2_json_free(doc);
    const char buf[] = {'[', '1', ']', 'x'};
    CHECK(ltx2_json_parse(g_ctx, buf, 3, "t", &doc) == LTX2_OK, "length-bounded input");
    ltx2_json_free(doc);
}

static void test_depth(void) {
    char deep[2 * (LTX2_JSON_MAX_DEPTH + 2) + 1];
    int n = LTX2_JSON_MAX_DEPTH + 1; /* root at depth 0 .. innermost at MAX_DEPTH: allowed */
    for (int i = 0; i < n; i++) deep[i] = '[';
    for (int i = 0; i < n; i++) deep[n + i] = ']';
    deep[2 * n] = '\0';
    ltx2_json_doc *doc = parse_ok(deep);
    ltx2_json_free(doc);
    n++;
    for (int i = 0; i < n; i++) deep[i] = '[';
    for (int i = 0; i < n; i++) deep[n + i] = ']';
    deep[2 * n] = '\0';
    expect_fail(deep, "too deep");
    CHECK(strstr(ltx2_last_error(g_ctx), "deeper") != NULL, "depth message: %s", ltx2_last_error(g_ctx));
}

static void test_bad(void) {
    static const char *const bad[] = {
        "", "   ", "{", "}", "[", "]", "[1,]", "[,1]", "{\"a\":1,}", "{,}", "{\"a\"}", "{\"a\" 1}",
        "{1:2}", "{'a':1}", "[1 2]", "01", "-01", "1.", ".5", "+1", "1e", "1e+", "-", "--1",
        "0x10", "tru", "truex", "nul", "NaN", "Infinity", "-Infinity", "1e999", "-1e400",
        "\"abc", "\"\\x\"", "\"\\u12\"", "\"\\u12G4\"", "\"\\uD800\"", "\"\\uDC00\"",
        "\"\\uD800\\u0041\"", "\"\\uD800x\"", "\"a\tb\"", "\"a\nb\"", "\"\\\"", "[1] x", "[1]]",
        "{\"a\":1}{}", "\"\xff\"", "\"\xc0\xaf\"", "\"\xed\xa0\x80\"", "\"\xf4\x90\x80\x80\"",
        "\"\xe2\x82\"", "\"\x80\"", "\xEF\xBB", "[\"a\"\xc3]", "/* c */ 1", "[1,\n2,\n\n  x]",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) expect_fail(bad[i], "bad json");
    expect_fail_n("[1,\0 2]", 6, "NUL byte outside a string");
    expect_fail("{\n  \"a\": 1,\n  \"b\" 2\n}", "missing colon");
    const char *msg = ltx2_last_error(g_ctx);
    CHECK(strstr(msg, "line 3, column 7") != NULL && strstr(msg, "':'") != NULL,
          "message has line:col and what was expected: %s", msg);
    CHECK(strstr(msg, "byte 18") != NULL, "message has the byte offset: %s", msg);

    /* Every proper prefix of an object is invalid. */
    const char *doc = "{\"a\":[1,2.5,{\"b\":\"c\\u00e9\"}],\"d\":true,\"e\":null}";
    size_t n = strlen(doc);
    for (size_t cut = 0; cut < n; cut++) expect_fail_n(doc, cut, "truncated");
}

static void test_utf8(void) {
    CHECK(ltx2_utf8_valid("", 0) && ltx2_utf8_valid("abc", 3), "ascii");
    CHECK(ltx2_utf8_valid("\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80", 9), "2/3/4-byte sequences");
    CHECK(!ltx2_utf8_valid("\xc3", 1), "truncated sequence");
    CHECK(!ltx2_utf8_valid("\xc0\xaf", 2), "overlong");
    CHECK(!ltx2_utf8_valid("\xed\xa0\x80", 3), "encoded surrogate");
    CHECK(!ltx2_utf8_valid("\xf4\x90\x80\x80", 4), "above U+10FFFF");
    CHECK(!ltx2_utf8_valid("a\xff" "b", 3), "0xFF");
}

static void test_sbuf(void) {
    ltx2_sbuf s = {0};
    ltx2_sbuf_append(&s, "ab", 2);
    ltx2_sbuf_printf(&s, "-%d-%s", 42, "x");
    CHECK(strcmp(s.buf, "ab-42-x") == 0 && s.len == 7, "append + printf: %s", s.buf);
    for (int i = 0; i < 1000; i++) ltx2_sbuf_printf(&s, "%04d", i);
    CHECK(s.len == 7 + 4000 && !s.oom, "growth");
    ltx2_sbuf_free(&s);
    CHECK(s.buf == NULL && s.len == 0, "free resets");

    const char raw[] = "q\"b\\n\n\t\x01\x1f\xc3\xa9/";
    ltx2_sbuf_json_string(&s, raw, sizeof(raw) - 1);
    CHECK(strcmp(s.buf, "\"q\\\"b\\\\n\\n\\t\\u0001\\u001f\xc3\xa9/\"") == 0, "escaping: %s", s.buf);
    ltx2_json_doc *doc = parse_ok(s.buf);
    if (doc) {
        const ltx2_json *r = ltx2_json_root(doc);
        CHECK(r->str_len == sizeof(raw) - 1 && memcmp(r->str, raw, r->str_len) == 0,
              "escaped string parses back to the original bytes");
    }
    ltx2_json_free(doc);
    ltx2_sbuf_free(&s);
    ltx2_sbuf_json_string(&s, "a\0b", 3);
    CHECK(strcmp(s.buf, "\"a\\u0000b\"") == 0, "NUL escaped: %s", s.buf);
    ltx2_sbuf_free(&s);

    const char *src = "{\"x\":[1,-2.5,1e+300,true,false,null,\"s\\n\"],\"y\":{\"z\":{}},"
                      "\"big\":-9223372036854775808,\"f\":0.1,\"g\":-0.0,\"h\":100.0}";
    doc = parse_ok(src);
    if (doc) {
        ltx2_json_free(doc);
        doc = parse_ok(src);
        ltx2_sbuf_json_value(&s, ltx2_json_root(doc));
        CHECK(strcmp(s.buf, src) == 0, "compact print round-trips: %s", s.buf);
    }
    ltx2_json_free(doc);
    ltx2_sbuf_free(&s);
}

int main(void) {
    ltx2_context_params p;
    ltx2_context_params_init(&p);
    p.log_level = LTX2_LOG_ERROR;
    g_ctx = ltx2_context_create(&p);
    if (!g_ctx) return 1;
    test_values();
    test_depth();
    test_bad();
    test_utf8();
    test_sbuf();
    ltx2_context_free(g_ctx);
    return test_finish();
}
