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
// For RoomTapStorage (S3, webhooks): bodies through callbacks, header lists, 64-bit sizes.

/// The type of CURLOPT_WRITEFUNCTION / CURLOPT_HEADERFUNCTION / CURLOPT_READFUNCTION callbacks.
typedef size_t (*roomtap_curl_data_callback)(char *buffer, size_t size, size_t count, void *userdata);

/// curl_easy_setopt for options taking a pointer (CURLOPT_WRITEDATA, CURLOPT_READDATA, CURLOPT_HEADERDATA).
static inline CURLcode roomtap_curl_setopt_pointer(CURL *curl, CURLoption option, void *value) {
    return curl_easy_setopt(curl, option, value);
}

/// curl_easy_setopt for options taking a callback (CURLOPT_WRITEFUNCTION, CURLOPT_READFUNCTION,
/// CURLOPT_HEADERFUNCTION).
static inline CURLcode roomtap_curl_setopt_data_callback(CURL *curl, CURLoption option,
                                                         roomtap_curl_data_callback callback) {
    return curl_easy_setopt(curl, option, callback);
}

/// curl_easy_setopt for options taking a curl_off_t (CURLOPT_INFILESIZE_LARGE, CURLOPT_POSTFIELDSIZE_LARGE).
static inline CURLcode roomtap_curl_setopt_off(CURL *curl, CURLoption option, curl_off_t value) {
    return curl_easy_setopt(curl, option, value);
}

/// curl_easy_setopt for CURLOPT_HTTPHEADER (the list must outlive the transfer).
static inline CURLcode roomtap_curl_setopt_headers(CURL *curl, struct curl_slist *headers) {
    return curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
}

/// CURL_READFUNC_ABORT (a macro Swift cannot see).
static inline size_t roomtap_curl_readfunc_abort(void) { return CURL_READFUNC_ABORT; }
#endif
