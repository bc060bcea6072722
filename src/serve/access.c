/* Who may ask the server, decided on the polling thread before a request's
 * route: numeric addresses (loopback, every address, the one listened on),
 * the framing and the headers that decide (one of each), Host against the
 * server's names (DNS rebinding), Origin and Fetch Metadata against other
 * sites' pages, and the token (docs/serve.md, "Who may ask"); and a
 * client's bytes escaped for the log, which these refusals quote and
 * requests.c's log line shows.
 *
 * Lifetimes: nothing here keeps anything; the header values read are
 * libmicrohttpd's, valid while the polling thread is in its callback. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "serve/server.h"

/* ---- addresses ---- */

/* 0 with *a filled (family, address; port 0), or -1: not a numeric address. */
int rs_serve_parse_address(const char *host, address *a)
{
    memset(a, 0, sizeof *a);
    if (inet_pton(AF_INET, host, &a->v4.sin_addr) == 1) {
        a->v4.sin_family = AF_INET;
        return 0;
    }
    if (inet_pton(AF_INET6, host, &a->v6.sin6_addr) == 1) {
        a->v6.sin6_family = AF_INET6;
        return 0;
    }
    return -1;
}

int rs_serve_loopback(const char *host)
{
    address a;
    if (!host || rs_serve_parse_address(host, &a))
        return -1;
    if (a.sa.sa_family == AF_INET)
        return ntohl(a.v4.sin_addr.s_addr) >> 24 == 127;
    const struct in6_addr *v6 = &a.v6.sin6_addr;
    if (IN6_IS_ADDR_LOOPBACK(v6))
        return 1;
    return IN6_IS_ADDR_V4MAPPED(v6) && v6->s6_addr[12] == 127;
}

/* Every address: 0.0.0.0, :: (however written), ::ffff:0.0.0.0. */
int rs_serve_unspecified(const address *a)
{
    if (a->sa.sa_family == AF_INET)
        return a->v4.sin_addr.s_addr == 0;
    const struct in6_addr *v6 = &a->v6.sin6_addr;
    static const unsigned char zero[4] = {0, 0, 0, 0};
    return IN6_IS_ADDR_UNSPECIFIED(v6) ||
           (IN6_IS_ADDR_V4MAPPED(v6) && !memcmp(v6->s6_addr + 12, zero, 4));
}

int rs_serve_any_address(const char *host)
{
    address a;
    if (!host || rs_serve_parse_address(host, &a))
        return -1;
    return rs_serve_unspecified(&a);
}

static int same_address(const address *a, const address *b)
{
    if (a->sa.sa_family != b->sa.sa_family)
        return 0;
    if (a->sa.sa_family == AF_INET)
        return a->v4.sin_addr.s_addr == b->v4.sin_addr.s_addr;
    return !memcmp(&a->v6.sin6_addr, &b->v6.sin6_addr, sizeof a->v6.sin6_addr);
}

/* ---- who may ask ---- */

/* The headers and query arguments that decide who may ask, counted: one
 * request must not carry two of them that two readers could pick between. */
typedef struct {
    int content_lengths, transfer_encodings, hosts, origins, content_types, authorizations;
    int fetch_sites, fetch_modes, fetch_dests;
    int nul;      /* headers whose name or value holds a NUL (it would read shorter than sent) */
    int odd_name; /* header names that are not an RFC 9110 token ("Host ", "Host\t") */
} header_counts;

/* An RFC 9110 token (a header name): tchar, at least one. */
static int is_token(const char *s, size_t n)
{
    static const char tchar[] = "!#$%&'*+-.^_`|~0123456789"
                                "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
    if (n == 0)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!s[i] || !strchr(tchar, s[i]))
            return 0;
    return 1;
}

/* libmicrohttpd 0.9.75 measures a header's value with strlen, so a NUL the
 * client sent inside it ("Host: localhost\0.evil.example") cuts it there
 * and the _n lengths agree. The value lies in the connection's read buffer,
 * where the line's end (CR and LF) has been overwritten with NULs: after the
 * value's end, whitespace (trimmed) may follow, then the line's end. Any
 * other byte there is the rest of a value cut by a NUL of the client's (or
 * a line ended by LF alone, which RFC 9112 §2.2 allows a server to refuse). */
static int nul_inside(const char *end)
{
    const char *p = end + 1; /* end[0] is the NUL that ends the value */
    while (*p == ' ' || *p == '\t')
        p++;
    return *p != '\0';
}

static enum MHD_Result count_headers(void *cls, enum MHD_ValueKind kind, const char *key,
                                     size_t key_size, const char *value, size_t value_size)
{
    header_counts *h = cls;
    (void)kind;
    if (strlen(key) != key_size || (value && strlen(value) != value_size) ||
        (value && nul_inside(value + value_size)))
        h->nul++;
    else if (!is_token(key, key_size))
        h->odd_name++;
    h->content_lengths += !strcasecmp(key, MHD_HTTP_HEADER_CONTENT_LENGTH);
    h->transfer_encodings += !strcasecmp(key, MHD_HTTP_HEADER_TRANSFER_ENCODING);
    h->hosts += !strcasecmp(key, MHD_HTTP_HEADER_HOST);
    h->origins += !strcasecmp(key, "Origin");
    h->content_types += !strcasecmp(key, MHD_HTTP_HEADER_CONTENT_TYPE);
    h->authorizations += !strcasecmp(key, MHD_HTTP_HEADER_AUTHORIZATION);
    h->fetch_sites += !strcasecmp(key, "Sec-Fetch-Site");
    h->fetch_modes += !strcasecmp(key, "Sec-Fetch-Mode");
    h->fetch_dests += !strcasecmp(key, "Sec-Fetch-Dest");
    return MHD_YES;
}

typedef struct {
    int from, token, nul; /* how many of each; arguments whose value holds a NUL */
    const char *bad;      /* an argument given twice, or with a NUL */
} argument_counts;

static enum MHD_Result count_arguments(void *cls, enum MHD_ValueKind kind, const char *key,
                                       size_t key_size, const char *value, size_t value_size)
{
    argument_counts *a = cls;
    (void)kind;
    const int from = !strcmp(key, "from"), token = !strcmp(key, "token");
    a->from += from;
    a->token += token;
    /* %00 decodes to a NUL, after which the value would read shorter than sent. */
    if (strlen(key) != key_size || (value && strlen(value) != value_size)) {
        a->nul++;
        a->bad = from ? "'from'" : token ? "'token'" : "a query argument";
    }
    if ((from && a->from > 1) || (token && a->token > 1))
        a->bad = from ? "'from'" : "'token'";
    return MHD_YES;
}

/* The name of a Host value or of an origin's authority (RFC 9110 §7.2,
 * uri-host [":" port]) into name[size]: "[::1]:8080" → "::1",
 * "localhost:8080" → "localhost". An IPv6 literal must parse as one, a name
 * is letters, digits, '-', '.' and '_', a port 1 to 5 digits; anything else
 * (bytes after the ']', an empty name, a bracket not closed): -1. */
int rs_serve_host_name(const char *authority, char *name, size_t size)
{
    const char *end;
    size_t len;
    if (authority[0] == '[') {
        end = strchr(authority, ']');
        if (!end)
            return -1;
        len = (size_t)(end - authority - 1);
        if (len == 0 || len >= size)
            return -1;
        memcpy(name, authority + 1, len);
        name[len] = '\0';
        struct in6_addr a;
        if (inet_pton(AF_INET6, name, &a) != 1)
            return -1;
        end++;
    } else {
        len = strspn(authority, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                "0123456789-._");
        if (len == 0 || len >= size)
            return -1;
        memcpy(name, authority, len);
        name[len] = '\0';
        end = authority + len;
    }
    if (*end == ':') {
        size_t digits = strspn(end + 1, "0123456789");
        return digits >= 1 && digits <= 5 && end[1 + digits] == '\0' ? 0 : -1;
    }
    return *end == '\0' ? 0 : -1;
}

/* Names a browser may use for this server (name: rs_serve_host_name's). A page on
 * another site that renames itself to 127.0.0.1 (DNS rebinding) still sends
 * its own name in Host: only the loopback names, the listening address and
 * --allow-host names are this server's. Listening on every address (0.0.0.0,
 * ::), any name is accepted: the token guards the server then. */
static int host_allowed(const rs_server *s, const char *name)
{
    if (s->any_address)
        return 1;
    address a, one;
    if (!strcasecmp(name, "localhost"))
        return 1;
    /* Addresses compared as addresses: [0:0::1] is ::1. */
    if (!rs_serve_parse_address(name, &a) &&
        (same_address(&a, &s->listening) ||
         (!rs_serve_parse_address("127.0.0.1", &one) && same_address(&a, &one)) ||
         (!rs_serve_parse_address("::1", &one) && same_address(&a, &one))))
        return 1;
    for (int i = 0; i < s->opt.n_allow_hosts; i++)
        if (!strcasecmp(name, s->opt.allow_hosts[i]))
            return 1;
    return 0;
}

/* Constant-time comparison, so that answer times say nothing of the token. */
static int same_secret(const char *given, const char *token)
{
    size_t n = strlen(token);
    if (!given || strlen(given) != n)
        return 0;
    unsigned char diff = 0;
    for (size_t i = 0; i < n; i++)
        diff |= (unsigned char)(given[i] ^ token[i]);
    return diff == 0;
}

/* The token, as `Authorization: Bearer TOKEN` (the page's own requests) or
 * a `token` query argument (scripts, and the address printed at start).
 * Never a cookie: a browser sends a host's cookies to every port of it, so
 * another service on the host would receive the token, and could plant a
 * cookie of the same name that is sent first (the page then got 401). */
static int has_token(const rs_server *s, struct MHD_Connection *c)
{
    const char *auth =
        MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION);
    if (auth && !strncasecmp(auth, "Bearer ", 7) && same_secret(auth + 7, s->opt.token))
        return 1;
    return same_secret(MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "token"),
                       s->opt.token);
}

/* Framing (RFC 9112 §6.3: one length, never a length and chunks) and one
 * of each header and query argument that decides. 0 or 400, message in msg. */
static int framing_refused(request *rq, char *msg, size_t size)
{
    struct MHD_Connection *c = rq->connection;
    header_counts h = {0};
    MHD_get_connection_values_n(c, MHD_HEADER_KIND, count_headers, &h);
    /* A NUL in the path (%00, decoded by libmicrohttpd) or in a header would
     * make it read shorter than sent: /api/models%00.json as /api/models,
     * "Host: localhost\0.evil.example" as localhost. */
    const int url_nul = rs_serve_take_url_nul(c);
    if (h.nul) {
        rq->close_after = 1;
        snprintf(msg, size,
                 "a header holds a NUL byte (or a header line ends with LF alone, not CRLF)");
        return 400;
    }
    if (h.odd_name) {
        rq->close_after = 1;
        snprintf(msg, size, "a header name that is not a token (a space before its colon?)");
        return 400;
    }
    if (h.content_lengths > 1 || (h.content_lengths && h.transfer_encodings)) {
        rq->close_after = 1;
        snprintf(msg, size, "%s",
                 h.content_lengths > 1 ? "more than one Content-Length header"
                                       : "both Content-Length and Transfer-Encoding");
        return 400;
    }
    const char *twice = h.hosts > 1            ? "Host"
                        : h.origins > 1        ? "Origin"
                        : h.content_types > 1  ? "Content-Type"
                        : h.authorizations > 1 ? "Authorization"
                        : h.fetch_sites > 1    ? "Sec-Fetch-Site"
                        : h.fetch_modes > 1    ? "Sec-Fetch-Mode"
                        : h.fetch_dests > 1    ? "Sec-Fetch-Dest"
                                               : NULL;
    if (twice) {
        snprintf(msg, size, "more than one %s header", twice);
        return 400;
    }
    argument_counts args = {0, 0, 0, NULL};
    MHD_get_connection_values_n(c, MHD_GET_ARGUMENT_KIND, count_arguments, &args);
    if (args.bad) {
        snprintf(msg, size, "%s %s", args.bad,
                 args.nul ? "holds a NUL byte (%00)" : "is given more than once");
        return 400;
    }
    if (url_nul) {
        snprintf(msg, size, "the path holds a NUL byte (%%00)");
        return 400;
    }
    return 0;
}

/* Host (NULL: none): required from HTTP/1.1 on, well formed, and a name of
 * this server. 0, 400 or 403, message in msg. */
static int host_refused(const rs_server *s, const char *host, const char *version, char *msg,
                        size_t size)
{
    char name[256];
    if (!host && strcmp(version, MHD_HTTP_VERSION_1_0)) {
        snprintf(msg, size, "an HTTP/1.1 request needs a Host header");
        return 400;
    }
    if (host && rs_serve_host_name(host, name, sizeof name)) {
        char shown[96];
        rs_serve_escape_for_log(shown, sizeof shown, host);
        snprintf(msg, size, "malformed Host header '%s' (a name or address, then :PORT)", shown);
        return 400;
    }
    if (host && !host_allowed(s, name)) {
        char shown[96];
        rs_serve_escape_for_log(shown, sizeof shown, host);
        snprintf(msg, size,
                 "Host '%s' is not a name of this server (start it with "
                 "--allow-host NAME to accept one)",
                 shown);
        return 403;
    }
    return 0;
}

/* The page a request comes from, as a browser names it (Origin, Fetch
 * Metadata), against Host (NULL: none). 0 or 403, message in msg. */
static int origin_refused(const request *rq, const char *host, int get, char *msg, size_t size)
{
    struct MHD_Connection *c = rq->connection;
    /* A browser names the page a request comes from; only the server's own
     * pages (same scheme, name and port as Host) may use the API. */
    const char *origin = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Origin");
    if (origin) {
        const char *authority = !strncmp(origin, "http://", 7) ? origin + 7 : NULL;
        if (!authority || !host || strcasecmp(authority, host)) {
            char shown[96];
            rs_serve_escape_for_log(shown, sizeof shown, origin);
            snprintf(msg, size,
                     "cross-origin request from '%s' refused: the API answers the "
                     "pages of this server only",
                     shown);
            return 403;
        }
    }
    /* A GET of an <img>, a <script> or a no-cors fetch carries no Origin,
     * but a browser says whose page sent it (Fetch Metadata): another site,
     * or another port of this one (same-site), may only open the page as a
     * page of its own, never read the API or frame the page. */
    const char *site = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Sec-Fetch-Site");
    if (site && strcasecmp(site, "same-origin") && strcasecmp(site, "none")) {
        const char *mode = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Sec-Fetch-Mode");
        const char *dest = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Sec-Fetch-Dest");
        if (!(get && rq->route == ROUTE_PAGE && mode && !strcasecmp(mode, "navigate") &&
              (!dest || !strcasecmp(dest, "document")))) {
            char shown[48];
            rs_serve_escape_for_log(shown, sizeof shown, site);
            snprintf(msg, size,
                     "request from another site's page (Sec-Fetch-Site: %s) refused: the API "
                     "answers the pages of this server only",
                     shown);
            return 403;
        }
    }
    return 0;
}

/* Checks every request before its route: framing (RFC 9112 §6.3), one of
 * each header and argument that decides, Host, Origin and token, in that
 * order. Returns 0, or an HTTP status with the message in msg. */
int rs_serve_refused(const rs_server *s, request *rq, const char *version, int get, char *msg,
                     size_t size)
{
    const char *host =
        MHD_lookup_connection_value(rq->connection, MHD_HEADER_KIND, MHD_HTTP_HEADER_HOST);
    int status;
    if ((status = framing_refused(rq, msg, size)) ||
        (status = host_refused(s, host, version, msg, size)) ||
        (status = origin_refused(rq, host, get, msg, size)))
        return status;
    /* The page itself holds nothing of the server's (the same bytes for
     * everyone): it is sent without the token, which it then takes from its
     * address or its origin's storage and sends with every API request. */
    if (s->opt.token && rq->route != ROUTE_PAGE && !has_token(s, rq->connection)) {
        snprintf(msg, size,
                 "this server needs its token: open the address it printed at start "
                 "(/?token=...), or send 'Authorization: Bearer TOKEN'");
        return 401;
    }
    return 0;
}

/* A JSON body, as the API's POSTs must be: a form or text/plain POST (which
 * a page on any site may send without asking) is refused. HTTP (RFC 9110,
 * 5.5 and 8.3.1) lets optional white space (spaces and tabs) surround the
 * field's value and come before a parameter's ';', so "application/json\t"
 * and "application/json ; charset=utf-8" are JSON; "application/jsonp" and
 * "application/json x" are not. */
int rs_serve_json_content_type(struct MHD_Connection *c)
{
    const char *type =
        MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_TYPE);
    if (!type)
        return 0;
    type += strspn(type, " \t");
    if (strncasecmp(type, "application/json", 16))
        return 0;
    type += 16;
    type += strspn(type, " \t");
    return *type == '\0' || *type == ';';
}

/* A client's bytes as the log may show them: printable ASCII as is, every
 * other byte (control bytes such as ESC, and non-ASCII) and the backslash as
 * \xNN, cut with "..." to fit dst; so no request can write to the operator's
 * terminal. */
void rs_serve_escape_for_log(char *dst, size_t size, const char *src)
{
    size_t n = 0;
    for (const unsigned char *p = (const unsigned char *)src; *p; p++) {
        const int plain = *p >= 0x20 && *p < 0x7F && *p != '\\';
        if (n + (plain ? 1 : 4) + 4 > size) {
            memcpy(dst + n, "...", 3);
            n += 3;
            break;
        }
        if (plain)
            dst[n++] = (char)*p;
        else
            n += (size_t)snprintf(dst + n, size - n, "\\x%02X", *p);
    }
    dst[n] = '\0';
}
