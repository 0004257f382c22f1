// The C API of curl for Swift. Variadic calls get typed static inline wrappers here.
#ifndef ROOMTAP_CCURL_SHIM_H
#define ROOMTAP_CCURL_SHIM_H
#include <curl/curl.h>
// For RoomTapWebSocket, which imports only this module and CWslay: the loop's wake descriptor and
// the CSPRNG for frame masks (Glibc's Swift module does not export these headers).
#include <sys/eventfd.h>
#include <sys/random.h>

/// curl_easy_setopt for options taking a long (flags, numbers, enums).
static inline CURLcode roomtap_curl_setopt_long(CURL *curl, CURLoption option, long value) {
    return curl_easy_setopt(curl, option, value);
}

/// curl_easy_setopt for options taking a C string (copied by libcurl) or a char buffer.
static inline CURLcode roomtap_curl_setopt_string(CURL *curl, CURLoption option, const char *value) {
    return curl_easy_setopt(curl, option, value);
}

/// curl_easy_setopt for CURLOPT_ERRORBUFFER (a buffer of CURL_ERROR_SIZE bytes that outlives the handle's use).
static inline CURLcode roomtap_curl_setopt_errorbuffer(CURL *curl, char *buffer) {
    return curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, buffer);
}

/// curl_easy_getinfo(CURLINFO_ACTIVESOCKET): the connected socket of a CONNECT_ONLY handle.
static inline CURLcode roomtap_curl_active_socket(CURL *curl, curl_socket_t *socket) {
    return curl_easy_getinfo(curl, CURLINFO_ACTIVESOCKET, socket);
}

/// curl_easy_getinfo for values of type long.
static inline CURLcode roomtap_curl_getinfo_long(CURL *curl, CURLINFO info, long *value) {
    return curl_easy_getinfo(curl, info, value);
}

/// The size of the buffer CURLOPT_ERRORBUFFER needs (a macro Swift cannot see).
static inline int roomtap_curl_error_size(void) { return CURL_ERROR_SIZE; }

/// curl_global_init(CURL_GLOBAL_DEFAULT) (the flag is a macro Swift cannot see); call once.
static inline CURLcode roomtap_curl_global_init(void) { return curl_global_init(CURL_GLOBAL_DEFAULT); }

/// The type of CURLOPT_XFERINFOFUNCTION callbacks (non-zero aborts the transfer).
typedef int (*roomtap_curl_xferinfo_callback)(void *clientp, curl_off_t dltotal, curl_off_t dlnow,
                                              curl_off_t ultotal, curl_off_t ulnow);

/// Installs a progress callback (also called while connecting), so a connect can be cancelled.
static inline CURLcode roomtap_curl_setopt_xferinfo(CURL *curl, roomtap_curl_xferinfo_callback callback,
                                                    void *clientp) {
    CURLcode code = curl_easy_setopt(curl, CURLOPT_XFERINFOFUNCTION, callback);
    if (code == CURLE_OK) code = curl_easy_setopt(curl, CURLOPT_XFERINFODATA, clientp);
    if (code == CURLE_OK) code = curl_easy_setopt(curl, CURLOPT_NOPROGRESS, 0L);
    return code;
}
#endif
